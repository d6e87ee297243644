// The IR verifier: per-op StableHLO type rules (VerifyOperation) and module structure (Verify).
#include <algorithm>
#include <set>
#include <unordered_set>

#include "src/util/str_cat.h"
#include "accy/ir.h"
#include "src/ir/type_inference.h"
#include "src/ir/type_rules.h"

namespace accy {
namespace {

using ir_internal::DimsToString;
using ir_internal::WrongAttributeKind;

Status Error(const Operation& op, std::string_view message) {
  return absl::InvalidArgumentError(StrCat(op.name(), ": ", message));
}

std::vector<TensorType> TypesOf(std::span<Value* const> values) {
  std::vector<TensorType> types;
  types.reserve(values.size());
  for (const Value* v : values) types.push_back(v->type());
  return types;
}

// Rank-0 tensors of the element types of `types`.
std::vector<TensorType> ScalarsOf(std::span<const TensorType> types) {
  std::vector<TensorType> scalars;
  for (const TensorType& t : types) scalars.push_back(*TensorType::Create(t.element_type(), {}));
  return scalars;
}

Status VerifyBitcastConvert(const Operation& op) {
  const TensorType& in = op.operand(0)->type();
  const TensorType& out = op.result(0)->type();
  // i1 counts as 1 bit (spec "bitcast_convert": num_bits(i1) = 1), so i1[..., 64] <-> i64.
  int in_bits = ElementBitWidth(in.element_type());
  int out_bits = ElementBitWidth(out.element_type());
  std::vector<int64_t> expected_in = out.dims(), expected_out = in.dims();
  bool ok;
  if (in_bits == out_bits) {
    ok = in.dims() == out.dims();
  } else if (out_bits < in_bits) {  // result gains a trailing dim of in_bits / out_bits
    expected_out.push_back(in_bits / out_bits);
    ok = out.dims() == expected_out;
  } else {  // operand's trailing dim of out_bits / in_bits folds away
    expected_in.push_back(out_bits / in_bits);
    ok = in.dims() == expected_in;
  }
  if (!ok) {
    return Error(op, StrCat("cannot bitcast ", in.ToString(), " to ", out.ToString(),
                                  " (equal widths keep the shape; a narrower result adds a "
                                  "trailing dim of the width ratio, a wider one removes it)"));
  }
  return absl::OkStatus();
}

Status VerifyBroadcastInDim(const Operation& op) {
  const TensorType& in = op.operand(0)->type();
  const TensorType& out = op.result(0)->type();
  std::vector<int64_t> dims = op.GetInts("broadcast_dimensions");
  const AttributeValue* attr = op.attribute("broadcast_dimensions");
  if (attr == nullptr) return Error(op, "missing attribute broadcast_dimensions");
  if (!std::holds_alternative<std::vector<int64_t>>(*attr)) {
    return WrongAttributeKind(op.name(), "broadcast_dimensions", "a list of integers", *attr);
  }
  if (in.element_type() != out.element_type()) {
    return Error(op, StrCat("result type ", out.ToString(), " must have the element type of ",
                                  in.ToString()));
  }
  if (static_cast<int64_t>(dims.size()) != in.rank()) {
    return Error(op, StrCat("broadcast_dimensions ", DimsToString(dims), " has ",
                                  dims.size(), " entries, expected the operand rank ", in.rank()));
  }
  std::set<int64_t> seen;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= out.rank() || !seen.insert(dims[i]).second) {
      return Error(op, StrCat("broadcast_dimensions ", DimsToString(dims), ": entry ",
                                    dims[i], " is out of range [0, ", out.rank(),
                                    ") or repeated"));
    }
    int64_t in_size = in.dim(static_cast<int64_t>(i)), out_size = out.dim(dims[i]);
    if (in_size != 1 && in_size != out_size) {
      return Error(op, StrCat("operand dim ", i, " has size ", in_size,
                                    " but result dim ", dims[i], " has size ", out_size,
                                    " (must be equal, or the operand size must be 1)"));
    }
  }
  return absl::OkStatus();
}

