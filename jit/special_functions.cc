// Vector-friendly double IR for the CHLO special functions of f32 ops (special_functions.h).
// Every function is straight-line: both sides of each case are computed and selected, and the
// series run a fixed number of terms, so the loop vectorizer widens them. The error analysis
// of each is in docs/numerics.md "CHLO"; `make ulp-check` runs these kernels over all 2^32
// f32 inputs.
#include "jit/special_functions.h"

#include <cmath>
#include <iterator>
#include <numbers>

#include "jit/ir_arithmetic.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "src/util/special_math.h"

namespace accy::jit {
namespace {

llvm::Constant* Float(llvm::Type* type, double value) { return FloatConstant(type, value); }

llvm::Value* Abs(llvm::IRBuilderBase& b, llvm::Value* x) {
  return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
}

// x - nearest integer to x (ties to even): exact, in [-1/2, 1/2]; 0 exactly at the integers.
llvm::Value* DistanceToInteger(llvm::IRBuilderBase& b, llvm::Value* x) {
  return b.CreateFSub(x, b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x));
}

// The least f32 / f64 x from which glibc's erfcf / erfc return +0 (glibc 2.36, found by
// scanning up from where they still give the least subnormal; every larger x gives +0 too): the
// true values there are below the least subnormal, within the functions' ulp bounds of 0.
constexpr double kErfcZeroFromF32 = 10.050470352172852;  // 0x1.419d74p+3
constexpr double kErfcZeroFromF64 = 27.226364135742188;

// The ten factors z, z + 1, ..., z + 9 of the recurrence Gamma(z + 10) = Gamma(z) z (z+1)...(z+9).
constexpr int kShift = 10;

// Stirling's series for log Gamma(w) - ((w - 1/2) log w - w + log(2 pi) / 2): B_2k / (2k (2k-1)
// w^(2k-1)), k = 1..7, as a polynomial in 1/w^2 (lowest first) times 1/w. At w >= 10 the first
// omitted term is 3e-17.
constexpr double kStirling[] = {1.0 / 12,   -1.0 / 360,        1.0 / 1260, -1.0 / 1680,
                                1.0 / 1188, -691.0 / 360360, 1.0 / 156};

// The power series of exp(-a) I1(a) runs for a <= kBesselSeriesTo with kBesselSeriesTerms
// terms after the first (the last is below 1e-12 of the sum at a = 15), the asymptotic series
// above with kBesselAsymptoticTerms (the last is 2.5e-11 at a = 15).
constexpr double kBesselSeriesTo = 15.0;
constexpr int kBesselSeriesTerms = 24;
constexpr int kBesselAsymptoticTerms = 12;

}  // namespace

llvm::Value* EmitErfInvForF32(llvm::IRBuilderBase& b, const LibmCall& libm, llvm::Value* y) {
  llvm::Type* type = y->getType();
  llvm::Constant* one = Float(type, 1.0);
  llvm::Value* a = Abs(b, y);
  // w = -log((1 - a)(1 + a)): both factors and their product are exact or once-rounded in double
  // for an f32 a, so w has no cancellation near a = 1.
  llvm::Value* w =
      b.CreateFNeg(libm("log", b.CreateFMul(b.CreateFSub(one, a), b.CreateFAdd(one, a))));
  llvm::Value* central = PolynomialHighFirst(b, b.CreateFSub(w, Float(type, 2.5)), special::kErfInvCentral);
  llvm::Value* tail = PolynomialHighFirst(
      b, b.CreateFSub(b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, w), Float(type, 3.0)),
      special::kErfInvTail);
  llvm::Value* x = b.CreateFMul(
      b.CreateSelect(b.CreateFCmpOLT(w, Float(type, special::kErfInvTailFrom)), central, tail), a);
  // One Halley step on f(x) = erf(x) - a: the guess is within 2e-7 relative (1e-6 at the f32 a
  // closest to 1), and Halley cubes it. f is computed in double without cancellation trouble:
  // near a = 1 its absolute error (~1e-16) over the slope (>= 2.7e-7 for f32 inputs) moves x by
  // under 1e-9 relative.
  llvm::Value* f = b.CreateFSub(libm("erf", x), a);
  llvm::Value* slope = b.CreateFMul(Float(type, 2.0 / std::sqrt(std::numbers::pi)),
                                    libm("exp", b.CreateFNeg(b.CreateFMul(x, x))));
  x = b.CreateFSub(x, b.CreateFDiv(f, b.CreateFAdd(slope, b.CreateFMul(x, f))));
  llvm::Value* r = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, x, y);
  r = b.CreateSelect(b.CreateFCmpOEQ(a, one),
                     b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign,
                                             llvm::ConstantFP::getInfinity(type), y),
                     r);
  r = b.CreateSelect(b.CreateFCmpOGT(a, one), llvm::ConstantFP::getNaN(type), r);
  return b.CreateSelect(b.CreateFCmpOEQ(a, Float(type, 0.0)), y, r);  // +-0 as given
}

