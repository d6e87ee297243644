// Pretty op forms of the StableHLO parser (parser.h): the custom assembly formats of
// stablehlo/dialect/StablehloOps.td and AssemblyFormat.cpp (and func/check ops), each desugared
// into the generic shape of OpSyntax with the attribute names the generic form uses
// (`dims = [..]` of broadcast_in_dim becomes broadcast_dimensions, ...). This file holds the
// dispatch by op name and print form, the shared tails and the elementwise forms; the shape
// forms are in shape_syntax.cc, dot_general, reduce and top_k in reduction_syntax.cc.
#include <charconv>
#include <string>
#include <utility>

#include "src/stablehlo/op_syntax_internal.h"
#include "src/stablehlo/parser.h"
#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {

AttrValue IntArray(std::vector<int64_t> values, SourceLoc loc) {
  AttrValue value;
  value.kind = AttrValue::Kind::kIntArray;
  value.ints = std::move(values);
  value.loc = loc;
  return value;
}

AttrValue IntValue(int64_t number, SourceLoc loc) {
  AttrValue value;
  value.kind = AttrValue::Kind::kInt;
  value.int_value = number;
  value.loc = loc;
  return value;
}

namespace {

AttrValue EnumValue(std::string word, SourceLoc loc) {
  AttrValue value;
  value.kind = AttrValue::Kind::kEnum;
  value.text = std::move(word);
  value.loc = loc;
  return value;
}

}  // namespace

Status Parser::ParsePrettyOp(OpSyntax* op) {
  const std::string name(tok_.text);
  const SourceLoc loc = tok_.loc;
  Advance();
  op->name = name;
  if (name == "return" || name == "func.return") {
    op->name = "func.return";
    return ParseReturn(op);
  }
  if (name == "stablehlo.return") return ParseReturn(op);
  if (name == "call" || name == "func.call") {
    op->name = "func.call";
    return ParseCall(op);
  }
  if (name.starts_with("check.")) return ParseCheck(op);
  if (name.starts_with("interpreter.")) {
    // interpreter.print / probe / run_parallel belong to the StableHLO reference interpreter's
    // own I/O and test driver (its tests/interpret files), not to the StableHLO op set.
    return UnimplementedAt(loc, StrCat("op '", name, "' is not supported: it is the StableHLO "
                                       "reference interpreter's own I/O, not a StableHLO op"));
  }
  if (!name.starts_with("stablehlo.") && !name.starts_with("chlo.")) {
    return UnimplementedAt(loc, StrCat("op '", name, "' is not supported"));
  }
  // Syntax that is not an op of the table: the importer rewrites or flattens it.
  if (name.starts_with("stablehlo.")) {
    const std::string_view short_name = std::string_view(name).substr(10);
    if (short_name == "dot") return ParseDotGeneral(op);
    if (short_name == "custom_call") return ParseCustomCall(op);
    if (short_name == "optimization_barrier") return ParseOptimizationBarrier(op);
    if (short_name == "tuple") return ParseTuple(op);
    if (short_name == "get_tuple_element") return ParseGetTupleElement(op);
    if (short_name == "composite") return ParseComposite(op);
    if (short_name == "dynamic_iota") return ParseDynamicShapeOp(op, "iota_dimension");
    if (short_name == "get_dimension_size") return ParseDynamicShapeOp(op, "dimension");
    if (short_name == "dynamic_reshape" || short_name == "dynamic_pad" ||
        short_name == "dynamic_broadcast_in_dim") {
      return ParseDynamicShapeOp(op, "");
    }
    // real / imag: `operand attr-dict : type` or `: (operand type) -> result type`; the
    // importer rewrites them (real_imag.h).
    if (short_name == "real" || short_name == "imag") return ParseSameTypeOp(op);
  }
  StatusOr<OpKind> kind = ParseQualifiedOpKind(name);
  if (!kind.ok()) return UnimplementedAt(loc, StrCat("op '", name, "' is not supported"));
  return (this->*PrettyFormParser(*kind))(op);
}

