// LibraryKernel: a library work item (kernel_call, dot_general, dot_epilogue cluster,
// convolution, reduce_window, triangular_solve, rng_bit_generator, lapack) bound to a oneDNN
// primitive (or a host kernel: registered kernel_calls, Eigen's triangular solve, Random123's
// generators, LAPACK's routines) once at compile time, then run over raw buffers in the JIT's order
// (inputs, then outputs; jit/kernel_abi.h) with no allocation, copy or exception (oneDNN errors
// become statuses naming the item; Eigen's triangular solve copies b into the result, and may
// allocate packing blocks for large matrices). The module of the item's ops must outlive the
// kernel. Move-only; Run re-points the bound memories, so one run at a time per kernel (distinct
// kernels may run concurrently).
#ifndef ACCY_KERNELS_ONEDNN_KERNEL_H_
#define ACCY_KERNELS_ONEDNN_KERNEL_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "accy/ir.h"
#include "accy/status.h"

namespace accy {
class FusionPlan;
struct WorkItem;
}  // namespace accy

namespace accy::kernels {

// Products of fewer element ops (2 * batch * m * n * k) than this run on the JIT's dot_general
// kernel (jit/dot_general_emitter.cc) rather than through a oneDNN call. Measured by
// bench/bench_jit_dot.cc (f32, 1 thread, median of 3, busy 2-core machine), JIT vs this
// library item (brg:avx512_core), real time: 8^3 42 ns vs 365 ns, 16^3 56 ns vs 427 ns, 32^3
// 300 ns vs 760 ns, 48^3 870 ns vs 1.73 us, 64^3 2.07 us vs 3.58 us, 96^3 6.96 us vs 11.2 us,
// 128^3 31.3 us vs 26.3 us; skinny 1x256x256 1.5 us vs 3.5 us, 4x128x128 0.98 us vs 1.25 us,
// 8x512x64 5.2 us vs 5.1 us, 256x8x256 13.4 us vs 14.0 us. oneDNN's CPU time is ~1/3 below its
// real time (4x128x128: 0.82 us, 8x512x64: 3.5 us, 256x8x256: 9.2 us). 2^18 gives the JIT
// every cube up to 48^3 and vector-matrix products (faster on both clocks) and 4x128x128 (2^17:
// 1.27x faster in real time, 1.2x slower in CPU time); it leaves to oneDNN the skinny shapes
// the JIT loses in CPU time (8x512x64 = 2^19, 256x8x256 = 2^20), and with them 64^3 and 96^3,
// which the JIT would still win (one element-op count cannot separate those shapes).
// At 2 threads (BM_*2Threads, real time, median of 3, quiet machine; JIT / library): 32^3 0.26,
// 48^3 0.62, 64^3 0.79, 96^3 0.71, 128^3 1.68, 256^3 2.62; 1x256x256 0.70, 4x128x128 0.78,
// 8x512x64 1.16, 256x8x256 1.46 (1 thread, same day: 64^3 0.90, 96^3 0.95, 4x128x128 1.19,
// 8x512x64 1.50, 256x8x256 1.67). The JIT gains a little on cubes at 2 threads, but the skinny
// products just above 2^18 still go faster on oneDNN, so the same threshold serves both counts.
inline constexpr uint64_t kMinLibraryDotElementOps = uint64_t{1} << 18;

struct LibraryKernelOptions {
  // dot_general items below this many element ops are left to the JIT (ClassifyDotGeneral says
  // kJitSmall, CreateForDotGeneral returns kUnimplemented). Tests set 0 to bind every size.
  uint64_t min_dot_element_ops = kMinLibraryDotElementOps;
  // oneDNN falls back to its reference kernels (impl "ref:any") for shapes its optimized
  // matmuls lack, e.g. a post-op broadcast over M in 2.6; those are far slower than the JIT, so
  // dot_general items refuse them (kUnimplemented) unless this is set. kernel_calls, which
  // have no JIT alternative, always accept them.
  bool allow_reference_implementation = false;
  // convolution items below this many element ops (the planner's estimate, 2 x output elements
  // x window positions x input features per group) are left to the JIT, whose direct loop nest
  // beats oneDNN's per-call overhead and sums in the StableHLO interpreter's order without
  // fused multiply-adds (docs/numerics.md); Create returns kUnimplemented saying so. Tests set
  // 0 to bind every size.
  uint64_t min_convolution_element_ops = kMinLibraryDotElementOps;
  // A dot_general item whose epilogue maps onto post-ops only partly (an op with no exact
  // post-op, a type change, a second eltwise of one kind) binds the dot and the longest prefix
  // of its epilogue chain that maps (ClassifyDotGeneral says kLibraryWithJitEpilogue); when
  // oneDNN offers only its reference implementation for that prefix's post-ops, the dot alone.
  // The kernel's outputs()[0] is then the last bound op's value (its library_output), not the
  // item's result, and the caller computes the rest of the epilogue from it (the engine: a JIT
  // elementwise pass, jit::EmitDotEpilogueKernel). false: such items are kUnimplemented (the
  // JIT runs them whole).
  bool allow_jit_epilogue = false;
  // Parameters of the compiled function the caller declared constant across runs
  // (CompileOptions::constant_parameters): convolution and matmul weights read from one of them
  // take the layout the primitive prefers (format_tag::any), reordered on the first run and
  // again only when the parameter's address changes (BoundArgument::constant_source). The
  // values must outlive the kernels bound with these options.
  std::span<const Value* const> constant_parameters = {};
  // dot_general items with at most kSmallMMaxRows rows of f32 and constant (or declared-
  // constant) weights run on accy's small-M kernel (kernels/small_m_matmul.h) instead of
  // matmul, which streams such weights at ~0.6 of the read bandwidth. Tests and benchmarks
  // clear it to compare with matmul.
  bool allow_small_m_kernel = true;
  // f32 dot_general items on AMD hosts (AVX2 or above) run as fixed tiles of single-threaded
  // gemm:jit calls instead of the matmul primitive when they fit (onednn_dot_mapping.h
  // BindTiledGemm). Tests and benchmarks clear it to compare with matmul.
  bool allow_tiled_gemm = true;
};

// Whether this host runs fitting f32 dot_generals as tiled gemm:jit (onednn_dot_mapping.h
// BindTiledGemm; gemm_tiles_dot_general.cc): the process ISA (ProcessIsa, ACCY_MAX_ISA) is AVX2
// or above and the CPU is not Intel's. There an epilogue that matmul would take whole as
// post-ops runs as a JIT pass after the tiles (ItemProfile::runs_on "library+jit"); a bias
// over N stays with the tiles.
bool TiledGemmHost();
// The smallest m, k and n the tiled binding takes: kTiledGemmMinDim (64, onednn_dot_mapping.h)
// when oneDNN's ISA has avx512_core, else 1.
int64_t TiledGemmMinDim();

// Whether `value` is one of options.constant_parameters.
bool IsConstantParameter(const LibraryKernelOptions& options, const Value* value);

// Where a dot_general item (a lone dot_general or a dot_epilogue cluster) should run.
enum class DotPlacement : uint8_t {
  kLibrary,     // maps onto oneDNN matmul (with post-ops for the whole epilogue)
  // matmul with post-ops for a prefix of the epilogue chain (possibly empty), the rest of the
  // epilogue on the JIT over matmul's output (LibraryKernelOptions::allow_jit_epilogue only)
  kLibraryWithJitEpilogue,
  kJitSmall,    // maps, but is below LibraryKernelOptions::min_dot_element_ops
  kJitUnmapped, // dims, types or (without allow_jit_epilogue) an epilogue op do not map
};

struct DotClassification {
  DotPlacement placement = DotPlacement::kJitUnmapped;
  uint64_t element_ops = 0;  // 2 * batch * m * n * k when the dims map
  // kLibrary: the item's result. kLibraryWithJitEpilogue: the value matmul and its post-ops
  // compute (the dot_general's result or the last mapped epilogue op's); null otherwise.
  const Value* library_output = nullptr;
  // kLibraryWithJitEpilogue: the first epilogue op left to the JIT, with why it does not map
  // ("epilogue op exponential %4 has no exact post-op"); kJit*: why not kLibrary; else empty.
  std::string reason;
};

class LibraryKernel {
 public:
  // Binds a work item of kind kernel_call, dot_general, convolution, triangular_solve,
  // rng_bit_generator or lapack (`fusion` tells which broadcasts are elided; null means none are).
  // Errors as the two functions below for the first two; for convolution (oneDNN
  // convolution_forward, onednn_bindings.h BindConvolution, with the item's epilogue as bias and
  // post-ops; buffers lhs, rhs, the epilogue's other inputs, result) kUnimplemented below
  // options.min_convolution_element_ops or naming what does not map; for triangular_solve
  // (Eigen, BindTriangularSolve; buffers a, b, result; implementation "eigen:trsm") as
  // BindTriangularSolve; for rng_bit_generator (Random123, BindRngBitGenerator; buffers
  // initial_state, output_state, output) as BindRngBitGenerator; for lapack (Debian's LAPACK,
  // BindLapack; potrf buffers a, factor, info) as BindLapack; for reduce_window (oneDNN
  // pooling_forward, BindReduceWindow) kUnimplemented naming what does not map exactly;
  // kInvalidArgument for another kind.
  static StatusOr<LibraryKernel> Create(const WorkItem& item, const FusionPlan* fusion,
                                        const LibraryKernelOptions& options = {});
  // Binds a kernel_call of a registered host kernel (include/accy/host_kernel.h; checked first)
  // or of a catalog target (kernel_catalog.h). Buffers: every operand, then
  // every result; a result aliasing operand i (result_aliases) takes the same pointer as
  // operand i. Errors: the catalog's kInvalidArgument (unknown target naming it, bad operand
  // naming it); kUnimplemented when oneDNN has no implementation for the types on this host.
  static StatusOr<LibraryKernel> CreateForKernelCall(const Operation& call);
  // Binds a dot_general and its epilogue: `ops` in topological order holding exactly one
  // dot_general, the others elementwise ops computed from it in a chain (oneDNN matmul with
  // post_ops, dev_guide_matmul.html + dev_guide_attributes_post_ops.html). Buffers: the first
  // use of each external value walking the bound ops' operands left to right (an elided
  // broadcast stands for its input; a one-element constant is folded and has no buffer), then
  // the root's result -- or, with options.allow_jit_epilogue and an epilogue that maps only
  // partly, the last bound op's result (see allow_jit_epilogue).
  // Errors: kUnimplemented naming the dim, type or op that does not map (the JIT takes those),
  // or saying the product is below options.min_dot_element_ops.
  static StatusOr<LibraryKernel> CreateForDotGeneral(std::span<const Operation* const> ops,
                                                     const FusionPlan* fusion,
                                                     const LibraryKernelOptions& options = {});

