// Decoding of `dense<...>` literals (dense_literal.h), after MLIR's TensorLiteralParser.
//
// f16/bf16 decimals: the text is read as a double (correctly rounded), narrowed to float with
// round-to-odd, then rounded to nearest even: the odd intermediate keeps the sticky bit, so the
// result is the correctly rounded f16/bf16 of the double.
#include "src/stablehlo/dense_literal.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <optional>

#include "accy/stablehlo.h"
#include "accy/tensor.h"
#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {
namespace {

// Magnitude of a decimal or 0x-hex integer; false on overflow or a non-digit.
bool ParseMagnitude(const std::string& text, uint64_t* out) {
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const char* begin = text.data() + (hex ? 2 : 0);
  const char* end = text.data() + text.size();
  const auto result = std::from_chars(begin, end, *out, hex ? 16 : 10);
  return result.ec == std::errc() && result.ptr == end;
}

bool IsHexText(const std::string& text) { return text.size() > 2 && text[1] == 'x'; }

double ParseDouble(const std::string& text) {
  double value = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec == std::errc::result_out_of_range) {
    return std::strtod(text.c_str(), nullptr);  // inf or 0 with the right sign of magnitude
  }
  return value;
}

float NarrowRoundToOdd(double value) {
  float narrowed = static_cast<float>(value);
  if (!std::isfinite(value) || static_cast<double>(narrowed) == value) return narrowed;
  if (std::fabs(static_cast<double>(narrowed)) > std::fabs(value)) {
    narrowed = std::nextafter(narrowed, 0.0f);  // truncate toward zero
  }
  return std::bit_cast<float>(std::bit_cast<uint32_t>(narrowed) | 1u);
}

uint64_t FloatBits(double value, const std::string& text, ElementType type) {
  switch (type) {
    case ElementType::kF64:
      return std::bit_cast<uint64_t>(value);
    case ElementType::kF32: {
      float single = 0;  // read directly: correctly rounded from the decimal
      const auto result = std::from_chars(text.data(), text.data() + text.size(), single);
      if (result.ec != std::errc()) single = static_cast<float>(value);
      return std::bit_cast<uint32_t>(single);
    }
    case ElementType::kF16:
      return FloatToHalfBits(NarrowRoundToOdd(value));
    default:
      return FloatToBFloat16Bits(NarrowRoundToOdd(value));
  }
}

uint64_t InfinityBits(ElementType type) {
  switch (type) {
    case ElementType::kF16:
      return 0x7C00;
    case ElementType::kBF16:
      return 0x7F80;
    case ElementType::kF32:
      return 0x7F800000;
    default:
      return 0x7FF0000000000000;
  }
}

uint64_t QuietNanBits(ElementType type) {
  switch (type) {
    case ElementType::kF16:
      return 0x7E00;
    case ElementType::kBF16:
      return 0x7FC0;
    case ElementType::kF32:
      return 0x7FC00000;
    default:
      return 0x7FF8000000000000;
  }
}

uint64_t SignBit(ElementType type) { return uint64_t{1} << (ElementBitWidth(type) - 1); }

// All ones in the low `bits` bits.
uint64_t LowMask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

void StoreBits(uint64_t bits, int64_t width, uint8_t* out) {
  for (int64_t i = 0; i < width; ++i) out[i] = static_cast<uint8_t>(bits >> (8 * i));
}

// Writes the leaves of `literal` (nested to the depth of `type`'s rank) at `*index`.
Status DecodeList(const DenseLiteral& literal, const TensorType& type, size_t dim,
                  int64_t* index, std::vector<uint8_t>* bytes) {
  const int64_t width = ElementByteWidth(type.element_type());
  if (dim == type.dims().size()) {
    if (literal.kind != DenseLiteral::Kind::kElement) {
      return ErrorAt(literal.loc, StrCat("expected an element of ", type.ToString(),
                                         ", found a nested list (too many levels)"));
    }
    ACCY_ASSIGN_OR_RETURN(uint64_t bits, EncodeDenseElement(literal.element, type.element_type()));
    StoreBits(bits, width, bytes->data() + *index * width);
    ++*index;
    return absl::OkStatus();
  }
  if (literal.kind != DenseLiteral::Kind::kList) {
    return ErrorAt(literal.loc, StrCat("expected a list of ", type.dims()[dim], " for dim ", dim,
                                       " of ", type.ToString(), ", found an element"));
  }
  if (static_cast<int64_t>(literal.items.size()) != type.dims()[dim]) {
    return ErrorAt(literal.loc, StrCat("expected ", type.dims()[dim], " elements for dim ", dim,
                                       " of ", type.ToString(), ", found ",
                                       literal.items.size()));
  }
  for (const DenseLiteral& item : literal.items) {
    ACCY_RETURN_IF_ERROR(DecodeList(item, type, dim + 1, index, bytes));
  }
  return absl::OkStatus();
}

