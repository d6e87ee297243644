// The StableHLO importer (importer.h). Value names follow MLIR's scoping: a name is visible in
// its region and the regions nested in it, must not be defined twice while visible, and sibling
// regions (while's cond and do) may reuse names. An inlined callee gets a fresh name table (its
// body is isolated from the caller's names).
#include "src/stablehlo/importer.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "accy/builder.h"
#include "src/stablehlo/attribute_mapping.h"
#include "src/stablehlo/dense_literal.h"
#include "src/stablehlo/dynamic_fold.h"
#include "src/stablehlo/importer_internal.h"
#include "src/stablehlo/lapack_mapping.h"
#include "src/stablehlo/input_output_aliases.h"
#include "src/stablehlo/sharding_calls.h"
#include "src/stablehlo/map_rewrite.h"
#include "src/stablehlo/real_imag.h"
#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {

StatusOr<StableHloProgram> Importer::Run() {
  for (const FunctionSyntax& function : syntax_.functions) {
    if (!functions_.emplace(function.name, &function).second) {
      return ErrorAt(function.loc, StrCat("redefinition of function @", function.name));
    }
    // Checked here for every function, also the private ones that are only inlined.
    ACCY_RETURN_IF_ERROR(AliasesOf(function).status());
  }
  std::set<std::string> called;
  for (const FunctionSyntax& function : syntax_.functions) {
    ACCY_RETURN_IF_ERROR(CollectCallees(function.body.ops, &called));
  }
  Builder builder(syntax_.name);
  for (const FunctionSyntax& function : syntax_.functions) {
    // A private function reached through calls lives on only inlined into its callers.
    if (!function.is_public && called.count(function.name) != 0) continue;
    ACCY_RETURN_IF_ERROR(BuildFunction(builder, function));
  }
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, builder.Finish());
  ACCY_RETURN_IF_ERROR(module->SetGrid(syntax_.num_replicas, syntax_.num_partitions));
  return StableHloProgram{std::move(module), std::move(checks_), std::move(parallel_runs_)};
}

Status Importer::CollectCallees(const std::vector<OpSyntax>& ops, std::set<std::string>* called) {
  for (const OpSyntax& op : ops) {
    const bool is_call = op.name == "func.call";
    if (is_call || op.name == "stablehlo.composite") {
      const char* field = is_call ? "callee" : "decomposition";
      const AttrValue* callee = op.attribute(field);
      if (callee == nullptr || callee->kind != AttrValue::Kind::kSymbol) {
        return ErrorAt(op.loc, StrCat(op.name, " needs a ", field, " symbol (@name)"));
      }
      if (functions_.count(callee->text) == 0) {
        return ErrorAt(callee->loc, StrCat("call to undefined function @", callee->text));
      }
      called->insert(callee->text);
    }
    for (const RegionSyntax& region : op.regions) {
      ACCY_RETURN_IF_ERROR(CollectCallees(region.ops, called));
    }
  }
  return absl::OkStatus();
}

StatusOr<std::vector<TensorType>> Importer::CheckResultTypes(const FunctionSyntax& function) {
  std::vector<TensorType> types;
  if (!keep_checks_) return types;
  // Types by name as the text gives them: check operands are top-level values.
  std::unordered_map<std::string, std::vector<TensorType>> typed;
  for (size_t i = 0; i < function.body.arg_names.size(); ++i) {
    typed[function.body.arg_names[i]] = {function.body.arg_types[i]};
  }
  for (const OpSyntax& op : function.body.ops) {
    ACCY_ASSIGN_OR_RETURN(std::optional<CheckKind> kind, CheckKindOf(op));
    if (kind.has_value()) {
      for (const ValueRef& ref : op.operands) {
        auto it = typed.find(ref.name);
        if (it == typed.end() || ref.index < 0 ||
            ref.index >= static_cast<int64_t>(it->second.size())) {
          return ErrorAt(ref.loc, StrCat("use of undefined value ", ValueName(ref.name)));
        }
        types.push_back(it->second[static_cast<size_t>(ref.index)]);
      }
    }
    size_t next = 0;
    for (const auto& [name, count] : op.result_groups) {
      std::vector<TensorType>& slot = typed[name];
      slot.clear();
      for (int64_t i = 0; i < count && next < op.result_types.size(); ++i) {
        slot.push_back(op.result_types[next++]);
      }
    }
  }
  return types;
}

