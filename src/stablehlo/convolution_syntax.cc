// convolution's StableHLO syntax (parser.h): the pretty form stablehlo's printer writes
// (`stablehlo.convolution(%lhs, %rhs) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
// window = {stride = [..], pad = [[..]], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]}
// {attr-dict} : functional-type`) and the ConvDimensionNumbers attribute of the generic form
// (`#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>` or `#stablehlo.conv<raw
// input_batch_dimension = 0, ...>`), each desugared into the generic attribute names
// (dimension_numbers as a struct of its nine fields, window_strides, padding as flattened
// (low, high) pairs, lhs_dilation, rhs_dilation, window_reversal as 0/1).
#include <string>
#include <utility>
#include <vector>

#include "src/stablehlo/parser.h"
#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {
namespace {

AttrValue IntArrayValue(std::vector<int64_t> values, SourceLoc loc) {
  AttrValue value;
  value.kind = AttrValue::Kind::kIntArray;
  value.ints = std::move(values);
  value.loc = loc;
  return value;
}

AttrValue IntField(int64_t number, SourceLoc loc) {
  AttrValue value;
  value.kind = AttrValue::Kind::kInt;
  value.int_value = number;
  value.loc = loc;
  return value;
}

}  // namespace

Status Parser::ParseConvLayout(char first, char second, std::string_view first_field,
                               std::string_view second_field, std::string_view spatial_field,
                               AttrValue* numbers) {
  const std::string first_letter(1, first), second_letter(1, second);
  const SourceLoc loc = tok_.loc;
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'[' opening a convolution dim layout"));
  int64_t first_dim = -1;
  int64_t second_dim = -1;
  std::vector<int64_t> spatial;  // spatial[s] = dim
  for (int64_t dim = 0;; ++dim) {
    const SourceLoc item_loc = tok_.loc;
    if (Is(TokenKind::kInteger)) {
      ACCY_ASSIGN_OR_RETURN(int64_t s, ParseInteger("a spatial dim number"));
      if (s < 0 || s > 64)
        return ErrorAt(item_loc, StrCat("spatial dim number ", s, " is out of range"));
      if (spatial.size() <= static_cast<size_t>(s)) spatial.resize(static_cast<size_t>(s) + 1, -1);
      if (spatial[static_cast<size_t>(s)] != -1) {
        return ErrorAt(item_loc,
                       StrCat("spatial dim ", s, " appears twice in a convolution dim layout"));
      }
      spatial[static_cast<size_t>(s)] = dim;
    } else if (IsKeyword(first_letter) || IsKeyword(second_letter)) {
      int64_t& slot = tok_.text[0] == first ? first_dim : second_dim;
      if (slot != -1) {
        return ErrorAt(item_loc,
                       StrCat("'", tok_.text, "' appears twice in a convolution dim layout"));
      }
      slot = dim;
      Advance();
    } else {
      return ErrorExpected(
          StrCat("'", first_letter, "', '", second_letter, "' or a spatial dim number"));
    }
    if (Consume(TokenKind::kComma)) continue;
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "',' or ']' in a convolution dim layout"));
    break;
  }
  if (first_dim == -1 || second_dim == -1) {
    return ErrorAt(loc, StrCat("a convolution dim layout needs one '", first_letter, "' and one '",
                               second_letter, "'"));
  }
  for (size_t s = 0; s < spatial.size(); ++s) {
    if (spatial[s] == -1) {
      return ErrorAt(loc, StrCat("spatial dim ", s, " is missing from a convolution dim layout"));
    }
  }
  numbers->keys.emplace_back(first_field);
  numbers->items.push_back(IntField(first_dim, loc));
  numbers->keys.emplace_back(second_field);
  numbers->items.push_back(IntField(second_dim, loc));
  numbers->keys.emplace_back(spatial_field);
  numbers->items.push_back(IntArrayValue(std::move(spatial), loc));
  return absl::OkStatus();
}

