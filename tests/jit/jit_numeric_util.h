// Test inputs and comparisons for the JIT numeric tests: deterministic tensors of any element
// type mixing special values (NaN, +-inf, +-0, subnormals, INT_MIN/-1, out-of-range shift
// amounts) with random ones, and the exact/ULP comparison with the first bad index reported.
// Header-only, for tests/jit only; pure functions.
#ifndef ACCY_TESTS_JIT_JIT_NUMERIC_UTIL_H_
#define ACCY_TESTS_JIT_JIT_NUMERIC_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "accy/tensor.h"
#include "gtest/gtest.h"

namespace accy::jit::testing {

// A tensor of `type` with special values first, then random ones (seeded: reproducible).
inline Tensor MakeInput(const TensorType& type, uint64_t seed) {
  Tensor t = Tensor::Allocate(type).value();
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 1);
  const ElementType e = type.element_type();
  const int64_t n = type.element_count();
  if (IsFloat(e)) {
    const double inf = std::numeric_limits<double>::infinity();
    const double specials[] = {std::nan(""), inf, -inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5,
                               1e-40, -3e-39, 1e-310, 65504.0, 3.0e38, -7.0};
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t pick = static_cast<uint64_t>(i) % 16;
      double v;
      if (i < 256 && (seed % 3 != 2)) {
        // Even and odd seeds walk the specials at different rates, so a binary op sees every
        // pair of special values (NaN with 0, -0 with +0, inf with -inf, ...).
        v = specials[(seed % 2 == 0 ? i : i / 16) % 16];
      } else if (pick < 8) {
        v = 4.0 * unit(rng);
      } else if (pick < 12) {
        v = 100.0 * unit(rng);
      } else {
        v = std::ldexp(unit(rng), static_cast<int>(rng() % 61) - 30);
      }
      t.SetFromDouble(i, v);
    }
    return t;
  }
  const int bits = ElementBitWidth(e);
  const int64_t width = ElementByteWidth(e);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t v;
    if (e == ElementType::kI1) {
      v = rng() & 1;
    } else if (i < 36 && seed % 3 != 2) {
      const uint64_t min = uint64_t{1} << (bits - 1);
      const uint64_t specials[] = {0, 1, ~uint64_t{0}, min, min - 1, static_cast<uint64_t>(bits)};
      v = specials[(seed % 2 == 0 ? i : i / 6) % 6];
    } else if (rng() % 2 == 0) {
      v = static_cast<uint64_t>(static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * bits + 5)) -
                                (bits + 2));
    } else {
      v = rng();
    }
    std::memcpy(static_cast<uint8_t*>(t.data()) + i * width, &v, static_cast<size_t>(width));
  }
  return t;
}

// Exact comparison (max_ulps == 0) or within max_ulps; the message names the first bad index.
inline ::testing::AssertionResult Matches(const Tensor& actual, const Tensor& expected,
                                          int64_t max_ulps, double* max_seen = nullptr) {
  TensorComparison c =
      max_ulps == 0 ? CompareExact(actual, expected) : CompareUlp(actual, expected, max_ulps);
  if (max_seen != nullptr && c.max_distance > *max_seen) *max_seen = c.max_distance;
  if (c.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << c.message << " (first bad index " << c.first_bad_index
                                       << ", bound " << max_ulps << " ulp)";
}

// Matches within `ulp` (reporting the largest distance in `max_ulps`), or, when `f32_abs` > 0
// and the tensors are f32, every element within `ulp` or within `f32_abs` absolute error (for
// results where a final add may cancel: row_pipeline_test.cc's layer norm).
inline ::testing::AssertionResult MatchesUlpOrAbs(const Tensor& actual, const Tensor& expected,
                                                  int64_t ulp, double f32_abs,
                                                  double* max_ulps = nullptr) {
  ::testing::AssertionResult plain = Matches(actual, expected, ulp, max_ulps);
  if (plain || f32_abs == 0 || expected.type().element_type() != ElementType::kF32 ||
      actual.type() != expected.type()) {
    return plain;
  }
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    const double a = actual.GetAsDouble(i);
    const double e = expected.GetAsDouble(i);
    if (UlpDistance(ElementType::kF32, a, e) > ulp && !(std::fabs(a - e) <= f32_abs)) {
      return ::testing::AssertionFailure()
             << "element " << i << ": actual " << a << ", expected " << e << ": "
             << UlpDistance(ElementType::kF32, a, e) << " ulp and " << std::fabs(a - e)
             << " absolute, bounds " << ulp << " ulp or " << f32_abs;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace accy::jit::testing

#endif  // ACCY_TESTS_JIT_JIT_NUMERIC_UTIL_H_
