// gesdd through the engine (kernels/lapack_gesdd.cc: LAPACK xGESDD as a library item) vs the
// reference evaluator's one-sided Jacobi in double: singular values directly, u's columns and
// vt's rows i < K up to the sign of each pair (LAPACK's signs are its own; a pair flips
// together); and, independently, u diag(s) vt = a, u^T u = I and vt vt^T = I (including the
// completion columns of a full u / rows of a full vt) from the engine's results. f32 and f64,
// square, tall and wide, batched, up to 40 x 30 (xGESDD's divide and conquer runs above 25);
// modes 'A', 'S' and 'N'; a returned unchanged; NaN / Inf (info -4, NaN results); the JAX form;
// empty shapes. a uniform in [-1, 1): the tests check the smallest relative gap between
// singular values is above 1e-3, so the vectors are well conditioned.
// Tolerances x max(1, s_0): s f64 1e-12, f32 5e-5; vectors f64 1e-9, f32 5e-3 (gap-limited);
// properties f64 1e-12, f32 2e-5.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
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
#include "tests/lapack_svd_test_util.h"

namespace accy::kernels_test {
namespace {

using Dims = std::vector<int64_t>;
using E = ElementType;
using svd_test::SvdShape;

std::unique_ptr<Module> Program(E type, const Dims& dims, bool full, bool compute_uv) {
  Builder builder("gesdd_test");
  FunctionBuilder f = *builder.BeginFunction(
      "main", {T(type, dims)}, svd_test::GesddResultTypes(T(type, dims), full));
  StatusOr<std::vector<Value*>> results = f.Gesdd(f.Parameter(0), full, compute_uv);
  EXPECT_TRUE(results.ok()) << results.status();
  EXPECT_TRUE(f.Return(*results).ok());
  return *builder.Finish();
}

void ExpectMatchesReference(E type, const Dims& dims, bool full) {
  const std::string what =
      StrCat(ElementTypeName(type), " ", T(type, dims).ToString(), full ? " 'A'" : " 'S'");
  std::unique_ptr<Module> module = Program(type, dims, full, true);
  const std::vector<Tensor> inputs = {Random(T(type, dims), 17)};
  std::vector<Tensor> got = RunLibraryItems(*module, inputs, 1, "lapack");
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, Evaluate(*module, "main", inputs));
  ASSERT_EQ(got.size(), 5u);
  const int64_t m = dims[dims.size() - 2], n = dims.back(), k = std::min(m, n);
  const SvdShape shape{want[4].element_count(), m, n, full ? m : k, full ? n : k};
  for (int64_t b = 0; b < shape.batches; ++b) {
    ASSERT_EQ(got[4].GetAsDouble(b), 0) << what;
    for (int64_t i = 1; i < k; ++i) {
      const double hi = want[1].GetAsDouble(b * k + i - 1), lo = want[1].GetAsDouble(b * k + i);
      ASSERT_GT(hi - lo, 1e-3 * std::max(1.0, hi)) << what << ": singular values too close";
    }
  }
  for (int64_t i = 0; i < inputs[0].element_count(); ++i) {
    ASSERT_EQ(got[0].GetAsDouble(i), inputs[0].GetAsDouble(i)) << what << ": a is unchanged";
  }
  const bool f64 = type == E::kF64;
  svd_test::ExpectSameSvdUpToPairSigns(got[1], got[2], got[3], want[1], want[2], want[3], shape,
                                       f64 ? 1e-12 : 5e-5, f64 ? 1e-9 : 5e-3, what);
  svd_test::ExpectValidSvd(inputs[0], got[1], got[2], got[3], shape, f64 ? 1e-12 : 2e-5, what);
}

TEST(LapackGesddTest, FactorsMatchReferenceUpToPairSignsAndReconstructA) {
  for (E type : {E::kF32, E::kF64}) {
    for (bool full : {true, false}) {
      ExpectMatchesReference(type, {1, 1}, full);
      ExpectMatchesReference(type, {4, 4}, full);
      ExpectMatchesReference(type, {7, 3}, full);
      ExpectMatchesReference(type, {3, 7}, full);
      ExpectMatchesReference(type, {2, 3, 5, 4}, full);
    }
    ExpectMatchesReference(type, {40, 30}, true);
    ExpectMatchesReference(type, {30, 40}, false);
  }
}

TEST(LapackGesddTest, ValuesOnlyModeMatchesReferenceAndZeroesUAndVt) {
  for (E type : {E::kF32, E::kF64}) {
    for (bool full : {true, false}) {
      const Dims dims = {2, 6, 4};
      std::unique_ptr<Module> module = Program(type, dims, full, false);
      const std::vector<Tensor> inputs = {Random(T(type, dims), 3)};
      std::vector<Tensor> got = RunLibraryItems(*module, inputs, 1, "lapack");
      ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, Evaluate(*module, "main", inputs));
      ASSERT_EQ(got.size(), 5u);
      svd_test::ExpectSameSvdUpToPairSigns(got[1], got[2], got[3], want[1], want[2], want[3],
                                           {2, 6, 4, 0, 0}, type == E::kF64 ? 1e-12 : 5e-5, 0,
                                           "mode 'N'");
      EXPECT_EQ(got[2].type().dims().back(), full ? 6 : 4);
      for (int64_t i = 0; i < got[2].element_count(); ++i) ASSERT_EQ(got[2].GetAsDouble(i), 0);
      for (int64_t i = 0; i < got[3].element_count(); ++i) ASSERT_EQ(got[3].GetAsDouble(i), 0);
      EXPECT_EQ(got[4].GetAsDouble(0), 0);
      EXPECT_EQ(got[4].GetAsDouble(1), 0);
    }
  }
}

