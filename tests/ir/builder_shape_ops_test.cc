// Builder tests for the shape and data-movement ops: broadcast_in_dim, reshape, transpose, slice,
// pad, concatenate, iota, reverse, dynamic_slice and dynamic_update_slice. Each op has a valid
// form whose result type is checked exactly and rejected forms checked for code, message and an
// unchanged block.
#include <cstdint>
#include <limits>
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

using ShapeOpsBuilderTest = BuilderTest;

TEST_F(ShapeOpsBuilderTest, BroadcastInDimMapsOperandDimsToResultDims) {
  FunctionBuilder f = Begin({T(kF32, {3}), T(kI8, {1, 3}), T(kF32)});
  ASSERT_OK_AND_ASSIGN(Value * row, f.BroadcastInDim(f.Parameter(0), T(kF32, {2, 3}), {1}));
  EXPECT_EQ(row->type(), T(kF32, {2, 3}));
  EXPECT_EQ(row->defining_op()->kind(), OpKind::kBroadcastInDim);
  EXPECT_EQ(row->defining_op()->GetInts("broadcast_dimensions"), std::vector<int64_t>{1});
  // A size-1 dim stretches; dims may also move.
  ASSERT_OK_AND_ASSIGN(Value * stretched,
                       f.BroadcastInDim(f.Parameter(1), T(kI8, {3, 4, 5}), {1, 0}));
  EXPECT_EQ(stretched->type(), T(kI8, {3, 4, 5}));
  ASSERT_OK_AND_ASSIGN(Value * splat, f.BroadcastInDim(f.Parameter(2), T(kF32, {2, 2}), {}));
  EXPECT_EQ(splat->type(), T(kF32, {2, 2}));
}

TEST_F(ShapeOpsBuilderTest, BroadcastInDimRejectsMismatchedSizesAndBadDimensions) {
  FunctionBuilder f = Begin({T(kF32, {3}), T(kF32, {2, 3})});
  Value* x = f.Parameter(0);
  EXPECT_REJECTED(f, f.BroadcastInDim(x, T(kF32, {2, 4}), {1}),
                  "broadcast_in_dim: operand dim 0 has size 3 but result dim 1 has size 4 (must "
                  "be equal, or the operand size must be 1)");
  EXPECT_REJECTED(f, f.BroadcastInDim(x, T(kF32, {2, 3}), {0, 1}),
                  "broadcast_in_dim: broadcast_dimensions [0, 1] has 2 entries, expected the "
                  "operand rank 1");
  EXPECT_REJECTED(f, f.BroadcastInDim(x, T(kF32, {2, 3}), {2}),
                  "broadcast_in_dim: broadcast_dimensions [2]: entry 2 is out of range [0, 2) "
                  "or repeated");
  EXPECT_REJECTED(f, f.BroadcastInDim(f.Parameter(1), T(kF32, {3, 2}), {1, 1}),
                  "broadcast_in_dim: broadcast_dimensions [1, 1]: entry 1 is out of range [0, 2) "
                  "or repeated");
  EXPECT_REJECTED(f, f.BroadcastInDim(x, T(kF64, {2, 3}), {1}),
                  "broadcast_in_dim: result type tensor<2x3xf64> must have the element type of "
                  "tensor<3xf32>");
}

TEST_F(ShapeOpsBuilderTest, ReshapeKeepsElementTypeAndCount) {
  FunctionBuilder f = Begin({T(kF32, {2, 3}), T(kU16, {1, 1})});
  ASSERT_OK_AND_ASSIGN(Value * flat, f.Reshape(f.Parameter(0), T(kF32, {6})));
  EXPECT_EQ(flat->type(), T(kF32, {6}));
  EXPECT_EQ(flat->defining_op()->kind(), OpKind::kReshape);
  ASSERT_OK_AND_ASSIGN(Value * scalar, f.Reshape(f.Parameter(1), T(kU16)));
  EXPECT_EQ(scalar->type(), T(kU16));
}

TEST_F(ShapeOpsBuilderTest, ReshapeRejectsOtherElementCountOrType) {
  FunctionBuilder f = Begin({T(kF32, {2, 3})});
  EXPECT_REJECTED(f, f.Reshape(f.Parameter(0), T(kF32, {7})),
                  "reshape: cannot reshape tensor<2x3xf32> to tensor<7xf32> (element type and "
                  "element count must match)");
  EXPECT_REJECTED(f, f.Reshape(f.Parameter(0), T(kI32, {6})),
                  "reshape: cannot reshape tensor<2x3xf32> to tensor<6xi32>");
}

