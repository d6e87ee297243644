// `accy bench FILE.mlir` (accy's iree-benchmark-module): compile one function of a StableHLO file
// cold, run it on given or seeded random inputs, and report compile time per stage, distinct
// kernels, run time (median, min, max), memory and, with --profile, where the time goes.
// Timings are wall-clock on this host; compare them only with figures of the same run and host
// (../perf-anchors: absolute times on these VMs vary by up to 30% between runs).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "accy/engine.h"
#include "accy/isa.h"
#include "accy/tensor.h"
#include "src/util/str_cat.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/npy.h"
#include "tools/object_cache.h"

namespace accy::tools {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kCommand[] = "bench";
constexpr char kUsageHead[] =
    "usage: accy bench FILE.mlir [--function NAME] [--input FILE.npy]... | [--random-inputs SEED]\n"
    "                  [--threads N] [--runs R] [--max-while-iterations N] [--profile]\n"
    "                  [--fixed-threads] [--format text|json]\n"
    "                  [--cache-dir DIR | --no-cache]\n"
    "  Compiles the function (default @main, or the module's only function) once, runs it once to\n"
    "  warm up and then R times, and prints the compile time per stage, the work items and\n"
    "  distinct JIT kernels, the run time (median, min, max), the memory one run needs beyond its\n"
    "  inputs and outputs, the weight copies and scratch the library items own (packed weights;\n"
    "  ExecutableStats::library_weight_bytes), and the process's peak RSS.\n"
    "  --input FILE.npy   one per parameter, in order (as `accy run`)\n"
    "  --random-inputs S  seeded inputs instead: floats ~ N(0, 0.05), integers and i1 in {0, 1}\n"
    "                     (ids and masks stay valid). Models with batch norm need the inputs of\n"
    "                     shared/models/make_inputs.py. One of --input and --random-inputs.\n"
    "  --threads N        intra-op threads, also the compile threads (0 = all cores, the default)\n"
    "  --runs R           timed runs after the warm-up (default 10, 1-100000)\n"
    "  --max-while-iterations N\n"
    "                     stop a while loop after N body iterations with an error (exit 1);\n"
    "                     0, the default, lets loops run until their condition is false\n"
    "  --profile          per-kind and per-item times of the timed runs, the warm-up\n"
    "                     (one-time work) excluded (EngineOptions::enable_profiling)\n"
    "  --disable-passes P,Q\n"
    "                     graph passes not to run (EngineOptions::disabled_passes; an unknown\n"
    "                     name is an error listing the passes)\n"
    "  --constant-parameters all|I,J,A-B\n"
    "                     parameters whose values stay the same across runs (model weights;\n"
    "                     CompileOptions::constant_parameters): oneDNN weights are packed once\n"
    "  --fixed-threads    every run uses N threads, even while other processes keep the cores\n"
    "                     busy (EngineOptions::reduce_threads_under_load = false); without it a\n"
    "                     contended run uses one thread, and the report counts those runs\n"
    "  --format F         text (default) or json\n"
    "  A cold compile needs --no-cache (or an empty --cache-dir).\n";
std::string Usage() {
  return std::string(kUsageHead) + kLimitOptionsUsage + kCacheOptionsUsage;
}

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double PeakRssMegabytes() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// SplitMix64 (Steele, Lea, Flood 2014): a fast, well-mixed 64-bit sequence from a seed.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// Seeded values for a tensor of `type`: floats ~ N(0, 0.05) (rounded to the element type),
// integers and i1 uniform in {0, 1}. A model has ~10^8 parameters: the normal values are drawn
// from a table of 65,536 N(0, 0.05) samples (std::normal_distribution over mt19937_64, made once
// per seed) indexed by SplitMix64, ~20x faster than sampling each element.
class RandomInputs {
 public:
  explicit RandomInputs(uint64_t seed) : bits_(seed) {
    std::mt19937_64 engine(seed);
    std::normal_distribution<double> normal(0.0, 0.05);
    table_.resize(1 << 16);
    for (double& value : table_) value = normal(engine);
  }

