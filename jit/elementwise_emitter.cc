// The elementwise kernel emitter (elementwise_emitter.h).
//
// Index arithmetic: every operand read is an affine map of the output coordinates, given by one
// stride per output dim (0 for a broadcast dim or a scalar). Output dims of size 1 are dropped
// and adjacent dims merged when every access (and the row-major output) is contiguous across
// them, so same-shape operands and scalars give one flat loop; otherwise the kernel walks row
// segments of the last merged dim, decomposing each row index once. The kernel walks its
// [block_begin, block_end) range one block at a time and every loop restarts at the block's
// start, so the vector/remainder split of an element never depends on the thread split (rows
// that cross a block boundary are split there into two segments). The innermost loop is a
// plain counted loop with noalias scopes between the output and the inputs, which the O3 loop
// vectorizer widens (with its own remainder loop: no hand-written tail). A flat kernel with an
// output of kStreamingStoreBytes or more computes fixed runs of each block into a stack stage
// and streams them out with non-temporal stores (streaming_store.h).
#include "jit/elementwise_emitter.h"
#include "jit/index_math.h"
#include "jit/operand_access.h"

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <string>
#include <utility>

#include "jit/elementwise_lowering.h"
#include "jit/kernel_abi.h"
#include "jit/streaming_store.h"
#include "jit/kernel_prologue.h"
#include "src/fusion/fusion_plan.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"
#include "llvm/IR/Instructions.h"

namespace accy::jit {
namespace {

// The loop vectorizer's interleave count for a chain, 0 = its own choice (1 for loops with
// calls). The f32 special functions of jit/special_functions.h are long dependent chains through
// libmvec calls (erf_inv: log, a degree-8 polynomial, erf, a division) that the core does not
// overlap across iterations by itself. Four vectors per iteration, best of 3 runs of 10^6
// elements at 1 thread (Zen 4, AVX-512; the host's slow periods made single runs vary 40%):
// erf_inv 7.02 -> 5.56 ms, bessel_i1e 5.57 -> 5.19, digamma 4.07 -> 3.96, lgamma 4.81 -> 4.95;
// plain libmvec calls (erf) got slower, so only these four ask for it.
int InterleaveCount(std::span<const Operation* const> ops) {
  for (const Operation* op : ops) {
    const OpKind kind = op->kind();
    const bool special = kind == OpKind::kErfInv || kind == OpKind::kLgamma ||
                         kind == OpKind::kDigamma || kind == OpKind::kBesselI1e;
    if (special && op->result(0)->type().element_type() != ElementType::kF64) return 4;
  }
  return 0;
}

// Chains with an exp, logistic or tanh whose loop calls no library function: jit/vector_math.h's
// inline polynomials are long dependent chains, which the loop vectorizer, left to itself, emits
// one vector after another; four vectors interleaved op by op let the core overlap them
// (docs/isa.md, "Four chains"). The interleave count they get:
constexpr int kInlineExpInterleave = 4;

bool HasExpLikeOp(std::span<const Operation* const> ops) {
  return std::any_of(ops.begin(), ops.end(), [](const Operation* op) {
    const OpKind kind = op->kind();
    return kind == OpKind::kExponential || kind == OpKind::kLogistic || kind == OpKind::kTanh;
  });
}

// Whether the blocks from `first` through `last` (in function order) call a function that is
// neither an LLVM intrinsic nor an accy target primitive (jit/target_lowering.h): a libm,
// libmvec or SLEEF call.
bool CallsLibrary(llvm::BasicBlock* first, llvm::BasicBlock* last) {
  const auto end = first->getParent()->end();
  for (auto block = first->getIterator(); block != end; ++block) {
    for (const llvm::Instruction& instruction : *block) {
      const auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction);
      if (call == nullptr) continue;
      const llvm::Function* callee = call->getCalledFunction();
      if (callee == nullptr || (!callee->isIntrinsic() && !callee->getName().starts_with("accy."))) {
        return true;
      }
    }
    if (&*block == last) break;
  }
  return false;
}

// How the loop reads one external operand: a buffer through strides, or a folded constant.
using Access = OperandAccess;

}  // namespace