TEST_F(ShapeOpsBuilderTest, TransposePermutesDims) {
  FunctionBuilder f = Begin({T(kBF16, {2, 3, 4})});
  ASSERT_OK_AND_ASSIGN(Value * y, f.Transpose(f.Parameter(0), {2, 0, 1}));
  EXPECT_EQ(y->type(), T(kBF16, {4, 2, 3}));
  EXPECT_EQ(y->defining_op()->GetInts("permutation"), (std::vector<int64_t>{2, 0, 1}));
}

TEST_F(ShapeOpsBuilderTest, TransposeRejectsRepeatedPermutationEntry) {
  FunctionBuilder f = Begin({T(kF32, {2, 3, 4})});
  EXPECT_REJECTED(f, f.Transpose(f.Parameter(0), {0, 0, 1}),
                  "transpose: permutation [0, 0, 1]: dimension 0 appears twice");
}

TEST_F(ShapeOpsBuilderTest, TransposeRejectsOutOfRangeOrShortPermutation) {
  FunctionBuilder f = Begin({T(kF32, {2, 3, 4})});
  EXPECT_REJECTED(f, f.Transpose(f.Parameter(0), {0, 3, 1}),
                  "transpose: permutation [0, 3, 1]: dimension 3 is out of range [0, 3)");
  EXPECT_REJECTED(f, f.Transpose(f.Parameter(0), {1, 0}),
                  "transpose: permutation [1, 0] has 2 entries, expected the operand rank 3");
}

TEST_F(ShapeOpsBuilderTest, SliceTakesStridedWindows) {
  FunctionBuilder f = Begin({T(kI64, {10, 6})});
  ASSERT_OK_AND_ASSIGN(Value * y, f.Slice(f.Parameter(0), {2, 0}, {8, 6}, {2, 4}));
  EXPECT_EQ(y->type(), T(kI64, {3, 2}));  // ceil(6 / 2), ceil(6 / 4)
  ASSERT_OK_AND_ASSIGN(Value * empty, f.Slice(f.Parameter(0), {4, 6}, {4, 6}, {1, 1}));
  EXPECT_EQ(empty->type(), T(kI64, {0, 0}));
}

TEST_F(ShapeOpsBuilderTest, SliceWithAHugeStrideTakesOneElement) {
  // ceil(size / stride) must not compute size + stride - 1, which overflows here.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  FunctionBuilder f = Begin({T(kF32, {4})});
  ASSERT_OK_AND_ASSIGN(Value * first, f.Slice(f.Parameter(0), {0}, {4}, {kMax}));
  EXPECT_EQ(first->type(), T(kF32, {1}));
  ASSERT_OK_AND_ASSIGN(Value * second, f.Slice(f.Parameter(0), {1}, {4}, {kMax - 1}));
  EXPECT_EQ(second->type(), T(kF32, {1}));
  ASSERT_OK_AND_ASSIGN(Value * none, f.Slice(f.Parameter(0), {4}, {4}, {kMax}));
  EXPECT_EQ(none->type(), T(kF32, {0}));
}

TEST_F(ShapeOpsBuilderTest, SliceRejectsBoundsOutsideTheOperandAndNonPositiveStrides) {
  FunctionBuilder f = Begin({T(kF32, {10, 6})});
  Value* x = f.Parameter(0);
  EXPECT_REJECTED(f, f.Slice(x, {0, 0}, {11, 6}, {1, 1}),
                  "slice: dim 0: need 0 <= start (0) <= limit (11) <= size (10)");
  EXPECT_REJECTED(f, f.Slice(x, {0, 5}, {10, 4}, {1, 1}),
                  "slice: dim 1: need 0 <= start (5) <= limit (4) <= size (6)");
  EXPECT_REJECTED(f, f.Slice(x, {-1, 0}, {10, 6}, {1, 1}),
                  "slice: dim 0: need 0 <= start (-1)");
  EXPECT_REJECTED(f, f.Slice(x, {0, 0}, {10, 6}, {1, 0}),
                  "slice: dim 1: stride 0 must be positive");
  EXPECT_REJECTED(f, f.Slice(x, {0}, {10}, {1}),
                  "slice: start_indices [0], limit_indices [10] and strides [1] must each have "
                  "one entry per operand dim (rank 2)");
}

TEST_F(ShapeOpsBuilderTest, PadAddsEdgeAndInteriorPadding) {
  FunctionBuilder f = Begin({T(kF32, {2, 3}), T(kF32)});
  ASSERT_OK_AND_ASSIGN(Value * y, f.Pad(f.Parameter(0), f.Parameter(1), {1, 0}, {0, 2}, {1, 0}));
  EXPECT_EQ(y->type(), T(kF32, {4, 5}));  // 1 + 2 + 1 gap, 3 + 2
  // Negative edge padding crops.
  ASSERT_OK_AND_ASSIGN(Value * cropped,
                       f.Pad(f.Parameter(0), f.Parameter(1), {-1, 0}, {0, -2}, {0, 0}));
  EXPECT_EQ(cropped->type(), T(kF32, {1, 1}));
}

