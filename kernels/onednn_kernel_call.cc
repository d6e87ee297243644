// kernel_call bindings: each catalog family onto its oneDNN 2.6 primitive (kernel_contracts.h
// lists the contracts; the developer-guide page of each primitive is named at its binder).
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/kernel_catalog.h"
#include "kernels/kernel_contracts.h"
#include "kernels/host_kernel_registry.h"
#include "kernels/onednn_bindings.h"
#include "src/util/str_cat.h"

namespace accy::kernels {
namespace {

using dt = dnnl::memory::data_type;

// The descriptor type of `value` in a binding built with `types` (onednn_common.h).
dt TypeOf(const Value* value, LowPrecision types) {
  return *ToDnnlType(value->type().element_type(), types);
}

// Adds buffer-backed argument `arg` for buffer `buffer` with descriptor `md`.
void AddArgument(BoundPrimitive& bound, int arg, const dnnl::memory::desc& md, int buffer) {
  bound.arguments.push_back({arg, dnnl::memory(md, CpuEngine(), DNNL_MEMORY_NONE), buffer});
}

// The user-scratchpad attribute every kernel_call primitive is created with.
dnnl::primitive_attr ScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// Row-major strides of `dims` with the last two swapped in role: the descriptor of a
// [.., R, C] logical view over a [.., C, R] row-major buffer.
std::vector<int64_t> TransposedStrides(std::vector<int64_t> dims) {
  const size_t r = dims.size();
  std::swap(dims[r - 1], dims[r - 2]);
  std::vector<int64_t> strides = RowMajorStrides(dims);
  std::swap(strides[r - 1], strides[r - 2]);
  return strides;
}

// oneDNN "Matrix Multiplication" (dev_guide_matmul.html): src [B.., M, K], weights [B'.., K, N]
// (1 in broadcast batch dims), dst [B.., M, N]; transposes are strides, not copies.
Status BindMatmul(const Operation& call, LowPrecision types, BoundPrimitive& bound) {
  ACCY_ASSIGN_OR_RETURN(MatmulParams p, ParseMatmul(call));
  const TensorType& a = call.operand(0)->type();
  const TensorType& b = call.operand(1)->type();
  const int64_t rank = a.rank();
  std::vector<int64_t> a_dims(a.dims().begin(), a.dims().end() - 2);
  a_dims.insert(a_dims.end(), {p.m, p.k});
  std::vector<int64_t> a_strides = p.transpose_a ? TransposedStrides(a_dims) : RowMajorStrides(a_dims);
  std::vector<int64_t> b_dims(static_cast<size_t>(rank - 2), 1);
  if (b.rank() == rank) std::copy(b.dims().begin(), b.dims().end() - 2, b_dims.begin());
  b_dims.insert(b_dims.end(), {p.k, p.n});
  std::vector<int64_t> b_strides = p.transpose_b ? TransposedStrides(b_dims) : RowMajorStrides(b_dims);
  const TensorType& out = call.result(0)->type();
  const dnnl::memory::desc src_md = StridedDesc(a_dims, a_strides, TypeOf(call.operand(0), types));
  const dnnl::memory::desc weights_md = StridedDesc(b_dims, b_strides, TypeOf(call.operand(1), types));
  const dnnl::memory::desc dst_md = StridedDesc(out.dims(), RowMajorStrides(out.dims()),
                                                TypeOf(call.result(0), types));
  if (p.k == 0) bound.zero_fill_output = true;
  if (out.element_count() == 0 || p.k == 0) return absl::OkStatus();
  dnnl::matmul::primitive_desc matmul_pd(dnnl::matmul::desc(src_md, weights_md, dst_md),
                                         ScratchpadAttr(), CpuEngine());
  bound.primitive = dnnl::matmul(matmul_pd);
  AddArgument(bound, DNNL_ARG_SRC, src_md, 0);
  AddArgument(bound, DNNL_ARG_WEIGHTS, weights_md, 1);
  AddArgument(bound, DNNL_ARG_DST, dst_md, 2);
  AddScratchpad(matmul_pd, bound);
  return absl::OkStatus();
}

// The seed's fixed [4, 8] x [8, 16] f32 product: a plain 2-D matmul.
Status BindFixedMatrixProduct(const Operation& call, BoundPrimitive& bound) {
  const dnnl::memory::desc src_md = StridedDesc({4, 8}, {8, 1}, dt::f32);
  const dnnl::memory::desc weights_md = StridedDesc({8, 16}, {16, 1}, dt::f32);
  const dnnl::memory::desc dst_md = StridedDesc({4, 16}, {16, 1}, dt::f32);
  dnnl::matmul::primitive_desc matmul_pd(dnnl::matmul::desc(src_md, weights_md, dst_md),
                                         ScratchpadAttr(), CpuEngine());
  bound.primitive = dnnl::matmul(matmul_pd);
  AddArgument(bound, DNNL_ARG_SRC, src_md, 0);
  AddArgument(bound, DNNL_ARG_WEIGHTS, weights_md, 1);
  AddArgument(bound, DNNL_ARG_DST, dst_md, 2);
  AddScratchpad(matmul_pd, bound);
  return absl::OkStatus();
}

// oneDNN "Softmax" v2 (dev_guide_softmax.html): softmax_accurate or softmax_log along the axis.
// In place when result 0 aliases operand 0 (the dst memory gets the src pointer).
Status BindSoftmax(const Operation& call, bool log, LowPrecision types, BoundPrimitive& bound) {
  ACCY_ASSIGN_OR_RETURN(SoftmaxParams p, ParseSoftmax(call));
  const TensorType& x = call.operand(0)->type();
  if (x.element_count() == 0) return absl::OkStatus();
  const dnnl::memory::desc src_md = StridedDesc(x.dims(), RowMajorStrides(x.dims()), TypeOf(call.operand(0), types));
  dnnl::softmax_v2_forward::primitive_desc softmax_pd(
      dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_inference,
                                     log ? dnnl::algorithm::softmax_log
                                         : dnnl::algorithm::softmax_accurate,
                                     src_md, src_md, static_cast<int>(p.axis)),
      ScratchpadAttr(), CpuEngine());
  bound.primitive = dnnl::softmax_v2_forward(softmax_pd);
  AddArgument(bound, DNNL_ARG_SRC, src_md, 0);
  AddArgument(bound, DNNL_ARG_DST, src_md, 1);
  // Rows holding NaN or +inf are NaN throughout (the contract), which oneDNN does not give.
  BoundPrimitive::NanRows& rows = bound.nan_rows;
  rows.type = x.element_type();
  rows.outer = 1;
  rows.inner = 1;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (d < p.axis) rows.outer *= x.dim(d);
    if (d > p.axis) rows.inner *= x.dim(d);
  }
  rows.extent = x.dim(p.axis);
  AddScratchpad(softmax_pd, bound);
  return absl::OkStatus();
}

