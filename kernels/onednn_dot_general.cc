// dot_general items on oneDNN matmul (dev_guide_matmul.html), epilogue chains as post_ops
// (dev_guide_attributes_post_ops.html).
//
// Dims map as: batch dims stay separate matmul batch dims (any position, by strides), the lhs
// free dims collapse into M, the contracting dims into K, the rhs free dims into N, each
// collapse allowed only when the dims nest in the row-major buffer (so no copy is ever made).
// The result's row-major layout [batch..., lhs free..., rhs free...] is dst [batch..., M, N].
// Epilogue: each op after the dot_general must take the previous op's result (the chain) as its
// only in-cluster operand, and map exactly onto one post-op computed in f32 on the accumulator:
//   tanh, logistic, exponential, log, abs, sqrt, negate         -> eltwise
//   maximum(chain, scalar constant 0)                           -> eltwise_relu (alpha 0)
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
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "accy/tensor.h"
#include "kernels/epilogue_patterns.h"
#include "kernels/onednn_bindings.h"
#include "src/fusion/fusion_plan.h"
#include "src/util/str_cat.h"

namespace accy::kernels {
namespace {

using dt = dnnl::memory::data_type;

// One (size, stride) group of dims; stride 0 means "only unit dims" (any stride will do).
struct Group {
  int64_t size = 1;
  int64_t stride = 0;
};

// Collapses dims `order` (outer to inner) of a buffer with `dims`/`strides` into one dim, or
// nullopt when they do not nest (stride[d_i] == stride[d_i+1] * dims[d_i+1] over non-unit dims).
std::optional<Group> Collapse(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                              const std::vector<int64_t>& order) {
  Group group;
  int64_t next = -1;
  for (size_t i = order.size(); i-- > 0;) {
    const size_t d = static_cast<size_t>(order[i]);
    if (dims[d] == 1) continue;
    if (strides[d] == 0) return std::nullopt;
    if (next >= 0 && strides[d] != next) return std::nullopt;
    if (next < 0) group.stride = strides[d];
    next = strides[d] * dims[d];
    group.size *= dims[d];
  }
  return group;
}

// Gives unit dims (stride 0) the stride of a dim placed just outside the next inner one.
void FillUnitStrides(const std::vector<int64_t>& dims, std::vector<int64_t>& strides) {
  for (size_t i = dims.size(); i-- > 0;) {
    if (strides[i] != 0) continue;
    strides[i] = i + 1 == dims.size() ? 1 : strides[i + 1] * std::max<int64_t>(dims[i + 1], 1);
  }
}

std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contract) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::count(batch.begin(), batch.end(), d) == 0 &&
        std::count(contract.begin(), contract.end(), d) == 0) {
      free.push_back(d);
    }
  }
  return free;
}

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

// How much of the epilogue chain MapEpilogue maps onto post-ops.
enum class EpilogueMode : uint8_t {
  kWhole,   // every op, or kUnimplemented naming the first that does not map
  kPrefix,  // the ops of the chain up to the first that does not map (ops before the dot and
            // from that op on are left to the caller)
  kNone,    // none: matmul computes the dot alone
};

struct Mapping {
  std::string name;
  const Operation* dot = nullptr;
  // The value matmul's dst holds (the root's result when the whole epilogue maps), and why the
  // mapping stopped before the root (kPrefix, kNone).
  const Value* library_output = nullptr;
  std::string stop_reason;
  dnnl::memory::desc src_md, weights_md, dst_md;
  std::vector<const Value*> inputs;  // buffer order
  int lhs_buffer = 0, rhs_buffer = 0;
  dnnl::post_ops post_ops;
  struct Binary {
    int post_op_index;
    dnnl::memory::desc md;
    int buffer;                    // -1: folded scalar
    float scalar = 0;
  };
  std::vector<Binary> binaries;
  // A leading bias add over N goes to matmul's own bias argument (measured at 1024^3, 1 thread:
  // +0.05 ms vs +0.24 ms as a binary post-op).
  std::optional<dnnl::memory::desc> bias_md;
  int bias_buffer = -1;
  uint64_t element_ops = 0;
  bool empty_output = false, empty_contraction = false;
};

