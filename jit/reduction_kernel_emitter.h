// Internal to jit/: the LLVM IR emitter of one reduction kernel, translating a ReductionLayout
// (reduction_layout.h) into `extern "C" void <symbol>(...)` (kernel_abi.h). The loop nest
// (units, chunks, rows, steps, lanes) is in reduction_emitter.cc; combining partial results
// (named combiners, the pairwise cascade, the lane tree, segment partials and the finish block)
// in reduction_combine.cc. Includes LLVM headers: include it only from jit/*.cc. One emitter
// emits one function; not thread-safe.
#ifndef ACCY_JIT_REDUCTION_KERNEL_EMITTER_H_
#define ACCY_JIT_REDUCTION_KERNEL_EMITTER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "accy/status.h"
#include "jit/elementwise_lowering.h"
#include "jit/kernel_prologue.h"
#include "jit/reduction_layout.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"

namespace accy {
struct WorkItem;
}  // namespace accy

namespace accy::jit {

class ReductionKernelEmitter {
 public:
  ReductionKernelEmitter(const ReductionLayout& layout, const WorkItem& item, llvm::Module& module)
      : layout_(layout), item_(item), module_(module), context_(module.getContext()),
        b_(context_), lowering_(module, b_) {}

  // Emits the kernel named `symbol` into the module. Errors: kUnimplemented from lowering an
  // op of the item or of the reduce body (the function is then left half-built).
  Status Emit(std::string_view symbol);

 private:
  using Body = std::function<Status(llvm::Value*)>;
  // Where one unit's lanes read from and write to.
  struct Unit {
    llvm::Value* index = nullptr;
    std::vector<llvm::Value*> offsets;  // per access
    llvm::Value* lane_count = nullptr;
    llvm::Value* out_base = nullptr;    // output index of lane 0
  };

  llvm::Value* I64(int64_t v) { return b_.getInt64(v); }
  llvm::Value* Min(llvm::Value* x, llvm::Value* y) {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, x, y);
  }
  llvm::BasicBlock* NewBlock(const char* name) {
    return llvm::BasicBlock::Create(context_, name, function_);
  }
  bool named() const { return layout_.combiner != ReduceCombiner::kGeneral; }
  ElementType LaneType(int64_t k) const {
    return named() ? layout_.accumulator : layout_.reduce->result(k)->type().element_type();
  }

  // for (i = begin; i < end; ++i) body(i), with the builder left after the loop.
  Status For(llvm::Value* begin, llvm::Value* end, const Body& body);
  // if (condition) body().
  Status If(llvm::Value* condition, const std::function<Status()>& body);
  llvm::Value* LoadLane(llvm::Value* array, int64_t k, llvm::Value* index);
  void StoreLane(llvm::Value* array, int64_t k, llvm::Value* index, llvm::Value* value);
  void StoreOutput(int64_t k, llvm::Value* index, llvm::Value* storage_value);
  // `base` plus index decomposed row-major over `dims`, times each access's strides.
  std::vector<llvm::Value*> Offsets(llvm::Value* index, const std::vector<ReductionLoopDim>& dims,
                                    std::vector<llvm::Value*> base);
  Unit UnitAt(llvm::Value* unit);

  llvm::Value* Identity();
  llvm::Value* Combine(llvm::Value* a, llvm::Value* b);
  llvm::Value* ToAccumulator(llvm::Value* storage);
  // init (op) acc in the element type's storage form: where the init value is applied, once.
  llvm::Value* Finalize(llvm::Value* acc);

  StatusOr<std::vector<llvm::Value*>> EmitInputs(const std::vector<llvm::Value*>& base,
                                                 llvm::Value* lane);
  StatusOr<std::vector<llvm::Value*>> EmitBody(const std::vector<llvm::Value*>& arguments);
  Status EmitStep(const std::vector<llvm::Value*>& base, llvm::Value* lane_count);
  Status EmitRow(const Unit& unit, llvm::Value* row, llvm::Value* step_begin, llvm::Value* step_end);
  Status EmitUnit(const Unit& unit, llvm::Value* chunk_begin, llvm::Value* chunk_end);
  Status EmitPush();
  Status EmitLaneTree();
  Status EmitCollapse();
  Status EmitUnitOutputs(const Unit& unit);
  Status EmitUnitPartials(const Unit& unit, llvm::Value* segment);
  Status EmitFinish();

  const ReductionLayout& layout_;
  const WorkItem& item_;
  llvm::Module& module_;
  llvm::LLVMContext& context_;
  llvm::IRBuilder<> b_;
  ElementwiseLowering lowering_;
  llvm::Function* function_ = nullptr;
  std::vector<llvm::Value*> inputs_;   // input buffer bases
  std::vector<llvm::Value*> outputs_;  // output buffer bases
  llvm::Value* scratch_ = nullptr;
  std::vector<llvm::Value*> lanes_;    // per result: alloca of `lanes` accumulators
  llvm::Value* cascade_ = nullptr;     // alloca of cascade_levels * lanes accumulators
  llvm::Value* chunk_count_ = nullptr; // alloca i64: chunks pushed into the cascade
  std::vector<llvm::Value*> constants_;  // per access: folded constant or null
  std::vector<llvm::Value*> inits_;      // per result, storage form
  llvm::Value* init_accumulator_ = nullptr;
  // Alias scopes: inputs, outputs (and scratch), lane arrays; `not_*` lists the other two.
  // They spare the vectorizer runtime overlap checks and let LICM keep lanes in registers.
  // The kernel function, its buffers and alias scopes (made by Emit); kLaneScope is the scope
  // of the stack lanes, apart from inputs and outputs.
  static constexpr size_t kLaneScope = 2;
  std::optional<KernelPrologue> prologue_;
};

}  // namespace accy::jit

#endif  // ACCY_JIT_REDUCTION_KERNEL_EMITTER_H_
