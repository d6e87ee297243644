// Small-M products that stream their weights (kernels/small_m_matmul.h): M rows of lhs times 48
// distinct K 768 x N 3072 f32 weight matrices (453 MB, past the last-level cache of every host
// measured: the Intel Xeon family 6 model 207 VMs have a 300 MB L3, where the 226 MB of 24
// matrices stayed cached and read at 33 GB/s against 24 GB/s from memory), the
// shape of BERT's up-projection at seq 7, on accy's packed-panel kernel and on oneDNN matmul
// with weights in the layout it picks (format_tag::any, reordered once), and a plain read of
// the same bytes as the bandwidth baseline -- all in one run, at 1 and 2 threads.
// Counters: GBps = weight bytes per second; read_ratio = GBps / the read baseline's GBps.
#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <vector>

#include "accy/isa.h"
#include "kernels/small_m_matmul.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace {

constexpr int64_t kK = 768, kN = 3072, kMatrices = 48;
constexpr double kWeightBytes = double(kK) * kN * 4 * kMatrices;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Floats = std::unique_ptr<float[], FreeDeleter>;

Floats Allocate(int64_t n) {
  const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
  Floats f(static_cast<float*>(std::aligned_alloc(64, bytes)));
  for (int64_t i = 0; i < n; ++i) f[i] = 0.01f * static_cast<float>((i * 7) % 13 - 6);
  return f;
}

// The weights as an exporter hands them: [N, K] (a transposed torch Linear weight), first
// touched once and shared by every benchmark.
std::vector<Floats>& SourceWeights() {
  static std::vector<Floats> weights = [] {
    std::vector<Floats> w;
    for (int64_t i = 0; i < kMatrices; ++i) w.push_back(Allocate(kN * kK));
    return w;
  }();
  return weights;
}

// Best-of time of fn() over ~0.3 s, in seconds.
template <typename Fn>
double BestSeconds(Fn&& fn) {
  double best = 1e30;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  for (int rep = 0; rep < 3 || std::chrono::steady_clock::now() < deadline; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// Sums every source float on `threads` threads, 16 partial sums per thread so the loop
// vectorizes (the bandwidth baseline).
__attribute__((target_clones("avx512f", "avx2", "default"))) float ReadAll(int threads) {
  float total = 0;
  for (const Floats& w : SourceWeights()) {
    const float* x = w.get();
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
      const int64_t chunk = kN * kK / 16 / omp_get_num_threads() * 16;
      const int64_t first = chunk * omp_get_thread_num();
      const int64_t last = omp_get_thread_num() + 1 == omp_get_num_threads() ? kN * kK : first + chunk;
      float partial[16] = {};
      for (int64_t i = first; i < last; i += 16) {
        for (int j = 0; j < 16; ++j) partial[j] += x[i + j];
      }
      for (float p : partial) total += p;
    }
  }
  return total;
}

void Report(benchmark::State& state, double seconds, int threads) {
  const double read = BestSeconds([&] { benchmark::DoNotOptimize(ReadAll(threads)); });
  state.counters["GBps"] = kWeightBytes / seconds / 1e9;
  state.counters["read_GBps"] = kWeightBytes / read / 1e9;
  state.counters["read_ratio"] = read / seconds;
  state.counters["best_ms"] = seconds * 1e3;
}

void BM_SmallMKernel(benchmark::State& state) {
  const int64_t m = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  const accy::Isa isa = accy::ProcessIsa().value_or(accy::Isa::kX86_64);
  if (!accy::kernels::SmallMMatmulSupports(isa)) {
    state.SkipWithError("no small-M kernel for this ISA");
    return;
  }
  omp_set_num_threads(threads);
  std::vector<Floats> packed;
  for (const Floats& w : SourceWeights()) {
    packed.push_back(Allocate(accy::kernels::SmallMPackedElements(kK, kN, isa)));
    accy::kernels::PackSmallMWeights(w.get(), kK, kN, /*stride_k=*/1, /*stride_n=*/kK, isa,
                                     packed.back().get());
  }
  Floats lhs = Allocate(m * kK), dst = Allocate(m * kN);
  auto run = [&] {
    for (const Floats& p : packed) {
      accy::kernels::SmallMMatmul(lhs.get(), m, kK, p.get(), kK, kN, nullptr, dst.get(), kN, isa);
    }
  };
  for (auto _ : state) run();
  Report(state, BestSeconds(run), threads);
  state.SetLabel(std::string("accy:small_m_matmul:") + std::string(accy::IsaName(isa)));
}

void BM_SmallMOnednn(benchmark::State& state) {
  const int64_t m = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  omp_set_num_threads(threads);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  using tag = dnnl::memory::format_tag;
  const auto f32 = dnnl::memory::data_type::f32;
  const dnnl::memory::desc src_md({m, kK}, f32, tag::ab), user_md({kK, kN}, f32, tag::ba),
      any_md({kK, kN}, f32, tag::any), dst_md({m, kN}, f32, tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, any_md, dst_md), engine);
  dnnl::matmul matmul(pd);
  std::vector<dnnl::memory> weights;
  for (const Floats& w : SourceWeights()) {
    dnnl::memory user(user_md, engine, w.get());
    weights.emplace_back(pd.weights_desc(), engine);
    dnnl::reorder(user, weights.back()).execute(stream, user, weights.back());
  }
  stream.wait();
  Floats lhs = Allocate(m * kK), dst = Allocate(m * kN);
  dnnl::memory src(src_md, engine, lhs.get()), out(dst_md, engine, dst.get());
  auto run = [&] {
    for (dnnl::memory& w : weights) {
      matmul.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, out}});
    }
    stream.wait();
  };
  for (auto _ : state) run();
  Report(state, BestSeconds(run), threads);
  state.SetLabel(pd.impl_info_str());
}

void Args(benchmark::internal::Benchmark* b) {
  for (int64_t m : {1, 7, 16}) {
    for (int64_t threads : {1, 2}) b->Args({m, threads});
  }
  b->ArgNames({"m", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(3);
}

BENCHMARK(BM_SmallMKernel)->Apply(Args);
BENCHMARK(BM_SmallMOnednn)->Apply(Args);

}  // namespace
