// Pretty forms of the StableHLO parser (parser.h) for the ops that loop, call, return and check:
// while, optimization_barrier, composite, custom_call, func.call, the returns and the check ops
// of the interpreter tests, desugared into the generic shape of OpSyntax as op_syntax.cc does
// for the others (stablehlo/dialect/StablehloOps.td and AssemblyFormat.cpp).
#include <string>
#include <utility>

#include "src/stablehlo/parser.h"
#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {

Status Parser::ParseWhile(OpSyntax* op) {
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' after while"));
  std::vector<std::string> iter_names;
  if (!Consume(TokenKind::kRParen)) {
    while (true) {
      if (!Is(TokenKind::kPercentId)) return ErrorExpected("an iteration argument (%name)");
      iter_names.push_back(tok_.value);
      Advance();
      ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after the iteration argument"));
      op->operands.emplace_back();
      ACCY_RETURN_IF_ERROR(ParseValueRef(&op->operands.back()));
      if (Consume(TokenKind::kComma)) continue;
      ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in the while operands"));
      break;
    }
  }
  std::vector<TensorType> types;
  if (!op->operands.empty()) {
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' before the while types"));
    ACCY_RETURN_IF_ERROR(ParseTypeList(&types));
  }
  if (ConsumeKeyword("attributes")) ACCY_RETURN_IF_ERROR(ParseAttributeDict(&op->attributes));
  op->operand_types = types;
  op->result_types = types;
  for (std::string_view keyword : {"cond", "do"}) {
    ACCY_RETURN_IF_ERROR(ExpectKeyword(keyword));
    RegionSyntax region;
    region.arg_names = iter_names;
    region.arg_types = types;
    ACCY_RETURN_IF_ERROR(ParseRegion(&region));
    op->regions.push_back(std::move(region));
  }
  return absl::OkStatus();
}

Status Parser::ParseOptimizationBarrier(OpSyntax* op) {
  // PairwiseOpType (stablehlo/dialect/AssemblyFormat.h): `()` when there are no operands.
  ACCY_RETURN_IF_ERROR(ParseOptionalAttributeDict(&op->attributes));
  if (Consume(TokenKind::kLParen)) {
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' after optimization_barrier's '('"));
    op->operand_types = std::vector<TensorType>{};
    return absl::OkStatus();
  }
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/true));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' before the optimization_barrier types"));
  std::vector<TensorType> types;
  ACCY_RETURN_IF_ERROR(ParseTypeList(&types));
  op->operand_types = types;
  op->result_types = std::move(types);
  return absl::OkStatus();
}

StatusOr<TypeTree> Parser::ParseTypeTree() {
  TypeTree tree;
  if (!IsKeyword("tuple")) {
    ACCY_ASSIGN_OR_RETURN(tree.tensor, ParseType());
    return tree;
  }
  tree.is_tuple = true;
  Advance();
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLess, "'<' after tuple"));
  ACCY_RETURN_IF_ERROR(EnterNesting());
  NestingExit exit{&depth_};
  if (Consume(TokenKind::kGreater)) return tree;  // tuple<>
  while (true) {
    ACCY_ASSIGN_OR_RETURN(TypeTree element, ParseTypeTree());
    tree.elements.push_back(std::move(element));
    if (Consume(TokenKind::kComma)) continue;
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "',' or '>' in the tuple type"));
    return tree;
  }
}

Status Parser::ParseTuple(OpSyntax* op) {
  // TupleOpType (stablehlo/dialect/AssemblyFormat.h): only the result type is printed.
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/false));
  ACCY_RETURN_IF_ERROR(ParseOptionalAttributeDict(&op->attributes));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' before the type of stablehlo.tuple"));
  const SourceLoc type_loc = tok_.loc;
  ACCY_ASSIGN_OR_RETURN(TypeTree type, ParseTypeTree());
  if (!type.is_tuple) {
    return ErrorAt(type_loc, StrCat("stablehlo.tuple's type is ", type.ToString(),
                                    ", not a tuple type"));
  }
  op->tuple_types.push_back(std::move(type));
  return absl::OkStatus();
}

