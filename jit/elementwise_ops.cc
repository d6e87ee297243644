// Per-element LLVM IR of the elementwise ops (elementwise_lowering.h): the op dispatch (Emit,
// EmitChain), integer unary ops, binary arithmetic, maximum/minimum and compare. Element
// representations, conversions and the bit-level ops are in elementwise_convert.cc; the float
// unary ops and the libm/SLEEF/special-function calls in elementwise_float_math.cc.
//
// Numerics (docs/numerics.md): no fast-math flags anywhere; IEEE maximum/minimum as compares and
// selects; integer division and shifts guarded with selects so no input is
// poison or UB.
#include <string>

#include "jit/elementwise_lowering.h"
#include "llvm/IR/Intrinsics.h"
#include "src/util/str_cat.h"

namespace accy::jit {

Status UnsupportedElementwiseOp(OpKind kind, ElementType type) {
  return absl::UnimplementedError(StrCat("jit: elementwise emitter: ", OpName(kind),
                                         " on element type ", ElementTypeName(type),
                                         " is not supported"));
}

StatusOr<llvm::Value*> ElementwiseLowering::Unary(OpKind kind, ElementType type, llvm::Value* x) {
  if (IsFloat(type)) return FloatUnary(kind, type, x);
  llvm::Type* t = x->getType();
  const bool is_bool = type == ElementType::kI1;
  switch (kind) {
    case OpKind::kAbs:
      if (!IsSigned(type)) break;
      return builder_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, builder_.getFalse());
    case OpKind::kNegate:
      if (is_bool) break;
      return builder_.CreateSub(llvm::ConstantInt::get(t, 0), x);
    case OpKind::kSign: {
      if (!IsSigned(type)) break;
      llvm::Value* zero = llvm::ConstantInt::get(t, 0);
      llvm::Value* nonzero = builder_.CreateZExt(builder_.CreateICmpNE(x, zero), t);
      return builder_.CreateSelect(builder_.CreateICmpSLT(x, zero),
                                   llvm::ConstantInt::getSigned(t, -1), nonzero);
    }
    case OpKind::kNot:
      return builder_.CreateNot(x);
    case OpKind::kPopcnt:
      if (is_bool) break;
      return builder_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, x);
    case OpKind::kCountLeadingZeros:  // zero is not poison: ctlz(0) is the bit width
      if (is_bool) break;
      return builder_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, x, builder_.getFalse());
    default:
      break;
  }
  return UnsupportedElementwiseOp(kind, type);
}

// IEEE-754 maximum/minimum (docs/numerics.md): NaN if either is NaN (the first NaN operand is
// returned, as the reference does), -0 < +0. Spelled out with compares and selects rather than
// llvm.maximum/llvm.minimum: LLVM 19's x86 lowering of those dropped a NaN operand for f16
// (maximum(NaN, 0) gave 0 in a vectorized kernel), and selects vectorize to compare + blend.
llvm::Value* ElementwiseLowering::IeeeMaxMin(bool maximum, llvm::Value* a, llvm::Value* b) {
  llvm::Value* a_wins = maximum ? builder_.CreateFCmpOGT(a, b) : builder_.CreateFCmpOLT(a, b);
  llvm::Value* equal = builder_.CreateFCmpOEQ(a, b);
  const unsigned bits = a->getType()->getPrimitiveSizeInBits();
  llvm::Value* a_negative = builder_.CreateICmpSLT(
      builder_.CreateBitCast(a, builder_.getIntNTy(bits)), builder_.getIntN(bits, 0));
  // Equal values differ only for +-0: maximum prefers +0, minimum -0.
  llvm::Value* tie =
      maximum ? builder_.CreateSelect(a_negative, b, a) : builder_.CreateSelect(a_negative, a, b);
  llvm::Value* ordered = builder_.CreateSelect(equal, tie, builder_.CreateSelect(a_wins, a, b));
  llvm::Value* with_b_nan = builder_.CreateSelect(builder_.CreateFCmpUNO(b, b), b, ordered);
  return builder_.CreateSelect(builder_.CreateFCmpUNO(a, a), a, with_b_nan);
}