// oneDNN "Layer Normalization" (dev_guide_layer_normalization.html), forward_inference with
// use_scale | use_shift: statistics over the last dim are computed and not returned.
Status BindLayerNorm(const Operation& call, LowPrecision types, BoundPrimitive& bound) {
  ACCY_ASSIGN_OR_RETURN(LayerNormParams p, ParseLayerNorm(call));
  const TensorType& x = call.operand(0)->type();
  if (x.element_count() == 0) return absl::OkStatus();
  // oneDNN's layer normalization takes rank 2 and up: a rank-1 x is one row of C, [1, C].
  const std::vector<int64_t> dims =
      x.rank() == 1 ? std::vector<int64_t>{1, x.dim(0)} : x.dims();
  const dnnl::memory::desc data_md = StridedDesc(dims, RowMajorStrides(dims), TypeOf(call.operand(0), types));
  const int64_t c = x.dim(x.rank() - 1);
  const dnnl::memory::desc scale_md = StridedDesc({c}, {1}, dt::f32);
  dnnl::layer_normalization_forward::primitive_desc layer_norm_pd(
      dnnl::layer_normalization_forward::desc(
          dnnl::prop_kind::forward_inference, data_md, p.epsilon,
          dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift),
      ScratchpadAttr(), CpuEngine());
  bound.primitive = dnnl::layer_normalization_forward(layer_norm_pd);
  AddArgument(bound, DNNL_ARG_SRC, data_md, 0);
  AddArgument(bound, DNNL_ARG_SCALE, scale_md, 1);
  AddArgument(bound, DNNL_ARG_SHIFT, scale_md, 2);
  AddArgument(bound, DNNL_ARG_DST, data_md, 3);
  AddScratchpad(layer_norm_pd, bound);
  return absl::OkStatus();
}

// Logical NCHW descriptor over an NCHW or NHWC buffer.
std::vector<int64_t> ActivationStrides(bool nhwc, int64_t c, int64_t h, int64_t w) {
  return nhwc ? std::vector<int64_t>{h * w * c, 1, w * c, c}
              : std::vector<int64_t>{c * h * w, h * w, w, 1};
}

