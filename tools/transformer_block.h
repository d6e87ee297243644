// A GPT-2-small-shaped pre-layer-norm transformer block built with the public builder API, with
// seeded deterministic weights: the program of `accy demo` (tools/demo_command.cc). Uses only the
// public headers (accy/builder.h, accy/tensor.h), so examples/ can build the same block.
//
//   h     = layer_norm(x) * ln1_gamma + ln1_beta
//   q,k,v = h @ w_{q,k,v} + b_{q,k,v}: [L, D] -> reshape [L, H, Dh] -> transpose [H, L, Dh]
//   p     = softmax(q k^T * (1 / sqrt(Dh)) + mask), mask a constant [L, L] (0 on and below the
//           diagonal, -inf above: causal) broadcast over heads
//   a     = p v: [H, L, Dh] -> transpose [L, H, Dh] -> reshape [L, D]
//   x1    = x + a @ w_o + b_o
//   m     = layer_norm(x1) * ln2_gamma + ln2_beta
//   out   = x1 + gelu_tanh(m @ w_fc + b_fc) @ w_proj + b_proj
//
// Everything is f32, batch 1. Thread-compatible: BuildTransformerBlock is a pure function of the
// config.
#ifndef ACCY_TOOLS_TRANSFORMER_BLOCK_H_
#define ACCY_TOOLS_TRANSFORMER_BLOCK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "accy/tensor.h"

namespace accy::tools {

struct TransformerBlockConfig {
  int64_t seq = 128;      // L
  int64_t d_model = 768;  // D = heads * head_dim
  int64_t heads = 12;     // H
  int64_t head_dim = 64;  // Dh
  int64_t mlp_width = 3072;
  double layer_norm_epsilon = 1e-5;
  uint32_t seed = 20240601;     // std::mt19937 seed for the weights and the input
  double weight_stddev = 0.02;  // weights (and biases) are uniform with this standard deviation
};

struct TransformerBlock {
  std::unique_ptr<Module> module;  // function "main": (x, weights...) -> (out)
  // One tensor per parameter of "main", in order: x [L, D] (stddev 1), then the weights.
  std::vector<Tensor> inputs;
  std::vector<std::string> parameter_names;  // "x", "ln1_gamma", "w_q", ...
  // 2*m*n*k summed over every dot_general (projections, attention scores and context, MLP).
  double matmul_flops = 0;
};

// Builds the block. kInvalidArgument for a config whose sizes do not fit (d_model != heads *
// head_dim, non-positive sizes); builder errors otherwise (none expected).
StatusOr<TransformerBlock> BuildTransformerBlock(const TransformerBlockConfig& config);

}  // namespace accy::tools

#endif  // ACCY_TOOLS_TRANSFORMER_BLOCK_H_
