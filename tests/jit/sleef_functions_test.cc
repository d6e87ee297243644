// The f64 kernels the JIT takes from SLEEF (jit/sleef_functions.h: tan and lgamma) on special
// values and ordinary points: special values bit for bit as the reference evaluator (glibc), the
// others within 3 ulp of glibc's long double function (a few long double ulps from the truth,
// so rounded it is within ~0.5 double ulp), and every input's result the same bits wherever it
// sits, in the vector body or the scalar tail (SLEEF's FMA scalar and vector variants are one
// algorithm). Not run near lgamma's zeros, where its bound is absolute (`make ulp-check`).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// |got - want| in ulps of double at `want`.
double Ulps(double got, double want) {
  const int exponent = want == 0 ? -1022 : std::max(std::ilogb(want), -1022);
  return std::fabs(got - want) / std::ldexp(1.0, exponent - 52);
}

struct Case {
  OpKind kind;
  double (*reference)(double);           // the reference evaluator's function (glibc)
  long double (*accurate)(long double);  // glibc's long double function
  std::vector<double> specials;          // NaN, infinite or zero results: bit for bit
  std::vector<double> ordinary;          // within 3 ulp of `accurate`
};

double Lgamma(double x) {
  int sign = 0;
  return lgamma_r(x, &sign);
}
long double LgammaLong(long double x) {
  int sign = 0;
  return lgammal_r(x, &sign);
}

std::vector<Case> Cases() {
  return {
      {OpKind::kTan, [](double x) { return std::tan(x); },
       [](long double x) { return std::tan(x); },
       // SLEEF's tan alone gives 0 for +-4.9e-324 (the kernel passes |x| < 2^-27 through).
       {kNaN, kInf, -kInf, 0.0, -0.0, 4.9e-324, -4.9e-324},
       // The largest libmvec tan error of the last run sat at 2^689 (3.29 ulp).
       {0.5, -1.0, 1.5707963267948966, 3.0, 100.0, -1e10, 1e22, 0x1.087c2cbd1db9ap+689,
        1.7976931348623157e308}},
      {OpKind::kLgamma, Lgamma, LgammaLong,
       {kNaN, kInf, -kInf, 0.0, -0.0, -1.0, -2.0, -100.0, 1.0, 2.0, -0x1p52, 0x1p1020},
       // glibc's lgamma_r measured 4.0 ulp at -4.06 (-3.955, 3.97 ulp, is next to a zero).
       // SLEEF's own lgamma gave +inf at 1.46e305 (true 1.7957e308; the kernel takes
       // x (log x - 1) above 1e305).
       {0.5, 1.5, 3.0, 10.5, 100.0, 1e5, 1e300, 1e-300, -0.5, -1.5, -4.0625, -100.5,
        -1e10 - 0.5, 0x1.74e4928cad6e6p+1014, 2e305, 2.5e305}},
  };
}

// Each input repeated at many positions of a 61-element tensor (a prime length: vector bodies of
// 8 or 16 lanes, interleaved, then a scalar tail).
TEST(SleefF64Test, SpecialValuesExactAndOrdinaryWithinThreeUlpInVectorBodyAndTail) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(std::string(OpName(c.kind)));
    std::vector<double> values = c.specials;
    values.insert(values.end(), c.ordinary.begin(), c.ordinary.end());
    std::vector<double> inputs(61);
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = values[i % values.size()];
    const std::vector<double> got = RunUnaryOp(c.kind, inputs);
    std::map<uint64_t, uint64_t> first_result;  // input bits -> result bits
    for (size_t i = 0; i < inputs.size(); ++i) {
      const double x = inputs[i];
      auto [at, fresh] = first_result.emplace(Bits(x), Bits(got[i]));
      EXPECT_TRUE(fresh || at->second == Bits(got[i]) || (std::isnan(got[i])))
          << "x = " << x << " at " << i << ": not the bits of its other positions";
      const bool special = i % values.size() < c.specials.size();
      if (special) {
        const double want = c.reference(x);
        EXPECT_TRUE(Bits(got[i]) == Bits(want) || (std::isnan(want) && std::isnan(got[i])))
            << "x = " << x << ": got " << got[i] << ", want " << want;
      } else {
        const double want = static_cast<double>(c.accurate(x));
        EXPECT_LE(Ulps(got[i], want), 3.0) << "x = " << x << ": got " << got[i] << ", want "
                                           << want;
      }
    }
  }
}

}  // namespace
}  // namespace accy::jit::testing
