// Element loads and stores of the reference evaluator (evaluator_internal.h, scalar.h).
//
// Elements move through memcpy (borrowed buffers promise no alignment). f16 and bf16 are
// decoded and rounded here with exact integer arithmetic: the reference shares no conversion
// code with Tensor's helpers or the JIT.
#include <bit>
#include <cmath>
#include <cstring>

#include "src/reference/evaluator_internal.h"
#include "src/reference/scalar.h"

namespace accy::reference {
namespace {

// IEEE-style binary format parameters: stored significand bits and exponent bits.
struct FloatFormat {
  int mantissa_bits;
  int exponent_bits;
};

FloatFormat FormatOf(ElementType type) {
  switch (type) {
    case ElementType::kF16:
      return {10, 5};
    case ElementType::kBF16:
      return {7, 8};
    case ElementType::kF32:
      return {23, 8};
    case ElementType::kF64:
      return {52, 11};
    default:
      ACCY_CHECK(IsFloat(type));
      return {0, 0};
  }
}

uint8_t* ElementPointer(Tensor& t, int64_t i) {
  return static_cast<uint8_t*>(t.data()) + i * ElementByteWidth(t.element_type());
}
const uint8_t* ElementPointer(const Tensor& t, int64_t i) {
  return static_cast<const uint8_t*>(t.data()) + i * ElementByteWidth(t.element_type());
}

}  // namespace

uint64_t LoadBits(const Tensor& t, int64_t i) {
  ACCY_CHECK(i >= 0 && i < t.element_count());
  const int64_t width = ElementByteWidth(t.element_type());
  uint64_t bits = 0;
  // Little-endian host (tensor.h): the element's bytes are the low bytes of the uint64.
  std::memcpy(&bits, ElementPointer(t, i), static_cast<size_t>(width));
  if (IsBool(t.element_type())) return bits != 0 ? 1 : 0;
  return bits;
}

void StoreBits(Tensor& t, int64_t i, uint64_t bits) {
  ACCY_CHECK(i >= 0 && i < t.element_count());
  const int64_t width = ElementByteWidth(t.element_type());
  if (IsBool(t.element_type())) bits &= 1;
  std::memcpy(ElementPointer(t, i), &bits, static_cast<size_t>(width));
}

uint64_t RoundToFloatBits(ElementType type, bool negative, uint64_t magnitude, int exponent) {
  const FloatFormat format = FormatOf(type);
  const int m = format.mantissa_bits;
  const int bias = (1 << (format.exponent_bits - 1)) - 1;
  const int min_exponent = 1 - bias;
  const uint64_t max_biased = (uint64_t{1} << format.exponent_bits) - 1;  // infinity's field
  const uint64_t sign = negative ? uint64_t{1} << (m + format.exponent_bits) : 0;
  if (magnitude == 0) return sign;

  // value = magnitude * 2^exponent; its unbiased exponent is msb + exponent.
  const int msb = 63 - std::countl_zero(magnitude);
  const int value_exponent = msb + exponent;
  // Exponent of the last significand bit the result can hold (subnormals share min_exponent).
  int quantum = (value_exponent > min_exponent ? value_exponent : min_exponent) - m;
  const int shift = quantum - exponent;  // low bits of `magnitude` to round away

  uint64_t significand = 0;
  if (shift <= 0) {
    significand = magnitude << -shift;  // exact: the result has at most m + 1 bits
  } else if (shift <= 64) {
    const uint64_t kept = shift == 64 ? 0 : magnitude >> shift;
    const uint64_t rest = shift == 64 ? magnitude : magnitude & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    significand = kept;
    if (rest > half || (rest == half && (kept & 1) != 0)) ++significand;
  }  // shift > 64: magnitude < 2^64 is below half a quantum, so it rounds to zero.

  if (significand == (uint64_t{1} << (m + 1))) {  // rounding carried into a new binade
    significand >>= 1;
    ++quantum;
  }
  if (significand == 0) return sign;
  if (significand < (uint64_t{1} << m)) return sign | significand;  // subnormal
  const int64_t biased = static_cast<int64_t>(quantum) + m + bias;
  if (biased >= static_cast<int64_t>(max_biased)) return sign | (max_biased << m);  // overflow
  return sign | (static_cast<uint64_t>(biased) << m) | (significand - (uint64_t{1} << m));
}

uint64_t DoubleToFloatBits(ElementType type, double value) {
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  if (type == ElementType::kF64) return bits;
  const FloatFormat format = FormatOf(type);
  const int m = format.mantissa_bits;
  const bool negative = (bits >> 63) != 0;
  const uint64_t sign = negative ? uint64_t{1} << (m + format.exponent_bits) : 0;
  const uint64_t exponent_field = (bits >> 52) & 0x7FF;
  const uint64_t fraction = bits & WidthMask(52);
  const uint64_t all_ones = WidthMask(format.exponent_bits) << m;
  if (exponent_field == 0x7FF) {
    if (fraction == 0) return sign | all_ones;  // infinity
    // NaN: keep the leading payload bits, set the quiet bit.
    return sign | all_ones | (fraction >> (52 - m)) | (uint64_t{1} << (m - 1));
  }
  if (exponent_field == 0) return RoundToFloatBits(type, negative, fraction, -1074);
  return RoundToFloatBits(type, negative, fraction | (uint64_t{1} << 52),
                          static_cast<int>(exponent_field) - 1075);
}

double FloatBitsToDouble(ElementType type, uint64_t bits) {
  if (type == ElementType::kF64) return std::bit_cast<double>(bits);
  const FloatFormat format = FormatOf(type);
  const int m = format.mantissa_bits;
  const int bias = (1 << (format.exponent_bits - 1)) - 1;
  const bool negative = ((bits >> (m + format.exponent_bits)) & 1) != 0;
  const uint64_t exponent_field = (bits >> m) & WidthMask(format.exponent_bits);
  const uint64_t fraction = bits & WidthMask(m);
  if (exponent_field == WidthMask(format.exponent_bits)) {
    // Infinity or NaN: widen the payload into a double's fraction.
    const uint64_t wide = (negative ? uint64_t{1} << 63 : 0) | (uint64_t{0x7FF} << 52) |
                          (fraction << (52 - m));
    return std::bit_cast<double>(wide);
  }
  double magnitude = 0;
  if (exponent_field == 0) {
    magnitude = std::ldexp(static_cast<double>(fraction), 1 - bias - m);
  } else {
    magnitude = std::ldexp(static_cast<double>(fraction | (uint64_t{1} << m)),
                           static_cast<int>(exponent_field) - bias - m);
  }
  return negative ? -magnitude : magnitude;
}

double LoadFloat(const Tensor& t, int64_t linear_index) {
  ACCY_CHECK(IsFloat(t.element_type()));
  return FloatBitsToDouble(t.element_type(), LoadBits(t, linear_index));
}

int64_t LoadInt(const Tensor& t, int64_t linear_index) {
  const ElementType type = t.element_type();
  ACCY_CHECK(IsInteger(type) || IsBool(type));
  const uint64_t bits = LoadBits(t, linear_index);
  if (IsSigned(type)) return SignExtend(bits, ElementBitWidth(type));
  return static_cast<int64_t>(bits);  // zero-extended; u64 reinterpreted bit for bit
}

void StoreFloat(Tensor& t, int64_t linear_index, double value) {
  ACCY_CHECK(IsFloat(t.element_type()));
  StoreBits(t, linear_index, DoubleToFloatBits(t.element_type(), value));
}

void StoreInt(Tensor& t, int64_t linear_index, int64_t value) {
  ACCY_CHECK(IsInteger(t.element_type()) || IsBool(t.element_type()));
  StoreBits(t, linear_index, static_cast<uint64_t>(value));
}

void StoreIntAsFloat(Tensor& t, int64_t i, int64_t value, bool is_unsigned) {
  ACCY_CHECK(IsFloat(t.element_type()));
  const bool negative = !is_unsigned && value < 0;
  // Two's-complement negation in uint64 covers INT64_MIN without overflow.
  const uint64_t magnitude =
      negative ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  StoreBits(t, i, RoundToFloatBits(t.element_type(), negative, magnitude, 0));
}

void CopyElement(const Tensor& from, int64_t from_index, Tensor& to, int64_t to_index) {
  ACCY_CHECK(from.element_type() == to.element_type());
  ACCY_CHECK(from_index >= 0 && from_index < from.element_count());
  ACCY_CHECK(to_index >= 0 && to_index < to.element_count());
  std::memcpy(ElementPointer(to, to_index), ElementPointer(from, from_index),
              static_cast<size_t>(ElementByteWidth(from.element_type())));
}

}  // namespace accy::reference
