// accy-compare-runner: accy's side of the peer comparison (bench/compare/compare.py). Builds one
// named workload of bench/workloads.h, reads its inputs from DIR/in0.npy, in1.npy, ... (written
// by compare.py with a fixed seed; the same files the PyTorch and NumPy runs read), compiles it
// with --threads engine threads, runs it once and writes the result to --output (compare.py
// checks it against the float64 reference before it uses any timing), then times Run the way
// compare.py times the peers (bench/compare/timing.py): warm-up calls until both `warmup` calls
// and `warmup_s` seconds (at most 3600) are done (the first ~0.5 s of 2-thread work in a process
// runs slower on these VMs), an inner loop calibrated to ~target_ms, and `reps` timed
// repetitions; prints one JSON object (per-call milliseconds: median, min, max) on stdout.
// `--stream-triad N` instead measures the STREAM triad a[i] = b[i] + 0.5 c[i] over N floats per
// array on --threads OpenMP threads (12 bytes per element, as `BM_StreamTriad` counts), the
// bandwidth issue 13's softmax and layer norm targets are stated against, and prints
// {"triad_GBps": best, "triad_GBps_median": median, ...} over --reps repetitions.
// Exit code 0 on success, 1 with a message on stderr otherwise.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "bench/workloads.h"
#include "src/util/str_cat.h"
#include "tools/npy.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kUsage[] =
    "usage: accy-compare-runner --workload NAME --inputs DIR --output OUT.npy [--threads N]\n"
    "                           [--reps R] [--warmup W] [--warmup-s S] [--target-ms T]\n"
    "       accy-compare-runner --stream-triad N [--threads T] [--reps R]\n"
    "  NAME: chain_4m softmax layer_norm matmul_1024 block_s128 mlp_b64\n"
    "  defaults: --threads 1 --reps 25 --warmup 5 --warmup-s 1 --target-ms 20\n";

int Fail(const std::string& message) {
  std::fprintf(stderr, "accy-compare-runner: %s\n", message.c_str());
  return 1;
}

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// One triad pass over n elements on `threads` threads (static split, so each thread touches the
// pages it first touched), compiled for the widest vector ISA the CPU has.
__attribute__((target_clones("avx512f", "avx2", "default"))) void Triad(float* __restrict a,
                                                                        const float* __restrict b,
                                                                        const float* __restrict c,
                                                                        int64_t n, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + 0.5f * c[i];
}

