// getrf through the engine (kernels/lapack_kernels.cc: Debian's LAPACK xGETRF as a library item)
// vs the reference evaluator's Doolittle elimination with partial pivoting in double, and vs
// Eigen's PartialPivLU for square matrices as a second, separate check: f32 and f64, square, wide
// and tall, batched and unbatched, up to 150 x 150 (LAPACK's blocked and recursive paths);
// pivots (1-based) and info exactly; singular matrices; empty shapes; the binding.
// Matrices are uniform in [-1, 1), whose partial-pivoting choices are far from ties at these
// sizes, so the pivots must agree exactly. Tolerances, |engine - reference| <= abs x max(1, max
// |reference|): f64 1e-11, f32 1e-4 (growth of rounding through up to 150 elimination steps in
// the element type vs double).
#include <Eigen/Core>
#include <Eigen/LU>
#include <cmath>
#include <cstdint>
#include <memory>
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

// main(a) -> getrf(a): (lu, pivots, info).
std::unique_ptr<Module> Program(E type, const Dims& dims) {
  Dims pivots = BatchOf(dims);
  pivots.push_back(std::min(dims[dims.size() - 2], dims.back()));
  Builder builder("getrf_test");
  FunctionBuilder f = *builder.BeginFunction(
      "main", {T(type, dims)}, {T(type, dims), T(E::kI32, pivots), T(E::kI32, BatchOf(dims))});
  StatusOr<std::vector<Value*>> results = f.Getrf(f.Parameter(0));
  EXPECT_TRUE(results.ok()) << results.status();
  EXPECT_TRUE(f.Return(*results).ok());
  return *builder.Finish();
}

void ExpectMatchesReference(E type, const Dims& dims) {
  const std::string what = StrCat(ElementTypeName(type), " ", dims.size(), "-d ",
                                  dims[dims.size() - 2], "x", dims.back());
  std::unique_ptr<Module> module = Program(type, dims);
  const std::vector<Tensor> inputs = {Random(T(type, dims), 29)};
  std::vector<Tensor> engine = RunLibraryItems(*module, inputs, 2, "lapack");
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> reference, Evaluate(*module, "main", inputs));
  ASSERT_EQ(engine.size(), 3u) << what;
  for (int r = 1; r < 3; ++r) {
    for (int64_t i = 0; i < reference[r].element_count(); ++i) {
      ASSERT_EQ(engine[r].GetAsDouble(i), reference[r].GetAsDouble(i))
          << what << (r == 1 ? " pivots " : " info ") << i;
    }
  }
  double scale = 1;
  for (int64_t i = 0; i < reference[0].element_count(); ++i) {
    scale = std::max(scale, std::fabs(reference[0].GetAsDouble(i)));
  }
  const double bound = (type == E::kF64 ? 1e-11 : 1e-4) * scale;
  for (int64_t i = 0; i < reference[0].element_count(); ++i) {
    const double g = engine[0].GetAsDouble(i), w = reference[0].GetAsDouble(i);
    if (!(std::fabs(g - w) <= bound)) {
      ADD_FAILURE() << what << ": lu element " << i << " is " << g << ", reference " << w;
      return;
    }
  }
  // Eigen's PartialPivLU of the first batch (square only), in double.
  const int64_t m = dims[dims.size() - 2], n = dims.back();
  if (m != n || n == 0) return;
  Eigen::MatrixXd a(n, n);
  for (int64_t i = 0; i < n * n; ++i) a(i / n, i % n) = inputs[0].GetAsDouble(i);
  const Eigen::MatrixXd lu = a.partialPivLu().matrixLU();
  for (int64_t i = 0; i < n * n; ++i) {
    if (!(std::fabs(engine[0].GetAsDouble(i) - lu(i / n, i % n)) <= bound)) {
      ADD_FAILURE() << what << ": lu element " << i << " is " << engine[0].GetAsDouble(i)
                    << ", Eigen " << lu(i / n, i % n);
      return;
    }
  }
}

