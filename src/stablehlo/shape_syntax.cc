// Pretty forms of the StableHLO parser (parser.h) for the shape ops: broadcast_in_dim, transpose
// and reverse (`dims = [..]`), slice, pad, concatenate, iota, dynamic_slice and the dynamic
// shape ops, desugared into the generic shape of OpSyntax as op_syntax.cc does.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/stablehlo/op_syntax_internal.h"
#include "src/stablehlo/parser.h"
#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {

Status Parser::ParseBroadcastInDim(OpSyntax* op) {
  return ParseDimsOp(op, "dims", "broadcast_dimensions");
}
Status Parser::ParseTranspose(OpSyntax* op) { return ParseDimsOp(op, "dims", "permutation"); }
Status Parser::ParseReverse(OpSyntax* op) { return ParseDimsOp(op, "dims", "dimensions"); }

Status Parser::ParseDimsOp(OpSyntax* op, std::string_view keyword, std::string_view attribute) {
  op->operands.emplace_back();
  ACCY_RETURN_IF_ERROR(ParseValueRef(&op->operands.back()));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kComma, StrCat("',' before ", keyword)));
  const SourceLoc loc = tok_.loc;
  ACCY_RETURN_IF_ERROR(ExpectKeyword(keyword));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, StrCat("'=' after ", keyword)));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ParseIntegerList());
  op->attributes.push_back({std::string(attribute), IntArray(std::move(dims), loc)});
  ACCY_RETURN_IF_ERROR(ParseFunctionalTail(op));
  if (!op->operand_types.has_value() && op->result_types.size() == 1) {
    op->operand_types = op->result_types;  // reverse's SameOperandsAndResultType
  }
  return absl::OkStatus();
}

Status Parser::ParseSlice(OpSyntax* op) {
  op->operands.emplace_back();
  ACCY_RETURN_IF_ERROR(ParseValueRef(&op->operands.back()));
  const SourceLoc loc = tok_.loc;
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'[' opening the slice ranges"));
  std::vector<int64_t> start;
  std::vector<int64_t> limit;
  std::vector<int64_t> strides;
  if (!Consume(TokenKind::kRSquare)) {
    while (true) {
      ACCY_ASSIGN_OR_RETURN(int64_t first, ParseInteger("a slice start"));
      ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' between slice start and limit"));
      ACCY_ASSIGN_OR_RETURN(int64_t last, ParseInteger("a slice limit"));
      int64_t stride = 1;
      if (Consume(TokenKind::kColon)) {
        ACCY_ASSIGN_OR_RETURN(stride, ParseInteger("a slice stride"));
      }
      start.push_back(first);
      limit.push_back(last);
      strides.push_back(stride);
      if (Consume(TokenKind::kComma)) continue;
      ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "',' or ']' in the slice ranges"));
      break;
    }
  }
  op->attributes.push_back({"start_indices", IntArray(std::move(start), loc)});
  op->attributes.push_back({"limit_indices", IntArray(std::move(limit), loc)});
  op->attributes.push_back({"strides", IntArray(std::move(strides), loc)});
  return ParseFunctionalTail(op);
}

Status Parser::ParsePad(OpSyntax* op) {
  bool trailing_comma = false;
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/true, &trailing_comma));
  if (!trailing_comma) return ErrorExpected("',' and low = [...]");
  const std::pair<std::string_view, std::string_view> parts[] = {
      {"low", "edge_padding_low"}, {"high", "edge_padding_high"}, {"interior", "interior_padding"}};
  bool first = true;
  for (const auto& [keyword, attribute] : parts) {
    if (!first) ACCY_RETURN_IF_ERROR(Expect(TokenKind::kComma, StrCat("',' before ", keyword)));
    first = false;
    const SourceLoc loc = tok_.loc;
    ACCY_RETURN_IF_ERROR(ExpectKeyword(keyword));
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, StrCat("'=' after ", keyword)));
    ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> values, ParseIntegerList());
    op->attributes.push_back({std::string(attribute), IntArray(std::move(values), loc)});
  }
  return ParseFunctionalTail(op);
}

Status Parser::ParseConcatenate(OpSyntax* op) {
  bool trailing_comma = false;
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/false, &trailing_comma));
  const SourceLoc loc = tok_.loc;
  ACCY_RETURN_IF_ERROR(ExpectKeyword("dim"));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after dim"));
  ACCY_ASSIGN_OR_RETURN(int64_t dimension, ParseInteger("the concatenate dimension"));
  op->attributes.push_back({"dimension", IntValue(dimension, loc)});
  return ParseFunctionalTail(op);
}

Status Parser::ParseIota(OpSyntax* op) {
  const SourceLoc loc = tok_.loc;
  ACCY_RETURN_IF_ERROR(ExpectKeyword("dim"));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after dim"));
  ACCY_ASSIGN_OR_RETURN(int64_t dimension, ParseInteger("the iota dimension"));
  op->attributes.push_back({"iota_dimension", IntValue(dimension, loc)});
  return ParseFunctionalTail(op);
}

Status Parser::ParseDynamicSlice(OpSyntax* op) {
  bool trailing_comma = false;
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/true, &trailing_comma));
  if (!trailing_comma) return ErrorExpected("',' and sizes = [...]");
  const SourceLoc loc = tok_.loc;
  ACCY_RETURN_IF_ERROR(ExpectKeyword("sizes"));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after sizes"));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ParseIntegerList());
  op->attributes.push_back({"slice_sizes", IntArray(std::move(sizes), loc)});
  return ParseFunctionalTail(op);
}

Status Parser::ParseDynamicShapeOp(OpSyntax* op, std::string_view dim_attribute) {
  bool trailing_comma = false;
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/true, &trailing_comma));
  if (trailing_comma) {
    const SourceLoc loc = tok_.loc;
    if (!dim_attribute.empty()) {
      ACCY_RETURN_IF_ERROR(ExpectKeyword("dim"));
      ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after dim"));
      ACCY_ASSIGN_OR_RETURN(int64_t dimension, ParseInteger(StrCat("the ", op->name, " dim")));
      op->attributes.push_back({std::string(dim_attribute), IntValue(dimension, loc)});
    } else {
      ACCY_RETURN_IF_ERROR(ExpectKeyword("dims"));
      ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after dims"));
      ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ParseIntegerList());
      op->attributes.push_back({"broadcast_dimensions", IntArray(std::move(dims), loc)});
      // dynamic_broadcast_in_dim's `, known_expanding_dimensions = [..]` and
      // `, known_nonexpanding_dimensions = [..]`.
      while (Consume(TokenKind::kComma)) {
        const SourceLoc field_loc = tok_.loc;
        std::string field;
        if (ConsumeKeyword("known_expanding_dimensions")) {
          field = "known_expanding_dimensions";
        } else if (ConsumeKeyword("known_nonexpanding_dimensions")) {
          field = "known_nonexpanding_dimensions";
        } else {
          return ErrorExpected("known_expanding_dimensions or known_nonexpanding_dimensions");
        }
        ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, StrCat("'=' after ", field)));
        ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> known, ParseIntegerList());
        op->attributes.push_back({std::move(field), IntArray(std::move(known), field_loc)});
      }
    }
  }
  return ParseFunctionalTail(op);
}

}  // namespace accy::stablehlo_internal
