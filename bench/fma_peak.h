// The host's fused multiply-add peak, measured in this binary: the baseline flash attention and
// other compute-bound kernels report a fraction of (perf-anchors: a ratio to a same-run limit,
// never an absolute number). Thread-safe after the first call per thread count.
#ifndef ACCY_BENCH_FMA_PEAK_H_
#define ACCY_BENCH_FMA_PEAK_H_

#include "accy/isa.h"

namespace accy::bench {

// f32 FMA throughput in GFLOP/s (an FMA counts 2) of `threads` threads each running independent
// vector FMA chains at `isa`'s width (avx512: zmm, avx2: ymm; x86-64: 0, not measured), best of
// 5 runs of ~20 ms. Measured once per (isa, threads) and cached.
double FmaPeakGflops(Isa isa, int threads);

}  // namespace accy::bench

#endif  // ACCY_BENCH_FMA_PEAK_H_
