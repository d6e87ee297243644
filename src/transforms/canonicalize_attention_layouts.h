// CanonicalizeAttentionLayoutsPass: attention whose P·V an exporter writes as
// V·P (JAX/Flax: jnp.einsum over q, k, v of [batch, seq, heads, head_dim] gives
// dot_general(v, p) with result [batch, heads, head_dim, q], then a transpose)
// is rewritten into the form the flash attention rule matches (fusion_plan.h
// rule 7: P·V with P, [batch..., q, k], as the lhs):
//   V·P  -> transpose(P · V, p)      p swaps the last two dims back to the
//   program's
//                                    [batch..., dv, q]; a transpose already
//                                    reading that result is composed with p
//                                    (one transpose instead of two)
//   P·V  -> P · transpose(V)         only when V's value dim is not its last
//   (the kernel reads
//                                    V's value dim as whole vectors; its
//                                    batching and key dims, and all of Q's and
//                                    K's, it reads in place through strides)
// Rewritten only where the values between Q·K and P·V are the softmax the rule
// runs, P = exp(s - bcast(max(s))) / bcast(sum(exp(s - bcast(max(s))))) over
// the last dim with s = scale(Q·K) or scale(Q·K) + mask (scale a multiply or
// divide by a constant or a broadcast rank-0 value), every value of that chain
// read only inside it, P's batching dims leading and in order, float elements
// and a value dim of at most kFlashAttentionMaxValueDim: elsewhere a transpose
// would be a copy for nothing. Each rewrite is exact (spec "dot_general",
// "transpose": the same products and sums; only the result's dim order changes,
// and the transpose restores it). The old dot_general is left to
// eliminate-dead-code. Stateless.
#ifndef ACCY_SRC_TRANSFORMS_CANONICALIZE_ATTENTION_LAYOUTS_H_
#define ACCY_SRC_TRANSFORMS_CANONICALIZE_ATTENTION_LAYOUTS_H_

#include <cstdint>

#include "src/passes/pass_manager.h"

namespace accy {

class CanonicalizeAttentionLayoutsPass : public passes::Pass {
 public:
  static constexpr std::string_view kName = "canonicalize-attention-layouts";
  std::string_view name() const override { return kName; }
  // Identity "canonicalize-attention-layouts" v1: one visit per op, operand and
  // attribute atom (each dot_general's softmax chain is walked once: at most 10
  // ops).
  const passes::WorkContract &contract() const override;
  // Never fails. Marks the context modified when it rewrote an attention.
  Status Run(passes::PassContext &context) override;
};

// The pass's rewrite on its own: returns how many attentions it rewrote.
int64_t CanonicalizeAttentionLayouts(Function &function);

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_CANONICALIZE_ATTENTION_LAYOUTS_H_
