// FunctionBuilder's constants and elementwise ops (include/accy/builder.h): the unary and binary
// methods, convert, bitcast_convert, reduce_precision, compare, select and clamp.
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accy/builder.h"
#include "src/ir/builder_internal.h"
#include "src/ir/type_inference.h"

namespace accy {

using ir_internal::OpError;
using ir_internal::SingleResult;
using ir_internal::TypesOf;

StatusOr<Value*> FunctionBuilder::Unary(OpKind kind, Value* x) {
  ACCY_RETURN_IF_ERROR(CheckOperands(kind, std::span<Value* const>(&x, 1)));
  ACCY_ASSIGN_OR_RETURN(auto types, ir_internal::InferredTypes(kind, TypesOf({&x, 1}), {}));
  return SingleResult(CreateOp(kind, {x}, types));
}

StatusOr<Value*> FunctionBuilder::Binary(OpKind kind, Value* lhs, Value* rhs) {
  Value* operands[] = {lhs, rhs};
  ACCY_RETURN_IF_ERROR(CheckOperands(kind, operands));
  ACCY_ASSIGN_OR_RETURN(auto types, ir_internal::InferredTypes(kind, TypesOf(operands), {}));
  return SingleResult(CreateOp(kind, {lhs, rhs}, types));
}

StatusOr<Value*> FunctionBuilder::Constant(const TensorType& type, std::span<const uint8_t> bytes) {
  DenseElements value{type, std::vector<uint8_t>(bytes.begin(), bytes.end())};
  return SingleResult(CreateOp(OpKind::kConstant, {}, {type}, {{"value", std::move(value)}}));
}

StatusOr<Value*> FunctionBuilder::Constant(const Tensor& value) {
  if (!value.valid()) return OpError(OpKind::kConstant, "the tensor has no data");
  return Constant(value.type(), value.bytes());
}

StatusOr<Value*> FunctionBuilder::ConstantScalar(ElementType type, double value) {
  ACCY_ASSIGN_OR_RETURN(TensorType scalar, TensorType::Create(type, {}));
  ACCY_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Filled(scalar, value));
  return Constant(tensor);
}

#define ACCY_UNARY_METHOD(Method, Kind) \
  StatusOr<Value*> FunctionBuilder::Method(Value* x) { return Unary(OpKind::Kind, x); }
ACCY_UNARY_METHOD(Abs, kAbs)
ACCY_UNARY_METHOD(Negate, kNegate)
ACCY_UNARY_METHOD(Sign, kSign)
ACCY_UNARY_METHOD(Not, kNot)
ACCY_UNARY_METHOD(Exponential, kExponential)
ACCY_UNARY_METHOD(ExponentialMinusOne, kExponentialMinusOne)
ACCY_UNARY_METHOD(Log, kLog)
ACCY_UNARY_METHOD(LogPlusOne, kLogPlusOne)
ACCY_UNARY_METHOD(Logistic, kLogistic)
ACCY_UNARY_METHOD(Tanh, kTanh)
ACCY_UNARY_METHOD(Sqrt, kSqrt)
ACCY_UNARY_METHOD(Rsqrt, kRsqrt)
ACCY_UNARY_METHOD(Cbrt, kCbrt)
ACCY_UNARY_METHOD(Sine, kSine)
ACCY_UNARY_METHOD(Cosine, kCosine)
ACCY_UNARY_METHOD(Floor, kFloor)
ACCY_UNARY_METHOD(Ceil, kCeil)
ACCY_UNARY_METHOD(RoundNearestEven, kRoundNearestEven)
ACCY_UNARY_METHOD(RoundNearestAfz, kRoundNearestAfz)
ACCY_UNARY_METHOD(IsFinite, kIsFinite)
ACCY_UNARY_METHOD(Popcnt, kPopcnt)
ACCY_UNARY_METHOD(CountLeadingZeros, kCountLeadingZeros)
ACCY_UNARY_METHOD(Tan, kTan)
ACCY_UNARY_METHOD(Asin, kAsin)
ACCY_UNARY_METHOD(Acos, kAcos)
ACCY_UNARY_METHOD(Atan, kAtan)
ACCY_UNARY_METHOD(Sinh, kSinh)
ACCY_UNARY_METHOD(Cosh, kCosh)
ACCY_UNARY_METHOD(Asinh, kAsinh)
ACCY_UNARY_METHOD(Acosh, kAcosh)
ACCY_UNARY_METHOD(Atanh, kAtanh)
ACCY_UNARY_METHOD(Erf, kErf)
ACCY_UNARY_METHOD(Erfc, kErfc)
ACCY_UNARY_METHOD(ErfInv, kErfInv)
ACCY_UNARY_METHOD(Lgamma, kLgamma)
ACCY_UNARY_METHOD(Digamma, kDigamma)
ACCY_UNARY_METHOD(BesselI1e, kBesselI1e)
ACCY_UNARY_METHOD(IsInf, kIsInf)
ACCY_UNARY_METHOD(IsPosInf, kIsPosInf)
ACCY_UNARY_METHOD(IsNegInf, kIsNegInf)
#undef ACCY_UNARY_METHOD

