// Reference evaluation of convolution (StableHLO spec section "convolution"), as direct loops
// over the spec's semantics rather than its reduce_window formulation:
//
//   result[b, o, x...] = sum over kernel positions k... and kernel input features c of
//     lhs_padded_dilated[batch(b, o), feature(o, c), x * stride + k * rhs_dilation]
//       * rhs_reversed[k..., c, o]
//
// where lhs_padded_dilated places lhs element i at padded position pad_low + i * lhs_dilation
// (zeros elsewhere, negative padding cropping), rhs_reversed flips the kernel spatial dims whose
// window_reversal is set, and the groups pick operand slices as the spec's split/concatenate
// does: with feature_group_count G, output feature o belongs to group g = o / (O / G) and reads
// input features [g * C/G, (g + 1) * C/G); with batch_group_count B, group g = o / (O / B) reads
// input batch g * (N / B) + b.
//
// Numerics as dot_general (dot_general.cc): operands converted to the result element type's
// domain; float results multiply and accumulate in double from +0 (kernel positions in row-major
// order, then kernel input features) and round once; integer results wrap modulo 2^bits.
// precision_config does not change the result.
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "accy/tensor.h"
#include "src/ir/convolution_attributes.h"
#include "src/reference/evaluator_internal.h"

namespace accy::reference {
namespace {

std::vector<int64_t> StridesOf(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateConvolution(const Operation& op,
                                                  std::span<const Tensor> operands) {
  if (operands.size() != 2 || op.num_results() != 1) {
    return absl::InvalidArgumentError("convolution: expects lhs, rhs and one result");
  }
  const Tensor& lhs = operands[0];
  const Tensor& rhs = operands[1];
  ACCY_ASSIGN_OR_RETURN(Tensor result, Tensor::Allocate(op.result(0)->type()));
  const ConvolutionSpec spec = ir_internal::ConvolutionSpecOf(op);
  const ConvDimensionNumbers& dn = spec.dimension_numbers;
  const size_t spatial_rank = dn.input_spatial_dimensions.size();

  const std::vector<int64_t> lhs_strides = StridesOf(lhs.dims());
  const std::vector<int64_t> rhs_strides = StridesOf(rhs.dims());
  const int64_t batch = lhs.dims()[dn.input_batch_dimension];
  const int64_t kernel_features = rhs.dims()[dn.kernel_input_feature_dimension];
  const int64_t output_features = rhs.dims()[dn.kernel_output_feature_dimension];
  const int64_t groups = spec.feature_group_count * spec.batch_group_count;  // one of them is 1
  const int64_t outputs_per_group = output_features / groups;
  std::vector<int64_t> kernel_dims;
  int64_t kernel_positions = 1;
  for (size_t s = 0; s < spatial_rank; ++s) {
    kernel_dims.push_back(rhs.dims()[dn.kernel_spatial_dimensions[s]]);
    kernel_positions *= kernel_dims.back();
  }

  const ElementType result_type = result.element_type();
  const bool float_result = IsFloat(result_type);
  std::vector<double> lhs_float, rhs_float;
  std::vector<uint64_t> lhs_int, rhs_int;
  if (float_result) {
    ACCY_ASSIGN_OR_RETURN(lhs_float, ConvertToFloat(lhs, result_type));
    ACCY_ASSIGN_OR_RETURN(rhs_float, ConvertToFloat(rhs, result_type));
  } else {
    lhs_int = ConvertToInteger(lhs, result_type);
    rhs_int = ConvertToInteger(rhs, result_type);
  }

  const int64_t lhs_feature_stride = lhs_strides[dn.input_feature_dimension];
  const int64_t rhs_feature_stride = rhs_strides[dn.kernel_input_feature_dimension];
  std::vector<int64_t> kernel_index(spatial_rank, 0);
  for (int64_t linear = 0; linear < result.element_count(); ++linear) {
    const std::vector<int64_t> index = Unravel(linear, result.dims());
    const int64_t b = index[dn.output_batch_dimension];
    const int64_t o = index[dn.output_feature_dimension];
    const int64_t group = outputs_per_group == 0 ? 0 : o / outputs_per_group;
    const int64_t lhs_batch =
        spec.batch_group_count > 1 ? group * (batch / spec.batch_group_count) + b : b;
    const int64_t first_feature = spec.feature_group_count > 1 ? group * kernel_features : 0;
    const int64_t lhs_base =
        lhs_batch * lhs_strides[dn.input_batch_dimension] + first_feature * lhs_feature_stride;
    const int64_t rhs_base = o * rhs_strides[dn.kernel_output_feature_dimension];
    double float_sum = 0.0;
    uint64_t int_sum = 0;  // wraps, no UB
    for (int64_t k = 0; k < kernel_positions; ++k) {
      kernel_index = Unravel(k, kernel_dims);
      int64_t lhs_offset = lhs_base;
      int64_t rhs_offset = rhs_base;
      bool inside = true;
      for (size_t s = 0; s < spatial_rank && inside; ++s) {
        const int64_t input_size = lhs.dims()[dn.input_spatial_dimensions[s]];
        const int64_t position = index[dn.output_spatial_dimensions[s]] * spec.window_strides[s] +
                                 kernel_index[s] * spec.rhs_dilation[s] - spec.padding[s].first;
        if (position < 0 || position % spec.lhs_dilation[s] != 0 ||
            position / spec.lhs_dilation[s] >= input_size) {
          inside = false;  // padding, or a hole of the lhs dilation
          break;
        }
        lhs_offset += position / spec.lhs_dilation[s] * lhs_strides[dn.input_spatial_dimensions[s]];
        const int64_t kernel_position =
            spec.window_reversal[s] ? kernel_dims[s] - 1 - kernel_index[s] : kernel_index[s];
        rhs_offset += kernel_position * rhs_strides[dn.kernel_spatial_dimensions[s]];
      }
      if (!inside) continue;
      for (int64_t c = 0; c < kernel_features; ++c) {
        const size_t l = static_cast<size_t>(lhs_offset + c * lhs_feature_stride);
        const size_t r = static_cast<size_t>(rhs_offset + c * rhs_feature_stride);
        if (float_result) {
          float_sum += lhs_float[l] * rhs_float[r];
        } else {
          int_sum += lhs_int[l] * rhs_int[r];
        }
      }
    }
    if (float_result) {
      StoreFloat(result, linear, float_sum);
    } else {
      StoreInt(result, linear, static_cast<int64_t>(int_sum));
    }
  }
  std::vector<Tensor> results;
  results.push_back(std::move(result));
  return results;
}

}  // namespace accy::reference
