// Result type inference and operand rules for elementwise, shape, reduction and control-flow
// ops. Each rule cites the StableHLO spec constraint it implements (spec.md, section = op name).
#include "src/ir/type_inference.h"
#include "src/ir/type_rules.h"

#include <algorithm>
#include <set>

#include "src/util/str_cat.h"
#include "absl/strings/str_join.h"

namespace accy::ir_internal {
namespace {

Status Error(std::string_view op, std::string_view message) {
  return absl::InvalidArgumentError(StrCat(op, ": ", message));
}

std::string TypeStr(const TensorType& type) { return type.ToString(); }

StatusOr<TensorType> MakeType(std::string_view op, ElementType element_type,
                              std::vector<int64_t> dims) {
  auto type = TensorType::Create(element_type, std::move(dims));
  if (!type.ok()) return Error(op, StrCat("result type is invalid: ", type.status().message()));
  return type;
}

Status CheckOperandCount(std::string_view op, std::span<const TensorType> operands,
                         size_t expected) {
  if (operands.size() != expected) {
    return Error(op, StrCat("expected ", expected, " operand", expected == 1 ? "" : "s",
                                  ", got ", operands.size()));
  }
  return absl::OkStatus();
}

// "integer or floating-point", as the spec names the element types of `classes`.
std::string ClassNames(ElementClass classes) {
  auto has = [classes](ElementClass c) {
    return (static_cast<unsigned>(classes) & static_cast<unsigned>(c)) == static_cast<unsigned>(c);
  };
  std::vector<std::string> names;
  if (has(ElementClass::kBool)) names.push_back("i1");
  if (has(ElementClass::kInteger)) {
    names.push_back("integer");
  } else if (has(ElementClass::kSigned)) {
    names.push_back("signed integer");
  } else if (has(ElementClass::kUnsigned)) {
    names.push_back("unsigned integer");
  }
  if (has(ElementClass::kFloat)) names.push_back("floating-point");
  return absl::StrJoin(names, " or ");
}

Status CheckElementClass(OpKind kind, std::string_view what, const TensorType& type) {
  // The op table's element classes (accy/ops.def): the one copy the reference evaluator reads too.
  const ElementClass classes = GetOpInfo(kind).element_classes;
  if (!ElementClassContains(classes, type.element_type())) {
    const std::string names = ClassNames(classes);
    // "an integer", "an i1 or integer", "a floating-point".
    const std::string_view article =
        std::string_view("aeiou").find(names.front()) != std::string_view::npos ? "an" : "a";
    return Error(OpName(kind), StrCat(what, " has type ", TypeStr(type), ", expected ", article,
                                      " ", names, " element type"));
  }
  return absl::OkStatus();
}

Status CheckUniqueInRange(std::string_view op, std::string_view attr,
                          std::span<const int64_t> dims, int64_t rank) {
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return Error(op, StrCat(attr, " ", DimsToString(dims), ": dimension ", d,
                                    " is out of range [0, ", rank, ")"));
    }
    if (!seen.insert(d).second) {
      return Error(op, StrCat(attr, " ", DimsToString(dims), ": dimension ", d,
                                    " appears twice"));
    }
  }
  return absl::OkStatus();
}

