// convolution's attributes (accy/ir.h table) as one ConvolutionSpec (accy/builder.h), read and
// written in one place so the builder, verifier, printer, reference evaluator and the codegen
// paths agree on names and defaults (StableHLO spec "convolution": absent window attributes
// mean strides 1, padding 0, dilations 1, no reversal; absent group counts mean 1).
//
// Pure functions over values the caller owns; thread-safe.
#ifndef ACCY_SRC_IR_CONVOLUTION_ATTRIBUTES_H_
#define ACCY_SRC_IR_CONVOLUTION_ATTRIBUTES_H_

#include <cstdint>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "accy/status.h"
#include "src/ir/type_inference.h"

namespace accy::ir_internal {

// The spec held by `attrs`, as given (window lists may be empty or of any length; sizes are
// checked by InferConvolution). kInvalidArgument "convolution: missing attribute ..." or
// "... has the wrong kind ..." for a dimension-number attribute that is absent or mistyped, a
// window attribute or group count of the wrong kind, or a padding list of odd length.
StatusOr<ConvolutionSpec> ReadConvolutionSpec(const AttributeView& attrs);

// Every empty window list of `spec` set to its default for `spatial_rank` spatial dims.
void FillConvolutionDefaults(ConvolutionSpec* spec, int64_t spatial_rank);

// The IR attributes of `spec` (every attribute written; empty window lists stay absent, which
// means their defaults).
std::vector<NamedAttribute> ConvolutionAttributes(const ConvolutionSpec& spec);

// The spec of a verified convolution op, with its window lists filled to the spatial rank.
// ACCY_CHECKs that the op is a convolution whose attributes read.
ConvolutionSpec ConvolutionSpecOf(const Operation& op);

// Output size of one spatial dim (spec "convolution" C25): the dilated, padded input of
// `input_size` elements slid over by the dilated kernel of `kernel_size` elements in steps of
// `stride`; 0 for an empty window. Sizes in elements; arguments already checked positive where
// the spec requires (strides, dilations) and padded sizes not negative.
int64_t ConvolutionOutputSize(int64_t input_size, int64_t kernel_size, int64_t stride,
                              int64_t pad_low, int64_t pad_high, int64_t lhs_dilation,
                              int64_t rhs_dilation);

// A convolution whose kernel window has at least this many times the positions of its result's
// spatial dims is taken for a weight gradient (JAX's conv(x, dy): the window is the forward
// output gradient, the result the forward kernel; 3x3 at 7x7 gives 49 / 9, a 1x1 layer's 49 and
// more): oneDNN's convolution_backward_weights runs it (kernels/onednn_convolution_backward.cc)
// and assign-convolution-layouts leaves its layout.
constexpr int64_t kWeightGradientWindowRatio = 4;

// Whether the verified convolution `op` has the shape of a weight gradient: its kernel window
// (the rhs's spatial extent) has at least kWeightGradientWindowRatio times the positions of its
// result's spatial dims. An empty result counts as one (0 positions).
bool IsWeightGradientShape(const Operation& op);

}  // namespace accy::ir_internal

#endif  // ACCY_SRC_IR_CONVOLUTION_ATTRIBUTES_H_
