// flash_attention microbenchmark through the public Engine API: causal self-attention of the
// `accy demo` transformer block (12 heads, head dim 64, f32; Q·K^T * 1/8 + a constant [L, L]
// causal mask, softmax, ·V), the whole program one flash_attention work item, at sequence 128
// and 512 and 1 and 2 threads.
// Counters: GFLOPs = 4 * heads * L^2 * head_dim (the two matmuls, masked half included) / best
// time, best_ms, compile_ms, items (1 when the attention fused), fma_peak_fraction (GFLOPs over
// the in-binary FMA peak of the process ISA at the same thread count, bench/fma_peak.h).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "bench/engine_fixture.h"
#include "bench/fma_peak.h"
#include "bench/workloads.h"

namespace accy::bench {
namespace {

constexpr int64_t kHeads = 12;
constexpr int64_t kHeadDim = 64;

// main(q, k, v [H, L, Dh]) -> softmax(q·k^T / sqrt(Dh) + causal) · v, as tools/transformer_block.cc.
StatusOr<Workload> BuildCausalAttention(int64_t seq) {
  Builder builder("flash_attention");
  const ElementType f32 = ElementType::kF32;
  ACCY_ASSIGN_OR_RETURN(TensorType qkv, builder.Type(f32, {kHeads, seq, kHeadDim}));
  ACCY_ASSIGN_OR_RETURN(TensorType scores, builder.Type(f32, {kHeads, seq, seq}));
  ACCY_ASSIGN_OR_RETURN(TensorType rows, builder.Type(f32, {kHeads, seq}));
  ACCY_ASSIGN_OR_RETURN(TensorType mask_type, builder.Type(f32, {seq, seq}));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", {qkv, qkv, qkv}, {qkv}));
  ACCY_ASSIGN_OR_RETURN(Value * qk, f.DotGeneral(f.Parameter(0), f.Parameter(1), scores, {2}, {2}, {0}, {0}));
  ACCY_ASSIGN_OR_RETURN(Value * scale, f.ConstantScalar(f32, 1.0 / std::sqrt(static_cast<double>(kHeadDim))));
  ACCY_ASSIGN_OR_RETURN(Value * scale_b, f.BroadcastInDim(scale, scores, {}));
  ACCY_ASSIGN_OR_RETURN(Value * scaled, f.Multiply(qk, scale_b));
  std::vector<float> mask(static_cast<size_t>(seq * seq));
  for (int64_t i = 0; i < seq; ++i) {
    for (int64_t j = 0; j < seq; ++j) {
      mask[static_cast<size_t>(i * seq + j)] = j <= i ? 0.0f : -std::numeric_limits<float>::infinity();
    }
  }
  std::vector<uint8_t> mask_bytes(mask.size() * sizeof(float));
  std::memcpy(mask_bytes.data(), mask.data(), mask_bytes.size());
  ACCY_ASSIGN_OR_RETURN(Value * mask_value, f.Constant(mask_type, mask_bytes));
  ACCY_ASSIGN_OR_RETURN(Value * mask_b, f.BroadcastInDim(mask_value, scores, {1, 2}));
  ACCY_ASSIGN_OR_RETURN(Value * masked, f.Add(scaled, mask_b));
  ACCY_ASSIGN_OR_RETURN(Value * low, f.ConstantScalar(f32, -std::numeric_limits<double>::infinity()));
  ACCY_ASSIGN_OR_RETURN(Value * max, f.Reduce(masked, low, rows, "max", {2}));
  ACCY_ASSIGN_OR_RETURN(Value * max_b, f.BroadcastInDim(max, scores, {0, 1}));
  ACCY_ASSIGN_OR_RETURN(Value * shifted, f.Subtract(masked, max_b));
  ACCY_ASSIGN_OR_RETURN(Value * e, f.Exponential(shifted));
  ACCY_ASSIGN_OR_RETURN(Value * zero, f.ConstantScalar(f32, 0.0));
  ACCY_ASSIGN_OR_RETURN(Value * sum, f.Reduce(e, zero, rows, "sum", {2}));
  ACCY_ASSIGN_OR_RETURN(Value * sum_b, f.BroadcastInDim(sum, scores, {0, 1}));
  ACCY_ASSIGN_OR_RETURN(Value * p, f.Divide(e, sum_b));
  ACCY_ASSIGN_OR_RETURN(Value * out, f.DotGeneral(p, f.Parameter(2), qkv, {2}, {1}, {0}, {0}));
  ACCY_RETURN_IF_ERROR(f.Return({out}));
  Workload workload;
  workload.name = "flash_attention_s" + std::to_string(seq);
  ACCY_ASSIGN_OR_RETURN(workload.module, builder.Finish());
  workload.flops = 4.0 * kHeads * static_cast<double>(seq * seq) * kHeadDim;
  workload.bytes = 4.0 * 4 * kHeads * seq * kHeadDim + 4.0 * seq * seq;
  return workload;
}

// range(0): sequence length, range(1): threads.
void BM_FlashAttention(benchmark::State& state) {
  const int64_t seq = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  std::string error;
  CompiledWorkload* compiled = CompileOnce("flash_attention_s" + std::to_string(seq),
                                           [seq] { return BuildCausalAttention(seq); }, threads,
                                           true, &error);
  if (compiled == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  const double best = TimeRuns(state, *compiled);
  if (best > 0) {
    const double gflops = compiled->workload.flops / best * 1e-9;
    state.counters["GFLOPs"] = gflops;
    // Against the FMA peak of the process ISA at the same thread count, measured in this run.
    const double peak = FmaPeakGflops(ProcessIsa().value_or(Isa::kX86_64), threads);
    if (peak > 0) state.counters["fma_peak_fraction"] = gflops / peak;
  }
}
BENCHMARK(BM_FlashAttention)
    ->ArgsProduct({{128, 512}, {1, 2}})
    ->ArgNames({"seq", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace accy::bench
