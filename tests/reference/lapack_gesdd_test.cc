// Reference evaluator tests for gesdd (src/reference/lapack_gesdd.cc, one-sided Jacobi): an
// exact 2x2 ([[3, 0], [0, -4]]: s = [4, 3], and the sign convention, u_i's first
// largest-magnitude component positive, deciding u and vt exactly); a rank-1 3x2 (s = [3 sqrt(5),
// 0], the zero singular value's u completed to an orthonormal basis); random square, tall and
// wide matrices, batched, in every mode, checked for u diag(s) vt = a, u^T u = I, vt vt^T = I, s
// descending (f64 1e-13, f32 4e-6, scaled by max(1, s_0)), the sign convention, and mode 'S' /
// 'N' agreeing with 'A'; NaN and Inf inputs (info -4, NaN results); empty matrices (identity for
// a full u / vt, as JAX's _empty_svd); FunctionBuilder::Gesdd's errors with their messages.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/util/str_cat.h"
#include "tests/lapack_svd_test_util.h"
#include "tests/reference/reference_test_util.h"
#include "tests/test_util.h"

namespace accy::reference_test {
namespace {

using ::accy::svd_test::SvdShape;
using ::testing::HasSubstr;
using Dims = std::vector<int64_t>;

// Evaluates gesdd(a) and returns {a, s, u, vt, info}.
StatusOr<std::vector<Tensor>> Gesdd(const Tensor& a, bool full_matrices, bool compute_uv = true) {
  return RunAll(svd_test::GesddResultTypes(a.type(), full_matrices), {a}, [=](FunctionBuilder& b, std::span<Value* const> p) {
                  return b.Gesdd(p[0], full_matrices, compute_uv);
                });
}

Tensor Random(E type, const Dims& dims, uint32_t seed) {
  Tensor a = Tensor::Allocate(Type(type, dims)).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int64_t i = 0; i < a.element_count(); ++i) a.SetFromDouble(i, unit(rng));
  return a;
}

TEST(LapackGesddReferenceTest, DiagonalMatrixGivesExactFactorsWithTheSignConvention) {
  for (E type : {E::kF32, E::kF64}) {
    Tensor diagonal = Tensor::Allocate(Type(type, {2, 2})).value();
    diagonal.SetFromDouble(0, 3);
    diagonal.SetFromDouble(3, -4);
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, Gesdd(diagonal, true));
    ASSERT_EQ(out.size(), 5u);
    // a = u diag(4, 3) vt with u_0 = (0, 1) (positive by the convention), v_0 = (0, -1).
    const std::vector<double> a = {3, 0, 0, -4}, s = {4, 3}, u = {0, 1, 1, 0}, vt = {0, -1, 1, 0};
    for (int64_t i = 0; i < 4; ++i) {
      EXPECT_EQ(out[0].GetAsDouble(i), a[static_cast<size_t>(i)]) << "a is returned unchanged";
      EXPECT_EQ(out[2].GetAsDouble(i), u[static_cast<size_t>(i)]) << "u " << i;
      EXPECT_EQ(out[3].GetAsDouble(i), vt[static_cast<size_t>(i)]) << "vt " << i;
    }
    EXPECT_EQ(out[1].GetAsDouble(0), 4);
    EXPECT_EQ(out[1].GetAsDouble(1), 3);
    ExpectTensor<int32_t>(out[4], E::kI32, {}, {0});
  }
}

