// Library-kernel benchmarks: accy's bound dot_general item (kernels/onednn_kernel.h) against the
// raw oneDNN matmul primitive it wraps (64, 256, 1024 cubed and the skinny [32, 4096] x
// [4096, 4096]), measured in the same run at 1 and 2 threads, plus the
// raw softmax and layer_norm primitives on [4096, 1024] f32 (the baselines the JIT row-pipeline
// emitter is compared against) and a small-size sweep that sets kMinLibraryDotElementOps.
// Buffers are allocated and first-touched once per shape and reused (perf-anchors/README.md).
// Counters: FLOP/s = 2*m*n*k per iteration; ratios are read off two rows of one run.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "accy/builder.h"
#include "kernels/onednn_kernel.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "src/fusion/fusion_analysis.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_ledger.h"
#include "src/schedule/schedule_plan.h"

namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float, FreeDeleter>;

Buffer Floats(int64_t n, float seed) {
  const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
  Buffer buffer(static_cast<float*>(std::aligned_alloc(64, bytes)));
  for (int64_t i = 0; i < n; ++i) buffer.get()[i] = seed * static_cast<float>((i * 7) % 13 - 6);
  return buffer;
}

// a [m, k], b [k, n], c [m, n], first touched once.
struct MatmulBuffers {
  Buffer a, b, c;
};
MatmulBuffers& BuffersFor(int64_t m, int64_t n, int64_t k) {
  static std::map<std::tuple<int64_t, int64_t, int64_t>, MatmulBuffers> buffers;
  MatmulBuffers& x = buffers[{m, n, k}];
  if (!x.a) {
    x.a = Floats(m * k, 0.01f);
    x.b = Floats(k * n, 0.02f);
    x.c = Floats(m * n, 0.0f);
  }
  return x;
}

void SetFlops(benchmark::State& state, double flops) {
  state.counters["FLOP/s"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

// Raw oneDNN: the primitive built once (as getting_started.cpp does), executed per iteration.
// Threads: state.range(threads_arg).
void RunRawMatmul(benchmark::State& state, int64_t m, int64_t n, int64_t k, int threads_arg = 1) {
  omp_set_num_threads(static_cast<int>(state.range(threads_arg)));
  MatmulBuffers& buffers = BuffersFor(m, n, k);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  using tag = dnnl::memory::format_tag;
  const auto f32 = dnnl::memory::data_type::f32;
  dnnl::memory::desc src_md({m, k}, f32, tag::ab), weights_md({k, n}, f32, tag::ab),
      dst_md({m, n}, f32, tag::ab);
  dnnl::matmul::primitive_desc matmul_pd(dnnl::matmul::desc(src_md, weights_md, dst_md), engine);
  dnnl::matmul matmul(matmul_pd);
  dnnl::memory src_mem(src_md, engine, buffers.a.get()), weights_mem(weights_md, engine, buffers.b.get()),
      dst_mem(dst_md, engine, buffers.c.get());
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, weights_mem}, {DNNL_ARG_DST, dst_mem}};
  for (auto _ : state) {
    matmul.execute(stream, args);
    stream.wait();
  }
  SetFlops(state, 2.0 * double(m) * double(n) * double(k));
  state.SetLabel(matmul_pd.impl_info_str());
}

// accy: a dot_general [m,k]x[k,n] planned as one item, bound once, run per iteration.
// `tiled` false clears LibraryKernelOptions::allow_tiled_gemm (brgemm matmul on AMD AVX-512).
void RunAccyMatmul(benchmark::State& state, int64_t m, int64_t n, int64_t k, int threads_arg = 1,
                   bool tiled = true) {
  omp_set_num_threads(static_cast<int>(state.range(threads_arg)));
  MatmulBuffers& buffers = BuffersFor(m, n, k);
  accy::Builder builder("bench");
  auto f32 = [&](std::vector<int64_t> dims) {
    return accy::TensorType::Create(accy::ElementType::kF32, dims).value();
  };
  auto fb = builder.BeginFunction("main", {f32({m, k}), f32({k, n})}, {f32({m, n})}).value();
  accy::Value* dot =
      fb.DotGeneral(fb.Parameter(0), fb.Parameter(1), f32({m, n}), {1}, {0}, {}, {}).value();
  (void)fb.Return({dot});
  auto module = builder.Finish().value();
  const accy::Operation* ops[] = {dot->defining_op()};
  accy::kernels::LibraryKernelOptions options{.min_dot_element_ops = 0};
  options.allow_tiled_gemm = tiled;
  auto kernel = accy::kernels::LibraryKernel::CreateForDotGeneral(ops, nullptr, options);
  if (!kernel.ok()) {
    state.SkipWithError(std::string(kernel.status().message()).c_str());
    return;
  }
  void* data[] = {buffers.a.get(), buffers.b.get(), buffers.c.get()};
  const int64_t bytes[] = {m * k * 4, k * n * 4, m * n * 4};
  for (auto _ : state) {
    if (!kernel->Run(data, bytes, 3).ok()) state.SkipWithError("run failed");
  }
  SetFlops(state, 2.0 * double(m) * double(n) * double(k));
  state.SetLabel(kernel->implementation());
}

