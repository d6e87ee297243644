// IsolateRegionsFromAbovePass: a reduce, reduce_window, sort or scatter whose body reads a
// rank-0 value computed at run time outside it (StableHLO regions are not isolated from above,
// spec "Programs") gets that value as one more operand instead, so the body reads only its own
// arguments, which is what accy's JIT lowers (MLIR's "isolated from above"; the
// `mlir::makeRegionIsolatedFromAbove` idea, made with the ops' own variadic forms):
//   - reduce / reduce_window: one more input, broadcast_in_dim(c) to the inputs' shape, with
//     init c; the body gets the pair of arguments (c, c) in the places the spec gives them
//     (accumulators first, then elements), reads the first, and returns the second.
//   - sort: one more operand, broadcast_in_dim(c) to the operands' shape; the comparator gets
//     (c, c) last and reads the first (the sorted copy of a constant column is c again).
//   - scatter: one more input (broadcast of c to the inputs' shape) and one more update
//     (broadcast to the updates' shape); the body gets c among the inputs' and the updates'
//     arguments, reads the first, and returns the update's.
// Each captured value's channel holds c in every element whatever the body does, so the
// original results are the same bits; the extra results are not used. Captured constants are
// copied in by sink-constants-into-regions, which runs first; while and case take captured
// values as operands of their own (src/ir/outline.h). Left as they are, with the JIT's error
// naming the op that reads the value: captures of rank above 0, bodies holding ops with regions,
// select_and_scatter (not variadic) and the collectives' reductions.
// Stateless; one instance may run on many functions, not concurrently.
#ifndef ACCY_SRC_TRANSFORMS_ISOLATE_REGIONS_FROM_ABOVE_H_
#define ACCY_SRC_TRANSFORMS_ISOLATE_REGIONS_FROM_ABOVE_H_

#include <cstdint>

#include "src/passes/pass_manager.h"

namespace accy {

class IsolateRegionsFromAbovePass : public passes::Pass {
 public:
  static constexpr std::string_view kName = "isolate-regions-from-above";
  std::string_view name() const override { return kName; }
  // Identity "isolate-regions-from-above" v1: one visit per op, operand and attribute atom (a
  // rewritten op's body is copied once).
  const passes::WorkContract& contract() const override;
  // Never fails. Marks the context modified when it rewrote an op.
  Status Run(passes::PassContext& context) override;
};

// The pass's rewrite on its own: returns how many ops now take their captured values as
// operands.
int64_t IsolateRegionsFromAbove(Function& function);

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_ISOLATE_REGIONS_FROM_ABOVE_H_
