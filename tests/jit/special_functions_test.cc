// The f32 kernels of erf_inv, lgamma, digamma and bessel_i1e (jit/special_functions.h: double
// IR the loop vectorizer widens) against the double functions of src/util/special_math.h
// (the reference evaluator's), on special values (bit for bit, in the vector body and the
// scalar tail) and on sweeps of every f32 exponent and of each function's hard ranges. The bound
// is docs/numerics.md's for these kernels: within 1 f32 ulp of the double value, plus, for lgamma
// and digamma, 1e-13 absolute (their zeros). All 2^32 inputs: `make ulp-check`.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "src/util/special_math.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

struct Function {
  OpKind kind;
  double (*reference)(double);
  double absolute;  // accepted |error| near the function's zeros, besides the ulp bound
};

const Function kFunctions[] = {
    {OpKind::kErfInv, special::ErfInv, 0},
    {OpKind::kLgamma, special::Lgamma, 1e-13},
    {OpKind::kDigamma, special::Digamma, 1e-13},
    {OpKind::kBesselI1e, special::BesselI1e, 0},
};

// |got - want| in ulps of f32 at `want` (subnormal spacing below the normals); 0 when both are
// the same infinity or both NaN, infinite when only one is.
double UlpError(float got, double want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(want) || std::fabs(want) > std::numeric_limits<float>::max()) {
    return std::isinf(got) && std::signbit(got) == std::signbit(want) ? 0 : INFINITY;
  }
  if (std::isinf(got)) return INFINITY;
  const int exponent = want == 0 ? -126 : std::max(std::ilogb(want), -126);
  return std::fabs(static_cast<double>(got) - want) / std::ldexp(1.0, exponent - 23);
}

float FromBits(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// Special values repeated to 47 elements (two 16-lane vectors and a 15-element tail): NaN,
// infinities, signed zeros and subnormals, erf_inv's +-1 and out-of-domain inputs, the poles and
// the exact zeros of lgamma, huge arguments. The kernel must give the reference's result bit for
// bit wherever that result is NaN, infinite, zero or subnormal, and within 1 ulp elsewhere.
TEST(SpecialFunctionsF32Test, SpecialValuesMatchTheReferenceInVectorBodyAndTail) {
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            inf, -inf, 0.0f, -0.0f, 1e-45f, -1e-45f, 1e-38f, -3e-39f, 1.0f, -1.0f,
                            1.0000001f, -1.5f, 2.0f, -2.0f, -3.0f, 0.99999994f, -0.99999994f,
                            0.5f, 1e-20f, 3e38f, -3e38f, -8388607.0f, 8388608.5f, 15.0f, 15.000001f,
                            -14.999999f, 100.0f, 4.5f};
  std::vector<float> inputs(47);
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = specials[i % std::size(specials)];
  for (const Function& function : kFunctions) {
    SCOPED_TRACE(std::string(OpName(function.kind)));
    const std::vector<float> got = RunUnaryOp(function.kind, inputs);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const double want = function.reference(inputs[i]);
      const float rounded = static_cast<float>(want);
      const bool special = std::isnan(want) || std::isinf(rounded) || rounded == 0.0f ||
                           std::fabs(rounded) < std::numeric_limits<float>::min();
      if (special) {
        EXPECT_TRUE(Bits(got[i]) == Bits(rounded) || (std::isnan(got[i]) && std::isnan(want)))
            << "x = " << inputs[i] << ": got " << got[i] << ", want " << rounded;
      } else {
        EXPECT_LE(UlpError(got[i], want), 1.0) << "x = " << inputs[i] << ": got " << got[i]
                                               << ", want " << want;
      }
    }
  }
}

