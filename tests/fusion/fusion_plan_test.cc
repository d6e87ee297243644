// Fusion planning: the seed's fusion cases (seed/schedule_pass.zig.txt), chains, escape
// rejection, iteration spaces, dot epilogues, reduction inputs, elision, opaque regions, and the
// work contract (exact-workspace storage, visits, allocation failure).
#include <algorithm>
#include <cmath>
#include <memory>
#include <memory_resource>
#include <utility>
#include <vector>

#include "accy/builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/fusion/fusion_analysis.h"
#include "src/fusion/fusion_plan.h"
#include "src/fusion/fusion_planner.h"
#include "src/passes/bounded_resource.h"
#include "tests/fusion/fusion_test_util.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using fusion_test::AsVector;
using fusion_test::CheckStorage;
using fusion_test::F32;
using fusion_test::Ops;
using fusion_test::Plan;
using fusion_test::PlanPtr;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Builds one function with `body`, then plans it and checks its storage contract.
class FusionPlanTest : public ::testing::Test {
 protected:
  StatusOr<FunctionBuilder> Begin(std::vector<TensorType> parameters,
                                  std::vector<TensorType> results) {
    return builder_.BeginFunction("main", std::move(parameters), std::move(results));
  }
  // Finishes the module and plans "main".
  const FusionPlan& Finish() {
    StatusOr<std::unique_ptr<Module>> module = builder_.Finish();
    ACCY_CHECK(module.ok());
    module_ = std::move(*module);
    function_ = module_->FindFunction("main");
    StatusOr<PlanPtr> plan = Plan(*function_);
    ACCY_CHECK(plan.ok());
    plan_ = std::move(*plan);
    CheckStorage(*function_, *plan_);
    return *plan_;
  }

  Builder builder_;
  std::unique_ptr<Module> module_;
  const Function* function_ = nullptr;
  PlanPtr plan_{nullptr, {nullptr}};
};

TEST_F(FusionPlanTest, FusesAddMul) {  // seed: "fused add mul"
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, Begin({F32({4}), F32({4}), F32({4})}, {F32({4})}));
  ASSERT_OK_AND_ASSIGN(Value * sum, f.Add(f.Parameter(0), f.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * product, f.Multiply(sum, f.Parameter(2)));
  ASSERT_OK(f.Return({product}));
  const FusionPlan& plan = Finish();

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kElementwise);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({sum, product}));
  EXPECT_EQ(plan.clusters()[0].root(), product->defining_op());
  EXPECT_THAT(plan.elided(), IsEmpty());
  EXPECT_EQ(plan.ClusterOf(sum->defining_op()), &plan.clusters()[0]);
  EXPECT_EQ(plan.ToText(), "elementwise: add, multiply\n");
}

TEST_F(FusionPlanTest, FusionRejectedWhenIntermediateIsReturned) {  // seed: standalone work
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f,
                       Begin({F32({4}), F32({4}), F32({4})}, {F32({4}), F32({4})}));
  ASSERT_OK_AND_ASSIGN(Value * sum, f.Add(f.Parameter(0), f.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * product, f.Multiply(sum, f.Parameter(2)));
  ASSERT_OK(f.Return({sum, product}));
  const FusionPlan& plan = Finish();

  // No cluster: both ops are single elementwise ops for the planner (elementwise_single).
  EXPECT_THAT(plan.clusters(), IsEmpty());
  EXPECT_EQ(plan.ClusterOf(sum->defining_op()), nullptr);
  EXPECT_EQ(plan.ClusterOf(product->defining_op()), nullptr);
  EXPECT_TRUE(IsFusableElementwiseOp(*sum->defining_op()));
  EXPECT_TRUE(IsFusableElementwiseOp(*product->defining_op()));
  EXPECT_EQ(plan.ToText(), "");
}

