// Bit-level element helpers of the reference evaluator (implemented in scalar.cc), beyond the
// Load/Store functions of evaluator_internal.h.
//
// The float rounding here is exact integer arithmetic, independent of the host's float
// conversions and of Tensor's helpers, so the oracle does not share code with what it checks.
// Pure functions; thread-safe.
#ifndef ACCY_SRC_REFERENCE_SCALAR_H_
#define ACCY_SRC_REFERENCE_SCALAR_H_

#include <cstdint>

#include "accy/tensor.h"
#include "accy/types.h"

namespace accy::reference {

// Raw bits of element `i`, zero-extended (f16 bits, f32 bits, integer bits; i1 is 0 or 1).
uint64_t LoadBits(const Tensor& t, int64_t i);
// Stores the low ElementBitWidth bits of `bits` into element `i` (i1: bits & 1).
void StoreBits(Tensor& t, int64_t i, uint64_t bits);

// The bit pattern of float type `type` nearest (ties to even) to
// (-1)^negative * magnitude * 2^exponent; too large a value becomes infinity, too small a
// signed zero. One rounding, whatever the width of `magnitude`.
uint64_t RoundToFloatBits(ElementType type, bool negative, uint64_t magnitude, int exponent);
// The bit pattern of `value` rounded once (nearest even) to float type `type`; NaN stays NaN
// (sign and leading payload bits kept, made quiet).
uint64_t DoubleToFloatBits(ElementType type, double value);
// The exact double value of float bits `bits` of type `type`.
double FloatBitsToDouble(ElementType type, uint64_t bits);

// Stores integer `value` (read as uint64 when `is_unsigned`) rounded once, to nearest even, to
// the float element type of `t`.
void StoreIntAsFloat(Tensor& t, int64_t i, int64_t value, bool is_unsigned);

// Bit-width mask: the low `bits` bits set (bits in 1..64).
inline uint64_t WidthMask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }
// Sign-extends the low `bits` bits of `value` (bits in 1..64).
inline int64_t SignExtend(uint64_t value, int bits) {
  if (bits >= 64) return static_cast<int64_t>(value);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  value &= WidthMask(bits);
  return static_cast<int64_t>((value ^ sign) - sign);
}

}  // namespace accy::reference

#endif  // ACCY_SRC_REFERENCE_SCALAR_H_
