// Builder and verifier tests for sort (StableHLO spec "sort") and top_k (CHLO "top_k"): result
// types and stored attributes of valid ops, and one must-fail case per constraint (inputs,
// shapes, dimension, comparator arity, argument and result types, k and rank), each checked for
// code, message and an unchanged block.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ir/builder_test_util.h"
#include "tests/test_util.h"

namespace accy::ir_test {
namespace {

using SortBuilderTest = BuilderTest;

Status LessOnFirst(FunctionBuilder& b, std::span<Value* const> a) {
  ACCY_ASSIGN_OR_RETURN(Value * less, b.Compare(a[0], a[1], "LT"));
  return b.Return({less});
}

Status ReturnsLhs(FunctionBuilder& b, std::span<Value* const> a) { return b.Return({a[0]}); }

TEST_F(SortBuilderTest, SortResultsHaveTheInputTypes) {
  FunctionBuilder f = Begin({T(kF32, {2, 5}), T(kI32, {2, 5})});
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> sorted,
                       f.Sort({f.Parameter(0), f.Parameter(1)}, -1, LessOnFirst, true));
  ASSERT_EQ(sorted.size(), 2u);
  EXPECT_EQ(sorted[0]->type(), T(kF32, {2, 5}));
  EXPECT_EQ(sorted[1]->type(), T(kI32, {2, 5}));
  const Operation* op = sorted[0]->defining_op();
  EXPECT_EQ(op->kind(), OpKind::kSort);
  EXPECT_EQ(op->GetInt("dimension"), -1);  // kept as given; -1 is the last dim
  EXPECT_EQ(op->GetBool("is_stable"), true);
  ASSERT_EQ(op->num_regions(), 1);
  EXPECT_EQ(op->region(0)->entry_block()->num_arguments(), 4);
  ASSERT_OK_AND_ASSIGN(Value * descending, f.Sort(f.Parameter(0), 0, "GT"));
  EXPECT_EQ(descending->type(), T(kF32, {2, 5}));
  const Operation* compare =
      descending->defining_op()->region(0)->entry_block()->operations().front().get();
  EXPECT_EQ(compare->GetString("comparison_direction"), "GT");
  EXPECT_EQ(compare->GetString("compare_type"), "TOTALORDER");
}

TEST_F(SortBuilderTest, SortRejectsEveryBrokenConstraint) {
  FunctionBuilder f = Begin({T(kF32, {2, 5}), T(kI32, {2, 4}), T(kF32)});
  Value* x = f.Parameter(0);
  EXPECT_REJECTED(f, f.Sort({}, 0, LessOnFirst), "sort: expected at least one input, got none");
  EXPECT_REJECTED(f, f.Sort({x, f.Parameter(1)}, 0, LessOnFirst),
                  "sort: input 1 has type tensor<2x4xi32>, expected the shape of input 0 "
                  "(tensor<2x5xf32>)");
  EXPECT_REJECTED(f, f.Sort({x}, 2, LessOnFirst),
                  "sort: dimension 2 is out of range [-2, 2) for inputs of rank 2");
  EXPECT_REJECTED(f, f.Sort({x}, -3, LessOnFirst),
                  "sort: dimension -3 is out of range [-2, 2) for inputs of rank 2");
  EXPECT_REJECTED(f, f.Sort({f.Parameter(2)}, 0, LessOnFirst),
                  "sort: dimension 0 is out of range [0, 0) for inputs of rank 0");
  EXPECT_REJECTED(f, f.Sort({x}, 0, ReturnsLhs),
                  "sort: comparator returns tensor<f32> as value 0, expected tensor<i1>");
  EXPECT_REJECTED(f, f.Sort(x, 0, "LE"),
                  "sort: direction 'LE' is not LT (ascending) or GT (descending)");
  // Region arity and argument types through the generic path (the importer's).
  const auto with_args = [&](std::vector<TensorType> args) {
    std::vector<RegionSpec> regions;
    regions.push_back(RegionSpec{std::move(args), LessOnFirst});
    return f.CreateOp(OpKind::kSort, {x}, {T(kF32, {2, 5})}, {{"dimension", int64_t{1}}},
                      std::move(regions));
  };
  EXPECT_REJECTED(f, with_args({T(kF32), T(kF32), T(kF32), T(kF32)}),
                  "sort: comparator has 4 arguments, expected 2");
  EXPECT_REJECTED(f, with_args({T(kF64), T(kF64)}),
                  "sort: comparator argument 0 has type tensor<f64>, expected tensor<f32>");
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kSort, {x}, {T(kF32, {2, 5})},
                                {{"dimension", int64_t{0}}}, {}),
                  "sort: has 0 regions, expected 1");
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kSort, {x}, {T(kF32, {2, 5})},
                                {{"dimension", int64_t{0}}, {"is_stable", int64_t{1}}},
                                {RegionSpec{{T(kF32), T(kF32)}, LessOnFirst}}),
                  "sort: attribute is_stable has the wrong kind: expected a bool");
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kSort, {x}, {T(kF32, {2, 5})}, {},
                                {RegionSpec{{T(kF32), T(kF32)}, LessOnFirst}}),
                  "sort: missing attribute dimension");
}

TEST_F(SortBuilderTest, TopKHasValuesAndI32IndicesWithLastDimK) {
  FunctionBuilder f = Begin({T(kBF16, {3, 4, 7})});
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> top, f.TopK(f.Parameter(0), 3));
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0]->type(), T(kBF16, {3, 4, 3}));
  EXPECT_EQ(top[1]->type(), T(kI32, {3, 4, 3}));
  EXPECT_EQ(top[0]->defining_op()->GetInt("k"), 3);
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> all, f.TopK(f.Parameter(0), 7));
  EXPECT_EQ(all[1]->type(), T(kI32, {3, 4, 7}));
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> none, f.TopK(f.Parameter(0), 0));
  EXPECT_EQ(none[0]->type(), T(kBF16, {3, 4, 0}));
}

TEST_F(SortBuilderTest, TopKRejectsKOutOfRangeAndRankZero) {
  FunctionBuilder f = Begin({T(kF32, {2, 5}), T(kF32)});
  EXPECT_REJECTED(f, f.TopK(f.Parameter(0), 6),
                  "chlo.top_k: k = 6 is out of range [0, 5] (the size of the last dim of "
                  "tensor<2x5xf32>)");
  EXPECT_REJECTED(f, f.TopK(f.Parameter(0), -1), "top_k: k = -1 is out of range [0, 5]");
  EXPECT_REJECTED(f, f.TopK(f.Parameter(1), 1),
                  "top_k: operand has type tensor<f32>, expected rank >= 1");
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kTopK, {f.Parameter(0)},
                                {T(kF32, {2, 2}), T(kI64, {2, 2})}, {{"k", int64_t{2}}}),
                  "top_k: result 1 has type tensor<2x2xi64>, expected tensor<2x2xi32>");
}

}  // namespace
}  // namespace accy::ir_test
