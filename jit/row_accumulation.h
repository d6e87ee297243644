// Internal to jit/: the LLVM IR arithmetic of row reduce accumulators, shared by the row
// pipeline and flash attention emitters: scratch lane types, reducer identities, vector folds
// (IEEE max/min with NaN propagation, f64-lane sums of f32/f16/bf16 terms, TwoSum-compensated
// f64 sums), horizontal folds in a fixed order, and the final rounding to the result type.
// Declares no LLVM headers (forward declarations only). Not thread-safe (wraps one builder).
#ifndef ACCY_JIT_ROW_ACCUMULATION_H_
#define ACCY_JIT_ROW_ACCUMULATION_H_

#include <cstdint>
#include <optional>

#include "accy/ir.h"

namespace llvm {
class Constant;
class IRBuilderBase;
class Type;
class Value;
}  // namespace llvm

namespace accy::jit {

// Bytes of lanes folded per step: four zmm registers of independent accumulators, so a fold is
// bound by throughput, not by the latency of one dependent max/add chain.
inline constexpr int64_t kAccumulationBytes = 256;
// Max/min folds on targets below 512-bit vectors: 256 bytes of f32 lanes plus their NaN flags
// are 16 ymm registers and spill; 128 bytes do not (measured on Zen 2, softmax [4096, 1024], 1
// thread: 6.6-7.0 ms at 256 bytes, 5.8-6.2 ms at 128). Sums keep kAccumulationBytes on every
// target: their lanes fix the f64 summation order (the same bits on every ISA), and layer norm
// is faster with them (3.1 vs 3.6 ms). A max/min is exact in any order.
inline constexpr int64_t kNarrowMaxMinBytes = 128;

// The reducer of a reduce body `return op(arg0, arg1)` (add, maximum or minimum; either
// argument order), or nullopt for any other body.
std::optional<OpKind> RowReducer(const Operation& reduce);

// Vector (or scalar) arithmetic of the reduce accumulators, emitted through `builder`.
class RowAccumulation {
 public:
  // `vector_bits`: the target's widest vector (KernelTarget), which sizes max/min folds.
  RowAccumulation(llvm::IRBuilderBase& builder, int vector_bits)
      : b_(builder), max_min_bytes_(vector_bits >= 512 ? kAccumulationBytes : kNarrowMaxMinBytes) {}

  // Lane type of the scratch arrays: f32 for f16/bf16/f32, f64, i8 for i1, else the integer.
  llvm::Type* LaneType(ElementType type);
  // Accumulator element type: float sums accumulate in f64.
  llvm::Type* AccType(OpKind reducer, ElementType type);
  // Lanes per fold step of `reducer` (kAccumulationBytes of lanes for sums; for max/min that
  // or kNarrowMaxMinBytes, by the target).
  int64_t Width(OpKind reducer, ElementType type);
  // Storage-form element -> lane.
  llvm::Value* ToLane(llvm::Value* v, ElementType type);
  // The reducer's identity, as a lane constant.
  llvm::Constant* Identity(OpKind reducer, ElementType type);
  // acc (accumulator type) combined with x (lane or accumulator type), same shape.
  llvm::Value* Combine(OpKind reducer, ElementType type, llvm::Value* acc, llvm::Value* x);
  // Float max/min without the IEEE tie and NaN rules (x86 maxps/minps: `acc > x ? acc : x`):
  // exact whenever no term is NaN and the folded result is not a zero (equal non-zero floats
  // are the same bits). Callers fold with it, OR `NanLanes` of every term into a flag, and redo
  // the fold with Combine when the flag is set or the result is +-0 (row_pipeline_emitter.cc).
  llvm::Value* FastMaxMin(OpKind reducer, llvm::Value* acc, llvm::Value* x);
  // Lanes of `x` that are NaN (an i1 per lane).
  llvm::Value* NanLanes(llvm::Value* x);
  // Lanes of `vector` folded pairwise (halves) into one scalar, in a fixed order.
  llvm::Value* Horizontal(OpKind reducer, ElementType type, llvm::Value* vector);
  // f64 sums are compensated (the f64 reference sum is Neumaier-compensated; plain f64 lanes
  // lose bits that layer norm's x - mean then magnifies).
  static bool Compensated(OpKind reducer, ElementType type);
  // Knuth's TwoSum: returns s + x rounded and adds its exact rounding error to *error.
  llvm::Value* TwoSum(llvm::Value* s, llvm::Value* x, llvm::Value** error);
  // Compensated lanes (sums, errors) and init -> one f64: lanes added in order with TwoSum,
  // the error added once unless the sum is not finite (inf/NaN terms: the plain sum, as the
  // reference) or the error is zero (keeps a -0 sum).
  llvm::Value* CompensatedTotal(llvm::Value* sums, llvm::Value* errors, llvm::Value* init);
  // Accumulator scalar -> storage form of `type`, rounded once.
  llvm::Value* ToStorage(llvm::Value* v, OpKind reducer, ElementType type);

 private:
  // IEEE maximum/minimum on vectors or scalars (docs/numerics.md): NaN wins, -0 < +0.
  llvm::Value* IeeeMaxMin(bool maximum, llvm::Value* a, llvm::Value* x);
  // f64 -> f32 rounded to odd, so a second rounding to f16/bf16 is correctly rounded.
  llvm::Value* RoundToOddF32(llvm::Value* v);
  // f32 -> bf16 bits, nearest even, NaN made quiet (as ElementwiseLowering's conversion).
  llvm::Value* FloatToBf16Bits(llvm::Value* v);

  llvm::IRBuilderBase& b_;
  int64_t max_min_bytes_;
};

}  // namespace accy::jit

#endif  // ACCY_JIT_ROW_ACCUMULATION_H_
