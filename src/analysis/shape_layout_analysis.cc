// ShapeLayoutAnalysis: computation and its work contract (shape_layout_analysis.h).
//
// Storage (everything from the context's resource, each reserved once, never grown):
//   the analysis object                     sizeof(ShapeLayoutAnalysis)
//   infos_   one TensorInfo per value       values * sizeof(TensorInfo)
//   by_id_   one position per value id      value_ids * sizeof(int64_t)
//   extents_ dims and strides per value     2 * census.dims * sizeof(int64_t)
// plus (alignment - 1) bytes per allocation for the padding a bump allocator may insert. The
// declared workspace, allocation capacity and retained storage are all this sum: nothing is
// freed before the result is, so peak live bytes equal bytes allocated.
#include "src/analysis/shape_layout_analysis.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <memory>

namespace accy {
namespace {

using passes::Census;
using passes::WorkAdd;
using passes::WorkBounds;
using passes::WorkMul;

// Bytes one pmr allocation of `count` T takes in a bump allocator, padding included.
template <typename T>
StatusOr<uint64_t> ArrayBytes(uint64_t count) {
  if (count == 0) return uint64_t{0};  // an empty reserve allocates nothing
  ACCY_ASSIGN_OR_RETURN(uint64_t bytes, WorkMul(count, sizeof(T)));
  return WorkAdd(bytes, alignof(T) - 1);
}

}  // namespace

std::optional<uint64_t> TensorInfo::ByteSize() const {
  if (!element_count) return std::nullopt;
  uint64_t bytes = 0;
  if (!CheckedMulU64(*element_count, static_cast<uint64_t>(ElementByteWidth(element_type)),
                     &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

bool operator==(const TensorInfo& a, const TensorInfo& b) {
  return a.value == b.value && a.element_type == b.element_type &&
         std::ranges::equal(a.dims, b.dims) && std::ranges::equal(a.strides, b.strides) &&
         a.element_count == b.element_count && a.static_layout == b.static_layout;
}

const passes::WorkContract& ShapeLayoutAnalysis::Contract() {
  static const passes::WorkContract contract{{kName, 1}, &ShapeLayoutAnalysis::Estimate,
                                             &ShapeLayoutAnalysis::EstimateFromCensus};
  return contract;
}

StatusOr<WorkBounds> ShapeLayoutAnalysis::Estimate(const Function& function) {
  ACCY_ASSIGN_OR_RETURN(Census census, Census::Inspect(function));
  return EstimateFromCensus(census);
}

StatusOr<WorkBounds> ShapeLayoutAnalysis::EstimateFromCensus(const Census& census) {
  const uint64_t values = census.values;

  uint64_t storage = sizeof(ShapeLayoutAnalysis) + alignof(ShapeLayoutAnalysis) - 1;
  ACCY_ASSIGN_OR_RETURN(uint64_t info_bytes, ArrayBytes<TensorInfo>(values));
  ACCY_ASSIGN_OR_RETURN(uint64_t index_bytes, ArrayBytes<int64_t>(census.value_ids));
  ACCY_ASSIGN_OR_RETURN(uint64_t extent_count, WorkMul(2, census.dims));
  ACCY_ASSIGN_OR_RETURN(uint64_t extent_bytes, ArrayBytes<int64_t>(extent_count));
  ACCY_ASSIGN_OR_RETURN(storage, WorkAdd(storage, info_bytes));
  ACCY_ASSIGN_OR_RETURN(storage, WorkAdd(storage, index_bytes));
  ACCY_ASSIGN_OR_RETURN(storage, WorkAdd(storage, extent_bytes));

  // Visits: two walks (the census, then filling) over regions, blocks, ops and values; per dim a
  // copy, a count multiply and a stride; filling the id index (one store per value id, one per
  // value); plus 1 for the analysis itself.
  ACCY_ASSIGN_OR_RETURN(uint64_t walk, WorkAdd(census.regions, census.blocks));
  ACCY_ASSIGN_OR_RETURN(walk, WorkAdd(walk, census.operations));
  ACCY_ASSIGN_OR_RETURN(walk, WorkAdd(walk, values));
  ACCY_ASSIGN_OR_RETURN(uint64_t visits, WorkMul(2, walk));
  ACCY_ASSIGN_OR_RETURN(uint64_t per_dim, WorkMul(3, census.dims));
  ACCY_ASSIGN_OR_RETURN(visits, WorkAdd(visits, per_dim));
  ACCY_ASSIGN_OR_RETURN(uint64_t index, WorkAdd(census.value_ids, values));
  ACCY_ASSIGN_OR_RETURN(visits, WorkAdd(visits, index));
  ACCY_ASSIGN_OR_RETURN(visits, WorkAdd(visits, 1));

  WorkBounds bounds;
  bounds.work.structural_visits = visits;
  bounds.work.input_bytes = 0;  // reads types only, no constant payload or attributes
  bounds.work.analysis_computations = 1;
  bounds.work.allocation_capacity = storage;
  bounds.workspace_bytes = storage;
  bounds.retained_storage_bytes = storage;
  return bounds;
}

ShapeLayoutAnalysis::ShapeLayoutAnalysis(std::pmr::memory_resource* resource)
    : extents_(resource), infos_(resource), by_id_(resource) {}

StatusOr<ShapeLayoutAnalysis*> ShapeLayoutAnalysis::Compute(passes::AnalysisContext& ctx,
                                                            const Function& function) {
  // The census counts values and ranks exactly as Build walks (every region, nested included);
  // the cache computed it for the estimate already, so no sizing walk of the IR is needed.
  ACCY_ASSIGN_OR_RETURN(const Census* census, ctx.cache().CensusOf(function));
  const uint64_t values = census->values;
  const uint64_t dims = census->dims;

  std::pmr::polymorphic_allocator<> allocator(ctx.resource());
  auto destroy = [allocator](ShapeLayoutAnalysis* p) mutable { allocator.delete_object(p); };
  std::unique_ptr<ShapeLayoutAnalysis, decltype(destroy)> analysis(
      allocator.new_object<ShapeLayoutAnalysis>(ctx.resource()), destroy);
  analysis->Build(function, values, dims, census->value_ids);
  return analysis.release();
}

void ShapeLayoutAnalysis::Build(const Function& function, uint64_t values, uint64_t dims,
                                uint64_t value_ids) {
  infos_.reserve(values);
  by_id_.assign(value_ids, -1);
  extents_.reserve(2 * dims);
  // The estimate counts exactly one allocation of each size: a library that over-reserves would
  // break the declared bounds, so insist on exact capacities.
  ACCY_CHECK(infos_.capacity() == values && by_id_.capacity() == value_ids &&
             extents_.capacity() == 2 * dims);

  AddRegion(*function.body());
  ACCY_CHECK(infos_.size() == values && extents_.size() == 2 * dims);

  for (uint64_t i = 0; i < infos_.size(); ++i) {
    int64_t id = infos_[i].value->id();
    ACCY_CHECK(id >= 0 && static_cast<uint64_t>(id) < value_ids);
    by_id_[static_cast<size_t>(id)] = static_cast<int64_t>(i);
  }
}

void ShapeLayoutAnalysis::AddRegion(const Region& region) {
  for (const auto& block : region.blocks()) {
    for (int64_t i = 0; i < block->num_arguments(); ++i) AddValue(*block->argument(i));
    for (const auto& op : block->operations()) {
      for (int64_t r = 0; r < op->num_results(); ++r) AddValue(*op->result(r));
      for (int64_t r = 0; r < op->num_regions(); ++r) AddRegion(*op->region(r));
    }
  }
}

void ShapeLayoutAnalysis::AddValue(const Value& value) {
  const TensorType& type = value.type();
  const size_t rank = static_cast<size_t>(type.rank());
  // extents_ never reallocates (reserved exactly), so spans into it stay valid.
  ACCY_CHECK(extents_.size() + 2 * rank <= extents_.capacity());

  const size_t dims_begin = extents_.size();
  bool has_zero_dim = false;
  for (int64_t dim : type.dims()) {
    extents_.push_back(dim);
    has_zero_dim = has_zero_dim || dim == 0;
  }

  // Element count: a zero dim makes it 0 however large the others are.
  std::optional<uint64_t> element_count = has_zero_dim ? 0 : 1;
  if (!has_zero_dim) {
    for (int64_t dim : type.dims()) {
      uint64_t next = 0;
      if (!CheckedMulU64(*element_count, static_cast<uint64_t>(dim), &next)) {
        element_count.reset();
        break;
      }
      element_count = next;
    }
  }

  // Row-major strides, innermost first; a stride that does not fit in int64_t (possible only
  // beside a zero dim, or for an overflowing count) makes the layout non-static.
  const size_t strides_begin = extents_.size();
  extents_.resize(strides_begin + rank);
  bool strides_fit = true;
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    extents_[strides_begin + i] = stride;
    if (i > 0 && !CheckedMul(stride, type.dims()[i], &stride)) {
      strides_fit = false;
      break;
    }
  }
  const bool static_layout = strides_fit && element_count.has_value();

  TensorInfo info;
  info.value = &value;
  info.element_type = type.element_type();
  info.dims = std::span<const int64_t>(extents_.data() + dims_begin, rank);
  info.strides = static_layout ? std::span<const int64_t>(extents_.data() + strides_begin, rank)
                               : std::span<const int64_t>();
  info.element_count = element_count;
  info.static_layout = static_layout;
  infos_.push_back(info);
}

const TensorInfo* ShapeLayoutAnalysis::Get(const Value* value) const {
  if (value == nullptr) return nullptr;
  int64_t id = value->id();
  if (id < 0 || static_cast<uint64_t>(id) >= by_id_.size()) return nullptr;
  int64_t position = by_id_[static_cast<size_t>(id)];
  // A value of another function may share the id: check it is this function's value.
  if (position < 0 || infos_[static_cast<size_t>(position)].value != value) return nullptr;
  return &infos_[static_cast<size_t>(position)];
}

}  // namespace accy
