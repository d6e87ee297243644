// Reference evaluator tests for constant and the elementwise ops (src/reference/elementwise_*.cc):
// each builds a small function with accy::Builder, evaluates it with accy::Evaluate and checks
// hand-computed values exactly, with the docs/numerics.md conventions at the edges (NaN,
// signed zeros, division by zero, out-of-range shifts, saturating converts, f16/bf16 rounding).
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "tests/reference/reference_test_util.h"
#include "tests/test_util.h"

namespace accy::reference_test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();

using UnaryMethod = StatusOr<Value*> (FunctionBuilder::*)(Value*);
using BinaryMethod = StatusOr<Value*> (FunctionBuilder::*)(Value*, Value*);

StatusOr<Tensor> RunUnary(UnaryMethod method, const Tensor& x, ElementType result_element) {
  return RunOne(x.type().WithElementType(result_element), {x},
             [&](FunctionBuilder& b, std::span<Value* const> p) { return (b.*method)(p[0]); });
}
StatusOr<Tensor> RunUnary(UnaryMethod method, const Tensor& x) {
  return RunUnary(method, x, x.element_type());
}
StatusOr<Tensor> RunBinary(BinaryMethod method, const Tensor& lhs, const Tensor& rhs) {
  return RunOne(lhs.type(), {lhs, rhs}, [&](FunctionBuilder& b, std::span<Value* const> p) {
    return (b.*method)(p[0], p[1]);
  });
}
StatusOr<Tensor> RunCompare(const Tensor& lhs, const Tensor& rhs, std::string_view direction,
                            std::string_view compare_type = "") {
  return RunOne(lhs.type().WithElementType(E::kI1), {lhs, rhs},
             [&](FunctionBuilder& b, std::span<Value* const> p) {
               return b.Compare(p[0], p[1], direction, compare_type);
             });
}
StatusOr<Tensor> RunConvert(const Tensor& x, ElementType to) {
  return RunOne(x.type().WithElementType(to), {x},
             [&](FunctionBuilder& b, std::span<Value* const> p) { return b.Convert(p[0], to); });
}

TEST(ElementwiseTest, ConstantReturnsItsBytes) {
  const Tensor value = Make<int16_t>(E::kI16, {2, 2}, {1, -2, 300, -32768});
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunOne(value.type(), {}, [&](FunctionBuilder& b, std::span<Value* const>) {
                         return b.Constant(value);
                       }));
  ExpectTensor<int16_t>(result, E::kI16, {2, 2}, {1, -2, 300, -32768});
}

TEST(ElementwiseTest, MaximumAndMinimumPropagateNaN) {
  const Tensor lhs = Make<float>(E::kF32, {4}, {kNaN, 1, 2, kNaN});
  const Tensor rhs = Make<float>(E::kF32, {4}, {1, kNaN, 3, -kInf});
  ASSERT_OK_AND_ASSIGN(Tensor max, RunBinary(&FunctionBuilder::Maximum, lhs, rhs));
  ExpectTensor<float>(max, E::kF32, {4}, {kNaN, kNaN, 3, kNaN});
  ASSERT_OK_AND_ASSIGN(Tensor min, RunBinary(&FunctionBuilder::Minimum, lhs, rhs));
  ExpectTensor<float>(min, E::kF32, {4}, {kNaN, kNaN, 2, kNaN});
}

TEST(ElementwiseTest, MaximumOrdersNegativeZeroBelowPositiveZero) {
  const Tensor lhs = Make<float>(E::kF32, {2}, {-0.0f, 0.0f});
  const Tensor rhs = Make<float>(E::kF32, {2}, {0.0f, -0.0f});
  ASSERT_OK_AND_ASSIGN(Tensor max, RunBinary(&FunctionBuilder::Maximum, lhs, rhs));
  ASSERT_OK_AND_ASSIGN(Tensor min, RunBinary(&FunctionBuilder::Minimum, lhs, rhs));
  for (int i = 0; i < 2; ++i) {
    EXPECT_FALSE(std::signbit(max.data_as<float>()[i])) << i;
    EXPECT_TRUE(std::signbit(min.data_as<float>()[i])) << i;
  }
}

