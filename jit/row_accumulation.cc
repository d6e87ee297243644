// Row reduce accumulator arithmetic (row_accumulation.h).
#include "jit/row_accumulation.h"

#include <algorithm>
#include <vector>

#include "jit/elementwise_lowering.h"
#include "llvm/IR/IRBuilder.h"

namespace accy::jit {
// The reducer of a body `return op(arg0, arg1)` (add, maximum or minimum; on i1, or and and
// count as maximum and minimum), or nullopt.
std::optional<OpKind> RowReducer(const Operation& reduce) {
  if (reduce.num_regions() != 1 || reduce.region(0)->entry_block() == nullptr) return std::nullopt;
  const Block& body = *reduce.region(0)->entry_block();
  if (body.num_arguments() != 2 || body.operations().size() != 2) return std::nullopt;
  const Operation& combine = *body.operations()[0];
  const Operation& ret = *body.operations()[1];
  if (ret.kind() != OpKind::kReturn || ret.num_operands() != 1 || combine.num_operands() != 2 ||
      combine.num_results() != 1 || ret.operand(0) != combine.result(0)) {
    return std::nullopt;
  }
  const Value* a = body.argument(0);
  const Value* b = body.argument(1);
  if (!((combine.operand(0) == a && combine.operand(1) == b) ||
        (combine.operand(0) == b && combine.operand(1) == a))) {
    return std::nullopt;
  }
  OpKind kind = combine.kind();
  if (a->type().element_type() == ElementType::kI1) {  // i1 or / and: maximum / minimum
    if (kind == OpKind::kOr) kind = OpKind::kMaximum;
    if (kind == OpKind::kAnd) kind = OpKind::kMinimum;
  }
  if (kind != OpKind::kAdd && kind != OpKind::kMaximum && kind != OpKind::kMinimum) {
    return std::nullopt;
  }
  return kind;
}


llvm::Type* RowAccumulation::LaneType(ElementType type) {
  if (type == ElementType::kF16 || type == ElementType::kBF16) return b_.getFloatTy();
  if (type == ElementType::kI1) return b_.getInt8Ty();
  return StorageType(b_.getContext(), type);
}

llvm::Type* RowAccumulation::AccType(OpKind reducer, ElementType type) {
  if (reducer == OpKind::kAdd && IsFloat(type)) return b_.getDoubleTy();
  return LaneType(type);
}

int64_t RowAccumulation::Width(OpKind reducer, ElementType type) {
  const int64_t bytes = reducer == OpKind::kAdd ? kAccumulationBytes : max_min_bytes_;
  return std::max<int64_t>(1, bytes / (LaneType(type)->getPrimitiveSizeInBits() / 8));
}

llvm::Value* RowAccumulation::ToLane(llvm::Value* v, ElementType type) {
  switch (type) {
    case ElementType::kF16:
      return b_.CreateFPExt(v, b_.getFloatTy());
    case ElementType::kBF16:
      return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), 16),
                              b_.getFloatTy());
    case ElementType::kI1:
      return b_.CreateZExt(v, b_.getInt8Ty());
    default:
      return v;
  }
}

llvm::Constant* RowAccumulation::Identity(OpKind reducer, ElementType type) {
  llvm::Type* t = LaneType(type);
  if (IsFloat(type)) {
    if (reducer == OpKind::kAdd) return llvm::ConstantFP::getNegativeZero(t);
    return llvm::ConstantFP::getInfinity(t, reducer == OpKind::kMaximum);
  }
  const unsigned bits = t->getIntegerBitWidth();
  if (reducer == OpKind::kAdd) return llvm::ConstantInt::get(t, 0);
  const bool is_signed = IsSigned(type);
  if (reducer == OpKind::kMaximum) {
    return llvm::ConstantInt::get(t, is_signed ? llvm::APInt::getSignedMinValue(bits)
                                               : llvm::APInt::getMinValue(bits));
  }
  if (type == ElementType::kI1) return llvm::ConstantInt::get(t, 1);
  return llvm::ConstantInt::get(t, is_signed ? llvm::APInt::getSignedMaxValue(bits)
                                             : llvm::APInt::getMaxValue(bits));
}

