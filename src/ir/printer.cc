// PrintModule (include/accy/ir.h): the accy IR as StableHLO MLIR text.
//
// The text follows what `stablehlo-opt` prints (the custom assembly formats of
// stablehlo/dialect/StablehloOps.td and AssemblyFormat.cpp), so that stablehlo-opt and accy's own
// parser read it back: pretty forms for every op except gather, scatter, sort, triangular_solve
// (which have none) and a rank-0 dynamic_slice (whose pretty form cannot be parsed back), which
// use MLIR's generic form with
// properties (`"stablehlo.gather"(...) <{...}> : ...`), as stablehlo-opt does. Where it differs
// from stablehlo-opt's output, both parse to the same IR: constants are numbered like other values
// (not named %cst / %c); reduce always uses the region form (`reducer(...) { ... }`), never the
// `applies stablehlo.add` shorthand; constants go hex from kMaxInlineConstantElements + 1
// elements; floats that need more than 6 digits print their shortest round-trip digits. accy's
// own ops print as `stablehlo.custom_call @accy.cumsum` and `stablehlo.custom_call @<target>`
// with `accy.*` attributes; top_k prints as CHLO's `chlo.top_k`.
//
// Reads the module only; thread-safe for concurrent prints of a finished module.
#include "accy/ir.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "src/ir/lapack_targets.h"
#include "src/ir/printer_attributes.h"
#include "src/ir/printer_names.h"
#include "src/util/str_cat.h"

namespace accy {
namespace {

using printer_internal::FormatConvolutionAttributes;
using printer_internal::FormatDenseElements;
using printer_internal::FormatI64Array;
using printer_internal::FormatIntList;
using printer_internal::FormatStringLiteral;
using printer_internal::FormatSymbolName;
using printer_internal::SsaNames;

// A kernel_call attribute value in MLIR syntax, as KernelAttributeValue in the importer reads it.
std::string FormatKernelAttribute(const AttributeValue& value) {
  if (const int64_t* i = std::get_if<int64_t>(&value)) return StrCat(*i, " : i64");
  if (const double* d = std::get_if<double>(&value)) {
    return StrCat(printer_internal::FormatElement(ElementType::kF64, reinterpret_cast<const uint8_t*>(d)), " : f64");
  }
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const std::string* text = std::get_if<std::string>(&value)) return FormatStringLiteral(*text);
  if (const auto* ints = std::get_if<std::vector<int64_t>>(&value)) return FormatI64Array(*ints);
  if (const auto* strings = std::get_if<std::vector<std::string>>(&value)) {
    std::string out = "[";
    for (size_t i = 0; i < strings->size(); ++i) {
      out += StrCat(i > 0 ? ", " : "", FormatStringLiteral((*strings)[i]));
    }
    return out + "]";
  }
  return FormatDenseElements(std::get<DenseElements>(value));
}


std::string TypeList(const std::vector<TensorType>& types) {
  std::string out;
  for (size_t i = 0; i < types.size(); ++i) {
    if (i > 0) out += ", ";
    out += types[i].ToString();
  }
  return out;
}

std::vector<TensorType> OperandTypes(const Operation& op) {
  std::vector<TensorType> types;
  for (const Value* v : op.operands()) types.push_back(v->type());
  return types;
}

std::vector<TensorType> ResultTypes(const Operation& op) {
  std::vector<TensorType> types;
  for (const Value* v : op.results()) types.push_back(v->type());
  return types;
}

// MLIR's functional type: `(a, b) -> r`, `(a) -> (r, s)`, `() -> ()`.
std::string FunctionalType(const Operation& op) {
  const std::vector<TensorType> results = ResultTypes(op);
  std::string out = StrCat("(", TypeList(OperandTypes(op)), ") -> ");
  if (results.size() == 1) return out + results[0].ToString();
  return StrCat(out, "(", TypeList(results), ")");
}

// stablehlo's SameOperandsAndResultType directive: the one type when every operand has the
// result's type, else the functional type.
std::string SameOperandsAndResultType(const Operation& op) {
  if (op.num_results() != 1) return FunctionalType(op);
  const TensorType& result = op.result(0)->type();
  for (const Value* v : op.operands()) {
    if (v->type() != result) return FunctionalType(op);
  }
  return result.ToString();
}

// chlo's elementwise format: `operand types -> result type`, no parentheses.
std::string ChloType(const Operation& op) {
  return StrCat(TypeList(OperandTypes(op)), " -> ", op.result(0)->type().ToString());
}

std::string Bool(bool value) { return value ? "true" : "false"; }

// Fields of a `#stablehlo.gather<...>` / `#stablehlo.scatter<...>` struct, printed as stablehlo's
// printStruct does: empty lists and a zero index_vector_dim are left out (they are the defaults).
class StructFields {
 public:
  void AddList(std::string_view name, const std::vector<int64_t>& values) {
    if (!values.empty()) Add(StrCat(name, " = ", FormatIntList(values)));
  }
  void AddInt(std::string_view name, int64_t value) {
    if (value != 0) Add(StrCat(name, " = ", value));
  }
  std::string Finish(std::string_view name) const {
    return StrCat("#stablehlo.", name, "<", text_, ">");
  }

