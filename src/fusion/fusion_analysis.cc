// FusionPlanAnalysis (fusion_analysis.h).
#include "src/fusion/fusion_analysis.h"

namespace accy {

const passes::WorkContract& FusionPlanAnalysis::Contract() {
  static const passes::WorkContract contract{{"accy-fusion-plan", 1},
                                             &EstimateFusionPlanAnalysis,
                                             &EstimateFusionPlanAnalysisFromCensus};
  return contract;
}

StatusOr<FusionPlanAnalysis*> FusionPlanAnalysis::Compute(passes::AnalysisContext& ctx,
                                                          const Function& function) {
  FusionOptions options;
  options.enable_fusion = ctx.cache().ledger().options().enable_fusion;
  ACCY_ASSIGN_OR_RETURN(FusionPlan* plan, PlanFusion(function, ctx.resource(), options));
  allocator_type alloc(ctx.resource());
  try {
    return alloc.new_object<FusionPlanAnalysis>(plan);
  } catch (...) {
    alloc.delete_object(plan);  // the cache turns the std::bad_alloc into a status
    throw;
  }
}

StatusOr<passes::WorkBounds> EstimateFusionPlanAnalysis(const Function& function) {
  ACCY_ASSIGN_OR_RETURN(passes::Census census, passes::Census::Inspect(function));
  return EstimateFusionPlanAnalysisFromCensus(census);
}

StatusOr<passes::WorkBounds> EstimateFusionPlanAnalysisFromCensus(const passes::Census& census) {
  ACCY_ASSIGN_OR_RETURN(passes::WorkBounds bounds, EstimateFusionPlanFromCensus(census));
  // The analysis object: one more allocation, with the same alignment slack as the plan's.
  constexpr uint64_t kObjectBytes = sizeof(FusionPlanAnalysis) + 64;
  ACCY_ASSIGN_OR_RETURN(bounds.work.allocation_capacity,
                        passes::WorkAdd(bounds.work.allocation_capacity, kObjectBytes));
  ACCY_ASSIGN_OR_RETURN(bounds.workspace_bytes,
                        passes::WorkAdd(bounds.workspace_bytes, kObjectBytes));
  ACCY_ASSIGN_OR_RETURN(bounds.retained_storage_bytes,
                        passes::WorkAdd(bounds.retained_storage_bytes, kObjectBytes));
  return bounds;
}

}  // namespace accy
