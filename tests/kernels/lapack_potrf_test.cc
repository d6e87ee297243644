// potrf through the engine (kernels/lapack_kernels.cc: Debian's LAPACK as a library item) vs the
// reference evaluator's Cholesky–Banachiewicz in double, and vs Eigen's LLT as a second, separate
// check: f32 and f64, 'L' and 'U', batched and unbatched, sizes from 1 to 200 (LAPACK's blocked
// path starts at 64 in reference LAPACK); the unread triangle comes back unchanged; info for
// matrices that are not positive definite; empty shapes; and the binding itself (a "library" item
// with implementation "lapack:spotrf" / "lapack:dpotrf").
// a = M M^T / N + I with M uniform in [-1, 1): symmetric positive definite with eigenvalues in
// [1, about 5], so the factor is well conditioned. Tolerances, |engine - reference| <= abs x
// max(1, max |reference|): f64 1e-12, f32 2e-5 (N <= 200; LAPACK computes in the element type,
// the reference in double). The unread triangle holds 1000 + k and must come back exactly.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/onednn_kernel.h"
#include "src/reference/reference_evaluator.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"
#include "tests/kernels/kernels_test_util.h"
#include "tests/schedule/schedule_test_util.h"

namespace accy::kernels_test {
namespace {

using Dims = std::vector<int64_t>;
using E = ElementType;

Dims BatchOf(const Dims& dims) { return Dims(dims.begin(), dims.end() - 2); }

// main(a) -> potrf(a): (factor, info).
std::unique_ptr<Module> Program(E type, const Dims& dims, bool lower) {
  Builder builder("potrf_test");
  FunctionBuilder f = *builder.BeginFunction("main", {T(type, dims)},
                                             {T(type, dims), T(E::kI32, BatchOf(dims))});
  StatusOr<std::vector<Value*>> results = f.Potrf(f.Parameter(0), lower);
  EXPECT_TRUE(results.ok()) << results.status();
  EXPECT_TRUE(f.Return(*results).ok());
  return *builder.Finish();
}

// The positive definite a of the file comment in the `lower` (else upper) triangle; 1000 + k
// at flat index k in the other one.
Tensor MakeSpd(E type, const Dims& dims, bool lower, uint32_t seed) {
  Tensor a = Tensor::Allocate(T(type, dims)).value();
  const int64_t n = dims.back();
  if (n == 0) return a;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1, 1);
  const int64_t batches = a.element_count() / (n * n);
  for (int64_t batch = 0; batch < batches; ++batch) {
    Eigen::MatrixXd m(n, n);
    for (int64_t i = 0; i < n * n; ++i) m.data()[i] = unit(rng);
    const Eigen::MatrixXd spd =
        m * m.transpose() / static_cast<double>(n) + Eigen::MatrixXd::Identity(n, n);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t k = batch * n * n + i * n + j;
        const bool read = lower ? i >= j : i <= j;
        a.SetFromDouble(k, read ? spd(i, j) : 1000.0 + static_cast<double>(k));
      }
    }
  }
  return a;
}

double AbsTolerance(E type) { return type == E::kF64 ? 1e-12 : 2e-5; }

