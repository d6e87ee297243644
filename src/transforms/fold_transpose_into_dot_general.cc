// FoldTransposeIntoDotGeneralPass (fold_transpose_into_dot_general.h).
#include "src/transforms/fold_transpose_into_dot_general.h"

#include <algorithm>
#include <string>
#include <vector>

#include "src/transforms/rewrite_util.h"

namespace accy {
namespace {

// The operand's dims that are neither batching nor contracting, in increasing order.
std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batching,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batching.begin(), batching.end(), d) == batching.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

// Folds the transpose feeding operand `side` (0 lhs, 1 rhs) of `dot`, if any and if allowed.
bool FoldOperand(Operation& dot, int side) {
  Value* operand = dot.operand(side);
  const Operation* transpose = operand->defining_op();
  if (transpose == nullptr || transpose->kind() != OpKind::kTranspose) return false;
  // Only layouts of weights: a parameter or a constant. A transpose of a computed value stays,
  // because the fusion rules match attention and epilogues on the canonical form (e.g. flash
  // attention's dot_general(q, transpose(k))); folding those waits on rules that read dims.
  const Value* source = transpose->operand(0);
  const bool weight = (source->is_block_argument() &&
                       source->owner_block()->parent()->parent_function() != nullptr) ||
                      (source->defining_op() != nullptr &&
                       source->defining_op()->kind() == OpKind::kConstant);
  if (!weight) return false;
  const std::vector<int64_t> permutation = transpose->GetInts("permutation");
  const int64_t rank = operand->type().rank();
  if (static_cast<int64_t>(permutation.size()) != rank) return false;
  const std::string prefix = side == 0 ? "lhs" : "rhs";
  const std::vector<int64_t> batching = dot.GetInts(prefix + "_batching_dimensions");
  const std::vector<int64_t> contracting = dot.GetInts(prefix + "_contracting_dimensions");
  // Operand dim d is dim permutation[d] of the transpose's input.
  std::vector<int64_t> free_before = FreeDims(rank, batching, contracting);
  int64_t last = -1;
  for (int64_t d : free_before) {
    if (permutation[static_cast<size_t>(d)] < last) return false;  // the result would permute
    last = permutation[static_cast<size_t>(d)];
  }
  auto map = [&](const std::vector<int64_t>& dims) {
    std::vector<int64_t> mapped;
    for (int64_t d : dims) mapped.push_back(permutation[static_cast<size_t>(d)]);
    return mapped;
  };
  dot.SetAttribute(prefix + "_batching_dimensions", map(batching));
  dot.SetAttribute(prefix + "_contracting_dimensions", map(contracting));
  dot.SetOperand(side, transpose->operand(0));
  return true;
}

int64_t FoldInBlock(Block& block) {
  int64_t folded = 0;
  for (const auto& op : block.operations()) {
    if (op->kind() == OpKind::kDotGeneral) {
      folded += FoldOperand(*op, 0);
      folded += FoldOperand(*op, 1);
    }
    folded += SumOverNestedBlocks(*op, [&](Block& nested) { return FoldInBlock(nested); });
  }
  return folded;
}

}  // namespace

int64_t FoldTransposeIntoDotGeneral(Function& function) {
  return FoldInBlock(*function.entry_block());
}

const passes::WorkContract& FoldTransposeIntoDotGeneralPass::contract() const {
  static const passes::WorkContract kContract{{kName, 1}, &EstimateOneVisitPerNode};
  return kContract;
}

Status FoldTransposeIntoDotGeneralPass::Run(passes::PassContext& context) {
  return FinishRewrite(context, FoldTransposeIntoDotGeneral(context.function()));
}

}  // namespace accy
