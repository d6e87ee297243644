// Reference evaluator tests for the shape and data-movement ops (src/reference/shape_ops.cc):
// each builds a one-op function with accy::Builder, runs accy::Evaluate and checks hand-computed
// values exactly.
#include <cstdint>
#include <limits>
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

std::vector<int32_t> Iota32(int32_t n) {
  std::vector<int32_t> values(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = i;
  return values;
}

TEST(BroadcastInDimTest, ExpandsSizeOneDims) {
  // [2,1] -> [2,3]: operand dim 1 has size 1 and is repeated.
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunOne(Type(E::kI32, {2, 3}), {Make<int32_t>(E::kI32, {2, 1}, {7, 8})},
                              [](FunctionBuilder& b, std::span<Value* const> p) {
                                return b.BroadcastInDim(p[0], Type(E::kI32, {2, 3}), {0, 1});
                              }));
  ExpectTensor<int32_t>(result, E::kI32, {2, 3}, {7, 7, 7, 8, 8, 8});
}

TEST(BroadcastInDimTest, RankZeroOperandFillsResult) {
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunOne(Type(E::kF32, {2, 2}), {Make<float>(E::kF32, {}, {2.5f})},
                              [](FunctionBuilder& b, std::span<Value* const> p) {
                                return b.BroadcastInDim(p[0], Type(E::kF32, {2, 2}), {});
                              }));
  ExpectTensor<float>(result, E::kF32, {2, 2}, {2.5f, 2.5f, 2.5f, 2.5f});
}

TEST(BroadcastInDimTest, NonIncreasingDimsTransposeTheOperand) {
  // operand[j][i] = 3j + i, [2,3] -> [3,2,4] with broadcast_dimensions [1, 0]:
  // result[i][j][k] = operand[j][i].
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunOne(Type(E::kI32, {3, 2, 4}), {Make<int32_t>(E::kI32, {2, 3}, Iota32(6))},
                              [](FunctionBuilder& b, std::span<Value* const> p) {
                                return b.BroadcastInDim(p[0], Type(E::kI32, {3, 2, 4}), {1, 0});
                              }));
  ExpectTensor<int32_t>(result, E::kI32, {3, 2, 4}, {0, 0, 0, 0, 3, 3, 3, 3,    // i = 0
                                                     1, 1, 1, 1, 4, 4, 4, 4,    // i = 1
                                                     2, 2, 2, 2, 5, 5, 5, 5});  // i = 2
}

TEST(ReshapeTest, KeepsRowMajorOrder) {
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunOne(Type(E::kI32, {3, 2}), {Make<int32_t>(E::kI32, {2, 3}, Iota32(6))},
                              [](FunctionBuilder& b, std::span<Value* const> p) {
                                return b.Reshape(p[0], Type(E::kI32, {3, 2}));
                              }));
  ExpectTensor<int32_t>(result, E::kI32, {3, 2}, {0, 1, 2, 3, 4, 5});
}

TEST(TransposeTest, Rank3PermutationMapsResultDimToOperandDim) {
  // operand [2,3,4] = 12a + 4b + c; permutation [2, 0, 1] gives result [4,2,3] with
  // result[i][j][k] = operand[j][k][i] = 12j + 4k + i.
  ASSERT_OK_AND_ASSIGN(Tensor result, RunOne(Type(E::kI32, {4, 2, 3}),
                                             {Make<int32_t>(E::kI32, {2, 3, 4}, Iota32(24))},
                                             [](FunctionBuilder& b, std::span<Value* const> p) {
                                               return b.Transpose(p[0], {2, 0, 1});
                                             }));
  ExpectTensor<int32_t>(result, E::kI32, {4, 2, 3}, {0, 4, 8,  12, 16, 20,    // i = 0
                                                     1, 5, 9,  13, 17, 21,    // i = 1
                                                     2, 6, 10, 14, 18, 22,    // i = 2
                                                     3, 7, 11, 15, 19, 23});  // i = 3
}

