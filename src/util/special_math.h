// Special functions without a libm (glibc) version, in double precision: the CHLO ops erf_inv,
// lgamma, digamma, bessel_i1e, zeta and polygamma (chlo dialect, ChloOps.td) as the reference
// evaluator computes them and as f64 JIT kernels of the first four call them
// (jit/jit_compiler.cc binds these functions to the kernels' `accy_*` symbols; f32/f16/bf16
// kernels, and zeta and polygamma of every type, compute them with the vectorizable double IR
// of jit/special_functions.h instead). docs/numerics.md "CHLO" states
// the methods and the error bounds that tests/util/special_math_test.cc checks against values
// computed with mpmath at 40 digits. Pure and thread-safe: no state, no errno.
#ifndef ACCY_SRC_UTIL_SPECIAL_MATH_H_
#define ACCY_SRC_UTIL_SPECIAL_MATH_H_

namespace accy::special {

// Giles' single-precision erfinv approximation ("Approximating the erfinv function", GPU
// Computing Gems, 2011): with w = -log((1 - y)(1 + y)), erfinv(y) ~ y P(w - 2.5) for w < 5 and
// y Q(sqrt(w) - 3) above; relative error below 2e-7 for |y| <= 1 - 1e-7. Coefficients highest
// degree first (Horner). ErfInv and the JIT's vector erf_inv (jit/special_functions.h) start
// from it.
inline constexpr double kErfInvCentral[] = {2.81022636e-08,  3.43273939e-07, -3.5233877e-06,
                                            -4.39150654e-06, 0.00021858087,  -0.00125372503,
                                            -0.00417768164, 0.246640727,    1.50140941};
inline constexpr double kErfInvTail[] = {-0.000200214257, 0.000100950558, 0.00134934322,
                                         -0.00367342844,  0.00573950773,  -0.0076224613,
                                         0.00943887047,   1.00167406,     2.83297682};
// w below this uses kErfInvCentral, at or above it kErfInvTail.
inline constexpr double kErfInvTailFrom = 5.0;

// psi(x) ~ ln x - 1/(2x) - sum_{k=1..7} B_2k / (2k x^2k) (x >= 10: truncation below 1e-15): the
// B_2k / 2k, k = 1..7, lowest first, as a polynomial in 1/x^2 times 1/x^2.
inline constexpr double kDigammaAsymptotic[] = {1.0 / 12,        -1.0 / 120, 1.0 / 252,
                                                -1.0 / 240,      1.0 / 132,  -691.0 / 32760,
                                                1.0 / 12};

// Inverse error function on [-1, 1]: erf(ErfInv(y)) == y. +-inf at +-1, NaN for |y| > 1 and
// NaN, -0 for -0. Giles' approximation refined by Halley steps on erf (|y| < 0.5) or erfc.
double ErfInv(double y);

// log|Gamma(x)|: +inf at the poles 0, -1, -2, ... and at +-inf; NaN for NaN (glibc lgamma_r).
double Lgamma(double x);

// Digamma (psi) = Gamma'(x) / Gamma(x): NaN at the poles 0, -1, -2, ... (as XLA), at -inf and
// for NaN; +inf at +inf. Reflection for x < 0, recurrence to x >= 16, asymptotic series, in long
// double and rounded once: within 3 ulp, absolute (~1e-18) near psi's zeros.
double Digamma(double x);

// exp(-|x|) I1(x), I1 the modified Bessel function of the first kind of order 1: odd,
// +-0 at +-inf, NaN for NaN. Power series for |x| <= 25, asymptotic series above, in long
// double and rounded once: within 3 ulp.
double BesselI1e(double x);

// The Hurwitz zeta function zeta(x, q) = sum_{k>=0} (q + k)^-x with XLA's domain rules (its
// ChloLegalizeToStablehlo decomposition): +inf at x = 1 (any q); NaN for x < 1 or NaN; for q <= 0
// an integer (-inf too), +inf when x is an even integer, else NaN; NaN for q < 0 with x not an
// integer (+inf counts as one: NaN too, the terms' signs have no limit). Limits where XLA's
// formula gives NaN from 0 * inf: +0 at q = +inf; at x = +inf, +0 for q > 1, 1 at q = 1, +inf for
// 0 < q < 1. For q < 0 (x an integer) the true sum, negative terms included. Computed in long
// double: the terms below q + max(20, x + 30) summed directly, then Euler-Maclaurin with 15
// Bernoulli terms; for q < -64 through zeta(x, q) = zeta(x, r) + (-1)^x (zeta(x, 1 - r) -
// zeta(x, 1 - q)), r = q - floor(q) (docs/numerics.md "CHLO").
double Zeta(double x, double q);

// psi^(n)(x), the n-th derivative of digamma, for n a non-negative integer (XLA's rules): NaN for
// n < 0, a non-integer n, +-inf or NaN; Digamma(x) for n = 0; else (-1)^(n+1) n! zeta(n + 1, x) in
// long double (so finite wherever the true value is, n up to ~1750), with Zeta's domain rules:
// +inf at x = 0, -1, ... for odd n, NaN for even n.
double Polygamma(double n, double x);

}  // namespace accy::special

#endif  // ACCY_SRC_UTIL_SPECIAL_MATH_H_
