// The StableHLO conformance runner: compiles each test program through the engine (the JIT
// pipeline, never the reference evaluator), runs it with no inputs and evaluates its check ops
// (`check.expect_*`, see include/accy/stablehlo.h) with the semantics of
// ../shared/conformance/stablehlo/README.md and the StableHLO interpreter's check dialect.
//
// Inputs are file paths (or already-read text); results are plain values the caller owns.
// RunConformance runs programs on `jobs` worker threads, each with its own Engine; the result
// callback is called on one thread at a time, in input order. Other functions are thread-safe.
#ifndef ACCY_SRC_STABLEHLO_CONFORMANCE_H_
#define ACCY_SRC_STABLEHLO_CONFORMANCE_H_

#include <chrono>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "accy/status.h"
#include "accy/tensor.h"

namespace accy {

// Tolerances of the check ops (README of the conformance folder).
inline constexpr int64_t kExpectCloseMaxUlps = 3;          // expect_close: ULPs of the type
inline constexpr double kExpectAlmostEqTolerance = 0.001;  // expect_almost_eq: absolute

// ConformanceResult::detail of a passing program that has no check ops (see there).
inline constexpr std::string_view kRanWithoutChecks = "ran; no check ops (its test is that it runs)";

enum class ConformanceOutcome { kPass, kFail, kUnsupported };
// "PASS", "FAIL", "SKIP" (an unsupported feature, named in the detail).
std::string_view ConformanceOutcomeName(ConformanceOutcome outcome);

// The verdict on one program (one `// -----` chunk of a file).
struct ConformanceResult {
  std::string name;  // the file path, plus "#N" (1-based chunk) for split files
  ConformanceOutcome outcome = ConformanceOutcome::kPass;
  // kFail: the first broken check ("expect_eq at 12:5: element 3 [0, 3]: got 1, expected 2") or
  // the error that stopped the program; kUnsupported: the kUnimplemented message; kPass: empty,
  // or kRanWithoutChecks for a program with no check ops whose functions take and return
  // nothing (its test is that it runs, as the reference interpreter's RUN line).
  std::string detail;
  int checks = 0;  // check ops evaluated
};

struct ConformanceReport {
  std::vector<ConformanceResult> results;  // in input order
  int passed = 0;
  int failed = 0;
  int unsupported = 0;
  // "N passed, M failed, K skipped" (skipped = unsupported features).
  std::string Summary() const;
};

// One intra-op thread: programs already run in parallel and the suite's tensors are small.
inline EngineOptions SingleThreadEngineOptions() {
  EngineOptions options;
  options.num_threads = 1;
  return options;
}

// Runs the processes of an interpreter.run_parallel some other way than threads of this process:
// `module` has its grid set to the run's programs; process K (replica K / partitions, partition
// K % partitions) runs function process_functions[K] on process_inputs[K]. Returns each
// process's results, or the first error naming the process.
using ParallelProcessRunner = std::function<StatusOr<std::vector<std::vector<Tensor>>>(
    const Module& module, const std::vector<std::string>& process_functions,
    const std::vector<std::vector<Tensor>>& process_inputs)>;

struct ConformanceOptions {
  // Programs run concurrently (worker threads, one Engine each); 0 = the machine's cores.
  int jobs = 1;
  // Engine options of every worker.
  EngineOptions engine_options = SingleThreadEngineOptions();
  // interpreter.run_parallel's processes; null: threads with in-process communicators.
  ParallelProcessRunner process_runner;
};

// Evaluates one check on the results of its function (actual/expected indices from `check`).
// OK when the check holds; otherwise kFailedPrecondition whose message names the check kind,
// its line:column, the first bad element (linear index and multi-index) and got vs expected,
// or the type mismatch. Rules: expect_eq is IEEE == (NaN never equal, -0 == +0); expect_close
// allows kExpectCloseMaxUlps ULPs of the element type (NaN matches any NaN, infinities exact);
// expect_almost_eq allows |got - expected| <= tolerance (the check's, default
// kExpectAlmostEqTolerance; NaN matches NaN, infinities exact). Integers and i1 compare exactly.
Status EvaluateCheck(const Check& check, std::span<const Tensor> function_results);

// Compiles and runs `function_name` of `module` (which takes no parameters of its own) and
// returns its results. With `run` (the function's interpreter.run_parallel, ParallelRun), runs
// it once for the processes' inputs, sets the module's grid to the run's programs, compiles each
// process's function, runs the processes as threads with in-process communicators (each
// collective waits at most `timeout` for the others), and runs the function again with their
// results. Errors: Compile's and Run's (a process's prefixed with its replica and partition),
// kInvalidArgument for operand / result counts or types that do not match.
// `runner`, when set, runs the processes instead of threads (ConformanceOptions).
StatusOr<std::vector<Tensor>> RunCheckedFunction(const Engine& engine, Module& module,
                                                 const std::string& function_name,
                                                 const ParallelRun* run,
                                                 std::chrono::milliseconds timeout,
                                                 const ParallelProcessRunner& runner = nullptr);
// Parses `text` (one program; the caller has split it), compiles every function with checks
// through `engine`, runs it and evaluates its checks. Parse or compile errors with
// kUnimplemented make the program kUnsupported; any other error, a function that takes
// parameters and a program without checks are kFail.
ConformanceResult RunConformanceProgram(const Engine& engine, std::string_view name,
                                        std::string_view text,
                                        const ParallelProcessRunner& runner = nullptr);

// One program of a file: its name and its text (other chunks blanked to keep line numbers).
struct ConformanceProgramText {
  std::string name;
  std::string text;
};
// Splits `text` at lines starting with `// -----` (MLIR's -split-input-file); each chunk keeps
// the line numbers of the whole file (earlier lines become empty lines).
std::vector<ConformanceProgramText> SplitConformanceFile(std::string_view file_name,
                                                         std::string_view text);

// Expands `paths` (files, or folders searched recursively for *.mlir) into a sorted file list.
// kNotFound for a path that does not exist; kInvalidArgument when nothing is found.
StatusOr<std::vector<std::string>> CollectConformanceFiles(std::span<const std::string> paths);

// Runs every program of every file in `paths` and reports them in order, calling `on_result`
// (if set) as each result becomes final. Errors: CollectConformanceFiles's, kNotFound for an
// unreadable file, Engine::Create's for bad options.
StatusOr<ConformanceReport> RunConformance(
    std::span<const std::string> paths, const ConformanceOptions& options = {},
    const std::function<void(const ConformanceResult&)>& on_result = nullptr);

}  // namespace accy

#endif  // ACCY_SRC_STABLEHLO_CONFORMANCE_H_
