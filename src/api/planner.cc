// PlanFunction (include/accy/planner.h): the planning stages through the analysis cache under a
// ledger built from the caller's allowance.
#include "accy/planner.h"

#include "src/passes/analysis_cache.h"
#include "src/passes/planning_options.h"
#include "src/passes/work_ledger.h"
#include "src/schedule/schedule_plan.h"
#include "src/transforms/expand_batch_norm.h"
#include "src/util/str_cat.h"

namespace accy {

StatusOr<PlanSummary> PlanFunction(const Module& module, std::string_view function_name,
                                   const PlanOptions& options) {
  const Function* function = module.FindFunction(function_name);
  if (function == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("PlanFunction: module has no function '", function_name, "'"));
  }
  // Batch-norm ops have no work kind of their own: they are planned as the ops they expand into
  // (expand_batch_norm.h), on a copy, as Engine::Compile's graph passes do.
  std::unique_ptr<Module> expanded;
  if (CountBatchNormOps(*function) > 0) {
    expanded = module.Clone();
    Function* copy = expanded->FindFunction(function_name);
    ExpandBatchNorm(*copy);
    copy->Renumber();
    function = copy;
  }
  passes::WorkLedger ledger(passes::ToPlanningOptions(options.allowance));
  passes::AnalysisCache cache(&ledger);
  ACCY_ASSIGN_OR_RETURN(const SchedulePlan* plan, cache.Get<SchedulePlan>(*function));

  PlanSummary summary;
  summary.single_work_count = plan->single_work_count();
  summary.fusion_work_count = plan->fusion_work_count();
  summary.kernel_call_work_count = plan->kernel_call_work_count();
  summary.scheduled_op_count = plan->scheduled_op_count();
  summary.total_static_elements = plan->total_static_elements();
  for (const WorkItem& item : plan->items()) {
    PlannedWorkItem out;
    out.kind = std::string(WorkKindName(item.kind));
    for (const Operation* op : item.ops) out.ops.emplace_back(op->name());
    out.output_type = item.output_value->type().ToString();
    out.static_read_bytes = item.resources.static_read_bytes;
    out.static_write_bytes = item.resources.static_write_bytes;
    out.estimated_element_ops = item.resources.estimated_element_ops;
    out.dependencies.assign(item.dependencies.begin(), item.dependencies.end());
    summary.items.push_back(std::move(out));
  }
  summary.text = plan->ToText();
  summary.dot = plan->ToDot();
  return summary;
}

}  // namespace accy
