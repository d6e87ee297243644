// `accy conformance`: runs StableHLO test programs through the engine and evaluates their check
// ops (the runner is src/stablehlo/conformance.h); one line per program and a summary.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "src/stablehlo/conformance.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/conformance_processes.h"
#include "tools/object_cache.h"

namespace accy::tools {
namespace {

constexpr char kUsageHead[] =
    "usage: accy conformance DIR_OR_FILE... [--jobs N] [--cache-dir DIR | --no-cache]\n"
    "  Runs every .mlir program (folders are searched recursively; `// -----` splits a file into\n"
    "  programs) through the JIT with no inputs and evaluates its check ops: expect_eq (IEEE ==),\n"
    "  expect_close (3 ULP of the element type), expect_almost_eq (|difference| <= 0.001), and\n"
    "  their _const forms. Prints PASS, FAIL (first bad element) or SKIP (the unsupported feature named)\n"
    "  per program, then `N passed, M failed, K skipped`. Exit code 1 when anything failed.\n"
    "  --jobs N         programs compiled and run at once (default 1; 0 = all cores)\n"
    "  --collectives in-process|gloo\n"
    "                   how the processes of an interpreter.run_parallel run: threads with\n"
    "                   in-process communicators (the default), or separate `accy run` processes\n"
    "                   joined by Gloo over TCP loopback\n";
std::string Usage() { return std::string(kUsageHead) + kCacheOptionsUsage; }

}  // namespace

int ConformanceCommand(std::span<const std::string> args) {
  const std::vector<OptionSpec> specs = WithCacheOptions({{"jobs", true, false}, {"collectives", true, false}});
  const std::string usage_text = Usage();
  const char* usage = usage_text.c_str();
  StatusOr<ParsedArgs> parsed = ParseArgs(args, specs);
  if (!parsed.ok()) {
    return ReportUsage("conformance", std::string(parsed.status().message()), usage);
  }
  if (parsed->help) {
    std::printf("%s", usage);
    return kExitOk;
  }
  if (parsed->positional.empty()) {
    return ReportUsage("conformance", "expected at least one folder or .mlir file", usage);
  }
  ConformanceOptions options;
  if (parsed->Has("jobs")) {
    StatusOr<int> jobs = ParseIntOption("jobs", parsed->Get("jobs"), 0, 1024);
    if (!jobs.ok()) {
      return ReportUsage("conformance", std::string(jobs.status().message()), usage);
    }
    options.jobs = *jobs;
  }
  const std::string collectives = parsed->Get("collectives", "in-process");
  if (collectives == "gloo") {
    options.process_runner = RunAsGlooProcesses;
  } else if (collectives != "in-process") {
    return ReportUsage("conformance",
                       "--collectives must be in-process or gloo, got '" + collectives + "'", usage);
  }
  StatusOr<std::string> cache_dir = ResolveCacheDir(*parsed, "conformance");
  if (!cache_dir.ok()) {
    return ReportUsage("conformance", std::string(cache_dir.status().message()), usage);
  }
  options.engine_options.cache_dir = *cache_dir;

  StatusOr<ConformanceReport> report =
      RunConformance(parsed->positional, options, [](const ConformanceResult& result) {
        std::string line = std::string(ConformanceOutcomeName(result.outcome)) + " " + result.name;
        if (!result.detail.empty()) line += ": " + result.detail;
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
      });
  if (!report.ok()) return ReportError("conformance", report.status());

  std::printf("%s\n", report->Summary().c_str());
  // Unsupported programs grouped by reason, so missing features read as a list.
  std::map<std::string, std::vector<std::string>> unsupported;
  for (const ConformanceResult& result : report->results) {
    if (result.outcome == ConformanceOutcome::kUnsupported) {
      unsupported[result.detail].push_back(result.name);
    }
  }
  if (!unsupported.empty()) std::printf("skipped (unsupported features):\n");
  for (const auto& [reason, names] : unsupported) {
    std::printf("  %zu x %s\n", names.size(), reason.c_str());
  }
  return report->failed == 0 ? kExitOk : kExitError;
}

}  // namespace accy::tools
