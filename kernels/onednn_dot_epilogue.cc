// The epilogue chain of a dot_general item as matmul post_ops, or of a convolution item as
// convolution_forward post_ops (dev_guide_attributes_post_ops.html; onednn_dot_mapping.h
// MapEpilogue). For a convolution only a leading add of a per-feature vector (the primitive's
// bias {O}, described through ConvolutionSrc1Desc) and eltwise post-ops map; binary post-ops
// do not (kConvolutionBinaryPostOpsNote).
//
// Epilogue: each op after the dot_general must take the previous op's result (the chain) as its
// only in-cluster operand, and map exactly onto one post-op computed in f32 on the accumulator:
//   tanh, logistic, log, abs, sqrt, negate                      -> eltwise
//   (not relu, maximum(chain, 0), nor exponential: oneDNN 2.6's eltwise_relu gives 0 and its
//   eltwise_exp +inf for a NaN, where the spec's ops give NaN; the JIT computes them)
//   add / subtract / multiply with a one-element constant       -> eltwise_linear
//   divide(chain, one-element constant)                         -> binary_div with a folded scalar
//   add(chain, bias over N) as the first op                     -> matmul's bias argument
//   add / subtract(chain, t) / multiply / divide(chain, t)      -> binary_* with src1 = t, where
//       t is a tensor (or an elided broadcast of one) whose broadcast dims are whole groups
//       (bias [N] broadcast over M is src1 [1.., 1, N]).
//   gelu_tanh and swish sub-graphs (epilogue_patterns.h)               -> eltwise_gelu_tanh/swish
// Anything else is kUnimplemented naming the op (the JIT runs the whole item), unless the caller
// allows a JIT epilogue (LibraryKernelOptions::allow_jit_epilogue): then matmul computes the dot
// and the longest prefix of the chain that maps (EpilogueMode::kPrefix), or the dot alone
// (kNone) when oneDNN has only its reference implementation for that prefix's post-ops, and
// its output is that prefix's last value, from which the caller computes the rest.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "accy/tensor.h"
#include "kernels/epilogue_patterns.h"
#include "kernels/onednn_common.h"
#include "kernels/onednn_isa.h"
#include "kernels/onednn_dot_mapping.h"
#include "src/fusion/fusion_plan.h"
#include "src/ir/convolution_attributes.h"
#include "src/util/str_cat.h"

