// dot_general items on the small-M kernel (small_m_matmul.h) instead of oneDNN matmul:
// BindSmallMMatmul (onednn_dot_mapping.h) checks a mapped item fits and binds it as an internal
// host kernel that packs the weights once (at bind time for a constant op, on the first run and
// again from a new address for a declared-constant parameter) and multiplies on every run.
#include <cstdlib>
#include <memory>

#include "kernels/onednn_dot_mapping.h"
#include "kernels/small_m_matmul.h"
#include "src/util/str_cat.h"

namespace accy::kernels {
namespace {

using dt = dnnl::memory::data_type;

// The packed weights of one bound item, shared by its run closure (a bound kernel runs one call
// at a time, LibraryKernel's contract, so the refill needs no lock).
struct PackedWeights {
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float[], Free> data;
  const void* filled_from = nullptr;  // the weights buffer packed last; null: not yet
  bool fixed = false;                 // packed at bind time from a constant op
};

}  // namespace

std::optional<Plain> PlainOf(const dnnl::memory::desc& md) {
  if (md.data.format_kind != dnnl_blocked || md.data.format_desc.blocking.inner_nblks != 0) {
    return std::nullopt;
  }
  Plain plain;
  for (int d = 0; d < md.data.ndims; ++d) {
    plain.dims.push_back(md.data.dims[d]);
    plain.strides.push_back(md.data.format_desc.blocking.strides[d]);
  }
  return plain;
}

std::optional<BoundPrimitive> BindSmallMMatmul(const Mapping& m,
                                               const LibraryKernelOptions& options) {
  if (!options.allow_small_m_kernel) return std::nullopt;
  StatusOr<Isa> isa = ProcessIsa();
  if (!isa.ok() || !SmallMMatmulSupports(*isa)) return std::nullopt;
  if (m.types != LowPrecision::kNative || m.empty_output || m.empty_contraction ||
      m.post_ops.len() != 0 || !m.binaries.empty() || m.lhs_buffer == m.rhs_buffer) {
    return std::nullopt;
  }
  const DenseElements* payload = ConstantPayload(m.dot->operand(1));
  if (payload == nullptr && !IsConstantParameter(options, m.dot->operand(1))) return std::nullopt;
  const std::optional<Plain> src = PlainOf(m.src_md), weights = PlainOf(m.weights_md),
                             dst = PlainOf(m.dst_md);
  if (!src || !weights || !dst || src->dims.size() != 2 || weights->dims.size() != 2 ||
      dst->dims.size() != 2 || m.src_md.data_type() != dt::f32 ||
      m.weights_md.data_type() != dt::f32 || m.dst_md.data_type() != dt::f32) {
    return std::nullopt;
  }
  const int64_t rows = src->dims[0], k = src->dims[1], n = weights->dims[1];
  if (rows < 1 || rows > kSmallMMaxRows || k < 1 || src->strides[1] != 1 || dst->strides[1] != 1) {
    return std::nullopt;
  }
  const int64_t lhs_stride = src->strides[0], dst_stride = dst->strides[0];
  const int64_t stride_k = weights->strides[0], stride_n = weights->strides[1];
  if (m.bias_md) {
    const std::optional<Plain> bias = PlainOf(*m.bias_md);
    if (!bias || m.bias_md->data_type() != dt::f32 || bias->dims.back() != n ||
        bias->strides.back() != 1) {
      return std::nullopt;
    }
  }
  const int64_t elements = SmallMPackedElements(k, n, *isa);
  auto packed = std::make_shared<PackedWeights>();
  const size_t bytes = (static_cast<size_t>(elements) * sizeof(float) + 63) / 64 * 64;
  packed->data.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (packed->data == nullptr) return std::nullopt;  // oneDNN's path may still fit
  if (payload != nullptr) {
    PackSmallMWeights(reinterpret_cast<const float*>(payload->bytes.data()), k, n, stride_k,
                      stride_n, *isa, packed->data.get());
    packed->fixed = true;
  }

  BoundPrimitive bound;
  bound.name = m.name;
  bound.inputs = m.inputs;
  bound.outputs = {m.library_output};
  bound.output_aliases = {-1};
  bound.implementation = StrCat("accy:small_m_matmul:", IsaName(*isa),
                                payload != nullptr ? " (constant weights packed once)"
                                                   : " (declared-constant weights packed once)");
  auto spec = std::make_shared<HostKernelSpec>();
  spec->target = "accy.internal.small_m_matmul";
  spec->operand_effects.assign(m.inputs.size(), OperandEffect::kRead);
  const int lhs = m.lhs_buffer, rhs = m.rhs_buffer, bias = m.bias_md ? m.bias_buffer : -1;
  const Isa level = *isa;
  spec->run = [=](const HostKernelArgs& args) {
    const void* w = args.operands[static_cast<size_t>(rhs)].data;
    if (!packed->fixed && packed->filled_from != w) {
      PackSmallMWeights(static_cast<const float*>(w), k, n, stride_k, stride_n, level,
                        packed->data.get());
      packed->filled_from = w;
    }
    SmallMMatmul(static_cast<const float*>(args.operands[static_cast<size_t>(lhs)].data), rows,
                 lhs_stride, packed->data.get(), k, n,
                 bias >= 0
                     ? static_cast<const float*>(args.operands[static_cast<size_t>(bias)].data)
                     : nullptr,
                 static_cast<float*>(args.results[0].data), dst_stride, level);
    return absl::OkStatus();
  };
  bound.host = std::move(spec);
  bound.host_weight_bytes = static_cast<int64_t>(bytes);
  return bound;
}

}  // namespace accy::kernels
