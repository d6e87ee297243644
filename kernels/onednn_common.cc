// oneDNN plumbing (kernels/onednn_common.h).
#include "kernels/onednn_common.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include <omp.h>

#include "kernels/onednn_isa.h"
#include "src/util/str_cat.h"

namespace accy::kernels {

const dnnl::engine& CpuEngine() {
  static const dnnl::engine engine = [] {
    // The ISA cap must reach oneDNN before its first kernel; a bad ACCY_MAX_ISA is reported by
    // Engine::Create, which calls this too.
    (void)ApplyOneDnnIsaCap();
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

std::optional<dnnl::memory::data_type> ToDnnlType(ElementType type, LowPrecision mode) {
  const bool staged = mode == LowPrecision::kStagedAsF32;
  switch (type) {
    case ElementType::kF32:
      return dnnl::memory::data_type::f32;
    case ElementType::kBF16:
      return staged ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::bf16;
    case ElementType::kF16:
      return staged ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::f16;
    default:
      return std::nullopt;
  }
}

bool IsLowPrecision(ElementType type) {
  return type == ElementType::kBF16 || type == ElementType::kF16;
}

bool HasLowPrecisionTensor(std::span<const Operation* const> ops) {
  for (const Operation* op : ops) {
    for (const Value* operand : op->operands()) {
      if (IsLowPrecision(operand->type().element_type())) return true;
    }
    for (int64_t r = 0; r < op->num_results(); ++r) {
      if (IsLowPrecision(op->result(r)->type().element_type())) return true;
    }
  }
  return false;
}

bool IsReferenceImplementation(std::string_view implementation) {
  return implementation.substr(0, 4) == "ref:";
}

dnnl::memory::desc WithDataType(const dnnl::memory::desc& md, dnnl::memory::data_type type) {
  dnnl_memory_desc_t c_desc = md.data;
  c_desc.data_type = static_cast<dnnl_data_type_t>(type);
  return dnnl::memory::desc(c_desc);
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
  const dnnl::memory::desc payload_md =
      WithDataType(user_md, *ToDnnlType(payload.type.element_type()));
  dnnl::memory user(payload_md, CpuEngine(), bytes.data());
  dnnl::memory packed(packed_md, CpuEngine());
  dnnl::stream stream(CpuEngine());
  dnnl::reorder(user, packed).execute(stream, user, packed);
  stream.wait();
  return packed;
}

namespace {

// The row copy between two plain 2-D layouts of one type with unit inner strides and the same
// dims (a padded row stride), or no rows when the reorder is needed.
BoundPrimitive::Staged::RowCopy PlainRowCopy(const dnnl::memory::desc& buffer_md,
                                             const dnnl::memory::desc& copy_md) {
  BoundPrimitive::Staged::RowCopy copy;
  const dnnl_memory_desc_t& a = buffer_md.data;
  const dnnl_memory_desc_t& b = copy_md.data;
  if (a.ndims != 2 || b.ndims != 2 || a.data_type != b.data_type ||
      a.format_kind != dnnl_blocked || b.format_kind != dnnl_blocked ||
      a.format_desc.blocking.inner_nblks != 0 || b.format_desc.blocking.inner_nblks != 0 ||
      a.dims[0] != b.dims[0] || a.dims[1] != b.dims[1] || a.offset0 != 0 || b.offset0 != 0 ||
      a.format_desc.blocking.strides[1] != 1 || b.format_desc.blocking.strides[1] != 1 ||
      a.dims[0] < 1 || a.dims[1] < 1) {
    return copy;
  }
  const int64_t width = static_cast<int64_t>(dnnl::memory::data_type_size(buffer_md.data_type()));
  copy.rows = a.dims[0];
  copy.row_bytes = a.dims[1] * width;
  copy.buffer_stride = a.format_desc.blocking.strides[0] * width;
  copy.copy_stride = b.format_desc.blocking.strides[0] * width;
  if (copy.buffer_stride < copy.row_bytes || copy.copy_stride < copy.row_bytes) copy.rows = 0;
  return copy;
}

}  // namespace

void CopyRows(const void* from, int64_t from_stride, void* to, int64_t to_stride, int64_t rows,
              int64_t row_bytes) {
  constexpr int64_t kMinParallelBytes = int64_t{256} << 10;
  const int threads = rows * row_bytes < kMinParallelBytes
                          ? 1
                          : static_cast<int>(std::min<int64_t>(omp_get_max_threads(), rows));
  const char* source = static_cast<const char*>(from);
  char* destination = static_cast<char*>(to);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(destination + r * to_stride, source + r * from_stride,
                static_cast<size_t>(row_bytes));
  }
}

namespace {

// One element's bits is a NaN: exponent all ones, mantissa nonzero (IEEE 754 binary32, bfloat16,
// binary16), i.e. (bits & kAbsMask) > kInfinity. Held as signed integers so the compare is
// SSE2's pcmpgtd / pcmpgtw (the masked bits are non-negative) and the scans vectorize: an
// all-ones lane per NaN, OR-reduced. `Signed` is int32_t for f32, int16_t for bf16 / f16.
template <typename Signed, Signed kAbsMask, Signed kInfinity>
Signed NanLanes(Signed bits) {
  return static_cast<Signed>(-static_cast<Signed>((bits & kAbsMask) > kInfinity));
}

template <typename Signed, Signed kAbsMask, Signed kInfinity>
void FillNanRowsOf(Signed* data, const BoundPrimitive::NanRows& rows, Signed quiet_nan) {
  const int64_t block = rows.extent * rows.inner;
  const int64_t total_bytes = rows.outer * block * static_cast<int64_t>(sizeof(Signed));
  constexpr int64_t kMinParallelBytes = int64_t{256} << 10;
  const int threads = total_bytes < kMinParallelBytes
                          ? 1
                          : static_cast<int>(std::min<int64_t>(omp_get_max_threads(), rows.outer));
  if (rows.inner == 1) {  // contiguous rows (the last axis): one OR-reduction per row
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t o = 0; o < rows.outer; ++o) {
      Signed* row = data + o * block;
      Signed any = 0;
      for (int64_t j = 0; j < rows.extent; ++j) {
        any |= NanLanes<Signed, kAbsMask, kInfinity>(row[j]);
      }
      if (any != 0) std::fill(row, row + rows.extent, quiet_nan);
    }
    return;
  }
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<Signed> has_nan(static_cast<size_t>(rows.inner));
#pragma omp for schedule(static)
    for (int64_t o = 0; o < rows.outer; ++o) {
      Signed* base = data + o * block;
      std::fill(has_nan.begin(), has_nan.end(), Signed{0});
      for (int64_t j = 0; j < rows.extent; ++j) {
        const Signed* row = base + j * rows.inner;
        Signed* flags = has_nan.data();
        for (int64_t k = 0; k < rows.inner; ++k) {
          flags[k] |= NanLanes<Signed, kAbsMask, kInfinity>(row[k]);
        }
      }
      if (std::all_of(has_nan.begin(), has_nan.end(), [](Signed f) { return f == 0; })) continue;
      for (int64_t j = 0; j < rows.extent; ++j) {
        Signed* row = base + j * rows.inner;
        for (int64_t k = 0; k < rows.inner; ++k) {
          if (has_nan[static_cast<size_t>(k)] != 0) row[k] = quiet_nan;
        }
      }
    }
  }
}

}  // namespace