// reduce_precision's exponent_bits (>= 1) and mantissa_bits (>= 0), spec "reduce_precision"
// constraints (C2, C3); at most 64 each so the bit masks stay defined.
Status CheckReducePrecisionBits(std::string_view op, const AttributeView& attrs) {
  for (const char* name : {"exponent_bits", "mantissa_bits"}) {
    const AttributeValue* value = attrs.Find(name);
    if (value == nullptr) return Error(op, StrCat("missing int attribute ", name));
    if (!std::holds_alternative<int64_t>(*value)) {
      return WrongAttributeKind(op, name, "an int", *value);
    }
    const int64_t bits = std::get<int64_t>(*value);
    const int64_t low = std::string_view(name) == "exponent_bits" ? 1 : 0;
    if (bits < low || bits > 64) {
      return Error(op, StrCat(name, " is ", bits, ", expected ", low, " to 64"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<std::vector<TensorType>> InferUnary(OpKind kind, std::span<const TensorType> operands,
                                             const AttributeView& attrs) {
  std::string_view op = OpName(kind);
  ACCY_RETURN_IF_ERROR(CheckOperandCount(op, operands, 1));
  ACCY_RETURN_IF_ERROR(CheckElementClass(kind, "operand 0", operands[0]));
  if (kind == OpKind::kReducePrecision) ACCY_RETURN_IF_ERROR(CheckReducePrecisionBits(op, attrs));
  if (kind == OpKind::kIsFinite || kind == OpKind::kIsInf || kind == OpKind::kIsPosInf ||
      kind == OpKind::kIsNegInf) {
    return std::vector<TensorType>{operands[0].WithElementType(ElementType::kI1)};
  }
  return std::vector<TensorType>{operands[0]};
}

StatusOr<std::vector<TensorType>> InferBinary(OpKind kind, std::span<const TensorType> operands,
                                              const AttributeView& attrs) {
  std::string_view op = OpName(kind);
  ACCY_RETURN_IF_ERROR(CheckOperandCount(op, operands, 2));
  if (operands[0] != operands[1]) {
    return Error(op, StrCat("operand 1 has type ", TypeStr(operands[1]), ", expected ",
                                  TypeStr(operands[0]), " (operands must have the same type)"));
  }
  ACCY_RETURN_IF_ERROR(CheckElementClass(kind, "operand 0", operands[0]));
  if (kind != OpKind::kCompare) return std::vector<TensorType>{operands[0]};

  const AttributeValue* direction = attrs.Find("comparison_direction");
  if (direction == nullptr) return Error(op, "missing string attribute comparison_direction");
  if (!std::holds_alternative<std::string>(*direction)) {
    return WrongAttributeKind(op, "comparison_direction", "a string", *direction);
  }
  const std::string& dir = std::get<std::string>(*direction);
  static const std::set<std::string> kDirections = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  if (!kDirections.count(dir)) {
    return Error(op, StrCat("comparison_direction '", dir,
                                  "' is not one of EQ, NE, GE, GT, LE, LT"));
  }
  if (const AttributeValue* compare_type = attrs.Find("compare_type")) {
    if (!std::holds_alternative<std::string>(*compare_type)) {
      return WrongAttributeKind(op, "compare_type", "a string", *compare_type);
    }
    const std::string& ct = std::get<std::string>(*compare_type);
    ElementType et = operands[0].element_type();
    bool ok = false;
    if (ct == "FLOAT" || ct == "TOTALORDER") {
      ok = IsFloat(et);
    } else if (ct == "SIGNED") {
      ok = IsSigned(et);
    } else if (ct == "UNSIGNED") {
      ok = IsUnsigned(et) || IsBool(et);
    } else {
      return Error(op, StrCat("compare_type '", ct,
                                    "' is not one of FLOAT, TOTALORDER, SIGNED, UNSIGNED"));
    }
    if (!ok) {
      return Error(op, StrCat("compare_type ", ct, " does not match element type ",
                                    MlirElementTypeName(et)));
    }
  }
  return std::vector<TensorType>{operands[0].WithElementType(ElementType::kI1)};
}

StatusOr<std::vector<TensorType>> InferSelect(std::span<const TensorType> operands) {
  ACCY_RETURN_IF_ERROR(CheckOperandCount("select", operands, 3));
  const TensorType& pred = operands[0];
  if (pred.element_type() != ElementType::kI1) {
    return Error("select", StrCat("pred has type ", TypeStr(pred), ", expected i1 elements"));
  }
  if (operands[1] != operands[2]) {
    return Error("select", StrCat("on_false has type ", TypeStr(operands[2]),
                                        ", expected ", TypeStr(operands[1]),
                                        " (on_true and on_false must have the same type)"));
  }
  if (pred.rank() != 0 && pred.dims() != operands[1].dims()) {
    return Error("select", StrCat("pred has type ", TypeStr(pred),
                                        ", expected rank 0 or the shape of ", TypeStr(operands[1])));
  }
  return std::vector<TensorType>{operands[1]};
}

StatusOr<std::vector<TensorType>> InferClamp(std::span<const TensorType> operands) {
  ACCY_RETURN_IF_ERROR(CheckOperandCount("clamp", operands, 3));
  const TensorType& x = operands[1];
  for (int i : {0, 2}) {
    const TensorType& bound = operands[static_cast<size_t>(i)];
    std::string_view name = i == 0 ? "min" : "max";
    if (bound.element_type() != x.element_type() || (bound.rank() != 0 && bound.dims() != x.dims())) {
      return Error("clamp", StrCat(name, " has type ", TypeStr(bound), ", expected ",
                                         MlirElementTypeName(x.element_type()),
                                         " elements and rank 0 or the shape of ", TypeStr(x)));
    }
  }
  ACCY_RETURN_IF_ERROR(CheckElementClass(OpKind::kClamp, "operand", x));
  return std::vector<TensorType>{x};
}

StatusOr<std::vector<TensorType>> InferTranspose(std::span<const TensorType> operands,
                                                 const AttributeView& attrs) {
  ACCY_RETURN_IF_ERROR(CheckOperandCount("transpose", operands, 1));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> perm, attrs.Ints("transpose", "permutation"));
  const TensorType& x = operands[0];
  if (static_cast<int64_t>(perm.size()) != x.rank()) {
    return Error("transpose", StrCat("permutation ", DimsToString(perm), " has ", perm.size(),
                                           " entries, expected the operand rank ", x.rank()));
  }
  ACCY_RETURN_IF_ERROR(CheckUniqueInRange("transpose", "permutation", perm, x.rank()));
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(x.dim(p));
  ACCY_ASSIGN_OR_RETURN(TensorType result, MakeType("transpose", x.element_type(), dims));
  return std::vector<TensorType>{result};
}

StatusOr<std::vector<TensorType>> InferSlice(std::span<const TensorType> operands,
                                             const AttributeView& attrs) {
  ACCY_RETURN_IF_ERROR(CheckOperandCount("slice", operands, 1));
  const TensorType& x = operands[0];
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> start, attrs.Ints("slice", "start_indices"));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> limit, attrs.Ints("slice", "limit_indices"));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> strides, attrs.OptionalInts("slice", "strides"));
  if (strides.empty() && x.rank() > 0) strides.assign(static_cast<size_t>(x.rank()), 1);
  if (static_cast<int64_t>(start.size()) != x.rank() || limit.size() != start.size() ||
      strides.size() != start.size()) {
    return Error("slice", StrCat("start_indices ", DimsToString(start), ", limit_indices ",
                                       DimsToString(limit), " and strides ", DimsToString(strides),
                                       " must each have one entry per operand dim (rank ",
                                       x.rank(), ")"));
  }
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x.rank(); ++d) {
    size_t i = static_cast<size_t>(d);
    if (start[i] < 0 || start[i] > limit[i] || limit[i] > x.dim(d)) {
      return Error("slice", StrCat("dim ", d, ": need 0 <= start (", start[i],
                                         ") <= limit (", limit[i], ") <= size (", x.dim(d), ")"));
    }
    if (strides[i] <= 0) {
      return Error("slice", StrCat("dim ", d, ": stride ", strides[i], " must be positive"));
    }
    // ceil(size / stride) without overflow: size + stride - 1 overflows for a huge stride.
    const int64_t size = limit[i] - start[i];
    dims.push_back(size == 0 ? 0 : (size - 1) / strides[i] + 1);
  }
  ACCY_ASSIGN_OR_RETURN(TensorType result, MakeType("slice", x.element_type(), dims));
  return std::vector<TensorType>{result};
}