Status Importer::BuildFunction(Builder& builder, const FunctionSyntax& function) {
  ACCY_ASSIGN_OR_RETURN(std::vector<TensorType> extra, CheckResultTypes(function));
  std::vector<TensorType> results = function.result_types;
  results.insert(results.end(), extra.begin(), extra.end());
  check_value_count_ = static_cast<int64_t>(extra.size());
  // interpreter.run_parallel: its results become parameters, its operands results (ParallelRun).
  std::vector<TensorType> parameters = function.body.arg_types;
  const OpSyntax* parallel = nullptr;
  for (const OpSyntax& op : function.body.ops) {
    if (!keep_checks_ || op.name != "interpreter.run_parallel") continue;
    if (parallel != nullptr) {
      return UnimplementedAt(op.loc, "more than one interpreter.run_parallel in a function");
    }
    parallel = &op;
    if (!op.operand_types.has_value()) {
      return ErrorAt(op.loc, "interpreter.run_parallel needs its generic form's function type");
    }
    parameters.insert(parameters.end(), op.result_types.begin(), op.result_types.end());
    results.insert(results.end(), op.operand_types->begin(), op.operand_types->end());
  }
  StatusOr<FunctionBuilder> fb =
      builder.BeginFunction(function.name, parameters, std::move(results));
  if (!fb.ok()) return WithLoc(function.loc, fb.status());
  fb->function()->set_public(function.is_public);
  // Donated parameters: `tf.aliasing_output = R` (what JAX writes for donate_argnums).
  ACCY_ASSIGN_OR_RETURN(std::vector<AliasSyntax> aliases, AliasesOf(function));
  for (const AliasSyntax& alias : aliases) {
    Status added = fb->function()->AddInputOutputAlias(alias.alias);
    if (!added.ok()) return WithLoc(alias.loc, added);
  }
  function_name_ = function.name;
  declared_results_ = static_cast<int64_t>(function.result_types.size());
  check_values_.clear();
  parallel_values_.clear();
  parallel_parameters_.clear();
  for (size_t i = function.body.arg_types.size(); i < parameters.size(); ++i) {
    parallel_parameters_.push_back(fb->Parameter(static_cast<int64_t>(i)));
  }
  call_stack_ = {&function};
  NameTable names;
  std::vector<Value*> arguments;
  for (size_t i = 0; i < function.body.arg_types.size(); ++i) {
    arguments.push_back(fb->Parameter(static_cast<int64_t>(i)));
  }
  ACCY_RETURN_IF_ERROR(
      EmitBlock(*fb, names, function.body, arguments, BlockRole::kFunctionBody, nullptr));
  return fb->Finish();
}

Status Importer::Define(NameTable& names, const std::string& name, std::vector<Value*> values,
                        SourceLoc loc) {
  if (!names.values.emplace(name, std::move(values)).second) {
    return ErrorAt(loc, StrCat("redefinition of ", ValueName(name)));
  }
  names.scopes.back().push_back(name);
  return absl::OkStatus();
}

StatusOr<Value*> Importer::Lookup(const NameTable& names, const ValueRef& ref) const {
  auto it = names.values.find(ref.name);
  if (it == names.values.end()) {
    return ErrorAt(ref.loc, StrCat("use of undefined value ", ValueName(ref.name)));
  }
  if (names.tuples.contains(ref.name)) {
    return UnimplementedAt(ref.loc, StrCat(ValueName(ref.name), " is a tuple: accy flattens "
                                           "tuples at import, so only stablehlo.tuple and "
                                           "stablehlo.get_tuple_element may take one"));
  }
  if (ref.index < 0 || ref.index >= static_cast<int64_t>(it->second.size())) {
    return ErrorAt(ref.loc, StrCat(ValueName(ref.name), " has ", it->second.size(),
                                   " results, no result #", ref.index));
  }
  return it->second[static_cast<size_t>(ref.index)];
}

StatusOr<std::vector<Value*>> Importer::LookupAll(const NameTable& names,
                                                  const OpSyntax& op) const {
  std::vector<Value*> values;
  for (const ValueRef& ref : op.operands) {
    ACCY_ASSIGN_OR_RETURN(Value * value, Lookup(names, ref));
    values.push_back(value);
  }
  if (op.operand_types.has_value()) {
    const std::vector<TensorType>& types = *op.operand_types;
    if (types.size() != values.size()) {
      return ErrorAt(op.loc, StrCat("'", op.name, "' has ", values.size(),
                                    " operands but its type lists ", types.size()));
    }
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i]->type() != types[i]) {
        return ErrorAt(op.operands[i].loc,
                       StrCat(ValueName(op.operands[i].name), " has type ",
                              values[i]->type().ToString(), ", but '", op.name,
                              "' expects ", types[i].ToString()));
      }
    }
  }
  return values;
}

