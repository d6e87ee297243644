// Per-element LLVM IR of every elementwise op (elementwise_lowering.h).
//
// Numerics (docs/numerics.md): no fast-math flags anywhere; IEEE maximum/minimum as compares and
// selects; integer division and shifts guarded with selects so no input is
// poison or UB; float->int through llvm.fpto[su]i.sat (truncate, saturate, NaN -> 0).
// exp, tanh and logistic computed in f32 (f32, f16, bf16) are inline polynomials (vector_math.h:
// plain IR the vectorizer widens, same bits in the vector body and the scalar tail). The other
// transcendentals, and f64, call the libm names (expf, tanh, ...) declared memory(none): the
// loop vectorizer maps them to glibc libmvec variants (JitCompiler's TargetLibraryInfo), so the
// scalar tail and the vector body may use different implementations, each within the bounds
// stated in tests/jit/elementwise_test.cc.
#include <cmath>
#include <cstring>
#include <optional>
#include <string>

#include "jit/elementwise_lowering.h"
#include "jit/special_functions.h"
#include "jit/vector_math.h"
#include "llvm/IR/Intrinsics.h"
#include "src/util/float_format.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

Status Unsupported(OpKind kind, ElementType type) {
  return absl::UnimplementedError(StrCat("jit: elementwise emitter: ", OpName(kind),
                                         " on element type ", ElementTypeName(type),
                                         " is not supported"));
}

}  // namespace

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
      return llvm::ConstantFP::get(context, llvm::APFloat(llvm::APFloat::IEEEhalf(),
                                                          llvm::APInt(16, bits)));
    case ElementType::kF32:
      return llvm::ConstantFP::get(context, llvm::APFloat(llvm::APFloat::IEEEsingle(),
                                                          llvm::APInt(32, bits)));
    case ElementType::kF64:
      return llvm::ConstantFP::get(context, llvm::APFloat(llvm::APFloat::IEEEdouble(),
                                                          llvm::APInt(64, bits)));
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
  llvm::Value* away = builder_.CreateFCmpOGT(
      builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
      builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, value));
  llvm::Value* bits = builder_.CreateBitCast(nearest, builder_.getInt32Ty());
  llvm::Value* toward_zero = builder_.CreateSelect(away, builder_.CreateSub(bits, builder_.getInt32(1)), bits);
  llvm::Value* odd = builder_.CreateOr(toward_zero, 1);
  return builder_.CreateBitCast(builder_.CreateSelect(inexact, odd, bits), builder_.getFloatTy());
}

// Integer (storage form) -> float type, rounded once. Integers of 32+ bits going to bf16 keep
// their top 24 bits plus a sticky bit so the f32 step is exact and only the final step rounds.
llvm::Value* ElementwiseLowering::IntToFloat(llvm::Value* value, ElementType from,
                                             ElementType to) {
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
  llvm::Value* leading = builder_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, magnitude,
                                                        builder_.getFalse());
  // shift = max(0, bit_length - 24), bit_length = 64 - leading.
  llvm::Value* excess = builder_.CreateSub(builder_.getInt64(40), leading);
  llvm::Value* shift = builder_.CreateSelect(builder_.CreateICmpSGT(excess, builder_.getInt64(0)),
                                             excess, builder_.getInt64(0));
  llvm::Value* kept = builder_.CreateLShr(magnitude, shift);
  llvm::Value* low_mask = builder_.CreateSub(builder_.CreateShl(builder_.getInt64(1), shift),
                                             builder_.getInt64(1));
  llvm::Value* sticky = builder_.CreateZExt(
      builder_.CreateICmpNE(builder_.CreateAnd(magnitude, low_mask), builder_.getInt64(0)), i64);
  llvm::Value* exact = builder_.CreateUIToFP(builder_.CreateOr(kept, sticky), builder_.getFloatTy());
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