TEST(ElementwiseTest, IntegerDivisionByZeroAndOverflowFollowConventions) {
  const Tensor lhs = Make<int32_t>(E::kI32, {6}, {7, -7, kI32Min, kI32Min, -7, 0});
  const Tensor rhs = Make<int32_t>(E::kI32, {6}, {0, 0, -1, 0, 2, -3});
  ASSERT_OK_AND_ASSIGN(Tensor div, RunBinary(&FunctionBuilder::Divide, lhs, rhs));
  ExpectTensor<int32_t>(div, E::kI32, {6}, {-1, -1, kI32Min, -1, -3, 0});
  ASSERT_OK_AND_ASSIGN(Tensor rem, RunBinary(&FunctionBuilder::Remainder, lhs, rhs));
  ExpectTensor<int32_t>(rem, E::kI32, {6}, {7, -7, 0, kI32Min, -1, 0});
}

TEST(ElementwiseTest, I8DivisionWrapsAndByZeroGivesMinusOne) {
  const Tensor lhs = Make<int8_t>(E::kI8, {4}, {-128, 100, -100, 127});
  const Tensor rhs = Make<int8_t>(E::kI8, {4}, {-1, 0, 7, -128});
  ASSERT_OK_AND_ASSIGN(Tensor div, RunBinary(&FunctionBuilder::Divide, lhs, rhs));
  ExpectTensor<int8_t>(div, E::kI8, {4}, {-128, -1, -14, 0});
  ASSERT_OK_AND_ASSIGN(Tensor rem, RunBinary(&FunctionBuilder::Remainder, lhs, rhs));
  ExpectTensor<int8_t>(rem, E::kI8, {4}, {0, 100, -2, 127});
}

TEST(ElementwiseTest, U32DivisionByZeroGivesAllOnes) {
  const Tensor lhs = Make<uint32_t>(E::kU32, {3}, {7, 0xFFFFFFFFu, 10});
  const Tensor rhs = Make<uint32_t>(E::kU32, {3}, {0, 2, 0xFFFFFFFFu});
  ASSERT_OK_AND_ASSIGN(Tensor div, RunBinary(&FunctionBuilder::Divide, lhs, rhs));
  ExpectTensor<uint32_t>(div, E::kU32, {3}, {0xFFFFFFFFu, 0x7FFFFFFFu, 0});
  ASSERT_OK_AND_ASSIGN(Tensor rem, RunBinary(&FunctionBuilder::Remainder, lhs, rhs));
  ExpectTensor<uint32_t>(rem, E::kU32, {3}, {7, 1, 10});
}

TEST(ElementwiseTest, FloatRemainderTakesTheDividendSign) {
  const Tensor lhs = Make<double>(E::kF64, {3}, {-7.5, 7.5, 1.0});
  const Tensor rhs = Make<double>(E::kF64, {3}, {2, -2, 0});
  ASSERT_OK_AND_ASSIGN(Tensor rem, RunBinary(&FunctionBuilder::Remainder, lhs, rhs));
  ExpectTensor<double>(rem, E::kF64, {3}, {-1.5, 1.5, std::numeric_limits<double>::quiet_NaN()});
}

TEST(ElementwiseTest, I32ShiftsOutOfRangeGiveZeroOrSignFill) {
  const Tensor lhs = Make<int32_t>(E::kI32, {7}, {-8, -8, -8, -8, 8, 1, 8});
  const Tensor rhs = Make<int32_t>(E::kI32, {7}, {-1, 32, 33, 1, 1, 31, kI32Min});
  ASSERT_OK_AND_ASSIGN(Tensor shl, RunBinary(&FunctionBuilder::ShiftLeft, lhs, rhs));
  ExpectTensor<int32_t>(shl, E::kI32, {7}, {0, 0, 0, -16, 16, kI32Min, 0});
  ASSERT_OK_AND_ASSIGN(Tensor shrl, RunBinary(&FunctionBuilder::ShiftRightLogical, lhs, rhs));
  ExpectTensor<int32_t>(shrl, E::kI32, {7}, {0, 0, 0, 0x7FFFFFFC, 4, 0, 0});
  ASSERT_OK_AND_ASSIGN(Tensor shra, RunBinary(&FunctionBuilder::ShiftRightArithmetic, lhs, rhs));
  ExpectTensor<int32_t>(shra, E::kI32, {7}, {-1, -1, -1, -4, 4, 0, 0});
}