Parser::PrettyParse Parser::PrettyFormParser(OpKind kind) {
  // One parser per print form of the op table (ModulePrinter::Print<form>, src/ir/printer.cc).
  constexpr PrettyParse kSameType = &Parser::ParseSameTypeOp;
  constexpr PrettyParse kFunctional = &Parser::ParseSameTypeOp;
  constexpr PrettyParse kChlo = &Parser::ParseSameTypeOp;  // also the arrow form
  constexpr PrettyParse kConstant = &Parser::ParseConstant;
  constexpr PrettyParse kCompare = &Parser::ParseCompare;
  constexpr PrettyParse kSelect = &Parser::ParseSelect;
  constexpr PrettyParse kBroadcastInDim = &Parser::ParseBroadcastInDim;
  constexpr PrettyParse kTranspose = &Parser::ParseTranspose;
  constexpr PrettyParse kReverse = &Parser::ParseReverse;
  constexpr PrettyParse kSlice = &Parser::ParseSlice;
  constexpr PrettyParse kPad = &Parser::ParsePad;
  constexpr PrettyParse kConcatenate = &Parser::ParseConcatenate;
  constexpr PrettyParse kIota = &Parser::ParseIota;
  constexpr PrettyParse kDynamicSlice = &Parser::ParseDynamicSlice;
  constexpr PrettyParse kDotGeneral = &Parser::ParseDotGeneral;
  constexpr PrettyParse kReduce = &Parser::ParseReduce;
  constexpr PrettyParse kConvolution = &Parser::ParseConvolution;
  constexpr PrettyParse kWhile = &Parser::ParseWhile;
  constexpr PrettyParse kReducePrecision = &Parser::ParseReducePrecision;
  constexpr PrettyParse kRngBitGenerator = &Parser::ParseRngBitGenerator;
  constexpr PrettyParse kTopK = &Parser::ParseTopK;
  constexpr PrettyParse kReturn = &Parser::ParseReturn;
  constexpr PrettyParse kCollective = &Parser::ParseCollective;
  // Generic form only (StableHLO has no assembly format for them).
  constexpr PrettyParse kGather = &Parser::ParseGenericOnly;
  constexpr PrettyParse kScatter = &Parser::ParseGenericOnly;
  constexpr PrettyParse kSort = &Parser::ParseGenericOnly;
  constexpr PrettyParse kWindow = &Parser::ParseGenericOnly;
  constexpr PrettyParse kCase = &Parser::ParseGenericOnly;
  constexpr PrettyParse kBatchNorm = &Parser::ParseGenericOnly;
  constexpr PrettyParse kTriangularSolve = &Parser::ParseGenericOnly;
  constexpr PrettyParse kCumsum = &Parser::ParseCustomCallOnly;  // accy's own op
  constexpr PrettyParse kLapack = &Parser::ParseCustomCallOnly;  // accy's own op
  constexpr PrettyParse kKernelCall = &Parser::ParseCustomCallOnly;  // accy's own op
  static constexpr PrettyParse kParsers[] = {
#define ACCY_OP(kind, name, category, operands, results, classes, regions, pure, commutative, \
                work, rule, evaluate, print)                                                  \
  k##print,
#include "accy/ops.def"
#undef ACCY_OP
  };
  static_assert(std::size(kParsers) == kNumOpKinds, "one pretty-form parser per op table row");
  return kParsers[static_cast<size_t>(kind)];
}

Status Parser::ParseCollective(OpSyntax* op) {
  if (op->name != "stablehlo.replica_id" && op->name != "stablehlo.partition_id") {
    return ParseGenericOnly(op);
  }
  // `stablehlo.replica_id attr-dict : tensor<ui32>` (no operands).
  ACCY_RETURN_IF_ERROR(ParseFunctionalTail(op));
  if (!op->operand_types.has_value()) op->operand_types = std::vector<TensorType>{};
  return absl::OkStatus();
}

Status Parser::ParseGenericOnly(OpSyntax* op) {
  return UnimplementedAt(op->loc, StrCat("op '", op->name, "' is not supported in pretty form: "
                                         "write it in the generic form (\"", op->name,
                                         "\"(operands) ... : functional type), as StableHLO "
                                         "prints it"));
}

Status Parser::ParseCustomCallOnly(OpSyntax* op) {
  return UnimplementedAt(op->loc, StrCat("op '", op->name, "' is not supported: it is accy's own "
                                         "op, written (and printed) as a stablehlo.custom_call"));
}

Status Parser::ParseFunctionalTail(OpSyntax* op) {
  ACCY_RETURN_IF_ERROR(ParseOptionalAttributeDict(&op->attributes));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, StrCat("':' before the type of ", op->name)));
  return ParseOpTypes(&op->operand_types, &op->result_types);
}

Status Parser::ParseSameTypeOp(OpSyntax* op) {
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/true));
  const SourceLoc type_loc = tok_.loc;
  ACCY_RETURN_IF_ERROR(ParseFunctionalTail(op));
  if (op->operand_types.has_value()) return absl::OkStatus();
  if (op->result_types.size() != 1) {
    return ErrorAt(type_loc, StrCat("expected one type or a function type for ", op->name,
                                    ", found ", op->result_types.size(), " types"));
  }
  // SameOperandsAndResultType: the one type is every operand's and the result's.
  op->operand_types = std::vector<TensorType>(op->operands.size(), op->result_types[0]);
  return absl::OkStatus();
}

