// Special functions of special_math.h; methods and error bounds in docs/numerics.md "CHLO".
#include "src/util/special_math.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>

namespace accy::special {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;  // d/dx erf(x) at 0
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Giles' single-precision approximation (special_math.h): relative error below 2e-7 for
// |y| <= 1 - 1e-7, a starting point beyond.
double ErfInvGuess(double y) {
  double w = -std::log((1.0 - y) * (1.0 + y));
  const bool central = w < kErfInvTailFrom;
  w = central ? w - 2.5 : std::sqrt(w) - 3.0;
  const auto& c = central ? kErfInvCentral : kErfInvTail;
  double p = c[0];
  for (size_t k = 1; k < std::size(c); ++k) p = c[k] + p * w;
  return p * y;
}

}  // namespace

double ErfInv(double y) {
  if (std::isnan(y)) return y;
  const double a = std::fabs(y);
  if (a > 1.0) return kNaN;
  if (a == 1.0) return std::copysign(kInf, y);
  if (a == 0.0) return y;
  double x = ErfInvGuess(a);
  // Halley's method on f(x) = erf(x) - a, f' = 2/sqrt(pi) exp(-x^2), f'' = -2x f'. Near 1,
  // f = (1 - a) - erfc(x): 1 - a is exact for a >= 0.5, so there is no cancellation. Halley
  // triples the correct digits per step, so once a correction is below 1e-6 relative one more
  // step reaches double's rounding: two steps from the guess's 2e-7, more beyond Giles' range
  // (1 - a < 1e-7, where the guess is up to 12% off).
  bool last = false;
  for (int step = 0; step < 10; ++step) {
    const double f = a < 0.5 ? std::erf(x) - a : (1.0 - a) - std::erfc(x);
    const double slope = kTwoOverSqrtPi * std::exp(-x * x);
    const double correction = f / (slope + x * f);
    x -= correction;
    if (last) break;
    last = std::fabs(correction) < 1e-6 * x;
  }
  return std::copysign(x, y);
}

double Lgamma(double x) {
  int sign = 0;
  return lgamma_r(x, &sign);
}

// Digamma and BesselI1e compute in long double (x87, 64-bit significand: 2^11 times finer than
// double) and round once: their double versions lost up to 8 (digamma) and 9 (bessel_i1e) ulp
// to the rounding of the recurrence's and the series' many steps and of log's result next to
// psi's small values, while 11 more bits leave only the final rounding (docs/numerics.md).
constexpr long double kPiLong = 3.141592653589793238462643383279502884L;

// Digamma's recurrence runs up to this z; the asymptotic series' first omitted term,
// B_16 / (16 z^16), is below 2e-21 there.
constexpr long double kDigammaAsymptoticFrom = 16.0L;

double Digamma(double x) {
  if (std::isnan(x)) return x;
  if (x == kInf) return kInf;
  if (x == -kInf) return kNaN;
  if (x <= 0.0 && x == std::floor(x)) return kNaN;
  long double reflection = 0.0L;
  long double z = x;
  if (x < 0.0) {
    // psi(x) = psi(1 - x) - pi / tan(pi x); tan has period pi, so pi x reduces to pi r with
    // r = x - round(x) in [-1/2, 1/2] (exact), which keeps the pole's neighbourhood accurate.
    const long double r = x - std::round(x);
    reflection = -kPiLong / std::tan(kPiLong * r);
    z = 1.0L - z;
  }
  // psi(z) = psi(z + 1) - 1/z up to z >= 16 (the reciprocals summed on their own, then
  // subtracted once), then psi(z) ~ ln z - 1/(2z) - sum_k B_2k / (2k z^2k), k = 1..7.
  // The reciprocals as one fraction n / d, n / d + 1 / z = (n z + d) / (d z): positive terms,
  // one division (d < 31^16 is far inside long double's range).
  long double numerator = 0.0L;
  long double denominator = 1.0L;
  while (z < kDigammaAsymptoticFrom) {
    numerator = numerator * z + denominator;
    denominator *= z;
    z += 1.0L;
  }
  const long double recurrence = numerator / denominator;
  const long double inv = 1.0L / z;
  const long double inv2 = inv * inv;
  long double series = 0.0L;
  for (size_t k = std::size(kDigammaAsymptotic); k-- > 0;) {
    series = static_cast<long double>(kDigammaAsymptotic[k]) + inv2 * series;
  }
  series *= inv2;
  const long double psi = (std::log(z) - 0.5L * inv - series) - recurrence;
  return static_cast<double>(psi + reflection);
}

// Where BesselI1e switches from the power series to the asymptotic series: the truncation
// error of the asymptotic series, about its smallest term e^(-2a), is 2e-22 relative at a = 25.
constexpr long double kBesselI1eSeriesLimit = 25.0L;

