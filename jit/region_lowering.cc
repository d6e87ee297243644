// Scalar region bodies lowered op by op (region_lowering.h).
#include "jit/region_lowering.h"

#include <map>

#include "src/fusion/fusion_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {

namespace {

// One op of a scalar region body on its operands' storage-form values (LowerScalarRegion's
// accepted ops).
StatusOr<llvm::Value*> LowerRegionOp(ElementwiseLowering& lowering, const Operation& op,
                                     std::span<llvm::Value* const> operands, std::string_view what) {
  const ElementType type = op.result(0)->type().element_type();
  const DenseElements* dense = op.kind() == OpKind::kConstant ? op.GetDense("value") : nullptr;
  if (dense != nullptr && op.result(0)->type().element_count() == 1 &&
      static_cast<int64_t>(dense->bytes.size()) == ElementByteWidth(type)) {
    return lowering.ConstantElement(type, dense->bytes.data());
  }
  if ((op.kind() == OpKind::kBroadcastInDim || op.kind() == OpKind::kReshape) &&
      op.result(0)->type().element_count() == 1) {
    return operands[0];
  }
  if (!IsFusableElementwiseOp(op)) {
    return absl::UnimplementedError(StrCat("jit: ", what, " op ", op.name(), " on ",
                                           op.result(0)->type().ToString(), " is not supported"));
  }
  return lowering.Emit(op, operands);
}

}  // namespace

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
                                               " reads a value from outside the region ",
                                               kCapturedValueHint));
      }
      operands.push_back(it->second);
    }
    return operands;
  };
  for (const auto& owned : block->operations()) {
    const Operation& op = *owned;
    ACCY_ASSIGN_OR_RETURN(std::vector<llvm::Value*> operands, lookup(op));
    if (op.kind() == OpKind::kReturn) return operands;
    ACCY_ASSIGN_OR_RETURN(values[op.result(0)], LowerRegionOp(lowering, op, operands, what));
  }
  return absl::InvalidArgumentError(StrCat("jit: ", what, " has no return"));
}

StatusOr<llvm::Value*> LowerRegionValue(ElementwiseLowering& lowering, const Region& region,
                                        std::map<const Value*, llvm::Value*> known,
                                        const Value* target, std::string_view what) {
  const Block* block = region.entry_block();
  if (block == nullptr) return absl::InvalidArgumentError(StrCat("jit: ", what, " has no block"));
  for (const auto& owned : block->operations()) {
    if (auto it = known.find(target); it != known.end()) return it->second;
    const Operation& op = *owned;
    if (op.kind() == OpKind::kReturn || op.num_results() != 1) continue;
    std::vector<llvm::Value*> operands;
    for (const Value* operand : op.operands()) {
      auto it = known.find(operand);
      if (it == known.end()) break;
      operands.push_back(it->second);
    }
    if (operands.size() != static_cast<size_t>(op.num_operands())) continue;  // needs an unknown
    ACCY_ASSIGN_OR_RETURN(known[op.result(0)], LowerRegionOp(lowering, op, operands, what));
  }
  if (auto it = known.find(target); it != known.end()) return it->second;
  return absl::InvalidArgumentError(StrCat("jit: ", what, ": the value wanted is not computable "
                                           "from the given arguments"));
}

}  // namespace accy::jit
