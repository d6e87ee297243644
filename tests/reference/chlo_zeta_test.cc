// chlo.zeta and chlo.polygamma in the reference evaluator, and the long double functions behind
// them (special::Zeta, special::Polygamma, src/util/special_math.h) against values computed with
// mpmath at 40 digits (q < 0: mpmath's sum of the negative terms plus zeta(x, r)). Domain rules
// as XLA's ChloLegalizeToStablehlo decomposition; docs/numerics.md "CHLO".
#include <cmath>
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

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Distance in units in the last place of `expected`.
double Ulps(double got, double expected) {
  return std::fabs(got - expected) / std::ldexp(1.0, std::ilogb(expected) - 52);
}

struct Case {
  double a, b;      // zeta: (x, q); polygamma: (n, x)
  double expected;  // mpmath, rounded to double
};

TEST(SpecialMathZetaTest, WithinOneUlpOfMpmath) {
  const Case cases[] = {
      {2, 1, 1.6449340668482264},    // pi^2 / 6
      {3, 1, 1.2020569031595943},    // Apery's constant
      {2, 0.5, 4.9348022005446793},  // pi^2 / 2
      {1.5, 0.3, 8.2377616714597234},
      {1.0000001, 1, 10000000.571377},  // next to the pole at x = 1
      {4, 2.5, 0.037317641469542009},
      {50, 0.9, 194.03252174826306},
      {2, 1e10, 1.00000000005e-10},
      {100, 100.3, 1.1820115852475941e-200},
      {2, 1e-20, 1.0000000000000001e+40},
      {30, 1, 1.0000000009313274},
      {1.25, 1000, 0.71140069650981266},
      // q < 0 with x an integer: the negative terms summed (up to 64 of them) or reflected.
      {2, -1.5, 9.3792466449891238},
      {3, -1.5, 0.1181020258208637},
      {7, -0.5, 0.060358227504199009},
      {2, -20.5, 9.8219943446498795},
      {5, -70.125, -32766.583021111376},
      {3, -100.25, -62.012504103458854},
      {4, -1000.7, 128.17015238865458},
  };
  for (const Case& c : cases) {
    EXPECT_LE(Ulps(special::Zeta(c.a, c.b), c.expected), 1) << "zeta(" << c.a << ", " << c.b << ")";
  }
}

// XLA's rules, in its order: x = 1 is +inf whatever q; x < 1 or NaN is NaN; q <= 0 an integer
// is a pole (+inf for even x, NaN otherwise); q < 0 needs an integer x. And the limits where
// XLA's formula gives NaN: q = +inf and x = +inf.
TEST(SpecialMathZetaTest, DomainRulesAndLimits) {
  EXPECT_EQ(special::Zeta(1, 2), kInf);
  EXPECT_EQ(special::Zeta(1, -3), kInf);
  EXPECT_EQ(special::Zeta(1, kNaN), kInf);
  for (double x : {0.999, 0.0, -2.0, -kInf, kNaN}) {
    EXPECT_TRUE(std::isnan(special::Zeta(x, 2))) << x;
  }
  EXPECT_TRUE(std::isnan(special::Zeta(2, kNaN)));
  for (double q : {0.0, -0.0, -1.0, -4.0, -kInf}) {
    EXPECT_EQ(special::Zeta(2, q), kInf) << q;
    EXPECT_EQ(special::Zeta(4, q), kInf) << q;
    EXPECT_TRUE(std::isnan(special::Zeta(3, q))) << q;
    EXPECT_TRUE(std::isnan(special::Zeta(2.5, q))) << q;
    EXPECT_TRUE(std::isnan(special::Zeta(kInf, q))) << q;
  }
  EXPECT_TRUE(std::isnan(special::Zeta(2.5, -1.5)));  // q < 0 needs an integer x
  EXPECT_TRUE(std::isnan(special::Zeta(kInf, -1.5)));
  EXPECT_EQ(special::Zeta(2, kInf), 0.0);
  EXPECT_EQ(special::Zeta(kInf, kInf), 0.0);
  EXPECT_EQ(special::Zeta(kInf, 2), 0.0);
  EXPECT_EQ(special::Zeta(kInf, 1), 1.0);
  EXPECT_EQ(special::Zeta(kInf, 0.5), kInf);
  EXPECT_EQ(special::Zeta(2000, 0.5), kInf);  // 2^2000 overflows
  EXPECT_EQ(special::Zeta(2000, 1.5), std::pow(1.5, -2000.0) + std::pow(2.5, -2000.0));
}

TEST(SpecialMathPolygammaTest, KnownValuesAndDigammaAtZero) {
  const Case cases[] = {
      {1, 1, 1.6449340668482264},    // zeta(2)
      {2, 1, -2.4041138063191886},   // -2 zeta(3)
      {1, 0.5, 4.9348022005446793},  // pi^2 / 2
      {3, 2.5, 0.22390584881725205},    {1, -2.5, 9.5392466449891238},
      {2, -2.5, -0.1082040516417274},   {3, -0.25, 1555.7633125348506},
      {4, 10, -0.00072993116823528663}, {1, 100, 0.010050166663333571},
      {5, -7.5, 15382.226378735898},    {10, 3, -21.436606628712991},
  };
  for (const Case& c : cases) {
    EXPECT_LE(Ulps(special::Polygamma(c.a, c.b), c.expected), 2)
        << "polygamma(" << c.a << ", " << c.b << ")";
  }
  for (double x : {-2.5, 0.1, 1.0, 1.4616321449683622, 7.0, 1e6}) {
    EXPECT_EQ(special::Polygamma(0, x), special::Digamma(x)) << x;
  }
  // psi^(200)(1000) = -200! zeta(201, 1000): both factors out of double's range.
  EXPECT_LE(Ulps(special::Polygamma(200, 1000), -4.3508192705971018e-228), 2);
}