// oneDNN "Convolution" (dev_guide_convolution.html): convolution_direct, forward_inference.
// Weights are a plain (grouped: goihw-shaped) descriptor over the OIHW or HWIO buffer, or, when
// a constant defines them, prepacked into the primitive's preferred layout; dilation is
// oneDNN's (accy's - 1).
Status BindConv2d(const Operation& call, LowPrecision types, BoundPrimitive& bound) {
  ACCY_ASSIGN_OR_RETURN(Window2dParams p, ParseConv2d(call));
  if (call.result(0)->type().element_count() == 0) return absl::OkStatus();
  const dt type = TypeOf(call.operand(0), types);
  const dnnl::memory::desc src_md =
      StridedDesc({p.n, p.c, p.h, p.w}, ActivationStrides(p.nhwc, p.c, p.h, p.w), type);
  const dnnl::memory::desc dst_md =
      StridedDesc({p.n, p.o, p.oh, p.ow}, ActivationStrides(p.nhwc, p.o, p.oh, p.ow), type);
  const int64_t g = p.groups, og = p.o / g, ig = p.c / g, kh = p.window[0], kw = p.window[1];
  std::vector<int64_t> w_dims = {g, og, ig, kh, kw};
  std::vector<int64_t> w_strides =
      p.nhwc ? std::vector<int64_t>{og, 1, p.o, kw * ig * p.o, ig * p.o}   // HWIO
             : std::vector<int64_t>{og * ig * kh * kw, ig * kh * kw, kh * kw, kw, 1};  // OIHW
  if (g == 1) {
    w_dims.erase(w_dims.begin());
    w_strides.erase(w_strides.begin());
  }
  const dnnl::memory::desc weights_md = StridedDesc(w_dims, w_strides, type);
  const dnnl::memory::dims strides = {p.strides[0], p.strides[1]};
  const dnnl::memory::dims dilates = {p.dilation[0] - 1, p.dilation[1] - 1};
  const dnnl::memory::dims padding_l = {p.padding_low[0], p.padding_low[1]};
  const dnnl::memory::dims padding_r = {p.padding_high[0], p.padding_high[1]};
  dnnl::memory::desc bias_md;
  if (p.has_bias) bias_md = StridedDesc({p.o}, {1}, TypeOf(call.operand(2), types));
  // Constant weights: the convolution picks their layout (format_tag::any), one reorder here.
  const DenseElements* weights = ConstantPayload(call.operand(1));
  const dnnl::memory::desc conv_weights_md =
      weights != nullptr ? dnnl::memory::desc(weights_md.dims(), type, dnnl::memory::format_tag::any)
                         : weights_md;
  dnnl::convolution_forward::desc conv_desc =
      p.has_bias ? dnnl::convolution_forward::desc(
                       dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                       src_md, conv_weights_md, bias_md, dst_md, strides, dilates, padding_l, padding_r)
                 : dnnl::convolution_forward::desc(
                       dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                       src_md, conv_weights_md, dst_md, strides, dilates, padding_l, padding_r);
  dnnl::convolution_forward::primitive_desc conv_pd(conv_desc, ScratchpadAttr(), CpuEngine());
  bound.primitive = dnnl::convolution_forward(conv_pd);
  AddArgument(bound, DNNL_ARG_SRC, src_md, 0);
  if (weights != nullptr) {
    bound.arguments.push_back(
        {DNNL_ARG_WEIGHTS, PrepackWeights(*weights, weights_md, conv_pd.weights_desc()), -1});
  } else {
    AddArgument(bound, DNNL_ARG_WEIGHTS, weights_md, 1);
  }
  if (p.has_bias) AddArgument(bound, DNNL_ARG_BIAS, bias_md, 2);
  AddArgument(bound, DNNL_ARG_DST, dst_md, p.has_bias ? 3 : 2);
  AddScratchpad(conv_pd, bound);
  return absl::OkStatus();
}

// oneDNN "Pooling" v2 (dev_guide_pooling.html): pooling_max, pooling_avg_include_padding or
// pooling_avg_exclude_padding, forward_inference (no workspace).
Status BindPool2d(const Operation& call, bool is_max, LowPrecision types, BoundPrimitive& bound) {
  ACCY_ASSIGN_OR_RETURN(Window2dParams p, ParsePool2d(call, is_max));
  if (call.result(0)->type().element_count() == 0) return absl::OkStatus();
  const dt type = TypeOf(call.operand(0), types);
  const dnnl::memory::desc src_md =
      StridedDesc({p.n, p.c, p.h, p.w}, ActivationStrides(p.nhwc, p.c, p.h, p.w), type);
  const dnnl::memory::desc dst_md =
      StridedDesc({p.n, p.c, p.oh, p.ow}, ActivationStrides(p.nhwc, p.c, p.oh, p.ow), type);
  const dnnl::algorithm algorithm = is_max ? dnnl::algorithm::pooling_max
                                    : p.count_include_pad
                                        ? dnnl::algorithm::pooling_avg_include_padding
                                        : dnnl::algorithm::pooling_avg_exclude_padding;
  dnnl::pooling_v2_forward::primitive_desc pooling_pd(
      dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, algorithm, src_md,
                                     dst_md, {p.strides[0], p.strides[1]},
                                     {p.window[0], p.window[1]}, {0, 0},
                                     {p.padding_low[0], p.padding_low[1]},
                                     {p.padding_high[0], p.padding_high[1]}),
      ScratchpadAttr(), CpuEngine());
  bound.primitive = dnnl::pooling_v2_forward(pooling_pd);
  AddArgument(bound, DNNL_ARG_SRC, src_md, 0);
  AddArgument(bound, DNNL_ARG_DST, dst_md, 1);
  AddScratchpad(pooling_pd, bound);
  return absl::OkStatus();
}

