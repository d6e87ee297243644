// Internal to jit/: small LLVM IR arithmetic helpers shared by the inline math emitters
// (vector_math.cc, special_functions.cc): float constants of a scalar or vector type, fused
// multiply-add as llvm.fma (one rounding, never contracted differently between a vector body
// and its scalar tail), and Horner polynomials built from it. Work on scalar and vector values
// alike. Not thread-safe (emit through the caller's builder).
#ifndef ACCY_JIT_IR_ARITHMETIC_H_
#define ACCY_JIT_IR_ARITHMETIC_H_

#include <cstddef>
#include <span>

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"

namespace accy::jit {

// `value` as a constant of `type` (a float type or a vector of one: a splat).
inline llvm::Constant* FloatConstant(llvm::Type* type, double value) {
  return llvm::ConstantFP::get(type, value);
}

// x * y + z rounded once.
inline llvm::Value* Fma(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, z});
}

// c[0] + c[1] t + ... + c[n-1] t^(n-1) by Horner's rule with Fma (`c` lowest degree first,
// at least one coefficient).
inline llvm::Value* PolynomialLowFirst(llvm::IRBuilderBase& b, llvm::Value* t,
                                       std::span<const double> c) {
  llvm::Type* type = t->getType();
  llvm::Value* p = FloatConstant(type, c.back());
  for (size_t k = c.size() - 1; k-- > 0;) p = Fma(b, p, t, FloatConstant(type, c[k]));
  return p;
}

// c[0] t^(n-1) + ... + c[n-1] by Horner's rule with Fma (`c` highest degree first, at least
// one coefficient).
inline llvm::Value* PolynomialHighFirst(llvm::IRBuilderBase& b, llvm::Value* t,
                                        std::span<const double> c) {
  llvm::Type* type = t->getType();
  llvm::Value* p = FloatConstant(type, c.front());
  for (size_t k = 1; k < c.size(); ++k) p = Fma(b, p, t, FloatConstant(type, c[k]));
  return p;
}

}  // namespace accy::jit

#endif  // ACCY_JIT_IR_ARITHMETIC_H_
