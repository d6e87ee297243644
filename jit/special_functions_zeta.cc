// Vector-friendly double IR for chlo.zeta and chlo.polygamma (special_functions.h), beside the
// one-argument functions of special_functions.cc. Straight-line like them: every case is
// computed for every lane and selected, and the sums run fixed numbers of terms, so the loop
// vectorizer widens the code and the vector body and the scalar tail give the same bits. Method
// and error bounds: docs/numerics.md "CHLO"; `make ulp-check` measures them against MPFR.
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "jit/ir_arithmetic.h"
#include "jit/special_functions.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace accy::jit {
namespace {

// Direct terms on each side of 0 for q < 0 (r - 8 .. r + 7), 2 * kSideTerms from q for q > 0,
// so Euler-Maclaurin always starts at kSideTerms or more (q + 16 for q > 0; XLA: q + 10).
constexpr int kSideTerms = 8;

// B_2j / (2j)!, j = 1..12 (the Euler-Maclaurin coefficients). From a = 8 on, the first omitted
// term is below 5e-18 of the tail for x = 2, and smaller relative to the sum for larger x.
constexpr double kBernoulliOverFactorial[] = {
    8.3333333333333333e-2,   -1.3888888888888889e-3,  3.3068783068783069e-5,
    -8.2671957671957672e-7,  2.0876756987868099e-8,   -5.2841901386874932e-10,
    1.3382536530684679e-11,  -3.3896802963225829e-13, 8.5860620562778446e-15,
    -2.1748686985580619e-16, 5.5090028283602295e-18,  -1.3954464685812523e-19};

// n! = mantissa * 2^exponent, mantissa in [1, 2), for n = 0 .. kMaxFactorialN: 1754! is the
// last factorial long double holds, where the reference's tgammal(n + 1) ends too
// (special::Polygamma), while double's n! ends at 170!. The products are formed in __float128
// (113-bit significand; libgcc's soft float, once per process), kept in [1, 2) by exact halvings,
// so each mantissa is the correctly rounded double of n! / 2^exponent (the accumulated error,
// below 1754 * 2^-113 relative, is far under half an ulp of double).
constexpr int kMaxFactorialN = 1754;
struct FactorialTable {
  std::array<double, kMaxFactorialN + 1> mantissa;
  std::array<double, kMaxFactorialN + 1> exponent;
};

FactorialTable Factorials() {
  FactorialTable table{};
  __float128 product = 1;
  int exponent = 0;
  for (int n = 0; n <= kMaxFactorialN; ++n) {
    if (n > 0) product *= n;
    while (product >= 2) {
      product *= 0.5;
      ++exponent;
    }
    double mantissa = static_cast<double>(product);
    int e = exponent;
    if (mantissa == 2.0) {  // rounded up to the next binade
      mantissa = 1.0;
      ++e;
    }
    table.mantissa[static_cast<size_t>(n)] = mantissa;
    table.exponent[static_cast<size_t>(n)] = e;
  }
  return table;
}

// A private constant table of doubles in `module` (one per module and name).
llvm::GlobalVariable* DoubleTable(llvm::Module& module, const char* name,
                                  std::span<const double> values) {
  llvm::Type* double_type = llvm::Type::getDoubleTy(module.getContext());
  llvm::ArrayType* type = llvm::ArrayType::get(double_type, values.size());
  if (llvm::GlobalVariable* table = module.getNamedGlobal(name)) return table;
  std::vector<llvm::Constant*> entries;
  for (double v : values) entries.push_back(llvm::ConstantFP::get(double_type, v));
  auto* table =
      new llvm::GlobalVariable(module, type, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                               llvm::ConstantArray::get(type, entries), name);
  table->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return table;
}

llvm::Constant* Float(llvm::Type* type, double value) { return FloatConstant(type, value); }

llvm::Value* Floor(llvm::IRBuilderBase& b, llvm::Value* x) {
  return b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
}

// A base q + k of the sum: its double value and, with exact bases, the rounding error (TwoSum:
// value + error == q + k exactly).
struct Base {
  llvm::Value* value;
  llvm::Value* error;  // null without exact bases
};

Base AddExactly(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y, bool exact) {
  llvm::Value* sum = b.CreateFAdd(x, y);
  if (!exact) return {sum, nullptr};
  llvm::Value* y_part = b.CreateFSub(sum, x);
  llvm::Value* x_part = b.CreateFSub(sum, y_part);
  llvm::Value* error = b.CreateFAdd(b.CreateFSub(x, x_part), b.CreateFSub(y, y_part));
  return {sum, error};
}

// base^-s, s = `s`, negated as `minus_s`, `odd` when s is an odd integer. pow runs on |base| and
// the sign is applied here: libmvec's pow of a negative base can differ from the positive one's
// in the last bit, and mirrored terms must cancel exactly. With an error e: (v + e)^-s =
// v^-s (1 + e/v)^-s and (1 + d)^-s = 1 - s d + (s d)^2 / 2 + O((s d)^3), |d| <= 2^-53.
llvm::Value* NegativePower(llvm::IRBuilderBase& b, const LibmBinaryCall& libm, const Base& base,
                           llvm::Value* s, llvm::Value* minus_s, llvm::Value* odd) {
  llvm::Value* magnitude =
      libm("pow", b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, base.value), minus_s);
  llvm::Value* negative = b.CreateAnd(odd, b.CreateFCmpOLT(base.value, Float(s->getType(), 0.0)));
  llvm::Value* power = b.CreateSelect(negative, b.CreateFNeg(magnitude), magnitude);
  if (base.error == nullptr) return power;
  llvm::Type* type = s->getType();
  llvm::Value* t = b.CreateFMul(s, b.CreateFDiv(base.error, base.value));
  // 1 - t + t^2/2 = 1 + t (t/2 - 1), for |t| < 2^-10 (s < 2^43; the omitted t^3/6 is then below
  // 2^-32 t); otherwise, and for an exact base, power as it is (t is NaN for s = +inf).
  llvm::Value* correction = Fma(
      b, t, b.CreateFSub(b.CreateFMul(t, Float(type, 0.5)), Float(type, 1.0)), Float(type, 1.0));
  llvm::Value* small =
      b.CreateFCmpOLT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, t), Float(type, 0x1p-10));
  return b.CreateSelect(small, b.CreateFMul(power, correction), power);
}

