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
// The op forms are ModulePrinter's (printer_forms.h): these in this file, those in MLIR's
// generic form in printer_generic_forms.cc, the stablehlo.custom_call ones in
// printer_custom_call.cc.
//
// Reads the module only; thread-safe for concurrent prints of a finished module.
#include "accy/ir.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/ir/printer_attributes.h"
#include "src/ir/printer_forms.h"
#include "src/util/str_cat.h"

namespace accy {
namespace printer_internal {

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

std::string ModulePrinter::Print(const Module& module) {
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

void ModulePrinter::PrintFunction(const Function& function) {
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

std::string ModulePrinter::ArgumentDeclaration(const Value* arg) const {
  return StrCat(names_->Use(arg), ": ", arg->type().ToString());
}

std::string ModulePrinter::Operands(const Operation& op) const {
  std::string out;
  for (int64_t i = 0; i < op.num_operands(); ++i) {
    if (i > 0) out += ", ";
    out += names_->Use(op.operand(i));
  }
  return out;
}

// `{` newline, the ops one level deeper, `}` at `depth` (no newline after it), like MLIR's
// printRegion. `block_header` prints `^bb0(%arg: type, ...):` first (the generic op form).
void ModulePrinter::AppendRegion(const Region& region, int depth, bool block_header) {
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

void ModulePrinter::PrintOp(const Operation& op, int depth) {
  Indent(depth);
  out_ += names_->Definition(op);
  PrintOpBody(op, depth);
  out_ += "\n";
}

// Everything after `%N = `; ops with regions span several lines. The form is the op table's
// `print` column (include/accy/ops.def): ModulePrinter::Print<print>.
void ModulePrinter::PrintOpBody(const Operation& op, int depth) {
  const PrintForm form = FormOf(op.kind());
  ACCY_CHECK(form != nullptr && "PrintModule: unknown op kind");
  (this->*form)(op, QualifiedOpName(op.kind()), depth);
}

void ModulePrinter::PrintConstant(const Operation& op, const std::string& name, int /*depth*/) {
  const DenseElements* value = op.GetDense("value");
  out_ += StrCat(name, " ", value != nullptr ? FormatDenseElements(*value) : "dense<>",
                 " : ", op.result(0)->type().ToString());
}

void ModulePrinter::PrintSameType(const Operation& op, const std::string& name, int /*depth*/) {
  out_ += StrCat(name, " ", Operands(op), " : ", SameOperandsAndResultType(op));
}

void ModulePrinter::PrintReducePrecision(const Operation& op, const std::string& name,
                                         int /*depth*/) {
  out_ += StrCat(name, " ", Operands(op), ", format = e",
                 op.GetInt("exponent_bits").value_or(0), "m",
                 op.GetInt("mantissa_bits").value_or(0), " : ",
                 SameOperandsAndResultType(op));
}

void ModulePrinter::PrintChlo(const Operation& op, const std::string& name, int /*depth*/) {
  out_ += StrCat(name, " ", Operands(op), " : ", ChloType(op));
}

void ModulePrinter::PrintFunctional(const Operation& op, const std::string& name, int /*depth*/) {
  out_ += StrCat(name, " ", Operands(op), " : ", FunctionalType(op));
}

void ModulePrinter::PrintCompare(const Operation& op, const std::string& name, int /*depth*/) {
  // The enum attributes print with a leading space of their own, hence two spaces.
  out_ += StrCat(name, "  ", op.GetString("comparison_direction").value_or(""), ", ",
                 Operands(op));
  if (std::optional<std::string> type = op.GetString("compare_type")) {
    out_ += StrCat(",  ", *type);
  }
  out_ += StrCat(" : ", FunctionalType(op));
}

void ModulePrinter::PrintSelect(const Operation& op, const std::string& name, int /*depth*/) {
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

void ModulePrinter::PrintBroadcastInDim(const Operation& op, const std::string& name,
                                        int /*depth*/) {
  out_ += StrCat(name, " ", Operands(op), ", dims = ",
                 FormatIntList(op.GetInts("broadcast_dimensions")), " : ",
                 FunctionalType(op));
}

void ModulePrinter::PrintTranspose(const Operation& op, const std::string& name, int /*depth*/) {
  out_ += StrCat(name, " ", Operands(op), ", dims = ",
                 FormatIntList(op.GetInts("permutation")), " : ", FunctionalType(op));
}

void ModulePrinter::PrintReverse(const Operation& op, const std::string& name, int /*depth*/) {
  out_ += StrCat(name, " ", Operands(op), ", dims = ",
                 FormatIntList(op.GetInts("dimensions")), " : ",
                 SameOperandsAndResultType(op));
}

void ModulePrinter::PrintSlice(const Operation& op, const std::string& name, int /*depth*/) {
  out_ += StrCat(name, " ", Operands(op), " ", SliceRanges(op), " : ", FunctionalType(op));
}

void ModulePrinter::PrintPad(const Operation& op, const std::string& name, int /*depth*/) {
  out_ += StrCat(name, " ", Operands(op),
                 ", low = ", FormatIntList(op.GetInts("edge_padding_low")),
                 ", high = ", FormatIntList(op.GetInts("edge_padding_high")),
                 ", interior = ", FormatIntList(op.GetInts("interior_padding")), " : ",
                 FunctionalType(op));
}

void ModulePrinter::PrintConcatenate(const Operation& op, const std::string& name, int /*depth*/) {
  out_ += StrCat(name, " ", Operands(op), ", dim = ", op.GetInt("dimension").value_or(0),
                 " : ", FunctionalType(op));
}

void ModulePrinter::PrintIota(const Operation& op, const std::string& name, int /*depth*/) {
  out_ += StrCat(name, " dim = ", op.GetInt("iota_dimension").value_or(0), " : ",
                 op.result(0)->type().ToString());
}

void ModulePrinter::PrintDynamicSlice(const Operation& op, const std::string& name, int /*depth*/) {
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

void ModulePrinter::PrintConvolution(const Operation& op, const std::string& name, int /*depth*/) {
  out_ += StrCat(name, "(", Operands(op), ") ", FormatConvolutionAttributes(op), " : ",
                 FunctionalType(op));
}

void ModulePrinter::PrintTopK(const Operation& op, const std::string& /*name*/, int /*depth*/) {
  // CHLO's assembly format: `chlo.top_k(%x, k = 3) : tensor<..> -> (tensor<..>, ..)`.
  out_ += StrCat("chlo.top_k(", Operands(op), ", k = ", op.GetInt("k").value_or(0),
                 ") : ", op.operand(0)->type().ToString(), " -> (",
                 TypeList(ResultTypes(op)), ")");
}

void ModulePrinter::PrintRngBitGenerator(const Operation& op, const std::string& name,
                                         int /*depth*/) {
  // StablehloOps.td's `$initial_state `,` `algorithm` `=` $rng_algorithm attr-dict `:`
  // functional-type`; the two spaces after '=' are what stablehlo-opt prints (its enum
  // printer adds one), as in the testdata files.
  out_ += StrCat(name, " ", Operands(op), ", algorithm =  ",
                 op.GetString("rng_algorithm").value_or("DEFAULT"), " : ",
                 FunctionalType(op));
}

void ModulePrinter::PrintReturn(const Operation& op, const std::string& /*name*/, int /*depth*/) {
  const Region* region = op.parent_block() != nullptr ? op.parent_block()->parent() : nullptr;
  const bool in_function = region == nullptr || region->parent_op() == nullptr;
  out_ += in_function ? "return" : "stablehlo.return";
  if (op.num_operands() > 0) {
    out_ += StrCat(" ", Operands(op), " : ", TypeList(OperandTypes(op)));
  }
}

// `[1:3, 0:4:2]`: start:limit, with `:stride` only when the stride is not 1.
std::string ModulePrinter::SliceRanges(const Operation& op) {
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

void ModulePrinter::PrintDotGeneral(const Operation& op, const std::string& name, int /*depth*/) {
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
void ModulePrinter::PrintReduce(const Operation& op, const std::string& name, int depth) {
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
void ModulePrinter::PrintWhile(const Operation& op, const std::string& name, int depth) {
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

}  // namespace printer_internal

std::string PrintModule(const Module& module) {
  return printer_internal::ModulePrinter().Print(module);
}

}  // namespace accy
