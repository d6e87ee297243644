// The sort kernels' runtime functions (sort_runtime.h) over Highway's vqsort.
#include "jit/sort_runtime.h"

#include <cstddef>

#include "hwy/contrib/sort/vqsort.h"

namespace {

template <typename T>
void SortKeys(T* keys, int64_t n, int32_t descending) {
  thread_local const hwy::Sorter sorter;
  if (n < 2) return;
  if (descending != 0) {
    sorter(keys, static_cast<size_t>(n), hwy::SortDescending());
  } else {
    sorter(keys, static_cast<size_t>(n), hwy::SortAscending());
  }
}

}  // namespace

extern "C" {
void accy_sort_keys_i16(int16_t* keys, int64_t n, int32_t descending) {
  SortKeys(keys, n, descending);
}
void accy_sort_keys_u16(uint16_t* keys, int64_t n, int32_t descending) {
  SortKeys(keys, n, descending);
}
void accy_sort_keys_i32(int32_t* keys, int64_t n, int32_t descending) {
  SortKeys(keys, n, descending);
}
void accy_sort_keys_u32(uint32_t* keys, int64_t n, int32_t descending) {
  SortKeys(keys, n, descending);
}
void accy_sort_keys_i64(int64_t* keys, int64_t n, int32_t descending) {
  SortKeys(keys, n, descending);
}
void accy_sort_keys_u64(uint64_t* keys, int64_t n, int32_t descending) {
  SortKeys(keys, n, descending);
}
}