TEST_F(FusionPlanTest, DiamondIsOneClusterInProgramOrder) {  // seed: external producers
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f,
                       Begin({F32({4}), F32({4}), F32({4}), F32({4})}, {F32({4})}));
  ASSERT_OK_AND_ASSIGN(Value * shared, f.Add(f.Parameter(0), f.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * left, f.Multiply(shared, f.Parameter(2)));
  ASSERT_OK_AND_ASSIGN(Value * right, f.Add(shared, f.Parameter(3)));
  ASSERT_OK_AND_ASSIGN(Value * product, f.Multiply(left, right));
  ASSERT_OK(f.Return({product}));
  const FusionPlan& plan = Finish();

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kElementwise);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({shared, left, right, product}));
  EXPECT_EQ(plan.clusters()[0].root(), product->defining_op());
}

TEST_F(FusionPlanTest, BroadcastSourceProducerIsItsOwnItem) {  // seed: broadcast source order
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, Begin({F32({4, 4}), F32({4})}, {F32({4, 4})}));
  ASSERT_OK_AND_ASSIGN(Value * row_product, f.Multiply(f.Parameter(1), f.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * row_broadcast, f.BroadcastInDim(row_product, F32({4, 4}), {0}));
  ASSERT_OK_AND_ASSIGN(Value * sum, f.Add(f.Parameter(0), row_broadcast));
  ASSERT_OK_AND_ASSIGN(Value * product, f.Multiply(sum, f.Parameter(0)));
  ASSERT_OK(f.Return({product}));
  const FusionPlan& plan = Finish();

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kElementwise);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({sum, product}));
  EXPECT_EQ(AsVector(plan.elided()), Ops({row_broadcast}));
  EXPECT_TRUE(plan.IsElided(row_broadcast->defining_op()));
  EXPECT_FALSE(plan.IsElided(sum->defining_op()));
  EXPECT_EQ(plan.ClusterOf(row_product->defining_op()), nullptr);
  EXPECT_EQ(plan.ClusterOf(row_broadcast->defining_op()), nullptr);
  EXPECT_EQ(plan.ToText(), "elementwise: add, multiply\nelided: broadcast_in_dim\n");
}

TEST_F(FusionPlanTest, ChainOfFiveOpsIsOneCluster) {
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, Begin({F32({2, 3}), F32({2, 3})}, {F32({2, 3})}));
  ASSERT_OK_AND_ASSIGN(Value * a, f.Add(f.Parameter(0), f.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * b, f.Exponential(a));
  ASSERT_OK_AND_ASSIGN(Value * c, f.Multiply(b, f.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * d, f.Tanh(c));
  ASSERT_OK_AND_ASSIGN(Value * e, f.Subtract(d, f.Parameter(0)));
  ASSERT_OK(f.Return({e}));
  const FusionPlan& plan = Finish();

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({a, b, c, d, e}));
}

TEST_F(FusionPlanTest, FusionRejectedWhenIntermediateFeedsReduce) {
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, Begin({F32({8}), F32({8})}, {F32({}), F32({8})}));
  ASSERT_OK_AND_ASSIGN(Value * e, f.Exponential(f.Parameter(0)));
  ASSERT_OK_AND_ASSIGN(Value * zero, f.ConstantScalar(ElementType::kF32, 0.0));
  ASSERT_OK_AND_ASSIGN(Value * total, f.Reduce(e, zero, F32({}), "sum", {0}));
  ASSERT_OK_AND_ASSIGN(Value * scaled, f.Multiply(e, f.Parameter(1)));
  ASSERT_OK(f.Return({total, scaled}));
  const FusionPlan& plan = Finish();

  // exp is read by the reduce and by the multiply: fused into neither.
  EXPECT_THAT(plan.clusters(), IsEmpty());
  EXPECT_THAT(plan.elided(), IsEmpty());
}

