// Per-element arithmetic of the reference evaluator (see elementwise_math.h).
//
// Floats load as double (exact for every float type), convert to the compute type (double for
// f64, float otherwise: std:: functions then resolve to their float overloads), and are rounded
// once on store. Integers are handled as their zero-extended bit patterns in uint64 and masked
// to the type's width, so overflow wraps without signed-overflow UB; signed views come from
// SignExtend. i1 is an unsigned 1-bit integer except where the spec defines logical semantics
// (add is or, multiply and minimum are and, maximum is or).
#include "src/reference/elementwise_math.h"

#include <bit>
#include <cmath>
#include <string>
#include <type_traits>

#include "src/reference/evaluator_internal.h"
#include "src/reference/scalar.h"
#include "src/util/special_math.h"

namespace accy::reference {
namespace {

// The op table's element classes (accy/ops.def): the one copy type inference reads too.
Status CheckElementType(OpKind kind, ElementType type) {
  if (ElementClassContains(GetOpInfo(kind).element_classes, type)) return absl::OkStatus();
  return absl::InvalidArgumentError("reference evaluator: " + std::string(OpName(kind)) +
                                    " is not defined for element type " +
                                    std::string(ElementTypeName(type)));
}

// Round half to even without depending on the thread's rounding mode: x - trunc(x) is exact,
// and so are x / 2 and 2 * round(x / 2) at a tie.
template <typename T>
T RoundHalfToEven(T x) {
  if (std::fabs(x - std::trunc(x)) == T(0.5)) return T(2) * std::round(x / T(2));
  return std::round(x);
}

// IEEE-754 maximum/minimum (docs/numerics.md): NaN if either is NaN; -0 < +0.
template <typename T>
T IeeeMaximum(T a, T b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
template <typename T>
T IeeeMinimum(T a, T b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// Above this |x| the f32 sinh/cosh decomposition's rounding of x + log 1/2 can turn the largest
// finite results into inf: the double function instead (the JIT's choice too).
constexpr float kSinhCoshF32Limit = 88.0f;

template <typename T>
T FloatUnary(OpKind kind, T x) {
  switch (kind) {
    case OpKind::kAbs:
      return std::fabs(x);
    case OpKind::kNegate:
      return -x;
    case OpKind::kSign:  // NaN stays NaN, +-0 stays +-0
      if (std::isnan(x) || x == T(0)) return x;
      return x > T(0) ? T(1) : T(-1);
    case OpKind::kExponential:
      return std::exp(x);
    case OpKind::kExponentialMinusOne:
      return std::expm1(x);
    case OpKind::kLog:
      return std::log(x);
    case OpKind::kLogPlusOne:
      return std::log1p(x);
    case OpKind::kLogistic:
      return T(1) / (T(1) + std::exp(-x));
    case OpKind::kTanh:
      return std::tanh(x);
    case OpKind::kSqrt:
      return std::sqrt(x);
    case OpKind::kRsqrt:
      return T(1) / std::sqrt(x);
    case OpKind::kCbrt:
      return std::cbrt(x);
    case OpKind::kSine:
      return std::sin(x);
    case OpKind::kCosine:
      return std::cos(x);
    case OpKind::kFloor:
      return std::floor(x);
    case OpKind::kCeil:
      return std::ceil(x);
    case OpKind::kRoundNearestEven:
      return RoundHalfToEven(x);
    case OpKind::kRoundNearestAfz:
      return std::round(x);
    case OpKind::kTan:
      return std::tan(x);
    case OpKind::kAsin:
      return std::asin(x);
    case OpKind::kAcos:
      return std::acos(x);
    case OpKind::kAtan:
      return std::atan(x);
    // f32: CHLO's decomposition exp(x + log 1/2) +- exp(-x + log 1/2), as the JIT (sinh below
    // |x| = 1 is the double function; docs/numerics.md "CHLO").
    case OpKind::kSinh:
      if constexpr (std::is_same_v<T, float>) {
        if (std::fabs(x) < 1.0f || std::fabs(x) > kSinhCoshF32Limit) {
          return static_cast<float>(std::sinh(static_cast<double>(x)));
        }
        return std::exp(x + std::log(0.5f)) - std::exp(-x + std::log(0.5f));
      }
      return std::sinh(x);
    case OpKind::kCosh:
      if constexpr (std::is_same_v<T, float>) {
        if (std::fabs(x) > kSinhCoshF32Limit) {
          return static_cast<float>(std::cosh(static_cast<double>(x)));
        }
        return std::exp(x + std::log(0.5f)) + std::exp(-x + std::log(0.5f));
      }
      return std::cosh(x);
    case OpKind::kAsinh:
      return std::asinh(x);
    case OpKind::kAcosh:
      return std::acosh(x);
    case OpKind::kAtanh:
      return std::atanh(x);
    case OpKind::kErf:
      return std::erf(x);
    case OpKind::kErfc:
      return std::erfc(x);
    // No libm version: the double implementations, rounded once (special_math.h).
    case OpKind::kErfInv:
      return static_cast<T>(special::ErfInv(x));
    case OpKind::kLgamma:
      return static_cast<T>(special::Lgamma(x));
    case OpKind::kDigamma:
      return static_cast<T>(special::Digamma(x));
    case OpKind::kBesselI1e:
      return static_cast<T>(special::BesselI1e(x));
    default:
      ACCY_CHECK(false && "float unary op not handled");
      return x;
  }
}

// Integer unary ops on the zero-extended bits of a `bits`-wide value.
uint64_t IntUnary(OpKind kind, uint64_t x, int bits, bool is_signed, bool is_bool) {
  const uint64_t mask = WidthMask(bits);
  const int64_t sx = SignExtend(x, bits);
  switch (kind) {
    case OpKind::kAbs:
      return (is_signed && sx < 0) ? (uint64_t{0} - x) & mask : x;
    case OpKind::kNegate:
      return (uint64_t{0} - x) & mask;
    case OpKind::kSign:
      if (is_signed && sx < 0) return mask;  // -1
      return x != 0 ? 1 : 0;
    case OpKind::kNot:
      return is_bool ? (x ^ 1) : (~x & mask);
    case OpKind::kPopcnt:
      return static_cast<uint64_t>(std::popcount(x & mask));
    case OpKind::kCountLeadingZeros:  // of the `bits`-wide value, not of the uint64_t
      return static_cast<uint64_t>(std::countl_zero(x & mask) - (64 - bits));
    default:
      ACCY_CHECK(false && "integer unary op not handled");
      return 0;
  }
}

template <typename T>
T FloatBinary(OpKind kind, T a, T b) {
  switch (kind) {
    case OpKind::kAdd:
      return a + b;
    case OpKind::kSubtract:
      return a - b;
    case OpKind::kMultiply:
      return a * b;
    case OpKind::kDivide:
      return a / b;
    case OpKind::kRemainder:  // the dividend's sign, as C fmod
      return std::fmod(a, b);
    case OpKind::kMaximum:
      return IeeeMaximum(a, b);
    case OpKind::kMinimum:
      return IeeeMinimum(a, b);
    case OpKind::kPower:
      return std::pow(a, b);
    case OpKind::kAtan2:
      return std::atan2(a, b);
    // The long double functions of special_math.h, rounded once (to double, then to float for
    // f32: a double rounding the JIT's f32 kernel shares).
    case OpKind::kZeta:
      return static_cast<T>(special::Zeta(a, b));
    case OpKind::kPolygamma:
      return static_cast<T>(special::Polygamma(a, b));
    default:
      ACCY_CHECK(false && "float binary op not handled");
      return a;
  }
}

// Integer power by repeated squaring, wrapping (spec "power" for integers: a negative exponent
// gives 1 for base 1, +-1 for base -1 and 0 otherwise).
uint64_t IntPower(uint64_t base, uint64_t exponent, int bits, bool is_signed) {
  const uint64_t mask = WidthMask(bits);
  if (is_signed && SignExtend(exponent, bits) < 0) {
    const int64_t sbase = SignExtend(base, bits);
    if (sbase == 1) return 1;
    if (sbase == -1) return (exponent & 1) != 0 ? mask : 1;
    return 0;
  }
  uint64_t result = 1;
  while (exponent != 0) {
    if ((exponent & 1) != 0) result *= base;
    base *= base;
    exponent >>= 1;
  }
  return result & mask;
}

// Integer binary ops on zero-extended bit patterns (docs/numerics.md for division by zero,
// INT_MIN / -1 and out-of-range shifts).
uint64_t IntBinary(OpKind kind, uint64_t a, uint64_t b, int bits, bool is_signed, bool is_bool) {
  const uint64_t mask = WidthMask(bits);
  const int64_t sa = SignExtend(a, bits);
  const int64_t sb = SignExtend(b, bits);
  // A shift amount is out of range when negative (signed types) or >= the bit width.
  const bool shift_out_of_range =
      is_signed ? (sb < 0 || sb >= bits) : (b >= static_cast<uint64_t>(bits));
  switch (kind) {
    case OpKind::kAdd:
      return is_bool ? (a | b) : (a + b) & mask;
    case OpKind::kSubtract:
      return (a - b) & mask;
    case OpKind::kMultiply:
      return (a * b) & mask;
    case OpKind::kDivide:
      if (b == 0) return mask;                              // x / 0 = -1 (all ones)
      if (is_signed && sb == -1) return (uint64_t{0} - a) & mask;  // INT_MIN / -1 = INT_MIN
      return is_signed ? static_cast<uint64_t>(sa / sb) & mask : a / b;
    case OpKind::kRemainder:
      if (b == 0) return a;                 // x % 0 = x
      if (is_signed && sb == -1) return 0;  // INT_MIN % -1 = 0
      return is_signed ? static_cast<uint64_t>(sa % sb) & mask : a % b;
    case OpKind::kMaximum:
      if (is_signed) return sa >= sb ? a : b;
      return a >= b ? a : b;  // i1: or
    case OpKind::kMinimum:
      if (is_signed) return sa <= sb ? a : b;
      return a <= b ? a : b;  // i1: and
    case OpKind::kPower:
      return IntPower(a, b, bits, is_signed);
    case OpKind::kAnd:
      return a & b;
    case OpKind::kOr:
      return a | b;
    case OpKind::kXor:
      return a ^ b;
    case OpKind::kShiftLeft:
      return shift_out_of_range ? 0 : (a << b) & mask;
    case OpKind::kShiftRightLogical:
      return shift_out_of_range ? 0 : a >> b;
    case OpKind::kShiftRightArithmetic:
      if (shift_out_of_range) return sa < 0 ? mask : 0;  // fill with the sign bit
      return static_cast<uint64_t>(sa >> b) & mask;      // C++20: >> is arithmetic
    case OpKind::kMulhi: {  // bits [N, 2N) of the exact product, in 128-bit arithmetic
      if (is_signed) {
        const __int128 product = static_cast<__int128>(sa) * static_cast<__int128>(sb);
        return static_cast<uint64_t>(product >> bits) & mask;  // arithmetic shift
      }
      const unsigned __int128 product =
          static_cast<unsigned __int128>(a) * static_cast<unsigned __int128>(b);
      return static_cast<uint64_t>(product >> bits) & mask;
    }
    default:
      ACCY_CHECK(false && "integer binary op not handled");
      return 0;
  }
}

}  // namespace

Status CheckUnaryElementType(OpKind kind, ElementType type) {
  if (!IsElementwiseUnary(kind) || kind == OpKind::kConvert || kind == OpKind::kBitcastConvert) {
    return absl::InvalidArgumentError("reference evaluator: " + std::string(OpName(kind)) +
                                      " is not a unary arithmetic op");
  }
  return CheckElementType(kind, type);
}

Status CheckBinaryElementType(OpKind kind, ElementType type) {
  if (!IsElementwiseBinary(kind) || kind == OpKind::kCompare) {
    return absl::InvalidArgumentError("reference evaluator: " + std::string(OpName(kind)) +
                                      " is not a binary arithmetic op");
  }
  return CheckElementType(kind, type);
}

uint64_t ReducePrecisionBits(uint64_t bits, FloatFormat from, int64_t exponent_bits,
                             int64_t mantissa_bits) {
  const int width = 1 + from.exponent_bits + from.mantissa_bits;
  const uint64_t exponent_mask = ((uint64_t{1} << from.exponent_bits) - 1) << from.mantissa_bits;
  const uint64_t mantissa_mask = (uint64_t{1} << from.mantissa_bits) - 1;
  const uint64_t sign = bits & (uint64_t{1} << (width - 1));
  const bool is_nan = (bits & exponent_mask) == exponent_mask && (bits & mantissa_mask) != 0;
  // A NaN stays as it is; with no mantissa bits it becomes +inf whatever its sign (the
  // interpreter's and XLA's choice: the reduced format has no NaN).
  if (is_nan) return mantissa_bits > 0 ? bits : exponent_mask;
  uint64_t result = bits;
  if (mantissa_bits < from.mantissa_bits) {
    // Round to nearest even at the kept mantissa's last bit; a carry into the exponent is the
    // correct rounding up to the next binade (or to infinity).
    const int dropped = from.mantissa_bits - static_cast<int>(mantissa_bits);
    const uint64_t last_kept = uint64_t{1} << dropped;
    const uint64_t bias = (last_kept >> 1) - 1 + ((result & last_kept) >> dropped);
    result = (result + bias) & ~(last_kept - 1);
  }
  if (exponent_bits < from.exponent_bits) {
    const int64_t bias = (int64_t{1} << (from.exponent_bits - 1)) - 1;
    const int64_t reduced_bias = (int64_t{1} << (exponent_bits - 1)) - 1;
    const uint64_t exponent = result & exponent_mask;
    const uint64_t max_exponent = static_cast<uint64_t>(bias + reduced_bias) << from.mantissa_bits;
    const uint64_t min_exponent = static_cast<uint64_t>(bias - reduced_bias) << from.mantissa_bits;
    if (exponent > max_exponent) {
      result = sign | exponent_mask;  // overflow: +-inf
    } else if (exponent <= min_exponent) {
      result = sign;  // below the reduced format's smallest normal: +-0
    }
  }
  return result;
}

uint64_t NextAfterBits(uint64_t from_bits, uint64_t to_bits, FloatFormat format) {
  const int width = 1 + format.exponent_bits + format.mantissa_bits;
  const uint64_t sign_bit = uint64_t{1} << (width - 1);
  const uint64_t magnitude_mask = sign_bit - 1;
  const uint64_t infinity = ((uint64_t{1} << format.exponent_bits) - 1) << format.mantissa_bits;
  const uint64_t from_magnitude = from_bits & magnitude_mask;
  const uint64_t to_magnitude = to_bits & magnitude_mask;
  if (from_magnitude > infinity) return from_bits;  // NaN
  if (to_magnitude > infinity) return to_bits;
  // As sign-magnitude integers: equal values (+0 == -0 included) give `to`.
  auto ordered = [&](uint64_t bits) {
    const int64_t magnitude = static_cast<int64_t>(bits & magnitude_mask);
    return (bits & sign_bit) != 0 ? -magnitude : magnitude;
  };
  const int64_t from = ordered(from_bits);
  const int64_t to = ordered(to_bits);
  if (from == to) return to_bits;
  if (from_magnitude == 0) return (to_bits & sign_bit) | 1;  // smallest subnormal toward `to`
  // Away from zero when moving toward the same side's larger magnitude, else toward it.
  const bool away = (from < to) == ((from_bits & sign_bit) == 0);
  return away ? from_bits + 1 : from_bits - 1;
}

void ApplyUnary(OpKind kind, const Tensor& x, int64_t ix, Tensor& out, int64_t io) {
  const ElementType type = x.element_type();
  if (IsFloat(type)) {
    const double value = LoadFloat(x, ix);
    if (kind == OpKind::kIsFinite || kind == OpKind::kIsInf || kind == OpKind::kIsPosInf ||
        kind == OpKind::kIsNegInf) {
      bool holds = std::isfinite(value);
      if (kind == OpKind::kIsInf) holds = std::isinf(value);
      if (kind == OpKind::kIsPosInf) holds = std::isinf(value) && value > 0;
      if (kind == OpKind::kIsNegInf) holds = std::isinf(value) && value < 0;
      StoreInt(out, io, holds ? 1 : 0);
      return;
    }
    const double result = type == ElementType::kF64
                              ? FloatUnary<double>(kind, value)
                              : static_cast<double>(FloatUnary<float>(kind, static_cast<float>(value)));
    StoreFloat(out, io, result);
    return;
  }
  StoreBits(out, io,
            IntUnary(kind, LoadBits(x, ix), ElementBitWidth(type), IsSigned(type), IsBool(type)));
}

void ApplyBinary(OpKind kind, const Tensor& a, int64_t ia, const Tensor& b, int64_t ib,
                 Tensor& out, int64_t io) {
  const ElementType type = a.element_type();
  ACCY_CHECK(b.element_type() == type && out.element_type() == type);
  if (kind == OpKind::kNextAfter) {  // on the element type's own bits (f16/bf16 too)
    StoreBits(out, io, NextAfterBits(LoadBits(a, ia), LoadBits(b, ib), FormatOf(type)));
    return;
  }
  if (IsFloat(type)) {
    const double lhs = LoadFloat(a, ia);
    const double rhs = LoadFloat(b, ib);
    const double result =
        type == ElementType::kF64
            ? FloatBinary<double>(kind, lhs, rhs)
            : static_cast<double>(
                  FloatBinary<float>(kind, static_cast<float>(lhs), static_cast<float>(rhs)));
    StoreFloat(out, io, result);
    return;
  }
  const uint64_t lhs = LoadBits(a, ia);
  const uint64_t rhs = LoadBits(b, ib);
  StoreBits(out, io,
            IntBinary(kind, lhs, rhs, ElementBitWidth(type), IsSigned(type), IsBool(type)));
}

}  // namespace accy::reference