namespace {

// 1 / (k (k + 1)) and 1 / k in long double: multiplications instead of a division per term (each
// reciprocal's rounding, 2^-64 relative, is what the division cost).
const std::array<long double, 300>& BesselSeriesReciprocals() {
  static const std::array<long double, 300> table = [] {
    std::array<long double, 300> t{};
    for (size_t k = 1; k < t.size(); ++k) t[k] = 1.0L / (static_cast<long double>(k) * (k + 1));
    return t;
  }();
  return table;
}
const std::array<long double, 100>& BesselAsymptoticReciprocals() {
  static const std::array<long double, 100> table = [] {
    std::array<long double, 100> t{};
    for (size_t k = 1; k < t.size(); ++k) t[k] = 1.0L / static_cast<long double>(k);
    return t;
  }();
  return table;
}

}  // namespace

double BesselI1e(double x) {
  if (std::isnan(x)) return x;
  const long double a = std::fabs(static_cast<long double>(x));
  if (a == kInf) return std::copysign(0.0, x);
  long double value;
  if (a <= kBesselI1eSeriesLimit) {
    // I1(a) = sum_k (a/2)^(2k+1) / (k! (k+1)!): positive terms, no cancellation. Term k
    // carries q^k and k roundings of the recurrence, about k 2^-64 relative: under 3e-18 for
    // the ~50 terms that matter at a = 25.
    const long double half = 0.5L * a;
    const long double q = half * half;
    long double term = half;
    long double sum = half;
    const auto& reciprocals = BesselSeriesReciprocals();
    for (size_t k = 1; k < reciprocals.size() && term > 1e-22L * sum; ++k) {
      term *= q * reciprocals[k];
      sum += term;
    }
    value = sum * std::exp(-a);
  } else {
    // exp(-a) I1(a) ~ (2 pi a)^(-1/2) sum_k (-1)^k prod_{j<=k} (4 - (2j-1)^2) / (k! (8a)^k)
    // (DLMF 10.40.1), stopped at the smallest term (about e^(-2a) < 2e-22 here).
    long double term = 1.0L;
    long double sum = 1.0L;
    const long double inv_8a = 1.0L / (8.0L * a);
    const auto& reciprocals = BesselAsymptoticReciprocals();
    for (size_t k = 1; k < reciprocals.size(); ++k) {
      const long double odd = 2.0L * static_cast<long double>(k) - 1.0L;
      const long double next = -term * (4.0L - odd * odd) * reciprocals[k] * inv_8a;
      if (std::fabs(next) >= std::fabs(term) || std::fabs(next) < 1e-22L * std::fabs(sum)) break;
      term = next;
      sum += term;
    }
    value = sum / std::sqrt(2.0L * kPiLong * a);  // long double's range: no overflow
  }
  return std::copysign(static_cast<double>(value), x);
}