TEST_F(FusionPlanTest, IntermediateConsumedByTwoClustersStaysSingle) {
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f,
                       Begin({F32({4}), F32({4})}, {F32({4}), F32({4})}));
  ASSERT_OK_AND_ASSIGN(Value * shared, f.Add(f.Parameter(0), f.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * e, f.Exponential(shared));
  ASSERT_OK_AND_ASSIGN(Value * t, f.Tanh(e));
  ASSERT_OK_AND_ASSIGN(Value * n, f.Negate(shared));
  ASSERT_OK_AND_ASSIGN(Value * a, f.Abs(n));
  ASSERT_OK(f.Return({t, a}));
  const FusionPlan& plan = Finish();

  ASSERT_EQ(plan.clusters().size(), 2u);  // ordered by root position: tanh before abs
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({e, t}));
  EXPECT_EQ(AsVector(plan.clusters()[1].ops), Ops({n, a}));
  EXPECT_EQ(plan.ClusterOf(shared->defining_op()), nullptr);
}

TEST_F(FusionPlanTest, DifferentShapesDoNotFuse) {
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f,
                       Begin({F32({}), F32({}), F32({4}), F32({4})}, {F32({4})}));
  ASSERT_OK_AND_ASSIGN(Value * low, f.Add(f.Parameter(0), f.Parameter(1)));  // rank 0
  ASSERT_OK_AND_ASSIGN(Value * clamped, f.Clamp(low, f.Parameter(2), f.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * product, f.Multiply(clamped, f.Parameter(3)));
  ASSERT_OK(f.Return({product}));
  const FusionPlan& plan = Finish();

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({clamped, product}));
  EXPECT_EQ(plan.ClusterOf(low->defining_op()), nullptr);
}

TEST_F(FusionPlanTest, ConvertFusesAcrossElementTypes) {
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, Begin({F32({4}), F32({4})}, {F32({4})}));
  ASSERT_OK_AND_ASSIGN(Value * half, f.Convert(f.Parameter(0), ElementType::kF16));
  ASSERT_OK_AND_ASSIGN(Value * back, f.Convert(half, ElementType::kF32));
  ASSERT_OK_AND_ASSIGN(Value * sum, f.Add(back, f.Parameter(1)));
  ASSERT_OK(f.Return({sum}));
  const FusionPlan& plan = Finish();

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({half, back, sum}));
}

TEST_F(FusionPlanTest, DotEpilogueWithBiasActivationAndScale) {
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f,
                       Begin({F32({4, 8}), F32({8, 16}), F32({16})}, {F32({4, 16})}));
  ASSERT_OK_AND_ASSIGN(Value * dot,
                       f.DotGeneral(f.Parameter(0), f.Parameter(1), F32({4, 16}), {1}, {0}, {}, {}));
  ASSERT_OK_AND_ASSIGN(Value * bias, f.BroadcastInDim(f.Parameter(2), F32({4, 16}), {1}));
  ASSERT_OK_AND_ASSIGN(Value * biased, f.Add(dot, bias));
  ASSERT_OK_AND_ASSIGN(Value * act, f.Tanh(biased));
  ASSERT_OK_AND_ASSIGN(Value * zero, f.ConstantScalar(ElementType::kF32, 0.0));
  ASSERT_OK_AND_ASSIGN(Value * zeros, f.BroadcastInDim(zero, F32({4, 16}), {}));
  ASSERT_OK_AND_ASSIGN(Value * relu, f.Maximum(act, zeros));
  ASSERT_OK_AND_ASSIGN(Value * half, f.ConstantScalar(ElementType::kF32, 0.5));
  ASSERT_OK_AND_ASSIGN(Value * halves, f.BroadcastInDim(half, F32({4, 16}), {}));
  ASSERT_OK_AND_ASSIGN(Value * scaled, f.Multiply(relu, halves));
  ASSERT_OK_AND_ASSIGN(Value * gate, f.Logistic(scaled));
  ASSERT_OK(f.Return({gate}));
  const FusionPlan& plan = Finish();

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kDotEpilogue);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({dot, biased, act, relu, scaled, gate}));
  EXPECT_EQ(AsVector(plan.elided()), Ops({bias, zeros, halves}));
}

