// oneDNN plumbing shared by the bindings in kernels/: the process-wide CPU engine, element-type
// and memory-descriptor conversions, translation of dnnl::error into statuses, and the
// BoundPrimitive every binding fills. Internal to kernels/ (includes dnnl.hpp). The engine is
// created once, thread-safely; everything else is a pure function or a value owned by its caller.
#ifndef ACCY_KERNELS_ONEDNN_COMMON_H_
#define ACCY_KERNELS_ONEDNN_COMMON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memory>

#include "accy/host_kernel.h"
#include "accy/ir.h"
#include "accy/status.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace accy::kernels {

// The CPU engine every primitive is created on (index 0, oneDNN "Basic Concepts").
const dnnl::engine& CpuEngine();

// f32, bf16, f16 map to oneDNN's data types of the same bits; nullopt for any other type.
std::optional<dnnl::memory::data_type> ToDnnlType(ElementType type);

// A plain memory descriptor of `dims` with explicit element `strides` (oneDNN
// "Memory Format Propagation": arbitrary strides are a plain format).
dnnl::memory::desc StridedDesc(const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& strides, dnnl::memory::data_type type);
// Row-major (dense) strides of `dims`, in elements.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);
// Translates a oneDNN error raised while binding `item`: dnnl_unimplemented becomes
// kUnimplemented ("<item>: oneDNN has no implementation of <what> on this host"), anything else
// kInternal carrying oneDNN's text.
Status DnnlErrorStatus(const dnnl::error& error, std::string_view item, std::string_view what);

// One memory argument of a bound primitive: the oneDNN argument id, its memory (created with no
// data handle), and where its data comes from at run time.
struct BoundArgument {
  int arg = 0;
  dnnl::memory memory;
  // Index into the run's buffers (inputs, then outputs); -1 for memory the binding owns
  // (scratchpad, folded constants).
  int buffer = -1;
};

// What a binding produces: a primitive and its arguments, plus the item's buffer contract.
struct BoundPrimitive {
  std::string name;                    // "dot_general %5", "kernel_call %3 (accy.nn.softmax)"
  std::vector<const Value*> inputs;    // buffer order (inputs, then outputs)
  std::vector<const Value*> outputs;
  // For each output, the input buffer it shares (in-place results), or -1.
  std::vector<int> output_aliases;
  dnnl::primitive primitive;           // empty when the call is a no-op (zero-size output)
  std::vector<BoundArgument> arguments;
  std::string implementation;          // oneDNN impl_info_str, e.g. "brg:avx512_core"
  // Zero-fill output 0 at run time (a contraction over an empty dim: the sum of nothing).
  bool zero_fill_output = false;
  // A user-registered host kernel runs instead of a primitive (include/accy/host_kernel.h).
  std::shared_ptr<const HostKernelSpec> host;
};

// The payload of `value` when a constant op defines it (compile-time weights), else null.
const DenseElements* ConstantPayload(const Value* value);

// Weights known at compile time in the layout the primitive prefers (format_tag::any): one
// reorder from `user_md` over `payload` into memory of `packed_md`, owned by the result
// (oneDNN "Reorder", dev_guide_reorder.html). Throws dnnl::error like any binding step.
dnnl::memory PrepackWeights(const DenseElements& payload, const dnnl::memory::desc& user_md,
                            const dnnl::memory::desc& packed_md);

// Builds the scratchpad argument (user scratchpad mode: memory allocated at compile time, so
// the run path never allocates) and records the implementation name.
void AddScratchpad(const dnnl::primitive_desc& pd, BoundPrimitive& bound);

}  // namespace accy::kernels

#endif  // ACCY_KERNELS_ONEDNN_COMMON_H_