// The Euler-Maclaurin tail zeta(s, a) ~ a^(1-s)/(s-1) + a^-s/2 + sum_j B_2j/(2j)! (s)_(2j-1)
// a^(1-s-2j), times 2^(t (s-1)) for a base scaled by down = 2^-t: from power = (a down)^-s, the
// leading term as power (a down) / (s - 1) and the rest times down (1 and a itself when
// unscaled); the Bernoulli sum by Horner's rule in (s+2j-1)(s+2j)/a^2.
llvm::Value* Tail(llvm::IRBuilderBase& b, llvm::Value* s, llvm::Value* a, llvm::Value* down,
                  llvm::Value* power) {
  llvm::Type* type = s->getType();
  llvm::Value* inverse_square = b.CreateFDiv(Float(type, 1.0), b.CreateFMul(a, a));
  constexpr int kTerms = static_cast<int>(std::size(kBernoulliOverFactorial));
  llvm::Value* horner = Float(type, kBernoulliOverFactorial[kTerms - 1]);
  for (int j = kTerms - 1; j >= 1; --j) {  // j: 1-based index of the coefficient below
    llvm::Value* rising = b.CreateFMul(b.CreateFAdd(s, Float(type, 2.0 * j - 1.0)),
                                       b.CreateFAdd(s, Float(type, 2.0 * j)));
    horner = Fma(b, b.CreateFMul(rising, inverse_square), horner,
                 Float(type, kBernoulliOverFactorial[j - 1]));
  }
  llvm::Value* bernoulli = b.CreateFMul(b.CreateFDiv(s, a), horner);
  llvm::Value* leading = b.CreateFDiv(b.CreateFMul(a, down), b.CreateFSub(s, Float(type, 1.0)));
  llvm::Value* rest = b.CreateFMul(b.CreateFAdd(Float(type, 0.5), bernoulli), down);
  return b.CreateFMul(power, b.CreateFAdd(leading, rest));
}

// 2^k for an integer-valued double k in [-1022, 1023], from its exponent bits (exact).
llvm::Value* PowerOfTwo(llvm::IRBuilderBase& b, llvm::Value* k) {
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* vector_or_scalar =
      k->getType()->isVectorTy()
          ? static_cast<llvm::Type*>(llvm::VectorType::get(
                i64, llvm::cast<llvm::VectorType>(k->getType())->getElementCount()))
          : i64;
  llvm::Value* biased =
      b.CreateFPToSI(b.CreateFAdd(k, Float(k->getType(), 1023.0)), vector_or_scalar);
  return b.CreateBitCast(b.CreateShl(biased, 52), k->getType());
}

