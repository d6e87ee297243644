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

// A plain (blocked, no inner blocks) descriptor's dims and strides, in elements; nullopt for
// any other layout. Shared by the host-kernel bindings below (small_m_dot_general.cc).
struct Plain {
  std::vector<int64_t> dims, strides;
};
std::optional<Plain> PlainOf(const dnnl::memory::desc& md);

// Binds mapped item `m` (MapItem done) to the small-M kernel (small_m_matmul.h) instead of
// matmul when it fits: f32 throughout (no staging), no batch dims, 1 <= M <= kSmallMMaxRows,
// K >= 1, lhs and dst rows contiguous, weights (any strides) from a constant op or a parameter
// in options.constant_parameters and not also the lhs, no post-ops (matmul's bias is taken),
// options.allow_small_m_kernel, and ProcessIsa() AVX2 or above. nullopt when it does not fit,
// or when the packed copy (SmallMPackedElements floats) cannot be allocated
// (small_m_dot_general.cc). The binding's implementation is "accy:small_m_matmul:<isa> (...)".
std::optional<BoundPrimitive> BindSmallMMatmul(const Mapping& m,
                                               const LibraryKernelOptions& options);

// Where BindTiledGemm cuts a [m, n] result: tiles_m x tiles_n tiles of tile_rows x tile_cols
// (the last row and column of tiles may be smaller). The grid depends on m, n and max_rows only,
// never on the thread count, so the bits do not either. Rows: max_rows per tile at most, split
// evenly. Columns: one tile below n 512, else about 384 wide (512 when m > 256; at least 2
// tiles), rounded up to 16 floats. A result that would be one tile with m >= 128 is cut into two
// row tiles, and an odd count above one gets one tile more (columns when split, else rows) so
// that two threads share it evenly. E.g. with max_rows 512: 128 x 768 -> 2 tiles of 128 x 384;
// 128 x 3072 -> 8 of 128 x 384; 64 x 512 -> 2 of 64 x 256; 1024 x 1024 -> 2 x 2 of 512 x 512
// (docs/tiled_gemm.md).
struct TiledGemmGrid {
  int64_t tiles_m = 1, tiles_n = 1;
  int64_t tile_rows = 0, tile_cols = 0;
};
TiledGemmGrid TiledGemmGridFor(int64_t m, int64_t n, int64_t max_rows);
// The max_rows BindTiledGemm uses: 512 when oneDNN's ISA has avx512_core, else 1024 (gemm:jit's
// AVX2 kernels lose 4-9% to 512-row tiles at 1024^3; docs/tiled_gemm.md).
int64_t TiledGemmMaxRows();

// BindTiledGemm's smallest m, k and n with avx512_core: the range it was measured on (smaller
// products keep brgemm matmul, which gave the same bits at 1 and 2 threads on every shape
// tried). Below avx512_core every size takes the tiles (TiledGemmMinDim(), onednn_kernel.h, is
// 1): the matmul primitive there is gemm:jit threaded by oneDNN, whose bits depend on the team
// size (e.g. the MLP's 64 x 512 x 10 layer, 35 of 640 outputs at 1 and 2 threads); a product
// of one tile runs on one thread.
inline constexpr int64_t kTiledGemmMinDim = 64;

// The L1D associativity (HostL1dWays) from which BindTiledGemm reads weights whose row stride
// is an odd multiple of 2 KiB in place when its tiles run on two or more threads. Measured on
// Zen 5 (12 ways) under the AVX2 cap: the MLP's 64 x 784 x 512 and 64 x 512 x 512 products at 2
// threads 7-15% faster in place, at 1 thread 7-10% slower; on Zen 2 and Zen 4 (8 ways) the copy
// paid at both thread counts (onednn_dot_general.cc PaddedWeightsDesc).
inline constexpr int kL1dWaysForInPlaceStrides = 12;

// Binds mapped item `m` (MapItem done) to oneDNN's gemm:jit through dnnl_sgemm, one
// single-threaded call per tile of TiledGemmGridFor(m, n, TiledGemmMaxRows()) with the tiles
// shared by the run's OpenMP team, instead of the matmul primitive (docs/tiled_gemm.md: on AMD
// Zen 5, brg:avx512_core reads plain weights 15-30% slower than gemm:jit on the transformer's
// 128-row products, the AVX2 matmul primitive runs gemm:jit 10-15% slower than dnnl_sgemm at
// 1024^3, and gemm:jit threaded by oneDNN gives other bits at 1 and 2 threads). When it fits:
// TiledGemmHost(), options.allow_tiled_gemm, f32 throughout (no staging), no batch dims, m, k
// and n at least TiledGemmMinDim(), lhs and weights with rows or columns contiguous, dst rows
// contiguous, weights neither a constant op nor a declared-constant parameter (matmul prepacks
// those), no post-ops; matmul's bias (over n) is added per tile after its product.
// `padded_ld` > 0 (elements, at least n; [K, N] weights only): each run first copies the weights
// to a buffer the kernel owns (k * padded_ld floats, allocated at bind time and not counted in
// ExecutableStats) with that row stride (CopyRows), as matmul's PaddedWeightsDesc does for
// 2 KiB-multiple strides on AVX2, which gemm:jit reads at well under full speed; on hosts whose
// L1D has at least kL1dWaysForInPlaceStrides ways a stride that is not a 4 KiB multiple is
// copied only for runs whose tiles take one thread (HostL1dWays, docs/tiled_gemm.md). nullopt
// otherwise. The implementation reads "gemm:jit (dnnl_sgemm) in <count> fixed tiles of
// <rows>x<cols>...". Run errors: kInternal naming the item when dnnl_sgemm fails.
std::optional<BoundPrimitive> BindTiledGemm(const Mapping& m, const LibraryKernelOptions& options,
                                            int64_t padded_ld = 0);

}  // namespace accy::kernels

#endif  // ACCY_KERNELS_ONEDNN_DOT_MAPPING_H_