llvm::Value* ElementwiseLowering::CallLibm(const char* name, ElementType type,
                                           std::span<llvm::Value* const> args) {
  const bool is_double = type == ElementType::kF64;
  llvm::Type* t = is_double ? builder_.getDoubleTy() : builder_.getFloatTy();
  const std::string symbol = is_double ? std::string(name) : StrCat(name, "f");
  std::vector<llvm::Type*> params(args.size(), t);
  llvm::FunctionCallee callee =
      module_.getOrInsertFunction(symbol, llvm::FunctionType::get(t, params, false));
  auto* function = llvm::cast<llvm::Function>(callee.getCallee());
  // No errno: the results are pure, which is what lets the vectorizer widen the call.
  function->setDoesNotAccessMemory();
  function->setDoesNotThrow();
  function->addFnAttr(llvm::Attribute::WillReturn);
  llvm::CallInst* call = builder_.CreateCall(callee, llvm::ArrayRef<llvm::Value*>(args.data(), args.size()));
  call->setDoesNotAccessMemory();
  return call;
}

llvm::Value* ElementwiseLowering::CallSpecialMath(const char* symbol, llvm::Value* x) {
  llvm::Type* double_type = builder_.getDoubleTy();
  llvm::FunctionCallee callee = module_.getOrInsertFunction(
      symbol, llvm::FunctionType::get(double_type, {double_type}, false));
  auto* function = llvm::cast<llvm::Function>(callee.getCallee());
  function->setDoesNotAccessMemory();
  function->setDoesNotThrow();
  function->addFnAttr(llvm::Attribute::WillReturn);
  const bool is_float = x->getType()->isFloatTy();
  llvm::Value* wide = is_float ? builder_.CreateFPExt(x, double_type) : x;
  llvm::CallInst* call = builder_.CreateCall(callee, {wide});
  call->setDoesNotAccessMemory();
  return is_float ? builder_.CreateFPTrunc(call, x->getType()) : call;
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
    result = builder_.CreateSelect(
        overflows, builder_.CreateOr(sign, constant(exponent_mask)),
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
  llvm::Value* from_negative = builder_.CreateICmpNE(builder_.CreateAnd(from, constant(sign_bit)),
                                                     constant(0));
  llvm::Value* to_negative = builder_.CreateICmpNE(builder_.CreateAnd(to, constant(sign_bit)),
                                                   constant(0));
  // Sign-magnitude to two's complement order: +0 and -0 both map to 0.
  llvm::Value* from_ordered = builder_.CreateSelect(
      from_negative, builder_.CreateSub(constant(0), from_magnitude), from_magnitude);
  llvm::Value* to_ordered = builder_.CreateSelect(
      to_negative, builder_.CreateSub(constant(0), to_magnitude), to_magnitude);
  llvm::Value* away = builder_.CreateICmpEQ(builder_.CreateICmpSLT(from_ordered, to_ordered),
                                            builder_.CreateNot(from_negative));
  llvm::Value* step = builder_.CreateSelect(away, builder_.CreateAdd(from, constant(1)),
                                            builder_.CreateSub(from, constant(1)));
  llvm::Value* off_zero = builder_.CreateOr(builder_.CreateAnd(to, constant(sign_bit)), constant(1));
  llvm::Value* r = builder_.CreateSelect(builder_.CreateICmpEQ(from_magnitude, constant(0)),
                                         off_zero, step);
  r = builder_.CreateSelect(builder_.CreateICmpEQ(from_ordered, to_ordered), to, r);
  r = builder_.CreateSelect(builder_.CreateICmpUGT(to_magnitude, constant(infinity)), to, r);
  r = builder_.CreateSelect(builder_.CreateICmpUGT(from_magnitude, constant(infinity)), from, r);
  return FromBits(r, type);
}

StatusOr<llvm::Value*> ElementwiseLowering::FloatUnary(OpKind kind, ElementType type,
                                                       llvm::Value* input) {
  llvm::Value* x = ToCompute(input, type);
  llvm::Type* t = x->getType();
  auto one = llvm::ConstantFP::get(t, 1.0);
  auto call = [&](const char* name) {
    llvm::Value* args[] = {x};
    return CallLibm(name, type, args);
  };
  // The double function rounded to f32: f32 libmvec variants are up to 4 ulp off and may differ
  // between the AVX2 and AVX-512 variants, while the suite holds these CHLO ops to 3 ulp
  // (docs/numerics.md "CHLO").
  auto call_wide = [&](const char* name) -> llvm::Value* {
    if (!t->isFloatTy()) return call(name);
    llvm::Value* args[] = {builder_.CreateFPExt(x, builder_.getDoubleTy())};
    return builder_.CreateFPTrunc(CallLibm(name, ElementType::kF64, args), t);
  };
  // f32 x widened to double, `emit` on it with pure libmvec-mapped double calls, rounded back.
  auto wide_special = [&](auto emit) -> llvm::Value* {
    const LibmCall libm = [&](const char* name, llvm::Value* arg) {
      llvm::Value* args[] = {arg};
      return CallLibm(name, ElementType::kF64, args);
    };
    return builder_.CreateFPTrunc(emit(builder_, libm, builder_.CreateFPExt(x, builder_.getDoubleTy())), t);
  };
  llvm::Value* r = nullptr;
  switch (kind) {
    case OpKind::kAbs:
      r = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
      break;
    case OpKind::kNegate:
      r = builder_.CreateFNeg(x);
      break;
    case OpKind::kSign: {  // NaN and +-0 map to themselves
      llvm::Value* keep = builder_.CreateOr(builder_.CreateFCmpUNO(x, x),
                                            builder_.CreateFCmpOEQ(x, llvm::ConstantFP::get(t, 0.0)));
      llvm::Value* unit = builder_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, one, x);
      r = builder_.CreateSelect(keep, x, unit);
      break;
    }
    case OpKind::kExponential:
      r = t->isFloatTy() ? EmitExpF32(builder_, x) : call("exp");
      break;
    case OpKind::kExponentialMinusOne:
      r = call("expm1");
      break;
    case OpKind::kLog:
      r = call("log");
      break;
    case OpKind::kLogPlusOne:
      r = call("log1p");
      break;
    case OpKind::kLogistic: {  // 1 / (1 + exp(-x)), as the reference
      if (t->isFloatTy()) {
        r = EmitLogisticF32(builder_, x);
        break;
      }
      llvm::Value* args[] = {builder_.CreateFNeg(x)};
      r = builder_.CreateFDiv(one, builder_.CreateFAdd(one, CallLibm("exp", type, args)));
      break;
    }
    case OpKind::kTanh:
      r = t->isFloatTy() ? EmitTanhF32(builder_, x) : call("tanh");
      break;
    case OpKind::kSqrt:
      r = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
      break;
    case OpKind::kRsqrt:  // 1 / sqrt(x): two correctly rounded steps, as the reference
      r = builder_.CreateFDiv(one, builder_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
      break;
    case OpKind::kCbrt:
      r = call("cbrt");
      break;
    case OpKind::kSine:
      r = call("sin");
      break;
    case OpKind::kCosine:
      r = call("cos");
      break;
    case OpKind::kFloor:
      r = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
      break;
    case OpKind::kCeil:
      r = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
      break;
    case OpKind::kRoundNearestEven:
      r = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);
      break;
    case OpKind::kRoundNearestAfz:
      r = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::round, x);
      break;
    case OpKind::kIsFinite:  // i1 result; NaN and +-inf are not finite
      return builder_.CreateFCmpONE(builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x),
                                    llvm::ConstantFP::getInfinity(t));
    case OpKind::kIsInf:
      return builder_.CreateFCmpOEQ(builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x),
                                    llvm::ConstantFP::getInfinity(t));
    case OpKind::kIsPosInf:
      return builder_.CreateFCmpOEQ(x, llvm::ConstantFP::getInfinity(t));
    case OpKind::kIsNegInf:
      return builder_.CreateFCmpOEQ(x, llvm::ConstantFP::getInfinity(t, /*Negative=*/true));
    // libm (vectorized through libmvec, jit_compiler.cc); f32 through the double version.
    case OpKind::kTan:
      r = call_wide("tan");
      break;
    case OpKind::kAsin:
      r = call_wide("asin");
      break;
    case OpKind::kAcos:
      r = call_wide("acos");
      break;
    case OpKind::kAtan:
      r = call_wide("atan");
      break;
    case OpKind::kSinh:
    case OpKind::kCosh: {
      if (!t->isFloatTy()) {
        r = call(kind == OpKind::kSinh ? "sinh" : "cosh");
        break;
      }
      // f32: CHLO's decomposition, exp(x + log 1/2) +- exp(-x + log 1/2) (no overflow below
      // the result's own), which is what the suite's expected values hold to 3 ulp; sinh below
      // |x| = 1 from the double function (docs/numerics.md "CHLO").
      llvm::Value* log_half = llvm::ConstantFP::get(t, static_cast<double>(std::log(0.5f)));
      llvm::Value* up_args[] = {builder_.CreateFAdd(x, log_half)};
      llvm::Value* down_args[] = {builder_.CreateFAdd(builder_.CreateFNeg(x), log_half)};
      llvm::Value* up = CallLibm("exp", type, up_args);
      llvm::Value* down = CallLibm("exp", type, down_args);
      // Above |x| = 88 the rounding of x + log 1/2 can overflow the largest finite results:
      // the double function there (reference::kSinhCoshF32Limit).
      llvm::Value* magnitude = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
      llvm::Value* huge = builder_.CreateFCmpOGT(magnitude, llvm::ConstantFP::get(t, 88.0));
      if (kind == OpKind::kCosh) {
        r = builder_.CreateSelect(huge, call_wide("cosh"), builder_.CreateFAdd(up, down));
        break;
      }
      llvm::Value* small = builder_.CreateFCmpOLT(magnitude, llvm::ConstantFP::get(t, 1.0));
      r = builder_.CreateSelect(builder_.CreateOr(small, huge), call_wide("sinh"),
                                builder_.CreateFSub(up, down));
      break;
    }
    case OpKind::kAsinh:
      r = call_wide("asinh");
      break;
    case OpKind::kAcosh:
      r = call_wide("acosh");
      break;
    case OpKind::kAtanh:
      r = call_wide("atanh");
      break;
    case OpKind::kErf: {
      if (!t->isFloatTy()) {
        r = call("erf");
        break;
      }
      const LibmCall own = [&](const char* name, llvm::Value* arg) {
        llvm::Value* args[] = {arg};
        return CallLibm(name, type, args);
      };
      r = EmitErfF32(builder_, own, x);
      break;
    }
    case OpKind::kErfc: {  // in the element's own precision, as erf
      const LibmCall own = [&](const char* name, llvm::Value* arg) {
        llvm::Value* args[] = {arg};
        return CallLibm(name, type, args);
      };
      r = EmitErfcAvoidingScalarLibm(builder_, own, x);
      break;
    }
    // No libm version. f32 (and f16/bf16 through it): vectorizable double IR
    // (special_functions.h); f64: the scalar functions of src/util/special_math.h.
    case OpKind::kErfInv:
      r = t->isFloatTy() ? wide_special(EmitErfInvForF32) : CallSpecialMath("accy_erf_inv", x);
      break;
    case OpKind::kLgamma:
      r = t->isFloatTy() ? wide_special(EmitLgammaForF32) : CallSpecialMath("accy_lgamma", x);
      break;
    case OpKind::kDigamma:
      r = t->isFloatTy() ? wide_special(EmitDigammaForF32) : CallSpecialMath("accy_digamma", x);
      break;
    case OpKind::kBesselI1e:
      r = t->isFloatTy() ? wide_special(EmitBesselI1eForF32)
                         : CallSpecialMath("accy_bessel_i1e", x);
      break;
    default:
      return Unsupported(kind, type);
  }
  return FromCompute(r, type);
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
  return Unsupported(kind, type);
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
  llvm::Value* tie = maximum ? builder_.CreateSelect(a_negative, b, a)
                             : builder_.CreateSelect(a_negative, a, b);
  llvm::Value* ordered =
      builder_.CreateSelect(equal, tie, builder_.CreateSelect(a_wins, a, b));
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
      return Unsupported(kind, type);
  }
  return FromCompute(r, type);
}

