// reduce_window items against raw oneDNN pooling, on ResNet-like shapes (f32, 64 channels,
// 112x112 and 56x56, batch 1 and 8, NHWC as Flax writes it and NCHW as PyTorch does): max pool
// 3x3 stride 2 padding 1 (init -inf) and average pool 2x2 stride 2 (reduce_window add, then a
// divide by 4.0, as JAX's avg_pool), each in one run:
//   BM_OnednnPoolingRaw   pooling_v2_forward (forward_inference; pooling_max or
//                         pooling_avg_include_padding) on src/dst in the program's layout (nhwc
//                         or nchw tags): what a hand-written oneDNN call would do (the baseline)
//   BM_AccyPooling        the program through the engine: the reduce_window item (oneDNN for
//                         the average, the JIT for max: docs/numerics.md)
//   BM_AccyPoolingUnfused the same program with EngineOptions::enable_fusion = false: the
//                         reduce_window and the divide as two JIT items, as before reduce_window
//                         items took their epilogue (and the average its oneDNN mapping)
// Counters: best_ms, vs_onednn = baseline time / this time (1 = as fast as the raw primitive;
// issue 17 asks >= 0.9 of it), and for BM_AccyPooling vs_unfused = unfused time / this time;
// the label says where the reduce_window items ran (library = oneDNN, or jit).
// Time is the best of ~0.3 s of runs after a warm-up, at 1 thread.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "bench/engine_fixture.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace {

struct PoolShape {
  bool max;  // max 3x3/2 pad 1, else average 2x2/2
  int64_t batch;
  int64_t size;  // input height = width
  int64_t channels;
  int64_t Window() const { return max ? 3 : 2; }
  int64_t Pad() const { return max ? 1 : 0; }
  int64_t OutSize() const { return (size + 2 * Pad() - Window()) / 2 + 1; }
  std::string Name() const {
    return std::string(max ? "max3x3_s2_p1" : "avg2x2_s2") + " n" + std::to_string(batch) + " " +
           std::to_string(size) + "x" + std::to_string(size) + "x" + std::to_string(channels);
  }
};

constexpr PoolShape kShapes[] = {
    {true, 1, 112, 64},  {true, 8, 112, 64},  {true, 1, 56, 64},  {true, 8, 56, 64},
    {false, 1, 112, 64}, {false, 8, 112, 64}, {false, 1, 56, 64}, {false, 8, 56, 64},
};

double WarmBestSeconds(const std::function<void()>& fn) {
  fn();
  return accy::bench::BestSeconds(fn, std::chrono::milliseconds(300));
}

void Fill(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = 0.01f * static_cast<float>((i * 7) % 13 - 6);
}

// Seconds by (variant, shape, layout): variant 0 raw oneDNN, 1 unfused.
std::map<std::tuple<int, int, bool>, double>& Times() {
  static std::map<std::tuple<int, int, bool>, double> times;
  return times;
}

void Report(benchmark::State& state, double seconds) {
  for (auto _ : state) state.SetIterationTime(seconds);
  state.counters["best_ms"] = seconds * 1e3;
}

std::vector<int64_t> Dims(const PoolShape& s, int64_t size, bool nchw) {
  return nchw ? std::vector<int64_t>{s.batch, s.channels, size, size}
              : std::vector<int64_t>{s.batch, size, size, s.channels};
}

std::string TensorText(const std::vector<int64_t>& dims) {
  std::string text = "tensor<";
  for (int64_t d : dims) text += std::to_string(d) + "x";
  return text + "f32>";
}

// JAX's export form: reduce_window over the spatial dims, then (average) a divide by a splat.
std::string Program(const PoolShape& s, bool nchw) {
  const std::string in = TensorText(Dims(s, s.size, nchw));
  const std::string out = TensorText(Dims(s, s.OutSize(), nchw));
  const std::string w = std::to_string(s.Window());
  const std::string p = std::to_string(s.Pad());
  const std::string window = nchw ? "1, 1, " + w + ", " + w : "1, " + w + ", " + w + ", 1";
  const std::string strides = nchw ? "1, 1, 2, 2" : "1, 2, 2, 1";
  const std::string padding =
      nchw ? "[[0, 0], [0, 0], [" + p + ", " + p + "], [" + p + ", " + p + "]]"
           : "[[0, 0], [" + p + ", " + p + "], [" + p + ", " + p + "], [0, 0]]";
  std::string text =
      "func.func @main(%x: " + in + ") -> " + out + " {\n" + "  %init = stablehlo.constant dense<" +
      (s.max ? "0xFF800000" : "0.0") + "> : tensor<f32>\n" +
      "  %s = \"stablehlo.reduce_window\"(%x, %init) <{" + "padding = dense<" + padding +
      "> : tensor<4x2xi64>, window_dimensions = " + "array<i64: " + window +
      ">, window_strides = array<i64: " + strides +
      ">}> ({\n  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n" + "    %r = stablehlo." +
      (s.max ? "maximum" : "add") + " %a, %b : tensor<f32>\n" +
      "    stablehlo.return %r : tensor<f32>\n  }) : (" + in + ", tensor<f32>) -> " + out + "\n";
  if (s.max) return text + "  return %s : " + out + "\n}\n";
  return text + "  %d = stablehlo.constant dense<4.0> : " + out + "\n" +
         "  %y = stablehlo.divide %s, %d : " + out + "\n  return %y : " + out + "\n}\n";
}