// v 2^(y_hi + y_lo), y_lo a small correction of y_hi (the error of the product that gave it):
// the integer part n of y_hi as three exact power-of-two steps (n clamped to +-2100, beyond
// which every result here is 0 or infinite), the fraction through pow(2, f).
llvm::Value* ScaleByPowerOfTwo(llvm::IRBuilderBase& b, const LibmBinaryCall& libm, llvm::Value* v,
                               llvm::Value* y_hi, llvm::Value* y_lo) {
  llvm::Type* type = v->getType();
  llvm::Value* n = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, y_hi);
  llvm::Value* f = b.CreateFAdd(b.CreateFSub(y_hi, n), y_lo);
  // Past the clamp the fraction does not matter (and y_lo may be huge there).
  f = b.CreateSelect(
      b.CreateFCmpOGT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, y_hi), Float(type, 2100.0)),
      Float(type, 0.0), f);
  llvm::Value* fraction = libm("pow", Float(type, 2.0), f);
  v = b.CreateSelect(b.CreateFCmpOEQ(f, Float(type, 0.0)), v, b.CreateFMul(v, fraction));
  n = b.CreateMaxNum(b.CreateMinNum(n, Float(type, 2100.0)), Float(type, -2100.0));
  llvm::Value* third =
      b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, b.CreateFMul(n, Float(type, 1.0 / 3.0)));
  llvm::Value* rest = b.CreateFSub(n, b.CreateFMul(third, Float(type, 2.0)));
  llvm::Value* step = PowerOfTwo(b, third);
  return b.CreateFMul(b.CreateFMul(b.CreateFMul(v, step), step), PowerOfTwo(b, rest));
}

// The binary exponent of a finite positive double, as a double (its exponent bits - 1023).
llvm::Value* Exponent(llvm::IRBuilderBase& b, llvm::Value* v) {
  llvm::Type* type = v->getType();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* int_type = type->isVectorTy()
                             ? static_cast<llvm::Type*>(llvm::VectorType::get(
                                   i64, llvm::cast<llvm::VectorType>(type)->getElementCount()))
                             : i64;
  llvm::Value* bits = b.CreateLShr(b.CreateBitCast(v, int_type), 52);
  llvm::Value* biased = b.CreateAnd(bits, llvm::ConstantInt::get(int_type, 0x7ff));
  return b.CreateFSub(b.CreateSIToFP(biased, type), Float(type, 1023.0));
}

// zeta(x, q) as scaled * 2^-(exponent_hi + exponent_lo), unless `special` (then special_value).
struct ScaledZeta {
  llvm::Value* scaled;
  llvm::Value* exponent_hi;
  llvm::Value* exponent_lo;
  llvm::Value* special;
  llvm::Value* special_value;
};

