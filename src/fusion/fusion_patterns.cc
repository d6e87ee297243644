// Shape predicates of the row pipeline rule and the flash attention matcher (fusion_plan.h rules
// 6 and 7). Attribute lists are read in place (std::get_if), never copied: PlanFusion allocates
// only from its std::pmr resource.
#include <algorithm>
#include <array>
#include <functional>
#include <variant>

#include "src/fusion/fusion_planner.h"

namespace accy {
namespace {

// An index-list attribute, or an empty list when absent or of another kind.
std::span<const int64_t> IndexList(const Operation& op, std::string_view name) {
  const AttributeValue* value = op.attribute(name);
  if (value == nullptr) return {};
  const auto* list = std::get_if<std::vector<int64_t>>(value);
  if (list == nullptr) return {};
  return *list;
}

// `list` is exactly first, first + 1, ..., first + count - 1.
bool IsIota(std::span<const int64_t> list, int64_t first, size_t count) {
  if (list.size() != count) return false;
  for (size_t i = 0; i < count; ++i) {
    if (list[i] != first + static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool IsSingle(std::span<const int64_t> list, int64_t value) {
  return list.size() == 1 && list[0] == value;
}

// A scale operand: a constant, or a broadcast_in_dim of a rank-0 value.
bool IsScaleValue(const Value& value) {
  const Operation* def = value.defining_op();
  if (def == nullptr) return false;
  if (def->kind() == OpKind::kConstant) return true;
  return def->kind() == OpKind::kBroadcastInDim && def->num_operands() == 1 &&
         def->operand(0)->type().rank() == 0;
}

// The free dim of a dot_general operand of rank `rank` with one contracting dim and `batch`
// batching dims, or -1 when it has not exactly one.
int64_t FreeDim(std::span<const int64_t> batching, std::span<const int64_t> contracting,
                int64_t rank, size_t batch) {
  if (contracting.size() != 1 || batching.size() != batch || rank != static_cast<int64_t>(batch) + 2) {
    return -1;
  }
  int64_t free = -1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != contracting[0] && std::find(batching.begin(), batching.end(), d) == batching.end()) {
      if (free >= 0) return -1;
      free = d;
    }
  }
  return free;
}

// dot_general dimension numbers of rule 7 for batch rank `batch`: Q·K has `batch` batching dims,
// one free and one contracted dim on each side, in any order (the kernel reads Q and K through
// strides, so exporters' [batch, seq, heads, dim] layouts need no copy); P·V contracts P's last
// dim with P's batching dims leading, and V's free dim (the value dim, read as whole vectors)
// is its last.
bool AttentionDots(const Operation& qk, const Operation& pv, size_t batch) {
  if (pv.num_operands() != 2 || !IsAttentionScoreDot(qk, batch)) return false;
  const int64_t b = static_cast<int64_t>(batch);
  return pv.operand(0)->type().rank() == b + 2 &&
         IsIota(IndexList(pv, "lhs_batching_dimensions"), 0, batch) &&
         IsSingle(IndexList(pv, "lhs_contracting_dimensions"), b + 1) &&
         FreeDim(IndexList(pv, "rhs_batching_dimensions"), IndexList(pv, "rhs_contracting_dimensions"),
                 pv.operand(1)->type().rank(), batch) == b + 1;
}

}  // namespace

bool IsAttentionScoreDot(const Operation& qk, size_t batch) {
  if (qk.kind() != OpKind::kDotGeneral || qk.num_operands() != 2) return false;
  for (int64_t side = 0; side < 2; ++side) {
    const char* batching = side == 0 ? "lhs_batching_dimensions" : "rhs_batching_dimensions";
    const char* contracting = side == 0 ? "lhs_contracting_dimensions" : "rhs_contracting_dimensions";
    if (FreeDim(IndexList(qk, batching), IndexList(qk, contracting), qk.operand(side)->type().rank(),
                batch) < 0) {
      return false;
    }
  }
  return true;
}

bool HasDims(const Value& value, std::span<const int64_t> dims) {
  const std::vector<int64_t>& own = value.type().dims();
  return std::equal(own.begin(), own.end(), dims.begin(), dims.end());
}

bool IsRowReduce(const Operation& op, std::span<const int64_t> full_dims,
                 std::optional<OpKind> reducer) {
  if (op.kind() != OpKind::kReduce || op.num_operands() != 2 || op.num_results() != 1 ||
      op.num_regions() != 1 || full_dims.empty()) {
    return false;
  }
  const int64_t last = static_cast<int64_t>(full_dims.size()) - 1;
  if (!HasDims(*op.operand(0), full_dims) || !HasDims(*op.result(0), full_dims.first(last)) ||
      !IsSingle(IndexList(op, "dimensions"), last)) {
    return false;
  }
  const Block* body = op.region(0)->entry_block();
  if (body == nullptr || body->operations().size() != 2) return false;
  OpKind kind = body->operations()[0]->kind();
  // i1 or / and are i1 maximum / minimum (the spec's "maximum" on booleans is logical or):
  // torch_xla2's softmax asks any(row != -inf) with an or reduce.
  if (op.operand(0)->type().element_type() == ElementType::kI1) {
    if (kind == OpKind::kOr) kind = OpKind::kMaximum;
    if (kind == OpKind::kAnd) kind = OpKind::kMinimum;
  }
  if (kind != OpKind::kAdd && kind != OpKind::kMaximum && kind != OpKind::kMinimum) return false;
  return !reducer.has_value() || kind == *reducer;
}

bool IsRowBroadcast(const Operation& op, std::span<const int64_t> full_dims) {
  if (op.kind() != OpKind::kBroadcastInDim || op.num_operands() != 1 || full_dims.empty()) {
    return false;
  }
  const size_t last = full_dims.size() - 1;
  return HasDims(*op.result(0), full_dims) && HasDims(*op.operand(0), full_dims.first(last)) &&
         IsIota(IndexList(op, "broadcast_dimensions"), 0, last);
}

uint32_t FusionPlanner::Def(const Value* value, OpKind kind, const Block* block) {
  const uint32_t index = ProducerIndex(value);
  if (!Available(index, block) || order_[index]->kind() != kind) return kNone;
  return index;
}

uint32_t FusionPlanner::MatchScale(const Value* value, const Block* block, uint32_t* dot) {
  uint32_t scale = Def(value, OpKind::kMultiply, block);
  if (scale != kNone) {
    const Operation& mul = *order_[scale];
    for (int64_t k = 0; k < 2; ++k) {
      *dot = Def(mul.operand(k), OpKind::kDotGeneral, block);
      if (*dot != kNone && IsScaleValue(*mul.operand(1 - k))) return scale;
    }
    return kNone;
  }
  scale = Def(value, OpKind::kDivide, block);
  if (scale == kNone || !IsScaleValue(*order_[scale]->operand(1))) return kNone;
  *dot = Def(order_[scale]->operand(0), OpKind::kDotGeneral, block);
  return *dot == kNone ? kNone : scale;
}

bool FusionPlanner::MatchFlashAttention(uint32_t root) {
  const Operation& pv = *order_[root];
  if (pv.num_operands() != 2 || pv.num_results() != 1) return false;
  const Block* block = pv.parent_block();
  std::span<const int64_t> f = pv.operand(0)->type().dims();  // [batch..., q, k]
  if (f.size() < 2) return false;
  // What the kernel can run: floats, and an output row of at most kFlashAttentionMaxValueDim.
  const TensorType& out = pv.result(0)->type();
  // Zero keys: softmax over an empty row then a zero-length P·V is zeros, which the unfused ops
  // compute; the kernel's final division would give 0/0.
  if (!IsFloat(out.element_type()) || out.rank() < 1 || f.back() == 0 ||
      out.dims().back() > kFlashAttentionMaxValueDim) {
    return false;
  }

  // P = exp(s - bcast(max(s))) / bcast(sum(exp(...))), read backwards from P·V.
  const uint32_t divide = Def(pv.operand(0), OpKind::kDivide, block);
  if (divide == kNone) return false;
  const Value* e = order_[divide]->operand(0);
  const uint32_t sum_bcast = Def(order_[divide]->operand(1), OpKind::kBroadcastInDim, block);
  if (sum_bcast == kNone || !IsRowBroadcast(*order_[sum_bcast], f)) return false;
  const uint32_t sum = Def(order_[sum_bcast]->operand(0), OpKind::kReduce, block);
  if (sum == kNone || !IsRowReduce(*order_[sum], f, OpKind::kAdd) ||
      order_[sum]->operand(0) != e) {
    return false;
  }
  const uint32_t exp = Def(e, OpKind::kExponential, block);
  if (exp == kNone) return false;
  const uint32_t sub = Def(order_[exp]->operand(0), OpKind::kSubtract, block);
  if (sub == kNone) return false;
  const Value* s = order_[sub]->operand(0);
  const uint32_t max_bcast = Def(order_[sub]->operand(1), OpKind::kBroadcastInDim, block);
  if (max_bcast == kNone || !IsRowBroadcast(*order_[max_bcast], f)) return false;
  const uint32_t max = Def(order_[max_bcast]->operand(0), OpKind::kReduce, block);
  if (max == kNone || !IsRowReduce(*order_[max], f, OpKind::kMaximum) ||
      order_[max]->operand(0) != s) {
    return false;
  }

  // s = scale(Q·K), or scale(Q·K) + mask (either operand order).
  uint32_t qk = kNone;
  uint32_t mask = kNone;
  uint32_t scale = MatchScale(s, block, &qk);
  if (scale == kNone) {
    mask = Def(s, OpKind::kAdd, block);
    if (mask == kNone) return false;
    for (int64_t k = 0; k < 2 && scale == kNone; ++k) {
      scale = MatchScale(order_[mask]->operand(k), block, &qk);
    }
    if (scale == kNone) return false;
  }
  if (!AttentionDots(*order_[qk], pv, f.size() - 2)) return false;

  // Only P·V's result may leave the kernel: every other op's uses stay inside.
  std::array<uint32_t, 11> inside = {qk, scale, mask, max, max_bcast, sub, exp, sum, sum_bcast,
                                     divide, root};
  BeginAttempt(root);
  for (uint32_t index : inside) {
    if (index != kNone) Stamp(index);
  }
  for (uint32_t index : inside) {
    ++visits_;
    if (index == kNone || index == root) continue;
    if (order_[index]->result(0)->uses().size() > kFlashMaxUses || !AllUsesInside(index)) {
      return false;
    }
  }
  // The kernel reads Q, K, V, the scale and mask values and the reduces' init values from
  // memory, all in P·V's element type: none may be a value of the chain itself (the item would
  // read a value it never stores), and every operand of the chain has that one type (f32 Q·K
  // scores of bf16 Q and K, as JAX's BF16_BF16_F32 algorithm writes them, stay unfused).
  const ElementType type = out.element_type();
  for (uint32_t index : inside) {
    if (index == kNone) continue;
    for (const Value* operand : order_[index]->operands()) {
      ++visits_;
      if (operand->type().element_type() != type) return false;
    }
  }
  std::array<const Value*, 7> read = {
      order_[qk]->operand(0), order_[qk]->operand(1), pv.operand(1),
      order_[max]->operand(1), order_[sum]->operand(1),
      order_[scale]->operand(order_[scale]->operand(0) == order_[qk]->result(0) ? 1 : 0),
      mask == kNone ? nullptr
                    : order_[mask]->operand(order_[mask]->operand(0) == order_[scale]->result(0) ? 1 : 0)};
  for (const Value* value : read) {
    if (value == nullptr) continue;
    const uint32_t producer = ProducerIndex(value);
    if (producer != kNone && Stamped(producer)) return false;
  }
  // Members in decreasing program order (as Grow leaves them); the row broadcasts are elided.
  members_.clear();
  for (uint32_t index : inside) {
    if (index != kNone && index != max_bcast && index != sum_bcast) members_.push_back(index);
  }
  std::sort(members_.begin(), members_.end(), [this](uint32_t a, uint32_t b) {
    ++visits_;  // at most 9 entries: <= 36 comparisons
    return a > b;
  });
  return true;
}

}  // namespace accy
