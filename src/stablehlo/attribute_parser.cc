// Attribute values of the StableHLO parser (parser.h): MLIR's builtin attributes (integers,
// floats, strings, symbols, lists, dictionaries, array<i64: ...>, dense<...>) and the StableHLO
// dialect's `#stablehlo<enum VALUE>` and `#stablehlo.struct<key = value, ...>` forms, and
// `#stablehlo.conv<...>` (convolution_syntax.cc). Attributes of other dialects are skipped token
// by token as opaque values.
#include <charconv>
#include <limits>

#include "src/stablehlo/parser.h"
#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {
namespace {

bool IsHexDigitChar(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

StatusOr<int64_t> Parser::ParseInteger(std::string_view what) {
  const SourceLoc loc = tok_.loc;
  const bool negative = Consume(TokenKind::kMinus);
  if (!Is(TokenKind::kInteger)) return ErrorExpected(what);
  const std::string_view text = tok_.text;
  const bool hex = text.size() > 2 && text[1] == 'x';
  uint64_t magnitude = 0;
  const char* begin = text.data() + (hex ? 2 : 0);
  const auto result = std::from_chars(begin, text.data() + text.size(), magnitude, hex ? 16 : 10);
  const uint64_t limit = uint64_t{std::numeric_limits<int64_t>::max()} + (negative ? 1 : 0);
  if (result.ec != std::errc() || magnitude > limit) {
    return ErrorAt(loc, StrCat("integer ", negative ? "-" : "", text, " does not fit 64 bits"));
  }
  Advance();
  return negative ? static_cast<int64_t>(~magnitude + 1) : static_cast<int64_t>(magnitude);
}

StatusOr<std::vector<int64_t>> Parser::ParseIntegerList() {
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'[' opening an integer list"));
  std::vector<int64_t> values;
  if (Consume(TokenKind::kRSquare)) return values;
  while (true) {
    ACCY_ASSIGN_OR_RETURN(int64_t value, ParseInteger("an integer"));
    values.push_back(value);
    if (Consume(TokenKind::kComma)) continue;
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "',' or ']' in an integer list"));
    return values;
  }
}

Status Parser::ParseOptionalAttributeDict(std::vector<NamedAttr>* attributes) {
  if (!Is(TokenKind::kLBrace)) return absl::OkStatus();
  return ParseAttributeDict(attributes);
}

Status Parser::ParseAttributeDict(std::vector<NamedAttr>* attributes) {
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' opening an attribute dictionary"));
  ACCY_RETURN_IF_ERROR(EnterNesting());
  NestingExit exit{&depth_};
  if (Consume(TokenKind::kRBrace)) return absl::OkStatus();
  while (true) {
    NamedAttr attribute;
    if (Is(TokenKind::kBareId)) {
      attribute.name = std::string(tok_.text);
    } else if (Is(TokenKind::kString)) {
      attribute.name = tok_.value;
    } else {
      return ErrorExpected("an attribute name");
    }
    attribute.value.loc = tok_.loc;
    Advance();
    if (Consume(TokenKind::kEqual)) {
      ACCY_ASSIGN_OR_RETURN(attribute.value, ParseAttribute());
    }
    attributes->push_back(std::move(attribute));
    if (Consume(TokenKind::kComma)) continue;
    return Expect(TokenKind::kRBrace, "',' or '}' in an attribute dictionary");
  }
}