// For q from 2 to 2^1023 the bases may be scaled by 2^-t, t = log2 q rounded down (exact), the
// terms by 2^-t once more, and the result carries 2^-(t (x - 1)): where q^-x falls below
// double's range, the terms of a zeta that is itself in range (about q^(1-x) / (x - 1)) or of a
// polygamma (n! zeta) do not underflow, and the scaled sum stays near q^(1-x) / (x - 1) 2^(t(x-1)).
ScaledZeta EmitScaledZeta(llvm::IRBuilderBase& b, const LibmBinaryCall& libm, llvm::Value* x,
                          llvm::Value* q, bool exact_bases) {
  llvm::Type* type = x->getType();
  llvm::Constant* zero = Float(type, 0.0);
  llvm::Constant* one = Float(type, 1.0);
  llvm::Constant* half = Float(type, 0.5);
  llvm::Constant* inf = llvm::ConstantFP::getInfinity(type);
  llvm::Constant* nan = llvm::ConstantFP::getNaN(type);
  llvm::Value* minus_x = b.CreateFNeg(x);
  llvm::Value* const given_q = q;
  // x an integer, even or not (x/2 is exact); +inf is neither here (special::Zeta's fmod).
  llvm::Value* x_integer = b.CreateFCmpOEQ(Floor(b, x), x);
  llvm::Value* half_x = b.CreateFMul(x, half);
  llvm::Value* x_even = b.CreateAnd(
      b.CreateAnd(x_integer, b.CreateFCmpOEQ(Floor(b, half_x), half_x)), b.CreateFCmpONE(x, inf));
  llvm::Value* x_odd = b.CreateAnd(x_integer, b.CreateNot(x_even));
  llvm::Value* q_negative = b.CreateFCmpOLT(q, zero);
  llvm::Value* floor_q = Floor(b, q);
  // At r = 1/2 with odd x every negative term cancels a positive one exactly and the sum is
  // zeta(x, 1 - q) (1 - q exact): evaluated as that, with its own direct terms, since the
  // Euler-Maclaurin tail at 1 - q alone is inaccurate for x well above 1 - q.
  llvm::Value* half_integer =
      b.CreateAnd(q_negative, b.CreateFCmpOEQ(b.CreateFSub(q, floor_q), half));
  q = b.CreateSelect(b.CreateAnd(half_integer, x_odd), b.CreateFSub(one, q), q);
  // q < 0: m = -floor(q) negative terms, r = q + m in (0, 1). The bases are q plus an integer
  // offset, carried exactly (TwoSum) with exact bases: q > 0 sums q + 0 .. q + 15, q < 0 the 8
  // bases on each side of 0, r - 8 .. r + 7, of which the ones below q (offset < 0) are left out.
  llvm::Value* negative = b.CreateFCmpOLT(q, zero);
  llvm::Value* m = b.CreateFNeg(Floor(b, q));
  llvm::Value* r = b.CreateFAdd(q, m);
  // The scale 2^-t of the bases (t = 0: none): t = log2 q rounded down, so the scaled bases are
  // >= 1 and no term overflows, whatever x. For x <= 1755 (polygamma's n + 1 up to 1754, the
  // last n! its table holds) t is log2 q rounded to nearest instead (the exponent of q sqrt 2):
  // the first scaled base lies in [0.7, 1.42) and its term within 2^+-(x / 2), in range, where a
  // base near 2 gave 2^-x, below double's range once x passed about 1000.
  llvm::Value* nearest = b.CreateFCmpOLE(x, Float(type, 1755.0));
  llvm::Value* t =
      Exponent(b, b.CreateFMul(q, b.CreateSelect(nearest, Float(type, 1.4142135623730951), one)));
  // Scaling is exact for an integer x (t x an integer: polygamma); for other x only where
  // q^-x underflows (x (t + 1) > 1000), as the fraction of t x costs pow(2, f)'s rounding.
  llvm::Value* needs_scale = b.CreateOr(
      x_integer, b.CreateFCmpOGT(b.CreateFMul(x, b.CreateFAdd(t, one)), Float(type, 1000.0)));
  llvm::Value* scaled_lane =
      b.CreateAnd(b.CreateAnd(b.CreateNot(negative), b.CreateFCmpOGE(t, one)),
                  b.CreateAnd(b.CreateAnd(b.CreateFCmpOLE(t, Float(type, 1022.0)), needs_scale),
                              b.CreateFCmpONE(x, inf)));
  t = b.CreateSelect(scaled_lane, t, zero);
  llvm::Value* down = PowerOfTwo(b, b.CreateFNeg(t));
  auto scaled = [&](const Base& base) {
    return Base{b.CreateFMul(base.value, down),
                base.error == nullptr ? nullptr : b.CreateFMul(base.error, down)};
  };
  llvm::Value* first_high = b.CreateSelect(negative, m, Float(type, kSideTerms));
  // Pair i: the bases q + first_high + i and q + first_high - 1 - i (for q < 0: r + i and
  // r - 1 - i, whose terms cancel exactly at r = 1/2 for odd x), from the smallest pair up.
  llvm::Value* direct = zero;
  for (int i = 0; i < kSideTerms; ++i) {
    const Base high_base = AddExactly(b, q, b.CreateFAdd(first_high, Float(type, i)), exact_bases);
    llvm::Value* low_offset = b.CreateFSub(first_high, Float(type, i + 1.0));
    const Base low_base = AddExactly(b, q, low_offset, exact_bases);
    llvm::Value* high =
        b.CreateFMul(NegativePower(b, libm, scaled(high_base), x, minus_x, x_odd), down);
    llvm::Value* low =
        b.CreateFMul(NegativePower(b, libm, scaled(low_base), x, minus_x, x_odd), down);
    low = b.CreateSelect(b.CreateFCmpOLT(low_offset, zero), zero, low);  // below q
    llvm::Value* pair = b.CreateFAdd(high, low);
    if (i == 0) {
      // r^-x and (r - 1)^-x may both overflow (x >= 1024): the nearer base's term dominates,
      // and at r = 1/2 they cancel for odd x.
      llvm::Value* both =
          b.CreateAnd(b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, high), inf),
                      b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, low), inf));
      llvm::Value* signed_inf = b.CreateSelect(x_even, inf, b.CreateFNeg(inf));
      llvm::Value* dominant = b.CreateSelect(
          b.CreateFCmpOLT(r, half), inf,
          b.CreateSelect(b.CreateFCmpOGT(r, half), signed_inf, b.CreateSelect(x_even, inf, zero)));
      pair = b.CreateSelect(both, dominant, pair);
    }
    direct = b.CreateFAdd(direct, pair);
  }
  // Euler-Maclaurin tails (the power of the scaled base, the rest of the true one); one whose
  // power underflows is 0, which keeps Horner factors that overflow (x > 10^15) out. Where
  // Euler-Maclaurin diverges (x > 2 pi a) the tail is below e^-100 of the direct sum.
  auto tail_at = [&](const Base& base) {
    llvm::Value* power = NegativePower(b, libm, scaled(base), x, minus_x, x_odd);
    return b.CreateSelect(b.CreateFCmpOEQ(power, zero), zero, Tail(b, x, base.value, down, power));
  };
  llvm::Value* tail =
      tail_at(AddExactly(b, q, b.CreateFAdd(first_high, Float(type, kSideTerms)), exact_bases));
  // Far q < 0 (m > 8): the m - 8 terms below r - 8, (-1)^x sum_{j=9..m} (j - r)^-x =
  // (-1)^x (zeta(x, 9 - r) - zeta(x, 1 - q)): tails at 9 - r = -q + (9 - m) and 1 - q, the first
  // added to the tail at r + 8 first (so they cancel exactly at r = 1/2 for odd x). Unscaled.
  llvm::Value* far = b.CreateAnd(negative, b.CreateFCmpOGT(m, Float(type, kSideTerms)));
  llvm::Value* minus_q = b.CreateFNeg(q);
  llvm::Value* low_tail =
      tail_at(AddExactly(b, minus_q, b.CreateFSub(Float(type, kSideTerms + 1.0), m), exact_bases));
  llvm::Value* high_tail = tail_at(AddExactly(b, minus_q, one, exact_bases));
  llvm::Value* sign = b.CreateSelect(x_even, one, Float(type, -1.0));
  llvm::Value* far_tails =
      b.CreateFSub(b.CreateFAdd(tail, b.CreateFMul(sign, low_tail)), b.CreateFMul(sign, high_tail));
  ScaledZeta result;
  result.scaled = b.CreateFAdd(direct, b.CreateSelect(far, far_tails, tail));
  // The scale's exponent t (x - 1) as a sum of two doubles (t x - t is exact wherever the
  // scaling is not clamped: t x < 2^12 there).
  llvm::Value* product = b.CreateFMul(t, x);
  result.exponent_hi = b.CreateSelect(scaled_lane, b.CreateFSub(product, t), zero);
  result.exponent_lo = b.CreateSelect(scaled_lane, Fma(b, t, x, b.CreateFNeg(product)), zero);
  // Special values, in special::Zeta's order (a later one wins), of the given q.
  q = given_q;
  result.special = b.getFalse();
  result.special_value = zero;
  auto special = [&](llvm::Value* when, llvm::Value* value) {
    result.special_value = b.CreateSelect(when, value, result.special_value);
    result.special = b.CreateOr(result.special, when);
  };
  if (type->isVectorTy()) result.special = llvm::ConstantInt::getFalse(x_even->getType());
  special(b.CreateFCmpOEQ(q, inf), zero);
  special(b.CreateAnd(q_negative, b.CreateOr(b.CreateNot(x_integer), b.CreateFCmpOEQ(x, inf))),
          nan);
  special(b.CreateAnd(b.CreateFCmpOLE(q, zero), b.CreateFCmpOEQ(floor_q, q)),
          b.CreateSelect(x_even, inf, nan));                                 // the poles
  special(b.CreateOr(b.CreateFCmpULT(x, one), b.CreateFCmpUNO(q, q)), nan);  // x < 1 or NaN, q NaN
  special(b.CreateFCmpOEQ(x, one), inf);
  return result;
}

}  // namespace

