// Shape kernel microbenchmarks: the JIT transpose of a [4096, 4096] f32 matrix (one tiled shape
// item) against an OpenMP STREAM copy and triad measured in the same run, at 1 and 2 threads.
// Buffers are allocated and first-touched once and reused (first touch costs ~6-13 us per 4 KiB
// page on these VMs, perf-anchors/README.md).
// Counters: bytes/s (transpose and copy: 8 B/element = 1 read + 1 write; triad: 12 B/element,
// STREAM convention, no write-allocate), copy_ratio and triad_ratio = transpose bytes/s over the
// baseline's bytes/s (best of reps for each, measured back to back).
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>

#include "accy/builder.h"
#include "jit/compiled_program.h"
#include "src/fusion/fusion_analysis.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_ledger.h"
#include "src/schedule/schedule_plan.h"

namespace {

constexpr int64_t kSide = 4096;
constexpr int64_t kElements = kSide * kSide;

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float, FreeDeleter>;

struct Matrices {
  Buffer a, b, y;
};

Buffer AllocateFloats(int64_t n) {
  const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
  return Buffer(static_cast<float*>(std::aligned_alloc(64, bytes)));
}

Matrices& TheMatrices() {
  static Matrices m = [] {
    Matrices x{AllocateFloats(kElements), AllocateFloats(kElements), AllocateFloats(kElements)};
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < kElements; ++i) {
      x.a.get()[i] = static_cast<float>(i % 1000) * 0.5f;
      x.b.get()[i] = 1.0f;
      x.y.get()[i] = 0.0f;
    }
    return x;
  }();
  return m;
}

// The transpose, planned and compiled once.
struct CompiledTranspose {
  std::unique_ptr<accy::Module> module;
  accy::passes::WorkLedger ledger;
  std::unique_ptr<accy::passes::AnalysisCache> cache;
  std::unique_ptr<accy::jit::CompiledProgram> program;
};

CompiledTranspose* TheTranspose() {
  static std::unique_ptr<CompiledTranspose> compiled = []() -> std::unique_ptr<CompiledTranspose> {
    auto t = std::make_unique<CompiledTranspose>();
    accy::Builder builder("bench_transpose");
    auto type = *builder.Type(accy::ElementType::kF32, {kSide, kSide});
    auto f = *builder.BeginFunction("main", {type}, {type});
    auto out = f.Transpose(f.Parameter(0), {1, 0});
    if (!out.ok() || !f.Return({*out}).ok()) return nullptr;
    auto module = builder.Finish();
    if (!module.ok()) return nullptr;
    t->module = std::move(*module);
    t->cache = std::make_unique<accy::passes::AnalysisCache>(&t->ledger);
    const accy::Function& function = *t->module->FindFunction("main");
    auto plan = t->cache->Get<accy::SchedulePlan>(function);
    auto fusion = t->cache->Get<accy::FusionPlanAnalysis>(function);
    if (!plan.ok() || !fusion.ok() || (*plan)->work_item_count() != 1) return nullptr;
    auto program = accy::jit::CompiledProgram::Compile(function, **plan, (*fusion)->plan());
    if (!program.ok()) return nullptr;
    t->program = std::move(*program);
    return t;
  }();
  return compiled.get();
}

// STREAM copy and triad with a static OpenMP split, compiled for the best ISA the host has.
__attribute__((target_clones("avx512f", "avx2", "default"))) void Copy(
    const float* __restrict a, float* __restrict y, int64_t n, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) y[i] = a[i];
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void Triad(
    const float* __restrict a, const float* __restrict b, float* __restrict y, int64_t n,
    int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + 0.5f * b[i];
}

// Best-of-reps seconds of `run` over at least 5 reps and ~100 ms.
double BestSeconds(const std::function<void()>& run) {
  double best = 1e30;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  for (int rep = 0; rep < 5 || std::chrono::steady_clock::now() < deadline; ++rep) {
    const double start = omp_get_wtime();
    run();
    best = std::min(best, omp_get_wtime() - start);
  }
  return best;
}

void BM_OmpStreamCopy(benchmark::State& state) {
  Matrices& m = TheMatrices();
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    Copy(m.a.get(), m.y.get(), kElements, threads);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kElements * 8);
}

void BM_JitTranspose4096(benchmark::State& state) {
  Matrices& m = TheMatrices();
  const int threads = static_cast<int>(state.range(0));
  CompiledTranspose* transpose = TheTranspose();
  if (transpose == nullptr) {
    state.SkipWithError("planning or compiling the transpose failed");
    return;
  }
  const accy::jit::CompiledItem& item = transpose->program->items()[0];
  void* buffers[] = {m.a.get(), m.y.get()};
  const int64_t buffer_bytes[] = {kElements * 4, kElements * 4};
  accy::jit::RunOptions options;
  options.num_threads = threads;
  auto run = [&] { accy::jit::RunKernel(item.launch, buffers, buffer_bytes, options); };
  for (auto _ : state) {
    run();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kElements * 8);
  const double transpose_bandwidth = 8.0 * kElements / BestSeconds(run);
  const double copy_bandwidth =
      8.0 * kElements / BestSeconds([&] { Copy(m.a.get(), m.y.get(), kElements, threads); });
  const double triad_bandwidth = 12.0 * kElements / BestSeconds([&] {
    Triad(m.a.get(), m.b.get(), m.y.get(), kElements, threads);
  });
  state.counters["transpose_GBps"] = transpose_bandwidth / 1e9;
  state.counters["copy_GBps"] = copy_bandwidth / 1e9;
  state.counters["triad_GBps"] = triad_bandwidth / 1e9;
  state.counters["copy_ratio"] = transpose_bandwidth / copy_bandwidth;
  state.counters["triad_ratio"] = transpose_bandwidth / triad_bandwidth;
  state.counters["blocks"] = static_cast<double>(item.launch.block_count);
}

void ThreadArgs(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2}) b->Args({threads});
  b->ArgNames({"threads"})->UseRealTime();
}

BENCHMARK(BM_OmpStreamCopy)->Apply(ThreadArgs);
BENCHMARK(BM_JitTranspose4096)->Apply(ThreadArgs);

}  // namespace
