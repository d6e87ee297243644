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

// dot_general's `algorithm` (spec "dot_general": #stablehlo.dot_algorithm, C22-C23) on `op`,
// whose operand types the text gives. Returns std::nullopt when it names what accy computes
// for the operand types anyway (each operand at its own precision, one component and one
// primitive operation, accumulation in f64 for f64 operands and in f32 for f32, bf16 and f16
// ones; allow_imprecise_accumulation either way: accy is not less precise), and bf16 for
// BF16_BF16_F32 on f32 operands (JAX's DotAlgorithmPreset.BF16_BF16_F32: each operand rounded
// to bf16, f32 accumulation), which the importer computes by converting both operands to bf16
// first (exact: products of bf16 values are exact in f32). Errors, located: kInvalidArgument
// for a malformed attribute or missing operand types; kUnimplemented naming the fields for any
// other algorithm (tf32, bf16_6x, several components, ...).
StatusOr<std::optional<ElementType>> DotAlgorithmOperandType(const AttrValue& value,
                                                             const OpSyntax& op);
// `operands` of the dot_general `op`, each converted (in `fb`) to the element type its
// `algorithm` rounds them to (DotAlgorithmOperandType), or unchanged; its errors.
StatusOr<std::vector<Value*>> RoundDotOperands(FunctionBuilder& fb, const OpSyntax& op,
                                               std::vector<Value*> operands);

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
