// Row pipelines (softmax, log-softmax, layer norm, RMS norm) and flash attention, with their
// negative cases, each also re-planned over exactly its declared workspace.
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "accy/builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/fusion/fusion_plan.h"
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
using ::testing::IsEmpty;

constexpr ElementType kF32 = ElementType::kF32;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The values of a softmax over dim `dim` of `x` (dims `dims`), in program order.
struct Softmax {
  Value* max;
  Value* max_broadcast;
  Value* shifted;
  Value* exp;
  Value* sum;
  Value* sum_broadcast;
  Value* probs;
};

StatusOr<Softmax> BuildSoftmax(FunctionBuilder& f, Value* x, std::vector<int64_t> dims,
                               int64_t dim) {
  std::vector<int64_t> reduced_dims;
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i) {
    if (i == dim) continue;
    reduced_dims.push_back(dims[static_cast<size_t>(i)]);
    kept.push_back(i);
  }
  Softmax s;
  ACCY_ASSIGN_OR_RETURN(Value * low, f.ConstantScalar(kF32, kNegInf));
  ACCY_ASSIGN_OR_RETURN(s.max, f.Reduce(x, low, F32(reduced_dims), "max", {dim}));
  ACCY_ASSIGN_OR_RETURN(s.max_broadcast, f.BroadcastInDim(s.max, F32(dims), kept));
  ACCY_ASSIGN_OR_RETURN(s.shifted, f.Subtract(x, s.max_broadcast));
  ACCY_ASSIGN_OR_RETURN(s.exp, f.Exponential(s.shifted));
  ACCY_ASSIGN_OR_RETURN(Value * zero, f.ConstantScalar(kF32, 0.0));
  ACCY_ASSIGN_OR_RETURN(s.sum, f.Reduce(s.exp, zero, F32(reduced_dims), "sum", {dim}));
  ACCY_ASSIGN_OR_RETURN(s.sum_broadcast, f.BroadcastInDim(s.sum, F32(dims), kept));
  ACCY_ASSIGN_OR_RETURN(s.probs, f.Divide(s.exp, s.sum_broadcast));
  return s;
}

// Owns the module of one function "main" and its plan.
struct Planned {
  std::unique_ptr<Module> module;
  PlanPtr plan{nullptr, {nullptr}};
  const Function& function() const { return *module->functions()[0]; }
};

Planned Finish(Builder& builder) {
  Planned planned;
  StatusOr<std::unique_ptr<Module>> module = builder.Finish();
  EXPECT_OK(module.status());
  planned.module = std::move(*module);
  StatusOr<PlanPtr> plan = Plan(planned.function());
  EXPECT_OK(plan.status());
  planned.plan = std::move(*plan);
  CheckStorage(planned.function(), *planned.plan);
  return planned;
}

TEST(RowPipelineTest, SoftmaxOverLastDim) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("main", {F32({2, 8})},
                                                                {F32({2, 8})}));
  ASSERT_OK_AND_ASSIGN(Softmax s, BuildSoftmax(f, f.Parameter(0), {2, 8}, 1));
  ASSERT_OK(f.Return({s.probs}));
  Planned planned = Finish(builder);
  const FusionPlan& plan = *planned.plan;

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kRowPipeline);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({s.max, s.shifted, s.exp, s.sum, s.probs}));
  EXPECT_EQ(AsVector(plan.elided()), Ops({s.max_broadcast, s.sum_broadcast}));
  EXPECT_EQ(plan.ToText(),
            "row_pipeline: reduce, subtract, exponential, reduce, divide\n"
            "elided: broadcast_in_dim, broadcast_in_dim\n");
}

TEST(RowPipelineTest, SoftmaxOfAVectorAndOfAFusedInput) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f,
                       builder.BeginFunction("main", {F32({16}), F32({16})}, {F32({16})}));
  ASSERT_OK_AND_ASSIGN(Value * x, f.Add(f.Parameter(0), f.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Softmax s, BuildSoftmax(f, x, {16}, 0));
  ASSERT_OK(f.Return({s.probs}));
  Planned planned = Finish(builder);
  const FusionPlan& plan = *planned.plan;

  // The input's add is read only by the pipeline: it is recomputed per row inside it.
  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kRowPipeline);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops),
            Ops({x, s.max, s.shifted, s.exp, s.sum, s.probs}));
}