TEST_F(FusionPlanTest, DotEpilogueLeavesIndependentOpsOut) {
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, Begin({F32({4, 8}), F32({8, 4}), F32({4, 4})},
                                                {F32({4, 4})}));
  ASSERT_OK_AND_ASSIGN(Value * dot,
                       f.DotGeneral(f.Parameter(0), f.Parameter(1), F32({4, 4}), {1}, {0}, {}, {}));
  ASSERT_OK_AND_ASSIGN(Value * square, f.Multiply(f.Parameter(2), f.Parameter(2)));
  ASSERT_OK_AND_ASSIGN(Value * sum, f.Add(dot, square));
  ASSERT_OK_AND_ASSIGN(Value * act, f.Logistic(sum));
  ASSERT_OK(f.Return({act}));
  const FusionPlan& plan = Finish();

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kDotEpilogue);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({dot, sum, act}));
  EXPECT_EQ(plan.ClusterOf(square->defining_op()), nullptr);
}

TEST_F(FusionPlanTest, DotWithoutEpilogueIsNotACluster) {
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, Begin({F32({4, 8}), F32({8, 4})}, {F32({4, 4}),
                                                                            F32({4, 4})}));
  ASSERT_OK_AND_ASSIGN(Value * dot,
                       f.DotGeneral(f.Parameter(0), f.Parameter(1), F32({4, 4}), {1}, {0}, {}, {}));
  ASSERT_OK_AND_ASSIGN(Value * act, f.Tanh(dot));
  ASSERT_OK(f.Return({dot, act}));  // the dot's result escapes: no epilogue
  const FusionPlan& plan = Finish();
  EXPECT_THAT(plan.clusters(), IsEmpty());
}

TEST_F(FusionPlanTest, ReductionInputFusesElementwiseProducers) {
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, Begin({F32({4, 8}), F32({4, 8})}, {F32({4})}));
  ASSERT_OK_AND_ASSIGN(Value * diff, f.Subtract(f.Parameter(0), f.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * e, f.Exponential(diff));
  ASSERT_OK_AND_ASSIGN(Value * zero, f.ConstantScalar(ElementType::kF32, 0.0));
  ASSERT_OK_AND_ASSIGN(Value * total, f.Reduce(e, zero, F32({4}), "sum", {1}));
  ASSERT_OK(f.Return({total}));
  const FusionPlan& plan = Finish();

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kReductionInput);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({diff, e, total}));
  // The reducer body is part of the reduce, never a cluster member.
  const Block* body = total->defining_op()->region(0)->entry_block();
  EXPECT_EQ(plan.ClusterOf(body->operations()[0].get()), nullptr);
}

TEST_F(FusionPlanTest, ReturnedBroadcastIsNotElided) {
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, Begin({F32({4}), F32({4, 4})}, {F32({4, 4}),
                                                                        F32({4, 4})}));
  ASSERT_OK_AND_ASSIGN(Value * wide, f.BroadcastInDim(f.Parameter(0), F32({4, 4}), {1}));
  ASSERT_OK_AND_ASSIGN(Value * sum, f.Add(wide, f.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * act, f.Tanh(sum));
  ASSERT_OK(f.Return({wide, act}));
  const FusionPlan& plan = Finish();

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({sum, act}));
  EXPECT_THAT(plan.elided(), IsEmpty());
  EXPECT_FALSE(plan.IsElided(wide->defining_op()));
}

TEST_F(FusionPlanTest, BroadcastIntoDotOrSingleOps) {
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, Begin({F32({8}), F32({8, 4}), F32({4, 8})},
                                                {F32({4, 4}), F32({4, 8})}));
  // Read by a dot_general: materialized.
  ASSERT_OK_AND_ASSIGN(Value * rows, f.BroadcastInDim(f.Parameter(0), F32({4, 8}), {1}));
  ASSERT_OK_AND_ASSIGN(Value * dot,
                       f.DotGeneral(rows, f.Parameter(1), F32({4, 4}), {1}, {0}, {}, {}));
  // Read by a single elementwise op: elided (elementwise_single reads through index arithmetic).
  ASSERT_OK_AND_ASSIGN(Value * rows2, f.BroadcastInDim(f.Parameter(0), F32({4, 8}), {1}));
  ASSERT_OK_AND_ASSIGN(Value * sum, f.Add(rows2, f.Parameter(2)));
  ASSERT_OK(f.Return({dot, sum}));
  const FusionPlan& plan = Finish();

  EXPECT_THAT(plan.clusters(), IsEmpty());
  EXPECT_EQ(AsVector(plan.elided()), Ops({rows2}));
}

