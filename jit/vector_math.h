// Internal to jit/: inline f32 approximations of exp, tanh and logistic as plain LLVM IR
// (fma, compares, selects, integer bit arithmetic), emitted on a float or a <N x float> value.
// Replaces libm/libmvec calls on the hot paths (fused elementwise chains, softmax's exp): the
// loop vectorizer widens the IR like any arithmetic, and the scalar remainder runs the same
// operations (explicit llvm.fma, no contraction), so vector and scalar lanes agree bit for bit.
// Accuracy against glibc's expf/tanhf (the reference evaluator), measured over every f32 input:
// exp <= 1 ulp, tanh <= 2 ulp, logistic (1 / (1 + exp(-x)) as the reference) <= 4 ulp; special
// values (NaN, +-inf, -0, overflow, gradual underflow) as glibc. Declares no LLVM headers.
// Not thread-safe (emits through one builder).
#ifndef ACCY_JIT_VECTOR_MATH_H_
#define ACCY_JIT_VECTOR_MATH_H_

namespace llvm {
class IRBuilderBase;
class Value;
}  // namespace llvm

namespace accy::jit {

// e^x of a float (or float vector) `x`. Cody-Waite reduction x = n ln2 + r (|r| <= ln2/2),
// e^r = 1 + r P(r) with P a degree-5 minimax polynomial evaluated by Horner's scheme (six
// fmas: exp-heavy loops such as softmax's are bound by the FMA pipes' throughput; Estrin's
// shorter chains measured slower, docs/isa.md "Horner's scheme"), and 2^n applied by EmitExpScale
// (target_lowering.h), so a subnormal or overflowing result is rounded once. NaN gives a quiet NaN;
// x < -105 gives +0 and x > 89 gives +inf (as expf: the true results are below half the least
// subnormal / above FLT_MAX).
llvm::Value* EmitExpF32(llvm::IRBuilderBase& builder, llvm::Value* x);

// e^x of a float (or float vector) `x` that the caller knows is <= 0 or NaN (softmax's
// x - max(x)): the same bits as EmitExpF32 on that range (NaN: a quiet NaN), with fewer
// operations: no upper clamp, and with `scale_primitive` false (no vscalefps: AVX2 and below)
// 2^n applied as one shift and two multiplies instead of EmitExpScale's portable sequence.
// A positive `x` gives a wrong result.
llvm::Value* EmitExpNonPositiveF32(llvm::IRBuilderBase& builder, llvm::Value* x,
                                   bool scale_primitive);

// Lower end of EmitExpNormalRangeF32's range: e^x >= 2^-125 there, so e^x is a normal float.
inline constexpr double kExpNormalRangeLow = -86.5;

// e^x of a float (or float vector) `x` that the caller knows is in [kExpNormalRangeLow, 0]
// (softmax's x - max(x) on a row whose smallest x is within 86.5 of its max): the same bits as
// EmitExpF32 there, with 2^n (n >= -125) added to the exponent field of e^r by one integer add
// (exact: the result is normal), and no clamp or select. The integer add may issue on any
// vector ALU pipe, where EmitExpNonPositiveF32's two multiplies take the FMA pipes that exp's
// polynomial is bound by below AVX-512 (docs/isa.md, "Exponents by integer add"). Outside the
// range (NaN, -inf, x < -86.5, x > 0) the result is wrong.
llvm::Value* EmitExpNormalRangeF32(llvm::IRBuilderBase& builder, llvm::Value* x);

// tanh(x) of a float (or float vector): t / (t + 2) with t = e^{2|x|} - 1 (2|x| clamped to
// 20), the sign copied from x (so tanh(-0) = -0, tanh(NaN) NaN, tanh(+-inf) = +-1, tiny x
// gives x).
llvm::Value* EmitTanhF32(llvm::IRBuilderBase& builder, llvm::Value* x);

// 1 / (1 + e^-x) of a float (or float vector), the reference evaluator's formula with
// EmitExpF32 for the exponential.
llvm::Value* EmitLogisticF32(llvm::IRBuilderBase& builder, llvm::Value* x);

}  // namespace accy::jit

#endif  // ACCY_JIT_VECTOR_MATH_H_
