// Emitter of flash_attention work items (emitters.h; cluster rule 7 of src/fusion/fusion_plan.h):
// out = softmax(scale(Q·K) [+ mask]) · V over the batch dims, in f32, f16, bf16 or f64. Q, K
// and V are read in place through element strides from their dot_generals' dimension numbers
// (any order of batch, row and head dims, e.g. JAX's [batch, seq, heads, dim]; V's value dim
// contiguous); the output is P·V's [batch..., q, dv].
// f16 and bf16 compute in f32 (loads widen, the output rounds once to nearest even; exp rounds
// its argument and result to the element type as the reference's exponential op does); f64
// computes in double.
//
// The score matrix never exists in memory. A block is one batch entry (all batch dims
// flattened) x one query tile (one f32 register of rows: 16 on AVX-512, 8 on AVX2, 4 below,
// KernelTarget; fewer when the accumulator rows would pass kAccumulatorBytes, for value dims
// above 1024 f32 / 512 f64). The kernel computes in explicit lanes_-wide vectors whose lane r
// is query row r of the tile (lanes past the last row repeat it and are never stored), so the
// softmax is vertical: no horizontal reductions. Each lane's arithmetic is the same whatever
// the lane count and the key tiles and head-dim chunks are sized for 16 lanes on every ISA, so
// f32 results do not depend on the ISA either (f64's libm/libmvec exp may differ by an ulp
// between ISA levels). Per block:
//   Q^T of the tile packed once into qt[d][lane] (per head-dim chunk when head_dim > 256 f32)
//   per key tile (128 f32 / 64 f64 keys), scores[j][lane] = Q·K[j] as vector FMAs over d,
//     kKeysPerStep keys at once sharing each qt load, K elements broadcast (both K layouts);
//   then per key j in order: s = scores * scale [+ mask] (a gather when the operand varies
//     along the query dim), and the online softmax update per lane
//       m' = max(m, max_j s_j)      base = (m' == -inf ? 0 : m')
//       p_j = exp(s_j - base)       c = exp(m - base)
//       l = l * c + sum_j p_j       acc[:] = acc[:] * c + sum_j p_j * V[j, :]
//   with acc rows (compute type, on the stack) updated kRowsPerStep rows x chunks_per_step_
//     register-wide chunks of V at a time (a partial last chunk loads/stores masked);
//   and at the end out[:] = acc[:] / (l + sum_init). m starts at the max reduce's init value.
// Buffers (kernel_abi.h): Q, K, then the scale, mask and the two reduce init values when they
// are buffers (one-element constants are folded), then V; the output. Numerics against the
// unfused reference: f32 dot products as a chain of fused multiply-adds in head-dim order (in
// head-dim chunks of 256 added up when longer), the max exact, the sum and P·V in key order
// (fused multiply-adds), exp lowered as in elementwise kernels (the inline f32 polynomial of
// vector_math.h, libm for f64), and the division moved after P·V: within a small relative
// tolerance (tests/jit/flash_attention_test.cc), not bit-exact. Every order is fixed at compile
// time, so blocks do not depend on the thread count and runs are bitwise reproducible. Special
// rows agree: a row whose scores are all -inf gives 0/0 = NaN as the reference's
// exp(-inf - -inf) does, and NaN or +inf scores make the row NaN.
// Masked keys: when the mask is a constant packed lanes-major and, for a query tile, every key
// past some point is -inf in all the tile's rows (a causal mask), the block runs only the keys
// before it (FindMaskedKeyEnds, BlockKeyEnd): each skipped key would have added p = exp(-inf)
// = 0 and left the max alone, so the result is the same (up to the sign of a zero output),
// unless a skipped key's K or V row holds a NaN or an infinity, which makes the reference's
// row NaN; the block scans those rows first and then runs every key. About half the work of a
// causal attention.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "jit/emitters.h"
#include "jit/flash_attention_emitter.h"
#include "jit/index_math.h"
#include "jit/kernel_abi.h"
#include "jit/row_accumulation.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace flash_attention_internal {
namespace {

Status Unsupported(const WorkItem& item, const std::string& what) {
  return absl::UnimplementedError(StrCat("jit: flash_attention emitter: work item ", item.id,
                                         " (root ", item.root->name(), "): ", what));
}

}  // namespace

