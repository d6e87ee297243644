#include "tools/transformer_block.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "accy/builder.h"

namespace accy::tools {

namespace {

// Builds the ops of the block on one FunctionBuilder; every helper returns the new value.
class BlockBuilder {
 public:
  BlockBuilder(Builder& builder, FunctionBuilder& f, const TransformerBlockConfig& config)
      : builder_(builder), f_(f), config_(config) {}

  double matmul_flops() const { return matmul_flops_; }

  StatusOr<TensorType> F32(std::vector<int64_t> dims) {
    return builder_.Type(ElementType::kF32, std::move(dims));
  }

  // A rank-0 f32 constant broadcast to `dims`.
  StatusOr<Value*> Splat(double value, const std::vector<int64_t>& dims) {
    ACCY_ASSIGN_OR_RETURN(Value * scalar, f_.ConstantScalar(ElementType::kF32, value));
    ACCY_ASSIGN_OR_RETURN(TensorType type, F32(dims));
    return f_.BroadcastInDim(scalar, type, {});
  }

  // The mean of `x` [rows, cols] over its last dim, broadcast back to [rows, cols].
  StatusOr<Value*> RowMean(Value* x) {
    const std::vector<int64_t>& dims = x->type().dims();
    ACCY_ASSIGN_OR_RETURN(Value * zero, f_.ConstantScalar(ElementType::kF32, 0.0));
    ACCY_ASSIGN_OR_RETURN(TensorType row_type, F32({dims[0]}));
    ACCY_ASSIGN_OR_RETURN(Value * sum, f_.Reduce(x, zero, row_type, "sum", {1}));
    ACCY_ASSIGN_OR_RETURN(Value * inv_n, Splat(1.0 / static_cast<double>(dims[1]), {dims[0]}));
    ACCY_ASSIGN_OR_RETURN(Value * mean, f_.Multiply(sum, inv_n));
    return f_.BroadcastInDim(mean, x->type(), {0});
  }

  // Layer norm over the last dim of x [L, D], then * gamma [D] + beta [D].
  StatusOr<Value*> LayerNorm(Value* x, Value* gamma, Value* beta) {
    ACCY_ASSIGN_OR_RETURN(Value * mean, RowMean(x));
    ACCY_ASSIGN_OR_RETURN(Value * centered, f_.Subtract(x, mean));
    ACCY_ASSIGN_OR_RETURN(Value * squared, f_.Multiply(centered, centered));
    const std::vector<int64_t>& dims = x->type().dims();
    ACCY_ASSIGN_OR_RETURN(Value * zero, f_.ConstantScalar(ElementType::kF32, 0.0));
    ACCY_ASSIGN_OR_RETURN(TensorType row_type, F32({dims[0]}));
    ACCY_ASSIGN_OR_RETURN(Value * sum, f_.Reduce(squared, zero, row_type, "sum", {1}));
    ACCY_ASSIGN_OR_RETURN(Value * inv_n, Splat(1.0 / static_cast<double>(dims[1]), {dims[0]}));
    ACCY_ASSIGN_OR_RETURN(Value * variance, f_.Multiply(sum, inv_n));
    ACCY_ASSIGN_OR_RETURN(Value * eps, Splat(config_.layer_norm_epsilon, {dims[0]}));
    ACCY_ASSIGN_OR_RETURN(Value * shifted, f_.Add(variance, eps));
    ACCY_ASSIGN_OR_RETURN(Value * rstd, f_.Rsqrt(shifted));
    ACCY_ASSIGN_OR_RETURN(Value * rstd_b, f_.BroadcastInDim(rstd, x->type(), {0}));
    ACCY_ASSIGN_OR_RETURN(Value * normalized, f_.Multiply(centered, rstd_b));
    ACCY_ASSIGN_OR_RETURN(Value * gamma_b, f_.BroadcastInDim(gamma, x->type(), {1}));
    ACCY_ASSIGN_OR_RETURN(Value * scaled, f_.Multiply(normalized, gamma_b));
    ACCY_ASSIGN_OR_RETURN(Value * beta_b, f_.BroadcastInDim(beta, x->type(), {1}));
    return f_.Add(scaled, beta_b);
  }

