// Element representations and conversions of the elementwise lowering (elementwise_lowering.h):
// storage, memory and compute forms, constants, convert (float->int through
// llvm.fpto[su]i.sat: truncate, saturate, NaN -> 0; one rounding for every float narrowing), and
// the ops on an element's own bits (reduce_precision, next_after).
#include <cstring>
#include <optional>

#include "jit/elementwise_lowering.h"
#include "llvm/IR/Intrinsics.h"
#include "src/util/float_format.h"
#include "src/util/str_cat.h"

namespace accy::jit {

llvm::Type* StorageType(llvm::LLVMContext& context, ElementType type) {
  switch (type) {
    case ElementType::kF16:
      return llvm::Type::getHalfTy(context);
    case ElementType::kBF16:
      return llvm::Type::getInt16Ty(context);
    case ElementType::kF32:
      return llvm::Type::getFloatTy(context);
    case ElementType::kF64:
      return llvm::Type::getDoubleTy(context);
    case ElementType::kI1:
      return llvm::Type::getInt1Ty(context);
    default:
      return llvm::Type::getIntNTy(context, static_cast<unsigned>(ElementBitWidth(type)));
  }
}

llvm::Type* MemoryType(llvm::LLVMContext& context, ElementType type) {
  return type == ElementType::kI1 ? llvm::Type::getInt8Ty(context) : StorageType(context, type);
}

llvm::Value* ElementwiseLowering::FromMemory(llvm::Value* loaded, ElementType type) {
  if (type != ElementType::kI1) return loaded;
  return builder_.CreateICmpNE(loaded, builder_.getInt8(0));
}

llvm::Value* ElementwiseLowering::ToMemory(llvm::Value* value, ElementType type) {
  if (type != ElementType::kI1) return value;
  return builder_.CreateZExt(value, builder_.getInt8Ty());
}

llvm::Value* ElementwiseLowering::ConstantElement(ElementType type, const uint8_t* bytes) {
  uint64_t bits = 0;
  std::memcpy(&bits, bytes, static_cast<size_t>(ElementByteWidth(type)));
  llvm::LLVMContext& context = module_.getContext();
  const unsigned width = static_cast<unsigned>(ElementByteWidth(type) * 8);
  switch (type) {
    case ElementType::kI1:
      return builder_.getInt1(bits != 0);
    case ElementType::kF16:
      return llvm::ConstantFP::get(context,
                                   llvm::APFloat(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits)));
    case ElementType::kF32:
      return llvm::ConstantFP::get(
          context, llvm::APFloat(llvm::APFloat::IEEEsingle(), llvm::APInt(32, bits)));
    case ElementType::kF64:
      return llvm::ConstantFP::get(
          context, llvm::APFloat(llvm::APFloat::IEEEdouble(), llvm::APInt(64, bits)));
    default:  // integers and bf16 bits
      return llvm::ConstantInt::get(llvm::Type::getIntNTy(context, width), bits);
  }
}

llvm::Value* ElementwiseLowering::ToCompute(llvm::Value* value, ElementType type) {
  if (type == ElementType::kF16) return builder_.CreateFPExt(value, builder_.getFloatTy());
  if (type == ElementType::kBF16) {
    llvm::Value* wide = builder_.CreateShl(builder_.CreateZExt(value, builder_.getInt32Ty()), 16);
    return builder_.CreateBitCast(wide, builder_.getFloatTy());
  }
  return value;
}

// f32 -> bf16 bits, nearest even, in integer arithmetic: x86's vcvtneps2bf16 flushes subnormal
// inputs to zero, which IEEE bf16 results must not do. NaN keeps its sign and leading payload
// bits and is made quiet.
llvm::Value* ElementwiseLowering::FloatToBf16Bits(llvm::Value* value) {
  llvm::Value* bits = builder_.CreateBitCast(value, builder_.getInt32Ty());
  llvm::Value* upper = builder_.CreateLShr(bits, 16);
  llvm::Value* lsb = builder_.CreateAnd(upper, 1);
  llvm::Value* bias = builder_.CreateAdd(lsb, builder_.getInt32(0x7FFF));
  llvm::Value* rounded = builder_.CreateLShr(builder_.CreateAdd(bits, bias), 16);
  llvm::Value* quiet_nan = builder_.CreateOr(upper, 0x40);
  llvm::Value* is_nan = builder_.CreateFCmpUNO(value, value);
  return builder_.CreateTrunc(builder_.CreateSelect(is_nan, quiet_nan, rounded),
                              builder_.getInt16Ty());
}

