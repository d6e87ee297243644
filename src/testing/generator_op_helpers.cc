// The generator's op helpers (generator_internal.h): unary and binary elementwise ops with the
// facts of their results (exact, bound, non-finite), compare, broadcast_in_dim and convert.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "src/testing/generator_internal.h"

namespace accy::fuzz::internal {

namespace {

bool ExactFloatUnary(OpKind kind) {
  switch (kind) {
    case OpKind::kExponential:
    case OpKind::kExponentialMinusOne:
    case OpKind::kLog:
    case OpKind::kLogPlusOne:
    case OpKind::kLogistic:
    case OpKind::kTanh:
    case OpKind::kCbrt:
    case OpKind::kSine:
    case OpKind::kCosine:
    case OpKind::kTan:
    case OpKind::kAsin:
    case OpKind::kAcos:
    case OpKind::kAtan:
    case OpKind::kSinh:
    case OpKind::kCosh:
    case OpKind::kAsinh:
    case OpKind::kAcosh:
    case OpKind::kAtanh:
    case OpKind::kErf:
    case OpKind::kErfc:
    case OpKind::kErfInv:
    case OpKind::kLgamma:
    case OpKind::kDigamma:
    case OpKind::kBesselI1e:
      return false;
    default:
      return true;
  }
}

}  // namespace

int Generator::Unary(OpKind kind, int x) {
  const FuzzValue& v = V(x);
  const ElementType e = v.type.element_type();
  const bool predicate = kind == OpKind::kIsFinite || kind == OpKind::kIsInf ||
                         kind == OpKind::kIsPosInf || kind == OpKind::kIsNegInf;
  TensorType result = predicate ? v.type.WithElementType(ElementType::kI1) : v.type;
  std::vector<NamedAttribute> attributes;
  if (kind == OpKind::kReducePrecision) {  // formats narrower and wider than the operand's
    attributes = {{"exponent_bits", static_cast<int64_t>(1 + U(11))},
                  {"mantissa_bits", static_cast<int64_t>(U(53))}};
  }
  const bool exact = !IsFloat(e) || ExactFloatUnary(kind);
  double b = v.bound;
  bool nf = v.non_finite;
  switch (kind) {
    case OpKind::kSign:
    case OpKind::kLogistic:
    case OpKind::kTanh:
    case OpKind::kSine:
    case OpKind::kCosine:
    case OpKind::kIsFinite:
    case OpKind::kIsInf:
    case OpKind::kIsPosInf:
    case OpKind::kIsNegInf:
    case OpKind::kBesselI1e:
      b = 1;
      break;
    case OpKind::kErf:
      b = 1;
      break;
    case OpKind::kErfc:
      b = 2;
      break;
    case OpKind::kAtan:
      b = 1.6;
      break;
    case OpKind::kAsin:
    case OpKind::kAcos:
      b = 3.2;
      nf = true;
      break;
    case OpKind::kAsinh:
      b = std::log(2 * b + 1) + 1;
      break;
    case OpKind::kSinh:
    case OpKind::kCosh:
      b = b > 700 ? kInf : std::cosh(b);
      break;
    case OpKind::kTan:
    case OpKind::kAcosh:
    case OpKind::kAtanh:
    case OpKind::kErfInv:
    case OpKind::kLgamma:
    case OpKind::kDigamma:
      b = kInf;
      nf = true;
      break;
    case OpKind::kExponential:
    case OpKind::kExponentialMinusOne:
      b = b > 700 ? kInf : std::exp(b);
      break;
    case OpKind::kLog:
    case OpKind::kLogPlusOne:
    case OpKind::kRsqrt:
      b = kInf;
      nf = true;
      break;
    case OpKind::kSqrt:
      b = std::sqrt(b);
      nf = true;
      break;
    case OpKind::kCbrt:
      b = std::cbrt(b);
      break;
    case OpKind::kFloor:
    case OpKind::kCeil:
    case OpKind::kRoundNearestAfz:
    case OpKind::kRoundNearestEven:
    case OpKind::kNot:
      b = b + 1;
      break;
    case OpKind::kPopcnt:
    case OpKind::kCountLeadingZeros:
      b = 64;
      break;
    default:
      break;
  }
  if (!IsFloat(result.element_type())) nf = false;
  return AddOp(std::string(OpName(kind)), kind, {x}, result, std::move(attributes), exact, b, nf);
}

int Generator::Binary(OpKind kind, int a, int b) {
  const FuzzValue& va = V(a);
  const FuzzValue& vb = V(b);
  const ElementType e = va.type.element_type();
  const bool exact = !IsFloat(e) || (kind != OpKind::kPower && kind != OpKind::kAtan2 &&
                                     kind != OpKind::kZeta && kind != OpKind::kPolygamma);
  double bound = kInf;
  bool nf = va.non_finite || vb.non_finite;
  switch (kind) {
    case OpKind::kAdd:
    case OpKind::kSubtract:
      bound = va.bound + vb.bound;
      break;
    case OpKind::kMultiply:
      bound = va.bound * vb.bound;
      break;
    case OpKind::kMaximum:
    case OpKind::kMinimum:
      bound = std::max(va.bound, vb.bound);
      break;
    case OpKind::kRemainder:
      bound = va.bound;
      nf = true;
      break;
    case OpKind::kAtan2:
      bound = 3.2;
      break;
    case OpKind::kDivide:
    case OpKind::kPower:
    case OpKind::kZeta:
    case OpKind::kPolygamma:
      nf = true;
      break;
    default:
      break;
  }
  if (!IsFloat(e)) {
    nf = false;
    if (bound > MaxFinite(e)) bound = MaxFinite(e) + 1;
  }
  return AddOp(std::string(OpName(kind)), kind, {a, b}, va.type, {}, exact, bound, nf);
}

int Generator::Compare(int a, int b, const std::string& direction,
                       const std::string& compare_type) {
  std::vector<NamedAttribute> attrs = {{"comparison_direction", direction}};
  if (!compare_type.empty()) attrs.push_back({"compare_type", compare_type});
  return AddOp("compare", OpKind::kCompare, {a, b}, V(a).type.WithElementType(ElementType::kI1),
               attrs, true, 1, false);
}

int Generator::Broadcast(int x, std::vector<int64_t> dims,
                         std::vector<int64_t> broadcast_dimensions) {
  const FuzzValue& v = V(x);
  return AddOp("broadcast_in_dim", OpKind::kBroadcastInDim, {x},
               Type(v.type.element_type(), std::move(dims)),
               {{"broadcast_dimensions", std::move(broadcast_dimensions)}}, true, v.bound,
               v.non_finite);
}

int Generator::ConvertTo(int x, ElementType to) {
  const FuzzValue& v = V(x);
  const ElementType from = v.type.element_type();
  double bound = std::min(v.bound, MaxFinite(to) + 1);
  if (IsBool(to)) bound = 1;
  if (!IsFloat(to) && !IsBool(to) && !IsFloat(from) && v.bound > MaxFinite(to))
    bound = MaxFinite(to) + 1;
  const bool nf = IsFloat(to) && (v.non_finite || v.bound > MaxFinite(to));
  // Narrowing an exact float or an integer to a float type rounds, the same on both sides.
  return AddOp("convert", OpKind::kConvert, {x}, v.type.WithElementType(to), {}, true,
               IsFloat(to) ? v.bound : bound, nf);
}

}  // namespace accy::fuzz::internal
