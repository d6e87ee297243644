// oneDNN plumbing (kernels/onednn_common.h).
#include "kernels/onednn_common.h"

#include <algorithm>

#include "src/util/str_cat.h"

namespace accy::kernels {

const dnnl::engine& CpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

std::optional<dnnl::memory::data_type> ToDnnlType(ElementType type) {
  switch (type) {
    case ElementType::kF32:
      return dnnl::memory::data_type::f32;
    case ElementType::kBF16:
      return dnnl::memory::data_type::bf16;
    case ElementType::kF16:
      return dnnl::memory::data_type::f16;
    default:
      return std::nullopt;
  }
}

dnnl::memory::desc StridedDesc(const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& strides, dnnl::memory::data_type type) {
  return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), type,
                            dnnl::memory::dims(strides.begin(), strides.end()));
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(dims[d], 1);
  return strides;
}

Status DnnlErrorStatus(const dnnl::error& error, std::string_view item, std::string_view what) {
  if (error.status == dnnl_unimplemented) {
    return absl::UnimplementedError(StrCat(item, ": oneDNN has no implementation of ", what,
                                           " on this host (", error.what(), ")"));
  }
  return absl::InternalError(StrCat(item, ": oneDNN failed to create ", what, ": ", error.what(),
                                    " (status ", static_cast<int>(error.status), ")"));
}

const DenseElements* ConstantPayload(const Value* value) {
  const Operation* def = value->defining_op();
  if (def == nullptr || def->kind() != OpKind::kConstant) return nullptr;
  return def->GetDense("value");
}

dnnl::memory PrepackWeights(const DenseElements& payload, const dnnl::memory::desc& user_md,
                            const dnnl::memory::desc& packed_md) {
  // The reorder reads through a non-const handle: give it a private copy of the payload.
  std::vector<uint8_t> bytes = payload.bytes;
  dnnl::memory user(user_md, CpuEngine(), bytes.data());
  dnnl::memory packed(packed_md, CpuEngine());
  dnnl::stream stream(CpuEngine());
  dnnl::reorder(user, packed).execute(stream, user, packed);
  stream.wait();
  return packed;
}

void AddScratchpad(const dnnl::primitive_desc& pd, BoundPrimitive& bound) {
  bound.implementation = pd.impl_info_str();
  const dnnl::memory::desc scratchpad = pd.scratchpad_desc();
  if (scratchpad.get_size() > 0) {
    bound.arguments.push_back({DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchpad, CpuEngine()), -1});
  }
}

}  // namespace accy::kernels
