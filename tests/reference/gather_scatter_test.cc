// Reference evaluator tests for gather and scatter (src/reference/gather_scatter.cc): start index
// clamping, batching dims, out-of-bound scatter updates, update regions and the order in which
// duplicate indices combine. Expected values are hand-computed or taken from the StableHLO spec.
#include <cstdint>
#include <span>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "accy/status.h"
#include "accy/tensor.h"
#include "accy/types.h"
#include "gtest/gtest.h"
#include "tests/reference/reference_test_util.h"
#include "tests/test_util.h"

namespace accy::reference_test {
namespace {

std::vector<int32_t> Iota32(int32_t n, int32_t first = 0) {
  std::vector<int32_t> values(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = first + i;
  return values;
}

// ---- gather -----------------------------------------------------------------------------------

TEST(GatherTest, GathersRowsOfAMatrix) {
  // operand [3,3] = 3r + c; rows 2 and 0.
  GatherDimensionNumbers dn;
  dn.offset_dims = {1};
  dn.collapsed_slice_dims = {0};
  dn.start_index_map = {0};
  dn.index_vector_dim = 1;
  ASSERT_OK_AND_ASSIGN(Tensor result, RunOne(Type(E::kI32, {2, 3}),
                                             {Make<int32_t>(E::kI32, {3, 3}, Iota32(9)),
                                              Make<int32_t>(E::kI32, {2, 1}, {2, 0})},
                                             [&](FunctionBuilder& b, std::span<Value* const> p) {
                                               return b.Gather(p[0], p[1], dn, {1, 3});
                                             }));
  ExpectTensor<int32_t>(result, E::kI32, {2, 3}, {6, 7, 8, 0, 1, 2});
}

TEST(GatherTest, GatherClampsOutOfBoundStartIndices) {
  // operand [10..14]; windows of 2 starting at 4 (past the end: clamps to 5 - 2 = 3), -1
  // (negative: clamps to 0) and 1. index_vector_dim = rank(start_indices): scalar indices.
  GatherDimensionNumbers dn;
  dn.offset_dims = {1};
  dn.start_index_map = {0};
  dn.index_vector_dim = 1;
  ASSERT_OK_AND_ASSIGN(Tensor result, RunOne(Type(E::kI32, {3, 2}),
                                             {Make<int32_t>(E::kI32, {5}, Iota32(5, 10)),
                                              Make<int64_t>(E::kI64, {3}, {4, -1, 1})},
                                             [&](FunctionBuilder& b, std::span<Value* const> p) {
                                               return b.Gather(p[0], p[1], dn, {2});
                                             }));
  ExpectTensor<int32_t>(result, E::kI32, {3, 2}, {13, 14, 10, 11, 11, 12});
}

TEST(GatherTest, HugeUnsignedIndexClampsToTheLastWindow) {
  GatherDimensionNumbers dn;
  dn.collapsed_slice_dims = {0};
  dn.start_index_map = {0};
  dn.index_vector_dim = 1;
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunOne(Type(E::kI32, {2}),
                              {Make<int32_t>(E::kI32, {5}, Iota32(5, 10)),
                               Make<uint64_t>(E::kU64, {2}, {0xffffffffffffffff, 2})},
                              [&](FunctionBuilder& b, std::span<Value* const> p) {
                                return b.Gather(p[0], p[1], dn, {1});
                              }));
  ExpectTensor<int32_t>(result, E::kI32, {2}, {14, 12});
}

TEST(GatherTest, SpecExampleWithPermutedStartIndexMap) {
  // The example of the StableHLO spec section "gather" (without batching dims).
  GatherDimensionNumbers dn;
  dn.offset_dims = {2, 3};
  dn.collapsed_slice_dims = {0};
  dn.start_index_map = {1, 0};
  dn.index_vector_dim = 2;
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kI32, {2, 3, 2, 2}),
             {Make<int32_t>(E::kI32, {3, 4, 2}, Iota32(24, 1)),
              Make<int64_t>(E::kI64, {2, 3, 2}, {0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 2})},
             [&](FunctionBuilder& b, std::span<Value* const> p) {
               return b.Gather(p[0], p[1], dn, {1, 2, 2});
             }));
  ExpectTensor<int32_t>(result, E::kI32, {2, 3, 2, 2},
                        {1, 2,  3,  4,  3,  4,  5,  6,  13, 14, 15, 16,  //
                         9, 10, 11, 12, 11, 12, 13, 14, 17, 18, 19, 20});
}

