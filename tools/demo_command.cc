// `accy demo` (make run's main job): a GPT-2-small-shaped pre-layer-norm transformer block
// (tools/transformer_block.h) built with the builder API, compiled by the engine twice (cold, then
// warm from an object cache in a fresh temporary folder), run several times, and checked against
// the reference evaluator. Prints the plan summary, compile times, the median run time and
// GFLOP/s, memory, and the errors; exit code 1 when the error is over the tolerance.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "accy/engine.h"
#include "accy/tensor.h"
#include "src/reference/reference_evaluator.h"
#include "src/util/str_cat.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/transformer_block.h"

namespace accy::tools {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kCommand[] = "demo";
constexpr char kUsage[] =
    "usage: accy demo [--threads N] [--seq L] [--runs R] [--profile]\n"
    "  Builds a GPT-2-small-shaped pre-layer-norm transformer block (d_model 768, 12 causal\n"
    "  attention heads of 64, GELU MLP of width 3072, batch 1, f32) with seeded random weights,\n"
    "  compiles it (cold, then warm from an object cache in a temporary folder), runs it R times\n"
    "  (default 20, at least 10) and checks it against the reference evaluator.\n"
    "  --threads N  intra-op threads (0, the default: every core)\n"
    "  --seq L      sequence length (default 128)\n"
    "  --profile    also print each work item's mean time over the runs\n"
    "               (EngineOptions::enable_profiling; adds two clock reads per item)\n"
    "exit code 1 when the max abs error exceeds 1e-3 * max(1, max |reference|).\n";

// Tolerance on the max absolute error, relative to the output scale max(1, max |reference|).
constexpr double kRelativeTolerance = 1e-3;

// User + system CPU time of the process so far.
double CpuMilliseconds() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-3;
}

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A fresh empty folder for the object cache, removed by the destructor.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "accy_demo_cache_XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Plan lines look like "#3 id=7 dot_general ops=[dot_general,add] tensor<...> ...".
struct PlanLine {
  std::string kind;
  std::string ops;  // "dot_general,add"
  std::string type;
  int op_count = 0;
};

std::vector<PlanLine> ParsePlan(const std::string& text) {
  std::vector<PlanLine> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string index, id;
    PlanLine plan;
    if (!(words >> index >> id >> plan.kind)) continue;
    std::string ops_word;
    words >> ops_word;
    if (ops_word.rfind("ops=[", 0) == 0 && ops_word.size() >= 6) {
      plan.ops = ops_word.substr(5, ops_word.size() - 6);
      plan.op_count = plan.ops.empty()
                          ? 0
                          : 1 + static_cast<int>(std::count(plan.ops.begin(), plan.ops.end(), ','));
    }
    words >> plan.type;
    lines.push_back(plan);
  }
  return lines;
}

// Compiles `module` with a fresh engine; prints and returns the wall time in `milliseconds`.
StatusOr<std::unique_ptr<Executable>> CompileTimed(const Module& module, EngineOptions options,
                                                   const char* label, double* milliseconds) {
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Create(std::move(options)));
  const Clock::time_point start = Clock::now();
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable, engine->Compile(module, "main"));
  *milliseconds = MillisecondsSince(start);
  const ExecutableStats stats = executable->Stats();
  std::printf("compile (%s): %.1f ms (planning %.1f ms, JIT/cache %.1f ms)\n", label, *milliseconds,
              stats.plan_milliseconds, stats.compile_milliseconds);
  return executable;
}

