// Reference evaluation of batch_norm_inference, batch_norm_training and batch_norm_grad
// (StableHLO spec sections of those names), direct loops over the spec's formulas rather than
// its decomposition: each feature c of dim feature_index owns the elements (o, c, i) (o over
// the dims before it, i over the dims after), and every sum runs in double in index order,
// rounding once to the result type. epsilon is the spec's f32 constant rounded to the element
// type, as its decomposition's constant(epsilon, element_type(operand)) is.
#include <cmath>
#include <cstdint>
#include <variant>
#include <vector>

#include "src/reference/evaluator_internal.h"
#include "src/reference/scalar.h"

namespace accy::reference {
namespace {

struct FeatureLayout {
  int64_t outer = 1, features = 1, inner = 1;
  int64_t Index(int64_t o, int64_t c, int64_t i) const { return (o * features + c) * inner + i; }
  double count() const { return static_cast<double>(outer * inner); }
};

FeatureLayout LayoutOf(const TensorType& type, int64_t feature_index) {
  FeatureLayout layout;
  for (int64_t d = 0; d < type.rank(); ++d) {
    const int64_t size = type.dim(d);
    if (d < feature_index) layout.outer *= size;
    if (d == feature_index) layout.features = size;
    if (d > feature_index) layout.inner *= size;
  }
  return layout;
}

std::vector<double> Load(const Tensor& t) {
  std::vector<double> values(static_cast<size_t>(t.type().element_count()));
  for (size_t k = 0; k < values.size(); ++k) values[k] = LoadFloat(t, static_cast<int64_t>(k));
  return values;
}

StatusOr<Tensor> Store(const TensorType& type, const std::vector<double>& values) {
  ACCY_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(type));
  for (size_t k = 0; k < values.size(); ++k) StoreFloat(t, static_cast<int64_t>(k), values[k]);
  return t;
}

// Per feature: the sum over its elements of f(k), k the linear index.
template <typename F>
std::vector<double> FeatureSums(const FeatureLayout& layout, F f) {
  std::vector<double> sums(static_cast<size_t>(layout.features), 0.0);
  for (int64_t o = 0; o < layout.outer; ++o) {
    for (int64_t c = 0; c < layout.features; ++c) {
      for (int64_t i = 0; i < layout.inner; ++i) {
        sums[static_cast<size_t>(c)] += f(layout.Index(o, c, i));
      }
    }
  }
  return sums;
}

// Calls f(k, c) for every element k of feature c.
template <typename F>
void ForEach(const FeatureLayout& layout, F f) {
  for (int64_t o = 0; o < layout.outer; ++o) {
    for (int64_t c = 0; c < layout.features; ++c) {
      for (int64_t i = 0; i < layout.inner; ++i) f(layout.Index(o, c, i), static_cast<size_t>(c));
    }
  }
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateBatchNorm(const Operation& op,
                                                std::span<const Tensor> operands) {
  const Tensor& operand = operands[0];
  const ElementType e = operand.element_type();
  const int64_t feature_index = op.GetInt("feature_index").value_or(0);
  const AttributeValue* epsilon_attribute = op.attribute("epsilon");
  const double* epsilon_value =
      epsilon_attribute != nullptr ? std::get_if<double>(epsilon_attribute) : nullptr;
  const float epsilon_f32 = static_cast<float>(epsilon_value != nullptr ? *epsilon_value : 0.0);
  const double epsilon = FloatBitsToDouble(e, DoubleToFloatBits(e, epsilon_f32));
  const FeatureLayout layout = LayoutOf(operand.type(), feature_index);
  const std::vector<double> x = Load(operand);
  const std::vector<double> scale = Load(operands[1]);
  std::vector<double> out(x.size());
  std::vector<Tensor> results;
  if (op.kind() == OpKind::kBatchNormGrad) {
    const std::vector<double> mean = Load(operands[2]);
    const std::vector<double> variance = Load(operands[3]);
    const std::vector<double> dy = Load(operands[4]);
    const double n = layout.count();
    // sum(dy) and sum(dy * (x - mean)) per feature.
    const std::vector<double> sum_dy = FeatureSums(layout, [&](int64_t k) { return dy[k]; });
    std::vector<double> sum_dy_centered(static_cast<size_t>(layout.features), 0.0);
    ForEach(layout, [&](int64_t k, size_t c) { sum_dy_centered[c] += dy[k] * (x[k] - mean[c]); });
    std::vector<double> grad_scale(static_cast<size_t>(layout.features), 0.0);
    ForEach(layout, [&](int64_t k, size_t c) {
      const double var_eps = variance[c] + epsilon;
      const double stddev = std::sqrt(var_eps);
      const double centered = x[k] - mean[c];
      // grad_operand = scale / stddev / N * (N dy - sum(dy) - sum(dy centered) centered / var_eps)
      out[k] = scale[c] / stddev / n *
               (dy[k] * n - sum_dy[c] - sum_dy_centered[c] * centered / var_eps);
      grad_scale[c] += dy[k] * (centered / stddev);
    });
    const TensorType& vector = operands[1].type();
    ACCY_ASSIGN_OR_RETURN(Tensor grad_operand, Store(operand.type(), out));
    ACCY_ASSIGN_OR_RETURN(Tensor scale_result, Store(vector, grad_scale));
    ACCY_ASSIGN_OR_RETURN(Tensor offset_result, Store(vector, sum_dy));
    results.push_back(std::move(grad_operand));
    results.push_back(std::move(scale_result));
    results.push_back(std::move(offset_result));
    return results;
  }
  const std::vector<double> offset = Load(operands[2]);
  std::vector<double> mean, variance;
  if (op.kind() == OpKind::kBatchNormInference) {
    mean = Load(operands[3]);
    variance = Load(operands[4]);
  } else {
    // Training: the mean and the biased variance (divided by N) over each feature's elements.
    mean = FeatureSums(layout, [&](int64_t k) { return x[k]; });
    for (double& m : mean) m /= layout.count();
    variance.assign(mean.size(), 0.0);
    ForEach(layout, [&](int64_t k, size_t c) {
      variance[c] += (x[k] - mean[c]) * (x[k] - mean[c]);
    });
    for (double& v : variance) v /= layout.count();
  }
  ForEach(layout, [&](int64_t k, size_t c) {
    out[k] = scale[c] * ((x[k] - mean[c]) / std::sqrt(variance[c] + epsilon)) + offset[c];
  });
  ACCY_ASSIGN_OR_RETURN(Tensor output, Store(operand.type(), out));
  results.push_back(std::move(output));
  if (op.kind() == OpKind::kBatchNormTraining) {
    ACCY_ASSIGN_OR_RETURN(Tensor mean_result, Store(operands[1].type(), mean));
    ACCY_ASSIGN_OR_RETURN(Tensor variance_result, Store(operands[1].type(), variance));
    results.push_back(std::move(mean_result));
    results.push_back(std::move(variance_result));
  }
  return results;
}

}  // namespace accy::reference
