// Builder tests for gather and scatter (StableHLO spec sections "gather" and "scatter"): result
// types with and without batching dims, scatter's named updates and update_computation regions
// over several inputs, and the dimension-number rules that reject a program.
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

using GatherScatterBuilderTest = BuilderTest;

// Rows of a [5, 4] operand picked by [3, 1] indices: offset dim 1 keeps the row.
GatherDimensionNumbers RowGather() {
  GatherDimensionNumbers dn;
  dn.offset_dims = {1};
  dn.collapsed_slice_dims = {0};
  dn.start_index_map = {0};
  dn.index_vector_dim = 1;
  return dn;
}

// Per batch b of a [B, N, D] operand, rows picked by [B, K, 1] indices.
GatherDimensionNumbers BatchedRowGather() {
  GatherDimensionNumbers dn;
  dn.offset_dims = {2};
  dn.collapsed_slice_dims = {1};
  dn.operand_batching_dims = {0};
  dn.start_indices_batching_dims = {0};
  dn.start_index_map = {1};
  dn.index_vector_dim = 2;
  return dn;
}

// Rows of a [5, 4] input updated by [3, 1] indices with [3, 4] updates.
ScatterDimensionNumbers RowScatter() {
  ScatterDimensionNumbers dn;
  dn.update_window_dims = {1};
  dn.inserted_window_dims = {0};
  dn.scatter_dims_to_operand_dims = {0};
  dn.index_vector_dim = 1;
  return dn;
}

std::vector<OpKind> KindsOf(const Block& block) {
  std::vector<OpKind> kinds;
  for (const auto& op : block.operations()) kinds.push_back(op->kind());
  return kinds;
}

