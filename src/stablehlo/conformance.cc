// The conformance runner (conformance.h): splitting files into programs, compiling and running
// each through the engine, and reporting verdicts in input order from a pool of workers.
#include "src/stablehlo/conformance.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "src/util/str_cat.h"
#include "src/util/text_file.h"

namespace accy {
namespace {

namespace fs = std::filesystem;

ConformanceResult Verdict(std::string_view name, ConformanceOutcome outcome, std::string detail,
                          int checks = 0) {
  return ConformanceResult{std::string(name), outcome, std::move(detail), checks};
}

// An error that stopped a program: kUnimplemented means accy lacks a feature, anything else is
// a failure (a wrong program, or a bug).
ConformanceResult FromError(std::string_view name, std::string_view stage, const Status& status) {
  if (status.code() == absl::StatusCode::kUnimplemented) {
    return Verdict(name, ConformanceOutcome::kUnsupported, std::string(status.message()));
  }
  // Parse errors already start with line:column; later stages name their status code too.
  return Verdict(name, ConformanceOutcome::kFail,
                 stage == "parse" ? StrCat("parse error at ", status.message())
                                  : StrCat(stage, ": ", status.ToString()));
}

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot read ", path));
  // The programs are parsed under the default ParseOptions.
  StatusOr<std::string> text =
      ReadStableHloText(in, MaxStableHloTextBytes(kMaxParsedTotalConstantBytes));
  if (!text.ok()) {
    return Status(text.status().code(),
                  StrCat("error reading ", path, ": ", text.status().message()));
  }
  return text;
}

}  // namespace

std::string_view ConformanceOutcomeName(ConformanceOutcome outcome) {
  switch (outcome) {
    case ConformanceOutcome::kPass:
      return "PASS";
    case ConformanceOutcome::kFail:
      return "FAIL";
    case ConformanceOutcome::kUnsupported:
      return "SKIP";
  }
  return "?";
}

std::string ConformanceReport::Summary() const {
  return StrCat(passed, " passed, ", failed, " failed, ", unsupported, " skipped");
}

namespace {

ConformanceResult RunProgramChecks(const Engine& engine, std::string_view name,
                                   std::string_view text, const ParallelProcessRunner& runner);

// The reason of a `// RUN-DISABLED(<reason>) ... --interpret` line: the suite's own interpreter
// run of the program is disabled upstream, so its expected values are unverified there.
std::optional<std::string> InterpreterRunDisabled(std::string_view text) {
  constexpr std::string_view kMarker = "// RUN-DISABLED(";
  const size_t at = text.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  const size_t close = text.find(')', at);
  const size_t line_end = text.find('\n', at);
  if (close == std::string_view::npos || close > line_end) return std::nullopt;
  return std::string(text.substr(at + 3, close + 1 - at - 3));
}

}  // namespace

ConformanceResult RunConformanceProgram(const Engine& engine, std::string_view name,
                                        std::string_view text,
                                        const ParallelProcessRunner& runner) {
  ConformanceResult result = RunProgramChecks(engine, name, text, runner);
  if (result.outcome != ConformanceOutcome::kFail) return result;
  // A program the suite itself does not run through its interpreter (RUN-DISABLED) is not
  // held against accy: its expected values may hold one valid answer of several (sort_float32_5
  // expects an unstable sort's order of NaNs its comparator calls equal).
  if (std::optional<std::string> reason = InterpreterRunDisabled(text)) {
    result.outcome = ConformanceOutcome::kUnsupported;
    result.detail = StrCat("the suite's interpreter run of this program is disabled upstream (",
                           *reason, "); accy: ", result.detail);
  }
  return result;
}

