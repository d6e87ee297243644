// The op forms of ModulePrinter (printer_forms.h) for ops that stablehlo-opt prints in MLIR's
// generic form, having no pretty form of their own: sort, triangular_solve, batch_norm_*, case,
// the collectives, gather, scatter, reduce_window and select_and_scatter
// (`"stablehlo.gather"(%x, %i) <{...}> : (...) -> ...`), attributes in alphabetical order.
//
// Reads the module only, like the rest of the printer (printer.cc).
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "accy/ir.h"
#include "src/ir/printer_attributes.h"
#include "src/ir/printer_forms.h"
#include "src/util/str_cat.h"

namespace accy::printer_internal {
namespace {

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

}  // namespace

void ModulePrinter::PrintSort(const Operation& op, const std::string& name, int depth) {
  // sort has no pretty form: the generic one JAX writes.
  out_ += StrCat("\"", name, "\"(", Operands(op), ") <{dimension = ",
                 op.GetInt("dimension").value_or(0), " : i64, is_stable = ",
                 Bool(op.GetBool("is_stable").value_or(false)), "}> (");
  if (op.num_regions() > 0) AppendRegion(*op.region(0), depth, /*block_header=*/true);
  out_ += StrCat(") : ", FunctionalType(op));
}

void ModulePrinter::PrintTriangularSolve(const Operation& op, const std::string& name,
                                         int /*depth*/) {
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

void ModulePrinter::PrintBatchNorm(const Operation& op, const std::string& name, int /*depth*/) {
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

void ModulePrinter::PrintCase(const Operation& op, const std::string& name, int depth) {
  // The generic form, as stablehlo-opt prints case: `"stablehlo.case"(%i) ({...}, ...)`.
  out_ += StrCat("\"", name, "\"(", Operands(op), ") (");
  for (int64_t r = 0; r < op.num_regions(); ++r) {
    if (r > 0) out_ += ", ";
    AppendRegion(*op.region(r), depth, /*block_header=*/false);
  }
  out_ += StrCat(") : ", FunctionalType(op));
}

void ModulePrinter::PrintCollective(const Operation& op, const std::string& name, int depth) {
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

void ModulePrinter::PrintGather(const Operation& op, const std::string& name, int /*depth*/) {
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

void ModulePrinter::PrintScatter(const Operation& op, const std::string& name, int depth) {
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

// reduce_window and select_and_scatter have no pretty form: the generic one JAX writes, with
// the window attributes present on the op in alphabetical order and padding as the spec's
// [rank, 2] tensor.
void ModulePrinter::PrintWindow(const Operation& op, const std::string& name, int depth) {
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

}  // namespace accy::printer_internal
