// Element types and static tensor types (see include/accy/types.h).
#include "accy/types.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"

namespace accy {
namespace {

// One row per element type: both spellings and the host layout. Indexed by the enum value.
struct ElementTypeInfo {
  ElementType type;
  std::string_view name;
  std::string_view mlir_name;
  int64_t byte_width;
  int bit_width;
};

constexpr ElementTypeInfo kElementTypeInfo[] = {
    {ElementType::kF16, "f16", "f16", 2, 16},    {ElementType::kBF16, "bf16", "bf16", 2, 16},
    {ElementType::kF32, "f32", "f32", 4, 32},    {ElementType::kF64, "f64", "f64", 8, 64},
    {ElementType::kI1, "i1", "i1", 1, 1},        {ElementType::kI8, "i8", "i8", 1, 8},
    {ElementType::kI16, "i16", "i16", 2, 16},    {ElementType::kI32, "i32", "i32", 4, 32},
    {ElementType::kI64, "i64", "i64", 8, 64},    {ElementType::kU8, "u8", "ui8", 1, 8},
    {ElementType::kU16, "u16", "ui16", 2, 16},   {ElementType::kU32, "u32", "ui32", 4, 32},
    {ElementType::kU64, "u64", "ui64", 8, 64},
};

const ElementTypeInfo& Info(ElementType type) {
  const auto index = static_cast<size_t>(type);
  ACCY_CHECK(index < std::size(kElementTypeInfo));
  const ElementTypeInfo& info = kElementTypeInfo[index];
  ACCY_CHECK(info.type == type);
  return info;
}

}  // namespace

std::string_view ElementTypeName(ElementType type) { return Info(type).name; }

std::string_view MlirElementTypeName(ElementType type) { return Info(type).mlir_name; }

StatusOr<ElementType> ParseElementType(std::string_view name) {
  for (const ElementTypeInfo& info : kElementTypeInfo) {
    if (name == info.name || name == info.mlir_name) return info.type;
  }
  // Debian's abseil has its own absl::string_view (not std::string_view), so StrCat takes a copy.
  const std::string quoted = absl::StrCat("'", std::string(name), "'");
  // Types StableHLO has but accy does not: name the family so the user knows it is deliberate.
  if (name.starts_with("complex")) {
    return absl::InvalidArgumentError(
        absl::StrCat("complex element type ", quoted, " is not supported by accy"));
  }
  if (name.find("quant") != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("quantized element type ", quoted, " is not supported by accy"));
  }
  if (name.starts_with("f8")) {
    return absl::InvalidArgumentError(
        absl::StrCat("f8 element type ", quoted, " is not supported by accy"));
  }
  // StableHLO's sub-byte integers (spec "Types": i2, i4, ui2, ui4) and narrow float formats.
  if (name == "i2" || name == "i4" || name == "ui2" || name == "ui4") {
    return absl::InvalidArgumentError(
        absl::StrCat("sub-byte integer element type ", quoted, " is not supported by accy"));
  }
  if (name.starts_with("f4") || name.starts_with("f6") || name == "tf32") {
    return absl::InvalidArgumentError(
        absl::StrCat("narrow float element type ", quoted, " is not supported by accy"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown element type ", quoted,
      " (expected one of f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64)"));
}

int64_t ElementByteWidth(ElementType type) { return Info(type).byte_width; }

int ElementBitWidth(ElementType type) { return Info(type).bit_width; }

bool IsFloat(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kBF16 || type == ElementType::kF32 ||
         type == ElementType::kF64;
}

bool IsInteger(ElementType type) { return IsSigned(type) || IsUnsigned(type); }

bool IsSigned(ElementType type) {
  return type == ElementType::kI8 || type == ElementType::kI16 || type == ElementType::kI32 ||
         type == ElementType::kI64;
}

bool IsUnsigned(ElementType type) {
  return type == ElementType::kU8 || type == ElementType::kU16 || type == ElementType::kU32 ||
         type == ElementType::kU64;
}

bool IsBool(ElementType type) { return type == ElementType::kI1; }

StatusOr<TensorType> TensorType::Create(ElementType element_type, std::vector<int64_t> dims) {
  // Checked first: every other member function of TensorType looks the element type up.
  if (static_cast<size_t>(element_type) >= std::size(kElementTypeInfo)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown element type ", static_cast<int>(element_type),
                     " (not a value of accy::ElementType)"));
  }
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(absl::StrCat("tensor rank ", dims.size(),
                                                   " exceeds the maximum rank ", kMaxRank));
  }
  bool has_zero_dim = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("tensor dim ", i, " has negative size ",
                                                     dims[i], "; dims must be >= 0"));
    }
    has_zero_dim = has_zero_dim || dims[i] == 0;
  }
  // A zero dim makes the count 0 however large the others are, so only non-empty shapes can
  // overflow.
  int64_t element_count = has_zero_dim ? 0 : 1;
  if (!has_zero_dim) {
    for (int64_t dim : dims) {
      if (!CheckedMul(element_count, dim, &element_count)) {
        TensorType partial(element_type, dims, 0);
        return absl::OutOfRangeError(absl::StrCat(
            "element count of ", partial.ToString(), " overflows a signed 64-bit integer"));
      }
    }
  }
  return TensorType(element_type, std::move(dims), element_count);
}

StatusOr<uint64_t> TensorType::ByteSize() const {
  uint64_t bytes = 0;
  if (!CheckedMulU64(static_cast<uint64_t>(element_count_),
                     static_cast<uint64_t>(ElementByteWidth(element_type_)), &bytes)) {
    return absl::OutOfRangeError(
        absl::StrCat("byte size of ", ToString(), " overflows 64 bits"));
  }
  return bytes;
}

TensorType TensorType::WithElementType(ElementType type) const {
  return TensorType(type, dims_, element_count_);
}

std::string TensorType::ToString() const {
  std::string out = "tensor<";
  for (int64_t dim : dims_) absl::StrAppend(&out, dim, "x");
  absl::StrAppend(&out, std::string(MlirElementTypeName(element_type_)), ">");
  return out;
}

bool CheckedMul(int64_t a, int64_t b, int64_t* out) {
  int64_t result;
  if (__builtin_mul_overflow(a, b, &result)) return false;
  *out = result;
  return true;
}

bool CheckedAdd(int64_t a, int64_t b, int64_t* out) {
  int64_t result;
  if (__builtin_add_overflow(a, b, &result)) return false;
  *out = result;
  return true;
}

bool CheckedMulU64(uint64_t a, uint64_t b, uint64_t* out) {
  uint64_t result;
  if (__builtin_mul_overflow(a, b, &result)) return false;
  *out = result;
  return true;
}

bool CheckedAddU64(uint64_t a, uint64_t b, uint64_t* out) {
  uint64_t result;
  if (__builtin_add_overflow(a, b, &result)) return false;
  *out = result;
  return true;
}

}  // namespace accy
