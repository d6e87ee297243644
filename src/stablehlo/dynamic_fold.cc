// StaticFormOf (dynamic_fold.h).
#include "src/stablehlo/dynamic_fold.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "src/stablehlo/attribute_mapping.h"
#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {
namespace {

std::string IntsText(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += StrCat(i == 0 ? "" : ", ", values[i]);
  return text + "]";
}

// The elements of a constant 1-D integer tensor operand `index` of `op`, named `role`.
StatusOr<std::vector<int64_t>> ConstantInts(const OpSyntax& op, const Value* value, size_t index,
                                            std::string_view role) {
  const SourceLoc loc = index < op.operands.size() ? op.operands[index].loc : op.loc;
  const TensorType& type = value->type();
  if (type.rank() != 1 || !IsInteger(type.element_type())) {
    return ErrorAt(loc, StrCat(op.name, "'s ", role, " has type ", type.ToString(),
                               ", expected a 1-D integer tensor (spec \"", op.name.substr(10),
                               "\")"));
  }
  const Operation* producer = value->defining_op();
  const DenseElements* dense =
      producer != nullptr && producer->kind() == OpKind::kConstant ? producer->GetDense("value")
                                                                   : nullptr;
  if (dense == nullptr) {
    return UnimplementedAt(loc, StrCat(op.name, ": its ", role, " is not a constant, which is "
                                       "not supported (accy shapes are static; the ", role,
                                       " must be a stablehlo.constant)"));
  }
  const int64_t width = ElementByteWidth(type.element_type());
  const bool is_signed = IsSigned(type.element_type());
  std::vector<int64_t> ints;
  for (int64_t i = 0; i < type.dims()[0]; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, dense->bytes.data() + i * width, static_cast<size_t>(width));
    const int shift = 64 - static_cast<int>(width) * 8;
    ints.push_back(is_signed && shift > 0
                       ? static_cast<int64_t>(bits << shift) >> shift
                       : static_cast<int64_t>(bits));
  }
  return ints;
}

Status CheckShape(const OpSyntax& op, const std::vector<int64_t>& shape, std::string_view role) {
  const std::vector<int64_t>& dims = op.result_types[0].dims();
  if (shape != dims) {
    return ErrorAt(op.loc, StrCat(op.name, "'s ", role, " is ", IntsText(shape), ", its result "
                                  "type ", op.result_types[0].ToString(), " (spec \"",
                                  op.name.substr(10), "\")"));
  }
  return absl::OkStatus();
}

Status CheckCounts(const OpSyntax& op, const std::vector<Value*>& operands, size_t count) {
  if (operands.size() != count || op.result_types.size() != 1) {
    return ErrorAt(op.loc, StrCat(op.name, " takes ", count, " operands and gives one result, "
                                  "found ", operands.size(), " and ", op.result_types.size()));
  }
  return absl::OkStatus();
}

// The checks of an op whose operand `index` (named `role`) is the result's shape: `count`
// operands, and that operand a constant equal to the result's dims.
Status CheckShapeOperand(const OpSyntax& op, const std::vector<Value*>& operands, size_t count,
                         size_t index, std::string_view role) {
  ACCY_RETURN_IF_ERROR(CheckCounts(op, operands, count));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                        ConstantInts(op, operands[index], index, role));
  return CheckShape(op, shape, role);
}

// `op` without the attributes named in `dropped`, for ConvertAttributes of the static op.
OpSyntax Without(const OpSyntax& op, std::initializer_list<std::string_view> dropped) {
  OpSyntax copy = op;
  std::erase_if(copy.attributes, [&](const NamedAttr& attribute) {
    for (std::string_view name : dropped) {
      if (attribute.name == name) return true;
    }
    return false;
  });
  return copy;
}

}  // namespace

bool IsFoldedDynamicOp(std::string_view name) {
  return name == "stablehlo.dynamic_iota" || name == "stablehlo.dynamic_reshape" ||
         name == "stablehlo.dynamic_broadcast_in_dim" || name == "stablehlo.dynamic_pad" ||
         name == "stablehlo.dynamic_gather" || name == "stablehlo.get_dimension_size";
}