StatusOr<std::vector<TensorType>> InferPad(std::span<const TensorType> operands,
                                           const AttributeView& attrs) {
  ACCY_RETURN_IF_ERROR(CheckOperandCount("pad", operands, 2));
  const TensorType& x = operands[0];
  const TensorType& value = operands[1];
  if (value.rank() != 0 || value.element_type() != x.element_type()) {
    return Error("pad", StrCat("padding_value has type ", TypeStr(value),
                                     ", expected tensor<", MlirElementTypeName(x.element_type()),
                                     ">"));
  }
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> low, attrs.Ints("pad", "edge_padding_low"));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> high, attrs.Ints("pad", "edge_padding_high"));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> interior, attrs.Ints("pad", "interior_padding"));
  if (static_cast<int64_t>(low.size()) != x.rank() || high.size() != low.size() ||
      interior.size() != low.size()) {
    return Error("pad", StrCat("edge_padding_low, edge_padding_high and interior_padding must "
                                     "each have one entry per operand dim (rank ",
                                     x.rank(), ")"));
  }
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x.rank(); ++d) {
    size_t i = static_cast<size_t>(d);
    if (interior[i] < 0) {
      return Error("pad", StrCat("dim ", d, ": interior padding ", interior[i],
                                       " must be non-negative"));
    }
    // size = low + high + dim + max(dim - 1, 0) * interior, with overflow checks.
    int64_t gaps = std::max<int64_t>(x.dim(d) - 1, 0), size = 0;
    if (!CheckedMul(gaps, interior[i], &size) || !CheckedAdd(size, x.dim(d), &size) ||
        !CheckedAdd(size, low[i], &size) || !CheckedAdd(size, high[i], &size)) {
      return Error("pad", StrCat("dim ", d, ": padded size overflows 64 bits"));
    }
    if (size < 0) {
      return Error("pad", StrCat("dim ", d, ": padded size ", size,
                                       " is negative (negative padding larger than the dim)"));
    }
    dims.push_back(size);
  }
  ACCY_ASSIGN_OR_RETURN(TensorType result, MakeType("pad", x.element_type(), dims));
  return std::vector<TensorType>{result};
}