StatusOr<AttrValue> Parser::ParseAttribute() {
  ACCY_RETURN_IF_ERROR(EnterNesting());
  NestingExit exit{&depth_};
  AttrValue value;
  value.loc = tok_.loc;
  switch (tok_.kind) {
    case TokenKind::kBareId: {
      const std::string word(tok_.text);
      if (word == "true" || word == "false") {
        value.kind = AttrValue::Kind::kBool;
        value.bool_value = word == "true";
        Advance();
        return value;
      }
      if (word == "dense") return ParseDense();
      if (word == "array") return ParseArrayAttribute();
      if (word == "dense_resource" || word == "sparse") {
        return UnimplementedAt(value.loc, StrCat(word, "<...> attributes are not supported"));
      }
      if (word == "tensor") {
        ACCY_RETURN_IF_ERROR(ParseType().status());
        value.kind = AttrValue::Kind::kOpaque;
        value.text = "type";
        return value;
      }
      // A bare word: an enum value (`DEFAULT` in a precision list) or a scalar type (`f32`).
      value.kind = AttrValue::Kind::kEnum;
      value.text = word;
      Advance();
      return value;
    }
    case TokenKind::kMinus:
    case TokenKind::kInteger:
    case TokenKind::kFloat: {
      const bool negative = Is(TokenKind::kMinus);
      if (negative) Advance();
      if (Is(TokenKind::kFloat)) {
        value.kind = AttrValue::Kind::kFloat;
        double magnitude = 0;
        const auto result =
            std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), magnitude);
        if (result.ec != std::errc()) return ErrorAt(tok_.loc, "float literal out of range");
        value.float_value = negative ? -magnitude : magnitude;
        Advance();
      } else {
        if (!Is(TokenKind::kInteger)) return ErrorExpected("a number after '-'");
        ACCY_ASSIGN_OR_RETURN(int64_t magnitude, ParseInteger("an integer"));
        value.int_value = negative ? -magnitude : magnitude;
        value.kind = AttrValue::Kind::kInt;
      }
      if (Consume(TokenKind::kColon)) {  // `: i64`, `: f32`, `: index`
        if (!Is(TokenKind::kBareId)) return ErrorExpected("a scalar type after ':'");
        Advance();
      }
      return value;
    }
    case TokenKind::kString:
      value.kind = AttrValue::Kind::kString;
      value.text = tok_.value;
      Advance();
      return value;
    case TokenKind::kAtId:
      value.kind = AttrValue::Kind::kSymbol;
      value.text = tok_.value;
      Advance();
      return value;
    case TokenKind::kLSquare:
      value.kind = AttrValue::Kind::kList;
      Advance();
      if (Consume(TokenKind::kRSquare)) return value;
      while (true) {
        ACCY_ASSIGN_OR_RETURN(AttrValue item, ParseAttribute());
        value.items.push_back(std::move(item));
        if (Consume(TokenKind::kComma)) continue;
        ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "',' or ']' in a list"));
        return value;
      }
    case TokenKind::kLBrace: {
      value.kind = AttrValue::Kind::kDict;
      std::vector<NamedAttr> fields;
      ACCY_RETURN_IF_ERROR(ParseAttributeDict(&fields));
      for (NamedAttr& field : fields) {
        value.keys.push_back(std::move(field.name));
        value.items.push_back(std::move(field.value));
      }
      return value;
    }
    case TokenKind::kHashId:
      return ParseHashAttribute();
    case TokenKind::kLParen: {  // a function type used as an attribute
      std::vector<TensorType> inputs;
      std::vector<TensorType> results;
      ACCY_RETURN_IF_ERROR(ParseFunctionType(&inputs, &results));
      value.kind = AttrValue::Kind::kOpaque;
      value.text = "type";
      return value;
    }
    default:
      return ErrorExpected("an attribute value");
  }
}

