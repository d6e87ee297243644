// SchedulePlanningPass: the pass that computes the SchedulePlan analysis of each function and
// preserves every analysis (it does not change the IR). Stateless; one instance may run on many
// functions, not concurrently.
#ifndef ACCY_SRC_SCHEDULE_SCHEDULE_PASS_H_
#define ACCY_SRC_SCHEDULE_SCHEDULE_PASS_H_

#include "src/passes/pass_manager.h"

namespace accy {

class SchedulePlanningPass : public passes::Pass {
 public:
  static constexpr std::string_view kName = "accy-plan-schedule";
  std::string_view name() const override { return kName; }
  // Identity "accy-plan-schedule" v1; its own work is one structural visit (the analysis it asks
  // for is charged by the cache).
  const passes::WorkContract& contract() const override;
  // Errors: those of AnalysisCache::Get<SchedulePlan> (refused charges, WorkOverflow,
  // CyclicScheduleDependency).
  Status Run(passes::PassContext& context) override;
  passes::PreservedAnalyses preserved_analyses() const override {
    return passes::PreservedAnalyses::All();
  }
};

}  // namespace accy

#endif  // ACCY_SRC_SCHEDULE_SCHEDULE_PASS_H_