  StatusOr<Tensor> Make(const TensorType& type) {
    ACCY_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(type));
    const ElementType element = type.element_type();
    const int64_t width = ElementByteWidth(element);
    auto* bytes = static_cast<uint8_t*>(tensor.data());
    for (int64_t i = 0; i < type.element_count(); ++i) {
      uint8_t* at = bytes + i * width;
      const uint64_t random = bits_.Next();
      if (!IsFloat(element)) {
        at[0] = static_cast<uint8_t>(random >> 63);  // little-endian: the low byte holds 0 or 1
        continue;
      }
      const double value = table_[random >> 48];
      if (element == ElementType::kF64) {
        std::memcpy(at, &value, sizeof(value));
      } else if (element == ElementType::kF32) {
        const float f = static_cast<float>(value);
        std::memcpy(at, &f, sizeof(f));
      } else {
        const uint16_t half = element == ElementType::kBF16
                                  ? FloatToBFloat16Bits(static_cast<float>(value))
                                  : FloatToHalfBits(static_cast<float>(value));
        std::memcpy(at, &half, sizeof(half));
      }
    }
    return tensor;
  }

 private:
  SplitMix64 bits_;
  std::vector<double> table_;
};

// The inputs of `function`: seeded when `seed` is set (--random-inputs), else read from the
// --input files.
StatusOr<std::vector<Tensor>> MakeInputs(const Function& function, const ParsedArgs& parsed,
                                         std::optional<int> seed) {
  const std::vector<TensorType>& types = function.parameter_types();
  std::vector<Tensor> inputs;
  if (seed.has_value()) {
    RandomInputs random(static_cast<uint64_t>(*seed));
    for (const TensorType& type : types) {
      ACCY_ASSIGN_OR_RETURN(Tensor input, random.Make(type));
      inputs.push_back(std::move(input));
    }
    return inputs;
  }
  const std::vector<std::string> paths =
      parsed.Has("input") ? parsed.values.at("input") : std::vector<std::string>{};
  if (paths.size() != types.size()) {
    return absl::InvalidArgumentError(
        StrCat("@", function.name(), " takes ", types.size(),
               types.size() == 1 ? " parameter, " : " parameters, ", paths.size(),
               " --input given (or use --random-inputs SEED)"));
  }
  return ReadNpyInputs(paths, types);
}

struct KindTotal {
  std::string kind;
  std::string runs_on;
  int64_t items = 0;
  double milliseconds_per_run = 0;
};

struct Report {
  std::string file;
  std::string function;
  int threads = 0;
  int runs = 0;
  std::string isa;
  double compile_milliseconds = 0;
  ExecutableStats stats;
  int64_t items = 0;
  int64_t constant_parameters = 0;  // --constant-parameters
  bool fixed_threads = false;       // --fixed-threads
  double median = 0, min = 0, max = 0;
  double peak_rss_megabytes = 0;
  std::vector<KindTotal> kinds;       // --profile: by total time, largest first
  std::vector<ItemProfile> top_items; // --profile: the slowest items, per run
};

std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
      continue;
    }
    out.push_back(c);
  }
  return out + "\"";
}

