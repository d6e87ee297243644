// The flash_attention kernel's vector code (flash_attention_emitter.h; the algorithm, layout
// and numerics are in flash_attention_emitter.cc's file comment): Q packing, the score micro
// kernel, the vertical online softmax, P·V in registers and the output rows. Values are
// scalars or lanes_-vectors of the compute type; the block being emitted lives in the
// emitter's block_* members.
#include <algorithm>
#include <string>
#include <vector>

#include "jit/flash_attention_emitter.h"
#include "jit/kernel_abi.h"
#include "jit/vector_math.h"

namespace accy::jit::flash_attention_internal {
namespace {

// Element type `to` of the same shape (scalar or vector) as `type`.
llvm::Type* WithScalar(llvm::Type* type, llvm::Type* to) { return type->getWithNewType(to); }

}  // namespace

llvm::Value* FlashAttentionEmitter::Splat(llvm::Value* scalar) {
  return b_.CreateVectorSplat(lanes_, scalar);
}

llvm::Value* FlashAttentionEmitter::Fma(llvm::Value* a, llvm::Value* x, llvm::Value* addend) {
  return b_.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, x, addend});
}

// Storage form of `element_` (scalar or vector) -> compute type, as ConvertElement does per
// element: f16 extends, bf16 shifts its bits into the top half of an f32.
llvm::Value* FlashAttentionEmitter::Widen(llvm::Value* v) {
  if (element_ == ElementType::kF16) return b_.CreateFPExt(v, WithScalar(v->getType(), b_.getFloatTy()));
  if (element_ == ElementType::kBF16) {
    llvm::Value* wide = b_.CreateZExt(v, WithScalar(v->getType(), b_.getInt32Ty()));
    wide = b_.CreateShl(wide, llvm::ConstantInt::get(wide->getType(), 16));
    return b_.CreateBitCast(wide, WithScalar(v->getType(), b_.getFloatTy()));
  }
  return v;
}

// Compute type -> storage form of `element_`, rounding once to nearest even (the vector form of
// ElementwiseLowering's conversion; bf16 by integer rounding, NaN kept quiet with its sign).
llvm::Value* FlashAttentionEmitter::Narrow(llvm::Value* v) {
  llvm::Type* type = v->getType();
  if (element_ == ElementType::kF16) return b_.CreateFPTrunc(v, WithScalar(type, b_.getHalfTy()));
  if (element_ != ElementType::kBF16) return v;
  llvm::Type* i32 = WithScalar(type, b_.getInt32Ty());
  auto k = [&](uint32_t c) { return llvm::ConstantInt::get(i32, c); };
  llvm::Value* bits = b_.CreateBitCast(v, i32);
  llvm::Value* upper = b_.CreateLShr(bits, k(16));
  llvm::Value* bias = b_.CreateAdd(b_.CreateAnd(upper, k(1)), k(0x7FFF));
  llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(bits, bias), k(16));
  llvm::Value* quiet_nan = b_.CreateOr(upper, k(0x40));
  llvm::Value* value = b_.CreateSelect(b_.CreateFCmpUNO(v, v), quiet_nan, rounded);
  return b_.CreateTrunc(value, WithScalar(type, b_.getInt16Ty()));
}

// The cluster's exponential on a vector: the inline f32 polynomial (f16/bf16 round its argument
// and result through the element type as Exp does), libm per lane for f64.
llvm::Value* FlashAttentionEmitter::VectorExp(llvm::Value* x) {
  if (compute_ == ElementType::kF64) {
    llvm::Value* result = llvm::PoisonValue::get(x->getType());
    for (int64_t lane = 0; lane < lanes_; ++lane) {
      result = b_.CreateInsertElement(result, Exp(b_.CreateExtractElement(x, lane)), lane);
    }
    return result;
  }
  if (element_ == ElementType::kF32) return EmitExpF32(b_, x);
  return Widen(Narrow(EmitExpF32(b_, Widen(Narrow(x)))));
}