llvm::Value* RowAccumulation::Combine(OpKind reducer, ElementType type, llvm::Value* acc, llvm::Value* x) {
  if (x->getType() != acc->getType()) x = b_.CreateFPExt(x, acc->getType());
  if (IsFloat(type)) {
    if (reducer == OpKind::kAdd) return b_.CreateFAdd(acc, x);
    return IeeeMaxMin(reducer == OpKind::kMaximum, acc, x);
  }
  if (reducer == OpKind::kAdd) {
    return type == ElementType::kI1 ? b_.CreateOr(acc, x) : b_.CreateAdd(acc, x);
  }
  const bool is_signed = IsSigned(type);
  llvm::Intrinsic::ID id =
      reducer == OpKind::kMaximum ? (is_signed ? llvm::Intrinsic::smax : llvm::Intrinsic::umax)
                                  : (is_signed ? llvm::Intrinsic::smin : llvm::Intrinsic::umin);
  return b_.CreateBinaryIntrinsic(id, acc, x);
}

llvm::Value* RowAccumulation::FastMaxMin(OpKind reducer, llvm::Value* acc, llvm::Value* x) {
  llvm::Value* acc_wins =
      reducer == OpKind::kMaximum ? b_.CreateFCmpOGT(acc, x) : b_.CreateFCmpOLT(acc, x);
  return b_.CreateSelect(acc_wins, acc, x);
}

llvm::Value* RowAccumulation::NanLanes(llvm::Value* x) { return b_.CreateFCmpUNO(x, x); }

llvm::Value* RowAccumulation::Horizontal(OpKind reducer, ElementType type, llvm::Value* vector) {
  auto* vt = llvm::cast<llvm::FixedVectorType>(vector->getType());
  int width = static_cast<int>(vt->getNumElements());
  while (width > 1) {
    const int half = width / 2;
    std::vector<int> low(static_cast<size_t>(half)), high(static_cast<size_t>(half));
    for (int i = 0; i < half; ++i) {
      low[static_cast<size_t>(i)] = i;
      high[static_cast<size_t>(i)] = i + half;
    }
    vector = Combine(reducer, type, b_.CreateShuffleVector(vector, low),
                     b_.CreateShuffleVector(vector, high));
    width = half;
  }
  return b_.CreateExtractElement(vector, uint64_t{0});
}

bool RowAccumulation::Compensated(OpKind reducer, ElementType type) {
  return reducer == OpKind::kAdd && type == ElementType::kF64;
}

llvm::Value* RowAccumulation::TwoSum(llvm::Value* s, llvm::Value* x, llvm::Value** error) {
  llvm::Value* t = b_.CreateFAdd(s, x);
  llvm::Value* x_part = b_.CreateFSub(t, s);
  llvm::Value* err = b_.CreateFAdd(b_.CreateFSub(s, b_.CreateFSub(t, x_part)),
                                   b_.CreateFSub(x, x_part));
  *error = b_.CreateFAdd(*error, err);
  return t;
}

llvm::Value* RowAccumulation::CompensatedTotal(llvm::Value* sums, llvm::Value* errors, llvm::Value* init) {
  const unsigned width = llvm::cast<llvm::FixedVectorType>(sums->getType())->getNumElements();
  llvm::Value* error = b_.CreateExtractElement(errors, uint64_t{0});
  for (unsigned i = 1; i < width; ++i) {
    error = b_.CreateFAdd(error, b_.CreateExtractElement(errors, uint64_t{i}));
  }
  llvm::Value* total = b_.CreateExtractElement(sums, uint64_t{0});
  for (unsigned i = 1; i < width; ++i) {
    total = TwoSum(total, b_.CreateExtractElement(sums, uint64_t{i}), &error);
  }
  total = TwoSum(init, total, &error);
  llvm::Value* finite = b_.CreateFCmpONE(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, total),
                                         llvm::ConstantFP::getInfinity(total->getType()));
  llvm::Value* keep = b_.CreateOr(b_.CreateNot(finite),
                                  b_.CreateFCmpOEQ(error, llvm::ConstantFP::get(total->getType(), 0.0)));
  return b_.CreateSelect(keep, total, b_.CreateFAdd(total, error));
}

