// BroadcastSplatConstantsPass (broadcast_splat_constants.h).
#include "src/transforms/broadcast_splat_constants.h"

#include <optional>
#include <utility>
#include <vector>

#include "src/transforms/rewrite_util.h"

namespace accy {
namespace {

// The one element's bytes of a splat constant of more than one element, or nullopt.
std::optional<std::vector<uint8_t>> SplatOfConstant(const Operation& op) {
  if (op.kind() != OpKind::kConstant) return std::nullopt;
  const DenseElements* dense = op.GetDense("value");
  if (dense == nullptr || dense->type.element_count() < 2) return std::nullopt;
  return SplatElementBytes(*dense);
}

int64_t RewriteBlock(Block& block) {
  int64_t rewritten = 0;
  for (size_t i = 0; i < block.operations().size(); ++i) {
    Operation* op = block.operations()[i].get();
    rewritten += SumOverNestedBlocks(*op, [&](Block& nested) { return RewriteBlock(nested); });
    std::optional<std::vector<uint8_t>> element = SplatOfConstant(*op);
    if (!element.has_value() || !op->result()->has_uses()) continue;
    const TensorType type = op->result()->type();
    StatusOr<TensorType> scalar_type = TensorType::Create(type.element_type(), {});
    if (!scalar_type.ok()) continue;
    std::vector<NamedAttribute> value;
    value.push_back({"value", DenseElements{*scalar_type, *std::move(element)}});
    Operation* scalar = block.InsertBefore(
        op, Operation::Create(OpKind::kConstant, {}, {&*scalar_type, 1}, std::move(value)));
    std::vector<NamedAttribute> dims;
    dims.push_back({"broadcast_dimensions", std::vector<int64_t>{}});
    Operation* broadcast = block.InsertBefore(
        op, Operation::Create(OpKind::kBroadcastInDim, {scalar->result()}, {&type, 1},
                              std::move(dims)));
    op->result()->ReplaceAllUsesWith(broadcast->result());
    i += 2;  // the two new ops took the constant's place; the constant is two further on
    ++rewritten;
  }
  return rewritten;
}

}  // namespace

int64_t BroadcastSplatConstants(Function& function) {
  return RewriteBlock(*function.entry_block());
}

const passes::WorkContract& BroadcastSplatConstantsPass::contract() const {
  static const passes::WorkContract kContract{{kName, 1}, &EstimateOneVisitPerNode};
  return kContract;
}

Status BroadcastSplatConstantsPass::Run(passes::PassContext& context) {
  return FinishRewrite(context, BroadcastSplatConstants(context.function()));
}

}  // namespace accy