// Binds catalog entry `entry` for `call` into `bound` with `types`; a oneDNN error becomes a
// status (DnnlErrorStatus: kUnimplemented when oneDNN has no implementation).
Status BindCatalogCall(const Operation& call, const CatalogDescriptor& entry, LowPrecision types,
                       BoundPrimitive& bound) {
  try {
    switch (entry.family) {
      case KernelFamily::kFixedMatrixProduct:
        ACCY_RETURN_IF_ERROR(BindFixedMatrixProduct(call, bound));
        break;
      case KernelFamily::kMatmul:
        ACCY_RETURN_IF_ERROR(BindMatmul(call, types, bound));
        break;
      case KernelFamily::kSoftmax:
      case KernelFamily::kLogSoftmax:
        ACCY_RETURN_IF_ERROR(
            BindSoftmax(call, entry.family == KernelFamily::kLogSoftmax, types, bound));
        break;
      case KernelFamily::kLayerNorm:
        ACCY_RETURN_IF_ERROR(BindLayerNorm(call, types, bound));
        break;
      case KernelFamily::kConv2d:
        ACCY_RETURN_IF_ERROR(BindConv2d(call, types, bound));
        break;
      case KernelFamily::kMaxPool2d:
      case KernelFamily::kAvgPool2d:
        ACCY_RETURN_IF_ERROR(
            BindPool2d(call, entry.family == KernelFamily::kMaxPool2d, types, bound));
        break;
    }
    StageArguments(bound, types);
  } catch (const dnnl::error& error) {
    std::string what = StrCat(entry.binding, " for ");
    for (int64_t i = 0; i < call.num_operands(); ++i) {
      what += StrCat(i ? ", " : "", call.operand(i)->type().ToString());
    }
    return DnnlErrorStatus(error, bound.name, what);
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<BoundPrimitive> BindKernelCall(const Operation& call) {
  BoundPrimitive bound;
  bound.name = KernelCallName(call);
  for (const Value* operand : call.operands()) bound.inputs.push_back(operand);
  for (int64_t r = 0; r < call.num_results(); ++r) bound.outputs.push_back(call.result(r));
  bound.output_aliases.assign(bound.outputs.size(), -1);
  std::vector<int64_t> aliases = call.GetInts("result_aliases");
  for (size_t r = 0; r < aliases.size() && r < bound.output_aliases.size(); ++r) {
    bound.output_aliases[r] = static_cast<int>(aliases[r]);
  }
  // Registered host kernels first: their targets never collide with the catalog's.
  if (std::shared_ptr<const HostKernelSpec> host = FindHostKernelFor(call)) {
    ACCY_RETURN_IF_ERROR(ValidateHostKernelCall(call, *host));
    bound.host = std::move(host);
    return bound;
  }
  ACCY_ASSIGN_OR_RETURN(CatalogDescriptor entry, ValidateKernelCall(call));
  BoundPrimitive native = bound;
  Status status = BindCatalogCall(call, entry, LowPrecision::kNative, native);
  // No bf16/f16 primitive on this ISA (or only oneDNN's reference one): the f32 primitive over
  // staged copies, when oneDNN has an optimized one for it.
  const Operation* const ops[] = {&call};
  if (HasLowPrecisionTensor(ops) &&
      ((!status.ok() && status.code() == absl::StatusCode::kUnimplemented) ||
       (status.ok() && IsReferenceImplementation(native.implementation)))) {
    Status staged_status = BindCatalogCall(call, entry, LowPrecision::kStagedAsF32, bound);
    if (staged_status.ok() && (!status.ok() || !IsReferenceImplementation(bound.implementation))) {
      if (!bound.implementation.empty()) bound.implementation += " (bf16/f16 staged as f32)";
      return bound;
    }
  }
  ACCY_RETURN_IF_ERROR(status);
  return native;
}

}  // namespace accy::kernels