llvm::Value* EmitLgammaForF32(llvm::IRBuilderBase& b, const LibmCall& libm, llvm::Value* x) {
  llvm::Type* type = x->getType();
  llvm::Constant* one = Float(type, 1.0);
  llvm::Constant* inf = llvm::ConstantFP::getInfinity(type);
  // x < 0: log|Gamma(x)| = log(pi / |sin(pi x)|) - log Gamma(1 - x), with sin(pi x) = +-sin(pi r)
  // for the exact r = x - round(x); at the poles sin is 0 and the result +inf.
  llvm::Value* negative = b.CreateFCmpOLT(x, Float(type, 0.0));
  llvm::Value* sine = Abs(b, libm("sin", b.CreateFMul(Float(type, std::numbers::pi),
                                                      DistanceToInteger(b, x))));
  // |x|, not x: -0 must give m = +0 and log(1/m) = +inf.
  llvm::Value* z = b.CreateSelect(negative, b.CreateFSub(one, x), Abs(b, x));
  // z < 10: log Gamma(z) = log Gamma(z + 10) - log m, m = z (z+1) ... (z+9) (below 19^10 there;
  // the lanes that do not use it may overflow it harmlessly), else m = 1.
  llvm::Value* shifted = b.CreateFCmpOLT(z, Float(type, kShift));
  llvm::Value* product = z;
  for (int k = 1; k < kShift; ++k) product = b.CreateFMul(product, b.CreateFAdd(z, Float(type, k)));
  llvm::Value* m = b.CreateSelect(shifted, product, one);
  llvm::Value* w = b.CreateSelect(shifted, b.CreateFAdd(z, Float(type, kShift)), z);
  llvm::Value* inv = b.CreateFDiv(one, w);
  llvm::Value* series = b.CreateFMul(inv, PolynomialLowFirst(b, b.CreateFMul(inv, inv), kStirling));
  llvm::Value* stirling =
      b.CreateFAdd(b.CreateFSub(b.CreateFMul(b.CreateFSub(w, Float(type, 0.5)), libm("log", w)), w),
                   b.CreateFAdd(Float(type, 0.5 * std::log(2.0 * std::numbers::pi)), series));
  // One log for both cases: x >= 0 gives stirling + log(1/m), x < 0 gives
  // log(pi / |sin|) - (stirling - log m) = log(pi m / |sin|) - stirling.
  llvm::Value* ratio = b.CreateSelect(
      negative, b.CreateFDiv(b.CreateFMul(Float(type, std::numbers::pi), m), sine),
      b.CreateFDiv(one, m));
  llvm::Value* log_ratio = libm("log", ratio);
  llvm::Value* r = b.CreateSelect(negative, b.CreateFSub(log_ratio, stirling),
                                  b.CreateFAdd(stirling, log_ratio));
  // Exact zeros at 1 and 2 (the recurrence leaves ~1e-15 there), +inf at +-inf (r is NaN at
  // -inf); NaN has gone through every step as NaN.
  r = b.CreateSelect(b.CreateOr(b.CreateFCmpOEQ(x, one), b.CreateFCmpOEQ(x, Float(type, 2.0))),
                     Float(type, 0.0), r);
  return b.CreateSelect(b.CreateFCmpOEQ(Abs(b, x), inf), inf, r);
}