Status Importer::DefineResults(NameTable& names, const OpSyntax& op,
                               const std::vector<Value*>& results) {
  if (op.result_groups.empty()) return absl::OkStatus();
  if (op.num_results() != static_cast<int64_t>(results.size())) {
    return ErrorAt(op.loc, StrCat("'", op.name, "' defines ", op.num_results(),
                                  " result names but produces ", results.size(), " results"));
  }
  size_t next = 0;
  for (const auto& [name, count] : op.result_groups) {
    std::vector<Value*> group(results.begin() + static_cast<int64_t>(next),
                              results.begin() + static_cast<int64_t>(next) + count);
    next += static_cast<size_t>(count);
    ACCY_RETURN_IF_ERROR(Define(names, name, std::move(group), op.loc));
  }
  return absl::OkStatus();
}

Status Importer::CountOp(SourceLoc loc) {
  if (++op_count_ > kMaxParsedOps) {
    return absl::ResourceExhaustedError(StrCat(LocPrefix(loc), "the program (with calls inlined) "
                                               "has more than ", kMaxParsedOps, " ops"));
  }
  return absl::OkStatus();
}

Status Importer::ChargeConstant(const AttrValue& value) {
  if (value.kind == AttrValue::Kind::kDense && value.dense != nullptr) {
    // A splat kept as one element counts at its expanded size, as in the text's count.
    const TensorType& type = value.splat_type.value_or(value.dense->type);
    ACCY_RETURN_IF_ERROR(budget_->Charge(type.element_count() * ElementByteWidth(type.element_type()),
                                         type, value.loc, &budget_->module_bytes,
                                         "the module's"));
  }
  for (const AttrValue& item : value.items) ACCY_RETURN_IF_ERROR(ChargeConstant(item));
  return absl::OkStatus();
}

Status Importer::ChargeConstants(const std::vector<NamedAttr>& attributes) {
  for (const NamedAttr& attribute : attributes) {
    ACCY_RETURN_IF_ERROR(ChargeConstant(attribute.value));
  }
  return absl::OkStatus();
}

Status Importer::EmitBlock(FunctionBuilder& fb, NameTable& names, const RegionSyntax& block,
                           std::span<Value* const> arguments, BlockRole role,
                           std::vector<Value*>* returned) {
  if (arguments.size() != block.arg_names.size()) {
    return ErrorAt(block.loc, StrCat("region has ", block.arg_names.size(), " arguments, its op "
                                     "gives it ", arguments.size()));
  }
  // Inlined calls nest like regions (a chain of calls inlines as blocks within blocks, and the
  // later stages walk regions recursively): the same depth limit as the parser's for both.
  if (block_depth_ >= kMaxParseNesting) {
    return ErrorAt(block.loc, StrCat("regions and inlined calls (func.call, composite "
                                     "decompositions) nest deeper than ",
                                     kMaxParseNesting, " levels"));
  }
  ++block_depth_;
  struct DepthExit {
    int* depth;
    ~DepthExit() { --*depth; }
  } depth_exit{&block_depth_};
  names.scopes.emplace_back();
  // Leaves the scope even on errors, so that a table stays consistent for its owner.
  struct ScopeExit {
    NameTable* names;
    ~ScopeExit() {
      for (const std::string& name : names->scopes.back()) {
        names->values.erase(name);
        names->tuples.erase(name);
      }
      names->scopes.pop_back();
    }
  } exit{&names};
  for (size_t i = 0; i < arguments.size(); ++i) {
    ACCY_RETURN_IF_ERROR(Define(names, block.arg_names[i], {arguments[i]}, block.loc));
  }
  for (size_t i = 0; i < block.ops.size(); ++i) {
    const OpSyntax& op = block.ops[i];
    if (!IsReturn(op)) {
      ACCY_RETURN_IF_ERROR(EmitOp(fb, names, op, role));
      continue;
    }
    if (i + 1 != block.ops.size()) {
      return ErrorAt(block.ops[i + 1].loc, "no op may follow a return in its block");
    }
    ACCY_ASSIGN_OR_RETURN(std::vector<Value*> values, LookupAll(names, op));
    if (role == BlockRole::kInlinedCallee) {
      *returned = std::move(values);
      return absl::OkStatus();
    }
    if (role == BlockRole::kFunctionBody) {
      values.insert(values.end(), check_values_.begin(), check_values_.end());
      values.insert(values.end(), parallel_values_.begin(), parallel_values_.end());
    }
    ACCY_RETURN_IF_ERROR(CountOp(op.loc));
    Status status = fb.Return(std::move(values));
    return status.ok() ? status : WithLoc(op.loc, status);
  }
  const SourceLoc end = block.ops.empty() ? block.loc : block.ops.back().loc;
  return ErrorAt(end, "block does not end with a return");
}

