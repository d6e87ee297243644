// The StableHLO parser's structure (parser.h): modules, functions, regions, generic ops, value
// uses and types. Grammar after MLIR's LangRef (generic operation form, regions, builtin types).
#include "src/stablehlo/parser.h"

#include <charconv>
#include <utility>

#include "accy/stablehlo.h"
#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool IsDigitChar(char c) { return c >= '0' && c <= '9'; }

// i4, ui2, si32, f8E4M3FN, f4E2M1FN, tf32, index: MLIR types that accy does not have.
bool IsKnownUnsupportedElementType(std::string_view name) {
  if (name == "tf32" || name == "index" || name.starts_with("complex") ||
      name.find("quant") != std::string_view::npos) {
    return true;
  }
  std::string_view digits = name;
  if (digits.starts_with("ui") || digits.starts_with("si")) {
    digits.remove_prefix(2);
  } else if (digits.starts_with("i") || digits.starts_with("f")) {
    digits.remove_prefix(1);
  } else {
    return false;
  }
  return !digits.empty() && IsDigitChar(digits.front());
}

}  // namespace

StatusOr<ModuleSyntax> ParseModuleSyntax(std::string_view text, int first_line,
                                         ConstantBudget* budget) {
  Parser parser(text, first_line, budget);
  return parser.ParseModule();
}

Parser::Parser(std::string_view text, int first_line, ConstantBudget* budget)
    : lexer_(text, first_line), budget_(budget) {
  tok_ = lexer_.Next();
}

// ---- Tokens ----

void Parser::Advance() {
  if (tok_.kind != TokenKind::kEof && tok_.kind != TokenKind::kError) tok_ = lexer_.Next();
}

bool Parser::Consume(TokenKind kind) {
  if (tok_.kind != kind) return false;
  Advance();
  return true;
}

bool Parser::ConsumeKeyword(std::string_view word) {
  if (!IsKeyword(word)) return false;
  Advance();
  return true;
}

Status Parser::Expect(TokenKind kind, std::string_view what) {
  if (Consume(kind)) return absl::OkStatus();
  return ErrorExpected(what);
}

Status Parser::ExpectKeyword(std::string_view word) {
  if (ConsumeKeyword(word)) return absl::OkStatus();
  return ErrorExpected(StrCat("'", word, "'"));
}

Status Parser::ErrorExpected(std::string_view what) const {
  if (tok_.kind == TokenKind::kError) return ErrorAt(tok_.loc, tok_.value);
  std::string found;
  if (tok_.kind == TokenKind::kEof) {
    found = "end of input";
  } else if (tok_.text.size() > 40) {
    found = StrCat("'", tok_.text.substr(0, 40), "...'");
  } else {
    found = StrCat("'", tok_.text, "'");
  }
  return ErrorAt(tok_.loc, StrCat("expected ", what, ", found ", found));
}

Status Parser::EnterNesting() {
  if (depth_ >= kMaxParseNesting) {
    return ErrorAt(tok_.loc, StrCat("nesting deeper than ", kMaxParseNesting, " levels"));
  }
  ++depth_;
  return absl::OkStatus();
}

Status Parser::SkipLocation() {
  if (!IsKeyword("loc")) return absl::OkStatus();
  Advance();
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' after loc"));
  int parens = 1;
  while (parens > 0) {
    if (Is(TokenKind::kEof) || Is(TokenKind::kError)) return ErrorExpected("')' closing loc(");
    if (Is(TokenKind::kLParen)) ++parens;
    if (Is(TokenKind::kRParen)) --parens;
    Advance();
  }
  return absl::OkStatus();
}

// ---- Structure ----

