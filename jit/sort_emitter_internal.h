// Internal to jit/: what the sort kernels of sort_emitter.cc (the general merge sort, top_k)
// and sort_fast_paths.cc (the vqsort paths) share: row geometry, block and scratch sizing, the
// kernel's buffers. Includes LLVM headers: include it only from those two files.
#ifndef ACCY_JIT_SORT_EMITTER_INTERNAL_H_
#define ACCY_JIT_SORT_EMITTER_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "jit/kernel_signature.h"
#include "jit/shape_kernel_builder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace accy::jit::sort_internal {

// Blocks of a sort kernel: enough to spread rows over threads; each needs a scratch slot.
constexpr int64_t kMaxSortBlocks = 256;
// Scratch bytes a sort kernel's slots may take together (a single row takes what it needs).
constexpr int64_t kSortScratchBudget = int64_t{16} << 20;

// Rows of `dims` along `dimension`: count, the dim's size and stride; row r starts at
// (r / stride) * size * stride + r % stride.
struct RowGeometry {
  int64_t rows = 0;
  int64_t size = 0;
  int64_t stride = 1;
};

inline RowGeometry RowsAlong(const std::vector<int64_t>& dims, int64_t dimension) {
  RowGeometry g;
  g.size = dims[static_cast<size_t>(dimension)];
  int64_t outer = 1;
  for (int64_t d = 0; d < dimension; ++d) outer *= dims[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(dimension) + 1; d < dims.size(); ++d) g.stride *= dims[d];
  g.rows = outer * g.stride;
  return g;
}

// Blocks of a sort kernel over `g`'s rows, each with a scratch slot of `slot_bytes`: at most
// kMaxSortBlocks, and no more slots than kSortScratchBudget holds (at least one).
inline void SetSortBlocks(const RowGeometry& g, int64_t slot_bytes, KernelSignature& signature) {
  if (g.rows <= 0 || g.size <= 0) return;
  const int64_t by_budget = std::max<int64_t>(1, kSortScratchBudget / slot_bytes);
  signature.block_count = std::min({g.rows, kMaxSortBlocks, by_budget});
  signature.block_size = (g.rows + signature.block_count - 1) / signature.block_count;
  signature.block_count = BlockCount(g.rows, signature.block_size);
  signature.scratch_bytes = signature.block_count * slot_bytes;
}

// The buffers of a sort of every operand: each operand an input (AddInput), each result an
// output, then the scratch buffer.
struct SortBuffers {
  std::vector<size_t> inputs;      // per operand
  std::vector<ElementType> types;  // per operand
  size_t first_output = 0;
  size_t scratch = 0;
};
inline SortBuffers AddSortBuffers(const Operation& op, KernelSignature& signature) {
  SortBuffers buffers;
  for (int64_t i = 0; i < op.num_operands(); ++i) {
    buffers.inputs.push_back(AddInput(signature, op.operand(i)));
    buffers.types.push_back(op.operand(i)->type().element_type());
  }
  for (int64_t i = 0; i < op.num_results(); ++i) signature.outputs.push_back(op.result(i));
  buffers.first_output = signature.inputs.size();
  buffers.scratch = buffers.first_output + static_cast<size_t>(op.num_results());
  return buffers;
}

inline llvm::Value* Min(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, x, y);
}

// The kernel of a sort that one of the vqsort paths takes (sort_fast_paths.cc: a single plain
// key, or a key function of one operand), or nullopt when the comparator fits neither and the
// merge sort runs it.
std::optional<StatusOr<KernelSignature>> EmitSortFastPath(const Operation& op, const RowGeometry& g,
                                                          llvm::Module& module,
                                                          std::string_view symbol);

}  // namespace accy::jit::sort_internal

#endif  // ACCY_JIT_SORT_EMITTER_INTERNAL_H_
