// Reference evaluator tests for sort and top_k (src/reference/sort_ops.cc): the interpreter
// suite's stable two-operand sort, a comparator evaluated as a region (multi-key with NaN
// canonicalization, as JAX writes it), descending and non-last dims, empty rows, and top_k's
// order (TOTALORDER descending, ties by lower index, NaNs by sign). Expected values are
// hand-computed; NaN and signed-zero placement is checked bit for bit.
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "tests/reference/reference_test_util.h"
#include "tests/test_util.h"

namespace accy::reference_test {
namespace {

RegionBodyFn CompareFirst(std::string direction, std::string type = "") {
  return [direction, type](FunctionBuilder& b, std::span<Value* const> a) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * c, b.Compare(a[0], a[1], direction, type));
    return b.Return({c});
  };
}

std::vector<uint32_t> Bits(const Tensor& t) {
  std::vector<uint32_t> bits(static_cast<size_t>(t.element_count()));
  std::memcpy(bits.data(), t.data(), bits.size() * 4);
  return bits;
}

TEST(SortTest, InterpreterStableSortMovesBothOperands) {
  // tests/interpret/sort.mlir @sort_stable: GT on operand 0 along dim 0.
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> results,
      RunAll({Type(E::kI64, {2, 3}), Type(E::kI64, {2, 3})},
             {Make<int64_t>(E::kI64, {2, 3}, {1, 2, 3, 3, 2, 1}),
              Make<int64_t>(E::kI64, {2, 3}, {3, 2, 1, 1, 2, 3})},
             [](FunctionBuilder& b, std::span<Value* const> p) {
               return b.Sort({p[0], p[1]}, 0, CompareFirst("GT"), true);
             }));
  ExpectTensor<int64_t>(results[0], E::kI64, {2, 3}, {3, 2, 3, 1, 2, 1});
  ExpectTensor<int64_t>(results[1], E::kI64, {2, 3}, {1, 2, 1, 3, 2, 3});
}

TEST(SortTest, StableSortKeepsTiesInOrderAlongTheLastDim) {
  // Keys with ties; the payload shows the original positions.
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> results,
      RunAll({Type(E::kI32, {2, 5}), Type(E::kI32, {2, 5})},
             {Make<int32_t>(E::kI32, {2, 5}, {2, 1, 2, 1, 0, 5, 5, 5, 4, 5}),
              Make<int32_t>(E::kI32, {2, 5}, {0, 1, 2, 3, 4, 0, 1, 2, 3, 4})},
             [](FunctionBuilder& b, std::span<Value* const> p) {
               return b.Sort({p[0], p[1]}, -1, CompareFirst("LT"), true);
             }));
  ExpectTensor<int32_t>(results[0], E::kI32, {2, 5}, {0, 1, 1, 2, 2, 4, 5, 5, 5, 5});
  ExpectTensor<int32_t>(results[1], E::kI32, {2, 5}, {4, 1, 3, 0, 2, 3, 0, 1, 2, 4});
}

TEST(SortTest, TotalOrderAscendingAndDescendingPlaceNaNsAndZerosBySign) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = Make<float>(E::kF32, {6}, {nan, -0.0f, -nan, 1.0f, 0.0f, -inf});
  ASSERT_OK_AND_ASSIGN(Tensor up, RunOne(Type(E::kF32, {6}), {x},
                                         [](FunctionBuilder& b, std::span<Value* const> p) {
                                           return b.Sort(p[0], 0, "LT");
                                         }));
  EXPECT_EQ(Bits(up), (std::vector<uint32_t>{0xFFC00000u, 0xFF800000u, 0x80000000u, 0u,
                                             0x3F800000u, 0x7FC00000u}));
  ASSERT_OK_AND_ASSIGN(Tensor down, RunOne(Type(E::kF32, {6}), {x},
                                           [](FunctionBuilder& b, std::span<Value* const> p) {
                                             return b.Sort(p[0], 0, "GT");
                                           }));
  EXPECT_EQ(Bits(down), (std::vector<uint32_t>{0x7FC00000u, 0x3F800000u, 0u, 0x80000000u,
                                               0xFF800000u, 0xFFC00000u}));
}

