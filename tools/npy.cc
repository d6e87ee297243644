// The .npy reader and writer (npy.h). The header is a Python dict literal; this reads only the
// subset numpy.save writes: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
#include "tools/npy.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "src/util/str_cat.h"

namespace accy::tools {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

Status Malformed(std::string_view what) {
  return absl::InvalidArgumentError(StrCat("malformed .npy: ", what));
}

StatusOr<ElementType> TypeOfDescr(std::string_view descr) {
  for (ElementType type : kAllElementTypes) {
    if (type != ElementType::kBF16 && NpyDescr(type) == descr) return type;
  }
  if (descr.size() >= 2 && descr[0] == '>') {
    return absl::InvalidArgumentError(
        StrCat("big-endian dtype '", descr,
               "' is not supported; save with arr.astype(arr.dtype.newbyteorder('<'))"));
  }
  return absl::InvalidArgumentError(
      StrCat("dtype '", descr,
             "' is not supported (supported: <f2 <f4 <f8 |b1 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8)"));
}

// A cursor over the header dictionary text.
class HeaderReader {
 public:
  explicit HeaderReader(std::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool AtEnd() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
    return pos_ == text_.size();
  }
  std::string Found() const {
    return pos_ < text_.size() ? StrCat("'", text_.substr(pos_, 12), "'") : "the end";
  }
  Status Expected(std::string_view what) const {
    return Malformed(StrCat("header: expected ", what, " at offset ", pos_, ", found ", Found()));
  }
  StatusOr<std::string> String() {
    SkipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      return Expected("a quoted string");
    }
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return Expected("a closing quote");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }
  StatusOr<bool> Bool() {
    SkipSpace();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.substr(pos_).starts_with(word)) {
        pos_ += std::strlen(word);
        return value;
      }
    }
    return Expected("True or False");
  }
  // A tuple of non-negative integers: (), (3,), (2, 3).
  StatusOr<std::vector<int64_t>> Shape() {
    if (!Consume('(')) return Expected("'(' starting the shape");
    std::vector<int64_t> dims;
    while (!Consume(')')) {
      SkipSpace();
      if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        return Expected("a non-negative dimension");
      }
      int64_t dim = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (!CheckedMul(dim, 10, &dim) || !CheckedAdd(dim, text_[pos_] - '0', &dim)) {
          return Malformed("header: a shape dimension overflows 64 bits");
        }
        ++pos_;
      }
      dims.push_back(dim);
      if (Consume(')')) break;
      if (!Consume(',')) return Expected("',' or ')' in the shape");
    }
    return dims;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

StatusOr<Header> ParseHeader(std::string_view text) {
  HeaderReader reader(text);
  Header header;
  bool seen_descr = false, seen_order = false, seen_shape = false;
  if (!reader.Consume('{')) return reader.Expected("'{'");
  while (!reader.Consume('}')) {
    ACCY_ASSIGN_OR_RETURN(std::string key, reader.String());
    if (!reader.Consume(':')) return reader.Expected("':'");
    bool* seen = nullptr;
    if (key == "descr") {
      seen = &seen_descr;
      ACCY_ASSIGN_OR_RETURN(header.descr, reader.String());
    } else if (key == "fortran_order") {
      seen = &seen_order;
      ACCY_ASSIGN_OR_RETURN(header.fortran_order, reader.Bool());
    } else if (key == "shape") {
      seen = &seen_shape;
      ACCY_ASSIGN_OR_RETURN(header.shape, reader.Shape());
    } else {
      return Malformed(StrCat("header: unknown key '", key, "'"));
    }
    if (*seen) return Malformed(StrCat("header: key '", key, "' appears twice"));
    *seen = true;
    if (reader.Consume('}')) break;
    if (!reader.Consume(',')) return reader.Expected("',' or '}'");
  }
  if (!reader.AtEnd()) return reader.Expected("only padding after the dictionary");
  if (!seen_descr || !seen_order || !seen_shape) {
    return Malformed("header: needs the keys 'descr', 'fortran_order' and 'shape'");
  }
  return header;
}

std::string ShapeTuple(const std::vector<int64_t>& dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) out += StrCat(i ? ", " : "", dims[i]);
  return out + (dims.size() == 1 ? ",)" : ")");
}

}  // namespace

std::string_view NpyDescr(ElementType type) {
  switch (type) {
    case ElementType::kF16:
      return "<f2";
    case ElementType::kBF16:
    case ElementType::kF32:
      return "<f4";
    case ElementType::kF64:
      return "<f8";
    case ElementType::kI1:
      return "|b1";
    case ElementType::kI8:
      return "|i1";
    case ElementType::kI16:
      return "<i2";
    case ElementType::kI32:
      return "<i4";
    case ElementType::kI64:
      return "<i8";
    case ElementType::kU8:
      return "|u1";
    case ElementType::kU16:
      return "<u2";
    case ElementType::kU32:
      return "<u4";
    case ElementType::kU64:
      return "<u8";
  }
  return "?";
}

