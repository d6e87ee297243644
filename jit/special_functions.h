// Internal to jit/: the CHLO special functions without a libm version (erf_inv, lgamma,
// digamma, bessel_i1e, zeta, polygamma; chlo dialect, ChloOps.td) for f32 results (zeta and
// polygamma for f64 results too), as branch-free double IR that the loop vectorizer widens like
// any arithmetic. The libm functions they need (log, exp,
// erf, sin, tan) are called through `LibmCall`, which the caller binds to pure declarations
// the vectorizer maps onto glibc's libmvec (jit_compiler.cc). Every branch of a function is
// computed for every lane and the right one selected, so the vector body and the scalar tail
// give the same bits.
//
// Also erfc's guard against libmvec's scalar fallback (EmitErfcAvoidingScalarLibm), in the
// element's own precision.
//
// The ...ForF32 functions take and return a double value (scalar or vector), rounded to f32
// once (f16/bf16 round that f32 again, as every other op): the double computation is good to
// about 1e-14 relative, far below f32's half ulp, except near the zeros of lgamma and digamma,
// where its error is absolute (~1e-14). The f64 ops of erf_inv, digamma and bessel_i1e keep the
// scalar functions of src/util/special_math.h (within 3 ulp of double); f64 lgamma is SLEEF's
// (sleef_functions.h). Methods and the bounds
// `make ulp-check` verifies over all 2^32 f32 inputs: docs/numerics.md "CHLO". Special values
// are those of special_math.h. Declares no LLVM headers; not thread-safe (emits through one
// builder).
#ifndef ACCY_JIT_SPECIAL_FUNCTIONS_H_
#define ACCY_JIT_SPECIAL_FUNCTIONS_H_

#include <functional>

namespace llvm {
class IRBuilderBase;
class Value;
}  // namespace llvm

namespace accy::jit {

// Emits a call of the pure libm function `name` ("log", "exp", "erf", "sin", "tan"; "erfc") on
// a value: double for the ...ForF32 functions, the element's own type for erfc.
using LibmCall = std::function<llvm::Value*(const char* name, llvm::Value* x)>;
// The same for a two-argument libm function ("pow"), on doubles.
using LibmBinaryCall = std::function<llvm::Value*(const char* name, llvm::Value* a, llvm::Value* b)>;

// erf^-1(y): Giles' approximation (special_math.h) and one Halley step on erf(x) - |y| in
// double. +-inf at +-1, NaN outside [-1, 1] and for NaN, y itself for +-0.
llvm::Value* EmitErfInvForF32(llvm::IRBuilderBase& builder, const LibmCall& libm, llvm::Value* y);

// log|Gamma(x)|: reflection for x < 0, the recurrence to x + 10 below 10, Stirling's series.
// +inf at 0, -1, -2, ... and at +-inf; exactly 0 at 1 and 2; NaN for NaN.
llvm::Value* EmitLgammaForF32(llvm::IRBuilderBase& builder, const LibmCall& libm, llvm::Value* x);

// psi(x) = Gamma'(x) / Gamma(x): reflection for x < 0, the recurrence to x + 10 below 10 (its
// ten reciprocals summed as one fraction), the asymptotic series. NaN at 0, -1, -2, ..., at
// -inf and for NaN; +inf at +inf.
llvm::Value* EmitDigammaForF32(llvm::IRBuilderBase& builder, const LibmCall& libm, llvm::Value* x);

// erf(x) of an f32 `x`: libm's erf (libmvec's erff, vectorized), except for |x| > 3.6
// (kErfTailFromF32), where 1 - erfc(|x|) from erfc's asymptotic series, with x's sign: libmvec's
// erff returns +-1 from |x| = 3.6533 on, 4 ulp from the true value up to 3.6912 (2^32-input
// check, docs/ulp_check.md); the series is good to 3e-10 absolute there. NaN for NaN.
constexpr double kErfTailFromF32 = 3.6;
llvm::Value* EmitErfF32(llvm::IRBuilderBase& builder, const LibmCall& libm, llvm::Value* x);

// erfc(x) of an f32 or f64 `x` (`libm` calls "erfc" in x's own precision), with the lanes at or
// beyond glibc's own zero point (10.0505 in f32, 27.226 in f64, where the reference's scalar
// erfcf / erfc return +0) given +0 and erfc(0) called for them instead: libmvec's erfc hands
// every such lane to scalar libm (f32: 34 ns per element instead of 1.3 on Zen 4).
llvm::Value* EmitErfcAvoidingScalarLibm(llvm::IRBuilderBase& builder, const LibmCall& libm,
                                        llvm::Value* x);

// exp(-|x|) I1(x): 24 terms of I1's power series for |x| <= 15, 12 terms of the asymptotic
// series (DLMF 10.40.1) above. Odd; +-0 at +-inf, NaN for NaN.
llvm::Value* EmitBesselI1eForF32(llvm::IRBuilderBase& builder, const LibmCall& libm,
                                 llvm::Value* x);

// zeta(x, q), the Hurwitz zeta function, on double x and q (f32 operands widened; rounded to
// f32 by the caller): 16 direct terms pow(q + k, -x) and Euler-Maclaurin with 12 Bernoulli terms
// at q + 16; for q < 0 (x an integer) the terms around 0 in mirrored pairs (r + i, r - 1 - i),
// r = q - floor(q), and those below r - 8 as (-1)^x (zeta(x, 9 - r) - zeta(x, 1 - q)); q >= 2
// scaled by a power of two where q^-x would underflow. special::Zeta's special values, selected
// per lane. `exact_bases` (f64 results): each base q + k is split into its rounded value and the
// rounding error (TwoSum), and pow's result corrected for the error to second order, so a base
// that rounds does not cost x times its rounding error. Method: docs/numerics.md "CHLO".
llvm::Value* EmitZeta(llvm::IRBuilderBase& builder, const LibmBinaryCall& libm, llvm::Value* x,
                      llvm::Value* q, bool exact_bases);

// psi^(n)(x) on double n and x: `digamma` (psi(x), computed by the caller) for n = 0, else
// (-1)^(n+1) n! zeta(n + 1, x) with n! from a table of 0! .. 1754! as correctly rounded
// mantissas and binary exponents (the exponent joins zeta's scaling, so n! beyond double's range
// gives the finite results there are; +inf beyond 1754!, as the reference's long double, so
// n > 1754 gives +-inf, or NaN where zeta is 0). NaN for n < 0, a non-integer n, +-inf or NaN.
// docs/numerics.md, "zeta and polygamma".
llvm::Value* EmitPolygamma(llvm::IRBuilderBase& builder, const LibmBinaryCall& libm,
                           llvm::Value* n, llvm::Value* x, llvm::Value* digamma, bool exact_bases);

}  // namespace accy::jit

#endif  // ACCY_JIT_SPECIAL_FUNCTIONS_H_
