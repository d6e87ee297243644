// BoundedResource (bounded_resource.h).
#include "src/passes/bounded_resource.h"

#include <algorithm>
#include <new>

namespace accy::passes {

void* BoundedResource::do_allocate(std::size_t bytes, std::size_t alignment) {
  const uint64_t size = bytes;
  const bool within_capacity = size <= allocation_capacity_ - std::min(allocated_bytes_,
                                                                       allocation_capacity_);
  const bool within_workspace =
      size <= workspace_bytes_ - std::min(live_bytes_, workspace_bytes_);
  if (!within_capacity || !within_workspace) {
    exceeded_bounds_ = true;
    throw std::bad_alloc();
  }
  void* p = upstream_->allocate(bytes, alignment);  // may throw std::bad_alloc itself
  allocated_bytes_ += size;
  live_bytes_ += size;
  peak_live_bytes_ = std::max(peak_live_bytes_, live_bytes_);
  return p;
}

void BoundedResource::do_deallocate(void* p, std::size_t bytes, std::size_t alignment) {
  upstream_->deallocate(p, bytes, alignment);
  live_bytes_ -= std::min<uint64_t>(bytes, live_bytes_);
}

}  // namespace accy::passes
