// Internal to jit/: the scaffolding every shape kernel shares (shape_emitter.cc,
// gather_scatter_emitter.cc, window_emitter.cc): the kernel function and its buffer pointers, raw-bit and typed
// element access with noalias scopes between inputs and outputs, counted loops, conditionals,
// and the walk over row segments of a block of output elements. Includes LLVM headers: include
// it only from jit/*.cc. Not thread-safe (one IRBuilder); the caller owns the module.
#ifndef ACCY_JIT_SHAPE_KERNEL_BUILDER_H_
#define ACCY_JIT_SHAPE_KERNEL_BUILDER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jit/index_math.h"

#include "accy/ir.h"
#include "accy/status.h"
#include "jit/elementwise_lowering.h"
#include "jit/kernel_abi.h"
#include "jit/kernel_prologue.h"
#include "jit/kernel_signature.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace accy::jit {

// Output elements per block of the shape kernels that walk their output in row-major order: the
// elementwise block size, for the same balance between load spread and per-block set-up.
inline constexpr int64_t kShapeBlockElements = kElementwiseBlockElements;

// The position of `value` in signature.inputs, appending it when absent (a value read twice has
// one buffer).
size_t AddInput(KernelSignature& signature, const Value* value);

// The little-endian bytes of `value` when it is a one-element constant, else null. Shape kernels
// fold such operands (pad's padding_value, dynamic start indices) into their code: no buffer.
const uint8_t* ConstantScalarBytes(const Value& value);
// An integer index element from its bytes, as ShapeKernelBuilder::LoadIndex reads it.
int64_t IndexFromBytes(ElementType type, const uint8_t* bytes);

class ShapeKernelBuilder {
 public:
  // Bodies may fail (an update computation op the JIT cannot lower).
  using IndexFn = std::function<Status(llvm::Value* index)>;
  // One row segment: coordinates of the outer dims (rank - 1 values, i64), the columns
  // [col_begin, col_end) of the last dim, and the linear output index of column 0 of the row.
  using RowFn = std::function<Status(const std::vector<llvm::Value*>& outer,
                                     llvm::Value* col_begin, llvm::Value* col_end,
                                     llvm::Value* row_start)>;

  // Creates `extern "C" void <symbol>(buffers, buffer_bytes, block_begin, block_end)`
  // (kernel_abi.h) in `module` with `inputs` input buffers then `outputs` output buffers, and
  // positions the builder in its entry block after loading every buffer pointer.
  ShapeKernelBuilder(llvm::Module& module, std::string_view symbol, size_t inputs,
                     size_t outputs);

  llvm::IRBuilder<>& ir() { return builder_; }
  ElementwiseLowering& lowering() { return lowering_; }
  llvm::Value* block_begin() const { return block_begin_; }
  llvm::Value* block_end() const { return block_end_; }
  llvm::Value* Int(int64_t value) { return builder_.getInt64(value); }

  // Element `index` (i64, in elements) of buffer `buffer` as raw bits (iN, N = 8 * byte width;
  // a copy through bits keeps NaN payloads and -0 unchanged).
  llvm::Value* LoadBits(size_t buffer, ElementType type, llvm::Value* index);
  void StoreBits(size_t buffer, ElementType type, llvm::Value* index, llvm::Value* bits);
  // `lanes` consecutive elements from `index` as one <lanes x iN> vector of raw bits.
  llvm::Value* LoadBitsVector(size_t buffer, ElementType type, llvm::Value* index, int64_t lanes);
  void StoreBitsVector(size_t buffer, ElementType type, llvm::Value* index, llvm::Value* bits);
  // The address of element `index` (i64) of buffer `buffer`, for passing a row to a runtime
  // function (sort_runtime.h).
  llvm::Value* ElementPointer(size_t buffer, ElementType type, llvm::Value* index);
  // An element's raw bits as a constant (iN), from its little-endian bytes.
  llvm::Value* BitsConstant(ElementType type, const uint8_t* bytes);
  // The element in storage form (elementwise_lowering.h), for computing with it.
  llvm::Value* LoadElement(size_t buffer, ElementType type, llvm::Value* index);
  void StoreElement(size_t buffer, ElementType type, llvm::Value* index, llvm::Value* value);
  // An integer index element as i64: signed types sign-extended, unsigned zero-extended, and a
  // u64 above INT64_MAX pinned to INT64_MAX (larger than any dim, as the reference evaluator
  // treats it). `type` must be an integer type.
  llvm::Value* LoadIndex(size_t buffer, ElementType type, llvm::Value* index);
  // max(low, min(value, high)) on signed i64.
  llvm::Value* Clamp(llvm::Value* value, llvm::Value* low, llvm::Value* high);
  // Copies `bytes` bytes of input buffer `from` to output buffer `to` (they never overlap).
  void CopyBuffer(size_t to, size_t from, int64_t bytes);

