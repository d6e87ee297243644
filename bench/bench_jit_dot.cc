// The JIT dot_general kernel (jit/dot_general_emitter.cc) against accy's oneDNN matmul item
// (kernels/onednn_kernel.h) on the same f32 shapes at 1 thread: cubes 2^3..512^3 and skinny
// products; and at 2 threads around the threshold (BM_*2Threads, real time). It measures where
// a oneDNN call stops costing more than the arithmetic, which sets
// kernels::kMinLibraryDotElementOps (the JIT/library threshold the engine routes by).
// Both run on buffers allocated and first-touched once per shape; the JIT item runs through
// CompiledProgram::RunItem (what the executor calls), the library item through
// LibraryKernel::Run. Counter: FLOP/s = 2*m*n*k per iteration; compare rows of one run.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "accy/builder.h"
#include "accy/tensor.h"
#include "jit/compiled_program.h"
#include "kernels/onednn_kernel.h"
#include "src/fusion/fusion_analysis.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_ledger.h"
#include "src/schedule/schedule_plan.h"

namespace {

// One planned [m,k] x [k,n] -> [m,n] f32 dot_general with its buffers.
struct DotSetup {
  std::unique_ptr<accy::Module> module;
  std::unique_ptr<accy::passes::WorkLedger> ledger;
  std::unique_ptr<accy::passes::AnalysisCache> cache;
  const accy::WorkItem* item = nullptr;
  const accy::FusionPlan* fusion = nullptr;
  std::vector<accy::Tensor> buffers;  // a, b, c
  std::vector<int64_t> bytes;
};

DotSetup* SetupFor(int64_t m, int64_t n, int64_t k) {
  static std::map<std::tuple<int64_t, int64_t, int64_t>, std::unique_ptr<DotSetup>> setups;
  auto& setup = setups[{m, n, k}];
  if (setup) return setup.get();
  setup = std::make_unique<DotSetup>();
  accy::Builder builder("bench_dot");
  auto f32 = [](std::vector<int64_t> dims) {
    return accy::TensorType::Create(accy::ElementType::kF32, dims).value();
  };
  auto fb = builder.BeginFunction("main", {f32({m, k}), f32({k, n})}, {f32({m, n})}).value();
  accy::Value* dot =
      fb.DotGeneral(fb.Parameter(0), fb.Parameter(1), f32({m, n}), {1}, {0}, {}, {}).value();
  (void)fb.Return({dot});
  setup->module = builder.Finish().value();
  setup->ledger = std::make_unique<accy::passes::WorkLedger>();
  setup->cache = std::make_unique<accy::passes::AnalysisCache>(setup->ledger.get());
  const accy::Function& function = *setup->module->FindFunction("main");
  const accy::SchedulePlan* plan = setup->cache->Get<accy::SchedulePlan>(function).value();
  setup->fusion = &setup->cache->Get<accy::FusionPlanAnalysis>(function).value()->plan();
  setup->item = &plan->items().back();
  for (const accy::TensorType& type : {f32({m, k}), f32({k, n}), f32({m, n})}) {
    accy::Tensor t = accy::Tensor::Allocate(type).value();
    for (int64_t i = 0; i < t.element_count(); ++i) t.SetFromDouble(i, 0.01 * ((i * 7) % 13 - 6));
    setup->bytes.push_back(t.byte_size());
    setup->buffers.push_back(std::move(t));
  }
  return setup.get();
}

void SetFlops(benchmark::State& state, int64_t m, int64_t n, int64_t k) {
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * double(m) * double(n) * double(k),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

// The JIT item over `threads` threads (RunOptions::num_threads).
void RunJitDot(benchmark::State& state, int threads) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  omp_set_num_threads(threads);
  DotSetup* setup = SetupFor(m, n, k);
  const accy::Function& function = *setup->module->FindFunction("main");
  const accy::SchedulePlan* plan = setup->cache->Get<accy::SchedulePlan>(function).value();
  auto program = accy::jit::CompiledProgram::Compile(function, *plan, *setup->fusion);
  if (!program.ok()) {
    state.SkipWithError(std::string(program.status().message()).c_str());
    return;
  }
  void* data[] = {setup->buffers[0].data(), setup->buffers[1].data(), setup->buffers[2].data()};
  accy::jit::RunOptions options;
  options.num_threads = threads;
  for (auto _ : state) {
    if (!(*program)->RunItem(0, data, setup->bytes.data(), 3, options).ok()) {
      state.SkipWithError("run failed");
    }
  }
  SetFlops(state, m, n, k);
}

// The library item with oneDNN's OpenMP team sized `threads` (what the executor sets).
void RunOnednnDot(benchmark::State& state, int threads) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  omp_set_num_threads(threads);
  DotSetup* setup = SetupFor(m, n, k);
  auto kernel = accy::kernels::LibraryKernel::Create(*setup->item, setup->fusion,
                                                     {.min_dot_element_ops = 0});
  if (!kernel.ok()) {
    state.SkipWithError(std::string(kernel.status().message()).c_str());
    return;
  }
  void* data[] = {setup->buffers[0].data(), setup->buffers[1].data(), setup->buffers[2].data()};
  for (auto _ : state) {
    if (!kernel->Run(data, setup->bytes.data(), 3).ok()) state.SkipWithError("run failed");
  }
  SetFlops(state, m, n, k);
  state.SetLabel(kernel->implementation());
}

void BM_JitDot(benchmark::State& state) { RunJitDot(state, 1); }
void BM_OnednnDotItem(benchmark::State& state) { RunOnednnDot(state, 1); }
// The same at 2 threads (does the threshold move with the thread count?).
void BM_JitDot2Threads(benchmark::State& state) { RunJitDot(state, 2); }
void BM_OnednnDotItem2Threads(benchmark::State& state) { RunOnednnDot(state, 2); }

void DotShapes(benchmark::internal::Benchmark* b) {
  for (int64_t s : {2, 4, 8, 12, 16, 24, 32, 40, 48, 64, 96, 128, 256, 512}) b->Args({s, s, s});
  // Skinny: vector-matrix, few rows, tall-thin, outer-ish.
  b->Args({1, 64, 64})->Args({1, 256, 256})->Args({4, 128, 128})->Args({8, 512, 64});
  b->Args({64, 64, 4})->Args({256, 8, 256})->Args({16, 16, 1024});
  b->ArgNames({"m", "n", "k"});
}
BENCHMARK(BM_JitDot)->Apply(DotShapes);
BENCHMARK(BM_OnednnDotItem)->Apply(DotShapes);
// Around the threshold (2^18 element ops = 2 * 40.3^3), real time: both use the second thread.
void DotShapes2Threads(benchmark::internal::Benchmark* b) {
  for (int64_t s : {16, 32, 48, 64, 96, 128, 256}) b->Args({s, s, s});
  b->Args({1, 256, 256})->Args({4, 128, 128})->Args({8, 512, 64})->Args({256, 8, 256});
  b->ArgNames({"m", "n", "k"})->UseRealTime();
}
BENCHMARK(BM_JitDot2Threads)->Apply(DotShapes2Threads);
BENCHMARK(BM_OnednnDotItem2Threads)->Apply(DotShapes2Threads);

}  // namespace
