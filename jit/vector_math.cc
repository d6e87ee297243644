// Inline f32 exp/tanh/logistic (vector_math.h).
//
// Every step is an IEEE operation the vectorizer widens one for one; llvm.fma (not fmuladd) so
// the rounding is fixed whatever the target or the loop (vector body and scalar tail agree).
// exp's polynomial is minimax (0.03 ulp before its coefficients were rounded to f32), tanh's
// the Taylor coefficients 1/k! rounded to f32 (0.25 ulp for e^r - 1 on |r| <= ln2/2). The ulp
// figures in vector_math.h were measured by running the same sequence in C (fmaf) against
// glibc over all 2^32 f32 inputs: tools/ulp_check/exp_f32.c for exp (max 1 ulp; 14.4 M
// inputs, 0.3%, differ from glibc by more than half an ulp).
#include "jit/vector_math.h"

#include "jit/ir_arithmetic.h"
#include "jit/target_lowering.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"

namespace accy::jit {
namespace {

llvm::Constant* Float(llvm::Type* type, double value) { return FloatConstant(type, value); }

// (e^r - 1 - r) / r^2 = 1/2 + r/6 + ...: 1/k! for k = 2..7, as f32 values.
constexpr double kExpm1Q[] = {0.5,           0x1.555556p-3,  0x1.555556p-5,
                              0x1.111112p-7, 0x1.6c16c2p-10, 0x1.a01a02p-13};
// 2|x| is clamped here: tanh(10) is 1 in f32 (1 - tanh(9.01) is below half an ulp of 1).
constexpr double kTanhClamp = 20.0;

// (e^r - 1) / r ~ c0 + c1 r + ... + c5 r^5 on |r| <= ln2/2: minimax for the relative error of
// e^r = 1 + r P(r) (Lawson-weighted least squares on 4,000 Chebyshev nodes, then rounded to
// f32; error 2.0e-9 = 0.03 ulp before rounding the coefficients).
constexpr double kExpMinimax[] = {1.0,           0x1.fffffcp-2, 0x1.55541ap-3,
                                  0x1.555822p-5, 0x1.126792p-7, 0x1.6ae72p-10};

// e^r = 1 + r P(r), P of kExpMinimax by Horner's scheme folded into the last step:
// ((((c5 r + c4) r + c3) r + c2) r + c1) r + c0, then 1 + P r: six fmas. Estrin's scheme
// (until 2026-12-07) took eight operations (two multiplies for r^2 and r^4) in four dependent
// steps; exp is throughput-bound wherever it runs over a row or tile (softmax, flash attention,
// elementwise chains: many independent evaluations in flight), and on AMD cores below AVX-512
// its floating-point ops compete for two FMA pipes (docs/isa.md, "Horner's scheme").
// Exhaustively (tools/ulp_check/exp_f32.c) both are within 1 ulp of glibc; Horner leaves 14.4 M
// inputs more than half an ulp away, Estrin 17.6 M.
llvm::Value* ExpOnePlusRP(llvm::IRBuilderBase& b, llvm::Value* r) {
  llvm::Type* type = r->getType();
  auto c = [&](int k) { return Float(type, kExpMinimax[k]); };
  llvm::Value* p = Fma(b, c(5), r, c(4));
  for (int k = 3; k >= 0; --k) p = Fma(b, p, r, c(k));
  return Fma(b, p, r, Float(type, 1.0));
}

// The range reduction and polynomial of exp on a clamped argument `xc`: n = round(xc log2(e)),
// e = e^r (r = xc - n ln2) in [0.7, 1.42]. `shifted` = n + `shifter`, an integer in [2^23, 2^24):
// xc log2(e) is never half an integer (log2(e)'s odd 24-bit significand divides no odd number
// below 2^9), so every such shifter gives the same n.
struct ExpReduced {
  llvm::Value* shifted;
  llvm::Value* e;
};

ExpReduced ReduceExp(llvm::IRBuilderBase& b, llvm::Value* xc, double shifter_value) {
  llvm::Type* type = xc->getType();
  // n = nearest integer to x log2(e), by the shifter: the sum's last bits are n.
  llvm::Constant* shifter = Float(type, shifter_value);
  llvm::Value* shifted = Fma(b, xc, Float(type, 0x1.715476p+0), shifter);
  llvm::Value* n = b.CreateFSub(shifted, shifter);
  // r = x - n ln2 with ln2 split in two f32 parts (ln2_hi = ln2 rounded, ln2_lo the rest).
  llvm::Value* r = Fma(b, n, Float(type, -0x1.62e43p-1), xc);
  r = Fma(b, n, Float(type, 0x1.05c610p-29), r);
  return {shifted, ExpOnePlusRP(b, r)};
}

// Clamp bounds: e^89 is above FLT_MAX, so the clamped results still round to inf. e^-105 is
// below half the least subnormal: below it the polynomial runs on 0 and the result is selected
// to +0 after it. Clamping to -105 instead (until 2026-12-06) scaled e by 2^-152 and made the +0
// by underflow, and an underflowing vscalefps (~210 cycles) or a multiply whose result
// underflows or is subnormal (~125 cycles) is a microcode assist on Intel cores (measured on a
// Xeon family 6 model 207; docs/isa.md): a causal or padding mask's -inf scores took a third of
// flash attention's time that way.
constexpr double kExpLow = -105.0;
constexpr double kExpHigh = 89.0;

}  // namespace

llvm::Value* EmitExpF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Type* type = x->getType();
  // Clamp (NaN passes both compares unchanged, and every later step keeps it NaN).
  llvm::Value* zero = llvm::Constant::getNullValue(type);
  llvm::Value* below = b.CreateFCmpOLT(x, Float(type, kExpLow));
  llvm::Constant* high = Float(type, kExpHigh);
  llvm::Value* xc = b.CreateSelect(below, zero, x);
  xc = b.CreateSelect(b.CreateFCmpOGT(xc, high), high, xc);
  const ExpReduced reduced = ReduceExp(b, xc, 0x1.8p23);
  // e (in [0.7, 1.42]) times 2^n, n in [-151, 128] after the clamp, rounded once: a target
  // primitive (vscalefps on AVX-512, exponent-field arithmetic elsewhere; target_lowering.h).
  return b.CreateSelect(below, zero, EmitExpScale(b, reduced.e, reduced.shifted, x));
}

