// PlanningOptions: the work allowance a caller grants one compilation (analyses and planning).
//
// A service compiling programs it does not trust sets these so that a hostile program (a huge
// graph, a quadratic blow-up in a planner) is refused by the WorkLedger before any time or memory
// is spent on it: every pass and analysis declares its bounds from the input alone, and a charge
// beyond the allowance fails with kResourceExhausted. The defaults grant everything. Plain value;
// thread-compatible. The Engine exposes this struct in its public options.
#ifndef ACCY_SRC_PASSES_PLANNING_OPTIONS_H_
#define ACCY_SRC_PASSES_PLANNING_OPTIONS_H_

#include <cstdint>
#include <limits>

#include "accy/planner.h"
#include "src/passes/work_contract.h"

namespace accy::passes {

struct PlanningOptions {
  // Totals over the whole compilation, summed across every admitted charge: structural visits
  // (count), input bytes, analysis computations (count), allocation capacity (bytes). Default:
  // unlimited, so trusted callers never see a refusal.
  WorkVector allowance = WorkVector::Unlimited();
  // The largest workspace (peak live bytes) any single pass or analysis may declare, in bytes.
  // Default: unlimited.
  uint64_t workspace_allowance = std::numeric_limits<uint64_t>::max();
  // Bytes of results kept after the work returns (cached analyses), summed across charges.
  // Default: unlimited.
  uint64_t retained_storage_allowance = std::numeric_limits<uint64_t>::max();
  // false: the fusion planner forms no clusters and elides no broadcast_in_dim, so every op is
  // its own work item and every broadcast is materialized (EngineOptions::enable_fusion; for
  // comparing fused against unfused runs). Default true.
  bool enable_fusion = true;
};

// The ledger's options for a public WorkAllowance (accy/planner.h), used by PlanFunction and
// Engine::Compile alike. enable_fusion keeps its default (true).
inline PlanningOptions ToPlanningOptions(const WorkAllowance& a) {
  PlanningOptions planning;
  planning.allowance = {a.structural_visits, a.input_bytes, a.analysis_computations,
                        a.allocation_capacity};
  planning.workspace_allowance = a.workspace_bytes;
  planning.retained_storage_allowance = a.retained_storage_bytes;
  return planning;
}

}  // namespace accy::passes

#endif  // ACCY_SRC_PASSES_PLANNING_OPTIONS_H_
