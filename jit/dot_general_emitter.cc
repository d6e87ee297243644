// The dot_general kernel emitter (emitters.h EmitDotGeneralKernel): a lone dot_general or a
// dot_epilogue cluster (the dot plus same-dims elementwise ops computed from its result).
//
// Dims (StableHLO spec "dot_general"): the result is [batch..., lhs free..., rhs free...]. The
// kernel sees it as rows x N: a row is one (batch, lhs free) index (its lhs and rhs offsets
// come from the batch and lhs free dims), N is the rhs free dims, K the contracting dims. Each
// group's dims are merged where they nest in every buffer they index (size-1 dims dropped), so
// the usual layouts give one stride per group and no index division; the rest decompose a
// linear index with udiv/urem (correct for any dim positions, slower).
//
// Loop nest, per row: when the rhs's N stride is 1 (or N is 1) the "axpy" form keeps a row of
// N accumulators on the stack and, for each k, adds lhs[k] * rhs[k, n] over n (the inner loop
// is contiguous and the O3 loop vectorizer widens it); rows go four at a time so one rhs load
// feeds four rows. Otherwise (rhs transposed, [N, K]) the "dot" form reduces each output over k
// in a scalar accumulator (not vectorized: a sum split into lanes would change its order).
// Numerics: operands are converted to the result type (as the reference evaluator does), then
// accumulated in f32 (f16, bf16, f32 results) or f64 (f64) in row-major k order with fused
// multiply-adds (contract, never reassoc: StableHLO's expected values are sequential f32 sums and
// cancelling sums drift by hundreds of ULPs when reassociated), rounded once to the result type;
// integers multiply and add modulo 2^bits in the result type. The reference sums in double, so
// floats match it within a tolerance, not bitwise.
// Epilogue ops run on each rounded dot element in registers (ElementwiseLowering), reading their
// other operands through strides (elided broadcasts) or folded one-element constants.
//
// Blocks: a block is a fixed tile of rows x (up to kDotChunkColumns) columns chosen from the
// shapes only, so any split of blocks over threads computes the same bits (kernel_abi.h).
//
// EmitDotEpilogueKernel: the epilogue alone, when a library (oneDNN matmul) computes the dot and
// a prefix of the epilogue: the item's ops that do not feed the library's value, emitted as an
// elementwise fusion (elementwise_emitter.h: vectorized, blocks of kElementwiseBlockElements)
// that reads that value from a buffer.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "jit/elementwise_lowering.h"
#include "jit/emitters.h"
#include "jit/index_math.h"
#include "jit/operand_access.h"
#include "jit/kernel_abi.h"
#include "jit/kernel_prologue.h"
#include "src/fusion/fusion_plan.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

// Columns of one block (and of the stack accumulator row): 512 f64 x 4 rows is 16 KiB.
constexpr int64_t kDotChunkColumns = 512;
// Multiply-adds a block aims for: ~10-30 us of work, so blocks balance over threads for the
// larger products the JIT takes while a small product stays one block.
constexpr int64_t kDotBlockMacs = int64_t{1} << 17;
// Rows the axpy form computes together (one rhs load feeds this many rows).
constexpr int64_t kDotRowGroup = 4;

// Streams every merged dim carries a stride for: the lhs, the rhs, then each epilogue access.
constexpr size_t kLhs = 0;
constexpr size_t kRhs = 1;
constexpr size_t kFirstAccess = 2;

struct Dim {
  int64_t size = 1;
  std::vector<int64_t> strides;  // per stream, in elements
};

// Drops size-1 dims and merges each dim into the one outside it when it nests in every stream
// (outer stride == inner stride * inner size).
std::vector<Dim> MergeDims(const std::vector<Dim>& dims) {
  std::vector<Dim> merged;
  for (const Dim& dim : dims) {
    if (dim.size == 1) continue;
    bool nest = !merged.empty();
    for (size_t s = 0; nest && s < dim.strides.size(); ++s) {
      nest = merged.back().strides[s] == dim.strides[s] * dim.size;
    }
    if (nest) {
      merged.back().size *= dim.size;
      merged.back().strides = dim.strides;
    } else {
      merged.push_back(dim);
    }
  }
  return merged;
}