TEST(LapackGesddReferenceTest, RankOneTallMatrixCompletesTheZeroSingularValuesVectors) {
  // a = x y^T, x = (1, 2, 2) (norm 3), y = (1, 2) (norm sqrt(5)): s = [3 sqrt(5), 0].
  const Tensor a = Make<double>(E::kF64, {3, 2}, {1, 2, 2, 4, 2, 4});
  for (bool full : {true, false}) {
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, Gesdd(a, full));
    EXPECT_NEAR(out[1].GetAsDouble(0), 3 * std::sqrt(5.0), 1e-14);
    EXPECT_NEAR(out[1].GetAsDouble(1), 0, 1e-14);
    const int64_t u_cols = full ? 3 : 2;
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_NEAR(out[2].GetAsDouble(i * u_cols), (i == 0 ? 1.0 : 2.0) / 3, 1e-15) << i;
    }
    EXPECT_NEAR(out[3].GetAsDouble(0), 1 / std::sqrt(5.0), 1e-15);
    EXPECT_NEAR(out[3].GetAsDouble(1), 2 / std::sqrt(5.0), 1e-15);
    svd_test::ExpectValidSvd(a, out[1], out[2], out[3], {1, 3, 2, u_cols, 2}, 1e-14,
                             full ? "rank 1, full" : "rank 1, reduced");
    // The zero's pair and the completion are signed by the convention too.
    for (int64_t j = 0; j < u_cols; ++j) {
      int64_t largest = 0;
      for (int64_t i = 1; i < 3; ++i) {
        if (std::fabs(out[2].GetAsDouble(i * u_cols + j)) >
            std::fabs(out[2].GetAsDouble(largest * u_cols + j))) {
          largest = i;
        }
      }
      EXPECT_GT(out[2].GetAsDouble(largest * u_cols + j), 0) << "u column " << j;
    }
  }
}

TEST(LapackGesddReferenceTest, RandomMatricesDecomposeInEveryModeWithTheSignConvention) {
  const std::vector<Dims> shapes = {{1, 1}, {4, 4}, {6, 3}, {3, 6}, {2, 3, 5, 4}, {2, 4, 7}};
  for (E type : {E::kF32, E::kF64}) {
    const double tol = type == E::kF64 ? 1e-13 : 4e-6;
    for (const Dims& dims : shapes) {
      const Tensor a = Random(type, dims, 5);
      const int64_t m = dims[dims.size() - 2], n = dims.back(), k = std::min(m, n);
      const int64_t batches = a.element_count() / (m * n);
      ASSERT_OK_AND_ASSIGN(std::vector<Tensor> full, Gesdd(a, true));
      ASSERT_OK_AND_ASSIGN(std::vector<Tensor> reduced, Gesdd(a, false));
      ASSERT_OK_AND_ASSIGN(std::vector<Tensor> values_only, Gesdd(a, true, false));
      const std::string what = StrCat(ElementTypeName(type), " ", a.type().ToString());
      svd_test::ExpectValidSvd(a, full[1], full[2], full[3], {batches, m, n, m, n}, tol,
                               what + " 'A'");
      svd_test::ExpectValidSvd(a, reduced[1], reduced[2], reduced[3], {batches, m, n, k, k}, tol,
                               what + " 'S'");
      for (int64_t b = 0; b < batches; ++b) {
        for (int64_t l = 0; l < k; ++l) {
          EXPECT_EQ(reduced[1].GetAsDouble(b * k + l), full[1].GetAsDouble(b * k + l));
          EXPECT_EQ(values_only[1].GetAsDouble(b * k + l), full[1].GetAsDouble(b * k + l));
          // The convention: u_l's first largest-magnitude component is positive.
          int64_t largest = 0;
          for (int64_t i = 1; i < m; ++i) {
            if (std::fabs(reduced[2].GetAsDouble((b * m + i) * k + l)) >
                std::fabs(reduced[2].GetAsDouble((b * m + largest) * k + l))) {
              largest = i;
            }
          }
          EXPECT_GT(reduced[2].GetAsDouble((b * m + largest) * k + l), 0) << what << " u " << l;
          // 'S' is the first K columns / rows of 'A'.
          for (int64_t i = 0; i < m; ++i) {
            EXPECT_EQ(reduced[2].GetAsDouble((b * m + i) * k + l),
                      full[2].GetAsDouble((b * m + i) * m + l));
          }
          for (int64_t j = 0; j < n; ++j) {
            EXPECT_EQ(reduced[3].GetAsDouble((b * k + l) * n + j),
                      full[3].GetAsDouble((b * n + l) * n + j));
          }
        }
      }
      for (int64_t i = 0; i < values_only[2].element_count(); ++i) {
        ASSERT_EQ(values_only[2].GetAsDouble(i), 0) << "mode 'N': u is zeros";
      }
      for (int64_t i = 0; i < values_only[3].element_count(); ++i) {
        ASSERT_EQ(values_only[3].GetAsDouble(i), 0) << "mode 'N': vt is zeros";
      }
      for (int64_t b = 0; b < batches; ++b) EXPECT_EQ(full[4].GetAsDouble(b), 0);
    }
  }
}

