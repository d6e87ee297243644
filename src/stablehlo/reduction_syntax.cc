// Pretty forms of the StableHLO parser (parser.h) for the ops that contract or reduce:
// dot_general and dot, reduce (its compact `applies` form and its region form) and chlo.top_k,
// desugared into the generic shape of OpSyntax as op_syntax.cc does.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/stablehlo/op_syntax_internal.h"
#include "src/stablehlo/parser.h"
#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {
namespace {

TensorType ScalarOf(const TensorType& type) { return *TensorType::Create(type.element_type(), {}); }

// Names the parser gives values the text does not name; '\x01' cannot occur in a text name.
std::string SyntheticName(std::string_view role, size_t index) {
  return StrCat("\x01", role, index);
}

}  // namespace

// dot_general: `%lhs, %rhs, [batching_dims = [..] x [..],] contracting_dims = [..] x [..]
// [, precision = [..]] [, algorithm = <...>]`; dot (deprecated): `%lhs, %rhs[, precision = [..]]`.
Status Parser::ParseDotGeneral(OpSyntax* op) {
  const bool is_dot = op->name == "stablehlo.dot";
  bool more = false;
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/true, &more));
  AttrValue numbers;
  numbers.kind = AttrValue::Kind::kStruct;
  numbers.text = "stablehlo.dot";
  numbers.loc = op->loc;
  const auto parse_pair = [&](std::string_view lhs, std::string_view rhs) -> Status {
    const SourceLoc loc = tok_.loc;
    Advance();  // the keyword
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
    ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> left, ParseIntegerList());
    ACCY_RETURN_IF_ERROR(ExpectKeyword("x"));
    ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> right, ParseIntegerList());
    numbers.keys.emplace_back(lhs);
    numbers.items.push_back(IntArray(std::move(left), loc));
    numbers.keys.emplace_back(rhs);
    numbers.items.push_back(IntArray(std::move(right), loc));
    return absl::OkStatus();
  };
  while (more) {
    more = false;
    if (!is_dot && IsKeyword("batching_dims")) {
      ACCY_RETURN_IF_ERROR(parse_pair("lhs_batching_dimensions", "rhs_batching_dimensions"));
    } else if (!is_dot && IsKeyword("contracting_dims")) {
      ACCY_RETURN_IF_ERROR(parse_pair("lhs_contracting_dimensions", "rhs_contracting_dimensions"));
    } else if (IsKeyword("precision")) {
      Advance();
      ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after precision"));
      ACCY_ASSIGN_OR_RETURN(AttrValue precision, ParseAttribute());
      op->attributes.push_back({"precision_config", std::move(precision)});
    } else if (IsKeyword("algorithm")) {
      // `algorithm = <lhs_precision_type = f32, ...>`: the fields of #stablehlo.dot_algorithm,
      // checked against the operand types by ConvertAttributes.
      AttrValue algorithm;
      algorithm.loc = tok_.loc;
      algorithm.kind = AttrValue::Kind::kStruct;
      algorithm.text = "stablehlo.dot_algorithm";
      Advance();
      ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after algorithm"));
      ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLess, "'<' opening the algorithm's fields"));
      while (!Consume(TokenKind::kGreater)) {
        if (!algorithm.keys.empty()) {
          ACCY_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' or '>' in the algorithm"));
        }
        if (!Is(TokenKind::kBareId)) return ErrorExpected("an algorithm field name");
        algorithm.keys.emplace_back(tok_.text);
        Advance();
        ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after an algorithm field name"));
        ACCY_ASSIGN_OR_RETURN(AttrValue field, ParseAttribute());
        algorithm.items.push_back(std::move(field));
      }
      op->attributes.push_back({"algorithm", std::move(algorithm)});
    } else {
      return ErrorExpected(is_dot ? "precision" : "batching_dims, contracting_dims or precision");
    }
    more = Consume(TokenKind::kComma);
  }
  if (!is_dot) op->attributes.push_back({"dot_dimension_numbers", std::move(numbers)});
  return ParseFunctionalTail(op);
}

