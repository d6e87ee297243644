// The op forms of ModulePrinter (printer_forms.h) that print as `stablehlo.custom_call`: accy's
// cumsum and kernel calls (`@accy.cumsum`, `@<target>` with `accy.*` attributes, read back by
// the importer) and the lapack ops as JAX writes their LAPACK custom_calls.
//
// Reads the module only, like the rest of the printer (printer.cc).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "accy/ir.h"
#include "src/ir/lapack_targets.h"
#include "src/ir/printer_attributes.h"
#include "src/ir/printer_forms.h"
#include "src/util/str_cat.h"

namespace accy::printer_internal {
namespace {

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

}  // namespace

void ModulePrinter::PrintCumsum(const Operation& op, const std::string& /*name*/, int /*depth*/) {
  out_ += StrCat("stablehlo.custom_call @accy.cumsum(", Operands(op),
                 ") {accy.dimension = ", op.GetInt("dimension").value_or(0), " : i64} : ",
                 FunctionalType(op));
}

// `stablehlo.custom_call @target(...) {accy.operand_effects = [...], accy.version = N : i64,
// output_operand_aliases = [...]} : <type>`; attributes sorted by name as MLIR prints them.
void ModulePrinter::PrintKernelCall(const Operation& op, const std::string& /*name*/,
                                    int /*depth*/) {
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
void ModulePrinter::PrintLapack(const Operation& op, const std::string& /*name*/, int /*depth*/) {
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

}  // namespace accy::printer_internal
