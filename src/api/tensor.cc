// Dense host tensors, element conversions and tensor comparison (see include/accy/tensor.h).
//
// f16/bf16 rounding comes from Eigen (header-only, used only here so the public header stays
// free of it). Element loads and stores go through memcpy: borrowed buffers carry no alignment
// promise beyond the caller's.
#include "accy/tensor.h"

#include <Eigen/Core>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace accy {
namespace {

template <typename T>
T Load(const void* data, int64_t index) {
  T value;
  std::memcpy(&value, static_cast<const uint8_t*>(data) + index * static_cast<int64_t>(sizeof(T)),
              sizeof(T));
  return value;
}

template <typename T>
void Store(void* data, int64_t index, T value) {
  std::memcpy(static_cast<uint8_t*>(data) + index * static_cast<int64_t>(sizeof(T)), &value,
              sizeof(T));
}

// Rounds a double to float with round-to-odd. Rounding that result once more to f16 or bf16
// (at least 2 fewer significand bits than f32) with round-to-nearest-even gives the correctly
// rounded double -> f16/bf16 result; a plain double -> float -> f16 could round twice.
float DoubleToFloatRoundToOdd(double value) {
  float rounded = static_cast<float>(value);
  if (std::isnan(value) || static_cast<double>(rounded) == value) return rounded;
  // Truncate toward zero, then mark the result inexact by setting the lowest significand bit.
  if (std::fabs(static_cast<double>(rounded)) > std::fabs(value)) {
    rounded = std::nextafter(rounded, 0.0f);
  }
  return std::bit_cast<float>(std::bit_cast<uint32_t>(rounded) | 1u);
}

// The bit pattern of `value` rounded (to nearest even) to float type `type`, zero-extended.
uint64_t FloatBitsOf(ElementType type, double value) {
  switch (type) {
    case ElementType::kF16:
      return FloatToHalfBits(DoubleToFloatRoundToOdd(value));
    case ElementType::kBF16:
      return FloatToBFloat16Bits(DoubleToFloatRoundToOdd(value));
    case ElementType::kF32:
      return std::bit_cast<uint32_t>(static_cast<float>(value));
    case ElementType::kF64:
      return std::bit_cast<uint64_t>(value);
    default:
      ACCY_CHECK(IsFloat(type));
      return 0;
  }
}

// Float -> integer bits as documented on Tensor::SetFromDouble: NaN is 0, values truncate toward
// zero, wrap modulo 2^64 (then modulo 2^bits on store) inside [-2^63, 2^64), saturate outside.
uint64_t IntegerBitsOf(ElementType type, double value) {
  if (std::isnan(value)) return 0;
  const double truncated = std::trunc(value);
  if (truncated >= -0x1p63 && truncated < 0x1p63) {
    return static_cast<uint64_t>(static_cast<int64_t>(truncated));
  }
  if (truncated >= 0x1p63 && truncated < 0x1p64) return static_cast<uint64_t>(truncated);
  const int bits = ElementBitWidth(type);
  if (truncated < 0) return IsSigned(type) ? uint64_t{1} << (bits - 1) : 0;
  return IsSigned(type) ? (uint64_t{1} << (bits - 1)) - 1 : ~uint64_t{0};
}

// Shortest "%g" rendering that reads back to the same value of `type`. Values below 1e16 keep
// all their integer digits (65504, not 6.55e+04).
std::string FormatFloat(ElementType type, double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  const uint64_t bits = FloatBitsOf(type, value);
  const double magnitude = std::fabs(value);
  const int min_precision =
      magnitude >= 1 && magnitude < 1e16 ? static_cast<int>(std::log10(magnitude)) + 1 : 1;
  for (int precision = min_precision; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (FloatBitsOf(type, std::strtod(buffer, nullptr)) == bits) break;
  }
  return buffer;
}

std::string FormatElement(const Tensor& tensor, int64_t index) {
  const ElementType type = tensor.element_type();
  if (IsFloat(type)) return FormatFloat(type, tensor.GetAsDouble(index));
  if (IsBool(type)) return tensor.GetAsInt64(index) != 0 ? "true" : "false";
  if (type == ElementType::kU64) {
    return absl::StrCat(static_cast<uint64_t>(tensor.GetAsInt64(index)));
  }
  return absl::StrCat(tensor.GetAsInt64(index));
}

// Row-major multi-dimensional index of a linear index, e.g. "[1, 2]" ("[]" for a scalar).
std::string FormatMultiIndex(const std::vector<int64_t>& dims, int64_t linear_index) {
  std::vector<int64_t> index(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    index[i] = dims[i] == 0 ? 0 : linear_index % dims[i];
    linear_index = dims[i] == 0 ? 0 : linear_index / dims[i];
  }
  std::string out = "[";
  for (size_t i = 0; i < index.size(); ++i) absl::StrAppend(&out, i ? ", " : "", index[i]);
  return out + "]";
}

bool SameElementBits(const Tensor& a, const Tensor& b, int64_t index) {
  const size_t width = static_cast<size_t>(ElementByteWidth(a.element_type()));
  return std::memcmp(a.bytes().data() + index * width, b.bytes().data() + index * width, width) ==
         0;
}

// Type, shape and data checks shared by every comparison; empty when the pair can be compared.
std::string CheckComparable(const Tensor& actual, const Tensor& expected) {
  if (actual.element_type() != expected.element_type()) {
    return absl::StrCat("element type mismatch: actual is ", actual.type().ToString(),
                        ", expected is ", expected.type().ToString());
  }
  if (actual.dims() != expected.dims()) {
    return absl::StrCat("shape mismatch: actual is ", actual.type().ToString(), ", expected is ",
                        expected.type().ToString());
  }
  if (!actual.valid()) return absl::StrCat("actual ", actual.type().ToString(), " has no data");
  if (!expected.valid()) {
    return absl::StrCat("expected ", expected.type().ToString(), " has no data");
  }
  return "";
}

struct ElementVerdict {
  bool ok;
  double distance;
};

// Runs `check(i) -> ElementVerdict` over every element; `describe_rule(i)` names the rule the
// first bad element broke.
template <typename Check, typename DescribeRule>
TensorComparison CompareElementwise(const Tensor& actual, const Tensor& expected, Check check,
                                    DescribeRule describe_rule) {
  TensorComparison result;
  if (std::string problem = CheckComparable(actual, expected); !problem.empty()) {
    result.ok = false;
    result.message = std::move(problem);
    return result;
  }
  int64_t bad_count = 0;
  const int64_t count = actual.element_count();
  for (int64_t i = 0; i < count; ++i) {
    const ElementVerdict verdict = check(i);
    result.max_distance = std::max(result.max_distance, verdict.distance);
    if (verdict.ok) continue;
    if (bad_count++ == 0) result.first_bad_index = i;
  }
  if (bad_count == 0) return result;
  const int64_t bad = result.first_bad_index;
  result.ok = false;
  result.message = absl::StrCat(
      "element ", bad, " at index ", FormatMultiIndex(actual.dims(), bad), " of ",
      actual.type().ToString(), ": actual ", FormatElement(actual, bad), ", expected ",
      FormatElement(expected, bad), "; rule: ", describe_rule(bad), "; ", bad_count, " of ",
      count, " elements differ");
  return result;
}

double AbsDifference(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<double>::infinity();
  }
  if (a == b) return 0;  // also equal infinities, whose difference would be NaN
  return std::fabs(a - b);
}

