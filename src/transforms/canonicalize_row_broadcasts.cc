// CanonicalizeRowBroadcastsPass (canonicalize_row_broadcasts.h).
#include "src/transforms/canonicalize_row_broadcasts.h"

#include <unordered_map>
#include <vector>

#include "src/transforms/rewrite_util.h"

namespace accy {
namespace {

// Chains of row arithmetic are a handful of ops; past this depth a value is left as it is, which
// keeps the classification's recursion shallow on any input.
constexpr int kMaxRowDepth = 64;

bool HasTrailingUnitDim(const TensorType& type) {
  return type.rank() >= 1 && type.dims().back() == 1;
}

// `type` without its trailing unit dim.
TensorType RowType(const TensorType& type) {
  std::vector<int64_t> dims(type.dims().begin(), type.dims().end() - 1);
  StatusOr<TensorType> row = TensorType::Create(type.element_type(), std::move(dims));
  ACCY_CHECK(row.ok());  // fewer dims of a valid type
  return *row;
}

bool IsIdentityPrefix(const std::vector<int64_t>& dims) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

class RowCanonicalizer {
 public:
  int64_t RewriteBlock(Block& block) {
    int64_t rewritten = 0;
    // New ops are inserted behind the op they stand for, so walk by index over a growing list.
    for (size_t i = 0; i < block.operations().size(); ++i) {
      Operation* op = block.operations()[i].get();
      rewritten += SumOverNestedBlocks(*op, [&](Block& nested) { return RewriteBlock(nested); });
      if (op->kind() != OpKind::kBroadcastInDim || op->num_operands() != 1) continue;
      Value* operand = op->operand(0);
      if (!HasTrailingUnitDim(operand->type())) continue;
      std::vector<int64_t> dims = op->GetInts("broadcast_dimensions");
      if (static_cast<int64_t>(dims.size()) != operand->type().rank()) continue;
      Value* row = Row(operand, 0);
      if (row == nullptr) continue;
      dims.pop_back();
      op->SetOperand(0, row);
      op->SetAttribute("broadcast_dimensions", std::move(dims));
      ++rewritten;
    }
    return rewritten;
  }

 private:
  // row(v) of the header, or null when `value` is not a row value.
  Value* Row(Value* value, int depth) {
    auto found = rows_.find(value);
    if (found != rows_.end()) return found->second;
    Value* row = depth < kMaxRowDepth ? Classify(value, depth) : nullptr;
    if (depth < kMaxRowDepth) rows_.emplace(value, row);
    return row;
  }

  Value* Classify(Value* value, int depth) {
    Operation* def = value->defining_op();
    if (def == nullptr || def->num_results() != 1 || !HasTrailingUnitDim(value->type())) {
      return nullptr;
    }
    const TensorType row_type = RowType(value->type());
    const int64_t row_rank = row_type.rank();
    switch (def->kind()) {
      case OpKind::kBroadcastInDim: {
        const std::vector<int64_t> dims = def->GetInts("broadcast_dimensions");
        for (int64_t d : dims) {
          if (d >= row_rank) return nullptr;  // the operand has a dim on the unit dim
        }
        Value* source = def->operand(0);
        if (source->type() == row_type && IsIdentityPrefix(dims)) return source;
        std::vector<NamedAttribute> attributes;
        attributes.push_back({"broadcast_dimensions", dims});
        return Insert(def, OpKind::kBroadcastInDim, {source}, row_type, std::move(attributes));
      }
      case OpKind::kReshape:
        return def->operand(0)->type() == row_type ? def->operand(0) : nullptr;
      case OpKind::kConstant: {
        const DenseElements* payload = def->GetDense("value");
        if (payload == nullptr) return nullptr;
        // Row-major order is the same without a trailing unit dim: the bytes carry over.
        std::vector<NamedAttribute> attributes;
        attributes.push_back({"value", DenseElements{row_type, payload->bytes}});
        return Insert(def, OpKind::kConstant, {}, row_type, std::move(attributes));
      }
      default:
        break;
    }
    if (!IsElementwise(*def)) return nullptr;
    std::vector<Value*> operands;
    operands.reserve(static_cast<size_t>(def->num_operands()));
    for (Value* operand : def->operands()) {
      if (operand->type().rank() == 0) {  // a scalar select predicate or clamp bound
        operands.push_back(operand);
        continue;
      }
      if (operand->type().dims() != value->type().dims()) return nullptr;
      Value* row = Row(operand, depth + 1);
      if (row == nullptr) return nullptr;
      operands.push_back(row);
    }
    return Insert(def, def->kind(), std::move(operands), row_type, def->attributes());
  }

  Value* Insert(Operation* after, OpKind kind, std::vector<Value*> operands,
                const TensorType& type, std::vector<NamedAttribute> attributes) {
    Operation* op = after->parent_block()->InsertAfter(
        after, Operation::Create(kind, std::move(operands), {&type, 1}, std::move(attributes)));
    return op->result();
  }

  std::unordered_map<const Value*, Value*> rows_;
};

StatusOr<passes::WorkBounds> EstimateWork(const Function& function) {
  ACCY_ASSIGN_OR_RETURN(passes::WorkBounds bounds, EstimateOneVisitPerNode(function));
  ACCY_ASSIGN_OR_RETURN(passes::Census census, passes::Census::Inspect(function));
  // A rewritten constant's payload is read once; the memo holds an entry per value (op result).
  bounds.work.input_bytes = census.input_bytes;
  ACCY_ASSIGN_OR_RETURN(bounds.workspace_bytes, passes::WorkMul(census.operations, 64));
  // At most one new op per op (a few hundred bytes each) and one copy of each constant payload.
  ACCY_ASSIGN_OR_RETURN(uint64_t new_ops, passes::WorkMul(census.operations, 512));
  ACCY_ASSIGN_OR_RETURN(uint64_t allocated, passes::WorkAdd(new_ops, census.input_bytes));
  ACCY_ASSIGN_OR_RETURN(bounds.work.allocation_capacity,
                        passes::WorkAdd(allocated, bounds.workspace_bytes));
  return bounds;
}

}  // namespace

int64_t CanonicalizeRowBroadcasts(Function& function) {
  RowCanonicalizer canonicalizer;
  return canonicalizer.RewriteBlock(*function.entry_block());
}

const passes::WorkContract& CanonicalizeRowBroadcastsPass::contract() const {
  static const passes::WorkContract kContract{{kName, 1}, &EstimateWork};
  return kContract;
}

Status CanonicalizeRowBroadcastsPass::Run(passes::PassContext& context) {
  return FinishRewrite(context, CanonicalizeRowBroadcasts(context.function()));
}

}  // namespace accy