llvm::Value* EmitZeta(llvm::IRBuilderBase& b, const LibmBinaryCall& libm, llvm::Value* x,
                      llvm::Value* q, bool exact_bases) {
  const ScaledZeta zeta = EmitScaledZeta(b, libm, x, q, exact_bases);
  llvm::Value* value = ScaleByPowerOfTwo(b, libm, zeta.scaled, b.CreateFNeg(zeta.exponent_hi),
                                         b.CreateFNeg(zeta.exponent_lo));
  return b.CreateSelect(zeta.special, zeta.special_value, value);
}

llvm::Value* EmitPolygamma(llvm::IRBuilderBase& b, const LibmBinaryCall& libm, llvm::Value* n,
                           llvm::Value* x, llvm::Value* digamma, bool exact_bases) {
  llvm::Type* type = n->getType();
  llvm::Constant* zero = Float(type, 0.0);
  llvm::Constant* one = Float(type, 1.0);
  const ScaledZeta zeta = EmitScaledZeta(b, libm, b.CreateFAdd(n, one), x, exact_bases);
  // n! = mantissa 2^exponent from the tables, index min(n, kMaxFactorialN + 1) as an integer;
  // the extra entry, +inf 2^0, stands for the n! long double does not hold either (the
  // reference's overflow). NaN and negative n read 0! and are replaced by NaN below.
  static const FactorialTable kFactorials = Factorials();
  std::vector<double> mantissas(kFactorials.mantissa.begin(), kFactorials.mantissa.end());
  std::vector<double> exponents(kFactorials.exponent.begin(), kFactorials.exponent.end());
  mantissas.push_back(std::numeric_limits<double>::infinity());
  exponents.push_back(0.0);
  llvm::Module& module = *b.GetInsertBlock()->getModule();
  llvm::GlobalVariable* mantissa_table = DoubleTable(module, "accy_factorial_mantissas", mantissas);
  llvm::GlobalVariable* exponent_table = DoubleTable(module, "accy_factorial_exponents", exponents);
  llvm::Value* clamped = b.CreateMinNum(n, Float(type, kMaxFactorialN + 1));
  llvm::Value* index =
      b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {b.getInt32Ty(), type}, {clamped});
  index = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, index, b.getInt32(0));
  llvm::Type* double_type = b.getDoubleTy();
  auto load = [&](llvm::GlobalVariable* table) {
    return b.CreateLoad(double_type,
                        b.CreateInBoundsGEP(table->getValueType(), table, {b.getInt32(0), index}));
  };
  llvm::Value* mantissa = load(mantissa_table);
  llvm::Value* factorial_exponent = load(exponent_table);
  // (-1)^(n+1): +1 for odd n.
  llvm::Value* half_n = b.CreateFMul(n, Float(type, 0.5));
  llvm::Value* n_even = b.CreateFCmpOEQ(Floor(b, half_n), half_n);
  llvm::Value* signed_mantissa = b.CreateSelect(n_even, b.CreateFNeg(mantissa), mantissa);
  // n!'s exponent joins zeta's scale, so neither n!, zeta's factors nor the scaled sum leave
  // double's range where the result does not (an n! beyond double's, up to 1754!, included).
  llvm::Value* value = ScaleByPowerOfTwo(b, libm, b.CreateFMul(signed_mantissa, zeta.scaled),
                                         b.CreateFSub(factorial_exponent, zeta.exponent_hi),
                                         b.CreateFNeg(zeta.exponent_lo));
  // zeta's special values are 0, +inf and NaN, which the mantissa's sign alone carries (n! * 0
  // is 0 however large n! is, where XLA's formula gives inf * 0).
  value = b.CreateSelect(zeta.special, b.CreateFMul(signed_mantissa, zeta.special_value), value);
  value = b.CreateSelect(b.CreateFCmpOEQ(n, zero), digamma, value);
  // n must be a natural number: NaN, negative, fractional and +inf n give NaN.
  llvm::Value* natural =
      b.CreateAnd(b.CreateAnd(b.CreateFCmpOGE(n, zero), b.CreateFCmpOEQ(Floor(b, n), n)),
                  b.CreateFCmpONE(n, llvm::ConstantFP::getInfinity(type)));
  return b.CreateSelect(natural, value, llvm::ConstantFP::getNaN(type));
}

}  // namespace accy::jit