StatusOr<ModuleSyntax> Parser::ParseModule() {
  ModuleSyntax module;
  bool seen_module = false;
  while (!Is(TokenKind::kEof)) {
    if (!IsKeyword("module")) {
      ACCY_RETURN_IF_ERROR(ParseTopLevelItem(&module));
      continue;
    }
    if (seen_module || !module.functions.empty()) {
      return ErrorExpected("end of input (one module per text, or `// -----` between modules)");
    }
    seen_module = true;
    Advance();
    if (Is(TokenKind::kAtId)) {
      module.name = tok_.value;
      Advance();
    }
    if (ConsumeKeyword("attributes")) {
      // mhlo.num_replicas / mhlo.num_partitions give the SPMD grid (spec "Parallel
      // execution"); other module attributes have no meaning to accy.
      std::vector<NamedAttr> attributes;
      ACCY_RETURN_IF_ERROR(ParseAttributeDict(&attributes));
      for (const NamedAttr& attribute : attributes) {
        if (attribute.name != "mhlo.num_replicas" && attribute.name != "mhlo.num_partitions") {
          continue;
        }
        if (attribute.value.kind != AttrValue::Kind::kInt || attribute.value.int_value < 1) {
          return ErrorAt(attribute.value.loc,
                         StrCat(attribute.name, " must be a positive integer"));
        }
        (attribute.name == "mhlo.num_replicas" ? module.num_replicas : module.num_partitions) =
            attribute.value.int_value;
      }
    }
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' opening the module body"));
    while (!Consume(TokenKind::kRBrace)) {
      if (Is(TokenKind::kEof)) return ErrorExpected("'}' closing the module");
      ACCY_RETURN_IF_ERROR(ParseTopLevelItem(&module));
    }
    ACCY_RETURN_IF_ERROR(SkipLocation());
  }
  return module;
}

Status Parser::ParseTopLevelItem(ModuleSyntax* module) {
  if (IsKeyword("func.func")) return ParseFunction(module);
  if (Is(TokenKind::kHashId)) return ParseAliasDefinition();
  if (Is(TokenKind::kBangId)) return UnimplementedAt(tok_.loc, "type aliases are not supported");
  // A quoted name is MLIR's generic op form ("func.func"() <{...}> ({...})), which the parser
  // does not read for any op at the top level (print the module without
  // --mlir-print-op-generic).
  if (Is(TokenKind::kString) && tok_.value == "func.func") {
    return UnimplementedAt(tok_.loc,
                           "the generic form of 'func.func' (\"func.func\"() <{...}> ({...})) is "
                           "not supported; print the module in MLIR's custom form "
                           "(without --mlir-print-op-generic)");
  }
  if (Is(TokenKind::kBareId) || Is(TokenKind::kString)) {
    return UnimplementedAt(tok_.loc, StrCat("top-level op '", tok_.value.empty() ? tok_.text
                                                                                  : tok_.value,
                                            "' is not supported (expected func.func)"));
  }
  return ErrorExpected("'func.func'");
}

Status Parser::ParseAliasDefinition() {
  const std::string name = tok_.value;
  Advance();
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' in an attribute alias definition"));
  if (IsKeyword("loc")) return SkipLocation();
  ACCY_ASSIGN_OR_RETURN(AttrValue value, ParseAttribute());
  aliases_[name] = std::move(value);
  return absl::OkStatus();
}

Status Parser::ParseFunction(ModuleSyntax* module) {
  FunctionSyntax function;
  function.loc = tok_.loc;
  Advance();  // func.func
  if (IsKeyword("public") || IsKeyword("private") || IsKeyword("nested")) {
    function.is_public = tok_.text != "private";
    Advance();
  }
  if (!Is(TokenKind::kAtId)) return ErrorExpected("a function name (@name)");
  function.name = tok_.value;
  Advance();
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' opening the parameter list"));
  RegionSyntax& body = function.body;
  if (!Consume(TokenKind::kRParen)) {
    while (true) {
      std::string name;
      TensorType type;
      ACCY_RETURN_IF_ERROR(ParseArgument(&name, &type));
      body.arg_names.push_back(std::move(name));
      body.arg_types.push_back(std::move(type));
      // Argument attributes: the importer reads tf.aliasing_output, ignores the rest
      // (mhlo.sharding, ...).
      std::vector<NamedAttr> attrs;
      ACCY_RETURN_IF_ERROR(ParseOptionalAttributeDict(&attrs));
      function.arg_attrs.push_back(std::move(attrs));
      ACCY_RETURN_IF_ERROR(SkipLocation());
      if (Consume(TokenKind::kComma)) continue;
      ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in the parameter list"));
      break;
    }
  }
  if (Consume(TokenKind::kArrow)) {
    const bool parenthesized = Consume(TokenKind::kLParen);
    if (!parenthesized || !Consume(TokenKind::kRParen)) {
      while (true) {
        ACCY_ASSIGN_OR_RETURN(TensorType type, ParseType());
        function.result_types.push_back(std::move(type));
        if (!parenthesized) break;  // a `{` now opens the body
        std::vector<NamedAttr> ignored;  // result attributes (jax.result_info, ...)
        ACCY_RETURN_IF_ERROR(ParseOptionalAttributeDict(&ignored));
        if (Consume(TokenKind::kComma)) continue;
        ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in the result list"));
        break;
      }
    }
  }
  if (ConsumeKeyword("attributes")) {
    std::vector<NamedAttr> ignored;
    ACCY_RETURN_IF_ERROR(ParseAttributeDict(&ignored));
  }
  if (!Is(TokenKind::kLBrace)) {
    if (Is(TokenKind::kEof) || IsKeyword("func.func") || Is(TokenKind::kRBrace)) {
      return UnimplementedAt(function.loc, StrCat("function declaration @", function.name,
                                                  " without a body is not supported"));
    }
    return ErrorExpected("'{' opening the function body");
  }
  ACCY_RETURN_IF_ERROR(ParseRegion(&body));
  ACCY_RETURN_IF_ERROR(SkipLocation());
  module->functions.push_back(std::move(function));
  return absl::OkStatus();
}

