// IR data structures: op names, use lists, ownership (see include/accy/ir.h).
#include "accy/ir.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <unordered_map>

#include "src/util/str_cat.h"

namespace accy {
namespace {

// The op table's rows (accy/ops.def) as OpInfo; the work column is the schedule's.
constexpr OpInfo kOpInfos[] = {
#define ACCY_OP(kind, name, category, operands, results, classes, regions, pure, commutative, \
                work, rule, evaluate, print)                                                   \
  {OpKind::kind, name, OpCategory::category, operands, results, ElementClass::classes, regions, \
   pure, commutative},
#include "accy/ops.def"
#undef ACCY_OP
};
static_assert(std::size(kOpInfos) == kNumOpKinds, "one op table row per OpKind");

constexpr bool RowsAreInEnumOrder() {
  for (size_t i = 0; i < std::size(kOpInfos); ++i) {
    if (static_cast<size_t>(kOpInfos[i].kind) != i) return false;
  }
  return true;
}
static_assert(RowsAreInEnumOrder(), "GetOpInfo indexes the table by OpKind");

constexpr OpInfo kInvalidOpInfo = {OpKind{}, "<invalid op kind>", OpCategory::kInvalid, 0, 0,
                                   ElementClass::kAny, 0, true, false};

}  // namespace

const OpInfo& GetOpInfo(OpKind kind) {
  // A value cast from an integer may lie outside the enum: give it a row rather than read past
  // the table.
  const auto index = static_cast<size_t>(kind);
  return index < std::size(kOpInfos) ? kOpInfos[index] : kInvalidOpInfo;
}

std::string_view OpName(OpKind kind) { return GetOpInfo(kind).name; }

StatusOr<OpKind> ParseOpKind(std::string_view name) {
  for (const OpInfo& info : kOpInfos) {
    if (info.name == name) return info.kind;
  }
  return absl::InvalidArgumentError(StrCat("unknown op '", name, "'"));
}

std::string QualifiedOpName(OpKind kind) {
  const std::string_view name = OpName(kind);
  if (name.find('.') != std::string_view::npos) return std::string(name);
  return StrCat("stablehlo.", name);
}

StatusOr<OpKind> ParseQualifiedOpKind(std::string_view name) {
  constexpr std::string_view kStableHlo = "stablehlo.";
  if (name.starts_with(kStableHlo)) {
    const std::string_view short_name = name.substr(kStableHlo.size());
    if (short_name.find('.') == std::string_view::npos) {
      StatusOr<OpKind> kind = ParseOpKind(short_name);
      if (kind.ok()) return kind;
    }
  } else if (name.starts_with("chlo.")) {
    if (name == "chlo.tan") return OpKind::kTan;
    StatusOr<OpKind> kind = ParseOpKind(name);
    if (kind.ok()) return kind;
  }
  return absl::InvalidArgumentError(StrCat("unknown op '", name, "'"));
}

std::string_view OpCategoryName(OpCategory category) {
  switch (category) {
    case OpCategory::kConstant:
      return "constant";
    case OpCategory::kElementwiseUnary:
      return "elementwise_unary";
    case OpCategory::kElementwiseBinary:
      return "elementwise_binary";
    case OpCategory::kElementwiseTernary:
      return "elementwise_ternary";
    case OpCategory::kShape:
      return "shape";
    case OpCategory::kContraction:
      return "contraction";
    case OpCategory::kReduction:
      return "reduction";
    case OpCategory::kLinearAlgebra:
      return "linear_algebra";
    case OpCategory::kRandom:
      return "random";
    case OpCategory::kCollective:
      return "collective";
    case OpCategory::kControl:
      return "control";
    case OpCategory::kCall:
      return "call";
    case OpCategory::kTerminator:
      return "terminator";
    case OpCategory::kInvalid:
      return "invalid";
  }
  return "invalid";
}

