// accy-bench: Google Benchmark microbenchmarks. This file holds the reference evaluator's
// throughput (the oracle's speed bounds how large numeric tests can be) and the STREAM-style
// triad baseline that later kernels are reported against, and main(), which applies the process
// ISA cap (ACCY_MAX_ISA) to oneDNN before any benchmark creates a primitive of its own.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "kernels/onednn_isa.h"
#include "src/reference/reference_evaluator.h"

namespace {

// Bandwidth baseline: a[i] = b[i] + s * c[i] over float arrays (bytes/s counts 3 arrays).
void BM_StreamTriad(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f);
  for (auto _ : state) {
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + 0.5f * c[i];
    benchmark::DoNotOptimize(a.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * 3 * sizeof(float)));
}
BENCHMARK(BM_StreamTriad)->Arg(1 << 16)->Arg(1 << 22);

// Reference evaluator on one f32 add of n elements (elements/s).
void BM_ReferenceAdd(benchmark::State& state) {
  const int64_t n = state.range(0);
  accy::Builder builder("bench");
  auto type = *builder.Type(accy::ElementType::kF32, {n});
  auto f = *builder.BeginFunction("add", {type, type}, {type});
  auto sum = *f.Add(f.Parameter(0), f.Parameter(1));
  if (!f.Return({sum}).ok()) state.SkipWithError("builder failed");
  auto module = builder.Finish();
  if (!module.ok()) {
    state.SkipWithError("builder failed");
    return;
  }
  std::vector<accy::Tensor> args = {*accy::Tensor::Filled(type, 1.0),
                                    *accy::Tensor::Filled(type, 2.0)};
  for (auto _ : state) {
    auto out = accy::Evaluate(**module, "add", args);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_ReferenceAdd)->Arg(1 << 12);

}  // namespace

// The raw-oneDNN baselines (BM_OnednnMatmulRaw, the convolution primitives, ...) create
// primitives directly, which would fix oneDNN's ISA before an Engine applies ACCY_MAX_ISA; the
// cap goes first, so capped rows compare capped primitives with capped items.
int main(int argc, char** argv) {
  accy::StatusOr<accy::Isa> isa = accy::kernels::ApplyOneDnnIsaCap();
  if (!isa.ok()) {
    std::fprintf(stderr, "accy-bench: %s\n", std::string(isa.status().message()).c_str());
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
