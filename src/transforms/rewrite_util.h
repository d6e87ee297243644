// Shared pieces of the graph passes in src/transforms: the end of a rewrite's Run, the work
// estimate of a rewrite that visits each op and operand once, and the splat test of a constant
// payload. Stateless.
#ifndef ACCY_SRC_TRANSFORMS_REWRITE_UTIL_H_
#define ACCY_SRC_TRANSFORMS_REWRITE_UTIL_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "accy/ir.h"
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

// Sum of `rewrite(block)` over the blocks of `op`'s regions: how the passes recurse into nested
// bodies before (or while) rewriting an op's own block.
template <typename Rewrite>
int64_t SumOverNestedBlocks(const Operation& op, Rewrite&& rewrite) {
  int64_t sum = 0;
  for (int64_t r = 0; r < op.num_regions(); ++r) {
    for (const auto& nested : op.region(r)->blocks()) sum += rewrite(*nested);
  }
  return sum;
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

// The one element's bytes of `dense` when it has at least one element and all of them have
// the same bits (a splat); nullopt otherwise (also for a payload whose size is not a multiple
// of its element count).
inline std::optional<std::vector<uint8_t>> SplatElementBytes(const DenseElements& dense) {
  const int64_t count = dense.type.element_count();
  if (count < 1 || dense.bytes.size() % static_cast<size_t>(count) != 0) return std::nullopt;
  const size_t width = dense.bytes.size() / static_cast<size_t>(count);
  const uint8_t* first = dense.bytes.data();
  for (size_t offset = width; offset < dense.bytes.size(); offset += width) {
    if (std::memcmp(first, first + offset, width) != 0) return std::nullopt;
  }
  return std::vector<uint8_t>(first, first + width);
}

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_REWRITE_UTIL_H_
