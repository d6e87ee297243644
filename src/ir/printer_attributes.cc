// Attribute text for the StableHLO printer (see printer_attributes.h).
//
// Float elements follow MLIR's AsmPrinter (printFloatValue): first the value rounded to 6
// significant digits in `%e` style with a 7th zero digit (`1.000000e+00`, what stablehlo-opt
// prints for most constants), used only when it parses back to the very same bits; otherwise the
// shortest decimal that round-trips (std::to_chars), given a '.' because MLIR's lexer reads
// `1e-05` as an integer followed by an identifier. NaN and infinities have no decimal literal in
// MLIR, so they print as hex bit patterns, which MLIR accepts for float elements.
#include "src/ir/printer_attributes.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "accy/tensor.h"
#include "src/util/str_cat.h"

namespace accy::printer_internal {
namespace {

constexpr char kHexDigits[] = "0123456789ABCDEF";

// Little-endian load of `width` (1, 2, 4 or 8) bytes, zero-extended.
uint64_t LoadBits(const uint8_t* bytes, int64_t width) {
  uint64_t bits = 0;
  for (int64_t i = width - 1; i >= 0; --i) bits = (bits << 8) | bytes[i];
  return bits;
}

// `0x` followed by exactly 2 * width uppercase hex digits of `bits`.
std::string HexBits(uint64_t bits, int64_t width) {
  std::string out = "0x";
  for (int64_t nibble = 2 * width - 1; nibble >= 0; --nibble) {
    out += kHexDigits[(bits >> (4 * nibble)) & 0xF];
  }
  return out;
}

// Makes a std::to_chars float rendering a valid MLIR float literal: it must contain a '.'.
std::string WithDecimalPoint(const std::string& text) {
  if (text.find('.') != std::string::npos) return text;
  const size_t exponent = text.find_first_of("eE");
  if (exponent == std::string::npos) return text + ".0";
  return StrCat(text.substr(0, exponent), ".0", text.substr(exponent));
}

template <typename T>
std::string ShortestRoundTrip(T value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return WithDecimalPoint(std::string(buffer, result.ptr));
}

// `value` rounded to 6 significant digits, e.g. "1.00000e+00" (the 7th digit is added later).
std::string SixSignificantDigits(double value) {
  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific, 5);
  return std::string(buffer, result.ptr);
}

// The bits of `type` that `text` parses to, rounding as MLIR's parser does (correctly rounded,
// to nearest even). f16/bf16 go through float: `text` has at most 9 significant digits here, far
// closer to its float than half an f16/bf16 ulp, so the double rounding cannot change the result.
// nullopt when the text does not parse completely (e.g. under a locale with a decimal comma).
std::optional<uint64_t> ParseBits(const std::string& text, ElementType type) {
  char* end = nullptr;
  uint64_t bits = 0;
  if (type == ElementType::kF64) {
    const double value = std::strtod(text.c_str(), &end);
    bits = std::bit_cast<uint64_t>(value);
  } else {
    const float value = std::strtof(text.c_str(), &end);
    switch (type) {
      case ElementType::kF16:
        bits = FloatToHalfBits(value);
        break;
      case ElementType::kBF16:
        bits = FloatToBFloat16Bits(value);
        break;
      default:
        bits = std::bit_cast<uint32_t>(value);
        break;
    }
  }
  if (end != text.c_str() + text.size()) return std::nullopt;
  return bits;
}

std::string FormatFloat(ElementType type, const uint8_t* bytes) {
  const int64_t width = ElementByteWidth(type);
  const uint64_t bits = LoadBits(bytes, width);
  double value = 0;
  switch (type) {
    case ElementType::kF16:
      value = HalfBitsToFloat(static_cast<uint16_t>(bits));
      break;
    case ElementType::kBF16:
      value = BFloat16BitsToFloat(static_cast<uint16_t>(bits));
      break;
    case ElementType::kF32:
      value = std::bit_cast<float>(static_cast<uint32_t>(bits));
      break;
    default:
      value = std::bit_cast<double>(bits);
      break;
  }
  if (!std::isfinite(value)) return HexBits(bits, width);

  std::string six = SixSignificantDigits(value);
  if (ParseBits(six, type) == bits) {
    const size_t exponent = six.find('e');
    return StrCat(six.substr(0, exponent), "0", six.substr(exponent));
  }
  if (type == ElementType::kF64) return ShortestRoundTrip(value);
  // Exact: every f16/bf16/f32 value is a float.
  return ShortestRoundTrip(static_cast<float>(value));
}

template <typename T>
std::string FormatInteger(const uint8_t* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return std::to_string(value);
}

// Appends the elements of dims [dim, rank) starting at element `*index`, as nested lists.
void AppendNested(const DenseElements& value, size_t dim, int64_t* index, std::string* out) {
  const TensorType& type = value.type;
  if (dim == type.dims().size()) {
    const int64_t width = ElementByteWidth(type.element_type());
    *out += FormatElement(type.element_type(), value.bytes.data() + *index * width);
    ++*index;
    return;
  }
  *out += '[';
  for (int64_t i = 0; i < type.dims()[dim]; ++i) {
    if (i > 0) *out += ", ";
    AppendNested(value, dim + 1, index, out);
  }
  *out += ']';
}

std::string HexPayload(std::span<const uint8_t> bytes) {
  std::string out = "\"0x";
  out.reserve(bytes.size() * 2 + 4);
  for (uint8_t byte : bytes) {
    out += kHexDigits[byte >> 4];
    out += kHexDigits[byte & 0xF];
  }
  out += '"';
  return out;
}

bool IsBareIdentifier(std::string_view name) {
  if (name.empty()) return false;
  const auto is_letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!is_letter(name[0])) return false;
  for (char c : name) {
    if (!is_letter(c) && !(c >= '0' && c <= '9') && c != '$' && c != '.') return false;
  }
  return true;
}

}  // namespace

