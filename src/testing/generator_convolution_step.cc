// The generator's convolution step (generator_internal.h StepConvolution): a random valid
// convolution (spec "convolution") with 1-3 spatial dims, every dim of each operand and of the
// result in a random position, strides, padding (negative too), lhs and rhs dilation, window
// reversal, and feature or batch groups, so the differential runner checks the engine's
// oneDNN and JIT paths against the reference evaluator.
#include <algorithm>
#include <numeric>
#include <vector>

#include "src/ir/convolution_attributes.h"
#include "src/testing/generator_internal.h"

namespace accy::fuzz::internal {

bool Generator::StepConvolution() {
  const ElementType e = Chance(0.7) ? RandomFloatType() : RandomType(ElementClass::kNumeric);
  const int spatial = Chance(0.6) ? 2 : Chance(0.5) ? 1 : 3;
  const int rank = spatial + 2;
  int64_t feature_groups = 1, batch_groups = 1;
  if (Chance(0.2)) {
    feature_groups = 2 + static_cast<int64_t>(U(2));
  } else if (Chance(0.15)) {
    batch_groups = 2 + static_cast<int64_t>(U(2));
  }
  const int64_t kernel_features = Chance(0.03) ? 0 : 1 + static_cast<int64_t>(U(4));
  const int64_t input_features = kernel_features * feature_groups;
  const int64_t output_features = (1 + static_cast<int64_t>(U(4))) * feature_groups * batch_groups;
  const int64_t batch = (Chance(0.03) ? 0 : 1 + static_cast<int64_t>(U(2))) * batch_groups;

  ConvolutionSpec spec;
  spec.feature_group_count = feature_groups;
  spec.batch_group_count = batch_groups;
  std::vector<int64_t> input_sizes, kernel_sizes, output_sizes;
  int64_t window = kernel_features;
  for (int s = 0; s < spatial; ++s) {
    input_sizes.push_back(1 + static_cast<int64_t>(U(spatial == 3 ? 5 : 9)));
    kernel_sizes.push_back(1 + static_cast<int64_t>(U(4)));
    window *= kernel_sizes.back();
    spec.window_strides.push_back(Chance(0.7) ? 1 : 2 + static_cast<int64_t>(U(2)));
    spec.padding.push_back({static_cast<int64_t>(U(4)) - 1, static_cast<int64_t>(U(4)) - 1});
    spec.lhs_dilation.push_back(Chance(0.2) ? 2 : 1);
    spec.rhs_dilation.push_back(Chance(0.2) ? 2 : 1);
    spec.window_reversal.push_back(Chance(0.2));
    output_sizes.push_back(ir_internal::ConvolutionOutputSize(
        input_sizes.back(), kernel_sizes.back(), spec.window_strides.back(),
        spec.padding.back().first, spec.padding.back().second, spec.lhs_dilation.back(),
        spec.rhs_dilation.back()));
  }
  // Random positions: [0] batch (or kernel input feature), [1] feature, [2..] spatial dims.
  auto layout = [&]() {
    std::vector<int64_t> order(static_cast<size_t>(rank));
    std::iota(order.begin(), order.end(), 0);
    if (Chance(0.7)) std::shuffle(order.begin(), order.end(), rng_);
    return order;
  };
  const std::vector<int64_t> in = layout(), kernel = layout(), out = layout();
  ConvDimensionNumbers& dn = spec.dimension_numbers;
  dn.input_batch_dimension = in[0];
  dn.input_feature_dimension = in[1];
  dn.kernel_input_feature_dimension = kernel[0];
  dn.kernel_output_feature_dimension = kernel[1];
  dn.output_batch_dimension = out[0];
  dn.output_feature_dimension = out[1];
  std::vector<int64_t> lhs_dims(static_cast<size_t>(rank)), rhs_dims(static_cast<size_t>(rank)),
      result_dims(static_cast<size_t>(rank));
  lhs_dims[static_cast<size_t>(in[0])] = batch;
  lhs_dims[static_cast<size_t>(in[1])] = input_features;
  rhs_dims[static_cast<size_t>(kernel[0])] = kernel_features;
  rhs_dims[static_cast<size_t>(kernel[1])] = output_features;
  result_dims[static_cast<size_t>(out[0])] = batch / batch_groups;
  result_dims[static_cast<size_t>(out[1])] = output_features;
  for (int s = 0; s < spatial; ++s) {
    const size_t i = static_cast<size_t>(s);
    dn.input_spatial_dimensions.push_back(in[i + 2]);
    dn.kernel_spatial_dimensions.push_back(kernel[i + 2]);
    dn.output_spatial_dimensions.push_back(out[i + 2]);
    lhs_dims[static_cast<size_t>(in[i + 2])] = input_sizes[i];
    rhs_dims[static_cast<size_t>(kernel[i + 2])] = kernel_sizes[i];
    result_dims[static_cast<size_t>(out[i + 2])] = output_sizes[i];
  }
  auto count = [](const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  };
  if (count(lhs_dims) > options_.max_elements || count(rhs_dims) > options_.max_elements ||
      count(result_dims) > options_.max_elements) {
    return false;
  }
  const Need need{true, 1e3, false};
  const int lhs = Pick(Type(e, lhs_dims), need);
  const int rhs = Pick(Type(e, rhs_dims), need);
  const double bound = V(lhs).bound * V(rhs).bound * static_cast<double>(window);
  // Float products accumulate in f32 (JIT, oneDNN) or double (reference): far below overflow.
  if (IsFloat(e) && bound > 1e30) return false;
  FuzzValue v = Derive({lhs, rhs}, Type(e, result_dims), !IsFloat(e), bound,
                       V(lhs).non_finite || V(rhs).non_finite);
  if (!IsFloat(e)) v.non_finite = false;
  AddRecipe("convolution", {lhs, rhs}, {v},
            [spec](FunctionBuilder& f, std::span<Value* const> xs,
                   BuildForm) -> StatusOr<std::vector<Value*>> {
              ACCY_ASSIGN_OR_RETURN(Value * r, f.Convolution(xs[0], xs[1], spec));
              return std::vector<Value*>{r};
            });
  return true;
}

}  // namespace accy::fuzz::internal