  // dot_general with batch dims first, counting 2 * batch * m * n * k flops.
  StatusOr<Value*> Dot(Value* lhs, Value* rhs, std::vector<int64_t> result_dims,
                       std::vector<int64_t> lhs_contracting, std::vector<int64_t> rhs_contracting,
                       std::vector<int64_t> lhs_batching, std::vector<int64_t> rhs_batching) {
    double k = 1;
    for (int64_t d : lhs_contracting) k *= static_cast<double>(lhs->type().dims()[d]);
    double outputs = 1;
    for (int64_t d : result_dims) outputs *= static_cast<double>(d);
    ACCY_ASSIGN_OR_RETURN(TensorType type, F32(std::move(result_dims)));
    ACCY_ASSIGN_OR_RETURN(
        Value * result,
        f_.DotGeneral(lhs, rhs, type, std::move(lhs_contracting), std::move(rhs_contracting),
                      std::move(lhs_batching), std::move(rhs_batching)));
    matmul_flops_ += 2 * outputs * k;
    return result;
  }

  // x [L, K] @ w [K, N] + b [N] (the bias add fuses into the matmul as a post-op).
  StatusOr<Value*> Linear(Value* x, Value* w, Value* b) {
    const int64_t rows = x->type().dims()[0];
    const int64_t cols = w->type().dims()[1];
    ACCY_ASSIGN_OR_RETURN(Value * product, Dot(x, w, {rows, cols}, {1}, {0}, {}, {}));
    ACCY_ASSIGN_OR_RETURN(TensorType type, F32({rows, cols}));
    ACCY_ASSIGN_OR_RETURN(Value * bias, f_.BroadcastInDim(b, type, {1}));
    return f_.Add(product, bias);
  }

  // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))): the form the oneDNN binding runs as
  // one gelu_tanh post-op (kernels/epilogue_patterns.h).
  StatusOr<Value*> GeluTanh(Value* x) {
    const std::vector<int64_t>& dims = x->type().dims();
    ACCY_ASSIGN_OR_RETURN(Value * x2, f_.Multiply(x, x));
    ACCY_ASSIGN_OR_RETURN(Value * x3, f_.Multiply(x2, x));
    ACCY_ASSIGN_OR_RETURN(Value * c, Splat(0.044715, dims));
    ACCY_ASSIGN_OR_RETURN(Value * cx3, f_.Multiply(x3, c));
    ACCY_ASSIGN_OR_RETURN(Value * inner, f_.Add(x, cx3));
    ACCY_ASSIGN_OR_RETURN(Value * k, Splat(0.7978845608028654, dims));
    ACCY_ASSIGN_OR_RETURN(Value * scaled, f_.Multiply(inner, k));
    ACCY_ASSIGN_OR_RETURN(Value * t, f_.Tanh(scaled));
    ACCY_ASSIGN_OR_RETURN(Value * one, Splat(1.0, dims));
    ACCY_ASSIGN_OR_RETURN(Value * bracket, f_.Add(t, one));
    ACCY_ASSIGN_OR_RETURN(Value * half, Splat(0.5, dims));
    ACCY_ASSIGN_OR_RETURN(Value * half_x, f_.Multiply(x, half));
    return f_.Multiply(half_x, bracket);
  }

  // [L, D] -> [L, H, Dh] -> [H, L, Dh].
  StatusOr<Value*> SplitHeads(Value* x) {
    ACCY_ASSIGN_OR_RETURN(TensorType type, F32({config_.seq, config_.heads, config_.head_dim}));
    ACCY_ASSIGN_OR_RETURN(Value * split, f_.Reshape(x, type));
    return f_.Transpose(split, {1, 0, 2});
  }

  // [H, L, Dh] -> [L, H, Dh] -> [L, D].
  StatusOr<Value*> MergeHeads(Value* x) {
    ACCY_ASSIGN_OR_RETURN(Value * transposed, f_.Transpose(x, {1, 0, 2}));
    ACCY_ASSIGN_OR_RETURN(TensorType type, F32({config_.seq, config_.d_model}));
    return f_.Reshape(transposed, type);
  }