TEST(RowPipelineTest, LogSoftmax) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("main", {F32({3, 5})},
                                                                {F32({3, 5})}));
  Value* x = f.Parameter(0);
  ASSERT_OK_AND_ASSIGN(Value * low, f.ConstantScalar(kF32, kNegInf));
  ASSERT_OK_AND_ASSIGN(Value * max, f.Reduce(x, low, F32({3}), "max", {1}));
  ASSERT_OK_AND_ASSIGN(Value * max_b, f.BroadcastInDim(max, F32({3, 5}), {0}));
  ASSERT_OK_AND_ASSIGN(Value * shifted, f.Subtract(x, max_b));
  ASSERT_OK_AND_ASSIGN(Value * e, f.Exponential(shifted));
  ASSERT_OK_AND_ASSIGN(Value * zero, f.ConstantScalar(kF32, 0.0));
  ASSERT_OK_AND_ASSIGN(Value * sum, f.Reduce(e, zero, F32({3}), "sum", {1}));
  ASSERT_OK_AND_ASSIGN(Value * log, f.Log(sum));
  ASSERT_OK_AND_ASSIGN(Value * log_b, f.BroadcastInDim(log, F32({3, 5}), {0}));
  ASSERT_OK_AND_ASSIGN(Value * out, f.Subtract(shifted, log_b));
  ASSERT_OK(f.Return({out}));
  Planned planned = Finish(builder);
  const FusionPlan& plan = *planned.plan;

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kRowPipeline);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({max, shifted, e, sum, log, out}));
  EXPECT_EQ(AsVector(plan.elided()), Ops({max_b, log_b}));
}

TEST(RowPipelineTest, LayerNorm) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f,
                       builder.BeginFunction("main", {F32({2, 8}), F32({8}), F32({8})},
                                             {F32({2, 8})}));
  Value* x = f.Parameter(0);
  ASSERT_OK_AND_ASSIGN(Value * zero, f.ConstantScalar(kF32, 0.0));
  ASSERT_OK_AND_ASSIGN(Value * inv_n, f.ConstantScalar(kF32, 1.0 / 8));
  ASSERT_OK_AND_ASSIGN(Value * inv_n_b, f.BroadcastInDim(inv_n, F32({2}), {}));
  ASSERT_OK_AND_ASSIGN(Value * sum, f.Reduce(x, zero, F32({2}), "sum", {1}));
  ASSERT_OK_AND_ASSIGN(Value * mean, f.Multiply(sum, inv_n_b));
  ASSERT_OK_AND_ASSIGN(Value * mean_b, f.BroadcastInDim(mean, F32({2, 8}), {0}));
  ASSERT_OK_AND_ASSIGN(Value * centered, f.Subtract(x, mean_b));
  ASSERT_OK_AND_ASSIGN(Value * square, f.Multiply(centered, centered));
  ASSERT_OK_AND_ASSIGN(Value * square_sum, f.Reduce(square, zero, F32({2}), "sum", {1}));
  ASSERT_OK_AND_ASSIGN(Value * variance, f.Multiply(square_sum, inv_n_b));
  ASSERT_OK_AND_ASSIGN(Value * eps, f.ConstantScalar(kF32, 1e-5));
  ASSERT_OK_AND_ASSIGN(Value * eps_b, f.BroadcastInDim(eps, F32({2}), {}));
  ASSERT_OK_AND_ASSIGN(Value * padded, f.Add(variance, eps_b));
  ASSERT_OK_AND_ASSIGN(Value * rstd, f.Rsqrt(padded));
  ASSERT_OK_AND_ASSIGN(Value * rstd_b, f.BroadcastInDim(rstd, F32({2, 8}), {0}));
  ASSERT_OK_AND_ASSIGN(Value * normed, f.Multiply(centered, rstd_b));
  ASSERT_OK_AND_ASSIGN(Value * gamma_b, f.BroadcastInDim(f.Parameter(1), F32({2, 8}), {1}));
  ASSERT_OK_AND_ASSIGN(Value * scaled, f.Multiply(normed, gamma_b));
  ASSERT_OK_AND_ASSIGN(Value * beta_b, f.BroadcastInDim(f.Parameter(2), F32({2, 8}), {1}));
  ASSERT_OK_AND_ASSIGN(Value * out, f.Add(scaled, beta_b));
  ASSERT_OK(f.Return({out}));
  Planned planned = Finish(builder);
  const FusionPlan& plan = *planned.plan;

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kRowPipeline);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops),
            Ops({sum, mean, centered, square, square_sum, variance, padded, rstd, normed, scaled,
                 out}));
  EXPECT_EQ(AsVector(plan.elided()), Ops({inv_n_b, mean_b, eps_b, rstd_b, gamma_b, beta_b}));
}