namespace {

// How long a process of an interpreter.run_parallel waits at a collective for the others.
constexpr std::chrono::milliseconds kParallelRunTimeout{20000};

ConformanceResult RunProgramChecks(const Engine& engine, std::string_view name,
                                   std::string_view text, const ParallelProcessRunner& runner) {
  StatusOr<StableHloProgram> program = ParseStableHloProgram(text);
  if (!program.ok()) return FromError(name, "parse", program.status());
  if (program->checks.empty() && program->module->functions().empty()) {
    return Verdict(name, ConformanceOutcome::kUnsupported,
                   "an empty module: no function to compile or check");
  }
  if (program->checks.empty()) {
    // A program checked by FileCheck over what the reference interpreter prints (its --args
    // input and printed-output tests) has nothing accy can check.
    if (text.find("// CHECK") != std::string_view::npos) {
      return Verdict(name, ConformanceOutcome::kUnsupported,
                     "checked by FileCheck against the StableHLO reference interpreter's printed "
                     "output (its own I/O), not by check ops");
    }
    // A program of functions that take and return nothing is tested by running it (the
    // interpreter suite's tuple case: its RUN line passes when the program interprets).
    bool run_only = true;
    for (const auto& function : program->module->functions()) {
      run_only = run_only && function->parameter_types().empty() &&
                 function->result_types().empty();
    }
    if (!run_only) return Verdict(name, ConformanceOutcome::kFail, "the program has no check ops");
    for (const auto& function : program->module->functions()) {
      StatusOr<std::vector<Tensor>> results = RunCheckedFunction(
          engine, *program->module, function->name(), nullptr, kParallelRunTimeout, runner);
      if (!results.ok()) return FromError(name, "run", results.status());
    }
    return Verdict(name, ConformanceOutcome::kPass, std::string(kRanWithoutChecks), 0);
  }
  // Functions with checks, in the order of their first check.
  std::vector<std::string> functions;
  for (const Check& check : program->checks) {
    if (std::find(functions.begin(), functions.end(), check.function) == functions.end()) {
      functions.push_back(check.function);
    }
  }
  int evaluated = 0;
  for (const std::string& function_name : functions) {
    const Function* function = program->module->FindFunction(function_name);
    if (function == nullptr) {
      return Verdict(name, ConformanceOutcome::kFail,
                     StrCat("function ", function_name, " of a check is not in the module"));
    }
    const ParallelRun* run = nullptr;
    for (const ParallelRun& candidate : program->parallel_runs) {
      if (candidate.function == function_name) run = &candidate;
    }
    if (run == nullptr && !function->parameter_types().empty()) {
      return Verdict(
          name, ConformanceOutcome::kFail,
          StrCat("function ", function_name, " takes ", function->parameter_types().size(),
                 " parameters; conformance programs take none"));
    }
    StatusOr<std::vector<Tensor>> results = RunCheckedFunction(
        engine, *program->module, function_name, run, kParallelRunTimeout, runner);
    if (!results.ok()) return FromError(name, "run", results.status());
    for (const Check& check : program->checks) {
      if (check.function != function_name) continue;
      ++evaluated;
      if (Status verdict = EvaluateCheck(check, *results); !verdict.ok()) {
        return Verdict(name, ConformanceOutcome::kFail, std::string(verdict.message()), evaluated);
      }
    }
  }
  return Verdict(name, ConformanceOutcome::kPass, "", evaluated);
}

}  // namespace

std::vector<ConformanceProgramText> SplitConformanceFile(std::string_view file_name,
                                                         std::string_view text) {
  // Each chunk starts with as many newlines as lines precede it, so the parser's line numbers
  // are the file's.
  std::vector<ConformanceProgramText> programs;
  std::string current;
  int line = 0;  // lines seen so far
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    const bool last = end == std::string_view::npos;
    if (last) end = text.size();
    std::string_view content = text.substr(begin, end - begin);
    const size_t first = content.find_first_not_of(" \t");
    ++line;
    if (first != std::string_view::npos && content.substr(first).starts_with("// -----")) {
      programs.push_back({"", std::move(current)});
      current.assign(static_cast<size_t>(line), '\n');
    } else {
      current.append(content);
      if (!last) current.push_back('\n');
    }
    if (last) break;
    begin = end + 1;
  }
  programs.push_back({"", std::move(current)});
  for (size_t i = 0; i < programs.size(); ++i) {
    programs[i].name =
        programs.size() == 1 ? std::string(file_name) : StrCat(file_name, "#", i + 1);
  }
  return programs;
}

