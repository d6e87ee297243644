// Sharding custom_calls (sharding_calls.h).
#include "src/stablehlo/sharding_calls.h"

#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {

bool IsShardingTarget(std::string_view target) {
  return target == "Sharding" || target == "SPMDFullToShardShape" ||
         target == "SPMDShardToFullShape";
}

Status CheckShardingCall(std::string_view target, const std::vector<TensorType>& operand_types,
                         const std::vector<TensorType>& result_types, int64_t num_partitions) {
  if (num_partitions > 1) {
    return absl::UnimplementedError(StrCat(
        "custom_call @", target, " in a module of ", num_partitions,
        " partitions: partitioning a global-view program by its shardings (XLA's SPMD "
        "partitioner) is not supported; accy runs per-partition programs (collectives over "
        "per-shard values) or programs of one partition"));
  }
  if (operand_types.size() != 1 || result_types.size() != 1 ||
      operand_types[0] != result_types[0]) {
    std::string operands, results;
    for (const TensorType& t : operand_types) operands += (operands.empty() ? "" : ", ") + t.ToString();
    for (const TensorType& t : result_types) results += (results.empty() ? "" : ", ") + t.ToString();
    return absl::InvalidArgumentError(StrCat(
        "custom_call @", target, " in a module of one partition must take one operand to one "
        "result of the same type (the identity), got (", operands, ") -> (", results, ")"));
  }
  return absl::OkStatus();
}

}  // namespace accy::stablehlo_internal
