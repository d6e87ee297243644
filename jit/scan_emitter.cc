// The scan kernel emitter (emitters.h EmitScanKernel): cumsum along any dim.
//
// The operand is viewed as [outer, length, inner] around the scanned dim. A unit is one tile: one
// outer index and up to kScanTileLanes consecutive inner indices (lines); the kernel walks the
// tile's `length` positions in order, each adding one element to every line's running sum, so
// lines are independent (the lane loop vectorizes) and each line is summed sequentially, in the
// reference's order. Blocks hold whole units (about kScanBlockElements elements), independent
// of the thread count. Numerics: integers accumulate in their own type (wrapping); every float
// type accumulates in f64 and rounds each output once -- exactly what the reference evaluator
// does, so results are bit-identical to it (the running sum starts at -0, so a leading -0 stays
// -0). Scanning the innermost dim gives one-line tiles whose sum lives in a register.
#include <algorithm>
#include <functional>
#include <string>

#include "jit/elementwise_lowering.h"
#include "jit/emitters.h"
#include "jit/kernel_abi.h"
#include "jit/kernel_prologue.h"
#include "llvm/IR/Intrinsics.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

// Lines per tile: the lane loop's width.
constexpr int64_t kScanTileLanes = 256;
// Elements per block (a block holds whole tiles, at least one).
constexpr int64_t kScanBlockElements = 16384;

// for (i = begin; i < end; ++i) body(i), leaving the builder after the loop.
void EmitFor(llvm::IRBuilder<>& b, llvm::Function* function, llvm::Value* begin, llvm::Value* end,
             const std::function<void(llvm::Value*)>& body) {
  llvm::LLVMContext& context = b.getContext();
  llvm::BasicBlock* before = b.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(context, "loop", function);
  auto* done = llvm::BasicBlock::Create(context, "loop_done", function);
  b.CreateCondBr(b.CreateICmpSLT(begin, end), loop, done);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(begin, before);
  body(i);
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1), "i.next", true, true);
  i->addIncoming(next, b.GetInsertBlock());
  b.CreateCondBr(b.CreateICmpSLT(next, end), loop, done);
  b.SetInsertPoint(done);
}

}  // namespace

StatusOr<KernelSignature> EmitScanKernel(const WorkItem& item, const FusionPlan&,
                                         llvm::Module& module, std::string_view symbol) {
  if (item.kind != WorkKind::kScan || item.root == nullptr ||
      item.root->kind() != OpKind::kCumsum || item.ops.size() != 1) {
    return absl::UnimplementedError(StrCat(
        "jit: scan emitter: work item ", item.id, " has kind ", WorkKindName(item.kind),
        " and root ", item.root != nullptr ? item.root->name() : "?",
        ", expected a single cumsum"));
  }
  const Operation& cumsum = *item.root;
  const Value* x = cumsum.operand(0);
  const ElementType type = x->type().element_type();
  const std::vector<int64_t>& dims = x->type().dims();
  const int64_t dimension = cumsum.GetInt("dimension").value_or(-1);
  if (dimension < 0 || dimension >= static_cast<int64_t>(dims.size()) ||
      cumsum.result(0)->type() != x->type()) {
    return absl::InvalidArgumentError(StrCat("jit: scan emitter: cumsum dimension ", dimension,
                                             " is not a dim of ", x->type().ToString()));
  }
  if (type == ElementType::kI1) {
    return absl::UnimplementedError("jit: scan emitter: cumsum on element type i1 is not supported");
  }
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (static_cast<int64_t>(d) < dimension) outer *= dims[d];
    if (static_cast<int64_t>(d) > dimension) inner *= dims[d];
  }
  const int64_t length = dims[static_cast<size_t>(dimension)];
  const int64_t tile = std::max<int64_t>(1, std::min(inner, kScanTileLanes));
  const int64_t tiles_per_outer = BlockCount(inner, tile);
  const int64_t units = outer * tiles_per_outer;
  const int64_t units_per_block =
      std::max<int64_t>(1, kScanBlockElements / std::max<int64_t>(1, length * tile));

  KernelSignature signature;
  signature.inputs.push_back(x);
  signature.outputs.push_back(cumsum.result(0));
  signature.block_size = units_per_block;
  signature.block_count = length == 0 ? 0 : BlockCount(units, units_per_block);

  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  ElementwiseLowering lowering(module, b);
  const KernelPrologue prologue(module, b, symbol, 2, "accy.scan");
  llvm::Function* function = prologue.function();
  llvm::Value* in = prologue.buffer(0);
  llvm::Value* out = prologue.buffer(1);

  const bool is_float = IsFloat(type);
  const ElementType accumulator = is_float ? ElementType::kF64 : type;
  llvm::Type* acc_type = StorageType(context, accumulator);
  llvm::Type* memory = MemoryType(context, type);
  llvm::Value* zero = is_float ? llvm::ConstantFP::getNegativeZero(acc_type)
                               : llvm::ConstantInt::get(acc_type, 0);
  llvm::AllocaInst* sums = b.CreateAlloca(acc_type, b.getInt64(tile), "sums");
  sums->setAlignment(llvm::Align(64));

  auto I64 = [&](int64_t v) { return b.getInt64(v); };
  llvm::Value* first = b.CreateMul(prologue.block_begin(), I64(units_per_block));
  llvm::Value* last = b.CreateBinaryIntrinsic(
      llvm::Intrinsic::smin, b.CreateMul(prologue.block_end(), I64(units_per_block)), I64(units));
  EmitFor(b, function, first, last, [&](llvm::Value* unit) {
    llvm::Value* o = b.CreateUDiv(unit, I64(tiles_per_outer));
    llvm::Value* j0 = b.CreateMul(b.CreateURem(unit, I64(tiles_per_outer)), I64(tile));
    llvm::Value* lines = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, I64(tile),
                                                 b.CreateSub(I64(inner), j0));
    EmitFor(b, function, I64(0), lines, [&](llvm::Value* j) {
      b.CreateStore(zero, b.CreateInBoundsGEP(acc_type, sums, j));
    });
    llvm::Value* line_base = b.CreateAdd(b.CreateMul(o, I64(length * inner)), j0);
    EmitFor(b, function, I64(0), I64(length), [&](llvm::Value* k) {
      llvm::Value* base = b.CreateAdd(line_base, b.CreateMul(k, I64(inner)));
      EmitFor(b, function, I64(0), lines, [&](llvm::Value* j) {
        llvm::Value* index = b.CreateAdd(base, j);
        llvm::LoadInst* element =
            b.CreateAlignedLoad(memory, b.CreateInBoundsGEP(memory, in, index), llvm::Align(1));
        prologue.Tag(element, KernelPrologue::kInputs);
        llvm::Value* slot = b.CreateInBoundsGEP(acc_type, sums, j);
        llvm::Value* sum = b.CreateLoad(acc_type, slot);
        llvm::Value* value = lowering.FromMemory(element, type);
        llvm::Value* next = is_float
                                ? b.CreateFAdd(sum, lowering.ConvertElement(value, type, accumulator))
                                : b.CreateAdd(sum, value);
        b.CreateStore(next, slot);
        llvm::Value* rounded = is_float ? lowering.ConvertElement(next, accumulator, type) : next;
        llvm::StoreInst* store = b.CreateAlignedStore(lowering.ToMemory(rounded, type),
                                                      b.CreateInBoundsGEP(memory, out, index),
                                                      llvm::Align(1));
        prologue.Tag(store, KernelPrologue::kOutputs);
      });
    });
  });
  b.CreateRetVoid();
  return signature;
}

}  // namespace accy::jit