void FillRowsHoldingNan(void* data, const BoundPrimitive::NanRows& rows) {
  if (rows.outer <= 0 || rows.extent <= 0 || rows.inner <= 0) return;
  switch (rows.type) {
    case ElementType::kF32:
      FillNanRowsOf<int32_t, 0x7fffffff, 0x7f800000>(static_cast<int32_t*>(data), rows,
                                                      0x7fc00000);
      return;
    case ElementType::kBF16:
      FillNanRowsOf<int16_t, 0x7fff, 0x7f80>(static_cast<int16_t*>(data), rows, 0x7fc0);
      return;
    case ElementType::kF16:
      FillNanRowsOf<int16_t, 0x7fff, 0x7c00>(static_cast<int16_t*>(data), rows, 0x7e00);
      return;
    default:
      return;  // the softmax contract admits f32, bf16 and f16 only (ValidateSoftmax)
  }
}

void StageArguments(BoundPrimitive& bound, LowPrecision types) {
  const size_t num_inputs = bound.inputs.size();
  for (BoundArgument& argument : bound.arguments) {
    if (argument.buffer < 0) continue;
    const size_t buffer = static_cast<size_t>(argument.buffer);
    const Value* value =
        buffer < num_inputs ? bound.inputs[buffer] : bound.outputs[buffer - num_inputs];
    const ElementType type = value->type().element_type();
    const bool widen = types == LowPrecision::kStagedAsF32 && IsLowPrecision(type);
    if (!widen && !argument.buffer_md.has_value()) continue;
    BoundPrimitive::Staged staged;
    staged.buffer = argument.buffer;
    staged.output = buffer >= num_inputs;
    staged.constant_source = argument.constant_source && !staged.output;
    const dnnl::memory::desc copy_md = argument.memory.get_desc();
    const dnnl::memory::desc buffer_md = WithDataType(
        argument.buffer_md.value_or(copy_md), *ToDnnlType(type));
    staged.user = dnnl::memory(buffer_md, CpuEngine(), DNNL_MEMORY_NONE);
    staged.f32 = dnnl::memory(copy_md, CpuEngine());
    if (!widen) staged.row_copy = PlainRowCopy(buffer_md, copy_md);
    staged.reorder = staged.output ? dnnl::reorder(staged.f32, staged.user)
                                   : dnnl::reorder(staged.user, staged.f32);
    argument.memory = staged.f32;
    argument.buffer = -1;
    argument.buffer_md.reset();
    bound.staged.push_back(std::move(staged));
  }
}

void AddScratchpad(const dnnl::primitive_desc& pd, BoundPrimitive& bound) {
  bound.implementation = pd.impl_info_str();
  const dnnl::memory::desc scratchpad = pd.scratchpad_desc();
  if (scratchpad.get_size() > 0) {
    bound.arguments.push_back({DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchpad, CpuEngine()), -1});
  }
}

}  // namespace accy::kernels
