// Reference evaluator tests for reduce and cumsum (src/reference/reduction_ops.cc): init values,
// zero-size dims, NaN propagation, multi-operand bodies, accurate float sums, and agreement
// between the single-op short cut and evaluating the body region.
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "tests/reference/reference_test_util.h"
#include "tests/test_util.h"

namespace accy::reference_test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// reduce(x, init) with a named reducer over `dims`; init is a rank-0 constant.
StatusOr<Tensor> RunReduce(const Tensor& x, double init, std::string_view reducer,
                           std::vector<int64_t> dims, const TensorType& result_type) {
  return RunOne(result_type, {x}, [&](FunctionBuilder& b, std::span<Value* const> p)
                                      -> StatusOr<Value*> {
    ACCY_ASSIGN_OR_RETURN(Value* init_value, b.ConstantScalar(x.element_type(), init));
    return b.Reduce(p[0], init_value, result_type, reducer, dims);
  });
}

StatusOr<Tensor> RunCumsum(const Tensor& x, int64_t dimension) {
  return RunOne(x.type(), {x}, [&](FunctionBuilder& b, std::span<Value* const> p) {
    return b.Cumsum(p[0], dimension);
  });
}

std::vector<int32_t> Iota(int32_t n) {
  std::vector<int32_t> values(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = i;
  return values;
}

TEST(ReductionTest, ReduceSumStartsFromNonIdentityInit) {
  const Tensor x = Make<float>(E::kF32, {4}, {1, 2, 3, 4});
  ASSERT_OK_AND_ASSIGN(Tensor sum, RunReduce(x, 10, "sum", {0}, Type(E::kF32, {})));
  ExpectTensor<float>(sum, E::kF32, {}, {20});
  const Tensor i = Make<int32_t>(E::kI32, {2, 2}, {1, 2, 3, 4});
  ASSERT_OK_AND_ASSIGN(Tensor rows, RunReduce(i, 10, "sum", {1}, Type(E::kI32, {2})));
  ExpectTensor<int32_t>(rows, E::kI32, {2}, {13, 17});
  ASSERT_OK_AND_ASSIGN(Tensor prod, RunReduce(i, 2, "prod", {0, 1}, Type(E::kI32, {})));
  ExpectTensor<int32_t>(prod, E::kI32, {}, {48});
}

TEST(ReductionTest, ReduceOverZeroSizeDimGivesInit) {
  const Tensor x = Make<float>(E::kF32, {2, 0}, std::vector<float>{});
  ASSERT_OK_AND_ASSIGN(Tensor sum, RunReduce(x, 5, "sum", {1}, Type(E::kF32, {2})));
  ExpectTensor<float>(sum, E::kF32, {2}, {5, 5});
  const Tensor y = Make<float>(E::kF32, {0, 3}, std::vector<float>{});
  ASSERT_OK_AND_ASSIGN(Tensor max, RunReduce(y, -kInf, "max", {0}, Type(E::kF32, {3})));
  ExpectTensor<float>(max, E::kF32, {3}, {-kInf, -kInf, -kInf});
  // Keeping the zero-size dim gives an empty result.
  ASSERT_OK_AND_ASSIGN(Tensor empty, RunReduce(y, 0, "sum", {1}, Type(E::kF32, {0})));
  EXPECT_EQ(empty.element_count(), 0);
}

TEST(ReductionTest, ReduceMaxPropagatesNaN) {
  const Tensor x = Make<float>(E::kF32, {2, 3}, {1, kNaN, 3, 4, 5, 6});
  ASSERT_OK_AND_ASSIGN(Tensor max, RunReduce(x, -kInf, "max", {1}, Type(E::kF32, {2})));
  ExpectTensor<float>(max, E::kF32, {2}, {kNaN, 6});
  ASSERT_OK_AND_ASSIGN(Tensor min, RunReduce(x, kInf, "min", {1}, Type(E::kF32, {2})));
  ExpectTensor<float>(min, E::kF32, {2}, {kNaN, 4});
  // A NaN init propagates too.
  ASSERT_OK_AND_ASSIGN(Tensor nan_init, RunReduce(x, kNaN, "max", {0, 1}, Type(E::kF32, {})));
  ExpectTensor<float>(nan_init, E::kF32, {}, {kNaN});
}

TEST(ReductionTest, ReduceMaxOfSignedZerosIsPositiveZero) {
  const Tensor x = Make<float>(E::kF32, {2}, {-0.0f, 0.0f});
  ASSERT_OK_AND_ASSIGN(Tensor max, RunReduce(x, -0.0, "max", {0}, Type(E::kF32, {})));
  ExpectTensor<float>(max, E::kF32, {}, {0.0f});
  ASSERT_OK_AND_ASSIGN(Tensor min, RunReduce(x, 0.0, "min", {0}, Type(E::kF32, {})));
  ExpectTensor<float>(min, E::kF32, {}, {-0.0f});
}

TEST(ReductionTest, ReduceOverDims0And2OfRank3) {
  // x[i][j][k] = 6i + 2j + k over [2,3,2]; summing i and k gives 14 + 8j.
  const Tensor x = Make<int32_t>(E::kI32, {2, 3, 2}, Iota(12));
  ASSERT_OK_AND_ASSIGN(Tensor sum, RunReduce(x, 0, "sum", {0, 2}, Type(E::kI32, {3})));
  ExpectTensor<int32_t>(sum, E::kI32, {3}, {14, 22, 30});
  ASSERT_OK_AND_ASSIGN(Tensor max, RunReduce(x, -100, "max", {2, 0}, Type(E::kI32, {3})));
  ExpectTensor<int32_t>(max, E::kI32, {3}, {7, 9, 11});
}

TEST(ReductionTest, ArgmaxReduceWithTwoOperandsAndBodyRegion) {
  const Tensor values = Make<float>(E::kF32, {2, 4}, {3, 7, 7, 1, 5, 2, 9, 9});
  const Tensor indices = Make<int32_t>(E::kI32, {2, 4}, {0, 1, 2, 3, 0, 1, 2, 3});
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> results,
      RunAll({Type(E::kF32, {2}), Type(E::kI32, {2})}, {values, indices},
             [](FunctionBuilder& b, std::span<Value* const> p) -> StatusOr<std::vector<Value*>> {
               ACCY_ASSIGN_OR_RETURN(Value* init_value, b.ConstantScalar(E::kF32, -kInf));
               ACCY_ASSIGN_OR_RETURN(Value* init_index, b.ConstantScalar(E::kI32, -1));
               // Arguments: accumulated value and index, then the input value and index. A
               // strictly greater value wins, so ties keep the first index.
               RegionBodyFn body = [](FunctionBuilder& r, std::span<Value* const> a) -> Status {
                 ACCY_ASSIGN_OR_RETURN(Value* take, r.Compare(a[2], a[0], "GT"));
                 ACCY_ASSIGN_OR_RETURN(Value* value, r.Select(take, a[2], a[0]));
                 ACCY_ASSIGN_OR_RETURN(Value* index, r.Select(take, a[3], a[1]));
                 return r.Return({value, index});
               };
               return b.Reduce({p[0], p[1]}, {init_value, init_index}, {1}, body);
             }));
  ASSERT_EQ(results.size(), 2u);
  ExpectTensor<float>(results[0], E::kF32, {2}, {7, 9});
  ExpectTensor<int32_t>(results[1], E::kI32, {2}, {1, 2});
}