Status VerifyKernelCall(const Operation& op) {
  if (const AttributeValue* target = op.attribute("call_target_name");
      target != nullptr && !std::holds_alternative<std::string>(*target)) {
    return WrongAttributeKind(op.name(), "call_target_name", "a string", *target);
  }
  std::optional<std::string> target = op.GetString("call_target_name");
  if (!target || target->empty()) return Error(op, "missing non-empty call_target_name");
  if (const AttributeValue* version = op.attribute("version");
      version != nullptr && !std::holds_alternative<int64_t>(*version)) {
    return WrongAttributeKind(op.name(), "version", "an integer", *version);
  }
  std::optional<int64_t> version = op.GetInt("version");
  if (!version || *version < 0) return Error(op, "missing non-negative integer attribute version");
  // Absent operand_effects means every operand is read (KernelCallSpec).
  std::vector<OperandEffect> operand_effects(static_cast<size_t>(op.num_operands()),
                                             OperandEffect::kRead);
  if (const AttributeValue* effects = op.attribute("operand_effects")) {
    if (!std::holds_alternative<std::vector<std::string>>(*effects)) {
      return WrongAttributeKind(op.name(), "operand_effects", "a list of strings", *effects);
    }
    const auto& names = std::get<std::vector<std::string>>(*effects);
    if (static_cast<int64_t>(names.size()) != op.num_operands()) {
      return Error(op, StrCat("operand_effects has ", names.size(), " entries for ",
                                    op.num_operands(), " operands"));
    }
    for (size_t i = 0; i < names.size(); ++i) {
      auto effect = ParseOperandEffect(names[i]);
      if (!effect.ok()) return Error(op, std::string(effect.status().message()));
      operand_effects[i] = *effect;
    }
  }
  if (const AttributeValue* aliases = op.attribute("result_aliases")) {
    if (!std::holds_alternative<std::vector<int64_t>>(*aliases)) {
      return WrongAttributeKind(op.name(), "result_aliases", "a list of integers", *aliases);
    }
    const auto& list = std::get<std::vector<int64_t>>(*aliases);
    if (static_cast<int64_t>(list.size()) != op.num_results()) {
      return Error(op, StrCat("result_aliases has ", list.size(), " entries for ",
                                    op.num_results(), " results"));
    }
    for (size_t r = 0; r < list.size(); ++r) {
      int64_t alias = list[r];
      if (alias == -1) continue;
      if (alias < 0 || alias >= op.num_operands()) {
        return Error(op, StrCat("result ", r, " aliases operand ", alias,
                                      ", which does not exist"));
      }
      if (op.operand(alias)->type() != op.result(static_cast<int64_t>(r))->type()) {
        return Error(op, StrCat("result ", r, " has type ",
                                      op.result(static_cast<int64_t>(r))->type().ToString(),
                                      " but aliases operand ", alias, " of type ",
                                      op.operand(alias)->type().ToString()));
      }
      // The result is computed in the operand's buffer: the kernel must be allowed to write it.
      const OperandEffect effect = operand_effects[static_cast<size_t>(alias)];
      if (effect != OperandEffect::kWrite && effect != OperandEffect::kReadWrite) {
        return Error(op, StrCat("result ", r, " aliases operand ", alias, ", whose effect is ",
                                OperandEffectName(effect),
                                " (an aliased operand must be write or read_write)"));
      }
      // Two results in one buffer would overwrite each other.
      for (size_t earlier = 0; earlier < r; ++earlier) {
        if (list[earlier] == alias) {
          return Error(op, StrCat("results ", earlier, " and ", r, " both alias operand ",
                                  alias, " (each operand can hold at most one result)"));
        }
      }
    }
  }
  return absl::OkStatus();
}

// kInvalidArgument unless `op` has `operands` operands and `results` results.
Status ExpectCounts(const Operation& op, int64_t operands, int64_t results) {
  if (op.num_operands() != operands || op.num_results() != results) {
    return Error(op, StrCat("expected ", operands, " operand(s) and ", results,
                            " result(s), got ", op.num_operands(), " and ", op.num_results()));
  }
  return absl::OkStatus();
}

}  // namespace

