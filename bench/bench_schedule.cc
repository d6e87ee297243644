// BM_PlanSchedule: schedule planning time over a chain and a wide layered graph of 1,000 to
// 100,000 ops. Planning must grow near-linearly (100,000 ops within 15x the time of 10,000);
// counters report ops/s. The plan is computed through the analysis cache under an unlimited
// ledger, as a compile would (shape analysis + fusion plan + schedule plan).
#include <benchmark/benchmark.h>

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

}  // namespace