void BM_OnednnMatmulRaw(benchmark::State& state) {
  RunRawMatmul(state, state.range(0), state.range(0), state.range(0));
}
void BM_AccyMatmulItem(benchmark::State& state) {
  RunAccyMatmul(state, state.range(0), state.range(0), state.range(0));
}
// Square sizes x threads.
void MatmulArgs(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2}) {
    for (int64_t n : {64, 256, 1024}) b->Args({n, threads});
  }
  b->UseRealTime();
}
BENCHMARK(BM_OnednnMatmulRaw)->Apply(MatmulArgs);
BENCHMARK(BM_AccyMatmulItem)->Apply(MatmulArgs);

// The transformer block's 128-row products (docs/tiled_gemm.md) as accy items, tiled gemm:jit
// (tiled 1, on AMD AVX-512 hosts) against brgemm matmul (tiled 0): m, k, n, threads, tiled.
void BM_AccyMatmulBlockShapes(benchmark::State& state) {
  RunAccyMatmul(state, state.range(0), state.range(2), state.range(1), 3, state.range(4) != 0);
}
BENCHMARK(BM_AccyMatmulBlockShapes)
    ->ArgsProduct({{128}, {768, 3072}, {768, 3072}, {1, 2}, {0, 1}})
    ->ArgNames({"m", "k", "n", "threads", "tiled"})
    ->UseRealTime();

// The skinny [32, 4096] x [4096, 4096] (a decode-step projection), range(1) threads as above.
void BM_OnednnMatmulSkinnyRaw(benchmark::State& state) { RunRawMatmul(state, 32, 4096, 4096); }
void BM_AccyMatmulSkinnyItem(benchmark::State& state) { RunAccyMatmul(state, 32, 4096, 4096); }
void SkinnyArgs(benchmark::internal::Benchmark* b) {
  b->Args({32, 1})->Args({32, 2})->ArgNames({"m", "threads"})->UseRealTime();
}
BENCHMARK(BM_OnednnMatmulSkinnyRaw)->Apply(SkinnyArgs);
BENCHMARK(BM_AccyMatmulSkinnyItem)->Apply(SkinnyArgs);

