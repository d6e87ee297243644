// dot_general items on oneDNN's gemm:jit (`dnnl_sgemm`, dev_guide_sgemm.html) in a fixed grid
// of tiles instead of the matmul primitive (onednn_dot_mapping.h BindTiledGemm). Why and where
// it is used: docs/tiled_gemm.md.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "kernels/onednn_dot_mapping.h"
#include "kernels/onednn_isa.h"
#include "src/util/str_cat.h"

namespace accy::kernels {
namespace {

using dt = dnnl::memory::data_type;

// A plain 2-D f32 descriptor (PlainOf); nullopt for other layouts, ranks or types.
std::optional<Plain> Plain2dOf(const dnnl::memory::desc& md) {
  if (md.data.ndims != 2 || md.data_type() != dt::f32) return std::nullopt;
  return PlainOf(md);
}

// How dnnl_sgemm (row-major) reads a [rows, cols] operand: 'N' with leading dimension
// strides[0] when rows are contiguous, 'T' with strides[1] when columns are; nullopt otherwise.
struct Operand {
  char trans;
  int64_t ld;
};

std::optional<Operand> OperandOf(const Plain& p) {
  if (p.strides[1] == 1 && p.strides[0] >= std::max<int64_t>(1, p.dims[1])) {
    return Operand{'N', p.strides[0]};
  }
  if (p.strides[0] == 1 && p.strides[1] >= std::max<int64_t>(1, p.dims[0])) {
    return Operand{'T', p.strides[1]};
  }
  return std::nullopt;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

bool TiledGemmHost() {
  if (HostIsIntel()) return false;
  const StatusOr<Isa> isa = ProcessIsa();
  return isa.ok() && *isa >= Isa::kAvx2;
}

int64_t TiledGemmMaxRows() { return OneDnnHasAvx512Core() ? 512 : 1024; }

int64_t TiledGemmMinDim() { return OneDnnHasAvx512Core() ? kTiledGemmMinDim : 1; }

TiledGemmGrid TiledGemmGridFor(int64_t m, int64_t n, int64_t max_rows) {
  TiledGemmGrid grid;
  int64_t tiles_m = CeilDiv(std::max<int64_t>(m, 1), std::max<int64_t>(max_rows, 1));
  const int64_t width = m > 256 ? 512 : 384;
  int64_t tiles_n = n >= 512 ? std::max<int64_t>(2, (n + width / 2) / width) : 1;
  if (tiles_m * tiles_n == 1 && m >= 128) tiles_m = 2;
  // Rounding the tile sizes up (columns to 16 floats) can leave fewer tiles than asked for, and an
  // odd count: ask for one more until the count that results is even (or one).
  for (int attempt = 0; attempt < 64; ++attempt) {
    grid.tile_rows = CeilDiv(std::max<int64_t>(m, 1), tiles_m);
    grid.tile_cols = std::min<int64_t>(n, CeilDiv(CeilDiv(n, tiles_n), 16) * 16);
    grid.tiles_m = CeilDiv(m, grid.tile_rows);
    grid.tiles_n = grid.tile_cols > 0 ? CeilDiv(n, grid.tile_cols) : 1;
    const int64_t count = grid.tiles_m * grid.tiles_n;
    if (count <= 1 || count % 2 == 0) break;
    if (tiles_n > 1) {
      ++tiles_n;
    } else {
      ++tiles_m;
    }
  }
  return grid;
}

std::optional<BoundPrimitive> BindTiledGemm(const Mapping& m, const LibraryKernelOptions& options,
                                            int64_t padded_ld) {
  if (!options.allow_tiled_gemm || !TiledGemmHost()) return std::nullopt;
  if (m.types != LowPrecision::kNative || m.empty_output || m.empty_contraction ||
      m.post_ops.len() != 0 || !m.binaries.empty() || m.weights_constant_source ||
      ConstantPayload(m.dot->operand(1)) != nullptr ||
      IsConstantParameter(options, m.dot->operand(1))) {
    return std::nullopt;
  }
  const std::optional<Plain> src = Plain2dOf(m.src_md), weights = Plain2dOf(m.weights_md),
                             dst = Plain2dOf(m.dst_md);
  if (!src || !weights || !dst) return std::nullopt;
  const int64_t rows = src->dims[0], k = src->dims[1], n = weights->dims[1];
  const int64_t min_dim = TiledGemmMinDim();
  if (rows < min_dim || k < min_dim || n < min_dim || dst->strides[1] != 1 || dst->strides[0] < n) {
    return std::nullopt;
  }
  const std::optional<Operand> a = OperandOf(*src), b = OperandOf(*weights);
  if (!a || !b) return std::nullopt;
  // A padded copy needs [K, N] rows ('N') and a stride that holds them.
  if (padded_ld > 0 && (b->trans != 'N' || padded_ld < n)) return std::nullopt;
  std::shared_ptr<std::vector<float>> padded;
  // On 12-way L1D hosts a stride of an odd multiple of 2 KiB costs the tiles less than the copy
  // does once they run on two or more threads: there they read the weights in place
  // (docs/tiled_gemm.md, "The AVX2 padding copy on Zen 5"). The bits do not depend on the stride.
  const bool copy_on_one_thread_only =
      padded_ld > 0 && (n * 4) % 4096 != 0 && HostL1dWays() >= kL1dWaysForInPlaceStrides;
  if (padded_ld > 0) {
    padded = std::make_shared<std::vector<float>>(static_cast<size_t>(k * padded_ld));
  }
  if (m.bias_md) {
    const std::optional<Plain> bias = Plain2dOf(*m.bias_md);
    if (!bias || bias->dims[0] != 1 || bias->dims[1] != n || bias->strides[1] != 1) {
      return std::nullopt;
    }
  }
  const TiledGemmGrid grid = TiledGemmGridFor(rows, n, TiledGemmMaxRows());

  // oneDNN generates gemm:jit's kernels on its first call in the process (about 30 ms here,
  // docs/tiled_gemm.md): one small product with the item's transposes does that at bind time
  // instead of in the first run.
  {
    constexpr int64_t w = kTiledGemmMinDim;  // gemm:jit's kernels do not depend on the sizes
    std::vector<float> wa(w * w), wb(w * w), wc(w * w);
    if (dnnl_sgemm(a->trans, b->trans, w, w, w, 1.0f, wa.data(), w, wb.data(), w, 0.0f, wc.data(),
                   w) != dnnl_success) {
      return std::nullopt;  // the matmul primitive may still bind it
    }
  }

  BoundPrimitive bound;
  bound.name = m.name;
  bound.inputs = m.inputs;
  bound.outputs = {m.library_output};
  bound.output_aliases = {-1};
  bound.implementation =
      StrCat("gemm:jit (dnnl_sgemm) in ", grid.tiles_m * grid.tiles_n, " fixed tiles of ",
             grid.tile_rows, "x", grid.tile_cols, m.bias_md ? ", bias added per tile" : "",
             padded_ld == 0              ? ""
             : copy_on_one_thread_only ? " (weights copied to a padded row stride when the tiles "
                                         "run on one thread)"
                                       : " (weights copied to a padded row stride)");
  auto spec = std::make_shared<HostKernelSpec>();
  spec->target = "accy.internal.tiled_gemm";
  spec->operand_effects.assign(m.inputs.size(), OperandEffect::kRead);
  const int lhs = m.lhs_buffer, rhs = m.rhs_buffer, bias = m.bias_md ? m.bias_buffer : -1;
  const Operand op_a = *a, op_b = *b;
  const int64_t ldc = dst->strides[0];
  const std::string name = m.name;
  spec->run = [=](const HostKernelArgs& args) -> Status {
    const float* a_data = static_cast<const float*>(args.operands[static_cast<size_t>(lhs)].data);
    const float* b_data = static_cast<const float*>(args.operands[static_cast<size_t>(rhs)].data);
    const int64_t tiles = grid.tiles_m * grid.tiles_n;
    const int caller_threads = omp_get_max_threads();
    const int threads = static_cast<int>(std::min<int64_t>(caller_threads, tiles));
    int64_t ldb = op_b.ld;
    if (padded != nullptr && !(copy_on_one_thread_only && threads > 1)) {
      CopyRows(b_data, op_b.ld * 4, padded->data(), padded_ld * 4, k, n * 4);
      b_data = padded->data();
      ldb = padded_ld;
    }
    const float* bias_data =
        bias >= 0 ? static_cast<const float*>(args.operands[static_cast<size_t>(bias)].data)
                  : nullptr;
    float* c_data = static_cast<float*>(args.results[0].data);
    // With one thread for the tiles (one tile, or a team of one) there is no parallel region, and
    // oneDNN would thread that dnnl_sgemm over omp_get_max_threads() (other bits): the calling
    // thread's ICV is 1 for the call.
    if (threads <= 1) omp_set_num_threads(1);
    std::atomic<int> failed{dnnl_success};
    // Each tile is one single-threaded dnnl_sgemm (oneDNN runs one thread inside a parallel
    // region), so a tile's bits do not depend on the team size or on which thread runs it.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t m0 = (t / grid.tiles_n) * grid.tile_rows;
      const int64_t n0 = (t % grid.tiles_n) * grid.tile_cols;
      const int64_t mm = std::min(grid.tile_rows, rows - m0);
      const int64_t nn = std::min(grid.tile_cols, n - n0);
      const float* a_tile = a_data + (op_a.trans == 'N' ? m0 * op_a.ld : m0);
      const float* b_tile = b_data + (op_b.trans == 'N' ? n0 : n0 * ldb);
      float* c_tile = c_data + m0 * ldc + n0;
      const dnnl_status_t status = dnnl_sgemm(op_a.trans, op_b.trans, mm, nn, k, 1.0f, a_tile,
                                              op_a.ld, b_tile, ldb, 0.0f, c_tile, ldc);
      if (status != dnnl_success) {
        failed.store(status, std::memory_order_relaxed);
        continue;
      }
      if (bias_data != nullptr) {
        // dot then bias, each rounded once: the reference's order (docs/numerics.md).
        for (int64_t i = 0; i < mm; ++i) {
          float* row = c_tile + i * ldc;
          for (int64_t j = 0; j < nn; ++j) row[j] += bias_data[n0 + j];
        }
      }
    }
    if (threads <= 1) omp_set_num_threads(caller_threads);
    if (failed.load() != dnnl_success) {
      return absl::InternalError(StrCat(name, ": dnnl_sgemm failed (oneDNN status ",
                                        static_cast<int>(failed.load()), ")"));
    }
    return absl::OkStatus();
  };
  bound.host = std::move(spec);
  bound.host_scratch_bytes =
      padded != nullptr ? static_cast<int64_t>(padded->size() * sizeof(float)) : 0;
  return bound;
}

}  // namespace accy::kernels