TEST_F(FusionPlanTest, OpsInsideWhileBodiesAreNeverClustered) {
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, Begin({F32({4})}, {F32({4})}));
  ASSERT_OK_AND_ASSIGN(Value * start, f.Exponential(f.Parameter(0)));
  ASSERT_OK_AND_ASSIGN(
      std::vector<Value*> results,
      f.While(
          {start},
          [](FunctionBuilder& cond, std::span<Value* const> args) -> Status {
            ACCY_ASSIGN_OR_RETURN(Value * zero, cond.ConstantScalar(ElementType::kF32, 0.0));
            ACCY_ASSIGN_OR_RETURN(Value * first, cond.Slice(args[0], {0}, {1}, {1}));
            ACCY_ASSIGN_OR_RETURN(Value * scalar, cond.Reshape(first, F32({})));
            ACCY_ASSIGN_OR_RETURN(Value * more, cond.Compare(scalar, zero, "GT"));
            return cond.Return({more});
          },
          [](FunctionBuilder& body, std::span<Value* const> args) -> Status {
            ACCY_ASSIGN_OR_RETURN(Value * a, body.Add(args[0], args[0]));
            ACCY_ASSIGN_OR_RETURN(Value * b, body.Multiply(a, args[0]));
            ACCY_ASSIGN_OR_RETURN(Value * c, body.Negate(b));
            return body.Return({c});
          }));
  ASSERT_OK_AND_ASSIGN(Value * out, f.Tanh(results[0]));
  ASSERT_OK(f.Return({out}));
  const FusionPlan& plan = Finish();

  // exp feeds the while (not fusable); tanh reads the while result: nothing fuses, and the
  // body's add/multiply/negate chain belongs to the while.
  EXPECT_THAT(plan.clusters(), IsEmpty());
  const Operation* loop = results[0]->defining_op();
  EXPECT_TRUE(RegionsAreOpaque(*loop));
  for (const auto& op : loop->region(1)->entry_block()->operations()) {
    EXPECT_EQ(plan.ClusterOf(op.get()), nullptr);
  }
}

// h_k = tanh(dot(x, W_k) + h_{k+1}), unrolled `steps` times (an RNN-like recurrence). With
// `dots_first`, every dot_general comes before the elementwise chain in program order.
std::unique_ptr<Module> Recurrence(int steps, bool dots_first) {
  Builder builder;
  FunctionBuilder f =
      *builder.BeginFunction("main", {F32({4, 8}), F32({8, 8}), F32({4, 8})}, {F32({4, 8})});
  std::vector<Value*> dots;
  if (dots_first) {
    for (int k = 0; k < steps; ++k) {
      dots.push_back(*f.DotGeneral(f.Parameter(0), f.Parameter(1), F32({4, 8}), {1}, {0}, {}, {}));
    }
  }
  Value* h = f.Parameter(2);
  for (int k = 0; k < steps; ++k) {
    Value* dot = dots_first ? dots[static_cast<size_t>(k)]
                            : *f.DotGeneral(f.Parameter(0), f.Parameter(1), F32({4, 8}), {1},
                                            {0}, {}, {});
    h = *f.Tanh(*f.Add(dot, h));
  }
  EXPECT_OK(f.Return({h}));
  return *builder.Finish();
}

