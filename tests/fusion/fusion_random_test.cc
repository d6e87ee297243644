// Property test: over many random programs (elementwise ops on three shapes, broadcasts between
// them, row and column reduces, dot_generals, several returned values), every plan keeps the
// cluster invariants of fusion_plan.h, is deterministic, and meets its work contract.
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "src/fusion/fusion_plan.h"
#include "tests/fusion/fusion_test_util.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using fusion_test::CheckStorage;
using fusion_test::ExpectSamePlan;
using fusion_test::F32;
using fusion_test::Plan;
using fusion_test::PlanPtr;

enum Shape { kFull, kRow, kColumn, kScalar, kShapes };  // [4,8], [4], [8], []

// A random program over parameters full, full, row, column, scalar and an [8,8] weight.
std::unique_ptr<Module> RandomProgram(std::mt19937& rng, int ops) {
  Builder builder;
  FunctionBuilder f = *builder.BeginFunction(
      "main", {F32({4, 8}), F32({4, 8}), F32({4}), F32({8}), F32({}), F32({8, 8})},
      {F32({4, 8}), F32({4, 8}), F32({4})});
  std::vector<Value*> pool[kShapes] = {
      {f.Parameter(0), f.Parameter(1)}, {f.Parameter(2)}, {f.Parameter(3)}, {f.Parameter(4)}};
  auto pick = [&](int shape) { return pool[shape][rng() % pool[shape].size()]; };
  Value* zero = *f.ConstantScalar(ElementType::kF32, 0.0);
  for (int i = 0; i < ops; ++i) {
    const int shape = static_cast<int>(rng() % kShapes);
    Value* made = nullptr;
    int made_shape = shape;
    switch (rng() % 8) {
      case 0:
        made = *(rng() % 2 ? f.Exponential(pick(shape)) : f.Tanh(pick(shape)));
        break;
      case 1:
      case 2:
        made = *(rng() % 2 ? f.Add(pick(shape), pick(shape)) : f.Multiply(pick(shape), pick(shape)));
        break;
      case 3:  // broadcasts into the full shape (row, column or scalar) or scalar into a row
        if (shape == kFull) {
          made = *f.BroadcastInDim(pick(kRow), F32({4, 8}), {0});
        } else if (shape == kColumn) {
          made = *f.BroadcastInDim(pick(kColumn), F32({4, 8}), {1});
          made_shape = kFull;
        } else if (shape == kRow) {
          made = *f.BroadcastInDim(pick(kScalar), F32({4}), {});
        } else {
          made = *f.BroadcastInDim(pick(kScalar), F32({4, 8}), {});
          made_shape = kFull;
        }
        break;
      case 4:  // row reduce (last dim) or column reduce (dim 0)
        if (rng() % 3 != 0) {
          made = *f.Reduce(pick(kFull), zero, F32({4}), rng() % 2 ? "sum" : "max", {1});
          made_shape = kRow;
        } else {
          made = *f.Reduce(pick(kFull), zero, F32({8}), "sum", {0});
          made_shape = kColumn;
        }
        break;
      case 5:
        made = *f.DotGeneral(pick(kFull), f.Parameter(5), F32({4, 8}), {1}, {0}, {}, {});
        made_shape = kFull;
        break;
      default:
        made = *f.Subtract(pick(shape), pick(shape));
        break;
    }
    pool[made_shape].push_back(made);
  }
  EXPECT_OK(f.Return({pool[kFull].back(), pick(kFull), pick(kRow)}));
  return *builder.Finish();
}

