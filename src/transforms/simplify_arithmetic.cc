// SimplifyArithmeticPass (simplify_arithmetic.h).
#include "src/transforms/simplify_arithmetic.h"

#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

#include "accy/tensor.h"
#include "src/transforms/rewrite_util.h"

namespace accy {
namespace {

// The bytes of one element of `type`'s element type holding `number` (Tensor::Filled's rounding
// and wrapping: -1 is all ones for every integer width and true for i1).
std::vector<uint8_t> ElementBytes(ElementType type, double number) {
  StatusOr<TensorType> scalar = TensorType::Create(type, {});
  if (!scalar.ok()) return {};
  StatusOr<Tensor> filled = Tensor::Filled(*scalar, number);
  if (!filled.ok()) return {};
  return std::vector<uint8_t>(filled->bytes().begin(), filled->bytes().end());
}

class Simplifier {
 public:
  int64_t SimplifyBlock(Block& block) {
    int64_t replaced = 0;
    for (const auto& owned : block.operations()) {
      Operation* op = owned.get();
      replaced += SumOverNestedBlocks(*op, [&](Block& nested) { return SimplifyBlock(nested); });
      if (op->num_results() != 1 || op->result()->uses().empty()) continue;
      Value* replacement = Simplify(*op);
      if (replacement == nullptr || replacement == op->result()) continue;
      if (replacement->type() != op->result()->type()) continue;  // never (see the rules)
      op->result()->ReplaceAllUsesWith(replacement);
      ++replaced;
    }
    return replaced;
  }

 private:
  // The element bytes of `value` when every element has the same bits (a constant, or a
  // broadcast_in_dim of one); nothing otherwise or for zero elements.
  const std::optional<std::vector<uint8_t>>& Splat(const Value* value) {
    auto found = splats_.find(value);
    if (found != splats_.end()) return found->second;
    std::optional<std::vector<uint8_t>> splat;
    const Operation* producer = value->defining_op();
    if (producer != nullptr && producer->kind() == OpKind::kBroadcastInDim) {
      splat = Splat(producer->operand(0));
    } else if (producer != nullptr && producer->kind() == OpKind::kConstant) {
      if (const DenseElements* dense = producer->GetDense("value"); dense != nullptr) {
        splat = SplatElementBytes(*dense);
      }
    }
    return splats_.emplace(value, std::move(splat)).first->second;
  }

  bool SplatIs(const Value* value, double number) {
    const std::optional<std::vector<uint8_t>>& splat = Splat(value);
    return splat.has_value() && *splat == ElementBytes(value->type().element_type(), number);
  }
  bool IsZero(const Value* value) { return SplatIs(value, 0.0); }
  bool IsNegativeZero(const Value* value) { return SplatIs(value, -0.0); }
  bool IsOne(const Value* value) { return SplatIs(value, 1.0); }
  bool IsAllOnes(const Value* value) { return SplatIs(value, -1.0); }  // true for i1

  // The operand that is not the splat `pick` accepts, trying both sides of a commutative op.
  template <typename Pred>
  Value* OtherOf(const Operation& op, Pred pick, bool commutative) {
    if (pick(op.operand(1))) return op.operand(0);
    if (commutative && pick(op.operand(0))) return op.operand(1);
    return nullptr;
  }
  template <typename Pred>
  Value* SplatOf(const Operation& op, Pred pick) {
    if (pick(op.operand(1))) return op.operand(1);
    if (pick(op.operand(0))) return op.operand(0);
    return nullptr;
  }

  Value* Simplify(const Operation& op) {
    const ElementType type = op.result()->type().element_type();
    const bool is_float = IsFloat(type);
    auto zero = [&](const Value* v) { return IsZero(v); };
    auto one = [&](const Value* v) { return IsOne(v); };
    auto all_ones = [&](const Value* v) { return IsAllOnes(v); };
    switch (op.kind()) {
      case OpKind::kAdd:
        if (is_float) return OtherOf(op, [&](const Value* v) { return IsNegativeZero(v); }, true);
        return OtherOf(op, zero, true);
      case OpKind::kSubtract:
        return OtherOf(op, zero, false);  // +0.0 for floats: x - (+0) == x, -0 included
      case OpKind::kMultiply:
        if (Value* x = OtherOf(op, one, true)) return x;
        if (!is_float) return SplatOf(op, zero);
        return nullptr;
      case OpKind::kDivide:
      case OpKind::kPower:
        return OtherOf(op, one, false);
      case OpKind::kAnd:
        if (op.operand(0) == op.operand(1)) return op.operand(0);
        if (Value* x = OtherOf(op, all_ones, true)) return x;
        return SplatOf(op, zero);
      case OpKind::kOr:
        if (op.operand(0) == op.operand(1)) return op.operand(0);
        if (Value* x = OtherOf(op, zero, true)) return x;
        return SplatOf(op, all_ones);
      case OpKind::kXor:
        return OtherOf(op, zero, true);
      case OpKind::kShiftLeft:
      case OpKind::kShiftRightLogical:
      case OpKind::kShiftRightArithmetic:
        return OtherOf(op, zero, false);
      case OpKind::kMaximum:
      case OpKind::kMinimum: {
        if (op.operand(0) == op.operand(1)) return op.operand(0);
        if (!is_float) return nullptr;
        // maximum(x, -inf) is x for every x, NaN included (maximum propagates NaN); minimum
        // with +inf likewise. JAX's softmax writes maximum(-inf, max(s)) (its guard for rows
        // of -inf), which stands between the row max and its broadcast.
        const double bound = op.kind() == OpKind::kMaximum ? -std::numeric_limits<double>::infinity()
                                                           : std::numeric_limits<double>::infinity();
        return OtherOf(op, [&](const Value* v) { return SplatIs(v, bound); }, true);
      }
      case OpKind::kNegate:
      case OpKind::kNot: {
        const Operation* inner = op.operand(0)->defining_op();
        return inner != nullptr && inner->kind() == op.kind() ? inner->operand(0) : nullptr;
      }
      case OpKind::kSelect: {
        if (op.operand(1) == op.operand(2)) return op.operand(1);
        if (IsAllOnes(op.operand(0))) return op.operand(1);
        if (IsZero(op.operand(0))) return op.operand(2);
        return nullptr;
      }
      default:
        return nullptr;
    }
  }

  std::unordered_map<const Value*, std::optional<std::vector<uint8_t>>> splats_;
};

}  // namespace

int64_t SimplifyArithmetic(Function& function) {
  Simplifier simplifier;
  return simplifier.SimplifyBlock(*function.entry_block());
}

const passes::WorkContract& SimplifyArithmeticPass::contract() const {
  static const passes::WorkContract kContract{{kName, 1}, &EstimateOneVisitPerNode};
  return kContract;
}

Status SimplifyArithmeticPass::Run(passes::PassContext& context) {
  return FinishRewrite(context, SimplifyArithmetic(context.function()));
}

}  // namespace accy