TEST_F(GatherScatterBuilderTest, GatherWithoutBatchingDimsTakesRows) {
  FunctionBuilder f = Begin({T(kF32, {5, 4}), T(kI32, {3, 1}), T(kI64, {3})});
  ASSERT_OK_AND_ASSIGN(Value * rows, f.Gather(f.Parameter(0), f.Parameter(1), RowGather(), {1, 4}));
  EXPECT_EQ(rows->type(), T(kF32, {3, 4}));
  const Operation* op = rows->defining_op();
  EXPECT_EQ(op->kind(), OpKind::kGather);
  EXPECT_EQ(op->GetInts("slice_sizes"), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(op->GetInt("index_vector_dim"), 1);
  EXPECT_EQ(op->GetBool("indices_are_sorted"), false);
  // index_vector_dim equal to the indices rank: an implicit trailing index vector of size 1.
  ASSERT_OK_AND_ASSIGN(Value * implicit,
                       f.Gather(f.Parameter(0), f.Parameter(2), RowGather(), {1, 4}, true));
  EXPECT_EQ(implicit->type(), T(kF32, {3, 4}));
  EXPECT_EQ(implicit->defining_op()->GetBool("indices_are_sorted"), true);
  // Partial rows, offset dim placed first.
  GatherDimensionNumbers dn = RowGather();
  dn.offset_dims = {0};
  ASSERT_OK_AND_ASSIGN(Value * partial, f.Gather(f.Parameter(0), f.Parameter(1), dn, {1, 2}));
  EXPECT_EQ(partial->type(), T(kF32, {2, 3}));
}

TEST_F(GatherScatterBuilderTest, GatherWithBatchingDimsKeepsTheBatchDim) {
  FunctionBuilder f = Begin({T(kF16, {3, 5, 4}), T(kU32, {3, 2, 1})});
  ASSERT_OK_AND_ASSIGN(Value * rows, f.Gather(f.Parameter(0), f.Parameter(1), BatchedRowGather(),
                                              {1, 1, 4}));
  EXPECT_EQ(rows->type(), T(kF16, {3, 2, 4}));
  EXPECT_EQ(rows->defining_op()->GetInts("operand_batching_dims"), std::vector<int64_t>{0});
  EXPECT_EQ(rows->defining_op()->GetInts("start_indices_batching_dims"),
            std::vector<int64_t>{0});
}

TEST_F(GatherScatterBuilderTest, GatherRejectsBadSliceSizes) {
  FunctionBuilder f = Begin({T(kF32, {5, 4}), T(kI32, {3, 1})});
  Value* x = f.Parameter(0);
  Value* idx = f.Parameter(1);
  EXPECT_REJECTED(f, f.Gather(x, idx, RowGather(), {2, 4}),
                  "gather: slice size of collapsed or batching dim 0 is 2, expected at most 1");
  EXPECT_REJECTED(f, f.Gather(x, idx, RowGather(), {1, 5}),
                  "gather: slice size 5 of dim 1 is outside [0, 4]");
  EXPECT_REJECTED(f, f.Gather(x, idx, RowGather(), {1}),
                  "gather: slice_sizes [1] must have one entry per operand dim (rank 2)");
}

TEST_F(GatherScatterBuilderTest, GatherRejectsBadDimensionNumbers) {
  FunctionBuilder f = Begin({T(kF32, {5, 4}), T(kI32, {3, 1}), T(kF32, {3, 1})});
  Value* x = f.Parameter(0);
  Value* idx = f.Parameter(1);
  GatherDimensionNumbers two_index_map = RowGather();
  two_index_map.start_index_map = {0, 1};
  EXPECT_REJECTED(f, f.Gather(x, idx, two_index_map, {1, 4}),
                  "gather: start_index_map [0, 1] has 2 entries, expected the index vector size 1");
  GatherDimensionNumbers not_collapsed = RowGather();
  not_collapsed.collapsed_slice_dims = {};
  EXPECT_REJECTED(f, f.Gather(x, idx, not_collapsed, {1, 4}),
                  "gather: offset_dims, collapsed_slice_dims and operand_batching_dims have 1 "
                  "entries in all, expected the operand rank 2");
  GatherDimensionNumbers offset_out_of_range = RowGather();
  offset_out_of_range.offset_dims = {2};
  EXPECT_REJECTED(f, f.Gather(x, idx, offset_out_of_range, {1, 4}),
                  "gather: offset_dims [2]: dimension 2 is out of range [0, 2)");
  GatherDimensionNumbers bad_index_vector_dim = RowGather();
  bad_index_vector_dim.index_vector_dim = 3;
  EXPECT_REJECTED(f, f.Gather(x, idx, bad_index_vector_dim, {1, 4}),
                  "gather: index_vector_dim 3 is outside [0, 2]");
  EXPECT_REJECTED(f, f.Gather(x, f.Parameter(2), RowGather(), {1, 4}),
                  "gather: indices have type tensor<3x1xf32>, expected an integer element type");
}

TEST_F(GatherScatterBuilderTest, GatherRejectsBadBatchingDims) {
  FunctionBuilder f = Begin({T(kF32, {3, 5, 4}), T(kI32, {2, 2, 1}), T(kI32, {3, 2, 1})});
  Value* x = f.Parameter(0);
  EXPECT_REJECTED(f, f.Gather(x, f.Parameter(1), BatchedRowGather(), {1, 1, 4}),
                  "gather: batching dim 0 of the operand has size 3 but indices dim 0 has size 2");
  Value* idx = f.Parameter(2);
  GatherDimensionNumbers batching_out_of_range = BatchedRowGather();
  batching_out_of_range.operand_batching_dims = {7};
  EXPECT_REJECTED(f, f.Gather(x, idx, batching_out_of_range, {1, 1, 4}),
                  "gather: operand_batching_dims [7]: dimension 7 is out of range [0, 3)");
  GatherDimensionNumbers batching_is_index_vector = BatchedRowGather();
  batching_is_index_vector.start_indices_batching_dims = {2};
  EXPECT_REJECTED(f, f.Gather(x, idx, batching_is_index_vector, {1, 1, 4}),
                  "gather: start_indices_batching_dims [2]: dimension 2 is out of range, "
                  "repeated, or equal to index_vector_dim");
  GatherDimensionNumbers collapsed_and_batching = BatchedRowGather();
  collapsed_and_batching.collapsed_slice_dims = {0};
  EXPECT_REJECTED(f, f.Gather(x, idx, collapsed_and_batching, {1, 1, 4}),
                  "gather: dimension 0 appears in both collapsed_slice_dims and "
                  "operand_batching_dims");
  EXPECT_REJECTED(f, f.Gather(x, idx, BatchedRowGather(), {2, 1, 4}),
                  "gather: slice size of collapsed or batching dim 0 is 2, expected at most 1");
}

TEST_F(GatherScatterBuilderTest, BatchingDimCountMismatchIsReportedByItsOwnRule) {
  // Dropping operand_batching_dims also breaks the rank count; the cause is the batching rule.
  FunctionBuilder f = Begin({T(kF32, {3, 5, 4}), T(kI32, {3, 2, 1}), T(kF32, {3, 2, 4})});
  GatherDimensionNumbers gather = BatchedRowGather();
  gather.operand_batching_dims = {};
  EXPECT_REJECTED(f, f.Gather(f.Parameter(0), f.Parameter(1), gather, {1, 1, 4}),
                  "gather: operand_batching_dims [] and start_indices_batching_dims [0] must "
                  "have the same size");
  ScatterDimensionNumbers scatter;
  scatter.update_window_dims = {2};
  scatter.inserted_window_dims = {1};
  scatter.scatter_indices_batching_dims = {0};
  scatter.scatter_dims_to_operand_dims = {1};
  scatter.index_vector_dim = 2;
  EXPECT_REJECTED(f, f.Scatter(f.Parameter(0), f.Parameter(1), f.Parameter(2), scatter, "add"),
                  "scatter: input_batching_dims [] and scatter_indices_batching_dims [0] must "
                  "have the same size");
}

TEST_F(GatherScatterBuilderTest, ScatterWithNamedUpdateHasTheInputType) {
  FunctionBuilder f = Begin({T(kF32, {5, 4}), T(kI32, {3, 1}), T(kF32, {3, 4})});
  ASSERT_OK_AND_ASSIGN(Value * added, f.Scatter(f.Parameter(0), f.Parameter(1), f.Parameter(2),
                                                RowScatter(), "add"));
  EXPECT_EQ(added->type(), T(kF32, {5, 4}));
  const Operation* op = added->defining_op();
  EXPECT_EQ(op->kind(), OpKind::kScatter);
  EXPECT_EQ(op->num_operands(), 3);
  ASSERT_EQ(op->num_regions(), 1);
  const Block& body = *op->region(0)->entry_block();
  ASSERT_EQ(body.num_arguments(), 2);
  EXPECT_EQ(body.argument(0)->type(), T(kF32));
  EXPECT_EQ(body.argument(1)->type(), T(kF32));
  EXPECT_EQ(KindsOf(body), (std::vector<OpKind>{OpKind::kAdd, OpKind::kReturn}));

  ASSERT_OK_AND_ASSIGN(Value * assigned, f.Scatter(f.Parameter(0), f.Parameter(1), f.Parameter(2),
                                                   RowScatter(), "assign", true, true));
  EXPECT_EQ(assigned->type(), T(kF32, {5, 4}));
  const Block& assign_body = *assigned->defining_op()->region(0)->entry_block();
  EXPECT_EQ(KindsOf(assign_body), std::vector<OpKind>{OpKind::kReturn});
  EXPECT_EQ(assign_body.terminator()->operand(0), assign_body.argument(1));
  EXPECT_EQ(assigned->defining_op()->GetBool("unique_indices"), true);

  for (const char* update : {"multiply", "maximum", "minimum"}) {
    ASSERT_OK_AND_ASSIGN(Value * y, f.Scatter(f.Parameter(0), f.Parameter(1), f.Parameter(2),
                                              RowScatter(), update));
    EXPECT_EQ(y->type(), T(kF32, {5, 4})) << update;
  }
}

TEST_F(GatherScatterBuilderTest, ScatterWithRegionUpdatesSeveralInputs) {
  FunctionBuilder f = Begin(
      {T(kF32, {5, 4}), T(kI32, {5, 4}), T(kI64, {3, 1}), T(kF32, {3, 4}), T(kI32, {3, 4})});
  auto body = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    // args: current f32, current i32, update f32, update i32.
    ACCY_ASSIGN_OR_RETURN(Value * sum, b.Add(args[0], args[2]));
    return b.Return({sum, args[3]});
  };
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> results,
                       f.Scatter({f.Parameter(0), f.Parameter(1)}, f.Parameter(2),
                                 {f.Parameter(3), f.Parameter(4)}, RowScatter(), body));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]->type(), T(kF32, {5, 4}));
  EXPECT_EQ(results[1]->type(), T(kI32, {5, 4}));
  const Operation* op = results[0]->defining_op();
  EXPECT_EQ(op, results[1]->defining_op());
  EXPECT_EQ(op->num_operands(), 5);
  const Block& region = *op->region(0)->entry_block();
  ASSERT_EQ(region.num_arguments(), 4);
  EXPECT_EQ(region.argument(0)->type(), T(kF32));
  EXPECT_EQ(region.argument(1)->type(), T(kI32));
  EXPECT_EQ(region.argument(2)->type(), T(kF32));
  EXPECT_EQ(region.argument(3)->type(), T(kI32));
}

