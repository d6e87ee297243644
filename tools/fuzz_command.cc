// `accy fuzz`: the differential program fuzzer (src/testing/fuzz_batch.h, docs/fuzzing.md).
// Generates programs from a seed, runs each through the engine at every thread count of
// --threads-list and through the reference evaluator, reduces every failure and writes it as
// StableHLO text plus .npy inputs that `accy run` replays.
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "src/reference/reference_evaluator.h"
#include "src/testing/fuzz_batch.h"
#include "src/util/str_cat.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/npy.h"

namespace accy::tools {
namespace {

constexpr char kUsage[] =
    "usage: accy fuzz [--seed S] [--programs N] [--first I] [--threads-list 1,2] [--out DIR]\n"
    "                 [--max-steps K] [--max-elements E] [--no-reduce] [--verbose]\n"
    "  Generates N random valid programs (program i from seed S and i), runs each through the\n"
    "  engine at every thread count of --threads-list (default 1,2) and through the reference\n"
    "  evaluator, and compares the outputs (docs/fuzzing.md). Prints the verdicts, the ops and\n"
    "  element types generated and every failure, reduced; exits 1 when any program fails.\n"
    "  --seed S          run seed, an unsigned 64-bit integer (default 1)\n"
    "  --programs N      programs to run (default 100)\n"
    "  --first I         index of the first program (default 0): --first I --programs 1\n"
    "                    replays program I of a run\n"
    "  --out DIR         write each failure to DIR/fuzz_<index>/: program.mlir (reduced),\n"
    "                    original.mlir, in<k>.npy, expected<k>.npy (reference), replay.txt\n"
    "  --max-steps K     steps per program, at most (default 8)\n"
    "  --max-elements E  elements per tensor, at most (default 4096)\n"
    "  --no-reduce       report failures as generated\n"
    "  --verbose         one line per program\n";

// What a crash handler prints: the program being run (formatted before each program, so the
// handler only writes it).
char g_crash_message[256] = "accy fuzz: crashed before the first program\n";

void OnCrash(int signal_number) {
  const ssize_t written = ::write(STDERR_FILENO, g_crash_message, std::strlen(g_crash_message));
  (void)written;
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

StatusOr<uint64_t> ParseSeed(const std::string& text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || ptr != end) {
    return absl::InvalidArgumentError(
        StrCat("--seed takes an unsigned 64-bit integer, got '", text, "'"));
  }
  return value;
}

StatusOr<std::vector<int>> ParseThreadsList(const std::string& text) {
  std::vector<int> threads;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos
                                                                          : comma - start);
    StatusOr<int> t = ParseIntOption("threads-list", item, 1, 256);
    if (!t.ok()) {
      return absl::InvalidArgumentError(
          StrCat("--threads-list takes comma-separated thread counts in [1, 256], got '", text,
                 "'"));
    }
    threads.push_back(*t);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return threads;
}

Status WriteText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) return absl::PermissionDeniedError(StrCat(path.string(), ": cannot write"));
  return absl::OkStatus();
}

// DIR/fuzz_<index>/: the reduced program, its inputs and reference outputs, the original.
Status WriteFailure(const std::filesystem::path& dir, const fuzz::Failure& failure) {
  const std::filesystem::path folder = dir / StrCat("fuzz_", failure.index);
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) {
    return absl::PermissionDeniedError(StrCat(folder.string(), ": cannot create: ", error.message()));
  }
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> reduced, fuzz::BuildModule(failure.reduced));
  ACCY_RETURN_IF_ERROR(WriteText(folder / "program.mlir", PrintModule(*reduced)));
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> original, fuzz::BuildModule(failure.original));
  ACCY_RETURN_IF_ERROR(WriteText(folder / "original.mlir", PrintModule(*original)));
  std::string replay = StrCat("accy run ", (folder / "program.mlir").string());
  for (size_t i = 0; i < failure.reduced.inputs.size(); ++i) {
    const std::filesystem::path path = folder / StrCat("in", i, ".npy");
    ACCY_RETURN_IF_ERROR(WriteNpyFile(path.string(), failure.reduced.inputs[i]));
    replay += StrCat(" --input ", path.string());
  }
  if (StatusOr<std::vector<Tensor>> expected = fuzz::Runner::Reference(failure.reduced);
      expected.ok()) {
    for (size_t i = 0; i < expected->size(); ++i) {
      ACCY_RETURN_IF_ERROR(
          WriteNpyFile((folder / StrCat("expected", i, ".npy")).string(), (*expected)[i]));
    }
  }
  return WriteText(folder / "replay.txt",
                   StrCat(replay, "\n", fuzz::VerdictName(failure.reduced_outcome.verdict), ": ",
                          failure.reduced_outcome.message, "\noriginal: ",
                          fuzz::VerdictName(failure.outcome.verdict), ": ",
                          failure.outcome.message, "\n"));
}

}  // namespace