int64_t Extent(const std::vector<Dim>& dims) {
  int64_t extent = 1;
  for (const Dim& dim : dims) extent *= dim.size;
  return extent;
}

// An epilogue operand read from memory or folded.
using Access = OperandAccess;

// for (i = begin; i < end; i += step) body(i); leaves the builder after the loop.
template <typename Body>
void EmitFor(llvm::IRBuilder<>& b, llvm::Function* function, llvm::Value* begin, llvm::Value* end,
             int64_t step, Body&& body) {
  llvm::LLVMContext& context = b.getContext();
  llvm::BasicBlock* before = b.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(context, "loop", function);
  auto* done = llvm::BasicBlock::Create(context, "loop_done", function);
  b.CreateCondBr(b.CreateICmpSLT(begin, end), loop, done);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(begin, before);
  body(i);
  llvm::Value* next = b.CreateAdd(i, b.getInt64(step), "i.next", true, true);
  i->addIncoming(next, b.GetInsertBlock());
  b.CreateCondBr(b.CreateICmpSLT(next, end), loop, done);
  b.SetInsertPoint(done);
}

}  // namespace

StatusOr<KernelSignature> EmitDotGeneralKernel(const WorkItem& item, const FusionPlan& fusion,
                                               llvm::Module& module, std::string_view symbol) {
  const Operation* dot = nullptr;
  for (const Operation* op : item.ops) {
    if (op->kind() != OpKind::kDotGeneral) continue;
    if (dot != nullptr) {
      return absl::UnimplementedError(StrCat("jit: dot_general emitter: work item ", item.id,
                                             " holds two dot_generals"));
    }
    dot = op;
  }
  if (item.kind != WorkKind::kDotGeneral || dot == nullptr || item.output_value == nullptr) {
    return absl::UnimplementedError(StrCat("jit: dot_general emitter: work item ", item.id,
                                           " has kind ", WorkKindName(item.kind),
                                           " and no dot_general"));
  }
  const TensorType& lhs_type = dot->operand(0)->type();
  const TensorType& rhs_type = dot->operand(1)->type();
  const std::vector<int64_t>& out_dims = dot->result(0)->type().dims();
  const ElementType operand_type = lhs_type.element_type();
  const ElementType dot_type = dot->result(0)->type().element_type();
  const std::string dot_name = StrCat("dot_general %", dot->result(0)->id());
  if (rhs_type.element_type() != operand_type || IsBool(operand_type) || IsBool(dot_type) ||
      IsFloat(operand_type) != IsFloat(dot_type)) {
    return absl::UnimplementedError(StrCat(
        "jit: dot_general emitter: ", dot_name, " has element types ",
        ElementTypeName(operand_type), " x ", ElementTypeName(rhs_type.element_type()), " -> ",
        ElementTypeName(dot_type), " (expected one operand type, not i1, result of its class)"));
  }
  const std::vector<int64_t> lb = dot->GetInts("lhs_batching_dimensions");
  const std::vector<int64_t> rb = dot->GetInts("rhs_batching_dimensions");
  const std::vector<int64_t> lc = dot->GetInts("lhs_contracting_dimensions");
  const std::vector<int64_t> rc = dot->GetInts("rhs_contracting_dimensions");
  if (lb.size() != rb.size() || lc.size() != rc.size()) {
    return absl::InvalidArgumentError(StrCat("jit: dot_general emitter: ", dot_name,
                                             " has unpaired batching or contracting dims"));
  }

  // 1. Signature: the dot's operands, then each epilogue operand read from outside the item.
  KernelSignature signature;
  auto buffer_of = [&](const Value* value) {
    auto it = std::find(signature.inputs.begin(), signature.inputs.end(), value);
    if (it != signature.inputs.end()) return static_cast<int>(it - signature.inputs.begin());
    signature.inputs.push_back(value);
    return static_cast<int>(signature.inputs.size() - 1);
  };
  const int lhs_buffer = buffer_of(dot->operand(0));
  const int rhs_buffer = buffer_of(dot->operand(1));
  const std::set<const Operation*> members(item.ops.begin(), item.ops.end());
  std::vector<Access> accesses;
  std::map<std::pair<const Operation*, int64_t>, int> access_of_use;
  std::vector<const Operation*> epilogue;
  for (const Operation* op : item.ops) {
    if (op == dot) continue;
    if (!IsFusableElementwiseOp(*op) || op->result(0)->type().dims() != out_dims) {
      return absl::UnimplementedError(StrCat(
          "jit: dot_general emitter: epilogue op ", op->name(), " %", op->result(0)->id(),
          " is not an elementwise op over the dot_general's result dims ", ShapeText(out_dims)));
    }
    epilogue.push_back(op);
    for (int64_t i = 0; i < op->num_operands(); ++i) {
      const Value* operand = op->operand(i);
      const Operation* def = operand->defining_op();
      if (def != nullptr && members.count(def) != 0) continue;  // computed in registers
      ACCY_ASSIGN_OR_RETURN(
          OperandAccess access,
          ResolveOperandAccess("jit: dot_general emitter: epilogue op ", *op, *operand, fusion,
                               out_dims, signature.inputs));
      access_of_use[{op, i}] = static_cast<int>(accesses.size());
      accesses.push_back(std::move(access));
    }
  }
  if (item.output_value != (epilogue.empty() ? dot : epilogue.back())->result(0)) {
    return absl::UnimplementedError(StrCat("jit: dot_general emitter: work item ", item.id,
                                           " does not end at its last op"));
  }
  signature.outputs.push_back(item.output_value);

  // 2. Dim groups, streams [lhs, rhs, accesses...], outer to inner.
  const size_t streams = kFirstAccess + accesses.size();
  const std::vector<int64_t> ls = RowMajorStrides(lhs_type.dims());
  const std::vector<int64_t> rs = RowMajorStrides(rhs_type.dims());
  auto is_in = [](const std::vector<int64_t>& list, int64_t d) {
    return std::find(list.begin(), list.end(), d) != list.end();
  };
  std::vector<Dim> row_dims, n_dims, k_dims;
  size_t out_dim = 0;
  auto add_out_dim = [&](std::vector<Dim>& group, int64_t size, int64_t l, int64_t r) {
    Dim dim{size, std::vector<int64_t>(streams, 0)};
    dim.strides[kLhs] = l;
    dim.strides[kRhs] = r;
    for (size_t a = 0; a < accesses.size(); ++a) {
      dim.strides[kFirstAccess + a] = accesses[a].strides[out_dim];
    }
    ++out_dim;
    group.push_back(std::move(dim));
  };
  for (size_t i = 0; i < lb.size(); ++i) {
    add_out_dim(row_dims, lhs_type.dim(lb[i]), ls[static_cast<size_t>(lb[i])],
                rs[static_cast<size_t>(rb[i])]);
  }
  for (int64_t d = 0; d < lhs_type.rank(); ++d) {
    if (!is_in(lb, d) && !is_in(lc, d)) {
      add_out_dim(row_dims, lhs_type.dim(d), ls[static_cast<size_t>(d)], 0);
    }
  }
  for (int64_t d = 0; d < rhs_type.rank(); ++d) {
    if (!is_in(rb, d) && !is_in(rc, d)) {
      add_out_dim(n_dims, rhs_type.dim(d), 0, rs[static_cast<size_t>(d)]);
    }
  }
  ACCY_CHECK(out_dim == out_dims.size());
  for (size_t i = 0; i < lc.size(); ++i) {
    Dim dim{lhs_type.dim(lc[i]), std::vector<int64_t>(streams, 0)};
    dim.strides[kLhs] = ls[static_cast<size_t>(lc[i])];
    dim.strides[kRhs] = rs[static_cast<size_t>(rc[i])];
    k_dims.push_back(std::move(dim));
  }
  const int64_t rows = Extent(row_dims);
  const int64_t n = Extent(n_dims);
  const int64_t k = Extent(k_dims);
  row_dims = MergeDims(row_dims);
  n_dims = MergeDims(n_dims);
  k_dims = MergeDims(k_dims);
  // The axpy form needs unit rhs stride along N (or no N at all).
  const bool axpy = n_dims.empty() || (n_dims.size() == 1 && n_dims[0].strides[kRhs] == 1);

  // 3. Blocks: rows_per_block rows (a multiple of the row group) x one chunk of columns.
  const int64_t chunk = std::max<int64_t>(1, std::min(n, kDotChunkColumns));
  const int64_t chunks = BlockCount(n, chunk);
  int64_t rows_per_block =
      std::max<int64_t>(1, kDotBlockMacs / std::max<int64_t>(1, chunk * std::max<int64_t>(k, 1)));
  rows_per_block = BlockCount(rows_per_block, kDotRowGroup) * kDotRowGroup;
  const int64_t row_tiles = BlockCount(rows, rows_per_block);
  signature.block_size = rows_per_block * chunk;
  signature.block_count = n == 0 ? 0 : row_tiles * chunks;

  // 4. The function.
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  ElementwiseLowering lowering(module, b);
  llvm::Type* i64 = b.getInt64Ty();
  const KernelPrologue prologue(module, b, symbol, signature.inputs.size() + 1, "accy.dot");
  llvm::Function* function = prologue.function();
  std::vector<llvm::Value*> bases;
  for (size_t i = 0; i <= signature.inputs.size(); ++i) bases.push_back(prologue.buffer(i));
  llvm::Value* out_base = bases.back();
  auto I64 = [&](int64_t v) { return b.getInt64(v); };

  const bool is_float = IsFloat(dot_type);
  const ElementType acc_element =
      !is_float ? dot_type : dot_type == ElementType::kF64 ? ElementType::kF64 : ElementType::kF32;
  llvm::Type* acc_type = StorageType(context, acc_element);
  llvm::Value* zero = is_float ? llvm::ConstantFP::get(acc_type, 0.0)
                               : llvm::ConstantInt::get(acc_type, 0);
  llvm::FastMathFlags flags;
  flags.setAllowContract();
  b.setFastMathFlags(flags);  // only the accumulation's fmul/fadd are float ops before the epilogue

  auto load = [&](int buffer, ElementType type, llvm::Value* index) -> llvm::Value* {
    llvm::Type* memory = MemoryType(context, type);
    llvm::LoadInst* value = b.CreateAlignedLoad(
        memory, b.CreateInBoundsGEP(memory, bases[static_cast<size_t>(buffer)], index),
        llvm::Align(1));
    prologue.Tag(value, KernelPrologue::kInputs);
    return lowering.FromMemory(value, type);
  };
  // An operand element in the accumulator's type (via the result type, as the reference does).
  auto operand = [&](int buffer, llvm::Value* index) {
    llvm::Value* value = lowering.ConvertElement(load(buffer, operand_type, index), operand_type,
                                                 dot_type);
    return lowering.ConvertElement(value, dot_type, acc_element);
  };
  auto multiply_add = [&](llvm::Value* sum, llvm::Value* x, llvm::Value* y) {
    return is_float ? b.CreateFAdd(sum, b.CreateFMul(x, y)) : b.CreateAdd(sum, b.CreateMul(x, y));
  };
  // Offsets of a linear index over merged `dims` in every stream.
  auto offsets = [&](llvm::Value* linear, const std::vector<Dim>& dims) {
    std::vector<llvm::Value*> result(streams, I64(0));
    llvm::Value* rest = linear;
    for (size_t d = dims.size(); d-- > 0;) {
      llvm::Value* coord = d == 0 ? rest : b.CreateURem(rest, I64(dims[d].size));
      if (d > 0) rest = b.CreateUDiv(rest, I64(dims[d].size));
      for (size_t s = 0; s < streams; ++s) {
        if (dims[d].strides[s] == 0) continue;
        result[s] = b.CreateAdd(result[s], b.CreateMul(coord, I64(dims[d].strides[s])));
      }
    }
    return result;
  };

  // Epilogue constants are read once.
  std::vector<llvm::Value*> constants(accesses.size(), nullptr);
  for (size_t a = 0; a < accesses.size(); ++a) {
    if (accesses[a].buffer < 0) {
      constants[a] = lowering.ConstantElement(accesses[a].type, accesses[a].constant);
    }
  }
  // Rounds `sum` (output (row, column), row offsets `row_offsets`), runs the epilogue and stores.
  auto finish = [&](llvm::Value* sum, llvm::Value* row, llvm::Value* column,
                    const std::vector<llvm::Value*>& row_offsets) -> Status {
    b.clearFastMathFlags();  // the epilogue computes to IEEE rules
    std::map<const Value*, llvm::Value*> values;
    values[dot->result(0)] = lowering.ConvertElement(sum, acc_element, dot_type);
    std::vector<llvm::Value*> column_offsets;
    if (!accesses.empty()) column_offsets = offsets(column, n_dims);
    ACCY_RETURN_IF_ERROR(lowering.EmitChain(
        epilogue,
        [&](const Operation& op, int64_t i) -> llvm::Value* {
          const size_t a = static_cast<size_t>(access_of_use.at({&op, i}));
          if (constants[a] != nullptr) return constants[a];
          const size_t s = kFirstAccess + a;
          return load(accesses[a].buffer, accesses[a].type,
                      b.CreateAdd(row_offsets[s], column_offsets[s]));
        },
        values));
    const ElementType out_type = item.output_value->type().element_type();
    llvm::Type* out_memory = MemoryType(context, out_type);
    llvm::StoreInst* store = b.CreateAlignedStore(
        lowering.ToMemory(values.at(item.output_value), out_type),
        b.CreateInBoundsGEP(out_memory, out_base, b.CreateAdd(b.CreateMul(row, I64(n)), column)),
        llvm::Align(1));
    prologue.Tag(store, KernelPrologue::kOutputs);
    b.setFastMathFlags(flags);
    return absl::OkStatus();
  };

  llvm::AllocaInst* acc = nullptr;
  if (axpy) {
    acc = b.CreateAlloca(acc_type, I64(kDotRowGroup * chunk), "acc");
    acc->setAlignment(llvm::Align(64));
  }
  Status status = absl::OkStatus();
  // Rows [row, row + group) (group is 1 or kDotRowGroup, all inside the block), columns
  // [column0, column0 + width).
  auto emit_rows = [&](llvm::Value* row, int64_t group, llvm::Value* column0, llvm::Value* width) {
    std::vector<std::vector<llvm::Value*>> row_offsets;
    for (int64_t g = 0; g < group; ++g) {
      row_offsets.push_back(offsets(b.CreateAdd(row, I64(g)), row_dims));
    }
    auto rhs_column = [&](llvm::Value* column) {
      return n_dims.empty() ? I64(0) : offsets(column, n_dims)[kRhs];
    };
    if (!axpy) {
      EmitFor(b, function, I64(0), width, 1, [&](llvm::Value* j) {
        llvm::Value* column = b.CreateAdd(column0, j);
        llvm::Value* rhs_base = b.CreateAdd(row_offsets[0][kRhs], rhs_column(column));
        // The sum over k is a loop-carried phi, added in k order.
        llvm::BasicBlock* head = b.GetInsertBlock();
        llvm::Value* sum = zero;
        if (k > 0) {
          auto* loop = llvm::BasicBlock::Create(context, "k", function);
          auto* done = llvm::BasicBlock::Create(context, "k_done", function);
          b.CreateBr(loop);
          b.SetInsertPoint(loop);
          llvm::PHINode* kk = b.CreatePHI(i64, 2, "kk");
          llvm::PHINode* partial = b.CreatePHI(acc_type, 2, "sum");
          kk->addIncoming(I64(0), head);
          partial->addIncoming(zero, head);
          std::vector<llvm::Value*> k_offsets = offsets(kk, k_dims);
          llvm::Value* x = operand(lhs_buffer, b.CreateAdd(row_offsets[0][kLhs], k_offsets[kLhs]));
          llvm::Value* y = operand(rhs_buffer, b.CreateAdd(rhs_base, k_offsets[kRhs]));
          llvm::Value* next_sum = multiply_add(partial, x, y);
          llvm::Value* next = b.CreateAdd(kk, I64(1), "kk.next", true, true);
          kk->addIncoming(next, b.GetInsertBlock());
          partial->addIncoming(next_sum, b.GetInsertBlock());
          b.CreateCondBr(b.CreateICmpSLT(next, I64(k)), loop, done);
          b.SetInsertPoint(done);
          sum = next_sum;  // the loop's only exit: its value dominates `done`
        }
        if (status.ok()) status = finish(sum, row, column, row_offsets[0]);
      });
      return;
    }
    auto slot = [&](int64_t g, llvm::Value* j) {
      return b.CreateInBoundsGEP(acc_type, acc, b.CreateAdd(j, I64(g * chunk)));
    };
    EmitFor(b, function, I64(0), width, 1, [&](llvm::Value* j) {
      for (int64_t g = 0; g < group; ++g) b.CreateStore(zero, slot(g, j));
    });
    EmitFor(b, function, I64(0), I64(k), 1, [&](llvm::Value* kk) {
      std::vector<llvm::Value*> k_offsets = offsets(kk, k_dims);
      std::vector<llvm::Value*> x(static_cast<size_t>(group));
      for (int64_t g = 0; g < group; ++g) {
        x[static_cast<size_t>(g)] =
            operand(lhs_buffer, b.CreateAdd(row_offsets[static_cast<size_t>(g)][kLhs], k_offsets[kLhs]));
      }
      // Rows whose rhs offset is the same value (no batch dims) share one rhs load.
      EmitFor(b, function, I64(0), width, 1, [&](llvm::Value* j) {
        llvm::Value* column_offset = b.CreateAdd(rhs_column(b.CreateAdd(column0, j)), k_offsets[kRhs]);
        llvm::Value* shared = nullptr;
        for (int64_t g = 0; g < group; ++g) {
          llvm::Value* rhs_row = row_offsets[static_cast<size_t>(g)][kRhs];
          llvm::Value* y = g > 0 && rhs_row == row_offsets[0][kRhs] && shared != nullptr
                               ? shared
                               : operand(rhs_buffer, b.CreateAdd(rhs_row, column_offset));
          if (g == 0) shared = y;
          llvm::Value* s = slot(g, j);
          b.CreateStore(multiply_add(b.CreateLoad(acc_type, s), x[static_cast<size_t>(g)], y), s);
        }
      });
    });
    for (int64_t g = 0; g < group; ++g) {
      llvm::Value* r = b.CreateAdd(row, I64(g));
      EmitFor(b, function, I64(0), width, 1, [&](llvm::Value* j) {
        if (status.ok()) {
          status = finish(b.CreateLoad(acc_type, slot(g, j)), r, b.CreateAdd(column0, j),
                          row_offsets[static_cast<size_t>(g)]);
        }
      });
    }
  };

  // One block at a time, each with the same code whatever range the call covers.
  llvm::Value* block_begin = prologue.block_begin();
  llvm::Value* block_end = prologue.block_end();
  EmitFor(b, function, block_begin, block_end, 1, [&](llvm::Value* block) {
    llvm::Value* tile = chunks == 1 ? block : b.CreateUDiv(block, I64(chunks));
    llvm::Value* column0 =
        chunks == 1 ? I64(0) : b.CreateMul(b.CreateURem(block, I64(chunks)), I64(chunk));
    llvm::Value* width = n % chunk == 0 ? I64(chunk)
                                        : b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, I64(chunk),
                                                                  b.CreateSub(I64(n), column0));
    llvm::Value* first = b.CreateMul(tile, I64(rows_per_block));
    llvm::Value* last = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin,
                                                b.CreateAdd(first, I64(rows_per_block)), I64(rows));
    llvm::Value* grouped_end = first;
    if (axpy && rows >= kDotRowGroup) {
      // Whole groups of rows, then the block's remaining rows one by one.
      llvm::Value* count = b.CreateSub(last, first);
      grouped_end = b.CreateAdd(first, b.CreateMul(b.CreateUDiv(count, I64(kDotRowGroup)),
                                                   I64(kDotRowGroup)));
      EmitFor(b, function, first, grouped_end, kDotRowGroup,
              [&](llvm::Value* row) { emit_rows(row, kDotRowGroup, column0, width); });
    }
    EmitFor(b, function, grouped_end, last, 1,
            [&](llvm::Value* row) { emit_rows(row, 1, column0, width); });
  });
  b.CreateRetVoid();
  ACCY_RETURN_IF_ERROR(status);
  return signature;
}