TEST_F(GatherScatterBuilderTest, ScatterWithBatchingDimsHasTheInputType) {
  FunctionBuilder f = Begin({T(kF32, {2, 5, 4}), T(kI32, {2, 3, 1}), T(kF32, {2, 3, 4})});
  ScatterDimensionNumbers dn;
  dn.update_window_dims = {2};
  dn.inserted_window_dims = {1};
  dn.input_batching_dims = {0};
  dn.scatter_indices_batching_dims = {0};
  dn.scatter_dims_to_operand_dims = {1};
  dn.index_vector_dim = 2;
  ASSERT_OK_AND_ASSIGN(Value * y,
                       f.Scatter(f.Parameter(0), f.Parameter(1), f.Parameter(2), dn, "add"));
  EXPECT_EQ(y->type(), T(kF32, {2, 5, 4}));
  dn.input_batching_dims = {9};
  EXPECT_REJECTED(f, f.Scatter(f.Parameter(0), f.Parameter(1), f.Parameter(2), dn, "add"),
                  "scatter: input_batching_dims [9]: dimension 9 is out of range [0, 3)");
}

TEST_F(GatherScatterBuilderTest, ScatterRejectsUpdatesOfTheWrongShapeOrType) {
  FunctionBuilder f = Begin({T(kF32, {5, 4}), T(kI32, {3, 1}), T(kF32, {2, 4}), T(kI32, {3, 4}),
                             T(kF32, {3, 5}), T(kF32, {3, 1}), T(kF32, {3, 4})});
  Value* x = f.Parameter(0);
  Value* idx = f.Parameter(1);
  EXPECT_REJECTED(f, f.Scatter(x, idx, f.Parameter(2), RowScatter(), "add"),
                  "scatter: update scatter dim 0 has size 2, expected 3 (the matching "
                  "scatter_indices dim)");
  EXPECT_REJECTED(f, f.Scatter(x, idx, f.Parameter(3), RowScatter(), "add"),
                  "scatter: update 0 has type tensor<3x4xi32>, expected the element type of "
                  "input 0 and the shape of update 0");
  EXPECT_REJECTED(f, f.Scatter(x, idx, f.Parameter(4), RowScatter(), "add"),
                  "scatter: update window dim 1 has size 5, larger than the input's 4");
  EXPECT_REJECTED(f, f.Scatter(x, f.Parameter(5), f.Parameter(6), RowScatter(), "add"),
                  "scatter: indices have type tensor<3x1xf32>, expected an integer element type");
  ScatterDimensionNumbers two_dims = RowScatter();
  two_dims.scatter_dims_to_operand_dims = {0, 1};
  EXPECT_REJECTED(f, f.Scatter(x, idx, f.Parameter(6), two_dims, "add"),
                  "scatter: scatter_dims_to_operand_dims [0, 1] has 2 entries, expected the index "
                  "vector size 1");
}