TEST(GatherTest, BatchingDimsSelectTheOperandBatch) {
  // The example of the StableHLO spec section "gather" with operand_batching_dims = [0] and
  // start_indices_batching_dims = [1]; start index [0, 9] clamps to [0, 2].
  GatherDimensionNumbers dn;
  dn.offset_dims = {3, 4};
  dn.collapsed_slice_dims = {1};
  dn.operand_batching_dims = {0};
  dn.start_indices_batching_dims = {1};
  dn.start_index_map = {2, 1};
  dn.index_vector_dim = 3;
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kI32, {2, 2, 3, 2, 2}),
             {Make<int32_t>(E::kI32, {2, 3, 4, 2}, Iota32(48, 1)),
              Make<int64_t>(E::kI64, {2, 2, 3, 2}, {0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9,  //
                                                    0, 0, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0})},
             [&](FunctionBuilder& b, std::span<Value* const> p) {
               return b.Gather(p[0], p[1], dn, {1, 1, 2, 2});
             }));
  ExpectTensor<int32_t>(result, E::kI32, {2, 2, 3, 2, 2},
                        {1,  2,  3,  4,  3,  4,  5,  6,  13, 14, 15, 16,  //
                         33, 34, 35, 36, 35, 36, 37, 38, 41, 42, 43, 44,  //
                         1,  2,  3,  4,  13, 14, 15, 16, 21, 22, 23, 24,  //
                         43, 44, 45, 46, 33, 34, 35, 36, 27, 28, 29, 30});
}

// ---- scatter ----------------------------------------------------------------------------------

// Scatter of single elements into a rank-1 input: indices [n, 1], updates [n].
ScatterDimensionNumbers ElementScatter() {
  ScatterDimensionNumbers dn;
  dn.inserted_window_dims = {0};
  dn.scatter_dims_to_operand_dims = {0};
  dn.index_vector_dim = 1;
  return dn;
}

TEST(ScatterTest, ScatterSkipsOutOfBoundUpdates) {
  // Indices 7 (past the end) and -1 (negative) are skipped, not clamped.
  ASSERT_OK_AND_ASSIGN(Tensor result, RunOne(Type(E::kI32, {5}),
                                             {Make<int32_t>(E::kI32, {5}, {1, 1, 1, 1, 1}),
                                              Make<int32_t>(E::kI32, {3, 1}, {1, 7, -1}),
                                              Make<int32_t>(E::kI32, {3}, {10, 20, 30})},
                                             [](FunctionBuilder& b, std::span<Value* const> p) {
                                               return b.Scatter(p[0], p[1], p[2], ElementScatter(),
                                                                "assign");
                                             }));
  ExpectTensor<int32_t>(result, E::kI32, {5}, {1, 10, 1, 1, 1});
}

TEST(ScatterTest, ScatterSkipsOnlyTheOutOfBoundElementsOfAWindow) {
  // Spec "scatter": the bounds check is per result_index, so a window of 3 starting at 3 in a
  // [5] input updates elements 3 and 4 and drops its third element; a window starting at 6
  // updates nothing.
  ScatterDimensionNumbers dn;
  dn.update_window_dims = {1};
  dn.scatter_dims_to_operand_dims = {0};
  dn.index_vector_dim = 1;
  ASSERT_OK_AND_ASSIGN(Tensor result, RunOne(Type(E::kI32, {5}),
                                             {Make<int32_t>(E::kI32, {5}, {0, 0, 0, 0, 0}),
                                              Make<int32_t>(E::kI32, {2, 1}, {3, 6}),
                                              Make<int32_t>(E::kI32, {2, 3}, {1, 2, 3, 4, 5, 6})},
                                             [&](FunctionBuilder& b, std::span<Value* const> p) {
                                               return b.Scatter(p[0], p[1], p[2], dn, "add");
                                             }));
  ExpectTensor<int32_t>(result, E::kI32, {5}, {0, 0, 0, 1, 2});
}

TEST(ScatterTest, AddRegionAccumulatesRowWindows) {
  // input [3,2] = 2r + c; row 2 += [10, 20], row 0 += [30, 40].
  ScatterDimensionNumbers dn;
  dn.update_window_dims = {1};
  dn.inserted_window_dims = {0};
  dn.scatter_dims_to_operand_dims = {0};
  dn.index_vector_dim = 1;
  ASSERT_OK_AND_ASSIGN(Tensor result, RunOne(Type(E::kI32, {3, 2}),
                                             {Make<int32_t>(E::kI32, {3, 2}, Iota32(6)),
                                              Make<int32_t>(E::kI32, {2, 1}, {2, 0}),
                                              Make<int32_t>(E::kI32, {2, 2}, {10, 20, 30, 40})},
                                             [&](FunctionBuilder& b, std::span<Value* const> p) {
                                               return b.Scatter(p[0], p[1], p[2], dn, "add");
                                             }));
  ExpectTensor<int32_t>(result, E::kI32, {3, 2}, {30, 41, 2, 3, 14, 25});
}