// A score-space operand (scale or mask) prepared for the block being emitted (ScoreOperand).
FlashAttentionEmitter::ScoreOperand FlashAttentionEmitter::PrepareScoreOperand(
    const Access& access, llvm::Value* batch_offset) {
  ScoreOperand op;
  op.access = &access;
  if (access.constant != nullptr) {
    op.splat = Splat(Read(access, b_.getInt64(0)));
    return op;
  }
  if (access.packed != nullptr) {  // [tile][key][lane]: this block's tile
    llvm::Value* tile = b_.CreateUDiv(block_q_begin_, b_.getInt64(query_tile_));
    op.packed_tile = b_.CreateInBoundsGEP(ComputeType(), access.packed,
                                          b_.CreateMul(tile, b_.getInt64(keys_ * lanes_)));
    return op;
  }
  const int64_t query_stride = access.strides[access.strides.size() - 2];
  op.base = batch_offset;
  if (query_stride != 0) {
    op.rows = b_.CreateAdd(b_.CreateVectorSplat(lanes_, batch_offset),
                           b_.CreateMul(block_lane_rows_, b_.CreateVectorSplat(lanes_, b_.getInt64(query_stride))));
  }
  return op;
}

// The operand's vector at key `key` over the block's query lanes: the splat, one element per
// key broadcast, or a gather over the lanes' rows (per-lane loads for f16/bf16).
llvm::Value* FlashAttentionEmitter::ScoreVector(const ScoreOperand& op, llvm::Value* key) {
  if (op.splat != nullptr) return op.splat;
  if (op.packed_tile != nullptr) {
    return b_.CreateAlignedLoad(vector_, b_.CreateInBoundsGEP(ComputeType(), op.packed_tile,
                                                            b_.CreateMul(key, b_.getInt64(lanes_))),
                                VectorAlign());
  }
  const Access& access = *op.access;
  llvm::Value* key_offset = b_.CreateMul(key, b_.getInt64(access.strides.back()));
  if (op.rows == nullptr) return Splat(Read(access, b_.CreateAdd(op.base, key_offset)));
  llvm::Value* index = b_.CreateAdd(op.rows, b_.CreateVectorSplat(lanes_, key_offset));
  if (element_ == compute_) {  // f32, f64: one gather
    llvm::Value* pointers = b_.CreateInBoundsGEP(ComputeType(), bases_[static_cast<size_t>(access.buffer)], index);
    llvm::CallInst* gather =
        b_.CreateMaskedGather(vector_, pointers, llvm::Align(ElementByteWidth(element_)));
    prologue_->Tag(gather, KernelPrologue::kInputs);
    return gather;
  }
  llvm::Value* result = llvm::PoisonValue::get(vector_);
  for (int64_t lane = 0; lane < lanes_; ++lane) {
    result = b_.CreateInsertElement(result, Load(access.buffer, b_.CreateExtractElement(index, lane)), lane);
  }
  return result;
}

// Q of the block's rows, head dims [d0, d0 + length), transposed into qt_[d][lane] (compute
// type). Lanes past the last row read the rows after it, or repeat the last query row at the
// end (as block_lane_rows_; their results are never stored).
void FlashAttentionEmitter::PackQueries(llvm::Value* d0, llvm::Value* length) {
  if (element_ == compute_) {
    // f32, f64: one gather over the lanes' rows per head dim, stored whole (the lane-by-lane
    // copy below vectorized into scatters: 11% of BM_FlashAttention seq 128 on an Intel Xeon
    // family 6 model 207, docs/isa.md).
    llvm::Value* rows = b_.CreateAdd(
        b_.CreateVectorSplat(lanes_, block_q_batch_),
        b_.CreateMul(block_lane_rows_, b_.CreateVectorSplat(lanes_, b_.getInt64(q_row_stride_))));
    Loop(b_.getInt64(0), length, "qpack", [&](llvm::Value* d) {
      llvm::Value* column = b_.CreateMul(b_.CreateAdd(d0, d), b_.getInt64(q_d_stride_));
      llvm::Value* pointers = b_.CreateInBoundsGEP(ComputeType(), bases_[static_cast<size_t>(q_buffer_)],
                                                   b_.CreateAdd(rows, b_.CreateVectorSplat(lanes_, column)));
      llvm::CallInst* gather =
          b_.CreateMaskedGather(vector_, pointers, llvm::Align(ElementByteWidth(element_)));
      prologue_->Tag(gather, KernelPrologue::kInputs);
      b_.CreateAlignedStore(gather, b_.CreateInBoundsGEP(ComputeType(), qt_, b_.CreateMul(d, b_.getInt64(lanes_))),
                            VectorAlign());
    });
    return;
  }
  Loop(b_.getInt64(0), b_.getInt64(lanes_), "qpack", [&](llvm::Value* lane) {
    llvm::Value* row = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(block_q_begin_, lane),
                                                b_.CreateSub(block_q_end_, b_.getInt64(1)));
    llvm::Value* q_row = b_.CreateAdd(block_q_batch_, b_.CreateAdd(b_.CreateMul(row, b_.getInt64(q_row_stride_)),
                                                                   b_.CreateMul(d0, b_.getInt64(q_d_stride_))));
    Loop(b_.getInt64(0), length, "qpackd", [&](llvm::Value* d) {
      llvm::Value* slot = b_.CreateAdd(b_.CreateMul(d, b_.getInt64(lanes_)), lane);
      b_.CreateStore(Load(q_buffer_, b_.CreateAdd(q_row, b_.CreateMul(d, b_.getInt64(q_d_stride_)))),
                     b_.CreateInBoundsGEP(ComputeType(), qt_, slot));
    });
  });
}

