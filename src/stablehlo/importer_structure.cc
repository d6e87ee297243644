// The Importer's structural ops (importer_internal.h): check ops and interpreter.run_parallel
// of the conformance programs, calls and composites inlined, optimization_barrier, and tuples
// flattened at import.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "src/stablehlo/attribute_mapping.h"
#include "src/stablehlo/importer_internal.h"

namespace accy::stablehlo_internal {

Status Importer::EmitCheck(NameTable& names, const OpSyntax& op, CheckKind kind,
                           BlockRole role) {
  // The operands must name values even when the checks are dropped (ParseStableHlo): a check of
  // an undefined value is malformed text either way.
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> values, LookupAll(names, op));
  if (!keep_checks_) return absl::OkStatus();
  if (role != BlockRole::kFunctionBody) {
    return UnimplementedAt(op.loc, "check ops inside regions or called functions are not "
                                   "supported (only at the top level of a function)");
  }
  const bool is_const = kind == CheckKind::kExpectEqConst ||
                        kind == CheckKind::kExpectCloseConst ||
                        kind == CheckKind::kExpectAlmostEqConst;
  const size_t operands = is_const ? 1 : 2;
  if (op.operands.size() != operands) {
    return ErrorAt(op.loc, StrCat("check.", CheckKindName(kind), " takes ", operands,
                                  " values, found ", op.operands.size()));
  }
  Check result;
  result.kind = kind;
  result.function = function_name_;
  result.line = op.loc.line;
  result.column = op.loc.column;
  result.actual_result = declared_results_ + static_cast<int64_t>(check_values_.size());
  if (is_const) {
    const AttrValue* value = op.attribute("value");
    if (value == nullptr || value->kind != AttrValue::Kind::kDense) {
      return ErrorAt(op.loc, StrCat("check.", CheckKindName(kind), " needs a dense<...> value"));
    }
    const TensorType& expected = value->splat_type.value_or(value->dense->type);
    if (expected != values[0]->type()) {
      return ErrorAt(value->loc, StrCat("expected value has type ", expected.ToString(),
                                        ", the checked value ", values[0]->type().ToString()));
    }
    ACCY_ASSIGN_OR_RETURN(result.expected_constant, ExpandedDense(*value));
  } else {
    if (values[0]->type() != values[1]->type()) {
      return ErrorAt(op.loc, StrCat("check.", CheckKindName(kind), " compares ",
                                    values[0]->type().ToString(), " with ",
                                    values[1]->type().ToString()));
    }
    result.expected_result = result.actual_result + 1;
  }
  if (const AttrValue* tolerance = op.attribute("tolerance")) {
    if (tolerance->kind == AttrValue::Kind::kFloat) {
      result.tolerance = tolerance->float_value;
    } else if (tolerance->kind == AttrValue::Kind::kInt) {
      result.tolerance = static_cast<double>(tolerance->int_value);
    } else {
      return ErrorAt(tolerance->loc, "tolerance must be a number");
    }
  }
  check_values_.insert(check_values_.end(), values.begin(), values.end());
  checks_.push_back(std::move(result));
  return absl::OkStatus();
}

Status Importer::EmitCall(FunctionBuilder& fb, NameTable& names, const OpSyntax& op) {
  const AttrValue* callee_name = op.attribute("callee");
  return InlineFunction(fb, names, op, *functions_.at(callee_name->text),  // CollectCallees
                        StrCat("the call to @", callee_name->text));
}

Status Importer::EmitComposite(FunctionBuilder& fb, NameTable& names, const OpSyntax& op) {
  const AttrValue* composite = op.attribute("name");
  if (composite == nullptr || composite->kind != AttrValue::Kind::kString) {
    return ErrorAt(op.loc, "stablehlo.composite needs a name string (\"namespace.op\")");
  }
  if (const AttrValue* version = op.attribute("version");
      version != nullptr && version->kind != AttrValue::Kind::kInt) {
    return ErrorAt(version->loc, "stablehlo.composite's version must be an integer");
  }
  if (const AttrValue* attributes = op.attribute("composite_attributes");
      attributes != nullptr && attributes->kind != AttrValue::Kind::kDict) {
    return ErrorAt(attributes->loc, "stablehlo.composite's composite_attributes must be a "
                                    "dictionary");
  }
  const AttrValue* decomposition = op.attribute("decomposition");
  Block& block = *fb.block();
  const size_t first = block.operations().size();
  ACCY_RETURN_IF_ERROR(
      InlineFunction(fb, names, op, *functions_.at(decomposition->text),  // CollectCallees
                     StrCat("the composite \"", composite->text, "\" (decomposition @",
                            decomposition->text, ")")));
  // The composite's name stays on the ops of its decomposition (kCompositeAttribute), so plans
  // and profiles can say which composite an item computes; a nested composite's ops keep the
  // innermost name.
  for (size_t i = first; i < block.operations().size(); ++i) {
    Operation& inlined = *block.operations()[i];
    if (inlined.attribute(kCompositeAttribute) == nullptr) {
      inlined.SetAttribute(std::string(kCompositeAttribute), composite->text);
    }
  }
  return absl::OkStatus();
}