TEST(ScatterTest, DuplicateIndicesAddUp) {
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kF32, {3}),
             {Make<float>(E::kF32, {3}, {1, 2, 3}), Make<int32_t>(E::kI32, {4, 1}, {0, 2, 0, 0}),
              Make<float>(E::kF32, {4}, {0.5f, 10, 0.25f, 100})},
             [](FunctionBuilder& b, std::span<Value* const> p) {
               return b.Scatter(p[0], p[1], p[2], ElementScatter(), "add");
             }));
  ExpectTensor<float>(result, E::kF32, {3}, {101.75f, 2, 13});
}

TEST(ScatterTest, DuplicateIndicesApplyInUpdateIndexOrder) {
  // Region: current * 10 + update. Three updates hit element 0 in row-major update order:
  // ((0 * 10 + 1) * 10 + 2) * 10 + 3 = 123; one update hits element 2.
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kI32, {3}),
             {Make<int32_t>(E::kI32, {3}, {0, 5, 0}), Make<int32_t>(E::kI32, {4, 1}, {0, 2, 0, 0}),
              Make<int32_t>(E::kI32, {4}, {1, 4, 2, 3})},
             [](FunctionBuilder& b, std::span<Value* const> p) -> StatusOr<Value*> {
               ACCY_ASSIGN_OR_RETURN(
                   std::vector<Value*> results,
                   b.Scatter({p[0]}, p[1], {p[2]}, ElementScatter(),
                             [](FunctionBuilder& body, std::span<Value* const> args) -> Status {
                               ACCY_ASSIGN_OR_RETURN(Value * ten, body.ConstantScalar(E::kI32, 10));
                               ACCY_ASSIGN_OR_RETURN(Value * scaled, body.Multiply(args[0], ten));
                               ACCY_ASSIGN_OR_RETURN(Value * sum, body.Add(scaled, args[1]));
                               return body.Return({sum});
                             }));
               return results.at(0);
             }));
  ExpectTensor<int32_t>(result, E::kI32, {3}, {123, 5, 4});
}

TEST(ScatterTest, AssignWithDuplicatesKeepsTheLastUpdate) {
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kI32, {2}),
             {Make<int32_t>(E::kI32, {2}, {0, 0}), Make<int32_t>(E::kI32, {3, 1}, {1, 1, 1}),
              Make<int32_t>(E::kI32, {3}, {7, 8, 9})},
             [](FunctionBuilder& b, std::span<Value* const> p) {
               return b.Scatter(p[0], p[1], p[2], ElementScatter(), "assign");
             }));
  ExpectTensor<int32_t>(result, E::kI32, {2}, {0, 9});
}

TEST(ScatterTest, BatchingDimsSelectTheInputBatch) {
  // input [2,3]; batch i (input_batching_dims [0] <-> scatter_indices_batching_dims [0])
  // writes updates[i] at column indices[i].
  ScatterDimensionNumbers dn;
  dn.inserted_window_dims = {1};
  dn.input_batching_dims = {0};
  dn.scatter_indices_batching_dims = {0};
  dn.scatter_dims_to_operand_dims = {1};
  dn.index_vector_dim = 1;
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kI32, {2, 3}),
             {Make<int32_t>(E::kI32, {2, 3}, std::vector<int32_t>(6, 0)),
              Make<int32_t>(E::kI32, {2, 1}, {2, 0}), Make<int32_t>(E::kI32, {2}, {5, 7})},
             [&](FunctionBuilder& b, std::span<Value* const> p) {
               return b.Scatter(p[0], p[1], p[2], dn, "assign");
             }));
  ExpectTensor<int32_t>(result, E::kI32, {2, 3}, {0, 0, 5, 7, 0, 0});
}

TEST(ScatterTest, TwoInputsPassCurrentValuesThenUpdatesToTheRegion) {
  // Region over (current0, current1, update0, update1) returns (current0 + update0, update1).
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> results,
      RunAll({Type(E::kF32, {3}), Type(E::kI32, {3})},
             {Make<float>(E::kF32, {3}, {1, 1, 1}), Make<int32_t>(E::kI32, {3}, {0, 0, 0}),
              Make<int32_t>(E::kI32, {2, 1}, {2, 2}), Make<float>(E::kF32, {2}, {1.5f, 2.5f}),
              Make<int32_t>(E::kI32, {2}, {7, 8})},
             [](FunctionBuilder& b, std::span<Value* const> p) {
               return b.Scatter({p[0], p[1]}, p[2], {p[3], p[4]}, ElementScatter(),
                                [](FunctionBuilder& body, std::span<Value* const> args) -> Status {
                                  ACCY_ASSIGN_OR_RETURN(Value * sum, body.Add(args[0], args[2]));
                                  return body.Return({sum, args[3]});
                                });
             }));
  ASSERT_EQ(results.size(), 2u);
  ExpectTensor<float>(results[0], E::kF32, {3}, {1, 1, 5});
  ExpectTensor<int32_t>(results[1], E::kI32, {3}, {0, 0, 8});
}

}  // namespace
}  // namespace accy::reference_test