// Engine vs reference (and the factor's triangle vs Eigen's LLT) within the type's tolerance;
// info exactly; the other triangle exactly.
void ExpectMatchesReference(E type, const Dims& dims, bool lower, int threads = 1) {
  const std::string what = StrCat(ElementTypeName(type), " ", dims.size(), "-d n=", dims.back(),
                                  lower ? " L" : " U");
  std::unique_ptr<Module> module = Program(type, dims, lower);
  const std::vector<Tensor> inputs = {MakeSpd(type, dims, lower, 17)};
  std::vector<Tensor> engine = RunLibraryItems(*module, inputs, threads, "lapack");
  StatusOr<std::vector<Tensor>> reference = Evaluate(*module, "main", inputs);
  ASSERT_TRUE(reference.ok()) << reference.status();
  ASSERT_EQ(engine.size(), 2u) << what;
  const Tensor& got = engine[0];
  const Tensor& want = (*reference)[0];
  const int64_t n = dims.back();
  double scale = 1;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    if (want.GetAsDouble(i) < 1000) scale = std::max(scale, std::fabs(want.GetAsDouble(i)));
  }
  const double bound = AbsTolerance(type) * scale;
  for (int64_t k = 0; k < want.element_count(); ++k) {
    const int64_t i = (k / n) % n, j = k % n;
    const double w = want.GetAsDouble(k), g = got.GetAsDouble(k);
    const bool factor = lower ? i >= j : i <= j;
    if (factor ? !(std::fabs(g - w) <= bound) : g != inputs[0].GetAsDouble(k)) {
      ADD_FAILURE() << what << ": element " << k << " is " << g << ", reference " << w;
      return;
    }
  }
  for (int64_t b = 0; b < engine[1].element_count(); ++b) {
    EXPECT_EQ(engine[1].GetAsDouble(b), 0) << what << " batch " << b;
    EXPECT_EQ((*reference)[1].GetAsDouble(b), 0) << what << " batch " << b;
  }
  // Eigen's LLT of the first batch, in double from the same inputs.
  Eigen::MatrixXd a(n, n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const bool read = lower ? i >= j : i <= j;
      a(i, j) = inputs[0].GetAsDouble(read ? i * n + j : j * n + i);
    }
  }
  const Eigen::MatrixXd l = a.llt().matrixL();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      const double g = got.GetAsDouble(lower ? i * n + j : j * n + i);
      if (!(std::fabs(g - l(i, j)) <= bound)) {
        ADD_FAILURE() << what << ": factor (" << i << ", " << j << ") is " << g << ", Eigen "
                      << l(i, j);
        return;
      }
    }
  }
}

TEST(LapackPotrfTest, BatchedAndUnbatchedFactorsMatchReferenceAndEigen) {
  for (E type : {E::kF32, E::kF64}) {
    for (bool lower : {true, false}) {
      ExpectMatchesReference(type, {1, 1}, lower);
      ExpectMatchesReference(type, {5, 5}, lower);
      ExpectMatchesReference(type, {2, 3, 7, 7}, lower);
      ExpectMatchesReference(type, {3, 33, 33}, lower, 2);
    }
  }
}

TEST(LapackPotrfTest, LargeMatricesTakeLapacksBlockedPathAndMatchReference) {
  for (E type : {E::kF32, E::kF64}) {
    ExpectMatchesReference(type, {200, 200}, true, 2);
    ExpectMatchesReference(type, {2, 130, 130}, false, 1);
  }
}

// potrf (lower) of four 3x3 matrices `values` (row-major, batch after batch) through the engine
// and the reference: both infos must be `info`; returns the engine's (factor, info).
std::vector<Tensor> ExpectInfoOfFourMatrices(E type, const std::vector<double>& values,
                                             const std::vector<int32_t>& info) {
  Tensor a = Tensor::Allocate(T(type, {4, 3, 3})).value();
  for (int64_t i = 0; i < 36; ++i) a.SetFromDouble(i, values[static_cast<size_t>(i)]);
  std::unique_ptr<Module> module = Program(type, {4, 3, 3}, true);
  const std::vector<Tensor> inputs = {a};
  std::vector<Tensor> engine = RunLibraryItems(*module, inputs, 1, "lapack");
  StatusOr<std::vector<Tensor>> reference = Evaluate(*module, "main", inputs);
  EXPECT_TRUE(reference.ok()) << reference.status();
  EXPECT_EQ(engine.size(), 2u);
  if (!reference.ok() || engine.size() != 2) return engine;
  for (int64_t b = 0; b < 4; ++b) {
    EXPECT_EQ(engine[1].GetAsDouble(b), info[static_cast<size_t>(b)])
        << ElementTypeName(type) << " batch " << b;
    EXPECT_EQ((*reference)[1].GetAsDouble(b), info[static_cast<size_t>(b)])
        << ElementTypeName(type) << " batch " << b;
  }
  return engine;
}

TEST(LapackPotrfTest, InfoMatchesReferenceForMatricesThatAreNotPositiveDefinite) {
  // Batch 0: leading 2x2 minor 1 - 4 < 0 (info 2); batch 1 positive definite; batch 2 a zero
  // pivot at order 3; batch 3 diag(1, 1, -1) (info 3).
  const std::vector<double> values = {1, 0, 0, 2, 1, 0, 0, 0, 1,  //
                                      4, 0, 0, 0, 1, 0, 0, 0, 9,  //
                                      1, 0, 0, 1, 2, 0, 1, 1, 1,  //
                                      1, 0, 0, 0, 1, 0, 0, 0, -1};
  for (E type : {E::kF32, E::kF64}) {
    const std::vector<Tensor> engine = ExpectInfoOfFourMatrices(type, values, {2, 0, 3, 3});
    ASSERT_EQ(engine.size(), 2u);
    // The positive definite batch is factored: diag(2, 1, 3).
    EXPECT_EQ(engine[0].GetAsDouble(9), 2);
    EXPECT_EQ(engine[0].GetAsDouble(13), 1);
    EXPECT_EQ(engine[0].GetAsDouble(17), 3);
  }
}