TEST(FusionPlanRecurrenceTest, EachStepIsOneDotEpilogue) {
  for (bool dots_first : {false, true}) {
    SCOPED_TRACE(dots_first);
    std::unique_ptr<Module> module = Recurrence(40, dots_first);
    const Function& function = *module->functions()[0];
    ASSERT_OK_AND_ASSIGN(PlanPtr plan, Plan(function));
    // Each step's add and tanh need the step's dot_general, and the previous h is the add's
    // other input: one dot epilogue [dot, add, tanh] per step, ordered by step.
    ASSERT_EQ(plan->clusters().size(), 40u);
    for (const FusionCluster& cluster : plan->clusters()) {
      EXPECT_EQ(cluster.kind, ClusterKind::kDotEpilogue);
      ASSERT_EQ(cluster.ops.size(), 3u);
      EXPECT_EQ(cluster.ops[0]->kind(), OpKind::kDotGeneral);
      EXPECT_EQ(cluster.ops[1]->kind(), OpKind::kAdd);
      EXPECT_EQ(cluster.ops[2]->kind(), OpKind::kTanh);
    }
    CheckStorage(function, *plan);
  }
}

TEST(FusionPredicatesTest, FusableAndOpaqueOps) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f,
                       builder.BeginFunction("main", {F32({4}), F32({4})}, {F32({4})}));
  ASSERT_OK_AND_ASSIGN(Value * sum, f.Add(f.Parameter(0), f.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * wide, f.BroadcastInDim(sum, F32({2, 4}), {1}));
  ASSERT_OK_AND_ASSIGN(Value * zero, f.ConstantScalar(ElementType::kF32, 0.0));
  ASSERT_OK_AND_ASSIGN(Value * total, f.Reduce(wide, zero, F32({4}), "sum", {0}));
  ASSERT_OK(f.Return({total}));
  EXPECT_TRUE(IsFusableElementwiseOp(*sum->defining_op()));
  EXPECT_FALSE(IsFusableElementwiseOp(*wide->defining_op()));
  EXPECT_FALSE(IsFusableElementwiseOp(*zero->defining_op()));
  EXPECT_FALSE(IsFusableElementwiseOp(*total->defining_op()));
  EXPECT_TRUE(RegionsAreOpaque(*total->defining_op()));
  EXPECT_FALSE(RegionsAreOpaque(*sum->defining_op()));
  EXPECT_EQ(ClusterKindName(ClusterKind::kElementwise), "elementwise");
  EXPECT_EQ(ClusterKindName(ClusterKind::kDotEpilogue), "dot_epilogue");
  EXPECT_EQ(ClusterKindName(ClusterKind::kReductionInput), "reduction_input");
  EXPECT_EQ(ClusterKindName(ClusterKind::kRowPipeline), "row_pipeline");
  EXPECT_EQ(ClusterKindName(ClusterKind::kFlashAttention), "flash_attention");
}

// A chain of `count` elementwise ops (alternating add and multiply with the parameter).
std::unique_ptr<Module> ElementwiseChain(int count) {
  Builder builder;
  FunctionBuilder f = *builder.BeginFunction("chain", {F32({2, 3})}, {F32({2, 3})});
  Value* result = f.Parameter(0);
  for (int i = 0; i < count; ++i) {
    result = i % 2 == 0 ? *f.Add(result, f.Parameter(0)) : *f.Multiply(result, f.Parameter(0));
  }
  EXPECT_OK(f.Return({result}));
  return *builder.Finish();
}

TEST(FusionPlanStorageTest, WorkContractCoversGrowingChains) {
  for (int count : {1, 2, 6, 7, 16, 64}) {
    SCOPED_TRACE(count);
    std::unique_ptr<Module> module = ElementwiseChain(count);
    const Function& function = *module->functions()[0];
    ASSERT_OK_AND_ASSIGN(PlanPtr plan, Plan(function));
    if (count == 1) {
      EXPECT_THAT(plan->clusters(), IsEmpty());
    } else {
      ASSERT_EQ(plan->clusters().size(), 1u);
      EXPECT_EQ(plan->clusters()[0].ops.size(), static_cast<size_t>(count));
      EXPECT_EQ(plan->clusters()[0].root(), function.entry_block()->operations()[count - 1].get());
    }
    CheckStorage(function, *plan);
  }
}