StatusOr<AttrValue> Parser::ParseConvDimensionNumbers() {
  AttrValue numbers;
  numbers.kind = AttrValue::Kind::kStruct;
  numbers.text = "stablehlo.conv";
  numbers.loc = tok_.loc;
  if (ConsumeKeyword("raw")) {
    // `raw field = value, ...` up to the closing '>' (which the caller consumes).
    while (true) {
      if (!Is(TokenKind::kBareId)) return ErrorExpected("a ConvDimensionNumbers field name");
      std::string key(tok_.text);
      Advance();
      ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after a field name"));
      ACCY_ASSIGN_OR_RETURN(AttrValue field, ParseAttribute());
      numbers.keys.push_back(std::move(key));
      numbers.items.push_back(std::move(field));
      if (!Consume(TokenKind::kComma)) return numbers;
    }
  }
  ACCY_RETURN_IF_ERROR(ParseConvLayout('b', 'f', "input_batch_dimension", "input_feature_dimension",
                                       "input_spatial_dimensions", &numbers));
  ACCY_RETURN_IF_ERROR(ExpectKeyword("x"));
  ACCY_RETURN_IF_ERROR(ParseConvLayout('i', 'o', "kernel_input_feature_dimension",
                                       "kernel_output_feature_dimension",
                                       "kernel_spatial_dimensions", &numbers));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->' before the output dim layout"));
  ACCY_RETURN_IF_ERROR(ParseConvLayout('b', 'f', "output_batch_dimension",
                                       "output_feature_dimension", "output_spatial_dimensions",
                                       &numbers));
  return numbers;
}

Status Parser::ParseConvWindow(OpSyntax* op) {
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' opening the convolution window"));
  if (Consume(TokenKind::kRBrace)) return absl::OkStatus();
  while (true) {
    const SourceLoc loc = tok_.loc;
    if (!Is(TokenKind::kBareId)) return ErrorExpected("a window entry (stride, pad, ...)");
    const std::string key(tok_.text);
    Advance();
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, StrCat("'=' after ", key)));
    if (key == "stride" || key == "lhs_dilate" || key == "rhs_dilate") {
      ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> values, ParseIntegerList());
      const std::string name = key == "stride"       ? "window_strides"
                               : key == "lhs_dilate" ? "lhs_dilation"
                                                     : "rhs_dilation";
      op->attributes.push_back({name, IntArrayValue(std::move(values), loc)});
    } else if (key == "pad") {
      // `[[low, high], ...]`, flattened to low0, high0, low1, high1, ...
      std::vector<int64_t> pairs;
      ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'[' opening the padding"));
      if (!Consume(TokenKind::kRSquare)) {
        while (true) {
          const SourceLoc pair_loc = tok_.loc;
          ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> pair, ParseIntegerList());
          if (pair.size() != 2) {
            return ErrorAt(
                pair_loc, StrCat("a padding entry is [low, high], found ", pair.size(), " values"));
          }
          pairs.insert(pairs.end(), pair.begin(), pair.end());
          if (Consume(TokenKind::kComma)) continue;
          ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "',' or ']' in the padding"));
          break;
        }
      }
      op->attributes.push_back({"padding", IntArrayValue(std::move(pairs), loc)});
    } else if (key == "reverse") {
      // `[true, false]` (today's printer) or `[1, 0]` (older text).
      std::vector<int64_t> flags;
      ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'[' opening the window reversal"));
      if (!Consume(TokenKind::kRSquare)) {
        while (true) {
          if (IsKeyword("true") || IsKeyword("false")) {
            flags.push_back(IsKeyword("true") ? 1 : 0);
            Advance();
          } else {
            const SourceLoc flag_loc = tok_.loc;
            ACCY_ASSIGN_OR_RETURN(int64_t flag, ParseInteger("true, false, 0 or 1"));
            if (flag != 0 && flag != 1) {
              return ErrorAt(flag_loc, StrCat("a window reversal entry is 0 or 1, found ", flag));
            }
            flags.push_back(flag);
          }
          if (Consume(TokenKind::kComma)) continue;
          ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "',' or ']' in the window reversal"));
          break;
        }
      }
      op->attributes.push_back({"window_reversal", IntArrayValue(std::move(flags), loc)});
    } else {
      return ErrorAt(loc, StrCat("unknown convolution window entry '", key,
                                 "' (expected stride, pad, lhs_dilate, rhs_dilate or reverse)"));
    }
    if (Consume(TokenKind::kComma)) continue;
    return Expect(TokenKind::kRBrace, "',' or '}' in the convolution window");
  }
}

Status Parser::ParseConvolution(OpSyntax* op) {
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' opening the convolution operands"));
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/true));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' closing the convolution operands"));
  ACCY_RETURN_IF_ERROR(ExpectKeyword("dim_numbers"));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after dim_numbers"));
  ACCY_ASSIGN_OR_RETURN(AttrValue numbers, ParseConvDimensionNumbers());
  op->attributes.push_back({"dimension_numbers", std::move(numbers)});
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' after the convolution dim numbers"));
  ACCY_RETURN_IF_ERROR(ExpectKeyword("window"));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after window"));
  ACCY_RETURN_IF_ERROR(ParseConvWindow(op));
  return ParseFunctionalTail(op);
}

}  // namespace accy::stablehlo_internal
