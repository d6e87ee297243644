// Model benchmarks through the public Engine API, at 1 and 2 threads:
// - the transformer block of `accy demo` (tools/transformer_block.h, GPT-2-small sizes) at
//   sequence 128 and 512;
// - the MLP 784-512-512-10 (relu) at batch 64.
// Baselines measured in the same run: for the MLP, three raw oneDNN matmul primitives with bias
// and relu post-ops (what a hand-written oneDNN program does); for the block, the raw oneDNN
// matmuls of the block's shapes alone (its FLOPs at library speed, a lower bound on its time).
// Counters: FLOP/s (2*m*n*k summed over the matmuls), best_ms, compile_ms, items, and
// onednn_ratio = baseline best time / accy best time (1 = as fast as the baseline; the block's
// is the share of its time that the matmuls alone would take at raw oneDNN speed).
#include <benchmark/benchmark.h>
#include <omp.h>

#include <array>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "bench/engine_fixture.h"
#include "bench/workloads.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace accy::bench {
namespace {

using tag = dnnl::memory::format_tag;
constexpr auto kF32 = dnnl::memory::data_type::f32;

// One raw oneDNN matmul [batch, m, k] x [batch, k, n] (+ bias [n] and relu when asked), its
// buffers first-touched once.
struct RawMatmul {
  dnnl::matmul primitive;
  std::unordered_map<int, dnnl::memory> args;
  std::vector<AlignedFloats> buffers;
};

RawMatmul MakeRawMatmul(const dnnl::engine& engine, int64_t batch, int64_t m, int64_t n, int64_t k,
                        bool bias, bool relu) {
  RawMatmul raw;
  dnnl::memory::desc src_md({batch, m, k}, kF32, tag::abc), weights_md({batch, k, n}, kF32, tag::abc),
      dst_md({batch, m, n}, kF32, tag::abc), bias_md({1, 1, n}, kF32, tag::abc);
  dnnl::post_ops post_ops;
  if (relu) post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(post_ops);
  const auto desc = bias ? dnnl::matmul::desc(src_md, weights_md, bias_md, dst_md)
                         : dnnl::matmul::desc(src_md, weights_md, dst_md);
  dnnl::matmul::primitive_desc matmul_pd(desc, attr, engine);
  raw.primitive = dnnl::matmul(matmul_pd);
  auto add = [&](int arg, const dnnl::memory::desc& md, int64_t elements) {
    raw.buffers.push_back(MakeFloats(elements));
    raw.args[arg] = dnnl::memory(md, engine, raw.buffers.back().data.get());
  };
  add(DNNL_ARG_SRC, src_md, batch * m * k);
  add(DNNL_ARG_WEIGHTS, weights_md, batch * k * n);
  add(DNNL_ARG_DST, dst_md, batch * m * n);
  if (bias) add(DNNL_ARG_BIAS, bias_md, n);
  return raw;
}

// Best time of running `matmuls` back to back on `threads` OpenMP threads.
double RawSeconds(std::vector<RawMatmul>& matmuls, const dnnl::engine& engine, int threads) {
  omp_set_num_threads(threads);
  dnnl::stream stream(engine);
  return BestSeconds([&] {
    for (RawMatmul& raw : matmuls) raw.primitive.execute(stream, raw.args);
    stream.wait();
  });
}

// The block's matmuls: q, k, v and output projections [L, D] x [D, D] (+bias), the MLP's
// [L, D] x [D, 4D] and [L, 4D] x [4D, D] (+bias), and per head [L, Dh] x [Dh, L] and
// [L, L] x [L, Dh] (batched over H = 12).
double BlockMatmulSeconds(int64_t seq, int threads) {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  constexpr int64_t d = 768, heads = 12, head_dim = 64, width = 3072;
  std::vector<RawMatmul> matmuls;
  for (int i = 0; i < 4; ++i) matmuls.push_back(MakeRawMatmul(engine, 1, seq, d, d, true, false));
  matmuls.push_back(MakeRawMatmul(engine, 1, seq, width, d, true, false));
  matmuls.push_back(MakeRawMatmul(engine, 1, seq, d, width, true, false));
  matmuls.push_back(MakeRawMatmul(engine, heads, seq, seq, head_dim, false, false));
  matmuls.push_back(MakeRawMatmul(engine, heads, seq, head_dim, seq, false, false));
  return RawSeconds(matmuls, engine, threads);
}

double MlpOnednnSeconds(int64_t batch, int threads) {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  std::vector<RawMatmul> matmuls;
  matmuls.push_back(MakeRawMatmul(engine, 1, batch, 512, 784, true, true));
  matmuls.push_back(MakeRawMatmul(engine, 1, batch, 512, 512, true, true));
  matmuls.push_back(MakeRawMatmul(engine, 1, batch, 10, 512, true, false));
  return RawSeconds(matmuls, engine, threads);
}

void RunModel(benchmark::State& state, int threads, const std::string& key,
              const std::function<StatusOr<Workload>()>& build,
              const std::function<double(int)>& baseline_seconds) {
  std::string error;
  CompiledWorkload* compiled = CompileOnce(key, build, threads, true, &error);
  if (compiled == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  const double best = TimeRuns(state, *compiled);
  if (best <= 0) return;
  state.counters["onednn_ratio"] = baseline_seconds(threads) / best;
}

// range(0): sequence length, range(1): threads.
void BM_TransformerBlock(benchmark::State& state) {
  const int64_t seq = state.range(0);
  RunModel(state, static_cast<int>(state.range(1)), "block_s" + std::to_string(seq), [seq] { return BuildBlock(seq); },
           [seq](int threads) { return BlockMatmulSeconds(seq, threads); });
}
BENCHMARK(BM_TransformerBlock)
    ->ArgsProduct({{128, 512}, {1, 2}})
    ->ArgNames({"seq", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// range(0): threads.
void BM_Mlp784x512x512x10(benchmark::State& state) {
  RunModel(state, static_cast<int>(state.range(0)), "mlp_b64", [] { return BuildMlp(64); },
           [](int threads) { return MlpOnednnSeconds(64, threads); });
}
BENCHMARK(BM_Mlp784x512x512x10)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();

}  // namespace
}  // namespace accy::bench
