// EliminateDeadCodePass: erases the ops whose results nothing uses (XLA's HloDCE, MLIR's
// dead-code elimination), in every block of a function, nested regions included. Kept whatever
// their uses: `return`, `kernel_call` (a library kernel may have effects the IR does not show)
// and `while` (a loop that may not terminate, or that max_while_iterations must stop, is not
// removed behind the caller's back). Stateless; one instance may run on many functions, not
// concurrently.
#ifndef ACCY_SRC_TRANSFORMS_ELIMINATE_DEAD_CODE_H_
#define ACCY_SRC_TRANSFORMS_ELIMINATE_DEAD_CODE_H_

#include "src/passes/pass_manager.h"

namespace accy {

// True when `op` may be erased once its results have no uses (see above).
bool IsRemovableWhenUnused(const Operation& op);

class EliminateDeadCodePass : public passes::Pass {
 public:
  static constexpr std::string_view kName = "eliminate-dead-code";
  std::string_view name() const override { return kName; }
  // Identity "eliminate-dead-code" v1: one visit per op, operand and attribute atom.
  const passes::WorkContract& contract() const override;
  // Never fails. Marks the context modified when it erased an op.
  Status Run(passes::PassContext& context) override;
};

// The pass's rewrite on its own: erases dead ops of `function`; returns how many.
int64_t EliminateDeadCode(Function& function);

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_ELIMINATE_DEAD_CODE_H_
