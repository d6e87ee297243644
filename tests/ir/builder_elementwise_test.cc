// Builder tests for the elementwise ops: every unary and binary op (table-driven), compare,
// select, clamp, convert and bitcast_convert. Each op has a valid form whose result type is
// checked exactly and rejected forms checked for code, message and an unchanged block.
#include <optional>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/util/str_cat.h"
#include "tests/ir/builder_test_util.h"
#include "tests/test_util.h"

namespace accy::ir_test {
namespace {

using UnaryMethod = StatusOr<Value*> (FunctionBuilder::*)(Value*);
using BinaryMethod = StatusOr<Value*> (FunctionBuilder::*)(Value*, Value*);
using ElementwiseBuilderTest = BuilderTest;

struct UnaryCase {
  OpKind kind;
  UnaryMethod method;
  ElementType accepted;
  ElementType accepted_result;  // element type of the result for `accepted`
  ElementType rejected;
  std::string expected_classes;  // as named in the rejection message, with its article
};

TEST_F(ElementwiseBuilderTest, UnaryOpsAcceptTheirElementTypesAndRejectOthers) {
  using FB = FunctionBuilder;
  const std::vector<UnaryCase> cases = {
      {OpKind::kAbs, &FB::Abs, kI32, kI32, kU32, "a signed integer or floating-point"},
      {OpKind::kNegate, &FB::Negate, kU8, kU8, kI1, "an integer or floating-point"},
      {OpKind::kSign, &FB::Sign, kF32, kF32, kU16, "a signed integer or floating-point"},
      {OpKind::kNot, &FB::Not, kI1, kI1, kF32, "an i1 or integer"},
      {OpKind::kExponential, &FB::Exponential, kF32, kF32, kI32, "a floating-point"},
      {OpKind::kExponentialMinusOne, &FB::ExponentialMinusOne, kF64, kF64, kI64,
       "a floating-point"},
      {OpKind::kLog, &FB::Log, kF16, kF16, kI1, "a floating-point"},
      {OpKind::kLogPlusOne, &FB::LogPlusOne, kBF16, kBF16, kU8, "a floating-point"},
      {OpKind::kLogistic, &FB::Logistic, kF32, kF32, kI8, "a floating-point"},
      {OpKind::kTanh, &FB::Tanh, kF32, kF32, kI32, "a floating-point"},
      {OpKind::kSqrt, &FB::Sqrt, kF64, kF64, kU32, "a floating-point"},
      {OpKind::kRsqrt, &FB::Rsqrt, kF32, kF32, kI16, "a floating-point"},
      {OpKind::kCbrt, &FB::Cbrt, kF32, kF32, kI32, "a floating-point"},
      {OpKind::kSine, &FB::Sine, kF16, kF16, kI32, "a floating-point"},
      {OpKind::kCosine, &FB::Cosine, kF32, kF32, kI1, "a floating-point"},
      {OpKind::kFloor, &FB::Floor, kF32, kF32, kI32, "a floating-point"},
      {OpKind::kCeil, &FB::Ceil, kBF16, kBF16, kI64, "a floating-point"},
      {OpKind::kRoundNearestEven, &FB::RoundNearestEven, kF32, kF32, kI32, "a floating-point"},
      {OpKind::kRoundNearestAfz, &FB::RoundNearestAfz, kF64, kF64, kU8, "a floating-point"},
      {OpKind::kIsFinite, &FB::IsFinite, kF32, kI1, kI32, "a floating-point"},
      {OpKind::kPopcnt, &FB::Popcnt, kU32, kU32, kF32, "an integer"},
      {OpKind::kCountLeadingZeros, &FB::CountLeadingZeros, kI16, kI16, kBF16, "an integer"},
      {OpKind::kTan, &FB::Tan, kF32, kF32, kI32, "a floating-point"},
      {OpKind::kAsin, &FB::Asin, kF32, kF32, kI32, "a floating-point"},
      {OpKind::kAcos, &FB::Acos, kF64, kF64, kI32, "a floating-point"},
      {OpKind::kAtan, &FB::Atan, kF16, kF16, kU8, "a floating-point"},
      {OpKind::kSinh, &FB::Sinh, kBF16, kBF16, kI1, "a floating-point"},
      {OpKind::kCosh, &FB::Cosh, kF32, kF32, kI64, "a floating-point"},
      {OpKind::kAsinh, &FB::Asinh, kF32, kF32, kI8, "a floating-point"},
      {OpKind::kAcosh, &FB::Acosh, kF32, kF32, kU16, "a floating-point"},
      {OpKind::kAtanh, &FB::Atanh, kF32, kF32, kI16, "a floating-point"},
      {OpKind::kErf, &FB::Erf, kF32, kF32, kI32, "a floating-point"},
      {OpKind::kErfc, &FB::Erfc, kF64, kF64, kI32, "a floating-point"},
      {OpKind::kErfInv, &FB::ErfInv, kF32, kF32, kI32, "a floating-point"},
      {OpKind::kLgamma, &FB::Lgamma, kF32, kF32, kI32, "a floating-point"},
      {OpKind::kDigamma, &FB::Digamma, kF16, kF16, kI32, "a floating-point"},
      {OpKind::kBesselI1e, &FB::BesselI1e, kF32, kF32, kI32, "a floating-point"},
      {OpKind::kIsInf, &FB::IsInf, kF32, kI1, kI32, "a floating-point"},
      {OpKind::kIsPosInf, &FB::IsPosInf, kF64, kI1, kI32, "a floating-point"},
      {OpKind::kIsNegInf, &FB::IsNegInf, kBF16, kI1, kI32, "a floating-point"},
  };
  // Every unary op except convert, bitcast_convert (tested below) and reduce_precision (its bit
  // attributes: tests/reference/chlo_test.cc) is in the table.
  EXPECT_EQ(cases.size(),
            static_cast<size_t>(OpKind::kCountLeadingZeros) - static_cast<size_t>(OpKind::kAbs));
  int index = 0;
  for (const UnaryCase& c : cases) {
    const std::string name(OpName(c.kind));
    SCOPED_TRACE(name);
    FunctionBuilder f = Begin({T(c.accepted, {2, 3}), T(c.rejected, {2, 3})}, {},
                              StrCat("f", index++));
    ASSERT_OK_AND_ASSIGN(Value * y, (f.*c.method)(f.Parameter(0)));
    EXPECT_EQ(y->type(), T(c.accepted_result, {2, 3}));
    ASSERT_NE(y->defining_op(), nullptr);
    EXPECT_EQ(y->defining_op()->kind(), c.kind);
    EXPECT_EQ(y->defining_op()->operand(0), f.Parameter(0));
    EXPECT_EQ(f.block()->operations().size(), 1u);
    EXPECT_REJECTED(f, (f.*c.method)(f.Parameter(1)),
                    StrCat(name, ": operand 0 has type ", T(c.rejected, {2, 3}).ToString(),
                           ", expected ", c.expected_classes, " element type"));
    EXPECT_REJECTED(f, (f.*c.method)(f.Parameter(99)), StrCat(name, ": operand 0 is null"));
  }
}

struct BinaryCase {
  OpKind kind;
  BinaryMethod method;
  ElementType accepted;
  std::optional<ElementType> rejected;  // none when every element type is accepted
  std::string expected_classes;
};

TEST_F(ElementwiseBuilderTest, BinaryOpsAcceptTheirElementTypesAndRejectOthers) {
  using FB = FunctionBuilder;
  const std::vector<BinaryCase> cases = {
      {OpKind::kAdd, &FB::Add, kI1, std::nullopt, ""},
      {OpKind::kSubtract, &FB::Subtract, kI32, kI1, "an integer or floating-point"},
      {OpKind::kMultiply, &FB::Multiply, kI1, std::nullopt, ""},
      {OpKind::kDivide, &FB::Divide, kU32, kI1, "an integer or floating-point"},
      {OpKind::kRemainder, &FB::Remainder, kF32, kI1, "an integer or floating-point"},
      {OpKind::kMaximum, &FB::Maximum, kI1, std::nullopt, ""},
      {OpKind::kMinimum, &FB::Minimum, kBF16, std::nullopt, ""},
      {OpKind::kPower, &FB::Power, kI32, kI1, "an integer or floating-point"},
      {OpKind::kAtan2, &FB::Atan2, kF32, kI32, "a floating-point"},
      {OpKind::kNextAfter, &FB::NextAfter, kF32, kI32, "a floating-point"},
      {OpKind::kZeta, &FB::Zeta, kF16, kI32, "a floating-point"},
      {OpKind::kPolygamma, &FB::Polygamma, kBF16, kU8, "a floating-point"},
      {OpKind::kMulhi, &FB::Mulhi, kI64, kI1, "an integer"},
      {OpKind::kAnd, &FB::And, kI1, kF32, "an i1 or integer"},
      {OpKind::kOr, &FB::Or, kU8, kF32, "an i1 or integer"},
      {OpKind::kXor, &FB::Xor, kI64, kF16, "an i1 or integer"},
      {OpKind::kShiftLeft, &FB::ShiftLeft, kI32, kF32, "an integer"},
      {OpKind::kShiftRightLogical, &FB::ShiftRightLogical, kU32, kI1, "an integer"},
      {OpKind::kShiftRightArithmetic, &FB::ShiftRightArithmetic, kI8, kF64, "an integer"},
  };
  // Every binary op except compare (tested below) is in the table.
  EXPECT_EQ(cases.size(),
            static_cast<size_t>(OpKind::kCompare) - static_cast<size_t>(OpKind::kAdd));
  int index = 0;
  for (const BinaryCase& c : cases) {
    const std::string name(OpName(c.kind));
    SCOPED_TRACE(name);
    const ElementType rejected = c.rejected.value_or(c.accepted);
    FunctionBuilder f =
        Begin({T(c.accepted, {2, 3}), T(c.accepted, {3, 2}), T(rejected, {2, 3})}, {},
              StrCat("f", index++));
    Value* x = f.Parameter(0);
    ASSERT_OK_AND_ASSIGN(Value * y, (f.*c.method)(x, x));
    EXPECT_EQ(y->type(), T(c.accepted, {2, 3}));
    EXPECT_EQ(y->defining_op()->kind(), c.kind);
    EXPECT_EQ(y->defining_op()->num_operands(), 2);
    EXPECT_EQ(x->uses().size(), 2u);
    // Operands of different shapes.
    EXPECT_REJECTED(f, (f.*c.method)(x, f.Parameter(1)),
                    StrCat(name, ": operand 1 has type ", T(c.accepted, {3, 2}).ToString(),
                           ", expected ", T(c.accepted, {2, 3}).ToString(),
                           " (operands must have the same type)"));
    if (c.rejected.has_value()) {
      Value* bad = f.Parameter(2);
      EXPECT_REJECTED(f, (f.*c.method)(bad, bad),
                      StrCat(name, ": operand 0 has type ", T(rejected, {2, 3}).ToString(),
                             ", expected ", c.expected_classes, " element type"));
    }
    EXPECT_REJECTED(f, (f.*c.method)(x, f.Parameter(99)), StrCat(name, ": operand 1 is null"));
  }
}

TEST_F(ElementwiseBuilderTest, BinaryOpsRejectOperandsOfDifferentElementTypes) {
  FunctionBuilder f = Begin({T(kF32, {4}), T(kF16, {4})});
  EXPECT_REJECTED(f, f.Add(f.Parameter(0), f.Parameter(1)),
                  "add: operand 1 has type tensor<4xf16>, expected tensor<4xf32>");
}

TEST_F(ElementwiseBuilderTest, CompareReturnsI1OfTheOperandShape) {
  FunctionBuilder f = Begin({T(kF32, {2, 3}), T(kU16, {5}), T(kI1, {5})});
  Value* x = f.Parameter(0);
  ASSERT_OK_AND_ASSIGN(Value * lt, f.Compare(x, x, "LT"));
  EXPECT_EQ(lt->type(), T(kI1, {2, 3}));
  EXPECT_EQ(lt->defining_op()->GetString("comparison_direction"), "LT");
  EXPECT_EQ(lt->defining_op()->attribute("compare_type"), nullptr);
  ASSERT_OK_AND_ASSIGN(Value * total, f.Compare(x, x, "GE", "TOTALORDER"));
  EXPECT_EQ(total->type(), T(kI1, {2, 3}));
  EXPECT_EQ(total->defining_op()->GetString("compare_type"), "TOTALORDER");
  for (const char* direction : {"EQ", "NE", "GE", "GT", "LE", "LT"}) {
    ASSERT_OK_AND_ASSIGN(Value * r, f.Compare(f.Parameter(1), f.Parameter(1), direction,
                                              "UNSIGNED"));
    EXPECT_EQ(r->type(), T(kI1, {5})) << direction;
  }
  // UNSIGNED is also the comparison type of i1.
  ASSERT_OK_AND_ASSIGN(Value * b, f.Compare(f.Parameter(2), f.Parameter(2), "NE", "UNSIGNED"));
  EXPECT_EQ(b->type(), T(kI1, {5}));
}

TEST_F(ElementwiseBuilderTest, CompareRejectsBadDirectionTypeOrOperands) {
  FunctionBuilder f = Begin({T(kF32, {2, 3}), T(kI32, {2, 3}), T(kF32, {3})});
  Value* x = f.Parameter(0);
  Value* i = f.Parameter(1);
  EXPECT_REJECTED(f, f.Compare(x, x, "LTE"),
                  "compare: comparison_direction 'LTE' is not one of EQ, NE, GE, GT, LE, LT");
  EXPECT_REJECTED(f, f.Compare(x, x, "lt"), "compare: comparison_direction 'lt'");
  EXPECT_REJECTED(f, f.Compare(x, x, "EQ", "SIGNED"),
                  "compare: compare_type SIGNED does not match element type f32");
  EXPECT_REJECTED(f, f.Compare(i, i, "EQ", "FLOAT"),
                  "compare: compare_type FLOAT does not match element type i32");
  EXPECT_REJECTED(f, f.Compare(i, i, "EQ", "UNSIGNED"),
                  "compare: compare_type UNSIGNED does not match element type i32");
  EXPECT_REJECTED(f, f.Compare(i, i, "EQ", "BOGUS"),
                  "compare: compare_type 'BOGUS' is not one of FLOAT, TOTALORDER, SIGNED, "
                  "UNSIGNED");
  EXPECT_REJECTED(f, f.Compare(x, i, "EQ"),
                  "compare: operand 1 has type tensor<2x3xi32>, expected tensor<2x3xf32>");
  EXPECT_REJECTED(f, f.Compare(x, f.Parameter(2), "EQ"),
                  "compare: operand 1 has type tensor<3xf32>");
}

TEST_F(ElementwiseBuilderTest, SelectTakesAnI1PredOfRankZeroOrTheOperandShape) {
  FunctionBuilder f = Begin({T(kI1, {2, 3}), T(kI1), T(kF32, {2, 3}), T(kF32, {2, 3})});
  ASSERT_OK_AND_ASSIGN(Value * full,
                       f.Select(f.Parameter(0), f.Parameter(2), f.Parameter(3)));
  EXPECT_EQ(full->type(), T(kF32, {2, 3}));
  EXPECT_EQ(full->defining_op()->kind(), OpKind::kSelect);
  ASSERT_OK_AND_ASSIGN(Value * scalar,
                       f.Select(f.Parameter(1), f.Parameter(2), f.Parameter(3)));
  EXPECT_EQ(scalar->type(), T(kF32, {2, 3}));
}

TEST_F(ElementwiseBuilderTest, SelectRejectsNonI1PredMisshapedPredAndMismatchedBranches) {
  FunctionBuilder f =
      Begin({T(kI1, {2, 3}), T(kF32, {2, 3}), T(kI32, {2, 3}), T(kI1, {3, 2}), T(kF32, {2})});
  Value* pred = f.Parameter(0);
  Value* x = f.Parameter(1);
  EXPECT_REJECTED(f, f.Select(x, x, x),
                  "select: pred has type tensor<2x3xf32>, expected i1 elements");
  EXPECT_REJECTED(f, f.Select(f.Parameter(3), x, x),
                  "select: pred has type tensor<3x2xi1>, expected rank 0 or the shape of "
                  "tensor<2x3xf32>");
  EXPECT_REJECTED(f, f.Select(pred, x, f.Parameter(2)),
                  "select: on_false has type tensor<2x3xi32>, expected tensor<2x3xf32> (on_true "
                  "and on_false must have the same type)");
  EXPECT_REJECTED(f, f.Select(pred, f.Parameter(4), f.Parameter(4)),
                  "select: pred has type tensor<2x3xi1>, expected rank 0 or the shape of "
                  "tensor<2xf32>");
}

TEST_F(ElementwiseBuilderTest, ClampTakesBoundsOfRankZeroOrTheOperandShape) {
  FunctionBuilder f = Begin({T(kF32), T(kF32, {4}), T(kF32, {4})});
  ASSERT_OK_AND_ASSIGN(Value * scalar_bounds,
                       f.Clamp(f.Parameter(0), f.Parameter(1), f.Parameter(0)));
  EXPECT_EQ(scalar_bounds->type(), T(kF32, {4}));
  EXPECT_EQ(scalar_bounds->defining_op()->kind(), OpKind::kClamp);
  ASSERT_OK_AND_ASSIGN(Value * full_bounds,
                       f.Clamp(f.Parameter(2), f.Parameter(1), f.Parameter(2)));
  EXPECT_EQ(full_bounds->type(), T(kF32, {4}));
}

TEST_F(ElementwiseBuilderTest, ClampRejectsBoundsOfAnotherElementTypeOrShape) {
  FunctionBuilder f = Begin({T(kI32), T(kF32, {4}), T(kF32, {3}), T(kF32)});
  Value* x = f.Parameter(1);
  EXPECT_REJECTED(f, f.Clamp(f.Parameter(0), x, f.Parameter(3)),
                  "clamp: min has type tensor<i32>, expected f32 elements and rank 0 or the "
                  "shape of tensor<4xf32>");
  EXPECT_REJECTED(f, f.Clamp(f.Parameter(3), x, f.Parameter(2)),
                  "clamp: max has type tensor<3xf32>, expected f32 elements and rank 0 or the "
                  "shape of tensor<4xf32>");
}

TEST_F(ElementwiseBuilderTest, ConvertKeepsTheShapeAndChangesTheElementType) {
  FunctionBuilder f = Begin({T(kF32, {2, 3}), T(kI1, {4})});
  ASSERT_OK_AND_ASSIGN(Value * to_int, f.Convert(f.Parameter(0), kI32));
  EXPECT_EQ(to_int->type(), T(kI32, {2, 3}));
  EXPECT_EQ(to_int->defining_op()->kind(), OpKind::kConvert);
  ASSERT_OK_AND_ASSIGN(Value * from_bool, f.Convert(f.Parameter(1), kBF16));
  EXPECT_EQ(from_bool->type(), T(kBF16, {4}));
}

TEST_F(ElementwiseBuilderTest, ConvertRejectsAResultOfAnotherShape) {
  FunctionBuilder f = Begin({T(kF32, {2, 3})});
  // Convert itself always keeps the shape; the generic path checks a given result type.
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kConvert, {f.Parameter(0)}, {T(kI32, {3, 2})}),
                  "convert: result type tensor<3x2xi32> must have the shape of "
                  "tensor<2x3xf32>");
  EXPECT_REJECTED(f, f.Convert(f.Parameter(5), kI32), "convert: operand 0 is null");
}