llvm::Value* EmitDigammaForF32(llvm::IRBuilderBase& b, const LibmCall& libm, llvm::Value* x) {
  llvm::Type* type = x->getType();
  llvm::Constant* one = Float(type, 1.0);
  llvm::Constant* zero = Float(type, 0.0);
  // x < 0: psi(x) = psi(1 - x) - pi / tan(pi r), r = x - round(x) exact (tan has period pi).
  llvm::Value* negative = b.CreateFCmpOLT(x, zero);
  llvm::Value* r = DistanceToInteger(b, x);
  llvm::Value* reflection = b.CreateFNeg(b.CreateFDiv(
      Float(type, std::numbers::pi), libm("tan", b.CreateFMul(Float(type, std::numbers::pi), r))));
  llvm::Value* z = b.CreateSelect(negative, b.CreateFSub(one, x), x);
  // z < 10: psi(z) = psi(z + 10) - sum_{k<10} 1/(z + k), the sum as one fraction n/d built by
  // n/d + 1/(z + k) = (n (z + k) + d) / (d (z + k)): positive terms, one division, d < 19^10.
  llvm::Value* shifted = b.CreateFCmpOLT(z, Float(type, kShift));
  llvm::Value* numerator = one;
  llvm::Value* denominator = z;
  for (int k = 1; k < kShift; ++k) {
    llvm::Value* factor = b.CreateFAdd(z, Float(type, k));
    numerator = b.CreateFAdd(b.CreateFMul(numerator, factor), denominator);
    denominator = b.CreateFMul(denominator, factor);
  }
  llvm::Value* w = b.CreateSelect(shifted, b.CreateFAdd(z, Float(type, kShift)), z);
  llvm::Value* inv = b.CreateFDiv(one, w);
  llvm::Value* inv2 = b.CreateFMul(inv, inv);
  llvm::Value* series = b.CreateFMul(inv2, PolynomialLowFirst(b, inv2, special::kDigammaAsymptotic));
  llvm::Value* psi = b.CreateFSub(
      b.CreateFSub(libm("log", w), b.CreateFMul(Float(type, 0.5), inv)), series);
  psi = b.CreateSelect(shifted, b.CreateFSub(psi, b.CreateFDiv(numerator, denominator)), psi);
  llvm::Value* result = b.CreateSelect(negative, b.CreateFAdd(psi, reflection), psi);
  // The poles 0, -1, -2, ... and -inf give NaN (as special::Digamma and XLA).
  llvm::Value* pole = b.CreateAnd(b.CreateFCmpOLE(x, zero), b.CreateFCmpOEQ(r, zero));
  pole = b.CreateOr(pole, b.CreateFCmpOEQ(x, llvm::ConstantFP::getInfinity(type, true)));
  return b.CreateSelect(pole, llvm::ConstantFP::getNaN(type), result);
}

llvm::Value* EmitErfcAvoidingScalarLibm(llvm::IRBuilderBase& b, const LibmCall& libm,
                                        llvm::Value* x) {
  llvm::Type* type = x->getType();
  const double zero_from = type->isFloatTy() ? kErfcZeroFromF32 : kErfcZeroFromF64;
  llvm::Value* underflows = b.CreateFCmpOGE(x, Float(type, zero_from));
  llvm::Constant* zero = Float(type, 0.0);
  return b.CreateSelect(underflows, zero, libm("erfc", b.CreateSelect(underflows, zero, x)));
}