StatusOr<llvm::Value*> ElementwiseLowering::FloatBinary(OpKind kind, ElementType type,
                                                        llvm::Value* lhs, llvm::Value* rhs) {
  llvm::Value* a = ToCompute(lhs, type);
  llvm::Value* b = ToCompute(rhs, type);
  llvm::Value* args[] = {a, b};
  llvm::Value* r = nullptr;
  switch (kind) {
    case OpKind::kAdd:
      r = builder_.CreateFAdd(a, b);
      break;
    case OpKind::kSubtract:
      r = builder_.CreateFSub(a, b);
      break;
    case OpKind::kMultiply:
      r = builder_.CreateFMul(a, b);
      break;
    case OpKind::kDivide:
      r = builder_.CreateFDiv(a, b);
      break;
    case OpKind::kRemainder:  // fmod: the dividend's sign, exact
      r = builder_.CreateFRem(a, b);
      break;
    case OpKind::kMaximum:
    case OpKind::kMinimum:
      r = IeeeMaxMin(kind == OpKind::kMaximum, a, b);
      break;
    case OpKind::kPower:
      r = CallLibm("pow", type, args);
      break;
    case OpKind::kAtan2:
      r = CallLibm("atan2", type, args);
      break;
    case OpKind::kZeta:
    case OpKind::kPolygamma:
      r = ZetaOrPolygamma(kind, a, b);
      break;
    default:
      return UnsupportedElementwiseOp(kind, type);
  }
  return FromCompute(r, type);
}

// Integer power by squaring over every exponent bit (branch-free, so it vectorizes); a negative
// signed exponent gives 1 for base 1, +-1 for base -1 and 0 otherwise (StableHLO "power").
llvm::Value* ElementwiseLowering::IntPower(llvm::Value* base, llvm::Value* exponent,
                                           ElementType type) {
  llvm::Type* t = base->getType();
  const unsigned bits = t->getIntegerBitWidth();
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  llvm::Value* result = one;
  llvm::Value* square = base;
  for (unsigned i = 0; i < bits; ++i) {
    llvm::Value* bit = builder_.CreateICmpNE(
        builder_.CreateAnd(exponent, llvm::ConstantInt::get(t, uint64_t{1} << i)), zero);
    result = builder_.CreateSelect(bit, builder_.CreateMul(result, square), result);
    if (i + 1 < bits) square = builder_.CreateMul(square, square);
  }
  if (!IsSigned(type)) return result;
  llvm::Value* minus_one = llvm::ConstantInt::getSigned(t, -1);
  llvm::Value* odd = builder_.CreateICmpNE(builder_.CreateAnd(exponent, one), zero);
  llvm::Value* negative_result = builder_.CreateSelect(
      builder_.CreateICmpEQ(base, one), one,
      builder_.CreateSelect(builder_.CreateICmpEQ(base, minus_one),
                            builder_.CreateSelect(odd, minus_one, one), zero));
  return builder_.CreateSelect(builder_.CreateICmpSLT(exponent, zero), negative_result, result);
}

