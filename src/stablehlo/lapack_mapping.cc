// LAPACK custom_calls to accy ops (lapack_mapping.h). The backend_config fields and layouts
// follow what jaxlib's lowering writes (jax/_src/lax/linalg.py; jaxlib/cpu/lapack_kernels.cc
// for the meaning of each field).
#include "src/stablehlo/lapack_mapping.h"

#include <algorithm>
#include <string>

#include "src/stablehlo/attribute_mapping.h"
#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {
namespace {

std::string Dims(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += StrCat(i > 0 ? ", " : "", dims[i]);
  return out + "]";
}

// `layouts` (operand_layouts or result_layouts) against JAX's for `types`.
Status CheckLayouts(const OpSyntax& op, std::string_view target, std::string_view name,
                    const std::vector<TensorType>& types, LapackRoutine routine) {
  const bool is_result = name == "result_layouts";
  const AttrValue* layouts = op.attribute(name);
  if (layouts == nullptr) {
    return UnimplementedAt(op.loc, StrCat("custom_call @", target, ": missing ", name,
                                          " (jaxlib's kernels take column-major matrices; "
                                          "accy binds the layouts JAX writes)"));
  }
  if (layouts->kind != AttrValue::Kind::kList || layouts->items.size() != types.size()) {
    return ErrorAt(layouts->loc, StrCat("custom_call @", target, ": ", name, " needs ",
                                        types.size(), " layouts, one per ",
                                        is_result ? "result" : "operand"));
  }
  for (size_t i = 0; i < types.size(); ++i) {
    ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> layout, ToInts(layouts->items[i], name));
    const bool matrix = IsLapackMatrix(routine, is_result, i);
    const std::vector<int64_t> expected = LapackLayout(types[i].rank(), matrix);
    if (layout != expected) {
      return UnimplementedAt(layouts->items[i].loc,
                             StrCat("custom_call @", target, ": ", name, " ", i, " is ",
                                    Dims(layout), ", accy binds ", Dims(expected), " (",
                                    matrix ? "column-major matrices" : "row-major",
                                    ", as JAX writes it)"));
    }
  }
  return absl::OkStatus();
}

// The attributes a LAPACK custom_call may carry: custom_call's own and the discardable ones
// JAX adds (mhlo.frontend_attributes, sdy.sharding_rule, ...).
Status CheckAttributeNames(const OpSyntax& op, std::string_view target) {
  static constexpr std::string_view kAllowed[] = {
      "call_target_name", "has_side_effect", "backend_config", "api_version",
      "output_operand_aliases", "operand_layouts", "result_layouts", "mhlo.backend_config"};
  for (const NamedAttr& attribute : op.attributes) {
    const std::string_view name = attribute.name;
    if (std::find(std::begin(kAllowed), std::end(kAllowed), name) != std::end(kAllowed) ||
        name.starts_with("mhlo.") || name.starts_with("sdy.")) {
      continue;
    }
    return ErrorAt(attribute.value.loc, StrCat("custom_call @", target, ": attribute '", name,
                                               "' is not one JAX writes for LAPACK targets"));
  }
  return absl::OkStatus();
}

// backend_config's fields of `routine`, as character codes.
StatusOr<std::vector<NamedAttribute>> ConfigFields(const OpSyntax& op, std::string_view target,
                                                   LapackRoutine routine) {
  const AttrValue* config = op.attribute("mhlo.backend_config");
  std::vector<NamedAttribute> fields;
  for (std::string_view field : LapackConfigFields(routine)) {
    const AttrValue* value = config != nullptr && config->kind == AttrValue::Kind::kDict
                                 ? config->Field(field)
                                 : nullptr;
    if (value == nullptr) {
      return ErrorAt(config != nullptr ? config->loc : op.loc,
                     StrCat("custom_call @", target, ": mhlo.backend_config needs the field ",
                            field, " (a ui8 character code)"));
    }
    if (value->kind != AttrValue::Kind::kInt ||
        !IsLapackConfigValue(routine, field, value->int_value)) {
      return ErrorAt(value->loc, StrCat("custom_call @", target, ": backend_config field ",
                                        field, " is not a character ", target, " accepts (",
                                        LapackConfigValues(routine, field), ")"));
    }
    fields.push_back({std::string(field), value->int_value});
  }
  return fields;
}

}  // namespace

StatusOr<LapackCallForm> ConvertLapackCall(const OpSyntax& op, std::string_view target,
                                           const std::vector<TensorType>& operand_types) {
  const AttrValue* target_value = op.attribute("call_target_name");
  StatusOr<LapackTarget> parsed = ParseLapackTarget(target);
  if (!parsed.ok()) return WithLoc(target_value != nullptr ? target_value->loc : op.loc,
                                   parsed.status());
  LapackCallForm form;
  form.target = *parsed;
  ACCY_RETURN_IF_ERROR(CheckAttributeNames(op, target));
  ACCY_RETURN_IF_ERROR(CheckLayouts(op, target, "operand_layouts", operand_types,
                                    form.target.routine));
  ACCY_RETURN_IF_ERROR(CheckLayouts(op, target, "result_layouts", op.result_types,
                                    form.target.routine));
  ACCY_ASSIGN_OR_RETURN(std::vector<NamedAttribute> fields,
                        ConfigFields(op, target, form.target.routine));
  if (form.target.routine == LapackRoutine::kTrsm) {
    // BLAS character arguments to triangular_solve's: diag 'U' = unit_diagonal, side 'L' =
    // left_side, uplo 'L' = lower, trans_x 'N' / 'T' / 'C' = NO_TRANSPOSE / TRANSPOSE / ADJOINT.
    auto code = [&fields](std::string_view name) {
      for (const NamedAttribute& field : fields) {
        if (field.name == name) return std::get<int64_t>(field.value);
      }
      return int64_t{0};
    };
    const int64_t trans = code("trans_x");
    form.attributes = {{"left_side", code("side") == 'L'},
                       {"lower", code("uplo") == 'L'},
                       {"unit_diagonal", code("diag") == 'U'},
                       {"transpose_a", std::string(trans == 'N'   ? "NO_TRANSPOSE"
                                                   : trans == 'T' ? "TRANSPOSE"
                                                                  : "ADJOINT")}};
    return form;
  }
  form.attributes.push_back({"call_target_name", std::string(target)});
  for (NamedAttribute& field : fields) form.attributes.push_back(std::move(field));
  return form;
}

}  // namespace accy::stablehlo_internal
