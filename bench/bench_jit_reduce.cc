// JIT reduction microbenchmarks against a plain read-sum baseline measured in the same binary:
// the full sum of 16M f32 (a two-phase segmented kernel) and the row sums of [4096, 1024] f32,
// at 1 and 2 threads. The baseline is an OpenMP loop summing the same 64 MiB with 16
// independent float accumulators per thread (a pure read stream, compiled for the host's best
// ISA). Buffers are allocated and first-touched once (perf-anchors/README.md) and reused.
// Counters: GBps (bytes read / best time), read_GBps (baseline) and read_ratio = GBps / read_GBps.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <vector>

#include "accy/builder.h"
#include "jit/compiled_program.h"
#include "src/fusion/fusion_analysis.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_ledger.h"
#include "src/schedule/schedule_plan.h"

namespace {

constexpr int64_t kElements = int64_t{1} << 24;  // 16M f32 = 64 MiB, both cases

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};

float* Input() {
  static std::unique_ptr<float, FreeDeleter> data;
  if (data == nullptr) {
    data.reset(static_cast<float*>(std::aligned_alloc(64, kElements * sizeof(float))));
    float* x = data.get();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < kElements; ++i) x[i] = std::sin(static_cast<float>(i) * 0.001f);
  }
  return data.get();
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

template <typename Fn>
double BestSeconds(Fn&& fn) {
  double best = 1e30;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(40);
  for (int rep = 0; rep < 5 || std::chrono::steady_clock::now() < deadline; ++rep) {
    const double start = omp_get_wtime();
    fn();
    best = std::min(best, omp_get_wtime() - start);
  }
  return best;
}

double ReadBytesPerSecond(int threads) {
  float* x = Input();
  volatile float sink = 0;
  const double seconds = BestSeconds([&] { sink = ReadSum(x, kElements, threads); });
  (void)sink;
  return static_cast<double>(kElements) * 4 / seconds;
}

// One compiled reduce (row sums when rows > 1, else the full sum), planned once per shape.
struct CompiledSum {
  std::unique_ptr<accy::Module> module;
  accy::passes::WorkLedger ledger;
  std::unique_ptr<accy::passes::AnalysisCache> cache;
  std::unique_ptr<accy::jit::CompiledProgram> program;
  std::vector<float> output;
  std::vector<uint8_t> scratch;
};

CompiledSum* SumFor(int64_t rows) {
  static std::map<int64_t, std::unique_ptr<CompiledSum>> sums;
  auto& slot = sums[rows];
  if (slot != nullptr) return slot.get();
  auto sum = std::make_unique<CompiledSum>();
  accy::Builder builder("bench_reduce");
  const std::vector<int64_t> dims = rows > 1 ? std::vector<int64_t>{rows, kElements / rows}
                                             : std::vector<int64_t>{kElements};
  const std::vector<int64_t> out_dims = rows > 1 ? std::vector<int64_t>{rows} : std::vector<int64_t>{};
  auto x = *builder.Type(accy::ElementType::kF32, dims);
  auto r = *builder.Type(accy::ElementType::kF32, out_dims);
  auto f = *builder.BeginFunction("main", {x}, {r});
  accy::Value* zero = *f.ConstantScalar(accy::ElementType::kF32, 0);
  auto reduced = f.Reduce(f.Parameter(0), zero, r, "sum", {static_cast<int64_t>(dims.size()) - 1});
  if (!reduced.ok() || !f.Return({*reduced}).ok()) return nullptr;
  auto module = builder.Finish();
  if (!module.ok()) return nullptr;
  sum->module = std::move(*module);
  sum->cache = std::make_unique<accy::passes::AnalysisCache>(&sum->ledger);
  const accy::Function& function = *sum->module->FindFunction("main");
  auto plan = sum->cache->Get<accy::SchedulePlan>(function);
  auto fusion = sum->cache->Get<accy::FusionPlanAnalysis>(function);
  if (!plan.ok() || !fusion.ok() || (*plan)->work_item_count() != 1) return nullptr;
  auto program = accy::jit::CompiledProgram::Compile(function, **plan, (*fusion)->plan());
  if (!program.ok()) return nullptr;
  sum->program = std::move(*program);
  sum->output.assign(static_cast<size_t>(rows), 0.0f);
  sum->scratch.assign(static_cast<size_t>(sum->program->items()[0].scratch_bytes), 0);
  slot = std::move(sum);
  return slot.get();
}

void BM_ReadSumBaseline(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  float* x = Input();
  for (auto _ : state) benchmark::DoNotOptimize(ReadSum(x, kElements, threads));
  state.SetBytesProcessed(state.iterations() * kElements * 4);
}

// range(0): rows (1 = the full sum of 16M f32; 4096 = row sums of [4096, 1024]); range(1): threads.
void BM_JitReduceSum(benchmark::State& state) {
  const int64_t rows = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  CompiledSum* sum = SumFor(rows);
  if (sum == nullptr) {
    state.SkipWithError("planning or compiling the reduce failed");
    return;
  }
  const accy::jit::CompiledItem& item = sum->program->items()[0];
  std::vector<void*> buffers = {Input(), sum->output.data()};
  std::vector<int64_t> bytes = {kElements * 4, rows * 4};
  if (item.scratch_bytes > 0) {
    buffers.push_back(sum->scratch.data());
    bytes.push_back(item.scratch_bytes);
  }
  accy::jit::RunOptions options;
  options.num_threads = threads;
  const double baseline = ReadBytesPerSecond(threads);
  for (auto _ : state) {
    accy::jit::RunKernel(item.launch, buffers.data(), bytes.data(), options);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kElements * 4);
  const double seconds =
      BestSeconds([&] { accy::jit::RunKernel(item.launch, buffers.data(), bytes.data(), options); });
  const double bandwidth = static_cast<double>(kElements) * 4 / seconds;
  state.counters["GBps"] = bandwidth / 1e9;
  state.counters["read_GBps"] = baseline / 1e9;
  state.counters["read_ratio"] = bandwidth / baseline;
  state.counters["compile_ms"] = sum->program->compile_milliseconds();
}

BENCHMARK(BM_ReadSumBaseline)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
BENCHMARK(BM_JitReduceSum)
    ->Args({1, 1})
    ->Args({1, 2})
    ->Args({4096, 1})
    ->Args({4096, 2})
    ->ArgNames({"rows", "threads"})
    ->UseRealTime();

}  // namespace
