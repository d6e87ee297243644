// A 1024^3 f32 matmul with an elementwise epilogue through the Engine against the raw oneDNN
// matmul primitive, at 1 and 2 threads, timed in the same benchmark (ratios of one run):
//   none        the product alone (one library item)
//   exp         exp(x): an exact eltwise post-op (one library item)
//   leaky_relu  select(x > 0, x, 0.1 x): no post-op, so matmul then a JIT pass over its output
//   clamp_exp   exp(max(0.25 x, 0.5)): the scale maps to a post-op, max and exp run on the JIT
// Counters: engine_ms and raw_ms (best of ~40 ms of runs each, BestSeconds), raw_exp_ms (raw
// matmul with an eltwise_exp post-op), vs_raw = raw_ms / engine_ms (the engine's fraction of
// the raw matmul's throughput). BM_JitFusedDotEpilogue times the same items as one fused JIT
// dot_general kernel (what the engine ran before matmul + JIT epilogue existed), with vs_raw
// likewise. Inputs and outputs are allocated and first-touched once (perf-anchors/README.md).
// Quiet-machine run (2026-11-30), vs_raw at 1 / 2 threads: none 1.00 / 1.00, exp 0.98 / 0.98,
// leaky_relu 0.97 / 0.98, clamp_exp 0.97 / 0.97; the fused JIT kernel 0.39 / 0.37 (raw 8.5 ms
// at 1 thread, 4.5 ms at 2).
#include <benchmark/benchmark.h>
#include <omp.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "bench/engine_fixture.h"
#include "jit/compiled_program.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "src/fusion/fusion_analysis.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_ledger.h"
#include "src/schedule/schedule_plan.h"

namespace {

constexpr int64_t kSize = 1024;
const char* const kEpilogueNames[] = {"none", "exp", "leaky_relu", "clamp_exp"};

accy::TensorType F32(std::vector<int64_t> dims) {
  return accy::TensorType::Create(accy::ElementType::kF32, std::move(dims)).value();
}

// main(a [1024, 1024], b [1024, 1024]) = epilogue(a @ b).
std::unique_ptr<accy::Module> Program(int epilogue) {
  accy::Builder builder("dot_epilogue");
  const accy::TensorType square = F32({kSize, kSize});
  auto f = builder.BeginFunction("main", {square, square}, {square}).value();
  accy::Value* x = f.DotGeneral(f.Parameter(0), f.Parameter(1), square, {1}, {0}, {}, {}).value();
  auto scalar = [&](double v) {
    return f.BroadcastInDim(f.ConstantScalar(accy::ElementType::kF32, v).value(), square, {})
        .value();
  };
  if (epilogue == 1) x = f.Exponential(x).value();
  if (epilogue == 2) {
    accy::Value* positive = f.Compare(x, scalar(0), "GT").value();
    x = f.Select(positive, x, f.Multiply(scalar(0.1), x).value()).value();
  }
  if (epilogue == 3) {
    x = f.Exponential(f.Maximum(f.Multiply(x, scalar(0.25)).value(), scalar(0.5)).value())
            .value();
  }
  (void)f.Return({x});
  return builder.Finish().value();
}

std::vector<accy::Tensor> Inputs() {
  std::vector<accy::Tensor> inputs;
  for (float seed : {0.01f, 0.02f}) {
    accy::Tensor t = accy::Tensor::Allocate(F32({kSize, kSize})).value();
    float* data = static_cast<float*>(t.data());
    for (int64_t i = 0; i < t.element_count(); ++i) data[i] = seed * float((i * 7) % 13 - 6);
    inputs.push_back(std::move(t));
  }
  return inputs;
}

// The raw oneDNN matmul over the same buffers, optionally with an eltwise_exp post-op.
class RawMatmul {
 public:
  RawMatmul(const accy::Tensor& a, const accy::Tensor& b, accy::Tensor& c, bool exp_post_op)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    using tag = dnnl::memory::format_tag;
    const dnnl::memory::desc md({kSize, kSize}, dnnl::memory::data_type::f32, tag::ab);
    dnnl::post_ops post_ops;
    if (exp_post_op) post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_exp, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(post_ops);
    dnnl::matmul::primitive_desc matmul_pd(dnnl::matmul::desc(md, md, md), attr, engine_);
    matmul_ = dnnl::matmul(matmul_pd);
    args_ = {{DNNL_ARG_SRC, dnnl::memory(md, engine_, const_cast<void*>(a.data()))},
             {DNNL_ARG_WEIGHTS, dnnl::memory(md, engine_, const_cast<void*>(b.data()))},
             {DNNL_ARG_DST, dnnl::memory(md, engine_, c.data())}};
  }
  void Run() {
    matmul_.execute(stream_, args_);
    stream_.wait();
  }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::matmul matmul_;
  std::unordered_map<int, dnnl::memory> args_;
};

