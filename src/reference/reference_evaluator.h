// The reference evaluator: runs a verified accy function op by op on host tensors.
//
// It is the oracle for every numerical test: slow, direct transcriptions of the StableHLO spec
// (https://github.com/openxla/stablehlo/blob/main/docs/spec.md) and, where the spec leaves a
// choice, the conventions of docs/numerics.md. It shares no arithmetic code with the JIT emitters,
// so a bug in one is caught by the other. Float math: f64 in double, f32 in float, f16/bf16
// computed in f32 and rounded once; reductions and dot_general accumulate floats in double and
// round once at the end. Thread-safe: evaluations share nothing.
#ifndef ACCY_SRC_REFERENCE_REFERENCE_EVALUATOR_H_
#define ACCY_SRC_REFERENCE_REFERENCE_EVALUATOR_H_

#include <span>
#include <string_view>
#include <vector>

#include <optional>

#include "accy/collectives.h"
#include "accy/ir.h"
#include "accy/status.h"
#include "accy/tensor.h"

namespace accy {

// Options for the reference evaluator.
struct ReferenceOptions {
  // A while loop that runs more iterations than this fails with kResourceExhausted instead of
  // hanging (a test oracle must terminate). Must be >= 0 (kInvalidArgument otherwise).
  int64_t max_while_iterations = 1 << 24;
  // The SPMD process this evaluation is (spec "Parallel execution"; collectives and
  // replica_id / partition_id): its communicator, whose rank is the process id replica_id *
  // num_partitions + partition_id, and the grid. Every process of the grid evaluates the same
  // function at the same time (one thread each with CreateInProcessCommunicators). The grid:
  // Evaluate takes the module's (Module::num_replicas / num_partitions) unless these are set;
  // EvaluateFunction takes 1 x 1 unless set. Null communicator: collectives work on a 1 x 1
  // grid only (kFailedPrecondition otherwise).
  Communicator* communicator = nullptr;
  std::optional<int64_t> num_replicas;
  std::optional<int64_t> num_partitions;
};

// Evaluates `function` on `arguments` (one tensor per parameter, of the parameter's type) and
// returns one owned tensor per result. kInvalidArgument names the argument whose count, type or
// data is wrong, or the invalid option; kUnimplemented names an op the evaluator cannot run
// (kernel_call of a target it does not know).
StatusOr<std::vector<Tensor>> EvaluateFunction(const Function& function,
                                               std::span<const Tensor> arguments,
                                               const ReferenceOptions& options = {});
// Looks `function_name` up in `module` (kInvalidArgument when absent) and evaluates it.
StatusOr<std::vector<Tensor>> Evaluate(const Module& module, std::string_view function_name,
                                       std::span<const Tensor> arguments,
                                       const ReferenceOptions& options = {});

}  // namespace accy

#endif  // ACCY_SRC_REFERENCE_REFERENCE_EVALUATOR_H_