TEST_F(ShapeOpsBuilderTest, PadRejectsBadPaddingValueAndAmounts) {
  FunctionBuilder f = Begin({T(kF32, {2, 3}), T(kF32), T(kF32, {1}), T(kF64)});
  Value* x = f.Parameter(0);
  Value* zero = f.Parameter(1);
  EXPECT_REJECTED(f, f.Pad(x, f.Parameter(2), {0, 0}, {0, 0}, {0, 0}),
                  "pad: padding_value has type tensor<1xf32>, expected tensor<f32>");
  EXPECT_REJECTED(f, f.Pad(x, f.Parameter(3), {0, 0}, {0, 0}, {0, 0}),
                  "pad: padding_value has type tensor<f64>, expected tensor<f32>");
  EXPECT_REJECTED(f, f.Pad(x, zero, {0, 0}, {0, 0}, {0, -1}),
                  "pad: dim 1: interior padding -1 must be non-negative");
  EXPECT_REJECTED(f, f.Pad(x, zero, {-2, 0}, {-1, 0}, {0, 0}),
                  "pad: dim 0: padded size -1 is negative");
  EXPECT_REJECTED(f, f.Pad(x, zero, {0}, {0, 0}, {0, 0}),
                  "pad: edge_padding_low, edge_padding_high and interior_padding must each have "
                  "one entry per operand dim (rank 2)");
}

TEST_F(ShapeOpsBuilderTest, ConcatenateSumsTheConcatenatedDim) {
  FunctionBuilder f = Begin({T(kF32, {2, 3}), T(kF32, {4, 3}), T(kF32, {0, 3})});
  ASSERT_OK_AND_ASSIGN(Value * y,
                       f.Concatenate({f.Parameter(0), f.Parameter(1), f.Parameter(2)}, 0));
  EXPECT_EQ(y->type(), T(kF32, {6, 3}));
  EXPECT_EQ(y->defining_op()->num_operands(), 3);
  EXPECT_EQ(y->defining_op()->GetInt("dimension"), 0);
}

TEST_F(ShapeOpsBuilderTest, ConcatenateRejectsMismatchedInputsAndBadDimension) {
  FunctionBuilder f = Begin({T(kF32, {2, 3}), T(kF32, {2, 4}), T(kI32, {2, 3})});
  Value* x = f.Parameter(0);
  EXPECT_REJECTED(f, f.Concatenate({x, f.Parameter(1)}, 0),
                  "concatenate: operand 1 has type tensor<2x4xf32>, expected the type of operand "
                  "0 (tensor<2x3xf32>) except in dimension 0");
  EXPECT_REJECTED(f, f.Concatenate({x, f.Parameter(2)}, 1),
                  "concatenate: operand 1 has type tensor<2x3xi32>");
  EXPECT_REJECTED(f, f.Concatenate({x, x}, 2),
                  "concatenate: dimension 2 is out of range [0, 2)");
  EXPECT_REJECTED(f, f.Concatenate({}, 0), "concatenate: expected at least 1 operand, got 0");
}

TEST_F(ShapeOpsBuilderTest, IotaHasTheGivenType) {
  FunctionBuilder f = Begin({});
  ASSERT_OK_AND_ASSIGN(Value * y, f.Iota(T(kI32, {4, 5}), 1));
  EXPECT_EQ(y->type(), T(kI32, {4, 5}));
  EXPECT_EQ(y->defining_op()->num_operands(), 0);
  EXPECT_EQ(y->defining_op()->GetInt("iota_dimension"), 1);
}

TEST_F(ShapeOpsBuilderTest, IotaRejectsOutOfRangeDimensionAndI1) {
  FunctionBuilder f = Begin({});
  EXPECT_REJECTED(f, f.Iota(T(kF32, {4, 5}), 2),
                  "iota: iota_dimension 2 is out of range [0, 2) for tensor<4x5xf32>");
  EXPECT_REJECTED(f, f.Iota(T(kF32), 0), "iota: iota_dimension 0 is out of range [0, 0)");
  EXPECT_REJECTED(f, f.Iota(T(kI1, {4}), 0), "iota: i1 results are not supported");
}

TEST_F(ShapeOpsBuilderTest, ReverseKeepsTheType) {
  FunctionBuilder f = Begin({T(kU8, {2, 3})});
  ASSERT_OK_AND_ASSIGN(Value * y, f.Reverse(f.Parameter(0), {1, 0}));
  EXPECT_EQ(y->type(), T(kU8, {2, 3}));
  EXPECT_EQ(y->defining_op()->GetInts("dimensions"), (std::vector<int64_t>{1, 0}));
}

