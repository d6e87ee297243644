// SinkConstantsIntoRegionsPass (sink_constants_into_regions.h).
#include "src/transforms/sink_constants_into_regions.h"

#include <unordered_map>
#include <utility>
#include <vector>

#include "src/transforms/rewrite_util.h"

namespace accy {
namespace {

// Whether `block` is `ancestor` or nested (through regions) inside it.
bool IsWithin(const Block* block, const Block* ancestor) {
  while (block != nullptr) {
    if (block == ancestor) return true;
    const Region* region = block->parent();
    const Operation* op = region == nullptr ? nullptr : region->parent_op();
    block = op == nullptr ? nullptr : op->parent_block();
  }
  return false;
}

const Block* DefiningBlock(const Value* value) {
  return value->is_block_argument() ? value->owner_block() : value->defining_op()->parent_block();
}

// Counts the ops of `value`'s constant expression into `*ops`; false when it is not one (a
// block argument, an impure or region-holding op, too many ops or elements).
bool IsConstantExpression(const Value* value, int* ops) {
  const Operation* op = value->defining_op();
  if (op == nullptr || op->num_regions() != 0 || !GetOpInfo(op->kind()).pure) return false;
  if (++*ops > kMaxSunkOps) return false;
  for (int64_t r = 0; r < op->num_results(); ++r) {
    if (op->result(r)->type().element_count() > kMaxSunkElements) return false;
  }
  if (op->kind() == OpKind::kConstant) return op->num_operands() == 0;
  if (op->num_operands() == 0) return false;  // iota, rng state, ...: kept where they are
  for (const Value* operand : op->operands()) {
    if (!IsConstantExpression(operand, ops)) return false;
  }
  return true;
}

// Copies of outer values made in one body, placed before `anchor`.
class Sinker {
 public:
  explicit Sinker(Block& body) : body_(body) {}

  // The copy of constant expression `value` (its operands copied first), inserted before
  // `anchor`, an op of the body; one copy per outer value.
  Value* Copy(Value* value, const Operation* anchor) {
    if (auto it = copies_.find(value); it != copies_.end()) return it->second;
    Operation* original = value->defining_op();
    std::vector<Value*> operands;
    for (Value* operand : original->operands()) operands.push_back(Copy(operand, anchor));
    std::vector<TensorType> types;
    for (int64_t r = 0; r < original->num_results(); ++r) types.push_back(original->result(r)->type());
    Operation* copy = body_.InsertBefore(
        anchor, Operation::Create(original->kind(), std::move(operands), types,
                                  original->attributes()));
    for (int64_t r = 0; r < original->num_results(); ++r) {
      copies_.emplace(original->result(r), copy->result(r));
    }
    return copies_.at(value);
  }

 private:
  Block& body_;
  std::unordered_map<Value*, Value*> copies_;
};

int64_t SinkIntoBody(Block& body) {
  int64_t sunk = 0;
  Sinker sinker(body);
  // Index loop: copies are inserted before the op that reads them.
  for (size_t i = 0; i < body.operations().size(); ++i) {
    Operation* op = body.operations()[i].get();
    for (int64_t k = 0; k < op->num_operands(); ++k) {
      Value* operand = op->operand(k);
      if (IsWithin(DefiningBlock(operand), &body)) continue;
      int ops = 0;
      if (!IsConstantExpression(operand, &ops)) continue;
      const size_t before = body.operations().size();
      op->SetOperand(k, sinker.Copy(operand, op));
      i += body.operations().size() - before;  // `op` moved down past the copies
      ++sunk;
    }
  }
  return sunk;
}

int64_t RewriteBlock(Block& block) {
  int64_t sunk = 0;
  for (size_t i = 0; i < block.operations().size(); ++i) {
    Operation* op = block.operations()[i].get();
    const bool outlined = op->kind() == OpKind::kWhile || op->kind() == OpKind::kCase;
    for (int64_t r = 0; r < op->num_regions(); ++r) {
      for (const auto& nested : op->region(r)->blocks()) {
        if (!outlined) sunk += SinkIntoBody(*nested);
        sunk += RewriteBlock(*nested);
      }
    }
  }
  return sunk;
}

}  // namespace

int64_t SinkConstantsIntoRegions(Function& function) {
  return RewriteBlock(*function.entry_block());
}

const passes::WorkContract& SinkConstantsIntoRegionsPass::contract() const {
  static const passes::WorkContract kContract{{kName, 1}, &EstimateOneVisitPerNode};
  return kContract;
}

Status SinkConstantsIntoRegionsPass::Run(passes::PassContext& context) {
  return FinishRewrite(context, SinkConstantsIntoRegions(context.function()));
}

}  // namespace accy
