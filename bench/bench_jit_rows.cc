// JIT row_pipeline microbenchmarks: softmax and layer norm (with gamma/beta) over [4096, 1024]
// f32, each one row_pipeline item, at 1 and 2 threads, against a STREAM "scale" loop
// (y = 0.5 * x: one read and one write per element, the same traffic as a row pipeline that
// reads each row once) measured in the same run. Buffers are allocated and first-touched once
// and reused (first touch is slow on these VMs, perf-anchors/README.md).
// Counters: GBps (8 B/element: 4 read + 4 written), scale_GBps, scale_ratio = GBps / scale_GBps
// (best of repetitions for both), compile_ms.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>

#include "accy/builder.h"
#include "jit/compiled_program.h"
#include "src/fusion/fusion_analysis.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_ledger.h"
#include "src/schedule/schedule_plan.h"

namespace {

constexpr int64_t kRows = 4096;
constexpr int64_t kColumns = 1024;
constexpr int64_t kElements = kRows * kColumns;

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float, FreeDeleter>;

Buffer AllocateFloats(int64_t n) {
  const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
  return Buffer(static_cast<float*>(std::aligned_alloc(64, bytes)));
}

// x, y of [rows, columns] and gamma, beta of [columns], first touched by the threads that use
// them (static schedule over rows, as the kernel runner's contiguous block ranges).
struct RowArrays {
  Buffer x, y, gamma, beta;
};

RowArrays& Arrays() {
  static RowArrays arrays = [] {
    RowArrays a{AllocateFloats(kElements), AllocateFloats(kElements), AllocateFloats(kColumns),
                AllocateFloats(kColumns)};
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < kElements; ++i) {
      a.x.get()[i] = 3.0f * std::sin(static_cast<float>(i) * 0.001f);
      a.y.get()[i] = 0.0f;
    }
    for (int64_t j = 0; j < kColumns; ++j) {
      a.gamma.get()[j] = 1.0f + 0.001f * static_cast<float>(j);
      a.beta.get()[j] = 0.01f * static_cast<float>(j % 7);
    }
    return a;
  }();
  return arrays;
}

struct CompiledRows {
  std::unique_ptr<accy::Module> module;
  accy::passes::WorkLedger ledger;
  std::unique_ptr<accy::passes::AnalysisCache> cache;
  std::unique_ptr<accy::jit::CompiledProgram> program;
};

accy::StatusOr<accy::Value*> RowStat(accy::FunctionBuilder& f, accy::Value* x,
                                     const char* reducer, double init) {
  ACCY_ASSIGN_OR_RETURN(accy::Value * start, f.ConstantScalar(accy::ElementType::kF32, init));
  ACCY_ASSIGN_OR_RETURN(auto row_type, accy::TensorType::Create(accy::ElementType::kF32, {kRows}));
  ACCY_ASSIGN_OR_RETURN(auto full_type,
                        accy::TensorType::Create(accy::ElementType::kF32, {kRows, kColumns}));
  ACCY_ASSIGN_OR_RETURN(accy::Value * stat, f.Reduce(x, start, row_type, reducer, {1}));
  return f.BroadcastInDim(stat, full_type, {0});
}

accy::StatusOr<accy::Value*> BuildSoftmax(accy::FunctionBuilder& f) {
  accy::Value* x = f.Parameter(0);
  ACCY_ASSIGN_OR_RETURN(accy::Value * max, RowStat(f, x, "max", -INFINITY));
  ACCY_ASSIGN_OR_RETURN(accy::Value * e, f.Exponential(*f.Subtract(x, max)));
  ACCY_ASSIGN_OR_RETURN(accy::Value * sum, RowStat(f, e, "sum", 0.0));
  return f.Divide(e, sum);
}

accy::StatusOr<accy::Value*> BuildLayerNorm(accy::FunctionBuilder& f) {
  const auto f32 = accy::ElementType::kF32;
  accy::Value* x = f.Parameter(0);
  ACCY_ASSIGN_OR_RETURN(auto full, accy::TensorType::Create(f32, {kRows, kColumns}));
  ACCY_ASSIGN_OR_RETURN(accy::Value * inv_n, f.ConstantScalar(f32, 1.0 / kColumns));
  ACCY_ASSIGN_OR_RETURN(accy::Value * inv_n_b, f.BroadcastInDim(inv_n, full, {}));
  ACCY_ASSIGN_OR_RETURN(accy::Value * sum, RowStat(f, x, "sum", 0.0));
  ACCY_ASSIGN_OR_RETURN(accy::Value * centered, f.Subtract(x, *f.Multiply(sum, inv_n_b)));
  ACCY_ASSIGN_OR_RETURN(accy::Value * square_sum,
                        RowStat(f, *f.Multiply(centered, centered), "sum", 0.0));
  ACCY_ASSIGN_OR_RETURN(accy::Value * eps, f.ConstantScalar(f32, 1e-5));
  ACCY_ASSIGN_OR_RETURN(accy::Value * eps_b, f.BroadcastInDim(eps, full, {}));
  ACCY_ASSIGN_OR_RETURN(accy::Value * rstd,
                        f.Rsqrt(*f.Add(*f.Multiply(square_sum, inv_n_b), eps_b)));
  ACCY_ASSIGN_OR_RETURN(accy::Value * gamma, f.BroadcastInDim(f.Parameter(1), full, {1}));
  ACCY_ASSIGN_OR_RETURN(accy::Value * beta, f.BroadcastInDim(f.Parameter(2), full, {1}));
  return f.Add(*f.Multiply(*f.Multiply(centered, rstd), gamma), beta);
}