TEST(ElementwiseTest, U8ShiftsOutOfRangeGiveZeroOrSignFill) {
  const Tensor lhs = Make<uint8_t>(E::kU8, {4}, {0x80, 0x80, 0x80, 0x41});
  const Tensor rhs = Make<uint8_t>(E::kU8, {4}, {8, 255, 1, 7});
  ASSERT_OK_AND_ASSIGN(Tensor shl, RunBinary(&FunctionBuilder::ShiftLeft, lhs, rhs));
  ExpectTensor<uint8_t>(shl, E::kU8, {4}, {0, 0, 0, 0x80});
  ASSERT_OK_AND_ASSIGN(Tensor shrl, RunBinary(&FunctionBuilder::ShiftRightLogical, lhs, rhs));
  ExpectTensor<uint8_t>(shrl, E::kU8, {4}, {0, 0, 0x40, 0});
  // Arithmetic shifts of unsigned types read the top bit as the sign.
  ASSERT_OK_AND_ASSIGN(Tensor shra, RunBinary(&FunctionBuilder::ShiftRightArithmetic, lhs, rhs));
  ExpectTensor<uint8_t>(shra, E::kU8, {4}, {0xFF, 0xFF, 0xC0, 0});
}

TEST(ElementwiseTest, IntegerArithmeticWraps) {
  const Tensor lhs = Make<int32_t>(E::kI32, {3}, {kI32Max, kI32Min, 65536});
  const Tensor rhs = Make<int32_t>(E::kI32, {3}, {1, 1, 65536});
  ASSERT_OK_AND_ASSIGN(Tensor add, RunBinary(&FunctionBuilder::Add, lhs, rhs));
  ExpectTensor<int32_t>(add, E::kI32, {3}, {kI32Min, kI32Min + 1, 131072});
  ASSERT_OK_AND_ASSIGN(Tensor sub, RunBinary(&FunctionBuilder::Subtract, lhs, rhs));
  ExpectTensor<int32_t>(sub, E::kI32, {3}, {kI32Max - 1, kI32Max, 0});
  ASSERT_OK_AND_ASSIGN(Tensor mul, RunBinary(&FunctionBuilder::Multiply, lhs, rhs));
  ExpectTensor<int32_t>(mul, E::kI32, {3}, {kI32Max, kI32Min, 0});
  const Tensor min = Make<int32_t>(E::kI32, {1}, {kI32Min});
  ASSERT_OK_AND_ASSIGN(Tensor neg, RunUnary(&FunctionBuilder::Negate, min));
  ExpectTensor<int32_t>(neg, E::kI32, {1}, {kI32Min});
  ASSERT_OK_AND_ASSIGN(Tensor abs, RunUnary(&FunctionBuilder::Abs, min));
  ExpectTensor<int32_t>(abs, E::kI32, {1}, {kI32Min});
}

TEST(ElementwiseTest, IntegerPowerUsesSpecRulesForNegativeExponents) {
  const Tensor base = Make<int32_t>(E::kI32, {8}, {2, 2, 1, -1, -1, 3, 0, -2});
  const Tensor exponent = Make<int32_t>(E::kI32, {8}, {10, -1, -5, -3, -4, 40, 0, 3});
  ASSERT_OK_AND_ASSIGN(Tensor power, RunBinary(&FunctionBuilder::Power, base, exponent));
  // 3^40 mod 2^32 = 689956897.
  ExpectTensor<int32_t>(power, E::kI32, {8}, {1024, 0, 1, -1, 1, 689956897, 1, -8});
}

TEST(ElementwiseTest, ConvertF32ToI32TruncatesAndSaturates) {
  const Tensor x = Make<float>(E::kF32, {8}, {kNaN, kInf, -kInf, 3e9f, -3e9f, 2.9f, -2.9f, -0.5f});
  ASSERT_OK_AND_ASSIGN(Tensor result, RunConvert(x, E::kI32));
  ExpectTensor<int32_t>(result, E::kI32, {8}, {0, kI32Max, kI32Min, kI32Max, kI32Min, 2, -2, 0});
}