// A NaN pivot is reported as LAPACK 3.11 reports it, whichever liblapack.so.3 is installed
// (OpenBLAS's xPOTRF does not test NaN and returned info 0; found by a break-it review). Lower
// triangle read: batch 0 NaN on the diagonal at order 1; batch 1 NaN below the diagonal at
// (1, 0), which makes pivot 2 NaN; batch 2 NaN at (2, 2) after a positive 2x2 minor (info 3);
// batch 3 a negative pivot at order 2 before a NaN at (2, 2): the library's info 2 stands.
TEST(LapackPotrfTest, NaNPivotsGiveTheirOrderAsInfo) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> values = {nan, 0, 0, 0,   1, 0, 0, 0, 1,    //
                                      4,   0, 0, nan, 1, 0, 0, 0, 1,    //
                                      4,   0, 0, 0,   1, 0, 0, 0, nan,  //
                                      1,   0, 0, 2,   1, 0, 0, 0, nan};
  for (E type : {E::kF32, E::kF64}) ExpectInfoOfFourMatrices(type, values, {1, 2, 3, 2});
}

TEST(LapackPotrfTest, EmptyShapesRunAndGiveZeroInfo) {
  for (const Dims& dims : {Dims{0, 0}, Dims{3, 0, 0}, Dims{0, 4, 4}}) {
    std::unique_ptr<Module> module = Program(E::kF32, dims, true);
    std::vector<Tensor> out =
        RunLibraryItems(*module, {Tensor::Allocate(T(E::kF32, dims)).value()}, 2, "lapack");
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].element_count(), 0);
    EXPECT_EQ(out[1].type(), T(E::kI32, BatchOf(dims)));
    for (int64_t b = 0; b < out[1].element_count(); ++b) EXPECT_EQ(out[1].GetAsDouble(b), 0);
  }
}

TEST(LapackPotrfTest, BindsAsALapackLibraryKernel) {
  std::unique_ptr<Module> owned = Program(E::kF64, {2, 4, 4}, false);
  const Module& module = *owned;
  testing_util::PlannedModule planned(std::move(owned), "main");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  ASSERT_EQ(plan->work_item_count(), 1);
  const WorkItem& item = plan->items()[0];
  EXPECT_EQ(item.kind, WorkKind::kLapack);
  // batch x N^3 / 3.
  EXPECT_EQ(item.resources.estimated_element_ops, 2u * (64 / 3));
  ASSERT_OK_AND_ASSIGN(kernels::LibraryKernel kernel,
                       kernels::LibraryKernel::Create(item, nullptr));
  EXPECT_EQ(kernel.implementation(), "lapack:dpotrf");
  EXPECT_THAT(kernel.name(), ::testing::StartsWith("lapack @lapack_dpotrf_ffi %"));
  ASSERT_EQ(kernel.inputs().size(), 1u);
  EXPECT_EQ(kernel.inputs()[0], planned.function().entry_block()->argument(0));
  ASSERT_EQ(kernel.outputs().size(), 2u);
  EXPECT_EQ(kernel.output_aliases()[0], -1);
  EXPECT_EQ(kernel.output_aliases()[1], -1);
  std::vector<Tensor> args = {MakeSpd(E::kF64, {2, 4, 4}, false, 3)};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, RunKernel(kernel, args));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, Evaluate(module, "main", args));
  for (int64_t i = 0; i < want[0].element_count(); ++i) {
    EXPECT_NEAR(out[0].GetAsDouble(i), want[0].GetAsDouble(i), 1e-12) << i;
  }
  // Wrong buffer sizes are refused naming the buffer.
  void* buffers[] = {args[0].data(), out[0].data(), out[1].data()};
  const int64_t bytes[] = {args[0].byte_size(), out[0].byte_size(), 4};
  const Status status = kernel.Run(buffers, bytes, 3);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("buffer 2 has 4 bytes"));
}

}  // namespace
}  // namespace accy::kernels_test