// `%x, format = e5m10 attr-dict : type` (stablehlo's ExponentMantissa directive): the format
// word becomes the generic form's exponent_bits and mantissa_bits.
Status Parser::ParseReducePrecision(OpSyntax* op) {
  ValueRef operand;
  ACCY_RETURN_IF_ERROR(ParseValueRef(&operand));
  op->operands.push_back(std::move(operand));
  if (!Consume(TokenKind::kComma) || !Is(TokenKind::kBareId) || tok_.text != "format") {
    return ErrorExpected("'format = e<exponent bits>m<mantissa bits>'");
  }
  Advance();
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after format"));
  const SourceLoc format_loc = tok_.loc;
  const std::string word = Is(TokenKind::kBareId) ? std::string(tok_.text) : std::string();
  int64_t exponent_bits = 0;
  int64_t mantissa_bits = 0;
  const size_t m = word.find('m');
  auto digits = [](std::string_view text, int64_t* out) {
    if (text.empty() || text.size() > 9) return false;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), *out);
    return result.ec == std::errc() && result.ptr == text.data() + text.size();
  };
  if (word.size() < 4 || word[0] != 'e' || m == std::string::npos ||
      !digits(std::string_view(word).substr(1, m - 1), &exponent_bits) ||
      !digits(std::string_view(word).substr(m + 1), &mantissa_bits)) {
    return ErrorExpected("a format e<exponent bits>m<mantissa bits> such as e5m10");
  }
  Advance();
  op->attributes.push_back({"exponent_bits", IntValue(exponent_bits, format_loc)});
  op->attributes.push_back({"mantissa_bits", IntValue(mantissa_bits, format_loc)});
  const SourceLoc type_loc = tok_.loc;
  ACCY_RETURN_IF_ERROR(ParseFunctionalTail(op));
  if (op->operand_types.has_value()) return absl::OkStatus();
  if (op->result_types.size() != 1) {
    return ErrorAt(type_loc, StrCat("expected one type for ", op->name, ", found ",
                                    op->result_types.size(), " types"));
  }
  op->operand_types = std::vector<TensorType>(op->operands.size(), op->result_types[0]);
  return absl::OkStatus();
}

Status Parser::ParseRngBitGenerator(OpSyntax* op) {
  ValueRef operand;
  ACCY_RETURN_IF_ERROR(ParseValueRef(&operand));
  op->operands.push_back(std::move(operand));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' after the initial state"));
  ACCY_RETURN_IF_ERROR(ExpectKeyword("algorithm"));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after algorithm"));
  if (Is(TokenKind::kHashId)) {  // `#stablehlo<rng_algorithm PHILOX>` reads the same
    ACCY_ASSIGN_OR_RETURN(AttrValue algorithm, ParseAttribute());
    op->attributes.push_back({"rng_algorithm", std::move(algorithm)});
  } else {
    if (!Is(TokenKind::kBareId)) return ErrorExpected("an algorithm (DEFAULT, THREE_FRY, PHILOX)");
    op->attributes.push_back({"rng_algorithm", EnumValue(std::string(tok_.text), tok_.loc)});
    Advance();
  }
  return ParseFunctionalTail(op);
}

Status Parser::ParseCompare(OpSyntax* op) {
  if (Is(TokenKind::kHashId)) {
    ACCY_ASSIGN_OR_RETURN(AttrValue direction, ParseAttribute());
    op->attributes.push_back({"comparison_direction", std::move(direction)});
  } else {
    if (!Is(TokenKind::kBareId)) return ErrorExpected("a comparison direction (EQ, LT, ...)");
    op->attributes.push_back({"comparison_direction", EnumValue(std::string(tok_.text), tok_.loc)});
    Advance();
  }
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' after the comparison direction"));
  bool trailing_comma = false;
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/true, &trailing_comma));
  if (trailing_comma) {
    if (Is(TokenKind::kHashId)) {
      ACCY_ASSIGN_OR_RETURN(AttrValue type, ParseAttribute());
      op->attributes.push_back({"compare_type", std::move(type)});
    } else {
      if (!Is(TokenKind::kBareId)) return ErrorExpected("a comparison type (FLOAT, SIGNED, ...)");
      op->attributes.push_back({"compare_type", EnumValue(std::string(tok_.text), tok_.loc)});
      Advance();
    }
  }
  return ParseFunctionalTail(op);
}

Status Parser::ParseSelect(OpSyntax* op) {
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/true));
  const SourceLoc type_loc = tok_.loc;
  ACCY_RETURN_IF_ERROR(ParseFunctionalTail(op));
  if (op->operand_types.has_value()) return absl::OkStatus();
  if (op->result_types.size() != 2) {
    return ErrorAt(type_loc, "expected a function type or two types (pred, result) for select");
  }
  // `pred_type, result_type`: both branches have the result's type.
  const TensorType result = op->result_types[1];
  op->operand_types = std::vector<TensorType>{op->result_types[0], result, result};
  op->result_types = {result};
  return absl::OkStatus();
}

Status Parser::ParseConstant(OpSyntax* op) {
  ACCY_RETURN_IF_ERROR(ParseOptionalAttributeDict(&op->attributes));
  if (!IsKeyword("dense")) return ErrorExpected("dense<...> after stablehlo.constant");
  const SourceLoc value_loc = tok_.loc;
  ACCY_ASSIGN_OR_RETURN(AttrValue value, ParseAttribute());
  if (value.index_elements) {
    return UnimplementedAt(value_loc, "a constant of index elements is not a StableHLO value "
                                      "(index is accepted only in attributes)");
  }
  op->result_types = {value.splat_type.value_or(value.dense->type)};
  op->operand_types = std::vector<TensorType>{};
  op->attributes.push_back({"value", std::move(value)});
  return absl::OkStatus();
}

}  // namespace accy::stablehlo_internal