// --stream-triad: best and median GB/s over `reps` passes after two warm-up passes.
int StreamTriad(int64_t n, int threads, int reps) {
  std::vector<float> a(static_cast<size_t>(n)), b(a.size()), c(a.size());
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 0.0f;
    b[i] = 1.0f;
    c[i] = 2.0f;
  }
  for (int w = 0; w < 2; ++w) Triad(a.data(), b.data(), c.data(), n, threads);
  std::vector<double> gbps;
  for (int r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    Triad(a.data(), b.data(), c.data(), n, threads);
    gbps.push_back(12.0 * static_cast<double>(n) / Seconds(start) / 1e9);
  }
  if (a[n / 2] != 2.0f) return Fail("stream triad computed a wrong value");
  std::printf(
      "{\"triad_GBps\": %.3f, \"triad_GBps_median\": %.3f, \"elements\": %lld, "
      "\"threads\": %d, \"reps\": %d}\n",
      *std::max_element(gbps.begin(), gbps.end()), Median(gbps), static_cast<long long>(n), threads,
      reps);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string workload_name, input_dir, output_path;
  int threads = 1, reps = 25, warmup = 5;
  double target_ms = 20, warmup_s = 1.0;
  int64_t triad_elements = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return Fail(accy::StrCat(flag, " needs a value\n", kUsage));
    const std::string value = argv[++i];
    if (flag == "--workload") {
      workload_name = value;
    } else if (flag == "--inputs") {
      input_dir = value;
    } else if (flag == "--output") {
      output_path = value;
    } else if (flag == "--threads") {
      threads = std::atoi(value.c_str());
    } else if (flag == "--reps") {
      reps = std::atoi(value.c_str());
    } else if (flag == "--warmup") {
      warmup = std::atoi(value.c_str());
    } else if (flag == "--warmup-s") {
      warmup_s = std::atof(value.c_str());
      if (!(warmup_s >= 0 && warmup_s <= 3600)) {
        return Fail(accy::StrCat("--warmup-s ", value, ": needs 0 <= S <= 3600"));
      }
    } else if (flag == "--target-ms") {
      target_ms = std::atof(value.c_str());
    } else if (flag == "--stream-triad") {
      triad_elements = std::atoll(value.c_str());
      if (triad_elements < 1) return Fail(accy::StrCat("--stream-triad ", value, ": needs N >= 1"));
    } else {
      return Fail(accy::StrCat("unknown flag ", flag, "\n", kUsage));
    }
  }
  if (triad_elements > 0) {
    if (threads < 1 || reps < 1)
      return Fail(accy::StrCat("missing or invalid arguments\n", kUsage));
    return StreamTriad(triad_elements, threads, reps);
  }
  if (workload_name.empty() || input_dir.empty() || output_path.empty() || threads < 1 ||
      reps < 1 || warmup < 0) {
    return Fail(accy::StrCat("missing or invalid arguments\n", kUsage));
  }

  accy::StatusOr<accy::bench::Workload> workload = accy::bench::BuildNamedWorkload(workload_name);
  if (!workload.ok()) return Fail(std::string(workload.status().message()));
  const accy::Function& main_function = *workload->module->FindFunction("main");
  std::vector<accy::Tensor> inputs;
  for (size_t p = 0; p < main_function.parameter_types().size(); ++p) {
    const std::string path = accy::StrCat(input_dir, "/in", p, ".npy");
    accy::StatusOr<accy::Tensor> array = accy::tools::ReadNpyFile(path);
    if (!array.ok()) return Fail(std::string(array.status().message()));
    accy::StatusOr<accy::Tensor> input =
        accy::tools::ConvertNpyInput(*array, main_function.parameter_types()[p]);
    if (!input.ok()) return Fail(accy::StrCat(path, ": ", input.status().message()));
    inputs.push_back(*std::move(input));
  }

  accy::EngineOptions options;
  options.num_threads = threads;
  accy::StatusOr<std::unique_ptr<accy::Engine>> engine = accy::Engine::Create(options);
  if (!engine.ok()) return Fail(std::string(engine.status().message()));
  const auto compile_start = Clock::now();
  accy::StatusOr<std::unique_ptr<accy::Executable>> executable =
      (*engine)->Compile(*workload->module);
  const double compile_ms = Seconds(compile_start) * 1e3;
  if (!executable.ok()) return Fail(std::string(executable.status().message()));
  std::vector<accy::Tensor> outputs = accy::bench::AllocateOutputs(*workload->module);

  accy::Status status = (*executable)->Run(inputs, outputs);
  if (!status.ok()) return Fail(std::string(status.message()));
  if (accy::Status written = accy::tools::WriteNpyFile(output_path, outputs[0]); !written.ok()) {
    return Fail(std::string(written.message()));
  }

  auto run = [&] {
    accy::Status s = (*executable)->Run(inputs, outputs);
    if (!s.ok()) status = s;
  };
  const auto warmup_start = Clock::now();
  int64_t warmup_calls = 0;
  for (; warmup_calls < warmup || Seconds(warmup_start) < warmup_s; ++warmup_calls) run();
  auto start = Clock::now();
  run();
  const double one = Seconds(start);
  const int inner = std::max(1, static_cast<int>(target_ms * 1e-3 / std::max(one, 1e-7)));
  std::vector<double> per_call_ms;
  for (int r = 0; r < reps; ++r) {
    start = Clock::now();
    for (int i = 0; i < inner; ++i) run();
    per_call_ms.push_back(Seconds(start) * 1e3 / inner);
  }
  if (!status.ok()) return Fail(std::string(status.message()));
  std::sort(per_call_ms.begin(), per_call_ms.end());
  const double median = Median(per_call_ms);
  int64_t items = 0;
  std::string kinds;
  for (const auto& [kind, count] : (*executable)->Stats().work_items_by_kind) {
    items += count;
    kinds += accy::StrCat(kinds.empty() ? "" : ", ", "\"", kind, "\": ", count);
  }
  std::printf(
      "{\"workload\": \"%s\", \"threads\": %d, \"ms_median\": %.6f, \"ms_min\": %.6f, "
      "\"ms_max\": %.6f, \"reps\": %d, \"inner\": %d, \"compile_ms\": %.3f, \"items\": %lld, "
      "\"items_by_kind\": {%s}, \"flops\": %.0f, \"bytes\": %.0f, "
      "\"runs_with_fewer_threads\": %lld, \"runs\": %lld}\n",
      workload_name.c_str(), threads, median, per_call_ms.front(), per_call_ms.back(), reps, inner,
      compile_ms, static_cast<long long>(items), kinds.c_str(), workload->flops, workload->bytes,
      static_cast<long long>((*executable)->Stats().runs_with_fewer_threads),
      static_cast<long long>(1 + warmup_calls + 1 + static_cast<int64_t>(reps) * inner));
  return 0;
}
