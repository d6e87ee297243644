// Contracts of the shape-generic catalog kernels: attribute parsing, operand/result checks and
// element-op estimates. The catalog (kernel_catalog.cc) validates calls with these functions and
// the oneDNN binding (onednn_kernel_call.cc) builds its memory descriptors from the parsed values, so
// both read one definition. Pure functions of a kernel_call op: thread-safe.
//
// Kernel-specific attributes ride on the kernel_call op next to call_target_name and version
// (FunctionBuilder::CreateOp(OpKind::kKernelCall, ...)). Every operand of a catalog kernel is
// read: its effect must be read or read_write (none and write are errors naming the operand). A
// result may alias operand 0 only for softmax, log_softmax and layer_norm (in place).
//
// accy.linalg.matmul v1 (oneDNN "Matrix Multiplication", dev_guide_matmul.html)
//   operands a [B..., M, K] (transpose_a: [B..., K, M]), b [B'..., K, N] (transpose_b:
//   [B'..., N, K]); a and b of one element type, f32, bf16 or f16 (f16 only where the host's
//   oneDNN implements it: otherwise binding is kUnimplemented). Rank >= 2; b has a's rank or
//   rank 2 (shared weights); batch dims equal, or 1 on one side (broadcast).
//   attrs transpose_a, transpose_b (bool, default false).
//   result [max(B, B')..., M, N] of a's element type or f32. Accumulates in f32.
//   element ops 2 * batch * M * N * K.
// accy.nn.softmax / accy.nn.log_softmax v1 (oneDNN "Softmax", dev_guide_softmax.html, v2 API)
//   operand x of f32, bf16 or f16, rank >= 1; attr axis (int, default -1: counted from the back).
//   result x's type: exp(x - max) / sum(exp(x - max)) along axis; log_softmax:
//   x - max - log(sum(exp(x - max))). element ops 5 per element.
// accy.nn.layer_norm v1 (oneDNN "Layer Normalization", dev_guide_layer_normalization.html)
//   operands x [..., C] (f32, bf16 or f16), scale [C] f32, shift [C] f32; attr epsilon (float,
//   default 1e-5). result x's type: (x - mean) / sqrt(var + epsilon) * scale + shift over the
//   last dim (biased variance). element ops 8 per element.
// accy.nn.conv2d v1 (oneDNN "Convolution", dev_guide_convolution.html)
//   operands x, w, optional bias [O] (f32, or x's type). layout "NCHW" (default): x [N, C, H, W],
//   w [O, C/groups, KH, KW] (OIHW), result [N, O, OH, OW]; layout "NHWC": x [N, H, W, C],
//   w [KH, KW, C/groups, O] (HWIO), result [N, OH, OW, O]. x, w and the result share one element
//   type (f32, bf16). attrs strides [sh, sw] (default 1, 1), padding [h_low, h_high, w_low,
//   w_high] (default 0), dilation [dh, dw] (1 = dense, StableHLO rhs_dilation; default 1, 1),
//   groups (default 1; C and O divisible by it). OH = (H + h_low + h_high - (KH-1)*dh - 1) / sh + 1.
//   element ops 2 * N * O * OH * OW * (C/groups) * KH * KW, plus N * O * OH * OW with bias.
// accy.nn.max_pool2d / accy.nn.avg_pool2d v1 (oneDNN "Pooling", dev_guide_pooling.html)
//   operand x [N, C, H, W] ("NCHW", default) or [N, H, W, C] ("NHWC"), f32 or bf16. attrs layout,
//   window [kh, kw] (required), strides (default: window), padding [h_low, h_high, w_low,
//   w_high] (default 0); avg only: count_include_pad (bool, default false: padding does not
//   count in the divisor). Padded elements never win a max. result x's type,
//   OH = (H + h_low + h_high - kh) / sh + 1. element ops N * C * OH * OW * kh * kw.
#ifndef ACCY_KERNELS_KERNEL_CONTRACTS_H_
#define ACCY_KERNELS_KERNEL_CONTRACTS_H_

#include <array>
#include <cstdint>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"

namespace accy::kernels {

struct MatmulParams {
  bool transpose_a = false;
  bool transpose_b = false;
  int64_t m = 0, n = 0, k = 0;
  std::vector<int64_t> batch_dims;  // the result's batch dims
};

struct SoftmaxParams {
  int64_t axis = 0;  // normalized to [0, rank)
};

struct LayerNormParams {
  float epsilon = 1e-5f;
};

// conv2d and the pooling kernels share the window geometry.
struct Window2dParams {
  bool nhwc = false;
  int64_t n = 0, c = 0, h = 0, w = 0;     // input
  int64_t o = 0, oh = 0, ow = 0;          // output channels (pooling: c) and extents
  std::array<int64_t, 2> window = {1, 1};  // kh, kw
  std::array<int64_t, 2> strides = {1, 1};
  std::array<int64_t, 2> padding_low = {0, 0};
  std::array<int64_t, 2> padding_high = {0, 0};
  std::array<int64_t, 2> dilation = {1, 1};  // 1 = dense
  int64_t groups = 1;
  bool has_bias = false;
  bool count_include_pad = false;
};

// Parse-and-check of each family; errors are kInvalidArgument naming the operand, result or
// attribute ("operand 1 (b) has K = 7, expected 8 (a's K)").
StatusOr<MatmulParams> ParseMatmul(const Operation& call);
StatusOr<SoftmaxParams> ParseSoftmax(const Operation& call);
StatusOr<LayerNormParams> ParseLayerNorm(const Operation& call);
StatusOr<Window2dParams> ParseConv2d(const Operation& call);
// `is_max` selects max_pool2d (no count_include_pad attribute) or avg_pool2d.
StatusOr<Window2dParams> ParsePool2d(const Operation& call, bool is_max);

// The catalog's validate/estimate hooks (kernel_catalog.h), one pair per family.
Status ValidateMatmul(const Operation& call);
Status ValidateSoftmax(const Operation& call);
Status ValidateLayerNorm(const Operation& call);
Status ValidateConv2d(const Operation& call);
Status ValidateMaxPool2d(const Operation& call);
Status ValidateAvgPool2d(const Operation& call);
uint64_t EstimateMatmul(const Operation& call);
uint64_t EstimateSoftmax(const Operation& call);  // softmax and log_softmax
uint64_t EstimateLayerNorm(const Operation& call);
uint64_t EstimateConv2d(const Operation& call);
uint64_t EstimatePool2d(const Operation& call);

}  // namespace accy::kernels

#endif  // ACCY_KERNELS_KERNEL_CONTRACTS_H_
