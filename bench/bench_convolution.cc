// Convolution items against raw oneDNN primitives, on the ResNet-50 layer shapes (batch 1, f32):
// the 7x7 stride-2 stem, a 3x3, a 1x1 expansion, a strided 1x1 projection, and a depthwise 3x3
// (feature_group_count = channels), each in one run:
//   BM_OnednnConvolutionRaw  convolution_forward (forward_inference, direct) on src/dst in the
//                            program's layout (nhwc or nchw tags) and weights in the layout the
//                            primitive picks (format_tag::any), reordered once outside the
//                            timing: what a hand-written oneDNN call would do (the baseline)
//   BM_AccyConvolution       a program holding one stablehlo.convolution (NHWC input, HWIO
//                            kernel, as Flax writes it; or NCHW / OIHW, as PyTorch does), its
//                            kernel a parameter the caller declares constant
//                            (CompileOptions::constant_parameters), Run through the engine
// Counters: GFLOPs (2 * output elements * window * input features per group), vs_onednn =
// baseline time / this time (1 = as fast as the raw primitive; issue 17 asks >= 0.9), and for the
// accy rows where the convolution item ran (library = oneDNN, or jit) in the label.
// Time is the best of ~0.3 s of runs after a warm-up, at 1 and 2 threads.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "bench/engine_fixture.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace {

struct ConvShape {
  const char* name;
  int64_t size;      // input height = width
  int64_t in;        // input features
  int64_t out;       // output features
  int64_t window;    // kernel height = width
  int64_t stride;
  int64_t pad;       // low = high padding per spatial dim
  int64_t groups;    // feature_group_count
  int64_t OutSize() const { return (size + 2 * pad - window) / stride + 1; }
  double Flops() const {
    return 2.0 * double(OutSize() * OutSize() * out) * double(window * window) * double(in / groups);
  }
};

constexpr ConvShape kShapes[] = {
    {"stem_7x7_s2", 224, 3, 64, 7, 2, 3, 1},
    {"3x3", 56, 64, 64, 3, 1, 1, 1},
    {"1x1", 56, 64, 256, 1, 1, 0, 1},
    {"1x1_s2", 56, 256, 512, 1, 2, 0, 1},
    {"depthwise_3x3", 56, 128, 128, 3, 1, 1, 128},
};

// Best-of time of fn() over ~0.3 s (bench/engine_fixture.h) after one warm-up call, in seconds.
double WarmBestSeconds(const std::function<void()>& fn) {
  fn();
  return accy::bench::BestSeconds(fn, std::chrono::milliseconds(300));
}

void Fill(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = 0.01f * static_cast<float>((i * 7) % 13 - 6);
}

// Baseline seconds by (shape, layout, threads), for the ratios.
std::map<std::tuple<int, bool, int>, double>& Baseline() {
  static std::map<std::tuple<int, bool, int>, double> baseline;
  return baseline;
}

void Report(benchmark::State& state, const ConvShape& shape, double seconds) {
  for (auto _ : state) state.SetIterationTime(seconds);
  state.counters["GFLOPs"] = seconds > 0 ? shape.Flops() / seconds / 1e9 : 0;
  state.counters["best_ms"] = seconds * 1e3;
}

// range(0): shape index, range(1): 1 = NCHW, 0 = NHWC, range(2): threads.
void BM_OnednnConvolutionRaw(benchmark::State& state) {
  const int index = static_cast<int>(state.range(0));
  const bool nchw = state.range(1) != 0;
  const int threads = static_cast<int>(state.range(2));
  const ConvShape& s = kShapes[index];
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  const int64_t o = s.OutSize();
  omp_set_num_threads(threads);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const dnnl::memory::desc src_md({1, s.in, s.size, s.size}, dt::f32, nchw ? tag::nchw : tag::nhwc);
  const dnnl::memory::desc dst_md({1, s.out, o, o}, dt::f32, nchw ? tag::nchw : tag::nhwc);
  const dnnl::memory::dims weights_dims =
      s.groups == 1 ? dnnl::memory::dims{s.out, s.in, s.window, s.window}
                    : dnnl::memory::dims{s.groups, s.out / s.groups, s.in / s.groups, s.window, s.window};
  const dnnl::memory::desc weights_plain(weights_dims, dt::f32, s.groups == 1 ? tag::oihw : tag::goihw);
  const dnnl::memory::desc weights_any(weights_dims, dt::f32, tag::any);
  const dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                      dnnl::algorithm::convolution_direct, src_md, weights_any,
                                      dst_md, {s.stride, s.stride}, {s.pad, s.pad}, {s.pad, s.pad}),
      engine);
  dnnl::memory src(src_md, engine), dst(dst_md, engine), plain(weights_plain, engine);
  dnnl::memory weights(pd.weights_desc(), engine);
  Fill(static_cast<float*>(src.get_data_handle()), s.in * s.size * s.size);
  Fill(static_cast<float*>(plain.get_data_handle()),
       static_cast<int64_t>(weights_plain.get_size() / sizeof(float)));
  dnnl::reorder(plain, weights).execute(stream, plain, weights);
  dnnl::convolution_forward conv(pd);
  const double seconds = WarmBestSeconds([&] {
    conv.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
    stream.wait();
  });
  Baseline()[{index, nchw, threads}] = seconds;
  Report(state, s, seconds);
  state.SetLabel(std::string(s.name) + (nchw ? " NCHW " : " NHWC ") + pd.impl_info_str());
}

