// From a custom_call of a LAPACK target, as JAX's CPU lowering writes it
// (`stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8},
// operand_layouts = [...], result_layouts = [...], ...}`), to the attributes of accy's lapack op
// (or, for trsm, of triangular_solve). The layouts are read, not dropped: jaxlib's kernels take
// column-major matrices, and accy's lapack op is defined for exactly those layouts.
// Pure functions; thread-safe. Errors name the target, at the attribute's location.
#ifndef ACCY_SRC_STABLEHLO_LAPACK_MAPPING_H_
#define ACCY_SRC_STABLEHLO_LAPACK_MAPPING_H_

#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "src/ir/lapack_targets.h"
#include "src/stablehlo/syntax.h"

namespace accy::stablehlo_internal {

struct LapackCallForm {
  LapackTarget target;
  // The lapack op's attributes (call_target_name and the routine's backend_config fields), or
  // for trsm triangular_solve's (left_side, lower, unit_diagonal, transpose_a).
  std::vector<NamedAttribute> attributes;
};

// Checks `op` (a custom_call of `target`, IsLapackTargetName) and converts its attributes.
// kUnimplemented naming the target for a target ParseLapackTarget rejects (complex, unbound,
// pre-FFI) or for operand_layouts / result_layouts other than JAX's (column-major matrices:
// minor-to-major [r-2, r-1, r-3, ..., 0] for a rank-r matrix operand, row-major for the others);
// kInvalidArgument for a missing or wrongly kinded backend_config field, layouts of the wrong
// count, or an attribute that is neither custom_call's nor one JAX adds (mhlo.*, sdy.*).
// `operand_types` are the types of the operands' values.
StatusOr<LapackCallForm> ConvertLapackCall(const OpSyntax& op, std::string_view target,
                                           const std::vector<TensorType>& operand_types);

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_LAPACK_MAPPING_H_
