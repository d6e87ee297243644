// JIT microbenchmarks: the fused chain y = tanh(a*b + c) * 0.5 + a (one elementwise_fusion
// item) against an OpenMP STREAM triad measured in the same run, at 1 and 2 threads, over 64K
// and 4M f32 elements. Buffers are allocated and first-touched once per size and reused (first
// touch costs ~6-13 us per 4 KiB page on these VMs, perf-anchors/README.md).
// Counters: bytes/s (chain: 16 B/element = 3 reads + 1 write; triad: 12 B/element, STREAM
// convention, no write-allocate) and triad_ratio = chain bytes/s / triad bytes/s.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>

#include "accy/builder.h"
#include "jit/compiled_program.h"
#include "src/fusion/fusion_analysis.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_ledger.h"
#include "src/schedule/schedule_plan.h"

namespace {

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float, FreeDeleter>;

// Inputs and output of one size, first touched by the threads that later stream them.
struct Arrays {
  int64_t n = 0;
  Buffer a, b, c, y;
};

Buffer AllocateFloats(int64_t n) {
  const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
  return Buffer(static_cast<float*>(std::aligned_alloc(64, bytes)));
}

Arrays& ArraysFor(int64_t n) {
  static std::map<int64_t, Arrays> arrays;
  Arrays& x = arrays[n];
  if (x.n == 0) {
    x.n = n;
    x.a = AllocateFloats(n);
    x.b = AllocateFloats(n);
    x.c = AllocateFloats(n);
    x.y = AllocateFloats(n);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      x.a.get()[i] = std::sin(static_cast<float>(i) * 0.001f);
      x.b.get()[i] = std::cos(static_cast<float>(i) * 0.002f);
      x.c.get()[i] = 0.1f;
      x.y.get()[i] = 0.0f;
    }
  }
  return x;
}

// The chain, planned and compiled once per size.
struct CompiledChain {
  std::unique_ptr<accy::Module> module;
  accy::passes::WorkLedger ledger;
  std::unique_ptr<accy::passes::AnalysisCache> cache;
  std::unique_ptr<accy::jit::CompiledProgram> program;
};

CompiledChain* ChainFor(int64_t n) {
  static std::map<int64_t, std::unique_ptr<CompiledChain>> chains;
  auto& slot = chains[n];
  if (slot != nullptr) return slot.get();
  auto chain = std::make_unique<CompiledChain>();
  accy::Builder builder("bench_chain");
  auto t = *builder.Type(accy::ElementType::kF32, {n});
  auto f = *builder.BeginFunction("main", {t, t, t}, {t});
  accy::Value* a = f.Parameter(0);
  accy::Value* sum = *f.Add(*f.Multiply(a, f.Parameter(1)), f.Parameter(2));
  accy::Value* half = *f.BroadcastInDim(*f.ConstantScalar(accy::ElementType::kF32, 0.5), t, {});
  accy::Value* out = *f.Add(*f.Multiply(*f.Tanh(sum), half), a);
  if (!f.Return({out}).ok()) return nullptr;
  auto module = builder.Finish();
  if (!module.ok()) return nullptr;
  chain->module = std::move(*module);
  chain->cache = std::make_unique<accy::passes::AnalysisCache>(&chain->ledger);
  const accy::Function& function = *chain->module->FindFunction("main");
  auto plan = chain->cache->Get<accy::SchedulePlan>(function);
  auto fusion = chain->cache->Get<accy::FusionPlanAnalysis>(function);
  if (!plan.ok() || !fusion.ok() || (*plan)->work_item_count() != 1) return nullptr;
  auto program = accy::jit::CompiledProgram::Compile(function, **plan, (*fusion)->plan());
  if (!program.ok()) return nullptr;
  chain->program = std::move(*program);
  slot = std::move(chain);
  return slot.get();
}

// STREAM triad y = a + 0.5 * b with a static OpenMP split, compiled for the best ISA the host
// has (the project builds without -march=native; the JIT targets the host).
__attribute__((target_clones("avx512f", "avx2", "default"))) void Triad(
    const float* __restrict a, const float* __restrict b, float* __restrict y, int64_t n,
    int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + 0.5f * b[i];
}

// Best-of-reps triad bandwidth in bytes/s over ~20 ms (the reference the chain is held to).
double TriadBytesPerSecond(Arrays& x, int threads) {
  double best = 1e30;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  for (int rep = 0; rep < 5 || std::chrono::steady_clock::now() < deadline; ++rep) {
    const double start = omp_get_wtime();
    Triad(x.a.get(), x.b.get(), x.y.get(), x.n, threads);
    best = std::min(best, omp_get_wtime() - start);
  }
  return 12.0 * static_cast<double>(x.n) / best;
}

void BM_OmpStreamTriad(benchmark::State& state) {
  Arrays& x = ArraysFor(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  for (auto _ : state) {
    Triad(x.a.get(), x.b.get(), x.y.get(), x.n, threads);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * x.n * 12);
}

void BM_JitFusedTanhChain(benchmark::State& state) {
  Arrays& x = ArraysFor(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  CompiledChain* chain = ChainFor(x.n);
  if (chain == nullptr) {
    state.SkipWithError("planning or compiling the chain failed");
    return;
  }
  const accy::jit::CompiledItem& item = chain->program->items()[0];
  void* buffers[] = {x.a.get(), x.b.get(), x.c.get(), x.y.get()};
  const int64_t bytes = x.n * 4;
  const int64_t buffer_bytes[] = {bytes, bytes, bytes, bytes};
  accy::jit::RunOptions options;
  options.num_threads = threads;
  const double triad = TriadBytesPerSecond(x, threads);
  for (auto _ : state) {
    accy::jit::RunKernel(item.launch, buffers, buffer_bytes, options);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * x.n * 16);
  // Best-of-reps chain bandwidth over best-of-reps triad bandwidth, both measured here.
  double best = 1e30;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  for (int rep = 0; rep < 5 || std::chrono::steady_clock::now() < deadline; ++rep) {
    const double start = omp_get_wtime();
    accy::jit::RunKernel(item.launch, buffers, buffer_bytes, options);
    best = std::min(best, omp_get_wtime() - start);
  }
  const double chain_bandwidth = 16.0 * static_cast<double>(x.n) / best;
  state.counters["chain_GBps"] = chain_bandwidth / 1e9;
  state.counters["triad_GBps"] = triad / 1e9;
  state.counters["triad_ratio"] = chain_bandwidth / triad;
  state.counters["compile_ms"] = chain->program->compile_milliseconds();
}

void ChainArgs(benchmark::internal::Benchmark* b) {
  for (int64_t n : {int64_t{1} << 16, int64_t{1} << 22}) {
    for (int64_t threads : {1, 2}) b->Args({n, threads});
  }
  b->ArgNames({"n", "threads"})->UseRealTime();
}

BENCHMARK(BM_OmpStreamTriad)->Apply(ChainArgs);
BENCHMARK(BM_JitFusedTanhChain)->Apply(ChainArgs);

}  // namespace
