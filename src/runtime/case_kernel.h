// CaseKernel: how an `iterate` work item of a StableHLO `case` (spec section "case"; `if`
// imports as a case) runs. Each branch region is outlined into a function of its own
// (src/ir/outline.h) and compiled by the same engine, so a branch runs as compiled code (JIT and
// oneDNN items, fused and planned like any function). A run reads the rank-0 i32 index, picks
// branch index (the last branch when index is outside [0, N), as the spec says) and runs it on
// the captured values it reads, writing the item's outputs. The kernel owns its branch
// executables; Run is thread-safe (per-run state lives on the stack).
#ifndef ACCY_SRC_RUNTIME_CASE_KERNEL_H_
#define ACCY_SRC_RUNTIME_CASE_KERNEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/status.h"
#include "accy/tensor.h"
#include "src/runtime/control_flow_kernel.h"

namespace accy {

class CaseKernel : public ControlFlowKernel {
 public:
  struct Branch {
    std::unique_ptr<Executable> executable;  // (captured...) -> results
    std::vector<int64_t> captured;  // per parameter: its index among the item's captured inputs
  };
  // `branches` (at least one) return values of `result_types`; `captured_types` are the item's
  // captured inputs. `name` names the item in errors.
  CaseKernel(std::string name, std::vector<TensorType> result_types,
             std::vector<TensorType> captured_types, std::vector<Branch> branches);

  // Buffers, in item order: the index (tensor<i32>), C captured values, R results; `buffers`
  // holds 1+C+R pointers. Returns the branch's first error, prefixed with the item and branch.
  Status Run(void* const* buffers, const RunOptions& options) const override;
  // The largest ExecutableStats::peak_memory_bytes of the branches (one runs at a time).
  int64_t peak_bytes() const override;

  int64_t num_branches() const { return static_cast<int64_t>(branches_.size()); }
  const Executable& branch(int64_t i) const { return *branches_[static_cast<size_t>(i)].executable; }

 private:
  std::string name_;
  std::vector<TensorType> result_types_;
  std::vector<TensorType> captured_types_;
  std::vector<Branch> branches_;
};

}  // namespace accy

#endif  // ACCY_SRC_RUNTIME_CASE_KERNEL_H_
