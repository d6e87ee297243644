// FoldConstantsPass: constant folding of small values (XLA's HloConstantFolding, MLIR's op
// folders). An op whose operands are all `constant`s is replaced by a `constant` holding its
// result, computed by the reference evaluator (src/reference), when
//   - it is pure, has no regions and at least one operand (iota and broadcast_in_dim stay: the
//     JIT reads them for free, where a folded copy would be a dense constant to stream);
//   - every operand and every result has at most kMaxFoldedElements elements;
//   - the evaluator's result is the value the JIT would compute, bit for bit: every integer and
//     i1 op except those whose results the spec leaves to the implementation (an integer divide
//     or remainder with a zero or -1 divisor, integer power, a float -> integer convert), the
//     float ops IEEE 754 rounds exactly
//     (abs, negate, sign, floor, ceil, round_nearest_*, is_finite, sqrt, add, subtract,
//     multiply, divide, remainder, maximum, minimum, compare, select, clamp, convert,
//     bitcast_convert) and the layout ops (reshape, transpose, slice, pad, concatenate, reverse,
//     dynamic_slice, dynamic_update_slice). Transcendentals (exponential, tanh, power, ...),
//     reduce, dot_general and gather/scatter are not folded: their JIT results may differ from
//     the evaluator's in the last bits (docs/numerics.md), and folding must not change a
//     program's results.
// The folded op's operands are left to eliminate-dead-code. Stateless.
#ifndef ACCY_SRC_TRANSFORMS_FOLD_CONSTANTS_H_
#define ACCY_SRC_TRANSFORMS_FOLD_CONSTANTS_H_

#include <cstdint>

#include "src/passes/pass_manager.h"

namespace accy {

// The largest operand or result (in elements) fold-constants evaluates.
inline constexpr int64_t kMaxFoldedElements = 1024;

class FoldConstantsPass : public passes::Pass {
 public:
  static constexpr std::string_view kName = "fold-constants";
  std::string_view name() const override { return kName; }
  // Identity "fold-constants" v1: one visit per op, operand and attribute atom (each fold
  // evaluates at most kMaxFoldedElements elements per operand and result: a constant factor).
  const passes::WorkContract& contract() const override;
  // Never fails: an op the evaluator refuses is left as it is. Marks the context modified when
  // it folded an op.
  Status Run(passes::PassContext& context) override;
};

// The pass's rewrite on its own: folds the foldable ops of `function` (nested regions
// included, in program order, so chains of constants fold in one run); returns how many.
int64_t FoldConstants(Function& function);

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_FOLD_CONSTANTS_H_