TEST(SliceTest, StridedSliceTakesEveryStrideElement) {
  // operand [3,5] = 5r + c; rows 0, 2 and columns 1, 3.
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunOne(Type(E::kI32, {2, 2}), {Make<int32_t>(E::kI32, {3, 5}, Iota32(15))},
                              [](FunctionBuilder& b, std::span<Value* const> p) {
                                return b.Slice(p[0], {0, 1}, {3, 5}, {2, 2});
                              }));
  ExpectTensor<int32_t>(result, E::kI32, {2, 2}, {1, 3, 11, 13});
}

// Pads operand [[1,2,3],[4,5,6]] (f32) with 9.
StatusOr<Tensor> RunPad(std::vector<int64_t> result_dims, std::vector<int64_t> low,
                        std::vector<int64_t> high, std::vector<int64_t> interior) {
  return RunOne(Type(E::kF32, result_dims),
                {Make<float>(E::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}), Make<float>(E::kF32, {}, {9})},
                [&](FunctionBuilder& b, std::span<Value* const> p) {
                  return b.Pad(p[0], p[1], low, high, interior);
                });
}

TEST(SliceTest, HugeStrideTakesOnlyTheStartElement) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunOne(Type(E::kI32, {1}), {Make<int32_t>(E::kI32, {4}, Iota32(4))},
                              [](FunctionBuilder& b, std::span<Value* const> p) {
                                return b.Slice(p[0], {1}, {4}, {kMax - 1});
                              }));
  ExpectTensor<int32_t>(result, E::kI32, {1}, {1});
}

TEST(PadTest, HugeInteriorPaddingOfOneElementDoesNotOverflow) {
  // interior + 1 overflows; with one element there is no gap to fill, so the size is 1 + 1 + 1.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kF32, {3}), {Make<float>(E::kF32, {1}, {5}), Make<float>(E::kF32, {}, {-1})},
             [](FunctionBuilder& b, std::span<Value* const> p) {
               return b.Pad(p[0], p[1], {1}, {1}, {kMax});
             }));
  ExpectTensor<float>(result, E::kF32, {3}, {-1, 5, -1});
}

TEST(PadTest, InteriorAndEdgePadding) {
  // Rows: pad, row 0, pad (interior), row 1. Columns: c0 p c1 p c2 p.
  ASSERT_OK_AND_ASSIGN(Tensor result, RunPad({4, 6}, {1, 0}, {0, 1}, {1, 1}));
  ExpectTensor<float>(result, E::kF32, {4, 6}, {9, 9, 9, 9, 9, 9,  //
                                                1, 9, 2, 9, 3, 9,  //
                                                9, 9, 9, 9, 9, 9,  //
                                                4, 9, 5, 9, 6, 9});
}

TEST(PadTest, NegativeEdgePaddingCropsAfterInteriorPadding) {
  // Interior-padded rows [row 0, pad, row 1] lose the first; columns [c0 p c1 p c2] lose the
  // first and the last.
  ASSERT_OK_AND_ASSIGN(Tensor result, RunPad({2, 3}, {-1, -1}, {0, -1}, {1, 1}));
  ExpectTensor<float>(result, E::kF32, {2, 3}, {9, 9, 9, 9, 5, 9});
}

TEST(PadTest, NegativeLowAndPositiveHighMix) {
  // Columns [c0 c1 c2] lose two on the left and gain two on the right; rows unchanged.
  ASSERT_OK_AND_ASSIGN(Tensor result, RunPad({2, 3}, {0, -2}, {0, 2}, {0, 0}));
  ExpectTensor<float>(result, E::kF32, {2, 3}, {3, 9, 9, 6, 9, 9});
}

