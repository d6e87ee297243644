// The mapping of a dot_general work item onto oneDNN matmul (dev_guide_matmul.html), shared by
// the binder (onednn_dot_general.cc: dims, primitive) and the epilogue mapping
// (onednn_dot_epilogue.cc: post_ops, dev_guide_attributes_post_ops.html). Internal to kernels/
// (includes dnnl.hpp). Pure functions over a finished module, thread-safe; a Mapping is a value
// its binder owns.
#ifndef ACCY_KERNELS_ONEDNN_DOT_MAPPING_H_
#define ACCY_KERNELS_ONEDNN_DOT_MAPPING_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "kernels/onednn_common.h"
#include "kernels/onednn_kernel.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace accy {
class FusionPlan;
}  // namespace accy

namespace accy::kernels {

// One (size, stride) group of dims; stride 0 means "only unit dims" (any stride will do).
struct Group {
  int64_t size = 1;
  int64_t stride = 0;
};

// Collapses dims `order` (outer to inner) of a buffer with `dims`/`strides` into one dim, or
// nullopt when they do not nest (stride[d_i] == stride[d_i+1] * dims[d_i+1] over non-unit dims).
std::optional<Group> Collapse(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                              const std::vector<int64_t>& order);
// Gives unit dims (stride 0) the stride of a dim placed just outside the next inner one.
void FillUnitStrides(const std::vector<int64_t>& dims, std::vector<int64_t>& strides);
// The dims of a dot_general operand of `rank` that are neither batch nor contracting, ascending.
std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contract);

// How much of the epilogue chain MapEpilogue maps onto post-ops.
enum class EpilogueMode : uint8_t {
  kWhole,   // every op, or kUnimplemented naming the first that does not map
  kPrefix,  // the ops of the chain up to the first that does not map (ops before the dot and
            // from that op on are left to the caller)
  kNone,    // none: matmul computes the dot alone
};

// A dot_general item mapped onto matmul: its memory descriptors, the input buffers in ABI
// order, and the post-ops (and bias) of its mapped epilogue.
struct Mapping {
  std::string name;
  const Operation* dot = nullptr;
  // How bf16/f16 tensors enter the descriptors (onednn_common.h): kStagedAsF32 on hosts with
  // no low-precision matmul.
  LowPrecision types = LowPrecision::kNative;
  // The value matmul's dst holds (the root's result when the whole epilogue maps), and why the
  // mapping stopped before the root (kPrefix, kNone).
  const Value* library_output = nullptr;
  std::string stop_reason;
  dnnl::memory::desc src_md, weights_md, dst_md;
  std::vector<const Value*> inputs;  // buffer order
  int lhs_buffer = 0, rhs_buffer = 0;
  dnnl::post_ops post_ops;
  struct Binary {
    int post_op_index;
    dnnl::memory::desc md;
    int buffer;                    // -1: folded scalar
    float scalar = 0;
  };
  std::vector<Binary> binaries;
  // A leading bias add over N goes to matmul's own bias argument (measured at 1024^3, 1 thread:
  // +0.05 ms vs +0.24 ms as a binary post-op).
  std::optional<dnnl::memory::desc> bias_md;
  int bias_buffer = -1;
  uint64_t element_ops = 0;
  bool empty_output = false, empty_contraction = false;
  // The rhs is a parameter declared constant across runs (LibraryKernelOptions::
  // constant_parameters): matmul picks its weights layout, filled once per address.
  bool weights_constant_source = false;
};

// The buffer index of input `value`, appending it to m.inputs at its first use.
int BufferOf(Mapping& m, const Value* value);
// kUnimplemented "<dot>: does not map onto oneDNN matmul: <why> (the JIT runs it)".
Status Unmapped(const Mapping& m, std::string_view why);

// Maps the epilogue chain of `ops` (the item's ops, m.dot among them) after the dot onto
// m.post_ops (and m.bias_md, m.binaries) as `mode` says, and sets m.library_output (and
// m.stop_reason when it is not the root's result). Needs m's dims mapped (MapDot). Errors:
// kUnimplemented naming the op that does not map (kWhole), or for an op before the dot that the
// chain does not read when the chain reaches the root (kPrefix, kNone)
// (onednn_dot_epilogue.cc).
Status MapEpilogue(Mapping& m, std::span<const Operation* const> ops, const FusionPlan* fusion,
                   EpilogueMode mode);

// Binds mapped item `m` (MapItem done) to the small-M kernel (small_m_matmul.h) instead of
// matmul when it fits: f32 throughout (no staging), no batch dims, 1 <= M <= kSmallMMaxRows,
// K >= 1, lhs and dst rows contiguous, weights (any strides) from a constant op or a parameter
// in options.constant_parameters and not also the lhs, no post-ops (matmul's bias is taken),
// options.allow_small_m_kernel, and ProcessIsa() AVX2 or above. nullopt when it does not fit,
// or when the packed copy (SmallMPackedElements floats) cannot be allocated
// (small_m_dot_general.cc). The binding's implementation is "accy:small_m_matmul:<isa> (...)".
std::optional<BoundPrimitive> BindSmallMMatmul(const Mapping& m,
                                               const LibraryKernelOptions& options);

}  // namespace accy::kernels

#endif  // ACCY_KERNELS_ONEDNN_DOT_MAPPING_H_