// Planned and compiled once per pipeline; null (and the benchmark skipped) on any error or if
// the program is not exactly one row_pipeline item.
CompiledRows* Compiled(bool layer_norm) {
  static std::unique_ptr<CompiledRows> slots[2];
  auto& slot = slots[layer_norm ? 1 : 0];
  if (slot != nullptr) return slot.get();
  auto rows = std::make_unique<CompiledRows>();
  accy::Builder builder(layer_norm ? "bench_layer_norm" : "bench_softmax");
  auto x = *builder.Type(accy::ElementType::kF32, {kRows, kColumns});
  auto column = *builder.Type(accy::ElementType::kF32, {kColumns});
  auto f = layer_norm ? *builder.BeginFunction("main", {x, column, column}, {x})
                      : *builder.BeginFunction("main", {x}, {x});
  auto out = layer_norm ? BuildLayerNorm(f) : BuildSoftmax(f);
  if (!out.ok() || !f.Return({*out}).ok()) return nullptr;
  auto module = builder.Finish();
  if (!module.ok()) return nullptr;
  rows->module = std::move(*module);
  rows->cache = std::make_unique<accy::passes::AnalysisCache>(&rows->ledger);
  const accy::Function& function = *rows->module->FindFunction("main");
  auto plan = rows->cache->Get<accy::SchedulePlan>(function);
  auto fusion = rows->cache->Get<accy::FusionPlanAnalysis>(function);
  if (!plan.ok() || !fusion.ok() || (*plan)->work_item_count() != 1 ||
      (*plan)->items()[0].kind != accy::WorkKind::kRowPipeline) {
    return nullptr;
  }
  auto program = accy::jit::CompiledProgram::Compile(function, **plan, (*fusion)->plan());
  if (!program.ok()) return nullptr;
  rows->program = std::move(*program);
  slot = std::move(rows);
  return slot.get();
}

// STREAM scale y = 0.5 * x, static OpenMP split, compiled for the best ISA the host has.
__attribute__((target_clones("avx512f", "avx2", "default"))) void Scale(
    const float* __restrict x, float* __restrict y, int64_t n, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i];
}

// Best-of-reps time of fn() over ~20 ms, in seconds.
template <typename Fn>
double BestSeconds(Fn&& fn) {
  double best = 1e30;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  for (int rep = 0; rep < 5 || std::chrono::steady_clock::now() < deadline; ++rep) {
    const double start = omp_get_wtime();
    fn();
    best = std::min(best, omp_get_wtime() - start);
  }
  return best;
}

void BM_OmpStreamScaleRows(benchmark::State& state) {
  RowArrays& a = Arrays();
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    Scale(a.x.get(), a.y.get(), kElements, threads);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kElements * 8);
}

void RunRows(benchmark::State& state, bool layer_norm) {
  RowArrays& a = Arrays();
  const int threads = static_cast<int>(state.range(0));
  CompiledRows* rows = Compiled(layer_norm);
  if (rows == nullptr) {
    state.SkipWithError("planning or compiling the row pipeline failed");
    return;
  }
  const accy::jit::CompiledItem& item = rows->program->items()[0];
  void* softmax_buffers[] = {a.x.get(), a.y.get()};
  void* norm_buffers[] = {a.x.get(), a.gamma.get(), a.beta.get(), a.y.get()};
  const int64_t bytes = kElements * 4;
  const int64_t softmax_bytes[] = {bytes, bytes};
  const int64_t norm_bytes[] = {bytes, kColumns * 4, kColumns * 4, bytes};
  void* const* buffers = layer_norm ? norm_buffers : softmax_buffers;
  const int64_t* buffer_bytes = layer_norm ? norm_bytes : softmax_bytes;
  accy::jit::RunOptions options;
  options.num_threads = threads;
  const double scale = BestSeconds([&] { Scale(a.x.get(), a.y.get(), kElements, threads); });
  for (auto _ : state) {
    accy::jit::RunKernel(item.launch, buffers, buffer_bytes, options);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kElements * 8);
  const double best =
      BestSeconds([&] { accy::jit::RunKernel(item.launch, buffers, buffer_bytes, options); });
  const double bandwidth = 8.0 * static_cast<double>(kElements) / best;
  const double scale_bandwidth = 8.0 * static_cast<double>(kElements) / scale;
  state.counters["GBps"] = bandwidth / 1e9;
  state.counters["scale_GBps"] = scale_bandwidth / 1e9;
  state.counters["scale_ratio"] = bandwidth / scale_bandwidth;
  state.counters["best_ms"] = best * 1e3;
  state.counters["compile_ms"] = rows->program->compile_milliseconds();
}

void BM_JitRowSoftmax(benchmark::State& state) { RunRows(state, false); }
void BM_JitRowLayerNorm(benchmark::State& state) { RunRows(state, true); }

void ThreadArgs(benchmark::internal::Benchmark* b) {
  b->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
}

BENCHMARK(BM_OmpStreamScaleRows)->Apply(ThreadArgs);
BENCHMARK(BM_JitRowSoftmax)->Apply(ThreadArgs);
BENCHMARK(BM_JitRowLayerNorm)->Apply(ThreadArgs);

}  // namespace
