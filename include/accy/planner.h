// Planning a function into ordered work items, under a caller-set work allowance.
//
// PlanFunction runs accy's planning stages on one function of a verified module: shape/layout
// analysis, fusion planning and schedule planning (the schedule pass whose contract `ctest -L
// seed` tests: ../shared/seed/schedule_pass.zig.txt). Every stage first
// declares upper bounds on its work and memory from the input alone; the allowance admits or
// refuses each declaration before the stage runs, so a service can refuse a hostile program
// before spending time or memory on it. Stateless and thread-safe (each call has its own ledger).
// The function is planned as written, without Engine::Compile's graph passes, except that
// batch-norm ops (which have no work kind of their own) are planned as the ops they expand into
// on a copy of the module (src/transforms/expand_batch_norm.h).
#ifndef ACCY_PLANNER_H_
#define ACCY_PLANNER_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"

namespace accy {

// Limits on the planning work of one call, summed over its stages (the unlimited default admits
// everything). Counts are units of work; byte limits are bytes.
struct WorkAllowance {
  static constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();
  uint64_t structural_visits = kUnlimited;      // IR nodes, edges and lookups visited
  uint64_t input_bytes = kUnlimited;            // IR payload bytes read (constants, attributes)
  uint64_t analysis_computations = kUnlimited;  // analyses computed
  uint64_t allocation_capacity = kUnlimited;    // bytes allocated in all
  uint64_t workspace_bytes = kUnlimited;        // peak bytes of any one stage
  uint64_t retained_storage_bytes = kUnlimited; // bytes kept by the results
};

struct PlanOptions {
  WorkAllowance allowance;
};

// One planned work item, in execution (dependency) order.
struct PlannedWorkItem {
  std::string kind;                 // "elementwise_fusion", "shape", "dot_general", ...
  std::vector<std::string> ops;     // op names, in the item's topological order
  std::string output_type;          // e.g. "tensor<4x4xf32>"
  uint64_t static_read_bytes = 0;
  uint64_t static_write_bytes = 0;
  uint64_t estimated_element_ops = 0;
  std::vector<int64_t> dependencies;  // positions of the items it reads from
};

// The plan of one function.
struct PlanSummary {
  std::vector<PlannedWorkItem> items;
  int64_t single_work_count = 0;
  int64_t fusion_work_count = 0;
  int64_t kernel_call_work_count = 0;
  int64_t scheduled_op_count = 0;
  uint64_t total_static_elements = 0;
  std::string text;  // one line per item (id, kind, ops, type, bytes, element ops, deps)
  std::string dot;   // Graphviz: items as nodes, dependencies as edges
};

// Plans `function_name` of `module` (which must pass Verify). Errors: kInvalidArgument when the
// function does not exist; kResourceExhausted naming the stage and the dimension when the
// allowance refuses a stage; kOutOfRange "WorkOverflow" when a bound or the total static element
// count overflows 64 bits; kInvalidArgument "CyclicScheduleDependency" for a cyclic plan.
StatusOr<PlanSummary> PlanFunction(const Module& module, std::string_view function_name,
                                   const PlanOptions& options = {});

}  // namespace accy

#endif  // ACCY_PLANNER_H_