namespace {

// B_2j / (2j)!, j = 1..15 (mpmath, 40 digits): the Euler-Maclaurin coefficients of Zeta.
constexpr long double kBernoulliOverFactorial[] = {
    8.333333333333333333333333e-2L,   -1.388888888888888888888889e-3L,
    3.306878306878306878306878e-5L,   -8.267195767195767195767196e-7L,
    2.087675698786809897921009e-8L,   -5.284190138687493184847682e-10L,
    1.338253653068467883282698e-11L,  -3.389680296322582866830195e-13L,
    8.586062056277844564135905e-15L,  -2.174868698558061873041516e-16L,
    5.509002828360229515202653e-18L,  -1.395446468581252334070769e-19L,
    3.53470703962946747169323e-21L,   -8.953517427037546850402611e-23L,
    2.267952452337683060310951e-24L};

// A term below this fraction of a long double sum (64-bit mantissa) cannot change it.
constexpr long double kNegligible = 1e-22L;

// For q < 0, the negative terms (q + k)^-s, k < -floor(q), are summed one by one (paired with
// their mirrors) up to this many; beyond, Zeta goes through the reflection of the partial sum.
constexpr long double kDirectNegativeTerms = 64;

// zeta(s, q) for q > 0 finite and s > 1 (+inf included). The terms below
// max(20, s + 30) are summed directly, stopping once the rest, at most term * a / (s - 1) (the
// integral bound), is negligible; from there Euler-Maclaurin, whose terms
// B_2j/(2j)! (s)_(2j-1) a^(1-s-2j) fall by at least (s + 2j)^2 / (2 pi a)^2 <= 1/30 per j. The
// loop is short: while a < s + 30 each term is at most e^(-s/(s+30)) of the one before, so s >= 30
// converges in ~110 terms, and s < 30 stops at a = 60.
long double ZetaOfPositive(long double s, long double q) {
  const long double switch_at = std::max(20.0L, s + 30.0L);
  long double sum = 0.0L;
  long double a = q;
  while (a < switch_at) {
    const long double term = std::pow(a, -s);
    sum += term;
    if (term <= sum * kNegligible && term * a / (s - 1.0L) <= sum * kNegligible) return sum;
    a += 1.0L;
  }
  // zeta(s, a) = a^(1-s)/(s-1) + a^-s/2 + sum_j B_2j/(2j)! (s)_(2j-1) a^(1-s-2j) + remainder.
  const long double power = std::pow(a, -s);
  long double tail = 0.0L;
  long double factor = power * s / a;  // (s)_1 a^(-s-1)
  for (size_t i = 0; i < std::size(kBernoulliOverFactorial); ++i) {
    tail += kBernoulliOverFactorial[i] * factor;
    factor *= (s + 2.0L * i + 1.0L) * (s + 2.0L * i + 2.0L) / (a * a);
  }
  return sum + (power * (a / (s - 1.0L) + 0.5L) + tail);
}

// Zeta with its domain rules (special_math.h), in long double.
long double ZetaInLongDouble(long double x, long double q) {
  if (x == 1.0L) return kInf;
  if (std::isnan(x) || std::isnan(q) || x < 1.0L) return kNaN;
  const bool x_integer = x == std::floor(x);  // +inf counts, as XLA's floor(x) == x
  const bool x_even = x_integer && std::fmod(x, 2.0L) == 0.0L;  // fmod(inf, 2) is NaN
  if (q <= 0.0L && q == std::floor(q)) return x_even ? kInf : kNaN;  // poles 0, -1, ..., -inf
  if (q < 0.0L && (!x_integer || x == kInf)) return kNaN;
  if (q == kInf) return 0.0L;
  if (q > 0.0L) return ZetaOfPositive(x, q);
  // q < 0, not an integer; x an integer >= 2: m = -floor(q) negative terms. Each (q + m - 1 -
  // i)^-x = (-1)^x (1 - r + i)^-x, r = q + m, is paired with its mirror (r + i)^-x = (q + m +
  // i)^-x, so the two cancel exactly at r = 1/2 for odd x (the bases are q plus integers: exact
  // in long double). Where both overflow (x in the thousands) the nearer base's term dominates.
  const long double m = -std::floor(q);
  auto pair = [&](long double up_base, long double down_base) -> long double {
    const long double up = std::pow(up_base, -x), down = std::pow(down_base, -x);
    if (!std::isinf(up) || !std::isinf(down)) return up + down;
    if (up_base < -down_base) return kInf;
    if (up_base > -down_base) return x_even ? kInf : -kInf;
    return x_even ? kInf : 0.0L;
  };
  if (m <= kDirectNegativeTerms) {
    long double pairs = 0.0L;  // smallest first
    for (long double i = m - 1.0L; i >= 0.0L; --i) pairs += pair(q + (m + i), q + (m - 1.0L - i));
    return pairs + ZetaOfPositive(x, q + 2.0L * m);
  }
  // sum_{k<m} (q + k)^-x = (-1)^x sum_{j=1..m} (j - r)^-x = (-1)^x (zeta(x, 1-r) - zeta(x, 1-q)),
  // r = q + m exact (|q| > 64); zeta(x, r) and zeta(x, 1 - r) first, which cancel exactly at
  // r = 1/2 for odd x.
  const long double r = q + m;
  const long double sign = x_even ? 1.0L : -1.0L;
  const long double near = ZetaOfPositive(x, r), mirror = ZetaOfPositive(x, 1.0L - r);
  long double both = near + sign * mirror;
  if (std::isinf(near) && std::isinf(mirror)) {
    both = r < 0.5L ? kInf : r > 0.5L ? sign * kInf : (x_even ? kInf : 0.0L);
  }
  return both - sign * ZetaOfPositive(x, 1.0L - q);
}

}  // namespace

double Zeta(double x, double q) { return static_cast<double>(ZetaInLongDouble(x, q)); }

double Polygamma(double n, double x) {
  if (std::isnan(n) || n < 0.0 || n != std::floor(n) || n == kInf) return kNaN;
  if (n == 0.0) return Digamma(x);
  // (-1)^(n+1) n! zeta(n + 1, x): n! and zeta in long double, whose range holds both factors of
  // every finite double result up to n ~ 1750.
  const long double order = static_cast<long double>(n) + 1.0L;
  const long double sign = std::fmod(n, 2.0) == 0.0 ? -1.0L : 1.0L;
  return static_cast<double>(sign * std::tgamma(order) * ZetaInLongDouble(order, x));
}

}  // namespace accy::special
