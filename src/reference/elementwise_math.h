// Per-element arithmetic of the reference evaluator's elementwise ops (elementwise_math.cc),
// shared with reduce's short-cut for single-op bodies (reduction_ops.cc).
//
// Semantics: the StableHLO spec sections of each op, with docs/numerics.md where the spec
// leaves a choice. f64 computes in double, f32 in float, f16/bf16 in float rounded once; integers
// wrap modulo 2^bits with no C++ undefined behaviour. Thread-safe (no state).
#ifndef ACCY_SRC_REFERENCE_ELEMENTWISE_MATH_H_
#define ACCY_SRC_REFERENCE_ELEMENTWISE_MATH_H_

#include <cstdint>

#include "accy/ir.h"
#include "accy/status.h"
#include "accy/tensor.h"
#include "src/util/float_format.h"

namespace accy::reference {

// kInvalidArgument naming the op and type unless unary op `kind` (abs .. popcnt, not convert or
// bitcast_convert) is defined by the spec for element type `type`.
Status CheckUnaryElementType(OpKind kind, ElementType type);
// out[io] = kind(x[ix]). `out` has x's element type (i1 for is_finite and the is_*inf
// tests). Checked types only; not reduce_precision (ReducePrecisionBits, with its attributes).
void ApplyUnary(OpKind kind, const Tensor& x, int64_t ix, Tensor& out, int64_t io);

// reduce_precision (spec "reduce_precision") of one element's bits in format `from`, to
// `exponent_bits` (1..64) and `mantissa_bits` (0..64) and back: round to nearest even, +-inf on
// overflow, +-0 below the reduced format's smallest normal, NaN kept (+inf when mantissa_bits
// is 0), as the StableHLO interpreter and XLA compute it.
uint64_t ReducePrecisionBits(uint64_t bits, FloatFormat from, int64_t exponent_bits,
                             int64_t mantissa_bits);

// chlo.next_after of two elements' bits in `format`: NaN if either is NaN (the NaN operand),
// `to` when equal (so +0 toward -0 is -0), else one step of the sign-magnitude encoding.
uint64_t NextAfterBits(uint64_t from_bits, uint64_t to_bits, FloatFormat format);

// As CheckUnaryElementType for the binary ops add .. shift_right_arithmetic (not compare).
Status CheckBinaryElementType(OpKind kind, ElementType type);
// out[io] = kind(a[ia], b[ib]), all of one element type. Both inputs are read before the store,
// so `out` may be `a` or `b` (reduce accumulates in place). Checked types only.
void ApplyBinary(OpKind kind, const Tensor& a, int64_t ia, const Tensor& b, int64_t ib,
                 Tensor& out, int64_t io);

}  // namespace accy::reference

#endif  // ACCY_SRC_REFERENCE_ELEMENTWISE_MATH_H_
