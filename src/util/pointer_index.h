// PointerIndex: a fixed-capacity open-addressing map from pointers to int64 indexes, stored in
// one std::pmr vector so its memory is exact and known up front (work contracts bound it as
// `SlotBytes(capacity)`). Lookups are O(1) expected. Not thread-safe for insertion.
#ifndef ACCY_SRC_UTIL_POINTER_INDEX_H_
#define ACCY_SRC_UTIL_POINTER_INDEX_H_

#include <bit>
#include <cstdint>
#include <memory_resource>
#include <utility>
#include <vector>

#include "accy/status.h"

namespace accy {

class PointerIndex {
 public:
  explicit PointerIndex(std::pmr::memory_resource* resource) : slots_(resource) {}

  // Slots for up to `max_entries` keys: the next power of two >= 2 * max_entries (load <= 1/2).
  static uint64_t SlotCount(uint64_t max_entries) {
    return max_entries == 0 ? 1 : std::bit_ceil(2 * max_entries);
  }
  // Bytes Reserve(max_entries) allocates.
  static uint64_t SlotBytes(uint64_t max_entries) {
    return SlotCount(max_entries) * sizeof(std::pair<const void*, int64_t>);
  }

  // Allocates the table once; Insert beyond `max_entries` keys is an internal error.
  void Reserve(uint64_t max_entries) {
    slots_.assign(SlotCount(max_entries), {nullptr, -1});
    mask_ = slots_.size() - 1;
    capacity_ = max_entries;
  }
  // Maps `key` (non-null) to `value`, replacing an earlier value.
  void Insert(const void* key, int64_t value) {
    size_t slot = Probe(key);
    if (slots_[slot].first == nullptr) {
      ACCY_CHECK(size_ < capacity_);
      ++size_;
    }
    slots_[slot] = {key, value};
  }
  // The value of `key`, or -1.
  int64_t Find(const void* key) const {
    if (slots_.empty()) return -1;
    const auto& slot = slots_[Probe(key)];
    return slot.first == key ? slot.second : -1;
  }
  uint64_t size() const { return size_; }

 private:
  size_t Probe(const void* key) const {
    // Fibonacci hashing of the pointer bits; linear probing.
    uint64_t h = reinterpret_cast<uintptr_t>(key) * 0x9E3779B97F4A7C15ull;
    size_t slot = static_cast<size_t>(h >> 17) & mask_;
    while (slots_[slot].first != nullptr && slots_[slot].first != key) slot = (slot + 1) & mask_;
    return slot;
  }

  std::pmr::vector<std::pair<const void*, int64_t>> slots_;
  size_t mask_ = 0;
  uint64_t capacity_ = 0;
  uint64_t size_ = 0;
};

}  // namespace accy

#endif  // ACCY_SRC_UTIL_POINTER_INDEX_H_
