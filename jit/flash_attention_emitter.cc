// Emitter of flash_attention work items (emitters.h; cluster rule 7 of src/fusion/fusion_plan.h):
// out = softmax(scale(Q·K) [+ mask]) · V over leading batch dims, in f32, f16, bf16 or f64.
// f16 and bf16 compute in f32 (loads widen, the output rounds once to nearest even; exp rounds
// its argument and result to the element type as the reference's exponential op does); f64
// computes in double.
//
// The score matrix never exists in memory. A block is one batch entry (all batch dims
// flattened) x one query tile (16 rows; fewer when the accumulator rows would pass
// kAccumulatorBytes, for value dims above 1024 f32 / 512 f64). The kernel computes in explicit
// 16-lane vectors whose lane r is query row r of the tile (lanes past the last row repeat it
// and are never stored), so the softmax is vertical: no horizontal reductions. Per block:
//   Q^T of the tile packed once into qt[d][lane] (per head-dim chunk when head_dim > 256 f32)
//   per key tile (128 f32 / 64 f64 keys), scores[j][lane] = Q·K[j] as vector FMAs over d,
//     kKeysPerStep keys at once sharing each qt load, K elements broadcast (both K layouts);
//   then per key j in order: s = scores * scale [+ mask] (a gather when the operand varies
//     along the query dim), and the online softmax update per lane
//       m' = max(m, max_j s_j)      base = (m' == -inf ? 0 : m')
//       p_j = exp(s_j - base)       c = exp(m - base)
//       l = l * c + sum_j p_j       acc[:] = acc[:] * c + sum_j p_j * V[j, :]
//   with acc rows (compute type, on the stack) updated kRowsPerStep rows x kChunksPerStep
//     64-byte chunks of V at a time in registers (a partial last chunk loads/stores masked);
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
#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "jit/elementwise_lowering.h"
#include "jit/index_math.h"
#include "jit/emitters.h"
#include "jit/kernel_abi.h"
#include "jit/row_accumulation.h"
#include "jit/vector_math.h"
#include "src/fusion/fusion_plan.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

constexpr int64_t kLanes = 16;  // query rows per vector (the largest query tile)
constexpr int64_t kMaxValueDim = kFlashAttentionMaxValueDim;
// Stack budgets (bytes): the block's accumulator rows, one key tile of scores, the packed Q^T.
constexpr int64_t kAccumulatorBytes = 64 * 1024;
constexpr int64_t kScoreTileBytes = 8 * 1024;
constexpr int64_t kQueryPackBytes = 16 * 1024;
// Register blocking: keys per score step (f32, f64: one vector accumulator each, a 16-lane f64
// vector is two registers), and rows x 64-byte chunks of P·V accumulators.
constexpr int64_t kKeysPerStep = 8;
constexpr int64_t kKeysPerStepF64 = 4;
constexpr int64_t kRowsPerStep = 4;
constexpr int64_t kChunksPerStep = 4;

Status Unsupported(const WorkItem& item, const std::string& what) {
  return absl::UnimplementedError(StrCat("jit: flash_attention emitter: work item ", item.id,
                                         " (root ", item.root->name(), "): ", what));
}

// A read of a value over the score space [batch..., q, k]: a buffer through strides, or a folded
// one-element constant.
struct Access {
  int buffer = -1;
  const uint8_t* constant = nullptr;
  std::vector<int64_t> strides;  // per score dim
};

class FlashAttentionEmitter {
 public:
  FlashAttentionEmitter(const WorkItem& item, const FusionPlan& fusion, llvm::Module& module)
      : item_(item), fusion_(fusion), module_(module), context_(module.getContext()),
        b_(context_), lowering_(module, b_) {}

  StatusOr<KernelSignature> Emit(std::string_view symbol);