// Sign-magnitude bits of a float type as an integer that orders like the values (-0 == +0).
int64_t OrderedFloatKey(ElementType type, double value) {
  const int bits = ElementBitWidth(type);
  const uint64_t pattern = FloatBitsOf(type, value);
  const uint64_t magnitude = pattern & ((uint64_t{1} << (bits - 1)) - 1);
  const bool negative = (pattern >> (bits - 1)) & 1;
  return negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
}

}  // namespace

uint16_t FloatToHalfBits(float value) {
  return Eigen::numext::bit_cast<uint16_t>(Eigen::half(value));
}

float HalfBitsToFloat(uint16_t bits) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
}

uint16_t FloatToBFloat16Bits(float value) {
  return Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(value));
}

float BFloat16BitsToFloat(uint16_t bits) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(bits));
}

StatusOr<Tensor> Tensor::Allocate(const TensorType& type) {
  ACCY_ASSIGN_OR_RETURN(const uint64_t byte_size, type.ByteSize());
  uint64_t padded = 0;
  if (byte_size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
      !CheckedAddU64(byte_size, kTensorAlignment - 1, &padded)) {
    return absl::OutOfRangeError(
        absl::StrCat("Tensor::Allocate: ", type.ToString(), " needs ", byte_size,
                     " bytes, more than a signed 64-bit size"));
  }
  // aligned_alloc wants a multiple of the alignment; zero-size tensors still get one block so
  // that owned data is never null.
  padded = std::max<uint64_t>(padded & ~static_cast<uint64_t>(kTensorAlignment - 1),
                              kTensorAlignment);
  void* data = std::aligned_alloc(kTensorAlignment, padded);
  if (data == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("Tensor::Allocate: cannot allocate ", padded,
                                                     " bytes for ", type.ToString()));
  }
  std::memset(data, 0, padded);
  std::shared_ptr<void> owner(data, std::free);
  return Tensor(type, data, static_cast<int64_t>(byte_size), std::move(owner));
}

