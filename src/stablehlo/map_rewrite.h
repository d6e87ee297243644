// stablehlo.map as elementwise ops on whole tensors (spec "map"): the computation applied to
// every element is the same ops applied to the operands when each op of the computation is
// elementwise, so the importer inlines the rewritten computation instead of keeping a map op
// (XLA's MapInliner does this for one-op computations). A pure function of its arguments.
#ifndef ACCY_SRC_STABLEHLO_MAP_REWRITE_H_
#define ACCY_SRC_STABLEHLO_MAP_REWRITE_H_

#include <functional>
#include <vector>

#include "accy/status.h"
#include "accy/types.h"
#include "src/stablehlo/syntax.h"

namespace accy::stablehlo_internal {

// The type of a value the computation reads from outside it (StableHLO regions are not
// isolated from above), or the lookup's error for an undefined name.
using OuterValueType = std::function<StatusOr<TensorType>(const ValueRef& ref)>;

// `map` is a stablehlo.map op whose operands have `operand_types`. Returns its computation with
// arguments and every op retyped from rank 0 to the operands' shape, each rank-0 constant
// followed by a broadcast_in_dim to that shape (the constant is renamed, the broadcast takes its
// name), and each value read from outside (rank 0, typed by `outer_type`) read through one
// broadcast_in_dim to that shape at the computation's start. Errors, located in the text:
//   kInvalidArgument: no operand, not one region and one result, operands of different shapes,
//     `dimensions` not [0, ..., rank-1], computation arguments not the rank-0 tensors of the
//     operands' element types, ops in the computation on tensors of rank > 0, a value of rank > 0
//     read from outside (spec "map" C1-C3), and `outer_type`'s errors;
//   kUnimplemented: an op in the computation that is neither elementwise nor a constant.
StatusOr<RegionSyntax> MapComputationOnTensors(const OpSyntax& map,
                                               const std::vector<TensorType>& operand_types,
                                               const OuterValueType& outer_type);

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_MAP_REWRITE_H_