int FlashAttentionEmitter::BufferOf(const Value* value) {
  auto it = std::find(signature_.inputs.begin(), signature_.inputs.end(), value);
  if (it != signature_.inputs.end()) return static_cast<int>(it - signature_.inputs.begin());
  signature_.inputs.push_back(value);
  return static_cast<int>(signature_.inputs.size()) - 1;
}

StatusOr<Access> FlashAttentionEmitter::ScoreAccess(const Value* value) {
  std::vector<int64_t> space = batch_dims_;
  space.push_back(queries_);
  space.push_back(keys_);
  Access access;
  access.strides.assign(space.size(), 0);
  const Value* source = value;
  const Operation* def = value->defining_op();
  if (def != nullptr && def->kind() == OpKind::kBroadcastInDim && fusion_.IsElided(def)) {
    source = def->operand(0);
    const std::vector<int64_t>& dims = source->type().dims();
    const std::vector<int64_t> map = def->GetInts("broadcast_dimensions");
    if (map.size() != dims.size() || def->result(0)->type().dims() != space) {
      return Unsupported(item_, "a scale or mask broadcast that does not cover the score shape");
    }
    const std::vector<int64_t> strides = RowMajorStrides(dims);
    for (size_t k = 0; k < map.size(); ++k) {
      if (dims[k] != 1) access.strides[static_cast<size_t>(map[k])] = strides[k];
    }
  } else if (value->type().dims() == space) {
    access.strides = RowMajorStrides(space);
  } else if (value->type().rank() != 0) {
    return Unsupported(item_, "a scale or mask operand that does not have the score shape");
  }
  if (source->type().element_type() != element_) {
    return Unsupported(item_, StrCat("a scale or mask of element type ",
                                     ElementTypeName(source->type().element_type()), ", expected ",
                                     ElementTypeName(element_)));
  }
  const Operation* source_def = source->defining_op();
  const DenseElements* dense = source_def != nullptr && source_def->kind() == OpKind::kConstant
                                   ? source_def->GetDense("value")
                                   : nullptr;
  access.payload = dense;
  if (dense != nullptr && source->type().element_count() == 1 &&
      static_cast<int64_t>(dense->bytes.size()) == ElementByteWidth(element_)) {
    access.constant = dense->bytes.data();
  } else {
    access.buffer = BufferOf(source);
  }
  return access;
}