StatusOr<Tensor> Tensor::Borrow(const TensorType& type, void* data) {
  ACCY_ASSIGN_OR_RETURN(const uint64_t byte_size, type.ByteSize());
  if (byte_size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::OutOfRangeError(absl::StrCat("Tensor::Borrow: ", type.ToString(), " needs ",
                                              byte_size, " bytes, more than a signed 64-bit size"));
  }
  if (data == nullptr && byte_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat("Tensor::Borrow: null data for ",
                                                   type.ToString(), " of ", byte_size, " bytes"));
  }
  return Tensor(type, data, static_cast<int64_t>(byte_size), nullptr);
}

StatusOr<Tensor> Tensor::Filled(const TensorType& type, double value) {
  ACCY_ASSIGN_OR_RETURN(Tensor tensor, Allocate(type));
  if (tensor.element_count() == 0) return tensor;
  // Convert once, then copy the element's bytes.
  tensor.SetFromDouble(0, value);
  const int64_t width = ElementByteWidth(type.element_type());
  auto* bytes = static_cast<uint8_t*>(tensor.data());
  for (int64_t offset = width; offset < tensor.byte_size(); offset += width) {
    std::memcpy(bytes + offset, bytes, static_cast<size_t>(width));
  }
  return tensor;
}

StatusOr<Tensor> Tensor::FromBytes(const TensorType& type, std::span<const uint8_t> bytes) {
  ACCY_ASSIGN_OR_RETURN(const uint64_t byte_size, type.ByteSize());
  if (bytes.size() != byte_size) {
    return absl::InvalidArgumentError(absl::StrCat("Tensor::FromBytes: ", bytes.size(),
                                                   " bytes given for ", type.ToString(),
                                                   ", which needs ", byte_size));
  }
  if (IsBool(type.element_type())) {  // the host layout of i1 is one byte, 0 or 1
    for (size_t i = 0; i < bytes.size(); ++i) {
      if (bytes[i] > 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Tensor::FromBytes: byte ", i, " of ", type.ToString(), " is ",
            static_cast<int>(bytes[i]), "; i1 elements must be 0 or 1"));
      }
    }
  }
  ACCY_ASSIGN_OR_RETURN(Tensor tensor, Allocate(type));
  if (!bytes.empty()) std::memcpy(tensor.data(), bytes.data(), bytes.size());
  return tensor;
}

std::vector<int64_t> Tensor::strides() const {
  std::vector<int64_t> strides(dims().size());
  int64_t stride = 1;
  for (size_t i = strides.size(); i-- > 0;) {
    strides[i] = stride;
    // Saturating: INT64_MAX stays INT64_MAX times any dim but 0, which makes the product exact
    // (0) again, so each stride is exact whenever it fits.
    if (!CheckedMul(stride, dims()[i], &stride)) stride = std::numeric_limits<int64_t>::max();
  }
  return strides;
}