bool ElementClassContains(ElementClass classes, ElementType type) {
  ElementClass of = IsBool(type)       ? ElementClass::kBool
                    : IsSigned(type)   ? ElementClass::kSigned
                    : IsUnsigned(type) ? ElementClass::kUnsigned
                                       : ElementClass::kFloat;
  return (static_cast<unsigned>(classes) & static_cast<unsigned>(of)) != 0;
}

bool IsElementwiseUnary(OpKind kind) {
  return GetOpInfo(kind).category == OpCategory::kElementwiseUnary;
}
bool IsElementwiseBinary(OpKind kind) {
  return GetOpInfo(kind).category == OpCategory::kElementwiseBinary;
}
bool IsElementwiseTernary(OpKind kind) {
  return GetOpInfo(kind).category == OpCategory::kElementwiseTernary;
}
bool IsElementwise(const Operation& op) {
  OpKind kind = op.kind();
  if (kind == OpKind::kBitcastConvert) {
    return op.num_operands() == 1 && op.num_results() == 1 &&
           ElementBitWidth(op.operand(0)->type().element_type()) ==
               ElementBitWidth(op.result(0)->type().element_type());
  }
  return IsElementwiseUnary(kind) || IsElementwiseBinary(kind) || IsElementwiseTernary(kind);
}

std::string_view OperandEffectName(OperandEffect effect) {
  switch (effect) {
    case OperandEffect::kRead:
      return "read";
    case OperandEffect::kWrite:
      return "write";
    case OperandEffect::kReadWrite:
      return "read_write";
    case OperandEffect::kNone:
      return "none";
  }
  // Not "none": a value cast from an integer must not pass for a valid effect.
  return "<invalid operand effect>";
}

StatusOr<OperandEffect> ParseOperandEffect(std::string_view name) {
  for (OperandEffect e : {OperandEffect::kRead, OperandEffect::kWrite, OperandEffect::kReadWrite,
                          OperandEffect::kNone}) {
    if (OperandEffectName(e) == name) return e;
  }
  return absl::InvalidArgumentError(StrCat(
      "unknown operand effect '", name, "' (expected read, write, read_write or none)"));
}

// ---- Value ----

void Value::AddUse(Operation* user, int64_t operand_index) {
  uses_.push_back(Use{user, operand_index});
}

void Value::RemoveUse(Operation* user, int64_t operand_index) {
  auto it = std::find_if(uses_.begin(), uses_.end(), [&](const Use& use) {
    return use.user == user && use.operand_index == operand_index;
  });
  ACCY_CHECK(it != uses_.end());
  uses_.erase(it);
}

void Value::ReplaceAllUsesWith(Value* replacement) {
  ACCY_CHECK(replacement != nullptr && replacement->type() == type_);
  if (replacement == this) return;
  std::vector<Use> uses = uses_;
  for (const Use& use : uses) use.user->SetOperand(use.operand_index, replacement);
}

// ---- Region / Block ----

Block* Region::AddBlock(std::span<const TensorType> arg_types) {
  blocks_.push_back(std::make_unique<Block>(this));
  Block* block = blocks_.back().get();
  for (const TensorType& type : arg_types) block->AddArgument(type);
  return block;
}

Block::~Block() {
  // Users are destroyed before their producers so that use-list removal never touches a freed
  // value.
  while (!operations_.empty()) operations_.pop_back();
}

Value* Block::AddArgument(const TensorType& type) {
  arguments_.push_back(std::unique_ptr<Value>(
      new Value(type, nullptr, this, static_cast<int64_t>(arguments_.size()))));
  return arguments_.back().get();
}

std::vector<Value*> Block::arguments() const {
  std::vector<Value*> out;
  out.reserve(arguments_.size());
  for (const auto& arg : arguments_) out.push_back(arg.get());
  return out;
}

Operation* Block::terminator() const {
  if (operations_.empty()) return nullptr;
  Operation* last = operations_.back().get();
  return last->kind() == OpKind::kReturn ? last : nullptr;
}

