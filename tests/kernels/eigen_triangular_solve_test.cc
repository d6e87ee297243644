// triangular_solve through the engine (kernels/eigen_triangular_solve.cc: Eigen's triangular
// solver as a library item) vs the reference evaluator's substitution in double, for f16, bf16,
// f32 and f64: all 16 combinations of left_side, lower, unit_diagonal and transpose_a on a
// batched [2, 3, 6, 6] a with a non-square b, unbatched and larger (blocked, parallel) solves,
// results the same bits at 1 and 2 threads, empty shapes, and the binding itself (a "library"
// item with implementation "eigen:trsm"). The unread triangle of a and a unit diagonal hold NaN,
// so a read of either shows. a is well conditioned: diagonal +-[1, 2), the read off-diagonal
// elements in [-1, 1) / (2 M), so every row and column of them sums below 1/2 and |x| <= 2 max |b|.
// Tolerances, |engine - reference| <= rel |reference| + abs max(1, max |reference|): f64 abs
// 1e-12 and f32 abs 2e-5 (Eigen's blocked substitution vs the reference's in double, M <= 96);
// f16 rel 2^-10 and bf16 rel 2^-7 (one rounding each from f32 vs double: at most one ULP apart)
// with abs 1e-4 for elements near zero.
#include <cmath>
#include <cstdint>
#include <cstring>
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
#include "src/fusion/fusion_plan.h"
#include "src/reference/reference_evaluator.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"
#include "tests/kernels/kernels_test_util.h"
#include "tests/schedule/schedule_test_util.h"

namespace accy::kernels_test {
namespace {

using Dims = std::vector<int64_t>;
using E = ElementType;

struct Attributes {
  bool left_side = true;
  bool lower = true;
  bool unit_diagonal = false;
  std::string transpose_a = "NO_TRANSPOSE";
};

std::string Describe(const Attributes& at) {
  return StrCat("left_side=", at.left_side, " lower=", at.lower,
                " unit_diagonal=", at.unit_diagonal, " ", at.transpose_a);
}

// main(a, b) -> triangular_solve(a, b).
std::unique_ptr<Module> Program(E type, const Dims& a, const Dims& b, const Attributes& at) {
  Builder builder("triangular_solve_test");
  FunctionBuilder f = *builder.BeginFunction("main", {T(type, a), T(type, b)}, {T(type, b)});
  StatusOr<Value*> x = f.TriangularSolve(f.Parameter(0), f.Parameter(1), at.left_side, at.lower,
                                         at.unit_diagonal, at.transpose_a);
  EXPECT_TRUE(x.ok()) << x.status();
  EXPECT_TRUE(f.Return({*x}).ok());
  return *builder.Finish();
}

// The well-conditioned a of the file comment, NaN where it must not be read.
Tensor MakeA(E type, const Dims& dims, const Attributes& at, uint32_t seed) {
  Tensor a = Tensor::Allocate(T(type, dims)).value();
  const int64_t m = dims.back();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1, 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t k = 0; k < a.element_count(); ++k) {
    const int64_t i = (k / m) % m, j = k % m;
    const double u = unit(rng);
    double value;
    if (i == j) {
      value = at.unit_diagonal ? nan : (u < 0 ? -1 : 1) * (1 + std::fabs(u));
    } else if (at.lower ? i > j : i < j) {
      value = u / (2.0 * static_cast<double>(m));
    } else {
      value = nan;
    }
    a.SetFromDouble(k, value);
  }
  return a;
}

struct Tolerance {
  double rel = 0, abs = 0;
};
Tolerance ToleranceOf(E type) {
  switch (type) {
    case E::kF64: return {0, 1e-12};
    case E::kF32: return {0, 2e-5};
    case E::kF16: return {std::ldexp(1.0, -10), 1e-4};
    default: return {std::ldexp(1.0, -7), 1e-4};  // bf16
  }
}

// Compiles and runs main on the engine with `threads`: one triangular_solve library item.
std::vector<Tensor> RunEngine(const Module& module, const std::vector<Tensor>& inputs,
                              int threads) {
  return RunLibraryItems(module, inputs, threads, "triangular_solve");
}

// Runs a solve on the engine and the reference evaluator and compares within the type's
// tolerance; returns the engine's result.
Tensor ExpectMatchesReference(E type, const Dims& a_dims, const Dims& b_dims,
                              const Attributes& at, int threads = 1) {
  std::unique_ptr<Module> module = Program(type, a_dims, b_dims, at);
  const std::vector<Tensor> inputs = {MakeA(type, a_dims, at, 11), Random(T(type, b_dims), 23)};
  std::vector<Tensor> engine = RunEngine(*module, inputs, threads);
  StatusOr<std::vector<Tensor>> reference = Evaluate(*module, "main", inputs);
  EXPECT_TRUE(reference.ok()) << reference.status();
  if (engine.size() != 1 || !reference.ok()) return Tensor();
  const Tensor& got = engine[0];
  const Tensor& want = (*reference)[0];
  double scale = 1;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    scale = std::max(scale, std::fabs(want.GetAsDouble(i)));
  }
  const Tolerance tolerance = ToleranceOf(type);
  for (int64_t i = 0; i < want.element_count(); ++i) {
    const double w = want.GetAsDouble(i), g = got.GetAsDouble(i);
    const double bound = tolerance.rel * std::fabs(w) + tolerance.abs * scale;
    if (!std::isfinite(w) || !(std::fabs(g - w) <= bound)) {
      ADD_FAILURE() << ElementTypeName(type) << " " << Describe(at) << ": element " << i
                    << " is " << g << ", reference " << w;
      return got;
    }
  }
  return got;
}

const E kTypes[] = {E::kF16, E::kBF16, E::kF32, E::kF64};

