// Reference evaluator tests for the lapack op (src/reference/lapack.cc). potrf: exact factors of
// a 3x3 a = L L^T with L = [[2, 0, 0], [1, 3, 0], [4, -1, 5]] (every step of the
// Cholesky–Banachiewicz loop is exact: square roots of 4, 9, 25), for 'L' and 'U' with the
// unread triangle holding values that must come back unchanged, in f32 and f64; info for
// matrices that are not positive definite (a negative and a zero pivot, NaN) per batch; empty
// shapes; and FunctionBuilder::Potrf's errors with their messages. getrf: exact LU, 1-based
// pivots and info of small matrices whose elimination is exact in binary (JAX's own 3x3 iota
// example, a 2x2, a wide 2x3 and a tall 3x2), a zero column and an all-zero matrix, batches.
// geqrf / orgqr: LAPACK's reflectors of [[3, 1], [4, 2]] (beta -5, tau 8/5, v 1/2; R [[-5,
// -2.2], [0, 0.4]], Q [[-0.6, -0.8], [-0.8, 0.6]]) and a zero column below the diagonal (tau 0).
#include <algorithm>
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

// Evaluates getrf(a) and returns {lu, pivots, info}.
StatusOr<std::vector<Tensor>> Getrf(const Tensor& a) {
  const std::vector<int64_t>& dims = a.type().dims();
  std::vector<int64_t> batch(dims.begin(), dims.end() - 2);
  std::vector<int64_t> pivot_dims = batch;
  pivot_dims.push_back(std::min(dims[dims.size() - 2], dims.back()));
  return RunAll({a.type(), Type(E::kI32, pivot_dims), Type(E::kI32, batch)}, {a},
                [](FunctionBuilder& b, std::span<Value* const> p) { return b.Getrf(p[0]); });
}

TEST(LapackGetrfReferenceTest, JaxsIotaExampleGivesJaxsLuPivotsAndInfo) {
  // cpu_lu_lapack_getrf.py: iota(9) as 3x3 -> lu [[6, 7, 8], [0, 1, 2], [0.5, 0.5, 0]], pivots
  // (1-based) [3, 3, 3], and U[2][2] = 0 exactly, so info 3.
  for (E type : {E::kF32, E::kF64}) {
    Tensor a = Tensor::Allocate(Type(type, {3, 3})).value();
    for (int64_t i = 0; i < 9; ++i) a.SetFromDouble(i, static_cast<double>(i));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, Getrf(a));
    const std::vector<double> lu = {6, 7, 8, 0, 1, 2, 0.5, 0.5, 0};
    for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(out[0].GetAsDouble(i), lu[static_cast<size_t>(i)]);
    ExpectTensor<int32_t>(out[1], E::kI32, {3}, {3, 3, 3});
    ExpectTensor<int32_t>(out[2], E::kI32, {}, {3});
  }
}

TEST(LapackGetrfReferenceTest, SquareWideAndTallMatricesInOneBatchShape) {
  // [[2, 1], [4, 4]]: rows swap, l = 1/2, u22 = 1 - 2 = -1.
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> square,
                       Getrf(Make<double>(E::kF64, {2, 2}, {2, 1, 4, 4})));
  ExpectTensor<double>(square[0], E::kF64, {2, 2}, {4, 4, 0.5, -1});
  ExpectTensor<int32_t>(square[1], E::kI32, {2}, {2, 2});
  ExpectTensor<int32_t>(square[2], E::kI32, {}, {0});
  // Wide [[2, 4, 6], [4, 4, 4]] -> [[4, 4, 4], [0.5, 2, 4]].
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> wide,
                       Getrf(Make<float>(E::kF32, {1, 2, 3}, {2, 4, 6, 4, 4, 4})));
  ExpectTensor<float>(wide[0], E::kF32, {1, 2, 3}, {4, 4, 4, 0.5f, 2, 4});
  ExpectTensor<int32_t>(wide[1], E::kI32, {1, 2}, {2, 2});
  ExpectTensor<int32_t>(wide[2], E::kI32, {1}, {0});
  // Tall [[1, 2], [4, 0], [2, 4]]: pivot 4 (row 2); then [[1/4, 2], [1/2, 4]] below, pivot 4
  // (row 3): lu [[4, 0], [0.5, 4], [0.25, 0.5]].
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> tall,
                       Getrf(Make<float>(E::kF32, {3, 2}, {1, 2, 4, 0, 2, 4})));
  ExpectTensor<float>(tall[0], E::kF32, {3, 2}, {4, 0, 0.5f, 4, 0.25f, 0.5f});
  ExpectTensor<int32_t>(tall[1], E::kI32, {2}, {2, 3});
  ExpectTensor<int32_t>(tall[2], E::kI32, {}, {0});
}

TEST(LapackGetrfReferenceTest, ZeroPivotsSetInfoAndKeepThePivotRow) {
  // Batch 0: a zero last column, U[2][2] = 0 (info 3); batch 1: all zeros, no row swaps (pivots
  // 1, 2, 3: the first largest |a[i][k]| is row k) and info 1.
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> out,
      Getrf(Make<double>(E::kF64, {2, 3, 3},
                         {1, 2, 0, 4, 4, 0, 2, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})));
  ExpectTensor<int32_t>(out[1], E::kI32, {2, 3}, {2, 3, 3, 1, 2, 3});
  ExpectTensor<int32_t>(out[2], E::kI32, {2}, {3, 1});
  // Batch 0: rows [4, 4, 0], then [2, 8, 0] - 1/2 [4, 4, 0] = [0, 6, 0] above [1, 2, 0] - 1/4
  // [4, 4, 0] = [0, 1, 0]: l = 1/6, and the last column stays 0.
  EXPECT_EQ(out[0].GetAsDouble(0), 4);
  EXPECT_EQ(out[0].GetAsDouble(3), 0.5);
  EXPECT_EQ(out[0].GetAsDouble(4), 6);
  EXPECT_EQ(out[0].GetAsDouble(6), 0.25);
  EXPECT_EQ(out[0].GetAsDouble(7), 1.0 / 6.0);
  EXPECT_EQ(out[0].GetAsDouble(8), 0);
}