#define ACCY_BINARY_METHOD(Method, Kind)                             \
  StatusOr<Value*> FunctionBuilder::Method(Value* lhs, Value* rhs) { \
    return Binary(OpKind::Kind, lhs, rhs);                           \
  }
ACCY_BINARY_METHOD(Add, kAdd)
ACCY_BINARY_METHOD(Subtract, kSubtract)
ACCY_BINARY_METHOD(Multiply, kMultiply)
ACCY_BINARY_METHOD(Divide, kDivide)
ACCY_BINARY_METHOD(Remainder, kRemainder)
ACCY_BINARY_METHOD(Maximum, kMaximum)
ACCY_BINARY_METHOD(Minimum, kMinimum)
ACCY_BINARY_METHOD(Power, kPower)
ACCY_BINARY_METHOD(Atan2, kAtan2)
ACCY_BINARY_METHOD(NextAfter, kNextAfter)
ACCY_BINARY_METHOD(Zeta, kZeta)
ACCY_BINARY_METHOD(Polygamma, kPolygamma)
ACCY_BINARY_METHOD(Mulhi, kMulhi)
ACCY_BINARY_METHOD(And, kAnd)
ACCY_BINARY_METHOD(Or, kOr)
ACCY_BINARY_METHOD(Xor, kXor)
ACCY_BINARY_METHOD(ShiftLeft, kShiftLeft)
ACCY_BINARY_METHOD(ShiftRightLogical, kShiftRightLogical)
ACCY_BINARY_METHOD(ShiftRightArithmetic, kShiftRightArithmetic)
#undef ACCY_BINARY_METHOD

StatusOr<Value*> FunctionBuilder::Convert(Value* x, ElementType to) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kConvert, std::span<Value* const>(&x, 1)));
  // TensorType::Create, not WithElementType: `to` may be outside ElementType.
  StatusOr<TensorType> result_type = TensorType::Create(to, x->type().dims());
  if (!result_type.ok()) {
    return OpError(OpKind::kConvert, std::string(result_type.status().message()));
  }
  return SingleResult(CreateOp(OpKind::kConvert, {x}, {*result_type}));
}

StatusOr<Value*> FunctionBuilder::BitcastConvert(Value* x, const TensorType& result_type) {
  return SingleResult(CreateOp(OpKind::kBitcastConvert, {x}, {result_type}));
}

StatusOr<Value*> FunctionBuilder::ReducePrecision(Value* x, int64_t exponent_bits,
                                                  int64_t mantissa_bits) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kReducePrecision, std::span<Value* const>(&x, 1)));
  std::vector<NamedAttribute> attrs = {{"exponent_bits", exponent_bits},
                                       {"mantissa_bits", mantissa_bits}};
  ACCY_ASSIGN_OR_RETURN(
      auto types, ir_internal::InferredTypes(OpKind::kReducePrecision, TypesOf({&x, 1}), attrs));
  return SingleResult(CreateOp(OpKind::kReducePrecision, {x}, types, std::move(attrs)));
}

StatusOr<Value*> FunctionBuilder::Compare(Value* lhs, Value* rhs, std::string_view direction,
                                          std::string_view compare_type) {
  Value* operands[] = {lhs, rhs};
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kCompare, operands));
  std::vector<NamedAttribute> attrs = {{"comparison_direction", std::string(direction)}};
  if (!compare_type.empty()) attrs.push_back({"compare_type", std::string(compare_type)});
  ACCY_ASSIGN_OR_RETURN(auto types,
                        ir_internal::InferredTypes(OpKind::kCompare, TypesOf(operands), attrs));
  return SingleResult(CreateOp(OpKind::kCompare, {lhs, rhs}, types, std::move(attrs)));
}

StatusOr<Value*> FunctionBuilder::Select(Value* pred, Value* on_true, Value* on_false) {
  std::vector<Value*> operands = {pred, on_true, on_false};
  std::vector<NamedAttribute> attrs;
  ACCY_INFER_AND_CREATE(OpKind::kSelect, operands, attrs);
  return SingleResult(created);
}

StatusOr<Value*> FunctionBuilder::Clamp(Value* min, Value* x, Value* max) {
  std::vector<Value*> operands = {min, x, max};
  std::vector<NamedAttribute> attrs;
  ACCY_INFER_AND_CREATE(OpKind::kClamp, operands, attrs);
  return SingleResult(created);
}

}  // namespace accy