TEST(ElementwiseTest, ConvertF32ToU8Saturates) {
  const Tensor x = Make<float>(E::kF32, {8}, {kNaN, -1, -0.5f, 255.9f, 256, 1e10f, kInf, 7.7f});
  ASSERT_OK_AND_ASSIGN(Tensor result, RunConvert(x, E::kU8));
  ExpectTensor<uint8_t>(result, E::kU8, {8}, {0, 0, 0, 255, 255, 255, 255, 7});
}

TEST(ElementwiseTest, ConvertF64ToI64Saturates) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  const Tensor x = Make<double>(E::kF64, {6}, {9.3e18, -9.3e18, 0x1p63, -0x1p63,
                                              std::numeric_limits<double>::quiet_NaN(), 0x1p62});
  ASSERT_OK_AND_ASSIGN(Tensor result, RunConvert(x, E::kI64));
  ExpectTensor<int64_t>(result, E::kI64, {6},
                        {kMax, kMin, kMax, kMin, 0, int64_t{4611686018427387904}});
}

TEST(ElementwiseTest, ConvertToI1IsNonZero) {
  const Tensor f = Make<float>(E::kF32, {5}, {0.0f, -0.0f, 0.5f, kNaN, -3});
  ASSERT_OK_AND_ASSIGN(Tensor from_float, RunConvert(f, E::kI1));
  ExpectTensor<uint8_t>(from_float, E::kI1, {5}, {0, 0, 1, 1, 1});
  const Tensor i = Make<int32_t>(E::kI32, {3}, {0, 2, -1});
  ASSERT_OK_AND_ASSIGN(Tensor from_int, RunConvert(i, E::kI1));
  ExpectTensor<uint8_t>(from_int, E::kI1, {3}, {0, 1, 1});
  const Tensor b = Make<uint8_t>(E::kI1, {2}, {1, 0});
  ASSERT_OK_AND_ASSIGN(Tensor to_float, RunConvert(b, E::kF32));
  ExpectTensor<float>(to_float, E::kF32, {2}, {1, 0});
}

TEST(ElementwiseTest, ConvertI64ToF32RoundsOnce) {
  // 2^60 + 2^36 + 1 lies just above the midpoint between two floats; going through double
  // would first round to the midpoint and then to the even float 2^60.
  const Tensor x = Make<int64_t>(E::kI64, {2}, {(int64_t{1} << 60) + (int64_t{1} << 36) + 1,
                                                std::numeric_limits<int64_t>::min()});
  ASSERT_OK_AND_ASSIGN(Tensor result, RunConvert(x, E::kF32));
  ExpectTensor<float>(result, E::kF32, {2}, {0x1p60f + 0x1p37f, -0x1p63f});
  const Tensor u = Make<uint64_t>(E::kU64, {1}, {~uint64_t{0}});
  ASSERT_OK_AND_ASSIGN(Tensor from_u64, RunConvert(u, E::kF32));
  ExpectTensor<float>(from_u64, E::kF32, {1}, {0x1p64f});
}

TEST(ElementwiseTest, ConvertI64ToBF16RoundsOnce) {
  // 2^60 + 2^52 + 1: just above the bf16 midpoint; the result is 2^60 + 2^53 = bits 0x5D81.
  const Tensor x = Make<int64_t>(E::kI64, {1}, {(int64_t{1} << 60) + (int64_t{1} << 52) + 1});
  ASSERT_OK_AND_ASSIGN(Tensor result, RunConvert(x, E::kBF16));
  ExpectTensor<uint16_t>(result, E::kBF16, {1}, {0x5D81});
}

TEST(ElementwiseTest, ConvertF64ToF16RoundsOnce) {
  // 1 + 2^-11 + 2^-40 is above the f16 midpoint 1 + 2^-11; via f32 it would become the midpoint
  // and round to even (1.0). Also: 65520 overflows f16 to infinity, 2^-25 is exactly half the
  // smallest subnormal (rounds to even 0), 3 * 2^-26 rounds up to it.
  const Tensor x = Make<double>(E::kF64, {4}, {1 + 0x1p-11 + 0x1p-40, 65520, 0x1p-25, 0x3p-26});
  ASSERT_OK_AND_ASSIGN(Tensor result, RunConvert(x, E::kF16));
  ExpectTensor<uint16_t>(result, E::kF16, {4}, {0x3C01, 0x7C00, 0x0000, 0x0001});
  const Tensor h = Make<uint16_t>(E::kF16, {3}, {0x0001, 0xFBFF, 0x7E00});
  ASSERT_OK_AND_ASSIGN(Tensor widened, RunConvert(h, E::kF64));
  ExpectTensor<double>(widened, E::kF64, {3},
                       {0x1p-24, -65504, std::numeric_limits<double>::quiet_NaN()});
}

