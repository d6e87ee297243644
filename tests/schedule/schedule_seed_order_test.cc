// The seed's ordering and work-accounting tests (seed/schedule_pass.zig.txt): diamond and
// broadcast-source ordering, the planning pass preserving IR, the work contract over growing
// chains (storage and admission), and aggregate element overflow. ctest label: seed.
#include <limits>
#include <memory>

#include "accy/builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/schedule/schedule_pass.h"
#include "src/schedule/schedule_plan.h"
#include "tests/schedule/schedule_test_util.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using testing_util::FindNthOp;
using testing_util::PlannedModule;

TensorType T(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}

TEST(ScheduleSeedTest, OrdersFusionAfterExternalProducers) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("schedule_branch_fusion_order",
                                             {T({4}), T({4}), T({4}), T({4})}, {T({4})}));
  ASSERT_OK_AND_ASSIGN(Value * shared, fb.Add(fb.Parameter(0), fb.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * left, fb.Multiply(shared, fb.Parameter(2)));
  ASSERT_OK_AND_ASSIGN(Value * right, fb.Add(shared, fb.Parameter(3)));
  ASSERT_OK_AND_ASSIGN(Value * product, fb.Multiply(left, right));
  ASSERT_OK(fb.Return({product}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "schedule_branch_fusion_order");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);

  EXPECT_EQ(plan->work_item_count(), 1);
  EXPECT_EQ(plan->single_work_count(), 0);
  EXPECT_EQ(plan->fusion_work_count(), 1);
  EXPECT_EQ(plan->items()[0].root, product->defining_op());
  const WorkItem* fused = plan->GetWorkForRoot(product->defining_op());
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->kind, WorkKind::kElementwiseFusion);
  ASSERT_EQ(fused->op_count(), 4);
  EXPECT_EQ(fused->ops[0], shared->defining_op());
  EXPECT_EQ(fused->ops[1], left->defining_op());
  EXPECT_EQ(fused->ops[2], right->defining_op());
  EXPECT_EQ(fused->ops[3], product->defining_op());
  EXPECT_EQ(fused->resources.external_input_value_count, 4u);
  EXPECT_EQ(fused->resources.external_operand_count, 4u);
  EXPECT_EQ(fused->resources.chain_operand_count, 4u);
  EXPECT_EQ(fused->resources.static_total_bytes, 80u);
}

TEST(ScheduleSeedTest, OrdersFusionAfterBroadcastSourceProducers) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("schedule_broadcast_source_order",
                                             {T({4, 4}), T({4})}, {T({4, 4})}));
  ASSERT_OK_AND_ASSIGN(Value * row_product, fb.Multiply(fb.Parameter(1), fb.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * row_broadcast, fb.BroadcastInDim(row_product, T({4, 4}), {0}));
  ASSERT_OK_AND_ASSIGN(Value * sum, fb.Add(fb.Parameter(0), row_broadcast));
  ASSERT_OK_AND_ASSIGN(Value * product, fb.Multiply(sum, fb.Parameter(0)));
  ASSERT_OK(fb.Return({product}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "schedule_broadcast_source_order");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);

  EXPECT_EQ(plan->work_item_count(), 2);
  EXPECT_EQ(plan->single_work_count(), 1);
  EXPECT_EQ(plan->fusion_work_count(), 1);
  EXPECT_EQ(plan->items()[0].root, row_product->defining_op());
  EXPECT_EQ(plan->items()[1].root, product->defining_op());
  const WorkItem* fused = plan->GetWorkForRoot(product->defining_op());
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->kind, WorkKind::kElementwiseFusion);
  ASSERT_EQ(fused->op_count(), 2);
  EXPECT_EQ(fused->ops[0], sum->defining_op());
  EXPECT_EQ(fused->ops[1], product->defining_op());
  // The fused item reads the broadcast through index arithmetic: it depends on its source.
  EXPECT_EQ(std::vector<int64_t>(fused->dependencies.begin(), fused->dependencies.end()),
            std::vector<int64_t>{0});
}