Status Importer::EmitOp(FunctionBuilder& fb, NameTable& names, const OpSyntax& op,
                        BlockRole role) {
  ACCY_RETURN_IF_ERROR(CountOp(op.loc));
  ACCY_RETURN_IF_ERROR(ChargeConstants(op.attributes));
  ACCY_ASSIGN_OR_RETURN(std::optional<CheckKind> check, CheckKindOf(op));
  if (check.has_value()) return EmitCheck(names, op, *check, role);
  if (op.name == "interpreter.run_parallel" && keep_checks_) {
    return EmitRunParallel(names, op, role);
  }
  if (op.name == "func.call") return EmitCall(fb, names, op);
  if (op.name == "stablehlo.custom_call") return EmitCustomCall(fb, names, op);
  if (op.name == "stablehlo.composite") return EmitComposite(fb, names, op);
  if (op.name == "stablehlo.optimization_barrier") return EmitOptimizationBarrier(names, op);
  if (op.name == "stablehlo.tuple") return EmitTuple(names, op);
  if (op.name == "stablehlo.get_tuple_element") return EmitGetTupleElement(names, op);
  if (op.name == "stablehlo.map") return EmitMap(fb, names, op);
  if (op.name == "stablehlo.real" || op.name == "stablehlo.imag") {
    ACCY_ASSIGN_OR_RETURN(std::vector<Value*> operands, LookupAll(names, op));
    ACCY_ASSIGN_OR_RETURN(Value * result, EmitRealOrImagOfReal(fb, op, operands));
    return DefineResults(names, op, {result});
  }
  return EmitStableHloOp(fb, names, op);
}

Status Importer::EmitMap(FunctionBuilder& fb, NameTable& names, const OpSyntax& op) {
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> operands, LookupAll(names, op));
  std::vector<TensorType> operand_types;
  for (const Value* operand : operands) operand_types.push_back(operand->type());
  const OuterValueType outer_type = [&](const ValueRef& ref) -> StatusOr<TensorType> {
    ACCY_ASSIGN_OR_RETURN(Value * value, Lookup(names, ref));
    return value->type();
  };
  ACCY_ASSIGN_OR_RETURN(RegionSyntax block,
                        MapComputationOnTensors(op, operand_types, outer_type));
  std::vector<Value*> returned;
  ACCY_RETURN_IF_ERROR(
      EmitBlock(fb, names, block, operands, BlockRole::kInlinedCallee, &returned));
  if (returned.size() != 1 || returned[0]->type() != op.result_types[0]) {
    return ErrorAt(op.loc, StrCat("the stablehlo.map computation returns ", returned.size(),
                                  " values; the map needs one of type ",
                                  op.result_types[0].ToString(), " (spec \"map\" C4)"));
  }
  return DefineResults(names, op, returned);
}

Status Importer::EmitCustomCall(FunctionBuilder& fb, NameTable& names, const OpSyntax& op) {
  const AttrValue* target = op.attribute("call_target_name");
  if (target == nullptr || target->kind != AttrValue::Kind::kString) {
    return ErrorAt(op.loc, "custom_call needs a call_target_name string");
  }
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> operands, LookupAll(names, op));
  if (target->text == "accy.cumsum") {
    const AttrValue* dimension = op.attribute("accy.dimension");
    if (dimension == nullptr || dimension->kind != AttrValue::Kind::kInt) {
      return ErrorAt(op.loc, "custom_call @accy.cumsum needs an integer accy.dimension");
    }
    return Create(fb, names, op, OpKind::kCumsum, std::move(operands),
                  {{"dimension", dimension->int_value}});
  }
  if (IsLapackTargetName(target->text)) return EmitLapackCall(fb, names, op, std::move(operands));
  if (IsShardingTarget(target->text)) {
    std::vector<TensorType> operand_types;
    for (const Value* operand : operands) operand_types.push_back(operand->type());
    ACCY_RETURN_IF_ERROR(WithLoc(op.loc, CheckShardingCall(target->text, operand_types,
                                                           op.result_types, syntax_.num_partitions)));
    return DefineResults(names, op, operands);  // the identity
  }
  if (op.attribute("accy.version") == nullptr) {
    return UnimplementedAt(target->loc, StrCat("custom_call target @", target->text,
                                               " is not supported"));
  }
  ACCY_ASSIGN_OR_RETURN(KernelCallSpec spec,
                        ConvertKernelCallSpec(op, target->text,
                                              static_cast<int64_t>(op.result_types.size())));
  StatusOr<Operation*> call = fb.KernelCall(std::move(operands), op.result_types, spec);
  if (!call.ok()) return WithLoc(op.loc, call.status());
  return DefineResults(names, op, (*call)->results());
}