TEST(ElementwiseTest, F16AddRoundsToNearestEven) {
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even is 1. (1 + 2^-10) + 2^-11 ties up to
  // 1 + 2^-9. 65504 + 16 = 65520 rounds to infinity.
  const Tensor lhs = Make<uint16_t>(E::kF16, {3}, {0x3C00, 0x3C01, 0x7BFF});
  const Tensor rhs = Make<uint16_t>(E::kF16, {3}, {0x1000, 0x1000, 0x4C00});
  ASSERT_OK_AND_ASSIGN(Tensor sum, RunBinary(&FunctionBuilder::Add, lhs, rhs));
  ExpectTensor<uint16_t>(sum, E::kF16, {3}, {0x3C00, 0x3C02, 0x7C00});
}

TEST(ElementwiseTest, BF16AddRoundsToNearestEven) {
  // bf16 has 7 fraction bits: 1 + 2^-8 ties to 1; (1 + 2^-7) + 2^-8 ties up to 1 + 2^-6.
  const Tensor lhs = Make<uint16_t>(E::kBF16, {3}, {0x3F80, 0x3F81, 0x3F80});
  const Tensor rhs = Make<uint16_t>(E::kBF16, {3}, {0x3B80, 0x3B80, 0x3F80});
  ASSERT_OK_AND_ASSIGN(Tensor sum, RunBinary(&FunctionBuilder::Add, lhs, rhs));
  ExpectTensor<uint16_t>(sum, E::kBF16, {3}, {0x3F80, 0x3F82, 0x4000});
}

TEST(ElementwiseTest, CompareWithNaNIsFalseExceptNotEqual) {
  const Tensor lhs = Make<float>(E::kF32, {4}, {kNaN, kNaN, 1, 1});
  const Tensor rhs = Make<float>(E::kF32, {4}, {1, kNaN, kNaN, 2});
  const struct {
    const char* direction;
    std::vector<uint8_t> expected;
  } cases[] = {{"EQ", {0, 0, 0, 0}}, {"NE", {1, 1, 1, 1}}, {"LT", {0, 0, 0, 1}},
               {"LE", {0, 0, 0, 1}}, {"GT", {0, 0, 0, 0}}, {"GE", {0, 0, 0, 0}}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.direction);
    ASSERT_OK_AND_ASSIGN(Tensor result, RunCompare(lhs, rhs, c.direction));
    ExpectTensor<uint8_t>(result, E::kI1, {4}, c.expected);
  }
}

TEST(ElementwiseTest, CompareTotalOrderSortsNaNsAndSignedZeros) {
  // -NaN < -Inf < -1 < -0 < +0 < 1 < Inf < +NaN.
  const float neg_nan = -kNaN;
  const Tensor lhs = Make<float>(E::kF32, {7}, {neg_nan, -kInf, -1, -0.0f, 0.0f, 1, kInf});
  const Tensor rhs = Make<float>(E::kF32, {7}, {-kInf, -1, -0.0f, 0.0f, 1, kInf, kNaN});
  ASSERT_OK_AND_ASSIGN(Tensor lt, RunCompare(lhs, rhs, "LT", "TOTALORDER"));
  ExpectTensor<uint8_t>(lt, E::kI1, {7}, {1, 1, 1, 1, 1, 1, 1});
  ASSERT_OK_AND_ASSIGN(Tensor gt, RunCompare(rhs, lhs, "GT", "TOTALORDER"));
  ExpectTensor<uint8_t>(gt, E::kI1, {7}, {1, 1, 1, 1, 1, 1, 1});
  // EQ: -0 and +0 differ in the total order but not under FLOAT; NaN equals itself.
  const Tensor a = Make<float>(E::kF32, {2}, {-0.0f, kNaN});
  const Tensor b = Make<float>(E::kF32, {2}, {0.0f, kNaN});
  ASSERT_OK_AND_ASSIGN(Tensor total_eq, RunCompare(a, b, "EQ", "TOTALORDER"));
  ExpectTensor<uint8_t>(total_eq, E::kI1, {2}, {0, 1});
  ASSERT_OK_AND_ASSIGN(Tensor float_eq, RunCompare(a, b, "EQ", "FLOAT"));
  ExpectTensor<uint8_t>(float_eq, E::kI1, {2}, {1, 0});
}