Status DecodeHex(const DenseLiteral& literal, const TensorType& type, int64_t total,
                 std::vector<uint8_t>* bytes) {
  const std::string& hex = literal.hex_bytes;
  const int64_t width = ElementByteWidth(type.element_type());
  const int64_t count = type.element_count();
  if (static_cast<int64_t>(hex.size()) == total) {
    std::memcpy(bytes->data(), hex.data(), hex.size());
  } else if (static_cast<int64_t>(hex.size()) == width && count > 0) {
    for (int64_t i = 0; i < count; ++i) std::memcpy(bytes->data() + i * width, hex.data(), width);
  } else if (IsBool(type.element_type()) &&
             static_cast<int64_t>(hex.size()) == (count + 7) / 8) {
    for (int64_t i = 0; i < count; ++i) {
      (*bytes)[i] = (static_cast<uint8_t>(hex[i / 8]) >> (i % 8)) & 1;
    }
    return absl::OkStatus();
  } else {
    return ErrorAt(literal.loc, StrCat("hex payload of ", hex.size(), " bytes does not match ",
                                       type.ToString(), " (", total, " bytes)"));
  }
  if (IsBool(type.element_type())) {
    for (uint8_t& b : *bytes) {
      if (b > 1) return ErrorAt(literal.loc, "hex payload of an i1 tensor holds a byte other than 0 or 1");
    }
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<uint64_t> EncodeDenseElement(const DenseElementSyntax& element, ElementType type) {
  using Kind = DenseElementSyntax::Kind;
  const int bits = ElementBitWidth(type);
  if (element.kind == Kind::kComplex) {
    return ErrorAt(element.loc, StrCat("complex element given for element type ",
                                       MlirElementTypeName(type)));
  }
  if (IsBool(type)) {
    if (element.kind == Kind::kBool) return element.bool_value ? 1 : 0;
    uint64_t magnitude = 0;
    if (element.kind == Kind::kInteger && !element.negative &&
        ParseMagnitude(element.text, &magnitude) && magnitude <= 1) {
      return magnitude;
    }
    return ErrorAt(element.loc, "expected true, false, 0 or 1 for an i1 element");
  }
  if (IsFloat(type)) {
    const uint64_t sign = element.negative ? SignBit(type) : 0;
    switch (element.kind) {
      case Kind::kInf:
        return InfinityBits(type) | sign;
      case Kind::kNan:
        return QuietNanBits(type) | sign;
      case Kind::kBool:
        return ErrorAt(element.loc, StrCat("expected a float for element type ",
                                           MlirElementTypeName(type), ", found a boolean"));
      case Kind::kInteger:
        if (IsHexText(element.text)) {
          uint64_t pattern = 0;
          if (element.negative || !ParseMagnitude(element.text, &pattern) ||
              (pattern & ~LowMask(bits)) != 0) {
            return ErrorAt(element.loc, StrCat("hex float literal ", element.text,
                                               " does not fit ", MlirElementTypeName(type)));
          }
          return pattern;
        }
        [[fallthrough]];
      default: {
        const std::string text = StrCat(element.negative ? "-" : "", element.text);
        return FloatBits(ParseDouble(text), text, type);
      }
    }
  }
  // Integers.
  if (element.kind != Kind::kInteger) {
    return ErrorAt(element.loc, StrCat("expected an integer for element type ",
                                       MlirElementTypeName(type)));
  }
  uint64_t magnitude = 0;
  if (!ParseMagnitude(element.text, &magnitude)) {
    return ErrorAt(element.loc, StrCat("integer ", element.text, " does not fit 64 bits"));
  }
  const uint64_t mask = LowMask(bits);
  if (IsUnsigned(type)) {
    if (element.negative && magnitude != 0) {
      return ErrorAt(element.loc, StrCat("negative integer for unsigned element type ",
                                         MlirElementTypeName(type)));
    }
    if ((magnitude & ~mask) != 0) {
      return ErrorAt(element.loc, StrCat("integer ", element.text, " does not fit ",
                                         MlirElementTypeName(type)));
    }
    return magnitude;
  }
  // Signless, as MLIR: -2^(bits-1) .. 2^bits - 1.
  const uint64_t limit = element.negative ? (uint64_t{1} << (bits - 1)) : mask;
  if (magnitude > limit) {
    return ErrorAt(element.loc, StrCat("integer ", element.negative ? "-" : "", element.text,
                                       " does not fit ", MlirElementTypeName(type)));
  }
  return (element.negative ? (~magnitude + 1) : magnitude) & mask;
}

Status ConstantBudget::Charge(int64_t bytes, const TensorType& type, SourceLoc loc,
                              int64_t* count, std::string_view whose) {
  if (bytes > options.max_constant_bytes) {
    return absl::ResourceExhaustedError(StrCat(
        LocPrefix(loc), "constant of ", type.ToString(), " takes ", bytes,
        " bytes, above the limit of ", options.max_constant_bytes,
        " bytes per constant (ParseOptions::max_constant_bytes)"));
  }
  // Both are at most max_total_constant_bytes (an int64_t), so the sum does not overflow.
  if (*count + bytes > options.max_total_constant_bytes) {
    return absl::ResourceExhaustedError(StrCat(
        LocPrefix(loc), "constant of ", type.ToString(), " takes ", bytes, " bytes, which with ",
        whose, " ", *count, " bytes of constants before it exceeds the limit of ",
        options.max_total_constant_bytes, " bytes (ParseOptions::max_total_constant_bytes)"));
  }
  *count += bytes;
  return absl::OkStatus();
}

StatusOr<DenseElements> DecodeDenseLiteral(const DenseLiteral& literal, const TensorType& type,
                                           ConstantBudget* budget) {
  const int64_t width = ElementByteWidth(type.element_type());
  const int64_t count = type.element_count();
  int64_t total = 0;
  if (!CheckedMul(count, width, &total)) {
    return absl::ResourceExhaustedError(
        StrCat(LocPrefix(literal.loc), "constant of ", type.ToString(),
               " takes more than 2^63 bytes, above the limit of ",
               budget->options.max_constant_bytes,
               " bytes per constant (ParseOptions::max_constant_bytes)"));
  }
  ACCY_RETURN_IF_ERROR(budget->Charge(total, type, literal.loc, &budget->text_bytes, "the text's"));
  DenseElements result{type, std::vector<uint8_t>(static_cast<size_t>(total))};
  switch (literal.kind) {
    case DenseLiteral::Kind::kEmpty:
      if (count != 0) {
        return ErrorAt(literal.loc, StrCat("dense<> given for ", type.ToString(), " with ", count,
                                           " elements"));
      }
      return result;
    case DenseLiteral::Kind::kHex:
      ACCY_RETURN_IF_ERROR(DecodeHex(literal, type, total, &result.bytes));
      return result;
    case DenseLiteral::Kind::kElement: {
      ACCY_ASSIGN_OR_RETURN(uint64_t bits, EncodeDenseElement(literal.element, type.element_type()));
      for (int64_t i = 0; i < count; ++i) StoreBits(bits, width, result.bytes.data() + i * width);
      return result;
    }
    case DenseLiteral::Kind::kList: {
      int64_t index = 0;
      ACCY_RETURN_IF_ERROR(DecodeList(literal, type, 0, &index, &result.bytes));
      return result;
    }
  }
  return ErrorAt(literal.loc, "unknown dense literal");
}

StatusOr<std::optional<DenseElements>> DecodeLargeSplat(const DenseLiteral& literal,
                                                        const TensorType& type,
                                                        ConstantBudget* budget) {
  const int64_t width = ElementByteWidth(type.element_type());
  const int64_t count = type.element_count();
  int64_t total = 0;
  if (count <= 1 || !CheckedMul(count, width, &total) || total < kMinUnexpandedSplatBytes) {
    return std::optional<DenseElements>();  // DecodeDenseLiteral reports an overflow
  }
  const bool one_hex_element = literal.kind == DenseLiteral::Kind::kHex &&
                               static_cast<int64_t>(literal.hex_bytes.size()) == width &&
                               !IsBool(type.element_type());
  if (literal.kind != DenseLiteral::Kind::kElement && !one_hex_element) {
    return std::optional<DenseElements>();
  }
  ACCY_ASSIGN_OR_RETURN(TensorType scalar, TensorType::Create(type.element_type(), {}));
  uint64_t bits = 0;
  if (one_hex_element) {
    std::memcpy(&bits, literal.hex_bytes.data(), static_cast<size_t>(width));
  } else {
    ACCY_ASSIGN_OR_RETURN(bits, EncodeDenseElement(literal.element, type.element_type()));
  }
  ACCY_RETURN_IF_ERROR(budget->Charge(total, type, literal.loc, &budget->text_bytes, "the text's"));
  DenseElements element{scalar, std::vector<uint8_t>(static_cast<size_t>(width))};
  StoreBits(bits, width, element.bytes.data());
  return std::optional<DenseElements>(std::move(element));
}

StatusOr<DenseElements> ExpandedDense(const AttrValue& value) {
  if (!value.splat_type.has_value()) return *value.dense;
  const TensorType& type = *value.splat_type;
  const size_t width = value.dense->bytes.size();
  const size_t count = static_cast<size_t>(type.element_count());
  DenseElements result{type, {}};
  try {
    result.bytes.resize(count * width);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(StrCat(LocPrefix(value.loc), "cannot allocate the ",
                                               count * width, " bytes of splat ", type.ToString()));
  }
  for (size_t i = 0; i < count; ++i) {
    std::memcpy(result.bytes.data() + i * width, value.dense->bytes.data(), width);
  }
  return result;
}

}  // namespace accy::stablehlo_internal