TEST(LapackGetrfTest, SquareWideAndTallFactorsMatchReferenceAndEigen) {
  for (E type : {E::kF32, E::kF64}) {
    ExpectMatchesReference(type, {1, 1});
    ExpectMatchesReference(type, {6, 6});
    ExpectMatchesReference(type, {2, 3, 5, 5});
    ExpectMatchesReference(type, {4, 7});
    ExpectMatchesReference(type, {3, 9, 4});
  }
}

TEST(LapackGetrfTest, LargeMatricesTakeLapacksBlockedPathAndMatchReference) {
  for (E type : {E::kF32, E::kF64}) {
    ExpectMatchesReference(type, {150, 150});
    ExpectMatchesReference(type, {2, 70, 130});
  }
}

TEST(LapackGetrfTest, SingularMatricesGiveLapacksInfoAndPivots) {
  // Batch 0: a zero last column (info 3); batch 1: all zeros (pivots 1, 2, 3, info 1).
  const std::vector<double> values = {1, 2, 0, 4, 4, 0, 2, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (E type : {E::kF32, E::kF64}) {
    Tensor a = Tensor::Allocate(T(type, {2, 3, 3})).value();
    for (int64_t i = 0; i < 18; ++i) a.SetFromDouble(i, values[static_cast<size_t>(i)]);
    std::unique_ptr<Module> module = Program(type, {2, 3, 3});
    const std::vector<Tensor> inputs = {a};
    std::vector<Tensor> engine = RunLibraryItems(*module, inputs, 2, "lapack");
    ASSERT_EQ(engine.size(), 3u);
    const std::vector<int32_t> pivots = {2, 3, 3, 1, 2, 3};
    for (int64_t i = 0; i < 6; ++i) {
      EXPECT_EQ(engine[1].GetAsDouble(i), pivots[static_cast<size_t>(i)]) << i;
    }
    EXPECT_EQ(engine[2].GetAsDouble(0), 3);
    EXPECT_EQ(engine[2].GetAsDouble(1), 1);
    EXPECT_EQ(engine[0].GetAsDouble(4), 6);
    EXPECT_EQ(engine[0].GetAsDouble(8), 0);
  }
}

TEST(LapackGetrfTest, EmptyShapesRunAndGiveZeroInfo) {
  for (const Dims& dims : {Dims{0, 0}, Dims{3, 0, 4}, Dims{2, 5, 0}, Dims{0, 3, 3}}) {
    std::unique_ptr<Module> module = Program(E::kF64, dims);
    std::vector<Tensor> out = RunLibraryItems(*module, {Tensor::Allocate(T(E::kF64, dims)).value()}, 2, "lapack");
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].element_count(), 0);
    for (int64_t b = 0; b < out[2].element_count(); ++b) EXPECT_EQ(out[2].GetAsDouble(b), 0);
  }
}

TEST(LapackGetrfTest, BindsAsALapackLibraryKernel) {
  std::unique_ptr<Module> owned = Program(E::kF32, {2, 4, 3});
  testing_util::PlannedModule planned(std::move(owned), "main");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  ASSERT_EQ(plan->work_item_count(), 1);
  const WorkItem& item = plan->items()[0];
  EXPECT_EQ(item.kind, WorkKind::kLapack);
  // batch x (M N k - k^3 / 3) = 2 x (36 - 9).
  EXPECT_EQ(item.resources.estimated_element_ops, 54u);
  ASSERT_OK_AND_ASSIGN(kernels::LibraryKernel kernel,
                       kernels::LibraryKernel::Create(item, nullptr));
  EXPECT_EQ(kernel.implementation(), "lapack:sgetrf");
  EXPECT_THAT(kernel.name(), ::testing::StartsWith("lapack @lapack_sgetrf_ffi %"));
  ASSERT_EQ(kernel.outputs().size(), 3u);
  std::vector<Tensor> args = {Random(T(E::kF32, {2, 4, 3}), 41)};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, RunKernel(kernel, args));
  EXPECT_EQ(out[1].type(), T(E::kI32, {2, 3}));
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_GE(out[1].GetAsDouble(i), 1 + i % 3) << i;  // pivots[k] is in [k + 1, M]
    EXPECT_LE(out[1].GetAsDouble(i), 4) << i;
  }
}

}  // namespace
}  // namespace accy::kernels_test
