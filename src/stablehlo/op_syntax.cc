// Pretty op forms of the StableHLO parser (parser.h): the custom assembly formats of
// stablehlo/dialect/StablehloOps.td and AssemblyFormat.cpp (and func/check ops), each desugared
// into the generic shape of OpSyntax with the attribute names the generic form uses
// (`dims = [..]` of broadcast_in_dim becomes broadcast_dimensions, ...).
#include <charconv>
#include <string>
#include <utility>

#include "src/stablehlo/parser.h"
#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {
namespace {

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

AttrValue EnumValue(std::string word, SourceLoc loc) {
  AttrValue value;
  value.kind = AttrValue::Kind::kEnum;
  value.text = std::move(word);
  value.loc = loc;
  return value;
}

TensorType ScalarOf(const TensorType& type) {
  return *TensorType::Create(type.element_type(), {});
}

// Names the parser gives values the text does not name; '\x01' cannot occur in a text name.
std::string SyntheticName(std::string_view role, size_t index) {
  return StrCat("\x01", role, index);
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

Status Parser::ParseBroadcastInDim(OpSyntax* op) {
  return ParseDimsOp(op, "dims", "broadcast_dimensions");
}
Status Parser::ParseTranspose(OpSyntax* op) { return ParseDimsOp(op, "dims", "permutation"); }
Status Parser::ParseReverse(OpSyntax* op) { return ParseDimsOp(op, "dims", "dimensions"); }

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