TEST(ReductionTest, GeneralBodyRegionAgreesWithNamedShortCut) {
  // A body of two ops (a - (-b)) is evaluated as a region; it must wrap exactly as "sum" does.
  const Tensor x = Make<int32_t>(E::kI32, {3}, {std::numeric_limits<int32_t>::max(), 1, 5});
  ASSERT_OK_AND_ASSIGN(Tensor named, RunReduce(x, 0, "sum", {0}, Type(E::kI32, {})));
  ASSERT_OK_AND_ASSIGN(
      Tensor region,
      RunOne(Type(E::kI32, {}), {x},
             [](FunctionBuilder& b, std::span<Value* const> p) -> StatusOr<Value*> {
               ACCY_ASSIGN_OR_RETURN(Value* zero, b.ConstantScalar(E::kI32, 0));
               RegionBodyFn body = [](FunctionBuilder& r, std::span<Value* const> a) -> Status {
                 ACCY_ASSIGN_OR_RETURN(Value* negated, r.Negate(a[1]));
                 ACCY_ASSIGN_OR_RETURN(Value* sum, r.Subtract(a[0], negated));
                 return r.Return({sum});
               };
               ACCY_ASSIGN_OR_RETURN(std::vector<Value*> results,
                                     b.Reduce({p[0]}, {zero}, {0}, body));
               return results[0];
             }));
  ExpectTensor<int32_t>(named, E::kI32, {}, {std::numeric_limits<int32_t>::min() + 5});
  ExpectTensor<int32_t>(region, E::kI32, {}, {std::numeric_limits<int32_t>::min() + 5});
}

