// Shared helpers for accy-bench's engine-level benchmarks (bench_models.cc, bench_engine_ops.cc,
// bench_overheads.cc): a workload compiled once per (key, threads, fusion) through the public
// Engine API with its inputs and first-touched outputs kept across iterations (first touch costs
// ~6-13 us per 4 KiB page on these VMs, /work/shared/perf-anchors/README.md), the timing loop,
// and in-binary baselines (STREAM triad, read-sum) compiled for the host's best ISA.
// Not thread-safe: Google Benchmark runs one benchmark at a time.
#ifndef ACCY_BENCH_ENGINE_FIXTURE_H_
#define ACCY_BENCH_ENGINE_FIXTURE_H_

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "bench/workloads.h"

namespace accy::bench {

struct CompiledWorkload {
  Workload workload;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Executable> executable;
  std::vector<Tensor> inputs;   // DeterministicInputs
  std::vector<Tensor> outputs;  // reused by every Run
  double compile_milliseconds = 0;  // wall time of Engine::Compile (plan + JIT + bind)
};

// The workload built by `build`, compiled with `num_threads` (and fusion on or off when the
// engine has that option), cached under `key` for the life of the process. Null with
// `*error` set when building or compiling fails.
CompiledWorkload* CompileOnce(const std::string& key, const std::function<StatusOr<Workload>()>& build,
                              int num_threads, bool enable_fusion, std::string* error);

// Times Executable::Run over the cached tensors in the benchmark loop and sets the counters:
// bytes_per_second / FLOP/s from the workload, best_ms (best of ~40 ms of extra runs, the figure
// ratios use), compile_ms and items (work items in the plan). Returns best seconds per run, or a
// negative value when a Run fails (the benchmark is marked with the error).
double TimeRuns(benchmark::State& state, CompiledWorkload& compiled);

// Best wall time of fn() in seconds, over at least 5 calls and `budget` of wall time.
double BestSeconds(const std::function<void()>& fn,
                   std::chrono::milliseconds budget = std::chrono::milliseconds(40));

// Baselines, OpenMP static split over `threads`: y = a + 0.5 * b (STREAM triad, 12 B/element)
// and a 16-lane float read-sum of x (4 B/element). Buffers are the caller's, first-touched.
void Triad(const float* a, const float* b, float* y, int64_t n, int threads);
float ReadSum(const float* x, int64_t n, int threads);

// A 64-byte-aligned f32 buffer of n elements, first-touched by an OpenMP static loop (the split
// the kernels use) with values sin(i * 0.001).
struct AlignedFloats {
  std::unique_ptr<float, void (*)(void*)> data{nullptr, nullptr};
  int64_t size = 0;
};
AlignedFloats MakeFloats(int64_t n);

}  // namespace accy::bench

#endif  // ACCY_BENCH_ENGINE_FIXTURE_H_