Status Parser::ParseArgument(std::string* name, TensorType* type) {
  if (!Is(TokenKind::kPercentId)) return ErrorExpected("an argument name (%name)");
  *name = tok_.value;
  Advance();
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' after the argument name"));
  ACCY_ASSIGN_OR_RETURN(*type, ParseType());
  return absl::OkStatus();
}

Status Parser::ParseRegion(RegionSyntax* region) {
  region->loc = tok_.loc;
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' opening a region"));
  ACCY_RETURN_IF_ERROR(EnterNesting());
  NestingExit exit{&depth_};
  if (Is(TokenKind::kCaretId)) {
    if (!region->arg_names.empty()) {
      return ErrorAt(tok_.loc, "this region's arguments are named by its op; no block header");
    }
    Advance();
    if (Consume(TokenKind::kLParen) && !Consume(TokenKind::kRParen)) {
      while (true) {
        std::string name;
        TensorType type;
        ACCY_RETURN_IF_ERROR(ParseArgument(&name, &type));
        ACCY_RETURN_IF_ERROR(SkipLocation());
        region->arg_names.push_back(std::move(name));
        region->arg_types.push_back(std::move(type));
        if (Consume(TokenKind::kComma)) continue;
        ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in the block arguments"));
        break;
      }
    }
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' after the block header"));
  }
  while (!Consume(TokenKind::kRBrace)) {
    if (Is(TokenKind::kEof) || Is(TokenKind::kError)) return ErrorExpected("'}' closing a region");
    if (Is(TokenKind::kCaretId)) {
      return UnimplementedAt(tok_.loc, "regions with several blocks are not supported");
    }
    region->ops.emplace_back();
    ACCY_RETURN_IF_ERROR(ParseOperation(&region->ops.back()));
  }
  return absl::OkStatus();
}

Status Parser::ParseOperation(OpSyntax* op) {
  const SourceLoc start = tok_.loc;
  while (Is(TokenKind::kPercentId)) {
    std::string name = tok_.value;
    Advance();
    int64_t count = 1;
    if (Consume(TokenKind::kColon)) {
      ACCY_ASSIGN_OR_RETURN(count, ParseInteger("a result count"));
      if (count < 1) return ErrorAt(start, StrCat("result count of %", name, " must be positive"));
    }
    op->result_groups.emplace_back(std::move(name), count);
    if (Consume(TokenKind::kComma)) {
      if (!Is(TokenKind::kPercentId)) return ErrorExpected("a result name (%name)");
      continue;
    }
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after the result names"));
    break;
  }
  op->loc = tok_.loc;
  if (Is(TokenKind::kString)) {
    ACCY_RETURN_IF_ERROR(ParseGenericOp(op));
  } else if (Is(TokenKind::kBareId)) {
    ACCY_RETURN_IF_ERROR(ParsePrettyOp(op));
  } else {
    return ErrorExpected("an operation");
  }
  ACCY_RETURN_IF_ERROR(SkipLocation());
  // A tuple result (stablehlo.tuple, get_tuple_element of a tuple) is one result with no
  // tensor type.
  const size_t tuple_results = !op->tuple_types.empty() && op->tuple_types.back().is_tuple;
  const size_t typed_results = op->result_types.size() + tuple_results;
  if (!op->result_groups.empty() && op->num_results() != static_cast<int64_t>(typed_results)) {
    return ErrorAt(start, StrCat("'", op->name, "' defines ", op->num_results(),
                                 " result names but its type gives ", typed_results,
                                 " results"));
  }
  return absl::OkStatus();
}

