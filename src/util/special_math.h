// Special functions without a libm (glibc) version, in double precision: the CHLO ops erf_inv,
// lgamma, digamma and bessel_i1e (chlo dialect, ChloOps.td) as the reference evaluator computes
// them and as JIT kernels call them (jit/jit_compiler.cc binds these functions to the kernels'
// `accy_*` symbols; f32/f16/bf16 round the double result once). docs/numerics.md "CHLO" states
// the methods and the error bounds that tests/util/special_math_test.cc checks against values
// computed with mpmath at 40 digits. Pure and thread-safe: no state, no errno.
#ifndef ACCY_SRC_UTIL_SPECIAL_MATH_H_
#define ACCY_SRC_UTIL_SPECIAL_MATH_H_

namespace accy::special {

// Inverse error function on [-1, 1]: erf(ErfInv(y)) == y. +-inf at +-1, NaN for |y| > 1 and
// NaN, -0 for -0. Giles' approximation refined by Halley steps on erf (|y| < 0.5) or erfc.
double ErfInv(double y);

// log|Gamma(x)|: +inf at the poles 0, -1, -2, ... and at +-inf; NaN for NaN (glibc lgamma_r).
double Lgamma(double x);

// Digamma (psi) = Gamma'(x) / Gamma(x): NaN at the poles 0, -1, -2, ... (as XLA), at -inf and
// for NaN; +inf at +inf. Reflection for x < 0, recurrence to x >= 10, asymptotic series.
double Digamma(double x);

// exp(-|x|) I1(x), I1 the modified Bessel function of the first kind of order 1: odd,
// +-0 at +-inf, NaN for NaN. Power series for |x| <= 20, asymptotic series above.
double BesselI1e(double x);

}  // namespace accy::special

#endif  // ACCY_SRC_UTIL_SPECIAL_MATH_H_