// The invariants every plan keeps (fusion_plan.h rules 1-9).
void CheckInvariants(const Function& function, const FusionPlan& plan) {
  std::vector<const Operation*> order;  // top-level ops in program order
  for (const auto& op : function.entry_block()->operations()) order.push_back(op.get());
  auto position = [&](const Operation* op) {
    for (size_t i = 0; i < order.size(); ++i) {
      if (order[i] == op) return static_cast<int64_t>(i);
    }
    return int64_t{-1};  // nested, or not an op of this function
  };
  std::set<const Operation*> seen;
  int64_t last_root = -1;
  for (const FusionCluster& cluster : plan.clusters()) {
    ASSERT_GE(cluster.ops.size(), 2u);
    EXPECT_GT(position(cluster.root()), last_root) << "clusters ordered by root position";
    last_root = position(cluster.root());
    std::set<const Operation*> members(cluster.ops.begin(), cluster.ops.end());
    int64_t previous = -1;
    for (const Operation* op : cluster.ops) {
      EXPECT_TRUE(seen.insert(op).second) << "an op joins at most one cluster";
      EXPECT_GT(position(op), previous) << "program order";
      previous = position(op);
      EXPECT_EQ(plan.ClusterOf(op), &cluster);
      EXPECT_NE(op->kind(), OpKind::kBroadcastInDim);
      if (op == cluster.root()) continue;
      // Only the root's result leaves the kernel (directly, or through an elided broadcast
      // whose every user is in the cluster).
      for (const Use& use : op->result(0)->uses()) {
        if (members.count(use.user) != 0) continue;
        ASSERT_TRUE(use.user->kind() == OpKind::kBroadcastInDim && plan.IsElided(use.user))
            << ClusterKindName(cluster.kind) << ": " << op->name() << " escapes to "
            << use.user->name();
        for (const Use& inner : use.user->result(0)->uses()) {
          EXPECT_EQ(members.count(inner.user), 1u) << "row broadcast read outside its cluster";
        }
      }
    }
    const std::vector<int64_t>& root_dims = cluster.root()->result(0)->type().dims();
    int dots = 0;
    int reduces = 0;
    for (const Operation* op : cluster.ops) {
      dots += op->kind() == OpKind::kDotGeneral;
      reduces += op->kind() == OpKind::kReduce;
    }
    switch (cluster.kind) {
      case ClusterKind::kElementwise:
        for (const Operation* op : cluster.ops) {
          EXPECT_TRUE(IsFusableElementwiseOp(*op));
          EXPECT_EQ(op->result(0)->type().dims(), root_dims) << "one iteration space";
        }
        break;
      case ClusterKind::kDotEpilogue:
        EXPECT_EQ(dots, 1);
        EXPECT_EQ(cluster.ops.front()->kind(), OpKind::kDotGeneral);
        for (const Operation* op : cluster.ops) {
          EXPECT_EQ(op->result(0)->type().dims(), root_dims);
        }
        break;
      case ClusterKind::kConvolutionEpilogue:
        EXPECT_EQ(cluster.ops.front()->kind(), OpKind::kConvolution);
        EXPECT_EQ(dots, 0);
        for (const Operation* op : cluster.ops) {
          EXPECT_EQ(op->result(0)->type().dims(), root_dims);
        }
        break;
      case ClusterKind::kReduceWindowEpilogue:
        EXPECT_EQ(cluster.ops.front()->kind(), OpKind::kReduceWindow);
        EXPECT_EQ(dots, 0);
        for (const Operation* op : cluster.ops) {
          EXPECT_EQ(op->result(0)->type().dims(), root_dims);
        }
        break;
      case ClusterKind::kReductionInput:
        EXPECT_EQ(cluster.root()->kind(), OpKind::kReduce);
        EXPECT_EQ(reduces, 1);
        break;
      case ClusterKind::kRowPipeline:
        EXPECT_GE(reduces, 1);
        EXPECT_EQ(dots, 0);
        break;
      case ClusterKind::kFlashAttention:
        EXPECT_EQ(dots, 2);
        break;
    }
  }
  int64_t previous = -1;
  for (const Operation* op : plan.elided()) {
    EXPECT_EQ(op->kind(), OpKind::kBroadcastInDim);
    EXPECT_TRUE(plan.IsElided(op));
    EXPECT_GT(position(op), previous) << "elided ops in program order";
    previous = position(op);
    ASSERT_TRUE(op->result(0)->has_uses());
    for (const Use& use : op->result(0)->uses()) {
      EXPECT_TRUE(IsFusableElementwiseOp(*use.user)) << "elided broadcast read by "
                                                     << use.user->name();
      EXPECT_GE(position(use.user), 0);
    }
  }
}

TEST(FusionRandomTest, PlansKeepInvariantsAndContracts) {
  std::mt19937 rng(20240611);
  int clusters = 0;
  for (int program = 0; program < 300; ++program) {
    SCOPED_TRACE(program);
    std::unique_ptr<Module> module = RandomProgram(rng, 4 + program % 57);
    const Function& function = *module->functions()[0];
    ASSERT_OK_AND_ASSIGN(PlanPtr plan, Plan(function));
    CheckInvariants(function, *plan);
    ASSERT_OK_AND_ASSIGN(PlanPtr again, Plan(function));
    ExpectSamePlan(*plan, *again);
    CheckStorage(function, *plan);
    clusters += static_cast<int>(plan->clusters().size());
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(clusters, 300);  // the programs do fuse
}

}  // namespace
}  // namespace accy
