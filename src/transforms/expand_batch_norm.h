// ExpandBatchNormPass: batch_norm_inference, batch_norm_training and batch_norm_grad become the
// decompositions their spec sections give (StableHLO spec "batch_norm_inference",
// "batch_norm_training", "batch_norm_grad"; XLA's BatchNormExpander), in the operand's element
// type: broadcast_in_dim of the 1-D operands along feature_index, elementwise subtract,
// sqrt, divide, multiply and add, and reduce-sums over every dim but feature_index, so the
// fusion plan sees elementwise chains and reductions it already fuses. Ops nested in regions
// (while bodies, case branches) are expanded too. The batch-norm op is erased once its results
// point at the expansion, so no batch-norm op reaches the planner (the op table gives them no
// work kind). Stateless.
#ifndef ACCY_SRC_TRANSFORMS_EXPAND_BATCH_NORM_H_
#define ACCY_SRC_TRANSFORMS_EXPAND_BATCH_NORM_H_

#include <cstdint>

#include "src/passes/pass_manager.h"

namespace accy {

class ExpandBatchNormPass : public passes::Pass {
 public:
  static constexpr std::string_view kName = "expand-batch-norm";
  std::string_view name() const override { return kName; }
  // Identity "expand-batch-norm" v1: one visit per op, operand and attribute atom, and at most
  // 40 new ops (each with its attributes) per batch-norm op.
  const passes::WorkContract& contract() const override;
  // Never fails. Marks the context modified when it expanded an op.
  Status Run(passes::PassContext& context) override;
};

// The pass's rewrite on its own: returns how many batch-norm ops it expanded.
int64_t ExpandBatchNorm(Function& function);
// The batch-norm ops in `function`, nested regions included.
int64_t CountBatchNormOps(const Function& function);

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_EXPAND_BATCH_NORM_H_
