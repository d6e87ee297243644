// Reference evaluation of constant and every elementwise op (evaluator_internal.h).
//
// Each op is a direct loop over the result's elements in row-major order; the per-element
// arithmetic lives in elementwise_math.cc. convert, bitcast_convert, compare, select and clamp
// are here because their operand and result types differ or they mix operands of two shapes.
// Spec: StableHLO spec sections of the same names; choices from docs/numerics.md.
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "src/reference/elementwise_math.h"
#include "src/reference/evaluator_internal.h"
#include "src/reference/scalar.h"

namespace accy::reference {
namespace {

Status OpError(const Operation& op, const std::string& what) {
  return absl::InvalidArgumentError("reference evaluator: " + std::string(op.name()) + ": " +
                                    what);
}

Status ExpectOperandCount(const Operation& op, std::span<const Tensor> operands, size_t count) {
  if (operands.size() == count && op.num_results() == 1) return absl::OkStatus();
  return OpError(op, "expected " + std::to_string(count) + " operands and 1 result, got " +
                         std::to_string(operands.size()) + " operands and " +
                         std::to_string(op.num_results()) + " results");
}

// `t` must have `count` elements (the result's), or be a scalar when `scalar_ok`.
Status ExpectElementCount(const Operation& op, const Tensor& t, int64_t count, bool scalar_ok,
                          const char* role) {
  if (t.element_count() == count || (scalar_ok && t.rank() == 0)) return absl::OkStatus();
  return OpError(op, std::string(role) + " has type " + t.type().ToString() + " with " +
                         std::to_string(t.element_count()) + " elements, expected " +
                         std::to_string(count) + (scalar_ok ? " or a scalar" : ""));
}

Status EvaluateConstant(const Operation& op, Tensor& out) {
  const DenseElements* value = op.GetDense("value");
  if (value == nullptr) return OpError(op, "missing dense attribute 'value'");
  if (value->type != out.type() || static_cast<int64_t>(value->bytes.size()) != out.byte_size()) {
    return OpError(op, "value of type " + value->type.ToString() + " with " +
                           std::to_string(value->bytes.size()) + " bytes does not match " +
                           out.type().ToString());
  }
  if (!value->bytes.empty()) std::memcpy(out.data(), value->bytes.data(), value->bytes.size());
  if (IsBool(out.element_type())) {  // canonical 0/1 bytes whatever the payload said
    for (int64_t i = 0; i < out.element_count(); ++i) StoreBits(out, i, LoadBits(out, i));
  }
  return absl::OkStatus();
}

// convert: float -> int truncates toward zero and saturates (NaN -> 0); anything -> i1 is
// x != 0; i1 -> anything is 0/1; int -> int wraps; int -> float and float -> float round once
// to nearest even (scalar.cc rounds the exact value, so i64 -> f32/bf16 cannot double-round).
void ConvertElement(const Tensor& x, int64_t i, Tensor& out) {
  const ElementType from = x.element_type();
  const ElementType to = out.element_type();
  if (IsFloat(from)) {
    const double value = LoadFloat(x, i);
    if (IsFloat(to)) {
      StoreFloat(out, i, value);
    } else if (IsBool(to)) {
      StoreInt(out, i, value != 0 ? 1 : 0);  // NaN != 0
    } else if (std::isnan(value)) {
      StoreInt(out, i, 0);
    } else {
      const int bits = ElementBitWidth(to);
      const double truncated = std::trunc(value);
      if (IsSigned(to)) {
        const double limit = std::ldexp(1.0, bits - 1);  // 2^(bits-1), exact
        if (truncated >= limit) {
          StoreBits(out, i, WidthMask(bits - 1));  // INT_MAX
        } else if (truncated < -limit) {
          StoreBits(out, i, uint64_t{1} << (bits - 1));  // INT_MIN
        } else {
          StoreInt(out, i, static_cast<int64_t>(truncated));
        }
      } else {
        const double limit = std::ldexp(1.0, bits);  // 2^bits, exact
        if (truncated <= 0) {
          StoreBits(out, i, 0);
        } else if (truncated >= limit) {
          StoreBits(out, i, WidthMask(bits));
        } else {
          StoreBits(out, i, static_cast<uint64_t>(truncated));
        }
      }
    }
    return;
  }
  const int64_t value = LoadInt(x, i);  // i1 loads as 0/1
  if (IsFloat(to)) {
    StoreIntAsFloat(out, i, value, !IsSigned(from));
  } else if (IsBool(to)) {
    StoreInt(out, i, value != 0 ? 1 : 0);
  } else {
    StoreInt(out, i, value);  // wraps to the result width
  }
}

// bitcast_convert: the operand's bytes reinterpreted (little-endian; with different widths the
// spec's trailing dim holds the narrower elements, which is exactly the row-major byte order).
// i1 is one bit (spec "bitcast_convert", num_bits(i1) = 1): element i of the i1 side is bit
// i % 8 of byte i / 8 of the other side (the StableHLO interpreter's order, LSB first).
Status EvaluateBitcastConvert(const Operation& op, const Tensor& x, Tensor& out) {
  const bool from_bool = IsBool(x.element_type());
  const bool to_bool = IsBool(out.element_type());
  const int64_t packed_bytes = from_bool ? out.byte_size() : x.byte_size();
  const int64_t bools = from_bool ? x.element_count() : out.element_count();
  if (from_bool != to_bool) {
    if (bools != packed_bytes * 8) {
      return OpError(op, "operand " + x.type().ToString() + " and result " +
                             out.type().ToString() + " differ in bits");
    }
    const uint8_t* in = static_cast<const uint8_t*>(x.data());
    uint8_t* result = static_cast<uint8_t*>(out.data());
    if (from_bool) {
      for (int64_t b = 0; b < packed_bytes; ++b) {
        uint8_t byte = 0;
        for (int j = 0; j < 8; ++j) byte |= static_cast<uint8_t>((in[b * 8 + j] != 0) << j);
        result[b] = byte;
      }
    } else {
      for (int64_t i = 0; i < bools; ++i) result[i] = (in[i / 8] >> (i % 8)) & 1;
    }
    return absl::OkStatus();
  }
  if (x.byte_size() != out.byte_size()) {
    return OpError(op, "operand " + x.type().ToString() + " and result " +
                           out.type().ToString() + " differ in size");
  }
  if (x.byte_size() > 0) std::memcpy(out.data(), x.data(), static_cast<size_t>(x.byte_size()));
  return absl::OkStatus();
}

enum class Direction { kEq, kNe, kGe, kGt, kLe, kLt };
enum class CompareType { kFloat, kTotalOrder, kSigned, kUnsigned };

template <typename T>
bool CompareValues(Direction direction, T a, T b) {
  switch (direction) {
    case Direction::kEq:
      return a == b;
    case Direction::kNe:
      return a != b;
    case Direction::kGe:
      return a >= b;
    case Direction::kGt:
      return a > b;
    case Direction::kLe:
      return a <= b;
    case Direction::kLt:
      return a < b;
  }
  return false;
}

// TOTALORDER key (spec "compare"): -NaN < -Inf < -finite < -0 < +0 < +finite < +Inf < +NaN.
// Negative floats order reversed by magnitude, so their magnitude bits are flipped.
int64_t TotalOrderKey(uint64_t bits, int width) {
  const int64_t value = SignExtend(bits, width);
  return value < 0 ? value ^ static_cast<int64_t>(WidthMask(width - 1)) : value;
}

Status EvaluateCompare(const Operation& op, const Tensor& lhs, const Tensor& rhs, Tensor& out) {
  const std::string direction_name = op.GetString("comparison_direction").value_or("");
  Direction direction;
  if (direction_name == "EQ") {
    direction = Direction::kEq;
  } else if (direction_name == "NE") {
    direction = Direction::kNe;
  } else if (direction_name == "GE") {
    direction = Direction::kGe;
  } else if (direction_name == "GT") {
    direction = Direction::kGt;
  } else if (direction_name == "LE") {
    direction = Direction::kLe;
  } else if (direction_name == "LT") {
    direction = Direction::kLt;
  } else {
    return OpError(op, "unknown comparison_direction '" + direction_name + "'");
  }
  const ElementType type = lhs.element_type();
  const std::string type_name = op.GetString("compare_type").value_or("");
  CompareType compare_type;
  if (type_name.empty()) {  // the element type's default
    compare_type = IsFloat(type) ? CompareType::kFloat
                   : IsSigned(type) ? CompareType::kSigned
                                    : CompareType::kUnsigned;
  } else if (type_name == "FLOAT") {
    compare_type = CompareType::kFloat;
  } else if (type_name == "TOTALORDER") {
    compare_type = CompareType::kTotalOrder;
  } else if (type_name == "SIGNED") {
    compare_type = CompareType::kSigned;
  } else if (type_name == "UNSIGNED") {
    compare_type = CompareType::kUnsigned;
  } else {
    return OpError(op, "unknown compare_type '" + type_name + "'");
  }
  const bool float_compare =
      compare_type == CompareType::kFloat || compare_type == CompareType::kTotalOrder;
  if (float_compare != IsFloat(type)) {
    return OpError(op, "compare_type " + type_name + " does not apply to element type " +
                           std::string(ElementTypeName(type)));
  }
  const int width = ElementBitWidth(type);
  for (int64_t i = 0; i < out.element_count(); ++i) {
    bool result = false;
    switch (compare_type) {
      case CompareType::kFloat:  // quiet IEEE predicates: NaN compares false except NE
        result = CompareValues(direction, LoadFloat(lhs, i), LoadFloat(rhs, i));
        break;
      case CompareType::kTotalOrder:
        result = CompareValues(direction, TotalOrderKey(LoadBits(lhs, i), width),
                               TotalOrderKey(LoadBits(rhs, i), width));
        break;
      case CompareType::kSigned:
        result = CompareValues(direction, SignExtend(LoadBits(lhs, i), width),
                               SignExtend(LoadBits(rhs, i), width));
        break;
      case CompareType::kUnsigned:
        result = CompareValues(direction, LoadBits(lhs, i), LoadBits(rhs, i));
        break;
    }
    StoreInt(out, i, result ? 1 : 0);
  }
  return absl::OkStatus();
}

// select(pred, on_true, on_false): pred is a scalar or one i1 per element.
Status EvaluateSelect(const Operation& op, std::span<const Tensor> operands, Tensor& out) {
  const Tensor& pred = operands[0];
  const int64_t count = out.element_count();
  ACCY_RETURN_IF_ERROR(ExpectElementCount(op, pred, count, /*scalar_ok=*/true, "pred"));
  ACCY_RETURN_IF_ERROR(ExpectElementCount(op, operands[1], count, false, "on_true"));
  ACCY_RETURN_IF_ERROR(ExpectElementCount(op, operands[2], count, false, "on_false"));
  if (!IsBool(pred.element_type())) return OpError(op, "pred must be i1");
  const bool scalar_pred = pred.rank() == 0;
  for (int64_t i = 0; i < count; ++i) {
    const bool take_true = LoadBits(pred, scalar_pred ? 0 : i) != 0;
    CopyElement(take_true ? operands[1] : operands[2], i, out, i);
  }
  return absl::OkStatus();
}

// clamp(min, operand, max) = minimum(maximum(operand, min), max) with the elementwise ops'
// semantics (NaN propagates); min and max are scalars or one per element.
Status EvaluateClamp(const Operation& op, std::span<const Tensor> operands, Tensor& out) {
  const Tensor& min = operands[0];
  const Tensor& x = operands[1];
  const Tensor& max = operands[2];
  const int64_t count = out.element_count();
  ACCY_RETURN_IF_ERROR(ExpectElementCount(op, min, count, /*scalar_ok=*/true, "min"));
  ACCY_RETURN_IF_ERROR(ExpectElementCount(op, x, count, false, "operand"));
  ACCY_RETURN_IF_ERROR(ExpectElementCount(op, max, count, /*scalar_ok=*/true, "max"));
  ACCY_RETURN_IF_ERROR(CheckBinaryElementType(OpKind::kMaximum, x.element_type()));
  const bool scalar_min = min.rank() == 0;
  const bool scalar_max = max.rank() == 0;
  for (int64_t i = 0; i < count; ++i) {
    ApplyBinary(OpKind::kMaximum, x, i, min, scalar_min ? 0 : i, out, i);
    ApplyBinary(OpKind::kMinimum, out, i, max, scalar_max ? 0 : i, out, i);
  }
  return absl::OkStatus();
}

Status CheckSameElementTypes(const Operation& op, std::span<const Tensor> operands,
                             ElementType type) {
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i].element_type() != type) {
      return OpError(op, "operand " + std::to_string(i) + " has type " +
                             operands[i].type().ToString() + ", expected element type " +
                             std::string(ElementTypeName(type)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateElementwiseOp(const Operation& op,
                                                    std::span<const Tensor> operands) {
  if (op.num_results() != 1) return OpError(op, "expected 1 result");
  ACCY_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(op.result(0)->type()));
  const int64_t count = out.element_count();
  const OpKind kind = op.kind();

  if (kind == OpKind::kConstant) {
    ACCY_RETURN_IF_ERROR(ExpectOperandCount(op, operands, 0));
    ACCY_RETURN_IF_ERROR(EvaluateConstant(op, out));
  } else if (kind == OpKind::kConvert) {
    ACCY_RETURN_IF_ERROR(ExpectOperandCount(op, operands, 1));
    ACCY_RETURN_IF_ERROR(ExpectElementCount(op, operands[0], count, false, "operand"));
    for (int64_t i = 0; i < count; ++i) ConvertElement(operands[0], i, out);
  } else if (kind == OpKind::kBitcastConvert) {
    ACCY_RETURN_IF_ERROR(ExpectOperandCount(op, operands, 1));
    ACCY_RETURN_IF_ERROR(EvaluateBitcastConvert(op, operands[0], out));
  } else if (kind == OpKind::kCompare) {
    ACCY_RETURN_IF_ERROR(ExpectOperandCount(op, operands, 2));
    ACCY_RETURN_IF_ERROR(CheckSameElementTypes(op, operands, operands[0].element_type()));
    ACCY_RETURN_IF_ERROR(ExpectElementCount(op, operands[0], count, false, "lhs"));
    ACCY_RETURN_IF_ERROR(ExpectElementCount(op, operands[1], count, false, "rhs"));
    ACCY_RETURN_IF_ERROR(EvaluateCompare(op, operands[0], operands[1], out));
  } else if (kind == OpKind::kSelect) {
    ACCY_RETURN_IF_ERROR(ExpectOperandCount(op, operands, 3));
    ACCY_RETURN_IF_ERROR(CheckSameElementTypes(op, operands.subspan(1), out.element_type()));
    ACCY_RETURN_IF_ERROR(EvaluateSelect(op, operands, out));
  } else if (kind == OpKind::kClamp) {
    ACCY_RETURN_IF_ERROR(ExpectOperandCount(op, operands, 3));
    ACCY_RETURN_IF_ERROR(CheckSameElementTypes(op, operands, out.element_type()));
    ACCY_RETURN_IF_ERROR(EvaluateClamp(op, operands, out));
  } else if (kind == OpKind::kReducePrecision) {
    ACCY_RETURN_IF_ERROR(ExpectOperandCount(op, operands, 1));
    ACCY_RETURN_IF_ERROR(CheckUnaryElementType(kind, operands[0].element_type()));
    ACCY_RETURN_IF_ERROR(ExpectElementCount(op, operands[0], count, false, "operand"));
    const std::optional<int64_t> exponent_bits = op.GetInt("exponent_bits");
    const std::optional<int64_t> mantissa_bits = op.GetInt("mantissa_bits");
    if (!exponent_bits || !mantissa_bits || *exponent_bits < 1 || *exponent_bits > 64 ||
        *mantissa_bits < 0 || *mantissa_bits > 64) {
      return OpError(op, "needs int attributes exponent_bits (1..64) and mantissa_bits (0..64)");
    }
    const FloatFormat format = FormatOf(operands[0].element_type());
    for (int64_t i = 0; i < count; ++i) {
      StoreBits(out, i, ReducePrecisionBits(LoadBits(operands[0], i), format, *exponent_bits,
                                            *mantissa_bits));
    }
  } else if (IsElementwiseUnary(kind)) {
    ACCY_RETURN_IF_ERROR(ExpectOperandCount(op, operands, 1));
    ACCY_RETURN_IF_ERROR(CheckUnaryElementType(kind, operands[0].element_type()));
    ACCY_RETURN_IF_ERROR(ExpectElementCount(op, operands[0], count, false, "operand"));
    const ElementType expected =
        kind == OpKind::kIsFinite || kind == OpKind::kIsInf || kind == OpKind::kIsPosInf ||
                kind == OpKind::kIsNegInf
            ? ElementType::kI1
            : operands[0].element_type();
    if (out.element_type() != expected) {
      return OpError(op, "result type " + out.type().ToString() + " has the wrong element type");
    }
    for (int64_t i = 0; i < count; ++i) ApplyUnary(kind, operands[0], i, out, i);
  } else if (IsElementwiseBinary(kind)) {
    ACCY_RETURN_IF_ERROR(ExpectOperandCount(op, operands, 2));
    ACCY_RETURN_IF_ERROR(CheckSameElementTypes(op, operands, out.element_type()));
    ACCY_RETURN_IF_ERROR(CheckBinaryElementType(kind, out.element_type()));
    ACCY_RETURN_IF_ERROR(ExpectElementCount(op, operands[0], count, false, "lhs"));
    ACCY_RETURN_IF_ERROR(ExpectElementCount(op, operands[1], count, false, "rhs"));
    for (int64_t i = 0; i < count; ++i) ApplyBinary(kind, operands[0], i, operands[1], i, out, i);
  } else {
    return absl::InternalError("reference evaluator: " + std::string(op.name()) +
                               " is not an elementwise op");
  }
  std::vector<Tensor> results;
  results.push_back(std::move(out));
  return results;
}

}  // namespace accy::reference
