// ControlFlowKernel: what the executor calls for an `iterate` work item (StableHLO while and
// case): a kernel that runs executables of its own (its regions, outlined and compiled by the
// same engine) over the item's buffers. IterateKernel (while) and CaseKernel (case) implement it.
#ifndef ACCY_SRC_RUNTIME_CONTROL_FLOW_KERNEL_H_
#define ACCY_SRC_RUNTIME_CONTROL_FLOW_KERNEL_H_

#include <cstdint>

#include "accy/engine.h"
#include "accy/status.h"

namespace accy {

class ControlFlowKernel {
 public:
  virtual ~ControlFlowKernel() = default;
  // `buffers`: the item's inputs then its outputs, in the order the kernel's compile step
  // listed them (iterate_compile.h). Thread-safe: several runs may execute one kernel at once.
  // `options`: the enclosing run's (its communicator reaches collectives in the regions).
  virtual Status Run(void* const* buffers, const RunOptions& options) const = 0;
  // Bytes a run needs besides the item's buffers (the executables' own run state included).
  virtual int64_t peak_bytes() const = 0;
};

}  // namespace accy

#endif  // ACCY_SRC_RUNTIME_CONTROL_FLOW_KERNEL_H_
