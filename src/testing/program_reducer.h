// Reduction of a failing FuzzProgram to a small one that still fails (docs/fuzzing.md).
//
// Candidates, each kept when `still_fails` holds for it: drop an output; replace an op by
// parameters whose inputs are the reference evaluator's values of its results (so the rest of
// the program sees the same data); then drop the ops no output needs and the parameters no op
// reads. Repeats until no candidate is kept or the candidate budget is spent. Dims are not
// shrunk. Pure function of its arguments (the predicate may run the engine).
#ifndef ACCY_SRC_TESTING_PROGRAM_REDUCER_H_
#define ACCY_SRC_TESTING_PROGRAM_REDUCER_H_

#include <functional>

#include "src/testing/fuzz_program.h"

namespace accy::fuzz {

using FailurePredicate = std::function<bool(const FuzzProgram&)>;

// The smallest program found; `program` itself when nothing smaller fails.
FuzzProgram ReduceProgram(const FuzzProgram& program, const FailurePredicate& still_fails,
                          int max_candidates = 400);

// `program` without the ops no output depends on and the parameters (and inputs) no op or
// output uses.
FuzzProgram Prune(const FuzzProgram& program);

}  // namespace accy::fuzz

#endif  // ACCY_SRC_TESTING_PROGRAM_REDUCER_H_