TEST_F(ElementwiseBuilderTest, ConvertRejectsAnUnknownElementType) {
  FunctionBuilder f = Begin({T(kF32, {2})});
  EXPECT_REJECTED(f, f.Convert(f.Parameter(0), static_cast<ElementType>(77)),
                  "convert: unknown element type 77");
}

TEST_F(ElementwiseBuilderTest, ElementClassesTakeTheArticleOfTheirFirstWord) {
  FunctionBuilder f = Begin({T(kF32, {2}), T(kI32, {2})});
  EXPECT_REJECTED(f, f.Popcnt(f.Parameter(0)),
                  "popcnt: operand 0 has type tensor<2xf32>, expected an integer element type");
  EXPECT_REJECTED(f, f.Not(f.Parameter(0)), "expected an i1 or integer element type");
  EXPECT_REJECTED(f, f.Sqrt(f.Parameter(1)), "expected a floating-point element type");
}

struct BitcastCase {
  TensorType operand;
  TensorType result;
};

TEST_F(ElementwiseBuilderTest, BitcastConvertKeepsOrSplitsOrFoldsTheTrailingDim) {
  const std::vector<BitcastCase> cases = {
      {T(kF32, {2, 3}), T(kI32, {2, 3})},     // same width: same shape
      {T(kF16, {4}), T(kBF16, {4})},          // same width, both floats
      {T(kF32, {2, 3}), T(kU8, {2, 3, 4})},   // narrower result: trailing dim of 4 added
      {T(kF64), T(kI16, {4})},                // narrower result from a scalar
      {T(kU8, {2, 3, 4}), T(kF32, {2, 3})},   // wider result: trailing dim of 4 folded
      {T(kI32, {2}), T(kF64)},                // wider result to a scalar
  };
  std::vector<TensorType> parameters;
  for (const BitcastCase& c : cases) parameters.push_back(c.operand);
  FunctionBuilder f = Begin(parameters);
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].operand.ToString() + " -> " + cases[i].result.ToString());
    ASSERT_OK_AND_ASSIGN(Value * y, f.BitcastConvert(f.Parameter(static_cast<int64_t>(i)),
                                                     cases[i].result));
    EXPECT_EQ(y->type(), cases[i].result);
    EXPECT_EQ(y->defining_op()->kind(), OpKind::kBitcastConvert);
  }
}

