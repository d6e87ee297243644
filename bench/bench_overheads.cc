// Compile-time benchmarks through the public Engine API, at 1 and 2 threads: Engine::Compile of a
// 20-item program cold (no object cache: planning + LLVM for every item + binding) and from a
// warm object cache (EngineOptions::cache_dir filled once before timing: planning + object
// loading). Every iteration compiles a new executable from the same module. (Run of an
// empty-ish program and per-item dispatch are in bench_executor.cc.)
// Counters: ms_per_executable (mean wall ms of one Compile), ms_per_item (the same / items),
// items (work items in the plan; the program is built so that this is 20, checked).
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <unistd.h>

#include "accy/builder.h"
#include "accy/engine.h"
#include "bench/scratch_dirs.h"

namespace accy::bench {
namespace {

constexpr int64_t kExpectedItems = 20;

// 20 work items of three kinds over x f32 [64, 256], five rounds of
//   r = reduce_sum(v, dim 1); t = transpose(transpose(v)); u = tanh(t) * broadcast(r);
//   v = cumsum(expm1(u), dim 1)
// which the planner makes 2 shape items (the transposes), 1 row_pipeline (the row sum) and 1
// scan (the cumsum) per round, the elementwise ops fused into those.
// The item count is checked at run time against kExpectedItems; the label lists the kinds.
StatusOr<std::unique_ptr<Module>> BuildTwentyItemProgram() {
  Builder builder("compile_bench");
  const ElementType f32 = ElementType::kF32;
  ACCY_ASSIGN_OR_RETURN(TensorType x_type, builder.Type(f32, {64, 256}));
  ACCY_ASSIGN_OR_RETURN(TensorType row_type, builder.Type(f32, {64}));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", {x_type}, {x_type}));
  Value* v = f.Parameter(0);
  for (int round = 0; round < 5; ++round) {
    ACCY_ASSIGN_OR_RETURN(Value * zero, f.ConstantScalar(f32, 0.0));
    ACCY_ASSIGN_OR_RETURN(Value * r, f.Reduce(v, zero, row_type, "sum", {1}));
    ACCY_ASSIGN_OR_RETURN(Value * t, f.Transpose(v, {1, 0}));
    ACCY_ASSIGN_OR_RETURN(Value * back, f.Transpose(t, {1, 0}));
    ACCY_ASSIGN_OR_RETURN(Value * th, f.Tanh(back));
    ACCY_ASSIGN_OR_RETURN(Value * rb, f.BroadcastInDim(r, x_type, {0}));
    ACCY_ASSIGN_OR_RETURN(Value * u, f.Multiply(th, rb));
    ACCY_ASSIGN_OR_RETURN(Value * e, f.ExponentialMinusOne(u));
    ACCY_ASSIGN_OR_RETURN(v, f.Cumsum(e, 1));
  }
  ACCY_RETURN_IF_ERROR(f.Return({v}));
  ACCY_RETURN_IF_ERROR(f.Finish());
  return builder.Finish();
}

int64_t ItemCount(const Executable& executable) {
  int64_t items = 0;
  for (const auto& [kind, count] : executable.Stats().work_items_by_kind) items += count;
  return items;
}

// range(0): 1 = from a warm object cache, 0 = cold; range(1): threads.
void BM_CompileTwentyItems(benchmark::State& state) {
  const bool cached = state.range(0) != 0;
  StatusOr<std::unique_ptr<Module>> module = BuildTwentyItemProgram();
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  EngineOptions options;
  options.num_threads = static_cast<int>(state.range(1));
  std::filesystem::path cache_dir;
  if (cached) {
    cache_dir = accy::bench::ScratchDir("cache");
    options.cache_dir = cache_dir.string();
  }
  StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(options);
  if (!engine.ok()) {
    state.SkipWithError(std::string(engine.status().message()).c_str());
    return;
  }
  // Untimed first compile: fills the cache (cached case) and checks the item count.
  StatusOr<std::unique_ptr<Executable>> first = (*engine)->Compile(**module);
  if (!first.ok()) {
    state.SkipWithError(std::string(first.status().message()).c_str());
    return;
  }
  const int64_t items = ItemCount(**first);
  std::string kinds;
  for (const auto& [kind, count] : (*first)->Stats().work_items_by_kind) {
    kinds += (kinds.empty() ? "" : " ") + kind + ":" + std::to_string(count);
  }
  state.SetLabel(kinds);
  if (items != kExpectedItems) {
    state.SkipWithError(("the program planned to " + std::to_string(items) + " items, not 20:\n" +
                         (*first)->plan_text())
                            .c_str());
    return;
  }
  double total_ms = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    StatusOr<std::unique_ptr<Executable>> executable = (*engine)->Compile(**module);
    total_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count();
    if (!executable.ok()) {
      state.SkipWithError(std::string(executable.status().message()).c_str());
      break;
    }
  }
  const double per_executable = total_ms / static_cast<double>(state.iterations());
  state.counters["ms_per_executable"] = per_executable;
  state.counters["ms_per_item"] = per_executable / static_cast<double>(items);
  state.counters["items"] = static_cast<double>(items);
  if (cached) {
    std::error_code ignored;
    std::filesystem::remove_all(cache_dir, ignored);
  }
}
BENCHMARK(BM_CompileTwentyItems)
    ->ArgsProduct({{0, 1}, {1, 2}})
    ->ArgNames({"cached", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace accy::bench
