// syevd through the engine (kernels/lapack_kernels.cc: LAPACK xSYEVD as a library item) vs the
// reference evaluator's cyclic Jacobi in double: eigenvalues directly, eigenvectors after both are
// signed so each column's first largest-magnitude component is positive (LAPACK's signs are its
// own); and, independently, a v = v diag(w) and v^T v = I from the engine's results. f32 and f64,
// 'L' and 'U' with the other triangle holding values that must not be read, batched, up to
// 90 x 90 (LAPACK's divide and conquer above 25); mode 'N' (eigenvalues only); the JAX form.
// a = (M + M^T) / 2 with M uniform in [-1, 1): eigenvalues well separated at these sizes (the
// tests check the smallest gap is above 1e-3, so eigenvectors are well conditioned).
// Tolerances x max(1, max |w|): eigenvalues f64 1e-12, f32 2e-5; eigenvectors f64 1e-9, f32
// 5e-3 (gap-limited), residuals 50x the eigenvalue tolerance.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "src/util/str_cat.h"
#include "tests/kernels/kernels_test_util.h"

namespace accy::kernels_test {
namespace {

using Dims = std::vector<int64_t>;
using E = ElementType;

std::unique_ptr<Module> Program(E type, const Dims& dims, bool lower, bool vectors) {
  Dims batch(dims.begin(), dims.end() - 2);
  Dims w(dims.begin(), dims.end() - 1);
  Builder builder("syevd_test");
  FunctionBuilder f = *builder.BeginFunction(
      "main", {T(type, dims)}, {T(type, dims), T(type, w), T(E::kI32, batch)});
  StatusOr<std::vector<Value*>> results = f.Syevd(f.Parameter(0), lower, vectors);
  EXPECT_TRUE(results.ok()) << results.status();
  EXPECT_TRUE(f.Return(*results).ok());
  return *builder.Finish();
}

// The symmetric a of the file comment in the `lower` (else upper) triangle; 1000 + k elsewhere.
Tensor MakeSymmetric(E type, const Dims& dims, bool lower, uint32_t seed) {
  Tensor a = Tensor::Allocate(T(type, dims)).value();
  const int64_t n = dims.back();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1, 1);
  const int64_t batches = n == 0 ? 0 : a.element_count() / (n * n);
  for (int64_t b = 0; b < batches; ++b) {
    std::vector<double> m(static_cast<size_t>(n * n));
    for (double& x : m) x = unit(rng);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t k = b * n * n + i * n + j;
        const bool read = lower ? i >= j : i <= j;
        const double value = (m[static_cast<size_t>(i * n + j)] + m[static_cast<size_t>(j * n + i)]) / 2;
        a.SetFromDouble(k, read ? value : 1000.0 + static_cast<double>(k));
      }
    }
  }
  return a;
}

// Column j of batch b of v, signed like the reference's.
std::vector<double> SignedColumn(const Tensor& v, int64_t n, int64_t b, int64_t j) {
  std::vector<double> column(static_cast<size_t>(n));
  int64_t largest = 0;
  for (int64_t i = 0; i < n; ++i) {
    column[static_cast<size_t>(i)] = v.GetAsDouble(b * n * n + i * n + j);
    if (std::fabs(column[static_cast<size_t>(i)]) > std::fabs(column[static_cast<size_t>(largest)])) {
      largest = i;
    }
  }
  if (column[static_cast<size_t>(largest)] < 0) {
    for (double& x : column) x = -x;
  }
  return column;
}

void ExpectMatchesReference(E type, const Dims& dims, bool lower) {
  const std::string what = StrCat(ElementTypeName(type), " n=", dims.back(), lower ? " L" : " U");
  std::unique_ptr<Module> module = Program(type, dims, lower, true);
  const std::vector<Tensor> inputs = {MakeSymmetric(type, dims, lower, 61)};
  std::vector<Tensor> got = RunLibraryItems(*module, inputs, 1, "lapack");
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, Evaluate(*module, "main", inputs));
  ASSERT_EQ(got.size(), 3u);
  const int64_t n = dims.back();
  const int64_t batches = want[2].element_count();
  double scale = 1;
  for (int64_t i = 0; i < want[1].element_count(); ++i) {
    scale = std::max(scale, std::fabs(want[1].GetAsDouble(i)));
  }
  const double w_tol = (type == E::kF64 ? 1e-12 : 2e-5) * scale;
  const double v_tol = type == E::kF64 ? 1e-9 : 5e-3;
  for (int64_t b = 0; b < batches; ++b) {
    EXPECT_EQ(got[2].GetAsDouble(b), 0) << what;
    for (int64_t j = 0; j < n; ++j) {
      ASSERT_NEAR(got[1].GetAsDouble(b * n + j), want[1].GetAsDouble(b * n + j), w_tol)
          << what << " w " << j;
      if (j > 0) {
        ASSERT_GT(want[1].GetAsDouble(b * n + j) - want[1].GetAsDouble(b * n + j - 1), 1e-3)
            << what << ": eigenvalues too close for this test";
      }
      const std::vector<double> g = SignedColumn(got[0], n, b, j);
      const std::vector<double> r = SignedColumn(want[0], n, b, j);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_NEAR(g[static_cast<size_t>(i)], r[static_cast<size_t>(i)], v_tol)
            << what << " v(" << i << ", " << j << ")";
      }
      // a v_j = w_j v_j, from the stored triangle.
      for (int64_t i = 0; i < n; ++i) {
        double sum = 0;
        for (int64_t k = 0; k < n; ++k) {
          const bool read = lower ? i >= k : i <= k;
          sum += inputs[0].GetAsDouble(b * n * n + (read ? i * n + k : k * n + i)) *
                 got[0].GetAsDouble(b * n * n + k * n + j);
        }
        ASSERT_NEAR(sum, got[1].GetAsDouble(b * n + j) * got[0].GetAsDouble(b * n * n + i * n + j),
                    50 * w_tol)
            << what << " residual " << i << ", " << j;
      }
    }
  }
}