Operation* Block::Append(std::unique_ptr<Operation> op) {
  ACCY_CHECK(op != nullptr && op->parent_block_ == nullptr);
  op->parent_block_ = this;
  operations_.push_back(std::move(op));
  Operation* appended = operations_.back().get();
  // Ops built inside a detached op's regions get their ids when that op joins a function.
  if (Function* function = appended->parent_function()) function->AssignIds(*appended);
  return appended;
}

Operation* Block::InsertBefore(const Operation* anchor, std::unique_ptr<Operation> op) {
  ACCY_CHECK(op != nullptr && op->parent_block_ == nullptr);
  auto at = operations_.end();
  if (anchor != nullptr) {
    const int64_t index = IndexOf(anchor);
    ACCY_CHECK(index >= 0);
    at = operations_.begin() + index;
  }
  op->parent_block_ = this;
  Operation* inserted = operations_.insert(at, std::move(op))->get();
  if (Function* function = inserted->parent_function()) function->AssignIds(*inserted);
  return inserted;
}

Operation* Block::InsertAfter(const Operation* anchor, std::unique_ptr<Operation> op) {
  if (anchor == nullptr) {
    return InsertBefore(operations_.empty() ? nullptr : operations_.front().get(), std::move(op));
  }
  const int64_t index = IndexOf(anchor);
  ACCY_CHECK(index >= 0);
  const size_t next = static_cast<size_t>(index) + 1;
  return InsertBefore(next < operations_.size() ? operations_[next].get() : nullptr,
                      std::move(op));
}

std::unique_ptr<Operation> Block::Remove(Operation* op) {
  const int64_t index = IndexOf(op);
  ACCY_CHECK(index >= 0);
  std::unique_ptr<Operation> removed = std::move(operations_[static_cast<size_t>(index)]);
  operations_.erase(operations_.begin() + index);
  removed->parent_block_ = nullptr;
  Function::ClearIds(*removed);
  return removed;
}

void Block::Erase(Operation* op) {
  ACCY_CHECK(op != nullptr);
  for (const auto& result : op->results_) ACCY_CHECK(!result->has_uses());
  Remove(op).reset();
}

int64_t Block::IndexOf(const Operation* op) const {
  if (op == nullptr || op->parent_block_ != this) return -1;
  for (size_t i = 0; i < operations_.size(); ++i) {
    if (operations_[i].get() == op) return static_cast<int64_t>(i);
  }
  return -1;
}

void Block::EraseLast() {
  ACCY_CHECK(!operations_.empty());
  for (const auto& result : operations_.back()->results_) ACCY_CHECK(!result->has_uses());
  operations_.pop_back();
}

// ---- Operation ----

std::unique_ptr<Operation> Operation::Create(OpKind kind, std::vector<Value*> operands,
                                             std::span<const TensorType> result_types,
                                             std::vector<NamedAttribute> attributes) {
  std::unique_ptr<Operation> op(new Operation(kind));
  op->operands_ = std::move(operands);
  for (size_t i = 0; i < op->operands_.size(); ++i) {
    ACCY_CHECK(op->operands_[i] != nullptr);
    op->operands_[i]->AddUse(op.get(), static_cast<int64_t>(i));
  }
  for (size_t i = 0; i < result_types.size(); ++i) {
    op->results_.push_back(std::unique_ptr<Value>(
        new Value(result_types[i], op.get(), nullptr, static_cast<int64_t>(i))));
  }
  op->attributes_ = std::move(attributes);
  return op;
}

Operation::~Operation() {
  // Nested ops first: they may use this op's operands' producers, never this op's results.
  regions_.clear();
  for (size_t i = 0; i < operands_.size(); ++i) {
    operands_[i]->RemoveUse(this, static_cast<int64_t>(i));
  }
}