// Every 4,096th f32 bit pattern (both signs, every exponent, NaNs and infinities) and dense
// sweeps of the ranges where each function is hardest: erf_inv's last 2^16 values below +-1,
// lgamma and digamma over [-12, 12] and next to their zeros (poles, zeros and the recurrence's
// switch at 10), every f32 in [13, 17] for bessel_i1e (its switch at 15).
TEST(SpecialFunctionsF32Test, WithinOneUlpOfTheDoubleFunctionOnSweeps) {
  std::vector<float> sweep;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4096) {
    sweep.push_back(FromBits(static_cast<uint32_t>(bits)));
  }
  for (const Function& function : kFunctions) {
    SCOPED_TRACE(std::string(OpName(function.kind)));
    std::vector<float> inputs = sweep;
    switch (function.kind) {
      case OpKind::kErfInv:
        for (uint32_t k = 1; k <= (1u << 16); ++k) {
          inputs.push_back(FromBits(Bits(1.0f) - k));
          inputs.push_back(-FromBits(Bits(1.0f) - k));
        }
        break;
      case OpKind::kBesselI1e:
        for (float x = 13.0f; x < 17.0f; x = std::nextafter(x, 20.0f)) inputs.push_back(x);
        break;
      default:  // lgamma, digamma: [-12, 12] in steps of 2^-12, 4,096 f32 on each side of
                // lgamma's zeros 1 and 2 and of digamma's root 1.46163...
        for (int k = -12 * 4096; k <= 12 * 4096; ++k) inputs.push_back(std::ldexp(float(k), -12));
        for (float center : {1.0f, 2.0f, 1.4616321f}) {
          for (int k = -4096; k <= 4096; ++k) inputs.push_back(FromBits(Bits(center) + k));
        }
        break;
    }
    const std::vector<float> got = RunUnaryOp(function.kind, inputs);
    double max_ulp = 0;
    float worst_x = 0;
    int64_t beyond = 0, by_absolute = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const double want = function.reference(inputs[i]);
      const double ulp = UlpError(got[i], want);
      if (ulp > max_ulp) {
        max_ulp = ulp;
        worst_x = inputs[i];
      }
      if (ulp <= 1.0) continue;
      if (function.absolute > 0 && std::isfinite(want) &&
          std::fabs(static_cast<double>(got[i]) - want) <=
              function.absolute + std::ldexp(1.0, std::max(std::ilogb(want), -126) - 24)) {
        ++by_absolute;  // the rounding's half ulp plus the absolute allowance
        continue;
      }
      if (++beyond <= 5) {
        ADD_FAILURE() << "x = " << inputs[i] << " (0x" << std::hex << Bits(inputs[i]) << std::dec
                      << "): got " << got[i] << ", want " << want << " (" << ulp << " ulp)";
      }
    }
    EXPECT_EQ(beyond, 0);
    std::cout << OpName(function.kind) << " f32 over " << inputs.size() << " inputs: max "
              << max_ulp << " ulp at x = " << worst_x << "; " << by_absolute
              << " beyond 1 ulp within the absolute allowance\n";
  }
}

// f32 erf (jit/special_functions.h EmitErfF32): every f32 in [3, 4.5] of both signs (libmvec's
// erff alone returns +-1 from 3.6533 on, 4 ulp off up to 3.6912) within 3 ulp of the double erf
// (the suite's expect_close), and within 1 ulp where the asymptotic tail takes over (|x| > 3.6);
// NaN, +-inf and -0 exactly.
TEST(SpecialFunctionsF32Test, ErfKeepsTheSuitesBoundPastLibmvecsCutoff) {
  std::vector<float> inputs;
  for (float x = 3.0f; x <= 4.5f; x = std::nextafter(x, 5.0f)) {
    inputs.push_back(x);
    inputs.push_back(-x);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float special : {std::numeric_limits<float>::quiet_NaN(), inf, -inf, -0.0f, 1e30f}) {
    inputs.push_back(special);
  }
  const std::vector<float> got = RunUnaryOp(OpKind::kErf, inputs);
  double max_ulp = 0, max_tail_ulp = 0;
  for (size_t i = 0; i + 5 < inputs.size(); ++i) {
    const double ulp = UlpError(got[i], std::erf(static_cast<double>(inputs[i])));
    max_ulp = std::max(max_ulp, ulp);
    if (std::fabs(inputs[i]) > 3.6f) max_tail_ulp = std::max(max_tail_ulp, ulp);
  }
  EXPECT_LE(max_ulp, 3.0);
  EXPECT_LE(max_tail_ulp, 1.0);
  const size_t n = inputs.size();
  EXPECT_TRUE(std::isnan(got[n - 5]));
  EXPECT_EQ(got[n - 4], 1.0f);
  EXPECT_EQ(got[n - 3], -1.0f);
  EXPECT_EQ(Bits(got[n - 2]), Bits(-0.0f));
  EXPECT_EQ(got[n - 1], 1.0f);
}

}  // namespace
}  // namespace accy::jit::testing
