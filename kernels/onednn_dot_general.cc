// dot_general items on oneDNN matmul (dev_guide_matmul.html), epilogue chains as post_ops
// (onednn_dot_epilogue.cc).
//
// Dims map as: batch dims stay separate matmul batch dims (any position, by strides), the lhs
// free dims collapse into M, the contracting dims into K, the rhs free dims into N, each
// collapse allowed only when the dims nest in the row-major buffer (so no copy is ever made).
// The result's row-major layout [batch..., lhs free..., rhs free...] is dst [batch..., M, N].
#include "kernels/onednn_dot_mapping.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "kernels/onednn_bindings.h"
#include "kernels/onednn_isa.h"
#include "src/util/str_cat.h"

namespace accy::kernels {

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

int BufferOf(Mapping& m, const Value* value) {
  auto it = std::find(m.inputs.begin(), m.inputs.end(), value);
  if (it != m.inputs.end()) return static_cast<int>(it - m.inputs.begin());
  m.inputs.push_back(value);
  return static_cast<int>(m.inputs.size() - 1);
}

Status Unmapped(const Mapping& m, std::string_view why) {
  const bool convolution = m.dot != nullptr && m.dot->kind() == OpKind::kConvolution;
  return absl::UnimplementedError(StrCat(m.name, ": does not map onto oneDNN ",
                                         convolution ? "convolution_forward" : "matmul", ": ",
                                         why, " (the JIT runs it)"));
}

namespace {

using dt = dnnl::memory::data_type;

// Maps the dot_general's dims (fills descriptors and element ops).
Status MapDot(Mapping& m) {
  const Operation& dot = *m.dot;
  const TensorType& lhs = dot.operand(0)->type();
  const TensorType& rhs = dot.operand(1)->type();
  const TensorType& out = dot.result(0)->type();
  std::optional<dt> lhs_type = ToDnnlType(lhs.element_type(), m.types);
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
  m.dst_md = StridedDesc(dst_dims, RowMajorStrides(dst_dims), *ToDnnlType(out.element_type(), m.types));
  m.element_ops = 2 * batch * static_cast<uint64_t>(mg->size) * static_cast<uint64_t>(ng->size) *
                  static_cast<uint64_t>(lk->size);
  m.empty_output = out.element_count() == 0;
  m.empty_contraction = lk->size == 0;
  m.lhs_buffer = BufferOf(m, dot.operand(0));
  m.rhs_buffer = BufferOf(m, dot.operand(1));
  return absl::OkStatus();
}

// Maps the dot and its epilogue (`mode`) into a fresh Mapping.
Status MapItem(Mapping& m, std::span<const Operation* const> ops, const FusionPlan* fusion,
               EpilogueMode mode) {
  const std::string name = m.name;
  const Operation* dot = m.dot;
  const LowPrecision types = m.types;
  m = Mapping();
  m.name = name;
  m.dot = dot;
  m.types = types;
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

// Below avx512_core, oneDNN 2.6's gemm:jit matmul reads plain [K, N] f32 weights whose row
// stride is a multiple of 2 KiB at well under full speed for most M (it packs them itself only
// from some M on). Measured on AMD Zen 2, 1 thread, K 768, N 3072 (row stride 12 KiB),
// GFLOP/s plain vs a 16-float padded stride: M 1 16/25, M 8 32/77, M 32 39/90, M 128 38/89,
// M 256 41/91, M 512 88/89; the padding copy (oneDNN reorder) costs 1.27 ms. On AMD Zen 4
// under the avx2 cap (oneDNN 2.6.3 gemm:jit, the raw primitives; docs/isa.md), the same holds
// for every 2 KiB multiple: plain / (per-run copy + padded) time, 1 thread, K 768:
//   N 512 (2 KiB):  M 32 375/268 us, M 64 777/489, M 128 1414/941, M 256 2763/1829,
//                   M 512 5434/3739, M 1024 7504/7579;
//   N 1024 (4 KiB): M 32 1028/549, M 128 3846/1878, M 256 7575/3680, M 512 7439/7566;
//   N 3072 (12 KiB): M 32 3080/2050, M 128 11566/6289, M 512 22616/23050;
// 2 threads alike (N 512, M 64: 369/263 us); strides of other 1 KiB multiples (N 256, 768) gain
// nothing (0.95-1.39 with the copy). So below avx512_core weights are padded when the row
// stride is a multiple of 2 KiB and M is below 512, or below 1024 for an odd multiple of 2 KiB
// (gemm:jit packs those itself only from M 1024); constant weights are prepacked padded from
// M 1, weights read from a buffer are copied per run from M 32 (M 32, N 3072, Zen 2: 3.9 ms ->
// 1.7 + 1.3 ms).
// With avx512_core, oneDNN's brg:avx512_core matmul has the 4 KiB trouble on Intel CPUs, at
// every M from 32: measured on an Intel Xeon (AVX-512 + AMX, 1 thread, K 768, N 3072), plain
// weights M 128 7.4 ms, M 512 26.3 ms; with the per-run padding copy M 128 3.5 ms (the MLP
// up-projection of `accy demo`: 7.7 -> 4.9 ms, the block 15.1 -> 10.9 ms). Constant weights
// there take matmul's own layout (format_tag::any: M 128 2.85 ms), so only weights read from a
// buffer are padded. AMD's AVX-512 hosts keep the plain layout: on Zen 4 (brg:avx512_core, K
// 768) the copy costs more than padding saves at every N of 256-3072 and M of 32-1024 (copy +
// padded / plain 0.93-1.57 at 1 and 2 threads; 128x768x3072: 5.67 / 5.57 ms at 1 thread, 2.96 /
// 2.76 ms at 2). The padded descriptor, or nullopt when the plain one is kept.
std::optional<dnnl::memory::desc> PaddedWeightsDesc(const Mapping& m, bool constant_weights) {
  const dnnl::memory::dims dims = m.weights_md.dims();
  const dnnl::memory::dims src_dims = m.src_md.dims();
  if (dims.size() != 2 || m.weights_md.data_type() != dt::f32) return std::nullopt;
  const bool avx512 = OneDnnHasAvx512Core();
  if (avx512 && (constant_weights || !HostIsIntel())) return std::nullopt;
  const int64_t k = dims[0], n = dims[1], rows = src_dims[0];
  const dnnl::memory::dims strides(m.weights_md.data.format_desc.blocking.strides,
                                   m.weights_md.data.format_desc.blocking.strides + 2);
  const int64_t row_bytes = n * 4;
  if (strides[0] != n || strides[1] != 1 || k < 2) return std::nullopt;
  if (row_bytes % (avx512 ? 4096 : 2048) != 0) return std::nullopt;
  if (rows < (constant_weights ? 1 : 32)) return std::nullopt;
  if (!avx512 && rows >= (row_bytes % 4096 == 0 ? 512 : 1024)) return std::nullopt;
  return StridedDesc({k, n}, {n + 16, 1}, dt::f32);
}

// matmul's primitive descriptor for mapping `m` (throws dnnl::error like any binding step).
dnnl::matmul::primitive_desc MatmulPrimitiveDesc(const Mapping& m) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_post_ops(m.post_ops);
  // Constant rhs (weights known at compile time, or a declared-constant parameter): let matmul
  // pick its layout (format_tag::any).
  const bool constant_weights =
      m.lhs_buffer != m.rhs_buffer &&
      (ConstantPayload(m.dot->operand(1)) != nullptr || m.weights_constant_source);
  const dnnl::memory::desc weights_any(m.weights_md.dims(), m.weights_md.data_type(),
                                       dnnl::memory::format_tag::any);
  const std::optional<dnnl::memory::desc> padded = PaddedWeightsDesc(m, constant_weights);
  const dnnl::memory::desc& matmul_weights_md =
      padded ? *padded : constant_weights ? weights_any : m.weights_md;
  return dnnl::matmul::primitive_desc(
      m.bias_md ? dnnl::matmul::desc(m.src_md, matmul_weights_md, *m.bias_md, m.dst_md)
                : dnnl::matmul::desc(m.src_md, matmul_weights_md, m.dst_md),
      attr, CpuEngine());
}

// Creates the matmul primitive for mapped item `m` (re-mapping `m` without post-ops when only
// those cost oneDNN its optimized kernel) and its arguments; kUnimplemented when oneDNN has no
// (or, unless allowed, only its reference) implementation.
StatusOr<BoundPrimitive> BindMatmulPrimitive(Mapping& m, std::span<const Operation* const> ops,
                                             const FusionPlan* fusion,
                                             const LibraryKernelOptions& options,
                                             EpilogueMode mode) {
  BoundPrimitive bound;
  bound.name = m.name;
  bound.inputs = m.inputs;
  bound.outputs = {m.library_output};
  if (!m.empty_output && !m.empty_contraction) {
    try {
      m.weights_constant_source =
          m.lhs_buffer != m.rhs_buffer && IsConstantParameter(options, m.dot->operand(1));
      std::optional<dnnl::matmul::primitive_desc> matmul_pd = MatmulPrimitiveDesc(m);
      if (!options.allow_reference_implementation && IsReferenceImplementation(matmul_pd->impl_info_str()) &&
          mode == EpilogueMode::kPrefix && (m.post_ops.len() > 0 || m.bias_md)) {
        // The post-ops (e.g. a binary broadcast over M in 2.6) cost the optimized kernel: the
        // dot alone on matmul, the whole epilogue on the JIT.
        Mapping bare;
        bare.name = m.name;
        bare.dot = m.dot;
        bare.types = m.types;
        ACCY_RETURN_IF_ERROR(MapItem(bare, ops, fusion, EpilogueMode::kNone));
        bare.weights_constant_source = m.weights_constant_source;
        dnnl::matmul::primitive_desc bare_pd = MatmulPrimitiveDesc(bare);
        if (!IsReferenceImplementation(bare_pd.impl_info_str())) {
          m = std::move(bare);
          matmul_pd = std::move(bare_pd);
        }
      }
      if (!options.allow_reference_implementation && IsReferenceImplementation(matmul_pd->impl_info_str())) {
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
      } else if (matmul_pd->weights_desc() != m.weights_md) {
        // Padded weights (PaddedWeightsDesc) or a declared-constant parameter in matmul's
        // layout: a reorder copies the buffer per run, or once per address.
        bound.arguments.push_back({DNNL_ARG_WEIGHTS,
                                   dnnl::memory(matmul_pd->weights_desc(), engine, DNNL_MEMORY_NONE),
                                   m.rhs_buffer, m.weights_md, m.weights_constant_source});
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
      bound.inputs = m.inputs;
      bound.outputs = {m.library_output};
      const bool padded = matmul_pd->weights_desc() != m.weights_md && weights == nullptr;
      StageArguments(bound, m.types);
      if (m.types == LowPrecision::kStagedAsF32) bound.implementation += " (bf16/f16 staged as f32)";
      if (padded) {
        bound.implementation += m.weights_constant_source
                                    ? " (declared-constant weights reordered once)"
                                    : " (weights copied to a padded row stride)";
      }
    } catch (const dnnl::error& error) {
      return DnnlErrorStatus(error, m.name, "matmul with these dims, types and post-ops");
    }
  }
  bound.inputs = m.inputs;
  bound.outputs = {m.library_output};
  return bound;
}

// The tiled gemm:jit binding (BindTiledGemm) of mapped item `m`: as mapped when it has no
// post-ops (a bias stays with the tiles), else, when the JIT may take the epilogue (`mode`
// kPrefix), the dot alone with the whole epilogue left to the JIT. nullopt when it does not fit.
std::optional<BoundPrimitive> TryTiledGemm(const Mapping& m, std::span<const Operation* const> ops,
                                           const FusionPlan* fusion,
                                           const LibraryKernelOptions& options, EpilogueMode mode) {
  if (!options.allow_tiled_gemm || !TiledGemmHost()) return std::nullopt;
  // Weights matmul would read through a padded copy (PaddedWeightsDesc: 2 KiB-multiple row
  // strides on AVX2) are copied the same way for the tiles.
  int64_t padded_ld = 0;
  try {
    if (std::optional<dnnl::memory::desc> padded = PaddedWeightsDesc(m, false)) {
      padded_ld = padded->data.format_desc.blocking.strides[0];
    }
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
  if (m.post_ops.len() == 0 && m.binaries.empty()) return BindTiledGemm(m, options, padded_ld);
  if (mode != EpilogueMode::kPrefix) return std::nullopt;
  Mapping bare;
  bare.name = m.name;
  bare.dot = m.dot;
  bare.types = m.types;
  if (!MapItem(bare, ops, fusion, EpilogueMode::kNone).ok()) return std::nullopt;
  return BindTiledGemm(bare, options, padded_ld);
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

  if (std::optional<BoundPrimitive> small = BindSmallMMatmul(m, options)) {
    return *std::move(small);
  }
  if (std::optional<BoundPrimitive> tiled = TryTiledGemm(m, ops, fusion, options, mode)) {
    return *std::move(tiled);
  }
  StatusOr<BoundPrimitive> native = BindMatmulPrimitive(m, ops, fusion, options, mode);
  if (!native.ok() && native.status().code() == absl::StatusCode::kUnimplemented &&
      HasLowPrecisionTensor(ops)) {
    // No bf16/f16 matmul on this ISA: the f32 matmul over staged copies (onednn_common.h).
    Mapping staged;
    staged.name = m.name;
    staged.dot = m.dot;
    staged.types = LowPrecision::kStagedAsF32;
    if (MapItem(staged, ops, fusion, mode).ok()) {
      StatusOr<BoundPrimitive> bound = BindMatmulPrimitive(staged, ops, fusion, options, mode);
      if (bound.ok()) {
        m = std::move(staged);
        native = std::move(bound);
      }
    }
  }
  ACCY_ASSIGN_OR_RETURN(BoundPrimitive bound, std::move(native));
  bound.inputs = m.inputs;
  bound.outputs = {m.library_output};
  bound.output_aliases = {-1};
  bound.zero_fill_output = m.empty_contraction;
  return bound;
}

}  // namespace accy::kernels