Status Parser::ParseGenericOp(OpSyntax* op) {
  op->name = tok_.value;
  Advance();
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' opening the operand list"));
  ACCY_RETURN_IF_ERROR(ParseValueRefList(&op->operands, /*required=*/false));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' closing the operand list"));
  if (Is(TokenKind::kLSquare)) {
    return UnimplementedAt(tok_.loc, "ops with block successors are not supported");
  }
  if (Consume(TokenKind::kLess)) {  // properties: `<{...}>`
    ACCY_RETURN_IF_ERROR(ParseAttributeDict(&op->attributes));
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>' closing the properties"));
  }
  if (Consume(TokenKind::kLParen)) {
    while (true) {
      op->regions.emplace_back();
      ACCY_RETURN_IF_ERROR(ParseRegion(&op->regions.back()));
      if (Consume(TokenKind::kComma)) continue;
      ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "',' or ')' in the region list"));
      break;
    }
  }
  ACCY_RETURN_IF_ERROR(ParseOptionalAttributeDict(&op->attributes));
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' before the op's function type"));
  std::vector<TensorType> inputs;
  ACCY_RETURN_IF_ERROR(ParseFunctionType(&inputs, &op->result_types));
  op->operand_types = std::move(inputs);
  return absl::OkStatus();
}

Status Parser::ParseValueRef(ValueRef* ref) {
  if (!Is(TokenKind::kPercentId)) return ErrorExpected("a value (%name)");
  ref->name = tok_.value;
  ref->loc = tok_.loc;
  Advance();
  if (Is(TokenKind::kHashId)) {
    const std::string& digits = tok_.value;
    const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), ref->index);
    if (result.ec != std::errc() || result.ptr != digits.data() + digits.size()) {
      return ErrorExpected("a result number after '#'");
    }
    Advance();
  }
  return absl::OkStatus();
}

Status Parser::ParseValueRefList(std::vector<ValueRef>* refs, bool required,
                                 bool* trailing_comma) {
  if (trailing_comma != nullptr) *trailing_comma = false;
  if (!Is(TokenKind::kPercentId)) {
    return required ? ErrorExpected("a value (%name)") : absl::OkStatus();
  }
  while (true) {
    refs->emplace_back();
    ACCY_RETURN_IF_ERROR(ParseValueRef(&refs->back()));
    if (!Consume(TokenKind::kComma)) return absl::OkStatus();
    if (!Is(TokenKind::kPercentId)) {
      if (trailing_comma == nullptr) return ErrorExpected("a value (%name)");
      *trailing_comma = true;
      return absl::OkStatus();
    }
  }
}

// ---- Types ----

StatusOr<TensorType> Parser::ParseType() {
  const SourceLoc loc = tok_.loc;
  if (IsKeyword("tensor")) {
    Advance();
    if (!Is(TokenKind::kLess)) return ErrorExpected("'<' after tensor");
    std::string_view body;
    if (!lexer_.ScanAngleBody(&body)) return ErrorAt(loc, "expected '>' closing tensor<");
    tok_ = lexer_.Next();
    return ParseTensorBody(body, loc);
  }
  if (Is(TokenKind::kBareId)) {
    const std::string name(tok_.text);
    if (name == "tuple") {
      return UnimplementedAt(loc, "tuple types are supported only as the types of "
                                  "stablehlo.tuple and stablehlo.get_tuple_element (pretty "
                                  "forms), whose tuples accy flattens at import");
    }
    if (ParseElementType(name).ok() || IsKnownUnsupportedElementType(name) ||
        name == "vector" || name == "memref") {
      return UnimplementedAt(loc, StrCat("type '", name, "' is not supported (accy values are "
                                         "ranked tensors)"));
    }
  }
  if (Is(TokenKind::kBangId)) {
    if (tok_.text == "!stablehlo.token") {
      return UnimplementedAt(loc, "type '!stablehlo.token' is not supported: accy has no token "
                                  "values (the ops that order effects through them: send, recv, "
                                  "after_all, infeed, outfeed)");
    }
    return UnimplementedAt(loc, StrCat("type '", tok_.text, "' is not supported"));
  }
  return ErrorExpected("a type");
}