StatusOr<KernelSignature> EmitDotEpilogueKernel(const WorkItem& item, const Value& library_output,
                                                const FusionPlan& fusion, llvm::Module& module,
                                                std::string_view symbol) {
  const std::string prefix = StrCat("jit: library epilogue emitter: work item ", item.id);
  const std::set<const Operation*> members(item.ops.begin(), item.ops.end());
  const OpKind contraction = item.kind == WorkKind::kConvolution    ? OpKind::kConvolution
                             : item.kind == WorkKind::kReduceWindow ? OpKind::kReduceWindow
                                                                    : OpKind::kDotGeneral;
  if ((item.kind != WorkKind::kDotGeneral && item.kind != WorkKind::kConvolution &&
       item.kind != WorkKind::kReduceWindow) ||
      members.count(library_output.defining_op()) == 0) {
    return absl::InvalidArgumentError(StrCat(prefix, " (kind ", WorkKindName(item.kind),
                                             ") computes no value %", library_output.id()));
  }
  // The library computed library_output and every item op it depends on (the dot included).
  std::set<const Operation*> computed;
  std::vector<const Operation*> pending = {library_output.defining_op()};
  bool has_dot = false;
  while (!pending.empty()) {
    const Operation* op = pending.back();
    pending.pop_back();
    if (!computed.insert(op).second) continue;
    has_dot = has_dot || op->kind() == contraction;
    for (const Value* operand : op->operands()) {
      const Operation* def = operand->defining_op();
      if (def != nullptr && members.count(def) != 0) pending.push_back(def);
    }
  }
  if (!has_dot) {
    return absl::InvalidArgumentError(
        StrCat(prefix, ": %", library_output.id(), " does not depend on the ", OpName(contraction)));
  }
  // The rest, in item order, as an elementwise fusion reading library_output from a buffer.
  WorkItem epilogue(std::pmr::get_default_resource());
  epilogue.id = item.id;
  epilogue.kind = WorkKind::kElementwiseFusion;
  epilogue.root = item.root;
  epilogue.output_value = item.output_value;
  epilogue.dtype = item.dtype;
  epilogue.rank = item.rank;
  epilogue.element_count = item.element_count;
  for (const Operation* op : item.ops) {
    if (computed.count(op) != 0) continue;
    for (const Value* operand : op->operands()) {
      if (operand != &library_output && computed.count(operand->defining_op()) != 0) {
        return absl::UnimplementedError(StrCat(
            prefix, ": epilogue op ", op->name(), " %", op->result(0)->id(), " reads %",
            operand->id(), ", which the library computes but does not output"));
      }
    }
    epilogue.ops.push_back(op);
  }
  if (epilogue.ops.empty() || epilogue.ops.back()->result(0) != item.output_value) {
    return absl::InvalidArgumentError(StrCat(prefix, ": no epilogue op after %",
                                             library_output.id(), " computes the item's result"));
  }
  return EmitElementwiseKernel(epilogue, fusion, module, symbol);
}

}  // namespace accy::jit
