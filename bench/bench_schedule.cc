// BM_PlanSchedule: schedule planning time over a chain and a wide layered graph of 1,000 to
// 100,000 ops. Planning must grow near-linearly (100,000 ops within 15x the time of 10,000);
// counters report ops/s. BM_PlanScheduleGrowth plans the 10,000- and 100,000-op graphs
// alternately in one run and reports the ratio of their best times (wall and thread CPU), so the
// ratio is measured under the same machine load. Graph construction is outside every timing. The plan is computed through the analysis cache under an unlimited
// ledger, as a compile would (shape analysis + fusion plan + schedule plan).
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <memory_resource>
#include <vector>

#include "accy/builder.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_ledger.h"
#include "src/schedule/schedule_plan.h"

namespace {

// A chain of `ops` reshapes: every item depends on the previous one.
std::unique_ptr<accy::Module> BuildChain(int64_t ops) {
  accy::Builder builder("chain");
  accy::TensorType type = *builder.Type(accy::ElementType::kF32, {2, 3});
  accy::FunctionBuilder f = *builder.BeginFunction("main", {type}, {type});
  accy::Value* value = f.Parameter(0);
  for (int64_t i = 0; i < ops; ++i) value = *f.Reshape(value, type);
  (void)f.Return({value});
  return *builder.Finish();
}

// Layers of 100 independent transposes, each layer reading the previous one (wide, 100 ready
// items at a time).
std::unique_ptr<accy::Module> BuildLayered(int64_t ops) {
  constexpr int64_t kWidth = 100;
  accy::Builder builder("layered");
  accy::TensorType type = *builder.Type(accy::ElementType::kF32, {4, 4});
  accy::FunctionBuilder f = *builder.BeginFunction("main", {type}, {type});
  std::vector<accy::Value*> layer(kWidth, f.Parameter(0));
  for (int64_t i = 0; i < ops; ++i) {
    int64_t column = i % kWidth;
    layer[static_cast<size_t>(column)] =
        *f.Transpose(layer[static_cast<size_t>((column + 1) % kWidth)], {1, 0});
  }
  (void)f.Return({layer[0]});
  return *builder.Finish();
}

// Evicts the caches by writing a buffer larger than the last-level cache (untimed).
void EvictCaches() {
  static std::vector<char> sweep(size_t{256} << 20);
  for (size_t i = 0; i < sweep.size(); i += 64) sweep[i] = static_cast<char>(sweep[i] + 1);
  benchmark::ClobberMemory();
}

// With `cold`, every iteration starts with the caches evicted: a compile plans an IR once, and
// at 10,000 ops the whole IR (~6 MB) stays in the last-level cache across warm iterations while
// at 100,000 ops (~60 MB) it cannot, so only the cold ratio compares the algorithm's growth.
template <std::unique_ptr<accy::Module> (*Build)(int64_t), bool cold>
void BM_PlanSchedule(benchmark::State& state) {
  std::unique_ptr<accy::Module> module = Build(state.range(0));
  const accy::Function& function = *module->functions()[0];
  // One arena, touched once and reused by every iteration, as a compiling engine keeps its
  // memory: fresh pages cost 6-13 us each on these machines (perf-anchors/README.md) and would
  // otherwise dominate the 100,000-op case.
  std::vector<std::byte> arena_bytes(size_t{1} << 28, std::byte{1});
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      EvictCaches();
      state.ResumeTiming();
    }
    std::pmr::monotonic_buffer_resource arena(arena_bytes.data(), arena_bytes.size(),
                                              std::pmr::new_delete_resource());
    accy::passes::WorkLedger ledger;
    accy::passes::AnalysisCache cache(&ledger, &arena);
    auto plan = cache.Get<accy::SchedulePlan>(function);
    if (!plan.ok()) {
      state.SkipWithError("planning failed");
      return;
    }
    benchmark::DoNotOptimize(*plan);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// One plan of `function` through a fresh cache over `arena_bytes` (as BM_PlanSchedule's loop
// body); returns false if planning failed.
bool PlanOnce(const accy::Function& function, std::vector<std::byte>& arena_bytes) {
  std::pmr::monotonic_buffer_resource arena(arena_bytes.data(), arena_bytes.size(),
                                            std::pmr::new_delete_resource());
  accy::passes::WorkLedger ledger;
  accy::passes::AnalysisCache cache(&ledger, &arena);
  auto plan = cache.Get<accy::SchedulePlan>(function);
  if (!plan.ok()) return false;
  benchmark::DoNotOptimize(*plan);
  return true;
}

double Seconds(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Per iteration: plans 10,000 ops, then 100,000 ops (each after a cache eviction when `cold`).
// Counters: best ms of each (wall and thread CPU) and ratio_wall / ratio_cpu = best 100k / best
// 10k; the target is ratio <= 15. Best-of rather than mean: other builds share the machine.
template <std::unique_ptr<accy::Module> (*Build)(int64_t), bool cold>
void BM_PlanScheduleGrowth(benchmark::State& state) {
  std::unique_ptr<accy::Module> small = Build(10000);
  std::unique_ptr<accy::Module> large = Build(100000);
  std::vector<std::byte> arena_bytes(size_t{1} << 28, std::byte{1});
  double best_wall[2] = {1e30, 1e30};
  double best_cpu[2] = {1e30, 1e30};
  for (auto _ : state) {
    for (int which = 0; which < 2; ++which) {
      const accy::Function& function = *(which == 0 ? small : large)->functions()[0];
      if (cold) EvictCaches();
      double wall = Seconds(CLOCK_MONOTONIC);
      double cpu = Seconds(CLOCK_THREAD_CPUTIME_ID);
      if (!PlanOnce(function, arena_bytes)) {
        state.SkipWithError("planning failed");
        return;
      }
      best_cpu[which] = std::min(best_cpu[which], Seconds(CLOCK_THREAD_CPUTIME_ID) - cpu);
      best_wall[which] = std::min(best_wall[which], Seconds(CLOCK_MONOTONIC) - wall);
    }
  }
  state.counters["ms_10k"] = best_wall[0] * 1e3;
  state.counters["ms_100k"] = best_wall[1] * 1e3;
  state.counters["ratio_wall"] = best_wall[1] / best_wall[0];
  state.counters["ratio_cpu"] = best_cpu[1] / best_cpu[0];
}

BENCHMARK_TEMPLATE(BM_PlanSchedule, BuildChain, false)
    ->Name("BM_PlanSchedule/chain/warm")
    ->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_PlanSchedule, BuildLayered, false)
    ->Name("BM_PlanSchedule/layered/warm")
    ->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_PlanSchedule, BuildChain, true)
    ->Name("BM_PlanSchedule/chain/cold")
    ->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_PlanSchedule, BuildLayered, true)
    ->Name("BM_PlanSchedule/layered/cold")
    ->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_PlanScheduleGrowth, BuildChain, false)
    ->Name("BM_PlanScheduleGrowth/chain/warm")->Iterations(20)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_PlanScheduleGrowth, BuildLayered, false)
    ->Name("BM_PlanScheduleGrowth/layered/warm")->Iterations(20)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_PlanScheduleGrowth, BuildChain, true)
    ->Name("BM_PlanScheduleGrowth/chain/cold")->Iterations(20)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_PlanScheduleGrowth, BuildLayered, true)
    ->Name("BM_PlanScheduleGrowth/layered/cold")->Iterations(20)->Unit(benchmark::kMillisecond);

}  // namespace