int FuzzCommand(std::span<const std::string> args) {
  const std::vector<OptionSpec> specs = {
      {"seed", true, false},      {"programs", true, false},     {"first", true, false},
      {"threads-list", true, false}, {"out", true, false},       {"max-steps", true, false},
      {"max-elements", true, false}, {"no-reduce", false, false}, {"verbose", false, false}};
  StatusOr<ParsedArgs> parsed = ParseArgs(args, specs);
  if (!parsed.ok()) return ReportUsage("fuzz", std::string(parsed.status().message()), kUsage);
  if (parsed->help) {
    std::printf("%s", kUsage);
    return kExitOk;
  }
  if (!parsed->positional.empty()) {
    return ReportUsage("fuzz", StrCat("unexpected argument '", parsed->positional[0], "'"), kUsage);
  }
  fuzz::BatchOptions options;
  if (parsed->Has("seed")) {
    StatusOr<uint64_t> seed = ParseSeed(parsed->Get("seed"));
    if (!seed.ok()) return ReportUsage("fuzz", std::string(seed.status().message()), kUsage);
    options.seed = *seed;
  }
  struct IntOption {
    const char* name;
    int min, max;
    int64_t* target;
  };
  int64_t max_steps = options.generator.max_steps;
  const IntOption ints[] = {{"programs", 1, 100000000, &options.programs},
                            {"first", 0, 2000000000, &options.first},
                            {"max-steps", 1, 64, &max_steps},
                            {"max-elements", 1, 1 << 20, &options.generator.max_elements}};
  for (const IntOption& o : ints) {
    if (!parsed->Has(o.name)) continue;
    StatusOr<int> value = ParseIntOption(o.name, parsed->Get(o.name), o.min, o.max);
    if (!value.ok()) return ReportUsage("fuzz", std::string(value.status().message()), kUsage);
    *o.target = *value;
  }
  options.generator.max_steps = static_cast<int>(max_steps);
  if (parsed->Has("threads-list")) {
    StatusOr<std::vector<int>> threads = ParseThreadsList(parsed->Get("threads-list"));
    if (!threads.ok()) return ReportUsage("fuzz", std::string(threads.status().message()), kUsage);
    options.runner.threads = *threads;
  }
  options.reduce = !parsed->Has("no-reduce");
  const bool verbose = parsed->Has("verbose");
  const std::string out_dir = parsed->Get("out");
  if (!out_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(out_dir, error);
    if (error || !std::filesystem::is_directory(out_dir)) {
      return ReportError("fuzz", absl::InvalidArgumentError(
                                     StrCat("--out ", out_dir, ": cannot create the folder")));
    }
  }

  for (int s : {SIGSEGV, SIGABRT, SIGFPE, SIGILL, SIGBUS}) ::signal(s, OnCrash);
  auto before_each = [&](int64_t index, uint64_t seed) {
    std::snprintf(g_crash_message, sizeof(g_crash_message),
                  "accy fuzz: crashed in program %lld (program seed %llu); replay with "
                  "accy fuzz --seed %llu --first %lld --programs 1\n",
                  static_cast<long long>(index), static_cast<unsigned long long>(seed),
                  static_cast<unsigned long long>(options.seed), static_cast<long long>(index));
    if (verbose) std::printf("program %lld (seed %llu)\n", static_cast<long long>(index),
                             static_cast<unsigned long long>(seed));
    std::fflush(stdout);
  };
  Status write_status = absl::OkStatus();
  auto on_failure = [&](const fuzz::Failure& failure) {
    std::printf("FAIL program %lld: %s: %s\n", static_cast<long long>(failure.index),
                std::string(fuzz::VerdictName(failure.outcome.verdict)).c_str(),
                failure.outcome.message.c_str());
    std::fflush(stdout);
    if (out_dir.empty()) return;
    if (Status written = WriteFailure(out_dir, failure); !written.ok()) {
      // An invalid program cannot be printed; the others are still written.
      std::printf("  not written: %s\n", std::string(written.message()).c_str());
      if (write_status.ok() && failure.outcome.verdict != fuzz::Verdict::kInvalidProgram) {
        write_status = written;
      }
    }
  };
  StatusOr<fuzz::BatchSummary> summary = fuzz::RunBatch(options, before_each, on_failure);
  for (int s : {SIGSEGV, SIGABRT, SIGFPE, SIGILL, SIGBUS}) ::signal(s, SIG_DFL);
  if (!summary.ok()) return ReportError("fuzz", summary.status());
  std::printf("%s", fuzz::FormatSummary(*summary).c_str());
  if (!write_status.ok()) return ReportError("fuzz", write_status);
  return summary->failures.empty() ? kExitOk : kExitError;
}

}  // namespace accy::tools