void Operation::SetOperand(int64_t i, Value* value) {
  ACCY_CHECK(value != nullptr && i >= 0 && i < num_operands());
  operands_[static_cast<size_t>(i)]->RemoveUse(this, i);
  operands_[static_cast<size_t>(i)] = value;
  value->AddUse(this, i);
}

std::vector<Value*> Operation::results() const {
  std::vector<Value*> out;
  out.reserve(results_.size());
  for (const auto& result : results_) out.push_back(result.get());
  return out;
}

const AttributeValue* Operation::attribute(std::string_view name) const {
  for (const NamedAttribute& attr : attributes_) {
    if (attr.name == name) return &attr.value;
  }
  return nullptr;
}

void Operation::SetAttribute(std::string name, AttributeValue value) {
  for (NamedAttribute& attr : attributes_) {
    if (attr.name == name) {
      attr.value = std::move(value);
      return;
    }
  }
  attributes_.push_back(NamedAttribute{std::move(name), std::move(value)});
}

std::optional<int64_t> Operation::GetInt(std::string_view name) const {
  const AttributeValue* value = attribute(name);
  if (value == nullptr || !std::holds_alternative<int64_t>(*value)) return std::nullopt;
  return std::get<int64_t>(*value);
}

std::optional<bool> Operation::GetBool(std::string_view name) const {
  const AttributeValue* value = attribute(name);
  if (value == nullptr || !std::holds_alternative<bool>(*value)) return std::nullopt;
  return std::get<bool>(*value);
}

std::optional<std::string> Operation::GetString(std::string_view name) const {
  const AttributeValue* value = attribute(name);
  if (value == nullptr || !std::holds_alternative<std::string>(*value)) return std::nullopt;
  return std::get<std::string>(*value);
}

std::vector<int64_t> Operation::GetInts(std::string_view name) const {
  const AttributeValue* value = attribute(name);
  if (value == nullptr || !std::holds_alternative<std::vector<int64_t>>(*value)) return {};
  return std::get<std::vector<int64_t>>(*value);
}

std::vector<std::string> Operation::GetStrings(std::string_view name) const {
  const AttributeValue* value = attribute(name);
  if (value == nullptr || !std::holds_alternative<std::vector<std::string>>(*value)) return {};
  return std::get<std::vector<std::string>>(*value);
}

const DenseElements* Operation::GetDense(std::string_view name) const {
  const AttributeValue* value = attribute(name);
  if (value == nullptr || !std::holds_alternative<DenseElements>(*value)) return nullptr;
  return &std::get<DenseElements>(*value);
}

Region* Operation::AddRegion() {
  regions_.push_back(std::make_unique<Region>(this, nullptr));
  return regions_.back().get();
}

Function* Operation::parent_function() const {
  const Block* block = parent_block_;
  while (block != nullptr) {
    Region* region = block->parent();
    if (region == nullptr) return nullptr;
    if (region->parent_function() != nullptr) return region->parent_function();
    if (region->parent_op() == nullptr) return nullptr;
    block = region->parent_op()->parent_block();
  }
  return nullptr;
}

// ---- Function / Module ----

Function::Function(std::string name, std::vector<TensorType> parameter_types,
                   std::vector<TensorType> result_types, Module* parent)
    : name_(std::move(name)),
      parameter_types_(std::move(parameter_types)),
      result_types_(std::move(result_types)),
      body_(std::make_unique<Region>(nullptr, this)),
      parent_(parent) {
  Block* entry = body_->AddBlock(parameter_types_);
  for (auto& argument : entry->arguments_) argument->id_ = next_value_id_++;
}