llvm::Value* FlashAttentionEmitter::ScoreSlot(llvm::Value* j) {
  return b_.CreateInBoundsGEP(ComputeType(), scores_, b_.CreateMul(j, b_.getInt64(lanes_)));
}

// Dot products of `count` keys (tile offsets j0...) with the block's query lanes over head dims
// [d0, d0 + length): one vector accumulator per key, each Q vector load shared by the keys, K
// elements broadcast. Stored to the score tile (added to it when `accumulate`).
void FlashAttentionEmitter::ScoreKeys(llvm::Value* j0, int64_t count, llvm::Value* d0,
                                      llvm::Value* length, bool accumulate) {
  std::vector<llvm::Value*> init;
  std::vector<llvm::Value*> k_rows;
  for (int64_t r = 0; r < count; ++r) {
    llvm::Value* j = b_.CreateAdd(j0, b_.getInt64(r));
    init.push_back(accumulate ? static_cast<llvm::Value*>(b_.CreateAlignedLoad(vector_, ScoreSlot(j), VectorAlign()))
                              : llvm::Constant::getNullValue(vector_));
    llvm::Value* key = b_.CreateAdd(block_k0_, j);
    // K[key, d] at k_row + d * k_d_stride_ (K's dimension numbers: [batch..., k, d] has stride
    // 1 along d, [batch..., d, k] stride keys).
    k_rows.push_back(b_.CreateAdd(block_k_batch_, b_.CreateAdd(b_.CreateMul(key, b_.getInt64(k_row_stride_)),
                                                               b_.CreateMul(d0, b_.getInt64(k_d_stride_)))));
  }
  const int64_t k_step = k_d_stride_;
  std::vector<llvm::Value*> sums = CarryLoop(
      b_.getInt64(0), length, "dot", init, [&](llvm::Value* d, const std::vector<llvm::Value*>& acc) {
        llvm::Value* q = b_.CreateAlignedLoad(
            vector_, b_.CreateInBoundsGEP(ComputeType(), qt_, b_.CreateMul(d, b_.getInt64(lanes_))), VectorAlign());
        std::vector<llvm::Value*> next;
        for (int64_t r = 0; r < count; ++r) {
          llvm::Value* k = Load(k_buffer_, b_.CreateAdd(k_rows[static_cast<size_t>(r)], b_.CreateMul(d, b_.getInt64(k_step))));
          next.push_back(Fma(q, Splat(k), acc[static_cast<size_t>(r)]));
        }
        return next;
      });
  for (int64_t r = 0; r < count; ++r) {
    b_.CreateAlignedStore(sums[static_cast<size_t>(r)], ScoreSlot(b_.CreateAdd(j0, b_.getInt64(r))), VectorAlign());
  }
}

// All scores of the tile: groups of kKeysPerStep keys, then single keys.
void FlashAttentionEmitter::ScoreTile(llvm::Value* d0, llvm::Value* length, bool accumulate) {
  const int64_t step = compute_ == ElementType::kF64 ? kKeysPerStepF64 : kKeysPerStep;
  llvm::Value* groups = b_.CreateUDiv(block_length_, b_.getInt64(step));
  Loop(b_.getInt64(0), groups, "keys", [&](llvm::Value* g) {
    ScoreKeys(b_.CreateMul(g, b_.getInt64(step)), step, d0, length, accumulate);
  });
  Loop(b_.CreateMul(groups, b_.getInt64(step)), block_length_, "key", [&](llvm::Value* j) {
    ScoreKeys(j, 1, d0, length, accumulate);
  });
}