 private:
  // The op defining `value` when it is a cluster member of `kind`, else null.
  const Operation* Member(const Value* value, OpKind kind) const {
    const Operation* def = value->defining_op();
    return def != nullptr && def->kind() == kind && members_.count(def) != 0 ? def : nullptr;
  }
  // The cluster member behind an elided row broadcast feeding `value`'s use, of `kind`.
  const Operation* ThroughBroadcast(const Value* value, OpKind kind) const {
    const Operation* def = value->defining_op();
    if (def == nullptr || def->kind() != OpKind::kBroadcastInDim || !fusion_.IsElided(def)) {
      return nullptr;
    }
    return Member(def->operand(0), kind);
  }
  Status Match();
  int BufferOf(const Value* value);
  StatusOr<Access> ScoreAccess(const Value* value);
  using Carried = std::vector<llvm::Value*>;
  // A counted loop over [begin, end): `body` maps the carried values (phis) of iteration i to
  // the next ones; returns the values after the loop (`init` when it runs zero times).
  Carried CarryLoop(llvm::Value* begin, llvm::Value* end, const std::string& name,
                    const Carried& init,
                    const std::function<Carried(llvm::Value*, const Carried&)>& body);
  void Loop(llvm::Value* begin, llvm::Value* end, const std::string& name,
            const std::function<void(llvm::Value*)>& body);
  llvm::Value* Load(int buffer, llvm::Value* index);
  llvm::Value* Read(const Access& access, llvm::Value* offset);
  llvm::Value* Exp(llvm::Value* x);
  // A score-space operand prepared for one block: a folded splat, a scalar per key (no query
  // stride), or per-lane offsets `rows` (base + row * query stride) to gather from.
  struct ScoreOperand {
    const Access* access = nullptr;
    llvm::Value* splat = nullptr;
    llvm::Value* base = nullptr;
    llvm::Value* rows = nullptr;
  };
  llvm::Value* Splat(llvm::Value* scalar);
  llvm::Value* Fma(llvm::Value* a, llvm::Value* x, llvm::Value* addend);
  llvm::Value* Widen(llvm::Value* v);
  llvm::Value* Narrow(llvm::Value* v);
  llvm::Value* VectorExp(llvm::Value* x);
  ScoreOperand PrepareScoreOperand(const Access& access, llvm::Value* batch_offset);
  llvm::Value* ScoreVector(const ScoreOperand& op, llvm::Value* key);
  void PackQueries(llvm::Value* d0, llvm::Value* length);
  llvm::Value* ScoreSlot(llvm::Value* j);
  void ScoreKeys(llvm::Value* j0, int64_t count, llvm::Value* d0, llvm::Value* length, bool accumulate);
  void ScoreTile(llvm::Value* d0, llvm::Value* length, bool accumulate);
  void SoftmaxTile();
  llvm::Value* LoadValueChunk(llvm::Value* index, int64_t lanes);
  llvm::Value* ChunkMask(int64_t lanes);
  llvm::Value* AccumulatorSlot(int64_t row, llvm::Value* chunk);
  void AccumulateValues(int64_t r0, int64_t rows, llvm::Value* chunk0, int64_t chunks, int64_t last_lanes);
  void ValueTile();
  void StoreRows(llvm::Value* sum_init);
  // The element type of every operand, and the type the kernel computes in (f32, or f64).
  ElementType element_ = ElementType::kF32;
  ElementType compute_ = ElementType::kF32;
  llvm::Type* ComputeType() { return compute_ == ElementType::kF64 ? b_.getDoubleTy() : b_.getFloatTy(); }

  const WorkItem& item_;
  const FusionPlan& fusion_;
  llvm::Module& module_;
  llvm::LLVMContext& context_;
  llvm::IRBuilder<> b_;
  ElementwiseLowering lowering_;
  std::set<const Operation*> members_;
  KernelSignature signature_;

  // The matched ops.
  const Operation* qk_ = nullptr;
  const Operation* scale_ = nullptr;  // multiply or divide
  const Operation* mask_ = nullptr;   // add, or null
  const Operation* max_ = nullptr;
  const Operation* exp_ = nullptr;
  const Operation* sum_ = nullptr;
  const Value* scale_value_ = nullptr;
  const Value* mask_value_ = nullptr;
  // Dims.
  std::vector<int64_t> batch_dims_;
  int64_t batch_ = 1, queries_ = 0, keys_ = 0, head_dim_ = 0, value_dim_ = 0;
  bool keys_transposed_ = false;  // K is [batch..., d, k]

  // Kernel geometry (Emit): elements per 64-byte value chunk, accumulator row length (value
  // dim rounded up to whole chunks), query rows per block.
  int64_t value_lanes_ = 16, accumulator_row_ = 0, query_tile_ = kLanes;
  int q_buffer_ = -1, k_buffer_ = -1, v_buffer_ = -1;