StatusOr<std::vector<TensorType>> InferConcatenate(std::span<const TensorType> operands,
                                                   const AttributeView& attrs) {
  if (operands.empty()) return Error("concatenate", "expected at least 1 operand, got 0");
  ACCY_ASSIGN_OR_RETURN(int64_t dim, attrs.Int("concatenate", "dimension"));
  const TensorType& first = operands[0];
  if (dim < 0 || dim >= first.rank()) {
    return Error("concatenate", StrCat("dimension ", dim, " is out of range [0, ",
                                             first.rank(), ")"));
  }
  std::vector<int64_t> dims = first.dims();
  dims[static_cast<size_t>(dim)] = 0;
  for (size_t i = 0; i < operands.size(); ++i) {
    const TensorType& t = operands[i];
    bool same = t.element_type() == first.element_type() && t.rank() == first.rank();
    for (int64_t d = 0; same && d < t.rank(); ++d) same = d == dim || t.dim(d) == first.dim(d);
    if (!same) {
      return Error("concatenate", StrCat("operand ", i, " has type ", TypeStr(t),
                                               ", expected the type of operand 0 (",
                                               TypeStr(first), ") except in dimension ", dim));
    }
    if (!CheckedAdd(dims[static_cast<size_t>(dim)], t.dim(dim), &dims[static_cast<size_t>(dim)])) {
      return Error("concatenate", "result size overflows 64 bits");
    }
  }
  ACCY_ASSIGN_OR_RETURN(TensorType result, MakeType("concatenate", first.element_type(), dims));
  return std::vector<TensorType>{result};
}

StatusOr<std::vector<TensorType>> InferReverse(std::span<const TensorType> operands,
                                               const AttributeView& attrs) {
  ACCY_RETURN_IF_ERROR(CheckOperandCount("reverse", operands, 1));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> dims, attrs.Ints("reverse", "dimensions"));
  ACCY_RETURN_IF_ERROR(CheckUniqueInRange("reverse", "dimensions", dims, operands[0].rank()));
  return std::vector<TensorType>{operands[0]};
}

