// The syntax tree of the StableHLO importer: what the parser reads (parser.h) before the importer
// (importer.h) builds IR from it. Pretty op forms are desugared into the generic form here: an
// op is its full name, operands, MLIR attributes (with StableHLO's attribute names), regions and
// types, so one mapping turns every spelling into IR.
//
// Plain values owned by their parents; no invariants beyond what the parser guarantees.
#ifndef ACCY_SRC_STABLEHLO_SYNTAX_H_
#define ACCY_SRC_STABLEHLO_SYNTAX_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "accy/types.h"

namespace accy::stablehlo_internal {

// 1-based position in the text.
struct SourceLoc {
  int line = 0;
  int column = 0;
};

// "12:5: " for messages.
std::string LocPrefix(SourceLoc loc);
// `status` with "line:column: " put in front of its message (same code).
Status WithLoc(SourceLoc loc, const Status& status);
Status ErrorAt(SourceLoc loc, std::string_view message);          // kInvalidArgument
Status UnimplementedAt(SourceLoc loc, std::string_view message);  // kUnimplemented

// An MLIR attribute value as written.
struct AttrValue {
  enum class Kind {
    kUnit,      // a dictionary key without `= value`
    kBool,      // true / false
    kInt,       // 42, 7 : i64
    kFloat,     // 1.5 : f32
    kString,    // "text"
    kSymbol,    // @name
    kEnum,      // #stablehlo<comparison_direction LT>, a bare word (LT): `text` is the value
    kIntArray,  // array<i64: 1, 2>
    kList,      // [a, b]
    kStruct,    // #stablehlo.gather<k = v, ...>: `text` is "stablehlo.gather"
    kDict,      // {k = v, ...}
    kDense,     // dense<...> : tensor<...>
    kOpaque,    // anything else accy only skips (types, other dialects' attributes)
  };
  Kind kind = Kind::kUnit;
  SourceLoc loc;
  bool bool_value = false;
  int64_t int_value = 0;
  double float_value = 0;
  std::string text;
  std::vector<int64_t> ints;      // kIntArray
  std::vector<AttrValue> items;   // kList elements; kStruct / kDict field values
  std::vector<std::string> keys;  // kStruct / kDict field names, parallel to items
  std::shared_ptr<const DenseElements> dense;  // kDense
  // kDense written as a splat (one element, or a one-element hex payload) whose expanded payload
  // takes at least kMinUnexpandedSplatBytes (dense_literal.h): the declared type, with `dense`
  // holding the one element at rank 0. Never expanded for a constant op's value (the importer
  // emits a rank-0 constant and a broadcast_in_dim); elsewhere ExpandedDense expands it.
  std::optional<TensorType> splat_type;
  bool index_elements = false;  // kDense written with `index` elements (held as i64)

  // The field `key` of a kStruct / kDict; null when absent.
  const AttrValue* Field(std::string_view key) const;
  // "integer", "list", ... for messages.
  std::string_view KindName() const;
};

struct NamedAttr {
  std::string name;
  AttrValue value;
};

// A use `%name` or `%name#index`.
struct ValueRef {
  std::string name;
  int64_t index = 0;
  SourceLoc loc;
};

struct OpSyntax;

// A type that may be a tuple (`tuple<tensor<2xf32>, tuple<tensor<i64>>>`). Only
// stablehlo.tuple and stablehlo.get_tuple_element carry one: the importer flattens tuples into
// their tensors, and every other place a type appears takes a ranked tensor.
struct TypeTree {
  bool is_tuple = false;
  TensorType tensor;               // when !is_tuple
  std::vector<TypeTree> elements;  // when is_tuple (possibly none: `tuple<>`)

  // `tensor<...>` or `tuple<...>`, as written.
  std::string ToString() const;
};

// A region with one block. Pretty forms (while, reduce) name the arguments in the op header.
struct RegionSyntax {
  SourceLoc loc;
  std::vector<std::string> arg_names;
  std::vector<TensorType> arg_types;
  std::vector<OpSyntax> ops;
};

struct OpSyntax {
  SourceLoc loc;
  // Full name: "stablehlo.add", "func.return", "func.call", "check.expect_eq_const", ...
  std::string name;
  // `%0:2, %x = ...`: each name and how many results it covers.
  std::vector<std::pair<std::string, int64_t>> result_groups;
  std::vector<ValueRef> operands;
  std::vector<NamedAttr> attributes;  // properties and attributes, as MLIR names them
  std::vector<RegionSyntax> regions;
  std::optional<std::vector<TensorType>> operand_types;  // when the text gives them
  std::vector<TensorType> result_types;
  // stablehlo.tuple: {its result type}; stablehlo.get_tuple_element: {operand type, result
  // type} (result_types then holds the result when it is a tensor). Empty for other ops.
  std::vector<TypeTree> tuple_types;

  int64_t num_results() const;
  const AttrValue* attribute(std::string_view name) const;
};

struct FunctionSyntax {
  SourceLoc loc;
  std::string name;
  bool is_public = true;
  RegionSyntax body;  // arg_names / arg_types are the parameters
  // Per parameter, its attribute dictionary (`{tf.aliasing_output = 0 : i32}`; empty if none).
  std::vector<std::vector<NamedAttr>> arg_attrs;
  std::vector<TensorType> result_types;
};

struct ModuleSyntax {
  std::string name;
  // mhlo.num_replicas / mhlo.num_partitions of the module's attributes (1 when absent).
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  std::vector<FunctionSyntax> functions;
};

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_SYNTAX_H_
