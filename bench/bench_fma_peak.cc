// FMA peak of the host (bench/fma_peak.h): 12 independent accumulator chains per thread, enough
// to cover the FMA latency (4-5 cycles) on two pipes, at the AVX2 and AVX-512 widths.
#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <utility>

#include "bench/fma_peak.h"

namespace accy::bench {
namespace {

constexpr int kChains = 12;
constexpr int64_t kIterations = 1 << 20;

__attribute__((target("avx2,fma"))) float FmaLoopAvx2(int64_t iterations) {
  __m256 acc[kChains];
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  for (int64_t i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  }
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  return _mm256_cvtss_f32(sum);
}

__attribute__((target("avx512f"))) float FmaLoopAvx512(int64_t iterations) {
  __m512 acc[kChains];
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  for (int64_t i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  }
  // Every chain feeds the result (as in the AVX2 loop): chains whose values are dropped are
  // dead code, and the compiler removes their FMAs (the peak read 3x too high on Zen 4).
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  return _mm512_reduce_add_ps(sum);
}

double MeasureOnce(Isa isa, int threads) {
  const int lanes = isa == Isa::kAvx512 ? 16 : 8;
  volatile float sink = 0;
  const auto start = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
  {
    const float r = isa == Isa::kAvx512 ? FmaLoopAvx512(kIterations) : FmaLoopAvx2(kIterations);
    if (r == 12345.0f) sink = r;  // keeps the loop
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  (void)sink;
  return 2.0 * kChains * lanes * static_cast<double>(kIterations) * threads / seconds * 1e-9;
}

void BM_FmaPeak(benchmark::State& state) {
  const Isa isa = state.range(0) == 512 ? Isa::kAvx512 : Isa::kAvx2;
  const int threads = static_cast<int>(state.range(1));
  if (HostIsa() < isa) {
    state.SkipWithError("the host lacks this ISA");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(MeasureOnce(isa, threads));
  state.counters["GFLOPs"] = FmaPeakGflops(isa, threads);
}
BENCHMARK(BM_FmaPeak)
    ->ArgsProduct({{256, 512}, {1, 2}})
    ->ArgNames({"bits", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

double FmaPeakGflops(Isa isa, int threads) {
  if (isa == Isa::kX86_64 || HostIsa() < isa) return 0;
  static std::mutex mutex;
  static std::map<std::pair<Isa, int>, double> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = cache.emplace(std::make_pair(isa, threads), 0.0);
  if (inserted) {
    for (int run = 0; run < 5; ++run) it->second = std::max(it->second, MeasureOnce(isa, threads));
  }
  return it->second;
}

}  // namespace accy::bench