// The searchless-chess transformer's projections (../shared/models/searchless_chess_136m.mlir,
// 33 x 79 = 2,607 token rows): [2607, 1024] x [1024, 1024] (32 per run), x [1024, 4096] (16)
// and [2607, 4096] x [4096, 1024] (8), as raw primitives and as accy's bound items, threads
// range(3). Issue 16's "dot_generals keep >= 95% of the library GEMMs on the same shapes".
void BM_OnednnMatmulChessRaw(benchmark::State& state) {
  RunRawMatmul(state, state.range(0), state.range(1), state.range(2), 3);
}
void BM_AccyMatmulChessItem(benchmark::State& state) {
  RunAccyMatmul(state, state.range(0), state.range(1), state.range(2), 3);
}
void ChessArgs(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2}) {
    b->Args({2607, 1024, 1024, threads})->Args({2607, 4096, 1024, threads});
    b->Args({2607, 1024, 4096, threads});
  }
  b->ArgNames({"m", "n", "k", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_OnednnMatmulChessRaw)->Apply(ChessArgs);
BENCHMARK(BM_AccyMatmulChessItem)->Apply(ChessArgs);

// dot_epilogue: matmul + bias + gelu_tanh as one bound item (post-ops) vs the raw matmul
// followed by a separate epilogue pass (oneDNN binary add, then eltwise gelu_tanh in place).
void BM_AccyMatmulBiasGeluItem(benchmark::State& state) {
  omp_set_num_threads(static_cast<int>(state.range(1)));
  const int64_t n = state.range(0);
  MatmulBuffers& buffers = BuffersFor(n, n, n);
  static std::map<int64_t, Buffer> biases;
  if (!biases[n]) biases[n] = Floats(n, 0.1f);
  accy::Builder builder("bench");
  auto f32 = [&](std::vector<int64_t> dims) {
    return accy::TensorType::Create(accy::ElementType::kF32, dims).value();
  };
  auto fb = builder.BeginFunction("main", {f32({n, n}), f32({n, n}), f32({n})}, {f32({n, n})}).value();
  accy::Value* dot = fb.DotGeneral(fb.Parameter(0), fb.Parameter(1), f32({n, n}), {1}, {0}, {}, {}).value();
  accy::Value* bias = fb.BroadcastInDim(fb.Parameter(2), f32({n, n}), {1}).value();
  accy::Value* x = fb.Add(dot, bias).value();
  auto scalar = [&](double v) {
    return fb.BroadcastInDim(fb.ConstantScalar(accy::ElementType::kF32, v).value(), f32({n, n}), {}).value();
  };
  accy::Value* x3 = fb.Multiply(fb.Multiply(x, x).value(), x).value();
  accy::Value* inner = fb.Add(x, fb.Multiply(scalar(0.044715), x3).value()).value();
  accy::Value* th = fb.Tanh(fb.Multiply(scalar(0.7978845608028654), inner).value()).value();
  accy::Value* y = fb.Multiply(fb.Multiply(scalar(0.5), x).value(), fb.Add(scalar(1.0), th).value()).value();
  (void)fb.Return({y});
  auto module = builder.Finish().value();
  // Planned as the compiler will: the dot_epilogue cluster is one dot_general item.
  accy::passes::WorkLedger ledger;
  accy::passes::AnalysisCache cache(&ledger);
  const accy::Function& function = *module->FindFunction("main");
  auto plan = cache.Get<accy::SchedulePlan>(function);
  auto fusion = cache.Get<accy::FusionPlanAnalysis>(function);
  if (!plan.ok() || !fusion.ok()) {
    state.SkipWithError("planning failed");
    return;
  }
  const accy::WorkItem* item = nullptr;
  for (const accy::WorkItem& candidate : (*plan)->items()) {
    if (candidate.kind == accy::WorkKind::kDotGeneral) item = &candidate;
  }
  auto kernel = accy::kernels::LibraryKernel::Create(*item, &(*fusion)->plan(), {.min_dot_element_ops = 0});
  if (!kernel.ok()) {
    state.SkipWithError(std::string(kernel.status().message()).c_str());
    return;
  }
  void* data[] = {buffers.a.get(), buffers.b.get(), biases[n].get(), buffers.c.get()};
  const int64_t bytes[] = {n * n * 4, n * n * 4, n * 4, n * n * 4};
  for (auto _ : state) {
    if (!kernel->Run(data, bytes, 4).ok()) state.SkipWithError("run failed");
  }
  SetFlops(state, 2.0 * double(n) * double(n) * double(n));
  state.SetLabel(kernel->implementation());
}

void BM_OnednnMatmulThenEpilogue(benchmark::State& state) {
  omp_set_num_threads(static_cast<int>(state.range(1)));
  const int64_t n = state.range(0);
  MatmulBuffers& buffers = BuffersFor(n, n, n);
  static std::map<int64_t, Buffer> biases;
  if (!biases[n]) biases[n] = Floats(n, 0.1f);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  using tag = dnnl::memory::format_tag;
  const auto f32 = dnnl::memory::data_type::f32;
  dnnl::memory::desc src_md({n, n}, f32, tag::ab), bias_md({1, n}, f32, tag::ab);
  dnnl::matmul::primitive_desc matmul_pd(dnnl::matmul::desc(src_md, src_md, src_md), engine);
  dnnl::matmul matmul(matmul_pd);
  dnnl::binary::primitive_desc add_pd(
      dnnl::binary::desc(dnnl::algorithm::binary_add, src_md, bias_md, src_md), engine);
  dnnl::binary add(add_pd);
  dnnl::eltwise_forward::primitive_desc gelu_pd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                  dnnl::algorithm::eltwise_gelu_tanh, src_md, 0.f, 0.f),
      engine);
  dnnl::eltwise_forward gelu(gelu_pd);
  dnnl::memory a(src_md, engine, buffers.a.get()), b(src_md, engine, buffers.b.get()),
      c(src_md, engine, buffers.c.get()), bias(bias_md, engine, biases[n].get());
  for (auto _ : state) {
    matmul.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    add.execute(stream, {{DNNL_ARG_SRC_0, c}, {DNNL_ARG_SRC_1, bias}, {DNNL_ARG_DST, c}});
    gelu.execute(stream, {{DNNL_ARG_SRC, c}, {DNNL_ARG_DST, c}});
    stream.wait();
  }
  SetFlops(state, 2.0 * double(n) * double(n) * double(n));
}
void EpilogueArgs(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2}) {
    for (int64_t n : {256, 1024}) b->Args({n, threads});
  }
  b->UseRealTime();
}
BENCHMARK(BM_AccyMatmulBiasGeluItem)->Apply(EpilogueArgs);
BENCHMARK(BM_OnednnMatmulThenEpilogue)->Apply(EpilogueArgs);

