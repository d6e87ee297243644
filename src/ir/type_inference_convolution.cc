// Result type inference for convolution: the StableHLO spec constraints (spec.md section
// "convolution" C1-C27) in order, each message naming the attribute or dim and what was wrong.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "src/ir/convolution_attributes.h"
#include "src/ir/type_inference.h"
#include "src/util/str_cat.h"

namespace accy::ir_internal {
namespace {

constexpr std::string_view kOp = "convolution";

Status Error(std::string_view message) {
  return absl::InvalidArgumentError(StrCat(kOp, ": ", message));
}

// C2, C5, C7, C9 (and C4 for padding pairs): one entry per spatial dim.
Status CheckSpatialSize(std::string_view name, size_t size, int64_t spatial_rank) {
  if (static_cast<int64_t>(size) != spatial_rank) {
    return Error(StrCat(name, " has ", size, " entries, expected ", spatial_rank,
                        " (one per spatial dim: rank - 2)"));
  }
  return absl::OkStatus();
}

// C3, C6, C8: every entry positive.
Status CheckPositive(std::string_view name, const std::vector<int64_t>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] <= 0) {
      return Error(StrCat(name, " ", DimsToString(values), ": entry ", i, " is ", values[i],
                          ", must be positive"));
    }
  }
  return absl::OkStatus();
}

// C13, C18, C20: the batch, feature and spatial dims of one side are distinct dims of [0, rank).
Status CheckDimensionSet(std::string_view side, std::string_view first_name, int64_t first,
                         std::string_view second_name, int64_t second,
                         std::string_view spatial_name, const std::vector<int64_t>& spatial,
                         int64_t spatial_rank, int64_t rank) {
  ACCY_RETURN_IF_ERROR(CheckSpatialSize(spatial_name, spatial.size(), spatial_rank));
  std::vector<std::pair<std::string_view, int64_t>> dims = {{first_name, first},
                                                            {second_name, second}};
  for (int64_t d : spatial) dims.push_back({spatial_name, d});
  std::set<int64_t> seen;
  for (const auto& [name, d] : dims) {
    if (d < 0 || d >= rank) {
      return Error(StrCat(name, " ", d, " is out of range [0, ", rank, ") for the ", side));
    }
    if (!seen.insert(d).second) {
      return Error(
          StrCat(side, " dimension ", d, " is named twice by the dimension numbers (", name, ")"));
    }
  }
  return absl::OkStatus();
}

// (a - 1) * b + 1 for a > 0, 0 for a = 0, or nullopt on overflow.
std::optional<int64_t> Dilated(int64_t size, int64_t dilation) {
  if (size == 0) return 0;
  int64_t product;
  if (!CheckedMul(size - 1, dilation, &product) || product == INT64_MAX) return std::nullopt;
  return product + 1;
}

}  // namespace