int BufferOf(Mapping& m, const Value* value) {
  auto it = std::find(m.inputs.begin(), m.inputs.end(), value);
  if (it != m.inputs.end()) return static_cast<int>(it - m.inputs.begin());
  m.inputs.push_back(value);
  return static_cast<int>(m.inputs.size() - 1);
}

Status Unmapped(const Mapping& m, std::string_view why) {
  return absl::UnimplementedError(StrCat(m.name, ": does not map onto oneDNN matmul: ", why,
                                         " (the JIT runs it)"));
}

// Maps the dot_general's dims (fills descriptors and element ops).
Status MapDot(Mapping& m) {
  const Operation& dot = *m.dot;
  const TensorType& lhs = dot.operand(0)->type();
  const TensorType& rhs = dot.operand(1)->type();
  const TensorType& out = dot.result(0)->type();
  std::optional<dt> lhs_type = ToDnnlType(lhs.element_type());
  if (!lhs_type || rhs.element_type() != lhs.element_type() ||
      (out.element_type() != lhs.element_type() && out.element_type() != ElementType::kF32)) {
    return Unmapped(m, StrCat("element types ", ElementTypeName(lhs.element_type()), " x ",
                              ElementTypeName(rhs.element_type()), " -> ",
                              ElementTypeName(out.element_type()),
                              " (matmul takes f32, bf16, f16 inputs of one type, result of "
                              "that type or f32)"));
  }
  const std::vector<int64_t> lb = dot.GetInts("lhs_batching_dimensions");
  const std::vector<int64_t> rb = dot.GetInts("rhs_batching_dimensions");
  std::vector<int64_t> lc = dot.GetInts("lhs_contracting_dimensions");
  std::vector<int64_t> rc = dot.GetInts("rhs_contracting_dimensions");
  if (lb.size() + 2 > DNNL_MAX_NDIMS) {
    return Unmapped(m, StrCat(lb.size(), " batch dims (oneDNN takes at most ", DNNL_MAX_NDIMS - 2, ")"));
  }
  const std::vector<int64_t> ls = RowMajorStrides(lhs.dims());
  const std::vector<int64_t> rs = RowMajorStrides(rhs.dims());
  std::optional<Group> mg = Collapse(lhs.dims(), ls, FreeDims(lhs.rank(), lb, lc));
  std::optional<Group> ng = Collapse(rhs.dims(), rs, FreeDims(rhs.rank(), rb, rc));
  if (!mg) return Unmapped(m, "lhs free dims do not nest in the lhs layout");
  if (!ng) return Unmapped(m, "rhs free dims do not nest in the rhs layout");
  // Contracting dims: as given, then sorted by lhs dim, then by rhs dim.
  std::optional<Group> lk, rk;
  for (int attempt = 0; attempt < 3 && !(lk && rk); ++attempt) {
    if (attempt > 0) {
      std::vector<size_t> order(lc.size());
      std::iota(order.begin(), order.end(), 0);
      const std::vector<int64_t>& key = attempt == 1 ? lc : rc;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key[a] < key[b]; });
      std::vector<int64_t> lc2, rc2;
      for (size_t i : order) {
        lc2.push_back(lc[i]);
        rc2.push_back(rc[i]);
      }
      lc = lc2;
      rc = rc2;
    }
    lk = Collapse(lhs.dims(), ls, lc);
    rk = Collapse(rhs.dims(), rs, rc);
  }
  if (!lk || !rk) return Unmapped(m, "contracting dims do not nest in both operand layouts");
  std::vector<int64_t> src_dims, src_strides, w_dims, w_strides, dst_dims;
  uint64_t batch = 1;
  for (size_t i = 0; i < lb.size(); ++i) {
    src_dims.push_back(lhs.dim(lb[i]));
    src_strides.push_back(lhs.dim(lb[i]) == 1 ? 0 : ls[static_cast<size_t>(lb[i])]);
    w_dims.push_back(rhs.dim(rb[i]));
    w_strides.push_back(rhs.dim(rb[i]) == 1 ? 0 : rs[static_cast<size_t>(rb[i])]);
    dst_dims.push_back(lhs.dim(lb[i]));
    batch *= static_cast<uint64_t>(lhs.dim(lb[i]));
  }
  src_dims.insert(src_dims.end(), {mg->size, lk->size});
  src_strides.insert(src_strides.end(), {mg->stride, lk->stride});
  w_dims.insert(w_dims.end(), {rk->size, ng->size});
  w_strides.insert(w_strides.end(), {rk->stride, ng->stride});
  dst_dims.insert(dst_dims.end(), {mg->size, ng->size});
  FillUnitStrides(src_dims, src_strides);
  FillUnitStrides(w_dims, w_strides);
  m.src_md = StridedDesc(src_dims, src_strides, *lhs_type);
  m.weights_md = StridedDesc(w_dims, w_strides, *lhs_type);
  m.dst_md = StridedDesc(dst_dims, RowMajorStrides(dst_dims), *ToDnnlType(out.element_type()));
  m.element_ops = 2 * batch * static_cast<uint64_t>(mg->size) * static_cast<uint64_t>(ng->size) *
                  static_cast<uint64_t>(lk->size);
  m.empty_output = out.element_count() == 0;
  m.empty_contraction = lk->size == 0;
  m.lhs_buffer = BufferOf(m, dot.operand(0));
  m.rhs_buffer = BufferOf(m, dot.operand(1));
  return absl::OkStatus();
}

