// Reference evaluator tests for triangular_solve (src/reference/triangular_solve.cc): all 16
// combinations of left_side, lower, unit_diagonal and transpose_a on one 3x3 a whose two
// triangles are both nonzero (so reading the wrong one shows), with a non-square b, against
// exact values; ADJOINT as TRANSPOSE; the spec's example; a batched f64 solve; NaN in the unread
// triangle and under a unit diagonal; and empty shapes. The expected values are the exact
// rational solutions (worked out by Gauss-Jordan elimination on fractions, not by substitution);
// a has diagonal 2, 4, 8, so all of them are dyadic and exact in f32.
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "tests/reference/reference_test_util.h"
#include "tests/test_util.h"

namespace accy::reference_test {
namespace {

// a: lower triangle [[2], [1, 4], [7, 2, 8]], upper triangle [[2, 3, 5], [4, 6], [8]].
const std::vector<float> kA = {2, 3, 5, 1, 4, 6, 7, 2, 8};
// b: 3x2 for the left side (op(a) * x = b), 2x3 for the right side (x * op(a) = b).
const std::vector<float> kLeftB = {1, 2, 3, 4, 5, 6};
const std::vector<float> kRightB = {1, 3, 5, 2, 4, 6};

struct Case {
  bool left_side, lower, unit_diagonal;
  std::string transpose_a;
  std::vector<float> expected;  // row-major, b's shape
};

StatusOr<Tensor> Solve(const Case& c) {
  const std::vector<int64_t> b_dims = c.left_side ? std::vector<int64_t>{3, 2}
                                                  : std::vector<int64_t>{2, 3};
  return RunOne(Type(E::kF32, b_dims),
                {Make<float>(E::kF32, {3, 3}, kA),
                 Make<float>(E::kF32, b_dims, c.left_side ? kLeftB : kRightB)},
                [&](FunctionBuilder& b, std::span<Value* const> p) {
                  return b.TriangularSolve(p[0], p[1], c.left_side, c.lower, c.unit_diagonal,
                                           c.transpose_a);
                });
}

TEST(TriangularSolveTest, AllSixteenAttributeCombinationsOnA3x3) {
  const Case cases[] = {
      // Left side. E.g. lower, no transpose: L = [[2,0,0],[1,4,0],[7,2,8]], column 0:
      // x0 = 1/2, x1 = (3 - 1/2) / 4 = 5/8, x2 = (5 - 7/2 - 5/4) / 8 = 1/32.
      {true, true, false, "NO_TRANSPOSE", {0.5f, 1, 0.625f, 0.75f, 0.03125f, -0.3125f}},
      {true, true, false, "TRANSPOSE",
       {-1.90625f, -1.9375f, 0.4375f, 0.625f, 0.625f, 0.75f}},
      {true, true, true, "NO_TRANSPOSE", {1, 2, 2, 2, -6, -12}},
      {true, true, true, "TRANSPOSE", {-27, -32, -7, -8, 5, 6}},
      {true, false, false, "NO_TRANSPOSE",
       {-0.78125f, -0.6875f, -0.1875f, -0.125f, 0.625f, 0.75f}},
      {true, false, false, "TRANSPOSE", {0.5f, 1, 0.375f, 0.25f, 0.03125f, -0.0625f}},
      {true, false, true, "NO_TRANSPOSE", {57, 68, -27, -32, 5, 6}},
      {true, false, true, "TRANSPOSE", {1, 2, 0, -2, 0, 8}},
      // Right side: x * op(a) = b.
      {false, true, false, "NO_TRANSPOSE",
       {-1.90625f, 0.4375f, 0.625f, -1.9375f, 0.625f, 0.75f}},
      {false, true, false, "TRANSPOSE", {0.5f, 0.625f, 0.03125f, 1, 0.75f, -0.3125f}},
      {false, true, true, "NO_TRANSPOSE", {-27, -7, 5, -32, -8, 6}},
      {false, true, true, "TRANSPOSE", {1, 2, -6, 2, 2, -12}},
      {false, false, false, "NO_TRANSPOSE", {0.5f, 0.375f, 0.03125f, 1, 0.25f, -0.0625f}},
      {false, false, false, "TRANSPOSE",
       {-0.78125f, -0.1875f, 0.625f, -0.6875f, -0.125f, 0.75f}},
      {false, false, true, "NO_TRANSPOSE", {1, 0, 0, 2, -2, 8}},
      {false, false, true, "TRANSPOSE", {57, -27, 5, 68, -32, 6}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "left_side=" << c.left_side << " lower=" << c.lower
                                      << " unit_diagonal=" << c.unit_diagonal << " "
                                      << c.transpose_a);
    ASSERT_OK_AND_ASSIGN(Tensor x, Solve(c));
    ExpectTensor<float>(x, E::kF32, c.left_side ? std::vector<int64_t>{3, 2}
                                                : std::vector<int64_t>{2, 3},
                        c.expected);
    // ADJOINT is TRANSPOSE for real types.
    if (c.transpose_a == "TRANSPOSE") {
      Case adjoint = c;
      adjoint.transpose_a = "ADJOINT";
      ASSERT_OK_AND_ASSIGN(Tensor y, Solve(adjoint));
      ExpectTensor<float>(y, E::kF32, x.type().dims(), c.expected);
    }
  }
}

TEST(TriangularSolveTest, SpecExampleSolvesToTwiceTheIdentity) {
  // Spec "triangular_solve", Examples: lower a, left side, no transpose.
  ASSERT_OK_AND_ASSIGN(
      Tensor x, RunOne(Type(E::kF32, {3, 3}),
                       {Make<float>(E::kF32, {3, 3}, {1, 0, 0, 2, 4, 0, 3, 5, 6}),
                        Make<float>(E::kF32, {3, 3}, {2, 0, 0, 4, 8, 0, 6, 10, 12})},
                       [](FunctionBuilder& b, std::span<Value* const> p) {
                         return b.TriangularSolve(p[0], p[1], true, true, false);
                       }));
  ExpectTensor<float>(x, E::kF32, {3, 3}, {2, 0, 0, 0, 2, 0, 0, 0, 2});
}

TEST(TriangularSolveTest, BatchesSolveIndependentlyInF64) {
  // Batch 0: upper [[2, 1], [., 4]]; batch 1: upper [[-1, 3], [., 0.5]]; right side, b 1x2.
  // x * U = b: x0 = b0 / u00, x1 = (b1 - x0 u01) / u11.
  ASSERT_OK_AND_ASSIGN(
      Tensor x, RunOne(Type(E::kF64, {2, 1, 2}),
                       {Make<double>(E::kF64, {2, 2, 2}, {2, 1, 99, 4, -1, 3, 99, 0.5}),
                        Make<double>(E::kF64, {2, 1, 2}, {6, 7, 2, 1})},
                       [](FunctionBuilder& b, std::span<Value* const> p) {
                         return b.TriangularSolve(p[0], p[1], false, false, false);
                       }));
  // Batch 0: x0 = 3, x1 = (7 - 3) / 4 = 1. Batch 1: x0 = -2, x1 = (1 + 6) / 0.5 = 14.
  ExpectTensor<double>(x, E::kF64, {2, 1, 2}, {3, 1, -2, 14});
}

TEST(TriangularSolveTest, UnreadTriangleAndUnitDiagonalAreNotRead) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Lower, unit diagonal: only a[1][0] = 3 is read.
  ASSERT_OK_AND_ASSIGN(
      Tensor x, RunOne(Type(E::kF32, {2, 1}),
                       {Make<float>(E::kF32, {2, 2}, {nan, nan, 3, nan}),
                        Make<float>(E::kF32, {2, 1}, {1, 5})},
                       [](FunctionBuilder& b, std::span<Value* const> p) {
                         return b.TriangularSolve(p[0], p[1], true, true, true);
                       }));
  ExpectTensor<float>(x, E::kF32, {2, 1}, {1, 2});
}

TEST(TriangularSolveTest, ZeroOnTheDiagonalDividesAsIeee) {
  // The spec leaves a singular a undefined; the reference divides: 1 / 0 = inf.
  ASSERT_OK_AND_ASSIGN(
      Tensor x, RunOne(Type(E::kF32, {1, 1}),
                       {Make<float>(E::kF32, {1, 1}, {0}), Make<float>(E::kF32, {1, 1}, {1})},
                       [](FunctionBuilder& b, std::span<Value* const> p) {
                         return b.TriangularSolve(p[0], p[1], true, true, false);
                       }));
  ExpectTensor<float>(x, E::kF32, {1, 1}, {std::numeric_limits<float>::infinity()});
}

TEST(TriangularSolveTest, EmptyShapesGiveEmptyResults) {
  struct Shape {
    std::vector<int64_t> a, b;
    bool left_side;
  };
  const Shape shapes[] = {{{0, 0}, {0, 3}, true},  {{3, 3}, {3, 0}, true},
                          {{0, 2, 2}, {0, 2, 5}, true}, {{0, 0}, {4, 0}, false},
                          {{2, 2}, {0, 2}, false}};
  for (const Shape& s : shapes) {
    const size_t a_elements = static_cast<size_t>(Type(E::kF32, s.a).element_count());
    ASSERT_OK_AND_ASSIGN(
        Tensor x, RunOne(Type(E::kF32, s.b),
                         {Make<float>(E::kF32, s.a, std::vector<float>(a_elements, 1.0f)),
                          Make<float>(E::kF32, s.b, {})},
                         [&](FunctionBuilder& b, std::span<Value* const> p) {
                           return b.TriangularSolve(p[0], p[1], s.left_side, true, false);
                         }));
    EXPECT_EQ(x.type(), Type(E::kF32, s.b));
    EXPECT_EQ(x.element_count(), 0);
  }
}

}  // namespace
}  // namespace accy::reference_test
