// EliminateDeadCodePass (eliminate_dead_code.h).
#include "src/transforms/eliminate_dead_code.h"

#include <algorithm>

#include "src/transforms/rewrite_util.h"

namespace accy {
namespace {

bool ResultsUnused(const Operation& op) {
  for (int64_t i = 0; i < op.num_results(); ++i) {
    if (op.result(i)->has_uses()) return false;
  }
  return true;
}

// Last op first, so that erasing a user can make its producers (earlier in the block) dead in
// the same sweep; a kept op's regions are swept before the ops in front of it, whose values
// the regions may read.
int64_t SweepBlock(Block& block) {
  int64_t erased = 0;
  for (int64_t i = static_cast<int64_t>(block.operations().size()) - 1; i >= 0; --i) {
    Operation* op = block.operations()[static_cast<size_t>(i)].get();
    if (IsRemovableWhenUnused(*op) && ResultsUnused(*op)) {
      block.Erase(op);
      ++erased;
      continue;
    }
    erased += SumOverNestedBlocks(*op, [&](Block& nested) { return SweepBlock(nested); });
  }
  return erased;
}

}  // namespace

bool IsRemovableWhenUnused(const Operation& op) {
  // The op table's purity excludes kernel_call; return and while are kept by this pass's rule.
  return GetOpInfo(op.kind()).pure && op.kind() != OpKind::kReturn &&
         op.kind() != OpKind::kWhile;
}

int64_t EliminateDeadCode(Function& function) { return SweepBlock(*function.entry_block()); }

const passes::WorkContract& EliminateDeadCodePass::contract() const {
  static const passes::WorkContract kContract{{kName, 1}, &EstimateOneVisitPerNode};
  return kContract;
}

Status EliminateDeadCodePass::Run(passes::PassContext& context) {
  return FinishRewrite(context, EliminateDeadCode(context.function()));
}

}  // namespace accy