Status FlashAttentionEmitter::Match() {
  if (item_.kind != WorkKind::kFlashAttention) {
    return Unsupported(item_, StrCat("kind ", WorkKindName(item_.kind), " is not flash_attention"));
  }
  members_.insert(item_.ops.begin(), item_.ops.end());
  const Operation* pv = item_.ops.back();
  element_ = pv->result(0)->type().element_type();
  if (element_ != ElementType::kF32 && element_ != ElementType::kF16 &&
      element_ != ElementType::kBF16 && element_ != ElementType::kF64) {
    return Unsupported(item_, StrCat("element type ", ElementTypeName(element_),
                                     " (f32, f16, bf16 or f64)"));
  }
  compute_ = element_ == ElementType::kF64 ? ElementType::kF64 : ElementType::kF32;
  for (const Operation* op : item_.ops) {
    for (const Value* v : op->operands()) {
      if (v->type().element_type() != element_) {
        return Unsupported(item_, StrCat(op->name(), " has element type ",
                                         ElementTypeName(v->type().element_type()),
                                         ", expected ", ElementTypeName(element_),
                                         " as the rest of the cluster"));
      }
    }
  }
  if (pv->kind() != OpKind::kDotGeneral || pv->result(0) != item_.output_value) {
    return Unsupported(item_, "the root is not the P·V dot_general");
  }
  const Operation* divide = Member(pv->operand(0), OpKind::kDivide);
  exp_ = divide != nullptr ? Member(divide->operand(0), OpKind::kExponential) : nullptr;
  sum_ = divide != nullptr ? ThroughBroadcast(divide->operand(1), OpKind::kReduce) : nullptr;
  const Operation* sub = exp_ != nullptr ? Member(exp_->operand(0), OpKind::kSubtract) : nullptr;
  max_ = sub != nullptr ? ThroughBroadcast(sub->operand(1), OpKind::kReduce) : nullptr;
  if (sum_ == nullptr || max_ == nullptr || sum_->operand(0) != exp_->result(0) ||
      max_->operand(0) != sub->operand(0) || RowReducer(*sum_) != OpKind::kAdd ||
      RowReducer(*max_) != OpKind::kMaximum) {
    return Unsupported(item_, "the probabilities are not exp(s - max(s)) / sum(exp(s - max(s)))");
  }
  const Value* s = sub->operand(0);
  mask_ = Member(s, OpKind::kAdd);
  const Value* scaled = s;
  if (mask_ != nullptr) {
    const bool left = Member(mask_->operand(0), OpKind::kMultiply) != nullptr ||
                      Member(mask_->operand(0), OpKind::kDivide) != nullptr;
    scaled = mask_->operand(left ? 0 : 1);
    mask_value_ = mask_->operand(left ? 1 : 0);
  }
  scale_ = Member(scaled, OpKind::kMultiply);
  if (scale_ == nullptr) scale_ = Member(scaled, OpKind::kDivide);
  if (scale_ == nullptr) return Unsupported(item_, "no scale multiply or divide of Q·K");
  for (int64_t k = 0; k < 2 && qk_ == nullptr; ++k) {
    if (scale_->kind() == OpKind::kDivide && k == 1) break;
    qk_ = Member(scale_->operand(k), OpKind::kDotGeneral);
    if (qk_ != nullptr) scale_value_ = scale_->operand(1 - k);
  }
  if (qk_ == nullptr) return Unsupported(item_, "the scale does not read Q·K");
  if (item_.ops.size() != (mask_ != nullptr ? 9u : 8u)) {
    return Unsupported(item_, StrCat(item_.ops.size(), " ops, expected the attention pattern"));
  }

  // Q, K and V each have the batch dims (in the dims the dot_generals pair), one row dim
  // (queries, keys) and one contracted dim (head dim for Q and K, keys for V), in any order;
  // V's free dim (the value dim) is its last. P is P·V's lhs, [batch..., q, k].
  struct Operand {
    std::vector<int64_t> batch_strides;
    int64_t rows = 0, row_stride = 0, inner = 0, inner_stride = 0;
  };
  auto operand = [&](const Operation& dot, int64_t side, bool contracted_rows,
                     Operand& out) -> bool {
    const std::vector<int64_t>& dims = dot.operand(side)->type().dims();
    const std::string prefix = side == 0 ? "lhs" : "rhs";
    const std::vector<int64_t> batching = dot.GetInts(prefix + "_batching_dimensions");
    const std::vector<int64_t> contracting = dot.GetInts(prefix + "_contracting_dimensions");
    if (contracting.size() != 1 || batching.size() + 2 != dims.size()) return false;
    int64_t free = -1;
    for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
      if (d != contracting[0] && std::find(batching.begin(), batching.end(), d) == batching.end()) free = d;
    }
    if (free < 0) return false;
    const std::vector<int64_t> strides = RowMajorStrides(dims);
    for (int64_t d : batching) out.batch_strides.push_back(strides[static_cast<size_t>(d)]);
    const int64_t row = contracted_rows ? contracting[0] : free;
    const int64_t inner = contracted_rows ? free : contracting[0];
    out.rows = dims[static_cast<size_t>(row)];
    out.row_stride = strides[static_cast<size_t>(row)];
    out.inner = dims[static_cast<size_t>(inner)];
    out.inner_stride = strides[static_cast<size_t>(inner)];
    return true;
  };
  Operand q, k, v;
  const std::vector<int64_t>& p = pv->operand(0)->type().dims();
  const size_t b = p.size() - 2;
  if (!operand(*qk_, 0, false, q) || !operand(*qk_, 1, false, k) || !operand(*pv, 1, true, v) ||
      q.batch_strides.size() != b || v.inner_stride != 1) {
    return Unsupported(item_, "Q, K and V are not [batch..., rows, dim] in some dim order with V's "
                              "value dim last");
  }
  batch_dims_.assign(p.begin(), p.begin() + static_cast<int64_t>(b));
  for (int64_t d : batch_dims_) batch_ *= d;
  queries_ = q.rows;
  head_dim_ = q.inner;
  keys_ = k.rows;
  value_dim_ = v.inner;
  if (p[b] != queries_ || p[b + 1] != keys_ || v.rows != keys_ || k.inner != head_dim_) {
    return Unsupported(item_, "Q, K and V shapes do not agree");
  }
  q_batch_strides_ = q.batch_strides;
  k_batch_strides_ = k.batch_strides;
  v_batch_strides_ = v.batch_strides;
  q_row_stride_ = q.row_stride;
  q_d_stride_ = q.inner_stride;
  k_row_stride_ = k.row_stride;
  k_d_stride_ = k.inner_stride;
  v_row_stride_ = v.row_stride;
  if (value_dim_ > kMaxValueDim) {
    return Unsupported(item_, StrCat("value dim ", value_dim_, " above ", kMaxValueDim));
  }
  return absl::OkStatus();
}