StatusOr<StaticForm> StaticFormOf(const OpSyntax& op, const std::vector<Value*>& operands) {
  StaticForm form;
  const std::string_view name = std::string_view(op.name).substr(10);
  if (name == "dynamic_iota") {
    ACCY_RETURN_IF_ERROR(CheckShapeOperand(op, operands, 1, 0, "output_shape"));
    form.kind = OpKind::kIota;
    ACCY_ASSIGN_OR_RETURN(form.attributes, ConvertAttributes(form.kind, op));
    return form;
  }
  if (name == "dynamic_reshape") {
    ACCY_RETURN_IF_ERROR(CheckShapeOperand(op, operands, 2, 1, "output_shape"));
    form.kind = OpKind::kReshape;
    form.operands = {operands[0]};
    ACCY_ASSIGN_OR_RETURN(form.attributes, ConvertAttributes(form.kind, op));
    return form;
  }
  if (name == "dynamic_broadcast_in_dim") {
    ACCY_RETURN_IF_ERROR(CheckShapeOperand(op, operands, 2, 1, "output_dimensions"));
    // known_expanding_dimensions and known_nonexpanding_dimensions: operand dims, each named
    // at most once across both lists (spec "dynamic_broadcast_in_dim" C8).
    std::vector<int64_t> known;
    for (const char* name : {"known_expanding_dimensions", "known_nonexpanding_dimensions"}) {
      const AttrValue* value = op.attribute(name);
      if (value == nullptr) continue;
      ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ToInts(*value, name));
      for (int64_t dim : dims) {
        if (dim < 0 || dim >= operands[0]->type().rank()) {
          return ErrorAt(value->loc, StrCat(op.name, "'s ", name, " names dim ", dim, ", outside "
                                            "[0, ", operands[0]->type().rank(), ") of the "
                                            "operand ", operands[0]->type().ToString()));
        }
        if (std::find(known.begin(), known.end(), dim) != known.end()) {
          return ErrorAt(value->loc, StrCat(op.name, ": dim ", dim, " is named twice in "
                                            "known_expanding_dimensions and "
                                            "known_nonexpanding_dimensions (spec "
                                            "\"dynamic_broadcast_in_dim\" C8)"));
        }
        known.push_back(dim);
      }
    }
    form.kind = OpKind::kBroadcastInDim;
    form.operands = {operands[0]};
    // Hints about which dims expand; the static broadcast knows.
    ACCY_ASSIGN_OR_RETURN(
        form.attributes,
        ConvertAttributes(form.kind, Without(op, {"known_expanding_dimensions",
                                                  "known_nonexpanding_dimensions"})));
    return form;
  }
  if (name == "dynamic_pad") {
    ACCY_RETURN_IF_ERROR(CheckCounts(op, operands, 5));
    form.kind = OpKind::kPad;
    form.operands = {operands[0], operands[1]};
    ACCY_ASSIGN_OR_RETURN(form.attributes, ConvertAttributes(form.kind, op));
    static constexpr const char* kRoles[] = {"edge_padding_low", "edge_padding_high",
                                             "interior_padding"};
    for (size_t i = 0; i < 3; ++i) {
      ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> ints,
                            ConstantInts(op, operands[2 + i], 2 + i, kRoles[i]));
      form.attributes.push_back({kRoles[i], std::move(ints)});
    }
    return form;
  }
  if (name == "dynamic_gather") {
    ACCY_RETURN_IF_ERROR(CheckCounts(op, operands, 3));
    form.kind = OpKind::kGather;
    form.operands = {operands[0], operands[1]};
    ACCY_ASSIGN_OR_RETURN(form.attributes, ConvertAttributes(form.kind, op));
    ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                          ConstantInts(op, operands[2], 2, "slice_sizes"));
    form.attributes.push_back({"slice_sizes", std::move(sizes)});
    return form;
  }
  // get_dimension_size: the size of `dimension` as a tensor<i32> constant.
  ACCY_RETURN_IF_ERROR(CheckCounts(op, operands, 1));
  const AttrValue* dimension = op.attribute("dimension");
  const int64_t rank = operands[0]->type().rank();
  if (dimension == nullptr || dimension->kind != AttrValue::Kind::kInt ||
      dimension->int_value < 0 || dimension->int_value >= rank) {
    return ErrorAt(dimension == nullptr ? op.loc : dimension->loc,
                   StrCat("get_dimension_size needs a dimension in [0, ", rank, ") of ",
                          operands[0]->type().ToString(), " (spec \"get_dimension_size\" C1)"));
  }
  ACCY_ASSIGN_OR_RETURN(TensorType i32, TensorType::Create(ElementType::kI32, {}));
  if (op.result_types[0] != i32) {
    return ErrorAt(op.loc, StrCat("get_dimension_size gives tensor<i32>, the text says ",
                                  op.result_types[0].ToString(),
                                  " (spec \"get_dimension_size\")"));
  }
  const int64_t size = operands[0]->type().dims()[static_cast<size_t>(dimension->int_value)];
  if (size > INT32_MAX) {
    return ErrorAt(op.loc, StrCat("get_dimension_size: dimension size ", size,
                                  " does not fit tensor<i32>"));
  }
  const int32_t value = static_cast<int32_t>(size);
  DenseElements dense{i32, std::vector<uint8_t>(4)};
  std::memcpy(dense.bytes.data(), &value, 4);
  form.kind = OpKind::kConstant;
  form.attributes.push_back({"value", std::move(dense)});
  return form;
}

}  // namespace accy::stablehlo_internal