  LibraryKernel(LibraryKernel&&) noexcept;
  LibraryKernel& operator=(LibraryKernel&&) noexcept;
  ~LibraryKernel();

  // "dot_general %5", "kernel_call %3 (accy.nn.softmax)".
  const std::string& name() const;
  // The values behind the buffers, in buffer order.
  std::span<const Value* const> inputs() const;
  std::span<const Value* const> outputs() const;
  // Per output, the input position it computes in place over (kernel_call `result_aliases`),
  // or -1. Run requires that output's buffer to be that input's buffer.
  std::span<const int> output_aliases() const;
  // oneDNN's implementation name (impl_info_str), e.g. "brg:avx512_core", or "eigen:trsm",
  // "random123:philox4x32-10"; empty for a no-op.
  const std::string& implementation() const;

  // Memory the binding owns for the kernel's lifetime, in bytes (none of it is a run's buffer):
  // - weight_copy_bytes: copies of weights kept across runs in the layout the kernel reads:
  //   compile-time constant weights reordered once (oneDNN's prepacked weights, PrepackWeights),
  //   declared-constant parameters' copies refilled only when their address changes
  //   (CompileOptions::constant_parameters), the small-M kernel's packed panels.
  // - scratch_bytes: per-run working memory: oneDNN's scratchpad (user scratchpad mode), copies
  //   refilled before every run (weights copied to a padded row stride, bf16/f16 staged as
  //   f32), the tiled gemm's padded weights.
  int64_t weight_copy_bytes() const;
  int64_t scratch_bytes() const;
  // Whether the binding fixed its thread team when it was created (oneDNN primitives size theirs
  // from omp_get_max_threads() then), so that a run on fewer threads needs a kernel bound with
  // that many. False for host kernels, which take the run's omp_get_max_threads() when they run.
  bool team_fixed_at_bind() const;

  // Runs the primitive over `buffers` (inputs then outputs, buffer_count = inputs().size() +
  // outputs().size()), each of exactly `buffer_bytes[i]` bytes = its value's byte size.
  // kInvalidArgument naming the buffer when a count, size or pointer is wrong (an in-place
  // result must get its operand's pointer); kInternal when oneDNN fails (its status).
  Status Run(void* const* buffers, const int64_t* buffer_bytes, int64_t buffer_count);

  struct Impl;  // opaque: the primitive, its memories and the stream (onednn_kernel.cc)

 private:
  explicit LibraryKernel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Where dot_general item `ops` should run (see DotPlacement); never fails. It maps dims, types
// and ops without creating a primitive descriptor, so Create may still refuse a kLibrary item
// when oneDNN has only a reference implementation for it (see allow_reference_implementation),
// or bind fewer post-ops than library_output says (see allow_jit_epilogue).
DotClassification ClassifyDotGeneral(std::span<const Operation* const> ops,
                                     const FusionPlan* fusion,
                                     const LibraryKernelOptions& options = {});

}  // namespace accy::kernels

#endif  // ACCY_KERNELS_ONEDNN_KERNEL_H_
