// SchedulePlanningPass and SchedulePlan's analysis entry points.
#include "src/schedule/schedule_pass.h"

#include "src/analysis/shape_layout_analysis.h"
#include "src/fusion/fusion_analysis.h"
#include "src/schedule/schedule_plan.h"

namespace accy {
namespace {

StatusOr<passes::WorkBounds> SchedulePassWork(const Function&) {
  passes::WorkBounds bounds;
  bounds.work.structural_visits = 1;
  return bounds;
}

}  // namespace

const passes::WorkContract& SchedulePlanningPass::contract() const {
  static const passes::WorkContract kContract{{kName, 1}, &SchedulePassWork};
  return kContract;
}

Status SchedulePlanningPass::Run(passes::PassContext& context) {
  return context.GetAnalysis<SchedulePlan>().status();
}

const passes::WorkContract& SchedulePlan::Contract() {
  static const passes::WorkContract kContract{{"accy-schedule-plan", 1}, &EstimateSchedulePlan,
                                              &EstimateSchedulePlanFromCensus};
  return kContract;
}

StatusOr<SchedulePlan*> SchedulePlan::Compute(passes::AnalysisContext& ctx,
                                              const Function& function) {
  ACCY_ASSIGN_OR_RETURN(const ShapeLayoutAnalysis* shapes, ctx.Get<ShapeLayoutAnalysis>(function));
  ACCY_ASSIGN_OR_RETURN(const FusionPlanAnalysis* fusion, ctx.Get<FusionPlanAnalysis>(function));
  ACCY_ASSIGN_OR_RETURN(const passes::Census* census, ctx.cache().CensusOf(function));
  return PlanSchedule(function, *census, *shapes, fusion->plan(), ctx.resource());
}

}  // namespace accy