StatusOr<AttrValue> Parser::ParseHashAttribute() {
  AttrValue value;
  value.loc = tok_.loc;
  const std::string name = tok_.value;
  Advance();
  if (!Consume(TokenKind::kLess)) {
    auto alias = aliases_.find(name);
    if (alias == aliases_.end()) {
      return ErrorAt(value.loc, StrCat("undefined attribute alias #", name));
    }
    return alias->second;
  }
  value.text = name;
  if (name == "stablehlo.conv") {  // ConvDimensionNumbers has a syntax of its own
    ACCY_ASSIGN_OR_RETURN(AttrValue numbers, ParseConvDimensionNumbers());
    numbers.loc = value.loc;
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>' closing #stablehlo.conv<...>"));
    return numbers;
  }
  if (Consume(TokenKind::kGreater)) {
    value.kind = AttrValue::Kind::kStruct;
    return value;
  }
  if (!Is(TokenKind::kBareId)) {
    ACCY_RETURN_IF_ERROR(SkipBalancedAngles());
    value.kind = AttrValue::Kind::kOpaque;
    return value;
  }
  std::string word(tok_.text);
  Advance();
  if (name.find('.') == std::string::npos && Is(TokenKind::kBareId)) {
    // `#stablehlo<comparison_direction LT>`: the enum's name, then its value.
    value.kind = AttrValue::Kind::kEnum;
    value.text = std::string(tok_.text);
    Advance();
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>' closing an enum attribute"));
    return value;
  }
  if (Consume(TokenKind::kGreater)) {  // `#stablehlo.result_accuracy_mode<DEFAULT>`
    value.kind = AttrValue::Kind::kEnum;
    value.text = std::move(word);
    return value;
  }
  if (!Is(TokenKind::kEqual)) {
    ACCY_RETURN_IF_ERROR(SkipBalancedAngles());
    value.kind = AttrValue::Kind::kOpaque;
    return value;
  }
  value.kind = AttrValue::Kind::kStruct;
  while (true) {
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after a field name"));
    ACCY_ASSIGN_OR_RETURN(AttrValue field, ParseAttribute());
    value.keys.push_back(std::move(word));
    value.items.push_back(std::move(field));
    if (Consume(TokenKind::kGreater)) return value;
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' or '>' in a struct attribute"));
    if (!Is(TokenKind::kBareId)) return ErrorExpected("a field name");
    word = std::string(tok_.text);
    Advance();
  }
}

Status Parser::SkipBalancedAngles() {
  int depth = 1;
  while (true) {
    if (Is(TokenKind::kEof) || Is(TokenKind::kError)) return ErrorExpected("'>'");
    if (Is(TokenKind::kLess)) ++depth;
    if (Is(TokenKind::kGreater) && --depth == 0) {
      Advance();
      return absl::OkStatus();
    }
    Advance();
  }
}

StatusOr<AttrValue> Parser::ParseArrayAttribute() {
  AttrValue value;
  value.loc = tok_.loc;
  value.kind = AttrValue::Kind::kIntArray;
  Advance();  // array
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLess, "'<' after array"));
  if (!Is(TokenKind::kBareId)) return ErrorExpected("an element type in array<...>");
  Advance();
  if (Consume(TokenKind::kGreater)) return value;
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' or '>' in array<...>"));
  while (true) {
    if (IsKeyword("true") || IsKeyword("false")) {
      value.ints.push_back(IsKeyword("true") ? 1 : 0);
      Advance();
    } else {
      ACCY_ASSIGN_OR_RETURN(int64_t element, ParseInteger("an integer in array<...>"));
      value.ints.push_back(element);
    }
    if (Consume(TokenKind::kComma)) continue;
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "',' or '>' in array<...>"));
    return value;
  }
}