llvm::Value* ElementwiseLowering::FromCompute(llvm::Value* value, ElementType type) {
  if (type == ElementType::kF16) return builder_.CreateFPTrunc(value, builder_.getHalfTy());
  if (type == ElementType::kBF16) return FloatToBf16Bits(value);
  return value;
}

// f64 -> f32 rounding to odd: an inexact result gets its last bit set after truncation toward
// zero. A second rounding of it to f16/bf16 (>= 2 bits narrower) is then correctly rounded.
llvm::Value* ElementwiseLowering::RoundToOddF32(llvm::Value* value) {
  llvm::Value* nearest = builder_.CreateFPTrunc(value, builder_.getFloatTy());
  llvm::Value* back = builder_.CreateFPExt(nearest, builder_.getDoubleTy());
  llvm::Value* inexact = builder_.CreateFCmpONE(back, value);
  llvm::Value* away =
      builder_.CreateFCmpOGT(builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                             builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, value));
  llvm::Value* bits = builder_.CreateBitCast(nearest, builder_.getInt32Ty());
  llvm::Value* toward_zero =
      builder_.CreateSelect(away, builder_.CreateSub(bits, builder_.getInt32(1)), bits);
  llvm::Value* odd = builder_.CreateOr(toward_zero, 1);
  return builder_.CreateBitCast(builder_.CreateSelect(inexact, odd, bits), builder_.getFloatTy());
}

// Integer (storage form) -> float type, rounded once. Integers of 32+ bits going to bf16 keep
// their top 24 bits plus a sticky bit so the f32 step is exact and only the final step rounds.
llvm::Value* ElementwiseLowering::IntToFloat(llvm::Value* value, ElementType from, ElementType to) {
  const bool is_signed = IsSigned(from);
  auto direct = [&](llvm::Type* target) {
    return is_signed ? builder_.CreateSIToFP(value, target) : builder_.CreateUIToFP(value, target);
  };
  switch (to) {
    case ElementType::kF32:
      return direct(builder_.getFloatTy());
    case ElementType::kF64:
      return direct(builder_.getDoubleTy());
    case ElementType::kF16:  // exact in f32 below 2^24; anything larger is +-inf in f16 anyway
      return builder_.CreateFPTrunc(direct(builder_.getFloatTy()), builder_.getHalfTy());
    default:
      break;
  }
  if (ElementBitWidth(from) < 32) return FloatToBf16Bits(direct(builder_.getFloatTy()));
  llvm::Type* i64 = builder_.getInt64Ty();
  llvm::Value* wide = is_signed ? builder_.CreateSExt(value, i64) : builder_.CreateZExt(value, i64);
  llvm::Value* negative =
      is_signed ? builder_.CreateICmpSLT(wide, builder_.getInt64(0)) : builder_.getFalse();
  llvm::Value* magnitude =
      builder_.CreateSelect(negative, builder_.CreateSub(builder_.getInt64(0), wide), wide);
  llvm::Value* leading =
      builder_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, magnitude, builder_.getFalse());
  // shift = max(0, bit_length - 24), bit_length = 64 - leading.
  llvm::Value* excess = builder_.CreateSub(builder_.getInt64(40), leading);
  llvm::Value* shift = builder_.CreateSelect(builder_.CreateICmpSGT(excess, builder_.getInt64(0)),
                                             excess, builder_.getInt64(0));
  llvm::Value* kept = builder_.CreateLShr(magnitude, shift);
  llvm::Value* low_mask =
      builder_.CreateSub(builder_.CreateShl(builder_.getInt64(1), shift), builder_.getInt64(1));
  llvm::Value* sticky = builder_.CreateZExt(
      builder_.CreateICmpNE(builder_.CreateAnd(magnitude, low_mask), builder_.getInt64(0)), i64);
  llvm::Value* exact =
      builder_.CreateUIToFP(builder_.CreateOr(kept, sticky), builder_.getFloatTy());
  // 2^shift as f32 bits: (shift + 127) << 23, shift <= 40.
  llvm::Value* scale = builder_.CreateBitCast(
      builder_.CreateShl(builder_.CreateTrunc(builder_.CreateAdd(shift, builder_.getInt64(127)),
                                              builder_.getInt32Ty()),
                         23),
      builder_.getFloatTy());
  llvm::Value* scaled = builder_.CreateFMul(exact, scale);  // exact: a power of two
  llvm::Value* signed_value = builder_.CreateSelect(negative, builder_.CreateFNeg(scaled), scaled);
  return FloatToBf16Bits(signed_value);
}

