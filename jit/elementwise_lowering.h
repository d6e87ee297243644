// Internal to jit/: per-element LLVM IR for every elementwise op of accy's IR (the scalar body
// the elementwise emitter places inside its loop; the loop vectorizer widens it).
//
// Register representation of one element ("storage form"): f16 as `half`, bf16 as its i16 bits,
// f32/f64 as float/double, i1 as `i1`, integers as iN (signed and unsigned alike). Every op
// computes f16/bf16 in f32 and rounds once to the storage form (docs/numerics.md), so a
// fused chain matches the op-by-op reference bit for bit. Includes LLVM headers: include it only
// from jit/*.cc. Not thread-safe (an IRBuilder is single-threaded).
#ifndef ACCY_JIT_ELEMENTWISE_LOWERING_H_
#define ACCY_JIT_ELEMENTWISE_LOWERING_H_

#include <functional>
#include <map>
#include <span>

#include "accy/ir.h"
#include "accy/status.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace accy::jit {

struct SleefFunction;

// The LLVM type of one element of `type` in memory: as the storage form, except i1 is i8.
llvm::Type* MemoryType(llvm::LLVMContext& context, ElementType type);
// The storage form of `type` (see the file comment).
llvm::Type* StorageType(llvm::LLVMContext& context, ElementType type);

// kUnimplemented naming `kind` and `type`: an op the JIT does not lower for that element type.
Status UnsupportedElementwiseOp(OpKind kind, ElementType type);

// Emits per-element arithmetic into a builder positioned inside a loop body.
class ElementwiseLowering {
 public:
  ElementwiseLowering(llvm::Module& module, llvm::IRBuilder<>& builder)
      : module_(module), builder_(builder) {}

  // The result of `op` (an elementwise op: IsFusableElementwiseOp) for one element, from its
  // operands' storage-form values (same order as op.operands()). Semantics: the StableHLO spec
  // section of the op with the conventions of docs/numerics.md (IEEE maximum/minimum, guarded integer
  // division, out-of-range shifts, saturating float->int convert). Errors: kUnimplemented naming
  // the op and element type for a combination the JIT does not support (e.g. bitcast_convert
  // of i1), kInvalidArgument for a malformed compare attribute.
  StatusOr<llvm::Value*> Emit(const Operation& op, std::span<llvm::Value* const> operands);

  // Emits `chain` (elementwise ops, in order) for one element, as an epilogue does after its
  // contraction: operand i of an op is values[operand] when that value is already in `values`
  // (computed in registers: the contraction's result, earlier ops of the chain), else
  // read(op, i) (an operand read from memory or folded). Adds each op's result to `values`.
  // Errors: Emit's, for the first op that fails.
  Status EmitChain(std::span<const Operation* const> chain,
                   const std::function<llvm::Value*(const Operation& op, int64_t i)>& read,
                   std::map<const Value*, llvm::Value*>& values);

  // Storage-form element from memory form (i8 -> i1 is `!= 0`), and back (i1 -> zext i8).
  llvm::Value* FromMemory(llvm::Value* loaded, ElementType type);
  llvm::Value* ToMemory(llvm::Value* value, ElementType type);
  // A constant element from its little-endian bytes (DenseElements layout), in storage form.
  llvm::Value* ConstantElement(ElementType type, const uint8_t* bytes);
  // `value` (storage form of `from`) converted to `to` exactly as the convert op (iota's
  // integer-to-float conversion in the shape emitter uses it).
  llvm::Value* ConvertElement(llvm::Value* value, ElementType from, ElementType to) {
    return Convert(value, from, to);
  }
  // IEEE-754 maximum (or minimum) of two scalars of one LLVM float type (float or double): NaN
  // if either is NaN, -0 < +0 (the maximum/minimum ops; reduction combiners use it on f32
  // accumulators of f16/bf16 reductions).
  llvm::Value* IeeeMaximumMinimum(bool maximum, llvm::Value* a, llvm::Value* b) {
    return IeeeMaxMin(maximum, a, b);
  }

 private:
  // f16/bf16 -> float; other types unchanged.
  llvm::Value* ToCompute(llvm::Value* value, ElementType type);
  // float -> f16/bf16 (one rounding, nearest even); other types unchanged.
  llvm::Value* FromCompute(llvm::Value* value, ElementType type);
  llvm::Value* FloatToBf16Bits(llvm::Value* value);
  llvm::Value* RoundToOddF32(llvm::Value* value);
  llvm::Value* Convert(llvm::Value* value, ElementType from, ElementType to);
  llvm::Value* IntToFloat(llvm::Value* value, ElementType from, ElementType to);
  llvm::Value* CallLibm(const char* name, ElementType type, std::span<llvm::Value* const> args);
  // SLEEF's `function` (sleef_functions.h) on a compute-form float or double `x`: its FMA
  // scalar variant, declared pure, which the vectorizer maps onto the vector variants.
  llvm::Value* CallSleef(const SleefFunction& function, llvm::Value* x);
  // A double special function of src/util/special_math.h (the JIT binds `symbol` to it) on a
  // compute-form float or double, rounded once back to the compute type.
  llvm::Value* CallSpecialMath(const char* symbol, llvm::Value* x);
  // reduce_precision and chlo.next_after on the storage form's bits (no f32 detour for
  // f16/bf16): the reference evaluator's ReducePrecisionBits / NextAfterBits in IR.
  StatusOr<llvm::Value*> ReducePrecision(const Operation& op, ElementType type, llvm::Value* x);
  llvm::Value* NextAfter(ElementType type, llvm::Value* from, llvm::Value* to);
  llvm::Value* ToBits(llvm::Value* value, ElementType type);
  llvm::Value* FromBits(llvm::Value* bits, ElementType type);
  StatusOr<llvm::Value*> Unary(OpKind kind, ElementType type, llvm::Value* x);
  StatusOr<llvm::Value*> Binary(OpKind kind, ElementType type, llvm::Value* a, llvm::Value* b);
  StatusOr<llvm::Value*> FloatUnary(OpKind kind, ElementType type, llvm::Value* x);
  StatusOr<llvm::Value*> FloatBinary(OpKind kind, ElementType type, llvm::Value* a,
                                     llvm::Value* b);
  StatusOr<llvm::Value*> IntBinary(OpKind kind, ElementType type, llvm::Value* a, llvm::Value* b);
  llvm::Value* IeeeMaxMin(bool maximum, llvm::Value* a, llvm::Value* b);
  // chlo.zeta / chlo.polygamma of two compute-form values (float or double), same type back.
  llvm::Value* ZetaOrPolygamma(OpKind kind, llvm::Value* a, llvm::Value* b);
  llvm::Value* IntPower(llvm::Value* base, llvm::Value* exponent, ElementType type);
  StatusOr<llvm::Value*> Compare(const Operation& op, ElementType type, llvm::Value* a,
                                 llvm::Value* b);

  llvm::Module& module_;
  llvm::IRBuilder<>& builder_;
};

}  // namespace accy::jit

#endif  // ACCY_JIT_ELEMENTWISE_LOWERING_H_
