// The differential fuzzer's runner: one FuzzProgram through the engine (JIT pipeline) at each
// thread count and through the reference evaluator, outputs compared (docs/fuzzing.md).
//
// Integers, i1 and exact float values compare bit for bit (any NaN matches any NaN; -0 != +0);
// approximate float values within their FuzzValue::tolerance of max(1, max |reference|) plus
// the same share of |reference| per element; runs at different thread counts must agree bit
// for bit (docs/numerics.md). A Runner owns its engines; Run is not thread-safe (one runner per
// thread).
#ifndef ACCY_SRC_TESTING_DIFFERENTIAL_RUNNER_H_
#define ACCY_SRC_TESTING_DIFFERENTIAL_RUNNER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "accy/engine.h"
#include "accy/tensor.h"
#include "src/testing/fuzz_program.h"

namespace accy::fuzz {

enum class Verdict : uint8_t {
  kMatch,           // every output agrees
  kUnsupported,     // Compile failed with kUnimplemented: counted, not a failure
  kMismatch,        // an output differs from the reference (or between thread counts)
  kCompileError,    // Compile failed with another code (a valid program must compile)
  kRunError,        // Run failed
  kReferenceError,  // the reference evaluator failed (a generator or evaluator bug)
  kInvalidProgram,  // the recipes did not build a valid module (a generator bug)
};
inline constexpr int kNumVerdicts = 7;
std::string_view VerdictName(Verdict verdict);  // "match", "unsupported", "mismatch", ...
inline bool IsFailure(Verdict v) { return v != Verdict::kMatch && v != Verdict::kUnsupported; }

struct Outcome {
  Verdict verdict = Verdict::kMatch;
  std::string message;  // empty for kMatch; otherwise names the output, thread count, element
};

struct RunnerOptions {
  std::vector<int> threads = {1, 2};  // engine thread counts (each >= 1)
  // Bound on while trip counts in the engine (generated loops run at most 5 times).
  int64_t max_while_iterations = 1000;
  // Engines are created again after this many programs: each engine keeps every kernel
  // object it compiled, which a long run must not accumulate.
  int64_t programs_per_engine = 200;
};

// Compares one output: see the file comment. `value` gives exactness and tolerance.
TensorComparison CompareOutput(const Tensor& actual, const Tensor& expected,
                               const FuzzValue& value);

class Runner {
 public:
  // kInvalidArgument for an empty thread list or a count below 1; Engine::Create's errors.
  static StatusOr<std::unique_ptr<Runner>> Create(const RunnerOptions& options);
  // Compiles and runs `program` on every engine against the reference; then, where a parameter
  // has a result's type, once more in place (RunDonated).
  Outcome Run(const FuzzProgram& program);
  // The reference results of `program` (its reference form), for the reducer.
  static StatusOr<std::vector<Tensor>> Reference(const FuzzProgram& program);

 private:
  explicit Runner(RunnerOptions options) : options_(std::move(options)) {}
  Status MakeEngines();
  // Compiles `module` again with its first parameter whose type is a result's donated to that
  // result (CompileOptions::input_output_aliases), runs it in place on the last engine, and
  // compares every output bit for bit with `expected` (that engine's run with separate
  // buffers). kMatch when no parameter has a result's type.
  Outcome RunDonated(const Module& module, const FuzzProgram& program,
                     const std::vector<Tensor>& expected);
  RunnerOptions options_;
  std::vector<std::unique_ptr<Engine>> engines_;
  int64_t programs_ = 0;
};

}  // namespace accy::fuzz

#endif  // ACCY_SRC_TESTING_DIFFERENTIAL_RUNNER_H_
