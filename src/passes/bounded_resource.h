// BoundedResource: a std::pmr memory resource that holds one analysis to its declared bounds.
//
// It forwards to an upstream resource and refuses (throws std::bad_alloc, the pmr way to fail)
// any allocation that would take the bytes allocated in all past the declared
// allocation_capacity, or the bytes live at once past the declared workspace_bytes. The
// AnalysisCache creates one per computed analysis, keeps it as long as the cached result (the
// result's containers point at it), and turns the std::bad_alloc into kResourceExhausted.
// Not thread-safe.
#ifndef ACCY_SRC_PASSES_BOUNDED_RESOURCE_H_
#define ACCY_SRC_PASSES_BOUNDED_RESOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory_resource>

namespace accy::passes {

class BoundedResource final : public std::pmr::memory_resource {
 public:
  // `allocation_capacity` and `workspace_bytes` in bytes (requested sizes; alignment padding is
  // the upstream's business and is covered by the declared bounds).
  BoundedResource(std::pmr::memory_resource* upstream, uint64_t allocation_capacity,
                  uint64_t workspace_bytes)
      : upstream_(upstream),
        allocation_capacity_(allocation_capacity),
        workspace_bytes_(workspace_bytes) {}

  std::pmr::memory_resource* upstream() const { return upstream_; }
  uint64_t allocated_bytes() const { return allocated_bytes_; }   // in all, never decreases
  uint64_t live_bytes() const { return live_bytes_; }             // allocated minus freed
  uint64_t peak_live_bytes() const { return peak_live_bytes_; }
  // True once an allocation was refused because it broke a declared bound (as opposed to the
  // upstream running out).
  bool exceeded_bounds() const { return exceeded_bounds_; }

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  std::pmr::memory_resource* upstream_;
  uint64_t allocation_capacity_;
  uint64_t workspace_bytes_;
  uint64_t allocated_bytes_ = 0;
  uint64_t live_bytes_ = 0;
  uint64_t peak_live_bytes_ = 0;
  bool exceeded_bounds_ = false;
};

}  // namespace accy::passes

#endif  // ACCY_SRC_PASSES_BOUNDED_RESOURCE_H_
