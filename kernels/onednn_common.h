// oneDNN plumbing shared by the bindings in kernels/: the process-wide CPU engine, element-type
// and memory-descriptor conversions, translation of dnnl::error into statuses, and the
// BoundPrimitive every binding fills. Internal to kernels/ (includes dnnl.hpp). The engine is
// created once, thread-safely; everything else is a pure function or a value owned by its caller.
#ifndef ACCY_KERNELS_ONEDNN_COMMON_H_
#define ACCY_KERNELS_ONEDNN_COMMON_H_

#include <cstdint>
#include <optional>
#include <span>
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

// How a binding hands bf16/f16 tensors to oneDNN. oneDNN 2.6 has bf16/f16 primitives only from
// avx512_core up (dev_guide_data_types.html, "Hardware Limitations"); below that, a binding is
// built over f32 and every bf16/f16 buffer argument is staged: reordered to f32 before the
// primitive runs and rounded back (nearest even, once) after it. Exact for the reads (widening
// is exact) and the same single rounding the native bf16/f16 primitives do, since they
// compute in f32 too (docs/isa.md).
enum class LowPrecision : uint8_t {
  kNative,       // bf16/f16 descriptors: needs the primitive's low-precision implementation
  kStagedAsF32,  // f32 descriptors, bf16/f16 buffers staged (StageArguments)
};

// f32, bf16, f16 map to oneDNN's data types of the same bits (bf16/f16 to f32 under
// kStagedAsF32); nullopt for any other type.
std::optional<dnnl::memory::data_type> ToDnnlType(ElementType type,
                                                  LowPrecision mode = LowPrecision::kNative);
// True for bf16 and f16, the types oneDNN lacks primitives for below avx512_core.
bool IsLowPrecision(ElementType type);
// True when an operand or result of any op in `ops` is bf16 or f16.
bool HasLowPrecisionTensor(std::span<const Operation* const> ops);
// True for oneDNN's reference implementations (impl_info_str "ref:..."), far slower than the
// optimized ones (and than the JIT).
bool IsReferenceImplementation(std::string_view implementation);
// `md` with its element type replaced by `type` (same dims, strides, offset).
dnnl::memory::desc WithDataType(const dnnl::memory::desc& md, dnnl::memory::data_type type);

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
  // The buffer's own layout when the primitive reads (input) or writes (output) a re-laid-out
  // copy of it: weights with a padded row stride (onednn_dot_general.cc), blocked weights and
  // activations of a convolution (onednn_convolution.cc); empty = the argument's. Consumed by
  // StageArguments.
  std::optional<dnnl::memory::desc> buffer_md = std::nullopt;
  // With buffer_md: the buffer is a parameter the caller declared constant across runs
  // (CompileOptions::constant_parameters, accy/engine.h), so its re-laid-out copy is refilled
  // only when the buffer's address differs from the one it was last filled from (the first run,
  // or the caller passing another tensor), not before every run.
  bool constant_source = false;
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
  // Softmax rows of output 0 that hold a NaN become NaN throughout after the run (NanRows):
  // the contract's decomposition (kernel_contracts.h) gives NaN everywhere in a row holding
  // NaN or +inf, where oneDNN 2.6's vectorized softmax gives 0 (softmax) or -inf (log_softmax)
  // at the row's other elements. Such a row always leaves at least one NaN in oneDNN's output
  // (x - max is NaN at the NaN or +inf), so no input scan is needed. Rows: `extent` elements
  // `inner` apart, `outer` * `inner` of them; extent 0 = no fixup.
  struct NanRows {
    ElementType type = ElementType::kF32;  // f32, bf16 or f16
    int64_t outer = 0, extent = 0, inner = 0;
  } nan_rows;
  // A user-registered host kernel runs instead of a primitive (include/accy/host_kernel.h).
  std::shared_ptr<const HostKernelSpec> host;
  // Bytes a host kernel's binding owns outside `arguments` and `staged`: weight copies kept
  // across runs (the small-M kernel's packed panels) and per-run working copies (the tiled
  // gemm's padded weights). Reported by LibraryKernel::weight_copy_bytes / scratch_bytes.
  int64_t host_weight_bytes = 0;
  int64_t host_scratch_bytes = 0;
  // The arguments the primitive reads or writes through an owned copy (StageArguments): bf16/f16
  // buffers under LowPrecision::kStagedAsF32, re-laid-out weights; converted around the run
  // (inputs before the primitive, outputs after it), in argument order.
  struct Staged {
    int buffer = -1;       // the run's buffer it converts
    bool output = false;   // false: buffer -> f32 before the run; true: f32 -> buffer after it
    dnnl::memory user;     // the buffer's own type and layout, data handle set per run
    dnnl::memory f32;      // the owned copy the primitive reads (the argument's descriptor)
    dnnl::primitive reorder;
    // BoundArgument::constant_source: the address the copy was last filled from (null: never
    // filled); the reorder is skipped while the run's buffer is at that address.
    bool constant_source = false;
    const void* filled_from = nullptr;
    // A copy between two row layouts of one element type (weights with a padded row stride)
    // runs as row memcpys on the run's threads (CopyRows) instead of oneDNN 2.6's generic
    // simple:any reorder: the same 0.035 ms for 784x512 f32 at 2 threads on an idle Zen 4, with
    // one primitive fewer per staged argument and one thread below 256 KiB. (The 0.22 ms this
    // comment cited at first were taken while another process's threads held a core: a 2-thread
    // copy waits for its descheduled half either way; docs/isa.md.) Bytes; 0 rows = use the
    // reorder.
    struct RowCopy {
      int64_t rows = 0;
      int64_t row_bytes = 0;          // bytes copied per row
      int64_t buffer_stride = 0;      // bytes between rows in the run's buffer
      int64_t copy_stride = 0;        // bytes between rows in the owned copy
    } row_copy;
  };
  std::vector<Staged> staged;
};

