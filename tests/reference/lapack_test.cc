// Reference evaluator tests for the lapack op (src/reference/lapack.cc). potrf: exact factors of
// a 3x3 a = L L^T with L = [[2, 0, 0], [1, 3, 0], [4, -1, 5]] (every step of the
// Cholesky–Banachiewicz loop is exact: square roots of 4, 9, 25), for 'L' and 'U' with the
// unread triangle holding values that must come back unchanged, in f32 and f64; info for
// matrices that are not positive definite (a negative and a zero pivot, NaN) per batch; empty
// shapes; and FunctionBuilder::Potrf's errors with their messages.
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/reference/reference_test_util.h"
#include "tests/test_util.h"

namespace accy::reference_test {
namespace {

using ::testing::HasSubstr;

// Evaluates potrf(a) and returns {factor, info}.
StatusOr<std::vector<Tensor>> Potrf(const Tensor& a, bool lower) {
  std::vector<int64_t> batch(a.type().dims().begin(), a.type().dims().end() - 2);
  return RunAll({a.type(), Type(E::kI32, batch)}, {a},
                [lower](FunctionBuilder& b, std::span<Value* const> p) {
                  return b.Potrf(p[0], lower);
                });
}

TEST(LapackPotrfReferenceTest, LowerFactorIsExactAndKeepsTheUpperTriangle) {
  // A's lower triangle [[4], [2, 10], [8, 1, 42]]; 100, 200, 300 above it are not read.
  const std::vector<double> a = {4, 100, 200, 2, 10, 300, 8, 1, 42};
  const std::vector<double> factor = {2, 100, 200, 1, 3, 300, 4, -1, 5};
  for (E type : {E::kF32, E::kF64}) {
    Tensor input = Tensor::Allocate(Type(type, {3, 3})).value();
    for (int64_t i = 0; i < 9; ++i) input.SetFromDouble(i, a[static_cast<size_t>(i)]);
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, Potrf(input, /*lower=*/true));
    ASSERT_EQ(out.size(), 2u);
    for (int64_t i = 0; i < 9; ++i) {
      EXPECT_EQ(out[0].GetAsDouble(i), factor[static_cast<size_t>(i)]) << i;
    }
    ExpectTensor<int32_t>(out[1], E::kI32, {}, {0});
  }
}

TEST(LapackPotrfReferenceTest, UpperFactorIsLTransposedAndKeepsTheLowerTriangle) {
  const std::vector<double> a = {4, 2, 8, -100, 10, 1, -200, -300, 42};
  const std::vector<double> factor = {2, 1, 4, -100, 3, -1, -200, -300, 5};
  Tensor input = Tensor::Allocate(Type(E::kF64, {3, 3})).value();
  for (int64_t i = 0; i < 9; ++i) input.SetFromDouble(i, a[static_cast<size_t>(i)]);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, Potrf(input, /*lower=*/false));
  for (int64_t i = 0; i < 9; ++i) {
    EXPECT_EQ(out[0].GetAsDouble(i), factor[static_cast<size_t>(i)]) << i;
  }
  ExpectTensor<int32_t>(out[1], E::kI32, {}, {0});
}

TEST(LapackPotrfReferenceTest, InfoIsTheOrderOfTheFirstMinorThatIsNotPositiveDefinite) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Batch of 4: positive definite (info 0); leading 2x2 minor 1 - 4 < 0 (info 2); a zero pivot
  // at order 3 (info 3); NaN first (info 1).
  const std::vector<double> a = {4,   0, 0, 0, 1, 0, 0, 0, 9,    //
                                 1,   0, 0, 2, 1, 0, 0, 0, 1,    //
                                 1,   0, 0, 1, 2, 0, 1, 1, 1,    //
                                 nan, 0, 0, 0, 1, 0, 0, 0, 1};
  Tensor input = Tensor::Allocate(Type(E::kF32, {2, 2, 3, 3})).value();
  for (int64_t i = 0; i < 36; ++i) input.SetFromDouble(i, a[static_cast<size_t>(i)]);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, Potrf(input, /*lower=*/true));
  ExpectTensor<int32_t>(out[1], E::kI32, {2, 2}, {0, 2, 3, 1});
  // The positive definite batch is factored: diag(2, 1, 3).
  EXPECT_EQ(out[0].GetAsDouble(0), 2);
  EXPECT_EQ(out[0].GetAsDouble(4), 1);
  EXPECT_EQ(out[0].GetAsDouble(8), 3);
}

TEST(LapackPotrfReferenceTest, EmptyShapesGiveEmptyFactorsAndZeroInfo) {
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                       Potrf(Tensor::Allocate(Type(E::kF32, {2, 0, 0})).value(), true));
  EXPECT_EQ(out[0].element_count(), 0);
  ExpectTensor<int32_t>(out[1], E::kI32, {2}, {0, 0});
  ASSERT_OK_AND_ASSIGN(out, Potrf(Tensor::Allocate(Type(E::kF64, {0, 3, 3})).value(), false));
  EXPECT_EQ(out[0].element_count(), 0);
  EXPECT_EQ(out[1].element_count(), 0);
}

TEST(LapackPotrfReferenceTest, BuilderRejectsTypesPotrfDoesNotTake) {
  struct Bad {
    TensorType type;
    std::string message;
  };
  const Bad cases[] = {
      {Type(E::kF32, {3, 4}),
       "lapack @lapack_spotrf_ffi: a has type tensor<3x4xf32>, expected square matrices"},
      {Type(E::kF32, {3}),
       "lapack @lapack_spotrf_ffi: a has type tensor<3xf32>, expected rank >= 2"},
      {Type(E::kF16, {3, 3}),
       "lapack @lapack_spotrf_ffi: a has type tensor<3x3xf16>, expected element type f32"},
  };
  for (const Bad& bad : cases) {
    Builder builder("potrf_errors");
    FunctionBuilder f = *builder.BeginFunction("main", {bad.type}, {bad.type});
    StatusOr<std::vector<Value*>> results = f.Potrf(f.Parameter(0), true);
    ASSERT_FALSE(results.ok()) << bad.type.ToString();
    EXPECT_EQ(results.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(results.status().message()), HasSubstr(bad.message));
  }
}

}  // namespace
}  // namespace accy::reference_test
