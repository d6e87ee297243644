// Test helpers for schedule planning: plan a function through the analysis cache under an
// unlimited ledger, and re-run PlanSchedule over exactly its declared workspace (the seed's
// checkScheduleStorage).
#ifndef ACCY_TESTS_SCHEDULE_SCHEDULE_TEST_UTIL_H_
#define ACCY_TESTS_SCHEDULE_SCHEDULE_TEST_UTIL_H_

#include <memory>
#include <memory_resource>
#include <string>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "gtest/gtest.h"
#include "src/analysis/shape_layout_analysis.h"
#include "src/fusion/fusion_analysis.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_ledger.h"
#include "src/schedule/schedule_plan.h"

namespace accy::testing_util {

// The `n`-th op of `kind` in the function's entry block, or null.
inline const Operation* FindNthOp(const Function& function, OpKind kind, int n) {
  for (const auto& op : function.entry_block()->operations()) {
    if (op->kind() == kind && n-- == 0) return op.get();
  }
  return nullptr;
}

// A module plus the ledger and cache that plan one of its functions.
class PlannedModule {
 public:
  PlannedModule(std::unique_ptr<Module> module, const std::string& function_name,
                const passes::PlanningOptions& options = passes::PlanningOptions())
      : module_(std::move(module)), ledger_(options), cache_(&ledger_) {
    function_ = module_->FindFunction(function_name);
  }

  const Function& function() const { return *function_; }
  passes::WorkLedger& ledger() { return ledger_; }
  passes::AnalysisCache& cache() { return cache_; }
  StatusOr<const SchedulePlan*> Plan() { return cache_.Get<SchedulePlan>(*function_); }

  // Recomputes the plan over a buffer of exactly the declared workspace with no upstream and
  // checks it equals `expected`.
  void CheckStorage(const SchedulePlan& expected) {
    auto bounds = EstimateSchedulePlan(*function_);
    ASSERT_TRUE(bounds.ok()) << bounds.status();
    auto shapes = cache_.Get<ShapeLayoutAnalysis>(*function_);
    auto fusion = cache_.Get<FusionPlanAnalysis>(*function_);
    ASSERT_TRUE(shapes.ok() && fusion.ok());
    std::vector<std::byte> buffer(static_cast<size_t>(bounds->workspace_bytes));
    std::pmr::monotonic_buffer_resource storage(buffer.data(), buffer.size(),
                                                std::pmr::null_memory_resource());
    auto actual = PlanSchedule(*function_, **shapes, (*fusion)->plan(), &storage);
    ASSERT_TRUE(actual.ok()) << actual.status();
    const SchedulePlan& plan = **actual;
    ASSERT_EQ(plan.work_item_count(), expected.work_item_count());
    EXPECT_EQ(plan.scheduled_op_count(), expected.scheduled_op_count());
    EXPECT_EQ(plan.total_static_elements(), expected.total_static_elements());
    for (int64_t i = 0; i < plan.work_item_count(); ++i) {
      const WorkItem& left = expected.items()[static_cast<size_t>(i)];
      const WorkItem& right = plan.items()[static_cast<size_t>(i)];
      EXPECT_EQ(left.id, right.id);
      EXPECT_EQ(left.kind, right.kind);
      EXPECT_EQ(left.root, right.root);
      EXPECT_EQ(left.output_value, right.output_value);
      EXPECT_TRUE(std::equal(left.ops.begin(), left.ops.end(), right.ops.begin(), right.ops.end()));
      EXPECT_EQ(left.resources, right.resources);
      EXPECT_EQ(plan.GetWorkForRoot(right.root), &right);
    }
    std::pmr::polymorphic_allocator<SchedulePlan>(&storage).delete_object(*actual);
  }

 private:
  std::unique_ptr<Module> module_;
  const Function* function_ = nullptr;
  passes::WorkLedger ledger_;
  passes::AnalysisCache cache_;
};

// A module planned for "main", its last work item of `kind`, and the fusion plan the library
// bindings read (kernels::LibraryKernel::Create).
struct PlannedItem {
  std::unique_ptr<PlannedModule> planned;
  const Module* module = nullptr;
  const WorkItem* item = nullptr;
  const FusionPlan* fusion = nullptr;
};

// kInternal when the plan has no item of `kind`; planning errors as they come.
inline StatusOr<PlannedItem> PlanItemOfKind(std::unique_ptr<Module> module, WorkKind kind) {
  PlannedItem p;
  p.module = module.get();
  p.planned = std::make_unique<PlannedModule>(std::move(module), "main");
  ACCY_ASSIGN_OR_RETURN(const SchedulePlan* plan, p.planned->Plan());
  ACCY_ASSIGN_OR_RETURN(auto fusion, p.planned->cache().Get<FusionPlanAnalysis>(
                                         p.planned->function()));
  p.fusion = &fusion->plan();
  for (const WorkItem& item : plan->items()) {
    if (item.kind == kind) p.item = &item;
  }
  if (p.item == nullptr) return absl::InternalError("test: no work item of the asked kind");
  return p;
}

}  // namespace accy::testing_util

#endif  // ACCY_TESTS_SCHEDULE_SCHEDULE_TEST_UTIL_H_
