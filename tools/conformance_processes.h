// The Gloo process runner of `accy conformance --collectives gloo` (ParallelProcessRunner in
// src/stablehlo/conformance.h).
#ifndef ACCY_TOOLS_CONFORMANCE_PROCESSES_H_
#define ACCY_TOOLS_CONFORMANCE_PROCESSES_H_

#include <string>
#include <vector>

#include "accy/ir.h"
#include "accy/tensor.h"

namespace accy::tools {

// Writes `module` (its grid set) and each process's inputs to a temporary folder, runs
// `accy run --input-per-process ... --output-dir ...` from this executable (/proc/self/exe), which
// starts one process per grid position joined by Gloo over TCP loopback, and reads every
// process's outputs back. Errors: kUnimplemented when the processes run different functions or
// accy run reports an unsupported feature; kInternal carrying accy run's first error line; the
// .npy reader's errors.
StatusOr<std::vector<std::vector<Tensor>>> RunAsGlooProcesses(
    const Module& module, const std::vector<std::string>& process_functions,
    const std::vector<std::vector<Tensor>>& process_inputs);

}  // namespace accy::tools

#endif  // ACCY_TOOLS_CONFORMANCE_PROCESSES_H_