// Makes every row of `data` (`rows.outer` blocks of `rows.extent` x `rows.inner` elements of
// `rows.type`; a row is `extent` elements `inner` apart) that holds a NaN NaN throughout (a quiet
// NaN), on up to omp_get_max_threads() threads above 256 KiB. BoundPrimitive::nan_rows.
void FillRowsHoldingNan(void* data, const BoundPrimitive::NanRows& rows);

// The payload of `value` when a constant op defines it (compile-time weights), else null.
const DenseElements* ConstantPayload(const Value* value);

// Weights known at compile time in the layout the primitive prefers (format_tag::any): one
// reorder from `user_md` (its element type replaced by the payload's, so an f32 descriptor of a
// staged bf16 constant reads bf16) over `payload` into memory of `packed_md`, owned by the result
// (oneDNN "Reorder", dev_guide_reorder.html). Throws dnnl::error like any binding step.
dnnl::memory PrepackWeights(const DenseElements& payload, const dnnl::memory::desc& user_md,
                            const dnnl::memory::desc& packed_md);

// Moves buffer-backed arguments onto owned copies in the argument's descriptor, with a reorder
// (dev_guide_reorder.html) that fills the copy from the buffer before each run (inputs) or
// writes it back after (outputs): with `types` kStagedAsF32 every bf16/f16 argument (its
// descriptor f32, the buffer its own type and layout), and every argument with a buffer_md.
// Throws dnnl::error like any binding step.
void StageArguments(BoundPrimitive& bound, LowPrecision types);

// Copies `rows` rows of `row_bytes` bytes from `from` (rows `from_stride` bytes apart) to `to`
// (`to_stride` apart) on up to omp_get_max_threads() threads, in contiguous blocks of rows (one
// thread below 256 KiB). The regions must not overlap.
void CopyRows(const void* from, int64_t from_stride, void* to, int64_t to_stride, int64_t rows,
              int64_t row_bytes);

// Builds the scratchpad argument (user scratchpad mode: memory allocated at compile time, so
// the run path never allocates) and records the implementation name.
void AddScratchpad(const dnnl::primitive_desc& pd, BoundPrimitive& bound);

}  // namespace accy::kernels

#endif  // ACCY_KERNELS_ONEDNN_COMMON_H_
