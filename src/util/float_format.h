// Exponent and mantissa widths of accy's float element types (IEEE 754 binary16, binary32,
// binary64 and bfloat16), for the code that works on a float's own bits: reduce_precision and
// chlo.next_after in the reference evaluator and the JIT. Header-only, constexpr.
#ifndef ACCY_SRC_UTIL_FLOAT_FORMAT_H_
#define ACCY_SRC_UTIL_FLOAT_FORMAT_H_

#include "accy/types.h"

namespace accy {

// Widths in bits; sign + exponent_bits + mantissa_bits is the element's bit width.
struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
};

// f16 5/10, bf16 8/7, f32 8/23, f64 11/52; any other type gets f64's (callers pass floats).
constexpr FloatFormat FormatOf(ElementType type) {
  switch (type) {
    case ElementType::kF16:
      return {5, 10};
    case ElementType::kBF16:
      return {8, 7};
    case ElementType::kF32:
      return {8, 23};
    default:
      return {11, 52};
  }
}

}  // namespace accy

#endif  // ACCY_SRC_UTIL_FLOAT_FORMAT_H_