TEST(PadTest, CroppingToZeroSizeDimGivesEmptyResult) {
  ASSERT_OK_AND_ASSIGN(Tensor result, RunPad({0, 3}, {-1, 0}, {-1, 0}, {0, 0}));
  EXPECT_EQ(result.dims(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(result.element_count(), 0);
}

TEST(PadTest, EmptyOperandGivesAllPaddingValue) {
  // A zero-size dim has no interior padding: the result is low + high padding only.
  ASSERT_OK_AND_ASSIGN(
      Tensor result, RunOne(Type(E::kI32, {2, 2}),
                            {Make<int32_t>(E::kI32, {0, 2}, {}), Make<int32_t>(E::kI32, {}, {-4})},
                            [](FunctionBuilder& b, std::span<Value* const> p) {
                              return b.Pad(p[0], p[1], {1, 0}, {1, 0}, {3, 0});
                            }));
  ExpectTensor<int32_t>(result, E::kI32, {2, 2}, {-4, -4, -4, -4});
}

TEST(ConcatenateTest, JoinsAlongNonLeadingDim) {
  ASSERT_OK_AND_ASSIGN(Tensor result, RunOne(Type(E::kI32, {2, 3}),
                                             {Make<int32_t>(E::kI32, {2, 1}, {1, 2}),
                                              Make<int32_t>(E::kI32, {2, 2}, {3, 4, 5, 6})},
                                             [](FunctionBuilder& b, std::span<Value* const> p) {
                                               return b.Concatenate({p[0], p[1]}, 1);
                                             }));
  ExpectTensor<int32_t>(result, E::kI32, {2, 3}, {1, 3, 4, 2, 5, 6});
}

TEST(ConcatenateTest, JoinsThreeInputsAlongDim0WithAnEmptyOne) {
  ASSERT_OK_AND_ASSIGN(Tensor result, RunOne(Type(E::kI32, {3, 2}),
                                             {Make<int32_t>(E::kI32, {1, 2}, {1, 2}),
                                              Make<int32_t>(E::kI32, {0, 2}, {}),
                                              Make<int32_t>(E::kI32, {2, 2}, {3, 4, 5, 6})},
                                             [](FunctionBuilder& b, std::span<Value* const> p) {
                                               return b.Concatenate({p[0], p[1], p[2]}, 0);
                                             }));
  ExpectTensor<int32_t>(result, E::kI32, {3, 2}, {1, 2, 3, 4, 5, 6});
}

TEST(IotaTest, CountsAlongNonZeroDim) {
  ASSERT_OK_AND_ASSIGN(Tensor result, RunOne(Type(E::kI32, {2, 3}), {},
                                             [](FunctionBuilder& b, std::span<Value* const>) {
                                               return b.Iota(Type(E::kI32, {2, 3}), 1);
                                             }));
  ExpectTensor<int32_t>(result, E::kI32, {2, 3}, {0, 1, 2, 0, 1, 2});
}

TEST(IotaTest, FloatIotaAlongDim0) {
  ASSERT_OK_AND_ASSIGN(Tensor result, RunOne(Type(E::kF32, {3, 2}), {},
                                             [](FunctionBuilder& b, std::span<Value* const>) {
                                               return b.Iota(Type(E::kF32, {3, 2}), 0);
                                             }));
  ExpectTensor<float>(result, E::kF32, {3, 2}, {0, 0, 1, 1, 2, 2});
}

TEST(IotaTest, HalfAndUnsignedIota) {
  ASSERT_OK_AND_ASSIGN(
      Tensor half, RunOne(Type(E::kF16, {3}), {}, [](FunctionBuilder& b, std::span<Value* const>) {
        return b.Iota(Type(E::kF16, {3}), 0);
      }));
  ExpectTensor<uint16_t>(half, E::kF16, {3}, {0x0000, 0x3c00, 0x4000});  // 0, 1, 2
  ASSERT_OK_AND_ASSIGN(
      Tensor u8, RunOne(Type(E::kU8, {1, 4}), {}, [](FunctionBuilder& b, std::span<Value* const>) {
        return b.Iota(Type(E::kU8, {1, 4}), 1);
      }));
  ExpectTensor<uint8_t>(u8, E::kU8, {1, 4}, {0, 1, 2, 3});
}

TEST(ReverseTest, ReversesOnlyListedDims) {
  const std::vector<int32_t> values = {1, 2, 3, 4, 5, 6};
  ASSERT_OK_AND_ASSIGN(
      Tensor columns,
      RunOne(Type(E::kI32, {2, 3}), {Make<int32_t>(E::kI32, {2, 3}, values)},
             [](FunctionBuilder& b, std::span<Value* const> p) { return b.Reverse(p[0], {1}); }));
  ExpectTensor<int32_t>(columns, E::kI32, {2, 3}, {3, 2, 1, 6, 5, 4});
  ASSERT_OK_AND_ASSIGN(Tensor both,
                       RunOne(Type(E::kI32, {2, 3}), {Make<int32_t>(E::kI32, {2, 3}, values)},
                              [](FunctionBuilder& b, std::span<Value* const> p) {
                                return b.Reverse(p[0], {0, 1});
                              }));
  ExpectTensor<int32_t>(both, E::kI32, {2, 3}, {6, 5, 4, 3, 2, 1});
}

TEST(DynamicSliceTest, InBoundStartIndicesSliceDirectly) {
  // operand [3,4] = 4r + c; start (1, 2), sizes [2, 2].
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunOne(Type(E::kI32, {2, 2}),
                              {Make<int32_t>(E::kI32, {3, 4}, Iota32(12)),
                               Make<int32_t>(E::kI32, {}, {1}), Make<int32_t>(E::kI32, {}, {2})},
                              [](FunctionBuilder& b, std::span<Value* const> p) {
                                return b.DynamicSlice(p[0], {p[1], p[2]}, {2, 2});
                              }));
  ExpectTensor<int32_t>(result, E::kI32, {2, 2}, {6, 7, 10, 11});
}

TEST(DynamicSliceTest, ClampsStartIndicesIntoTheOperand) {
  // start (5, -3) clamps to (3 - 2, 0) = (1, 0).
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunOne(Type(E::kI32, {2, 2}),
                              {Make<int32_t>(E::kI32, {3, 4}, Iota32(12)),
                               Make<int64_t>(E::kI64, {}, {5}), Make<int64_t>(E::kI64, {}, {-3})},
                              [](FunctionBuilder& b, std::span<Value* const> p) {
                                return b.DynamicSlice(p[0], {p[1], p[2]}, {2, 2});
                              }));
  ExpectTensor<int32_t>(result, E::kI32, {2, 2}, {4, 5, 8, 9});
}