Status Importer::InlineFunction(FunctionBuilder& fb, NameTable& names, const OpSyntax& op,
                                const FunctionSyntax& callee, std::string_view what) {
  if (std::find(call_stack_.begin(), call_stack_.end(), &callee) != call_stack_.end()) {
    return UnimplementedAt(op.loc, op.name == "func.call"
                                       ? StrCat("recursive call to @", callee.name,
                                                " cannot be inlined")
                                       : StrCat(what, " is recursive: @", callee.name,
                                                " is already being inlined"));
  }
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> arguments, LookupAll(names, op));
  if (arguments.size() != callee.body.arg_types.size() ||
      op.result_types != callee.result_types) {
    return ErrorAt(op.loc, StrCat(what, " does not match the signature of @", callee.name));
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i]->type() != callee.body.arg_types[i]) {
      return ErrorAt(op.operands[i].loc,
                     StrCat("argument ", i, " of ", what, " has type ",
                            arguments[i]->type().ToString(), ", @", callee.name, " expects ",
                            callee.body.arg_types[i].ToString()));
    }
  }
  call_stack_.push_back(&callee);
  NameTable callee_names;
  std::vector<Value*> returned;
  Status status = EmitBlock(fb, callee_names, callee.body, arguments,
                            BlockRole::kInlinedCallee, &returned);
  call_stack_.pop_back();
  ACCY_RETURN_IF_ERROR(status);
  for (size_t i = 0; i < returned.size(); ++i) {
    if (i >= op.result_types.size() || returned[i]->type() != op.result_types[i]) {
      return ErrorAt(callee.loc, StrCat("@", callee.name, " returns values that do not match "
                                        "its declared result types"));
    }
  }
  if (returned.size() != op.result_types.size()) {
    return ErrorAt(callee.loc, StrCat("@", callee.name, " returns ", returned.size(),
                                      " values, declares ", op.result_types.size()));
  }
  return DefineResults(names, op, returned);
}

Status Importer::EmitRunParallel(NameTable& names, const OpSyntax& op, BlockRole role) {
  if (role != BlockRole::kFunctionBody) {
    return UnimplementedAt(op.loc, "interpreter.run_parallel is supported only at the top level "
                                   "of a function");
  }
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> operands, LookupAll(names, op));
  ParallelRun run;
  run.function = function_name_;
  const AttrValue* programs = op.attribute("programs");
  if (programs == nullptr || programs->kind != AttrValue::Kind::kList || programs->items.empty()) {
    return ErrorAt(op.loc, "interpreter.run_parallel needs programs = [[@f, ...], ...]");
  }
  for (const AttrValue& row : programs->items) {
    if (row.kind != AttrValue::Kind::kList || row.items.empty()) {
      return ErrorAt(row.loc, "each row of programs must be a non-empty list of @functions");
    }
    std::vector<std::string> names_in_row;
    for (const AttrValue& item : row.items) {
      if (item.kind != AttrValue::Kind::kSymbol || functions_.count(item.text) == 0) {
        return ErrorAt(item.loc, "programs must name functions of the module (@name)");
      }
      names_in_row.push_back(item.text);
    }
    if (!run.programs.empty() && names_in_row.size() != run.programs[0].size()) {
      return ErrorAt(row.loc, "every row of programs must have as many partitions");
    }
    run.programs.push_back(std::move(names_in_row));
  }
  run.inputs_begin = declared_results_ + check_value_count_;
  run.num_inputs = static_cast<int64_t>(operands.size());
  run.results_begin =
      static_cast<int64_t>(functions_.at(function_name_)->body.arg_types.size());
  run.num_results = static_cast<int64_t>(parallel_parameters_.size());
  parallel_values_ = std::move(operands);
  parallel_runs_.push_back(std::move(run));
  return DefineResults(names, op, parallel_parameters_);
}

Status Importer::EmitOptimizationBarrier(NameTable& names, const OpSyntax& op) {
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> operands, LookupAll(names, op));
  if (!op.regions.empty() || op.result_types.size() != operands.size()) {
    return ErrorAt(op.loc, StrCat("stablehlo.optimization_barrier has ", operands.size(),
                                  " operands and ", op.result_types.size(), " results; it "
                                  "returns its operands (spec \"optimization_barrier\" C1)"));
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i]->type() != op.result_types[i]) {
      return ErrorAt(op.loc, StrCat("stablehlo.optimization_barrier result ", i, " has type ",
                                    op.result_types[i].ToString(), ", its operand ",
                                    operands[i]->type().ToString(),
                                    " (spec \"optimization_barrier\" C1)"));
    }
  }
  // The identity on values: accy keeps no barrier (docs/import_rewrites.md).
  return DefineResults(names, op, operands);
}