TEST(LapackGetrfReferenceTest, EmptyShapes) {
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                       Getrf(Tensor::Allocate(Type(E::kF32, {2, 0, 3})).value()));
  EXPECT_EQ(out[0].element_count(), 0);
  EXPECT_EQ(out[1].type(), Type(E::kI32, {2, 0}));
  ExpectTensor<int32_t>(out[2], E::kI32, {2}, {0, 0});
}

TEST(LapackGetrfReferenceTest, BuilderRejectsTypesGetrfDoesNotTake) {
  Builder builder("getrf_errors");
  FunctionBuilder f =
      *builder.BeginFunction("main", {Type(E::kI32, {3, 3})}, {Type(E::kI32, {3, 3})});
  StatusOr<std::vector<Value*>> results = f.Getrf(f.Parameter(0));
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(results.status().message()), HasSubstr("lapack"));
}

TEST(LapackQrReferenceTest, HouseholderReflectorsFollowLapacksConvention) {
  const Tensor a = Make<double>(E::kF64, {2, 2}, {3, 1, 4, 2});
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> qr,
      RunAll({Type(E::kF64, {2, 2}), Type(E::kF64, {2})}, {a},
             [](FunctionBuilder& b, std::span<Value* const> p) { return b.Geqrf(p[0]); }));
  const std::vector<double> factored = {-5, -2.2, 0.5, 0.4};
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(qr[0].GetAsDouble(i), factored[static_cast<size_t>(i)], 1e-15) << i;
  }
  EXPECT_NEAR(qr[1].GetAsDouble(0), 1.6, 1e-15);
  EXPECT_EQ(qr[1].GetAsDouble(1), 0);  // nothing below the last diagonal element: H = I
  ASSERT_OK_AND_ASSIGN(Tensor q, RunOne(Type(E::kF64, {2, 2}), {qr[0], qr[1]},
                                        [](FunctionBuilder& b, std::span<Value* const> p) {
                                          return b.Orgqr(p[0], p[1]);
                                        }));
  const std::vector<double> expected_q = {-0.6, -0.8, -0.8, 0.6};
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(q.GetAsDouble(i), expected_q[static_cast<size_t>(i)], 1e-15) << i;
  }
}

TEST(LapackQrReferenceTest, ZeroColumnBelowTheDiagonalGivesTauZeroAndKeepsTheSign) {
  // Column 0 is already [2, 0, 0]: tau 0, R[0][0] stays +2 (no sign flip).
  const Tensor a = Make<float>(E::kF32, {3, 2}, {2, 1, 0, 3, 0, 4});
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> qr,
      RunAll({Type(E::kF32, {3, 2}), Type(E::kF32, {2})}, {a},
             [](FunctionBuilder& b, std::span<Value* const> p) { return b.Geqrf(p[0]); }));
  EXPECT_EQ(qr[0].GetAsDouble(0), 2);
  EXPECT_EQ(qr[1].GetAsDouble(0), 0);
  // Column 1 below row 0 is [3, 4]: beta -5, tau 8/5, v 4/8.
  EXPECT_EQ(qr[0].GetAsDouble(3), -5);
  EXPECT_NEAR(qr[0].GetAsDouble(5), 0.5, 1e-7);
  EXPECT_NEAR(qr[1].GetAsDouble(1), 1.6, 1e-7);
}

TEST(LapackQrReferenceTest, OrgqrRejectsShapesXorgqrDoesNotTake) {
  Builder builder("orgqr_errors");
  FunctionBuilder f = *builder.BeginFunction(
      "main", {Type(E::kF32, {2, 3}), Type(E::kF32, {2})}, {Type(E::kF32, {2, 3})});
  StatusOr<Value*> q = f.Orgqr(f.Parameter(0), f.Parameter(1));
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(q.status().message()),
              HasSubstr("lapack @lapack_sorgqr_ffi: a is 2 x 3 with K = 2 reflectors; xORGQR "
                        "needs M >= N >= K"));
}

TEST(LapackSyevdReferenceTest, JacobiGivesAscendingEigenvaluesAndSignedVectors) {
  // [[2, 1], [1, 2]] (the 99 above the diagonal is not read): w = [1, 3], v columns (1, -1) / sqrt(2)
  // and (1, 1) / sqrt(2), each with its first largest component positive.
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> out,
      RunAll({Type(E::kF64, {2, 2}), Type(E::kF64, {2}), Type(E::kI32, {})},
             {Make<double>(E::kF64, {2, 2}, {2, 99, 1, 2})},
             [](FunctionBuilder& b, std::span<Value* const> p) { return b.Syevd(p[0], true); }));
  const double h = std::sqrt(0.5);
  const std::vector<double> v = {h, h, -h, h};
  for (int64_t i = 0; i < 4; ++i) EXPECT_NEAR(out[0].GetAsDouble(i), v[static_cast<size_t>(i)], 1e-15);
  EXPECT_NEAR(out[1].GetAsDouble(0), 1, 1e-15);
  EXPECT_NEAR(out[1].GetAsDouble(1), 3, 1e-15);
  ExpectTensor<int32_t>(out[2], E::kI32, {}, {0});
}

}  // namespace
}  // namespace accy::reference_test