TEST_F(ShapeOpsBuilderTest, ReverseRejectsRepeatedOrOutOfRangeDimensions) {
  FunctionBuilder f = Begin({T(kU8, {2, 3})});
  EXPECT_REJECTED(f, f.Reverse(f.Parameter(0), {1, 1}),
                  "reverse: dimensions [1, 1]: dimension 1 appears twice");
  EXPECT_REJECTED(f, f.Reverse(f.Parameter(0), {-1}),
                  "reverse: dimensions [-1]: dimension -1 is out of range [0, 2)");
}

TEST_F(ShapeOpsBuilderTest, DynamicSliceHasTheSliceSizes) {
  FunctionBuilder f = Begin({T(kF32, {5, 6}), T(kI32), T(kI32)});
  ASSERT_OK_AND_ASSIGN(Value * y,
                       f.DynamicSlice(f.Parameter(0), {f.Parameter(1), f.Parameter(2)}, {2, 3}));
  EXPECT_EQ(y->type(), T(kF32, {2, 3}));
  EXPECT_EQ(y->defining_op()->num_operands(), 3);
}

TEST_F(ShapeOpsBuilderTest, DynamicSliceRejectsBadStartIndicesAndSizes) {
  FunctionBuilder f = Begin({T(kF32, {5, 6}), T(kI32), T(kI64), T(kI32, {1}), T(kF32)});
  Value* x = f.Parameter(0);
  Value* i = f.Parameter(1);
  EXPECT_REJECTED(f, f.DynamicSlice(x, {i}, {2, 3}),
                  "dynamic_slice: got 1 start indices, expected one per operand dim (2)");
  EXPECT_REJECTED(f, f.DynamicSlice(x, {i, f.Parameter(2)}, {2, 3}),
                  "dynamic_slice: start index 1 has type tensor<i64>, expected a rank-0 integer "
                  "tensor of the same type as start index 0");
  EXPECT_REJECTED(f, f.DynamicSlice(x, {f.Parameter(3), f.Parameter(3)}, {2, 3}),
                  "dynamic_slice: start index 0 has type tensor<1xi32>");
  EXPECT_REJECTED(f, f.DynamicSlice(x, {f.Parameter(4), f.Parameter(4)}, {2, 3}),
                  "dynamic_slice: start index 0 has type tensor<f32>");
  EXPECT_REJECTED(f, f.DynamicSlice(x, {i, i}, {2, 7}),
                  "dynamic_slice: slice size 7 of dim 1 is outside [0, 6]");
  EXPECT_REJECTED(f, f.DynamicSlice(x, {i, i}, {2}),
                  "dynamic_slice: slice_sizes [2] must have one entry per operand dim (rank 2)");
}

TEST_F(ShapeOpsBuilderTest, DynamicUpdateSliceHasTheOperandType) {
  FunctionBuilder f = Begin({T(kF32, {5, 6}), T(kF32, {2, 6}), T(kU32)});
  Value* i = f.Parameter(2);
  ASSERT_OK_AND_ASSIGN(Value * y, f.DynamicUpdateSlice(f.Parameter(0), f.Parameter(1), {i, i}));
  EXPECT_EQ(y->type(), T(kF32, {5, 6}));
  EXPECT_EQ(y->defining_op()->num_operands(), 4);
}

TEST_F(ShapeOpsBuilderTest, DynamicUpdateSliceRejectsLargerUpdateAndBadIndices) {
  FunctionBuilder f =
      Begin({T(kF32, {5, 6}), T(kF32, {2, 7}), T(kF64, {2, 6}), T(kI32), T(kI1)});
  Value* x = f.Parameter(0);
  Value* i = f.Parameter(3);
  EXPECT_REJECTED(f, f.DynamicUpdateSlice(x, f.Parameter(1), {i, i}),
                  "dynamic_update_slice: update has type tensor<2x7xf32>, expected the element "
                  "type and rank of tensor<5x6xf32> and no dim larger than it");
  EXPECT_REJECTED(f, f.DynamicUpdateSlice(x, f.Parameter(2), {i, i}),
                  "dynamic_update_slice: update has type tensor<2x6xf64>");
  EXPECT_REJECTED(f, f.DynamicUpdateSlice(x, x, {i, i, i}),
                  "dynamic_update_slice: got 3 start indices, expected one per operand dim (2)");
  EXPECT_REJECTED(f, f.DynamicUpdateSlice(x, x, {f.Parameter(4), f.Parameter(4)}),
                  "dynamic_update_slice: start index 0 has type tensor<i1>");
}

}  // namespace
}  // namespace accy::ir_test