// src1 descriptor of a tensor operand in dst's [batch..., M, N] grouping, or nullopt when a
// group is partly broadcast.
std::optional<dnnl::memory::desc> BinarySrc1Desc(const Mapping& m, const Source& source) {
  const Operation& dot = *m.dot;
  const size_t nb = dot.GetInts("lhs_batching_dimensions").size();
  const size_t nm = FreeDims(dot.operand(0)->type().rank(), dot.GetInts("lhs_batching_dimensions"),
                             dot.GetInts("lhs_contracting_dimensions")).size();
  const std::vector<int64_t>& rdims = dot.result(0)->type().dims();
  std::optional<dt> type = ToDnnlType(source.value->type().element_type());
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

// Maps one epilogue op reading `chain` onto post-ops (appending them to m only when it maps)
// and advances `chain` to the value it computes; `consumed` collects the other ops of a matched
// multi-op activation. kUnimplemented naming the op when it does not map.
Status MapEpilogueOp(Mapping& m, const Operation* op, std::span<const Operation* const> ops,
                     const FusionPlan* fusion, const Value*& chain,
                     std::vector<const Operation*>& consumed) {
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
      case OpKind::kExponential: status = eltwise(dnnl::algorithm::eltwise_exp, 0, 0); break;
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
    if (source.scalar) {
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
        status = eltwise(dnnl::algorithm::eltwise_relu, 0, 0);
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
      std::optional<dnnl::memory::desc> md = BinarySrc1Desc(m, source);
      if (!md) {
        return Unmapped(m, StrCat("epilogue op ", op_name, " reads a tensor broadcast over "
                                  "part of a matmul dim group"));
      }
      const dnnl::memory::dims src1_dims = md->dims();
      const bool over_n = std::all_of(src1_dims.begin(), src1_dims.end() - 1,
                                       [](int64_t d) { return d == 1; });
      if (alg == dnnl::algorithm::binary_add && over_n && m.post_ops.len() == 0 && !m.bias_md) {
        m.bias_md = *md;
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

// Maps the dot and its epilogue (`mode`) into a fresh Mapping.
Status MapItem(Mapping& m, std::span<const Operation* const> ops, const FusionPlan* fusion,
               EpilogueMode mode) {
  const std::string name = m.name;
  const Operation* dot = m.dot;
  m = Mapping();
  m.name = name;
  m.dot = dot;
  Status status;
  try {
    status = MapDot(m);
    // An empty contraction zero-fills dst (no post-ops): its whole epilogue is the caller's.
    if (status.ok()) {
      status = MapEpilogue(m, ops, fusion,
                           m.empty_contraction && mode == EpilogueMode::kPrefix
                               ? EpilogueMode::kNone
                               : mode);
    }
    if (status.ok() && m.empty_contraction && m.post_ops.len() > 0) {
      status = Unmapped(m, "an empty contraction with an epilogue");
    }
  } catch (const dnnl::error& error) {
    status = DnnlErrorStatus(error, m.name, "the matmul descriptors");
  }
  return status;
}

// matmul's primitive descriptor for mapping `m` (throws dnnl::error like any binding step).
dnnl::matmul::primitive_desc MatmulPrimitiveDesc(const Mapping& m) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_post_ops(m.post_ops);
  // Constant rhs (weights known at compile time): let matmul pick its layout (format_tag::any).
  const bool constant_weights =
      m.lhs_buffer != m.rhs_buffer && ConstantPayload(m.dot->operand(1)) != nullptr;
  const dnnl::memory::desc weights_any(m.weights_md.dims(), m.weights_md.data_type(),
                                       dnnl::memory::format_tag::any);
  const dnnl::memory::desc& matmul_weights_md = constant_weights ? weights_any : m.weights_md;
  return dnnl::matmul::primitive_desc(
      m.bias_md ? dnnl::matmul::desc(m.src_md, matmul_weights_md, *m.bias_md, m.dst_md)
                : dnnl::matmul::desc(m.src_md, matmul_weights_md, m.dst_md),
      attr, CpuEngine());
}

bool IsReferenceImplementation(const dnnl::matmul::primitive_desc& pd) {
  return std::string_view(pd.impl_info_str()).substr(0, 4) == "ref:";
}

}  // namespace

StatusOr<BoundPrimitive> BindDotGeneral(std::span<const Operation* const> ops,
                                        const FusionPlan* fusion,
                                        const LibraryKernelOptions& options,
                                        DotClassification* classification, bool classify_only) {
  DotClassification local;
  DotClassification& c = classification != nullptr ? *classification : local;
  Mapping m;
  for (const Operation* op : ops) {
    if (op->kind() != OpKind::kDotGeneral) continue;
    if (m.dot != nullptr) {
      c.reason = "two dot_generals in one item";
      return absl::UnimplementedError(StrCat(m.name, ": ", c.reason));
    }
    m.dot = op;
    m.name = StrCat("dot_general %", op->result(0)->id());
  }
  if (m.dot == nullptr) {
    c.reason = "no dot_general in the item";
    return absl::InvalidArgumentError(StrCat("dot_general item: ", c.reason));
  }
  const EpilogueMode mode =
      options.allow_jit_epilogue ? EpilogueMode::kPrefix : EpilogueMode::kWhole;
  Status status = MapItem(m, ops, fusion, mode);
  if (!status.ok()) {
    c.placement = DotPlacement::kJitUnmapped;
    c.reason = std::string(status.message());
    return status;
  }
  c.element_ops = m.element_ops;
  if (m.element_ops < options.min_dot_element_ops) {
    c.placement = DotPlacement::kJitSmall;
    c.reason = StrCat(m.name, ": ", m.element_ops, " element ops is below the library threshold ",
                      options.min_dot_element_ops, " (the JIT runs it)");
    return absl::UnimplementedError(c.reason);
  }
  const bool whole = m.library_output == ops.back()->result(0);
  c.placement = whole ? DotPlacement::kLibrary : DotPlacement::kLibraryWithJitEpilogue;
  c.library_output = m.library_output;
  c.reason = whole ? "" : m.stop_reason;
  if (classify_only) return BoundPrimitive{};

  BoundPrimitive bound;
  bound.name = m.name;
  if (!m.empty_output && !m.empty_contraction) {
    try {
      std::optional<dnnl::matmul::primitive_desc> matmul_pd = MatmulPrimitiveDesc(m);
      if (!options.allow_reference_implementation && IsReferenceImplementation(*matmul_pd) &&
          mode == EpilogueMode::kPrefix && (m.post_ops.len() > 0 || m.bias_md)) {
        // The post-ops (e.g. a binary broadcast over M in 2.6) cost the optimized kernel: the
        // dot alone on matmul, the whole epilogue on the JIT.
        Mapping bare;
        bare.name = m.name;
        bare.dot = m.dot;
        ACCY_RETURN_IF_ERROR(MapItem(bare, ops, fusion, EpilogueMode::kNone));
        dnnl::matmul::primitive_desc bare_pd = MatmulPrimitiveDesc(bare);
        if (!IsReferenceImplementation(bare_pd)) {
          m = std::move(bare);
          matmul_pd = std::move(bare_pd);
        }
      }
      if (!options.allow_reference_implementation && IsReferenceImplementation(*matmul_pd)) {
        return Unmapped(m, StrCat("oneDNN offers only its reference implementation (",
                                  matmul_pd->impl_info_str(), ") for these dims and post-ops"));
      }
      bound.primitive = dnnl::matmul(*matmul_pd);
      const int out_buffer = static_cast<int>(m.inputs.size());
      const dnnl::engine& engine = CpuEngine();
      bound.arguments.push_back({DNNL_ARG_SRC, dnnl::memory(m.src_md, engine, DNNL_MEMORY_NONE), m.lhs_buffer});
      // Constant weights are reordered once here into the layout matmul chose; the rhs buffer
      // slot stays in the ABI but is not read.
      const DenseElements* weights = m.lhs_buffer == m.rhs_buffer ? nullptr : ConstantPayload(m.dot->operand(1));
      if (weights != nullptr) {
        bound.arguments.push_back(
            {DNNL_ARG_WEIGHTS, PrepackWeights(*weights, m.weights_md, matmul_pd->weights_desc()), -1});
      } else {
        bound.arguments.push_back(
            {DNNL_ARG_WEIGHTS, dnnl::memory(m.weights_md, engine, DNNL_MEMORY_NONE), m.rhs_buffer});
      }
      bound.arguments.push_back({DNNL_ARG_DST, dnnl::memory(m.dst_md, engine, DNNL_MEMORY_NONE), out_buffer});
      if (m.bias_md) {
        bound.arguments.push_back({DNNL_ARG_BIAS, dnnl::memory(*m.bias_md, engine, DNNL_MEMORY_NONE), m.bias_buffer});
      }
      for (const Mapping::Binary& binary : m.binaries) {
        const int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(binary.post_op_index) | DNNL_ARG_SRC_1;
        if (binary.buffer >= 0) {
          bound.arguments.push_back({arg, dnnl::memory(binary.md, engine, DNNL_MEMORY_NONE), binary.buffer});
        } else {
          // A folded scalar: memory the binding owns, filled once here.
          dnnl::memory scalar(binary.md, engine);
          *static_cast<float*>(scalar.get_data_handle()) = binary.scalar;
          bound.arguments.push_back({arg, scalar, -1});
        }
      }
      AddScratchpad(*matmul_pd, bound);
    } catch (const dnnl::error& error) {
      return DnnlErrorStatus(error, m.name, "matmul with these dims, types and post-ops");
    }
  }
  bound.inputs = m.inputs;
  bound.outputs = {m.library_output};
  bound.output_aliases = {-1};
  bound.zero_fill_output = m.empty_contraction;
  return bound;
}

}  // namespace accy::kernels