// range(0): shape index, range(1): 1 = NCHW, 0 = NHWC.
void BM_OnednnPoolingRaw(benchmark::State& state) {
  const int index = static_cast<int>(state.range(0));
  const bool nchw = state.range(1) != 0;
  const PoolShape& s = kShapes[index];
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  omp_set_num_threads(1);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const int64_t o = s.OutSize();
  const dnnl::memory::desc src_md({s.batch, s.channels, s.size, s.size}, dt::f32,
                                  nchw ? tag::nchw : tag::nhwc);
  const dnnl::memory::desc dst_md({s.batch, s.channels, o, o}, dt::f32,
                                  nchw ? tag::nchw : tag::nhwc);
  const dnnl::pooling_v2_forward::primitive_desc pd(
      dnnl::pooling_v2_forward::desc(
          dnnl::prop_kind::forward_inference,
          s.max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_include_padding,
          src_md, dst_md, {2, 2}, {s.Window(), s.Window()}, {0, 0}, {s.Pad(), s.Pad()},
          {s.Pad(), s.Pad()}),
      engine);
  dnnl::memory src(src_md, engine), dst(dst_md, engine);
  Fill(static_cast<float*>(src.get_data_handle()), s.batch * s.channels * s.size * s.size);
  dnnl::pooling_v2_forward pooling(pd);
  const double seconds = WarmBestSeconds([&] {
    pooling.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    stream.wait();
  });
  Times()[{0, index, nchw}] = seconds;
  Report(state, seconds);
  state.SetLabel(s.Name() + (nchw ? " NCHW " : " NHWC ") + pd.impl_info_str());
}

void RunAccy(benchmark::State& state, bool fusion) {
  const int index = static_cast<int>(state.range(0));
  const bool nchw = state.range(1) != 0;
  const PoolShape& s = kShapes[index];
  auto module = accy::ParseStableHlo(Program(s, nchw));
  if (!module.ok()) return state.SkipWithError(module.status().ToString().c_str());
  accy::EngineOptions options;
  options.num_threads = 1;
  options.reduce_threads_under_load = false;
  options.enable_profiling = true;  // for runs_on (a clock read per item and run)
  options.enable_fusion = fusion;
  auto engine = accy::Engine::Create(options);
  if (!engine.ok()) return state.SkipWithError(engine.status().ToString().c_str());
  auto exe = (*engine)->Compile(**module);
  if (!exe.ok()) return state.SkipWithError(exe.status().ToString().c_str());
  const accy::TensorType input =
      *accy::TensorType::Create(accy::ElementType::kF32, Dims(s, s.size, nchw));
  std::vector<accy::Tensor> inputs;
  inputs.push_back(*accy::Tensor::Allocate(input));
  Fill(static_cast<float*>(inputs[0].data()), input.element_count());
  std::vector<accy::Tensor> outputs;
  outputs.push_back(*accy::Tensor::Allocate(
      *accy::TensorType::Create(accy::ElementType::kF32, Dims(s, s.OutSize(), nchw))));
  bool failed = false;
  const double seconds = WarmBestSeconds([&] { failed |= !(*exe)->Run(inputs, outputs).ok(); });
  if (failed) return state.SkipWithError("Run failed");
  Report(state, seconds);
  if (!fusion) Times()[{1, index, nchw}] = seconds;
  if (Times().count({0, index, nchw}) != 0) {
    state.counters["vs_onednn"] = Times()[{0, index, nchw}] / seconds;
  }
  if (fusion && Times().count({1, index, nchw}) != 0) {
    state.counters["vs_unfused"] = Times()[{1, index, nchw}] / seconds;
  }
  std::string runs_on;
  int64_t items = 0;
  for (const accy::ItemProfile& item : (*exe)->Stats().item_profiles) {
    ++items;
    if (item.kind == "reduce_window") runs_on += (runs_on.empty() ? "" : "+") + item.runs_on;
  }
  state.counters["items"] = static_cast<double>(items);
  state.SetLabel(s.Name() + (nchw ? " NCHW " : " NHWC ") + runs_on);
}

void BM_AccyPoolingUnfused(benchmark::State& state) { RunAccy(state, false); }
void BM_AccyPooling(benchmark::State& state) { RunAccy(state, true); }

void Shapes(benchmark::internal::Benchmark* b) {
  for (int nchw : {0, 1}) {
    for (int i = 0; i < static_cast<int>(std::size(kShapes)); ++i) b->Args({i, nchw});
  }
  b->Iterations(1)->UseManualTime();
}

BENCHMARK(BM_OnednnPoolingRaw)->Apply(Shapes);
BENCHMARK(BM_AccyPoolingUnfused)->Apply(Shapes);
BENCHMARK(BM_AccyPooling)->Apply(Shapes);

}  // namespace
