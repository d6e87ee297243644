// accy::Tensor: a dense host tensor (element type, shape, row-major strides, data).
//
// A Tensor either owns its data (64-byte aligned, zero-initialised, freed with the last copy of
// the handle) or borrows a caller's buffer (the caller keeps it alive and unchanged while any
// Tensor refers to it). Copies of a Tensor share data; `Clone` makes a deep, owned copy.
// A Tensor is not synchronised: concurrent writes to one buffer are the caller's business.
// Host layout: row-major, densely packed, little-endian; i1 is one byte per element (0 or 1),
// f16 is IEEE binary16, bf16 the upper half of an f32.
#ifndef ACCY_TENSOR_H_
#define ACCY_TENSOR_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "accy/status.h"
#include "accy/types.h"

namespace accy {

// Host alignment of owned tensor data, in bytes.
inline constexpr int64_t kTensorAlignment = 64;

class Tensor {
 public:
  // An empty f32 scalar with no data; `valid()` is false.
  Tensor() = default;

  // A new owned, zero-filled tensor of `type`. kOutOfRange if its byte size overflows, and
  // kResourceExhausted if the allocation fails.
  static StatusOr<Tensor> Allocate(const TensorType& type);
  // Borrows `data` (at least type.ByteSize() bytes, kept alive by the caller).
  // kInvalidArgument if `data` is null while the tensor has a non-zero byte size.
  static StatusOr<Tensor> Borrow(const TensorType& type, void* data);
  // An owned tensor holding `values` (row-major). kInvalidArgument if values.size() differs from
  // the element count or `T` is not the host type of `type.element_type()`: float for f32, double
  // for f64, an integer of the element's width and signedness for integers (int32_t for i32,
  // uint32_t for ui32), uint16_t bit patterns for f16/bf16, and bool or uint8_t for i1 (a
  // non-zero uint8_t is stored as 1).
  template <typename T>
  static StatusOr<Tensor> FromVector(const TensorType& type, const std::vector<T>& values);
  // An owned tensor whose every element is `value` converted to the element type
  // (floats round to nearest even, integers wrap modulo 2^bits, i1 is value != 0; exact rules
  // on SetFromDouble).
  static StatusOr<Tensor> Filled(const TensorType& type, double value);
  // An owned tensor from raw little-endian row-major bytes; kInvalidArgument on a size mismatch
  // or, for i1, a byte other than 0 or 1 (the message names its index).
  static StatusOr<Tensor> FromBytes(const TensorType& type, std::span<const uint8_t> bytes);

  // True when the tensor has data or needs none (zero elements). Tests the element count, not
  // byte_size_, so that the default tensor<f32> (byte_size_ 0, no data) is not valid.
  bool valid() const { return data_ != nullptr || type_.element_count() == 0; }
  const TensorType& type() const { return type_; }
  ElementType element_type() const { return type_.element_type(); }
  const std::vector<int64_t>& dims() const { return type_.dims(); }
  int64_t rank() const { return type_.rank(); }
  int64_t element_count() const { return type_.element_count(); }
  // Row-major strides in elements (last dim has stride 1). A stride that does not fit in int64_t
  // is INT64_MAX; that happens only in a tensor with no elements (a 0 dim in front of huge
  // ones), where no index ever uses it.
  std::vector<int64_t> strides() const;
  int64_t byte_size() const { return byte_size_; }
  bool owns_data() const { return owner_ != nullptr; }