 private:
  void Add(const std::string& field) {
    if (!text_.empty()) text_ += ", ";
    text_ += field;
  }
  std::string text_;
};

class ModulePrinter {
 public:
  std::string Print(const Module& module) {
    out_ = module.name().empty() ? "module" : StrCat("module ", FormatSymbolName(module.name()));
    if (module.num_replicas() != 1 || module.num_partitions() != 1) {
      // The grid (spec "Parallel execution") as JAX writes it.
      out_ += StrCat(" attributes {mhlo.num_partitions = ", module.num_partitions(),
                     " : i32, mhlo.num_replicas = ", module.num_replicas(), " : i32}");
    }
    out_ += " {\n";
    for (const auto& function : module.functions()) PrintFunction(*function);
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  void Indent(int depth) { out_.append(static_cast<size_t>(2 * depth), ' '); }

  void PrintFunction(const Function& function) {
    names_.emplace(function);
    Indent(1);
    out_ += StrCat("func.func ", function.is_public() ? "public " : "private ",
                   FormatSymbolName(function.name()), "(");
    const Block* entry = function.entry_block();
    for (size_t i = 0; i < function.parameter_types().size(); ++i) {
      if (i > 0) out_ += ", ";
      if (entry != nullptr && static_cast<int64_t>(i) < entry->num_arguments()) {
        out_ += ArgumentDeclaration(entry->argument(static_cast<int64_t>(i)));
      } else {
        out_ += function.parameter_types()[i].ToString();  // a declaration without a body
      }
      for (const InputOutputAlias& alias : function.input_output_aliases()) {
        if (alias.parameter == static_cast<int64_t>(i)) {
          out_ += StrCat(" {tf.aliasing_output = ", alias.result, " : i32}");
        }
      }
    }
    out_ += ")";
    const std::vector<TensorType>& results = function.result_types();
    if (results.size() == 1) {
      out_ += StrCat(" -> ", results[0].ToString());
    } else if (!results.empty()) {
      out_ += StrCat(" -> (", TypeList(results), ")");
    }
    if (entry == nullptr) {
      out_ += "\n";
      return;
    }
    out_ += " {\n";
    for (const auto& op : entry->operations()) PrintOp(*op, 2);
    Indent(1);
    out_ += "}\n";
  }

  std::string ArgumentDeclaration(const Value* arg) const {
    return StrCat(names_->Use(arg), ": ", arg->type().ToString());
  }

  std::string Operands(const Operation& op) const {
    std::string out;
    for (int64_t i = 0; i < op.num_operands(); ++i) {
      if (i > 0) out += ", ";
      out += names_->Use(op.operand(i));
    }
    return out;
  }

  // `{` newline, the ops one level deeper, `}` at `depth` (no newline after it), like MLIR's
  // printRegion. `block_header` prints `^bb0(%arg: type, ...):` first (the generic op form).
  void AppendRegion(const Region& region, int depth, bool block_header) {
    out_ += "{\n";
    for (const auto& block : region.blocks()) {
      if (block_header && block->num_arguments() > 0) {
        Indent(depth);
        out_ += "^bb0(";
        for (int64_t i = 0; i < block->num_arguments(); ++i) {
          if (i > 0) out_ += ", ";
          out_ += ArgumentDeclaration(block->argument(i));
        }
        out_ += "):\n";
      }
      for (const auto& op : block->operations()) PrintOp(*op, depth + 1);
    }
    Indent(depth);
    out_ += "}";
  }

  void PrintOp(const Operation& op, int depth) {
    Indent(depth);
    out_ += names_->Definition(op);
    PrintOpBody(op, depth);
    out_ += "\n";
  }

  // Everything after `%N = `; ops with regions span several lines. The form is the op table's
  // `print` column (include/accy/ops.def): ModulePrinter::Print<print>.
  void PrintOpBody(const Operation& op, int depth) {
    const PrintForm form = FormOf(op.kind());
    ACCY_CHECK(form != nullptr && "PrintModule: unknown op kind");
    (this->*form)(op, QualifiedOpName(op.kind()), depth);
  }

  // An op form: prints `op` (called `name`, its qualified name) nested `depth` levels deep.
  using PrintForm = void (ModulePrinter::*)(const Operation& op, const std::string& name,
                                            int depth);
  // The form of the op table's `print` column for `kind`; null outside the table.
  static PrintForm FormOf(OpKind kind);

  // The op forms of the `print` column, one per row of include/accy/ops.def.
  void PrintConstant(const Operation& op, const std::string& name, int /*depth*/) {
    const DenseElements* value = op.GetDense("value");
    out_ += StrCat(name, " ", value != nullptr ? FormatDenseElements(*value) : "dense<>",
                   " : ", op.result(0)->type().ToString());
  }

  void PrintSameType(const Operation& op, const std::string& name, int /*depth*/) {
    out_ += StrCat(name, " ", Operands(op), " : ", SameOperandsAndResultType(op));
  }

  void PrintReducePrecision(const Operation& op, const std::string& name, int /*depth*/) {
    out_ += StrCat(name, " ", Operands(op), ", format = e",
                   op.GetInt("exponent_bits").value_or(0), "m",
                   op.GetInt("mantissa_bits").value_or(0), " : ",
                   SameOperandsAndResultType(op));
  }

  void PrintChlo(const Operation& op, const std::string& name, int /*depth*/) {
    out_ += StrCat(name, " ", Operands(op), " : ", ChloType(op));
  }

  void PrintFunctional(const Operation& op, const std::string& name, int /*depth*/) {
    out_ += StrCat(name, " ", Operands(op), " : ", FunctionalType(op));
  }

  void PrintCompare(const Operation& op, const std::string& name, int /*depth*/) {
    // The enum attributes print with a leading space of their own, hence two spaces.
    out_ += StrCat(name, "  ", op.GetString("comparison_direction").value_or(""), ", ",
                   Operands(op));
    if (std::optional<std::string> type = op.GetString("compare_type")) {
      out_ += StrCat(",  ", *type);
    }
    out_ += StrCat(" : ", FunctionalType(op));
  }

  void PrintSelect(const Operation& op, const std::string& name, int /*depth*/) {
    // stablehlo's SelectOpType: `pred_type, result_type` when both branches have the
    // result's type.
    const TensorType& result = op.result(0)->type();
    if (op.num_operands() == 3 && op.operand(1)->type() == result &&
        op.operand(2)->type() == result) {
      out_ += StrCat(name, " ", Operands(op), " : ", op.operand(0)->type().ToString(), ", ",
                     result.ToString());
    } else {
      out_ += StrCat(name, " ", Operands(op), " : ", FunctionalType(op));
    }
  }

  void PrintBroadcastInDim(const Operation& op, const std::string& name, int /*depth*/) {
    out_ += StrCat(name, " ", Operands(op), ", dims = ",
                   FormatIntList(op.GetInts("broadcast_dimensions")), " : ",
                   FunctionalType(op));
  }

  void PrintTranspose(const Operation& op, const std::string& name, int /*depth*/) {
    out_ += StrCat(name, " ", Operands(op), ", dims = ",
                   FormatIntList(op.GetInts("permutation")), " : ", FunctionalType(op));
  }

  void PrintReverse(const Operation& op, const std::string& name, int /*depth*/) {
    out_ += StrCat(name, " ", Operands(op), ", dims = ",
                   FormatIntList(op.GetInts("dimensions")), " : ",
                   SameOperandsAndResultType(op));
  }

  void PrintSlice(const Operation& op, const std::string& name, int /*depth*/) {
    out_ += StrCat(name, " ", Operands(op), " ", SliceRanges(op), " : ", FunctionalType(op));
  }

  void PrintPad(const Operation& op, const std::string& name, int /*depth*/) {
    out_ += StrCat(name, " ", Operands(op),
                   ", low = ", FormatIntList(op.GetInts("edge_padding_low")),
                   ", high = ", FormatIntList(op.GetInts("edge_padding_high")),
                   ", interior = ", FormatIntList(op.GetInts("interior_padding")), " : ",
                   FunctionalType(op));
  }

  void PrintConcatenate(const Operation& op, const std::string& name, int /*depth*/) {
    out_ += StrCat(name, " ", Operands(op), ", dim = ", op.GetInt("dimension").value_or(0),
                   " : ", FunctionalType(op));
  }

  void PrintIota(const Operation& op, const std::string& name, int /*depth*/) {
    out_ += StrCat(name, " dim = ", op.GetInt("iota_dimension").value_or(0), " : ",
                   op.result(0)->type().ToString());
  }

  void PrintDynamicSlice(const Operation& op, const std::string& name, int /*depth*/) {
    if (op.num_operands() < 2) {
      // The pretty form of a rank-0 dynamic_slice ends its empty index list with a comma
      // the parser rejects; the generic form has no such problem.
      out_ += StrCat("\"", name, "\"(", Operands(op), ") <{slice_sizes = ",
                     FormatI64Array(op.GetInts("slice_sizes")), "}> : ", FunctionalType(op));
      return;
    }
    out_ += StrCat(name, " ", Operands(op), ", sizes = ",
                   FormatIntList(op.GetInts("slice_sizes")), " : ", FunctionalType(op));
  }

  void PrintConvolution(const Operation& op, const std::string& name, int /*depth*/) {
    out_ += StrCat(name, "(", Operands(op), ") ", FormatConvolutionAttributes(op), " : ",
                   FunctionalType(op));
  }

  void PrintSort(const Operation& op, const std::string& name, int depth) {
    // sort has no pretty form: the generic one JAX writes.
    out_ += StrCat("\"", name, "\"(", Operands(op), ") <{dimension = ",
                   op.GetInt("dimension").value_or(0), " : i64, is_stable = ",
                   Bool(op.GetBool("is_stable").value_or(false)), "}> (");
    if (op.num_regions() > 0) AppendRegion(*op.region(0), depth, /*block_header=*/true);
    out_ += StrCat(") : ", FunctionalType(op));
  }

  void PrintTopK(const Operation& op, const std::string& /*name*/, int /*depth*/) {
    // CHLO's assembly format: `chlo.top_k(%x, k = 3) : tensor<..> -> (tensor<..>, ..)`.
    out_ += StrCat("chlo.top_k(", Operands(op), ", k = ", op.GetInt("k").value_or(0),
                   ") : ", op.operand(0)->type().ToString(), " -> (",
                   TypeList(ResultTypes(op)), ")");
  }

  void PrintTriangularSolve(const Operation& op, const std::string& name, int /*depth*/) {
    // No pretty form: the generic one with properties, attributes in MLIR's (alphabetical)
    // order, as JAX and stablehlo-opt write it.
    out_ += StrCat("\"", name, "\"(", Operands(op),
                   ") <{left_side = ", Bool(op.GetBool("left_side").value_or(false)),
                   ", lower = ", Bool(op.GetBool("lower").value_or(false)),
                   ", transpose_a = #stablehlo<transpose ",
                   op.GetString("transpose_a").value_or("NO_TRANSPOSE"),
                   ">, unit_diagonal = ", Bool(op.GetBool("unit_diagonal").value_or(false)),
                   "}> : ", FunctionalType(op));
  }

  void PrintRngBitGenerator(const Operation& op, const std::string& name, int /*depth*/) {
    // StablehloOps.td's `$initial_state `,` `algorithm` `=` $rng_algorithm attr-dict `:`
    // functional-type`; the two spaces after '=' are what stablehlo-opt prints (its enum
    // printer adds one), as in the testdata files.
    out_ += StrCat(name, " ", Operands(op), ", algorithm =  ",
                   op.GetString("rng_algorithm").value_or("DEFAULT"), " : ",
                   FunctionalType(op));
  }

  void PrintBatchNorm(const Operation& op, const std::string& name, int /*depth*/) {
    // The properties form stablehlo-opt prints; epsilon is the spec's f32 constant.
    const AttributeValue* epsilon = op.attribute("epsilon");
    const double* value = epsilon != nullptr ? std::get_if<double>(epsilon) : nullptr;
    const float f32 = static_cast<float>(value != nullptr ? *value : 0.0);
    uint8_t bytes[sizeof(float)];
    std::memcpy(bytes, &f32, sizeof(float));
    out_ += StrCat("\"", name, "\"(", Operands(op), ") <{epsilon = ",
                   printer_internal::FormatElement(ElementType::kF32, bytes),
                   " : f32, feature_index = ", op.GetInt("feature_index").value_or(0),
                   " : i64}> : ", FunctionalType(op));
  }

  void PrintCase(const Operation& op, const std::string& name, int depth) {
    // The generic form, as stablehlo-opt prints case: `"stablehlo.case"(%i) ({...}, ...)`.
    out_ += StrCat("\"", name, "\"(", Operands(op), ") (");
    for (int64_t r = 0; r < op.num_regions(); ++r) {
      if (r > 0) out_ += ", ";
      AppendRegion(*op.region(r), depth, /*block_header=*/false);
    }
    out_ += StrCat(") : ", FunctionalType(op));
  }

  void PrintCollective(const Operation& op, const std::string& name, int depth) {
    // The generic form with the attribute dictionary, as the StableHLO test files write
    // collectives: `"stablehlo.all_reduce"(%x) ({...}) {replica_groups = ...} : (..) -> ..`.
    out_ += StrCat("\"", name, "\"(", Operands(op), ")");
    if (op.num_regions() > 0) {
      out_ += " (";
      AppendRegion(*op.region(0), depth, /*block_header=*/true);
      out_ += ")";
    }
    out_ += StrCat(printer_internal::FormatCollectiveAttributes(op), " : ",
                   FunctionalType(op));
  }

  void PrintCumsum(const Operation& op, const std::string& /*name*/, int /*depth*/) {
    out_ += StrCat("stablehlo.custom_call @accy.cumsum(", Operands(op),
                   ") {accy.dimension = ", op.GetInt("dimension").value_or(0), " : i64} : ",
                   FunctionalType(op));
  }

  void PrintReturn(const Operation& op, const std::string& /*name*/, int /*depth*/) {
    const Region* region = op.parent_block() != nullptr ? op.parent_block()->parent() : nullptr;
    const bool in_function = region == nullptr || region->parent_op() == nullptr;
    out_ += in_function ? "return" : "stablehlo.return";
    if (op.num_operands() > 0) {
      out_ += StrCat(" ", Operands(op), " : ", TypeList(OperandTypes(op)));
    }
  }


  // `[1:3, 0:4:2]`: start:limit, with `:stride` only when the stride is not 1.
  static std::string SliceRanges(const Operation& op) {
    const std::vector<int64_t> start = op.GetInts("start_indices");
    const std::vector<int64_t> limit = op.GetInts("limit_indices");
    const std::vector<int64_t> strides = op.GetInts("strides");
    std::string out = "[";
    for (size_t i = 0; i < start.size(); ++i) {
      if (i > 0) out += ", ";
      out += StrCat(start[i], ":", i < limit.size() ? limit[i] : 0);
      const int64_t stride = i < strides.size() ? strides[i] : 1;
      if (stride != 1) out += StrCat(":", stride);
    }
    out += "]";
    return out;
  }

  void PrintGather(const Operation& op, const std::string& name, int /*depth*/) {
    StructFields fields;
    fields.AddList("offset_dims", op.GetInts("offset_dims"));
    fields.AddList("collapsed_slice_dims", op.GetInts("collapsed_slice_dims"));
    fields.AddList("operand_batching_dims", op.GetInts("operand_batching_dims"));
    fields.AddList("start_indices_batching_dims", op.GetInts("start_indices_batching_dims"));
    fields.AddList("start_index_map", op.GetInts("start_index_map"));
    fields.AddInt("index_vector_dim", op.GetInt("index_vector_dim").value_or(0));
    out_ += StrCat("\"", name, "\"(", Operands(op), ") <{dimension_numbers = ",
                   fields.Finish("gather"), ", indices_are_sorted = ",
                   Bool(op.GetBool("indices_are_sorted").value_or(false)), ", slice_sizes = ",
                   FormatI64Array(op.GetInts("slice_sizes")), "}> : ", FunctionalType(op));
  }

  void PrintScatter(const Operation& op, const std::string& name, int depth) {
    StructFields fields;
    fields.AddList("update_window_dims", op.GetInts("update_window_dims"));
    fields.AddList("inserted_window_dims", op.GetInts("inserted_window_dims"));
    fields.AddList("input_batching_dims", op.GetInts("input_batching_dims"));
    fields.AddList("scatter_indices_batching_dims", op.GetInts("scatter_indices_batching_dims"));
    fields.AddList("scatter_dims_to_operand_dims", op.GetInts("scatter_dims_to_operand_dims"));
    fields.AddInt("index_vector_dim", op.GetInt("index_vector_dim").value_or(0));
    out_ += StrCat("\"", name, "\"(", Operands(op), ") <{indices_are_sorted = ",
                   Bool(op.GetBool("indices_are_sorted").value_or(false)),
                   ", scatter_dimension_numbers = ", fields.Finish("scatter"),
                   ", unique_indices = ", Bool(op.GetBool("unique_indices").value_or(false)),
                   "}> (");
    for (int64_t r = 0; r < op.num_regions(); ++r) {
      if (r > 0) out_ += ", ";
      AppendRegion(*op.region(r), depth, /*block_header=*/true);
    }
    out_ += StrCat(") : ", FunctionalType(op));
  }

  void PrintDotGeneral(const Operation& op, const std::string& name, int /*depth*/) {
    const std::vector<int64_t> lhs_batching = op.GetInts("lhs_batching_dimensions");
    const std::vector<int64_t> rhs_batching = op.GetInts("rhs_batching_dimensions");
    out_ += StrCat(name, " ", Operands(op), ", ");
    if (!lhs_batching.empty() || !rhs_batching.empty()) {
      out_ += StrCat("batching_dims = ", FormatIntList(lhs_batching), " x ",
                     FormatIntList(rhs_batching), ", ");
    }
    out_ += StrCat("contracting_dims = ", FormatIntList(op.GetInts("lhs_contracting_dimensions")),
                   " x ", FormatIntList(op.GetInts("rhs_contracting_dimensions")));
    const std::vector<std::string> precision = op.GetStrings("precision_config");
    if (!precision.empty()) {
      out_ += ", precision = [";
      for (size_t i = 0; i < precision.size(); ++i) {
        if (i > 0) out_ += ", ";
        out_ += precision[i];
      }
      out_ += "]";
    }
    out_ += StrCat(" : ", FunctionalType(op));
  }

  // `stablehlo.reduce(%x init: %i), ... across dimensions = [..] : <type>` then, on the next
  // line, ` reducer(%acc: t, %in: t) ...  {` with the body (stablehlo's printReduceOp).
  // reduce_window and select_and_scatter have no pretty form: the generic one JAX writes, with
  // the window attributes present on the op in alphabetical order and padding as the spec's
  // [rank, 2] tensor.
  void PrintWindow(const Operation& op, const std::string& name, int depth) {
    std::vector<std::string> attrs;
    for (std::string_view attr : {"base_dilations", "padding", "window_dilations",
                                  "window_dimensions", "window_strides"}) {
      if (op.attribute(attr) == nullptr) continue;
      const std::vector<int64_t> values = op.GetInts(attr);
      if (attr != "padding") {
        attrs.push_back(StrCat(attr, " = ", FormatI64Array(values)));
        continue;
      }
      if (values.empty()) continue;  // rank 0: the default, and dense<> would not re-parse
      std::string pairs = "dense<[";
      for (size_t i = 0; i + 1 < values.size(); i += 2) {
        pairs += StrCat(i > 0 ? ", [" : "[", values[i], ", ", values[i + 1], "]");
      }
      attrs.push_back(StrCat("padding = ", pairs, "]> : tensor<", values.size() / 2, "x2xi64>"));
    }
    out_ += StrCat("\"", name, "\"(", Operands(op), ") <{");
    for (size_t i = 0; i < attrs.size(); ++i) out_ += StrCat(i > 0 ? ", " : "", attrs[i]);
    out_ += "}> (";
    for (int64_t r = 0; r < op.num_regions(); ++r) {
      if (r > 0) out_ += ", ";
      AppendRegion(*op.region(r), depth, /*block_header=*/true);
    }
    out_ += StrCat(") : ", FunctionalType(op));
  }

  void PrintReduce(const Operation& op, const std::string& name, int depth) {
    const int64_t pairs = op.num_operands() / 2;
    out_ += name;
    for (int64_t i = 0; i < pairs; ++i) {
      out_ += StrCat(i > 0 ? ", (" : "(", names_->Use(op.operand(i)),
                     " init: ", names_->Use(op.operand(i + pairs)), ")");
    }
    out_ += StrCat(" across dimensions = ", FormatIntList(op.GetInts("dimensions")), " : ",
                   FunctionalType(op), "\n");
    Indent(depth);
    out_ += " reducer";
    if (op.num_regions() == 0 || op.region(0)->entry_block() == nullptr) {
      out_ += " {\n";
      Indent(depth);
      out_ += "}";
      return;
    }
    const Block& body = *op.region(0)->entry_block();
    for (int64_t i = 0; i < pairs && i + pairs < body.num_arguments(); ++i) {
      out_ += StrCat("(", ArgumentDeclaration(body.argument(i)), ", ",
                     ArgumentDeclaration(body.argument(i + pairs)), ") ");
    }
    out_ += " ";
    AppendRegion(*op.region(0), depth, /*block_header=*/false);
  }

  // `stablehlo.while(%iterArg = %0, ...) : t, ...` then ` cond { ... } do { ... }`.
  void PrintWhile(const Operation& op, const std::string& name, int depth) {
    const Block* body = op.num_regions() == 2 ? op.region(1)->entry_block() : nullptr;
    out_ += name + "(";
    for (int64_t i = 0; i < op.num_operands(); ++i) {
      if (i > 0) out_ += ", ";
      const bool named = body != nullptr && i < body->num_arguments();
      out_ += StrCat(named ? names_->Use(body->argument(i)) : "%<<UNKNOWN SSA VALUE>>", " = ",
                     names_->Use(op.operand(i)));
    }
    out_ += ")";
    if (op.num_operands() > 0) out_ += StrCat(" : ", TypeList(OperandTypes(op)));
    out_ += "\n";
    Indent(depth);
    out_ += " cond ";
    if (op.num_regions() > 0) AppendRegion(*op.region(0), depth, /*block_header=*/false);
    out_ += " do ";
    if (op.num_regions() > 1) AppendRegion(*op.region(1), depth, /*block_header=*/false);
  }

  // `stablehlo.custom_call @target(...) {accy.operand_effects = [...], accy.version = N : i64,
  // output_operand_aliases = [...]} : <type>`; attributes sorted by name as MLIR prints them.
  void PrintKernelCall(const Operation& op, const std::string& /*name*/, int /*depth*/) {
    std::vector<std::string> attributes;
    if (op.attribute("operand_effects") != nullptr) {
      std::string effects = "accy.operand_effects = [";
      const std::vector<std::string> names = op.GetStrings("operand_effects");
      for (size_t i = 0; i < names.size(); ++i) {
        if (i > 0) effects += ", ";
        effects += FormatStringLiteral(names[i]);
      }
      attributes.push_back(effects + "]");
    }
    if (std::optional<int64_t> version = op.GetInt("version")) {
      attributes.push_back(StrCat("accy.version = ", *version, " : i64"));
    }
    // One alias per result that computes in place; a multi-result custom_call returns a tuple,
    // so its results are addressed by tuple index.
    const std::vector<int64_t> result_aliases = op.GetInts("result_aliases");
    std::string aliases;
    for (size_t i = 0; i < result_aliases.size(); ++i) {
      if (result_aliases[i] < 0) continue;
      if (!aliases.empty()) aliases += ", ";
      const std::string tuple_index = op.num_results() > 1 ? StrCat("[", i, "]") : "[]";
      aliases += StrCat("#stablehlo.output_operand_alias<output_tuple_indices = ", tuple_index,
                        ", operand_index = ", result_aliases[i], ", operand_tuple_indices = []>");
    }
    if (!aliases.empty()) attributes.push_back(StrCat("output_operand_aliases = [", aliases, "]"));
    // The kernel's own attributes (axis, epsilon, ...) as accy.<name>, read back by the importer.
    for (const NamedAttribute& attribute : op.attributes()) {
      const std::string& name = attribute.name;
      if (name == "call_target_name" || name == "version" || name == "operand_effects" ||
          name == "result_aliases") {
        continue;
      }
      attributes.push_back(StrCat("accy.", name, " = ", FormatKernelAttribute(attribute.value)));
    }
    std::sort(attributes.begin(), attributes.end());

    out_ += StrCat("stablehlo.custom_call ",
                   FormatSymbolName(op.GetString("call_target_name").value_or("")), "(",
                   Operands(op), ")");
    if (!attributes.empty()) {
      out_ += " {";
      for (size_t i = 0; i < attributes.size(); ++i) {
        if (i > 0) out_ += ", ";
        out_ += attributes[i];
      }
      out_ += "}";
    }
    out_ += StrCat(" : ", FunctionalType(op));
  }

  // A lapack op as JAX writes its custom_call: the routine's backend_config fields as ui8,
  // column-major matrix layouts (lapack_mapping.h LapackLayout) and factor aliasing a.
  void PrintLapack(const Operation& op, const std::string& /*name*/, int /*depth*/) {
    const std::string target = op.GetString("call_target_name").value_or("");
    std::string config;
    StatusOr<LapackTarget> parsed = ParseLapackTarget(target);
    if (parsed.ok()) {
      for (std::string_view field : LapackConfigFields(parsed->routine)) {
        config += StrCat(config.empty() ? "" : ", ", field, " = ",
                         op.GetInt(field).value_or(0), " : ui8");
      }
    }
    auto layouts = [&parsed](const std::vector<Value*>& values, bool is_result) {
      std::string out = "[";
      for (size_t i = 0; i < values.size(); ++i) {
        const int64_t rank = values[i]->type().rank();
        const bool matrix = parsed.ok() && IsLapackMatrix(parsed->routine, is_result, i);
        std::string dims;
        for (int64_t d : LapackLayout(rank, matrix)) {
          dims += StrCat(dims.empty() ? "" : ", ", d);
        }
        out += StrCat(i > 0 ? ", " : "", rank == 0 ? "dense<>" : StrCat("dense<[", dims, "]>"),
                      " : tensor<", rank, "xindex>");
      }
      return out + "]";
    };
    out_ += StrCat("stablehlo.custom_call ", FormatSymbolName(target), "(", Operands(op),
                   ") {mhlo.backend_config = {", config, "}, operand_layouts = ",
                   layouts(op.operands(), false),
                   ", output_operand_aliases = [#stablehlo.output_operand_alias<"
                   "output_tuple_indices = [",
                   op.num_results() == 1 ? "" : "0",
                   "], operand_index = 0, operand_tuple_indices = []>]"
                   ", result_layouts = ", layouts(op.results(), true), "} : ",
                   FunctionalType(op));
  }

  std::string out_;
  std::optional<SsaNames> names_;  // of the function being printed
};

ModulePrinter::PrintForm ModulePrinter::FormOf(OpKind kind) {
  static constexpr PrintForm kForms[] = {
#define ACCY_OP(kind, name, category, operands, results, classes, regions, pure, commutative, \
                work, rule, evaluate, print)                                                  \
  &ModulePrinter::Print##print,
#include "accy/ops.def"
#undef ACCY_OP
  };
  static_assert(std::size(kForms) == kNumOpKinds, "one print form per op table row");
  const size_t k = static_cast<size_t>(kind);
  return k < std::size(kForms) ? kForms[k] : nullptr;
}

}  // namespace

std::string PrintModule(const Module& module) { return ModulePrinter().Print(module); }

}  // namespace accy