llvm::Value* RowAccumulation::ToStorage(llvm::Value* v, OpKind reducer, ElementType type) {
  switch (type) {
    case ElementType::kF32:
      return v->getType()->isDoubleTy() ? b_.CreateFPTrunc(v, b_.getFloatTy()) : v;
    case ElementType::kF16:
      if (v->getType()->isDoubleTy()) v = RoundToOddF32(v);
      return b_.CreateFPTrunc(v, b_.getHalfTy());
    case ElementType::kBF16:
      if (reducer != OpKind::kAdd) {  // max/min of bf16 values: exact, keep the bits
        return b_.CreateTrunc(b_.CreateLShr(b_.CreateBitCast(v, b_.getInt32Ty()), 16),
                              b_.getInt16Ty());
      }
      return FloatToBf16Bits(RoundToOddF32(v));
    case ElementType::kI1:
      return b_.CreateICmpNE(v, b_.getInt8(0));
    default:
      return v;
  }
}

llvm::Value* RowAccumulation::IeeeMaxMin(bool maximum, llvm::Value* a, llvm::Value* x) {
  llvm::Value* a_wins = maximum ? b_.CreateFCmpOGT(a, x) : b_.CreateFCmpOLT(a, x);
  llvm::Type* int_type =
      a->getType()->getWithNewType(b_.getIntNTy(a->getType()->getScalarSizeInBits()));
  llvm::Value* a_negative =
      b_.CreateICmpSLT(b_.CreateBitCast(a, int_type), llvm::Constant::getNullValue(int_type));
  llvm::Value* tie = maximum ? b_.CreateSelect(a_negative, x, a) : b_.CreateSelect(a_negative, a, x);
  llvm::Value* ordered =
      b_.CreateSelect(b_.CreateFCmpOEQ(a, x), tie, b_.CreateSelect(a_wins, a, x));
  llvm::Value* with_x_nan = b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, ordered);
  return b_.CreateSelect(b_.CreateFCmpUNO(a, a), a, with_x_nan);
}

llvm::Value* RowAccumulation::RoundToOddF32(llvm::Value* v) {
  llvm::Value* nearest = b_.CreateFPTrunc(v, b_.getFloatTy());
  llvm::Value* back = b_.CreateFPExt(nearest, b_.getDoubleTy());
  llvm::Value* away =
      b_.CreateFCmpOGT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                       b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v));
  llvm::Value* bits = b_.CreateBitCast(nearest, b_.getInt32Ty());
  llvm::Value* toward_zero = b_.CreateSelect(away, b_.CreateSub(bits, b_.getInt32(1)), bits);
  llvm::Value* odd = b_.CreateOr(toward_zero, 1);
  return b_.CreateBitCast(b_.CreateSelect(b_.CreateFCmpONE(back, v), odd, bits),
                          b_.getFloatTy());
}

llvm::Value* RowAccumulation::FloatToBf16Bits(llvm::Value* v) {
  llvm::Value* bits = b_.CreateBitCast(v, b_.getInt32Ty());
  llvm::Value* upper = b_.CreateLShr(bits, 16);
  llvm::Value* bias = b_.CreateAdd(b_.CreateAnd(upper, 1), b_.getInt32(0x7FFF));
  llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(bits, bias), 16);
  llvm::Value* quiet_nan = b_.CreateOr(upper, 0x40);
  return b_.CreateTrunc(b_.CreateSelect(b_.CreateFCmpUNO(v, v), quiet_nan, rounded),
                        b_.getInt16Ty());
}

}  // namespace accy::jit