StatusOr<std::vector<TensorType>> InferConvolution(std::span<const TensorType> operands,
                                                   const AttributeView& attrs) {
  if (operands.size() != 2) {
    return Error(StrCat("expected 2 operands (lhs, rhs), got ", operands.size()));
  }
  const TensorType& lhs = operands[0];
  const TensorType& rhs = operands[1];
  ACCY_ASSIGN_OR_RETURN(ConvolutionSpec spec, ReadConvolutionSpec(attrs));
  const ConvDimensionNumbers& dn = spec.dimension_numbers;
  // C27 (non-quantized): one element type for lhs and rhs; accy has no i1 convolution.
  if (lhs.element_type() != rhs.element_type()) {
    return Error(StrCat("lhs has type ", lhs.ToString(), " but rhs has type ", rhs.ToString(),
                        " (element types must match)"));
  }
  if (!ElementClassContains(GetOpInfo(OpKind::kConvolution).element_classes, lhs.element_type())) {
    return Error(StrCat("operands of element type ", ElementTypeName(lhs.element_type()),
                        " are not supported (integer or floating-point)"));
  }
  // C1.
  if (lhs.rank() != rhs.rank()) {
    return Error(StrCat("lhs has rank ", lhs.rank(), " but rhs has rank ", rhs.rank(),
                        " (ranks must match)"));
  }
  const int64_t rank = lhs.rank();
  if (rank < 2) return Error(StrCat("operands have rank ", rank, ", expected at least 2"));
  const int64_t spatial_rank = rank - 2;
  // C2-C9.
  FillConvolutionDefaults(&spec, spatial_rank);
  ACCY_RETURN_IF_ERROR(
      CheckSpatialSize("window_strides", spec.window_strides.size(), spatial_rank));
  ACCY_RETURN_IF_ERROR(CheckPositive("window_strides", spec.window_strides));
  ACCY_RETURN_IF_ERROR(CheckSpatialSize("padding", spec.padding.size(), spatial_rank));
  ACCY_RETURN_IF_ERROR(CheckSpatialSize("lhs_dilation", spec.lhs_dilation.size(), spatial_rank));
  ACCY_RETURN_IF_ERROR(CheckPositive("lhs_dilation", spec.lhs_dilation));
  ACCY_RETURN_IF_ERROR(CheckSpatialSize("rhs_dilation", spec.rhs_dilation.size(), spatial_rank));
  ACCY_RETURN_IF_ERROR(CheckPositive("rhs_dilation", spec.rhs_dilation));
  ACCY_RETURN_IF_ERROR(
      CheckSpatialSize("window_reversal", spec.window_reversal.size(), spatial_rank));
  // C12-C13, C17-C20.
  ACCY_RETURN_IF_ERROR(CheckDimensionSet("lhs", "input_batch_dimension", dn.input_batch_dimension,
                                         "input_feature_dimension", dn.input_feature_dimension,
                                         "input_spatial_dimensions", dn.input_spatial_dimensions,
                                         spatial_rank, rank));
  ACCY_RETURN_IF_ERROR(CheckDimensionSet(
      "rhs", "kernel_input_feature_dimension", dn.kernel_input_feature_dimension,
      "kernel_output_feature_dimension", dn.kernel_output_feature_dimension,
      "kernel_spatial_dimensions", dn.kernel_spatial_dimensions, spatial_rank, rank));
  ACCY_RETURN_IF_ERROR(CheckDimensionSet("result", "output_batch_dimension",
                                         dn.output_batch_dimension, "output_feature_dimension",
                                         dn.output_feature_dimension, "output_spatial_dimensions",
                                         dn.output_spatial_dimensions, spatial_rank, rank));
  // C21-C23.
  const int64_t groups = spec.feature_group_count;
  const int64_t batch_groups = spec.batch_group_count;
  if (groups <= 0) return Error(StrCat("feature_group_count ", groups, " must be positive"));
  if (batch_groups <= 0) {
    return Error(StrCat("batch_group_count ", batch_groups, " must be positive"));
  }
  if (groups != 1 && batch_groups != 1) {
    return Error(StrCat("feature_group_count ", groups, " and batch_group_count ", batch_groups,
                        ": at most one of them may exceed 1"));
  }
  // C10, C11, C14-C16.
  const int64_t batch = lhs.dim(dn.input_batch_dimension);
  const int64_t input_features = lhs.dim(dn.input_feature_dimension);
  const int64_t kernel_input_features = rhs.dim(dn.kernel_input_feature_dimension);
  const int64_t output_features = rhs.dim(dn.kernel_output_feature_dimension);
  if (batch % batch_groups != 0) {
    return Error(StrCat("dim ", dn.input_batch_dimension, " of lhs (input batch) has size ", batch,
                        ", not divisible by batch_group_count ", batch_groups));
  }
  if (input_features % groups != 0) {
    return Error(StrCat("dim ", dn.input_feature_dimension, " of lhs (input feature) has size ",
                        input_features, ", not divisible by feature_group_count ", groups));
  }
  if (kernel_input_features * groups != input_features) {
    return Error(StrCat("dim ", dn.kernel_input_feature_dimension,
                        " of rhs (kernel input feature) has size ", kernel_input_features,
                        ", expected ", input_features / groups,
                        " (lhs input features / feature_group_count)"));
  }
  if (output_features % batch_groups != 0) {
    return Error(StrCat("dim ", dn.kernel_output_feature_dimension,
                        " of rhs (kernel output feature) has size ", output_features,
                        ", not divisible by batch_group_count ", batch_groups));
  }
  if (output_features % groups != 0) {
    return Error(StrCat("dim ", dn.kernel_output_feature_dimension,
                        " of rhs (kernel output feature) has size ", output_features,
                        ", not divisible by feature_group_count ", groups));
  }
  // C24.
  if (!spec.precision_config.empty() && spec.precision_config.size() != 2) {
    return Error(
        StrCat("precision_config has ", spec.precision_config.size(), " entries, expected 0 or 2"));
  }
  for (const std::string& precision : spec.precision_config) {
    if (precision != "DEFAULT" && precision != "HIGH" && precision != "HIGHEST") {
      return Error(StrCat("precision '", precision, "' is not DEFAULT, HIGH or HIGHEST"));
    }
  }
  // C25-C26.
  std::vector<int64_t> dims(static_cast<size_t>(rank), 0);
  dims[static_cast<size_t>(dn.output_batch_dimension)] = batch / batch_groups;
  dims[static_cast<size_t>(dn.output_feature_dimension)] = output_features;
  for (int64_t s = 0; s < spatial_rank; ++s) {
    const size_t i = static_cast<size_t>(s);
    const int64_t input_size = lhs.dim(dn.input_spatial_dimensions[i]);
    const int64_t kernel_size = rhs.dim(dn.kernel_spatial_dimensions[i]);
    const auto [low, high] = spec.padding[i];
    std::optional<int64_t> dilated_input = Dilated(input_size, spec.lhs_dilation[i]);
    std::optional<int64_t> dilated_window = Dilated(kernel_size, spec.rhs_dilation[i]);
    int64_t padded = 0;
    if (!dilated_input || !dilated_window || !CheckedAdd(*dilated_input, low, &padded) ||
        !CheckedAdd(padded, high, &padded)) {
      return Error(StrCat("spatial dim ", s, ": the dilated, padded sizes overflow 64 bits"));
    }
    dims[static_cast<size_t>(dn.output_spatial_dimensions[i])] =
        ConvolutionOutputSize(input_size, kernel_size, spec.window_strides[i], low, high,
                              spec.lhs_dilation[i], spec.rhs_dilation[i]);
  }
  auto result = TensorType::Create(lhs.element_type(), std::move(dims));
  if (!result.ok()) {
    return Error(StrCat("result type is invalid: ", result.status().message()));
  }
  return std::vector<TensorType>{*std::move(result)};
}

}  // namespace accy::ir_internal