StatusOr<TensorType> Parser::ParseTensorBody(std::string_view body, SourceLoc loc) {
  const std::string spelled = StrCat("tensor<", body, ">");
  std::string_view rest = Trim(body);
  std::vector<int64_t> dims;
  while (!rest.empty()) {
    if (rest.front() == '?') {
      return UnimplementedAt(loc, StrCat("dynamic dimensions (", spelled, ") are not supported"));
    }
    if (rest.front() == '*') {
      return UnimplementedAt(loc, StrCat("unranked tensors (", spelled, ") are not supported"));
    }
    if (!IsDigitChar(rest.front())) break;
    int64_t dim = 0;
    const auto result = std::from_chars(rest.data(), rest.data() + rest.size(), dim);
    if (result.ec != std::errc()) return ErrorAt(loc, StrCat("dimension too large in ", spelled));
    rest.remove_prefix(static_cast<size_t>(result.ptr - rest.data()));
    if (rest.empty() || rest.front() != 'x') {
      return ErrorAt(loc, StrCat("expected 'x' after a dimension in ", spelled));
    }
    rest.remove_prefix(1);
    dims.push_back(dim);
  }
  // A top-level comma starts an encoding (sparse tensors and the like).
  int angle = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '<') ++angle;
    if (rest[i] == '>') --angle;
    if (rest[i] == ',' && angle == 0) {
      return UnimplementedAt(loc, StrCat("tensor encodings (", spelled, ") are not supported"));
    }
  }
  const std::string element(Trim(rest));
  if (element == "index" && index_as_i64_) {
    read_index_ = true;
    StatusOr<TensorType> type = TensorType::Create(ElementType::kI64, std::move(dims));
    if (!type.ok()) return WithLoc(loc, type.status());
    return type;
  }
  StatusOr<ElementType> element_type = ParseElementType(element);
  if (!element_type.ok()) {
    if (IsKnownUnsupportedElementType(element)) {
      return UnimplementedAt(loc, StrCat(std::string(element_type.status().message()), " (in ",
                                         spelled, ")"));
    }
    return ErrorAt(loc, StrCat(std::string(element_type.status().message()), " (in ", spelled,
                               ")"));
  }
  StatusOr<TensorType> type = TensorType::Create(*element_type, std::move(dims));
  if (!type.ok()) return WithLoc(loc, type.status());
  return type;
}

Status Parser::ParseTypeList(std::vector<TensorType>* types) {
  while (true) {
    ACCY_ASSIGN_OR_RETURN(TensorType type, ParseType());
    types->push_back(std::move(type));
    if (!Consume(TokenKind::kComma)) return absl::OkStatus();
  }
}

Status Parser::ParseFunctionType(std::vector<TensorType>* inputs,
                                 std::vector<TensorType>* results) {
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' opening a function type"));
  if (!Consume(TokenKind::kRParen)) {
    ACCY_RETURN_IF_ERROR(ParseTypeList(inputs));
    ACCY_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')' closing the input types"));
  }
  ACCY_RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->' in a function type"));
  if (Consume(TokenKind::kLParen)) {
    if (Consume(TokenKind::kRParen)) return absl::OkStatus();
    ACCY_RETURN_IF_ERROR(ParseTypeList(results));
    return Expect(TokenKind::kRParen, "')' closing the result types");
  }
  ACCY_ASSIGN_OR_RETURN(TensorType type, ParseType());
  results->push_back(std::move(type));
  return absl::OkStatus();
}

Status Parser::ParseOpTypes(std::optional<std::vector<TensorType>>* inputs,
                            std::vector<TensorType>* types) {
  if (Is(TokenKind::kLParen)) {
    std::vector<TensorType> operand_types;
    ACCY_RETURN_IF_ERROR(ParseFunctionType(&operand_types, types));
    *inputs = std::move(operand_types);
    return absl::OkStatus();
  }
  ACCY_RETURN_IF_ERROR(ParseTypeList(types));
  if (!Consume(TokenKind::kArrow)) return absl::OkStatus();
  // `operand types -> result type(s)` without parentheses (chlo's elementwise format).
  *inputs = std::move(*types);
  types->clear();
  if (Consume(TokenKind::kLParen)) {
    ACCY_RETURN_IF_ERROR(ParseTypeList(types));
    return Expect(TokenKind::kRParen, "')' closing the result types");
  }
  ACCY_ASSIGN_OR_RETURN(TensorType type, ParseType());
  types->push_back(std::move(type));
  return absl::OkStatus();
}

}  // namespace accy::stablehlo_internal