// chlo.zeta and chlo.polygamma (special_functions.h): double IR for every float type, the f32
// operands (f16/bf16 through f32) widened and the result rounded once to f32; f64 with exact
// bases. Polygamma's n = 0 lanes take digamma: the f32 kernel's double IR, or for f64
// special_math's scalar function (as chlo.digamma).
llvm::Value* ElementwiseLowering::ZetaOrPolygamma(OpKind kind, llvm::Value* a, llvm::Value* b) {
  llvm::Type* t = a->getType();
  const bool wide = t->isFloatTy();
  llvm::Type* double_type = builder_.getDoubleTy();
  llvm::Value* da = wide ? builder_.CreateFPExt(a, double_type) : a;
  llvm::Value* db = wide ? builder_.CreateFPExt(b, double_type) : b;
  const LibmBinaryCall pow = [&](const char* name, llvm::Value* u, llvm::Value* v) {
    llvm::Value* args[] = {u, v};
    return CallLibm(name, ElementType::kF64, args);
  };
  llvm::Value* r = nullptr;
  if (kind == OpKind::kZeta) {
    r = EmitZeta(builder_, pow, da, db, /*exact_bases=*/!wide);
  } else {
    const LibmCall libm = [&](const char* name, llvm::Value* arg) {
      llvm::Value* args[] = {arg};
      return CallLibm(name, ElementType::kF64, args);
    };
    llvm::Value* digamma =
        wide ? EmitDigammaForF32(builder_, libm, db) : CallSpecialMath("accy_digamma", db);
    r = EmitPolygamma(builder_, pow, da, db, digamma, /*exact_bases=*/!wide);
  }
  return wide ? builder_.CreateFPTrunc(r, t) : r;
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

StatusOr<llvm::Value*> ElementwiseLowering::IntBinary(OpKind kind, ElementType type,
                                                      llvm::Value* a, llvm::Value* b) {
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
      llvm::Value* by_minus_one = is_signed ? builder_.CreateICmpEQ(b, all_ones) : builder_.getFalse();
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
      return builder_.CreateBinaryIntrinsic(is_signed ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a, b);
    case OpKind::kMinimum:
      return builder_.CreateBinaryIntrinsic(is_signed ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a, b);
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
      llvm::Value* product = is_signed ? builder_.CreateMul(builder_.CreateSExt(a, wide),
                                                            builder_.CreateSExt(b, wide))
                                       : builder_.CreateMul(builder_.CreateZExt(a, wide),
                                                            builder_.CreateZExt(b, wide));
      return builder_.CreateTrunc(builder_.CreateLShr(product, bits), t);
    }
    default:
      break;
  }
  return Unsupported(kind, type);
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
  static constexpr P kSigned[] = {P::ICMP_EQ, P::ICMP_NE, P::ICMP_SGE,
                                  P::ICMP_SGT, P::ICMP_SLE, P::ICMP_SLT};
  static constexpr P kUnsigned[] = {P::ICMP_EQ, P::ICMP_NE, P::ICMP_UGE,
                                    P::ICMP_UGT, P::ICMP_ULE, P::ICMP_ULT};
  if (compare_type == "TOTALORDER") {
    // Negative floats order reversed by magnitude: flip their magnitude bits, compare signed.
    const unsigned bits = static_cast<unsigned>(ElementBitWidth(type));
    llvm::Type* int_type = builder_.getIntNTy(bits);
    auto key = [&](llvm::Value* v) {
      llvm::Value* raw = builder_.CreateBitCast(v, int_type);
      llvm::Value* flipped = builder_.CreateXor(
          raw, llvm::ConstantInt::get(int_type, llvm::APInt::getSignedMaxValue(bits)));
      return builder_.CreateSelect(
          builder_.CreateICmpSLT(raw, llvm::ConstantInt::get(int_type, 0)), flipped, raw);
    };
    return builder_.CreateICmp(kSigned[d], key(a), key(b));
  }
  return builder_.CreateICmp(compare_type == "SIGNED" ? kSigned[d] : kUnsigned[d], a, b);
}

StatusOr<llvm::Value*> ElementwiseLowering::Emit(const Operation& op,
                                                 std::span<llvm::Value* const> operands) {
  const OpKind kind = op.kind();
  const ElementType result_type = op.result(0)->type().element_type();
  const ElementType operand_type =
      op.num_operands() > 0 ? op.operand(op.num_operands() - 1)->type().element_type()
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