namespace {

bool SameType(const TypeTree& a, const TypeTree& b) {
  if (a.is_tuple != b.is_tuple) return false;
  if (!a.is_tuple) return a.tensor == b.tensor;
  if (a.elements.size() != b.elements.size()) return false;
  for (size_t i = 0; i < a.elements.size(); ++i) {
    if (!SameType(a.elements[i], b.elements[i])) return false;
  }
  return true;
}

size_t LeafCount(const TypeTree& type) {
  if (!type.is_tuple) return 1;
  size_t count = 0;
  for (const TypeTree& element : type.elements) count += LeafCount(element);
  return count;
}

}  // namespace

Status Importer::EmitTuple(NameTable& names, const OpSyntax& op) {
  if (op.tuple_types.size() != 1 || op.result_groups.size() != 1 ||
      op.result_groups[0].second != 1 || !op.regions.empty()) {
    return ErrorAt(op.loc, "stablehlo.tuple takes values and gives one named tuple");
  }
  TypeTree type;
  type.is_tuple = true;
  std::vector<Value*> leaves;
  for (const ValueRef& ref : op.operands) {
    auto tuple = names.tuples.find(ref.name);
    if (tuple != names.tuples.end() && ref.index == 0) {
      const std::vector<Value*>& parts = names.values.at(ref.name);
      leaves.insert(leaves.end(), parts.begin(), parts.end());
      type.elements.push_back(tuple->second);
      continue;
    }
    ACCY_ASSIGN_OR_RETURN(Value * value, Lookup(names, ref));
    leaves.push_back(value);
    TypeTree leaf;
    leaf.tensor = value->type();
    type.elements.push_back(std::move(leaf));
  }
  if (!SameType(type, op.tuple_types[0])) {
    return ErrorAt(op.loc, StrCat("stablehlo.tuple's type is ", op.tuple_types[0].ToString(),
                                  " but its operands make ", type.ToString(),
                                  " (spec \"tuple\" C1)"));
  }
  const std::string& name = op.result_groups[0].first;
  ACCY_RETURN_IF_ERROR(Define(names, name, std::move(leaves), op.loc));
  names.tuples.emplace(name, std::move(type));
  return absl::OkStatus();
}

Status Importer::EmitGetTupleElement(NameTable& names, const OpSyntax& op) {
  const AttrValue* index = op.attribute("index");
  if (op.operands.size() != 1 || op.tuple_types.size() != 2 || index == nullptr ||
      index->kind != AttrValue::Kind::kInt || op.result_groups.size() != 1 ||
      op.result_groups[0].second != 1 || !op.regions.empty()) {
    return ErrorAt(op.loc, "stablehlo.get_tuple_element takes one tuple and an index and gives "
                           "one named value");
  }
  const ValueRef& ref = op.operands[0];
  auto tuple = names.tuples.find(ref.name);
  if (tuple == names.tuples.end() || ref.index != 0) {
    if (!names.values.contains(ref.name)) {
      return ErrorAt(ref.loc, StrCat("use of undefined value ", ValueName(ref.name)));
    }
    return ErrorAt(ref.loc, StrCat("stablehlo.get_tuple_element's operand ", ValueName(ref.name),
                                   " is not a tuple (spec \"get_tuple_element\")"));
  }
  const TypeTree& type = tuple->second;
  if (!SameType(type, op.tuple_types[0])) {
    return ErrorAt(op.loc, StrCat("stablehlo.get_tuple_element's operand type is ",
                                  op.tuple_types[0].ToString(), " but ", ValueName(ref.name),
                                  " is ", type.ToString()));
  }
  const int64_t i = index->int_value;
  if (i < 0 || i >= static_cast<int64_t>(type.elements.size())) {
    return ErrorAt(index->loc, StrCat("get_tuple_element index ", i, " is outside [0, ",
                                      type.elements.size(), ") for ", type.ToString(),
                                      " (spec \"get_tuple_element\" C1)"));
  }
  const TypeTree& element = type.elements[static_cast<size_t>(i)];
  if (!SameType(element, op.tuple_types[1])) {
    return ErrorAt(op.loc, StrCat("stablehlo.get_tuple_element's result type is ",
                                  op.tuple_types[1].ToString(), " but element ", i, " of ",
                                  type.ToString(), " is ", element.ToString(),
                                  " (spec \"get_tuple_element\" C2)"));
  }
  size_t first = 0;
  for (int64_t k = 0; k < i; ++k) first += LeafCount(type.elements[static_cast<size_t>(k)]);
  const std::vector<Value*>& all = names.values.at(ref.name);
  std::vector<Value*> leaves(all.begin() + static_cast<int64_t>(first),
                             all.begin() + static_cast<int64_t>(first + LeafCount(element)));
  const std::string& name = op.result_groups[0].first;
  ACCY_RETURN_IF_ERROR(Define(names, name, std::move(leaves), op.loc));
  if (element.is_tuple) names.tuples.emplace(name, element);
  return absl::OkStatus();
}

}  // namespace accy::stablehlo_internal