double Tensor::GetAsDouble(int64_t linear_index) const {
  ACCY_CHECK(data_ != nullptr && linear_index >= 0 && linear_index < element_count());
  const int64_t i = linear_index;
  switch (element_type()) {
    case ElementType::kF16:
      return HalfBitsToFloat(Load<uint16_t>(data_, i));
    case ElementType::kBF16:
      return BFloat16BitsToFloat(Load<uint16_t>(data_, i));
    case ElementType::kF32:
      return Load<float>(data_, i);
    case ElementType::kF64:
      return Load<double>(data_, i);
    case ElementType::kU64:
      return static_cast<double>(Load<uint64_t>(data_, i));
    default:
      return static_cast<double>(GetAsInt64(i));
  }
}

int64_t Tensor::GetAsInt64(int64_t linear_index) const {
  ACCY_CHECK(data_ != nullptr && linear_index >= 0 && linear_index < element_count());
  ACCY_CHECK(!IsFloat(element_type()));
  const int64_t i = linear_index;
  switch (element_type()) {
    case ElementType::kI1:
      return Load<uint8_t>(data_, i) != 0 ? 1 : 0;
    case ElementType::kI8:
      return Load<int8_t>(data_, i);
    case ElementType::kI16:
      return Load<int16_t>(data_, i);
    case ElementType::kI32:
      return Load<int32_t>(data_, i);
    case ElementType::kI64:
      return Load<int64_t>(data_, i);
    case ElementType::kU8:
      return Load<uint8_t>(data_, i);
    case ElementType::kU16:
      return Load<uint16_t>(data_, i);
    case ElementType::kU32:
      return Load<uint32_t>(data_, i);
    case ElementType::kU64:
      return static_cast<int64_t>(Load<uint64_t>(data_, i));
    default:
      ACCY_CHECK(false);
      return 0;
  }
}

void Tensor::SetFromDouble(int64_t linear_index, double value) {
  ACCY_CHECK(data_ != nullptr && linear_index >= 0 && linear_index < element_count());
  const int64_t i = linear_index;
  const ElementType type = element_type();
  switch (type) {
    case ElementType::kF16:
    case ElementType::kBF16:
      Store(data_, i, static_cast<uint16_t>(FloatBitsOf(type, value)));
      return;
    case ElementType::kF32:
      Store(data_, i, static_cast<float>(value));
      return;
    case ElementType::kF64:
      Store(data_, i, value);
      return;
    case ElementType::kI1:
      Store(data_, i, static_cast<uint8_t>(value != 0 ? 1 : 0));
      return;
    default:
      break;
  }
  // Integers: keep the low bytes (little-endian), which is the wrap modulo 2^bits.
  const uint64_t bits = IntegerBitsOf(type, value);
  const int64_t width = ElementByteWidth(type);
  std::memcpy(static_cast<uint8_t*>(data_) + i * width, &bits, static_cast<size_t>(width));
}

StatusOr<Tensor> Tensor::Clone() const {
  if (!valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor::Clone: ", type_.ToString(), " has no data"));
  }
  ACCY_ASSIGN_OR_RETURN(Tensor copy, Allocate(type_));
  if (byte_size_ > 0) std::memcpy(copy.data(), data_, static_cast<size_t>(byte_size_));
  return copy;
}

std::string Tensor::ToString(int64_t max_elements) const {
  std::string out = type_.ToString();
  if (!valid()) return out + " <no data>";
  const int64_t shown = std::clamp<int64_t>(max_elements, 0, element_count());
  out += " [";
  for (int64_t i = 0; i < shown; ++i) absl::StrAppend(&out, i ? ", " : "", FormatElement(*this, i));
  if (shown < element_count()) out += shown > 0 ? ", ..." : "...";
  return out + "]";
}

bool Tensor::HostTypeMatches(ElementType type, size_t host_size, bool host_is_float,
                             bool host_is_bool, bool host_is_signed) {
  if (host_size != static_cast<size_t>(ElementByteWidth(type))) return false;
  const bool host_is_integer = !host_is_float && !host_is_bool;
  if (IsFloat(type) && ElementByteWidth(type) == 2) {
    return host_is_integer && !host_is_signed;  // f16/bf16: uint16_t bit patterns
  }
  if (IsFloat(type)) return host_is_float;
  if (IsBool(type)) return host_is_bool || (host_is_integer && !host_is_signed);  // or uint8_t
  return host_is_integer && host_is_signed == IsSigned(type);
}