  void* data() { return data_; }
  const void* data() const { return data_; }
  std::span<uint8_t> bytes() { return {static_cast<uint8_t*>(data_), static_cast<size_t>(byte_size_)}; }
  std::span<const uint8_t> bytes() const {
    return {static_cast<const uint8_t*>(data_), static_cast<size_t>(byte_size_)};
  }
  // Typed view; ACCY_CHECKs that T's size matches the element byte width.
  template <typename T>
  T* data_as() {
    ACCY_CHECK(static_cast<int64_t>(sizeof(T)) == ElementByteWidth(element_type()));
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data_as() const {
    ACCY_CHECK(static_cast<int64_t>(sizeof(T)) == ElementByteWidth(element_type()));
    return static_cast<const T*>(data_);
  }

  // Element `linear_index` (row-major) converted to double (exact for every float type and for
  // integers up to 2^53). ACCY_CHECKs the index.
  double GetAsDouble(int64_t linear_index) const;
  // Element as int64 (sign- or zero-extended; u64 above INT64_MAX wraps). For integer and i1.
  int64_t GetAsInt64(int64_t linear_index) const;
  // Stores `value` converted to the element type. Floats round to nearest even (f16/bf16 directly
  // from the double, no double rounding). i1 stores value != 0 (so NaN is 1). Integers: NaN is
  // 0; otherwise the value truncates toward zero and, inside [-2^63, 2^64), wraps modulo 2^bits
  // (300 -> i8 44, -1 -> u8 255); beyond that range (and +-inf) it saturates to the type's
  // min/max. This is a host helper, not StableHLO convert (which saturates, docs/numerics.md).
  void SetFromDouble(int64_t linear_index, double value);

  // A deep, owned copy.
  StatusOr<Tensor> Clone() const;
  // A short human-readable rendering, e.g. "tensor<2xf32> [1, 2]" (at most `max_elements` shown).
  std::string ToString(int64_t max_elements = 32) const;

 private:
  Tensor(TensorType type, void* data, int64_t byte_size, std::shared_ptr<void> owner)
      : type_(std::move(type)), data_(data), byte_size_(byte_size), owner_(std::move(owner)) {}
  static bool HostTypeMatches(ElementType type, size_t host_size, bool host_is_float,
                              bool host_is_bool, bool host_is_signed);

  TensorType type_;
  void* data_ = nullptr;
  int64_t byte_size_ = 0;
  std::shared_ptr<void> owner_;  // null when borrowed
};

// Result of comparing two tensors element by element.
struct TensorComparison {
  bool ok = true;
  // First mismatching element (row-major linear index), or -1.
  int64_t first_bad_index = -1;
  // Largest distance seen (ULPs for CompareUlp, absolute difference otherwise).
  double max_distance = 0;
  // Empty when ok; otherwise names the first bad index, both values and the rule broken, or the
  // type/shape mismatch.
  std::string message;
};

// Same type and identical bits, except that for floats any NaN matches any NaN and -0 != +0.
TensorComparison CompareExact(const Tensor& actual, const Tensor& expected);
// Floats: each element within `max_ulps` units in the last place of the element type
// (NaN matches any NaN; infinities must be equal; -0 and +0 are 0 ULPs apart). Integers: exact.
// A negative `max_ulps` fails the comparison with the message "max_ulps must be >= 0, got ...".
TensorComparison CompareUlp(const Tensor& actual, const Tensor& expected, int64_t max_ulps);
// Floats: |actual - expected| <= atol + rtol * |expected| (NaN matches NaN; infinities must be
// equal). Integers: exact.
TensorComparison CompareClose(const Tensor& actual, const Tensor& expected, double atol,
                              double rtol);
// ULP distance between two finite-or-infinite values of a float type (both given as double,
// exactly representable in `type`); 0 when both are NaN, INT64_MAX when one is NaN and the
// other is not (and, saturating, for f64 distances that do not fit). Integer types: |a - b|.
int64_t UlpDistance(ElementType type, double a, double b);

// f16/bf16 conversions with round-to-nearest-even (NaN stays NaN), used by host helpers.
uint16_t FloatToHalfBits(float value);
float HalfBitsToFloat(uint16_t bits);
uint16_t FloatToBFloat16Bits(float value);
float BFloat16BitsToFloat(uint16_t bits);

template <typename T>
StatusOr<Tensor> Tensor::FromVector(const TensorType& type, const std::vector<T>& values) {
  if (static_cast<int64_t>(values.size()) != type.element_count()) {
    return absl::InvalidArgumentError("Tensor::FromVector: " + std::to_string(values.size()) +
                                      " values given for " + type.ToString() + " with " +
                                      std::to_string(type.element_count()) + " elements");
  }
  if (!HostTypeMatches(type.element_type(), sizeof(T), std::is_floating_point_v<T>,
                       std::is_same_v<T, bool>, std::is_signed_v<T>)) {
    const std::string host =
        std::is_same_v<T, bool> ? std::string("bool")
                                : std::string(std::is_floating_point_v<T> ? "floating-point"
                                              : std::is_signed_v<T>       ? "signed integer"
                                                                          : "unsigned integer") +
                                      " of " + std::to_string(sizeof(T)) + " bytes";
    return absl::InvalidArgumentError(
        "Tensor::FromVector: host type (" + host + ") does not match " + type.ToString() +
        " (f16/bf16 take uint16_t bit patterns, i1 takes bool or uint8_t)");
  }
  ACCY_ASSIGN_OR_RETURN(Tensor tensor, Allocate(type));
  auto* out = static_cast<uint8_t*>(tensor.data());
  if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> has no data()
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i] ? 1 : 0;
  } else if (IsBool(type.element_type())) {  // uint8_t: i1 holds 0 or 1, whatever the byte
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i] != 0 ? 1 : 0;
  } else if (!values.empty()) {
    std::memcpy(out, values.data(), values.size() * sizeof(T));
  }
  return tensor;
}

}  // namespace accy

#endif  // ACCY_TENSOR_H_