// Small-size sweep at 1 thread: the fixed cost of a oneDNN call vs 2*n^3.
void BM_OnednnMatmulSmall(benchmark::State& state) {
  RunRawMatmul(state, state.range(0), state.range(0), state.range(0));
}
BENCHMARK(BM_OnednnMatmulSmall)
    ->ArgsProduct({{2, 4, 8, 16, 24, 32, 48}, {1}})
    ->UseRealTime();

// Raw row primitives on [4096, 1024] f32: softmax (v2, accurate) and layer_norm (scale+shift).
void BM_OnednnSoftmaxRaw(benchmark::State& state) {
  omp_set_num_threads(static_cast<int>(state.range(0)));
  constexpr int64_t kRows = 4096, kCols = 1024;
  static Buffer x = Floats(kRows * kCols, 0.1f), y = Floats(kRows * kCols, 0.0f);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  dnnl::memory::desc data_md({kRows, kCols}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
  dnnl::softmax_v2_forward::primitive_desc softmax_pd(
      dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_inference,
                                     dnnl::algorithm::softmax_accurate, data_md, data_md, 1),
      engine);
  dnnl::softmax_v2_forward softmax(softmax_pd);
  std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, dnnl::memory(data_md, engine, x.get())},
                                                {DNNL_ARG_DST, dnnl::memory(data_md, engine, y.get())}};
  for (auto _ : state) {
    softmax.execute(stream, args);
    stream.wait();
  }
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 8);
  state.SetLabel(softmax_pd.impl_info_str());
}
BENCHMARK(BM_OnednnSoftmaxRaw)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_OnednnLayerNormRaw(benchmark::State& state) {
  omp_set_num_threads(static_cast<int>(state.range(0)));
  constexpr int64_t kRows = 4096, kCols = 1024;
  static Buffer x = Floats(kRows * kCols, 0.1f), y = Floats(kRows * kCols, 0.0f),
                scale = Floats(kCols, 0.5f), shift = Floats(kCols, 0.25f);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  dnnl::memory::desc data_md({kRows, kCols}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
  dnnl::memory::desc scale_md({kCols}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
  dnnl::layer_normalization_forward::primitive_desc layer_norm_pd(
      dnnl::layer_normalization_forward::desc(
          dnnl::prop_kind::forward_inference, data_md, 1e-5f,
          dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift),
      engine);
  dnnl::layer_normalization_forward layer_norm(layer_norm_pd);
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, dnnl::memory(data_md, engine, x.get())},
      {DNNL_ARG_DST, dnnl::memory(data_md, engine, y.get())},
      {DNNL_ARG_SCALE, dnnl::memory(scale_md, engine, scale.get())},
      {DNNL_ARG_SHIFT, dnnl::memory(scale_md, engine, shift.get())}};
  for (auto _ : state) {
    layer_norm.execute(stream, args);
    stream.wait();
  }
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 8);
  state.SetLabel(layer_norm_pd.impl_info_str());
}
BENCHMARK(BM_OnednnLayerNormRaw)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