FlashAttentionEmitter::Carried FlashAttentionEmitter::CarryLoop(
    llvm::Value* begin, llvm::Value* end, const std::string& name, const Carried& init,
    const std::function<Carried(llvm::Value*, const Carried&)>& body) {
  llvm::BasicBlock* before = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context_, name, function_);
  auto* done = llvm::BasicBlock::Create(context_, name + ".done", function_);
  b_.CreateCondBr(b_.CreateICmpSLT(begin, end), header, done);
  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, name + ".i");
  i->addIncoming(begin, before);
  std::vector<llvm::PHINode*> phis;
  Carried current;
  for (llvm::Value* value : init) {
    phis.push_back(b_.CreatePHI(value->getType(), 2));
    phis.back()->addIncoming(value, before);
    current.push_back(phis.back());
  }
  Carried next = body(i, current);
  llvm::Value* next_i = b_.CreateAdd(i, b_.getInt64(1), name + ".next", true, true);
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  i->addIncoming(next_i, latch);
  for (size_t k = 0; k < phis.size(); ++k) phis[k]->addIncoming(next[k], latch);
  llvm::BranchInst* back = b_.CreateCondBr(b_.CreateICmpSLT(next_i, end), header, done);
  // No LLVM unrolling: the kernel is explicit vector code already blocked for its registers
  // (kKeysPerStep accumulators per dot, whole-vector rows), and LLVM's partial and runtime
  // unrolling of its loops (16 loops by 16, several by 2-8) took most of its compile time
  // (transformer block: the FA kernel 233 -> ~75 ms in opt + llc; `accy demo` cold compile
  // 258-302 -> 98-130 ms) for no run-time gain on AVX-512 (BM_FlashAttention seq 128 / 512 at
  // 1 thread: 0.394-0.395 / 5.22-5.24 ms with, 0.397 / 5.24-5.25 without) and a loss under
  // the AVX2 cap, where the unrolled loops spilled (0.548 / 7.83 ms with, 0.465 / 6.61
  // without; Zen 4, 2026-12-05).
  SetLoopHint(back, "llvm.loop.unroll.disable");
  b_.SetInsertPoint(done);
  Carried after;
  for (size_t k = 0; k < init.size(); ++k) {
    llvm::PHINode* phi = b_.CreatePHI(init[k]->getType(), 2);
    phi->addIncoming(init[k], before);
    phi->addIncoming(next[k], latch);
    after.push_back(phi);
  }
  return after;
}

void FlashAttentionEmitter::Loop(llvm::Value* begin, llvm::Value* end, const std::string& name,
                                 const std::function<void(llvm::Value*)>& body) {
  CarryLoop(begin, end, name, {}, [&](llvm::Value* i, const Carried&) {
    body(i);
    return Carried{};
  });
}

// One element of `buffer` in the compute type.
llvm::Value* FlashAttentionEmitter::Load(int buffer, llvm::Value* index) {
  llvm::Type* memory = MemoryType(context_, element_);
  llvm::Value* address = b_.CreateInBoundsGEP(memory, bases_[static_cast<size_t>(buffer)], index);
  llvm::LoadInst* loaded =
      b_.CreateAlignedLoad(memory, address, llvm::Align(ElementByteWidth(element_)));
  prologue_->Tag(loaded, KernelPrologue::kInputs);
  return lowering_.ConvertElement(loaded, element_, compute_);
}

llvm::Value* FlashAttentionEmitter::Read(const Access& access, llvm::Value* offset) {
  if (access.constant != nullptr) {
    return lowering_.ConvertElement(lowering_.ConstantElement(element_, access.constant),
                                    element_, compute_);
  }
  return Load(access.buffer, offset);
}