  llvm::Function* function_ = nullptr;
  std::vector<llvm::Value*> bases_;  // inputs, then the output
  llvm::Type* vector_ = nullptr;     // <kLanes x compute type>
  // Stack: qt[d][lane], scores[j][lane], acc[row][accumulator_row_], and per-lane m, l, c.
  llvm::AllocaInst *qt_ = nullptr, *scores_ = nullptr, *accumulator_ = nullptr;
  llvm::AllocaInst *m_ = nullptr, *l_ = nullptr, *correction_ = nullptr;
  // The block being emitted: batch entry, query rows [q_begin, q_end), element offsets of its
  // Q, K, V, the clamped query row of each lane, its scale/mask, and the key tile [k0, k0 + length).
  llvm::Value *block_batch_ = nullptr, *block_q_begin_ = nullptr, *block_q_end_ = nullptr;
  llvm::Value *block_q_batch_ = nullptr, *block_k_batch_ = nullptr, *block_v_batch_ = nullptr;
  llvm::Value* block_lane_rows_ = nullptr;
  ScoreOperand block_scale_, block_mask_;
  llvm::Value *block_k0_ = nullptr, *block_length_ = nullptr;
};

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

  // Shapes: Q [batch..., q, d], K [batch..., k, d] (or [batch..., d, k]), V [batch..., k, dv].
  const std::vector<int64_t>& q = qk_->operand(0)->type().dims();
  const std::vector<int64_t>& k = qk_->operand(1)->type().dims();
  const std::vector<int64_t>& v = pv->operand(1)->type().dims();
  const size_t b = q.size() - 2;
  batch_dims_.assign(q.begin(), q.begin() + static_cast<int64_t>(b));
  for (int64_t d : batch_dims_) batch_ *= d;
  queries_ = q[b];
  head_dim_ = q[b + 1];
  keys_transposed_ = qk_->GetInts("rhs_contracting_dimensions") == std::vector<int64_t>{static_cast<int64_t>(b)};
  keys_ = keys_transposed_ ? k[b + 1] : k[b];
  value_dim_ = v[b + 1];
  if (v[b] != keys_ || (keys_transposed_ ? k[b] : k[b + 1]) != head_dim_) {
    return Unsupported(item_, "Q, K and V shapes do not agree");
  }
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
  b_.CreateCondBr(b_.CreateICmpSLT(next_i, end), header, done);
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
  llvm::Value* loaded =
      b_.CreateAlignedLoad(memory, address, llvm::Align(ElementByteWidth(element_)));
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


// ---- Kernel emission. Scalars and vectors of the compute type; the block's state lives in
// members (block_*) while its loops are emitted.

llvm::Value* FlashAttentionEmitter::Splat(llvm::Value* scalar) {
  return b_.CreateVectorSplat(kLanes, scalar);
}

llvm::Value* FlashAttentionEmitter::Fma(llvm::Value* a, llvm::Value* x, llvm::Value* addend) {
  return b_.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, x, addend});
}

// Element type `to` of the same shape (scalar or vector) as `type`.
static llvm::Type* WithScalar(llvm::Type* type, llvm::Type* to) { return type->getWithNewType(to); }

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
    for (int64_t lane = 0; lane < kLanes; ++lane) {
      result = b_.CreateInsertElement(result, Exp(b_.CreateExtractElement(x, lane)), lane);
    }
    return result;
  }
  if (element_ == ElementType::kF32) return EmitExpF32(b_, x);
  return Widen(Narrow(EmitExpF32(b_, Widen(Narrow(x)))));
}

// The vector of a score-space operand (scale or mask) at key `key` over the block's query lanes.
FlashAttentionEmitter::ScoreOperand FlashAttentionEmitter::PrepareScoreOperand(
    const Access& access, llvm::Value* batch_offset) {
  ScoreOperand op;
  op.access = &access;
  if (access.constant != nullptr) {
    op.splat = Splat(Read(access, b_.getInt64(0)));
    return op;
  }
  const int64_t query_stride = access.strides[access.strides.size() - 2];
  op.base = batch_offset;
  if (query_stride != 0) {
    op.rows = b_.CreateAdd(b_.CreateVectorSplat(kLanes, batch_offset),
                           b_.CreateMul(block_lane_rows_, b_.CreateVectorSplat(kLanes, b_.getInt64(query_stride))));
  }
  return op;
}

