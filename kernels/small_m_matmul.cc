// Small-M f32 matmul over packed weight panels (small_m_matmul.h). One micro-kernel per ISA,
// compiled for it with a target attribute (the rest of accy is built for baseline x86-64) and
// instantiated per row count so the accumulators stay in registers.
#include "kernels/small_m_matmul.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "kernels/onednn_isa.h"

namespace accy::kernels {
namespace {

// Panel width and rows per pass: the accumulators (MR x panel / lanes vectors) plus the
// broadcast, and on AVX-512 one vector per panel column group, fit the register file (AVX-512:
// 24 + 3 + 1 of 32; AVX2: 14 + 1 of 16, the weights read by the FMAs). AVX2 was 24 columns x 4
// rows until 2026-12-06: M 7 took a second pass over each panel, from L2, during which the memory
// stream stalled (0.78-0.79 of a plain read against 0.99-1.00 for 16 x 7 in one pass on an Intel
// Xeon family 6 model 207 host; docs/small_m_matmul.md, "One pass on AVX2").
constexpr int64_t kPanel512 = 48;
constexpr int kRows512 = 8;
constexpr int64_t kPanel256 = 16;
constexpr int kRows256 = 7;
constexpr int kRows256Registers = 6;
// How many k rows ahead of the one being read the panel stream is prefetched (48 rows: 9 KiB
// of a 48-float panel, 3 KiB of a 16-float one). 16 rows (3 KiB) left the memory stream
// short on an Intel Xeon family 6 model 207 host (docs/small_m_matmul.md, "Prefetch distance").
constexpr int64_t kPrefetchRows = 48;
// And, further ahead, into L2 (_MM_HINT_T1): 72 KiB of the panel stream (384 rows of a 48-float
// panel, 1152 of a 16-float one). On the Intel Xeon model 207 host the near prefetch alone kept
// the stream at 0.90-0.94 of a plain read (M 7, 453 MB, 1 thread); with the far one, 1.10-1.17
// (AVX-512) and 0.79-0.81 instead of 0.75 (AVX2, whose second pass over each panel reads L2)
// (docs/small_m_matmul.md, "Prefetch distance"). On AMD (Zen 5) the kernels stream faster
// without it (M 7, 1 thread: +6% AVX2, +17% AVX-512; docs/small_m_matmul.md, "AVX2 on AMD"),
// so only Intel hosts issue it (kIntel).
constexpr int64_t kFarPrefetchBytes = 72 * 1024;
// The near prefetch's hint: T0 on Intel; NTA elsewhere. On Zen 5 the NTA form streamed M 7 at
// least as fast as T0 in every interleaved round and up to 1.7x faster in some (standalone
// driver, 453 MB, 1 thread; docs/small_m_matmul.md, "Non-temporal near prefetch on AMD"). Each
// weight line is read once per run, so the hint that it need not stay in the caches costs
// nothing. On Intel NTA measured 0.71 of T0's rate ("Prefetch distance").
template <bool kIntel>
constexpr _mm_hint kNearHint = kIntel ? _MM_HINT_T0 : _MM_HINT_NTA;

template <int MR, bool kIntel>
__attribute__((target("avx512f"))) void Panel512(const float* lhs, int64_t lhs_row_stride,
                                                 const float* panel, int64_t k, const float* bias,
                                                 float* dst, int64_t dst_row_stride, int64_t cols) {
  __m512 acc[MR][3];
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m) {
    acc[m][0] = _mm512_setzero_ps();
    acc[m][1] = _mm512_setzero_ps();
    acc[m][2] = _mm512_setzero_ps();
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* w = panel + kk * kPanel512;
    const char* ahead = reinterpret_cast<const char*>(w + kPrefetchRows * kPanel512);
    _mm_prefetch(ahead, kNearHint<kIntel>);
    _mm_prefetch(ahead + 64, kNearHint<kIntel>);
    _mm_prefetch(ahead + 128, kNearHint<kIntel>);
    if constexpr (kIntel) {
      const char* far = reinterpret_cast<const char*>(w) + kFarPrefetchBytes;
      _mm_prefetch(far, _MM_HINT_T1);
      _mm_prefetch(far + 64, _MM_HINT_T1);
      _mm_prefetch(far + 128, _MM_HINT_T1);
    }
    const __m512 w0 = _mm512_loadu_ps(w);
    const __m512 w1 = _mm512_loadu_ps(w + 16);
    const __m512 w2 = _mm512_loadu_ps(w + 32);
#pragma GCC unroll 8
    for (int m = 0; m < MR; ++m) {
      const __m512 a = _mm512_set1_ps(lhs[m * lhs_row_stride + kk]);
      acc[m][0] = _mm512_fmadd_ps(a, w0, acc[m][0]);
      acc[m][1] = _mm512_fmadd_ps(a, w1, acc[m][1]);
      acc[m][2] = _mm512_fmadd_ps(a, w2, acc[m][2]);
    }
  }
  __mmask16 masks[3];
  __m512 b[3];
  for (int j = 0; j < 3; ++j) {
    const int64_t left = std::clamp<int64_t>(cols - 16 * j, 0, 16);
    masks[j] = static_cast<__mmask16>((1u << left) - 1u);
    b[j] = bias != nullptr ? _mm512_maskz_loadu_ps(masks[j], bias + 16 * j) : _mm512_setzero_ps();
  }
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m) {
    float* out = dst + m * dst_row_stride;
    for (int j = 0; j < 3; ++j) {
      const __m512 v = bias != nullptr ? _mm512_add_ps(acc[m][j], b[j]) : acc[m][j];
      _mm512_mask_storeu_ps(out + 16 * j, masks[j], v);
    }
  }
}