StatusOr<KernelSignature> EmitElementwiseKernel(const WorkItem& item, const FusionPlan& fusion,
                                                llvm::Module& module, std::string_view symbol) {
  if (item.kind != WorkKind::kElementwiseSingle && item.kind != WorkKind::kElementwiseFusion) {
    return absl::UnimplementedError(StrCat("jit: elementwise emitter: work item ", item.id,
                                           " has kind ", WorkKindName(item.kind)));
  }
  ACCY_CHECK(item.output_value != nullptr && !item.ops.empty());
  const std::vector<int64_t>& out_dims = item.output_value->type().dims();
  const ElementType out_type = item.output_value->type().element_type();
  const int64_t count = item.output_value->type().element_count();
  const std::set<const Operation*> members(item.ops.begin(), item.ops.end());

  // 1. Signature and accesses, walking the ops in order.
  KernelSignature signature;
  std::vector<Access> accesses;
  std::map<std::pair<const Operation*, int64_t>, int> access_of_use;
  for (const Operation* op : item.ops) {
    if (!IsFusableElementwiseOp(*op)) {
      return absl::UnimplementedError(StrCat("jit: elementwise emitter: op ", op->name(),
                                             " is not an elementwise op"));
    }
    if (op->result(0)->type().dims() != out_dims) {
      return absl::UnimplementedError(StrCat(
          "jit: elementwise emitter: ", op->name(), " has shape ",
          ShapeText(op->result(0)->type().dims()), " in an item of shape ", ShapeText(out_dims)));
    }
    for (int64_t i = 0; i < op->num_operands(); ++i) {
      const Value* operand = op->operand(i);
      const Operation* def = operand->defining_op();
      if (def != nullptr && members.count(def) != 0) continue;  // computed in registers
      ACCY_ASSIGN_OR_RETURN(
          OperandAccess access,
          ResolveOperandAccess("jit: elementwise emitter: ", *op, *operand, fusion, out_dims,
                               signature.inputs));
      access_of_use[{op, i}] = static_cast<int>(accesses.size());
      accesses.push_back(std::move(access));
    }
  }
  signature.outputs.push_back(item.output_value);
  signature.block_size = kElementwiseBlockElements;
  signature.block_count = BlockCount(count, kElementwiseBlockElements);

  // 2. Iteration space: drop size-1 dims, merge dims contiguous for every access.
  std::vector<int64_t> extents;
  std::vector<std::vector<int64_t>> strides(accesses.size());
  for (size_t d = 0; d < out_dims.size(); ++d) {
    if (out_dims[d] == 1) continue;
    bool merge = !extents.empty();
    for (size_t a = 0; merge && a < accesses.size(); ++a) {
      merge = strides[a].back() == accesses[a].strides[d] * out_dims[d];
    }
    if (merge) {
      extents.back() *= out_dims[d];
      for (size_t a = 0; a < accesses.size(); ++a) strides[a].back() = accesses[a].strides[d];
    } else {
      extents.push_back(out_dims[d]);
      for (size_t a = 0; a < accesses.size(); ++a) strides[a].push_back(accesses[a].strides[d]);
    }
  }
  if (extents.empty()) {  // zero or one element
    extents.push_back(count);
    for (auto& s : strides) s.push_back(0);
  }
  const size_t rank = extents.size();
  const int64_t row_length = extents.back();

  // 3. The function.
  const int interleave = InterleaveCount(item.ops);
  const bool exp_like = HasExpLikeOp(item.ops);
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> builder(context);
  ElementwiseLowering lowering(module, builder);
  // Alias scopes: the output never aliases an input (kernel ABI), which spares the vectorizer
  // its runtime overlap checks.
  llvm::Type* i64 = builder.getInt64Ty();
  const KernelPrologue prologue(module, builder, symbol, signature.inputs.size() + 1,
                                "accy.kernel");
  llvm::Function* function = prologue.function();
  llvm::Value* block_begin = prologue.block_begin();
  llvm::Value* block_end = prologue.block_end();
  auto* exit = llvm::BasicBlock::Create(context, "exit", function);
  std::vector<llvm::Value*> bases;
  for (size_t b = 0; b < signature.inputs.size() + 1; ++b) bases.push_back(prologue.buffer(b));
  llvm::Value* out_base = bases.back();
  llvm::Type* out_memory = MemoryType(context, out_type);

  auto load = [&](size_t a, llvm::Value* index) -> llvm::Value* {
    const Access& access = accesses[a];
    llvm::Type* memory = MemoryType(context, access.type);
    llvm::Value* address = builder.CreateInBoundsGEP(memory, bases[static_cast<size_t>(access.buffer)], index);
    llvm::LoadInst* value = builder.CreateAlignedLoad(memory, address, llvm::Align(1));
    prologue.Tag(value, KernelPrologue::kInputs);
    return lowering.FromMemory(value, access.type);
  };

  // Constants and scalars are read once, before any loop.
  std::vector<llvm::Value*> invariant(accesses.size(), nullptr);
  for (size_t a = 0; a < accesses.size(); ++a) {
    if (accesses[a].buffer < 0) {
      invariant[a] = lowering.ConstantElement(accesses[a].type, accesses[a].constant);
    }
  }
  // One block at a time: each block [lo, hi) is processed by the same code whatever range the
  // call covers, so which elements take the vector loop (libmvec) or its scalar remainder (libm)
  // depends only on the block, never on the thread split (kernel_abi.h: bitwise identical).
  llvm::BasicBlock* preheader = builder.GetInsertBlock();
  auto* block_head = llvm::BasicBlock::Create(context, "block", function, exit);
  auto* block_done = llvm::BasicBlock::Create(context, "block_done", function, exit);
  builder.CreateCondBr(builder.CreateICmpSLT(block_begin, block_end), block_head, exit);
  builder.SetInsertPoint(block_head);
  llvm::PHINode* block = builder.CreatePHI(i64, 2, "block");
  block->addIncoming(block_begin, preheader);
  llvm::Value* lo = builder.CreateMul(block, builder.getInt64(kElementwiseBlockElements));
  llvm::Value* hi = builder.CreateBinaryIntrinsic(
      llvm::Intrinsic::smin, builder.CreateAdd(lo, builder.getInt64(kElementwiseBlockElements)),
      builder.getInt64(count));
  auto* body_start = llvm::BasicBlock::Create(context, "start", function, block_done);
  builder.CreateCondBr(builder.CreateICmpSLT(lo, hi), body_start, block_done);
  builder.SetInsertPoint(body_start);
  for (size_t a = 0; a < accesses.size(); ++a) {
    const bool all_zero = std::all_of(strides[a].begin(), strides[a].end(),
                                      [](int64_t s) { return s == 0; });
    if (accesses[a].buffer >= 0 && all_zero) invariant[a] = load(a, builder.getInt64(0));
  }

  // Emits the innermost loop over columns [col_begin, col_end) of one row: access a reads
  // offsets[a] + col * stride; the result goes to element out_offset + col of `destination`
  // (the output, or the streaming stage).
  auto emit_row = [&](llvm::Value* col_begin, llvm::Value* col_end,
                      const std::vector<llvm::Value*>& offsets, llvm::Value* out_offset,
                      llvm::Value* destination) -> Status {
    llvm::BasicBlock* before = builder.GetInsertBlock();
    auto* body = llvm::BasicBlock::Create(context, "body", function, block_done);
    auto* done = llvm::BasicBlock::Create(context, "row_done", function, block_done);
    builder.CreateCondBr(builder.CreateICmpSLT(col_begin, col_end), body, done);
    builder.SetInsertPoint(body);
    llvm::PHINode* col = builder.CreatePHI(i64, 2, "col");
    col->addIncoming(col_begin, before);
    std::map<const Value*, llvm::Value*> values;
    std::vector<llvm::Value*> loaded(accesses.size(), nullptr);
    for (const Operation* op : item.ops) {
      std::vector<llvm::Value*> operands;
      for (int64_t i = 0; i < op->num_operands(); ++i) {
        auto use = access_of_use.find({op, i});
        if (use == access_of_use.end()) {
          operands.push_back(values.at(op->operand(i)));
          continue;
        }
        const size_t a = static_cast<size_t>(use->second);
        if (invariant[a] == nullptr && loaded[a] == nullptr) {
          llvm::Value* index = builder.CreateAdd(
              offsets[a], builder.CreateMul(col, builder.getInt64(strides[a].back())));
          loaded[a] = load(a, index);
        }
        operands.push_back(invariant[a] != nullptr ? invariant[a] : loaded[a]);
      }
      ACCY_ASSIGN_OR_RETURN(llvm::Value * result, lowering.Emit(*op, operands));
      values[op->result(0)] = result;
    }
    llvm::Value* address =
        builder.CreateInBoundsGEP(out_memory, destination, builder.CreateAdd(out_offset, col));
    llvm::StoreInst* store = builder.CreateAlignedStore(
        lowering.ToMemory(values.at(item.output_value), out_type), address, llvm::Align(1));
    prologue.Tag(store, KernelPrologue::kOutputs);
    llvm::Value* next = builder.CreateAdd(col, builder.getInt64(1), "col.next", true, true);
    col->addIncoming(next, builder.GetInsertBlock());
    llvm::BranchInst* back = builder.CreateCondBr(builder.CreateICmpSLT(next, col_end), body, done);
    if (interleave > 0) {
      SetLoopHint(back, "llvm.loop.interleave.count", interleave);
    } else if (exp_like && !CallsLibrary(body, builder.GetInsertBlock())) {
      SetLoopHint(back, "llvm.loop.interleave.count", kInlineExpInterleave);
    }
    builder.SetInsertPoint(done);
    return absl::OkStatus();
  };

  std::vector<llvm::Value*> zero_offsets(accesses.size(), builder.getInt64(0));
  const int64_t element_bytes =
      static_cast<int64_t>(module.getDataLayout().getTypeAllocSize(out_memory));
  const bool streaming = rank == 1 && count * element_bytes >= kStreamingStoreBytes;
  if (streaming) {
    // Runs of kStreamingStageBytes at fixed offsets of the block: computed into the stage,
    // then streamed to the output (streaming_store.h).
    llvm::AllocaInst* stage = CreateStreamingStage(builder, *function);
    const int64_t run = kStreamingStageBytes / element_bytes;
    llvm::BasicBlock* before = builder.GetInsertBlock();
    auto* run_head = llvm::BasicBlock::Create(context, "run", function, block_done);
    builder.CreateBr(run_head);
    builder.SetInsertPoint(run_head);
    llvm::PHINode* run_begin = builder.CreatePHI(i64, 2, "run.begin");
    run_begin->addIncoming(lo, before);
    llvm::Value* run_end = builder.CreateBinaryIntrinsic(
        llvm::Intrinsic::smin, builder.CreateAdd(run_begin, builder.getInt64(run)), hi);
    ACCY_RETURN_IF_ERROR(emit_row(run_begin, run_end, zero_offsets,
                                  builder.CreateNeg(run_begin), stage));
    EmitStreamingCopy(
        builder, *function, stage,
        builder.CreateInBoundsGEP(out_memory, out_base, run_begin),
        builder.CreateMul(builder.CreateSub(run_end, run_begin), builder.getInt64(element_bytes)));
    run_begin->addIncoming(run_end, builder.GetInsertBlock());
    builder.CreateCondBr(builder.CreateICmpSLT(run_end, hi), run_head, block_done);
  } else if (rank == 1) {
    ACCY_RETURN_IF_ERROR(emit_row(lo, hi, zero_offsets, builder.getInt64(0), out_base));
    builder.CreateBr(block_done);
  } else {
    // Row segments: pos runs over [lo, hi) one (partial) row of the last merged dim at a time.
    llvm::BasicBlock* before = builder.GetInsertBlock();
    auto* segment = llvm::BasicBlock::Create(context, "segment", function, block_done);
    builder.CreateBr(segment);
    builder.SetInsertPoint(segment);
    llvm::PHINode* pos = builder.CreatePHI(i64, 2, "pos");
    pos->addIncoming(lo, before);
    llvm::Value* length = builder.getInt64(row_length);
    llvm::Value* row = builder.CreateUDiv(pos, length, "row");
    llvm::Value* row_start = builder.CreateMul(row, length);
    llvm::Value* col_begin = builder.CreateSub(pos, row_start);
    llvm::Value* segment_end =
        builder.CreateBinaryIntrinsic(llvm::Intrinsic::smin, builder.CreateAdd(row_start, length), hi);
    llvm::Value* col_end = builder.CreateSub(segment_end, row_start);
    std::vector<llvm::Value*> offsets(accesses.size(), builder.getInt64(0));
    llvm::Value* rest = row;
    for (size_t d = rank - 1; d-- > 0;) {  // coordinates of the outer dims, innermost first
      llvm::Value* extent = builder.getInt64(extents[d]);
      llvm::Value* coord = d == 0 ? rest : builder.CreateURem(rest, extent);
      if (d > 0) rest = builder.CreateUDiv(rest, extent);
      for (size_t a = 0; a < accesses.size(); ++a) {
        if (strides[a][d] == 0) continue;
        offsets[a] = builder.CreateAdd(offsets[a], builder.CreateMul(coord, builder.getInt64(strides[a][d])));
      }
    }
    ACCY_RETURN_IF_ERROR(emit_row(col_begin, col_end, offsets, row_start, out_base));
    pos->addIncoming(segment_end, builder.GetInsertBlock());
    builder.CreateCondBr(builder.CreateICmpSLT(segment_end, hi), segment, block_done);
  }
  builder.SetInsertPoint(block_done);
  llvm::Value* next_block = builder.CreateAdd(block, builder.getInt64(1), "block.next", true, true);
  block->addIncoming(next_block, block_done);
  builder.CreateCondBr(builder.CreateICmpSLT(next_block, block_end), block_head, exit);
  builder.SetInsertPoint(exit);
  if (streaming) EmitStreamingFence(builder);
  builder.CreateRetVoid();
  return signature;
}

}  // namespace accy::jit