  // A stack slot of `type` created in the kernel's entry block (so a loop that uses it does not
  // grow the stack); SROA turns it into registers. For accumulators carried across loops.
  llvm::Value* EntryAlloca(llvm::Type* type, std::string_view name);
  // for (i = begin; i < end; i += step) body(i), with i64 bounds.
  Status Loop(llvm::Value* begin, llvm::Value* end, const IndexFn& body, int64_t step = 1);
  // if (condition) then().
  Status If(llvm::Value* condition, const std::function<Status()>& then);
  // Walks the linear positions [lo, hi) of a row-major space of `dims` one (partial) row of its
  // last dim at a time; rank 0 is one row of one column. Each row's outer coordinates are
  // decomposed once.
  Status Rows(llvm::Value* lo, llvm::Value* hi, const std::vector<int64_t>& dims,
              const RowFn& fn);
  // As Rows, calling `fn(coordinates, linear)` per element (all `dims.size()` coordinates);
  // loop-invariant parts of its code are hoisted out of the column loop by LICM.
  Status Elements(llvm::Value* lo, llvm::Value* hi, const std::vector<int64_t>& dims,
                  const std::function<Status(const std::vector<llvm::Value*>& coordinates,
                                             llvm::Value* linear)>& fn);
  // The element range [lo, hi) of this call's blocks: blocks of `block_size` elements over
  // `count` elements (the last one partial).
  std::pair<llvm::Value*, llvm::Value*> BlockElements(int64_t block_size, int64_t count);
  // Ends the kernel (ret void). No emission after it.
  void Finish();

 private:
  llvm::Value* Address(size_t buffer, llvm::Type* type, llvm::Value* index);
  void Tag(llvm::Instruction* access, size_t buffer);

  llvm::Module& module_;
  llvm::IRBuilder<> builder_;
  ElementwiseLowering lowering_;
  KernelPrologue prologue_;
  llvm::Function* function_ = nullptr;
  size_t inputs_ = 0;
  std::vector<llvm::Value*> bases_;
  llvm::Value* block_begin_ = nullptr;
  llvm::Value* block_end_ = nullptr;
};

// Spec "bitcast_convert" between i1 and a wider type (num_bits(i1) = 1): element i of the i1
// side is bit i % 8 of byte i / 8 of the other side (bool_bitcast_emitter.cc).
StatusOr<KernelSignature> EmitBoolBitcastKernel(const Operation& op, llvm::Module& module,
                                                std::string_view symbol);

// Shape kernels of gather_scatter_emitter.cc, called by EmitShapeKernel for the item's single
// op (same contract as emitters.h).
StatusOr<KernelSignature> EmitGatherKernel(const Operation& gather, llvm::Module& module,
                                           std::string_view symbol);
StatusOr<KernelSignature> EmitScatterKernel(const Operation& scatter, llvm::Module& module,
                                            std::string_view symbol);
// Shape kernels of window_emitter.cc: reduce_window (any body, dilations and padding; blocks of
// output elements) and select_and_scatter (one block).
StatusOr<KernelSignature> EmitReduceWindowKernel(const Operation& reduce_window,
                                                 llvm::Module& module, std::string_view symbol);
StatusOr<KernelSignature> EmitSelectAndScatterKernel(const Operation& select_and_scatter,
                                                     llvm::Module& module,
                                                     std::string_view symbol);

// Shape kernels of sort_emitter.cc: sort (any comparator, operands and dimension; a stable
// merge sort of an index permutation per row in a scratch slot per block of rows) and top_k
// (a heap selection per last-dim row in the indices output).
StatusOr<KernelSignature> EmitSortKernel(const Operation& sort, llvm::Module& module,
                                         std::string_view symbol);
StatusOr<KernelSignature> EmitTopKKernel(const Operation& top_k, llvm::Module& module,
                                         std::string_view symbol);

}  // namespace accy::jit

#endif  // ACCY_JIT_SHAPE_KERNEL_BUILDER_H_