// Scale and mask the tile's scores, then the online softmax update of m, l and the correction
// (file comment), the scores replaced by p. Per lane (query row) in key order, as the scalar
// recurrence: the max is exact, the sum adds p_j in order j.
void FlashAttentionEmitter::SoftmaxTile() {
  llvm::Type* t = ComputeType();
  auto c64 = [&](int64_t v) { return b_.getInt64(v); };
  // Keys [0, unrolled) go kSoftmaxKeysPerStep at a time, the rest one by one: independent
  // exponentials (and partial maxima) in flight, where one key per iteration left the exp
  // loop bound by its dependency chain (docs/isa.md).
  llvm::Value* unrolled = b_.CreateMul(b_.CreateUDiv(block_length_, c64(kSoftmaxKeysPerStep)),
                                       c64(kSoftmaxKeysPerStep));
  // Scaled and masked score of key j, stored back to its slot.
  auto scale_and_mask = [&](llvm::Value* j) {
    llvm::Value* key = b_.CreateAdd(block_k0_, j);
    llvm::Value* slot = ScoreSlot(j);
    llvm::Value* dot = b_.CreateAlignedLoad(vector_, slot, VectorAlign());
    llvm::Value* factor = ScoreVector(block_scale_, key);
    llvm::Value* s = scale_->kind() == OpKind::kDivide ? b_.CreateFDiv(dot, factor) : b_.CreateFMul(dot, factor);
    if (mask_ != nullptr) s = b_.CreateFAdd(s, ScoreVector(block_mask_, key));
    b_.CreateAlignedStore(s, slot, VectorAlign());
    return s;
  };
  auto maximum = [&](llvm::Value* a, llvm::Value* x) {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, a, x);  // IEEE maximum
  };
  // The max is exact and IEEE maximum is associative and commutative (NaN wins, -0 < +0), so
  // kSoftmaxKeysPerStep partial maxima give the same m' as the key-order scan.
  llvm::Value* m_old = b_.CreateAlignedLoad(vector_, m_, VectorAlign());
  Carried partial(kSoftmaxKeysPerStep, Splat(llvm::ConstantFP::getInfinity(t, true)));
  partial[0] = m_old;
  partial = CarryLoop(c64(0), b_.CreateUDiv(unrolled, c64(kSoftmaxKeysPerStep)), "tmax4", partial,
      [&](llvm::Value* g, const Carried& m) {
        Carried next;
        for (int64_t u = 0; u < kSoftmaxKeysPerStep; ++u) {
          llvm::Value* j = b_.CreateAdd(b_.CreateMul(g, c64(kSoftmaxKeysPerStep)), c64(u));
          next.push_back(maximum(m[static_cast<size_t>(u)], scale_and_mask(j)));
        }
        return next;
      });
  llvm::Value* m_new = partial[0];
  for (size_t u = 1; u < partial.size(); ++u) m_new = maximum(m_new, partial[u]);
  m_new = CarryLoop(unrolled, block_length_, "tmax", {m_new},
      [&](llvm::Value* j, const Carried& m) -> Carried { return {maximum(m[0], scale_and_mask(j))}; })[0];
  llvm::Value* base = b_.CreateSelect(b_.CreateFCmpOEQ(m_new, Splat(llvm::ConstantFP::getInfinity(t, true))),
                                     llvm::Constant::getNullValue(vector_), m_new);
  llvm::Value* correction = VectorExp(b_.CreateFSub(m_old, base));
  b_.CreateAlignedStore(m_new, m_, VectorAlign());
  b_.CreateAlignedStore(correction, correction_, VectorAlign());
  // p_j = exp(s_j - base) replaces s_j; l adds the p_j in key order.
  auto probability = [&](llvm::Value* j) {
    llvm::Value* slot = ScoreSlot(j);
    llvm::Value* p = VectorExp(b_.CreateFSub(b_.CreateAlignedLoad(vector_, slot, VectorAlign()), base));
    b_.CreateAlignedStore(p, slot, VectorAlign());
    return p;
  };
  llvm::Value* l = b_.CreateFMul(b_.CreateAlignedLoad(vector_, l_, VectorAlign()), correction);
  l = CarryLoop(c64(0), b_.CreateUDiv(unrolled, c64(kSoftmaxKeysPerStep)), "prob4", {l},
      [&](llvm::Value* g, const Carried& sum) -> Carried {
        std::vector<llvm::Value*> p;
        for (int64_t u = 0; u < kSoftmaxKeysPerStep; ++u) {
          p.push_back(probability(b_.CreateAdd(b_.CreateMul(g, c64(kSoftmaxKeysPerStep)), c64(u))));
        }
        llvm::Value* total = sum[0];
        for (llvm::Value* x : p) total = b_.CreateFAdd(total, x);
        return {total};
      })[0];
  l = CarryLoop(unrolled, block_length_, "prob", {l},
      [&](llvm::Value* j, const Carried& sum) -> Carried { return {b_.CreateFAdd(sum[0], probability(j))}; })[0];
  b_.CreateAlignedStore(l, l_, VectorAlign());
}

