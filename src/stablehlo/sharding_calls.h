// The custom_calls JAX writes to carry shardings (`stablehlo.custom_call @Sharding(%x)
// {mhlo.sharding = "..."}`, and shard_map's `@SPMDFullToShardShape` / `@SPMDShardToFullShape`
// around a per-shard body): annotations for XLA's SPMD partitioner, which turns a global-view
// program into per-device code. On a module of one partition they change nothing (the shard is
// the whole array), so the importer takes them as the identity of their operand. accy does not
// partition global-view programs: in a module of more partitions they are refused, as is any
// form that is not one operand to one result of the same type. Pure; thread-safe.
#ifndef ACCY_SRC_STABLEHLO_SHARDING_CALLS_H_
#define ACCY_SRC_STABLEHLO_SHARDING_CALLS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "accy/ir.h"

namespace accy::stablehlo_internal {

// Whether `target` is one of the sharding custom_call targets above.
bool IsShardingTarget(std::string_view target);

// OK when a custom_call of sharding `target` with `operand_types` and `result_types`, in a
// module of `num_partitions` partitions, is the identity of its operand. kUnimplemented for
// num_partitions > 1 (naming the target and the count: SPMD partitioning of a global-view
// program is not supported); kInvalidArgument for other than one operand and one result of the
// same type (naming both types).
Status CheckShardingCall(std::string_view target, const std::vector<TensorType>& operand_types,
                         const std::vector<TensorType>& result_types, int64_t num_partitions);

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_SHARDING_CALLS_H_
