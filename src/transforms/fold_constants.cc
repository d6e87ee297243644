// FoldConstantsPass (fold_constants.h).
#include "src/transforms/fold_constants.h"

#include <limits>
#include <vector>

#include "src/reference/evaluator_internal.h"
#include "src/transforms/rewrite_util.h"

namespace accy {
namespace {

// Float ops whose evaluator result is the correctly rounded (or exact) IEEE result, as the JIT's.
bool ExactForFloats(OpKind kind) {
  switch (kind) {
    case OpKind::kAbs:
    case OpKind::kNegate:
    case OpKind::kSign:
    case OpKind::kFloor:
    case OpKind::kCeil:
    case OpKind::kRoundNearestEven:
    case OpKind::kRoundNearestAfz:
    case OpKind::kIsFinite:
    case OpKind::kIsInf:
    case OpKind::kIsPosInf:
    case OpKind::kIsNegInf:
    case OpKind::kReducePrecision:
    case OpKind::kNextAfter:
    case OpKind::kMulhi:
    case OpKind::kSqrt:
    case OpKind::kConvert:
    case OpKind::kBitcastConvert:
    case OpKind::kAdd:
    case OpKind::kSubtract:
    case OpKind::kMultiply:
    case OpKind::kDivide:
    case OpKind::kRemainder:
    case OpKind::kMaximum:
    case OpKind::kMinimum:
    case OpKind::kCompare:
    case OpKind::kSelect:
    case OpKind::kClamp:
      return true;
    default:
      return false;
  }
}

bool IsFoldableLayoutOp(OpKind kind) {
  switch (kind) {
    case OpKind::kReshape:
    case OpKind::kTranspose:
    case OpKind::kSlice:
    case OpKind::kPad:
    case OpKind::kConcatenate:
    case OpKind::kReverse:
    case OpKind::kDynamicSlice:
    case OpKind::kDynamicUpdateSlice:
      return true;
    default:
      return false;
  }
}

// An integer divisor the spec leaves implementation-defined: 0, or -1 under a signed minimum
// dividend (checked as any -1: cheap and conservative).
bool HasUndefinedDivisor(const Tensor& divisor) {
  const ElementType type = divisor.element_type();
  for (int64_t i = 0; i < divisor.type().element_count(); ++i) {
    const int64_t value = reference::LoadInt(divisor, i);
    if (value == 0 || (IsSigned(type) && value == -1)) return true;
  }
  return false;
}

// The folded results of `op`, or nothing when it is not folded (see fold_constants.h).
std::optional<std::vector<Tensor>> Fold(const Operation& op) {
  const OpInfo& info = GetOpInfo(op.kind());
  if (!info.pure || op.num_regions() != 0 || op.num_operands() == 0) return std::nullopt;
  for (const Value* result : op.results()) {
    if (result->type().element_count() > kMaxFoldedElements) return std::nullopt;
  }
  bool any_float = false;
  std::vector<Tensor> operands;
  for (const Value* operand : op.operands()) {
    const Operation* producer = operand->defining_op();
    if (producer == nullptr || producer->kind() != OpKind::kConstant) return std::nullopt;
    if (operand->type().element_count() > kMaxFoldedElements) return std::nullopt;
    any_float = any_float || IsFloat(operand->type().element_type());
    StatusOr<std::vector<Tensor>> value = reference::EvaluateElementwiseOp(*producer, {});
    if (!value.ok() || value->size() != 1) return std::nullopt;
    operands.push_back(std::move((*value)[0]));
  }
  for (const Value* result : op.results()) {
    any_float = any_float || IsFloat(result->type().element_type());
  }
  StatusOr<std::vector<Tensor>> folded;
  if (IsFoldableLayoutOp(op.kind())) {
    folded = reference::EvaluateShapeOp(op, operands);
  } else if (IsElementwise(op) || op.kind() == OpKind::kBitcastConvert) {
    if (any_float && !ExactForFloats(op.kind())) return std::nullopt;
    // Left to the implementation by the spec, so not folded: integer power (negative
    // exponents), float -> integer convert (NaN and out-of-range values).
    if (op.kind() == OpKind::kPower) return std::nullopt;
    if (op.kind() == OpKind::kConvert && IsFloat(operands[0].element_type()) &&
        !IsFloat(op.result()->type().element_type())) {
      return std::nullopt;
    }
    const bool integer_division = op.kind() == OpKind::kDivide || op.kind() == OpKind::kRemainder;
    if (integer_division && !IsFloat(operands[1].element_type()) &&
        HasUndefinedDivisor(operands[1])) {
      return std::nullopt;
    }
    folded = reference::EvaluateElementwiseOp(op, operands);
  } else {
    return std::nullopt;
  }
  if (!folded.ok() || static_cast<int64_t>(folded->size()) != op.num_results()) {
    return std::nullopt;
  }
  return *std::move(folded);
}

int64_t FoldBlock(Block& block) {
  int64_t folded_ops = 0;
  for (size_t i = 0; i < block.operations().size(); ++i) {
    Operation* op = block.operations()[i].get();
    folded_ops += SumOverNestedBlocks(*op, [&](Block& nested) { return FoldBlock(nested); });
    std::optional<std::vector<Tensor>> results = Fold(*op);
    if (!results.has_value()) continue;
    // One constant per result, placed where the op was; the op itself goes.
    for (int64_t k = 0; k < op->num_results(); ++k) {
      const Tensor& value = (*results)[static_cast<size_t>(k)];
      const TensorType type = op->result(k)->type();
      DenseElements payload{type, std::vector<uint8_t>(value.bytes().begin(), value.bytes().end())};
      std::vector<NamedAttribute> attributes;
      attributes.push_back({"value", std::move(payload)});
      Operation* constant = block.InsertBefore(
          op, Operation::Create(OpKind::kConstant, {}, {&type, 1}, std::move(attributes)));
      op->result(k)->ReplaceAllUsesWith(constant->result());
      ++i;  // the constant took the op's place; the op is one further on
    }
    block.Erase(op);
    --i;
    ++folded_ops;
  }
  return folded_ops;
}

}  // namespace

int64_t FoldConstants(Function& function) { return FoldBlock(*function.entry_block()); }

const passes::WorkContract& FoldConstantsPass::contract() const {
  static const passes::WorkContract kContract{{kName, 1}, &EstimateOneVisitPerNode};
  return kContract;
}

Status FoldConstantsPass::Run(passes::PassContext& context) {
  return FinishRewrite(context, FoldConstants(context.function()));
}

}  // namespace accy