// One chunk of value_lanes_ elements of V at `index` (a partial chunk of `lanes` < value_lanes_
// loads masked), in the compute type.
llvm::Value* FlashAttentionEmitter::LoadValueChunk(llvm::Value* index, int64_t lanes) {
  llvm::Type* memory = MemoryType(context_, element_);
  auto* type = llvm::FixedVectorType::get(memory, static_cast<unsigned>(value_lanes_));
  llvm::Value* address = b_.CreateInBoundsGEP(memory, bases_[static_cast<size_t>(v_buffer_)], index);
  const llvm::Align align(ElementByteWidth(element_));
  llvm::Instruction* load =
      lanes == value_lanes_
          ? static_cast<llvm::Instruction*>(b_.CreateAlignedLoad(type, address, align))
          : b_.CreateMaskedLoad(type, address, align, ChunkMask(lanes),
                                llvm::Constant::getNullValue(type));
  prologue_->Tag(load, KernelPrologue::kInputs);
  return Widen(load);
}

llvm::Value* FlashAttentionEmitter::ChunkMask(int64_t lanes) {
  std::vector<llvm::Constant*> bits;
  for (int64_t i = 0; i < value_lanes_; ++i) bits.push_back(b_.getInt1(i < lanes));
  return llvm::ConstantVector::get(bits);
}

llvm::Value* FlashAttentionEmitter::AccumulatorSlot(int64_t row, llvm::Value* chunk) {
  llvm::Value* index = b_.CreateAdd(b_.getInt64(row * accumulator_row_), b_.CreateMul(chunk, b_.getInt64(value_lanes_)));
  return b_.CreateInBoundsGEP(ComputeType(), accumulator_, index);
}

// acc[rows r0.., chunks chunk0..] = acc * correction + sum_j p[j, row] * V[j, chunk]: `rows` x
// `chunks` vector accumulators in registers over the tile's keys; the last chunk has
// `last_lanes` valid lanes.
void FlashAttentionEmitter::AccumulateValues(int64_t r0, int64_t rows, llvm::Value* chunk0,
                                             int64_t chunks, int64_t last_lanes) {
  llvm::Type* t = ComputeType();
  auto* chunk_type = llvm::FixedVectorType::get(t, static_cast<unsigned>(value_lanes_));
  std::vector<llvm::Value*> init;
  for (int64_t r = 0; r < rows; ++r) {
    llvm::Value* correction = b_.CreateVectorSplat(static_cast<unsigned>(value_lanes_),
        b_.CreateLoad(t, b_.CreateConstInBoundsGEP1_64(t, correction_, static_cast<uint64_t>(r0 + r))));
    for (int64_t c = 0; c < chunks; ++c) {
      llvm::Value* slot = AccumulatorSlot(r0 + r, b_.CreateAdd(chunk0, b_.getInt64(c)));
      init.push_back(b_.CreateFMul(b_.CreateAlignedLoad(chunk_type, slot, ChunkAlign()), correction));
    }
  }
  std::vector<llvm::Value*> sums = CarryLoop(b_.getInt64(0), block_length_, "pv", init,
      [&](llvm::Value* j, const std::vector<llvm::Value*>& acc) {
        llvm::Value* v_row = b_.CreateAdd(block_v_batch_, b_.CreateAdd(
            b_.CreateMul(b_.CreateAdd(block_k0_, j), b_.getInt64(v_row_stride_)), b_.CreateMul(chunk0, b_.getInt64(value_lanes_))));
        std::vector<llvm::Value*> v;
        for (int64_t c = 0; c < chunks; ++c) {
          v.push_back(LoadValueChunk(b_.CreateAdd(v_row, b_.getInt64(c * value_lanes_)),
                                     c == chunks - 1 ? last_lanes : value_lanes_));
        }
        llvm::Value* p_row = b_.CreateMul(j, b_.getInt64(lanes_));
        std::vector<llvm::Value*> next;
        for (int64_t r = 0; r < rows; ++r) {
          llvm::Value* p = b_.CreateLoad(t, b_.CreateInBoundsGEP(t, scores_, b_.CreateAdd(p_row, b_.getInt64(r0 + r))));
          llvm::Value* splat = b_.CreateVectorSplat(static_cast<unsigned>(value_lanes_), p);
          for (int64_t c = 0; c < chunks; ++c) {
            next.push_back(Fma(splat, v[static_cast<size_t>(c)], acc[static_cast<size_t>(r * chunks + c)]));
          }
        }
        return next;
      });
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < chunks; ++c) {
      b_.CreateAlignedStore(sums[static_cast<size_t>(r * chunks + c)],
                            AccumulatorSlot(r0 + r, b_.CreateAdd(chunk0, b_.getInt64(c))), ChunkAlign());
    }
  }
}