namespace ir_internal {

// Checks that `region` has one block with arguments `arg_types` ending in a return of
// `result_types` (`what` names the region in messages).
Status CheckRegionSignature(const Operation& op, const Region& region, std::string_view what,
                            std::span<const TensorType> arg_types,
                            std::span<const TensorType> result_types) {
  if (region.blocks().size() != 1) {
    return Error(op, StrCat(what, " must have exactly one block"));
  }
  const Block& block = *region.entry_block();
  if (block.num_arguments() != static_cast<int64_t>(arg_types.size())) {
    return Error(op, StrCat(what, " has ", block.num_arguments(), " arguments, expected ",
                                  arg_types.size()));
  }
  for (size_t i = 0; i < arg_types.size(); ++i) {
    if (block.argument(static_cast<int64_t>(i))->type() != arg_types[i]) {
      return Error(op, StrCat(what, " argument ", i, " has type ",
                                    block.argument(static_cast<int64_t>(i))->type().ToString(),
                                    ", expected ", arg_types[i].ToString()));
    }
  }
  const Operation* terminator = block.terminator();
  if (terminator == nullptr) return Error(op, StrCat(what, " does not end with a return"));
  if (terminator->num_operands() != static_cast<int64_t>(result_types.size())) {
    return Error(op, StrCat(what, " returns ", terminator->num_operands(),
                                  " values, expected ", result_types.size()));
  }
  for (size_t i = 0; i < result_types.size(); ++i) {
    const TensorType& type = terminator->operand(static_cast<int64_t>(i))->type();
    if (type != result_types[i]) {
      return Error(op, StrCat(what, " returns ", type.ToString(), " as value ", i,
                                    ", expected ", result_types[i].ToString()));
    }
  }
  return absl::OkStatus();
}

// constant (spec "constant"): the value attribute holds the result type's bytes.
Status CheckConstantResult(const Operation& op) {
  ACCY_RETURN_IF_ERROR(ExpectCounts(op, 0, 1));
  const AttributeValue* attr = op.attribute("value");
  if (attr == nullptr) return Error(op, "missing dense attribute value");
  if (!std::holds_alternative<DenseElements>(*attr)) {
    return WrongAttributeKind(op.name(), "value", "a dense tensor", *attr);
  }
  const DenseElements* value = &std::get<DenseElements>(*attr);
  if (value->type != op.result(0)->type()) {
    return Error(op, StrCat("value has type ", value->type.ToString(),
                                  " but the result has type ",
                                  op.result(0)->type().ToString()));
  }
  auto bytes = value->type.ByteSize();
  if (!bytes.ok() || *bytes != value->bytes.size()) {
    return Error(op, StrCat("value holds ", value->bytes.size(), " bytes, expected ",
                                  bytes.ok() ? StrCat(*bytes) : "an unrepresentable size",
                                  " for ", value->type.ToString()));
  }
  if (IsBool(value->type.element_type())) {  // host layout: one byte, 0 or 1
    for (size_t i = 0; i < value->bytes.size(); ++i) {
      if (value->bytes[i] > 1) {
        return Error(op, StrCat("i1 element ", i, " holds byte ",
                                static_cast<int>(value->bytes[i]), ", expected 0 or 1"));
      }
    }
  }
  return absl::OkStatus();
}

// convert (spec "convert" C1): the operand's shape.
Status CheckConvertResult(const Operation& op) {
  ACCY_RETURN_IF_ERROR(ExpectCounts(op, 1, 1));
  if (op.operand(0)->type().dims() != op.result(0)->type().dims()) {
    return Error(op, StrCat("result type ", op.result(0)->type().ToString(),
                                  " must have the shape of ",
                                  op.operand(0)->type().ToString()));
  }
  return absl::OkStatus();
}

// bitcast_convert (spec "bitcast_convert" C1-C2).
Status CheckBitcastConvertResult(const Operation& op) {
  ACCY_RETURN_IF_ERROR(ExpectCounts(op, 1, 1));
  return VerifyBitcastConvert(op);
}

// reshape (spec "reshape" C1-C2): same element type and element count.
Status CheckReshapeResult(const Operation& op) {
  ACCY_RETURN_IF_ERROR(ExpectCounts(op, 1, 1));
  const TensorType& in = op.operand(0)->type();
  const TensorType& out = op.result(0)->type();
  if (in.element_type() != out.element_type() || in.element_count() != out.element_count()) {
    return Error(op, StrCat("cannot reshape ", in.ToString(), " to ", out.ToString(),
                                  " (element type and element count must match)"));
  }
  return absl::OkStatus();
}

// broadcast_in_dim (spec "broadcast_in_dim" C1-C6).
Status CheckBroadcastInDimResult(const Operation& op) {
  ACCY_RETURN_IF_ERROR(ExpectCounts(op, 1, 1));
  return VerifyBroadcastInDim(op);
}

// iota (spec "iota" C1): 0 <= iota_dimension < rank(result).
Status CheckIotaResult(const Operation& op) {
  ACCY_RETURN_IF_ERROR(ExpectCounts(op, 0, 1));
  const AttributeValue* attr = op.attribute("iota_dimension");
  if (attr == nullptr) return Error(op, "missing integer attribute iota_dimension");
  if (!std::holds_alternative<int64_t>(*attr)) {
    return WrongAttributeKind(op.name(), "iota_dimension", "an integer", *attr);
  }
  std::optional<int64_t> dim = op.GetInt("iota_dimension");
  const TensorType& out = op.result(0)->type();
  if (*dim < 0 || *dim >= out.rank()) {
    return Error(op, StrCat("iota_dimension ", *dim, " is out of range [0, ",
                                  out.rank(), ") for ", out.ToString()));
  }
  if (IsBool(out.element_type())) return Error(op, "i1 results are not supported");
  return absl::OkStatus();
}

// all_reduce, all_gather, ... (type_inference_collectives.cc, VerifyCollective).
Status CheckCollectiveResults(const Operation& op) {
  return VerifyCollective(op.kind(), TypesOf(op.operands()), TypesOf(op.results()),
                          op.attributes());
}

// rng_bit_generator (type_inference_rng_bit_generator.cc).
Status CheckRngBitGeneratorResults(const Operation& op) {
  return VerifyRngBitGenerator(TypesOf(op.operands()), TypesOf(op.results()), op.attributes());
}

// lapack (type_inference_lapack.cc).
Status CheckLapackResults(const Operation& op) {
  return VerifyLapack(TypesOf(op.operands()), TypesOf(op.results()), op.attributes());
}

// kernel_call: its attributes (call_target_name, version, operand_effects, result_aliases).
Status CheckKernelCallResults(const Operation& op) { return VerifyKernelCall(op); }

// case: any results; CheckCaseRegions checks that every branch returns their types.
Status CheckCaseResults(const Operation&) { return absl::OkStatus(); }

Status CheckReturnResults(const Operation& op) {
  if (op.num_results() != 0) return Error(op, "return has no results");
  return absl::OkStatus();
}

// reduce (spec "reduce" C6) and reduce_window (spec "reduce_window" C13): body
// (tensor<E0>, ..., tensor<E0>, ...) -> (tensor<E0>, ...), Ei the init values' element types.
Status CheckReduceRegions(const Operation& op) {
  std::vector<TensorType> operand_types = TypesOf(op.operands());
  size_t n = operand_types.size() / 2;
  std::vector<TensorType> inits(operand_types.begin() + static_cast<ptrdiff_t>(n),
                                operand_types.end());
  std::vector<TensorType> scalars = ScalarsOf(inits);
  std::vector<TensorType> args = scalars;
  args.insert(args.end(), scalars.begin(), scalars.end());
  return CheckRegionSignature(op, *op.region(0), "body", args, scalars);
}

// scatter (spec "scatter" C15): update_computation over the inputs' element types.
Status CheckScatterRegions(const Operation& op) {
  std::vector<TensorType> operand_types = TypesOf(op.operands());
  size_t n = (operand_types.size() - 1) / 2;
  std::vector<TensorType> scalars =
      ScalarsOf(std::span<const TensorType>(operand_types).subspan(0, n));
  std::vector<TensorType> args = scalars;
  args.insert(args.end(), scalars.begin(), scalars.end());
  return CheckRegionSignature(op, *op.region(0), "update_computation", args, scalars);
}

Status CheckSelectAndScatterRegions(const Operation& op) {
  std::vector<TensorType> operand_types = TypesOf(op.operands());
  // Spec "select_and_scatter" (C9) select: (tensor<E>, tensor<E>) -> tensor<i1>; (C10)
  // scatter: (tensor<E>, tensor<E>) -> tensor<E>, E = element_type(operand).
  const TensorType scalar = *TensorType::Create(operand_types[0].element_type(), {});
  const TensorType pred = *TensorType::Create(ElementType::kI1, {});
  const TensorType pair[] = {scalar, scalar};
  ACCY_RETURN_IF_ERROR(CheckRegionSignature(op, *op.region(0), "select", pair,
                                            std::span<const TensorType>(&pred, 1)));
  return CheckRegionSignature(op, *op.region(1), "scatter", pair,
                              std::span<const TensorType>(&scalar, 1));
}

Status CheckSortRegions(const Operation& op) {
  std::vector<TensorType> operand_types = TypesOf(op.operands());
  // Spec "sort" (C5): comparator: (tensor<E0>, tensor<E0>, ..., tensor<EN-1>, tensor<EN-1>)
  // -> tensor<i1>, Ei = element_type(inputs[i]).
  std::vector<TensorType> args;
  for (const TensorType& scalar : ScalarsOf(operand_types)) {
    args.push_back(scalar);
    args.push_back(scalar);
  }
  const TensorType pred = *TensorType::Create(ElementType::kI1, {});
  return CheckRegionSignature(op, *op.region(0), "comparator", args,
                              std::span<const TensorType>(&pred, 1));
}

Status CheckCollectiveRegions(const Operation& op) {
  std::vector<TensorType> operand_types = TypesOf(op.operands());
  // Spec "all_reduce" (C5) / "reduce_scatter" (C7): computation: (tensor<E>, tensor<E>) ->
  // tensor<E>, E the operands' element type (accy: one E for all operands of an all_reduce).
  if (operand_types.empty()) return absl::OkStatus();  // the type rule names the count
  const TensorType scalar = *TensorType::Create(operand_types[0].element_type(), {});
  for (const TensorType& t : operand_types) {
    if (t.element_type() != scalar.element_type()) {
      return Error(op, StrCat("operands of element types ",
                              ElementTypeName(scalar.element_type()), " and ",
                              ElementTypeName(t.element_type()),
                              ": one computation needs one element type"));
    }
  }
  const TensorType pair[] = {scalar, scalar};
  return CheckRegionSignature(op, *op.region(0), "computation", pair,
                              std::span<const TensorType>(&scalar, 1));
}

Status CheckCaseRegions(const Operation& op) {
  std::vector<TensorType> operand_types = TypesOf(op.operands());
  // Spec "case" (C1-C3): a rank-0 si32 index; every branch takes no arguments and returns
  // the op's result types.
  const TensorType index = *TensorType::Create(ElementType::kI32, {});
  if (operand_types.size() != 1 || operand_types[0] != index) {
    return Error(op, StrCat("index has type ", operand_types.empty() ? std::string("<none>")
                                               : operand_types[0].ToString(),
                            ", expected tensor<i32> (spec \"case\" C2)"));
  }
  const std::vector<TensorType> results = TypesOf(op.results());
  for (int64_t r = 0; r < op.num_regions(); ++r) {
    ACCY_RETURN_IF_ERROR(CheckRegionSignature(op, *op.region(r), StrCat("branch ", r), {},
                                              results));
  }
  return absl::OkStatus();
}

// while (spec "while" C1-C2): cond (operand types) -> tensor<i1>; body (operand types) ->
// (operand types).
Status CheckWhileRegions(const Operation& op) {
  std::vector<TensorType> operand_types = TypesOf(op.operands());
  TensorType pred = *TensorType::Create(ElementType::kI1, {});
  ACCY_RETURN_IF_ERROR(CheckRegionSignature(op, *op.region(0), "cond", operand_types,
                                            std::span<const TensorType>(&pred, 1)));
  return CheckRegionSignature(op, *op.region(1), "body", operand_types, operand_types);
}

}  // namespace ir_internal

