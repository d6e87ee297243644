// A batch of the differential fuzzer: generate programs from one run seed, run each
// (differential_runner.h), reduce each failure (program_reducer.h), and count verdicts and
// coverage. What `accy fuzz` and the fixed-seed ctest run (docs/fuzzing.md). Not thread-safe.
#ifndef ACCY_SRC_TESTING_FUZZ_BATCH_H_
#define ACCY_SRC_TESTING_FUZZ_BATCH_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "src/testing/differential_runner.h"
#include "src/testing/program_generator.h"

namespace accy::fuzz {

struct BatchOptions {
  uint64_t seed = 1;        // run seed; program i is GenerateProgram(ProgramSeed(seed, i))
  int64_t first = 0;        // index of the first program (replays part of a run)
  int64_t programs = 100;   // programs to run
  GeneratorOptions generator;
  RunnerOptions runner;
  bool reduce = true;       // reduce failing programs
};

struct Failure {
  int64_t index = 0;          // program index in the run
  uint64_t program_seed = 0;  // ProgramSeed(seed, index)
  Outcome outcome;            // of the generated program
  FuzzProgram original;       // the generated program
  FuzzProgram reduced;        // the reduced program (the generated one when reduce is off)
  Outcome reduced_outcome;
};

struct BatchSummary {
  int64_t programs = 0;
  std::array<int64_t, kNumVerdicts> verdicts{};
  OpCoverage coverage;                            // of the engine modules
  std::map<std::string, int64_t> recipes;         // op recipe labels (patterns, kernel targets)
  std::map<std::string, int64_t> unsupported;     // kUnimplemented messages -> count
  std::vector<Failure> failures;
  double seconds = 0;
};

// Runs the batch. `before_each(index, program_seed)` is called before each program runs (a
// crash handler can name the program); `on_failure` after each failure is reduced. Errors:
// Runner::Create's.
StatusOr<BatchSummary> RunBatch(
    const BatchOptions& options,
    const std::function<void(int64_t, uint64_t)>& before_each = nullptr,
    const std::function<void(const Failure&)>& on_failure = nullptr);

// The summary as text: programs, verdicts, ops per kind, element types, recipes, unsupported
// messages, failures (one line each) and seconds.
std::string FormatSummary(const BatchSummary& summary);

}  // namespace accy::fuzz

#endif  // ACCY_SRC_TESTING_FUZZ_BATCH_H_