// P·V of the tile for every row of the query tile: full groups of chunks_per_step_ chunks in a
// loop, then one group of the remaining chunks (the last possibly partial).
void FlashAttentionEmitter::ValueTile() {
  const int64_t full_chunks = value_dim_ / value_lanes_;
  const int64_t partial = value_dim_ % value_lanes_;
  const int64_t groups = full_chunks / chunks_per_step_;
  const int64_t rest = full_chunks % chunks_per_step_ + (partial != 0 ? 1 : 0);
  const int64_t rows = std::min(kRowsPerStep, query_tile_);
  for (int64_t r0 = 0; r0 < query_tile_; r0 += rows) {
    Loop(b_.getInt64(0), b_.getInt64(groups), "vgroup", [&](llvm::Value* g) {
      AccumulateValues(r0, rows, b_.CreateMul(g, b_.getInt64(chunks_per_step_)), chunks_per_step_, value_lanes_);
    });
    if (rest > 0) {
      AccumulateValues(r0, rows, b_.getInt64(groups * chunks_per_step_), rest, partial != 0 ? partial : value_lanes_);
    }
  }
}

// out[row, :] = acc[row, :] / (l + sum_init) for the block's rows, rounded to the element type.
void FlashAttentionEmitter::StoreRows(llvm::Value* sum_init) {
  llvm::Type* t = ComputeType();
  llvm::Type* memory = MemoryType(context_, element_);
  auto* chunk_type = llvm::FixedVectorType::get(t, static_cast<unsigned>(value_lanes_));
  const llvm::Align align(ElementByteWidth(element_));
  const int64_t full_chunks = value_dim_ / value_lanes_;
  const int64_t partial = value_dim_ % value_lanes_;
  Loop(b_.getInt64(0), b_.CreateSub(block_q_end_, block_q_begin_), "out", [&](llvm::Value* r) {
    llvm::Value* l = b_.CreateLoad(t, b_.CreateInBoundsGEP(t, l_, r));
    llvm::Value* total = b_.CreateVectorSplat(static_cast<unsigned>(value_lanes_), b_.CreateFAdd(l, sum_init));
    llvm::Value* out_row = b_.CreateMul(b_.CreateAdd(b_.CreateMul(block_batch_, b_.getInt64(queries_)),
                                                     b_.CreateAdd(block_q_begin_, r)), b_.getInt64(value_dim_));
    llvm::Value* acc_row = b_.CreateMul(r, b_.getInt64(accumulator_row_));
    auto chunk = [&](llvm::Value* c, int64_t lanes) {
      llvm::Value* offset = b_.CreateMul(c, b_.getInt64(value_lanes_));
      llvm::Value* acc = b_.CreateAlignedLoad(chunk_type, b_.CreateInBoundsGEP(t, accumulator_, b_.CreateAdd(acc_row, offset)), ChunkAlign());
      llvm::Value* value = Narrow(b_.CreateFDiv(acc, total));
      llvm::Value* address = b_.CreateInBoundsGEP(memory, bases_.back(), b_.CreateAdd(out_row, offset));
      prologue_->Tag(lanes == value_lanes_
                         ? static_cast<llvm::Instruction*>(
                               b_.CreateAlignedStore(value, address, align))
                         : b_.CreateMaskedStore(value, address, align, ChunkMask(lanes)),
                     KernelPrologue::kOutputs);
    };
    Loop(b_.getInt64(0), b_.getInt64(full_chunks), "outc", [&](llvm::Value* c) { chunk(c, value_lanes_); });
    if (partial != 0) chunk(b_.getInt64(full_chunks), partial);
  });
}

}  // namespace accy::jit::flash_attention_internal
