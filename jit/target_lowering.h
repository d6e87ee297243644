// Internal to jit/: accy's own target-lowered primitives. An emitter writes a call to a declared,
// side-effect-free function (`accy.<name>.f32`, or `.v<N>f32` on a <N x float> value); the loop
// vectorizer widens the scalar call through the vector variants JitCompiler registers
// (VectorVariants(), the same mechanism as glibc libmvec's), and LowerTargetPrimitives replaces
// every call by the host ISA's instructions (after optimization where it uses an instruction
// LLVM has no generic form for, before it otherwise). So the emitters stay
// ISA-agnostic scalar IR while the body can use an instruction LLVM has no generic form for.
//
// The one primitive today is exp's final scaling, e * 2^n (jit/vector_math.cc): AVX-512's
// vscalefps does it in one instruction, rounding once (Intel SDM, VSCALEFPS), where the
// portable form needs eight integer and float operations plus a NaN select. Both forms give the
// same bits for every input the exp sequence produces. Declares no LLVM headers.
#ifndef ACCY_JIT_TARGET_LOWERING_H_
#define ACCY_JIT_TARGET_LOWERING_H_

#include <string>
#include <vector>

namespace llvm {
class IRBuilderBase;
class Module;
class Value;
}  // namespace llvm

namespace accy::jit {

// e * 2^n of float (or <N x float>) values, the last step of exp(x) (jit/vector_math.cc): `e`
// in [0.7, 1.42] (the polynomial's value), `shifted` = n + 1.5 * 2^23 (the shifter sum of the
// range reduction: an integer n in [-152, 129] in its low mantissa bits), `x` exp's argument;
// `e` and `shifted` are NaN exactly when `x` is. Returns e * 2^n rounded once to nearest even
// (subnormal, zero and infinite results included), and NaN where x is NaN (x itself on the
// portable path, a quiet NaN from vscalefps). Emits a call to `accy.exp_scale.f32` /
// `accy.exp_scale.v<N>f32`, declared in the builder's module as needed.
llvm::Value* EmitExpScale(llvm::IRBuilderBase& builder, llvm::Value* e, llvm::Value* shifted,
                          llvm::Value* x);

// A scalar primitive's vector variant for the loop vectorizer (llvm::VecDesc's fields).
struct VectorVariant {
  std::string scalar_name;   // e.g. "accy.exp_scale.f32"
  std::string vector_name;   // e.g. "accy.exp_scale.v16f32"
  unsigned lanes;            // 16
  std::string vfabi_prefix;  // e.g. "_ZGV_LLVM_N16vv"
};

// The vector variants to register with the vectorizer's TargetLibraryInfo: 4, 8 and 16 f32 lanes
// (any width lowers; widths beyond the registers are split by code generation).
std::vector<VectorVariant> VectorVariants();

// Replaces every call to an accy primitive in `module` by its body for the target, then removes
// the declarations. With `avx512` (AVX-512F and AVX-512VL) exp_scale becomes vscalefps (512-,
// 256- or 128-bit; vscalefss for scalars): run it after optimization, so the vectorizer widened
// the calls. Without, every call becomes the portable integer sequence: run it before
// optimization, so the optimizer sees (and the vectorizer widens) ordinary IR. Either way it runs
// on every module, unoptimized ones included: no call may reach the linker.
void LowerTargetPrimitives(llvm::Module& module, bool avx512);

}  // namespace accy::jit

#endif  // ACCY_JIT_TARGET_LOWERING_H_