// The cluster's exponential op on a compute-type value: through the element type and back, so
// f16/bf16 round as the reference's exp does.
llvm::Value* FlashAttentionEmitter::Exp(llvm::Value* x) {
  llvm::Value* operands[] = {lowering_.ConvertElement(x, compute_, element_)};
  llvm::Value* e = lowering_.Emit(*exp_, operands).value();  // float exp: always lowerable
  return lowering_.ConvertElement(e, element_, compute_);
}


StatusOr<KernelSignature> FlashAttentionEmitter::Emit(std::string_view symbol) {
  ACCY_RETURN_IF_ERROR(Match());
  q_buffer_ = BufferOf(qk_->operand(0));
  k_buffer_ = BufferOf(qk_->operand(1));
  ACCY_ASSIGN_OR_RETURN(Access scale, ScoreAccess(scale_value_));
  Access mask;
  if (mask_ != nullptr) {
    ACCY_ASSIGN_OR_RETURN(mask, ScoreAccess(mask_value_));
  }
  ACCY_ASSIGN_OR_RETURN(Access max_init, ScoreAccess(max_->operand(1)));
  ACCY_ASSIGN_OR_RETURN(Access sum_init, ScoreAccess(sum_->operand(1)));
  v_buffer_ = BufferOf(item_.ops.back()->operand(1));
  signature_.outputs.push_back(item_.output_value);

  // Geometry (file comment): value chunks of 64 bytes; the query tile halves until the
  // accumulator rows fit kAccumulatorBytes.
  const int64_t bytes = ElementByteWidth(compute_);
  value_lanes_ = vector_bits_ / 8 / bytes;
  accumulator_row_ = BlockCount(value_dim_, value_lanes_) * value_lanes_;
  query_tile_ = lanes_;
  while (query_tile_ > 1 && query_tile_ * accumulator_row_ * bytes > kAccumulatorBytes) query_tile_ /= 2;
  // Key tiles and head-dim chunks are sized for 16 lanes whatever lanes_ is: they set where the
  // online softmax rescales and how long dot products are split, so every ISA gets the same bits.
  const int64_t key_tile = kScoreTileBytes / (kGeometryLanes * bytes);
  const int64_t head_chunk = kQueryPackBytes / (kGeometryLanes * bytes);
  const int64_t query_tiles = BlockCount(queries_, query_tile_);
  signature_.block_size = query_tile_;
  signature_.block_count = value_dim_ == 0 ? 0 : batch_ * query_tiles;

  llvm::Type* t = ComputeType();
  vector_ = llvm::FixedVectorType::get(t, lanes_);
  prologue_.emplace(module_, b_, symbol, signature_.inputs.size() + 1, "accy.attention");
  function_ = prologue_->function();
  // The kernel's explicit vectors are whole registers of the target (zmm on AVX-512).
  function_->addFnAttr("min-legal-vector-width", std::to_string(vector_bits_));
  for (size_t i = 0; i <= signature_.inputs.size(); ++i) bases_.push_back(prologue_->buffer(i));
  auto stack = [&](llvm::Type* type, int64_t count) {
    llvm::AllocaInst* slot = b_.CreateAlloca(llvm::ArrayType::get(type, static_cast<uint64_t>(std::max<int64_t>(count, 1))));
    slot->setAlignment(llvm::Align(64));
    return slot;
  };
  qt_ = stack(t, std::min(head_dim_, head_chunk) * lanes_);
  scores_ = stack(t, key_tile * lanes_);
  accumulator_ = stack(t, query_tile_ * accumulator_row_);
  m_ = stack(vector_, 1);
  l_ = stack(vector_, 1);
  correction_ = stack(vector_, 1);
  auto c64 = [&](int64_t v) { return b_.getInt64(v); };
  if (mask_ != nullptr) PackLanesMajor(mask, query_tiles);

  Loop(prologue_->block_begin(), prologue_->block_end(), "block", [&](llvm::Value* block) {
    block_batch_ = b_.CreateUDiv(block, c64(query_tiles));
    block_q_begin_ = b_.CreateMul(b_.CreateURem(block, c64(query_tiles)), c64(query_tile_));
    block_q_end_ = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(block_q_begin_, c64(query_tile_)), c64(queries_));
    // Offsets of this batch entry into the scale/mask accesses (score space strides).
    auto batch_offset = [&](const Access& access) -> llvm::Value* {
      return BatchOffset(std::vector<int64_t>(access.strides.begin(), access.strides.end() - 2));
    };
    // Query row of each lane, clamped to the last row (lanes past it read valid memory).
    std::vector<llvm::Constant*> lanes;
    for (int64_t lane = 0; lane < lanes_; ++lane) lanes.push_back(b_.getInt64(lane));
    block_lane_rows_ = b_.CreateBinaryIntrinsic(
        llvm::Intrinsic::smin, b_.CreateAdd(b_.CreateVectorSplat(lanes_, block_q_begin_), llvm::ConstantVector::get(lanes)),
        b_.CreateVectorSplat(lanes_, c64(queries_ - 1)));
    block_scale_ = PrepareScoreOperand(scale, batch_offset(scale));
    if (mask_ != nullptr) block_mask_ = PrepareScoreOperand(mask, batch_offset(mask));
    block_q_batch_ = BatchOffset(q_batch_strides_);
    block_k_batch_ = BatchOffset(k_batch_strides_);
    block_v_batch_ = BatchOffset(v_batch_strides_);
    b_.CreateAlignedStore(Splat(Read(max_init, c64(0))), m_, VectorAlign());
    b_.CreateAlignedStore(llvm::Constant::getNullValue(vector_), l_, VectorAlign());
    b_.CreateMemSet(accumulator_, b_.getInt8(0), static_cast<uint64_t>(query_tile_ * accumulator_row_ * bytes), llvm::Align(64));
    const bool one_chunk = head_dim_ <= head_chunk;
    if (one_chunk) PackQueries(c64(0), c64(head_dim_));
    // Keys [0, key_end): a causal mask's keys past the tile's last open one are skipped.
    llvm::Value* key_end = key_ends_ != nullptr ? BlockKeyEnd(block, query_tiles) : c64(keys_);
    llvm::Value* key_tiles = b_.CreateUDiv(b_.CreateAdd(key_end, c64(key_tile - 1)), c64(key_tile));
    Loop(c64(0), key_tiles, "tile", [&](llvm::Value* tile) {
      block_k0_ = b_.CreateMul(tile, c64(key_tile));
      block_length_ = b_.CreateSub(b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(block_k0_, c64(key_tile)), key_end), block_k0_);
      if (one_chunk) {
        ScoreTile(c64(0), c64(head_dim_), /*accumulate=*/false);
      } else {
        // Head dims in chunks of head_chunk: the packed Q holds one chunk; the scores add up.
        b_.CreateMemSet(scores_, b_.getInt8(0), static_cast<uint64_t>(key_tile * lanes_ * bytes), llvm::Align(64));
        Loop(c64(0), c64(BlockCount(head_dim_, head_chunk)), "dchunk", [&](llvm::Value* chunk) {
          llvm::Value* d0 = b_.CreateMul(chunk, c64(head_chunk));
          llvm::Value* length = b_.CreateSub(b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(d0, c64(head_chunk)), c64(head_dim_)), d0);
          PackQueries(d0, length);
          ScoreTile(d0, length, /*accumulate=*/true);
        });
      }
      SoftmaxTile();
      ValueTile();
    });
    StoreRows(Read(sum_init, c64(0)));
  });
  b_.CreateRetVoid();
  return std::move(signature_);
}