llvm::Value* FlashAttentionEmitter::ScoreVector(const ScoreOperand& op, llvm::Value* key) {
  if (op.splat != nullptr) return op.splat;
  const Access& access = *op.access;
  llvm::Value* key_offset = b_.CreateMul(key, b_.getInt64(access.strides.back()));
  if (op.rows == nullptr) return Splat(Read(access, b_.CreateAdd(op.base, key_offset)));
  llvm::Value* index = b_.CreateAdd(op.rows, b_.CreateVectorSplat(kLanes, key_offset));
  if (element_ == compute_) {  // f32, f64: one gather
    llvm::Value* pointers = b_.CreateInBoundsGEP(ComputeType(), bases_[static_cast<size_t>(access.buffer)], index);
    return b_.CreateMaskedGather(vector_, pointers, llvm::Align(ElementByteWidth(element_)));
  }
  llvm::Value* result = llvm::PoisonValue::get(vector_);
  for (int64_t lane = 0; lane < kLanes; ++lane) {
    result = b_.CreateInsertElement(result, Load(access.buffer, b_.CreateExtractElement(index, lane)), lane);
  }
  return result;
}

// Q of the block's rows, head dims [d0, d0 + length), transposed into qt_[d][lane] (compute
// type). Lanes past the last row repeat it (their results are never stored).
void FlashAttentionEmitter::PackQueries(llvm::Value* d0, llvm::Value* length) {
  Loop(b_.getInt64(0), b_.getInt64(kLanes), "qpack", [&](llvm::Value* lane) {
    llvm::Value* row = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(block_q_begin_, lane),
                                                b_.CreateSub(block_q_end_, b_.getInt64(1)));
    llvm::Value* q_row = b_.CreateAdd(block_q_batch_, b_.CreateAdd(b_.CreateMul(row, b_.getInt64(head_dim_)), d0));
    Loop(b_.getInt64(0), length, "qpackd", [&](llvm::Value* d) {
      llvm::Value* slot = b_.CreateAdd(b_.CreateMul(d, b_.getInt64(kLanes)), lane);
      b_.CreateStore(Load(q_buffer_, b_.CreateAdd(q_row, d)), b_.CreateInBoundsGEP(ComputeType(), qt_, slot));
    });
  });
}