// Best seconds of the raw matmul (and with the exp post-op) at `threads`, writing a scratch
// output; measured again for every benchmark row so each ratio compares times taken under the
// same machine load.
std::pair<double, double> RawSeconds(const std::vector<accy::Tensor>& inputs, int threads) {
  omp_set_num_threads(threads);
  static accy::Tensor scratch = accy::Tensor::Allocate(F32({kSize, kSize})).value();
  RawMatmul plain(inputs[0], inputs[1], scratch, false);
  RawMatmul with_exp(inputs[0], inputs[1], scratch, true);
  plain.Run();
  with_exp.Run();
  return {accy::bench::BestSeconds([&] { plain.Run(); }),
          accy::bench::BestSeconds([&] { with_exp.Run(); })};
}

void SetCounters(benchmark::State& state, double seconds, std::pair<double, double> raw) {
  state.counters["engine_ms"] = seconds * 1e3;
  state.counters["raw_ms"] = raw.first * 1e3;
  state.counters["raw_exp_ms"] = raw.second * 1e3;
  state.counters["vs_raw"] = raw.first / seconds;
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * kSize * kSize * kSize,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

// range(0): epilogue, range(1): threads.
void BM_EngineDotEpilogue(benchmark::State& state) {
  const int epilogue = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  std::unique_ptr<accy::Module> module = Program(epilogue);
  accy::EngineOptions options;
  options.num_threads = threads;
  options.enable_profiling = true;
  auto engine = accy::Engine::Create(options);
  auto executable = (*engine)->Compile(*module);
  if (!executable.ok()) {
    state.SkipWithError(std::string(executable.status().message()).c_str());
    return;
  }
  const std::vector<accy::Tensor> inputs = Inputs();
  std::vector<accy::Tensor> outputs = {accy::Tensor::Allocate(F32({kSize, kSize})).value()};
  if (!(*executable)->Run(inputs, outputs).ok()) state.SkipWithError("run failed");
  for (auto _ : state) {
    if (!(*executable)->Run(inputs, outputs).ok()) state.SkipWithError("run failed");
  }
  const double seconds =
      accy::bench::BestSeconds([&] { (void)(*executable)->Run(inputs, outputs); });
  SetCounters(state, seconds, RawSeconds(inputs, threads));
  std::string runs_on;
  for (const accy::ItemProfile& p : (*executable)->Stats().item_profiles) {
    if (p.kind == "dot_general") runs_on += (runs_on.empty() ? "" : "+") + p.runs_on;
  }
  state.SetLabel(std::string(kEpilogueNames[epilogue]) + " on " + runs_on);
}

// The same dot_general item as one fused JIT kernel (jit/dot_general_emitter.cc).
void BM_JitFusedDotEpilogue(benchmark::State& state) {
  const int epilogue = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  std::unique_ptr<accy::Module> module = Program(epilogue);
  accy::passes::WorkLedger ledger;
  accy::passes::AnalysisCache cache(&ledger);
  const accy::Function& function = *module->FindFunction("main");
  const accy::SchedulePlan* plan = cache.Get<accy::SchedulePlan>(function).value();
  const accy::FusionPlan& fusion = cache.Get<accy::FusionPlanAnalysis>(function).value()->plan();
  auto program = accy::jit::CompiledProgram::Compile(function, *plan, fusion);
  if (!program.ok() || (*program)->items().size() != 1) {
    state.SkipWithError("expected one dot_general item");
    return;
  }
  const std::vector<accy::Tensor> inputs = Inputs();
  accy::Tensor output = accy::Tensor::Allocate(F32({kSize, kSize})).value();
  void* buffers[] = {const_cast<void*>(inputs[0].data()), const_cast<void*>(inputs[1].data()),
                     output.data()};
  const int64_t bytes[] = {inputs[0].byte_size(), inputs[1].byte_size(), output.byte_size()};
  accy::jit::RunOptions run_options;
  run_options.num_threads = threads;
  auto run = [&] {
    if (!(*program)->RunItem(0, buffers, bytes, 3, run_options).ok()) state.SkipWithError("run");
  };
  run();
  for (auto _ : state) run();
  SetCounters(state, accy::bench::BestSeconds(run), RawSeconds(inputs, threads));
  state.SetLabel(std::string(kEpilogueNames[epilogue]) + " fused on jit");
}

void EpilogueArgs(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2}) {
    for (int64_t epilogue : {0, 1, 2, 3}) b->Args({epilogue, threads});
  }
  b->ArgNames({"epilogue", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_EngineDotEpilogue)->Apply(EpilogueArgs);
BENCHMARK(BM_JitFusedDotEpilogue)
    ->Args({2, 1})
    ->Args({2, 2})
    ->ArgNames({"epilogue", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
