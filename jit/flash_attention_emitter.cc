// Emitter of flash_attention work items (emitters.h; cluster rule 7 of src/fusion/fusion_plan.h):
// out = softmax(scale(Q·K) [+ mask]) · V over leading batch dims, in f32, f16, bf16 or f64.
// f16 and bf16 compute in f32 (loads widen, the output rounds once to nearest even; exp rounds
// its argument and result to the element type as the reference's exponential op does); f64
// computes in double.
//
// The score matrix never exists in memory: a block is one batch entry (all batch dims
// flattened) x kQueryTile query rows; each query row walks the keys in tiles of kKeyTile,
// computing the tile's scores into a stack array, then the online softmax update
//   m' = max(m, max_j s_j)      base = (m' == -inf ? 0 : m')
//   p_j = exp(s_j - base)       c = exp(m - base)
//   l = l * c + sum_j p_j       acc[:] = acc[:] * c + sum_j p_j * V[j, :]
// and at the end out[:] = acc[:] / (l + sum_init). m starts at the max reduce's init value.
// Buffers (kernel_abi.h): Q, K, then the scale, mask and the two reduce init values when they
// are buffers (one-element constants are folded), then V; the output. Numerics against the
// unfused reference: f32 dot products (the Q·K loop is force-vectorized, so its sum is
// reassociated, in an order fixed at compile time), exp lowered as in elementwise kernels (the
// inline f32 polynomial of vector_math.h, libm for f64), and the division moved after P·V: within
// a small relative tolerance (tests/jit/flash_attention_test.cc), not bit-exact. Special rows agree: a row whose scores
// are all -inf gives 0/0 = NaN as the reference's exp(-inf - -inf) does, and NaN or +inf
// scores make the row NaN. Blocks do not depend on the thread count.
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
#include "src/fusion/fusion_plan.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

constexpr int64_t kQueryTile = 16;  // query rows per block
constexpr int64_t kKeyTile = 256;   // keys per score tile (1 KiB of f32 scores)
constexpr int64_t kMaxValueDim = kFlashAttentionMaxValueDim;  // the accumulator row lives on the stack (32 KiB)

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
  Status Loop(llvm::Value* begin, llvm::Value* end, const std::string& name,
              const std::function<Status(llvm::Value*)>& body, bool force_vectorize = false);
  llvm::Value* Load(int buffer, llvm::Value* index);
  llvm::Value* Read(const Access& access, llvm::Value* offset);
  llvm::Value* Exp(llvm::Value* x);
  llvm::Value* Max(llvm::Value* a, llvm::Value* x);
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

  llvm::Function* function_ = nullptr;
  std::vector<llvm::Value*> bases_;
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

Status FlashAttentionEmitter::Loop(llvm::Value* begin, llvm::Value* end, const std::string& name,
                                   const std::function<Status(llvm::Value*)>& body,
                                   bool force_vectorize) {
  llvm::BasicBlock* before = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context_, name, function_);
  auto* done = llvm::BasicBlock::Create(context_, name + ".done", function_);
  b_.CreateCondBr(b_.CreateICmpSLT(begin, end), header, done);
  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, name + ".i");
  i->addIncoming(begin, before);
  ACCY_RETURN_IF_ERROR(body(i));
  llvm::Value* next = b_.CreateAdd(i, b_.getInt64(1), name + ".next", true, true);
  i->addIncoming(next, b_.GetInsertBlock());
  llvm::BranchInst* latch = b_.CreateCondBr(b_.CreateICmpSLT(next, end), header, done);
  if (force_vectorize) {
    // As `#pragma clang loop vectorize(enable)`: lets the vectorizer reassociate the f32 dot
    // product sum (a fixed order at compile time, so runs stay bitwise reproducible).
    llvm::Metadata* enable[] = {
        llvm::MDString::get(context_, "llvm.loop.vectorize.enable"),
        llvm::ConstantAsMetadata::get(b_.getTrue())};
    llvm::Metadata* operands[] = {nullptr, llvm::MDNode::get(context_, enable)};
    llvm::MDNode* loop_id = llvm::MDNode::getDistinct(context_, operands);
    loop_id->replaceOperandWith(0, loop_id);
    latch->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  }
  b_.SetInsertPoint(done);
  return absl::OkStatus();
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

