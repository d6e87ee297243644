// reduce_window items on oneDNN pooling_v2_forward (dev_guide_pooling.html, oneDNN 2.6 API)
// where the program's average pool maps onto it exactly; everything else is kUnimplemented
// naming the reason, and the engine runs it on the JIT (jit/window_emitter.cc).
//
// Maps (onednn_bindings.h BindReduceWindow): a one-result f32 reduce_window whose body is one
// add with init +0 and whose item goes on with a divide of its sum by the window size
// (pooling_avg_include_padding) or by the reduce_window of a ones tensor over the same window
// (pooling_avg_exclude_padding: JAX/Flax avg_pool with count_include_pad=False). oneDNN's
// average pooling adds the window's input elements in row-major window order from 0 and divides
// by the count (checked bit for bit against that loop, NHWC and NCHW, AVX-512 and AVX2), which is
// what the reference evaluator does (a padded position adds +0, which changes no running sum that
// starts at +0), so the item computes the reference's bits. Descriptors are plain with the
// program's own strides: the dims the window spans are oneDNN's spatial dims (1-3 of them, in
// order), the other two at most are N and C, so NHWC and NCHW buffers are read in place.
//
// Not mapped (the JIT runs them): max pooling (oneDNN 2.6's pooling_max drops NaN and gives
// -FLT_MAX for a window of only -inf, where the spec's maximum gives NaN and -inf:
// docs/numerics.md), a sum without the divide, bf16/f16 (the program rounds the sum at every
// position, oneDNN once), base dilation, a window over more than three dims, more than two
// dims outside the window, negative padding, a window lying wholly in the padding, and
// oneDNN's reference implementation (ref:any: what 2.6 has for a dilated window; the window
// dilation maps onto pooling_v2's dilation, d - 1, should an optimized kernel take it) or its
// simple_nchw:any (what 2.6 has for NCHW below AVX-512), both far slower than the JIT.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "kernels/onednn_bindings.h"
#include "src/ir/window_geometry.h"
#include "src/util/str_cat.h"

