#include "src/collectives/element_reduction.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "accy/status.h"
#include "accy/tensor.h"

namespace accy {

std::string_view CollectiveReductionName(CollectiveReduction reduction) {
  switch (reduction) {
    case CollectiveReduction::kSum:
      return "sum";
    case CollectiveReduction::kProduct:
      return "product";
    case CollectiveReduction::kMin:
      return "min";
    case CollectiveReduction::kMax:
      return "max";
  }
  return "unknown";
}

Status Communicator::AllReduceTo(std::span<const int> group, const void* send, void* recv,
                                 int64_t count, ElementType type, CollectiveReduction reduction) {
  if (count > 0 && send != recv) {
    if (send == nullptr || recv == nullptr) {
      return absl::InvalidArgumentError("AllReduceTo: null buffer with a positive count");
    }
    std::memcpy(recv, send, static_cast<size_t>(count * ElementByteWidth(type)));
  }
  return AllReduce(group, recv, count, type, reduction);
}

namespace collectives {
namespace {

// StableHLO minimum/maximum on floats: NaN wins, -0 < +0.
template <typename F>
F FloatMin(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
template <typename F>
F FloatMax(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

template <typename T>
T Combine(T a, T b, CollectiveReduction reduction) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (reduction) {
      case CollectiveReduction::kSum:
        return a + b;
      case CollectiveReduction::kProduct:
        return a * b;
      case CollectiveReduction::kMin:
        return FloatMin(a, b);
      case CollectiveReduction::kMax:
        return FloatMax(a, b);
    }
  } else {
    using U = std::make_unsigned_t<T>;
    switch (reduction) {
      case CollectiveReduction::kSum:
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      case CollectiveReduction::kProduct:
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      case CollectiveReduction::kMin:
        return a < b ? a : b;
      case CollectiveReduction::kMax:
        return a > b ? a : b;
    }
  }
  return a;
}

// One loop per reduction over typed pointers (buffers hold whole elements at their natural
// alignment: tensors, Gloo's chunks), so the compiler vectorizes each (SSE2, the library's
// baseline ISA: a small part of an all_reduce's time over TCP); acc may equal x.
template <typename T>
void CombineTyped(void* acc_bytes, const void* x_bytes, int64_t count,
                  CollectiveReduction reduction) {
  T* acc = static_cast<T*>(acc_bytes);
  const T* x = static_cast<const T*>(x_bytes);
  switch (reduction) {
    case CollectiveReduction::kSum:
      if constexpr (std::is_floating_point_v<T>) {
        for (int64_t i = 0; i < count; ++i) acc[i] = acc[i] + x[i];
      } else {
        using U = std::make_unsigned_t<T>;
        for (int64_t i = 0; i < count; ++i) {
          acc[i] = static_cast<T>(static_cast<U>(acc[i]) + static_cast<U>(x[i]));
        }
      }
      return;
    case CollectiveReduction::kProduct:
      if constexpr (std::is_floating_point_v<T>) {
        for (int64_t i = 0; i < count; ++i) acc[i] = acc[i] * x[i];
      } else {
        using U = std::make_unsigned_t<T>;
        for (int64_t i = 0; i < count; ++i) {
          acc[i] = static_cast<T>(static_cast<U>(acc[i]) * static_cast<U>(x[i]));
        }
      }
      return;
    case CollectiveReduction::kMin:
    case CollectiveReduction::kMax:
      for (int64_t i = 0; i < count; ++i) acc[i] = Combine(acc[i], x[i], reduction);
      return;
  }
}

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void CombineHalf(void* acc, const void* x, int64_t count, CollectiveReduction reduction) {
  for (int64_t i = 0; i < count; ++i) {
    uint16_t a, b;
    std::memcpy(&a, static_cast<const char*>(acc) + i * 2, 2);
    std::memcpy(&b, static_cast<const char*>(x) + i * 2, 2);
    const uint16_t r = FromFloat(Combine(ToFloat(a), ToFloat(b), reduction));
    std::memcpy(static_cast<char*>(acc) + i * 2, &r, 2);
  }
}

}  // namespace

void CombineInto(void* acc, const void* x, int64_t count, ElementType type,
                 CollectiveReduction reduction) {
  switch (type) {
    case ElementType::kF16:
      return CombineHalf<HalfBitsToFloat, FloatToHalfBits>(acc, x, count, reduction);
    case ElementType::kBF16:
      return CombineHalf<BFloat16BitsToFloat, FloatToBFloat16Bits>(acc, x, count, reduction);
    case ElementType::kF32:
      return CombineTyped<float>(acc, x, count, reduction);
    case ElementType::kF64:
      return CombineTyped<double>(acc, x, count, reduction);
    case ElementType::kI1: {
      // or for sum and max, and for product and min (values are 0 or 1).
      const bool is_or =
          reduction == CollectiveReduction::kSum || reduction == CollectiveReduction::kMax;
      auto* a = static_cast<uint8_t*>(acc);
      const auto* b = static_cast<const uint8_t*>(x);
      for (int64_t i = 0; i < count; ++i) a[i] = is_or ? (a[i] | b[i]) : (a[i] & b[i]);
      return;
    }
    case ElementType::kI8:
      return CombineTyped<int8_t>(acc, x, count, reduction);
    case ElementType::kI16:
      return CombineTyped<int16_t>(acc, x, count, reduction);
    case ElementType::kI32:
      return CombineTyped<int32_t>(acc, x, count, reduction);
    case ElementType::kI64:
      return CombineTyped<int64_t>(acc, x, count, reduction);
    case ElementType::kU8:
      return CombineTyped<uint8_t>(acc, x, count, reduction);
    case ElementType::kU16:
      return CombineTyped<uint16_t>(acc, x, count, reduction);
    case ElementType::kU32:
      return CombineTyped<uint32_t>(acc, x, count, reduction);
    case ElementType::kU64:
      return CombineTyped<uint64_t>(acc, x, count, reduction);
  }
  ACCY_CHECK(false && "CombineInto: element type outside ElementType");
}

}  // namespace collectives
}  // namespace accy