TensorComparison CompareExact(const Tensor& actual, const Tensor& expected) {
  const bool is_float = IsFloat(actual.element_type());
  auto check = [&](int64_t i) {
    const double a = actual.GetAsDouble(i);
    const double e = expected.GetAsDouble(i);
    const bool ok =
        SameElementBits(actual, expected, i) || (is_float && std::isnan(a) && std::isnan(e));
    return ElementVerdict{ok, ok ? 0 : AbsDifference(a, e)};
  };
  auto rule = [&](int64_t) {
    return std::string(is_float ? "exact (identical bits; any NaN matches any NaN; -0 != +0)"
                                : "exact (identical values)");
  };
  return CompareElementwise(actual, expected, check, rule);
}

TensorComparison CompareUlp(const Tensor& actual, const Tensor& expected, int64_t max_ulps) {
  if (max_ulps < 0) {
    TensorComparison result;
    result.ok = false;
    result.message = absl::StrCat("max_ulps must be >= 0, got ", max_ulps);
    return result;
  }
  const ElementType type = actual.element_type();
  if (!IsFloat(type)) return CompareExact(actual, expected);
  auto check = [&](int64_t i) {
    const double a = actual.GetAsDouble(i);
    const double e = expected.GetAsDouble(i);
    const int64_t ulps = UlpDistance(type, a, e);
    const bool infinity_mismatch = (std::isinf(a) || std::isinf(e)) && a != e;
    return ElementVerdict{ulps <= max_ulps && !infinity_mismatch, static_cast<double>(ulps)};
  };
  auto rule = [&](int64_t i) {
    const double a = actual.GetAsDouble(i);
    const double e = expected.GetAsDouble(i);
    if (std::isnan(a) || std::isnan(e)) return std::string("NaN matches only NaN");
    if (std::isinf(a) || std::isinf(e)) return std::string("infinities must be equal");
    return absl::StrCat("within ", max_ulps, " ULPs of ", std::string(MlirElementTypeName(type)),
                        " (distance ", UlpDistance(type, a, e), " ULPs)");
  };
  return CompareElementwise(actual, expected, check, rule);
}

TensorComparison CompareClose(const Tensor& actual, const Tensor& expected, double atol,
                              double rtol) {
  const ElementType type = actual.element_type();
  if (!IsFloat(type)) return CompareExact(actual, expected);
  auto check = [&](int64_t i) {
    const double a = actual.GetAsDouble(i);
    const double e = expected.GetAsDouble(i);
    const double difference = AbsDifference(a, e);
    if (std::isnan(a) || std::isnan(e) || std::isinf(a) || std::isinf(e)) {
      return ElementVerdict{difference == 0, difference};
    }
    return ElementVerdict{difference <= atol + rtol * std::fabs(e), difference};
  };
  auto rule = [&](int64_t i) {
    const double a = actual.GetAsDouble(i);
    const double e = expected.GetAsDouble(i);
    if (std::isnan(a) || std::isnan(e)) return std::string("NaN matches only NaN");
    if (std::isinf(a) || std::isinf(e)) return std::string("infinities must be equal");
    return absl::StrCat("|actual - expected| <= atol + rtol * |expected| (difference ",
                        AbsDifference(a, e), " > ", atol, " + ", rtol, " * ", std::fabs(e), " = ",
                        atol + rtol * std::fabs(e), ")");
  };
  return CompareElementwise(actual, expected, check, rule);
}

int64_t UlpDistance(ElementType type, double a, double b) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : kMax;
  if (!IsFloat(type)) {
    // Integers: one unit is one ULP.
    const double difference = std::fabs(a - b);
    return difference >= 0x1p63 ? kMax : static_cast<int64_t>(difference);
  }
  const int64_t key_a = OrderedFloatKey(type, a);
  const int64_t key_b = OrderedFloatKey(type, b);
  int64_t difference = 0;
  if (__builtin_sub_overflow(key_a, key_b, &difference)) return kMax;
  // |difference| cannot overflow: keys are within (-2^63, 2^63), and a wrapped one returned above.
  return difference < 0 ? -difference : difference;
}

}  // namespace accy