StatusOr<llvm::Value*> ElementwiseLowering::IntBinary(OpKind kind, ElementType type, llvm::Value* a,
                                                      llvm::Value* b) {
  llvm::Type* t = a->getType();
  const bool is_bool = type == ElementType::kI1;
  const bool is_signed = IsSigned(type);
  const unsigned bits = t->getIntegerBitWidth();
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  llvm::Value* all_ones = llvm::ConstantInt::getSigned(t, -1);
  switch (kind) {
    case OpKind::kAdd:
      return is_bool ? builder_.CreateOr(a, b) : builder_.CreateAdd(a, b);
    case OpKind::kSubtract:
      if (is_bool) break;
      return builder_.CreateSub(a, b);
    case OpKind::kMultiply:
      return is_bool ? builder_.CreateAnd(a, b) : builder_.CreateMul(a, b);
    case OpKind::kDivide:
    case OpKind::kRemainder: {
      if (is_bool) break;
      // x / 0 = -1, x % 0 = x, INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0; the divisor fed to the
      // instruction is never 0 or (signed) -1, so nothing traps or is poison.
      llvm::Value* by_zero = builder_.CreateICmpEQ(b, zero);
      llvm::Value* by_minus_one =
          is_signed ? builder_.CreateICmpEQ(b, all_ones) : builder_.getFalse();
      llvm::Value* safe = builder_.CreateSelect(builder_.CreateOr(by_zero, by_minus_one),
                                                llvm::ConstantInt::get(t, 1), b);
      if (kind == OpKind::kDivide) {
        llvm::Value* q = is_signed ? builder_.CreateSDiv(a, safe) : builder_.CreateUDiv(a, safe);
        llvm::Value* q2 = builder_.CreateSelect(by_minus_one, builder_.CreateSub(zero, a), q);
        return builder_.CreateSelect(by_zero, all_ones, q2);
      }
      llvm::Value* r = is_signed ? builder_.CreateSRem(a, safe) : builder_.CreateURem(a, safe);
      return builder_.CreateSelect(by_zero, a, builder_.CreateSelect(by_minus_one, zero, r));
    }
    case OpKind::kMaximum:
      return builder_.CreateBinaryIntrinsic(
          is_signed ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a, b);
    case OpKind::kMinimum:
      return builder_.CreateBinaryIntrinsic(
          is_signed ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a, b);
    case OpKind::kPower:
      if (is_bool) break;
      return IntPower(a, b, type);
    case OpKind::kAnd:
      return builder_.CreateAnd(a, b);
    case OpKind::kOr:
      return builder_.CreateOr(a, b);
    case OpKind::kXor:
      return builder_.CreateXor(a, b);
    case OpKind::kShiftLeft:
    case OpKind::kShiftRightLogical:
    case OpKind::kShiftRightArithmetic: {
      if (is_bool) break;
      // Unsigned compare: a negative signed amount is out of range too.
      llvm::Value* out_of_range = builder_.CreateICmpUGE(b, llvm::ConstantInt::get(t, bits));
      llvm::Value* amount = builder_.CreateSelect(out_of_range, zero, b);
      if (kind == OpKind::kShiftLeft) {
        return builder_.CreateSelect(out_of_range, zero, builder_.CreateShl(a, amount));
      }
      if (kind == OpKind::kShiftRightLogical) {
        return builder_.CreateSelect(out_of_range, zero, builder_.CreateLShr(a, amount));
      }
      llvm::Value* sign_fill = builder_.CreateAShr(a, llvm::ConstantInt::get(t, bits - 1));
      return builder_.CreateSelect(out_of_range, sign_fill, builder_.CreateAShr(a, amount));
    }
    case OpKind::kMulhi: {  // the double-width product's high half (its bits [N, 2N))
      if (is_bool) break;
      llvm::Type* wide = builder_.getIntNTy(2 * bits);
      llvm::Value* product =
          is_signed
              ? builder_.CreateMul(builder_.CreateSExt(a, wide), builder_.CreateSExt(b, wide))
              : builder_.CreateMul(builder_.CreateZExt(a, wide), builder_.CreateZExt(b, wide));
      return builder_.CreateTrunc(builder_.CreateLShr(product, bits), t);
    }
    default:
      break;
  }
  return UnsupportedElementwiseOp(kind, type);
}

StatusOr<llvm::Value*> ElementwiseLowering::Binary(OpKind kind, ElementType type, llvm::Value* a,
                                                   llvm::Value* b) {
  if (IsFloat(type)) return FloatBinary(kind, type, a, b);
  return IntBinary(kind, type, a, b);
}

StatusOr<llvm::Value*> ElementwiseLowering::Compare(const Operation& op, ElementType type,
                                                    llvm::Value* a, llvm::Value* b) {
  const std::string direction = op.GetString("comparison_direction").value_or("");
  std::string compare_type = op.GetString("compare_type").value_or("");
  if (compare_type.empty()) {
    compare_type = IsFloat(type) ? "FLOAT" : IsSigned(type) ? "SIGNED" : "UNSIGNED";
  }
  const int d = direction == "EQ"   ? 0
                : direction == "NE" ? 1
                : direction == "GE" ? 2
                : direction == "GT" ? 3
                : direction == "LE" ? 4
                : direction == "LT" ? 5
                                    : -1;
  if (d < 0) {
    return absl::InvalidArgumentError(
        StrCat("jit: compare: unknown comparison_direction '", direction, "'"));
  }
  using P = llvm::CmpInst::Predicate;
  const bool float_type = IsFloat(type);
  if ((compare_type == "FLOAT" || compare_type == "TOTALORDER") != float_type ||
      (compare_type != "FLOAT" && compare_type != "TOTALORDER" && compare_type != "SIGNED" &&
       compare_type != "UNSIGNED")) {
    return absl::InvalidArgumentError(StrCat("jit: compare: compare_type '", compare_type,
                                             "' does not apply to element type ",
                                             ElementTypeName(type)));
  }
  if (compare_type == "FLOAT") {  // quiet predicates: NaN is unequal to everything
    static constexpr P kFloat[] = {P::FCMP_OEQ, P::FCMP_UNE, P::FCMP_OGE,
                                   P::FCMP_OGT, P::FCMP_OLE, P::FCMP_OLT};
    return builder_.CreateFCmp(kFloat[d], ToCompute(a, type), ToCompute(b, type));
  }
  static constexpr P kSigned[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_SGE,
                                  P::ICMP_SGT, P::ICMP_SLE, P::ICMP_SLT};
  static constexpr P kUnsigned[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_UGE,
                                    P::ICMP_UGT, P::ICMP_ULE, P::ICMP_ULT};
  if (compare_type == "TOTALORDER") {
    // Negative floats order reversed by magnitude: flip their magnitude bits, compare signed.
    const unsigned bits = static_cast<unsigned>(ElementBitWidth(type));
    llvm::Type* int_type = builder_.getIntNTy(bits);
    auto key = [&](llvm::Value* v) {
      llvm::Value* raw = builder_.CreateBitCast(v, int_type);
      llvm::Value* flipped = builder_.CreateXor(
          raw, llvm::ConstantInt::get(int_type, llvm::APInt::getSignedMaxValue(bits)));
      return builder_.CreateSelect(builder_.CreateICmpSLT(raw, llvm::ConstantInt::get(int_type, 0)),
                                   flipped, raw);
    };
    return builder_.CreateICmp(kSigned[d], key(a), key(b));
  }
  return builder_.CreateICmp(compare_type == "SIGNED" ? kSigned[d] : kUnsigned[d], a, b);
}