namespace accy::kernels {
namespace {

Status Unmapped(std::string_view name, std::string_view why) {
  return absl::UnimplementedError(
      StrCat(name, ": does not map onto oneDNN pooling_forward: ", why, " (the JIT runs it)"));
}

// The single op of a body block (acc, x) -> op(acc, x) or op(x, acc), else nullopt.
std::optional<OpKind> SingleCombiner(const Operation& reduce_window) {
  if (reduce_window.num_regions() != 1) return std::nullopt;
  const Block* block = reduce_window.region(0)->entry_block();
  if (block == nullptr || block->num_arguments() != 2 || block->operations().size() != 2) {
    return std::nullopt;
  }
  const Operation& combine = *block->operations()[0];
  const Operation& ret = *block->operations()[1];
  if (ret.kind() != OpKind::kReturn || ret.num_operands() != 1 || combine.num_results() != 1 ||
      combine.num_operands() != 2 || ret.operand(0) != combine.result(0)) {
    return std::nullopt;
  }
  const Value* a = block->argument(0);
  const Value* b = block->argument(1);
  if (!((combine.operand(0) == a && combine.operand(1) == b) ||
        (combine.operand(0) == b && combine.operand(1) == a))) {
    return std::nullopt;
  }
  return combine.kind();
}

// The f32 value every element of `value` has, when it is a constant (splat or not) or a
// broadcast_in_dim of one (through any number of broadcasts); else nullopt.
std::optional<uint32_t> UniformF32Bits(const Value* value) {
  while (value->defining_op() != nullptr &&
         value->defining_op()->kind() == OpKind::kBroadcastInDim) {
    value = value->defining_op()->operand(0);
  }
  const DenseElements* payload = ConstantPayload(value);
  if (payload == nullptr || payload->type.element_type() != ElementType::kF32 ||
      payload->bytes.size() < 4 || payload->bytes.size() % 4 != 0) {
    return std::nullopt;
  }
  uint32_t first;
  std::memcpy(&first, payload->bytes.data(), 4);
  for (size_t at = 4; at < payload->bytes.size(); at += 4) {
    uint32_t bits;
    std::memcpy(&bits, payload->bytes.data() + at, 4);
    if (bits != first) return std::nullopt;
  }
  return first;
}

uint32_t F32Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

// A one-result f32 reduce_window whose body is one add and whose init is +0 (bit for bit: -0
// would keep a sum of -0 inputs at -0, where oneDNN starts from +0).
bool IsZeroInitSum(const Operation& op) {
  return op.kind() == OpKind::kReduceWindow && op.num_results() == 1 && op.num_operands() == 2 &&
         op.result(0)->type().element_type() == ElementType::kF32 &&
         SingleCombiner(op) == OpKind::kAdd && UniformF32Bits(op.operand(1)) == F32Bits(0.0f);
}

bool TrivialWindowDim(const WindowGeometry& g, size_t d) {
  return g.window_dimensions[d] == 1 && g.window_strides[d] == 1 && g.padding_low[d] == 0 &&
         g.padding_high[d] == 0 && g.base_dilations[d] == 1;
}

// `divisor` holds, at every output element of `sum` (an IsZeroInitSum reduce_window), the count
// of input elements in its window: a reduce_window of ones with the same window, of the same
// input dims or of size 1 where `sum`'s window is one element (Flax's ones of shape
// (1, H, W, 1)), read directly or through a rank-preserving broadcast_in_dim.
bool IsWindowCount(const Value* divisor, const Operation& sum) {
  const Operation* def = divisor->defining_op();
  if (def != nullptr && def->kind() == OpKind::kBroadcastInDim) {
    const std::vector<int64_t> dims = def->GetInts("broadcast_dimensions");
    const int64_t rank = def->result(0)->type().rank();
    if (def->operand(0)->type().rank() != rank || static_cast<int64_t>(dims.size()) != rank) {
      return false;
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (dims[static_cast<size_t>(d)] != d) return false;
    }
    def = def->operand(0)->defining_op();
  }
  if (def == nullptr || !IsZeroInitSum(*def) || UniformF32Bits(def->operand(0)) != F32Bits(1.0f)) {
    return false;
  }
  const WindowGeometry ones = WindowGeometryOf(*def);
  const WindowGeometry g = WindowGeometryOf(sum);
  const std::vector<int64_t>& ones_in = def->operand(0)->type().dims();
  const std::vector<int64_t>& ones_out = def->result(0)->type().dims();
  const std::vector<int64_t>& in = sum.operand(0)->type().dims();
  if (ones_in.size() != in.size()) return false;
  for (size_t d = 0; d < in.size(); ++d) {
    const bool same =
        ones_in[d] == in[d] && ones.window_dimensions[d] == g.window_dimensions[d] &&
        ones.window_strides[d] == g.window_strides[d] && ones.padding_low[d] == g.padding_low[d] &&
        ones.padding_high[d] == g.padding_high[d] &&
        ones.base_dilations[d] == g.base_dilations[d] &&
        (g.window_dimensions[d] == 1 || ones.window_dilations[d] == g.window_dilations[d]);
    const bool unit =
        ones_in[d] == 1 && ones_out[d] == 1 && TrivialWindowDim(ones, d) && TrivialWindowDim(g, d);
    if (!same && !unit) return false;
  }
  return true;
}

}  // namespace

StatusOr<BoundPrimitive> BindReduceWindow(std::span<const Operation* const> ops,
                                          const FusionPlan* fusion,
                                          const LibraryKernelOptions& options) {
  (void)fusion;  // the mapped divide reads no operand buffer; the rest is the JIT's
  if (ops.empty() || ops.front()->kind() != OpKind::kReduceWindow) {
    return absl::InvalidArgumentError(
        StrCat("reduce_window item: first op is ", ops.empty() ? "missing" : ops.front()->name()));
  }
  const Operation& op = *ops.front();
  const std::string name = StrCat("reduce_window %", op.result(0)->id());
  if (op.num_results() != 1) return Unmapped(name, "it has more than one result");
  const ElementType type = op.result(0)->type().element_type();
  if (type != ElementType::kF32) {
    return Unmapped(name, StrCat("element type ", ElementTypeName(type),
                                 " (only f32 sums round as oneDNN's do)"));
  }
  const std::optional<OpKind> combiner = SingleCombiner(op);
  if (combiner != OpKind::kAdd) {
    return Unmapped(name, combiner == OpKind::kMaximum
                              ? "max pooling (oneDNN 2.6 drops NaN and gives -FLT_MAX for a "
                                "window of -inf)"
                              : "its body is not one add or maximum");
  }
  if (!IsZeroInitSum(op)) return Unmapped(name, "its init value is not the constant +0");
  // The average: ops[1] divides the sum by the window size or by the window's count.
  if (ops.size() < 2 || ops[1]->kind() != OpKind::kDivide || ops[1]->operand(0) != op.result(0) ||
      ops[1]->operand(1) == op.result(0) || ops[1]->result(0)->type() != op.result(0)->type()) {
    return Unmapped(name, "a sum not divided by its window size (oneDNN pools no sums)");
  }
  for (size_t i = 2; i < ops.size(); ++i) {
    for (const Value* operand : ops[i]->operands()) {
      if (operand == op.result(0)) {
        return Unmapped(name, StrCat(ops[i]->name(), " %", ops[i]->result(0)->id(),
                                     " reads the sum before its divide"));
      }
    }
  }
  if (ops.size() > 2 && !options.allow_jit_epilogue) {
    return Unmapped(name, "an epilogue past the divide (allow_jit_epilogue is off)");
  }

  const WindowGeometry g = WindowGeometryOf(op);
  const std::vector<int64_t>& in_dims = op.operand(0)->type().dims();
  const std::vector<int64_t>& out_dims = op.result(0)->type().dims();
  const size_t rank = in_dims.size();
  int64_t window_size = 1;
  std::vector<size_t> spatial, other;
  for (size_t d = 0; d < rank; ++d) {
    if (g.base_dilations[d] != 1) return Unmapped(name, StrCat("base dilation on dim ", d));
    if (g.padding_low[d] < 0 || g.padding_high[d] < 0) {
      return Unmapped(name, StrCat("negative padding on dim ", d));
    }
    window_size *= g.window_dimensions[d];
    (TrivialWindowDim(g, d) ? other : spatial).push_back(d);
  }
  if (spatial.empty() || spatial.size() > 3) {
    return Unmapped(name, StrCat("its window spans ", spatial.size(),
                                 " dims (oneDNN pools over 1-3 spatial dims)"));
  }
  if (other.size() > 2) {
    return Unmapped(name, StrCat(other.size(), " dims outside the window (oneDNN has N and C)"));
  }
  // A window with no input element: oneDNN divides by a count of 0 or pads differently.
  for (size_t d : spatial) {
    for (int64_t o = 0; o < out_dims[d]; ++o) {
      bool hits = false;
      for (int64_t k = 0; k < g.window_dimensions[d] && !hits; ++k) {
        const int64_t q = o * g.window_strides[d] - g.padding_low[d] + k * g.window_dilations[d];
        hits = q >= 0 && q < in_dims[d];
      }
      if (!hits) return Unmapped(name, StrCat("window ", o, " of dim ", d, " lies in the padding"));
    }
  }
  const Value* divisor = ops[1]->operand(1);
  dnnl::algorithm algorithm;
  if (UniformF32Bits(divisor) == F32Bits(static_cast<float>(window_size)) &&
      static_cast<int64_t>(static_cast<float>(window_size)) == window_size) {
    algorithm = dnnl::algorithm::pooling_avg_include_padding;
  } else if (IsWindowCount(divisor, op)) {
    algorithm = dnnl::algorithm::pooling_avg_exclude_padding;
  } else {
    return Unmapped(name, StrCat("the divisor %", divisor->id(), " is neither the window size ",
                                 window_size, " nor the window's count of input elements"));
  }

  BoundPrimitive bound;
  bound.name = name;
  bound.inputs = {op.operand(0)};
  bound.outputs = {ops[1]->result(0)};
  bound.output_aliases = {-1};
  if (op.result(0)->type().element_count() == 0) return bound;  // nothing to compute
  // oneDNN's {N, C, spatial...}: the dims outside the window (N then C; a missing one is a unit
  // dim), then the window's dims in order; strides are the buffers' row-major ones.
  const std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
  const std::vector<int64_t> out_strides = RowMajorStrides(out_dims);
  std::vector<int64_t> src_dims, src_strides, dst_dims, dst_strides;
  // A missing N (or C) is a unit dim outside everything (stride = the buffer's element count),
  // so oneDNN still recognizes the layout (nhwc, nchw, ndhwc, ...) and takes its jit kernels.
  for (size_t k = 0; k < 2 - other.size(); ++k) {
    src_dims.push_back(1);
    src_strides.push_back(op.operand(0)->type().element_count());
    dst_dims.push_back(1);
    dst_strides.push_back(op.result(0)->type().element_count());
  }
  for (size_t d : other) {
    src_dims.push_back(in_dims[d]);
    src_strides.push_back(in_strides[d]);
    dst_dims.push_back(out_dims[d]);
    dst_strides.push_back(out_strides[d]);
  }
  dnnl::memory::dims strides, kernel, dilation, padding_l, padding_r;
  for (size_t d : spatial) {
    src_dims.push_back(in_dims[d]);
    src_strides.push_back(in_strides[d]);
    dst_dims.push_back(out_dims[d]);
    dst_strides.push_back(out_strides[d]);
    strides.push_back(g.window_strides[d]);
    kernel.push_back(g.window_dimensions[d]);
    dilation.push_back(g.window_dilations[d] - 1);
    padding_l.push_back(g.padding_low[d]);
    padding_r.push_back(g.padding_high[d]);
  }
  try {
    const dnnl::memory::desc src_md =
        StridedDesc(src_dims, src_strides, dnnl::memory::data_type::f32);
    const dnnl::memory::desc dst_md =
        StridedDesc(dst_dims, dst_strides, dnnl::memory::data_type::f32);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::pooling_v2_forward::primitive_desc pooling_pd(
        dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, algorithm, src_md,
                                       dst_md, strides, kernel, dilation, padding_l, padding_r),
        attr, CpuEngine());
    // ref:any, and simple_nchw:any (all oneDNN 2.6 has for NCHW below AVX-512): 8-10x slower
    // than the JIT (average 2x2/2 at 112x112x64, batch 1, AVX2: 2.41 ms against 0.30).
    const std::string_view implementation = pooling_pd.impl_info_str();
    if (IsReferenceImplementation(implementation) || implementation.substr(0, 7) == "simple_") {
      return Unmapped(name, StrCat("oneDNN has only its ", implementation,
                                   " implementation for it, slower than the JIT"));
    }
    bound.primitive = dnnl::pooling_v2_forward(pooling_pd);
    bound.arguments.push_back(
        {DNNL_ARG_SRC, dnnl::memory(src_md, CpuEngine(), DNNL_MEMORY_NONE), 0});
    bound.arguments.push_back(
        {DNNL_ARG_DST, dnnl::memory(dst_md, CpuEngine(), DNNL_MEMORY_NONE), 1});
    AddScratchpad(pooling_pd, bound);
    bound.implementation += algorithm == dnnl::algorithm::pooling_avg_include_padding
                                ? " (pooling_avg_include_padding)"
                                : " (pooling_avg_exclude_padding)";
  } catch (const dnnl::error& error) {
    return DnnlErrorStatus(error, name, "pooling_v2_forward with these layouts and shapes");
  }
  return bound;
}

}  // namespace accy::kernels