llvm::Value* EmitExpNonPositiveF32(llvm::IRBuilderBase& b, llvm::Value* x, bool scale_primitive) {
  llvm::Type* type = x->getType();
  // x <= 0: no upper clamp (n <= 0). NaN passes the compare and stays NaN; below kExpLow the
  // result is selected to +0 as in EmitExpF32.
  llvm::Value* zero = llvm::Constant::getNullValue(type);
  llvm::Value* below = b.CreateFCmpOLT(x, Float(type, kExpLow));
  llvm::Value* xc = b.CreateSelect(below, zero, x);
  if (scale_primitive) {
    const ExpReduced reduced = ReduceExp(b, xc, 0x1.8p23);
    return b.CreateSelect(below, zero, EmitExpScale(b, reduced.e, reduced.shifted, x));
  }
  // n in [-151, 0]: with the shifter 1.5 * 2^23 + 191 the low bits of `shifted` are n + 191, so
  // shifting its bits left by 23 leaves the float 2^(n + 64) (exponent field n + 191 in
  // [40, 191]; the shifter's own high bits shift out). e * 2^(n + 64) is a normal float, exact,
  // and the product with 2^-64 rounds once (subnormal and zero results included): e * 2^n as
  // EmitExpScale, in one shift and two multiplies instead of its seven integer operations,
  // multiply, compare and select. A NaN e makes the products NaN (no NaN select).
  const ExpReduced reduced = ReduceExp(b, xc, 0x1.8p23 + 191);
  llvm::Type* int_type = type->getWithNewType(b.getInt32Ty());
  llvm::Value* power =
      b.CreateBitCast(b.CreateShl(b.CreateBitCast(reduced.shifted, int_type), 23), type);
  return b.CreateSelect(below, zero,
                        b.CreateFMul(b.CreateFMul(reduced.e, power), Float(type, 0x1p-64)));
}