StatusOr<llvm::Value*> ElementwiseLowering::Emit(const Operation& op,
                                                 std::span<llvm::Value* const> operands) {
  const OpKind kind = op.kind();
  const ElementType result_type = op.result(0)->type().element_type();
  const ElementType operand_type = op.num_operands() > 0
                                       ? op.operand(op.num_operands() - 1)->type().element_type()
                                       : result_type;
  switch (kind) {
    case OpKind::kConvert:
      return Convert(operands[0], op.operand(0)->type().element_type(), result_type);
    case OpKind::kBitcastConvert: {
      const ElementType from = op.operand(0)->type().element_type();
      if (from == result_type) return operands[0];
      if (from == ElementType::kI1 || result_type == ElementType::kI1 ||
          ElementBitWidth(from) != ElementBitWidth(result_type)) {
        return absl::UnimplementedError(StrCat(
            "jit: elementwise emitter: bitcast_convert from ", ElementTypeName(from), " to ",
            ElementTypeName(result_type), " is not supported (same-width non-i1 types only)"));
      }
      llvm::Type* target = StorageType(module_.getContext(), result_type);
      if (operands[0]->getType() == target) return operands[0];
      return builder_.CreateBitCast(operands[0], target);
    }
    case OpKind::kCompare:
      return Compare(op, op.operand(0)->type().element_type(), operands[0], operands[1]);
    case OpKind::kReducePrecision:
      return ReducePrecision(op, result_type, operands[0]);
    case OpKind::kNextAfter:
      if (!IsFloat(result_type)) break;
      return NextAfter(result_type, operands[0], operands[1]);
    case OpKind::kSelect:
      return builder_.CreateSelect(operands[0], operands[1], operands[2]);
    case OpKind::kClamp: {  // minimum(maximum(x, min), max), NaN propagating
      ACCY_ASSIGN_OR_RETURN(llvm::Value * low,
                            Binary(OpKind::kMaximum, result_type, operands[1], operands[0]));
      return Binary(OpKind::kMinimum, result_type, low, operands[2]);
    }
    default:
      break;
  }
  if (IsElementwiseUnary(kind)) return Unary(kind, operand_type, operands[0]);
  if (IsElementwiseBinary(kind)) return Binary(kind, result_type, operands[0], operands[1]);
  return absl::UnimplementedError(
      StrCat("jit: elementwise emitter: op ", op.name(), " is not an elementwise op"));
}

Status ElementwiseLowering::EmitChain(
    std::span<const Operation* const> chain,
    const std::function<llvm::Value*(const Operation& op, int64_t i)>& read,
    std::map<const Value*, llvm::Value*>& values) {
  for (const Operation* op : chain) {
    std::vector<llvm::Value*> args;
    for (int64_t i = 0; i < op->num_operands(); ++i) {
      auto computed = values.find(op->operand(i));
      args.push_back(computed != values.end() ? computed->second : read(*op, i));
    }
    ACCY_ASSIGN_OR_RETURN(llvm::Value * result, Emit(*op, args));
    values[op->result(0)] = result;
  }
  return absl::OkStatus();
}

}  // namespace accy::jit
