// Builder and verifier tests for triangular_solve (StableHLO spec "triangular_solve"): the result
// type and stored attributes of valid ops (left and right side, batched, empty), and one
// must-fail case per constraint (C1 element types, C2 ranks, C3 batch dims, square a and b's
// solved dim, C4 the result type through the generic path) and per attribute (missing, of the
// wrong kind, an unknown transpose_a), each checked for code, message and an unchanged block.
#include <cstdint>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ir/builder_test_util.h"
#include "tests/test_util.h"

namespace accy::ir_test {
namespace {

using TriangularSolveBuilderTest = BuilderTest;

std::vector<NamedAttribute> Attributes(bool left_side = true) {
  return {{"left_side", left_side},
          {"lower", true},
          {"unit_diagonal", false},
          {"transpose_a", std::string("NO_TRANSPOSE")}};
}

TEST_F(TriangularSolveBuilderTest, ResultHasTheTypeOfBAndTheAttributesAreKept) {
  FunctionBuilder f = Begin({T(kF32, {4, 4}), T(kF32, {4, 7}), T(kF32, {7, 4}),
                             T(kBF16, {2, 3, 5, 5}), T(kBF16, {2, 3, 5, 1})});
  ASSERT_OK_AND_ASSIGN(Value * left, f.TriangularSolve(f.Parameter(0), f.Parameter(1), true,
                                                       false, true, "TRANSPOSE"));
  EXPECT_EQ(left->type(), T(kF32, {4, 7}));
  const Operation* op = left->defining_op();
  EXPECT_EQ(op->kind(), OpKind::kTriangularSolve);
  EXPECT_EQ(op->name(), "triangular_solve");
  EXPECT_EQ(op->GetBool("left_side"), true);
  EXPECT_EQ(op->GetBool("lower"), false);
  EXPECT_EQ(op->GetBool("unit_diagonal"), true);
  EXPECT_EQ(op->GetString("transpose_a"), "TRANSPOSE");
  ASSERT_OK_AND_ASSIGN(Value * right,
                       f.TriangularSolve(f.Parameter(0), f.Parameter(2), false, true, false));
  EXPECT_EQ(right->type(), T(kF32, {7, 4}));
  EXPECT_EQ(right->defining_op()->GetString("transpose_a"), "NO_TRANSPOSE");
  ASSERT_OK_AND_ASSIGN(Value * batched, f.TriangularSolve(f.Parameter(3), f.Parameter(4), true,
                                                          true, false, "ADJOINT"));
  EXPECT_EQ(batched->type(), T(kBF16, {2, 3, 5, 1}));
  FunctionBuilder empty = Begin({T(kF64, {0, 0}), T(kF64, {0, 3})}, {}, "empty");
  ASSERT_OK_AND_ASSIGN(Value * none,
                       empty.TriangularSolve(empty.Parameter(0), empty.Parameter(1), true, true,
                                             false));
  EXPECT_EQ(none->type(), T(kF64, {0, 3}));
}

TEST_F(TriangularSolveBuilderTest, RejectsEveryBrokenConstraint) {
  FunctionBuilder f =
      Begin({T(kF32, {3, 3}), T(kF32, {3, 2}), T(kI32, {3, 3}), T(kI32, {3, 2}),
             T(kF64, {3, 2}), T(kF32, {3}), T(kF32, {2, 3, 3}), T(kF32, {3, 3, 2}),
             T(kF32, {3, 4}), T(kF32, {2, 3}), T(kF32, {2, 3, 2})});
  Value* a = f.Parameter(0);
  Value* b = f.Parameter(1);
  // Inputs (I1), (I2): floating-point tensors.
  EXPECT_REJECTED(f, f.TriangularSolve(f.Parameter(2), f.Parameter(3), true, true, false),
                  "triangular_solve: a has type tensor<3x3xi32>, expected a floating-point "
                  "element type");
  // (C1) one element type.
  EXPECT_REJECTED(f, f.TriangularSolve(a, f.Parameter(4), true, true, false),
                  "triangular_solve: a has type tensor<3x3xf32> but b has type tensor<3x2xf64> "
                  "(element types must match)");
  // (C2) rank(a) = rank(b) >= 2.
  EXPECT_REJECTED(f, f.TriangularSolve(f.Parameter(5), f.Parameter(5), true, true, false),
                  "triangular_solve: a has type tensor<3xf32>, expected rank >= 2");
  EXPECT_REJECTED(f, f.TriangularSolve(f.Parameter(6), b, true, true, false),
                  "triangular_solve: a has rank 3 but b has rank 2 (ranks must match)");
  // (C3) equal batch dims, a square, b's solved dim of a's size.
  EXPECT_REJECTED(f, f.TriangularSolve(f.Parameter(6), f.Parameter(7), true, true, false),
                  "triangular_solve: batch dim 0 of a has size 2 but of b 3");
  EXPECT_REJECTED(f, f.TriangularSolve(f.Parameter(8), b, true, true, false),
                  "triangular_solve: a has type tensor<3x4xf32>, expected square matrices: dim 0 "
                  "has size 3 but dim 1 has size 4");
  EXPECT_REJECTED(f, f.TriangularSolve(a, f.Parameter(9), true, true, false),
                  "triangular_solve: b has type tensor<2x3xf32>: dim 0 has size 2, expected 3 "
                  "(the size of a's matrices, left_side: op(a) * x = b)");
  EXPECT_REJECTED(f, f.TriangularSolve(a, b, false, true, false),
                  "triangular_solve: b has type tensor<3x2xf32>: dim 1 has size 2, expected 3 "
                  "(the size of a's matrices, right side: x * op(a) = b)");
  EXPECT_REJECTED(f, f.TriangularSolve(f.Parameter(6), f.Parameter(10), false, true, false),
                  "triangular_solve: b has type tensor<2x3x2xf32>: dim 2 has size 2, expected 3");
  EXPECT_REJECTED(f, f.TriangularSolve(a, b, true, true, false, "CONJUGATE"),
                  "triangular_solve: transpose_a is 'CONJUGATE', expected NO_TRANSPOSE, "
                  "TRANSPOSE or ADJOINT");
  // (C4) the result has b's type: the generic path (the importer's) with a given result type.
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kTriangularSolve, {a, b}, {T(kF32, {3, 3})},
                                Attributes()),
                  "triangular_solve: result 0 has type tensor<3x3xf32>, expected "
                  "tensor<3x2xf32>");
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kTriangularSolve, {a}, {T(kF32, {3, 2})}, Attributes()),
                  "triangular_solve: expected 2 operands (a, b), got 1");
}