namespace {

// Where a .npy file's header sits: the preamble's fields (numpy/lib/format.py: the magic string,
// the version, the header length in 2 bytes for 1.0 and 4 for 2.0).
struct Preamble {
  size_t header_offset = 0;
  size_t header_length = 0;
};

// The preamble of `bytes` (at least its first 12 bytes when the file has them).
StatusOr<Preamble> ParsePreamble(std::span<const uint8_t> bytes) {
  if (bytes.size() < kMagicSize + 2 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    return Malformed("not a .npy file (no \\x93NUMPY magic string)");
  }
  const int major = bytes[6];
  const int minor = bytes[7];
  if (major == 1 && minor == 0 && bytes.size() >= 10) {
    return Preamble{10, bytes[8] | (size_t{bytes[9]} << 8)};
  }
  if (major == 2 && minor == 0 && bytes.size() >= 12) {
    return Preamble{12, bytes[8] | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) |
                            (size_t{bytes[11]} << 24)};
  }
  if ((major == 1 || major == 2) && minor == 0) {
    return Malformed("truncated before the header length");
  }
  return Malformed(
      StrCat("format version ", major, ".", minor, " is not supported (1.0 and 2.0 are)"));
}

// The array `bytes` declares: its type, and where its data starts. `bytes` holds the preamble and
// the whole header.
struct Layout {
  TensorType type;
  std::string descr;
  std::vector<int64_t> shape;
  size_t data_offset = 0;
  uint64_t data_size = 0;
};

StatusOr<Layout> ParseLayout(std::span<const uint8_t> bytes) {
  ACCY_ASSIGN_OR_RETURN(Preamble preamble, ParsePreamble(bytes));
  if (preamble.header_length > bytes.size() - preamble.header_offset) {
    return Malformed(
        StrCat("header of ", preamble.header_length, " bytes is longer than the file"));
  }
  const std::string_view header_text(
      reinterpret_cast<const char*>(bytes.data()) + preamble.header_offset, preamble.header_length);
  ACCY_ASSIGN_OR_RETURN(Header header, ParseHeader(header_text));
  if (header.fortran_order) {
    return absl::InvalidArgumentError(
        "Fortran-order arrays are not supported; save np.ascontiguousarray(arr)");
  }
  ACCY_ASSIGN_OR_RETURN(ElementType element_type, TypeOfDescr(header.descr));
  StatusOr<TensorType> type = TensorType::Create(element_type, header.shape);
  if (!type.ok())
    return Malformed(StrCat("shape ", ShapeTuple(header.shape), ": ", type.status().message()));
  StatusOr<uint64_t> data_size = type->ByteSize();
  if (!data_size.ok())
    return Malformed(StrCat("shape ", ShapeTuple(header.shape), " is too large"));
  return Layout{*type, header.descr, header.shape, preamble.header_offset + preamble.header_length,
                *data_size};
}

}  // namespace

StatusOr<Tensor> ParseNpy(std::span<const uint8_t> bytes) {
  ACCY_ASSIGN_OR_RETURN(Layout layout, ParseLayout(bytes));
  if (bytes.size() - layout.data_offset != layout.data_size) {
    return Malformed(StrCat("shape ", ShapeTuple(layout.shape), " of ", layout.descr, " needs ",
                            layout.data_size, " data bytes, the file has ",
                            bytes.size() - layout.data_offset));
  }
  return Tensor::FromBytes(layout.type, bytes.subspan(layout.data_offset));
}

StatusOr<Tensor> ReadNpy(std::istream& in) {
  // Appends up to `count` more bytes of `in` to `bytes`, growing it as they arrive (so a size
  // read from a damaged header allocates no more than the file holds); false when the stream
  // ended first.
  std::vector<uint8_t> bytes;
  auto read = [&](uint64_t count) {
    constexpr uint64_t kChunk = uint64_t{64} << 20;
    while (count > 0) {
      const size_t have = bytes.size();
      const size_t step = static_cast<size_t>(std::min(count, kChunk));
      bytes.resize(have + step);
      in.read(reinterpret_cast<char*>(bytes.data() + have), static_cast<std::streamsize>(step));
      bytes.resize(have + static_cast<size_t>(in.gcount()));
      if (bytes.size() != have + step) return false;
      count -= step;
    }
    return true;
  };
  read(12);  // the longest preamble (version 2.0)
  ACCY_ASSIGN_OR_RETURN(Preamble preamble, ParsePreamble(bytes));
  if (preamble.header_offset + preamble.header_length > bytes.size() &&
      !read(preamble.header_offset + preamble.header_length - bytes.size())) {
    return Malformed(
        StrCat("header of ", preamble.header_length, " bytes is longer than the file"));
  }
  ACCY_ASSIGN_OR_RETURN(Layout layout, ParseLayout(bytes));
  // Exactly the data the header declares, then the end of the file.
  const uint64_t have = bytes.size() - layout.data_offset;
  if (have > layout.data_size || (have < layout.data_size && !read(layout.data_size - have))) {
    return Malformed(StrCat("shape ", ShapeTuple(layout.shape), " of ", layout.descr, " needs ",
                            layout.data_size, " data bytes, the file has ",
                            bytes.size() - layout.data_offset));
  }
  if (in.peek() != std::char_traits<char>::eof()) {
    return Malformed(StrCat("shape ", ShapeTuple(layout.shape), " of ", layout.descr, " needs ",
                            layout.data_size, " data bytes, the file has more"));
  }
  return Tensor::FromBytes(layout.type,
                           std::span<const uint8_t>(bytes).subspan(layout.data_offset));
}