llvm::Value* FlashAttentionEmitter::ScoreSlot(llvm::Value* j) {
  return b_.CreateInBoundsGEP(ComputeType(), scores_, b_.CreateMul(j, b_.getInt64(kLanes)));
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
    init.push_back(accumulate ? static_cast<llvm::Value*>(b_.CreateAlignedLoad(vector_, ScoreSlot(j), llvm::Align(64)))
                              : llvm::Constant::getNullValue(vector_));
    llvm::Value* key = b_.CreateAdd(block_k0_, j);
    // K[key, d] at k_row + d (keys_transposed_: K[d, key] at k_row + d * keys).
    k_rows.push_back(b_.CreateAdd(block_k_batch_, keys_transposed_ ? b_.CreateAdd(b_.CreateMul(d0, b_.getInt64(keys_)), key)
                                                                  : b_.CreateAdd(b_.CreateMul(key, b_.getInt64(head_dim_)), d0)));
  }
  const int64_t k_step = keys_transposed_ ? keys_ : 1;
  std::vector<llvm::Value*> sums = CarryLoop(
      b_.getInt64(0), length, "dot", init, [&](llvm::Value* d, const std::vector<llvm::Value*>& acc) {
        llvm::Value* q = b_.CreateAlignedLoad(
            vector_, b_.CreateInBoundsGEP(ComputeType(), qt_, b_.CreateMul(d, b_.getInt64(kLanes))), llvm::Align(64));
        std::vector<llvm::Value*> next;
        for (int64_t r = 0; r < count; ++r) {
          llvm::Value* k = Load(k_buffer_, b_.CreateAdd(k_rows[static_cast<size_t>(r)], b_.CreateMul(d, b_.getInt64(k_step))));
          next.push_back(Fma(q, Splat(k), acc[static_cast<size_t>(r)]));
        }
        return next;
      });
  for (int64_t r = 0; r < count; ++r) {
    b_.CreateAlignedStore(sums[static_cast<size_t>(r)], ScoreSlot(b_.CreateAdd(j0, b_.getInt64(r))), llvm::Align(64));
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
  llvm::Value* m_old = b_.CreateAlignedLoad(vector_, m_, llvm::Align(64));
  llvm::Value* m_new = CarryLoop(b_.getInt64(0), block_length_, "tmax", {m_old},
      [&](llvm::Value* j, const std::vector<llvm::Value*>& m) -> std::vector<llvm::Value*> {
        llvm::Value* key = b_.CreateAdd(block_k0_, j);
        llvm::Value* slot = ScoreSlot(j);
        llvm::Value* dot = b_.CreateAlignedLoad(vector_, slot, llvm::Align(64));
        llvm::Value* factor = ScoreVector(block_scale_, key);
        llvm::Value* s = scale_->kind() == OpKind::kDivide ? b_.CreateFDiv(dot, factor) : b_.CreateFMul(dot, factor);
        if (mask_ != nullptr) s = b_.CreateFAdd(s, ScoreVector(block_mask_, key));
        b_.CreateAlignedStore(s, slot, llvm::Align(64));
        return {b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, m[0], s)};  // IEEE maximum
      })[0];
  llvm::Value* base = b_.CreateSelect(b_.CreateFCmpOEQ(m_new, Splat(llvm::ConstantFP::getInfinity(t, true))),
                                     llvm::Constant::getNullValue(vector_), m_new);
  llvm::Value* correction = VectorExp(b_.CreateFSub(m_old, base));
  b_.CreateAlignedStore(m_new, m_, llvm::Align(64));
  b_.CreateAlignedStore(correction, correction_, llvm::Align(64));
  llvm::Value* l = b_.CreateFMul(b_.CreateAlignedLoad(vector_, l_, llvm::Align(64)), correction);
  l = CarryLoop(b_.getInt64(0), block_length_, "prob", {l},
      [&](llvm::Value* j, const std::vector<llvm::Value*>& sum) -> std::vector<llvm::Value*> {
        llvm::Value* slot = ScoreSlot(j);
        llvm::Value* p = VectorExp(b_.CreateFSub(b_.CreateAlignedLoad(vector_, slot, llvm::Align(64)), base));
        b_.CreateAlignedStore(p, slot, llvm::Align(64));
        return {b_.CreateFAdd(sum[0], p)};
      })[0];
  b_.CreateAlignedStore(l, l_, llvm::Align(64));
}

// One chunk of value_lanes_ elements of V at `index` (a partial chunk of `lanes` < value_lanes_
// loads masked), in the compute type.
llvm::Value* FlashAttentionEmitter::LoadValueChunk(llvm::Value* index, int64_t lanes) {
  llvm::Type* memory = MemoryType(context_, element_);
  auto* type = llvm::FixedVectorType::get(memory, static_cast<unsigned>(value_lanes_));
  llvm::Value* address = b_.CreateInBoundsGEP(memory, bases_[static_cast<size_t>(v_buffer_)], index);
  const llvm::Align align(ElementByteWidth(element_));
  if (lanes == value_lanes_) return Widen(b_.CreateAlignedLoad(type, address, align));
  return Widen(b_.CreateMaskedLoad(type, address, align, ChunkMask(lanes), llvm::Constant::getNullValue(type)));
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
      init.push_back(b_.CreateFMul(b_.CreateAlignedLoad(chunk_type, slot, llvm::Align(64)), correction));
    }
  }
  std::vector<llvm::Value*> sums = CarryLoop(b_.getInt64(0), block_length_, "pv", init,
      [&](llvm::Value* j, const std::vector<llvm::Value*>& acc) {
        llvm::Value* v_row = b_.CreateAdd(block_v_batch_, b_.CreateAdd(
            b_.CreateMul(b_.CreateAdd(block_k0_, j), b_.getInt64(value_dim_)), b_.CreateMul(chunk0, b_.getInt64(value_lanes_))));
        std::vector<llvm::Value*> v;
        for (int64_t c = 0; c < chunks; ++c) {
          v.push_back(LoadValueChunk(b_.CreateAdd(v_row, b_.getInt64(c * value_lanes_)),
                                     c == chunks - 1 ? last_lanes : value_lanes_));
        }
        llvm::Value* p_row = b_.CreateMul(j, b_.getInt64(kLanes));
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
                            AccumulatorSlot(r0 + r, b_.CreateAdd(chunk0, b_.getInt64(c))), llvm::Align(64));
    }
  }
}

