// PlanFunction: the public planning entry and its allowance.
#include "accy/planner.h"

#include <memory>

#include "accy/builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using testing::HasSubstr;

std::unique_ptr<Module> SoftmaxLikeProgram() {
  Builder builder("m");
  TensorType x = *TensorType::Create(ElementType::kF32, {4, 8});
  TensorType row = *TensorType::Create(ElementType::kF32, {4});
  FunctionBuilder f = *builder.BeginFunction("main", {x}, {x});
  Value* e = *f.Exponential(f.Parameter(0));
  Value* zero = *f.ConstantScalar(ElementType::kF32, 0);
  Value* sums = *f.Reduce(e, zero, row, "sum", {1});
  Value* wide = *f.BroadcastInDim(sums, x, {0});
  Value* out = *f.Divide(e, wide);
  EXPECT_TRUE(f.Return({out}).ok());
  return *builder.Finish();
}

TEST(PlannerTest, PlansAFunctionIntoOrderedWorkItems) {
  std::unique_ptr<Module> module = SoftmaxLikeProgram();
  ASSERT_OK_AND_ASSIGN(PlanSummary plan, PlanFunction(*module, "main"));
  ASSERT_EQ(plan.items.size(), 1u);
  EXPECT_EQ(plan.items[0].kind, "row_pipeline");
  EXPECT_EQ(plan.items[0].ops,
            (std::vector<std::string>{"exponential", "reduce", "divide"}));
  EXPECT_EQ(plan.items[0].output_type, "tensor<4x8xf32>");
  EXPECT_EQ(plan.fusion_work_count, 1);
  EXPECT_THAT(plan.text, HasSubstr("row_pipeline ops=[exponential,reduce,divide]"));
  EXPECT_THAT(plan.dot, HasSubstr("digraph schedule"));
}

TEST(PlannerTest, UnknownFunctionIsAnError) {
  std::unique_ptr<Module> module = SoftmaxLikeProgram();
  StatusOr<PlanSummary> plan = PlanFunction(*module, "missing");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("no function 'missing'"));
}

TEST(PlannerTest, AllowanceRefusesAProgramBeforePlanningIt) {
  std::unique_ptr<Module> module = SoftmaxLikeProgram();
  PlanOptions options;
  options.allowance.structural_visits = 10;
  StatusOr<PlanSummary> plan = PlanFunction(*module, "main", options);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("structural_visits"));

  options.allowance = WorkAllowance();
  options.allowance.workspace_bytes = 64;
  plan = PlanFunction(*module, "main", options);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace accy