TEST(EigenTriangularSolveTest, EveryAttributeCombinationMatchesReferenceForEveryFloatType) {
  for (E type : kTypes) {
    for (int bits = 0; bits < 16; ++bits) {
      Attributes at;
      at.left_side = (bits & 1) != 0;
      at.lower = (bits & 2) != 0;
      at.unit_diagonal = (bits & 4) != 0;
      at.transpose_a = (bits & 8) != 0 ? ((bits & 1) != 0 ? "TRANSPOSE" : "ADJOINT")
                                       : "NO_TRANSPOSE";
      const Dims b = at.left_side ? Dims{2, 3, 6, 4} : Dims{2, 3, 4, 6};
      ExpectMatchesReference(type, {2, 3, 6, 6}, b, at);
    }
  }
}

TEST(EigenTriangularSolveTest, UnbatchedNonSquareSystemsMatchReference) {
  for (E type : kTypes) {
    for (bool left_side : {true, false}) {
      for (bool lower : {true, false}) {
        Attributes at{left_side, lower, false, "TRANSPOSE"};
        ExpectMatchesReference(type, {5, 5}, left_side ? Dims{5, 9} : Dims{9, 5}, at);
        ExpectMatchesReference(type, {7, 7}, left_side ? Dims{7, 1} : Dims{1, 7}, at);
      }
    }
  }
}

TEST(EigenTriangularSolveTest, LargeBatchedSolvesAreTheSameBitsAtOneAndTwoThreads) {
  // 8 x 96 x 96 x 40 = 2.9M element ops: above the kernel's parallel threshold (2^18), and
  // matrices large enough for Eigen's blocked solver.
  for (E type : {E::kF32, E::kBF16}) {
    for (bool left_side : {true, false}) {
      Attributes at{left_side, !left_side, false, left_side ? "NO_TRANSPOSE" : "TRANSPOSE"};
      const Dims a = {8, 96, 96};
      const Dims b = left_side ? Dims{8, 96, 40} : Dims{8, 40, 96};
      const Tensor one = ExpectMatchesReference(type, a, b, at, 1);
      const Tensor two = ExpectMatchesReference(type, a, b, at, 2);
      ASSERT_EQ(one.byte_size(), two.byte_size());
      EXPECT_EQ(std::memcmp(one.data(), two.data(), static_cast<size_t>(one.byte_size())), 0)
          << ElementTypeName(type) << " " << Describe(at);
    }
  }
}

TEST(EigenTriangularSolveTest, EmptyShapesRunAndGiveEmptyResults) {
  struct Shape {
    Dims a, b;
    bool left_side;
  };
  const Shape shapes[] = {{{0, 0}, {0, 3}, true},
                          {{3, 3}, {3, 0}, true},
                          {{0, 4, 4}, {0, 4, 2}, true},
                          {{2, 2}, {0, 2}, false},
                          {{2, 0, 0}, {2, 5, 0}, false}};
  for (const Shape& s : shapes) {
    Attributes at;
    at.left_side = s.left_side;
    std::unique_ptr<Module> module = Program(E::kF32, s.a, s.b, at);
    const std::vector<Tensor> inputs = {Tensor::Allocate(T(E::kF32, s.a)).value(),
                                        Tensor::Allocate(T(E::kF32, s.b)).value()};
    std::vector<Tensor> out = RunEngine(*module, inputs, 2);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].type(), T(E::kF32, s.b));
    EXPECT_EQ(out[0].element_count(), 0);
  }
}

TEST(EigenTriangularSolveTest, BindsAsAnEigenLibraryKernel) {
  Attributes at{false, true, true, "ADJOINT"};
  std::unique_ptr<Module> owned = Program(E::kF64, {2, 4, 4}, {2, 3, 4}, at);
  const Module& module = *owned;
  testing_util::PlannedModule planned(std::move(owned), "main");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  ASSERT_EQ(plan->work_item_count(), 1);
  const WorkItem& item = plan->items()[0];
  EXPECT_EQ(item.kind, WorkKind::kTriangularSolve);
  ASSERT_OK_AND_ASSIGN(kernels::LibraryKernel kernel,
                       kernels::LibraryKernel::Create(item, nullptr));
  EXPECT_EQ(kernel.implementation(), "eigen:trsm");
  EXPECT_THAT(kernel.name(), ::testing::StartsWith("triangular_solve %"));
  ASSERT_EQ(kernel.inputs().size(), 2u);
  EXPECT_EQ(kernel.inputs()[0], planned.function().entry_block()->argument(0));
  EXPECT_EQ(kernel.inputs()[1], planned.function().entry_block()->argument(1));
  ASSERT_EQ(kernel.outputs().size(), 1u);
  EXPECT_EQ(kernel.outputs()[0], item.output_value);
  EXPECT_EQ(kernel.output_aliases()[0], -1);
  // Run directly: wrong buffer sizes are refused naming the buffer.
  std::vector<Tensor> args = {MakeA(E::kF64, {2, 4, 4}, at, 3), Random(T(E::kF64, {2, 3, 4}), 5)};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, RunKernel(kernel, args));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want,
                       Evaluate(module, "main", args));
  for (int64_t i = 0; i < want[0].element_count(); ++i) {
    EXPECT_NEAR(out[0].GetAsDouble(i), want[0].GetAsDouble(i), 1e-12) << i;
  }
  void* buffers[] = {args[0].data(), args[1].data(), out[0].data()};
  const int64_t bytes[] = {args[0].byte_size(), args[1].byte_size() - 8, out[0].byte_size()};
  const Status status = kernel.Run(buffers, bytes, 3);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("buffer 1 has 184 bytes"));
}

}  // namespace
}  // namespace accy::kernels_test
