// Input-output aliases written as parameter attributes (input_output_aliases.h).
#include "src/stablehlo/input_output_aliases.h"

#include <algorithm>

#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {

StatusOr<std::vector<AliasSyntax>> AliasesOf(const FunctionSyntax& function) {
  std::vector<AliasSyntax> aliases;
  const auto declared_results = static_cast<int64_t>(function.result_types.size());
  for (size_t i = 0; i < function.arg_attrs.size(); ++i) {
    for (const NamedAttr& attr : function.arg_attrs[i]) {
      if (attr.name != "tf.aliasing_output") continue;
      if (attr.value.kind != AttrValue::Kind::kInt) {
        return ErrorAt(attr.value.loc, StrCat("tf.aliasing_output of parameter ", i, " of @",
                                              function.name,
                                              " must be an integer result index, got ",
                                              attr.value.KindName()));
      }
      const int64_t result = attr.value.int_value;
      if (result < 0 || result >= declared_results) {
        return ErrorAt(attr.value.loc,
                       StrCat("tf.aliasing_output of parameter ", i, " of @", function.name,
                              " names result ", result, ", but @", function.name, " has ",
                              declared_results, " results"));
      }
      const TensorType& parameter_type = function.body.arg_types[i];
      const TensorType& result_type = function.result_types[static_cast<size_t>(result)];
      if (parameter_type != result_type) {
        return ErrorAt(attr.value.loc,
                       StrCat("tf.aliasing_output of @", function.name, ": parameter ", i, " (",
                              parameter_type.ToString(), ") and result ", result, " (",
                              result_type.ToString(), ") have different types"));
      }
      for (const AliasSyntax& other : aliases) {
        if (other.alias.parameter == static_cast<int64_t>(i) || other.alias.result == result) {
          return ErrorAt(attr.value.loc,
                         StrCat("tf.aliasing_output of @", function.name, ": parameter ", i,
                                " -> result ", result, " conflicts with parameter ",
                                other.alias.parameter, " -> result ", other.alias.result,
                                " (each parameter and result aliases once)"));
        }
      }
      aliases.push_back({{static_cast<int64_t>(i), result}, attr.value.loc});
    }
  }
  // `jax.buffer_donor = true`: a donated parameter with no result named (XLA's buffer donor).
  // It takes the first result of its type that no alias has yet, in parameter order; one with
  // no such result stays unaliased (a donation is permission, not a requirement).
  for (size_t i = 0; i < function.arg_attrs.size(); ++i) {
    for (const NamedAttr& attr : function.arg_attrs[i]) {
      if (attr.name != "jax.buffer_donor") continue;
      if (attr.value.kind != AttrValue::Kind::kBool) {
        return ErrorAt(attr.value.loc, StrCat("jax.buffer_donor of parameter ", i, " of @",
                                              function.name, " must be true or false, got ",
                                              attr.value.KindName()));
      }
      const bool aliased = std::any_of(aliases.begin(), aliases.end(), [&](const AliasSyntax& a) {
        return a.alias.parameter == static_cast<int64_t>(i);
      });
      if (!attr.value.bool_value || aliased) continue;
      for (size_t r = 0; r < function.result_types.size(); ++r) {
        const bool taken = std::any_of(aliases.begin(), aliases.end(), [&](const AliasSyntax& a) {
          return a.alias.result == static_cast<int64_t>(r);
        });
        if (taken || function.result_types[r] != function.body.arg_types[i]) continue;
        aliases.push_back({{static_cast<int64_t>(i), static_cast<int64_t>(r)}, attr.value.loc});
        break;
      }
    }
  }
  return aliases;
}

}  // namespace accy::stablehlo_internal