TEST(LapackGesddReferenceTest, NanOrInfGivesInfoMinusFourAndNanResultsPerBatch) {
  Tensor a = Random(E::kF32, {3, 2, 2}, 9);
  a.SetFromDouble(5, std::numeric_limits<double>::quiet_NaN());  // batch 1
  a.SetFromDouble(8, std::numeric_limits<double>::infinity());   // batch 2
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, Gesdd(a, true));
  ExpectTensor<int32_t>(out[4], E::kI32, {3}, {0, -4, -4});
  EXPECT_FALSE(std::isnan(out[1].GetAsDouble(0)));
  for (int64_t b = 1; b < 3; ++b) {
    for (int64_t i = 0; i < 2; ++i) EXPECT_TRUE(std::isnan(out[1].GetAsDouble(b * 2 + i)));
    for (int64_t i = 0; i < 4; ++i) {
      EXPECT_TRUE(std::isnan(out[2].GetAsDouble(b * 4 + i)));
      EXPECT_TRUE(std::isnan(out[3].GetAsDouble(b * 4 + i)));
    }
  }
}

TEST(LapackGesddReferenceTest, EmptyMatricesGiveIdentityForAFullUOrVt) {
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> wide,
                       Gesdd(Tensor::Allocate(Type(E::kF32, {0, 3})).value(), true));
  EXPECT_EQ(wide[1].element_count(), 0);
  EXPECT_EQ(wide[2].element_count(), 0);
  ExpectTensor<float>(wide[3], E::kF32, {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  ExpectTensor<int32_t>(wide[4], E::kI32, {}, {0});
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> tall,
                       Gesdd(Tensor::Allocate(Type(E::kF64, {2, 2, 0})).value(), true));
  ExpectTensor<double>(tall[2], E::kF64, {2, 2, 2}, {1, 0, 0, 1, 1, 0, 0, 1});
  ExpectTensor<int32_t>(tall[4], E::kI32, {2}, {0, 0});
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> none,
                       Gesdd(Tensor::Allocate(Type(E::kF64, {0, 4, 4})).value(), false));
  EXPECT_EQ(none[4].element_count(), 0);
}

TEST(LapackGesddReferenceTest, BuilderRejectsTypesGesddDoesNotTake) {
  struct Bad {
    TensorType type;
    std::string message;
  };
  const Bad cases[] = {
      {Type(E::kF32, {3}),
       "lapack @lapack_sgesdd_ffi: a has type tensor<3xf32>, expected rank >= 2"},
      {Type(E::kF16, {3, 3}),
       "lapack @lapack_sgesdd_ffi: a has type tensor<3x3xf16>, expected element type f32"},
      {Type(E::kI32, {3, 3}), "lapack"},
  };
  for (const Bad& bad : cases) {
    Builder builder("gesdd_errors");
    FunctionBuilder f = *builder.BeginFunction("main", {bad.type}, {bad.type});
    StatusOr<std::vector<Value*>> results = f.Gesdd(f.Parameter(0), true);
    ASSERT_FALSE(results.ok()) << bad.type.ToString();
    EXPECT_EQ(results.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(results.status().message()), HasSubstr(bad.message));
  }
}

}  // namespace
}  // namespace accy::reference_test