llvm::Value* EmitErfF32(llvm::IRBuilderBase& b, const LibmCall& libm, llvm::Value* x) {
  llvm::Type* type = x->getType();
  llvm::Value* a = Abs(b, x);
  // erfc(a) = exp(-a^2) / (a sqrt(pi)) (1 - 1 / (2 a^2) + 3 / (4 a^4) - ...): above 3.6 the
  // first omitted term is below 1.2e-3 relative, 3e-10 absolute (a 1/200 of erf's ulp there).
  // a^2's rounding moves exp(-a^2) by at most a^2 2^-24 relative. An infinite a gives 1.
  llvm::Value* a2 = b.CreateFMul(a, a);
  llvm::Value* inv2 = b.CreateFDiv(Float(type, 1.0), a2);
  llvm::Value* series =
      b.CreateFAdd(Float(type, 1.0),
                   b.CreateFMul(inv2, b.CreateFAdd(Float(type, -0.5), b.CreateFMul(inv2, Float(type, 0.75)))));
  llvm::Value* erfc = b.CreateFDiv(
      b.CreateFMul(libm("exp", b.CreateFNeg(a2)), b.CreateFMul(series, Float(type, 0.5641895835477563))),
      a);
  llvm::Value* tail = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign,
                                              b.CreateFSub(Float(type, 1.0), erfc), x);
  return b.CreateSelect(b.CreateFCmpOGT(a, Float(type, kErfTailFromF32)), tail, libm("erf", x));
}

llvm::Value* EmitBesselI1eForF32(llvm::IRBuilderBase& b, const LibmCall& libm, llvm::Value* x) {
  llvm::Type* type = x->getType();
  llvm::Constant* limit = Float(type, kBesselSeriesTo);
  llvm::Value* a = Abs(b, x);
  // Power series: I1(a) = sum_k (a/2)^(2k+1) / (k! (k+1)!), positive terms, on a clamped to the
  // series' range so the lanes that use the other series stay finite.
  llvm::Value* half = b.CreateFMul(Float(type, 0.5), b.CreateMinNum(a, limit));
  llvm::Value* q = b.CreateFMul(half, half);
  llvm::Value* term = half;
  llvm::Value* sum = half;
  for (int k = 1; k <= kBesselSeriesTerms; ++k) {
    term = b.CreateFMul(b.CreateFMul(term, q), Float(type, 1.0 / (k * (k + 1.0))));
    sum = b.CreateFAdd(sum, term);
  }
  llvm::Value* series = b.CreateFMul(sum, libm("exp", b.CreateFNeg(b.CreateMinNum(a, limit))));
  // Asymptotic: exp(-a) I1(a) ~ (2 pi a)^(-1/2) sum_k t_k, t_k = t_(k-1) ((2k-1)^2 - 4) / (8 k a).
  llvm::Value* big = b.CreateMaxNum(a, limit);
  llvm::Value* inv = b.CreateFDiv(Float(type, 1.0), big);
  llvm::Value* t = Float(type, 1.0);
  llvm::Value* asymptotic = t;
  for (int k = 1; k <= kBesselAsymptoticTerms; ++k) {
    const double odd = 2.0 * k - 1.0;
    t = b.CreateFMul(t, b.CreateFMul(inv, Float(type, (odd * odd - 4.0) / (8.0 * k))));
    asymptotic = b.CreateFAdd(asymptotic, t);
  }
  asymptotic = b.CreateFDiv(
      asymptotic, b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt,
                                         b.CreateFMul(Float(type, 2.0 * std::numbers::pi), big)));
  llvm::Value* value = b.CreateSelect(b.CreateFCmpOLE(a, limit), series, asymptotic);
  llvm::Value* r = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, value, x);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, r);  // NaN: maxnum/minnum would drop it
}

}  // namespace accy::jit
