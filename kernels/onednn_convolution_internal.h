// Internals shared by the convolution bindings (onednn_convolution.cc: convolution_forward and
// deconvolution_forward; onednn_convolution_backward.cc: convolution_backward_weights).
#ifndef ACCY_KERNELS_ONEDNN_CONVOLUTION_INTERNAL_H_
#define ACCY_KERNELS_ONEDNN_CONVOLUTION_INTERNAL_H_

#include <span>
#include <string_view>

#include "accy/ir.h"
#include "accy/status.h"
#include "kernels/onednn_common.h"
#include "src/fusion/fusion_plan.h"

namespace accy::kernels {

// kUnimplemented "<name>: does not map onto oneDNN's convolution primitives: <why> (the JIT
// runs it)".
Status UnmappedConvolution(std::string_view name, std::string_view why);

// Whether oneDNN's implementation name is its im2col + GEMM convolution ("gemm:jit").
bool IsGemmImplementation(std::string_view implementation);

// The convolution item `ops` (a weight-gradient-shaped convolution, then any epilogue, which
// stays on the JIT) on oneDNN convolution_backward_weights; kUnimplemented naming why when it
// does not map (onednn_convolution_backward.cc has the mapping and its source).
StatusOr<BoundPrimitive> BindBackwardWeights(std::span<const Operation* const> ops,
                                             const FusionPlan* fusion, LowPrecision types);

}  // namespace accy::kernels

#endif  // ACCY_KERNELS_ONEDNN_CONVOLUTION_INTERNAL_H_
