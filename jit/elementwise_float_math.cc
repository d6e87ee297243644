// The float unary ops and the transcendental calls of the elementwise lowering
// (elementwise_lowering.h), and chlo.zeta / chlo.polygamma.
//
// exp, tanh and logistic computed in f32 (f32, f16, bf16) are inline polynomials (vector_math.h:
// plain IR the vectorizer widens, same bits in the vector body and the scalar tail). The other
// transcendentals, and f64, call the libm names (expf, tanh, ...) declared memory(none): the
// loop vectorizer maps them to glibc libmvec variants (JitCompiler's TargetLibraryInfo), so the
// scalar tail and the vector body may use different implementations, each within the bounds
// stated in tests/jit/elementwise_test.cc. The CHLO special functions SLEEF computes better
// (sleef_functions.h: f64 tan and lgamma) call SLEEF's scalar name instead, which the
// vectorizer maps onto SLEEF's vector variants of the same bits. No fast-math flags.
#include <cmath>
#include <string>

#include "jit/elementwise_lowering.h"
#include "jit/sleef_functions.h"
#include "jit/special_functions.h"
#include "jit/vector_math.h"
#include "llvm/IR/Intrinsics.h"
#include "src/util/str_cat.h"

namespace accy::jit {

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
  llvm::CallInst* call =
      builder_.CreateCall(callee, llvm::ArrayRef<llvm::Value*>(args.data(), args.size()));
  call->setDoesNotAccessMemory();
  return call;
}

llvm::Value* ElementwiseLowering::CallSleef(const SleefFunction& sleef, llvm::Value* x) {
  llvm::Type* t = x->getType();
  const std::string symbol = SleefScalarSymbol(sleef, t->isFloatTy(), /*fma=*/true);
  llvm::FunctionCallee callee =
      module_.getOrInsertFunction(symbol, llvm::FunctionType::get(t, {t}, false));
  auto* function = llvm::cast<llvm::Function>(callee.getCallee());
  function->setDoesNotAccessMemory();
  function->setDoesNotThrow();
  function->addFnAttr(llvm::Attribute::WillReturn);
  llvm::CallInst* call = builder_.CreateCall(callee, {x});
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

namespace {

// The libm name of the unary ops SLEEF may compute (sleef_functions.h), else nullptr.
const char* SleefCandidate(OpKind kind) {
  switch (kind) {
    case OpKind::kTan:
      return "tan";
    case OpKind::kAsin:
      return "asin";
    case OpKind::kAcos:
      return "acos";
    case OpKind::kAtan:
      return "atan";
    case OpKind::kSinh:
      return "sinh";
    case OpKind::kCosh:
      return "cosh";
    case OpKind::kAsinh:
      return "asinh";
    case OpKind::kAcosh:
      return "acosh";
    case OpKind::kAtanh:
      return "atanh";
    case OpKind::kErf:
      return "erf";
    case OpKind::kErfc:
      return "erfc";
    case OpKind::kLgamma:
      return "lgamma";
    default:
      return nullptr;
  }
}

}  // namespace

StatusOr<llvm::Value*> ElementwiseLowering::FloatUnary(OpKind kind, ElementType type,
                                                       llvm::Value* input) {
  llvm::Value* x = ToCompute(input, type);
  llvm::Type* t = x->getType();
  if (const char* name = SleefCandidate(kind); name != nullptr) {
    ACCY_ASSIGN_OR_RETURN(const SleefFunction* sleef, SleefFunctionFor(name, t->isFloatTy()));
    if (sleef != nullptr) {
      llvm::Value* r = CallSleef(*sleef, x);
      if (kind == OpKind::kTan) {
        // SLEEF's tan gives 0 for the least subnormal (glibc: the input, as tan x = x within
        // half an ulp for |x| < 2^-27): x itself there, as special values are exact.
        llvm::Value* tiny = builder_.CreateFCmpOLT(
            builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x),
            llvm::ConstantFP::get(t, 0x1p-27));
        r = builder_.CreateSelect(tiny, x, r);
      }
      if (kind == OpKind::kLgamma && !t->isFloatTy()) {
        // SLEEF's lgamma may give +inf for large x (documented above 2e305; seen at 1.46e305)
        // where the true value is finite up to 2.55e305: x (log x - 1) above 1e305, Stirling's
        // leading terms (the rest, -log(x) / 2 + ..., is below 1e-300 of it; log x - 1 is
        // exact). log runs on 1 in the other lanes: libmvec hands negative, zero and NaN lanes
        // to its scalar fallback (that cost 5 ns per element over [-30, 30]).
        llvm::Value* huge = builder_.CreateFCmpOGT(x, llvm::ConstantFP::get(t, 1e305));
        llvm::Value* args[] = {builder_.CreateSelect(huge, x, llvm::ConstantFP::get(t, 1.0))};
        llvm::Value* stirling = builder_.CreateFMul(
            x, builder_.CreateFSub(CallLibm("log", type, args), llvm::ConstantFP::get(t, 1.0)));
        r = builder_.CreateSelect(huge, stirling, r);
      }
      return FromCompute(r, type);
    }
  }
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
    return builder_.CreateFPTrunc(
        emit(builder_, libm, builder_.CreateFPExt(x, builder_.getDoubleTy())), t);
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
      llvm::Value* keep = builder_.CreateOr(
          builder_.CreateFCmpUNO(x, x), builder_.CreateFCmpOEQ(x, llvm::ConstantFP::get(t, 0.0)));
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
      return UnsupportedElementwiseOp(kind, type);
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

}  // namespace accy::jit
