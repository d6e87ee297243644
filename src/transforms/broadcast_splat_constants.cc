// BroadcastSplatConstantsPass (broadcast_splat_constants.h).
#include "src/transforms/broadcast_splat_constants.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "src/transforms/rewrite_util.h"

namespace accy {
namespace {

// The one element's bytes of a splat constant of more than one element, or empty.
std::vector<uint8_t> SplatBytes(const Operation& op) {
  if (op.kind() != OpKind::kConstant) return {};
  const DenseElements* dense = op.GetDense("value");
  if (dense == nullptr) return {};
  const int64_t count = dense->type.element_count();
  if (count < 2 || dense->bytes.size() % static_cast<size_t>(count) != 0) return {};
  const size_t width = dense->bytes.size() / static_cast<size_t>(count);
  const uint8_t* first = dense->bytes.data();
  for (size_t offset = width; offset < dense->bytes.size(); offset += width) {
    if (std::memcmp(first, first + offset, width) != 0) return {};
  }
  return std::vector<uint8_t>(first, first + width);
}

int64_t RewriteBlock(Block& block) {
  int64_t rewritten = 0;
  for (size_t i = 0; i < block.operations().size(); ++i) {
    Operation* op = block.operations()[i].get();
    for (int64_t r = 0; r < op->num_regions(); ++r) {
      for (const auto& nested : op->region(r)->blocks()) rewritten += RewriteBlock(*nested);
    }
    std::vector<uint8_t> element = SplatBytes(*op);
    if (element.empty() || !op->result()->has_uses()) continue;
    const TensorType type = op->result()->type();
    StatusOr<TensorType> scalar_type = TensorType::Create(type.element_type(), {});
    if (!scalar_type.ok()) continue;
    std::vector<NamedAttribute> value;
    value.push_back({"value", DenseElements{*scalar_type, std::move(element)}});
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