// acc + a * w[0..7] with w as the FMA's memory operand. Written as inline assembly because GCC
// otherwise loads the panel row into two registers and spills an accumulator through the stack
// every k, a store-to-load chain that bounds the loop.
__attribute__((target("avx2,fma"), always_inline)) inline __m256 FmaFromMemory(__m256 a,
                                                                               const float* w,
                                                                               __m256 acc) {
  asm("vfmadd231ps %2, %1, %0" : "+x"(acc) : "x"(a), "m"(*reinterpret_cast<const __m256_u*>(w)));
  return acc;
}

// kWeightsInRegisters: the panel row is loaded once into two registers (2 MR + 2 + 1 <= 16 for
// MR <= 6: fewer loads per FMA, for the FMA-bound passes of M > 7); otherwise each FMA reads it
// (MR = 7 in one pass, the memory-bound case).
template <int MR, bool kWeightsInRegisters, bool kIntel>
__attribute__((target("avx2,fma"))) void Panel256(const float* lhs, int64_t lhs_row_stride,
                                                  const float* panel, int64_t k, const float* bias,
                                                  float* dst, int64_t dst_row_stride,
                                                  int64_t cols) {
  __m256 acc[MR][2];
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m) {
    acc[m][0] = _mm256_setzero_ps();
    acc[m][1] = _mm256_setzero_ps();
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* w = panel + kk * kPanel256;
    // One 64-byte line per k row: one near and (on Intel) one far prefetch.
    _mm_prefetch(reinterpret_cast<const char*>(w + kPrefetchRows * kPanel256), kNearHint<kIntel>);
    if constexpr (kIntel) {
      _mm_prefetch(reinterpret_cast<const char*>(w) + kFarPrefetchBytes, _MM_HINT_T1);
    }
    if constexpr (kWeightsInRegisters) {
      const __m256 w0 = _mm256_loadu_ps(w);
      const __m256 w1 = _mm256_loadu_ps(w + 8);
#pragma GCC unroll 8
      for (int m = 0; m < MR; ++m) {
        const __m256 a = _mm256_broadcast_ss(lhs + m * lhs_row_stride + kk);
        acc[m][0] = _mm256_fmadd_ps(a, w0, acc[m][0]);
        acc[m][1] = _mm256_fmadd_ps(a, w1, acc[m][1]);
      }
    } else {
#pragma GCC unroll 8
      for (int m = 0; m < MR; ++m) {
        // 14 accumulators and the broadcast take 15 of the 16 ymm registers: the weights are
        // the FMAs' memory operands (L1 hits after the first).
        const __m256 a = _mm256_broadcast_ss(lhs + m * lhs_row_stride + kk);
        acc[m][0] = FmaFromMemory(a, w, acc[m][0]);
        acc[m][1] = FmaFromMemory(a, w + 8, acc[m][1]);
      }
    }
  }
  // Lane i of vector j is stored when 8 j + i < cols.
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i masks[2];
  __m256 b[2];
  for (int j = 0; j < 2; ++j) {
    const int left = static_cast<int>(std::clamp<int64_t>(cols - 8 * j, 0, 8));
    masks[j] = _mm256_cmpgt_epi32(_mm256_set1_epi32(left), lane);
    b[j] = bias != nullptr ? _mm256_maskload_ps(bias + 8 * j, masks[j]) : _mm256_setzero_ps();
  }
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m) {
    float* out = dst + m * dst_row_stride;
    for (int j = 0; j < 2; ++j) {
      const __m256 v = bias != nullptr ? _mm256_add_ps(acc[m][j], b[j]) : acc[m][j];
      if (cols >= kPanel256) {
        _mm256_storeu_ps(out + 8 * j, v);
      } else {
        _mm256_maskstore_ps(out + 8 * j, masks[j], v);
      }
    }
  }
}

using PanelFn = void (*)(const float*, int64_t, const float*, int64_t, const float*, float*,
                         int64_t, int64_t);

