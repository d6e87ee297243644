// convolution attributes <-> ConvolutionSpec (convolution_attributes.h).
#include "src/ir/convolution_attributes.h"

#include <string>
#include <utility>
#include <variant>

#include "src/util/str_cat.h"

namespace accy::ir_internal {
namespace {

constexpr std::string_view kOp = "convolution";

StatusOr<int64_t> OptionalInt(const AttributeView& attrs, std::string_view name, int64_t fallback) {
  if (attrs.Find(name) == nullptr) return fallback;
  return attrs.Int(kOp, name);
}

}  // namespace

StatusOr<ConvolutionSpec> ReadConvolutionSpec(const AttributeView& attrs) {
  ConvolutionSpec spec;
  ConvDimensionNumbers& dn = spec.dimension_numbers;
  ACCY_ASSIGN_OR_RETURN(dn.input_batch_dimension, attrs.Int(kOp, "input_batch_dimension"));
  ACCY_ASSIGN_OR_RETURN(dn.input_feature_dimension, attrs.Int(kOp, "input_feature_dimension"));
  ACCY_ASSIGN_OR_RETURN(dn.input_spatial_dimensions, attrs.Ints(kOp, "input_spatial_dimensions"));
  ACCY_ASSIGN_OR_RETURN(dn.kernel_input_feature_dimension,
                        attrs.Int(kOp, "kernel_input_feature_dimension"));
  ACCY_ASSIGN_OR_RETURN(dn.kernel_output_feature_dimension,
                        attrs.Int(kOp, "kernel_output_feature_dimension"));
  ACCY_ASSIGN_OR_RETURN(dn.kernel_spatial_dimensions, attrs.Ints(kOp, "kernel_spatial_dimensions"));
  ACCY_ASSIGN_OR_RETURN(dn.output_batch_dimension, attrs.Int(kOp, "output_batch_dimension"));
  ACCY_ASSIGN_OR_RETURN(dn.output_feature_dimension, attrs.Int(kOp, "output_feature_dimension"));
  ACCY_ASSIGN_OR_RETURN(dn.output_spatial_dimensions, attrs.Ints(kOp, "output_spatial_dimensions"));
  ACCY_ASSIGN_OR_RETURN(spec.window_strides, attrs.OptionalInts(kOp, "window_strides"));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> padding, attrs.OptionalInts(kOp, "padding"));
  if (padding.size() % 2 != 0) {
    return absl::InvalidArgumentError(
        StrCat("convolution: padding ", DimsToString(padding),
               " must hold (low, high) pairs: an even number of values"));
  }
  for (size_t i = 0; i < padding.size(); i += 2) {
    spec.padding.emplace_back(padding[i], padding[i + 1]);
  }
  ACCY_ASSIGN_OR_RETURN(spec.lhs_dilation, attrs.OptionalInts(kOp, "lhs_dilation"));
  ACCY_ASSIGN_OR_RETURN(spec.rhs_dilation, attrs.OptionalInts(kOp, "rhs_dilation"));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> reversal, attrs.OptionalInts(kOp, "window_reversal"));
  for (int64_t flag : reversal) {
    if (flag != 0 && flag != 1) {
      return absl::InvalidArgumentError(
          StrCat("convolution: window_reversal ", DimsToString(reversal), " must hold 0 or 1"));
    }
    spec.window_reversal.push_back(flag != 0);
  }
  ACCY_ASSIGN_OR_RETURN(spec.feature_group_count, OptionalInt(attrs, "feature_group_count", 1));
  ACCY_ASSIGN_OR_RETURN(spec.batch_group_count, OptionalInt(attrs, "batch_group_count", 1));
  if (const AttributeValue* precision = attrs.Find("precision_config")) {
    if (!std::holds_alternative<std::vector<std::string>>(*precision)) {
      return WrongAttributeKind(kOp, "precision_config", "a list of strings", *precision);
    }
    spec.precision_config = std::get<std::vector<std::string>>(*precision);
  }
  return spec;
}

