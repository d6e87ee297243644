// Type rules of the window ops (type_inference.h): reduce_window and select_and_scatter, each
// constraint numbered as in its StableHLO spec section. The window arithmetic is
// window_geometry.h's; region signatures are checked by the verifier.
#include "src/ir/type_inference.h"
#include "src/ir/window_geometry.h"
#include "src/util/str_cat.h"

namespace accy::ir_internal {
namespace {

Status Error(std::string_view op, std::string_view message) {
  return absl::InvalidArgumentError(StrCat(op, ": ", message));
}

}  // namespace

StatusOr<std::vector<TensorType>> InferReduceWindow(std::span<const TensorType> operands,
                                                    std::span<const NamedAttribute> attributes) {
  constexpr std::string_view kOp = "reduce_window";
  // (C1) 0 < size(inputs) = size(init_values) = size(results).
  if (operands.size() < 2 || operands.size() % 2 != 0) {
    return Error(kOp, StrCat("expected N inputs and N init values (an even count >= 2), got ",
                             operands.size(), " operands"));
  }
  const size_t n = operands.size() / 2;
  const TensorType& first = operands[0];
  for (size_t i = 0; i < n; ++i) {
    const TensorType& input = operands[i];
    const TensorType& init = operands[n + i];
    // (C2) same_shape(inputs...).
    if (input.dims() != first.dims()) {
      return Error(kOp, StrCat("input ", i, " has type ", input.ToString(),
                               ", expected the shape of input 0 (", first.ToString(), ")"));
    }
    // (C3) element_type(inputs...) = element_type(init_values...), init values rank 0.
    if (init.rank() != 0 || init.element_type() != input.element_type()) {
      return Error(kOp, StrCat("init value ", i, " has type ", init.ToString(), ", expected tensor<",
                               MlirElementTypeName(input.element_type()), ">"));
    }
  }
  // (C4)-(C12): the window attributes.
  ACCY_ASSIGN_OR_RETURN(WindowGeometry geometry,
                        ReadWindowGeometry(kOp, attributes, first.dims(), true));
  // (C14)-(C16) shape(results...) = num_windows, element types of the inputs.
  const std::vector<int64_t> windows = geometry.NumWindows(first.dims());
  std::vector<TensorType> results;
  for (size_t i = 0; i < n; ++i) {
    auto type = TensorType::Create(operands[i].element_type(), windows);
    if (!type.ok()) return Error(kOp, StrCat("result type is invalid: ", type.status().message()));
    results.push_back(*std::move(type));
  }
  return results;
}

StatusOr<std::vector<TensorType>> InferSelectAndScatter(
    std::span<const TensorType> operands, std::span<const NamedAttribute> attributes) {
  constexpr std::string_view kOp = "select_and_scatter";
  if (operands.size() != 3) {
    return Error(kOp, StrCat("expected 3 operands (operand, source, init_value), got ",
                             operands.size()));
  }
  const TensorType& operand = operands[0];
  const TensorType& source = operands[1];
  const TensorType& init = operands[2];
  // (C1) element_type(operand) = element_type(source).
  if (source.element_type() != operand.element_type()) {
    return Error(kOp, StrCat("source has type ", source.ToString(),
                             ", expected the element type of operand (", operand.ToString(), ")"));
  }
  // (C3) element_type(init_value) = element_type(operand), rank 0.
  if (init.rank() != 0 || init.element_type() != operand.element_type()) {
    return Error(kOp, StrCat("init_value has type ", init.ToString(), ", expected tensor<",
                             MlirElementTypeName(operand.element_type()), ">"));
  }
  // (C4)-(C8): the window attributes (no dilations).
  ACCY_ASSIGN_OR_RETURN(WindowGeometry geometry,
                        ReadWindowGeometry(kOp, attributes, operand.dims(), false));
  // (C2) shape(source) = num_windows.
  const std::vector<int64_t> windows = geometry.NumWindows(operand.dims());
  if (source.dims() != windows) {
    return Error(kOp, StrCat("source has type ", source.ToString(), ", expected the shape ",
                             DimsToString(windows), " of the windows over operand ",
                             operand.ToString()));
  }
  // (C11)-(C12) the result has the operand's type.
  return std::vector<TensorType>{operand};
}

}  // namespace accy::ir_internal