Status VerifyOperation(const Operation& op) {
  if (static_cast<int>(op.kind()) >= kNumOpKinds) {
    return absl::InvalidArgumentError(
        StrCat("unknown op kind ", static_cast<int>(op.kind())));
  }
  // Lookups take the first attribute of a name: a second one would be silently ignored.
  const std::vector<NamedAttribute>& attributes = op.attributes();
  for (size_t i = 0; i < attributes.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (attributes[j].name == attributes[i].name) {
        return Error(op, StrCat("attribute ", attributes[i].name, " is given more than once"));
      }
    }
  }
  const ir_internal::TypeRule& rule = ir_internal::GetTypeRule(op.kind());
  std::vector<TensorType> operand_types = TypesOf(op.operands());
  ACCY_ASSIGN_OR_RETURN(auto inferred,
                        ir_internal::InferResultTypes(op.kind(), operand_types, op.attributes()));
  if (inferred.has_value()) {
    const std::vector<TensorType>& expected = *inferred;
    if (op.num_results() != static_cast<int64_t>(expected.size())) {
      return Error(op, StrCat("has ", op.num_results(), " results, expected ",
                                    expected.size()));
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      const TensorType& actual = op.result(static_cast<int64_t>(i))->type();
      bool ok = actual == expected[i];
      if (op.kind() == OpKind::kDotGeneral || op.kind() == OpKind::kConvolution) {
        // The result element type may differ from the operands' (e.g. bf16 x bf16 -> f32, i8 x
        // i8 -> i32), within the same class.
        ok = actual.dims() == expected[i].dims() &&
             IsFloat(actual.element_type()) == IsFloat(expected[i].element_type()) &&
             !IsBool(actual.element_type());
      }
      if (!ok) {
        return Error(op, StrCat("result ", i, " has type ", actual.ToString(),
                                      ", expected ", expected[i].ToString()));
      }
    }
  } else {
    ACCY_RETURN_IF_ERROR(rule.check_given_results(op));
  }
  // Region count from the row, then the rule's region signatures.
  const int expected_regions = GetOpInfo(op.kind()).regions;
  if (expected_regions == kVariadic) {
    if (op.num_regions() == 0) return Error(op, "has no regions, expected at least one");
  } else if (op.num_regions() != expected_regions) {
    return Error(op, StrCat("has ", op.num_regions(), " regions, expected ", expected_regions));
  }
  if (op.num_regions() == 0) return absl::OkStatus();
  return rule.check_regions(op);
}

