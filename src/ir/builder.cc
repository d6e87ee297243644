// Builder and FunctionBuilder (include/accy/builder.h): each op method infers or takes the result
// types, then CreateOp checks visibility, builds regions, verifies and appends. This file holds
// CreateOp and its checks, Return, Finish, Builder and the helpers of builder_internal.h; the op
// methods are in builder_elementwise.cc, builder_shape.cc, builder_contractions.cc,
// builder_control_flow.cc, builder_kernel_call.cc and the other builder_*.cc files.
#include "accy/builder.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/ir/builder_internal.h"
#include "src/util/str_cat.h"

namespace accy {
namespace ir_internal {

Status OpError(OpKind kind, std::string_view message) {
  return absl::InvalidArgumentError(StrCat(OpName(kind), ": ", message));
}

StatusOr<Value*> SingleResult(StatusOr<Operation*> op) {
  if (!op.ok()) return op.status();
  return (*op)->result(0);
}

StatusOr<std::vector<Value*>> AllResults(StatusOr<Operation*> op) {
  if (!op.ok()) return op.status();
  return (*op)->results();
}

std::vector<TensorType> TypesOf(std::span<Value* const> values) {
  std::vector<TensorType> types;
  for (const Value* v : values) types.push_back(v->type());
  return types;
}

std::vector<TensorType> ScalarTypesOf(std::span<Value* const> values) {
  std::vector<TensorType> types;
  for (const Value* v : values) types.push_back(*TensorType::Create(v->type().element_type(), {}));
  return types;
}

// The body op of a named reducer / scatter update.
StatusOr<std::vector<TensorType>> InferredTypes(OpKind kind,
                                                std::span<const TensorType> operand_types,
                                                std::span<const NamedAttribute> attributes) {
  ACCY_ASSIGN_OR_RETURN(std::optional<std::vector<TensorType>> types,
                        InferResultTypes(kind, operand_types, attributes));
  if (!types.has_value()) return OpError(kind, "its result types are not implied by its operands");
  return *std::move(types);
}

StatusOr<OpKind> NamedCombiner(OpKind for_op, std::string_view name) {
  if (name == "sum" || name == "add") return OpKind::kAdd;
  if (name == "max" || name == "maximum") return OpKind::kMaximum;
  if (name == "min" || name == "minimum") return OpKind::kMinimum;
  if (name == "prod" || name == "multiply") return OpKind::kMultiply;
  if (name == "and") return OpKind::kAnd;
  if (name == "or") return OpKind::kOr;
  if (for_op == OpKind::kScatter) {  // "assign" is handled by the caller
    return OpError(for_op, StrCat("unknown update '", name,
                                  "' (expected assign, add, multiply, maximum or minimum)"));
  }
  return OpError(for_op, StrCat("unknown reducer '", name,
                                      "' (expected sum, max, min, prod, and or or)"));
}

}  // namespace ir_internal

using ir_internal::OpError;

// ---- FunctionBuilder ----

Value* FunctionBuilder::Parameter(int64_t i) const {
  // The block of a finished region may be gone (its op was rejected): do not touch it.
  if (std::find(open_blocks_->begin(), open_blocks_->end(), block()) == open_blocks_->end()) {
    return nullptr;
  }
  Block* b = block();
  if (i < 0 || i >= b->num_arguments()) return nullptr;
  return b->argument(i);
}

Status FunctionBuilder::CheckBlockOpen(OpKind kind) const {
  if (open_blocks_->back() == block()) return absl::OkStatus();
  if (std::find(open_blocks_->begin(), open_blocks_->end(), block()) != open_blocks_->end()) {
    return OpError(kind, "a region of an op of this block is being built; append to the region "
                         "through the FunctionBuilder passed to its body function");
  }
  return OpError(kind, "this region is no longer being built; its FunctionBuilder cannot append");
}

Status FunctionBuilder::CheckOperands(OpKind kind, std::span<Value* const> operands) const {
  // First: the block of a closed region may be gone, so it must not be read below.
  ACCY_RETURN_IF_ERROR(CheckBlockOpen(kind));
  if (block()->terminator() != nullptr) {
    return OpError(kind, "the block already ended with return; no op can follow it");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    Value* v = operands[i];
    if (v == nullptr) {
      return OpError(kind, StrCat("operand ", i, " is null (an earlier call failed, or a "
                                        "parameter index was out of range)"));
    }
    Block* home = v->is_block_argument() ? v->owner_block() : v->defining_op()->parent_block();
    if (std::find(scopes_.begin(), scopes_.end(), home) == scopes_.end()) {
      return OpError(kind, StrCat("operand ", i, " is not visible here: it belongs to "
                                        "another function or to a region that is closed"));
    }
  }
  return absl::OkStatus();
}

StatusOr<Operation*> FunctionBuilder::CreateOp(OpKind kind, std::vector<Value*> operands,
                                               std::vector<TensorType> result_types,
                                               std::vector<NamedAttribute> attributes,
                                               std::vector<RegionSpec> regions) {
  if (static_cast<int>(kind) >= kNumOpKinds) {
    return absl::InvalidArgumentError(StrCat("unknown op kind ", static_cast<int>(kind)));
  }
  ACCY_RETURN_IF_ERROR(CheckOperands(kind, operands));
  std::unique_ptr<Operation> op =
      Operation::Create(kind, std::move(operands), result_types, std::move(attributes));
  for (size_t r = 0; r < regions.size(); ++r) {
    RegionSpec& spec = regions[r];
    Block* body = op->AddRegion()->AddBlock(spec.argument_types);
    std::vector<Block*> scopes = scopes_;
    scopes.push_back(body);
    FunctionBuilder nested(function_, std::move(scopes), open_blocks_);
    std::vector<Value*> args = body->arguments();
    if (!spec.body) return OpError(kind, StrCat("region ", r, " has no body function"));
    open_blocks_->push_back(body);
    Status status = spec.body(nested, args);
    open_blocks_->pop_back();
    if (!status.ok()) {
      return absl::Status(status.code(), StrCat(OpName(kind), " region ", r, ": ",
                                                      status.message()));
    }
    if (body->terminator() == nullptr) {
      return OpError(kind, StrCat("region ", r, " does not end with a return"));
    }
  }
  // A region body can reach the enclosing block only around the builder (Block::Append).
  if (block()->terminator() != nullptr) {
    return OpError(kind, "a region body ended the enclosing block with return; region bodies "
                         "must append through the FunctionBuilder passed to them");
  }
  ACCY_RETURN_IF_ERROR(VerifyOperation(*op));
  return block()->Append(std::move(op));
}

Status FunctionBuilder::Return(std::vector<Value*> values) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kReturn, values));
  bool function_level = scopes_.size() == 1;
  if (function_level) {
    const auto& expected = function_->result_types();
    if (values.size() != expected.size()) {
      return OpError(OpKind::kReturn, StrCat("function '", function_->name(), "' returns ",
                                                   expected.size(), " values, got ",
                                                   values.size()));
    }
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i]->type() != expected[i]) {
        return OpError(OpKind::kReturn,
                       StrCat("value ", i, " has type ", values[i]->type().ToString(),
                                    ", but function '", function_->name(), "' declares ",
                                    expected[i].ToString()));
      }
    }
  }
  block()->Append(Operation::Create(OpKind::kReturn, std::move(values), {}));
  return absl::OkStatus();
}