// Rule 12: a chain of 300 ops is three clusters, grown back from the last op: ops 172-299 and
// 44-171 (128 each), then 0-43; the planner's work contract still covers it.
TEST(FusionPlanStorageTest, LongChainsSplitIntoClustersOfAtMost128Ops) {
  std::unique_ptr<Module> module = ElementwiseChain(300);
  const Function& function = *module->functions()[0];
  ASSERT_OK_AND_ASSIGN(PlanPtr plan, Plan(function));
  const auto& ops = function.entry_block()->operations();
  ASSERT_EQ(plan->clusters().size(), 3u);
  std::vector<std::pair<size_t, const Operation*>> got;
  for (const FusionCluster& cluster : plan->clusters()) {
    got.emplace_back(cluster.ops.size(), cluster.root());
  }
  std::vector<std::pair<size_t, const Operation*>> want = {
      {128, ops[299].get()}, {128, ops[171].get()}, {44, ops[43].get()}};
  for (const auto& [size, root] : want) {
    EXPECT_NE(std::find(got.begin(), got.end(), std::make_pair(size, root)), got.end())
        << "no cluster of " << size << " ops rooted at " << root->name();
  }
  EXPECT_EQ(FusionPlanner::kMaxClusterOps, 128u);
  CheckStorage(function, *plan);
}

TEST(FusionPlanStorageTest, RefusedAllocationIsAStatusAndLeaksNothing) {
  std::unique_ptr<Module> module = ElementwiseChain(16);
  const Function& function = *module->functions()[0];
  // What PlanFusion really allocates in all (well below the declared bound).
  uint64_t needed = 0;
  {
    passes::BoundedResource counting(std::pmr::new_delete_resource(), UINT64_MAX, UINT64_MAX);
    ASSERT_OK_AND_ASSIGN(PlanPtr plan, Plan(function, &counting));
    needed = counting.allocated_bytes();
  }
  ASSERT_OK_AND_ASSIGN(passes::WorkBounds bounds, EstimateFusionPlan(function));
  EXPECT_LE(needed, bounds.work.allocation_capacity);
  for (uint64_t budget : {uint64_t{0}, uint64_t{64}, needed / 2, needed - 1}) {
    SCOPED_TRACE(budget);
    passes::BoundedResource bounded(std::pmr::new_delete_resource(), budget, budget);
    StatusOr<FusionPlan*> plan = PlanFusion(function, &bounded);
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted) << plan.status();
    EXPECT_THAT(std::string(plan.status().message()),
                ::testing::HasSubstr("fusion plan of @chain: the memory resource refused"));
    EXPECT_EQ(bounded.live_bytes(), 0u);
  }
}

TEST(FusionPlanStorageTest, AnalysisAddsItsObjectToTheBounds) {
  std::unique_ptr<Module> module = ElementwiseChain(7);
  const Function& function = *module->functions()[0];
  ASSERT_OK_AND_ASSIGN(passes::WorkBounds plan_bounds, EstimateFusionPlan(function));
  ASSERT_OK_AND_ASSIGN(passes::WorkBounds bounds, EstimateFusionPlanAnalysis(function));
  EXPECT_GT(bounds.workspace_bytes, plan_bounds.workspace_bytes);
  EXPECT_GT(bounds.retained_storage_bytes, plan_bounds.retained_storage_bytes);
  EXPECT_EQ(bounds.work.structural_visits, plan_bounds.work.structural_visits);
  EXPECT_EQ(FusionPlanAnalysis::Contract().identity.name, "accy-fusion-plan");
  EXPECT_EQ(FusionPlanAnalysis::Contract().estimate, &EstimateFusionPlanAnalysis);
}

}  // namespace
}  // namespace accy
