// Executor overheads: per-item dispatch on a 1,000-item chain of tiny (4-element) items, and Run
// of an almost empty program (one negate of 4 f32), at 1 and 2 engine threads. Target (issue 6):
// under 200 ns per item sequentially. Counters: items_per_second (ns per item = 1e9 / it);
// BM_RunTinyProgram's time per iteration is the fixed cost of one Run.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"

namespace {

// 1,000 transposes of a [2, 2] f32 tensor: shape items that cannot fuse, one kernel each.
std::unique_ptr<accy::Module> TinyChain(int items) {
  accy::Builder builder("tiny_chain");
  accy::TensorType type = *builder.Type(accy::ElementType::kF32, {2, 2});
  accy::FunctionBuilder f = *builder.BeginFunction("main", {type}, {type});
  accy::Value* v = f.Parameter(0);
  for (int i = 0; i < items; ++i) v = *f.Transpose(v, {1, 0});
  (void)f.Return({v});
  return *builder.Finish();
}

void BM_DispatchTinyChain(benchmark::State& state) {
  const int items = static_cast<int>(state.range(0));
  std::unique_ptr<accy::Module> module = TinyChain(items);
  accy::EngineOptions options;
  options.num_threads = static_cast<int>(state.range(1));
  auto engine = accy::Engine::Create(options);
  auto exe = (*engine)->Compile(*module);
  if (!exe.ok()) {
    state.SkipWithError(std::string(exe.status().message()).c_str());
    return;
  }
  accy::TensorType type = *accy::TensorType::Create(accy::ElementType::kF32, {2, 2});
  std::vector<accy::Tensor> inputs = {*accy::Tensor::Filled(type, 1.0)};
  std::vector<accy::Tensor> outputs = {*accy::Tensor::Allocate(type)};
  for (auto _ : state) {
    accy::Status status = (*exe)->Run(inputs, outputs);
    benchmark::DoNotOptimize(status);
  }
  // items_per_second: ns per item = 1e9 / items_per_second.
  state.SetItemsProcessed(state.iterations() * items);
}
BENCHMARK(BM_DispatchTinyChain)->Args({1000, 1})->Args({1000, 2})->ArgNames({"items", "threads"});

void BM_RunTinyProgram(benchmark::State& state) {
  accy::Builder builder("tiny");
  accy::TensorType type = *builder.Type(accy::ElementType::kF32, {4});
  accy::FunctionBuilder f = *builder.BeginFunction("main", {type}, {type});
  (void)f.Return({*f.Negate(f.Parameter(0))});
  auto module = *builder.Finish();
  accy::EngineOptions options;
  options.num_threads = static_cast<int>(state.range(0));
  auto exe = (*accy::Engine::Create(options))->Compile(*module);
  if (!exe.ok()) {
    state.SkipWithError(std::string(exe.status().message()).c_str());
    return;
  }
  std::vector<accy::Tensor> inputs = {*accy::Tensor::Filled(type, 1.0)};
  std::vector<accy::Tensor> outputs = {*accy::Tensor::Allocate(type)};
  for (auto _ : state) {
    accy::Status status = (*exe)->Run(inputs, outputs);
    benchmark::DoNotOptimize(status);
  }
}
BENCHMARK(BM_RunTinyProgram)->Arg(1)->Arg(2)->ArgName("threads");

}  // namespace