StatusOr<std::vector<std::string>> CollectConformanceFiles(std::span<const std::string> paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (fs::is_directory(path, error)) {
      std::vector<std::string> found;
      for (fs::recursive_directory_iterator it(path, error), end; !error && it != end;
           it.increment(error)) {
        if (it->is_regular_file(error) && it->path().extension() == ".mlir") {
          found.push_back(it->path().string());
        }
      }
      if (error) return absl::NotFoundError(StrCat("cannot list ", path, ": ", error.message()));
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(path, error)) {
      files.push_back(path);
    } else {
      return absl::NotFoundError(StrCat(path, ": no such file or folder"));
    }
  }
  if (files.empty()) {
    std::string searched;
    for (const std::string& path : paths) searched += StrCat(searched.empty() ? "" : ", ", path);
    return absl::InvalidArgumentError(StrCat("no .mlir files found in ", searched));
  }
  return files;
}

StatusOr<ConformanceReport> RunConformance(
    std::span<const std::string> paths, const ConformanceOptions& options,
    const std::function<void(const ConformanceResult&)>& on_result) {
  if (options.jobs < 0) {
    return absl::InvalidArgumentError(StrCat("jobs must be >= 0, got ", options.jobs));
  }
  ACCY_ASSIGN_OR_RETURN(std::vector<std::string> files, CollectConformanceFiles(paths));
  std::vector<ConformanceProgramText> programs;
  for (const std::string& file : files) {
    ACCY_ASSIGN_OR_RETURN(std::string text, ReadFile(file));
    for (ConformanceProgramText& program : SplitConformanceFile(file, text)) {
      programs.push_back(std::move(program));
    }
  }
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int jobs = std::clamp(options.jobs == 0 ? hardware : options.jobs, 1,
                              std::max<int>(1, static_cast<int>(programs.size())));
  std::vector<std::unique_ptr<Engine>> engines;
  for (int j = 0; j < jobs; ++j) {
    ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Create(options.engine_options));
    engines.push_back(std::move(engine));
  }

  // Workers take programs in order; whoever completes the next unreported result reports it
  // (and any finished ones after it), so the callback sees input order.
  std::vector<ConformanceResult> results(programs.size());
  std::vector<bool> done(programs.size(), false);
  std::atomic<size_t> next_program{0};
  std::mutex report_mutex;
  size_t next_report = 0;
  auto work = [&](const Engine& engine) {
    for (size_t i = next_program++; i < programs.size(); i = next_program++) {
      ConformanceResult result = RunConformanceProgram(engine, programs[i].name, programs[i].text,
                                                       options.process_runner);
      std::lock_guard<std::mutex> lock(report_mutex);
      results[i] = std::move(result);
      done[i] = true;
      for (; next_report < programs.size() && done[next_report]; ++next_report) {
        if (on_result) on_result(results[next_report]);
      }
    }
  };
  std::vector<std::thread> workers;
  for (int j = 1; j < jobs; ++j) workers.emplace_back(work, std::cref(*engines[j]));
  work(*engines[0]);
  for (std::thread& worker : workers) worker.join();

  ConformanceReport report;
  for (ConformanceResult& result : results) {
    switch (result.outcome) {
      case ConformanceOutcome::kPass:
        ++report.passed;
        break;
      case ConformanceOutcome::kFail:
        ++report.failed;
        break;
      case ConformanceOutcome::kUnsupported:
        ++report.unsupported;
        break;
    }
    report.results.push_back(std::move(result));
  }
  return report;
}

}  // namespace accy