void PrintText(const Report& r) {
  const ExecutableStats& s = r.stats;
  std::printf("accy bench %s @%s: %s, %d thread%s\n", r.file.c_str(), r.function.c_str(),
              r.isa.c_str(), r.threads, r.threads == 1 ? "" : "s");
  std::printf("items: %lld work items; %lld run on JIT kernels, %lld distinct kernels "
              "(%lld compiled, %lld from cache)\n",
              static_cast<long long>(r.items), static_cast<long long>(s.jit_items),
              static_cast<long long>(s.distinct_kernels),
              static_cast<long long>(s.kernels_compiled),
              static_cast<long long>(s.kernels_from_cache));
  std::printf("compile: %.1f ms (plan %.1f, library %.1f, jit %.1f, assignment %.1f)\n",
              r.compile_milliseconds, s.plan_milliseconds, s.library_milliseconds,
              s.compile_milliseconds, s.assignment_milliseconds);
  std::printf("run: median %.4g ms, min %.4g, max %.4g over %d runs (after 1 warm-up)%s\n",
              r.median, r.min, r.max, r.runs,
              r.constant_parameters > 0
                  ? StrCat(", ", r.constant_parameters, " parameters declared constant").c_str()
                  : "");
  if (s.runs_with_fewer_threads > 0) {
    // Counted over the warm-up and the timed runs (ExecutableStats::runs_with_fewer_threads).
    std::printf("load: %lld of %d runs used one thread: the calling thread waited for a CPU "
                "(docs/load.md; --fixed-threads keeps %d)\n",
                static_cast<long long>(s.runs_with_fewer_threads), r.runs + 1, r.threads);
  }
  std::printf("memory: %.1f MB beyond inputs and outputs (arena %.1f, constants %.1f, scratch "
              "%.1f); library items own %.1f MB of weight copies and %.1f MB of scratch; peak "
              "RSS %.1f MB\n",
              s.peak_memory_bytes / 1e6, s.arena_bytes / 1e6, s.constant_bytes / 1e6,
              s.scratch_bytes / 1e6, s.library_weight_bytes / 1e6,
              s.library_scratch_bytes / 1e6, r.peak_rss_megabytes);
  if (r.kinds.empty()) return;
  std::printf("profile per kind (ms per run):\n");
  for (const KindTotal& k : r.kinds) {
    std::printf("  %-20s %-8s %6lld items %10.4g ms\n", k.kind.c_str(), k.runs_on.c_str(),
                static_cast<long long>(k.items), k.milliseconds_per_run);
  }
  std::printf("slowest items (ms per run):\n");
  for (const ItemProfile& item : r.top_items) {
    std::printf("  #%-5lld %-20s %-16s %-8s %10.4g ms\n", static_cast<long long>(item.item_index),
                item.kind.c_str(), item.root.c_str(), item.runs_on.c_str(),
                item.total_milliseconds);
  }
}

void PrintJson(const Report& r) {
  const ExecutableStats& s = r.stats;
  std::string out = StrCat(
      "{\"file\": ", JsonString(r.file), ", \"function\": ", JsonString(r.function),
      ", \"isa\": ", JsonString(r.isa), ", \"threads\": ", r.threads, ", \"runs\": ", r.runs,
      ", \"constant_parameters\": ", r.constant_parameters, ", \"work_items\": ", r.items,
      ", \"jit_items\": ", s.jit_items,
      ", \"distinct_kernels\": ", s.distinct_kernels, ", \"kernels_compiled\": ",
      s.kernels_compiled, ", \"kernels_from_cache\": ", s.kernels_from_cache,
      ", \"compile_ms\": {\"total\": ", r.compile_milliseconds, ", \"plan\": ",
      s.plan_milliseconds, ", \"library\": ", s.library_milliseconds, ", \"jit\": ",
      s.compile_milliseconds, ", \"assignment\": ", s.assignment_milliseconds,
      "}, \"run_ms\": {\"median\": ", r.median, ", \"min\": ", r.min, ", \"max\": ", r.max,
      "}, \"runs_with_fewer_threads\": ", s.runs_with_fewer_threads, ", \"fixed_threads\": ",
      r.fixed_threads ? "true" : "false", ", \"peak_memory_bytes\": ", s.peak_memory_bytes,
      ", \"arena_bytes\": ", s.arena_bytes,
      ", \"constant_bytes\": ", s.constant_bytes, ", \"scratch_bytes\": ", s.scratch_bytes,
      ", \"library_weight_bytes\": ", s.library_weight_bytes, ", \"library_scratch_bytes\": ",
      s.library_scratch_bytes, ", \"peak_rss_mb\": ", r.peak_rss_megabytes);
  if (!r.kinds.empty()) {
    out += ", \"profile\": {\"kinds\": [";
    for (size_t i = 0; i < r.kinds.size(); ++i) {
      const KindTotal& k = r.kinds[i];
      out += StrCat(i == 0 ? "" : ", ", "{\"kind\": ", JsonString(k.kind), ", \"runs_on\": ",
                    JsonString(k.runs_on), ", \"items\": ", k.items, ", \"ms_per_run\": ",
                    k.milliseconds_per_run, "}");
    }
    out += "], \"slowest_items\": [";
    for (size_t i = 0; i < r.top_items.size(); ++i) {
      const ItemProfile& item = r.top_items[i];
      out += StrCat(i == 0 ? "" : ", ", "{\"item\": ", item.item_index, ", \"kind\": ",
                    JsonString(item.kind), ", \"root\": ", JsonString(item.root),
                    ", \"runs_on\": ", JsonString(item.runs_on), ", \"ms_per_run\": ",
                    item.total_milliseconds, "}");
    }
    out += "]}";
  }
  std::printf("%s}\n", out.c_str());
}