StatusOr<AttrValue> Parser::ParseDense() {
  AttrValue value;
  value.loc = tok_.loc;
  value.kind = AttrValue::Kind::kDense;
  Advance();  // dense
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLess, "'<' after dense"));
  DenseLiteral literal;
  literal.loc = tok_.loc;
  if (Is(TokenKind::kString)) {
    const std::string& text = tok_.value;
    if (text.size() < 2 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X') ||
        text.size() % 2 != 0) {
      return ErrorExpected("a hex payload \"0x...\" with an even number of digits");
    }
    for (size_t i = 2; i < text.size(); i += 2) {
      if (!IsHexDigitChar(text[i]) || !IsHexDigitChar(text[i + 1])) {
        return ErrorAt(literal.loc, "invalid hex digit in a dense payload");
      }
      literal.hex_bytes +=
          static_cast<char>(HexDigitValue(text[i]) * 16 + HexDigitValue(text[i + 1]));
    }
    literal.kind = DenseLiteral::Kind::kHex;
    Advance();
  } else if (!Is(TokenKind::kGreater)) {
    ACCY_RETURN_IF_ERROR(ParseDenseLiteral(&literal));
  }
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>' closing dense<"));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' and the tensor type after dense<...>"));
  index_as_i64_ = true;
  read_index_ = false;
  StatusOr<TensorType> parsed = ParseType();
  index_as_i64_ = false;
  value.index_elements = read_index_;
  ACCY_ASSIGN_OR_RETURN(TensorType type, std::move(parsed));
  ACCY_ASSIGN_OR_RETURN(std::optional<DenseElements> splat,
                        DecodeLargeSplat(literal, type, budget_));
  if (splat.has_value()) {
    value.dense = std::make_shared<const DenseElements>(*std::move(splat));
    value.splat_type = type;
    return value;
  }
  ACCY_ASSIGN_OR_RETURN(DenseElements elements, DecodeDenseLiteral(literal, type, budget_));
  value.dense = std::make_shared<const DenseElements>(std::move(elements));
  return value;
}

Status Parser::ParseDenseLiteral(DenseLiteral* literal) {
  ACCY_RETURN_IF_ERROR(EnterNesting());
  NestingExit exit{&depth_};
  literal->loc = tok_.loc;
  if (Consume(TokenKind::kLSquare)) {
    literal->kind = DenseLiteral::Kind::kList;
    if (Consume(TokenKind::kRSquare)) return absl::OkStatus();
    while (true) {
      literal->items.emplace_back();
      ACCY_RETURN_IF_ERROR(ParseDenseLiteral(&literal->items.back()));
      if (Consume(TokenKind::kComma)) continue;
      return Expect(TokenKind::kRSquare, "',' or ']' in a dense list");
    }
  }
  literal->kind = DenseLiteral::Kind::kElement;
  if (Consume(TokenKind::kLParen)) {  // complex: (re, im)
    DenseElementSyntax part;
    ACCY_RETURN_IF_ERROR(ParseDenseElement(&part));
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' in a complex element"));
    ACCY_RETURN_IF_ERROR(ParseDenseElement(&part));
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' closing a complex element"));
    literal->element.kind = DenseElementSyntax::Kind::kComplex;
    literal->element.loc = literal->loc;
    return absl::OkStatus();
  }
  return ParseDenseElement(&literal->element);
}

Status Parser::ParseDenseElement(DenseElementSyntax* element) {
  using Kind = DenseElementSyntax::Kind;
  element->loc = tok_.loc;
  element->negative = Consume(TokenKind::kMinus);
  if (!element->negative) Consume(TokenKind::kPlus);
  if (Is(TokenKind::kInteger) || Is(TokenKind::kFloat)) {
    element->kind = Is(TokenKind::kInteger) ? Kind::kInteger : Kind::kFloat;
    element->text = std::string(tok_.text);
    Advance();
    return absl::OkStatus();
  }
  if (Is(TokenKind::kBareId)) {
    const std::string_view word = tok_.text;
    if (!element->negative && (word == "true" || word == "false")) {
      element->kind = Kind::kBool;
      element->bool_value = word == "true";
      Advance();
      return absl::OkStatus();
    }
    if (word == "inf" || word == "Inf" || word == "INF" || word == "infinity") {
      element->kind = Kind::kInf;
      Advance();
      return absl::OkStatus();
    }
    if (word == "nan" || word == "NaN" || word == "NAN") {
      element->kind = Kind::kNan;
      Advance();
      return absl::OkStatus();
    }
  }
  return ErrorExpected("a dense element (number, true, false, inf or nan)");
}

}  // namespace accy::stablehlo_internal