TEST(ElementwiseTest, CompareIntegersBySignedness) {
  const Tensor si = Make<int32_t>(E::kI32, {2}, {-1, 5});
  const Tensor sj = Make<int32_t>(E::kI32, {2}, {1, 5});
  ASSERT_OK_AND_ASSIGN(Tensor signed_lt, RunCompare(si, sj, "LT"));
  ExpectTensor<uint8_t>(signed_lt, E::kI1, {2}, {1, 0});
  const Tensor ui = Make<uint32_t>(E::kU32, {2}, {0xFFFFFFFFu, 5});
  const Tensor uj = Make<uint32_t>(E::kU32, {2}, {1, 5});
  ASSERT_OK_AND_ASSIGN(Tensor unsigned_lt, RunCompare(ui, uj, "LT"));
  ExpectTensor<uint8_t>(unsigned_lt, E::kI1, {2}, {0, 0});
  ASSERT_OK_AND_ASSIGN(Tensor unsigned_ge, RunCompare(ui, uj, "GE"));
  ExpectTensor<uint8_t>(unsigned_ge, E::kI1, {2}, {1, 1});
}

TEST(ElementwiseTest, SelectWithScalarPredPicksWholeOperand) {
  const Tensor on_true = Make<int32_t>(E::kI32, {3}, {1, 2, 3});
  const Tensor on_false = Make<int32_t>(E::kI32, {3}, {-1, -2, -3});
  for (uint8_t pred : {uint8_t{1}, uint8_t{0}}) {
    ASSERT_OK_AND_ASSIGN(
        Tensor result, RunOne(on_true.type(), {Make<uint8_t>(E::kI1, {}, {pred}), on_true, on_false},
                           [](FunctionBuilder& b, std::span<Value* const> p) {
                             return b.Select(p[0], p[1], p[2]);
                           }));
    if (pred != 0) {
      ExpectTensor<int32_t>(result, E::kI32, {3}, {1, 2, 3});
    } else {
      ExpectTensor<int32_t>(result, E::kI32, {3}, {-1, -2, -3});
    }
  }
}

TEST(ElementwiseTest, SelectWithElementwisePred) {
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kF32, {3}),
          {Make<uint8_t>(E::kI1, {3}, {1, 0, 1}), Make<float>(E::kF32, {3}, {1, 2, 3}),
           Make<float>(E::kF32, {3}, {-1, -2, -3})},
          [](FunctionBuilder& b, std::span<Value* const> p) { return b.Select(p[0], p[1], p[2]); }));
  ExpectTensor<float>(result, E::kF32, {3}, {1, -2, 3});
}

TEST(ElementwiseTest, ClampWithScalarBoundsPropagatesNaN) {
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kF32, {5}),
          {Make<float>(E::kF32, {}, {0}), Make<float>(E::kF32, {5}, {-1, 0.5f, 2, kNaN, -0.0f}),
           Make<float>(E::kF32, {}, {1})},
          [](FunctionBuilder& b, std::span<Value* const> p) { return b.Clamp(p[0], p[1], p[2]); }));
  // max(-0, +0) is +0.
  ExpectTensor<float>(result, E::kF32, {5}, {0, 0.5f, 1, kNaN, 0});
}

TEST(ElementwiseTest, ClampWithElementwiseBounds) {
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kI32, {3}),
          {Make<int32_t>(E::kI32, {3}, {0, 10, -5}), Make<int32_t>(E::kI32, {3}, {-3, 7, 100}),
           Make<int32_t>(E::kI32, {3}, {5, 20, 5})},
          [](FunctionBuilder& b, std::span<Value* const> p) { return b.Clamp(p[0], p[1], p[2]); }));
  ExpectTensor<int32_t>(result, E::kI32, {3}, {0, 10, 5});
}