TEST(ScheduleSeedTest, PlanningPassPreservesIr) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("schedule_pass_add4", {T({4}), T({4})}, {T({4})}));
  ASSERT_OK_AND_ASSIGN(Value * sum, fb.Add(fb.Parameter(0), fb.Parameter(1)));
  ASSERT_OK(fb.Return({sum}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  std::string before = PrintModule(*module);
  passes::WorkLedger ledger;
  passes::AnalysisCache cache(&ledger);
  passes::PassManager manager;
  manager.AddPass(std::make_unique<SchedulePlanningPass>());
  ASSERT_OK(manager.Run(*module, cache));
  EXPECT_EQ(manager.stats().pass_runs, 1u);
  EXPECT_EQ(manager.stats().passes_modified, 0u);
  EXPECT_EQ(PrintModule(*module), before);
  EXPECT_NE(cache.Find<SchedulePlan>(*module->functions()[0]), nullptr);
}

// A chain of `count` reshapes of a [2, 3] f32 tensor.
std::unique_ptr<Module> ReshapeChain(int count, int64_t extent_dim0 = 2, int64_t extent_dim1 = 3) {
  Builder builder;
  TensorType type = *TensorType::Create(ElementType::kF32, {extent_dim0, extent_dim1});
  FunctionBuilder f = *builder.BeginFunction("schedule_chain", {type}, {type});
  Value* result = f.Parameter(0);
  for (int i = 0; i < count; ++i) result = *f.Reshape(result, type);
  EXPECT_TRUE(f.Return({result}).ok());
  return *builder.Finish();
}

// The seed's checkScheduleAdmission: charge = the pass's own 1 visit plus the three analyses'
// declared visits. At allowance = charge - 1 the run fails and the ledger is exhausted; as in the
// seed, the schedule plan is charged before it asks for its inputs, so the shape analysis is
// admitted and cached, the fusion plan is refused, and one entry remains. At charge and
// charge + 1 everything is admitted and the three analyses are cached.
void CheckScheduleAdmission(const Module& module) {
  const Function& function = *module.functions()[0];
  uint64_t charge = 1;  // the planning pass's own contract
  for (auto estimate : {ShapeLayoutAnalysis::Contract().estimate,
                        FusionPlanAnalysis::Contract().estimate, SchedulePlan::Contract().estimate}) {
    auto bounds = estimate(function);
    ASSERT_TRUE(bounds.ok()) << bounds.status();
    charge += bounds->work.structural_visits;
  }
  for (int offset : {-1, 0, 1}) {
    passes::PlanningOptions options;
    options.allowance.structural_visits = charge + static_cast<uint64_t>(offset);
    passes::WorkLedger ledger(options);
    passes::AnalysisCache cache(&ledger);
    passes::PassManager manager;
    manager.AddPass(std::make_unique<SchedulePlanningPass>());
    Status status = manager.Run(const_cast<Module&>(module), cache);
    if (offset < 0) {
      EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
      EXPECT_EQ(ledger.outcome(), passes::WorkOutcome::kExhausted);
      EXPECT_EQ(cache.entry_count(), 1u);
      EXPECT_EQ(cache.Find<SchedulePlan>(function), nullptr);
    } else {
      EXPECT_TRUE(status.ok()) << status;
      EXPECT_EQ(ledger.outcome(), passes::WorkOutcome::kOpen);
      EXPECT_EQ(cache.entry_count(), 3u);
    }
  }
}

TEST(ScheduleSeedTest, WorkContractCoversGrowingDependencyChains) {
  for (int count : {1, 2, 6, 7, 16, 64}) {
    SCOPED_TRACE(count);
    std::unique_ptr<Module> module = ReshapeChain(count);
    PlannedModule planned(std::move(module), "schedule_chain");
    ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
    ASSERT_EQ(plan->work_item_count(), count);
    for (int64_t i = 0; i < count; ++i) {
      const WorkItem& item = plan->items()[static_cast<size_t>(i)];
      EXPECT_EQ(item.id, i);
      EXPECT_EQ(item.kind, WorkKind::kShape);
      if (i != 0) {
        EXPECT_EQ(plan->items()[static_cast<size_t>(i - 1)].output_value, item.root->operand(0));
      }
    }
    planned.CheckStorage(*plan);
  }
  for (int count : {1, 2, 6, 7, 16, 64}) {
    SCOPED_TRACE(count);
    std::unique_ptr<Module> module = ReshapeChain(count);
    CheckScheduleAdmission(*module);
  }
}

TEST(ScheduleSeedTest, WorkOverflowInEstimateArithmeticIsAnError) {
  EXPECT_EQ(passes::WorkMul(std::numeric_limits<uint64_t>::max(), 2).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(passes::WorkAdd(std::numeric_limits<uint64_t>::max(), 1).status().code(),
            absl::StatusCode::kOutOfRange);
}

TEST(ScheduleSeedTest, ReportsAggregateElementOverflowWithoutCachingAPlan) {
  const int64_t extent = std::numeric_limits<int64_t>::max();
  Builder builder;
  TensorType type = *TensorType::Create(ElementType::kF32, {extent});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("schedule_overflow", {type}, {type}));
  ASSERT_OK_AND_ASSIGN(Value * first, f.Reshape(f.Parameter(0), type));
  ASSERT_OK_AND_ASSIGN(Value * second, f.Reshape(first, type));
  ASSERT_OK_AND_ASSIGN(Value * third, f.Reshape(second, type));
  ASSERT_OK(f.Return({third}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "schedule_overflow");
  StatusOr<const SchedulePlan*> plan = planned.Plan();
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(plan.status().message()), testing::HasSubstr("WorkOverflow"));
  EXPECT_EQ(planned.ledger().outcome(), passes::WorkOutcome::kExhausted);
  EXPECT_EQ(planned.cache().entry_count(), 2u);
  StatusOr<const SchedulePlan*> again = planned.Plan();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(again.status().message()), testing::HasSubstr("TerminalWorkOutcome"));
}

}  // namespace
}  // namespace accy
