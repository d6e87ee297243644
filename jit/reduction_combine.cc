// Combining partial results in reduction kernels (reduction_kernel_emitter.h): the named
// combiners and their identities, the binary-counter pairwise cascade of float sums, the ROW
// lane tree, segment partials and the finish block. Every combination order is fixed at compile
// time, so the bits never depend on the thread count.
#include <cstdint>

#include "jit/reduction_kernel_emitter.h"
#include "llvm/IR/Intrinsics.h"

namespace accy::jit {

llvm::Value* ReductionKernelEmitter::Identity() {
  const ElementType type = layout_.accumulator;
  llvm::Type* t = StorageType(context_, type);
  if (IsFloat(type)) {
    switch (layout_.combiner) {
      case ReduceCombiner::kAdd:
        return llvm::ConstantFP::getNegativeZero(t);  // -0 + x == x for every x, also -0
      case ReduceCombiner::kMultiply:
        return llvm::ConstantFP::get(t, 1.0);
      case ReduceCombiner::kMaximum:
        return llvm::ConstantFP::getInfinity(t, /*Negative=*/true);
      default:
        return llvm::ConstantFP::getInfinity(t, /*Negative=*/false);
    }
  }
  const unsigned bits = t->getIntegerBitWidth();
  const bool is_signed = IsSigned(type);
  switch (layout_.combiner) {
    case ReduceCombiner::kMultiply:
      return llvm::ConstantInt::get(t, 1);
    case ReduceCombiner::kAnd:
      return llvm::ConstantInt::get(t, llvm::APInt::getAllOnes(bits));
    case ReduceCombiner::kMaximum:
      return llvm::ConstantInt::get(t, is_signed ? llvm::APInt::getSignedMinValue(bits)
                                                 : llvm::APInt::getMinValue(bits));
    case ReduceCombiner::kMinimum:
      return llvm::ConstantInt::get(t, is_signed ? llvm::APInt::getSignedMaxValue(bits)
                                                 : llvm::APInt::getMaxValue(bits));
    default:  // add, or, xor
      return llvm::ConstantInt::get(t, 0);
  }
}

// A named combiner on accumulator-form values. Integer combiners are the body's own op
// (ElementwiseLowering); float ones run in the accumulator type (f32 for f16/bf16).
llvm::Value* ReductionKernelEmitter::Combine(llvm::Value* a, llvm::Value* b) {
  if (IsFloat(layout_.accumulator)) {
    switch (layout_.combiner) {
      case ReduceCombiner::kAdd:
        return b_.CreateFAdd(a, b);
      case ReduceCombiner::kMultiply:
        return b_.CreateFMul(a, b);
      default:
        return lowering_.IeeeMaximumMinimum(layout_.combiner == ReduceCombiner::kMaximum, a, b);
    }
  }
  llvm::Value* operands[] = {a, b};
  StatusOr<llvm::Value*> r = lowering_.Emit(*layout_.combiner_op, operands);
  ACCY_CHECK(r.ok());  // integer add/multiply/maximum/minimum/and/or/xor lower for every type
  return *r;
}

llvm::Value* ReductionKernelEmitter::ToAccumulator(llvm::Value* storage) {
  if (layout_.accumulator == layout_.type) return storage;
  return lowering_.ConvertElement(storage, layout_.type, layout_.accumulator);
}

llvm::Value* ReductionKernelEmitter::Finalize(llvm::Value* acc) {
  llvm::Value* r = Combine(init_accumulator_, acc);
  if (layout_.accumulator == layout_.type) return r;
  return lowering_.ConvertElement(r, layout_.accumulator, layout_.type);
}

// ROW: the lanes combine by a fixed pairwise tree into lane 0.
Status ReductionKernelEmitter::EmitLaneTree() {
  for (int64_t half = layout_.lanes / 2; half >= 1; half /= 2) {
    ACCY_RETURN_IF_ERROR(For(I64(0), I64(half), [&](llvm::Value* lane) {
      llvm::Value* other = b_.CreateAdd(lane, I64(half));
      StoreLane(lanes_[0], 0, lane,
                Combine(LoadLane(lanes_[0], 0, lane), LoadLane(lanes_[0], 0, other)));
      return absl::OkStatus();
    }));
  }
  return absl::OkStatus();
}

// Binary-counter pairwise cascade: with n chunks pushed so far, level j holds the sum of 2^j
// chunks when bit j of n is set. Pushing merges the lanes with every full level below the
// first clear bit of n (older partial first) and stores them there.
Status ReductionKernelEmitter::EmitPush() {
  const int64_t lanes = layout_.lanes;
  llvm::Value* count = b_.CreateLoad(b_.getInt64Ty(), chunk_count_);
  llvm::BasicBlock* before = b_.GetInsertBlock();
  llvm::BasicBlock* header = NewBlock("cascade");
  llvm::BasicBlock* merge = NewBlock("cascade_merge");
  llvm::BasicBlock* place = NewBlock("cascade_place");
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* level = b_.CreatePHI(b_.getInt64Ty(), 2, "level");
  llvm::PHINode* bits = b_.CreatePHI(b_.getInt64Ty(), 2, "bits");
  level->addIncoming(I64(0), before);
  bits->addIncoming(count, before);
  llvm::Value* row = b_.CreateMul(level, I64(lanes));
  b_.CreateCondBr(b_.CreateICmpNE(b_.CreateAnd(bits, I64(1)), I64(0)), merge, place);
  b_.SetInsertPoint(merge);
  ACCY_RETURN_IF_ERROR(For(I64(0), I64(lanes), [&](llvm::Value* lane) {
    llvm::Value* older = LoadLane(cascade_, 0, b_.CreateAdd(row, lane));
    StoreLane(lanes_[0], 0, lane, Combine(older, LoadLane(lanes_[0], 0, lane)));
    return absl::OkStatus();
  }));
  level->addIncoming(b_.CreateAdd(level, I64(1)), b_.GetInsertBlock());
  bits->addIncoming(b_.CreateLShr(bits, I64(1)), b_.GetInsertBlock());
  b_.CreateBr(header);
  b_.SetInsertPoint(place);
  ACCY_RETURN_IF_ERROR(For(I64(0), I64(lanes), [&](llvm::Value* lane) {
    StoreLane(cascade_, 0, b_.CreateAdd(row, lane), LoadLane(lanes_[0], 0, lane));
    StoreLane(lanes_[0], 0, lane, Identity());
    return absl::OkStatus();
  }));
  b_.CreateStore(b_.CreateAdd(count, I64(1)), chunk_count_);
  return absl::OkStatus();
}

// Lanes = the cascade's levels combined from the lowest up (the lanes hold the identity here).
Status ReductionKernelEmitter::EmitCollapse() {
  llvm::Value* count = b_.CreateLoad(b_.getInt64Ty(), chunk_count_);
  return For(I64(0), I64(layout_.cascade_levels), [&](llvm::Value* level) {
    llvm::Value* set = b_.CreateICmpNE(b_.CreateAnd(b_.CreateLShr(count, level), I64(1)), I64(0));
    return If(set, [&] {
      llvm::Value* row = b_.CreateMul(level, I64(layout_.lanes));
      return For(I64(0), I64(layout_.lanes), [&](llvm::Value* lane) {
        llvm::Value* older = LoadLane(cascade_, 0, b_.CreateAdd(row, lane));
        StoreLane(lanes_[0], 0, lane, Combine(older, LoadLane(lanes_[0], 0, lane)));
        return absl::OkStatus();
      });
    });
  });
}

Status ReductionKernelEmitter::EmitUnitPartials(const Unit& unit, llvm::Value* segment) {
  const int64_t per = layout_.partials_per_unit_segment;
  llvm::Value* first = b_.CreateMul(
      b_.CreateAdd(b_.CreateMul(unit.index, I64(layout_.segments)), segment), I64(per));
  return For(I64(0), layout_.row_mode ? I64(1) : unit.lane_count, [&](llvm::Value* lane) {
    StoreLane(scratch_, 0, b_.CreateAdd(first, lane), LoadLane(lanes_[0], 0, lane));
    return absl::OkStatus();
  });
}

// The finish block: per unit and lane, the segments' partials combine by a fixed pairwise tree
// (in place in scratch), then init is applied.
Status ReductionKernelEmitter::EmitFinish() {
  const int64_t segments = layout_.segments;
  const int64_t per = layout_.partials_per_unit_segment;
  return For(I64(0), I64(layout_.units), [&](llvm::Value* u) {
    Unit unit = UnitAt(u);
    llvm::Value* first = b_.CreateMul(u, I64(segments * per));
    return For(I64(0), layout_.row_mode ? I64(1) : unit.lane_count, [&](llvm::Value* lane) -> Status {
      llvm::Value* base = b_.CreateAdd(first, lane);
      for (int64_t stride = 1; stride < segments; stride *= 2) {
        const int64_t pairs = (segments - stride + 2 * stride - 1) / (2 * stride);
        ACCY_RETURN_IF_ERROR(For(I64(0), I64(pairs), [&](llvm::Value* pair) {
          llvm::Value* left = b_.CreateAdd(base, b_.CreateMul(pair, I64(2 * stride * per)));
          llvm::Value* right = b_.CreateAdd(left, I64(stride * per));
          StoreLane(scratch_, 0, left,
                    Combine(LoadLane(scratch_, 0, left), LoadLane(scratch_, 0, right)));
          return absl::OkStatus();
        }));
      }
      StoreOutput(0, b_.CreateAdd(unit.out_base, lane), Finalize(LoadLane(scratch_, 0, base)));
      return absl::OkStatus();
    });
  });
}

}  // namespace accy::jit