void FlashAttentionEmitter::PackLanesMajor(Access& access, int64_t query_tiles) {
  const size_t rank = access.strides.size();
  if (access.payload == nullptr || access.constant != nullptr || element_ != compute_) return;
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (access.strides[d] != 0) return;
  }
  const int64_t query_stride = access.strides[rank - 2], key_stride = access.strides[rank - 1];
  const int64_t bytes = ElementByteWidth(element_);
  const int64_t count = query_tiles * keys_ * lanes_;
  if (query_stride == 0 || count * bytes > kMaxPackedBytes) return;
  // Lane `lane` of tile t is query row min(t * query_tile + lane, queries - 1), as
  // block_lane_rows_ (lanes past the tile are computed and never stored).
  std::vector<uint8_t> packed(static_cast<size_t>(count * bytes));
  const uint8_t* data = access.payload->bytes.data();
  for (int64_t t = 0; t < query_tiles; ++t) {
    for (int64_t key = 0; key < keys_; ++key) {
      for (int64_t lane = 0; lane < lanes_; ++lane) {
        const int64_t row = std::min(t * query_tile_ + lane, queries_ - 1);
        std::memcpy(&packed[static_cast<size_t>(((t * keys_ + key) * lanes_ + lane) * bytes)],
                    data + (row * query_stride + key * key_stride) * bytes, static_cast<size_t>(bytes));
      }
    }
  }
  FindMaskedKeyEnds(packed, query_tiles);
  llvm::Constant* init = llvm::ConstantDataArray::getRaw(
      llvm::StringRef(reinterpret_cast<const char*>(packed.data()), packed.size()),
      static_cast<uint64_t>(count), ComputeType());
  auto* global = new llvm::GlobalVariable(module_, init->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, init,
                                          StrCat(function_->getName().str(), ".packed_mask"));
  global->setAlignment(llvm::Align(64));
  access.packed = global;
}

