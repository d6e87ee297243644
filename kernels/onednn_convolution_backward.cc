// Weight gradients on oneDNN convolution_backward_weights (onednn_convolution_internal.h).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "kernels/onednn_convolution_internal.h"
#include "kernels/onednn_dot_mapping.h"
#include "src/ir/convolution_attributes.h"
#include "src/util/str_cat.h"

namespace accy::kernels {

using dt = dnnl::memory::data_type;

// A weight-gradient-shaped convolution (ir_internal::IsWeightGradientShape) as oneDNN
// convolution_backward_weights (dev_guide_convolution.html: diff_weights[oc][ic][w] =
// sum over n, k of src[n][ic][k * S + w * (D + 1) - pl] * diff_dst[n][oc][k]). Per spatial dim,
// StableHLO's result w = sum over the lhs feature n and window tap k of lhs[b][n][w * S_c +
// k * R - lo] * rhs[n][o][k] (spec "convolution", window stride S_c, rhs_dilation R) is that sum
// with src = lhs (N its feature dim, IC its batch dim), diff_dst = rhs (N its input feature dim,
// OC its output feature dim, spatial its window), diff_weights = result (OC its feature dim, IC
// its batch dim), stride S = R and dilation D = S_c - 1; batch_group_count G > 1 makes G
// groups. Needs lhs_dilation 1, no reversal, padding not negative, one feature group. Descriptors are plain with the
// program's strides; when oneDNN has only its im2col + GEMM or reference code for them, all three
// go through the layouts it picks (blocked), reordered around the run, if it has a direct
// implementation there (JAX's 3x3 stride-2 64->128 weight gradient at 56, NHWC, 1 thread, Intel
// Xeon model 207: gemm:jit 0.91 ms in place, jit:avx512_core 0.56 ms plus 0.05 ms of reorders);
// only the reference code: Unmapped (the forward mapping is tried next).
StatusOr<BoundPrimitive> BindBackwardWeights(std::span<const Operation* const> ops,
                                             const FusionPlan* fusion, LowPrecision types) {
  const Operation& op = *ops.front();
  const ConvolutionSpec spec = ir_internal::ConvolutionSpecOf(op);
  const ConvDimensionNumbers& dn = spec.dimension_numbers;
  const TensorType& lhs = op.operand(0)->type();
  const TensorType& rhs = op.operand(1)->type();
  const TensorType& out = op.result(0)->type();
  const std::string name = StrCat("convolution %", op.result(0)->id());
  const size_t spatial_rank = dn.input_spatial_dimensions.size();
  std::optional<dt> type = ToDnnlType(lhs.element_type(), types);
  if (spatial_rank < 1 || spatial_rank > 3 || !type || out.element_type() != lhs.element_type() ||
      spec.feature_group_count != 1 ||
      out.element_count() == 0 || lhs.element_count() == 0 || rhs.element_count() == 0) {
    return UnmappedConvolution(name, "not a weight gradient convolution_backward_weights takes");
  }
  dnnl::memory::dims strides, dilates, padding_l, padding_r;
  const std::vector<int64_t> ls = RowMajorStrides(lhs.dims());
  const std::vector<int64_t> rs = RowMajorStrides(rhs.dims());
  const std::vector<int64_t> os = RowMajorStrides(out.dims());
  std::vector<int64_t> src_dims = {lhs.dim(dn.input_feature_dimension), lhs.dim(dn.input_batch_dimension)};
  std::vector<int64_t> src_strides = {ls[dn.input_feature_dimension], ls[dn.input_batch_dimension]};
  std::vector<int64_t> ddst_dims = {rhs.dim(dn.kernel_input_feature_dimension),
                                    rhs.dim(dn.kernel_output_feature_dimension)};
  std::vector<int64_t> ddst_strides = {rs[dn.kernel_input_feature_dimension],
                                       rs[dn.kernel_output_feature_dimension]};
  // batch_group_count G: result feature o (of O) reads lhs batch group o / (O / G), i.e. groups
  // of diff_weights {G, O / G, IC / G, spatial...} (spec "convolution"; JAX's weight gradient
  // of a depthwise or grouped convolution).
  const int64_t groups = spec.batch_group_count;
  const int64_t out_features = out.dim(dn.output_feature_dimension);
  std::vector<int64_t> dw_dims, dw_strides;
  if (groups > 1) {
    dw_dims = {groups, out_features / groups};
    dw_strides = {out_features / groups * os[dn.output_feature_dimension], os[dn.output_feature_dimension]};
  } else {
    dw_dims = {out_features};
    dw_strides = {os[dn.output_feature_dimension]};
  }
  dw_dims.push_back(out.dim(dn.output_batch_dimension));
  dw_strides.push_back(os[dn.output_batch_dimension]);
  for (size_t s = 0; s < spatial_rank; ++s) {
    if (spec.lhs_dilation[s] != 1 || spec.window_reversal[s] || spec.padding[s].first < 0 ||
        spec.padding[s].second < 0) {
      return UnmappedConvolution(name, StrCat("a weight gradient with lhs_dilation, window_reversal or "
                                   "negative padding on spatial dim ", s));
    }
    src_dims.push_back(lhs.dim(dn.input_spatial_dimensions[s]));
    src_strides.push_back(ls[dn.input_spatial_dimensions[s]]);
    ddst_dims.push_back(rhs.dim(dn.kernel_spatial_dimensions[s]));
    ddst_strides.push_back(rs[dn.kernel_spatial_dimensions[s]]);
    dw_dims.push_back(out.dim(dn.output_spatial_dimensions[s]));
    dw_strides.push_back(os[dn.output_spatial_dimensions[s]]);
    strides.push_back(spec.rhs_dilation[s]);
    dilates.push_back(spec.window_strides[s] - 1);
    padding_l.push_back(spec.padding[s].first);
    // The high padding the taps really reach, at least 0 (as MapConvolution's): oneDNN wants
    // diff_dst = (src + pl + pr - ((W - 1) * S_c + 1)) / R + 1.
    const int64_t used = (ddst_dims.back() - 1) * spec.rhs_dilation[s] +
                         (dw_dims.back() - 1) * spec.window_strides[s] + 1 - src_dims.back() -
                         spec.padding[s].first;
    padding_r.push_back(std::max<int64_t>(used, 0));
  }
  BoundPrimitive bound;
  bound.output_aliases = {-1};
  Mapping e;
  e.name = name;
  e.dot = &op;
  e.types = types;
  e.inputs = {op.operand(0), op.operand(1)};
  try {
    const dnnl::memory::desc src_md = StridedDesc(src_dims, src_strides, *type);
    const dnnl::memory::desc ddst_md = StridedDesc(ddst_dims, ddst_strides, *type);
    const dnnl::memory::desc dw_md = StridedDesc(dw_dims, dw_strides, *type);
    e.dst_md = dw_md;
    ACCY_RETURN_IF_ERROR(MapEpilogue(e, ops, fusion, EpilogueMode::kNone));
    bound.name = name;
    bound.inputs = e.inputs;
    bound.outputs = {e.library_output};
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto any = [](const dnnl::memory::desc& md) {
      return dnnl::memory::desc(md.dims(), md.data_type(), dnnl::memory::format_tag::any);
    };
    auto make_pd = [&](const dnnl::memory::desc& src, const dnnl::memory::desc& dw,
                       const dnnl::memory::desc& ddst) {
      const dnnl::convolution_forward::primitive_desc hint(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                          dnnl::algorithm::convolution_direct, src, dw, ddst,
                                          strides, dilates, padding_l, padding_r),
          CpuEngine());
      return dnnl::convolution_backward_weights::primitive_desc(
          dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, src, dw,
                                                   ddst, strides, dilates, padding_l, padding_r),
          attr, CpuEngine(), hint);
    };
    auto im2col_or_ref = [](const std::string& impl) {
      return IsGemmImplementation(impl) || IsReferenceImplementation(impl);
    };
    dnnl::convolution_backward_weights::primitive_desc pd = make_pd(src_md, dw_md, ddst_md);
    if (im2col_or_ref(pd.impl_info_str())) {
      dnnl::convolution_backward_weights::primitive_desc blocked =
          make_pd(any(src_md), any(dw_md), any(ddst_md));
      if (!im2col_or_ref(blocked.impl_info_str()) || IsReferenceImplementation(pd.impl_info_str())) {
        pd = std::move(blocked);
      }
    }
    if (IsReferenceImplementation(pd.impl_info_str())) {
      return UnmappedConvolution(name, StrCat("oneDNN offers only its reference convolution_backward_weights (",
                                   pd.impl_info_str(), ") for these layouts and shapes"));
    }
    const dnnl::engine& engine = CpuEngine();
    auto argument = [&](int arg, const dnnl::memory::desc& chosen, const dnnl::memory::desc& own,
                        int buffer) {
      bound.arguments.push_back({arg, dnnl::memory(chosen, engine, DNNL_MEMORY_NONE), buffer,
                                 chosen == own ? std::nullopt : std::optional(own)});
    };
    argument(DNNL_ARG_SRC, pd.src_desc(), src_md, 0);
    argument(DNNL_ARG_DIFF_DST, pd.diff_dst_desc(), ddst_md, 1);
    argument(DNNL_ARG_DIFF_WEIGHTS, pd.diff_weights_desc(), dw_md, static_cast<int>(e.inputs.size()));
    bound.primitive = dnnl::convolution_backward_weights(pd);
    AddScratchpad(pd, bound);
    StageArguments(bound, types);
    bound.implementation += " (convolution_backward_weights)";
    if (types == LowPrecision::kStagedAsF32) bound.implementation += " (bf16/f16 staged as f32)";
  } catch (const dnnl::error& error) {
    return DnnlErrorStatus(error, name, "convolution_backward_weights with these layouts and shapes");
  }
  return bound;
}

}  // namespace accy::kernels
