// The StableHLO text parser: MLIR text to the syntax tree of syntax.h (no IR is built here).
//
// One Parser reads one text (or one chunk of a split file) once; it keeps a one-token lookahead.
// Its methods are spread by concept: parser.cc (module, functions, regions, generic ops, types),
// op_syntax.cc (the pretty forms of StableHLO ops; the shape ops' in shape_syntax.cc, dot_general,
// reduce and top_k in reduction_syntax.cc), attribute_parser.cc (attribute values and dense
// literals). Errors: see include/accy/stablehlo.h. Not thread-safe.
#ifndef ACCY_SRC_STABLEHLO_PARSER_H_
#define ACCY_SRC_STABLEHLO_PARSER_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "accy/status.h"
#include "accy/types.h"
#include "src/stablehlo/dense_literal.h"
#include "src/stablehlo/lexer.h"
#include "src/stablehlo/syntax.h"

namespace accy::stablehlo_internal {

// Reads `text` (whose first line is line `first_line` of the file) as one module, charging its
// dense literals to `budget` (which must outlive the call).
StatusOr<ModuleSyntax> ParseModuleSyntax(std::string_view text, int first_line,
                                         ConstantBudget* budget);

class Parser {
 public:
  Parser(std::string_view text, int first_line, ConstantBudget* budget);

  StatusOr<ModuleSyntax> ParseModule();

 private:
  // ---- Tokens (parser.cc) ----
  void Advance();
  bool Is(TokenKind kind) const { return tok_.kind == kind; }
  bool IsKeyword(std::string_view word) const {
    return tok_.kind == TokenKind::kBareId && tok_.text == word;
  }
  bool Consume(TokenKind kind);
  bool ConsumeKeyword(std::string_view word);
  Status Expect(TokenKind kind, std::string_view what);
  Status ExpectKeyword(std::string_view word);
  // "line:column: expected <what>, found <token>" at the current token (the lexer's message for
  // a bad character).
  Status ErrorExpected(std::string_view what) const;
  // Skips a `loc(...)` annotation if one follows.
  Status SkipLocation();
  // Fails past kMaxParseNesting levels; on success pair it with a NestingExit.
  Status EnterNesting();
  struct NestingExit {
    int* depth;
    ~NestingExit() { --*depth; }
  };

  // ---- Structure (parser.cc) ----
  Status ParseTopLevelItem(ModuleSyntax* module);
  Status ParseFunction(ModuleSyntax* module);
  Status ParseAliasDefinition();
  // `{ [^bb0(%a: t, ...):] ops }`; pretty ops give the argument names and types beforehand.
  Status ParseRegion(RegionSyntax* region);
  Status ParseOperation(OpSyntax* op);
  Status ParseGenericOp(OpSyntax* op);
  Status ParseValueRef(ValueRef* ref);
  // Comma-separated value uses (at least one when `required`). A comma followed by something
  // other than a value ends the list with `*trailing_comma` set; without `trailing_comma` that
  // is an error.
  Status ParseValueRefList(std::vector<ValueRef>* refs, bool required,
                           bool* trailing_comma = nullptr);
  // `%name: type` (block and function arguments).
  Status ParseArgument(std::string* name, TensorType* type);

  // ---- Types (parser.cc) ----
  StatusOr<TensorType> ParseType();
  StatusOr<TensorType> ParseTensorBody(std::string_view body, SourceLoc loc);
  Status ParseTypeList(std::vector<TensorType>* types);
  // `(a, b) -> r` / `(a) -> (r, s)`.
  Status ParseFunctionType(std::vector<TensorType>* inputs, std::vector<TensorType>* results);
  // After an op's `:`: a functional type, or a plain type list (`types` then holds it and
  // `inputs` stays unset).
  Status ParseOpTypes(std::optional<std::vector<TensorType>>* inputs,
                      std::vector<TensorType>* types);

  // ---- Attributes (attribute_parser.cc) ----
  StatusOr<AttrValue> ParseAttribute();
  // `{k = v, flag, ...}`; also reads `<{...}>` properties when the caller consumed the `<`.
  Status ParseAttributeDict(std::vector<NamedAttr>* attributes);
  Status ParseOptionalAttributeDict(std::vector<NamedAttr>* attributes);
  StatusOr<AttrValue> ParseDense();
  Status ParseDenseLiteral(DenseLiteral* literal);
  Status ParseDenseElement(DenseElementSyntax* element);
  StatusOr<AttrValue> ParseHashAttribute();
  StatusOr<AttrValue> ParseArrayAttribute();
  Status SkipBalancedAngles();
  StatusOr<int64_t> ParseInteger(std::string_view what);
  // `[1, -2]`.
  StatusOr<std::vector<int64_t>> ParseIntegerList();

