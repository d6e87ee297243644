// The CHLO elementwise ops, tan, reduce_precision and next_after in the reference evaluator,
// and the double special functions behind erf_inv, lgamma, digamma and bessel_i1e
// (src/util/special_math.h) against values computed with mpmath at 40 significant digits.
// Bounds as docs/numerics.md "CHLO" states them.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/util/special_math.h"
#include "tests/reference/reference_test_util.h"
#include "tests/test_util.h"

namespace accy::reference_test {
namespace {

using ::testing::HasSubstr;

constexpr double kInfD = std::numeric_limits<double>::infinity();
constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr float kNaNF = std::numeric_limits<float>::quiet_NaN();

// Distance in units in the last place of `expected` (doubles of one sign).
double Ulps(double got, double expected) {
  return std::fabs(got - expected) /
         (std::ldexp(1.0, std::ilogb(expected) - 52));
}

struct Point {
  double x;
  double expected;  // mpmath, correctly rounded to double
};

TEST(SpecialMathTest, ErfInvWithinTwoUlpsOfMpmath) {
  const Point points[] = {{1e-300, 8.86226925452758e-301},
                          {1e-10, 8.862269254527581e-11},
                          {0.001, 0.0008862271574665521},
                          {0.3, 0.2724627147267543},
                          {0.4999, 0.4768250236254278},
                          {0.5, 0.4769362762044699},
                          {0.7, 0.7328690779592167},
                          {0.9, 1.1630871536766743},
                          {0.99, 1.8213863677184494},
                          {0.999999, 3.458910737275499},
                          {0.999999999999, 5.042031898572696},
                          {0.9999999999999998, 5.805018683193453},
                          {-0.6, -0.5951160814499948}};
  for (const Point& p : points) {
    EXPECT_LE(Ulps(special::ErfInv(p.x), p.expected), 2) << "erf_inv(" << p.x << ")";
  }
  EXPECT_EQ(special::ErfInv(1.0), kInfD);
  EXPECT_EQ(special::ErfInv(-1.0), -kInfD);
  EXPECT_TRUE(std::isnan(special::ErfInv(1.5)));
  EXPECT_TRUE(std::isnan(special::ErfInv(std::nan(""))));
  EXPECT_TRUE(std::signbit(special::ErfInv(-0.0)));
}

TEST(SpecialMathTest, DigammaWithinBoundsOfMpmath) {
  // 3 ulps away from its zeros (long double arithmetic, one rounding: docs/numerics.md); near
  // the positive root x0 = 1.46163... and the negative ones the error is absolute (~1e-18).
  // -0.8833... and -5.2e12 were 8.2 and 48 ulp off when the function computed in double.
  const Point points[] = {{1e-10, -10000000000.577215},
                          {0.1, -10.423754940411076},
                          {1, -0.5772156649015329},
                          {2, 0.42278433509846713},
                          {9.99, 2.250700372831201},
                          {10, 2.251752589066721},
                          {100, 4.600161852738087},
                          {1e10, 23.025850929890456},
                          {-1.0001, 10000.422519840771},
                          {-2.5, 1.103156640645243},
                          {-100.3, 6.895643124860435},
                          {-1e-5, 99999.42276788563},
                          {-0.8833437514139852, -7.840268269476652},
                          {-5231508704134.967, -0.7226130139486898},
                          {1.3333333333333333, -0.1320337800208064}};
  for (const Point& p : points) {
    EXPECT_LE(Ulps(special::Digamma(p.x), p.expected), 3) << "digamma(" << p.x << ")";
  }
  EXPECT_NEAR(special::Digamma(1.5), 0.03648997397857652, 1e-17);
  EXPECT_NEAR(special::Digamma(-0.5), 0.03648997397857652, 1e-17);
  EXPECT_NEAR(special::Digamma(1.4616321449683622), -9.241265521729427e-17, 1e-17);
  EXPECT_NEAR(special::Digamma(-1.5735074346772464), -8.909164860500998e-05, 1e-17);
  for (double pole : {0.0, -0.0, -1.0, -7.0, -kInfD}) {
    EXPECT_TRUE(std::isnan(special::Digamma(pole))) << pole;
  }
  EXPECT_EQ(special::Digamma(kInfD), kInfD);
}

TEST(SpecialMathTest, BesselI1eWithinThreeUlpsOfMpmath) {
  // -22.809 and -16.816 were 12.8 and 8.1 ulp off when the series summed in double; 24.96 and
  // 25 sit on either side of the switch to the asymptotic series.
  const Point points[] = {{1e-10, 4.9999999995e-11},
                          {0.1, 0.045298446808809324},
                          {1, 0.20791041534970844},
                          {5, 0.16397226694454237},
                          {15, 0.10037417504516666},
                          {29.99, 0.07192800939108444},
                          {30, 0.07191633059864755},
                          {30.01, 0.07190465748682356},
                          {50, 0.0559931238928954},
                          {100, 0.03974415302513025},
                          {1e5, 0.0012615615301218171},
                          {-3, -0.19682671329730086},
                          {-22.809098760583396, -0.08213967105777345},
                          {-16.816360172105377, -0.09507256313256074},
                          {24.96, 0.07863707945555357},
                          {25, 0.07857611331929278}};
  for (const Point& p : points) {
    EXPECT_LE(Ulps(std::fabs(special::BesselI1e(p.x)), std::fabs(p.expected)), 3)
        << "bessel_i1e(" << p.x << ")";
    EXPECT_EQ(std::signbit(special::BesselI1e(p.x)), std::signbit(p.expected)) << p.x;
  }
  // sqrt(2 pi x) would overflow double here (a helper found 0 for |x| > 2.9e307).
  EXPECT_LE(Ulps(special::BesselI1e(2.9e307), 7.408172167226829e-155), 3);
  EXPECT_LE(Ulps(-special::BesselI1e(-1.7e308), 3.0597476163882935e-155), 3);
  EXPECT_EQ(special::BesselI1e(kInfD), 0.0);
  EXPECT_TRUE(std::signbit(special::BesselI1e(-kInfD)));
  EXPECT_TRUE(std::signbit(special::BesselI1e(-0.0)));
}

TEST(SpecialMathTest, LgammaWithinTwoUlpsOfMpmathAndInfiniteAtPoles) {
  const Point points[] = {{0.5, 0.5723649429247001},   {1.5, -0.12078223763524522},
                          {3, 0.6931471805599453},     {10, 12.801827480081469},
                          {100, 359.1342053695754},    {-0.5, 1.2655121234846454},
                          {-2.5, -0.056243716497674054}};
  for (const Point& p : points) {
    EXPECT_LE(Ulps(std::fabs(special::Lgamma(p.x)), std::fabs(p.expected)), 2)
        << "lgamma(" << p.x << ")";
  }
  for (double pole : {0.0, -1.0, -3.0, kInfD, -kInfD}) EXPECT_EQ(special::Lgamma(pole), kInfD);
}

// The evaluator computes f32 in float (libm's float overloads) and rounds the special functions'
// double results once.
TEST(ChloEvaluatorTest, F32OpsMatchTheirDefinitions) {
  const Tensor x = Make<float>(E::kF32, {3}, {0.25f, -0.5f, 0.75f});
  struct Case {
    StatusOr<Value*> (FunctionBuilder::*method)(Value*);
    float (*expected)(float);
  };
  const Case cases[] = {
      {&FunctionBuilder::Tan, [](float v) { return std::tan(v); }},
      {&FunctionBuilder::Asin, [](float v) { return std::asin(v); }},
      {&FunctionBuilder::Acos, [](float v) { return std::acos(v); }},
      {&FunctionBuilder::Atan, [](float v) { return std::atan(v); }},
      {&FunctionBuilder::Sinh, [](float v) { return std::sinh(v); }},
      {&FunctionBuilder::Cosh, [](float v) { return std::cosh(v); }},
      {&FunctionBuilder::Asinh, [](float v) { return std::asinh(v); }},
      {&FunctionBuilder::Atanh, [](float v) { return std::atanh(v); }},
      {&FunctionBuilder::Erf, [](float v) { return std::erf(v); }},
      {&FunctionBuilder::Erfc, [](float v) { return std::erfc(v); }},
      {&FunctionBuilder::ErfInv, [](float v) { return static_cast<float>(special::ErfInv(v)); }},
      {&FunctionBuilder::Lgamma, [](float v) { return static_cast<float>(special::Lgamma(v)); }},
      {&FunctionBuilder::Digamma,
       [](float v) { return static_cast<float>(special::Digamma(v)); }},
      {&FunctionBuilder::BesselI1e,
       [](float v) { return static_cast<float>(special::BesselI1e(v)); }},
  };
  for (const Case& c : cases) {
    ASSERT_OK_AND_ASSIGN(Tensor got, RunOne(x.type(), {x}, [&](FunctionBuilder& b,
                                                                std::span<Value* const> p) {
      return (b.*c.method)(p[0]);
    }));
    std::vector<float> want;
    for (float v : {0.25f, -0.5f, 0.75f}) want.push_back(c.expected(v));
    ExpectTensor<float>(got, E::kF32, {3}, want);
  }
  // acosh is defined from 1.
  const Tensor y = Make<float>(E::kF32, {2}, {1.0f, 2.0f});
  ASSERT_OK_AND_ASSIGN(Tensor acosh, RunOne(y.type(), {y}, [](FunctionBuilder& b,
                                                               std::span<Value* const> p) {
    return b.Acosh(p[0]);
  }));
  ExpectTensor<float>(acosh, E::kF32, {2}, {0.0f, std::acosh(2.0f)});
}

// f32 sinh/cosh: CHLO's decomposition in range, the double function near overflow, where
// rounding x + log 1/2 made 3.4028196e38 (finite) into inf.
TEST(ChloEvaluatorTest, F32SinhCoshStayFiniteNextToOverflow) {
  const Tensor x = Make<float>(E::kF32, {2}, {89.41598510742188f, -89.41598510742188f});
  ASSERT_OK_AND_ASSIGN(Tensor sinh, RunOne(x.type(), {x}, [](FunctionBuilder& b,
                                                              std::span<Value* const> p) {
    return b.Sinh(p[0]);
  }));
  ASSERT_OK_AND_ASSIGN(Tensor cosh, RunOne(x.type(), {x}, [](FunctionBuilder& b,
                                                              std::span<Value* const> p) {
    return b.Cosh(p[0]);
  }));
  const float big = static_cast<float>(std::sinh(89.41598510742188));
  ASSERT_TRUE(std::isfinite(big));
  ExpectTensor<float>(sinh, E::kF32, {2}, {big, -big});
  ExpectTensor<float>(cosh, E::kF32, {2}, {big, big});
  // In range: the decomposition, as the suite's expected values (cosh(9.164727) = 4777.0596,
  // 4 ulp above the correctly rounded 4777.0576).
  const Tensor y = Make<float>(E::kF32, {1}, {9.164727210998535f});
  ASSERT_OK_AND_ASSIGN(Tensor in_range, RunOne(y.type(), {y}, [](FunctionBuilder& b,
                                                                  std::span<Value* const> p) {
    return b.Cosh(p[0]);
  }));
  ExpectTensor<float>(in_range, E::kF32, {1},
                      {std::exp(9.164727210998535f + std::log(0.5f)) +
                       std::exp(-9.164727210998535f + std::log(0.5f))});
}

TEST(ChloEvaluatorTest, InfinityTestsGiveI1) {
  const Tensor x = Make<float>(E::kF32, {5}, {kInfF, -kInfF, kNaNF, 0.0f, 3.0f});
  const std::pair<StatusOr<Value*> (FunctionBuilder::*)(Value*), std::vector<uint8_t>> cases[] = {
      {&FunctionBuilder::IsInf, {1, 1, 0, 0, 0}},
      {&FunctionBuilder::IsPosInf, {1, 0, 0, 0, 0}},
      {&FunctionBuilder::IsNegInf, {0, 1, 0, 0, 0}}};
  for (const auto& [method, expected] : cases) {
    ASSERT_OK_AND_ASSIGN(Tensor got,
                         RunOne(x.type().WithElementType(E::kI1), {x},
                                [&](FunctionBuilder& b, std::span<Value* const> p) {
                                  return (b.*method)(p[0]);
                                }));
    ExpectTensor<uint8_t>(got, E::kI1, {5}, expected);
  }
}

StatusOr<Tensor> RunReducePrecision(const Tensor& x, int64_t exponent_bits,
                                    int64_t mantissa_bits) {
  return RunOne(x.type(), {x}, [&](FunctionBuilder& b, std::span<Value* const> p) {
    return b.ReducePrecision(p[0], exponent_bits, mantissa_bits);
  });
}

// The StableHLO interpreter's cases (tests/interpret/reduce_precision.mlir) and rounding ties.
TEST(ChloEvaluatorTest, ReducePrecisionRoundsFlushesAndOverflowsAsTheInterpreter) {
  const double nan = std::bit_cast<double>(uint64_t{0x7FFFFFFFFFFFFFFF});
  const double tiny = std::bit_cast<double>(uint64_t{1});
  const Tensor x = Make<double>(E::kF64, {6}, {kInfD, nan, tiny, 0.0, 65505.0, 65520.0});
  ASSERT_OK_AND_ASSIGN(Tensor half, RunReducePrecision(x, 5, 10));
  ExpectTensor<double>(half, E::kF64, {6}, {kInfD, nan, 0.0, 0.0, 65504.0, kInfD});
  // With no mantissa bits every NaN, negative ones too, becomes +inf (interpreter, XLA).
  const double negative_nan = std::bit_cast<double>(uint64_t{0xFFF8000000000000});
  ASSERT_OK_AND_ASSIGN(Tensor no_mantissa,
                       RunReducePrecision(Make<double>(E::kF64, {2}, {nan, negative_nan}), 5, 0));
  ExpectTensor<double>(no_mantissa, E::kF64, {2}, {kInfD, kInfD});
  // Ties to even at 10 mantissa bits; -0 keeps its sign; below 2^-14 flushes to signed zero.
  const float ulp = std::ldexp(1.0f, -10);
  const Tensor y = Make<float>(E::kF32, {5}, {1 + ulp / 2, 1 + 3 * ulp / 2, -0.0f, -1e-5f, 1e-4f});
  ASSERT_OK_AND_ASSIGN(Tensor rounded, RunReducePrecision(y, 5, 10));
  ExpectTensor<float>(rounded, E::kF32, {5},
                      {1.0f, 1 + 2 * ulp, -0.0f, -0.0f, static_cast<float>(1.0001659393310547e-4)});
  // On bf16's own bits: 8 exponent bits and 7 mantissa bits are the identity; 2 mantissa bits
  // round 1.375 (1.011b) to 1.5 (tie to even).
  Tensor b = *Tensor::Allocate(Type(E::kBF16, {2}));
  b.SetFromDouble(0, 1.375);
  b.SetFromDouble(1, 3.0e38);
  ASSERT_OK_AND_ASSIGN(Tensor same, RunReducePrecision(b, 8, 7));
  EXPECT_EQ(std::memcmp(same.data(), b.data(), 4), 0);
  ASSERT_OK_AND_ASSIGN(Tensor narrow, RunReducePrecision(b, 5, 2));
  EXPECT_EQ(narrow.GetAsDouble(0), 1.5);
  EXPECT_EQ(narrow.GetAsDouble(1), kInfD);
}

TEST(ChloEvaluatorTest, NextAfterStepsTheEncoding) {
  const float min_sub = std::numeric_limits<float>::denorm_min();
  const Tensor from = Make<float>(E::kF32, {7}, {1.0f, 1.0f, 0.0f, -0.0f, 2.0f, kNaNF, -1.0f});
  const Tensor to = Make<float>(E::kF32, {7}, {2.0f, 0.0f, -1.0f, 0.0f, kNaNF, 1.0f, -2.0f});
  ASSERT_OK_AND_ASSIGN(Tensor got, RunOne(from.type(), {from, to}, [](FunctionBuilder& b,
                                                                       std::span<Value* const> p) {
    return b.NextAfter(p[0], p[1]);
  }));
  ExpectTensor<float>(got, E::kF32, {7},
                      {std::nextafter(1.0f, 2.0f), std::nextafter(1.0f, 0.0f), -min_sub, 0.0f,
                       kNaNF, kNaNF, std::nextafter(-1.0f, -2.0f)});
  // bf16 steps its own 7-bit mantissa: 1 -> 1 + 2^-7.
  Tensor a = *Tensor::Allocate(Type(E::kBF16, {1}));
  Tensor c = *Tensor::Allocate(Type(E::kBF16, {1}));
  a.SetFromDouble(0, 1.0);
  c.SetFromDouble(0, 2.0);
  ASSERT_OK_AND_ASSIGN(Tensor step, RunOne(a.type(), {a, c}, [](FunctionBuilder& b,
                                                                 std::span<Value* const> p) {
    return b.NextAfter(p[0], p[1]);
  }));
  EXPECT_EQ(step.GetAsDouble(0), 1.0 + std::ldexp(1.0, -7));
}

// chlo.mulhi: bits [N, 2N) of the exact product; a signed product for signed types (so a
// negative product's high half is -1 when it fits in N bits), unsigned for unsigned ones; the
// widest types checked against 128-bit products worked by hand.
TEST(ChloEvaluatorTest, MulhiIsTheHighHalfOfTheDoubleWidthProduct) {
  auto mulhi = [](const Tensor& a, const Tensor& b) {
    return RunOne(a.type(), {a, b}, [](FunctionBuilder& f, std::span<Value* const> p) {
      return f.Mulhi(p[0], p[1]);
    });
  };
  // i8: 100 * 3 = 300 = 0x012C -> 1; -100 * 3 = -300 = 0xFED4 -> -2; -128 * -128 = 16384 ->
  // 64; 5 * 7 = 35 -> 0; -1 * 1 = -1 -> -1 (0xFFFF).
  ASSERT_OK_AND_ASSIGN(Tensor i8, mulhi(Make<int8_t>(E::kI8, {5}, {100, -100, -128, 5, -1}),
                                        Make<int8_t>(E::kI8, {5}, {3, 3, -128, 7, 1})));
  ExpectTensor<int8_t>(i8, E::kI8, {5}, {1, -2, 64, 0, -1});
  // u8: 200 * 200 = 40000 = 0x9C40 -> 156; 255 * 255 = 65025 = 0xFE01 -> 254.
  ASSERT_OK_AND_ASSIGN(Tensor u8, mulhi(Make<uint8_t>(E::kU8, {2}, {200, 255}),
                                        Make<uint8_t>(E::kU8, {2}, {200, 255})));
  ExpectTensor<uint8_t>(u8, E::kU8, {2}, {156, 254});
  // i32: 2^30 * 12 = 3 * 2^32 -> 3; -2^30 * 12 -> -3; INT_MIN * INT_MIN = 2^62 -> 2^30.
  ASSERT_OK_AND_ASSIGN(
      Tensor i32, mulhi(Make<int32_t>(E::kI32, {3}, {1 << 30, -(1 << 30), INT32_MIN}),
                        Make<int32_t>(E::kI32, {3}, {12, 12, INT32_MIN})));
  ExpectTensor<int32_t>(i32, E::kI32, {3}, {3, -3, 1 << 30});
  // u64: (2^64 - 1)^2 = 2^128 - 2^65 + 1 -> 2^64 - 2; 2^63 * 6 = 3 * 2^64 -> 3.
  ASSERT_OK_AND_ASSIGN(Tensor u64,
                       mulhi(Make<uint64_t>(E::kU64, {2}, {UINT64_MAX, uint64_t{1} << 63}),
                             Make<uint64_t>(E::kU64, {2}, {UINT64_MAX, 6})));
  ExpectTensor<uint64_t>(u64, E::kU64, {2}, {UINT64_MAX - 1, 3});
  // i64: INT64_MIN * -1 = 2^63 -> 0 (high half of 0x0000..0001 << 63 is 0); INT64_MIN * 4 =
  // -2^65 -> -2; -1 * -1 = 1 -> 0.
  ASSERT_OK_AND_ASSIGN(Tensor i64,
                       mulhi(Make<int64_t>(E::kI64, {3}, {INT64_MIN, INT64_MIN, -1}),
                             Make<int64_t>(E::kI64, {3}, {-1, 4, -1})));
  ExpectTensor<int64_t>(i64, E::kI64, {3}, {0, -2, 0});
}

TEST(ChloBuilderTest, RejectsNonFloatOperandsAndBadFormats) {
  Builder builder("chlo_errors");
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f,
                       builder.BeginFunction("main", {Type(E::kI32, {2}), Type(E::kF32, {2})},
                                             {Type(E::kF32, {2})}));
  const Status erf = f.Erf(f.Parameter(0)).status();
  EXPECT_EQ(erf.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(erf.message(), HasSubstr("chlo.erf"));
  EXPECT_THAT(erf.message(), HasSubstr("floating-point"));
  const Status int_rp = f.ReducePrecision(f.Parameter(0), 5, 10).status();
  EXPECT_THAT(int_rp.message(), HasSubstr("reduce_precision"));
  const Status zero_exponent = f.ReducePrecision(f.Parameter(1), 0, 10).status();
  EXPECT_EQ(zero_exponent.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(zero_exponent.message(), HasSubstr("exponent_bits is 0, expected 1 to 64"));
  const Status negative_mantissa = f.ReducePrecision(f.Parameter(1), 5, -1).status();
  EXPECT_THAT(negative_mantissa.message(), HasSubstr("mantissa_bits is -1, expected 0 to 64"));
  const Status next_after = f.NextAfter(f.Parameter(0), f.Parameter(0)).status();
  EXPECT_THAT(next_after.message(), HasSubstr("chlo.next_after"));
}

TEST(ChloNamesTest, QualifiedNamesRoundTrip) {
  EXPECT_EQ(QualifiedOpName(OpKind::kErf), "chlo.erf");
  EXPECT_EQ(QualifiedOpName(OpKind::kAdd), "stablehlo.add");
  EXPECT_EQ(QualifiedOpName(OpKind::kTan), "stablehlo.tan");
  for (OpKind kind : kAllOpKinds) {
    ASSERT_OK_AND_ASSIGN(OpKind parsed, ParseQualifiedOpKind(QualifiedOpName(kind)));
    EXPECT_EQ(parsed, kind);
  }
  ASSERT_OK_AND_ASSIGN(OpKind tan, ParseQualifiedOpKind("chlo.tan"));
  EXPECT_EQ(tan, OpKind::kTan);
  for (const char* name : {"stablehlo.chlo.erf", "chlo.add", "erf", "add", "stablehlo.erf"}) {
    const Status status = ParseQualifiedOpKind(name).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_EQ(status.message(), std::string("unknown op '") + name + "'");
  }
}

}  // namespace
}  // namespace accy::reference_test
