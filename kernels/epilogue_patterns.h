// Recognizes multi-op activations (gelu_tanh, swish) inside a dot_epilogue cluster so that the
// oneDNN binding (onednn_dot_general.cc) runs each as one eltwise post-op
// (dev_guide_attributes_post_ops.html, dev_guide_eltwise.html). Pure functions over a finished
// module: thread-safe.
#ifndef ACCY_KERNELS_EPILOGUE_PATTERNS_H_
#define ACCY_KERNELS_EPILOGUE_PATTERNS_H_

#include <optional>
#include <span>
#include <vector>

#include "accy/ir.h"

namespace accy {
class FusionPlan;
}

namespace accy::kernels {

enum class ActivationKind : uint8_t { kGeluTanh, kSwish };

struct ActivationMatch {
  ActivationKind kind;
  const Operation* root = nullptr;       // its result is the activation of x
  std::vector<const Operation*> ops;     // every op of the match, root included
};

// The value of a one-element constant `value` (directly or through an elided broadcast), or
// nullopt.
std::optional<double> ScalarConstant(const Value* value, const FusionPlan* fusion);

// Patterns:
//   gelu_tanh  0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))   (jax.nn.gelu approximate,
//              also with the inner term as x * (1 + 0.044715 * x^2))
//   swish      x * logistic(x), or x * (1 / (1 + exp(-x))) (jax.nn.silu as JAX exports it)
// Products and sums are matched after flattening (any association and operand order; x^3 may be
// x*x*x or power(x, 3)); constants are one-element constants, directly or through an elided
// broadcast_in_dim, within 1e-6 relative (2^-8 for bf16/f16 constants). GELU's erf form needs an
// erf op, which the IR does not have.
//
// The first activation (in the order of `cluster_ops`) computed from `x` alone by ops of
// `cluster_ops` such that every use of x and of each matched intermediate stays inside the
// match; nullopt when there is none.
std::optional<ActivationMatch> MatchActivation(const Value* x,
                                               std::span<const Operation* const> cluster_ops,
                                               const FusionPlan* fusion);

}  // namespace accy::kernels

#endif  // ACCY_KERNELS_EPILOGUE_PATTERNS_H_