namespace {

// Walks a block checking ops, dominance (operands must be defined earlier in this block or in an
// enclosing one) and that a return comes last. `visible` holds the values defined so far in
// enclosing scopes. A missing return is reported by the caller: Verify for the function body,
// VerifyOperation (region signatures) for region blocks.
Status VerifyBlock(const Block& block, std::unordered_set<const Value*>& visible,
                   std::string_view where) {
  std::vector<const Value*> added;
  auto define = [&](const Value* v) {
    visible.insert(v);
    added.push_back(v);
  };
  for (int64_t i = 0; i < block.num_arguments(); ++i) define(block.argument(i));
  Status status = absl::OkStatus();
  const auto& ops = block.operations();
  for (size_t index = 0; index < ops.size() && status.ok(); ++index) {
    const Operation& op = *ops[index];
    for (int64_t i = 0; i < op.num_operands() && status.ok(); ++i) {
      if (!visible.count(op.operand(i))) {
        status = Error(op, StrCat("operand ", i, " is not defined before its use in ", where,
                                        " (or belongs to another function or region)"));
      }
    }
    if (!status.ok()) break;
    if (op.kind() == OpKind::kReturn && index + 1 != ops.size()) {
      status = Error(op, StrCat("return must be the last op of ", where));
      break;
    }
    status = VerifyOperation(op);
    for (int64_t r = 0; r < op.num_regions() && status.ok(); ++r) {
      for (const auto& nested : op.region(r)->blocks()) {
        status = VerifyBlock(*nested, visible, StrCat("a region of ", op.name()));
        if (!status.ok()) break;
      }
    }
    for (int64_t r = 0; r < op.num_results(); ++r) define(op.result(r));
  }
  for (const Value* v : added) visible.erase(v);
  return status;
}

}  // namespace