void FlashAttentionEmitter::FindMaskedKeyEnds(const std::vector<uint8_t>& packed, int64_t query_tiles) {
  const int64_t bytes = ElementByteWidth(compute_);
  auto masked = [&](int64_t index) {  // the packed element is -inf (a NaN is not)
    if (compute_ == ElementType::kF64) {
      double v;
      std::memcpy(&v, &packed[static_cast<size_t>(index * bytes)], sizeof v);
      return v == -std::numeric_limits<double>::infinity();
    }
    float v;
    std::memcpy(&v, &packed[static_cast<size_t>(index * bytes)], sizeof v);
    return v == -std::numeric_limits<float>::infinity();
  };
  std::vector<uint64_t> ends(static_cast<size_t>(query_tiles), 0);
  bool shorter = false;
  for (int64_t t = 0; t < query_tiles; ++t) {
    // Only the tile's own rows count: lanes past them are computed and never stored.
    const int64_t rows = std::min(query_tile_, queries_ - t * query_tile_);
    int64_t end = keys_;
    while (end > 0) {
      bool all_masked = true;
      for (int64_t lane = 0; lane < rows && all_masked; ++lane) {
        all_masked = masked((t * keys_ + end - 1) * lanes_ + lane);
      }
      if (!all_masked) break;
      --end;
    }
    ends[static_cast<size_t>(t)] = static_cast<uint64_t>(end);
    shorter = shorter || end < keys_;
  }
  if (!shorter) return;
  llvm::Constant* init = llvm::ConstantDataArray::get(context_, ends);
  key_ends_ = new llvm::GlobalVariable(module_, init->getType(), /*isConstant=*/true,
                                       llvm::GlobalValue::PrivateLinkage, init,
                                       StrCat(function_->getName().str(), ".key_ends"));
}

llvm::Value* FlashAttentionEmitter::AnyNonFinite(int buffer, llvm::Value* begin, llvm::Value* end) {
  const bool f64 = compute_ == ElementType::kF64;
  llvm::Type* bits_type = f64 ? b_.getInt64Ty() : b_.getInt32Ty();
  llvm::Constant* exponent = llvm::ConstantInt::get(bits_type, f64 ? 0x7FF0000000000000ull : 0x7F800000u);
  llvm::Constant* magnitude = llvm::ConstantInt::get(bits_type, f64 ? 0x7FFFFFFFFFFFFFFFull : 0x7FFFFFFFu);
  // A NaN or an infinity is a magnitude (the bits without the sign) at or above the all-ones
  // exponent's: the largest magnitude is kept (an and and an unsigned max per vector, where
  // or-ing per-element flags took five instructions).
  llvm::Value* largest = CarryLoop(begin, end, "finite", {llvm::ConstantInt::get(bits_type, 0)},
      [&](llvm::Value* i, const Carried& max) -> Carried {
        llvm::Value* bits = b_.CreateBitCast(Load(buffer, i), bits_type);
        return {b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, max[0], b_.CreateAnd(bits, magnitude))};
      })[0];
  return b_.CreateICmpUGE(largest, exponent);
}