TEST(ReductionTest, SumOf2To25OnesInF32IsExact) {
  ASSERT_OK_AND_ASSIGN(Tensor ones, Tensor::Filled(Type(E::kF32, {int64_t{1} << 25}), 1.0));
  ASSERT_OK_AND_ASSIGN(Tensor sum, RunReduce(ones, 0, "sum", {0}, Type(E::kF32, {})));
  ExpectTensor<float>(sum, E::kF32, {}, {33554432.0f});
}

TEST(ReductionTest, FloatSumIsCompensated) {
  // Sequential f32 addition would lose the 1 (1e8 + 1 rounds to 1e8).
  const Tensor x = Make<float>(E::kF32, {3}, {1e8f, 1, -1e8f});
  ASSERT_OK_AND_ASSIGN(Tensor sum, RunReduce(x, 0, "sum", {0}, Type(E::kF32, {})));
  ExpectTensor<float>(sum, E::kF32, {}, {1});
  // An infinite term gives infinity; opposite infinities give NaN.
  const Tensor y = Make<float>(E::kF32, {2, 2}, {kInf, 1, kInf, -kInf});
  ASSERT_OK_AND_ASSIGN(Tensor inf_sum, RunReduce(y, 0, "sum", {1}, Type(E::kF32, {2})));
  ExpectTensor<float>(inf_sum, E::kF32, {2}, {kInf, kNaN});
  // -0 + -0 stays -0.
  const Tensor z = Make<float>(E::kF32, {1}, {-0.0f});
  ASSERT_OK_AND_ASSIGN(Tensor zero_sum, RunReduce(z, -0.0, "sum", {0}, Type(E::kF32, {})));
  ExpectTensor<float>(zero_sum, E::kF32, {}, {-0.0f});
}

TEST(ReductionTest, F16SumRoundsOnceAtTheEnd) {
  // 2048 + 1 + 1 in f16 step by step stays 2048 (each +1 is a tie to even); the exact sum 2050
  // is representable (bits 0x6801).
  const Tensor x = Make<uint16_t>(E::kF16, {3}, {0x6800, 0x3C00, 0x3C00});
  ASSERT_OK_AND_ASSIGN(Tensor sum, RunReduce(x, 0, "sum", {0}, Type(E::kF16, {})));
  ExpectTensor<uint16_t>(sum, E::kF16, {}, {0x6801});
}

TEST(ReductionTest, ReduceAndOrOverBooleans) {
  const Tensor x = Make<uint8_t>(E::kI1, {2, 2}, {1, 1, 0, 1});
  ASSERT_OK_AND_ASSIGN(Tensor all, RunReduce(x, 1, "and", {1}, Type(E::kI1, {2})));
  ExpectTensor<uint8_t>(all, E::kI1, {2}, {1, 0});
  ASSERT_OK_AND_ASSIGN(Tensor any, RunReduce(x, 0, "or", {0}, Type(E::kI1, {2})));
  ExpectTensor<uint8_t>(any, E::kI1, {2}, {1, 1});
}

TEST(ReductionTest, CumsumAlongDim1) {
  const Tensor x = Make<float>(E::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_OK_AND_ASSIGN(Tensor along1, RunCumsum(x, 1));
  ExpectTensor<float>(along1, E::kF32, {2, 3}, {1, 3, 6, 4, 9, 15});
  ASSERT_OK_AND_ASSIGN(Tensor along0, RunCumsum(x, 0));
  ExpectTensor<float>(along0, E::kF32, {2, 3}, {1, 2, 3, 5, 7, 9});
}

TEST(ReductionTest, CumsumOfIntegersWraps) {
  const Tensor x = Make<int8_t>(E::kI8, {3}, {100, 100, 100});
  ASSERT_OK_AND_ASSIGN(Tensor sums, RunCumsum(x, 0));
  ExpectTensor<int8_t>(sums, E::kI8, {3}, {100, -56, 44});
}

TEST(ReductionTest, CumsumOfF16AccumulatesInDouble) {
  // Outputs 2048, 2049 -> 2048 (tie to even), 2050; the running sum is not re-rounded.
  const Tensor x = Make<uint16_t>(E::kF16, {3}, {0x6800, 0x3C00, 0x3C00});
  ASSERT_OK_AND_ASSIGN(Tensor sums, RunCumsum(x, 0));
  ExpectTensor<uint16_t>(sums, E::kF16, {3}, {0x6800, 0x6800, 0x6801});
  const Tensor z = Make<float>(E::kF32, {2}, {-0.0f, 1});
  ASSERT_OK_AND_ASSIGN(Tensor zero_first, RunCumsum(z, 0));
  ExpectTensor<float>(zero_first, E::kF32, {2}, {-0.0f, 1});
}

}  // namespace
}  // namespace accy::reference_test