  // ---- Pretty op forms (op_syntax.cc, shape_syntax.cc, reduction_syntax.cc) ----
  // An op in pretty form (`%r = stablehlo.add %a, %b : tensor<4xf32>`), the current token its
  // bare name: func ops, check ops and the syntax the importer rewrites (dot, custom_call,
  // tuple, composite, the dynamic ops, ...) by name; every op of the op table by its row's print
  // form (PrettyFormParser).
  Status ParsePrettyOp(OpSyntax* op);
  // The parser of op `kind`'s pretty form: the op table's `print` column (include/accy/ops.def)
  // names the form an op prints in, and the op parses from the same form, so printing and
  // parsing cannot drift apart op by op (tests/stablehlo: every op's printed form parses back).
  using PrettyParse = Status (Parser::*)(OpSyntax*);
  static PrettyParse PrettyFormParser(OpKind kind);
  // ParseDimsOp of the three `dims = [..]` forms: broadcast_in_dim (broadcast_dimensions),
  // transpose (permutation), reverse (dimensions).
  Status ParseBroadcastInDim(OpSyntax* op);
  Status ParseTranspose(OpSyntax* op);
  Status ParseReverse(OpSyntax* op);
  // replica_id / partition_id: `attr-dict : type`; the other collectives have no pretty form
  // (ParseGenericOnly's error).
  Status ParseCollective(OpSyntax* op);
  // Ops StableHLO writes only in the generic form (gather, scatter, sort, reduce_window, case,
  // the batch norms, ...): kUnimplemented naming the op and the form to write.
  Status ParseGenericOnly(OpSyntax* op);
  // accy's own ops (cumsum, lapack, kernel_call), which exist in text only as the
  // stablehlo.custom_call the printer writes: kUnimplemented naming that form.
  Status ParseCustomCallOnly(OpSyntax* op);
  Status ParseSameTypeOp(OpSyntax* op);
  Status ParseCompare(OpSyntax* op);
  Status ParseReducePrecision(OpSyntax* op);
  // `%state, algorithm = THREE_FRY attr-dict : functional-type` (StablehloOps.td): the word
  // becomes the generic form's rng_algorithm.
  Status ParseRngBitGenerator(OpSyntax* op);
  Status ParseSelect(OpSyntax* op);
  Status ParseDimsOp(OpSyntax* op, std::string_view keyword, std::string_view attribute);
  Status ParseSlice(OpSyntax* op);
  Status ParsePad(OpSyntax* op);
  Status ParseConcatenate(OpSyntax* op);
  Status ParseIota(OpSyntax* op);
  Status ParseDynamicSlice(OpSyntax* op);
  Status ParseDotGeneral(OpSyntax* op);
  Status ParseReduce(OpSyntax* op);
  // convolution (convolution_syntax.cc): the pretty form, its window dictionary, and the
  // ConvDimensionNumbers syntax shared with `#stablehlo.conv<...>` (after the '<').
  Status ParseConvolution(OpSyntax* op);
  Status ParseConvWindow(OpSyntax* op);
  StatusOr<AttrValue> ParseConvDimensionNumbers();
  // One `[b, 0, 1, f]` layout: the dims of letters `first` and `second` and of each spatial
  // number, appended to `numbers` as fields `first_field`, `second_field`, `spatial_field`.
  Status ParseConvLayout(char first, char second, std::string_view first_field,
                         std::string_view second_field, std::string_view spatial_field,
                         AttrValue* numbers);
  Status ParseWhile(OpSyntax* op);
  // chlo.top_k's assembly format: `(%x, k = N) attr-dict : type -> (type, type)`.
  Status ParseTopK(OpSyntax* op);
  // `stablehlo.optimization_barrier %a, %b : t0, t1` (operand and result types are one list).
  Status ParseOptimizationBarrier(OpSyntax* op);
  // `stablehlo.tuple %a, %b attr-dict : tuple<...>` and
  // `stablehlo.get_tuple_element %t[i] attr-dict : (tuple<...>) -> type` (the pretty forms).
  Status ParseTuple(OpSyntax* op);
  Status ParseGetTupleElement(OpSyntax* op);
  // A tensor type or a (nested) tuple of them.
  StatusOr<TypeTree> ParseTypeTree();
  // `stablehlo.composite "name" %a, ... {attrs} : (types) -> types`; the name becomes `name`.
  Status ParseComposite(OpSyntax* op);
  // dynamic_iota / get_dimension_size (`%x, dim = N`), dynamic_broadcast_in_dim (`%x, %shape,
  // dims = [..]`), dynamic_reshape and dynamic_pad (operands only), then `attr-dict : (types) ->
  // type`; the `dim` integer becomes `dim_attribute`.
  Status ParseDynamicShapeOp(OpSyntax* op, std::string_view dim_attribute);
  Status ParseConstant(OpSyntax* op);
  Status ParseCustomCall(OpSyntax* op);
  Status ParseCall(OpSyntax* op);
  Status ParseReturn(OpSyntax* op);
  Status ParseCheck(OpSyntax* op);
  // `attr-dict : functional-type` ending most pretty forms.
  Status ParseFunctionalTail(OpSyntax* op);

  Lexer lexer_;
  Token tok_;
  int depth_ = 0;
  ConstantBudget* budget_;
  std::map<std::string, AttrValue> aliases_;  // `#name = <attr>` definitions
  // While a dense attribute's type is parsed: `index` elements read as i64 (XLA's layout
  // attributes, `result_layout = dense<[1, 0]> : tensor<2xindex>`), and whether one did.
  bool index_as_i64_ = false;
  bool read_index_ = false;
};

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_PARSER_H_