std::string WithThousands(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

int Demo(int threads, int64_t seq, int runs, bool profile) {
  auto fail = [](const Status& status) { return ReportError(kCommand, status); };
  TransformerBlockConfig config;
  config.seq = seq;
  const Clock::time_point build_start = Clock::now();
  StatusOr<TransformerBlock> block = BuildTransformerBlock(config);
  if (!block.ok()) return fail(block.status());
  const double build_ms = MillisecondsSince(build_start);
  int64_t weights = 0;
  for (size_t i = 1; i < block->inputs.size(); ++i)
    weights += block->inputs[i].type().element_count();
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::printf(
      "accy demo: GPT-2-small transformer block (pre-layer-norm, d_model %lld, %lld causal "
      "heads x %lld, GELU-tanh MLP %lld), seq %lld, batch 1, f32\n",
      static_cast<long long>(config.d_model), static_cast<long long>(config.heads),
      static_cast<long long>(config.head_dim), static_cast<long long>(config.mlp_width),
      static_cast<long long>(seq));
  std::printf(
      "built with the builder API in %.1f ms: %zu parameters (input x + %s weights, seed %u), "
      "threads %s\n",
      build_ms, block->inputs.size(), WithThousands(weights).c_str(), config.seed,
      threads == 0 ? StrCat("0 (every core: ", cores, ")").c_str()
                   : std::to_string(threads).c_str());

  // Compile cold (empty object cache), then warm (a new engine on the same cache folder).
  TempDir cache;
  if (cache.path().empty()) {
    return fail(Status(absl::StatusCode::kInternal, "cannot create a temporary cache folder"));
  }
  EngineOptions options;
  options.num_threads = threads;
  options.cache_dir = cache.path();
  options.enable_profiling = profile;
  double cold_ms = 0, warm_ms = 0;
  std::printf("\n");
  auto executable = CompileTimed(*block->module, options, "cold, empty object cache", &cold_ms);
  if (!executable.ok()) return fail(executable.status());
  auto warm = CompileTimed(*block->module, options, "warm, from the object cache", &warm_ms);
  if (!warm.ok()) return fail(warm.status());
  std::printf("warm / cold: %.2fx faster\n", cold_ms / std::max(warm_ms, 1e-9));

  // Plan summary.
  const ExecutableStats stats = (*executable)->Stats();
  const std::vector<PlanLine> plan = ParsePlan((*executable)->plan_text());
  int64_t items = 0;
  for (const auto& [kind, count] : stats.work_items_by_kind) items += count;
  std::string by_kind;
  for (const auto& [kind, count] : stats.work_items_by_kind) {
    by_kind += StrCat(by_kind.empty() ? "" : ", ", kind, " ", count);
  }
  std::printf("\nplan: %lld work items (%zu plan lines): %s\n", static_cast<long long>(items),
              plan.size(), by_kind.c_str());
  int fused = 0;
  for (const PlanLine& line : plan) fused += line.op_count > 1 ? 1 : 0;
  std::printf("fused clusters (%d items of more than one op):\n", fused);
  for (const PlanLine& line : plan) {
    if (line.op_count > 1) {
      std::printf("  %-18s %2d ops -> %-26s [%s]\n", line.kind.c_str(), line.op_count,
                  line.type.c_str(), line.ops.c_str());
    }
  }

  // Runs into preallocated outputs (no allocation after the first run).
  std::vector<Tensor> outputs;
  for (const TensorType& type : (*executable)->result_types()) {
    auto tensor = Tensor::Allocate(type);
    if (!tensor.ok()) return fail(tensor.status());
    outputs.push_back(*std::move(tensor));
  }
  Status warmup = (*executable)->Run(block->inputs, outputs);
  if (!warmup.ok()) return fail(warmup);
  std::vector<double> ms;
  const double cpu_start = CpuMilliseconds();
  for (int run = 0; run < runs; ++run) {
    const Clock::time_point start = Clock::now();
    Status status = (*executable)->Run(block->inputs, outputs);
    ms.push_back(MillisecondsSince(start));
    if (!status.ok()) return fail(status);
  }
  double wall_total = 0;
  for (double t : ms) wall_total += t;
  const double cpu_per_run = (CpuMilliseconds() - cpu_start) / runs;
  std::sort(ms.begin(), ms.end());
  const double median = runs % 2 == 1 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]);
  std::printf("\nrun: median %.3f ms over %d runs (min %.3f, max %.3f) after 1 warm-up run\n",
              median, runs, ms.front(), ms.back());
  std::printf("CPU time: %.3f ms per run (%.2f cores busy on average)\n", cpu_per_run,
              cpu_per_run / std::max(wall_total / runs, 1e-9));
  if (const int64_t reduced = (*executable)->Stats().runs_with_fewer_threads; reduced > 0) {
    std::printf("runs on one thread because other processes kept the cores busy: %lld of %d "
                "(EngineOptions::reduce_threads_under_load)\n",
                static_cast<long long>(reduced), runs + 1);
  }
  std::printf(
      "matmul work: %.3f GFLOP per run (2*m*n*k over the 6 projections and the 2 attention "
      "products) -> %.1f GFLOP/s at the median\n",
      block->matmul_flops * 1e-9, block->matmul_flops * 1e-6 / median);
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  std::printf(
      "memory: peak %.2f MiB per run beyond inputs and outputs (arena %.2f, scratch %.2f, "
      "constants %.2f), library items' own %.2f MiB of weight copies and %.2f MiB of scratch, "
      "process peak RSS %.1f MiB\n",
      stats.peak_memory_bytes / 1048576.0, stats.arena_bytes / 1048576.0,
      stats.scratch_bytes / 1048576.0, stats.constant_bytes / 1048576.0,
      stats.library_weight_bytes / 1048576.0, stats.library_scratch_bytes / 1048576.0,
      usage.ru_maxrss / 1024.0);

  // The warm executable computes the same bits.
  auto warm_outputs = (*warm)->Run(block->inputs);
  if (!warm_outputs.ok()) return fail(warm_outputs.status());
  if (profile) {
    std::printf("\nper-item profile (cold executable; mean over every run so far):\n");
    for (const ItemProfile& item : (*executable)->Stats().item_profiles) {
      std::printf("  #%-3lld %-18s %-12s on %-7s %8.3f ms\n",
                  static_cast<long long>(item.item_index), item.kind.c_str(), item.root.c_str(),
                  item.runs_on.c_str(),
                  item.calls > 0 ? item.total_milliseconds / static_cast<double>(item.calls) : 0.0);
    }
  }
  const bool same = CompareExact((*warm_outputs)[0], outputs[0]).ok;
  std::printf("warm-compiled executable: %s\n",
              same ? "same output bits as the cold one" : "DIFFERENT output from the cold one");

  // Reference evaluator.
  const Clock::time_point ref_start = Clock::now();
  auto expected = Evaluate(*block->module, "main", block->inputs);
  if (!expected.ok()) return fail(expected.status());
  const double ref_ms = MillisecondsSince(ref_start);
  const Tensor& got = outputs[0];
  const Tensor& want = (*expected)[0];
  double scale = 0, max_abs = 0, max_rel = 0;
  bool finite = true;
  for (int64_t i = 0; i < want.type().element_count(); ++i) {
    scale = std::max(scale, std::fabs(want.GetAsDouble(i)));
  }
  const double rel_floor = 1e-3 * std::max(1.0, scale);
  for (int64_t i = 0; i < want.type().element_count(); ++i) {
    const double a = got.GetAsDouble(i), e = want.GetAsDouble(i);
    if (!std::isfinite(a)) finite = false;
    const double diff = std::fabs(a - e);
    max_abs = std::max(max_abs, diff);
    if (std::fabs(e) >= rel_floor) max_rel = std::max(max_rel, diff / std::fabs(e));
  }
  const double tolerance = kRelativeTolerance * std::max(1.0, scale);
  const bool ok = finite && max_abs <= tolerance && same;
  std::printf("\nreference evaluator: %.1f ms; output %s, max |reference| %.4g\n", ref_ms,
              want.type().ToString().c_str(), scale);
  std::printf(
      "max abs error %.3g, max rel error %.3g (elements with |reference| >= %.3g); "
      "tolerance: max abs error <= %.3g (1e-3 * max(1, max |reference|)): %s\n",
      max_abs, max_rel, rel_floor, tolerance, ok ? "PASS" : "FAIL");
  return ok ? kExitOk : kExitError;
}

}  // namespace