TEST_F(ElementwiseBuilderTest, BitcastConvertRejectsShapesThatDoNotMatchTheWidthRatio) {
  const std::vector<BitcastCase> cases = {
      {T(kF32, {2, 3}), T(kI32, {3, 2})},    // same width, other shape
      {T(kF32, {2, 3}), T(kU8, {2, 3})},     // narrower result without the trailing dim
      {T(kF32, {2, 3}), T(kU8, {2, 3, 2})},  // trailing dim is not the width ratio
      {T(kU8, {2, 3, 2}), T(kF32, {2, 3})},  // trailing dim is not the width ratio
      {T(kU8, {2, 3}), T(kF32, {2, 3})},     // wider result from an operand without it
  };
  std::vector<TensorType> parameters;
  for (const BitcastCase& c : cases) parameters.push_back(c.operand);
  FunctionBuilder f = Begin(parameters);
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_REJECTED(f, f.BitcastConvert(f.Parameter(static_cast<int64_t>(i)), cases[i].result),
                    StrCat("bitcast_convert: cannot bitcast ", cases[i].operand.ToString(),
                           " to ", cases[i].result.ToString()));
  }
}

TEST_F(ElementwiseBuilderTest, BitcastConvertCountsI1AsOneBit) {
  // Spec "bitcast_convert": num_bits(i1) = 1, so 8 i1 elements make one i8 and back.
  FunctionBuilder f = Begin({T(kI1, {8}), T(kI8, {}), T(kI1, {8}), T(kI1, {2, 64})});
  ASSERT_OK_AND_ASSIGN(Value * packed, f.BitcastConvert(f.Parameter(0), T(kI8, {})));
  EXPECT_EQ(packed->type(), T(kI8, {}));
  ASSERT_OK_AND_ASSIGN(Value * unpacked, f.BitcastConvert(f.Parameter(1), T(kI1, {8})));
  EXPECT_EQ(unpacked->type(), T(kI1, {8}));
  ASSERT_OK_AND_ASSIGN(Value * same, f.BitcastConvert(f.Parameter(2), T(kI1, {8})));
  EXPECT_EQ(same->type(), T(kI1, {8}));
  ASSERT_OK_AND_ASSIGN(Value * wide, f.BitcastConvert(f.Parameter(3), T(kF64, {2})));
  EXPECT_EQ(wide->type(), T(kF64, {2}));
  // One byte per i1 element is not the spec's width: i1[8] -> i8[8] has the wrong shape.
  EXPECT_REJECTED(f, f.BitcastConvert(f.Parameter(0), T(kI8, {8})),
                  "bitcast_convert: cannot bitcast tensor<8xi1> to tensor<8xi8>");
}

}  // namespace
}  // namespace accy::ir_test
