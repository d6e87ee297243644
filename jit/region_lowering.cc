// Scalar region bodies lowered op by op (region_lowering.h).
#include "jit/region_lowering.h"

#include <map>

#include "src/fusion/fusion_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {

StatusOr<std::vector<llvm::Value*>> LowerScalarRegion(ElementwiseLowering& lowering,
                                                      const Region& region,
                                                      std::span<llvm::Value* const> arguments,
                                                      std::string_view what) {
  const Block* block = region.entry_block();
  if (block == nullptr || block->num_arguments() != static_cast<int64_t>(arguments.size())) {
    return absl::InvalidArgumentError(StrCat("jit: ", what, " has ",
                                             block == nullptr ? 0 : block->num_arguments(),
                                             " arguments, given ", arguments.size()));
  }
  std::map<const Value*, llvm::Value*> values;
  for (int64_t i = 0; i < block->num_arguments(); ++i) {
    values[block->argument(i)] = arguments[static_cast<size_t>(i)];
  }
  auto lookup = [&](const Operation& op) -> StatusOr<std::vector<llvm::Value*>> {
    std::vector<llvm::Value*> operands;
    for (const Value* operand : op.operands()) {
      auto it = values.find(operand);
      if (it == values.end()) {
        return absl::UnimplementedError(StrCat("jit: ", what, " op ", op.name(),
                                               " reads a value from outside the region"));
      }
      operands.push_back(it->second);
    }
    return operands;
  };
  for (const auto& owned : block->operations()) {
    const Operation& op = *owned;
    ACCY_ASSIGN_OR_RETURN(std::vector<llvm::Value*> operands, lookup(op));
    if (op.kind() == OpKind::kReturn) return operands;
    const ElementType type = op.result(0)->type().element_type();
    const DenseElements* dense = op.kind() == OpKind::kConstant ? op.GetDense("value") : nullptr;
    if (dense != nullptr && op.result(0)->type().element_count() == 1 &&
        static_cast<int64_t>(dense->bytes.size()) == ElementByteWidth(type)) {
      values[op.result(0)] = lowering.ConstantElement(type, dense->bytes.data());
      continue;
    }
    if ((op.kind() == OpKind::kBroadcastInDim || op.kind() == OpKind::kReshape) &&
        op.result(0)->type().element_count() == 1) {
      values[op.result(0)] = operands[0];
      continue;
    }
    if (!IsFusableElementwiseOp(op)) {
      return absl::UnimplementedError(StrCat("jit: ", what, " op ", op.name(), " on ",
                                             op.result(0)->type().ToString(),
                                             " is not supported"));
    }
    ACCY_ASSIGN_OR_RETURN(values[op.result(0)], lowering.Emit(op, operands));
  }
  return absl::InvalidArgumentError(StrCat("jit: ", what, " has no return"));
}

}  // namespace accy::jit
