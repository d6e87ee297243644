// Type rules of batch_norm_inference, batch_norm_training and batch_norm_grad (StableHLO spec
// sections of those names), each constraint numbered as in its section: (C1) 0 <= feature_index
// < rank(operand); (C2) one element type for every operand and result; the 1-D operands (scale,
// offset, mean, variance) have dim(operand, feature_index) elements (inference C3-C6, training
// C3-C4, grad C4-C5); grad's grad_output has the operand's shape (grad C3). Results: inference
// the operand's type; training (output, batch_mean, batch_var) and grad (grad_operand,
// grad_scale, grad_offset) the operand's type then two 1-D tensors of the feature size. Real
// float types only (the op table's kFloat; quantized types are not accy types).
#include <string>
#include <variant>

#include "src/ir/type_inference.h"
#include "src/util/str_cat.h"

namespace accy::ir_internal {
namespace {

// The operand names of each op, in order (spec "Inputs").
std::vector<std::string_view> OperandNames(OpKind kind) {
  switch (kind) {
    case OpKind::kBatchNormInference:
      return {"operand", "scale", "offset", "mean", "variance"};
    case OpKind::kBatchNormTraining:
      return {"operand", "scale", "offset"};
    default:
      return {"operand", "scale", "mean", "variance", "grad_output"};
  }
}

}  // namespace

StatusOr<std::vector<TensorType>> InferBatchNorm(OpKind kind,
                                                 std::span<const TensorType> operands,
                                                 std::span<const NamedAttribute> attributes) {
  const std::string_view op = OpName(kind);
  auto error = [&](std::string_view message) {
    return absl::InvalidArgumentError(StrCat(op, ": ", message));
  };
  const std::vector<std::string_view> names = OperandNames(kind);
  if (operands.size() != names.size()) {
    return error(StrCat("expected ", names.size(), " operands, got ", operands.size()));
  }
  AttributeView attrs(attributes);
  const AttributeValue* epsilon = attrs.Find("epsilon");
  if (epsilon == nullptr) return error("missing attribute epsilon");
  if (!std::holds_alternative<double>(*epsilon)) {
    return WrongAttributeKind(op, "epsilon", "a float", *epsilon);
  }
  const AttributeValue* feature = attrs.Find("feature_index");
  if (feature == nullptr) return error("missing attribute feature_index");
  if (!std::holds_alternative<int64_t>(*feature)) {
    return WrongAttributeKind(op, "feature_index", "an integer", *feature);
  }
  const TensorType& operand = operands[0];
  const int64_t feature_index = std::get<int64_t>(*feature);
  if (feature_index < 0 || feature_index >= operand.rank()) {
    return error(StrCat("feature_index ", feature_index, " is outside [0, ", operand.rank(),
                        ") of operand ", operand.ToString(), " (C1)"));
  }
  if (!ElementClassContains(GetOpInfo(kind).element_classes, operand.element_type())) {
    return error(StrCat("operand has type ", operand.ToString(),
                        ", expected a floating-point element type"));
  }
  const int64_t features = operand.dims()[static_cast<size_t>(feature_index)];
  ACCY_ASSIGN_OR_RETURN(TensorType vector,
                        TensorType::Create(operand.element_type(), {features}));
  for (size_t i = 1; i < operands.size(); ++i) {
    const bool full = kind == OpKind::kBatchNormGrad && names[i] == "grad_output";
    const TensorType& expected = full ? operand : vector;
    if (operands[i].element_type() != operand.element_type()) {
      return error(StrCat(names[i], " has type ", operands[i].ToString(), ", operand ",
                          operand.ToString(), ": one element type for all (C2)"));
    }
    if (operands[i] != expected) {
      return error(StrCat(names[i], " has type ", operands[i].ToString(), ", expected ",
                          expected.ToString(),
                          full ? " (the operand's shape)"
                               : StrCat(" (dim ", feature_index, " of the operand, the "
                                        "feature_index)")));
    }
  }
  if (kind == OpKind::kBatchNormInference) return std::vector<TensorType>{operand};
  return std::vector<TensorType>{operand, vector, vector};
}

}  // namespace accy::ir_internal