// P·V of the tile for every row of the query tile: full groups of kChunksPerStep chunks in a
// loop, then one group of the remaining chunks (the last possibly partial).
void FlashAttentionEmitter::ValueTile() {
  const int64_t full_chunks = value_dim_ / value_lanes_;
  const int64_t partial = value_dim_ % value_lanes_;
  const int64_t groups = full_chunks / kChunksPerStep;
  const int64_t rest = full_chunks % kChunksPerStep + (partial != 0 ? 1 : 0);
  const int64_t rows = std::min(kRowsPerStep, query_tile_);
  for (int64_t r0 = 0; r0 < query_tile_; r0 += rows) {
    Loop(b_.getInt64(0), b_.getInt64(groups), "vgroup", [&](llvm::Value* g) {
      AccumulateValues(r0, rows, b_.CreateMul(g, b_.getInt64(kChunksPerStep)), kChunksPerStep, value_lanes_);
    });
    if (rest > 0) {
      AccumulateValues(r0, rows, b_.getInt64(groups * kChunksPerStep), rest, partial != 0 ? partial : value_lanes_);
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
      llvm::Value* acc = b_.CreateAlignedLoad(chunk_type, b_.CreateInBoundsGEP(t, accumulator_, b_.CreateAdd(acc_row, offset)), llvm::Align(64));
      llvm::Value* value = Narrow(b_.CreateFDiv(acc, total));
      llvm::Value* address = b_.CreateInBoundsGEP(memory, bases_.back(), b_.CreateAdd(out_row, offset));
      if (lanes == value_lanes_) {
        b_.CreateAlignedStore(value, address, align);
      } else {
        b_.CreateMaskedStore(value, address, align, ChunkMask(lanes));
      }
    };
    Loop(b_.getInt64(0), b_.getInt64(full_chunks), "outc", [&](llvm::Value* c) { chunk(c, value_lanes_); });
    if (partial != 0) chunk(b_.getInt64(full_chunks), partial);
  });
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
  value_lanes_ = 64 / bytes;
  accumulator_row_ = BlockCount(value_dim_, value_lanes_) * value_lanes_;
  query_tile_ = kLanes;
  while (query_tile_ > 1 && query_tile_ * accumulator_row_ * bytes > kAccumulatorBytes) query_tile_ /= 2;
  const int64_t key_tile = kScoreTileBytes / (kLanes * bytes);
  const int64_t head_chunk = kQueryPackBytes / (kLanes * bytes);
  const int64_t query_tiles = BlockCount(queries_, query_tile_);
  signature_.block_size = query_tile_;
  signature_.block_count = value_dim_ == 0 ? 0 : batch_ * query_tiles;

  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* t = ComputeType();
  vector_ = llvm::FixedVectorType::get(t, kLanes);
  llvm::Type* ptr = b_.getPtrTy();
  auto* function_type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, i64, i64}, false);
  function_ = llvm::Function::Create(function_type, llvm::Function::ExternalLinkage,
                                     llvm::StringRef(symbol.data(), symbol.size()), module_);
  function_->setDoesNotThrow();
  // The kernel's explicit 16-lane vectors are meant as whole zmm registers where AVX-512 exists.
  function_->addFnAttr("min-legal-vector-width", "512");
  b_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", function_));
  for (size_t i = 0; i <= signature_.inputs.size(); ++i) {
    llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr, function_->getArg(0), i);
    bases_.push_back(b_.CreateLoad(ptr, slot, StrCat("buffer", i)));
  }
  auto stack = [&](llvm::Type* type, int64_t count) {
    llvm::AllocaInst* slot = b_.CreateAlloca(llvm::ArrayType::get(type, static_cast<uint64_t>(std::max<int64_t>(count, 1))));
    slot->setAlignment(llvm::Align(64));
    return slot;
  };
  qt_ = stack(t, std::min(head_dim_, head_chunk) * kLanes);
  scores_ = stack(t, key_tile * kLanes);
  accumulator_ = stack(t, query_tile_ * accumulator_row_);
  m_ = stack(vector_, 1);
  l_ = stack(vector_, 1);
  correction_ = stack(vector_, 1);
  auto c64 = [&](int64_t v) { return b_.getInt64(v); };
  const int64_t rank = static_cast<int64_t>(batch_dims_.size()) + 2;

  Loop(function_->getArg(2), function_->getArg(3), "block", [&](llvm::Value* block) {
    block_batch_ = b_.CreateUDiv(block, c64(query_tiles));
    block_q_begin_ = b_.CreateMul(b_.CreateURem(block, c64(query_tiles)), c64(query_tile_));
    block_q_end_ = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(block_q_begin_, c64(query_tile_)), c64(queries_));
    // Offsets of this batch entry into the scale/mask accesses (score space strides).
    auto batch_offset = [&](const Access& access) -> llvm::Value* {
      llvm::Value* offset = c64(0);
      llvm::Value* rest = block_batch_;
      for (int64_t d = rank - 3; d >= 0; --d) {
        llvm::Value* extent = c64(batch_dims_[static_cast<size_t>(d)]);
        llvm::Value* coord = d == 0 ? rest : b_.CreateURem(rest, extent);
        if (d > 0) rest = b_.CreateUDiv(rest, extent);
        if (access.strides[static_cast<size_t>(d)] != 0) {
          offset = b_.CreateAdd(offset, b_.CreateMul(coord, c64(access.strides[static_cast<size_t>(d)])));
        }
      }
      return offset;
    };
    // Query row of each lane, clamped to the last row (lanes past it read valid memory).
    std::vector<llvm::Constant*> lanes;
    for (int64_t lane = 0; lane < kLanes; ++lane) lanes.push_back(b_.getInt64(lane));
    block_lane_rows_ = b_.CreateBinaryIntrinsic(
        llvm::Intrinsic::smin, b_.CreateAdd(b_.CreateVectorSplat(kLanes, block_q_begin_), llvm::ConstantVector::get(lanes)),
        b_.CreateVectorSplat(kLanes, c64(queries_ - 1)));
    block_scale_ = PrepareScoreOperand(scale, batch_offset(scale));
    if (mask_ != nullptr) block_mask_ = PrepareScoreOperand(mask, batch_offset(mask));
    block_q_batch_ = b_.CreateMul(block_batch_, c64(queries_ * head_dim_));
    block_k_batch_ = b_.CreateMul(block_batch_, c64(keys_ * head_dim_));
    block_v_batch_ = b_.CreateMul(block_batch_, c64(keys_ * value_dim_));
    b_.CreateAlignedStore(Splat(Read(max_init, c64(0))), m_, llvm::Align(64));
    b_.CreateAlignedStore(llvm::Constant::getNullValue(vector_), l_, llvm::Align(64));
    b_.CreateMemSet(accumulator_, b_.getInt8(0), static_cast<uint64_t>(query_tile_ * accumulator_row_ * bytes), llvm::Align(64));
    const bool one_chunk = head_dim_ <= head_chunk;
    if (one_chunk) PackQueries(c64(0), c64(head_dim_));
    Loop(c64(0), c64(BlockCount(keys_, key_tile)), "tile", [&](llvm::Value* tile) {
      block_k0_ = b_.CreateMul(tile, c64(key_tile));
      block_length_ = b_.CreateSub(b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(block_k0_, c64(key_tile)), c64(keys_)), block_k0_);
      if (one_chunk) {
        ScoreTile(c64(0), c64(head_dim_), /*accumulate=*/false);
      } else {
        // Head dims in chunks of head_chunk: the packed Q holds one chunk; the scores add up.
        b_.CreateMemSet(scores_, b_.getInt8(0), static_cast<uint64_t>(key_tile * kLanes * bytes), llvm::Align(64));
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

}  // namespace

StatusOr<KernelSignature> EmitFlashAttentionKernel(const WorkItem& item, const FusionPlan& fusion,
                                                   llvm::Module& module, std::string_view symbol) {
  FlashAttentionEmitter emitter(item, fusion, module);
  return emitter.Emit(symbol);
}

}  // namespace accy::jit