TEST(SpecialMathPolygammaTest, NonNaturalOrderAndPoles) {
  for (double n : {-1.0, 0.5, -0.5, 2.25, kInf, -kInf, kNaN}) {
    EXPECT_TRUE(std::isnan(special::Polygamma(n, 2.0))) << n;
  }
  for (double x : {0.0, -1.0, -6.0}) {
    EXPECT_EQ(special::Polygamma(1, x), kInf) << x;  // zeta(2, pole) = +inf
    EXPECT_EQ(special::Polygamma(3, x), kInf) << x;
    EXPECT_TRUE(std::isnan(special::Polygamma(2, x))) << x;
    EXPECT_TRUE(std::isnan(special::Polygamma(0, x))) << x;  // digamma's poles
  }
  EXPECT_TRUE(std::isnan(special::Polygamma(1, kNaN)));
  EXPECT_EQ(special::Polygamma(1, kInf), 0.0);
  EXPECT_TRUE(std::signbit(special::Polygamma(2, kInf)));  // -2 zeta(3, inf) = -0
}

// Through the evaluator: f64 as the double functions; f32 rounds their double results once;
// f16 and bf16 compute in f32 and round again.
TEST(ChloZetaEvaluatorTest, EveryFloatTypeRoundsTheDoubleFunction) {
  const std::vector<double> x = {2, 3, 2, 1.5, 0.5, 1, 4, 2};
  const std::vector<double> q = {1, 1, 0.5, 0.3, 2, 7, -2, -1.5};
  for (E type : {E::kF64, E::kF32, E::kF16, E::kBF16}) {
    SCOPED_TRACE(std::string(ElementTypeName(type)));
    Tensor a = *Tensor::Allocate(Type(type, {8}));
    Tensor b = *Tensor::Allocate(Type(type, {8}));
    for (int64_t i = 0; i < 8; ++i) {
      a.SetFromDouble(i, x[static_cast<size_t>(i)]);
      b.SetFromDouble(i, q[static_cast<size_t>(i)]);
    }
    ASSERT_OK_AND_ASSIGN(
        Tensor zeta, RunOne(a.type(), {a, b}, [](FunctionBuilder& f, std::span<Value* const> p) {
          return f.Zeta(p[0], p[1]);
        }));
    ASSERT_OK_AND_ASSIGN(
        Tensor polygamma,
        RunOne(a.type(), {a, b}, [](FunctionBuilder& f, std::span<Value* const> p) {
          return f.Polygamma(p[0], p[1]);
        }));
    for (int64_t i = 0; i < 8; ++i) {
      const double u = a.GetAsDouble(i), v = b.GetAsDouble(i);
      Tensor want = *Tensor::Allocate(Type(type, {2}));
      const double z = special::Zeta(u, v), p = special::Polygamma(u, v);
      want.SetFromDouble(0, type == E::kF64 ? z : static_cast<float>(z));
      want.SetFromDouble(1, type == E::kF64 ? p : static_cast<float>(p));
      const double got_z = zeta.GetAsDouble(i), got_p = polygamma.GetAsDouble(i);
      EXPECT_TRUE(got_z == want.GetAsDouble(0) || (std::isnan(got_z) && std::isnan(z)))
          << "zeta(" << u << ", " << v << ") = " << got_z << ", want " << want.GetAsDouble(0);
      EXPECT_TRUE(got_p == want.GetAsDouble(1) || (std::isnan(got_p) && std::isnan(p)))
          << "polygamma(" << u << ", " << v << ") = " << got_p << ", want " << want.GetAsDouble(1);
    }
  }
}

TEST(ChloZetaBuilderTest, ErrorsNameTheOp) {
  Builder builder("zeta_errors");
  ASSERT_OK_AND_ASSIGN(
      FunctionBuilder f,
      builder.BeginFunction(
          "main", {Type(E::kI32, {2}), Type(E::kF32, {2}), Type(E::kF64, {2}), Type(E::kF32, {3})},
          {Type(E::kF32, {2})}));
  struct Method {
    StatusOr<Value*> (FunctionBuilder::*call)(Value*, Value*);
    const char* name;
  };
  for (const Method& m : {Method{&FunctionBuilder::Zeta, "chlo.zeta"},
                          Method{&FunctionBuilder::Polygamma, "chlo.polygamma"}}) {
    SCOPED_TRACE(m.name);
    const Status integer = (f.*m.call)(f.Parameter(0), f.Parameter(0)).status();
    EXPECT_EQ(integer.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(integer.message(), HasSubstr(m.name));
    EXPECT_THAT(integer.message(), HasSubstr("floating-point"));
    const Status mixed = (f.*m.call)(f.Parameter(1), f.Parameter(2)).status();
    EXPECT_EQ(mixed.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(mixed.message(),
                HasSubstr(std::string(m.name) + ": operand 1 has type tensor<2xf64>"));
    const Status shapes = (f.*m.call)(f.Parameter(1), f.Parameter(3)).status();
    EXPECT_EQ(shapes.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(shapes.message(), HasSubstr("operands must have the same type"));
    const Status null = (f.*m.call)(f.Parameter(1), nullptr).status();
    EXPECT_EQ(null.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(null.message(), HasSubstr(std::string(m.name) + ": operand 1 is null"));
  }
}

}  // namespace
}  // namespace accy::reference_test
