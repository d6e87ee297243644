// accy's target-lowered primitives (target_lowering.h).
#include "jit/target_lowering.h"

#include <algorithm>

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

constexpr char kExpScalePrefix[] = "accy.exp_scale.";

// "f32" or "v<N>f32".
std::string TypeSuffix(llvm::Type* type) {
  if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type)) {
    return StrCat("v", vector->getNumElements(), "f32");
  }
  return "f32";
}

llvm::FunctionCallee DeclareExpScale(llvm::Module& module, llvm::Type* type) {
  llvm::FunctionCallee callee = module.getOrInsertFunction(
      StrCat(kExpScalePrefix, TypeSuffix(type)), llvm::FunctionType::get(type, {type, type, type}, false));
  if (auto* function = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    function->setDoesNotAccessMemory();
    function->setDoesNotThrow();
    function->setWillReturn();
    function->setNoSync();
    function->setDoesNotFreeMemory();
    function->addFnAttr(llvm::Attribute::Speculatable);
  }
  return callee;
}

// The portable body: n from the shifter's bits, then 2^n = 2^n1 * 2^n2 with n1 = floor(n / 2),
// n2 = n - n1 (both in [-76, 65]): e * 2^n1 is a normal float made exactly by adding n1 to e's
// exponent field, and the product with 2^n2 rounds once (a subnormal or infinite result
// included). NaN: the integer steps would make a number of it, so x is selected back.
llvm::Value* PortableExpScale(llvm::IRBuilderBase& b, llvm::Value* e, llvm::Value* shifted,
                              llvm::Value* x) {
  llvm::Type* type = e->getType();
  llvm::Type* int_type = type->getWithNewType(b.getInt32Ty());
  auto int_constant = [&](int64_t v) { return llvm::ConstantInt::get(int_type, v); };
  // n right after `shifted` is made, where exp's inline form computed it: code generation's
  // schedule follows that order, and softmax on AVX2 (whose 16 registers the sequence nearly
  // fills) measured 2-4% slower with n computed at the call.
  llvm::Value* n;
  auto* definition = llvm::dyn_cast<llvm::Instruction>(shifted);
  if (definition != nullptr && !llvm::isa<llvm::PHINode>(definition)) {
    llvm::IRBuilder<> early(definition->getNextNode());
    n = early.CreateSub(early.CreateBitCast(shifted, int_type), int_constant(0x4B400000));
  } else {
    n = b.CreateSub(b.CreateBitCast(shifted, int_type), int_constant(0x4B400000));
  }
  llvm::Value* n1 = b.CreateAShr(n, 1);
  llvm::Value* n2 = b.CreateSub(n, n1);
  llvm::Value* e_scaled =
      b.CreateBitCast(b.CreateAdd(b.CreateBitCast(e, int_type), b.CreateShl(n1, 23)), type);
  llvm::Value* power_n2 =
      b.CreateBitCast(b.CreateShl(b.CreateAdd(n2, int_constant(127)), 23), type);
  llvm::Value* result = b.CreateFMul(e_scaled, power_n2);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

// vscalefps / vscalefss: e * 2^floor(n) rounded once (Intel SDM, VSCALEFPS; NaN operands give a
// quiet NaN). n = shifted + (-1.5 * 2^23) is exact, and written as the optimizer canonicalizes
// exp's own n (an fadd of the negated shifter), so code generation merges the two. Null for a
// width with no instruction.
llvm::Value* ScalefExpScale(llvm::IRBuilderBase& b, llvm::Value* e, llvm::Value* shifted) {
  llvm::Type* type = e->getType();
  llvm::Value* n = b.CreateFAdd(shifted, llvm::ConstantFP::get(type, -0x1.8p23));
  llvm::Value* rounding = b.getInt32(4);  // _MM_FROUND_CUR_DIRECTION
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
  if (vector == nullptr) {
    auto* quad = llvm::FixedVectorType::get(type, 4);
    llvm::Value* poison = llvm::PoisonValue::get(quad);
    llvm::Value* ev = b.CreateInsertElement(poison, e, uint64_t{0});
    llvm::Value* nv = b.CreateInsertElement(poison, n, uint64_t{0});
    llvm::Value* r = b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ss, {},
                                       {ev, nv, poison, b.getInt8(0xFF), rounding});
    return b.CreateExtractElement(r, uint64_t{0});
  }
  llvm::Value* passthrough = llvm::PoisonValue::get(type);
  switch (vector->getNumElements()) {
    case 16:
      return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, {},
                               {e, n, passthrough, b.getInt16(0xFFFF), rounding});
    case 8:
      return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ps_256, {},
                               {e, n, passthrough, b.getInt8(0xFF)});
    case 4:
      return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ps_128, {},
                               {e, n, passthrough, b.getInt8(0xFF)});
    default:
      return nullptr;
  }
}

}  // namespace

llvm::Value* EmitExpScale(llvm::IRBuilderBase& builder, llvm::Value* e, llvm::Value* shifted,
                          llvm::Value* x) {
  llvm::Module& module = *builder.GetInsertBlock()->getModule();
  return builder.CreateCall(DeclareExpScale(module, e->getType()), {e, shifted, x});
}

std::vector<VectorVariant> VectorVariants() {
  std::vector<VectorVariant> variants;
  for (unsigned lanes : {4u, 8u, 16u}) {
    variants.push_back({StrCat(kExpScalePrefix, "f32"), StrCat(kExpScalePrefix, "v", lanes, "f32"),
                        lanes, StrCat("_ZGV_LLVM_N", lanes, "vvv")});
  }
  return variants;
}

void LowerTargetPrimitives(llvm::Module& module, bool avx512) {
  std::vector<llvm::Function*> primitives;
  for (llvm::Function& function : module) {
    if (function.isDeclaration() && function.getName().starts_with(kExpScalePrefix)) {
      primitives.push_back(&function);
    }
  }
  for (llvm::Function* primitive : primitives) {
    std::vector<llvm::CallInst*> calls;
    for (llvm::User* user : primitive->users()) {
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(user)) calls.push_back(call);
    }
    for (llvm::CallInst* call : calls) {
      llvm::IRBuilder<> b(call);
      llvm::Value* e = call->getArgOperand(0);
      llvm::Value* shifted = call->getArgOperand(1);
      llvm::Value* result = avx512 ? ScalefExpScale(b, e, shifted) : nullptr;
      if (result == nullptr) result = PortableExpScale(b, e, shifted, call->getArgOperand(2));
      call->replaceAllUsesWith(result);
      call->eraseFromParent();
    }
  }
  // The vectorizer lists the vector variants it declared in llvm.compiler.used.
  llvm::removeFromUsedLists(module, [&](llvm::Constant* c) {
    return std::find(primitives.begin(), primitives.end(), c) != primitives.end();
  });
  for (llvm::Function* primitive : primitives) {
    primitive->removeDeadConstantUsers();  // the replaced used-list array
    if (primitive->use_empty()) primitive->eraseFromParent();
  }
}

}  // namespace accy::jit