// How many of the slowest items --profile lists.
constexpr size_t kTopItems = 15;

}  // namespace

int BenchCommand(std::span<const std::string> args) {
  const std::vector<OptionSpec> specs =
      WithCacheOptions(WithLimitOptions({{"function", true, false},
                                         {"input", true, true},
                                         {"random-inputs", true, false},
                                         {"threads", true, false},
                                         {"runs", true, false},
                                         {"max-while-iterations", true, false},
                                         {"profile", false, false},
                                         {"disable-passes", true, false},
                                         {"constant-parameters", true, false},
                                         {"fixed-threads", false, false},
                                         {"format", true, false}}));
  const std::string usage_text = Usage();
  const char* usage = usage_text.c_str();
  StatusOr<ParsedArgs> parsed = ParseArgs(args, specs);
  if (!parsed.ok()) return ReportUsage(kCommand, std::string(parsed.status().message()), usage);
  if (parsed->help) {
    std::printf("%s", usage);
    return kExitOk;
  }
  if (parsed->positional.size() != 1) return ReportUsage(kCommand, "expected one FILE.mlir", usage);
  if (parsed->Has("input") && parsed->Has("random-inputs")) {
    return ReportUsage(kCommand, "--input contradicts --random-inputs", usage);
  }
  std::optional<int> seed;
  if (parsed->Has("random-inputs")) {
    StatusOr<int> value =
        ParseIntOption("random-inputs", parsed->Get("random-inputs"), 0, 2147483647);
    if (!value.ok()) return ReportUsage(kCommand, std::string(value.status().message()), usage);
    seed = *value;
  }
  const std::string format = parsed->Get("format", "text");
  if (format != "text" && format != "json") {
    return ReportUsage(kCommand, "--format takes text or json, got '" + format + "'", usage);
  }
  Report report;
  report.file = parsed->positional[0];
  report.runs = 10;
  if (parsed->Has("runs")) {
    StatusOr<int> runs = ParseIntOption("runs", parsed->Get("runs"), 1, 100000);
    if (!runs.ok()) return ReportUsage(kCommand, std::string(runs.status().message()), usage);
    report.runs = *runs;
  }
  EngineOptions options;
  if (parsed->Has("threads")) {
    StatusOr<int> threads = ParseIntOption("threads", parsed->Get("threads"), 0, 4096);
    if (!threads.ok()) return ReportUsage(kCommand, std::string(threads.status().message()), usage);
    options.num_threads = *threads;
  }
  if (parsed->Has("max-while-iterations")) {
    StatusOr<int> bound = ParseIntOption("max-while-iterations",
                                         parsed->Get("max-while-iterations"), 0, 2147483647);
    if (!bound.ok()) return ReportUsage(kCommand, std::string(bound.status().message()), usage);
    options.max_while_iterations = *bound;
  }
  options.enable_profiling = parsed->Has("profile");
  report.fixed_threads = parsed->Has("fixed-threads");
  options.reduce_threads_under_load = !report.fixed_threads;
  if (parsed->Has("disable-passes")) {
    options.disabled_passes = absl::StrSplit(parsed->Get("disable-passes"), ',', absl::SkipEmpty());
  }
  StatusOr<std::string> cache_dir = ResolveCacheDir(*parsed, kCommand);
  if (!cache_dir.ok()) return ReportUsage(kCommand, std::string(cache_dir.status().message()), usage);
  options.cache_dir = *cache_dir;

  ParseOptions parse_options;
  if (Status limits = ApplyLimitOptions(*parsed, &options, &parse_options); !limits.ok()) {
    return ReportUsage(kCommand, std::string(limits.message()), usage);
  }
  StatusOr<std::unique_ptr<Module>> module = LoadModule(report.file, parse_options);
  if (!module.ok()) return ReportError(kCommand, module.status());
  StatusOr<std::string> function_name = ChooseFunction(**module, parsed->Get("function"));
  if (!function_name.ok()) return ReportError(kCommand, function_name.status());
  report.function = *function_name;
  StatusOr<std::vector<Tensor>> inputs =
      MakeInputs(*(*module)->FindFunction(*function_name), *parsed, seed);
  if (!inputs.ok()) return ReportError(kCommand, inputs.status());

  StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(options);
  if (!engine.ok()) return ReportError(kCommand, engine.status());
  report.threads = (*engine)->options().num_threads;
  report.isa = std::string(IsaName(*(*engine)->options().max_isa));
  const Clock::time_point compile_start = Clock::now();
  CompileOptions compile_options;
  compile_options.entry = *function_name;
  if (parsed->Has("constant-parameters")) {
    const int64_t count = static_cast<int64_t>(
        (*module)->FindFunction(*function_name)->parameter_types().size());
    StatusOr<std::vector<int64_t>> indices =
        ParseIndexListOption("constant-parameters", parsed->Get("constant-parameters"), count);
    if (!indices.ok()) return ReportUsage(kCommand, std::string(indices.status().message()), usage);
    compile_options.constant_parameters = *std::move(indices);
  }
  report.constant_parameters = static_cast<int64_t>(compile_options.constant_parameters.size());
  StatusOr<std::unique_ptr<Executable>> executable = (*engine)->Compile(**module, compile_options);
  if (!executable.ok()) return ReportError(kCommand, executable.status());
  report.compile_milliseconds = MillisecondsSince(compile_start);

  StatusOr<std::vector<Tensor>> outputs = (*executable)->Run(*inputs);  // warm-up
  if (!outputs.ok()) return ReportError(kCommand, outputs.status());
  // The warm-up's item times (one-time work such as packing declared-constant weights) are
  // subtracted from the profile; Stats() lists the items in the same order every time.
  const std::vector<ItemProfile> warm_up =
      options.enable_profiling ? (*executable)->Stats().item_profiles : std::vector<ItemProfile>{};
  std::vector<double> times;
  for (int r = 0; r < report.runs; ++r) {
    const Clock::time_point start = Clock::now();
    if (Status status = (*executable)->Run(*inputs, *outputs); !status.ok()) {
      return ReportError(kCommand, status);
    }
    times.push_back(MillisecondsSince(start));
  }
  std::sort(times.begin(), times.end());
  report.median = times.size() % 2 == 1
                      ? times[times.size() / 2]
                      : (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
  report.min = times.front();
  report.max = times.back();
  report.stats = (*executable)->Stats();
  for (const auto& [kind, count] : report.stats.work_items_by_kind) report.items += count;
  report.peak_rss_megabytes = PeakRssMegabytes();

  if (options.enable_profiling) {
    // Totals cover the warm-up too: its times are subtracted, per run is the rest / runs.
    const double per_run = 1.0 / report.runs;
    std::map<std::pair<std::string, std::string>, KindTotal> by_kind;
    std::vector<ItemProfile> items = report.stats.item_profiles;
    for (size_t i = 0; i < items.size(); ++i) {
      ItemProfile& item = items[i];
      if (i < warm_up.size() && warm_up[i].item_index == item.item_index &&
          warm_up[i].kind == item.kind) {
        item.total_milliseconds -= warm_up[i].total_milliseconds;
      }
      item.total_milliseconds = std::max(0.0, item.total_milliseconds) * per_run;
      KindTotal& total = by_kind[{item.kind, item.runs_on}];
      total.kind = item.kind;
      total.runs_on = item.runs_on;
      ++total.items;
      total.milliseconds_per_run += item.total_milliseconds;
    }
    for (auto& [key, total] : by_kind) report.kinds.push_back(total);
    std::sort(report.kinds.begin(), report.kinds.end(), [](const KindTotal& a, const KindTotal& b) {
      return a.milliseconds_per_run > b.milliseconds_per_run;
    });
    std::sort(items.begin(), items.end(), [](const ItemProfile& a, const ItemProfile& b) {
      return a.total_milliseconds > b.total_milliseconds;
    });
    if (items.size() > kTopItems) items.resize(kTopItems);
    report.top_items = std::move(items);
  }
  if (format == "json") {
    PrintJson(report);
  } else {
    PrintText(report);
  }
  return kExitOk;
}

}  // namespace accy::tools
