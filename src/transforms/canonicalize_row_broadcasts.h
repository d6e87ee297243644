// CanonicalizeRowBroadcastsPass: exporters compute per-row values "with keepdims" -- the reduce's
// result R gets a trailing unit dim (R x 1, by broadcast_in_dim or reshape), the row arithmetic
// runs on R x 1 (mean = sum / n, rsqrt(var + eps), not(any(mask))), and a broadcast_in_dim
// expands the unit dim over the row (torch_xla2's layer norm and softmax, jnp.mean(keepdims=True)).
// The row pipeline rule (src/fusion/fusion_plan.h rule 6) reads rows only through a broadcast of
// an R-shaped value. This pass rewrites
//   broadcast_in_dim(v : R x 1, dims) -> T    where v is a row value (below)
// into broadcast_in_dim(row(v) : R, dims without its last entry) -> T, the same tensor by the
// spec ("broadcast_in_dim": a size-1 operand dim expands to any result size), with row(v):
//   v = broadcast_in_dim(r, d), every d[i] < rank(R)   r itself when r : R and d = 0..rank-1,
//                                                       else broadcast_in_dim(r, d) : R
//   v = reshape(r : R)                                  r
//   v = constant                                        the same payload as a constant of R
//   v = elementwise op(a, b, ...) of one result         the same op over row(a), row(b), ...
//                                                       (rank-0 operands, e.g. a scalar select
//                                                       predicate, kept) with result type R
// and v is not a row value otherwise (or past a chain of 64 ops). New ops go right after the op
// they stand for, so the block stays in topological order; the R x 1 ops are left to
// eliminate-dead-code. Elementwise ops compute the same element at the same position whatever
// the shape, so results are bit-identical. Stateless.
#ifndef ACCY_SRC_TRANSFORMS_CANONICALIZE_ROW_BROADCASTS_H_
#define ACCY_SRC_TRANSFORMS_CANONICALIZE_ROW_BROADCASTS_H_

#include <cstdint>

#include "src/passes/pass_manager.h"

namespace accy {

class CanonicalizeRowBroadcastsPass : public passes::Pass {
 public:
  static constexpr std::string_view kName = "canonicalize-row-broadcasts";
  std::string_view name() const override { return kName; }
  // Identity "canonicalize-row-broadcasts" v1: each value is classified once (memoized), so one
  // visit per op, operand and attribute atom, plus at most one new op per op; a rewritten
  // constant's payload is copied once (bounded by the parser's constant limits).
  const passes::WorkContract& contract() const override;
  // Never fails. Marks the context modified when it rewrote a broadcast.
  Status Run(passes::PassContext& context) override;
};

// The pass's rewrite on its own: returns how many broadcasts it rewrote.
int64_t CanonicalizeRowBroadcasts(Function& function);

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_CANONICALIZE_ROW_BROADCASTS_H_