// IEEE maximum (NaN wins, -0 < +0), as the reference's max reduce.
llvm::Value* FlashAttentionEmitter::Max(llvm::Value* a, llvm::Value* x) {
  return lowering_.IeeeMaximumMinimum(/*maximum=*/true, a, x);
}

StatusOr<KernelSignature> FlashAttentionEmitter::Emit(std::string_view symbol) {
  ACCY_RETURN_IF_ERROR(Match());
  const int q_buffer = BufferOf(qk_->operand(0));
  const int k_buffer = BufferOf(qk_->operand(1));
  ACCY_ASSIGN_OR_RETURN(Access scale, ScoreAccess(scale_value_));
  Access mask;
  if (mask_ != nullptr) {
    ACCY_ASSIGN_OR_RETURN(mask, ScoreAccess(mask_value_));
  }
  ACCY_ASSIGN_OR_RETURN(Access max_init, ScoreAccess(max_->operand(1)));
  ACCY_ASSIGN_OR_RETURN(Access sum_init, ScoreAccess(sum_->operand(1)));
  const int v_buffer = BufferOf(item_.ops.back()->operand(1));
  signature_.outputs.push_back(item_.output_value);
  const int64_t query_tiles = BlockCount(queries_, kQueryTile);
  signature_.block_size = kQueryTile;
  signature_.block_count = value_dim_ == 0 ? 0 : batch_ * query_tiles;

  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* f32 = ComputeType();  // the compute type (double for f64 items)
  llvm::Type* ptr = b_.getPtrTy();
  auto* function_type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, i64, i64}, false);
  function_ = llvm::Function::Create(function_type, llvm::Function::ExternalLinkage,
                                     llvm::StringRef(symbol.data(), symbol.size()), module_);
  function_->setDoesNotThrow();
  b_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", function_));
  for (size_t i = 0; i <= signature_.inputs.size(); ++i) {
    llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr, function_->getArg(0), i);
    bases_.push_back(b_.CreateLoad(ptr, slot, StrCat("buffer", i)));
  }
  const int out_buffer = static_cast<int>(signature_.inputs.size());
  llvm::AllocaInst* scores = b_.CreateAlloca(llvm::ArrayType::get(f32, kKeyTile));
  scores->setAlignment(llvm::Align(64));
  llvm::AllocaInst* acc = b_.CreateAlloca(llvm::ArrayType::get(f32, static_cast<uint64_t>(std::max<int64_t>(value_dim_, 1))));
  acc->setAlignment(llvm::Align(64));
  llvm::AllocaInst* m_slot = b_.CreateAlloca(f32);
  llvm::AllocaInst* l_slot = b_.CreateAlloca(f32);
  auto c64 = [&](int64_t v) { return b_.getInt64(v); };
  const int64_t rank = static_cast<int64_t>(batch_dims_.size()) + 2;

  Status status = Loop(function_->getArg(2), function_->getArg(3), "block", [&](llvm::Value* block) -> Status {
    llvm::Value* batch = b_.CreateUDiv(block, c64(query_tiles));
    llvm::Value* q_begin = b_.CreateMul(b_.CreateURem(block, c64(query_tiles)), c64(kQueryTile));
    llvm::Value* q_end = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(q_begin, c64(kQueryTile)), c64(queries_));
    // Offsets of this batch entry into the scale/mask/init accesses (score space strides).
    auto batch_offset = [&](const Access& access) -> llvm::Value* {
      llvm::Value* offset = c64(0);
      llvm::Value* rest = batch;
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
    llvm::Value* scale_base = batch_offset(scale);
    llvm::Value* mask_base = mask_ != nullptr ? batch_offset(mask) : nullptr;
    llvm::Value* q_batch = b_.CreateMul(batch, c64(queries_ * head_dim_));
    llvm::Value* k_batch = b_.CreateMul(batch, c64(keys_ * head_dim_));
    llvm::Value* v_batch = b_.CreateMul(batch, c64(keys_ * value_dim_));
    llvm::Value* init_m = Read(max_init, c64(0));
    llvm::Value* init_l = Read(sum_init, c64(0));
    return Loop(q_begin, q_end, "query", [&](llvm::Value* i) -> Status {
      b_.CreateStore(init_m, m_slot);
      b_.CreateStore(llvm::ConstantFP::get(f32, 0.0), l_slot);
      ACCY_RETURN_IF_ERROR(Loop(c64(0), c64(value_dim_), "zero", [&](llvm::Value* d) {
        b_.CreateStore(llvm::ConstantFP::get(f32, 0.0), b_.CreateInBoundsGEP(f32, acc, d));
        return absl::OkStatus();
      }));
      llvm::Value* q_row = b_.CreateAdd(q_batch, b_.CreateMul(i, c64(head_dim_)));
      const size_t qd = static_cast<size_t>(rank - 2);
      llvm::Value* scale_row = b_.CreateAdd(scale_base, b_.CreateMul(i, c64(scale.strides[qd])));
      llvm::Value* mask_row =
          mask_ != nullptr ? b_.CreateAdd(mask_base, b_.CreateMul(i, c64(mask.strides[qd]))) : nullptr;
      ACCY_RETURN_IF_ERROR(Loop(c64(0), c64(BlockCount(keys_, kKeyTile)), "tile", [&](llvm::Value* tile) -> Status {
        llvm::Value* k0 = b_.CreateMul(tile, c64(kKeyTile));
        llvm::Value* length = b_.CreateSub(
            b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(k0, c64(kKeyTile)), c64(keys_)), k0);
        // Scores of the tile: scale(Q[i]·K[j]) [+ mask].
        ACCY_RETURN_IF_ERROR(Loop(c64(0), length, "score", [&](llvm::Value* j) -> Status {
          llvm::Value* key = b_.CreateAdd(k0, j);
          // dot = sum_d Q[i, d] * K[key, d], a force-vectorized reduction loop.
          llvm::Value* dot = nullptr;
          {
            llvm::BasicBlock* pre = b_.GetInsertBlock();
            auto* header = llvm::BasicBlock::Create(context_, "dot", function_);
            auto* after = llvm::BasicBlock::Create(context_, "dot.done", function_);
            b_.CreateCondBr(b_.getInt1(head_dim_ > 0), header, after);
            b_.SetInsertPoint(header);
            llvm::PHINode* d = b_.CreatePHI(i64, 2);
            llvm::PHINode* sum = b_.CreatePHI(f32, 2);
            d->addIncoming(c64(0), pre);
            sum->addIncoming(llvm::ConstantFP::get(f32, 0.0), pre);
            llvm::Value* q_value = Load(q_buffer, b_.CreateAdd(q_row, d));
            llvm::Value* k_index =
                keys_transposed_ ? b_.CreateAdd(k_batch, b_.CreateAdd(b_.CreateMul(d, c64(keys_)), key))
                                 : b_.CreateAdd(k_batch, b_.CreateAdd(b_.CreateMul(key, c64(head_dim_)), d));
            llvm::Value* next_sum = b_.CreateFAdd(sum, b_.CreateFMul(q_value, Load(k_buffer, k_index)));
            llvm::Value* next_d = b_.CreateAdd(d, c64(1), "", true, true);
            d->addIncoming(next_d, b_.GetInsertBlock());
            sum->addIncoming(next_sum, b_.GetInsertBlock());
            llvm::BranchInst* latch = b_.CreateCondBr(b_.CreateICmpSLT(next_d, c64(head_dim_)), header, after);
            llvm::Metadata* enable[] = {llvm::MDString::get(context_, "llvm.loop.vectorize.enable"),
                                        llvm::ConstantAsMetadata::get(b_.getTrue())};
            llvm::Metadata* operands[] = {nullptr, llvm::MDNode::get(context_, enable)};
            llvm::MDNode* loop_id = llvm::MDNode::getDistinct(context_, operands);
            loop_id->replaceOperandWith(0, loop_id);
            latch->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
            b_.SetInsertPoint(after);
            llvm::PHINode* result = b_.CreatePHI(f32, 2);
            result->addIncoming(llvm::ConstantFP::get(f32, 0.0), pre);
            result->addIncoming(next_sum, header);
            dot = result;
          }
          const size_t kd = static_cast<size_t>(rank - 1);
          llvm::Value* factor = Read(scale, b_.CreateAdd(scale_row, b_.CreateMul(key, c64(scale.strides[kd]))));
          llvm::Value* s = scale_->kind() == OpKind::kDivide ? b_.CreateFDiv(dot, factor)
                                                             : b_.CreateFMul(dot, factor);
          if (mask_ != nullptr) {
            s = b_.CreateFAdd(s, Read(mask, b_.CreateAdd(mask_row, b_.CreateMul(key, c64(mask.strides[kd])))));
          }
          b_.CreateStore(s, b_.CreateInBoundsGEP(f32, scores, j));
          return absl::OkStatus();
        }));
        // Online softmax update.
        llvm::Value* m_old = b_.CreateLoad(f32, m_slot);
        llvm::AllocaInst* max_slot = m_slot;  // the tile max accumulates into m directly
        ACCY_RETURN_IF_ERROR(Loop(c64(0), length, "tmax", [&](llvm::Value* j) {
          llvm::Value* s = b_.CreateLoad(f32, b_.CreateInBoundsGEP(f32, scores, j));
          b_.CreateStore(Max(b_.CreateLoad(f32, max_slot), s), max_slot);
          return absl::OkStatus();
        }));
        llvm::Value* m_new = b_.CreateLoad(f32, m_slot);
        llvm::Value* base = b_.CreateSelect(
            b_.CreateFCmpOEQ(m_new, llvm::ConstantFP::getInfinity(f32, true)), llvm::ConstantFP::get(f32, 0.0), m_new);
        llvm::Value* correction = Exp(b_.CreateFSub(m_old, base));
        ACCY_RETURN_IF_ERROR(Loop(c64(0), length, "prob", [&](llvm::Value* j) {
          llvm::Value* address = b_.CreateInBoundsGEP(f32, scores, j);
          b_.CreateStore(Exp(b_.CreateFSub(b_.CreateLoad(f32, address), base)), address);
          return absl::OkStatus();
        }));
        llvm::AllocaInst* tile_sum = l_slot;
        b_.CreateStore(b_.CreateFMul(b_.CreateLoad(f32, l_slot), correction), l_slot);
        ACCY_RETURN_IF_ERROR(Loop(c64(0), length, "psum", [&](llvm::Value* j) {
          llvm::Value* p = b_.CreateLoad(f32, b_.CreateInBoundsGEP(f32, scores, j));
          b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(f32, tile_sum), p), tile_sum);
          return absl::OkStatus();
        }));
        ACCY_RETURN_IF_ERROR(Loop(c64(0), c64(value_dim_), "rescale", [&](llvm::Value* d) {
          llvm::Value* address = b_.CreateInBoundsGEP(f32, acc, d);
          b_.CreateStore(b_.CreateFMul(b_.CreateLoad(f32, address), correction), address);
          return absl::OkStatus();
        }));
        return Loop(c64(0), length, "pv", [&](llvm::Value* j) -> Status {
          llvm::Value* p = b_.CreateLoad(f32, b_.CreateInBoundsGEP(f32, scores, j));
          llvm::Value* v_row = b_.CreateAdd(v_batch, b_.CreateMul(b_.CreateAdd(k0, j), c64(value_dim_)));
          return Loop(c64(0), c64(value_dim_), "pvd", [&](llvm::Value* d) {
            llvm::Value* address = b_.CreateInBoundsGEP(f32, acc, d);
            llvm::Value* term = b_.CreateFMul(p, Load(v_buffer, b_.CreateAdd(v_row, d)));
            b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(f32, address), term), address);
            return absl::OkStatus();
          });
        });
      }));
      llvm::Value* total = b_.CreateFAdd(b_.CreateLoad(f32, l_slot), init_l);
      llvm::Value* out_row = b_.CreateMul(b_.CreateAdd(b_.CreateMul(batch, c64(queries_)), i), c64(value_dim_));
      return Loop(c64(0), c64(value_dim_), "out", [&](llvm::Value* d) {
        llvm::Value* value = b_.CreateFDiv(b_.CreateLoad(f32, b_.CreateInBoundsGEP(f32, acc, d)), total);
        llvm::Value* address = b_.CreateInBoundsGEP(MemoryType(context_, element_), bases_[static_cast<size_t>(out_buffer)], b_.CreateAdd(out_row, d));
        b_.CreateAlignedStore(lowering_.ConvertElement(value, compute_, element_), address,
                              llvm::Align(ElementByteWidth(element_)));
        return absl::OkStatus();
      });
    });
  });
  ACCY_RETURN_IF_ERROR(status);
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