TEST(RowPipelineTest, RmsNorm) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("main", {F32({4, 6}), F32({6})},
                                                                {F32({4, 6})}));
  Value* x = f.Parameter(0);
  ASSERT_OK_AND_ASSIGN(Value * square, f.Multiply(x, x));
  ASSERT_OK_AND_ASSIGN(Value * zero, f.ConstantScalar(kF32, 0.0));
  ASSERT_OK_AND_ASSIGN(Value * square_sum, f.Reduce(square, zero, F32({4}), "sum", {1}));
  ASSERT_OK_AND_ASSIGN(Value * inv_n, f.ConstantScalar(kF32, 1.0 / 6));
  ASSERT_OK_AND_ASSIGN(Value * inv_n_b, f.BroadcastInDim(inv_n, F32({4}), {}));
  ASSERT_OK_AND_ASSIGN(Value * mean_square, f.Multiply(square_sum, inv_n_b));
  ASSERT_OK_AND_ASSIGN(Value * eps, f.ConstantScalar(kF32, 1e-6));
  ASSERT_OK_AND_ASSIGN(Value * eps_b, f.BroadcastInDim(eps, F32({4}), {}));
  ASSERT_OK_AND_ASSIGN(Value * padded, f.Add(mean_square, eps_b));
  ASSERT_OK_AND_ASSIGN(Value * rms, f.Rsqrt(padded));
  ASSERT_OK_AND_ASSIGN(Value * rms_b, f.BroadcastInDim(rms, F32({4, 6}), {0}));
  ASSERT_OK_AND_ASSIGN(Value * normed, f.Multiply(x, rms_b));
  ASSERT_OK_AND_ASSIGN(Value * gamma_b, f.BroadcastInDim(f.Parameter(1), F32({4, 6}), {1}));
  ASSERT_OK_AND_ASSIGN(Value * out, f.Multiply(normed, gamma_b));
  ASSERT_OK(f.Return({out}));
  Planned planned = Finish(builder);
  const FusionPlan& plan = *planned.plan;

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kRowPipeline);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops),
            Ops({square, square_sum, mean_square, padded, rms, normed, out}));
  EXPECT_EQ(AsVector(plan.elided()), Ops({inv_n_b, eps_b, rms_b, gamma_b}));
}

TEST(RowPipelineTest, ReduceOverANonLastDimIsNotARowPipeline) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("main", {F32({4, 8})},
                                                                {F32({4, 8})}));
  ASSERT_OK_AND_ASSIGN(Softmax s, BuildSoftmax(f, f.Parameter(0), {4, 8}, 0));
  ASSERT_OK(f.Return({s.probs}));
  Planned planned = Finish(builder);
  const FusionPlan& plan = *planned.plan;

  // exp is read by the column sum and the divide: only subtract -> exp fuses.
  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kElementwise);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({s.shifted, s.exp}));
  EXPECT_EQ(AsVector(plan.elided()), Ops({s.max_broadcast, s.sum_broadcast}));
}

TEST(RowPipelineTest, EscapingRowStatisticBreaksThePipeline) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("main", {F32({2, 8})},
                                                                {F32({2, 8}), F32({2})}));
  ASSERT_OK_AND_ASSIGN(Softmax s, BuildSoftmax(f, f.Parameter(0), {2, 8}, 1));
  ASSERT_OK(f.Return({s.probs, s.sum}));  // the row sums are returned too
  Planned planned = Finish(builder);
  const FusionPlan& plan = *planned.plan;

  // The sum leaves the function, so it cannot be inside the divide's pipeline, and exp (read by
  // the sum and the divide) cannot be inside either. What fuses is max -> subtract -> exp, a row
  // pipeline rooted at exp; the sum stays a single reduce and the divide a single op.
  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kRowPipeline);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({s.max, s.shifted, s.exp}));
}

// Attention over [batch=1, heads=2, q=4, k=6] with head dim 8.
struct Attention {
  Value* qk;
  Value* scale_b;
  Value* scaled;
  Value* mask_add;  // null without a mask
  Softmax softmax;
  Value* out;
};

StatusOr<Attention> BuildAttention(FunctionBuilder& f, bool with_mask, bool divide_scale) {
  Attention a;
  ACCY_ASSIGN_OR_RETURN(a.qk, f.DotGeneral(f.Parameter(0), f.Parameter(1), F32({1, 2, 4, 6}),
                                           {3}, {3}, {0, 1}, {0, 1}));
  ACCY_ASSIGN_OR_RETURN(Value * scale, f.ConstantScalar(kF32, 1.0 / std::sqrt(8.0)));
  ACCY_ASSIGN_OR_RETURN(a.scale_b, f.BroadcastInDim(scale, F32({1, 2, 4, 6}), {}));
  if (divide_scale) {
    ACCY_ASSIGN_OR_RETURN(a.scaled, f.Divide(a.qk, a.scale_b));
  } else {
    ACCY_ASSIGN_OR_RETURN(a.scaled, f.Multiply(a.scale_b, a.qk));
  }
  Value* logits = a.scaled;
  a.mask_add = nullptr;
  if (with_mask) {
    ACCY_ASSIGN_OR_RETURN(a.mask_add, f.Add(f.Parameter(3), a.scaled));
    logits = a.mask_add;
  }
  ACCY_ASSIGN_OR_RETURN(a.softmax, BuildSoftmax(f, logits, {1, 2, 4, 6}, 3));
  ACCY_ASSIGN_OR_RETURN(a.out, f.DotGeneral(a.softmax.probs, f.Parameter(2), F32({1, 2, 4, 8}),
                                            {3}, {2}, {0, 1}, {0, 1}));
  return a;
}