llvm::Value* ElementwiseLowering::Convert(llvm::Value* value, ElementType from, ElementType to) {
  llvm::Type* target = StorageType(module_.getContext(), to);
  if (from == to) return value;
  if (IsFloat(from)) {
    llvm::Value* wide = ToCompute(value, from);  // float or double, exact
    if (to == ElementType::kI1) {
      return builder_.CreateFCmpUNE(wide, llvm::ConstantFP::get(wide->getType(), 0.0));
    }
    if (!IsFloat(to)) {
      const auto id = IsSigned(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
      return builder_.CreateIntrinsic(id, {target, wide->getType()}, {wide});
    }
    if (to == ElementType::kF64) return builder_.CreateFPExt(wide, target);
    if (wide->getType()->isDoubleTy()) {
      if (to == ElementType::kF32) return builder_.CreateFPTrunc(wide, target);
      wide = RoundToOddF32(wide);
    }
    return to == ElementType::kF32 ? wide : FromCompute(wide, to);
  }
  // Integer or i1 source.
  if (IsFloat(to)) {
    if (from == ElementType::kI1) {
      llvm::Value* f = builder_.CreateUIToFP(value, builder_.getFloatTy());
      return to == ElementType::kF64 ? builder_.CreateFPExt(f, target) : FromCompute(f, to);
    }
    return IntToFloat(value, from, to);
  }
  if (to == ElementType::kI1) {
    return builder_.CreateICmpNE(value, llvm::ConstantInt::get(value->getType(), 0));
  }
  const unsigned from_bits = value->getType()->getIntegerBitWidth();
  const unsigned to_bits = target->getIntegerBitWidth();
  if (to_bits < from_bits) return builder_.CreateTrunc(value, target);
  if (to_bits == from_bits) return value;  // signed <-> unsigned: same bits
  return IsSigned(from) ? builder_.CreateSExt(value, target) : builder_.CreateZExt(value, target);
}

llvm::Value* ElementwiseLowering::ToBits(llvm::Value* value, ElementType type) {
  llvm::Type* int_type = builder_.getIntNTy(static_cast<unsigned>(ElementBitWidth(type)));
  return value->getType() == int_type ? value : builder_.CreateBitCast(value, int_type);
}

llvm::Value* ElementwiseLowering::FromBits(llvm::Value* bits, ElementType type) {
  llvm::Type* storage = StorageType(module_.getContext(), type);
  return storage == bits->getType() ? bits : builder_.CreateBitCast(bits, storage);
}

StatusOr<llvm::Value*> ElementwiseLowering::ReducePrecision(const Operation& op, ElementType type,
                                                            llvm::Value* x) {
  const std::optional<int64_t> exponent_bits = op.GetInt("exponent_bits");
  const std::optional<int64_t> mantissa_bits = op.GetInt("mantissa_bits");
  if (!IsFloat(type) || !exponent_bits || !mantissa_bits || *exponent_bits < 1 ||
      *mantissa_bits < 0) {
    return absl::InvalidArgumentError(
        "jit: reduce_precision needs a float operand and int attributes exponent_bits >= 1, "
        "mantissa_bits >= 0");
  }
  const FloatFormat format = FormatOf(type);
  const unsigned exponent = static_cast<unsigned>(format.exponent_bits);
  const unsigned mantissa = static_cast<unsigned>(format.mantissa_bits);
  const unsigned width = 1 + exponent + mantissa;
  llvm::Type* t = builder_.getIntNTy(width);
  auto constant = [&](uint64_t v) { return llvm::ConstantInt::get(t, v); };
  const uint64_t exponent_mask = ((uint64_t{1} << exponent) - 1) << mantissa;
  llvm::Value* bits = ToBits(x, type);
  llvm::Value* sign = builder_.CreateAnd(bits, constant(uint64_t{1} << (width - 1)));
  llvm::Value* magnitude = builder_.CreateAnd(bits, constant((uint64_t{1} << (width - 1)) - 1));
  llvm::Value* is_nan = builder_.CreateICmpUGT(magnitude, constant(exponent_mask));
  llvm::Value* result = bits;
  if (*mantissa_bits < static_cast<int64_t>(mantissa)) {
    const unsigned dropped = mantissa - static_cast<unsigned>(*mantissa_bits);
    const uint64_t last_kept = uint64_t{1} << dropped;
    llvm::Value* last_bit = builder_.CreateAnd(builder_.CreateLShr(bits, dropped), constant(1));
    llvm::Value* bias = builder_.CreateAdd(last_bit, constant((last_kept >> 1) - 1));
    result = builder_.CreateAnd(builder_.CreateAdd(bits, bias), constant(~(last_kept - 1)));
  }
  if (*exponent_bits < static_cast<int64_t>(exponent)) {
    const uint64_t bias = (uint64_t{1} << (exponent - 1)) - 1;
    const uint64_t reduced_bias = (uint64_t{1} << (*exponent_bits - 1)) - 1;
    llvm::Value* biased = builder_.CreateAnd(result, constant(exponent_mask));
    llvm::Value* overflows =
        builder_.CreateICmpUGT(biased, constant((bias + reduced_bias) << mantissa));
    llvm::Value* underflows =
        builder_.CreateICmpULE(biased, constant((bias - reduced_bias) << mantissa));
    result = builder_.CreateSelect(overflows, builder_.CreateOr(sign, constant(exponent_mask)),
                                   builder_.CreateSelect(underflows, sign, result));
  }
  // NaN stays NaN; with no mantissa bits left it has no NaN encoding and becomes +inf (either
  // sign, as the interpreter and XLA).
  llvm::Value* nan = *mantissa_bits > 0 ? bits : constant(exponent_mask);
  return FromBits(builder_.CreateSelect(is_nan, nan, result), type);
}

llvm::Value* ElementwiseLowering::NextAfter(ElementType type, llvm::Value* from_value,
                                            llvm::Value* to_value) {
  const FloatFormat format = FormatOf(type);
  const unsigned width = static_cast<unsigned>(1 + format.exponent_bits + format.mantissa_bits);
  llvm::Type* t = builder_.getIntNTy(width);
  auto constant = [&](uint64_t v) { return llvm::ConstantInt::get(t, v); };
  const uint64_t sign_bit = uint64_t{1} << (width - 1);
  const uint64_t infinity = ((uint64_t{1} << format.exponent_bits) - 1) << format.mantissa_bits;
  llvm::Value* from = ToBits(from_value, type);
  llvm::Value* to = ToBits(to_value, type);
  llvm::Value* from_magnitude = builder_.CreateAnd(from, constant(sign_bit - 1));
  llvm::Value* to_magnitude = builder_.CreateAnd(to, constant(sign_bit - 1));
  llvm::Value* from_negative =
      builder_.CreateICmpNE(builder_.CreateAnd(from, constant(sign_bit)), constant(0));
  llvm::Value* to_negative =
      builder_.CreateICmpNE(builder_.CreateAnd(to, constant(sign_bit)), constant(0));
  // Sign-magnitude to two's complement order: +0 and -0 both map to 0.
  llvm::Value* from_ordered = builder_.CreateSelect(
      from_negative, builder_.CreateSub(constant(0), from_magnitude), from_magnitude);
  llvm::Value* to_ordered = builder_.CreateSelect(
      to_negative, builder_.CreateSub(constant(0), to_magnitude), to_magnitude);
  llvm::Value* away = builder_.CreateICmpEQ(builder_.CreateICmpSLT(from_ordered, to_ordered),
                                            builder_.CreateNot(from_negative));
  llvm::Value* step = builder_.CreateSelect(away, builder_.CreateAdd(from, constant(1)),
                                            builder_.CreateSub(from, constant(1)));
  llvm::Value* off_zero =
      builder_.CreateOr(builder_.CreateAnd(to, constant(sign_bit)), constant(1));
  llvm::Value* r =
      builder_.CreateSelect(builder_.CreateICmpEQ(from_magnitude, constant(0)), off_zero, step);
  r = builder_.CreateSelect(builder_.CreateICmpEQ(from_ordered, to_ordered), to, r);
  r = builder_.CreateSelect(builder_.CreateICmpUGT(to_magnitude, constant(infinity)), to, r);
  r = builder_.CreateSelect(builder_.CreateICmpUGT(from_magnitude, constant(infinity)), from, r);
  return FromBits(r, type);
}

}  // namespace accy::jit
