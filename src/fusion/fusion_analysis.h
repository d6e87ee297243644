// FusionPlanAnalysis: the fusion plan (fusion_plan.h) as an analysis of passes::AnalysisCache.
// The cache owns the analysis object; the analysis owns its FusionPlan, and both live in the
// resource the cache gave Compute. Immutable once computed; readable from many threads.
#ifndef ACCY_SRC_FUSION_FUSION_ANALYSIS_H_
#define ACCY_SRC_FUSION_FUSION_ANALYSIS_H_

#include <memory_resource>

#include "accy/ir.h"
#include "accy/status.h"
#include "src/fusion/fusion_plan.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_contract.h"

namespace accy {

class FusionPlanAnalysis {
 public:
  using allocator_type = std::pmr::polymorphic_allocator<>;
  // Takes ownership of `plan`, which must have been allocated from `alloc`'s resource.
  FusionPlanAnalysis(FusionPlan* plan, const allocator_type& alloc) : plan_(plan), alloc_(alloc) {}
  ~FusionPlanAnalysis() { alloc_.delete_object(plan_); }
  FusionPlanAnalysis(const FusionPlanAnalysis&) = delete;
  FusionPlanAnalysis& operator=(const FusionPlanAnalysis&) = delete;

  // Identity "accy-fusion-plan" v1; estimate EstimateFusionPlanAnalysis.
  static const passes::WorkContract& Contract();
  // PlanFusion over ctx.resource(), wrapped; FusionOptions::enable_fusion comes from the
  // cache's ledger (PlanningOptions::enable_fusion). Errors as PlanFusion.
  static StatusOr<FusionPlanAnalysis*> Compute(passes::AnalysisContext& ctx,
                                               const Function& function);

  const FusionPlan& plan() const { return *plan_; }

 private:
  FusionPlan* plan_;
  allocator_type alloc_;
};

// EstimateFusionPlan plus the analysis object itself (retained, with alignment slack).
StatusOr<passes::WorkBounds> EstimateFusionPlanAnalysis(const Function& function);
// The same from the function's census (what the AnalysisCache uses: one census per function).
StatusOr<passes::WorkBounds> EstimateFusionPlanAnalysisFromCensus(const passes::Census& census);

}  // namespace accy

#endif  // ACCY_SRC_FUSION_FUSION_ANALYSIS_H_