std::vector<TensorType> AttentionParameters() {
  return {F32({1, 2, 4, 8}), F32({1, 2, 6, 8}), F32({1, 2, 6, 8}), F32({1, 2, 4, 6})};
}

TEST(FlashAttentionTest, ScaleMaskSoftmaxBetweenTwoDots) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f,
                       builder.BeginFunction("main", AttentionParameters(), {F32({1, 2, 4, 8})}));
  ASSERT_OK_AND_ASSIGN(Attention a, BuildAttention(f, /*with_mask=*/true, false));
  ASSERT_OK(f.Return({a.out}));
  Planned planned = Finish(builder);
  const FusionPlan& plan = *planned.plan;

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kFlashAttention);
  const Softmax& s = a.softmax;
  EXPECT_EQ(AsVector(plan.clusters()[0].ops),
            Ops({a.qk, a.scaled, a.mask_add, s.max, s.shifted, s.exp, s.sum, s.probs, a.out}));
  EXPECT_EQ(AsVector(plan.elided()), Ops({a.scale_b, s.max_broadcast, s.sum_broadcast}));
}

TEST(FlashAttentionTest, WithoutMaskAndWithADivideScale) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f,
                       builder.BeginFunction("main", AttentionParameters(), {F32({1, 2, 4, 8})}));
  ASSERT_OK_AND_ASSIGN(Attention a, BuildAttention(f, /*with_mask=*/false, true));
  ASSERT_OK(f.Return({a.out}));
  Planned planned = Finish(builder);
  const FusionPlan& plan = *planned.plan;

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kFlashAttention);
  const Softmax& s = a.softmax;
  EXPECT_EQ(AsVector(plan.clusters()[0].ops),
            Ops({a.qk, a.scaled, s.max, s.shifted, s.exp, s.sum, s.probs, a.out}));
}

TEST(FlashAttentionTest, RejectedWhenProbabilitiesEscape) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f,
                       builder.BeginFunction("main", AttentionParameters(),
                                             {F32({1, 2, 4, 8}), F32({1, 2, 4, 6})}));
  ASSERT_OK_AND_ASSIGN(Attention a, BuildAttention(f, /*with_mask=*/true, false));
  ASSERT_OK(f.Return({a.out, a.softmax.probs}));
  Planned planned = Finish(builder);
  const FusionPlan& plan = *planned.plan;

  // Both dot_generals stay single; scale, mask and softmax form a row pipeline.
  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kRowPipeline);
  const Softmax& s = a.softmax;
  EXPECT_EQ(AsVector(plan.clusters()[0].ops),
            Ops({a.scaled, a.mask_add, s.max, s.shifted, s.exp, s.sum, s.probs}));
  EXPECT_EQ(plan.ClusterOf(a.qk->defining_op()), nullptr);
  EXPECT_EQ(plan.ClusterOf(a.out->defining_op()), nullptr);
}

TEST(FlashAttentionTest, RejectedWithoutScale) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f,
                       builder.BeginFunction("main", AttentionParameters(), {F32({1, 2, 4, 8})}));
  ASSERT_OK_AND_ASSIGN(Value * qk, f.DotGeneral(f.Parameter(0), f.Parameter(1),
                                                F32({1, 2, 4, 6}), {3}, {3}, {0, 1}, {0, 1}));
  ASSERT_OK_AND_ASSIGN(Softmax s, BuildSoftmax(f, qk, {1, 2, 4, 6}, 3));
  ASSERT_OK_AND_ASSIGN(Value * out, f.DotGeneral(s.probs, f.Parameter(2), F32({1, 2, 4, 8}),
                                                 {3}, {2}, {0, 1}, {0, 1}));
  ASSERT_OK(f.Return({out}));
  Planned planned = Finish(builder);
  const FusionPlan& plan = *planned.plan;

  ASSERT_EQ(plan.clusters().size(), 1u);
  EXPECT_EQ(plan.clusters()[0].kind, ClusterKind::kRowPipeline);
  EXPECT_EQ(AsVector(plan.clusters()[0].ops), Ops({s.max, s.shifted, s.exp, s.sum, s.probs}));
}

}  // namespace
}  // namespace accy
