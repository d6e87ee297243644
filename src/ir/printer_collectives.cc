// The collectives' attribute dictionaries in StableHLO text (the generic op form the
// StableHLO test files use; spec "all_reduce" .. "collective_broadcast").
#include <string>
#include <vector>

#include "src/ir/collective_attributes.h"
#include "src/ir/printer_attributes.h"
#include "src/util/str_cat.h"

namespace accy::printer_internal {

std::string FormatCollectiveAttributes(const Operation& op) {
  const AttributeValue* groups = op.attribute("replica_groups");
  const AttributeValue* pairs = op.attribute("source_target_pairs");
  std::vector<std::string> fields;
  // MLIR prints attribute dictionaries in alphabetical order.
  if (auto v = op.GetInt("all_gather_dim")) fields.push_back(StrCat("all_gather_dim = ", *v, " : i64"));
  if (auto v = op.GetInt("channel_id")) {
    // type 1 = DEVICE_TO_DEVICE, what JAX writes for a channel.
    fields.push_back(StrCat("channel_handle = #stablehlo.channel_handle<handle = ", *v,
                            ", type = ", *v > 0 ? 1 : 0, ">"));
  }
  if (op.GetBool("has_dynamic_root").value_or(false)) fields.push_back("has_dynamic_root");
  if (auto v = op.GetInt("concat_dimension")) {
    fields.push_back(StrCat("concat_dimension = ", *v, " : i64"));
  }
  if (groups != nullptr && std::holds_alternative<DenseElements>(*groups)) {
    fields.push_back(
        StrCat("replica_groups = ", FormatDenseElements(std::get<DenseElements>(*groups)), " : ",
               std::get<DenseElements>(*groups).type.ToString()));
  }
  if (auto v = op.GetInt("scatter_dimension")) {
    fields.push_back(StrCat("scatter_dimension = ", *v, " : i64"));
  }
  if (pairs != nullptr && std::holds_alternative<DenseElements>(*pairs)) {
    fields.push_back(
        StrCat("source_target_pairs = ", FormatDenseElements(std::get<DenseElements>(*pairs)),
               " : ", std::get<DenseElements>(*pairs).type.ToString()));
  }
  if (auto v = op.GetInt("split_count")) fields.push_back(StrCat("split_count = ", *v, " : i64"));
  if (auto v = op.GetInt("split_dimension")) {
    fields.push_back(StrCat("split_dimension = ", *v, " : i64"));
  }
  if (op.GetBool("use_global_device_ids").value_or(false)) {
    fields.push_back("use_global_device_ids");
  }
  if (fields.empty()) return "";
  std::string out = " {";
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ", ";
    out += fields[i];
  }
  return out + "}";
}

}  // namespace accy::printer_internal