TEST(LapackSyevdTest, EigenvaluesAndVectorsMatchReferenceAndSatisfyAvEqualsVw) {
  for (E type : {E::kF32, E::kF64}) {
    for (bool lower : {true, false}) {
      ExpectMatchesReference(type, {1, 1}, lower);
      ExpectMatchesReference(type, {4, 4}, lower);
      ExpectMatchesReference(type, {2, 3, 6, 6}, lower);
    }
    ExpectMatchesReference(type, {90, 90}, true);
  }
}

TEST(LapackSyevdTest, EigenvaluesOnlyModeMatchesReference) {
  for (E type : {E::kF32, E::kF64}) {
    std::unique_ptr<Module> module = Program(type, {2, 5, 5}, false, false);
    const std::vector<Tensor> inputs = {MakeSymmetric(type, {2, 5, 5}, false, 7)};
    std::vector<Tensor> got = RunLibraryItems(*module, inputs, 1, "lapack");
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, Evaluate(*module, "main", inputs));
    ASSERT_EQ(got.size(), 3u);
    for (int64_t i = 0; i < 10; ++i) {
      EXPECT_NEAR(got[1].GetAsDouble(i), want[1].GetAsDouble(i), type == E::kF64 ? 1e-12 : 2e-5);
    }
  }
}

TEST(LapackSyevdTest, JaxsCustomCallRunsAndEmptyShapesRun) {
  // The custom_call as jax.numpy.linalg.eigh exports it (cpu_eigh_lapack_syev.py, 2024).
  const std::string text = R"mlir(
func.func @main(%a: tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<3xf64>, tensor<i32>) {
  %0:3 = stablehlo.custom_call @lapack_dsyevd_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<3xf64>, tensor<i32>)
  func.return %0#0, %0#1, %0#2 : tensor<3x3xf64>, tensor<3xf64>, tensor<i32>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  // diag(2, 2, 1) plus the 2x2 block [[2, 1], [1, 2]]: eigenvalues 1, 1, 3 in the lower triangle.
  Tensor a = Tensor::Allocate(T(E::kF64, {3, 3})).value();
  const double values[] = {2, 99, 99, 1, 2, 99, 0, 0, 1};
  for (int64_t i = 0; i < 9; ++i) a.SetFromDouble(i, values[i]);
  std::vector<Tensor> got = RunLibraryItems(*module, {a}, 1, "lapack");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_NEAR(got[1].GetAsDouble(0), 1, 1e-14);
  EXPECT_NEAR(got[1].GetAsDouble(1), 1, 1e-14);
  EXPECT_NEAR(got[1].GetAsDouble(2), 3, 1e-14);
  EXPECT_EQ(got[2].GetAsDouble(0), 0);
  // The eigenvector of 3 is (1, 1, 0) / sqrt(2), up to sign.
  EXPECT_NEAR(std::fabs(got[0].GetAsDouble(2)), std::sqrt(0.5), 1e-14);
  EXPECT_NEAR(std::fabs(got[0].GetAsDouble(5)), std::sqrt(0.5), 1e-14);
  EXPECT_NEAR(got[0].GetAsDouble(8), 0, 1e-14);
  for (const Dims& dims : {Dims{0, 0}, Dims{3, 0, 0}, Dims{0, 2, 2}}) {
    std::unique_ptr<Module> empty = Program(E::kF32, dims, true, true);
    std::vector<Tensor> out = RunLibraryItems(*empty, {Tensor::Allocate(T(E::kF32, dims)).value()}, 1, "lapack");
    ASSERT_EQ(out.size(), 3u);
    for (int64_t b = 0; b < out[2].element_count(); ++b) EXPECT_EQ(out[2].GetAsDouble(b), 0);
  }
}

}  // namespace
}  // namespace accy::kernels_test
