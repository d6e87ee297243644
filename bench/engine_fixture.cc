#include "bench/engine_fixture.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

#include "src/util/str_cat.h"

namespace accy::bench {

namespace {

// Sets EngineOptions::enable_fusion when this engine has it; false when fusion cannot be turned
// off (the option is not there), so that "unfused" rows are never silently fused.
template <typename Options>
bool SetFusion(Options& options, bool enable) {
  if constexpr (requires { options.enable_fusion; }) {
    options.enable_fusion = enable;
    return true;
  } else {
    return enable;
  }
}

int64_t ItemCount(const Executable& executable) {
  int64_t items = 0;
  for (const auto& [kind, count] : executable.Stats().work_items_by_kind) items += count;
  return items;
}

}  // namespace

CompiledWorkload* CompileOnce(const std::string& key,
                              const std::function<StatusOr<Workload>()>& build, int num_threads,
                              bool enable_fusion, std::string* error) {
  static std::map<std::tuple<std::string, int, bool>, std::unique_ptr<CompiledWorkload>> cache;
  auto& slot = cache[{key, num_threads, enable_fusion}];
  if (slot != nullptr) return slot.get();
  auto compiled = std::make_unique<CompiledWorkload>();
  StatusOr<Workload> workload = build();
  if (!workload.ok()) {
    *error = StrCat(key, ": build: ", workload.status().message());
    return nullptr;
  }
  compiled->workload = std::move(*workload);
  EngineOptions options;
  options.num_threads = num_threads;
  if (!SetFusion(options, enable_fusion)) {
    *error = "EngineOptions::enable_fusion is not in this engine: cannot force unfused";
    return nullptr;
  }
  StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(options);
  if (!engine.ok()) {
    *error = StrCat(key, ": Engine::Create: ", engine.status().message());
    return nullptr;
  }
  compiled->engine = std::move(*engine);
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::unique_ptr<Executable>> executable =
      compiled->engine->Compile(*compiled->workload.module);
  compiled->compile_milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!executable.ok()) {
    *error = StrCat(key, ": Compile: ", executable.status().message());
    return nullptr;
  }
  compiled->executable = std::move(*executable);
  compiled->inputs = DeterministicInputs(*compiled->workload.module);
  compiled->outputs = AllocateOutputs(*compiled->workload.module);
  slot = std::move(compiled);
  return slot.get();
}

double TimeRuns(benchmark::State& state, CompiledWorkload& compiled) {
  const Executable& executable = *compiled.executable;
  Status status = executable.Run(compiled.inputs, compiled.outputs);  // warm-up: arenas, pages
  if (!status.ok()) {
    state.SkipWithError(std::string(status.message()).c_str());
    return -1;
  }
  for (auto _ : state) {
    status = executable.Run(compiled.inputs, compiled.outputs);
    benchmark::DoNotOptimize(status);
  }
  if (!status.ok()) {
    state.SkipWithError(std::string(status.message()).c_str());
    return -1;
  }
  const Workload& workload = compiled.workload;
  if (workload.flops > 0) {
    state.counters["FLOP/s"] =
        benchmark::Counter(workload.flops, benchmark::Counter::kIsIterationInvariantRate);
  }
  if (workload.bytes > 0) {
    state.SetBytesProcessed(static_cast<int64_t>(static_cast<double>(state.iterations()) *
                                                 workload.bytes));
  }
  const double best = BestSeconds([&] { (void)executable.Run(compiled.inputs, compiled.outputs); });
  state.counters["best_ms"] = best * 1e3;
  state.counters["compile_ms"] = compiled.compile_milliseconds;
  state.counters["items"] = static_cast<double>(ItemCount(executable));
  return best;
}

double BestSeconds(const std::function<void()>& fn, std::chrono::milliseconds budget) {
  double best = 1e30;
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (int rep = 0; rep < 5 || std::chrono::steady_clock::now() < deadline; ++rep) {
    const double start = omp_get_wtime();
    fn();
    best = std::min(best, omp_get_wtime() - start);
  }
  return best;
}

// The project builds without -march=native; these clones give the baselines the host's best ISA
// (as the JIT targets the host).
__attribute__((target_clones("avx512f", "avx2", "default"))) void Triad(
    const float* __restrict a, const float* __restrict b, float* __restrict y, int64_t n,
    int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + 0.5f * b[i];
}

__attribute__((target_clones("avx512f", "avx2", "default"))) float ReadSum(const float* x,
                                                                         int64_t n, int threads) {
  float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    float lanes[16] = {};
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n / 16; ++i) {
      for (int l = 0; l < 16; ++l) lanes[l] += x[i * 16 + l];
    }
    for (float v : lanes) total += v;
  }
  return total;
}

AlignedFloats MakeFloats(int64_t n) {
  const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
  AlignedFloats buffer{{static_cast<float*>(std::aligned_alloc(64, bytes)), std::free}, n};
  float* x = buffer.data.get();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) x[i] = std::sin(static_cast<float>(i) * 0.001f);
  return buffer;
}

}  // namespace accy::bench