Status Parser::ParseReduce(OpSyntax* op) {
  std::vector<ValueRef> inits;
  do {
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' opening a reduce input"));
    op->operands.emplace_back();
    ACCY_RETURN_IF_ERROR(ParseValueRef(&op->operands.back()));
    ACCY_RETURN_IF_ERROR(ExpectKeyword("init"));
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' after init"));
    inits.emplace_back();
    ACCY_RETURN_IF_ERROR(ParseValueRef(&inits.back()));
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' closing a reduce input"));
  } while (Consume(TokenKind::kComma));
  const size_t pairs = inits.size();
  for (ValueRef& init : inits) op->operands.push_back(std::move(init));

  std::string applies;
  SourceLoc applies_loc;
  if (ConsumeKeyword("applies")) {
    if (!Is(TokenKind::kBareId)) return ErrorExpected("the reducer op name after applies");
    applies = std::string(tok_.text);
    applies_loc = tok_.loc;
    Advance();
  }
  const SourceLoc dims_loc = tok_.loc;
  ACCY_RETURN_IF_ERROR(ExpectKeyword("across"));
  ACCY_RETURN_IF_ERROR(ExpectKeyword("dimensions"));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after dimensions"));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ParseIntegerList());
  op->attributes.push_back({"dimensions", IntArray(std::move(dims), dims_loc)});
  ACCY_RETURN_IF_ERROR(ParseOptionalAttributeDict(&op->attributes));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' before the reduce type"));
  std::vector<TensorType> inputs;
  ACCY_RETURN_IF_ERROR(ParseFunctionType(&inputs, &op->result_types));
  op->operand_types = inputs;
  RegionSyntax region;
  region.loc = applies_loc;
  if (!applies.empty()) {
    // The compact form: the body applies `applies` to (accumulator_i, input_i) and returns the
    // results (MLIR builds it for one input; several inputs pair up the same way).
    if (inputs.size() < pairs) return ErrorAt(applies_loc, "reduce type lists too few inputs");
    OpSyntax ret;
    ret.loc = applies_loc;
    ret.name = "stablehlo.return";
    for (const char* role : {"acc", "in"}) {
      for (size_t i = 0; i < pairs; ++i) {
        region.arg_names.push_back(SyntheticName(role, i));
        region.arg_types.push_back(ScalarOf(inputs[i]));
      }
    }
    for (size_t i = 0; i < pairs; ++i) {
      OpSyntax inner;
      inner.loc = applies_loc;
      inner.name = applies;
      inner.operands = {{SyntheticName("acc", i), 0, applies_loc},
                        {SyntheticName("in", i), 0, applies_loc}};
      inner.operand_types = std::vector<TensorType>(2, ScalarOf(inputs[i]));
      inner.result_types = {ScalarOf(inputs[i])};
      inner.result_groups = {{SyntheticName("result", i), 1}};
      region.ops.push_back(std::move(inner));
      ret.operands.push_back({SyntheticName("result", i), 0, applies_loc});
    }
    region.ops.push_back(std::move(ret));
    op->regions.push_back(std::move(region));
    return absl::OkStatus();
  }
  // The region form: ` reducer(%acc0: t, %in0: t) (%acc1: t, %in1: t) { ... }`; block
  // arguments are all accumulators, then all inputs.
  ACCY_RETURN_IF_ERROR(SkipLocation());
  ACCY_RETURN_IF_ERROR(ExpectKeyword("reducer"));
  std::vector<std::string> second_names;
  std::vector<TensorType> second_types;
  while (Consume(TokenKind::kLParen)) {
    std::string name;
    TensorType type;
    ACCY_RETURN_IF_ERROR(ParseArgument(&name, &type));
    ACCY_RETURN_IF_ERROR(SkipLocation());
    region.arg_names.push_back(std::move(name));
    region.arg_types.push_back(std::move(type));
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' between reducer arguments"));
    ACCY_RETURN_IF_ERROR(ParseArgument(&name, &type));
    ACCY_RETURN_IF_ERROR(SkipLocation());
    second_names.push_back(std::move(name));
    second_types.push_back(std::move(type));
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' closing reducer arguments"));
  }
  for (size_t i = 0; i < second_names.size(); ++i) {
    region.arg_names.push_back(std::move(second_names[i]));
    region.arg_types.push_back(std::move(second_types[i]));
  }
  ACCY_RETURN_IF_ERROR(ParseRegion(&region));
  op->regions.push_back(std::move(region));
  return absl::OkStatus();
}

Status Parser::ParseTopK(OpSyntax* op) {
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' after chlo.top_k"));
  op->operands.emplace_back();
  ACCY_RETURN_IF_ERROR(ParseValueRef(&op->operands.back()));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' before k"));
  const SourceLoc loc = tok_.loc;
  ACCY_RETURN_IF_ERROR(ExpectKeyword("k"));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after k"));
  ACCY_ASSIGN_OR_RETURN(int64_t k, ParseInteger("the top_k k"));
  op->attributes.push_back({"k", IntValue(k, loc)});
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' closing chlo.top_k"));
  ACCY_RETURN_IF_ERROR(ParseOptionalAttributeDict(&op->attributes));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' before the chlo.top_k type"));
  std::vector<TensorType> inputs;
  ACCY_ASSIGN_OR_RETURN(TensorType input, ParseType());
  inputs.push_back(std::move(input));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->' in the chlo.top_k type"));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' opening the chlo.top_k result types"));
  ACCY_RETURN_IF_ERROR(ParseTypeList(&op->result_types));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' closing the chlo.top_k result types"));
  op->operand_types = std::move(inputs);
  return absl::OkStatus();
}

}  // namespace accy::stablehlo_internal