template <bool kIntel>
PanelFn PanelWithPrefetch(Isa isa, int rows, int64_t total_rows) {
  static constexpr PanelFn k512[] = {Panel512<1, kIntel>, Panel512<2, kIntel>, Panel512<3, kIntel>,
                                     Panel512<4, kIntel>, Panel512<5, kIntel>, Panel512<6, kIntel>,
                                     Panel512<7, kIntel>, Panel512<8, kIntel>};
  static constexpr PanelFn k256[] = {Panel256<1, false, kIntel>, Panel256<2, false, kIntel>,
                                     Panel256<3, false, kIntel>, Panel256<4, false, kIntel>,
                                     Panel256<5, false, kIntel>, Panel256<6, false, kIntel>,
                                     Panel256<7, false, kIntel>};
  static constexpr PanelFn k256_registers[] = {
      Panel256<1, true, kIntel>, Panel256<2, true, kIntel>, Panel256<3, true, kIntel>,
      Panel256<4, true, kIntel>, Panel256<5, true, kIntel>, Panel256<6, true, kIntel>};
  if (isa == Isa::kAvx512) return k512[rows - 1];
  return total_rows <= kRows256 ? k256[rows - 1] : k256_registers[rows - 1];
}

// Intel hosts take the far prefetch and a T0 near one, others an NTA near one (kNearHint).
PanelFn PanelFor(Isa isa, int rows, int64_t total_rows) {
  static const bool intel = HostIsIntel();
  return intel ? PanelWithPrefetch<true>(isa, rows, total_rows)
               : PanelWithPrefetch<false>(isa, rows, total_rows);
}

// AVX2 takes M <= 7 in one pass and more in passes of at most 6 rows with the weights in
// registers (M 16 as 6 + 5 + 5: 0.56 of the plain read against 0.47 for 7 + 5 + 4 reading the
// weights by the FMAs, both FMA-bound).
int64_t RowsPerPass(Isa isa, int64_t total_rows) {
  if (isa == Isa::kAvx512) return kRows512;
  return total_rows <= kRows256 ? kRows256 : kRows256Registers;
}

}  // namespace

bool SmallMMatmulSupports(Isa isa) { return isa == Isa::kAvx2 || isa == Isa::kAvx512; }

int64_t SmallMPanelColumns(Isa isa) { return isa == Isa::kAvx512 ? kPanel512 : kPanel256; }

int64_t SmallMPackedElements(int64_t k, int64_t n, Isa isa) {
  const int64_t p = SmallMPanelColumns(isa);
  return (n + p - 1) / p * p * k;
}

void PackSmallMWeights(const float* w, int64_t k, int64_t n, int64_t stride_k, int64_t stride_n,
                       Isa isa, float* packed) {
  const int64_t p = SmallMPanelColumns(isa);
  const int64_t panels = (n + p - 1) / p;
  const int threads = static_cast<int>(std::min<int64_t>(omp_get_max_threads(), panels));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t panel = 0; panel < panels; ++panel) {
    float* out = packed + panel * k * p;
    for (int64_t j = 0; j < p; ++j) {
      const int64_t col = panel * p + j;
      if (col >= n) {
        for (int64_t kk = 0; kk < k; ++kk) out[kk * p + j] = 0.0f;
        continue;
      }
      const float* in = w + col * stride_n;
      for (int64_t kk = 0; kk < k; ++kk) out[kk * p + j] = in[kk * stride_k];
    }
  }
}

void SmallMMatmul(const float* lhs, int64_t rows, int64_t lhs_row_stride, const float* packed,
                  int64_t k, int64_t n, const float* bias, float* dst, int64_t dst_row_stride,
                  Isa isa) {
  const int64_t p = SmallMPanelColumns(isa);
  const int64_t panels = (n + p - 1) / p;
  // Rows split into near-equal passes of at most RowsPerPass rows.
  const int64_t per_pass = RowsPerPass(isa, rows);
  const int64_t passes = (rows + per_pass - 1) / per_pass;
  const int threads = static_cast<int>(std::min<int64_t>(omp_get_max_threads(), panels));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t panel = 0; panel < panels; ++panel) {
    const int64_t first_col = panel * p;
    const int64_t cols = std::min(p, n - first_col);
    const float* panel_data = packed + panel * k * p;
    const float* panel_bias = bias != nullptr ? bias + first_col : nullptr;
    int64_t row = 0;
    for (int64_t pass = 0; pass < passes; ++pass) {
      const int64_t count = rows / passes + (pass < rows % passes ? 1 : 0);
      PanelFor(isa, static_cast<int>(count), rows)(
          lhs + row * lhs_row_stride, lhs_row_stride, panel_data, k, panel_bias,
          dst + row * dst_row_stride + first_col, dst_row_stride, cols);
      row += count;
    }
  }
}

}  // namespace accy::kernels