TEST(DynamicSliceTest, HugeUnsignedStartIndexClampsToTheEnd) {
  // A u64 start above INT64_MAX is a large positive index, not a negative one.
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunOne(Type(E::kI32, {2}),
                              {Make<int32_t>(E::kI32, {5}, Iota32(5)),
                               Make<uint64_t>(E::kU64, {}, {uint64_t{0xffffffffffffffff}})},
                              [](FunctionBuilder& b, std::span<Value* const> p) {
                                return b.DynamicSlice(p[0], {p[1]}, {2});
                              }));
  ExpectTensor<int32_t>(result, E::kI32, {2}, {3, 4});
}

TEST(DynamicUpdateSliceTest, ClampsStartIndicesSoTheUpdateFits) {
  // start (2, 3) clamps to (3 - 2, 4 - 2) = (1, 2).
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunOne(Type(E::kI32, {3, 4}),
                              {Make<int32_t>(E::kI32, {3, 4}, std::vector<int32_t>(12, 0)),
                               Make<int32_t>(E::kI32, {2, 2}, {1, 2, 3, 4}),
                               Make<uint32_t>(E::kU32, {}, {2}), Make<uint32_t>(E::kU32, {}, {3})},
                              [](FunctionBuilder& b, std::span<Value* const> p) {
                                return b.DynamicUpdateSlice(p[0], p[1], {p[2], p[3]});
                              }));
  ExpectTensor<int32_t>(result, E::kI32, {3, 4}, {0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4});
}

TEST(DynamicUpdateSliceTest, NegativeStartClampsToZero) {
  ASSERT_OK_AND_ASSIGN(
      Tensor result, RunOne(Type(E::kF32, {4}),
                            {Make<float>(E::kF32, {4}, {1, 2, 3, 4}),
                             Make<float>(E::kF32, {2}, {-1, -2}), Make<int8_t>(E::kI8, {}, {-100})},
                            [](FunctionBuilder& b, std::span<Value* const> p) {
                              return b.DynamicUpdateSlice(p[0], p[1], {p[2]});
                            }));
  ExpectTensor<float>(result, E::kF32, {4}, {-1, -2, 3, 4});
}

}  // namespace
}  // namespace accy::reference_test
