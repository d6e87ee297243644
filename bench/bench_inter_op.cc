// Inter-op parallelism (issue 6): eight independent branches y_i = tanh(p_i) * p_i + 1 over
// 8192 f32 each. Every branch is one single-block JIT item, so intra-op parallelism cannot use a
// second thread; at 2 engine threads the executor runs the independent items concurrently.
// Counters: bytes_per_second (inputs read + outputs written); compare threads:2 with threads:1
// of the same run (ideal ratio of times 0.5 on 2 cores).
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"

namespace {

constexpr int kBranches = 8;
constexpr int64_t kSize = 8192;

void BM_IndependentBranches(benchmark::State& state) {
  accy::Builder builder("branches");
  accy::TensorType type = *builder.Type(accy::ElementType::kF32, {kSize});
  std::vector<accy::TensorType> types(kBranches, type);
  accy::FunctionBuilder f = *builder.BeginFunction("main", types, types);
  accy::Value* one = *f.BroadcastInDim(*f.ConstantScalar(accy::ElementType::kF32, 1), type, {});
  std::vector<accy::Value*> results;
  for (int b = 0; b < kBranches; ++b) {
    results.push_back(*f.Add(*f.Multiply(*f.Tanh(f.Parameter(b)), f.Parameter(b)), one));
  }
  (void)f.Return(results);
  auto module = *builder.Finish();
  accy::EngineOptions options;
  options.num_threads = static_cast<int>(state.range(0));
  auto exe = (*accy::Engine::Create(options))->Compile(*module);
  if (!exe.ok()) {
    state.SkipWithError(std::string(exe.status().message()).c_str());
    return;
  }
  std::vector<accy::Tensor> inputs, outputs;
  for (int b = 0; b < kBranches; ++b) {
    inputs.push_back(*accy::Tensor::Filled(type, 0.25 * b));
    outputs.push_back(*accy::Tensor::Filled(type, 0.0));  // touched before timing
  }
  for (auto _ : state) {
    accy::Status status = (*exe)->Run(inputs, outputs);
    benchmark::DoNotOptimize(status);
  }
  state.counters["concurrent_groups"] = static_cast<double>((*exe)->Stats().concurrent_groups);
  state.SetBytesProcessed(state.iterations() * kBranches * kSize * 4 * 2);
}
BENCHMARK(BM_IndependentBranches)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();

}  // namespace