int DemoCommand(std::span<const std::string> args) {
  static const OptionSpec kSpecs[] = {
      {"threads", true, false}, {"seq", true, false}, {"runs", true, false},
      {"profile", false, false}};
  StatusOr<ParsedArgs> parsed = ParseArgs(args, kSpecs);
  if (!parsed.ok()) return ReportUsage(kCommand, std::string(parsed.status().message()), kUsage);
  if (parsed->help) {
    std::printf("%s", kUsage);
    return kExitOk;
  }
  if (!parsed->positional.empty())
    return ReportUsage(kCommand, "takes no positional arguments", kUsage);
  StatusOr<int> threads = ParseIntOption("threads", parsed->Get("threads", "0"), 0, 4096);
  if (!threads.ok()) return ReportUsage(kCommand, std::string(threads.status().message()), kUsage);
  StatusOr<int> seq = ParseIntOption("seq", parsed->Get("seq", "128"), 1, 4096);
  if (!seq.ok()) return ReportUsage(kCommand, std::string(seq.status().message()), kUsage);
  StatusOr<int> runs = ParseIntOption("runs", parsed->Get("runs", "20"), 10, 100000);
  if (!runs.ok()) return ReportUsage(kCommand, std::string(runs.status().message()), kUsage);
  return Demo(*threads, *seq, *runs, parsed->Has("profile"));
}

}  // namespace accy::tools