TEST(SortTest, MultiKeyComparatorRegionIsEvaluated) {
  // JAX's lexicographic comparator over (key0, key1): key0 LT, or key0 EQ and key1 LT.
  RegionBodyFn lexicographic = [](FunctionBuilder& b, std::span<Value* const> a) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * lt0, b.Compare(a[0], a[1], "LT"));
    ACCY_ASSIGN_OR_RETURN(Value * eq0, b.Compare(a[0], a[1], "EQ"));
    ACCY_ASSIGN_OR_RETURN(Value * lt1, b.Compare(a[2], a[3], "LT"));
    ACCY_ASSIGN_OR_RETURN(Value * both, b.And(eq0, lt1));
    ACCY_ASSIGN_OR_RETURN(Value * less, b.Or(lt0, both));
    return b.Return({less});
  };
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> results,
      RunAll({Type(E::kI8, {3, 2}), Type(E::kF64, {3, 2})},
             {Make<int8_t>(E::kI8, {3, 2}, {1, 0, 0, 0, 1, -1}),
              Make<double>(E::kF64, {3, 2}, {0.5, 2.0, 3.0, 1.0, -1.0, 0.0})},
             [&](FunctionBuilder& b, std::span<Value* const> p) {
               return b.Sort({p[0], p[1]}, 0, lexicographic);
             }));
  // Column 0: (1, .5), (0, 3), (1, -1) -> (0, 3), (1, -1), (1, .5); column 1: (0, 2), (0, 1),
  // (-1, 0) -> (-1, 0), (0, 1), (0, 2).
  ExpectTensor<int8_t>(results[0], E::kI8, {3, 2}, {0, -1, 1, 0, 1, 0});
  ExpectTensor<double>(results[1], E::kF64, {3, 2}, {3.0, 0.0, -1.0, 1.0, 0.5, 2.0});
}

TEST(SortTest, MiddleDimOfRankThreeAndEmptyRows) {
  // [2, 3, 2], sorted descending along dim 1.
  ASSERT_OK_AND_ASSIGN(
      Tensor sorted,
      RunOne(Type(E::kU16, {2, 3, 2}),
             {Make<uint16_t>(E::kU16, {2, 3, 2}, {1, 9, 5, 8, 3, 7, 6, 0, 4, 2, 65535, 1})},
             [](FunctionBuilder& b, std::span<Value* const> p) { return b.Sort(p[0], 1, "GT"); }));
  ExpectTensor<uint16_t>(sorted, E::kU16, {2, 3, 2}, {5, 9, 3, 8, 1, 7, 65535, 2, 6, 1, 4, 0});
  ASSERT_OK_AND_ASSIGN(Tensor empty,
                       RunOne(Type(E::kF32, {0, 3}), {Make<float>(E::kF32, {0, 3}, {})},
                              [](FunctionBuilder& b, std::span<Value* const> p) {
                                return b.Sort(p[0], 1, "LT");
                              }));
  EXPECT_EQ(empty.element_count(), 0);
}

TEST(TopKTest, LargestFirstTiesByLowerIndex) {
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> results,
      RunAll({Type(E::kI32, {2, 3}), Type(E::kI32, {2, 3})},
             {Make<int32_t>(E::kI32, {2, 5}, {3, 7, 3, 7, 1, -5, -2, -9, -2, -2})},
             [](FunctionBuilder& b, std::span<Value* const> p) { return b.TopK(p[0], 3); }));
  ExpectTensor<int32_t>(results[0], E::kI32, {2, 3}, {7, 7, 3, -2, -2, -2});
  ExpectTensor<int32_t>(results[1], E::kI32, {2, 3}, {1, 3, 0, 1, 3, 4});
}

TEST(TopKTest, FloatsInTotalOrderAsTheSuiteExpects) {
  // top_k_float32_5_chlo: [inf, nan, -nan, -inf, 3] -> [nan, inf, 3, -inf, -nan], [1, 0, 4, 3, 2].
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> results,
      RunAll({Type(E::kF32, {5}), Type(E::kI32, {5})},
             {Make<float>(E::kF32, {5}, {inf, nan, -nan, -inf, 3.0f})},
             [](FunctionBuilder& b, std::span<Value* const> p) { return b.TopK(p[0], 5); }));
  EXPECT_EQ(Bits(results[0]), (std::vector<uint32_t>{0x7FC00000u, 0x7F800000u, 0x40400000u,
                                                     0xFF800000u, 0xFFC00000u}));
  ExpectTensor<int32_t>(results[1], E::kI32, {5}, {1, 0, 4, 3, 2});
  // +0 ranks above -0.
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> zeros,
      RunAll({Type(E::kF32, {1}), Type(E::kI32, {1})}, {Make<float>(E::kF32, {2}, {-0.0f, 0.0f})},
             [](FunctionBuilder& b, std::span<Value* const> p) { return b.TopK(p[0], 1); }));
  ExpectTensor<int32_t>(zeros[1], E::kI32, {1}, {1});
}

}  // namespace
}  // namespace accy::reference_test
