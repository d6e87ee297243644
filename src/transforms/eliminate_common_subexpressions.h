// EliminateCommonSubexpressionsPass: when two ops compute the same thing -- same kind, the same
// operand values in the same order, equal attributes (every attribute, compared exactly: floats
// by their bits, constants by type and payload bytes) and the same result types -- the later
// one's uses move to the earlier and the later one is erased (XLA's HloCSE, Halide's CSE). An op
// in a nested region may be replaced by an equal op before it in its own block or in an
// enclosing block (which dominates it); never the other way. Ops with regions (reduce, scatter)
// merge when their regions are the same too: blocks with arguments of the same types and
// pairwise the same ops, their operands compared through the correspondence of the two regions'
// values (torch_xla2 writes the mean of a layer norm twice, once inside its variance); only
// regions of at most 64 ops, none with a region of its own, are compared, and an op is compared
// with at most 4 earlier ops of the same hash. `return`, `kernel_call` and `while` are never
// merged. Stateless; one instance may run on many functions, not concurrently.
#ifndef ACCY_SRC_TRANSFORMS_ELIMINATE_COMMON_SUBEXPRESSIONS_H_
#define ACCY_SRC_TRANSFORMS_ELIMINATE_COMMON_SUBEXPRESSIONS_H_

#include <cstdint>

#include "src/passes/pass_manager.h"

namespace accy {

// True when `a` and `b` compute the same values by the rule above (their operands compared as
// Value pointers, their regions' values through the regions' correspondence). Symmetric.
bool ComputeTheSame(const Operation& a, const Operation& b);

class EliminateCommonSubexpressionsPass : public passes::Pass {
 public:
  static constexpr std::string_view kName = "eliminate-common-subexpressions";
  std::string_view name() const override { return kName; }
  // Identity "eliminate-common-subexpressions" v2 (v1 merged no op with regions): one visit
  // per op and operand, plus five per op, operand and region op for the comparisons; constant
  // payload bytes read once to hash and once per comparison (at most 4); a table entry per op.
  const passes::WorkContract& contract() const override;
  // Never fails. Marks the context modified when it merged an op.
  Status Run(passes::PassContext& context) override;
};

// The pass's rewrite on its own: merges the ops of `function` that compute the same thing;
// returns how many were erased.
int64_t EliminateCommonSubexpressions(Function& function);

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_ELIMINATE_COMMON_SUBEXPRESSIONS_H_
