// AssignConvolutionLayoutsPass: layout assignment for convolutional networks written in
// PyTorch's layout. Every convolution whose activations are not channels-last (input and output
// dims other than [batch, spatial..., feature], e.g. NCHW's [b, f, 0, 1]) is rewritten to read
// transpose(lhs) in that layout and to produce it, followed by the transpose back to the layout
// the program asked for (XLA's CPU layout assignment and IREE's convert-conv-to-channels-last do
// the same); its kernel keeps its layout (oneDNN reorders weights into its own format once).
// The transposes back are then sunk through the ops between convolutions -- elementwise ops
// whose other operands are broadcasts, rank-0 values or transposes with the same permutation,
// and reduce_window -- so that a transpose meets the next convolution's transpose and the two
// cancel. A whole NCHW network then runs channels-last with one transpose at its input and one
// per output. Only transposes this pass creates are sunk: every other program keeps its form
// (the fusion rules match attention and row pipelines on the exporters' forms). A convolution
// whose weights are a parameter not declared constant keeps its layout when its output has
// fewer than 128 positions (batch x spatial): there oneDNN 2.6 convolves channels-last
// activations only with weights reordered into its own format on every run, while the
// program's layout runs im2col + GEMM on the weights in place (NCHW ResNet-50, Zen 4, 1
// thread, weights not declared: 100 ms rewriting every convolution, 90.8 keeping these, 89.0
// without the pass; declared: 74.4 / 77.4 / 82.4, the NHWC program 74.8). A weight gradient
// (ir_internal::IsWeightGradientShape: a kernel window of at least 4x the result's positions,
// JAX's conv(x, dy)) keeps its layout: oneDNN's convolution_backward_weights reads it in place.
// After sinking, a pointwise f32 convolution (1x1 kernel, no padding, lhs dilation or grouping;
// any stride) whose transposes both stayed -- the one before it cancelled against nothing and
// the one after it was not sunk away -- and whose channels-last result no sunk op reads goes
// back to the program's layout, where oneDNN runs it as one GEMM over the
// activations in place (a lone NCHW 1x1 64->256 at 56: 0.47 ms against 0.85 between the two
// transposes, Intel Xeon model 207, 1 thread).
//
// Spec: "convolution" (dimension numbers), "transpose", "broadcast_in_dim", "reduce_window";
// each rewrite is an exact identity (the same arithmetic on the same elements). The ops left
// without uses are for eliminate-dead-code. Entry block only (not region bodies). Stateless.
#ifndef ACCY_SRC_TRANSFORMS_ASSIGN_CONVOLUTION_LAYOUTS_H_
#define ACCY_SRC_TRANSFORMS_ASSIGN_CONVOLUTION_LAYOUTS_H_

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "src/passes/pass_manager.h"

namespace accy {

class AssignConvolutionLayoutsPass : public passes::Pass {
 public:
  // `constant_parameters`: indices of the parameters of function `entry` the caller declared
  // constant (CompileOptions::constant_parameters); others are read from a buffer every run.
  AssignConvolutionLayoutsPass(std::string entry = "", std::vector<int64_t> constant_parameters = {})
      : entry_(std::move(entry)), constant_parameters_(std::move(constant_parameters)) {}
  static constexpr std::string_view kName = "assign-convolution-layouts";
  std::string_view name() const override { return kName; }
  // Identity "assign-convolution-layouts" v1: one visit per op, operand and attribute atom, and
  // at most four new ops (each with its attributes and a copied reduce_window body) per op.
  const passes::WorkContract& contract() const override;
  // Never fails. Marks the context modified when it rewrote a convolution.
  Status Run(passes::PassContext& context) override;

 private:
  std::string entry_;
  std::vector<int64_t> constant_parameters_;
};

// The pass's rewrite on its own: returns how many convolutions and sunk ops it rewrote.
// `constant_parameters`: indices of `function`'s parameters declared constant.
int64_t AssignConvolutionLayouts(Function& function, std::span<const int64_t> constant_parameters = {});

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_ASSIGN_CONVOLUTION_LAYOUTS_H_
