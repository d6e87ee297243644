// SinkConstantsIntoRegionsPass: a region body (reduce, reduce_window, sort, scatter,
// select_and_scatter, the collectives' reductions, ...) that reads a value defined outside it
// gets its own copy of that value when the value is a constant expression: a `constant`, or a
// small pure op of constant expressions (a broadcast_in_dim or convert of a constant). StableHLO
// regions are not isolated from above (spec "Programs": a region may use values of enclosing
// scopes), and torch-xla's exports capture constants that way, e.g. the init or NaN value a
// reduce body's select compares with; accy's JIT lowers bodies as functions of their
// arguments, so this pass makes such bodies self-contained (MLIR's "sink constants into
// regions", `mlir::getUsedValuesDefinedAbove` + clone). while and case are left alone: their
// bodies are outlined and take captured values as operands. A captured value computed at run
// time is left to isolate-regions-from-above, which runs next. Values stay bit for bit the same (the copies compute what the originals do).
// Stateless; one instance may run on many functions, not concurrently.
#ifndef ACCY_SRC_TRANSFORMS_SINK_CONSTANTS_INTO_REGIONS_H_
#define ACCY_SRC_TRANSFORMS_SINK_CONSTANTS_INTO_REGIONS_H_

#include <cstdint>

#include "src/passes/pass_manager.h"

namespace accy {

class SinkConstantsIntoRegionsPass : public passes::Pass {
 public:
  static constexpr std::string_view kName = "sink-constants-into-regions";
  std::string_view name() const override { return kName; }
  // Identity "sink-constants-into-regions" v1: one visit per op, operand and attribute atom
  // (each captured operand's constant expression is at most kMaxSunkOps ops).
  const passes::WorkContract& contract() const override;
  // Never fails. Marks the context modified when it copied a value into a region.
  Status Run(passes::PassContext& context) override;
};

// A constant expression is copied when it has at most this many ops and each of their results
// at most kMaxSunkElements elements (a body computes on rank-0 values; large constants stay out).
inline constexpr int kMaxSunkOps = 8;
inline constexpr int64_t kMaxSunkElements = 1024;

// The pass's rewrite on its own: returns how many region operands now read a copy.
int64_t SinkConstantsIntoRegions(Function& function);

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_SINK_CONSTANTS_INTO_REGIONS_H_