llvm::Value* FlashAttentionEmitter::BlockKeyEnd(llvm::Value* block, int64_t query_tiles) {
  auto c64 = [&](int64_t v) { return b_.getInt64(v); };
  llvm::Value* tile = b_.CreateURem(block, c64(query_tiles));
  llvm::Value* end = b_.CreateAlignedLoad(
      b_.getInt64Ty(), b_.CreateInBoundsGEP(b_.getInt64Ty(), key_ends_, tile), llvm::Align(8));
  // The skipped keys add exp(-inf) = 0 times V to each row and leave its max alone, exactly,
  // unless their K rows (a NaN score) or V rows (0 * inf) are not finite.
  llvm::Value* bad = AnyNonFiniteRows(v_buffer_, block_v_batch_, end, c64(keys_), v_row_stride_,
                                      value_dim_, 1);
  bad = b_.CreateOr(bad, AnyNonFiniteRows(k_buffer_, block_k_batch_, end, c64(keys_), k_row_stride_,
                                          head_dim_, k_d_stride_));
  return b_.CreateSelect(bad, c64(keys_), end);
}

llvm::Value* FlashAttentionEmitter::AnyNonFiniteRows(int buffer, llvm::Value* base, llvm::Value* first,
                                                     llvm::Value* last, int64_t row_stride,
                                                     int64_t length, int64_t element_stride) {
  auto c64 = [&](int64_t v) { return b_.getInt64(v); };
  if (element_stride == 1 && row_stride == length) {  // one contiguous range
    return AnyNonFinite(buffer, b_.CreateAdd(base, b_.CreateMul(first, c64(length))),
                        b_.CreateAdd(base, b_.CreateMul(last, c64(length))));
  }
  if (element_stride == 1) {  // contiguous rows
    return CarryLoop(first, last, "finite.row", {b_.getFalse()},
        [&](llvm::Value* row, const Carried& flag) -> Carried {
          llvm::Value* begin = b_.CreateAdd(base, b_.CreateMul(row, c64(row_stride)));
          return {b_.CreateOr(flag[0], AnyNonFinite(buffer, begin, b_.CreateAdd(begin, c64(length))))};
        })[0];
  }
  if (row_stride == 1) {  // contiguous columns (K as [batch..., d, k]): one range per element
    return CarryLoop(c64(0), c64(length), "finite.col", {b_.getFalse()},
        [&](llvm::Value* e, const Carried& flag) -> Carried {
          llvm::Value* column = b_.CreateAdd(base, b_.CreateMul(e, c64(element_stride)));
          return {b_.CreateOr(flag[0], AnyNonFinite(buffer, b_.CreateAdd(column, first),
                                                    b_.CreateAdd(column, last)))};
        })[0];
  }
  // Element by element (neither rows nor columns contiguous).
  return CarryLoop(c64(0), c64(length), "finite.e", {b_.getFalse()},
      [&](llvm::Value* e, const Carried& flag) -> Carried {
        llvm::Value* column = b_.CreateAdd(base, b_.CreateMul(e, c64(element_stride)));
        llvm::Value* any = CarryLoop(first, last, "finite.r", {b_.getFalse()},
            [&](llvm::Value* row, const Carried& inner) -> Carried {
              llvm::Value* index = b_.CreateAdd(column, b_.CreateMul(row, c64(row_stride)));
              return {b_.CreateOr(inner[0], AnyNonFinite(buffer, index, b_.CreateAdd(index, c64(1))))};
            })[0];
        return {b_.CreateOr(flag[0], any)};
      })[0];
}

llvm::Value* FlashAttentionEmitter::BatchOffset(const std::vector<int64_t>& strides) {
  llvm::Value* offset = b_.getInt64(0);
  llvm::Value* rest = block_batch_;
  for (int64_t d = static_cast<int64_t>(batch_dims_.size()) - 1; d >= 0; --d) {
    llvm::Value* extent = b_.getInt64(batch_dims_[static_cast<size_t>(d)]);
    llvm::Value* coord = d == 0 ? rest : b_.CreateURem(rest, extent);
    if (d > 0) rest = b_.CreateUDiv(rest, extent);
    if (strides[static_cast<size_t>(d)] != 0) {
      offset = b_.CreateAdd(offset, b_.CreateMul(coord, b_.getInt64(strides[static_cast<size_t>(d)])));
    }
  }
  return offset;
}

}  // namespace flash_attention_internal

StatusOr<KernelSignature> EmitFlashAttentionKernel(const WorkItem& item, const FusionPlan& fusion,
                                                   llvm::Module& module, std::string_view symbol,
                                                   const KernelTarget& target) {
  flash_attention_internal::FlashAttentionEmitter emitter(item, fusion, module, target);
  return emitter.Emit(symbol);
}

}  // namespace accy::jit
