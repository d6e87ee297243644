// Inline f32 exp/tanh/logistic (vector_math.h).
//
// Every step is an IEEE operation the vectorizer widens one for one; llvm.fma (not fmuladd) so
// the rounding is fixed whatever the target or the loop (vector body and scalar tail agree).
// The coefficients are the Taylor coefficients 1/k! rounded to f32 (truncation error below
// 0.05 ulp for exp, 0.25 ulp for tanh's e^r - 1, on |r| <= ln2/2). The ulp figures in
// vector_math.h were measured by running the same sequence in C (fmaf) against glibc over all
// 2^32 f32 inputs.
#include "jit/vector_math.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"

namespace accy::jit {
namespace {

llvm::Constant* Float(llvm::Type* type, double value) { return llvm::ConstantFP::get(type, value); }

llvm::Value* Fma(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, z});
}

// Horner evaluation of c[0] + c[1] t + ... with fma, highest coefficient first.
template <size_t N>
llvm::Value* Polynomial(llvm::IRBuilderBase& b, llvm::Value* t, const double (&c)[N]) {
  llvm::Type* type = t->getType();
  llvm::Value* p = Float(type, c[N - 1]);
  for (size_t k = N - 1; k-- > 0;) p = Fma(b, p, t, Float(type, c[k]));
  return p;
}

// 1/k! for k = 0..7, as f32 values; e^r = 1 + r (1 + r (1/2 + ...)).
constexpr double kExpTaylor[] = {1.0,           0.5,           0x1.555556p-3, 0x1.555556p-5,
                                 0x1.111112p-7, 0x1.6c16c2p-10, 0x1.a01a02p-13};
// (e^r - 1 - r) / r^2 = 1/2 + r/6 + ...: 1/k! for k = 2..7, as f32 values.
constexpr double kExpm1Q[] = {0.5,           0x1.555556p-3,  0x1.555556p-5,
                              0x1.111112p-7, 0x1.6c16c2p-10, 0x1.a01a02p-13};
// 2|x| is clamped here: tanh(10) is 1 in f32 (1 - tanh(9.01) is below half an ulp of 1).
constexpr double kTanhClamp = 20.0;

}  // namespace

llvm::Value* EmitExpF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Type* type = x->getType();
  llvm::Type* int_type = type->getWithNewType(b.getInt32Ty());
  // Clamp (NaN passes both compares unchanged and is restored at the end): e^-105 is below half
  // the least subnormal and e^89 above FLT_MAX, so the clamped results still round to 0 / inf.
  llvm::Constant* low = Float(type, -105.0);
  llvm::Constant* high = Float(type, 89.0);
  llvm::Value* xc = b.CreateSelect(b.CreateFCmpOLT(x, low), low, x);
  xc = b.CreateSelect(b.CreateFCmpOGT(xc, high), high, xc);
  // n = nearest integer to x log2(e), by the 1.5 * 2^23 shifter: the sum's last bits are n.
  llvm::Constant* shifter = Float(type, 0x1.8p23);
  llvm::Value* shifted = Fma(b, xc, Float(type, 0x1.715476p+0), shifter);
  llvm::Value* n = b.CreateFSub(shifted, shifter);
  llvm::Value* n_int =
      b.CreateSub(b.CreateBitCast(shifted, int_type), llvm::ConstantInt::get(int_type, 0x4B400000));
  // r = x - n ln2 with ln2 split in two f32 parts (ln2_hi = ln2 rounded, ln2_lo the rest).
  llvm::Value* r = Fma(b, n, Float(type, -0x1.62e43p-1), xc);
  r = Fma(b, n, Float(type, 0x1.05c610p-29), r);
  llvm::Value* e = Fma(b, Polynomial(b, r, kExpTaylor), r, Float(type, 1.0));
  // 2^n = 2^n1 * 2^n2 with n1 = floor(n / 2): both factors are normal for n in [-152, 129]; the
  // first product is exact, the second rounds once (a subnormal or infinite result included).
  llvm::Value* n1 = b.CreateAShr(n_int, 1);
  llvm::Value* n2 = b.CreateSub(n_int, n1);
  auto power_of_two = [&](llvm::Value* k) {
    llvm::Value* biased = b.CreateAdd(k, llvm::ConstantInt::get(int_type, 127));
    return b.CreateBitCast(b.CreateShl(biased, 23), type);
  };
  llvm::Value* result = b.CreateFMul(b.CreateFMul(e, power_of_two(n1)), power_of_two(n2));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
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
  llvm::Value* rq = b.CreateFMul(r, Polynomial(b, r, kExpm1Q));
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