TEST(LapackGesddTest, NanOrInfGivesInfoMinusFourAndNanResultsWithoutFailingTheRun) {
  for (E type : {E::kF32, E::kF64}) {
    std::unique_ptr<Module> module = Program(type, {3, 3, 2}, true, true);
    Tensor a = Random(T(type, {3, 3, 2}), 11);
    a.SetFromDouble(7, std::numeric_limits<double>::quiet_NaN());  // batch 1
    a.SetFromDouble(12, -std::numeric_limits<double>::infinity());  // batch 2
    std::vector<Tensor> got = RunLibraryItems(*module, {a}, 1, "lapack");
    ASSERT_EQ(got.size(), 5u);
    EXPECT_EQ(got[4].GetAsDouble(0), 0);
    EXPECT_EQ(got[4].GetAsDouble(1), -4);
    EXPECT_EQ(got[4].GetAsDouble(2), -4);
    EXPECT_FALSE(std::isnan(got[1].GetAsDouble(0)));
    for (int64_t b = 1; b < 3; ++b) {
      for (int64_t i = 0; i < 2; ++i) EXPECT_TRUE(std::isnan(got[1].GetAsDouble(b * 2 + i)));
      for (int64_t i = 0; i < 9; ++i) EXPECT_TRUE(std::isnan(got[2].GetAsDouble(b * 9 + i)));
      for (int64_t i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(got[3].GetAsDouble(b * 4 + i)));
    }
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, Evaluate(*module, "main", std::vector<Tensor>{a}));
    for (int64_t b = 0; b < 3; ++b) EXPECT_EQ(want[4].GetAsDouble(b), got[4].GetAsDouble(b));
  }
}

TEST(LapackGesddTest, JaxsCustomCallRunsAndEmptyShapesRun) {
  // The custom_call as jax.numpy.linalg.svd(a, full_matrices=False) exports it for a 3x2 f64.
  const std::string text = R"mlir(
func.func @main(%a: tensor<3x2xf64>) -> (tensor<3x2xf64>, tensor<2xf64>, tensor<3x2xf64>, tensor<2x2xf64>, tensor<i32>) {
  %0:5 = stablehlo.custom_call @lapack_dgesdd_ffi(%a) {mhlo.backend_config = {mode = 83 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x2xf64>) -> (tensor<3x2xf64>, tensor<2xf64>, tensor<3x2xf64>, tensor<2x2xf64>, tensor<i32>)
  func.return %0#0, %0#1, %0#2, %0#3, %0#4 : tensor<3x2xf64>, tensor<2xf64>, tensor<3x2xf64>, tensor<2x2xf64>, tensor<i32>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  // [[3, 0], [0, -4], [0, 0]]: s = [4, 3], u_0 = +-(0, 1, 0) with v_0 = -+(0, 1).
  Tensor a = Tensor::Allocate(T(E::kF64, {3, 2})).value();
  const double values[] = {3, 0, 0, -4, 0, 0};
  for (int64_t i = 0; i < 6; ++i) a.SetFromDouble(i, values[i]);
  std::vector<Tensor> got = RunLibraryItems(*module, {a}, 1, "lapack");
  ASSERT_EQ(got.size(), 5u);
  EXPECT_NEAR(got[1].GetAsDouble(0), 4, 1e-15);
  EXPECT_NEAR(got[1].GetAsDouble(1), 3, 1e-15);
  EXPECT_EQ(got[4].GetAsDouble(0), 0);
  EXPECT_NEAR(std::fabs(got[2].GetAsDouble(2)), 1, 1e-15);  // u(1, 0)
  EXPECT_NEAR(got[2].GetAsDouble(2) * got[3].GetAsDouble(1), -1, 1e-15);  // u(1, 0) vt(0, 1)
  EXPECT_NEAR(got[2].GetAsDouble(1) * got[3].GetAsDouble(2), 1, 1e-15);  // u(0, 1) vt(1, 0)
  for (const Dims& dims : {Dims{0, 0}, Dims{3, 0}, Dims{0, 2}, Dims{0, 2, 2}}) {
    std::unique_ptr<Module> empty = Program(E::kF32, dims, true, true);
    std::vector<Tensor> inputs = {Tensor::Allocate(T(E::kF32, dims)).value()};
    std::vector<Tensor> out = RunLibraryItems(*empty, inputs, 1, "lapack");
    ASSERT_EQ(out.size(), 5u);
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, Evaluate(*empty, "main", inputs));
    for (int r = 1; r < 5; ++r) ExpectClose(out[r], want[r], 0, 0);  // identity u / vt, info 0
  }
}

}  // namespace
}  // namespace accy::kernels_test