TEST(ElementwiseTest, SignKeepsNaNAndSignedZero) {
  const Tensor x = Make<float>(E::kF32, {5}, {kNaN, -0.0f, 0.0f, -2.5f, 3});
  ASSERT_OK_AND_ASSIGN(Tensor result, RunUnary(&FunctionBuilder::Sign, x));
  ExpectTensor<float>(result, E::kF32, {5}, {kNaN, -0.0f, 0.0f, -1, 1});
  const Tensor i = Make<int8_t>(E::kI8, {3}, {-128, 0, 9});
  ASSERT_OK_AND_ASSIGN(Tensor int_sign, RunUnary(&FunctionBuilder::Sign, i));
  ExpectTensor<int8_t>(int_sign, E::kI8, {3}, {-1, 0, 1});
}

TEST(ElementwiseTest, RoundingOpsBreakTiesAsNamed) {
  const Tensor x = Make<float>(E::kF32, {7}, {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 2.4f, -0.2f});
  ASSERT_OK_AND_ASSIGN(Tensor even, RunUnary(&FunctionBuilder::RoundNearestEven, x));
  ExpectTensor<float>(even, E::kF32, {7}, {0, 2, 2, -0.0f, -2, 2, -0.0f});
  ASSERT_OK_AND_ASSIGN(Tensor afz, RunUnary(&FunctionBuilder::RoundNearestAfz, x));
  ExpectTensor<float>(afz, E::kF32, {7}, {1, 2, 3, -1, -3, 2, -0.0f});
  ASSERT_OK_AND_ASSIGN(Tensor floor, RunUnary(&FunctionBuilder::Floor, x));
  ExpectTensor<float>(floor, E::kF32, {7}, {0, 1, 2, -1, -3, 2, -1});
  ASSERT_OK_AND_ASSIGN(Tensor ceil, RunUnary(&FunctionBuilder::Ceil, x));
  ExpectTensor<float>(ceil, E::kF32, {7}, {1, 2, 3, -0.0f, -2, 3, -0.0f});
}

TEST(ElementwiseTest, FloatMathAtExactPoints) {
  const Tensor x = Make<float>(E::kF32, {3}, {0, 4, 27});
  ASSERT_OK_AND_ASSIGN(Tensor exp, RunUnary(&FunctionBuilder::Exponential, x));
  EXPECT_EQ(exp.data_as<float>()[0], 1.0f);
  EXPECT_EQ(exp.data_as<float>()[1], std::exp(4.0f));
  ASSERT_OK_AND_ASSIGN(Tensor sqrt, RunUnary(&FunctionBuilder::Sqrt, x));
  ExpectTensor<float>(sqrt, E::kF32, {3}, {0, 2, std::sqrt(27.0f)});
  ASSERT_OK_AND_ASSIGN(Tensor rsqrt, RunUnary(&FunctionBuilder::Rsqrt, x));
  ExpectTensor<float>(rsqrt, E::kF32, {3}, {kInf, 0.5f, 1 / std::sqrt(27.0f)});
  ASSERT_OK_AND_ASSIGN(Tensor cbrt, RunUnary(&FunctionBuilder::Cbrt, x));
  ExpectTensor<float>(cbrt, E::kF32, {3}, {0, std::cbrt(4.0f), 3});
  ASSERT_OK_AND_ASSIGN(Tensor logistic, RunUnary(&FunctionBuilder::Logistic, x));
  EXPECT_EQ(logistic.data_as<float>()[0], 0.5f);
  ASSERT_OK_AND_ASSIGN(Tensor log1p, RunUnary(&FunctionBuilder::LogPlusOne, x));
  EXPECT_EQ(log1p.data_as<float>()[0], 0.0f);
  const Tensor y = Make<float>(E::kF32, {4}, {1, kInf, -kInf, kNaN});
  ASSERT_OK_AND_ASSIGN(Tensor finite, RunUnary(&FunctionBuilder::IsFinite, y, E::kI1));
  ExpectTensor<uint8_t>(finite, E::kI1, {4}, {1, 0, 0, 0});
}

TEST(ElementwiseTest, F16MathComputesInF32AndRoundsOnce) {
  // exp(1) in f32 is 2.71828175; the nearest f16 is 2.71875 (0x4170).
  const Tensor x = Make<uint16_t>(E::kF16, {1}, {0x3C00});
  ASSERT_OK_AND_ASSIGN(Tensor exp, RunUnary(&FunctionBuilder::Exponential, x));
  ExpectTensor<uint16_t>(exp, E::kF16, {1}, {0x4170});
}