// A LAPACK target of JAX's CPU lowering (lapack_mapping.h): potrf becomes a lapack op; trsm a
// triangular_solve, of alpha * b when the call passes alpha (the pre-2025 form).
Status Importer::EmitLapackCall(FunctionBuilder& fb, NameTable& names, const OpSyntax& op,
                                std::vector<Value*> operands) {
  const std::string& target = op.attribute("call_target_name")->text;
  std::vector<TensorType> operand_types;
  for (const Value* operand : operands) operand_types.push_back(operand->type());
  ACCY_ASSIGN_OR_RETURN(LapackCallForm form, ConvertLapackCall(op, target, operand_types));
  if (form.target.routine != LapackRoutine::kTrsm) {
    return Create(fb, names, op, OpKind::kLapack, std::move(operands),
                  std::move(form.attributes));
  }
  if ((operands.size() != 2 && operands.size() != 3) || op.result_types.size() != 1) {
    return ErrorAt(op.loc, StrCat("custom_call @", target, " takes a, b (and a rank-0 alpha) "
                                  "and returns one result"));
  }
  Value* b = operands[1];
  if (operands.size() == 3) {
    StatusOr<Value*> alpha = fb.BroadcastInDim(operands[2], b->type(), {});
    if (!alpha.ok()) return WithLoc(op.loc, alpha.status());
    StatusOr<Value*> scaled = fb.Multiply(*alpha, b);
    if (!scaled.ok()) return WithLoc(op.loc, scaled.status());
    b = *scaled;
  }
  return Create(fb, names, op, OpKind::kTriangularSolve, {operands[0], b},
                std::move(form.attributes));
}

