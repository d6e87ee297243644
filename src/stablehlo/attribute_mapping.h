// From StableHLO's attributes (as parsed, syntax.h) to accy IR attributes (the table in
// include/accy/ir.h): index lists, enums, the gather/scatter/dot dimension-number structs, and
// the accy-only custom_call attributes of kernel_call.
//
// Pure functions; thread-safe. Errors name the attribute and the op, at the attribute's location.
#ifndef ACCY_SRC_STABLEHLO_ATTRIBUTE_MAPPING_H_
#define ACCY_SRC_STABLEHLO_ATTRIBUTE_MAPPING_H_

#include <optional>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "accy/stablehlo.h"
#include "src/stablehlo/syntax.h"

namespace accy::stablehlo_internal {

// The IR attributes of `op` (of kind `kind`): StableHLO names mapped per the ir.h table, struct
// attributes expanded into their fields (missing fields take StableHLO's defaults), defaults
// added for gather/scatter booleans. Discardable attributes (names with a '.') are dropped;
// other unknown attributes are kUnimplemented, wrongly kinded ones kInvalidArgument.
StatusOr<std::vector<NamedAttribute>> ConvertAttributes(OpKind kind, const OpSyntax& op);

// kernel_call's spec from a custom_call printed by PrintModule (`accy.version`,
// `accy.operand_effects`, `output_operand_aliases`); `num_results` sizes result_aliases.
StatusOr<KernelCallSpec> ConvertKernelCallSpec(const OpSyntax& op, const std::string& target,
                                               int64_t num_results);

// The check of a `check.*` op or `custom_call @check.*` (nullopt for any other op); an unknown
// check name is kUnimplemented.
StatusOr<std::optional<CheckKind>> CheckKindOf(const OpSyntax& op);

// Integer lists from array<i64: ...>, [1, 2] or a dense integer tensor.
StatusOr<std::vector<int64_t>> ToInts(const AttrValue& value, std::string_view name);
// The `padding` of reduce_window and select_and_scatter, dense<[[low, high], ...]> :
// tensor<Nx2xi64>, as the flat list low0, high0, low1, ... (accy/ir.h); anything else is an
// error at the attribute naming what was expected.
StatusOr<std::vector<int64_t>> ToPaddingPairs(const AttrValue& value, std::string_view name);

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_ATTRIBUTE_MAPPING_H_
