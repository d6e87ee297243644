// The generator's elementwise steps (generator_internal.h): unary and binary ops, compare and
// select, clamp, convert and bitcast_convert.
#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "src/testing/generator_internal.h"

namespace accy::fuzz::internal {

bool Generator::StepUnary(int forced) {
  static constexpr OpKind kUnary[] = {OpKind::kAbs,
                                      OpKind::kNegate,
                                      OpKind::kSign,
                                      OpKind::kNot,
                                      OpKind::kExponential,
                                      OpKind::kExponentialMinusOne,
                                      OpKind::kLog,
                                      OpKind::kLogPlusOne,
                                      OpKind::kLogistic,
                                      OpKind::kTanh,
                                      OpKind::kSqrt,
                                      OpKind::kRsqrt,
                                      OpKind::kCbrt,
                                      OpKind::kSine,
                                      OpKind::kCosine,
                                      OpKind::kFloor,
                                      OpKind::kCeil,
                                      OpKind::kRoundNearestEven,
                                      OpKind::kRoundNearestAfz,
                                      OpKind::kIsFinite,
                                      OpKind::kPopcnt,
                                      OpKind::kCountLeadingZeros,
                                      OpKind::kTan,
                                      OpKind::kReducePrecision,
                                      OpKind::kAsin,
                                      OpKind::kAcos,
                                      OpKind::kAtan,
                                      OpKind::kSinh,
                                      OpKind::kCosh,
                                      OpKind::kAsinh,
                                      OpKind::kAcosh,
                                      OpKind::kAtanh,
                                      OpKind::kErf,
                                      OpKind::kErfc,
                                      OpKind::kErfInv,
                                      OpKind::kLgamma,
                                      OpKind::kDigamma,
                                      OpKind::kBesselI1e,
                                      OpKind::kIsInf,
                                      OpKind::kIsPosInf,
                                      OpKind::kIsNegInf};
  const OpKind kind = kUnary[U(std::size(kUnary))];
  const ElementClass classes = GetOpInfo(kind).element_classes;
  // Approximate operands only where the op is well-conditioned (docs/fuzzing.md).
  Need need = kExactOnly;
  switch (kind) {
    case OpKind::kAbs:
    case OpKind::kNegate:
    case OpKind::kLogistic:
    case OpKind::kTanh:
      need = Need{};
      break;
    // An approximate argument's absolute error (|x| times its relative error) is the result's:
    // at 1e4 a 2-ulp difference of sinh(7.91) = 1363 moved sine by 2.4e-4, past the f32
    // tolerance (program 8718 of the 20,000-program run). 64 leaves room for ~20 ulp.
    case OpKind::kSine:
    case OpKind::kCosine:
      need = Need{true, 64, false};
      break;
    case OpKind::kExponential:
    case OpKind::kExponentialMinusOne:
      need = Need{true, 10, false};
      break;
    default:
      break;
  }
  int x = forced;
  if (x >= 0) {
    const FuzzValue& v = V(x);
    if (!ElementClassContains(classes, v.type.element_type()) || !Fits(v, v.type, need))
      return false;
  } else {
    const ElementType e = RandomType(classes);
    InputKind positive = InputKind::kPositive;
    const bool wants_positive =
        IsFloat(e) && (kind == OpKind::kLog || kind == OpKind::kSqrt || kind == OpKind::kRsqrt) &&
        Chance(0.6);
    const TensorType type = Type(e, RandomDims());
    x = wants_positive ? Param(type, positive) : Pick(type, need);
  }
  Unary(kind, x);
  return true;
}

bool Generator::StepBinary(int forced) {
  static constexpr OpKind kBinary[] = {OpKind::kAdd,
                                       OpKind::kSubtract,
                                       OpKind::kMultiply,
                                       OpKind::kDivide,
                                       OpKind::kRemainder,
                                       OpKind::kMaximum,
                                       OpKind::kMinimum,
                                       OpKind::kPower,
                                       OpKind::kAtan2,
                                       OpKind::kAnd,
                                       OpKind::kOr,
                                       OpKind::kXor,
                                       OpKind::kShiftLeft,
                                       OpKind::kShiftRightLogical,
                                       OpKind::kShiftRightArithmetic,
                                       OpKind::kAdd,
                                       OpKind::kMultiply,
                                       OpKind::kSubtract,
                                       OpKind::kNextAfter,
                                       OpKind::kMulhi,
                                       OpKind::kZeta,
                                       OpKind::kPolygamma};
  const OpKind kind = kBinary[U(std::size(kBinary))];
  const ElementClass classes = GetOpInfo(kind).element_classes;
  const bool stable = kind == OpKind::kAdd || kind == OpKind::kSubtract ||
                      kind == OpKind::kMaximum || kind == OpKind::kMinimum ||
                      kind == OpKind::kMultiply;
  const Need need = stable ? Need{true, kind == OpKind::kMultiply ? 1e4 : kInf, false} : kExactOnly;
  int a = forced;
  TensorType type;
  if (a >= 0) {
    const FuzzValue& v = V(a);
    if (!ElementClassContains(classes, v.type.element_type()) || !Fits(v, v.type, need))
      return false;
    type = v.type;
  } else {
    type = Type(RandomType(classes), RandomDims());
    // zeta's x mostly above its domain's edge 1 (from [0.125, 8]); polygamma's n a small
    // natural number (0 .. 16), its domain.
    const bool positive =
        (kind == OpKind::kPower || kind == OpKind::kZeta) && IsFloat(type.element_type());
    if (positive) {
      a = Param(type, InputKind::kPositive);
    } else if (kind == OpKind::kPolygamma) {
      a = Param(type, InputKind::kSmallInteger);
    } else {
      a = Pick(type, need);
    }
  }
  const int b = Pick(type, need);
  const bool ordered = kind == OpKind::kZeta || kind == OpKind::kPolygamma;  // (x, q), (n, x)
  if (Chance(0.5) && forced < 0 && !ordered) {
    Binary(kind, b, a);
  } else {
    Binary(kind, a, b);
  }
  return true;
}

bool Generator::StepCompareSelect() {
  static const char* kDirections[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  const TensorType type = Type(RandomType(ElementClass::kAny), RandomDims());
  const int a = Pick(type, kExactOnly);
  const int b = Pick(type, kExactOnly);
  std::string compare_type;
  if (IsFloat(type.element_type()) && Chance(0.1)) compare_type = "TOTALORDER";
  const int pred = Compare(a, b, kDirections[U(6)], compare_type);
  if (Chance(0.7)) {
    const TensorType value_type = type.WithElementType(RandomType(ElementClass::kAny));
    const int on_true = Pick(value_type);
    const int on_false = Pick(value_type);
    const int p = Chance(0.15) ? Pick(Type(ElementType::kI1, {}), kExactOnly) : pred;
    FuzzValue v =
        Derive({on_true, on_false}, value_type, true, std::max(V(on_true).bound, V(on_false).bound),
               V(on_true).non_finite || V(on_false).non_finite);
    AddOp("select", OpKind::kSelect, {p, on_true, on_false}, value_type, {}, v.exact, v.bound,
          v.non_finite);
  }
  return true;
}

bool Generator::StepClamp() {
  const TensorType type = Type(RandomType(ElementClass::kAny), RandomDims());
  const TensorType bound_type = Chance(0.5) ? Type(type.element_type(), {}) : type;
  const int lo = Pick(bound_type);
  const int x = Pick(type);
  const int hi = Pick(bound_type);
  AddOp("clamp", OpKind::kClamp, {lo, x, hi}, type, {}, true,
        std::max({V(lo).bound, V(x).bound, V(hi).bound}),
        V(lo).non_finite || V(x).non_finite || V(hi).non_finite);
  return true;
}

bool Generator::StepConvert() {
  const int x = Existing(ElementClass::kAny, Need{}, 0);
  const ElementType to = RandomType(ElementClass::kAny);
  if (x < 0 || V(x).type.element_type() == to) {
    const TensorType type = Type(RandomType(ElementClass::kAny), RandomDims());
    ConvertTo(Pick(type, kExactOnly), to == type.element_type() ? ElementType::kF32 : to);
    return true;
  }
  const FuzzValue& v = V(x);
  if (!v.exact && (!IsFloat(to) || v.bound > MaxFinite(to) / 4)) return false;
  ConvertTo(x, to);
  return true;
}

bool Generator::StepBitcast() {
  const ElementType e = RandomType(ElementClass::kNumeric);
  const int width = ElementBitWidth(e);
  std::vector<ElementType> same, doubled, halved;
  for (ElementType t : kAllElementTypes) {
    if (IsBool(t)) continue;
    if (ElementBitWidth(t) == width && t != e) same.push_back(t);
    if (ElementBitWidth(t) == 2 * width) doubled.push_back(t);
    if (2 * ElementBitWidth(t) == width) halved.push_back(t);
  }
  const Need need{false, kInf, true};  // float bit patterns only of values without NaN
  std::vector<int64_t> dims = RandomDims(0, 3);
  const uint64_t mode = U(3);
  if (mode == 1 && !doubled.empty()) {  // [.., 2] of e -> [..] of the doubled type
    std::vector<int64_t> in = dims;
    in.push_back(2);
    const int x = Pick(Type(e, in), need);
    AddOp("bitcast_convert", OpKind::kBitcastConvert, {x}, Type(doubled[U(doubled.size())], dims),
          {}, true, kInf, true);
  } else if (mode == 2 && !halved.empty()) {  // [..] -> [.., 2] of the halved type
    const int x = Pick(Type(e, dims), need);
    std::vector<int64_t> out = dims;
    out.push_back(2);
    AddOp("bitcast_convert", OpKind::kBitcastConvert, {x}, Type(halved[U(halved.size())], out), {},
          true, kInf, true);
  } else if (!same.empty()) {
    const int x = Pick(Type(e, dims), need);
    const ElementType to = same[U(same.size())];
    AddOp("bitcast_convert", OpKind::kBitcastConvert, {x}, Type(to, dims), {}, true, kInf,
          IsFloat(to));
  } else {
    return false;
  }
  return true;
}

}  // namespace accy::fuzz::internal