std::string FormatElement(ElementType type, const uint8_t* bytes) {
  switch (type) {
    case ElementType::kI1:
      return bytes[0] != 0 ? "true" : "false";
    case ElementType::kI8:
      return FormatInteger<int8_t>(bytes);
    case ElementType::kI16:
      return FormatInteger<int16_t>(bytes);
    case ElementType::kI32:
      return FormatInteger<int32_t>(bytes);
    case ElementType::kI64:
      return FormatInteger<int64_t>(bytes);
    case ElementType::kU8:
      return FormatInteger<uint8_t>(bytes);
    case ElementType::kU16:
      return FormatInteger<uint16_t>(bytes);
    case ElementType::kU32:
      return FormatInteger<uint32_t>(bytes);
    case ElementType::kU64:
      return FormatInteger<uint64_t>(bytes);
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32:
    case ElementType::kF64:
      return FormatFloat(type, bytes);
  }
  ACCY_CHECK(false && "unknown element type");
  return "";
}

std::string FormatDenseElements(const DenseElements& value) {
  const TensorType& type = value.type;
  const int64_t count = type.element_count();
  const int64_t width = ElementByteWidth(type.element_type());
  if (count == 0) return "dense<>";
  // A payload of the wrong size is broken IR (the verifier rejects it); print its raw bytes
  // rather than read past them, so that dumps of broken modules stay possible.
  if (value.bytes.size() != static_cast<size_t>(count * width)) {
    return StrCat("dense<", HexPayload(value.bytes), ">");
  }
  bool splat = true;
  for (int64_t i = 1; i < count && splat; ++i) {
    splat = std::memcmp(value.bytes.data(), value.bytes.data() + i * width,
                        static_cast<size_t>(width)) == 0;
  }
  if (splat) return StrCat("dense<", FormatElement(type.element_type(), value.bytes.data()), ">");
  // i1 stays a list: MLIR's hex form for i1 is bit-packed, not one byte per element.
  if (count > kMaxInlineConstantElements && !IsBool(type.element_type())) {
    return StrCat("dense<", HexPayload(value.bytes), ">");
  }
  std::string out = "dense<";
  int64_t index = 0;
  AppendNested(value, 0, &index, &out);
  out += '>';
  return out;
}

std::string FormatIntList(std::span<const int64_t> values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(values[i]);
  }
  out += ']';
  return out;
}

std::string FormatI64Array(std::span<const int64_t> values) {
  if (values.empty()) return "array<i64>";
  std::string list = FormatIntList(values);
  return StrCat("array<i64: ", list.substr(1, list.size() - 2), ">");
}

std::string FormatSymbolName(std::string_view name) {
  if (IsBareIdentifier(name)) return StrCat("@", name);
  return StrCat("@", FormatStringLiteral(name));
}

std::string FormatStringLiteral(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"' || byte < 0x20 || byte >= 0x7F) {
      out += '\\';
      out += kHexDigits[byte >> 4];
      out += kHexDigits[byte & 0xF];
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

}  // namespace accy::printer_internal