std::string SerializeNpy(const Tensor& tensor) {
  Tensor widened;  // bf16 written as f32: the bf16 bits are the f32's upper half (exact, NaN
                   // payloads and signalling NaNs included; a conversion through double would
                   // quiet them)
  const Tensor* source = &tensor;
  if (tensor.element_type() == ElementType::kBF16) {
    widened = *Tensor::Allocate(tensor.type().WithElementType(ElementType::kF32));
    const auto* half = static_cast<const uint16_t*>(tensor.data());
    auto* full = static_cast<uint32_t*>(widened.data());
    for (int64_t i = 0; i < tensor.element_count(); ++i) full[i] = uint32_t{half[i]} << 16;
    source = &widened;
  }
  std::string dict =
      StrCat("{'descr': '", NpyDescr(source->element_type()),
             "', 'fortran_order': False, 'shape': ", ShapeTuple(source->dims()), ", }");
  // Version 1.0 has a 2-byte header length; the data starts 64-byte aligned.
  const auto padded_total = [&](size_t prefix) {
    return (prefix + dict.size() + 1 + 63) / 64 * 64;
  };
  const bool version2 = padded_total(10) - 10 > 65535;
  const size_t prefix = version2 ? 12 : 10;
  const size_t total = padded_total(prefix);
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicSize);
  out.push_back(static_cast<char>(version2 ? 2 : 1));
  out.push_back(0);
  const size_t length = dict.size();
  for (size_t b = 0; b < (version2 ? 4u : 2u); ++b) {
    out.push_back(static_cast<char>((length >> (8 * b)) & 0xff));
  }
  out += dict;
  out.append(reinterpret_cast<const char*>(source->bytes().data()), source->bytes().size());
  return out;
}

StatusOr<Tensor> ReadNpyFile(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("the .npy file name is empty");
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return absl::InvalidArgumentError(StrCat(path, ": is a directory, not a .npy file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat(path, ": cannot open"));
  StatusOr<Tensor> tensor = ReadNpy(in);
  if (!tensor.ok()) {
    return Status(tensor.status().code(), StrCat(path, ": ", tensor.status().message()));
  }
  return tensor;
}

Status WriteNpyFile(const std::string& path, const Tensor& tensor) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(StrCat(path, ": cannot open for writing"));
  const std::string data = SerializeNpy(tensor);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return absl::InternalError(StrCat(path, ": write failed"));
  return absl::OkStatus();
}

StatusOr<Tensor> ConvertNpyInput(const Tensor& array, const TensorType& parameter) {
  if (array.type() == parameter) return array;
  if (parameter.element_type() == ElementType::kBF16 && array.dims() == parameter.dims()) {
    if (array.element_type() == ElementType::kU16) {  // raw bit patterns
      return Tensor::FromBytes(parameter, array.bytes());
    }
    if (array.element_type() == ElementType::kF32) {
      ACCY_ASSIGN_OR_RETURN(Tensor converted, Tensor::Allocate(parameter));
      for (int64_t i = 0; i < array.element_count(); ++i) {
        converted.SetFromDouble(i, array.GetAsDouble(i));
      }
      return converted;
    }
  }
  const TensorType as_saved = array.type();
  return absl::InvalidArgumentError(StrCat(
      "array of dtype ", NpyDescr(as_saved.element_type()), " and shape ",
      ShapeTuple(as_saved.dims()), " (", as_saved.ToString(),
      ") does not match the parameter type ", parameter.ToString(),
      parameter.element_type() == ElementType::kBF16 ? " (bf16 reads from <f4 or <u2 bits)" : ""));
}

StatusOr<std::vector<Tensor>> ReadNpyInputs(std::span<const std::string> paths,
                                            std::span<const TensorType> types) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < paths.size() && i < types.size(); ++i) {
    ACCY_ASSIGN_OR_RETURN(Tensor array, ReadNpyFile(paths[i]));
    StatusOr<Tensor> input = ConvertNpyInput(array, types[i]);
    if (!input.ok()) {
      return absl::InvalidArgumentError(
          StrCat("input ", i, " (", paths[i], "): ", input.status().message()));
    }
    inputs.push_back(*std::move(input));
  }
  return inputs;
}

}  // namespace accy::tools
