// stablehlo.map as elementwise ops on whole tensors (spec "map"): the computation applied to
// every element is the same ops applied to the operands when each op of the computation is
// elementwise, so the importer inlines the rewritten computation instead of keeping a map op
// (XLA's MapInliner does this for one-op computations).
#ifndef ACCY_SRC_STABLEHLO_MAP_REWRITE_H_
#define ACCY_SRC_STABLEHLO_MAP_REWRITE_H_

#include <vector>

#include "accy/status.h"
#include "accy/types.h"
#include "src/stablehlo/syntax.h"

namespace accy::stablehlo_internal {

// `map` is a stablehlo.map op whose operands have `operand_types`. Returns its computation with
// arguments and every op retyped from rank 0 to the operands' shape, and each rank-0 constant
// followed by a broadcast_in_dim to that shape (the constant is renamed, the broadcast takes its
// name). Errors, located in the text:
//   kInvalidArgument: no operand, not one region and one result, operands of different shapes,
//     `dimensions` not [0, ..., rank-1], computation arguments not the rank-0 tensors of the
//     operands' element types, ops in the computation on tensors of rank > 0 (spec "map" C1-C3);
//   kUnimplemented: an op in the computation that is neither elementwise nor a constant.
StatusOr<RegionSyntax> MapComputationOnTensors(const OpSyntax& map,
                                               const std::vector<TensorType>& operand_types);

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_MAP_REWRITE_H_