TEST_F(GatherScatterBuilderTest, ScatterRejectsUnknownNamedUpdate) {
  FunctionBuilder f = Begin({T(kF32, {5, 4}), T(kI32, {3, 1}), T(kF32, {3, 4})});
  EXPECT_REJECTED(f, f.Scatter(f.Parameter(0), f.Parameter(1), f.Parameter(2), RowScatter(),
                               "replace"),
                  "scatter: unknown update 'replace' (expected assign, add, multiply, maximum or "
                  "minimum)");
}

TEST_F(GatherScatterBuilderTest, ScatterRejectsInputsOfDifferentShapesOrUnpairedUpdates) {
  FunctionBuilder f =
      Begin({T(kF32, {5, 4}), T(kI32, {5, 3}), T(kI32, {3, 1}), T(kF32, {3, 4}), T(kI32, {3, 4})});
  auto body = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    return b.Return({args[2], args[3]});
  };
  EXPECT_REJECTED(f, f.Scatter({f.Parameter(0), f.Parameter(1)}, f.Parameter(2),
                               {f.Parameter(3), f.Parameter(4)}, RowScatter(), body),
                  "scatter: input 1 has type tensor<5x3xi32>, expected the shape of input 0 "
                  "(tensor<5x4xf32>)");
  EXPECT_REJECTED(f, f.Scatter({f.Parameter(0), f.Parameter(0)}, f.Parameter(2), {f.Parameter(3)},
                               RowScatter(), body),
                  "scatter: expected N inputs, scatter_indices and N updates (an odd count >= 3), "
                  "got 4 operands");
}

TEST_F(GatherScatterBuilderTest, ScatterRejectsUpdateComputationReturningTheWrongTypes) {
  FunctionBuilder f = Begin(
      {T(kF32, {5, 4}), T(kI32, {5, 4}), T(kI32, {3, 1}), T(kF32, {3, 4}), T(kI32, {3, 4})});
  auto swapped = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    return b.Return({args[3], args[2]});
  };
  EXPECT_REJECTED(f, f.Scatter({f.Parameter(0), f.Parameter(1)}, f.Parameter(2),
                               {f.Parameter(3), f.Parameter(4)}, RowScatter(), swapped),
                  "scatter: update_computation returns tensor<i32> as value 0, expected "
                  "tensor<f32>");
  auto one_value = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    return b.Return({args[2]});
  };
  EXPECT_REJECTED(f, f.Scatter({f.Parameter(0), f.Parameter(1)}, f.Parameter(2),
                               {f.Parameter(3), f.Parameter(4)}, RowScatter(), one_value),
                  "scatter: update_computation returns 1 values, expected 2");
}

}  // namespace
}  // namespace accy::ir_test