  // Causal self-attention over q, k, v [H, L, Dh], in the shape the fusion planner runs as one
  // flash_attention item: dot(Q, K^T) * scale + mask -> softmax -> dot(P, V).
  StatusOr<Value*> Attention(Value* q, Value* k, Value* v) {
    const int64_t h = config_.heads, l = config_.seq, dh = config_.head_dim;
    ACCY_ASSIGN_OR_RETURN(Value * scores, Dot(q, k, {h, l, l}, {2}, {2}, {0}, {0}));
    ACCY_ASSIGN_OR_RETURN(Value * scale,
                          Splat(1.0 / std::sqrt(static_cast<double>(dh)), {h, l, l}));
    ACCY_ASSIGN_OR_RETURN(Value * scaled, f_.Multiply(scores, scale));
    // The causal mask: a constant [L, L] (0 where key <= query, -inf above), over every head.
    std::vector<float> mask(static_cast<size_t>(l * l));
    for (int64_t i = 0; i < l; ++i) {
      for (int64_t j = 0; j < l; ++j) {
        mask[static_cast<size_t>(i * l + j)] =
            j <= i ? 0.0f : -std::numeric_limits<float>::infinity();
      }
    }
    ACCY_ASSIGN_OR_RETURN(TensorType mask_type, F32({l, l}));
    std::vector<uint8_t> mask_bytes(mask.size() * sizeof(float));
    std::memcpy(mask_bytes.data(), mask.data(), mask_bytes.size());
    ACCY_ASSIGN_OR_RETURN(Value * mask_value, f_.Constant(mask_type, mask_bytes));
    ACCY_ASSIGN_OR_RETURN(TensorType scores_type, F32({h, l, l}));
    ACCY_ASSIGN_OR_RETURN(Value * mask_b, f_.BroadcastInDim(mask_value, scores_type, {1, 2}));
    ACCY_ASSIGN_OR_RETURN(Value * masked, f_.Add(scaled, mask_b));
    // Softmax over the key dim.
    ACCY_ASSIGN_OR_RETURN(TensorType row_type, F32({h, l}));
    ACCY_ASSIGN_OR_RETURN(
        Value * neg_inf,
        f_.ConstantScalar(ElementType::kF32, -std::numeric_limits<double>::infinity()));
    ACCY_ASSIGN_OR_RETURN(Value * row_max, f_.Reduce(masked, neg_inf, row_type, "max", {2}));
    ACCY_ASSIGN_OR_RETURN(Value * row_max_b, f_.BroadcastInDim(row_max, scores_type, {0, 1}));
    ACCY_ASSIGN_OR_RETURN(Value * shifted, f_.Subtract(masked, row_max_b));
    ACCY_ASSIGN_OR_RETURN(Value * e, f_.Exponential(shifted));
    ACCY_ASSIGN_OR_RETURN(Value * zero, f_.ConstantScalar(ElementType::kF32, 0.0));
    ACCY_ASSIGN_OR_RETURN(Value * row_sum, f_.Reduce(e, zero, row_type, "sum", {2}));
    ACCY_ASSIGN_OR_RETURN(Value * row_sum_b, f_.BroadcastInDim(row_sum, scores_type, {0, 1}));
    ACCY_ASSIGN_OR_RETURN(Value * p, f_.Divide(e, row_sum_b));
    return Dot(p, v, {h, l, dh}, {2}, {1}, {0}, {0});
  }