Status Function::AddInputOutputAlias(InputOutputAlias alias) {
  const auto num_parameters = static_cast<int64_t>(parameter_types_.size());
  const auto num_results = static_cast<int64_t>(result_types_.size());
  if (alias.parameter < 0 || alias.parameter >= num_parameters) {
    return absl::InvalidArgumentError(
        StrCat("input-output alias of @", name_, ": parameter ", alias.parameter,
               " is out of range (the function has ", num_parameters, " parameters)"));
  }
  if (alias.result < 0 || alias.result >= num_results) {
    return absl::InvalidArgumentError(
        StrCat("input-output alias of @", name_, ": result ", alias.result,
               " is out of range (the function has ", num_results, " results)"));
  }
  const TensorType& parameter = parameter_types_[static_cast<size_t>(alias.parameter)];
  const TensorType& result = result_types_[static_cast<size_t>(alias.result)];
  if (parameter != result) {
    return absl::InvalidArgumentError(
        StrCat("input-output alias of @", name_, ": parameter ", alias.parameter, " (",
               parameter.ToString(), ") and result ", alias.result, " (", result.ToString(),
               ") have different types"));
  }
  for (const InputOutputAlias& existing : aliases_) {
    if (existing.parameter == alias.parameter || existing.result == alias.result) {
      return absl::InvalidArgumentError(
          StrCat("input-output alias of @", name_, ": parameter ", alias.parameter,
                 " -> result ", alias.result, " conflicts with parameter ", existing.parameter,
                 " -> result ", existing.result, " (each parameter and result aliases once)"));
    }
  }
  aliases_.push_back(alias);
  return absl::OkStatus();
}

void Function::AssignIds(Operation& op) {
  if (op.id_ < 0) op.id_ = next_op_id_++;
  for (auto& result : op.results_) {
    if (result->id_ < 0) result->id_ = next_value_id_++;
  }
  for (auto& region : op.regions_) {
    for (const auto& block : region->blocks()) {
      for (auto& argument : block->arguments_) {
        if (argument->id_ < 0) argument->id_ = next_value_id_++;
      }
      for (const auto& nested : block->operations()) AssignIds(*nested);
    }
  }
}

void Function::ClearIds(Operation& op) {
  op.id_ = -1;
  for (auto& result : op.results_) result->id_ = -1;
  for (auto& region : op.regions_) {
    for (const auto& block : region->blocks()) {
      for (auto& argument : block->arguments_) argument->id_ = -1;
      for (const auto& nested : block->operations()) ClearIds(*nested);
    }
  }
}

void Function::Renumber() {
  for (const auto& op : entry_block()->operations()) ClearIds(*op);
  next_value_id_ = 0;
  next_op_id_ = 0;
  for (auto& argument : entry_block()->arguments_) argument->id_ = next_value_id_++;
  for (const auto& op : entry_block()->operations()) AssignIds(*op);
}

namespace {

// Copies `op` (with its regions) into a detached op whose operands are `mapping`'s images of
// op's operands; records op's results and nested values in `mapping`. kInvalidArgument when an
// operand has no image (it is not defined before `op`).
StatusOr<std::unique_ptr<Operation>> CloneOperation(
    const Operation& op, std::unordered_map<const Value*, Value*>& mapping) {
  std::vector<Value*> operands;
  operands.reserve(static_cast<size_t>(op.num_operands()));
  for (int64_t i = 0; i < op.num_operands(); ++i) {
    auto it = mapping.find(op.operand(i));
    if (it == mapping.end()) {
      return absl::InvalidArgumentError(StrCat("clone: operand ", i, " of ", op.name(),
                                               " is not defined before its use"));
    }
    operands.push_back(it->second);
  }
  std::vector<TensorType> result_types;
  for (const Value* result : op.results()) result_types.push_back(result->type());
  std::unique_ptr<Operation> copy =
      Operation::Create(op.kind(), std::move(operands), result_types, op.attributes());
  for (int64_t i = 0; i < op.num_results(); ++i) mapping[op.result(i)] = copy->result(i);
  for (int64_t r = 0; r < op.num_regions(); ++r) {
    Region* region = copy->AddRegion();
    for (const auto& block : op.region(r)->blocks()) {
      std::vector<TensorType> arg_types;
      for (const Value* argument : block->arguments()) arg_types.push_back(argument->type());
      Block* target = region->AddBlock(arg_types);
      for (int64_t a = 0; a < block->num_arguments(); ++a) {
        mapping[block->argument(a)] = target->argument(a);
      }
      for (const auto& nested : block->operations()) {
        ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Operation> nested_copy,
                              CloneOperation(*nested, mapping));
        target->Append(std::move(nested_copy));
      }
    }
  }
  return copy;
}