void BM_AccyConvolution(benchmark::State& state) {
  const int index = static_cast<int>(state.range(0));
  const bool nchw = state.range(1) != 0;
  const int threads = static_cast<int>(state.range(2));
  const ConvShape& s = kShapes[index];
  auto f32 = [](std::vector<int64_t> dims) {
    return *accy::TensorType::Create(accy::ElementType::kF32, std::move(dims));
  };
  // Flax: input NHWC, kernel HWIO (I = in / groups), output NHWC. PyTorch: NCHW, OIHW, NCHW.
  const int64_t in_per_group = s.in / s.groups;
  const accy::TensorType input = nchw ? f32({1, s.in, s.size, s.size}) : f32({1, s.size, s.size, s.in});
  const accy::TensorType kernel = nchw ? f32({s.out, in_per_group, s.window, s.window})
                                       : f32({s.window, s.window, in_per_group, s.out});
  const int64_t o = s.OutSize();
  const accy::TensorType output = nchw ? f32({1, s.out, o, o}) : f32({1, o, o, s.out});
  accy::ConvolutionSpec spec;
  spec.window_strides = {s.stride, s.stride};
  spec.padding = {{s.pad, s.pad}, {s.pad, s.pad}};
  spec.feature_group_count = s.groups;
  accy::ConvDimensionNumbers& d = spec.dimension_numbers;
  if (nchw) {
    d = {0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}};
  } else {
    d = {0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
  }
  accy::Builder builder("bench_convolution");
  auto function = builder.BeginFunction("main", {input, kernel}, {output});
  if (!function.ok()) return state.SkipWithError(function.status().ToString().c_str());
  accy::FunctionBuilder& f = *function;
  auto conv = f.Convolution(f.Parameter(0), f.Parameter(1), spec);
  if (!conv.ok()) return state.SkipWithError(conv.status().ToString().c_str());
  if (auto status = f.Return({*conv}); !status.ok()) return state.SkipWithError(status.ToString().c_str());
  auto module = builder.Finish();
  if (!module.ok()) return state.SkipWithError(module.status().ToString().c_str());
  accy::EngineOptions options;
  options.num_threads = threads;
  options.reduce_threads_under_load = false;  // the baseline's team is fixed too
  options.enable_profiling = true;             // for runs_on (a clock read per item and run)
  auto engine = accy::Engine::Create(options);
  if (!engine.ok()) return state.SkipWithError(engine.status().ToString().c_str());
  accy::CompileOptions compile;
  compile.constant_parameters = {1};
  auto exe = (*engine)->Compile(**module, compile);
  if (!exe.ok()) return state.SkipWithError(exe.status().ToString().c_str());
  std::vector<accy::Tensor> inputs;
  for (const accy::TensorType& type : {input, kernel}) {
    accy::Tensor t = *accy::Tensor::Allocate(type);
    Fill(static_cast<float*>(t.data()), type.element_count());
    inputs.push_back(std::move(t));
  }
  std::vector<accy::Tensor> outputs;
  outputs.push_back(*accy::Tensor::Allocate(output));
  bool failed = false;
  const double seconds = WarmBestSeconds([&] { failed |= !(*exe)->Run(inputs, outputs).ok(); });
  if (failed) return state.SkipWithError("Run failed");
  Report(state, s, seconds);
  const auto key = std::make_tuple(index, nchw, threads);
  if (Baseline().count(key) != 0) state.counters["vs_onednn"] = Baseline()[key] / seconds;
  // Where the convolution item ran: "library" (oneDNN) or "jit" (EngineOptions::enable_profiling).
  std::string runs_on;
  for (const accy::ItemProfile& item : (*exe)->Stats().item_profiles) {
    if (item.root == "convolution") runs_on = item.runs_on;
  }
  state.SetLabel(std::string(s.name) + (nchw ? " NCHW " : " NHWC ") + runs_on);
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    for (int nchw : {0, 1}) {
      for (int i = 0; i < static_cast<int>(std::size(kShapes)); ++i) b->Args({i, nchw, threads});
    }
  }
  b->Iterations(1)->UseManualTime();
}

BENCHMARK(BM_OnednnConvolutionRaw)->Apply(Shapes);
BENCHMARK(BM_AccyConvolution)->Apply(Shapes);

}  // namespace
