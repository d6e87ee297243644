// convolution items on oneDNN convolution_forward and deconvolution_forward
// (dev_guide_convolution.html, oneDNN 2.6 API)
// where the program maps onto it exactly; everything else is kUnimplemented naming the reason,
// and the engine runs it on the JIT (jit/convolution_emitter.cc).
//
// Maps: spatial rank 1-3; f32 (bf16/f16 natively where oneDNN has those primitives, else over
// staged f32 copies, onednn_common.h) with a result of the operand type; batch_group_count 1;
// lhs_dilation all 1, no window_reversal and padding not negative for convolution_forward; a
// transposed convolution (lhs_dilation > 1 on some dim: JAX's input gradient of a strided
// convolution, its kernel's reverse folded into window_reversal by simplify-layout-chains) on
// deconvolution_forward where MapDeconvolution says it maps. A weight gradient
// (ir_internal::IsWeightGradientShape) is tried on convolution_backward_weights first
// (onednn_convolution_backward.cc). Descriptors are plain with the program's own strides (src {N, C, spatial...},
// weights {O, I, spatial...} or {G, O/G, I, spatial...} for feature groups, dst {N, O,
// spatial...}), so NHWC and NCHW buffers are read in place; rhs_dilation d is oneDNN dilation
// d - 1. Constant weights are reordered once, at binding, into the layout the primitive picks
// (format_tag::any). Weights read from a buffer take the preferred layout too, through a reorder
// of the buffer: once per address when the caller declared the parameter constant
// (LibraryKernelOptions::constant_parameters); before each run when only oneDNN's reference
// implementation takes the buffer's layout, or when that layout gets only the im2col + GEMM
// convolution and the window is large enough to pay for it (PreferredWeightsPay); otherwise
// the primitive reads the buffer in place. When the program's activation layout gets only the
// im2col + GEMM convolution (NCHW: gemm:jit) and the window is not a plain 1x1, the input and
// result go through the layouts the primitive picks (blocked nChw16c / nChw8c), reordered
// before and after each run (BlockedActivationsPay). oneDNN's reference implementation
// ("ref:any") is refused: the JIT is faster.
//
// A convolution_epilogue item's elementwise ops map as far as they go onto convolution_forward's
// bias (a leading add of a per-feature vector) and eltwise post-ops (MapEpilogue,
// onednn_dot_epilogue.cc: no binary post-ops, relu or exp); the item's output is then the last
// mapped value and the JIT computes the rest over it. oneDNN's im2col + GEMM convolution takes
// no bias or post-op (it applies them element by element).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "kernels/onednn_bindings.h"
#include "kernels/onednn_convolution_internal.h"
#include "kernels/onednn_dot_mapping.h"
#include "src/ir/convolution_attributes.h"
#include "src/util/str_cat.h"

