// Small-M f32 matmul over weights packed once: dst[M, N] = lhs[M, K] . W[K, N] (+ bias[N]) for
// M <= kSmallMMaxRows, the shape of a transformer's projections at decode and short sequences
// (BERT at seq 7: M = 7, K 768/3072, N 768/3072). Such a product is bound by reading W once:
// oneDNN 2.6's matmul reads its own packed weights at ~0.6 of the single-core read bandwidth
// there (docs/small_m_matmul.md has the measurements), this kernel at ~0.9.
//
// Weights are packed into column panels of SmallMPanelColumns(isa) floats: panel p holds
// columns [p * P, p * P + P) as K rows of P contiguous floats (the last panel zero-padded), so
// one thread streams each panel front to back. The kernel keeps up to MR rows x P columns of
// dst in vector registers (AVX-512: P = 48, MR = 8; AVX2: P = 16, MR = 7), broadcasts lhs[m, k]
// and adds lhs[m, k] * W[k, panel] with fused multiply-adds in k order, so every dst element is
// the sequential f32 sum over k (as the JIT's dot); the bias is added after the sum (one more
// rounding, as StableHLO's separate add). Rows beyond MR take further passes over the panel
// (from L2). Panels are split over the calling thread's OpenMP team (omp_get_max_threads()).
// Internal to kernels/; the functions are thread-safe on distinct outputs.
#ifndef ACCY_KERNELS_SMALL_M_MATMUL_H_
#define ACCY_KERNELS_SMALL_M_MATMUL_H_

#include <cstdint>

#include "accy/isa.h"

namespace accy::kernels {

// The largest M the kernel takes (rows of lhs and dst).
inline constexpr int64_t kSmallMMaxRows = 16;

// Whether the kernel has code for `isa` (AVX2 and AVX-512; not plain x86-64).
bool SmallMMatmulSupports(Isa isa);

// Columns per packed panel for `isa`: 48 (AVX-512), 16 (AVX2). Needs SmallMMatmulSupports.
int64_t SmallMPanelColumns(Isa isa);

// Floats the packed copy of a K x N matrix takes: ceil(N / P) * P * K for P above.
int64_t SmallMPackedElements(int64_t k, int64_t n, Isa isa);

// Packs W into panels (layout above) in `packed` (SmallMPackedElements floats). W's element
// (k, n) is at w[k * stride_k + n * stride_n] (strides in elements: stride_n 1 for a row-major
// [K, N] matrix, stride_k 1 for an [N, K] one, as exporters write transposed weights). Runs on
// omp_get_max_threads() threads.
void PackSmallMWeights(const float* w, int64_t k, int64_t n, int64_t stride_k, int64_t stride_n,
                       Isa isa, float* packed);

// dst[m, n] = sum_k lhs[m * lhs_row_stride + k] * W[k, n] (+ bias[n] when bias is not null) for
// m < rows (1..kSmallMMaxRows), n < n; dst rows are dst_row_stride floats apart. `packed` is
// PackSmallMWeights's output for the same k, n and isa. k >= 1. Runs on omp_get_max_threads()
// threads (one when the team would get less than a panel each).
void SmallMMatmul(const float* lhs, int64_t rows, int64_t lhs_row_stride, const float* packed,
                  int64_t k, int64_t n, const float* bias, float* dst, int64_t dst_row_stride,
                  Isa isa);

}  // namespace accy::kernels

#endif  // ACCY_KERNELS_SMALL_M_MATMUL_H_