// Fills `target` (same signature as `source`) with copies of `source`'s body, visibility and
// aliases, and numbers it. CloneOperation's errors.
Status CloneBody(const Function& source, Function& target) {
  std::unordered_map<const Value*, Value*> mapping;
  for (int64_t p = 0; p < source.entry_block()->num_arguments(); ++p) {
    mapping[source.parameter(p)] = target.parameter(p);
  }
  for (const auto& op : source.entry_block()->operations()) {
    ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Operation> copy, CloneOperation(*op, mapping));
    target.entry_block()->Append(std::move(copy));
  }
  target.set_public(source.is_public());
  for (const InputOutputAlias& alias : source.input_output_aliases()) {
    ACCY_RETURN_IF_ERROR(target.AddInputOutputAlias(alias));
  }
  target.Renumber();
  return absl::OkStatus();
}

}  // namespace

Status Module::SetGrid(int64_t num_replicas, int64_t num_partitions) {
  if (num_replicas < 1 || num_partitions < 1) {
    return absl::InvalidArgumentError(StrCat("grid of ", num_replicas, " replicas x ",
                                             num_partitions, " partitions: each must be >= 1"));
  }
  if (num_replicas > kMaxGridProcesses || num_partitions > kMaxGridProcesses / num_replicas) {
    return absl::InvalidArgumentError(
        StrCat("grid of ", num_replicas, " replicas x ", num_partitions,
               " partitions: more than accy's limit of ", kMaxGridProcesses, " processes"));
  }
  num_replicas_ = num_replicas;
  num_partitions_ = num_partitions;
  return absl::OkStatus();
}

std::unique_ptr<Module> Module::Clone() const {
  auto copy = std::make_unique<Module>(name_);
  copy->num_replicas_ = num_replicas_;
  copy->num_partitions_ = num_partitions_;
  for (const auto& function : functions_) {
    Function* target = *copy->AddFunction(function->name(), function->parameter_types(),
                                          function->result_types());
    const Status cloned = CloneBody(*function, *target);
    ACCY_CHECK(cloned.ok());  // the documented precondition: operands defined before use
  }
  return copy;
}

StatusOr<Function*> Function::CloneInto(Module& module, std::string name) const {
  if (name.empty()) return absl::InvalidArgumentError("function name must not be empty");
  if (module.FindFunction(name) != nullptr) {
    return absl::InvalidArgumentError(StrCat("function '", name, "' is already defined"));
  }
  // Built detached and added only once complete, so an error leaves `module` unchanged.
  auto copy = std::make_unique<Function>(std::move(name), parameter_types_, result_types_, &module);
  ACCY_RETURN_IF_ERROR(CloneBody(*this, *copy));
  module.functions_.push_back(std::move(copy));
  return module.functions_.back().get();
}

StatusOr<Function*> Module::AddFunction(std::string name, std::vector<TensorType> parameter_types,
                                        std::vector<TensorType> result_types) {
  if (name.empty()) return absl::InvalidArgumentError("function name must not be empty");
  if (FindFunction(name) != nullptr) {
    return absl::InvalidArgumentError(StrCat("function '", name, "' is already defined"));
  }
  functions_.push_back(std::make_unique<Function>(std::move(name), std::move(parameter_types),
                                                  std::move(result_types), this));
  return functions_.back().get();
}

Function* Module::FindFunction(std::string_view name) const {
  for (const auto& function : functions_) {
    if (function->name() == name) return function.get();
  }
  return nullptr;
}

}  // namespace accy