namespace {

Status CheckStartIndices(std::string_view op, std::span<const TensorType> indices, int64_t rank) {
  if (static_cast<int64_t>(indices.size()) != rank) {
    return Error(op, StrCat("got ", indices.size(), " start indices, expected one per operand "
                                  "dim (", rank, ")"));
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i].rank() != 0 || !IsInteger(indices[i].element_type()) ||
        indices[i].element_type() != indices[0].element_type()) {
      return Error(op, StrCat("start index ", i, " has type ", TypeStr(indices[i]),
                                    ", expected a rank-0 integer tensor of the same type as "
                                    "start index 0"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<std::vector<TensorType>> InferDynamicSlice(std::span<const TensorType> operands,
                                                    const AttributeView& attrs) {
  if (operands.empty()) return Error("dynamic_slice", "expected an operand");
  const TensorType& x = operands[0];
  ACCY_RETURN_IF_ERROR(CheckStartIndices("dynamic_slice", operands.subspan(1), x.rank()));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, attrs.Ints("dynamic_slice", "slice_sizes"));
  if (static_cast<int64_t>(sizes.size()) != x.rank()) {
    return Error("dynamic_slice", StrCat("slice_sizes ", DimsToString(sizes),
                                               " must have one entry per operand dim (rank ",
                                               x.rank(), ")"));
  }
  for (int64_t d = 0; d < x.rank(); ++d) {
    int64_t s = sizes[static_cast<size_t>(d)];
    if (s < 0 || s > x.dim(d)) {
      return Error("dynamic_slice", StrCat("slice size ", s, " of dim ", d,
                                                 " is outside [0, ", x.dim(d), "]"));
    }
  }
  ACCY_ASSIGN_OR_RETURN(TensorType result, MakeType("dynamic_slice", x.element_type(), sizes));
  return std::vector<TensorType>{result};
}

StatusOr<std::vector<TensorType>> InferDynamicUpdateSlice(std::span<const TensorType> operands) {
  if (operands.size() < 2) return Error("dynamic_update_slice", "expected operand and update");
  const TensorType& x = operands[0];
  const TensorType& update = operands[1];
  bool ok = update.element_type() == x.element_type() && update.rank() == x.rank();
  for (int64_t d = 0; ok && d < x.rank(); ++d) ok = update.dim(d) <= x.dim(d);
  if (!ok) {
    return Error("dynamic_update_slice",
                 StrCat("update has type ", TypeStr(update), ", expected the element type "
                              "and rank of ", TypeStr(x), " and no dim larger than it"));
  }
  ACCY_RETURN_IF_ERROR(CheckStartIndices("dynamic_update_slice", operands.subspan(2), x.rank()));
  return std::vector<TensorType>{x};
}

StatusOr<std::vector<TensorType>> InferReduce(std::span<const TensorType> operands,
                                              const AttributeView& attrs) {
  if (operands.size() < 2 || operands.size() % 2 != 0) {
    return Error("reduce", StrCat("expected N inputs and N init values (an even count >= "
                                        "2), got ", operands.size(), " operands"));
  }
  size_t n = operands.size() / 2;
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> dims, attrs.Ints("reduce", "dimensions"));
  const TensorType& first = operands[0];
  ACCY_RETURN_IF_ERROR(CheckUniqueInRange("reduce", "dimensions", dims, first.rank()));
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < first.rank(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(first.dim(d));
  }
  std::vector<TensorType> results;
  for (size_t i = 0; i < n; ++i) {
    const TensorType& input = operands[i];
    const TensorType& init = operands[n + i];
    if (input.dims() != first.dims()) {
      return Error("reduce", StrCat("input ", i, " has type ", TypeStr(input),
                                          ", expected the shape of input 0 (", TypeStr(first), ")"));
    }
    if (init.rank() != 0 || init.element_type() != input.element_type()) {
      return Error("reduce", StrCat("init value ", i, " has type ", TypeStr(init),
                                          ", expected tensor<",
                                          MlirElementTypeName(input.element_type()), ">"));
    }
    ACCY_ASSIGN_OR_RETURN(TensorType result, MakeType("reduce", init.element_type(), kept));
    results.push_back(result);
  }
  return results;
}

StatusOr<std::vector<TensorType>> InferCumsum(std::span<const TensorType> operands,
                                              const AttributeView& attrs) {
  ACCY_RETURN_IF_ERROR(CheckOperandCount("cumsum", operands, 1));
  ACCY_ASSIGN_OR_RETURN(int64_t dim, attrs.Int("cumsum", "dimension"));
  const TensorType& x = operands[0];
  if (dim < 0 || dim >= x.rank()) {
    return Error("cumsum", StrCat("dimension ", dim, " is out of range [0, ", x.rank(), ")"));
  }
  ACCY_RETURN_IF_ERROR(CheckElementClass(OpKind::kCumsum, "operand", x));
  return std::vector<TensorType>{x};
}

std::string DimsToString(std::span<const int64_t> dims) {
  return StrCat("[", absl::StrJoin(dims, ", "), "]");
}

std::string_view AttributeKindName(const AttributeValue& value) {
  struct Namer {
    std::string_view operator()(int64_t) const { return "an integer"; }
    std::string_view operator()(double) const { return "a float"; }
    std::string_view operator()(bool) const { return "a bool"; }
    std::string_view operator()(const std::string&) const { return "a string"; }
    std::string_view operator()(const std::vector<int64_t>&) const { return "a list of integers"; }
    std::string_view operator()(const std::vector<std::string>&) const {
      return "a list of strings";
    }
    std::string_view operator()(const DenseElements&) const { return "a dense tensor"; }
  };
  return std::visit(Namer{}, value);
}

Status WrongAttributeKind(std::string_view op, std::string_view name, std::string_view expected,
                          const AttributeValue& value) {
  return Error(op, StrCat("attribute ", name, " has the wrong kind: expected ", expected,
                          ", got ", AttributeKindName(value)));
}

const AttributeValue* AttributeView::Find(std::string_view name) const {
  for (const NamedAttribute& attr : attributes_) {
    if (attr.name == name) return &attr.value;
  }
  return nullptr;
}

StatusOr<std::vector<int64_t>> AttributeView::Ints(std::string_view op,
                                                   std::string_view name) const {
  const AttributeValue* value = Find(name);
  if (value == nullptr) return Error(op, StrCat("missing attribute ", name));
  if (!std::holds_alternative<std::vector<int64_t>>(*value)) {
    return WrongAttributeKind(op, name, "a list of integers", *value);
  }
  return std::get<std::vector<int64_t>>(*value);
}

StatusOr<std::vector<int64_t>> AttributeView::OptionalInts(std::string_view op,
                                                           std::string_view name) const {
  if (Find(name) == nullptr) return std::vector<int64_t>{};
  return Ints(op, name);
}

StatusOr<int64_t> AttributeView::Int(std::string_view op, std::string_view name) const {
  const AttributeValue* value = Find(name);
  if (value == nullptr) return Error(op, StrCat("missing attribute ", name));
  if (!std::holds_alternative<int64_t>(*value)) {
    return WrongAttributeKind(op, name, "an integer", *value);
  }
  return std::get<int64_t>(*value);
}

StatusOr<bool> AttributeView::OptionalBool(std::string_view op, std::string_view name,
                                           bool fallback) const {
  const AttributeValue* value = Find(name);
  if (value == nullptr) return fallback;
  if (!std::holds_alternative<bool>(*value)) {
    return WrongAttributeKind(op, name, "a bool", *value);
  }
  return std::get<bool>(*value);
}

StatusOr<std::optional<std::vector<TensorType>>> InferResultTypes(
    OpKind kind, std::span<const TensorType> operand_types,
    std::span<const NamedAttribute> attributes) {
  using Result = std::optional<std::vector<TensorType>>;
  if (static_cast<size_t>(kind) >= static_cast<size_t>(kNumOpKinds)) {
    return absl::InvalidArgumentError(StrCat("unknown op kind ", static_cast<int>(kind)));
  }
  const TypeRule& rule = GetTypeRule(kind);
  if (rule.infer == nullptr) return Result(std::nullopt);  // given: rule.check_given_results
  ACCY_ASSIGN_OR_RETURN(std::vector<TensorType> types,
                        rule.infer(kind, operand_types, attributes));
  return Result(std::move(types));
}

}  // namespace accy::ir_internal