void FillConvolutionDefaults(ConvolutionSpec* spec, int64_t spatial_rank) {
  if (spatial_rank < 0) return;  // rank below 2: InferConvolution reports it
  const size_t n = static_cast<size_t>(spatial_rank);
  if (spec->window_strides.empty()) spec->window_strides.assign(n, 1);
  if (spec->padding.empty()) spec->padding.assign(n, {0, 0});
  if (spec->lhs_dilation.empty()) spec->lhs_dilation.assign(n, 1);
  if (spec->rhs_dilation.empty()) spec->rhs_dilation.assign(n, 1);
  if (spec->window_reversal.empty()) spec->window_reversal.assign(n, false);
}

std::vector<NamedAttribute> ConvolutionAttributes(const ConvolutionSpec& spec) {
  const ConvDimensionNumbers& dn = spec.dimension_numbers;
  std::vector<NamedAttribute> attrs = {
      {"input_batch_dimension", dn.input_batch_dimension},
      {"input_feature_dimension", dn.input_feature_dimension},
      {"input_spatial_dimensions", dn.input_spatial_dimensions},
      {"kernel_input_feature_dimension", dn.kernel_input_feature_dimension},
      {"kernel_output_feature_dimension", dn.kernel_output_feature_dimension},
      {"kernel_spatial_dimensions", dn.kernel_spatial_dimensions},
      {"output_batch_dimension", dn.output_batch_dimension},
      {"output_feature_dimension", dn.output_feature_dimension},
      {"output_spatial_dimensions", dn.output_spatial_dimensions},
      {"feature_group_count", spec.feature_group_count},
      {"batch_group_count", spec.batch_group_count}};
  if (!spec.window_strides.empty()) attrs.push_back({"window_strides", spec.window_strides});
  if (!spec.padding.empty()) {
    std::vector<int64_t> padding;
    for (const auto& [low, high] : spec.padding) {
      padding.push_back(low);
      padding.push_back(high);
    }
    attrs.push_back({"padding", std::move(padding)});
  }
  if (!spec.lhs_dilation.empty()) attrs.push_back({"lhs_dilation", spec.lhs_dilation});
  if (!spec.rhs_dilation.empty()) attrs.push_back({"rhs_dilation", spec.rhs_dilation});
  if (!spec.window_reversal.empty()) {
    std::vector<int64_t> reversal;
    for (bool flag : spec.window_reversal) reversal.push_back(flag ? 1 : 0);
    attrs.push_back({"window_reversal", std::move(reversal)});
  }
  if (!spec.precision_config.empty()) {
    attrs.push_back({"precision_config", spec.precision_config});
  }
  return attrs;
}

ConvolutionSpec ConvolutionSpecOf(const Operation& op) {
  ACCY_CHECK(op.kind() == OpKind::kConvolution);
  StatusOr<ConvolutionSpec> spec = ReadConvolutionSpec(AttributeView(op.attributes()));
  ACCY_CHECK(spec.ok());
  FillConvolutionDefaults(&*spec, op.operand(0)->type().rank() - 2);
  return *std::move(spec);
}

int64_t ConvolutionOutputSize(int64_t input_size, int64_t kernel_size, int64_t stride,
                              int64_t pad_low, int64_t pad_high, int64_t lhs_dilation,
                              int64_t rhs_dilation) {
  const int64_t dilated_input = input_size == 0 ? 0 : (input_size - 1) * lhs_dilation + 1;
  const int64_t padded_input = pad_low + dilated_input + pad_high;
  const int64_t dilated_window = kernel_size == 0 ? 0 : (kernel_size - 1) * rhs_dilation + 1;
  if (padded_input <= 0 || dilated_window > padded_input) return 0;
  return (padded_input - dilated_window) / stride + 1;
}

bool IsWeightGradientShape(const Operation& op) {
  const ConvDimensionNumbers dn = ConvolutionSpecOf(op).dimension_numbers;
  const TensorType& rhs = op.operand(1)->type();
  const TensorType& out = op.result(0)->type();
  int64_t window = 1, positions = 1;
  for (size_t s = 0; s < dn.kernel_spatial_dimensions.size(); ++s) {
    window *= rhs.dim(dn.kernel_spatial_dimensions[s]);
    positions *= out.dim(dn.output_spatial_dimensions[s]);
  }
  return window >= kWeightGradientWindowRatio * positions;
}

}  // namespace accy::ir_internal