TEST_F(TriangularSolveBuilderTest, RejectsMissingAndMistypedAttributes) {
  FunctionBuilder f = Begin({T(kF32, {3, 3}), T(kF32, {3, 2})});
  Value* a = f.Parameter(0);
  Value* b = f.Parameter(1);
  const TensorType result = T(kF32, {3, 2});
  for (const std::string name : {"left_side", "lower", "unit_diagonal", "transpose_a"}) {
    std::vector<NamedAttribute> attrs;
    for (const NamedAttribute& attr : Attributes()) {
      if (attr.name != name) attrs.push_back(attr);
    }
    EXPECT_REJECTED(f, f.CreateOp(OpKind::kTriangularSolve, {a, b}, {result}, attrs),
                    "triangular_solve: missing attribute " + name);
  }
  std::vector<NamedAttribute> int_lower = Attributes();
  int_lower[1].value = int64_t{1};
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kTriangularSolve, {a, b}, {result}, int_lower),
                  "triangular_solve: attribute lower has the wrong kind: expected a bool, got "
                  "an integer");
  std::vector<NamedAttribute> bool_transpose = Attributes();
  bool_transpose[3].value = true;
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kTriangularSolve, {a, b}, {result}, bool_transpose),
                  "triangular_solve: attribute transpose_a has the wrong kind: expected a "
                  "string, got a bool");
  // The complete attribute list through the same path is accepted.
  ASSERT_OK(f.CreateOp(OpKind::kTriangularSolve, {a, b}, {result}, Attributes()).status());
}

}  // namespace
}  // namespace accy::ir_test