TEST(ElementwiseTest, BitwiseOpsOnIntegersAndBooleans) {
  const Tensor i = Make<int8_t>(E::kI8, {3}, {-1, 0, 7});
  ASSERT_OK_AND_ASSIGN(Tensor popcnt, RunUnary(&FunctionBuilder::Popcnt, i));
  ExpectTensor<int8_t>(popcnt, E::kI8, {3}, {8, 0, 3});
  // count_leading_zeros of the element's own width (spec "count_leading_zeros").
  ASSERT_OK_AND_ASSIGN(Tensor clz, RunUnary(&FunctionBuilder::CountLeadingZeros, i));
  ExpectTensor<int8_t>(clz, E::kI8, {3}, {0, 8, 5});
  const Tensor u = Make<uint64_t>(E::kU64, {3}, {0, 1, uint64_t{1} << 63});
  ASSERT_OK_AND_ASSIGN(Tensor clz64, RunUnary(&FunctionBuilder::CountLeadingZeros, u));
  ExpectTensor<uint64_t>(clz64, E::kU64, {3}, {64, 63, 0});
  ASSERT_OK_AND_ASSIGN(Tensor not_i, RunUnary(&FunctionBuilder::Not, i));
  ExpectTensor<int8_t>(not_i, E::kI8, {3}, {0, -1, -8});
  const Tensor p = Make<uint8_t>(E::kI1, {4}, {0, 0, 1, 1});
  const Tensor q = Make<uint8_t>(E::kI1, {4}, {0, 1, 0, 1});
  ASSERT_OK_AND_ASSIGN(Tensor not_p, RunUnary(&FunctionBuilder::Not, p));
  ExpectTensor<uint8_t>(not_p, E::kI1, {4}, {1, 1, 0, 0});
  ASSERT_OK_AND_ASSIGN(Tensor add, RunBinary(&FunctionBuilder::Add, p, q));  // or
  ExpectTensor<uint8_t>(add, E::kI1, {4}, {0, 1, 1, 1});
  ASSERT_OK_AND_ASSIGN(Tensor mul, RunBinary(&FunctionBuilder::Multiply, p, q));  // and
  ExpectTensor<uint8_t>(mul, E::kI1, {4}, {0, 0, 0, 1});
  ASSERT_OK_AND_ASSIGN(Tensor x, RunBinary(&FunctionBuilder::Xor, p, q));
  ExpectTensor<uint8_t>(x, E::kI1, {4}, {0, 1, 1, 0});
}

TEST(ElementwiseTest, BitcastConvertReinterpretsLittleEndianBytes) {
  const Tensor x = Make<float>(E::kF32, {2}, {1.0f, -2.0f});
  ASSERT_OK_AND_ASSIGN(Tensor same_width,
                       RunOne(Type(E::kU32, {2}), {x}, [](FunctionBuilder& b, std::span<Value* const> p) {
                         return b.BitcastConvert(p[0], Type(E::kU32, {2}));
                       }));
  ExpectTensor<uint32_t>(same_width, E::kU32, {2}, {0x3F800000u, 0xC0000000u});
  // Narrower result: a trailing dim of 2 holds the low half first.
  ASSERT_OK_AND_ASSIGN(Tensor narrower, RunOne(Type(E::kU16, {2, 2}), {x},
                                            [](FunctionBuilder& b, std::span<Value* const> p) {
                                              return b.BitcastConvert(p[0], Type(E::kU16, {2, 2}));
                                            }));
  ExpectTensor<uint16_t>(narrower, E::kU16, {2, 2}, {0x0000, 0x3F80, 0x0000, 0xC000});
  // Wider result: the operand's trailing dim of 4 bytes disappears.
  const Tensor bytes = Make<uint8_t>(E::kU8, {4}, {0x00, 0x00, 0x80, 0x3F});
  ASSERT_OK_AND_ASSIGN(Tensor wider, RunOne(Type(E::kF32, {}), {bytes},
                                         [](FunctionBuilder& b, std::span<Value* const> p) {
                                           return b.BitcastConvert(p[0], Type(E::kF32, {}));
                                         }));
  ExpectTensor<float>(wider, E::kF32, {}, {1.0f});
}

}  // namespace
}  // namespace accy::reference_test
