// Internal to jit/: the C functions JIT-compiled sort kernels call for the fast path of a
// single-key sort (sort_emitter.cc), bound by name in every JitCompiler's dylib
// (jit_compiler.cc). Each sorts `n` keys in place with Highway's vqsort (hwy/contrib/sort,
// Debian libhwy-dev; Apache-2.0 or BSD-3-Clause), ascending or descending as signed or
// unsigned integers of the width its name says. Thread-safe: each thread sorts with a Sorter of
// its own, allocated on its first call (the one allocation the fast path makes per thread).
#ifndef ACCY_JIT_SORT_RUNTIME_H_
#define ACCY_JIT_SORT_RUNTIME_H_

#include <cstdint>

extern "C" {
void accy_sort_keys_i16(int16_t* keys, int64_t n, int32_t descending);
void accy_sort_keys_u16(uint16_t* keys, int64_t n, int32_t descending);
void accy_sort_keys_i32(int32_t* keys, int64_t n, int32_t descending);
void accy_sort_keys_u32(uint32_t* keys, int64_t n, int32_t descending);
void accy_sort_keys_i64(int64_t* keys, int64_t n, int32_t descending);
void accy_sort_keys_u64(uint64_t* keys, int64_t n, int32_t descending);
}

namespace accy::jit {

// The runtime functions by name, for the JIT dylib.
struct SortRuntimeSymbol {
  const char* name;
  void* address;
};
inline const SortRuntimeSymbol kSortRuntimeSymbols[] = {
    {"accy_sort_keys_i16", reinterpret_cast<void*>(&accy_sort_keys_i16)},
    {"accy_sort_keys_u16", reinterpret_cast<void*>(&accy_sort_keys_u16)},
    {"accy_sort_keys_i32", reinterpret_cast<void*>(&accy_sort_keys_i32)},
    {"accy_sort_keys_u32", reinterpret_cast<void*>(&accy_sort_keys_u32)},
    {"accy_sort_keys_i64", reinterpret_cast<void*>(&accy_sort_keys_i64)},
    {"accy_sort_keys_u64", reinterpret_cast<void*>(&accy_sort_keys_u64)},
};

}  // namespace accy::jit

#endif  // ACCY_JIT_SORT_RUNTIME_H_
