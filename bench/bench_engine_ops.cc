// Elementwise and reduction workloads through the public Engine API (Executable::Run, so
// dispatch, argument validation and the executor are included), at 1 and 2 threads:
// - the chain tanh(a*b + c) * 0.5 + a at 64K and 4M f32, fused (one elementwise_fusion item)
//   and forced unfused (EngineOptions::enable_fusion = false: one item per op, intermediates in
//   the arena), against a STREAM triad over the same size measured in the same run;
// - reductions: sum and max of 16M f32 (to a scalar) and row sums of [4096, 1024], against a
//   plain 16-lane read-sum of the same 64 MiB measured in the same run.
// Counters: bytes_per_second (chain 16 B/element: 3 reads + 1 write; reductions 4 B/element
// read), best_ms, compile_ms, items; triad_ratio = chain bandwidth / triad bandwidth (12
// B/element, STREAM convention, no write-allocate) and read_ratio = reduce bandwidth / read-sum
// bandwidth, both from best-of-reps times; fusion_speedup (fused rows) = unfused best time /
// fused best time, measured back to back. kernel-level versions (no executor) are in
// bench_jit.cc and bench_jit_reduce.cc.
#include <benchmark/benchmark.h>

#include <string>

#include "bench/engine_fixture.h"
#include "bench/workloads.h"

namespace accy::bench {
namespace {

// range(0): elements, range(1): threads, range(2): 1 = fused, 0 = forced unfused.
void BM_EngineTanhChain(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  const bool fused = state.range(2) != 0;
  std::string error;
  CompiledWorkload* compiled =
      CompileOnce("chain_" + std::to_string(n), [n] { return BuildChain(n); }, threads, fused, &error);
  if (compiled == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  const double best = TimeRuns(state, *compiled);
  if (best <= 0) return;
  AlignedFloats a = MakeFloats(n), b = MakeFloats(n), y = MakeFloats(n);
  const double triad =
      BestSeconds([&] { Triad(a.data.get(), b.data.get(), y.data.get(), n, threads); });
  const double chain_bandwidth = 16.0 * static_cast<double>(n) / best;
  const double triad_bandwidth = 12.0 * static_cast<double>(n) / triad;
  state.counters["GBps"] = chain_bandwidth / 1e9;
  state.counters["triad_GBps"] = triad_bandwidth / 1e9;
  state.counters["triad_ratio"] = chain_bandwidth / triad_bandwidth;
  if (fused) {
    // The same chain forced unfused, timed right after: fusion's speed-up in this run.
    CompiledWorkload* unfused = CompileOnce("chain_" + std::to_string(n),
                                            [n] { return BuildChain(n); }, threads, false, &error);
    if (unfused == nullptr) return;
    const double unfused_best = BestSeconds(
        [&] { (void)unfused->executable->Run(unfused->inputs, unfused->outputs); });
    state.counters["fusion_speedup"] = unfused_best / best;
  }
}
BENCHMARK(BM_EngineTanhChain)
    ->ArgsProduct({{int64_t{1} << 16, int64_t{1} << 22}, {1, 2}, {1, 0}})
    ->ArgNames({"n", "threads", "fused"})
    ->UseRealTime();

constexpr int64_t kReduceElements = int64_t{1} << 24;  // 16M f32 = 64 MiB

// range(0): 0 = sum of 16M, 1 = max of 16M, 2 = row sums of [4096, 1024]; range(1): threads.
void BM_EngineReduce(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const char* names[] = {"sum_16m", "max_16m", "row_sum_4096x1024"};
  std::string error;
  CompiledWorkload* compiled = CompileOnce(
      names[kind],
      [kind] {
        return kind == 2 ? BuildReduce({4096, 1024}, "sum")
                         : BuildReduce({kReduceElements}, kind == 0 ? "sum" : "max");
      },
      threads, true, &error);
  if (compiled == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  state.SetLabel(names[kind]);
  const double best = TimeRuns(state, *compiled);
  if (best <= 0) return;
  const int64_t n = compiled->workload.module->FindFunction("main")->parameter_types()[0].element_count();
  AlignedFloats x = MakeFloats(n);
  volatile float sink = 0;
  const double read = BestSeconds([&] { sink = ReadSum(x.data.get(), n, threads); });
  (void)sink;
  state.counters["GBps"] = 4.0 * static_cast<double>(n) / best / 1e9;
  state.counters["read_GBps"] = 4.0 * static_cast<double>(n) / read / 1e9;
  state.counters["read_ratio"] = read / best;
}
BENCHMARK(BM_EngineReduce)
    ->ArgsProduct({{0, 1, 2}, {1, 2}})
    ->ArgNames({"kind", "threads"})
    ->UseRealTime();

}  // namespace
}  // namespace accy::bench