namespace accy::kernels {
Status UnmappedConvolution(std::string_view name, std::string_view why) {
  return absl::UnimplementedError(
      StrCat(name, ": does not map onto oneDNN's convolution primitives: ", why, " (the JIT runs it)"));
}

bool IsGemmImplementation(std::string_view implementation) {
  return implementation.find("gemm") != std::string_view::npos;
}

namespace {

Status Unmapped(std::string_view name, std::string_view why) { return UnmappedConvolution(name, why); }

using dt = dnnl::memory::data_type;


struct ConvMapping {
  std::string name;
  dnnl::memory::desc src_md, weights_md, dst_md;
  dnnl::memory::dims strides, dilates, padding_l, padding_r;
  bool empty = false;  // zero-size output or contraction: no primitive
  // A transposed convolution (lhs_dilation > 1): deconvolution_forward with these strides
  // (MapDeconvolution).
  bool deconvolution = false;
};

// A convolution with lhs_dilation D > 1 on some spatial dim (a transposed convolution: JAX's
// input gradient of a strided convolution, conv_transpose) as oneDNN deconvolution_forward
// (dev_guide_convolution.html, "Deconvolution": dst[o * S + k * (d + 1) - pl] += src[o] * w[k]),
// per spatial dim, window_strides 1, kernel size K, rhs_dilation R, padding (lo, hi), lhs of
// size I, result of size O. StableHLO (spec "convolution") reads the dilated, padded lhs at
// o + k * R - lo for result o and kernel tap k, i.e. lhs i feeds o = i * D + lo - k * R; with
// kd = K - 1 - k that is o = i * D - ((K - 1) * R - lo) + kd * R, deconvolution's form with
// stride D, dilation R - 1, padding_l (K - 1) * R - lo, reading the kernel at K - 1 - kd, which
// is the program's tap when window_reversal is set (a dim of one tap needs no reversal).
// padding_r is what the sizes leave, (I - 1) * D + (K - 1) * R + 1 - padding_l - O; when it is
// in (-D, 0) the result's last positions receive no tap (zeros in both) and 0 satisfies
// oneDNN's size check. Everything else is Unmapped, naming what.
Status MapDeconvolution(const ConvolutionSpec& spec, int64_t spatial_index, int64_t input_size,
                        int64_t kernel_size, int64_t output_size, ConvMapping& m) {
  const size_t s = static_cast<size_t>(spatial_index);
  if (spec.window_strides[s] != 1) {
    return Unmapped(m.name, StrCat("lhs_dilation with window stride ", spec.window_strides[s],
                                   " on spatial dim ", s));
  }
  if (kernel_size > 1 && !spec.window_reversal[s]) {
    return Unmapped(m.name, StrCat("lhs_dilation without window_reversal on spatial dim ", s,
                                   " (deconvolution reads the kernel reversed)"));
  }
  const int64_t d = spec.lhs_dilation[s], r = spec.rhs_dilation[s];
  const int64_t padding_l = (kernel_size - 1) * r - spec.padding[s].first;
  const int64_t padding_r = (input_size - 1) * d + (kernel_size - 1) * r + 1 - padding_l - output_size;
  if (padding_l < 0 || padding_r <= -d) {
    return Unmapped(m.name, StrCat("lhs_dilation with padding (", spec.padding[s].first, ", ",
                                   spec.padding[s].second, ") on spatial dim ", s,
                                   " (beyond the transposed convolution's reach)"));
  }
  m.strides.push_back(d);
  m.dilates.push_back(r - 1);
  m.padding_l.push_back(padding_l);
  m.padding_r.push_back(std::max<int64_t>(padding_r, 0));
  return absl::OkStatus();
}

// The spec's constraints on what oneDNN computes exactly (file comment); fills the descriptors.
Status MapConvolution(const Operation& op, LowPrecision types, ConvMapping& m) {
  const ConvolutionSpec spec = ir_internal::ConvolutionSpecOf(op);
  const ConvDimensionNumbers& dn = spec.dimension_numbers;
  const TensorType& lhs = op.operand(0)->type();
  const TensorType& rhs = op.operand(1)->type();
  const TensorType& out = op.result(0)->type();
  const size_t spatial_rank = dn.input_spatial_dimensions.size();
  if (spatial_rank < 1 || spatial_rank > 3) {
    return Unmapped(m.name, StrCat(spatial_rank, " spatial dims (oneDNN takes 1 to 3)"));
  }
  std::optional<dt> type = ToDnnlType(lhs.element_type(), types);
  if (!type || out.element_type() != lhs.element_type()) {
    return Unmapped(m.name, StrCat("element types ", ElementTypeName(lhs.element_type()), " -> ",
                                   ElementTypeName(out.element_type()),
                                   " (f32, bf16, f16 with a result of the same type)"));
  }
  if (spec.batch_group_count != 1) {
    return Unmapped(m.name, StrCat("batch_group_count ", spec.batch_group_count));
  }
  for (size_t s = 0; s < spatial_rank; ++s) {
    if (spec.lhs_dilation[s] != 1) m.deconvolution = true;
  }
  for (size_t s = 0; s < spatial_rank && !m.deconvolution; ++s) {
    // Reversing a window of one tap changes nothing.
    if (spec.window_reversal[s] && rhs.dim(dn.kernel_spatial_dimensions[s]) > 1)
      return Unmapped(m.name, StrCat("window_reversal on spatial dim ", s));
    if (spec.padding[s].first < 0 || spec.padding[s].second < 0) {
      return Unmapped(m.name, StrCat("negative padding on spatial dim ", s));
    }
  }
  const std::vector<int64_t> ls = RowMajorStrides(lhs.dims());
  const std::vector<int64_t> rs = RowMajorStrides(rhs.dims());
  const std::vector<int64_t> os = RowMajorStrides(out.dims());
  const int64_t groups = spec.feature_group_count;
  const int64_t out_features = rhs.dim(dn.kernel_output_feature_dimension);
  std::vector<int64_t> src_dims = {lhs.dim(dn.input_batch_dimension),
                                   lhs.dim(dn.input_feature_dimension)};
  std::vector<int64_t> src_strides = {ls[dn.input_batch_dimension], ls[dn.input_feature_dimension]};
  std::vector<int64_t> dst_dims = {out.dim(dn.output_batch_dimension),
                                   out.dim(dn.output_feature_dimension)};
  std::vector<int64_t> dst_strides = {os[dn.output_batch_dimension],
                                      os[dn.output_feature_dimension]};
  std::vector<int64_t> w_dims, w_strides;
  const int64_t o_stride = rs[dn.kernel_output_feature_dimension];
  if (groups > 1) {
    w_dims = {groups, out_features / groups};
    w_strides = {out_features / groups * o_stride, o_stride};
  } else {
    w_dims = {out_features};
    w_strides = {o_stride};
  }
  w_dims.push_back(rhs.dim(dn.kernel_input_feature_dimension));
  w_strides.push_back(rs[dn.kernel_input_feature_dimension]);
  for (size_t s = 0; s < spatial_rank; ++s) {
    src_dims.push_back(lhs.dim(dn.input_spatial_dimensions[s]));
    src_strides.push_back(ls[dn.input_spatial_dimensions[s]]);
    w_dims.push_back(rhs.dim(dn.kernel_spatial_dimensions[s]));
    w_strides.push_back(rs[dn.kernel_spatial_dimensions[s]]);
    dst_dims.push_back(out.dim(dn.output_spatial_dimensions[s]));
    dst_strides.push_back(os[dn.output_spatial_dimensions[s]]);
    if (m.deconvolution) {
      ACCY_RETURN_IF_ERROR(MapDeconvolution(spec, static_cast<int64_t>(s), src_dims.back(),
                                            w_dims.back(), dst_dims.back(), m));
      continue;
    }
    m.strides.push_back(spec.window_strides[s]);
    m.dilates.push_back(spec.rhs_dilation[s] - 1);
    m.padding_l.push_back(spec.padding[s].first);
    // The high padding the output really uses, at least 0. StableHLO and oneDNN both drop a
    // partial last window: oneDNN's descriptor wants dst = (src + pl + pr - window) / stride + 1
    // (convolution desc consistency check). When the last window ends before the input does
    // (a 1x1 stride-2 convolution of an even size, as ResNet's downsampling shortcut), the used
    // padding is in (-stride, 0) and pr = 0 satisfies the same equation.
    const int64_t window = (w_dims.back() - 1) * spec.rhs_dilation[s] + 1;
    const int64_t used = (dst_dims.back() - 1) * spec.window_strides[s] + window -
                         src_dims.back() - spec.padding[s].first;
    m.padding_r.push_back(std::max<int64_t>(used, 0));
  }
  m.empty = out.element_count() == 0 || lhs.element_count() == 0 || rhs.element_count() == 0;
  if (m.empty) return absl::OkStatus();
  m.src_md = StridedDesc(src_dims, src_strides, *type);
  m.weights_md = StridedDesc(w_dims, w_strides, *type);
  m.dst_md = StridedDesc(dst_dims, dst_strides, *type);
  return absl::OkStatus();
}

// The forward-inference primitive_desc of convolution_forward or deconvolution_forward over
// `m`'s geometry (a zero `bias` descriptor disables the bias term).
template <typename Primitive>
dnnl::primitive_desc ForwardPrimitiveDesc(dnnl::algorithm algorithm, const ConvMapping& m,
                                          const dnnl::memory::desc& src,
                                          const dnnl::memory::desc& weights,
                                          const dnnl::memory::desc& bias,
                                          const dnnl::memory::desc& dst,
                                          const dnnl::primitive_attr& attr) {
  const typename Primitive::desc desc(dnnl::prop_kind::forward_inference, algorithm, src, weights,
                                      bias, dst, m.strides, m.dilates, m.padding_l, m.padding_r);
  return typename Primitive::primitive_desc(desc, attr, CpuEngine());
}


// Whether weights read from a buffer (not declared constant) are worth reordering into the
// primitive's preferred layout before every run when, in their own layout, oneDNN 2.6 only has
// its im2col + GEMM convolution ("gemm:jit"). Measured on Intel Sapphire Rapids (avx512_core),
// 1 thread, NHWC f32, batch 1, ResNet-50's shapes, GEMM vs direct brgconv with blocked weights
// (ms; the reorder of cold weights from the model run costs about weight bytes / 3.6 GB/s):
// 3x3 64->64 at 56x56 4.87 vs 1.82, 3x3 128->128 at 28x28 3.47 vs 1.82, 3x3 256->256 at 14x14
// 3.18 vs 1.92 (+0.7 reorder), 3x3 512->512 at 7x7 2.73 vs 1.65 (+2.6 reorder), 7x7 3->64
// stride 2 at 224x224 4.67 vs 2.10; 1x1 convolutions need no im2col and gain little: 1x1
// 1024->256 at 14x14 0.88 vs 0.82 (+0.3 reorder), 1x1 1024->2048 stride 2 2.24 vs 1.72 (+2.3).
// So: a window of more than one position, and at least 128 output positions (batch x output
// spatial) reading each packed weight, which pays for the reorder of its element.
bool PreferredWeightsPay(const Operation& op) {
  const ConvolutionSpec spec = ir_internal::ConvolutionSpecOf(op);
  const ConvDimensionNumbers& dn = spec.dimension_numbers;
  const TensorType& rhs = op.operand(1)->type();
  const TensorType& out = op.result(0)->type();
  int64_t window = 1, positions = out.dim(dn.output_batch_dimension);
  for (size_t s = 0; s < dn.kernel_spatial_dimensions.size(); ++s) {
    window *= rhs.dim(dn.kernel_spatial_dimensions[s]);
    positions *= out.dim(dn.output_spatial_dimensions[s]);
  }
  return window > 1 && positions >= 128;
}

// Whether activations in the program's layout are worth reordering (before and after each run)
// into the layouts the primitive picks when, in their own layout, oneDNN 2.6 has only im2col +
// GEMM ("gemm:jit") or its reference code: NCHW f32 on AMD Zen 4, AVX-512, batch 1, ResNet-50's
// shapes (bench/bench_convolution.cc, raw primitives in NCHW / NHWC / accy NCHW through the
// blocked layouts, ms, 1 thread): 7x7 3->64 stride 2 at 224 3.18 / 2.06 / 2.20, 3x3 64->64 at
// 56 2.80 / 1.95 / 2.03, depthwise 3x3 128 at 56 1.72 / 0.10 / 0.28; but 1x1 256->512 stride 2
// 2.04 / 1.77 / 2.13 (the reorders of its 4.8 MB cost more than GEMM loses) and a 1x1 stride-1
// convolution is a plain GEMM. So: a window of more than one position.
bool BlockedActivationsPay(const Operation& op) {
  const ConvolutionSpec spec = ir_internal::ConvolutionSpecOf(op);
  const ConvDimensionNumbers& dn = spec.dimension_numbers;
  const TensorType& rhs = op.operand(1)->type();
  int64_t window = 1;
  for (size_t s = 0; s < dn.kernel_spatial_dimensions.size(); ++s) {
    window *= rhs.dim(dn.kernel_spatial_dimensions[s]);
  }
  return window > 1;
}

// Maps the item (its convolution, then the epilogue as `mode` says) onto `m` and `e` (the
// epilogue's post-ops, bias and extra inputs, onednn_dot_mapping.h MapEpilogue).
Status MapItem(std::span<const Operation* const> ops, const FusionPlan* fusion,
               LowPrecision types, EpilogueMode mode, ConvMapping& m, Mapping& e) {
  const Operation& op = *ops.front();
  m = ConvMapping();
  m.name = StrCat("convolution %", op.result(0)->id());
  e = Mapping();
  e.name = m.name;
  e.dot = &op;
  e.types = types;
  e.inputs = {op.operand(0), op.operand(1)};
  ACCY_RETURN_IF_ERROR(MapConvolution(op, types, m));
  e.dst_md = m.dst_md;
  if (m.empty) {
    // Nothing for post-ops to act on: the convolution alone (its zero fill), the rest on the JIT.
    e.library_output = op.result(0);
    if (ops.size() > 1 && mode == EpilogueMode::kWhole) {
      return Unmapped(m.name, "an empty convolution with an epilogue");
    }
    return absl::OkStatus();
  }
  return MapEpilogue(e, ops, fusion, mode);
}

StatusOr<BoundPrimitive> BindConvolutionPrimitive(std::span<const Operation* const> ops,
                                                  const FusionPlan* fusion, LowPrecision types,
                                                  const LibraryKernelOptions& options,
                                                  EpilogueMode mode) {
  const Operation& op = *ops.front();
  ConvMapping m;
  Mapping e;
  BoundPrimitive bound;
  bound.output_aliases = {-1};
  try {
    ACCY_RETURN_IF_ERROR(MapItem(ops, fusion, types, mode, m, e));
    bound.name = m.name;
    bound.inputs = e.inputs;
    bound.outputs = {e.library_output};
    if (m.empty) {
      // Zero-size output: nothing to do; an empty contraction: the sum of nothing.
      bound.zero_fill_output = op.result(0)->type().element_count() > 0;
      return bound;
    }
    const DenseElements* weights =
        op.operand(0) == op.operand(1) ? nullptr : ConstantPayload(op.operand(1));
    const dnnl::memory::desc weights_any(m.weights_md.dims(), m.weights_md.data_type(),
                                         dnnl::memory::format_tag::any);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    attr.set_post_ops(e.post_ops);
    bool weights_constant_source = false;
    // convolution_forward's primitive_desc, or deconvolution_forward's (the same arguments:
    // src, weights, bias -- a zero descriptor when there is none -- and dst).
    const dnnl::memory::desc bias_md = e.bias_md ? *e.bias_md : dnnl::memory::desc();
    auto make_pd = [&](const dnnl::memory::desc& src_md, const dnnl::memory::desc& weights_md,
                       const dnnl::memory::desc& dst_md) -> dnnl::primitive_desc {
      return m.deconvolution
                 ? ForwardPrimitiveDesc<dnnl::deconvolution_forward>(
                       dnnl::algorithm::deconvolution_direct, m, src_md, weights_md, bias_md, dst_md, attr)
                 : ForwardPrimitiveDesc<dnnl::convolution_forward>(
                       dnnl::algorithm::convolution_direct, m, src_md, weights_md, bias_md, dst_md, attr);
    };
    // Constant weights: the primitive's preferred layout, reordered once below. Weights read
    // from a buffer: see PreferredWeightsPay.
    dnnl::primitive_desc conv_pd =
        make_pd(m.src_md, weights != nullptr ? weights_any : m.weights_md, m.dst_md);
    bool reorder_weights = false;
    const bool declared_constant = weights == nullptr && IsConstantParameter(options, op.operand(1));
    // The implementation oneDNN picks for the program's activation layouts with weights in any
    // layout: conv_pd's own for constant weights, else built when first needed (below, once).
    std::optional<std::string> any_weights_impl;
    if (weights != nullptr) any_weights_impl = conv_pd.impl_info_str();
    if (weights == nullptr) {
      const std::string plain_impl = conv_pd.impl_info_str();
      if (declared_constant || IsReferenceImplementation(plain_impl) ||
          IsGemmImplementation(plain_impl)) {
        dnnl::primitive_desc any_pd = make_pd(m.src_md, weights_any, m.dst_md);
        const std::string any_impl = any_pd.impl_info_str();
        any_weights_impl = any_impl;
        if (!IsReferenceImplementation(any_impl) && any_pd.weights_desc() != m.weights_md &&
            (declared_constant || IsReferenceImplementation(plain_impl) ||
             (!IsGemmImplementation(any_impl) && PreferredWeightsPay(op)))) {
          conv_pd = std::move(any_pd);
          reorder_weights = true;
          weights_constant_source = declared_constant;
        }
      }
    }
    // Activations in the program's layout that oneDNN convolves only by im2col + GEMM or its
    // reference code (NCHW f32 on AVX-512 and AVX2 hosts: gemm:jit) go through the layouts the
    // primitive picks (format_tag::any, blocked nChw16c / nChw8c), reordered before and after
    // each run: see BlockedActivationsPay.
    bool reorder_activations = false;
    const std::string chosen_impl = conv_pd.impl_info_str();
    auto im2col_or_ref = [](const std::string& impl) {
      return IsGemmImplementation(impl) || IsReferenceImplementation(impl);
    };
    // Only when the activations are what keeps the direct convolutions away (with weights in
    // any layout the program's activation layout still gets only GEMM); otherwise the weights
    // choice above stands.
    if (im2col_or_ref(chosen_impl) && BlockedActivationsPay(op) && !any_weights_impl) {
      any_weights_impl = make_pd(m.src_md, weights_any, m.dst_md).impl_info_str();
    }
    if (im2col_or_ref(chosen_impl) && BlockedActivationsPay(op) &&
        im2col_or_ref(*any_weights_impl)) {
      const dnnl::memory::desc src_any(m.src_md.dims(), m.src_md.data_type(),
                                       dnnl::memory::format_tag::any);
      const dnnl::memory::desc dst_any(m.dst_md.dims(), m.dst_md.data_type(),
                                       dnnl::memory::format_tag::any);
      dnnl::primitive_desc blocked_pd = make_pd(src_any, weights_any, dst_any);
      const std::string blocked_impl = blocked_pd.impl_info_str();
      if (!im2col_or_ref(blocked_impl)) {
        conv_pd = std::move(blocked_pd);
        reorder_activations = true;
        reorder_weights = weights == nullptr && conv_pd.weights_desc() != m.weights_md;
        weights_constant_source = reorder_weights && declared_constant;
      }
    }
    if (!options.allow_reference_implementation &&
        IsReferenceImplementation(conv_pd.impl_info_str())) {
      return Unmapped(m.name, StrCat("oneDNN offers only its reference implementation (",
                                     conv_pd.impl_info_str(), ") for these layouts, shapes",
                                     e.post_ops.len() > 0 || e.bias_md ? " and post-ops" : ""));
    }
    // oneDNN 2.6's im2col + GEMM convolution applies its bias and post-ops element by element
    // after the GEMM: a 1x1 64->256 convolution at 56x56 took 4.1-5.0 ms with a bias and relu
    // against 0.86-2.5 ms alone (Xeon family 6 model 207, 1 thread, AVX-512 and AVX2; with
    // binary post-ops 176-258 ms). The convolution alone then, and the epilogue on the JIT
    // (BindConvolutionItem).
    if ((e.post_ops.len() > 0 || e.bias_md) && IsGemmImplementation(conv_pd.impl_info_str())) {
      return Unmapped(m.name, StrCat("oneDNN's im2col + GEMM convolution (",
                                     conv_pd.impl_info_str(),
                                     ") applies a bias and post-ops element by element"));
    }
    const int out_buffer = static_cast<int>(e.inputs.size());
    bound.primitive = dnnl::primitive(conv_pd);
    const dnnl::engine& engine = CpuEngine();
    if (reorder_activations && conv_pd.src_desc() != m.src_md) {
      bound.arguments.push_back(
          {DNNL_ARG_SRC, dnnl::memory(conv_pd.src_desc(), engine, DNNL_MEMORY_NONE), 0, m.src_md});
    } else {
      bound.arguments.push_back({DNNL_ARG_SRC, dnnl::memory(m.src_md, engine, DNNL_MEMORY_NONE), 0});
    }
    if (weights != nullptr) {
      // Reordered once here into the primitive's layout; the rhs buffer slot is not read.
      bound.arguments.push_back(
          {DNNL_ARG_WEIGHTS, PrepackWeights(*weights, m.weights_md, conv_pd.weights_desc()), -1});
    } else if (reorder_weights) {
      bound.arguments.push_back({DNNL_ARG_WEIGHTS,
                                 dnnl::memory(conv_pd.weights_desc(), engine, DNNL_MEMORY_NONE), 1,
                                 m.weights_md, weights_constant_source});
    } else {
      bound.arguments.push_back(
          {DNNL_ARG_WEIGHTS, dnnl::memory(m.weights_md, engine, DNNL_MEMORY_NONE), 1});
    }
    if (reorder_activations && conv_pd.dst_desc() != m.dst_md) {
      bound.arguments.push_back({DNNL_ARG_DST,
                                 dnnl::memory(conv_pd.dst_desc(), engine, DNNL_MEMORY_NONE),
                                 out_buffer, m.dst_md});
    } else {
      bound.arguments.push_back(
          {DNNL_ARG_DST, dnnl::memory(m.dst_md, engine, DNNL_MEMORY_NONE), out_buffer});
    }
    if (e.bias_md) {
      bound.arguments.push_back(
          {DNNL_ARG_BIAS, dnnl::memory(*e.bias_md, engine, DNNL_MEMORY_NONE), e.bias_buffer});
    }
    // No binary post-op arguments: MapEpilogue gives a convolution none (e.binaries is empty).
    AddScratchpad(conv_pd, bound);
    StageArguments(bound, types);
    if (types == LowPrecision::kStagedAsF32) bound.implementation += " (bf16/f16 staged as f32)";
    if (m.deconvolution) bound.implementation += " (deconvolution_forward)";
    if (reorder_activations) bound.implementation += " (activations reordered to its layouts per run)";
    if (reorder_weights) {
      bound.implementation += weights_constant_source
                                  ? " (declared-constant weights reordered once)"
                                  : " (weights reordered per run)";
    }
    const int mapped = e.post_ops.len() + (e.bias_md ? 1 : 0);
    if (mapped > 0) bound.implementation += StrCat(" (", mapped, " epilogue ops as bias/post-ops)");
  } catch (const dnnl::error& error) {
    return DnnlErrorStatus(error, m.name,
                           StrCat(m.deconvolution ? "deconvolution_forward" : "convolution_forward",
                                  " with these layouts, shapes and post-ops"));
  }
  return bound;
}

// The item with its epilogue mapped as `mode` says; when post-ops cost oneDNN its optimized
// implementation (or are refused) in kPrefix mode, the convolution alone and the epilogue on
// the JIT.
StatusOr<BoundPrimitive> BindConvolutionItem(std::span<const Operation* const> ops,
                                             const FusionPlan* fusion, LowPrecision types,
                                             const LibraryKernelOptions& options,
                                             EpilogueMode mode) {
  StatusOr<BoundPrimitive> bound = BindConvolutionPrimitive(ops, fusion, types, options, mode);
  // Any failure with an epilogue (oneDNN refusing a post-op combination is kInternal from
  // DnnlErrorStatus) retries the convolution alone; its own failure is then the one reported.
  if (!bound.ok() && mode == EpilogueMode::kPrefix && ops.size() > 1) {
    StatusOr<BoundPrimitive> bare =
        BindConvolutionPrimitive(ops, fusion, types, options, EpilogueMode::kNone);
    if (bare.ok()) return bare;
  }
  return bound;
}

}  // namespace

StatusOr<BoundPrimitive> BindConvolution(std::span<const Operation* const> ops,
                                         const FusionPlan* fusion,
                                         const LibraryKernelOptions& options) {
  if (ops.empty() || ops.front()->kind() != OpKind::kConvolution) {
    return absl::InvalidArgumentError(StrCat("convolution item: first op is ",
                                             ops.empty() ? "missing" : ops.front()->name()));
  }
  const EpilogueMode mode =
      options.allow_jit_epilogue ? EpilogueMode::kPrefix : EpilogueMode::kWhole;
  // A weight gradient on convolution_backward_weights, its epilogue (if any) on the JIT; when
  // that does not bind, the forward mapping below.
  if (ir_internal::IsWeightGradientShape(*ops.front()) &&
      (ops.size() == 1 || options.allow_jit_epilogue)) {
    StatusOr<BoundPrimitive> backward = BindBackwardWeights(ops, fusion, LowPrecision::kNative);
    if (backward.ok()) return backward;
  }
  StatusOr<BoundPrimitive> native =
      BindConvolutionItem(ops, fusion, LowPrecision::kNative, options, mode);
  if (!native.ok() && absl::IsUnimplemented(native.status()) && HasLowPrecisionTensor(ops)) {
    StatusOr<BoundPrimitive> staged =
        BindConvolutionItem(ops, fusion, LowPrecision::kStagedAsF32, options, mode);
    if (staged.ok()) return staged;
  }
  return native;
}

}  // namespace accy::kernels
