// Shared pieces of the graph passes in src/transforms: the end of a rewrite's Run, and the work
// estimate of a rewrite that visits each op and operand once. Stateless.
#ifndef ACCY_SRC_TRANSFORMS_REWRITE_UTIL_H_
#define ACCY_SRC_TRANSFORMS_REWRITE_UTIL_H_

#include <cstdint>

#include "src/passes/pass_manager.h"

namespace accy {

// After a rewrite of context.function() that changed `changes` places: when it changed any,
// renumbers the function (analyses then see dense ids in program order) and marks the context
// modified; otherwise every analysis stays valid. Always OK.
inline Status FinishRewrite(passes::PassContext& context, int64_t changes) {
  if (changes > 0) {
    context.function().Renumber();
    context.MarkModified();
  } else {
    context.SetPreserved(passes::PreservedAnalyses::All());
  }
  return absl::OkStatus();
}

// One structural visit per op, operand and attribute atom of `function` (Census::Inspect's
// counts); no workspace. Errors: WorkOverflow as Census::Inspect and WorkAdd.
inline StatusOr<passes::WorkBounds> EstimateOneVisitPerNode(const Function& function) {
  ACCY_ASSIGN_OR_RETURN(passes::Census census, passes::Census::Inspect(function));
  passes::WorkBounds bounds;
  ACCY_ASSIGN_OR_RETURN(uint64_t visits, passes::WorkAdd(census.operations, census.operands));
  ACCY_ASSIGN_OR_RETURN(bounds.work.structural_visits, passes::WorkAdd(visits, census.atoms));
  return bounds;
}

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_REWRITE_UTIL_H_
