// ShapeLayoutAnalysis: element type, dims, element count and row-major layout of every value of a
// function (the seed's `shape_analysis.ShapeLayoutAnalysis`).
//
// An analysis per the AnalysisCache contract (src/passes/analysis_cache.h): its estimate bounds
// its work from the function's Census alone, and Compute allocates everything it holds from the
// context's std::pmr resource, within the declared workspace. The result borrows the function's
// Values (pointers) and is immutable once computed: safe to read from many threads.
#ifndef ACCY_SRC_ANALYSIS_SHAPE_LAYOUT_ANALYSIS_H_
#define ACCY_SRC_ANALYSIS_SHAPE_LAYOUT_ANALYSIS_H_

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "accy/types.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_contract.h"

namespace accy {

// Shape and layout of one value. `dims` and `strides` point into the owning analysis.
struct TensorInfo {
  const Value* value = nullptr;
  ElementType element_type = ElementType::kF32;
  std::span<const int64_t> dims;
  // Row-major strides in elements (stride[i] = product of dims[i+1..]); one per dim when
  // static_layout, empty otherwise.
  std::span<const int64_t> strides;
  // Product of dims in elements (0 when any dim is 0, 1 for rank 0); absent when the product
  // does not fit in 64 bits.
  std::optional<uint64_t> element_count;
  // True when the element count and every stride fit in 64 bits (an int64_t for strides), so the
  // value can live in one dense row-major buffer whose indexing is known at compile time.
  bool static_layout = false;

  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  // element_count * ElementByteWidth, in bytes; nullopt when the count is absent or the product
  // overflows 64 bits (e.g. 2^63-1 f32 elements).
  std::optional<uint64_t> ByteSize() const;

  // Same value, element type, dims, strides, count and static_layout (contents, not storage).
  friend bool operator==(const TensorInfo& a, const TensorInfo& b);
};

class ShapeLayoutAnalysis {
 public:
  static constexpr std::string_view kName = "accy-shape-layout";

  // Identity {kName, 1} and Estimate.
  static const passes::WorkContract& Contract();
  // The bounds of Compute over `function`, from its Census. Errors: kOutOfRange "WorkOverflow"
  // when a bound does not fit in 64 bits.
  static StatusOr<passes::WorkBounds> Estimate(const Function& function);
  // The same from a census (exposed so tests can probe overflow with counts no real IR reaches).
  static StatusOr<passes::WorkBounds> EstimateFromCensus(const passes::Census& census);

  // Computes the analysis in ctx.resource(). Never fails except by allocation (std::bad_alloc
  // from the resource, which the AnalysisCache turns into kResourceExhausted).
  static StatusOr<ShapeLayoutAnalysis*> Compute(passes::AnalysisContext& ctx,
                                                const Function& function);

  // The info of `value` (a value of the analysed function, nested regions included), or null
  // for a value of another function. O(1): indexed by Value::id().
  const TensorInfo* Get(const Value* value) const;
  // Every value in the function's value numbering: per block (function body first), block
  // arguments, then per op its results, then its nested regions' values.
  std::span<const TensorInfo> values() const { return infos_; }
  size_t size() const { return infos_.size(); }

  // Use Compute; public for std::pmr::polymorphic_allocator::new_object.
  explicit ShapeLayoutAnalysis(std::pmr::memory_resource* resource);
  ShapeLayoutAnalysis(const ShapeLayoutAnalysis&) = delete;
  ShapeLayoutAnalysis& operator=(const ShapeLayoutAnalysis&) = delete;

 private:
  // Reserves exactly `values` infos and `dims` dims (plus as many strides), fills them by one
  // walk of `function`, then the id index of `value_ids` entries.
  void Build(const Function& function, uint64_t values, uint64_t dims, uint64_t value_ids);
  void AddValue(const Value& value);
  void AddRegion(const Region& region);

  std::pmr::vector<int64_t> extents_;     // per value: dims, then strides; reserved exactly
  std::pmr::vector<TensorInfo> infos_;    // value numbering order; reserved exactly
  std::pmr::vector<int64_t> by_id_;       // Value::id() -> position in infos_ (-1: none)
};

}  // namespace accy

#endif  // ACCY_SRC_ANALYSIS_SHAPE_LAYOUT_ANALYSIS_H_