Status FunctionBuilder::Finish() {
  if (block()->terminator() == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("function '", function_->name(), "' has no return"));
  }
  return absl::OkStatus();
}

// ---- Builder ----

Builder::Builder(std::string module_name) : module_(std::make_unique<Module>(std::move(module_name))) {}

StatusOr<TensorType> Builder::Type(ElementType element_type, std::vector<int64_t> dims) const {
  return TensorType::Create(element_type, std::move(dims));
}

StatusOr<FunctionBuilder> Builder::BeginFunction(std::string name,
                                                 std::vector<TensorType> parameters,
                                                 std::vector<TensorType> results) {
  if (module_ == nullptr) {
    return absl::FailedPreconditionError("Builder::BeginFunction: the builder already finished");
  }
  ACCY_ASSIGN_OR_RETURN(Function * function, module_->AddFunction(std::move(name),
                                                                 std::move(parameters),
                                                                 std::move(results)));
  return FunctionBuilder(function, {function->entry_block()},
                         std::make_shared<std::vector<Block*>>(1, function->entry_block()));
}

StatusOr<std::unique_ptr<Module>> Builder::Finish() {
  if (module_ == nullptr) {
    return absl::FailedPreconditionError("Builder::Finish: the builder already finished");
  }
  ACCY_RETURN_IF_ERROR(Verify(*module_));
  return std::move(module_);
}

}  // namespace accy