 private:
  Builder& builder_;
  FunctionBuilder& f_;
  const TransformerBlockConfig& config_;
  double matmul_flops_ = 0;
};

// Deterministic uniform values with mean `mean` and standard deviation `stddev` from a std::mt19937
// (whose output sequence the standard fixes, unlike its distributions).
Tensor RandomTensor(const TensorType& type, std::mt19937& rng, double mean, double stddev) {
  Tensor tensor = *Tensor::Allocate(type);
  float* data = tensor.data_as<float>();
  const double half_width = stddev * std::sqrt(3.0);
  for (int64_t i = 0; i < type.element_count(); ++i) {
    const double u = static_cast<double>(rng()) / 4294967296.0;  // [0, 1)
    data[i] = static_cast<float>(mean + (2 * u - 1) * half_width);
  }
  return tensor;
}

}  // namespace

StatusOr<TransformerBlock> BuildTransformerBlock(const TransformerBlockConfig& config) {
  if (config.seq <= 0 || config.heads <= 0 || config.head_dim <= 0 || config.mlp_width <= 0 ||
      config.d_model != config.heads * config.head_dim) {
    return Status(absl::StatusCode::kInvalidArgument,
                  "transformer block: sizes must be positive and d_model = "
                  "heads * head_dim");
  }
  const int64_t l = config.seq, d = config.d_model, m = config.mlp_width;
  Builder builder("transformer_block");

  // Parameters: name, dims, mean, stddev.
  struct Param {
    const char* name;
    std::vector<int64_t> dims;
    double mean;
    double stddev;
  };
  const double w = config.weight_stddev;
  const std::vector<Param> params = {
      {"x", {l, d}, 0, 1},      {"ln1_gamma", {d}, 1, w}, {"ln1_beta", {d}, 0, w},
      {"w_q", {d, d}, 0, w},    {"b_q", {d}, 0, w},       {"w_k", {d, d}, 0, w},
      {"b_k", {d}, 0, w},       {"w_v", {d, d}, 0, w},    {"b_v", {d}, 0, w},
      {"w_o", {d, d}, 0, w},    {"b_o", {d}, 0, w},       {"ln2_gamma", {d}, 1, w},
      {"ln2_beta", {d}, 0, w},  {"w_fc", {d, m}, 0, w},   {"b_fc", {m}, 0, w},
      {"w_proj", {m, d}, 0, w}, {"b_proj", {d}, 0, w},
  };
  TransformerBlock result;
  std::vector<TensorType> parameter_types;
  std::mt19937 rng(config.seed);
  for (const Param& p : params) {
    ACCY_ASSIGN_OR_RETURN(TensorType type, builder.Type(ElementType::kF32, p.dims));
    parameter_types.push_back(type);
    result.inputs.push_back(RandomTensor(type, rng, p.mean, p.stddev));
    result.parameter_names.push_back(p.name);
  }
  ACCY_ASSIGN_OR_RETURN(TensorType out_type, builder.Type(ElementType::kF32, {l, d}));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f,
                        builder.BeginFunction("main", parameter_types, {out_type}));
  auto param = [&](int i) { return f.Parameter(i); };
  BlockBuilder b(builder, f, config);

  // Attention sub-block.
  Value* x = param(0);
  ACCY_ASSIGN_OR_RETURN(Value * h, b.LayerNorm(x, param(1), param(2)));
  ACCY_ASSIGN_OR_RETURN(Value * q, b.Linear(h, param(3), param(4)));
  ACCY_ASSIGN_OR_RETURN(Value * k, b.Linear(h, param(5), param(6)));
  ACCY_ASSIGN_OR_RETURN(Value * v, b.Linear(h, param(7), param(8)));
  ACCY_ASSIGN_OR_RETURN(Value * qh, b.SplitHeads(q));
  ACCY_ASSIGN_OR_RETURN(Value * kh, b.SplitHeads(k));
  ACCY_ASSIGN_OR_RETURN(Value * vh, b.SplitHeads(v));
  ACCY_ASSIGN_OR_RETURN(Value * context, b.Attention(qh, kh, vh));
  ACCY_ASSIGN_OR_RETURN(Value * merged, b.MergeHeads(context));
  ACCY_ASSIGN_OR_RETURN(Value * attn_out, b.Linear(merged, param(9), param(10)));
  ACCY_ASSIGN_OR_RETURN(Value * x1, f.Add(x, attn_out));

  // MLP sub-block.
  ACCY_ASSIGN_OR_RETURN(Value * h2, b.LayerNorm(x1, param(11), param(12)));
  ACCY_ASSIGN_OR_RETURN(Value * fc, b.Linear(h2, param(13), param(14)));
  ACCY_ASSIGN_OR_RETURN(Value * act, b.GeluTanh(fc));
  ACCY_ASSIGN_OR_RETURN(Value * proj, b.Linear(act, param(15), param(16)));
  ACCY_ASSIGN_OR_RETURN(Value * out, f.Add(x1, proj));

  ACCY_RETURN_IF_ERROR(f.Return({out}));
  ACCY_RETURN_IF_ERROR(f.Finish());
  ACCY_ASSIGN_OR_RETURN(result.module, builder.Finish());
  result.matmul_flops = b.matmul_flops();
  return result;
}

}  // namespace accy::tools