Status Parser::ParseGetTupleElement(OpSyntax* op) {
  ValueRef operand;
  ACCY_RETURN_IF_ERROR(ParseValueRef(&operand));
  op->operands.push_back(std::move(operand));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'[' before get_tuple_element's index"));
  AttrValue index;
  index.kind = AttrValue::Kind::kInt;
  index.loc = tok_.loc;
  ACCY_ASSIGN_OR_RETURN(index.int_value, ParseInteger("the tuple index"));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "']' after get_tuple_element's index"));
  op->attributes.push_back({"index", std::move(index)});
  ACCY_RETURN_IF_ERROR(ParseOptionalAttributeDict(&op->attributes));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' before the types of get_tuple_element"));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' before get_tuple_element's operand type"));
  ACCY_ASSIGN_OR_RETURN(TypeTree operand_type, ParseTypeTree());
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' after get_tuple_element's operand type"));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->' before get_tuple_element's result type"));
  ACCY_ASSIGN_OR_RETURN(TypeTree result_type, ParseTypeTree());
  if (!result_type.is_tuple) op->result_types.push_back(result_type.tensor);
  op->tuple_types.push_back(std::move(operand_type));
  op->tuple_types.push_back(std::move(result_type));
  return absl::OkStatus();
}

Status Parser::ParseComposite(OpSyntax* op) {
  if (!Is(TokenKind::kString)) return ErrorExpected("the composite's name (a string)");
  AttrValue name;
  name.kind = AttrValue::Kind::kString;
  name.text = tok_.value;
  name.loc = tok_.loc;
  op->attributes.push_back({"name", std::move(name)});
  Advance();
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/false));
  return ParseFunctionalTail(op);
}

Status Parser::ParseCustomCall(OpSyntax* op) {
  if (!Is(TokenKind::kAtId)) return ErrorExpected("a custom_call target (@name)");
  AttrValue target;
  target.kind = AttrValue::Kind::kString;
  target.text = tok_.value;
  target.loc = tok_.loc;
  op->attributes.push_back({"call_target_name", std::move(target)});
  Advance();
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' opening the custom_call operands"));
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/false));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' closing the custom_call operands"));
  return ParseFunctionalTail(op);
}

Status Parser::ParseCall(OpSyntax* op) {
  if (!Is(TokenKind::kAtId)) return ErrorExpected("a callee (@name)");
  AttrValue callee;
  callee.kind = AttrValue::Kind::kSymbol;
  callee.text = tok_.value;
  callee.loc = tok_.loc;
  op->attributes.push_back({"callee", std::move(callee)});
  Advance();
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' opening the call operands"));
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/false));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' closing the call operands"));
  ACCY_RETURN_IF_ERROR(ParseOptionalAttributeDict(&op->attributes));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' before the call type"));
  std::vector<TensorType> inputs;
  ACCY_RETURN_IF_ERROR(ParseFunctionType(&inputs, &op->result_types));
  op->operand_types = std::move(inputs);
  return absl::OkStatus();
}

Status Parser::ParseReturn(OpSyntax* op) {
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/false));
  ACCY_RETURN_IF_ERROR(ParseOptionalAttributeDict(&op->attributes));
  std::vector<TensorType> types;
  if (!op->operands.empty()) {
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' before the returned types"));
    ACCY_RETURN_IF_ERROR(ParseTypeList(&types));
  }
  op->operand_types = std::move(types);
  return absl::OkStatus();
}

// `check.expect_eq %a, %b [: t]`, `check.expect_eq_const %a, dense<...> : t`, with optional
// `, name = value` fields (tolerance) and an attribute dictionary.
Status Parser::ParseCheck(OpSyntax* op) {
  op->operands.emplace_back();
  ACCY_RETURN_IF_ERROR(ParseValueRef(&op->operands.back()));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' after the checked value"));
  if (Is(TokenKind::kPercentId)) {
    op->operands.emplace_back();
    ACCY_RETURN_IF_ERROR(ParseValueRef(&op->operands.back()));
  } else {
    ACCY_ASSIGN_OR_RETURN(AttrValue value, ParseAttribute());
    op->attributes.push_back({"value", std::move(value)});
  }
  while (Consume(TokenKind::kComma)) {
    if (!Is(TokenKind::kBareId)) return ErrorExpected("a check field (tolerance = ...)");
    std::string key(tok_.text);
    Advance();
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after a check field"));
    ACCY_ASSIGN_OR_RETURN(AttrValue value, ParseAttribute());
    op->attributes.push_back({std::move(key), std::move(value)});
  }
  ACCY_RETURN_IF_ERROR(ParseOptionalAttributeDict(&op->attributes));
  if (Consume(TokenKind::kColon)) {
    std::vector<TensorType> types;
    ACCY_RETURN_IF_ERROR(ParseTypeList(&types));
  }
  return absl::OkStatus();
}

}  // namespace accy::stablehlo_internal