Status Verify(const Module& module) {
  for (const auto& function : module.functions()) {
    std::string where = StrCat("function '", function->name(), "'");
    const Block* entry = function->entry_block();
    if (function->body()->blocks().size() != 1 || entry == nullptr) {
      return absl::InvalidArgumentError(StrCat(where, " must have exactly one block"));
    }
    std::unordered_set<const Value*> visible;
    Status status = VerifyBlock(*entry, visible, where);
    if (!status.ok()) {
      return absl::Status(status.code(), StrCat(where, ": ", status.message()));
    }
    const Operation* ret = entry->terminator();
    if (ret == nullptr) {
      return absl::InvalidArgumentError(StrCat(where, " does not end with a return"));
    }
    const auto& results = function->result_types();
    if (ret->num_operands() != static_cast<int64_t>(results.size())) {
      return absl::InvalidArgumentError(StrCat(where, ": return has ", ret->num_operands(),
                                                     " values, expected ", results.size()));
    }
    for (size_t i = 0; i < results.size(); ++i) {
      if (ret->operand(static_cast<int64_t>(i))->type() != results[i]) {
        return absl::InvalidArgumentError(StrCat(
            where, ": return value ", i, " has type ",
            ret->operand(static_cast<int64_t>(i))->type().ToString(), ", expected ",
            results[i].ToString()));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace accy
