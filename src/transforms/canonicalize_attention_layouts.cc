// CanonicalizeAttentionLayoutsPass (canonicalize_attention_layouts.h).
#include "src/transforms/canonicalize_attention_layouts.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "src/fusion/fusion_plan.h"
#include "src/fusion/fusion_planner.h"
#include "src/transforms/eliminate_dead_code.h"
#include "src/transforms/rewrite_util.h"

namespace accy {
namespace {

using Permutation = std::vector<int64_t>;

const Operation *Def(const Value *value, OpKind kind) {
  const Operation *def = value->defining_op();
  return def != nullptr && def->kind() == kind ? def : nullptr;
}

// A scale operand: a constant, or a broadcast_in_dim of a rank-0 value (as rule
// 7 takes it).
bool IsScaleValue(const Value *value) {
  const Operation *def = value->defining_op();
  if (def == nullptr) return false;
  return def->kind() == OpKind::kConstant ||
         (def->kind() == OpKind::kBroadcastInDim && def->operand(0)->type().rank() == 0);
}

bool IsIdentity(const Permutation &p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// The dims of an operand of rank `rank` in the order batching..., contracting,
// free; empty unless the operand has exactly one free and one contracting dim.
Permutation OperandOrder(int64_t rank, const std::vector<int64_t> &batching,
                         const std::vector<int64_t> &contracting) {
  if (contracting.size() != 1 || static_cast<int64_t>(batching.size()) + 2 != rank) return {};
  std::vector<bool> used(static_cast<size_t>(rank), false);
  for (int64_t d : batching) used[static_cast<size_t>(d)] = true;
  used[static_cast<size_t>(contracting[0])] = true;
  int64_t free = -1;
  for (int64_t d = 0; d < rank; ++d) {
    if (!used[static_cast<size_t>(d)]) free = d;
  }
  if (free < 0) return {};
  Permutation order = batching;
  order.push_back(contracting[0]);
  order.push_back(free);
  return order;
}

// The attention found from a P·V dot_general: Q·K, the side of P in P·V, and
// every op between them (Q·K and the softmax's ops; not P·V).
struct Attention {
  const Operation *qk = nullptr;
  int64_t p_side = 0;
  std::vector<const Operation *> chain;
};

// The softmax over the last dim that defines `p`, then the scale (and mask)
// back to Q·K; false when `p` is not that chain.
bool MatchChain(const Value *p, Attention &attention) {
  const std::vector<int64_t> &dims = p->type().dims();
  if (dims.size() < 2 || dims.back() == 0) return false;
  const Operation *divide = Def(p, OpKind::kDivide);
  if (divide == nullptr) return false;
  const Value *e = divide->operand(0);
  const Operation *sum_bcast = Def(divide->operand(1), OpKind::kBroadcastInDim);
  if (sum_bcast == nullptr || !IsRowBroadcast(*sum_bcast, dims)) return false;
  const Operation *sum = Def(sum_bcast->operand(0), OpKind::kReduce);
  if (sum == nullptr || !IsRowReduce(*sum, dims, OpKind::kAdd) || sum->operand(0) != e)
    return false;
  const Operation *exp = Def(e, OpKind::kExponential);
  const Operation *sub = exp != nullptr ? Def(exp->operand(0), OpKind::kSubtract) : nullptr;
  if (sub == nullptr) return false;
  const Value *s = sub->operand(0);
  const Operation *max_bcast = Def(sub->operand(1), OpKind::kBroadcastInDim);
  if (max_bcast == nullptr || !IsRowBroadcast(*max_bcast, dims)) return false;
  const Operation *max = Def(max_bcast->operand(0), OpKind::kReduce);
  if (max == nullptr || !IsRowReduce(*max, dims, OpKind::kMaximum) || max->operand(0) != s) {
    return false;
  }
  // s = scale(Q·K), or scale(Q·K) + mask in either operand order.
  const Operation *mask = nullptr;
  std::vector<const Value *> scaled = {s};
  if (const Operation *add = Def(s, OpKind::kAdd)) {
    mask = add;
    scaled = {add->operand(0), add->operand(1)};
  }
  const Operation *scale = nullptr;
  for (const Value *candidate : scaled) {
    if (const Operation *mul = Def(candidate, OpKind::kMultiply)) {
      for (int64_t k = 0; k < 2 && attention.qk == nullptr; ++k) {
        const Operation *dot = Def(mul->operand(k), OpKind::kDotGeneral);
        if (dot != nullptr && IsScaleValue(mul->operand(1 - k))) {
          attention.qk = dot;
          scale = mul;
        }
      }
    } else if (const Operation *div = Def(candidate, OpKind::kDivide)) {
      const Operation *dot = Def(div->operand(0), OpKind::kDotGeneral);
      if (dot != nullptr && IsScaleValue(div->operand(1))) {
        attention.qk = dot;
        scale = div;
      }
    }
    if (attention.qk != nullptr) break;
  }
  if (attention.qk == nullptr) return false;
  attention.chain = {attention.qk, scale, max, max_bcast, sub, exp, sum, sum_bcast, divide};
  if (mask != nullptr) attention.chain.push_back(mask);
  return true;
}

// Whether `op` is dead: removable when unused and none of its results read
// (simplify-arithmetic leaves JAX's maximum(-inf, max(s)) so, still reading the
// row max, for eliminate-dead-code).
bool IsDead(const Operation &op) {
  if (!IsRemovableWhenUnused(op)) return false;
  for (int64_t r = 0; r < op.num_results(); ++r) {
    if (!op.result(r)->uses().empty()) return false;
  }
  return true;
}

// Whether every value of the chain is read only by the chain and P·V (the rule
// fuses them all into one item; a value read elsewhere keeps the ops apart, and
// the transposes would be copies for nothing). Dead readers do not count.
bool ReadOnlyInside(const Attention &attention, const Operation &pv) {
  const std::set<const Operation *> inside(attention.chain.begin(), attention.chain.end());
  for (const Operation *op : attention.chain) {
    for (const Use &use : op->result()->uses()) {
      if (use.user != &pv && inside.count(use.user) == 0 && !IsDead(*use.user)) return false;
    }
  }
  return true;
}

// Whether the flash kernel can run the attention: every operand of the chain and of P·V has P·V's
// element type, and the values it reads from memory (V, Q, K, the scale and mask values, the
// reduces' init values: every operand not produced inside the chain) are not values of the
// chain.
bool KernelReadsAllInputs(const Attention &attention, const Operation &pv) {
  const ElementType type = pv.result()->type().element_type();
  const std::set<const Operation *> inside(attention.chain.begin(), attention.chain.end());
  const Value *p = pv.operand(attention.p_side);
  const Value *v = pv.operand(1 - attention.p_side);
  if (v->type().element_type() != type || p->type().element_type() != type) return false;
  if (v->defining_op() != nullptr && inside.count(v->defining_op()) != 0) return false;
  for (const Operation *op : attention.chain) {
    for (const Value *operand : op->operands()) {
      if (operand->type().element_type() != type) return false;
    }
  }
  // The mask's other operand (the one that is not the scaled scores) must come from outside.
  const Operation *mask = attention.chain.size() > 9 ? attention.chain.back() : nullptr;
  if (mask != nullptr) {
    for (const Value *operand : mask->operands()) {
      const Operation *def = operand->defining_op();
      if (def != nullptr && inside.count(def) != 0 && def != attention.chain[1]) return false;
    }
  }
  return true;
}

class Rewriter {
 public:
  // The dot_generals of `block` (and of nested blocks) are visited once each,
  // in program order; the dots a rewrite inserts are not visited again.
  int64_t RewriteBlock(Block &block) {
    int64_t rewrites = 0;
    std::vector<Operation *> dots;
    for (const auto &owned : block.operations()) {
      rewrites += SumOverNestedBlocks(*owned, [&](Block &nested) { return RewriteBlock(nested); });
      if (owned->kind() == OpKind::kDotGeneral) dots.push_back(owned.get());
    }
    for (Operation *pv : dots) rewrites += Rewrite(block, *pv);
    return rewrites;
  }

 private:
  // transpose(x, p) inserted before `before`; x itself for the identity.
  static Value *Transpose(Block &block, const Operation *before, Value *x, const Permutation &p) {
    if (IsIdentity(p)) return x;
    std::vector<int64_t> dims;
    for (int64_t d : p) dims.push_back(x->type().dim(d));
    const TensorType type = TensorType::Create(x->type().element_type(), dims).value();
    return block
        .InsertBefore(before,
                      Operation::Create(OpKind::kTranspose, {x}, {&type, 1}, {{"permutation", p}}))
        ->result();
  }

  // A dot_general of `lhs` and `rhs` with `dot`'s attributes and the given
  // batching and contracting dims, inserted before `dot`; precision_config
  // swapped when `swapped` (the operands trade places).
  static Operation *CanonicalDot(Block &block, const Operation &dot, Value *lhs, Value *rhs,
                                 const std::vector<int64_t> &lhs_batching,
                                 const std::vector<int64_t> &rhs_batching, int64_t lhs_contracting,
                                 int64_t rhs_contracting, bool swapped, const TensorType &result) {
    std::vector<NamedAttribute> attributes;
    for (const NamedAttribute &attribute : dot.attributes()) {
      if (attribute.name.find("_dimensions") != std::string::npos) continue;  // set below
      attributes.push_back(attribute);
      if (attribute.name == "precision_config" && swapped) {
        if (auto *list = std::get_if<std::vector<std::string>>(&attributes.back().value);
            list != nullptr && list->size() == 2) {
          std::swap((*list)[0], (*list)[1]);
        }
      }
    }
    attributes.push_back({"lhs_batching_dimensions", lhs_batching});
    attributes.push_back({"rhs_batching_dimensions", rhs_batching});
    attributes.push_back({"lhs_contracting_dimensions", std::vector<int64_t>{lhs_contracting}});
    attributes.push_back({"rhs_contracting_dimensions", std::vector<int64_t>{rhs_contracting}});
    return block.InsertBefore(&dot, Operation::Create(OpKind::kDotGeneral, {lhs, rhs}, {&result, 1},
                                                      std::move(attributes)));
  }

  int64_t Rewrite(Block &block, Operation &pv) {
    if (pv.num_operands() != 2 || pv.num_results() != 1 ||
        !IsFloat(pv.result()->type().element_type())) {
      return 0;
    }
    Attention attention;
    for (int64_t side = 0; side < 2; ++side) {
      attention = Attention();
      attention.p_side = side;
      if (MatchChain(pv.operand(side), attention)) break;
      attention.qk = nullptr;
    }
    if (attention.qk == nullptr || !ReadOnlyInside(attention, pv)) return 0;
    const int64_t rank = pv.operand(attention.p_side)->type().rank();
    const int64_t batch = rank - 2;
    // P·V: P's batching dims leading and in order, its last dim contracted; V's
    // dims as batching..., contracting, free.
    const char *p_prefix = attention.p_side == 0 ? "lhs" : "rhs";
    const char *v_prefix = attention.p_side == 0 ? "rhs" : "lhs";
    auto ints = [&](const char *prefix, const char *what) {
      return pv.GetInts(std::string(prefix) + "_" + what + "_dimensions");
    };
    Permutation iota(static_cast<size_t>(batch));
    for (int64_t i = 0; i < batch; ++i) iota[static_cast<size_t>(i)] = i;
    const Value *v = pv.operand(1 - attention.p_side);
    if (ints(p_prefix, "batching") != iota ||
        ints(p_prefix, "contracting") != std::vector<int64_t>{rank - 1} ||
        v->type().rank() != rank) {
      return 0;
    }
    const Permutation v_order =
        OperandOrder(rank, ints(v_prefix, "batching"), ints(v_prefix, "contracting"));
    if (v_order.empty() || v->type().dim(v_order.back()) > kFlashAttentionMaxValueDim ||
        !IsAttentionScoreDot(*attention.qk, static_cast<size_t>(batch)) ||
        !KernelReadsAllInputs(attention, pv)) {
      return 0;
    }
    // The kernel reads V's batching and key dims through strides; its value dim
    // must be last.
    const bool value_dim_last = v_order.back() == rank - 1;
    if (attention.p_side == 0 && value_dim_last) return 0;  // the rule's form already

    Value *p = pv.operand(attention.p_side);
    // V as it is when its value dim is last (its batching and key dims in
    // place), else transposed to [batch..., k, dv].
    Value *v_read = pv.operand(1 - attention.p_side);
    std::vector<int64_t> v_batching = ints(v_prefix, "batching");
    int64_t v_contracting = ints(v_prefix, "contracting")[0];
    if (!value_dim_last) {
      // One transpose per V and order (attentions sharing V share it; CSE ran before).
      auto [cached, fresh] = transposed_.try_emplace({&block, v_read, v_order}, nullptr);
      if (fresh) cached->second = Transpose(block, &pv, v_read, v_order);
      v_read = cached->second;
      v_batching = iota;
      v_contracting = batch;
    }
    std::vector<int64_t> dims = p->type().dims();
    dims.back() = v->type().dim(v_order.back());
    const TensorType product = TensorType::Create(pv.result()->type().element_type(), dims).value();
    Operation *dot = CanonicalDot(block, pv, p, v_read, iota, v_batching, batch + 1, v_contracting,
                                  attention.p_side == 1, product);
    Value *result = dot->result();
    if (attention.p_side == 1) {
      // V·P was [batch..., dv, q]: swap the last two dims back; transposes
      // reading it compose.
      Permutation swap = iota;
      swap.push_back(batch + 1);
      swap.push_back(batch);
      std::vector<Operation *> transposes;
      for (const Use &use : pv.result()->uses()) {
        if (use.user->kind() == OpKind::kTranspose) transposes.push_back(use.user);
      }
      for (Operation *t : transposes) {
        const Permutation outer = t->GetInts("permutation");
        Permutation composed;
        for (int64_t d : outer) composed.push_back(swap[static_cast<size_t>(d)]);
        if (IsIdentity(composed)) {
          t->result()->ReplaceAllUsesWith(result);
        } else {
          t->SetOperand(0, result);
          t->SetAttribute("permutation", composed);
        }
      }
      if (!pv.result()->uses().empty()) result = Transpose(block, &pv, result, swap);
    }
    if (!pv.result()->uses().empty()) pv.result()->ReplaceAllUsesWith(result);
    return 1;
  }

  // Transposes of V this pass made, by block, V and permutation (inserted before the first P·V
  // of the block that reads them, which precedes the later ones).
  std::map<std::tuple<const Block *, const Value *, Permutation>, Value *> transposed_;
};

}  // namespace

int64_t CanonicalizeAttentionLayouts(Function &function) {
  Rewriter rewriter;
  return rewriter.RewriteBlock(*function.entry_block());
}

const passes::WorkContract &CanonicalizeAttentionLayoutsPass::contract() const {
  static const passes::WorkContract kContract{{kName, 1}, &EstimateOneVisitPerNode};
  return kContract;
}

Status CanonicalizeAttentionLayoutsPass::Run(passes::PassContext &context) {
  return FinishRewrite(context, CanonicalizeAttentionLayouts(context.function()));
}

}  // namespace accy