namespace accy::kernels {
namespace {

using dt = dnnl::memory::data_type;

bool IsElided(const Operation* op, const FusionPlan* fusion) {
  return op != nullptr && op->kind() == OpKind::kBroadcastInDim && fusion != nullptr &&
         fusion->IsElided(op);
}

// What an epilogue operand reads: the value behind an elided broadcast and, per result dim,
// its stride in that value (0 where broadcast).
struct Source {
  const Value* value = nullptr;
  std::vector<int64_t> strides;  // per result dim
  std::optional<double> scalar;  // a one-element constant, folded
};

Source ResolveSource(const Value* operand, const FusionPlan* fusion) {
  Source source;
  const Operation* def = operand->defining_op();
  const std::vector<int64_t>& result_dims = operand->type().dims();
  if (IsElided(def, fusion)) {
    source.value = def->operand(0);
    const std::vector<int64_t> bd = def->GetInts("broadcast_dimensions");
    const std::vector<int64_t> src_strides = RowMajorStrides(source.value->type().dims());
    source.strides.assign(result_dims.size(), 0);
    for (size_t j = 0; j < bd.size(); ++j) {
      if (source.value->type().dim(static_cast<int64_t>(j)) != 1) {
        source.strides[static_cast<size_t>(bd[j])] = src_strides[j];
      }
    }
  } else {
    source.value = operand;
    source.strides = RowMajorStrides(result_dims);
  }
  const Operation* value_def = source.value->defining_op();
  if (value_def != nullptr && value_def->kind() == OpKind::kConstant &&
      source.value->type().element_count() == 1) {
    if (const DenseElements* dense = value_def->GetDense("value")) {
      auto tensor = Tensor::FromBytes(dense->type, dense->bytes);
      if (tensor.ok()) source.scalar = tensor->GetAsDouble(0);
    }
  }
  return source;
}

// src1 descriptor of a tensor operand in dst's [batch..., M, N] grouping, or nullopt when a
// group is partly broadcast.
std::optional<dnnl::memory::desc> BinarySrc1Desc(const Mapping& m, const Source& source) {
  const Operation& dot = *m.dot;
  const size_t nb = dot.GetInts("lhs_batching_dimensions").size();
  const size_t nm = FreeDims(dot.operand(0)->type().rank(), dot.GetInts("lhs_batching_dimensions"),
                             dot.GetInts("lhs_contracting_dimensions")).size();
  const std::vector<int64_t>& rdims = dot.result(0)->type().dims();
  std::optional<dt> type = ToDnnlType(source.value->type().element_type(), m.types);
  if (!type) return std::nullopt;
  std::vector<int64_t> dims, strides;
  auto add_group = [&](size_t begin, size_t end) {
    std::vector<int64_t> order, live_dims(rdims), live_strides(source.strides);
    bool any_broadcast = false, any_live = false;
    for (size_t d = begin; d < end; ++d) {
      order.push_back(static_cast<int64_t>(d));
      if (rdims[d] == 1) continue;
      (source.strides[d] == 0 ? any_broadcast : any_live) = true;
    }
    if (any_broadcast && any_live) return false;
    if (any_broadcast || !any_live) {
      dims.push_back(1);
      strides.push_back(0);
      return true;
    }
    std::optional<Group> g = Collapse(live_dims, live_strides, order);
    if (!g) return false;
    dims.push_back(g->size);
    strides.push_back(g->stride);
    return true;
  };
  for (size_t i = 0; i < nb; ++i) {
    if (!add_group(i, i + 1)) return std::nullopt;
  }
  if (!add_group(nb, nb + nm) || !add_group(nb + nm, rdims.size())) return std::nullopt;
  FillUnitStrides(dims, strides);
  return StridedDesc(dims, strides, *type);
}

// Why a convolution's epilogue maps only onto its bias and eltwise post-ops. Measured with
// `accy bench --runs 300` on single ResNet-50 layers (batch 1, NHWC f32, batch norm's
// subtract/multiply/add by per-feature vectors and relu after the convolution; Xeon family 6
// model 207, 1 thread): as convolution_forward's binary post-ops against the convolution alone
// and a JIT pass over its output, 1x1 64->256 at 56x56 1.22-1.49 vs 0.94-1.15 ms, 3x3 64->64
// at 56x56 1.63-2.09 vs 1.60-1.95, 1x1 256->64 0.99-1.06 vs 0.95-0.98; capped to AVX2 2.78-2.90
// vs 1.76-1.83, 3.67-3.86 vs 3.39-3.63, 1.88 vs 1.52-1.69. The im2col + GEMM convolution
// (gemm:jit, oneDNN's pick for 1x1 NHWC weights in their own layout) applies binary post-ops
// element by element: 176-258 ms instead of about 1 ms.
constexpr char kConvolutionBinaryPostOpsNote[] =
    "oneDNN 2.6's convolutions run slower than the convolution alone and a JIT pass over its "
    "output";

// src1 descriptor (and in *strides_out its strides) of a tensor operand of a convolution's
// epilogue, in the logical dims of convolution_forward's dst ({N, O, spatial...}, each the
// result dim dimension_numbers names): a dim the operand broadcasts over (stride 0) is 1, the
// others keep the result's size and the operand's stride. Per-channel vectors (batch norm's affine, a bias) are {1, O, 1...}; a
// residual is the full dst shape.
std::optional<dnnl::memory::desc> ConvolutionSrc1Desc(const Mapping& m, const Source& source,
                                                      dnnl::memory::dims* strides_out) {
  const Operation& conv = *m.dot;
  const ConvolutionSpec spec = ir_internal::ConvolutionSpecOf(conv);
  const ConvDimensionNumbers& dn = spec.dimension_numbers;
  const std::vector<int64_t>& rdims = conv.result(0)->type().dims();
  std::optional<dt> type = ToDnnlType(source.value->type().element_type(), m.types);
  if (!type) return std::nullopt;
  std::vector<int64_t> order = {dn.output_batch_dimension, dn.output_feature_dimension};
  order.insert(order.end(), dn.output_spatial_dimensions.begin(),
               dn.output_spatial_dimensions.end());
  std::vector<int64_t> dims, strides;
  for (int64_t r : order) {
    const int64_t stride = source.strides[static_cast<size_t>(r)];
    const bool broadcast = stride == 0 || rdims[static_cast<size_t>(r)] == 1;
    dims.push_back(broadcast ? 1 : rdims[static_cast<size_t>(r)]);
    strides.push_back(broadcast ? 0 : stride);
  }
  FillUnitStrides(dims, strides);
  *strides_out = strides;
  return StridedDesc(dims, strides, *type);
}

// Maps one epilogue op reading `chain` onto post-ops (appending them to m only when it maps)
// and advances `chain` to the value it computes; `consumed` collects the other ops of a matched
// multi-op activation. kUnimplemented naming the op when it does not map.
Status MapEpilogueOp(Mapping& m, const Operation* op, std::span<const Operation* const> ops,
                     const FusionPlan* fusion, const Value*& chain,
                     std::vector<const Operation*>& consumed) {
  const bool convolution = m.dot->kind() == OpKind::kConvolution;
  const ElementType chain_type = m.dot->result(0)->type().element_type();
  const int rank = static_cast<int>(m.dst_md.dims().size());
  const std::string op_name = StrCat(op->name(), " %", op->result(0)->id());
  if (op->result(0)->type().element_type() != chain_type) {
    return Unmapped(m, StrCat("epilogue op ", op_name, " changes the element type"));
  }
  // A chain value read several times may start a multi-op activation (gelu_tanh, swish).
  if (chain->uses().size() != 1) {
    std::optional<ActivationMatch> match = MatchActivation(chain, ops, fusion);
    if (match && std::find(match->ops.begin(), match->ops.end(), op) != match->ops.end()) {
      const bool gelu = match->kind == ActivationKind::kGeluTanh;
      // Measured (`accy demo --threads 1 --profile`, AMD Zen 2, oneDNN 2.6 jit:avx2): the
      // block's 128x768x3072 matmul takes 22.5 ms with an eltwise_gelu_tanh post-op and 8.5 ms
      // for the same FLOPs without one; exp as a post-op costs 3% at 1024^3. So below
      // avx512_core gelu_tanh goes to the JIT epilogue pass over matmul's output.
      if (gelu && !OneDnnHasAvx512Core()) {
        return Unmapped(m, StrCat("epilogue op ", op_name, " starts gelu_tanh, which oneDNN's "
                                  "avx2 matmul runs at a third of its speed as a post-op"));
      }
      m.post_ops.append_eltwise(1.0f, gelu ? dnnl::algorithm::eltwise_gelu_tanh
                                           : dnnl::algorithm::eltwise_swish,
                                gelu ? 0.0f : 1.0f, 0.0f);
      consumed.insert(consumed.end(), match->ops.begin(), match->ops.end());
      chain = match->root->result(0);
      return absl::OkStatus();
    }
  }
  int chain_uses = 0, chain_index = -1;
  for (int64_t i = 0; i < op->num_operands(); ++i) {
    const Value* v = op->operand(i);
    if (v == chain) {
      ++chain_uses;
      chain_index = static_cast<int>(i);
    } else if (v->defining_op() != nullptr &&
               std::find(ops.begin(), ops.end(), v->defining_op()) != ops.end()) {
      return Unmapped(m, StrCat("epilogue op ", op_name, " reads a cluster value other than "
                                "the previous op's result (not a chain)"));
    }
  }
  if (chain_uses != 1 || chain->uses().size() != 1) {
    return Unmapped(m, StrCat("epilogue op ", op_name, " is not a single-use chain step"));
  }
  // oneDNN 2.6's brgemm matmul shares one eltwise injector per algorithm: a second post-op
  // of a kind with other alpha/beta silently runs with the first one's (measured: negate
  // then 2 - x computed -x twice). Such chains are refused rather than miscomputed.
  auto eltwise = [&](dnnl::algorithm alg, float alpha, float beta) -> Status {
    for (int i = 0; i < m.post_ops.len(); ++i) {
      if (m.post_ops.kind(i) != dnnl::primitive::kind::eltwise) continue;
      float scale, a, b;
      dnnl::algorithm other;
      m.post_ops.get_params_eltwise(i, scale, other, a, b);
      if (other == alg && (a != alpha || b != beta)) {
        return Unmapped(m, StrCat("epilogue op ", op_name, " repeats an eltwise post-op kind "
                                  "with other parameters (oneDNN 2.6 brgemm shares them)"));
      }
    }
    m.post_ops.append_eltwise(1.0f, alg, alpha, beta);
    return absl::OkStatus();
  };
  Status status = absl::OkStatus();
  if (op->num_operands() == 1) {
    switch (op->kind()) {
      case OpKind::kTanh: status = eltwise(dnnl::algorithm::eltwise_tanh, 0, 0); break;
      case OpKind::kLogistic: status = eltwise(dnnl::algorithm::eltwise_logistic, 0, 0); break;
      case OpKind::kExponential:
        // oneDNN 2.6's eltwise_exp clamps its input first: exp(NaN) comes out +inf (found by
        // review; measured on matmul and convolution, AVX-512 and AVX2). Left to the JIT.
        return Unmapped(m, StrCat("epilogue op ", op_name, " is exponential, and oneDNN's "
                                  "eltwise_exp gives +inf for a NaN"));
      case OpKind::kLog: status = eltwise(dnnl::algorithm::eltwise_log, 0, 0); break;
      case OpKind::kAbs: status = eltwise(dnnl::algorithm::eltwise_abs, 0, 0); break;
      case OpKind::kSqrt: status = eltwise(dnnl::algorithm::eltwise_sqrt, 0, 0); break;
      case OpKind::kNegate: status = eltwise(dnnl::algorithm::eltwise_linear, -1, 0); break;
      default: return Unmapped(m, StrCat("epilogue op ", op_name, " has no exact post-op"));
    }
  } else if (op->num_operands() == 2) {
    const Source source = ResolveSource(op->operand(1 - chain_index), fusion);
    const bool chain_first = chain_index == 0;
    const OpKind kind = op->kind();
    if (source.scalar && convolution) {
      // No binary post-ops on a convolution (kConvolutionBinaryPostOpsNote): x + c, x - c and
      // c - x as eltwise_linear (alpha x + beta rounds once, as the add does). Not relu:
      // oneDNN 2.6's eltwise_relu (and clip, clip_v2) gives 0 for a NaN, where maximum(x, 0)
      // is NaN (found by review; measured AVX-512 and AVX2, matmul and convolution).
      const float c = static_cast<float>(*source.scalar);
      if (kind == OpKind::kAdd) {
        status = eltwise(dnnl::algorithm::eltwise_linear, 1, c);
      } else if (kind == OpKind::kSubtract) {
        status = chain_first ? eltwise(dnnl::algorithm::eltwise_linear, 1, -c)
                             : eltwise(dnnl::algorithm::eltwise_linear, -1, c);
      } else if (kind == OpKind::kMaximum && c == 0) {
        return Unmapped(m, StrCat("epilogue op ", op_name, " is relu, and oneDNN's eltwise_relu "
                                  "gives 0 for a NaN where maximum propagates it"));
      } else {
        return Unmapped(m, StrCat("epilogue op ", op_name, " with constant ", c, " would be a "
                                  "binary post-op, which ", kConvolutionBinaryPostOpsNote));
      }
    } else if (source.scalar) {
      // Scalars become binary post-ops on a folded one-element src1 (exact f32 arithmetic);
      // only relu and c - x use eltwise (see the injector note at `eltwise`).
      const float c = static_cast<float>(*source.scalar);
      std::optional<dnnl::algorithm> alg;
      if (kind == OpKind::kAdd) alg = dnnl::algorithm::binary_add;
      if (kind == OpKind::kMultiply) alg = dnnl::algorithm::binary_mul;
      if (kind == OpKind::kSubtract && chain_first) alg = dnnl::algorithm::binary_sub;
      if (kind == OpKind::kDivide && chain_first) alg = dnnl::algorithm::binary_div;
      if (alg) {
        const dnnl::memory::desc md = StridedDesc(std::vector<int64_t>(rank, 1),
                                                  std::vector<int64_t>(rank, 1), dt::f32);
        m.binaries.push_back({m.post_ops.len(), md, -1, c});
        m.post_ops.append_binary(*alg, md);
      } else if (kind == OpKind::kSubtract) {
        status = eltwise(dnnl::algorithm::eltwise_linear, -1, c);
      } else if (kind == OpKind::kMaximum && c == 0) {
        // oneDNN 2.6's eltwise_relu gives 0 for a NaN (see the convolution case above).
        return Unmapped(m, StrCat("epilogue op ", op_name, " is relu, and oneDNN's eltwise_relu "
                                  "gives 0 for a NaN where maximum propagates it"));
      } else {
        return Unmapped(m, StrCat("epilogue op ", op_name, " with constant ", c,
                                  " has no exact post-op"));
      }
    } else {
      dnnl::algorithm alg;
      if (kind == OpKind::kAdd) {
        alg = dnnl::algorithm::binary_add;
      } else if (kind == OpKind::kMultiply) {
        alg = dnnl::algorithm::binary_mul;
      } else if (kind == OpKind::kSubtract && chain_first) {
        alg = dnnl::algorithm::binary_sub;
      } else if (kind == OpKind::kDivide && chain_first) {
        alg = dnnl::algorithm::binary_div;
      } else {
        return Unmapped(m, StrCat("epilogue op ", op_name, " has no exact post-op"));
      }
      dnnl::memory::dims src1_strides;  // a convolution's, for its bias
      std::optional<dnnl::memory::desc> md =
          convolution ? ConvolutionSrc1Desc(m, source, &src1_strides)
                      : BinarySrc1Desc(m, source);
      if (!md) {
        return Unmapped(m, StrCat("epilogue op ", op_name, " reads a tensor broadcast over "
                                  "part of a matmul dim group"));
      }
      const dnnl::memory::dims src1_dims = md->dims();
      // A bias: over N for matmul (its own rank), over the output features for a convolution
      // (convolution_forward's bias is {O}).
      bool bias_shaped = true;
      for (size_t d = 0; d < src1_dims.size(); ++d) {
        const bool bias_dim = convolution ? d == 1 : d + 1 == src1_dims.size();
        if (!bias_dim && src1_dims[d] != 1) bias_shaped = false;
      }
      // A convolution's bias has one element per output feature: an operand also broadcast
      // over the features (a non-constant scalar) is not one (found by review: oneDNN refused
      // the {1} bias descriptor of 32 features).
      if (convolution && src1_dims[1] != m.dst_md.dims()[1]) bias_shaped = false;
      if (convolution && !(alg == dnnl::algorithm::binary_add && bias_shaped &&
                           m.post_ops.len() == 0 && !m.bias_md)) {
        return Unmapped(m, StrCat("epilogue op ", op_name, " reads a tensor other than a "
                                  "leading bias: a binary post-op, which ",
                                  kConvolutionBinaryPostOpsNote));
      }
      if (alg == dnnl::algorithm::binary_add && bias_shaped && m.post_ops.len() == 0 &&
          !m.bias_md) {
        m.bias_md = convolution ? StridedDesc({src1_dims[1]}, {src1_strides[1]}, md->data_type())
                                : *md;
        m.bias_buffer = BufferOf(m, source.value);
      } else {
        m.binaries.push_back({m.post_ops.len(), *md, BufferOf(m, source.value), 0});
        m.post_ops.append_binary(alg, *md);
      }
    }
  } else {
    return Unmapped(m, StrCat("epilogue op ", op_name, " has no exact post-op"));
  }
  ACCY_RETURN_IF_ERROR(status);
  chain = op->result(0);
  return absl::OkStatus();
}

}  // namespace

// Maps the epilogue chain after the dot onto post-ops as `mode` says; sets m.library_output.
Status MapEpilogue(Mapping& m, std::span<const Operation* const> ops, const FusionPlan* fusion,
                   EpilogueMode mode) {
  const Value* chain = m.dot->result(0);
  bool after_dot = false, stopped = false;
  const Operation* before_dot = nullptr;  // an op the caller computes before the dot
  std::vector<const Operation*> consumed;  // ops of matched multi-op activations
  for (const Operation* op : ops) {
    if (op == m.dot) {
      after_dot = true;
      continue;
    }
    if (std::find(consumed.begin(), consumed.end(), op) != consumed.end()) continue;
    if (!after_dot) {
      if (mode == EpilogueMode::kWhole) {
        return Unmapped(m, StrCat(op->name(), " %", op->result(0)->id(),
                                  " comes before the dot_general"));
      }
      before_dot = op;  // no chain op reads it (MapEpilogueOp refuses that), so it may wait
      continue;
    }
    if (stopped) continue;  // from the first op that does not map on, all is the caller's
    const Status status = mode == EpilogueMode::kNone
                              ? Unmapped(m, "no post-ops were asked for")
                              : MapEpilogueOp(m, op, ops, fusion, chain, consumed);
    if (status.ok()) continue;
    if (mode == EpilogueMode::kWhole) return status;
    m.stop_reason = std::string(status.message());
    stopped = true;
  }
  m.library_output = chain;
  if (chain != ops.back()->result(0)) {
    if (mode == EpilogueMode::kWhole) return Unmapped(m, "the chain does not end at the root");
    if (m.stop_reason.empty()) m.stop_reason = "the chain does not end at the root";
  } else if (before_dot != nullptr) {
    // The root would be computed without it: not a dot_epilogue cluster this binding knows.
    return Unmapped(m, StrCat(before_dot->name(), " %", before_dot->result(0)->id(),
                              " comes before the dot_general and the chain does not read it"));
  }
  return absl::OkStatus();
}

}  // namespace accy::kernels