llvm::Value* EmitExpNormalRangeF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Type* type = x->getType();
  llvm::Type* int_type = type->getWithNewType(b.getInt32Ty());
  // x in [-86.5, 0]: n = round(x log2(e)) in [-125, 0], e in [0.7, 1.42] (biased exponent 126
  // or 127), so e 2^n has a biased exponent in [1, 127]: adding n to e's exponent field is the
  // exact product, the value EmitExpF32's rounded scaling gives. `shifted`'s bits are
  // 0x4B400000 + n; shifted left by 23 the constant part leaves the word and n << 23 remains.
  const ExpReduced reduced = ReduceExp(b, x, 0x1.8p23);
  llvm::Value* power = b.CreateShl(b.CreateBitCast(reduced.shifted, int_type), 23);
  return b.CreateBitCast(b.CreateAdd(b.CreateBitCast(reduced.e, int_type), power), type);
}

llvm::Value* EmitTanhF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  // tanh|x| = t / (t + 2), t = e^{2|x|} - 1: one reduction and one polynomial for every x (no
  // second branch to compute and select), |x| clamped to 10 where tanhf is 1 to the last bit.
  llvm::Type* type = x->getType();
  llvm::Type* int_type = type->getWithNewType(b.getInt32Ty());
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* y = b.CreateFAdd(ax, ax);
  llvm::Constant* high = Float(type, kTanhClamp);
  y = b.CreateSelect(b.CreateFCmpOGT(y, high), high, y);  // NaN passes and propagates
  llvm::Constant* shifter = Float(type, 0x1.8p23);
  llvm::Value* shifted = Fma(b, y, Float(type, 0x1.715476p+0), shifter);
  llvm::Value* n = b.CreateFSub(shifted, shifter);
  llvm::Value* r = Fma(b, n, Float(type, -0x1.62e43p-1), y);
  r = Fma(b, n, Float(type, 0x1.05c610p-29), r);
  // e^r - 1 = r + r (r Q(r)); 2^n from the shifter's bits (n <= 29: a normal power of two).
  llvm::Value* rq = b.CreateFMul(r, PolynomialLowFirst(b, r, kExpm1Q));
  llvm::Value* biased = b.CreateAdd(b.CreateBitCast(shifted, int_type),
                                    llvm::ConstantInt::get(int_type, 127 - 0x4B400000));
  llvm::Value* scale = b.CreateBitCast(b.CreateShl(biased, 23), type);
  // n = 0 (2|x| < ln2/2): t = r + r rq, one rounding, so small results keep their bits;
  // else t = 2^n r (1 + rq) + (2^n - 1), exact scaling and one rounding of the sum.
  llvm::Value* t_small = Fma(b, r, rq, r);
  llvm::Value* t_large = Fma(b, b.CreateFMul(scale, r), b.CreateFAdd(rq, Float(type, 1.0)),
                             b.CreateFSub(scale, Float(type, 1.0)));
  llvm::Value* t = b.CreateSelect(b.CreateFCmpOEQ(n, Float(type, 0.0)), t_small, t_large);
  llvm::Value* magnitude = b.CreateFDiv(t, b.CreateFAdd(t, Float(type, 2.0)));
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, x);
}

llvm::Value* EmitLogisticF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Type* type = x->getType();
  llvm::Value* one = Float(type, 1.0);
  return b.CreateFDiv(one, b.CreateFAdd(one, EmitExpF32(b, b.CreateFNeg(x))));
}

}  // namespace accy::jit