Status Importer::EmitStableHloOp(FunctionBuilder& fb, NameTable& names, const OpSyntax& op) {
  const std::string_view name = op.name;
  StatusOr<OpKind> kind = ParseQualifiedOpKind(name);
  const bool accy_only = kind.ok() && (*kind == OpKind::kCumsum || *kind == OpKind::kKernelCall ||
                                       *kind == OpKind::kLapack ||
                                       *kind == OpKind::kReturn);
  const bool is_dot = name == "stablehlo.dot";
  if (name == "stablehlo.if") {
    // if (spec "if") is case(convert(not(pred)) : tensor<i32>) over (true_branch, false_branch).
    ACCY_ASSIGN_OR_RETURN(std::vector<Value*> operands, LookupAll(names, op));
    const TensorType pred = *TensorType::Create(ElementType::kI1, {});
    if (operands.size() != 1 || operands[0]->type() != pred || op.regions.size() != 2) {
      return ErrorAt(op.loc, "stablehlo.if takes one tensor<i1> pred and two regions "
                             "(true_branch, false_branch) (spec \"if\" C1-C2)");
    }
    StatusOr<Value*> is_false = fb.Not(operands[0]);
    if (!is_false.ok()) return WithLoc(op.loc, is_false.status());
    StatusOr<Value*> index = fb.Convert(*is_false, ElementType::kI32);
    if (!index.ok()) return WithLoc(op.loc, index.status());
    return Create(fb, names, op, OpKind::kCase, {*index}, {});
  }
  if (IsFoldedDynamicOp(name)) {
    ACCY_ASSIGN_OR_RETURN(std::vector<Value*> operands, LookupAll(names, op));
    ACCY_ASSIGN_OR_RETURN(StaticForm form, StaticFormOf(op, operands));
    return Create(fb, names, op, form.kind, std::move(form.operands),
                  std::move(form.attributes));
  }
  if ((!kind.ok() || accy_only) && !is_dot) {
    return UnimplementedAt(op.loc, StrCat("op '", name, "' is not supported"));
  }
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> operands, LookupAll(names, op));
  if (is_dot) {
    // dot (deprecated): contracts lhs's last dim with rhs's first, no batch dims.
    if (operands.size() != 2 || operands[0]->type().rank() < 1 ||
        operands[1]->type().rank() < 1) {
      return ErrorAt(op.loc, "stablehlo.dot takes two operands of rank 1 or 2");
    }
    ACCY_ASSIGN_OR_RETURN(std::vector<NamedAttribute> attributes,
                          ConvertAttributes(OpKind::kDotGeneral, op));
    attributes.push_back({"lhs_batching_dimensions", std::vector<int64_t>{}});
    attributes.push_back({"rhs_batching_dimensions", std::vector<int64_t>{}});
    attributes.push_back(
        {"lhs_contracting_dimensions", std::vector<int64_t>{operands[0]->type().rank() - 1}});
    attributes.push_back({"rhs_contracting_dimensions", std::vector<int64_t>{0}});
    ACCY_ASSIGN_OR_RETURN(operands, RoundDotOperands(fb, op, std::move(operands)));
    return Create(fb, names, op, OpKind::kDotGeneral, std::move(operands), std::move(attributes));
  }
  if (*kind == OpKind::kConstant) {
    const AttrValue* value = op.attribute("value");
    if (value != nullptr && value->kind == AttrValue::Kind::kDense && value->splat_type) {
      return EmitSplatConstant(fb, names, op, *value);
    }
  }
  ACCY_ASSIGN_OR_RETURN(std::vector<NamedAttribute> attributes, ConvertAttributes(*kind, op));
  if (*kind == OpKind::kDotGeneral) {
    ACCY_ASSIGN_OR_RETURN(operands, RoundDotOperands(fb, op, std::move(operands)));
  }
  return Create(fb, names, op, *kind, std::move(operands), std::move(attributes));
}

Status Importer::EmitSplatConstant(FunctionBuilder& fb, NameTable& names, const OpSyntax& op,
                                   const AttrValue& value) {
  if (!op.operands.empty() || !op.regions.empty() || op.attributes.size() != 1 ||
      op.result_types.size() != 1 || op.result_types[0] != *value.splat_type) {
    // Not the plain form: the generic path names what is wrong.
    ACCY_ASSIGN_OR_RETURN(DenseElements expanded, ExpandedDense(value));
    return Create(fb, names, op, OpKind::kConstant, {}, {{"value", std::move(expanded)}});
  }
  StatusOr<Value*> element = fb.Constant(value.dense->type, value.dense->bytes);
  if (!element.ok()) return WithLoc(op.loc, element.status());
  StatusOr<Value*> splat = fb.BroadcastInDim(*element, *value.splat_type, {});
  if (!splat.ok()) return WithLoc(op.loc, splat.status());
  return DefineResults(names, op, {*splat});
}

Status Importer::Create(FunctionBuilder& fb, NameTable& names, const OpSyntax& op, OpKind kind,
                        std::vector<Value*> operands, std::vector<NamedAttribute> attributes) {
  std::vector<RegionSpec> regions;
  for (const RegionSyntax& region : op.regions) {
    RegionSpec spec;
    spec.argument_types = region.arg_types;
    spec.body = [this, &names, &region](FunctionBuilder& body,
                                        std::span<Value* const> arguments) -> Status {
      Status status = EmitBlock(body, names, region, arguments, BlockRole::kRegion, nullptr);
      if (!status.ok() && region_error_.ok()) region_error_ = status;
      return status;
    };
    regions.push_back(std::move(spec));
  }
  region_error_ = absl::OkStatus();
  StatusOr<Operation*> created = fb.CreateOp(kind, std::move(operands), op.result_types,
                                             std::move(attributes), std::move(regions));
  if (!created.ok()) {
    if (!region_error_.ok()) {
      Status inner = std::move(region_error_);
      region_error_ = absl::OkStatus();
      return inner;
    }
    return WithLoc(op.loc, created.status());
  }
  return DefineResults(names, op, (*created)->results());
}


StatusOr<StableHloProgram> ImportModule(const ModuleSyntax& syntax, bool keep_checks,
                                        ConstantBudget* budget) {
  return Importer(syntax, keep_checks, budget).Run();
}

}  // namespace accy::stablehlo_internal
