// The collectives' attributes (accy/ops.def, "Collectives") read in one place, so the verifier,
// the printer, the reference evaluator and the runtime agree on names and defaults (StableHLO
// spec "all_reduce" ... "collective_broadcast": channel_handle absent = channel 0, i.e. no
// channel; use_global_device_ids absent = false).
//
// Pure functions over values the caller owns; thread-safe.
#ifndef ACCY_SRC_IR_COLLECTIVE_ATTRIBUTES_H_
#define ACCY_SRC_IR_COLLECTIVE_ATTRIBUTES_H_

#include <cstdint>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"

namespace accy::ir_internal {

struct CollectiveAttributes {
  // replica_groups as given: rows of equal length (the tensor's second dim), -1 padding ragged
  // rows. Empty for replica_id / partition_id / collective_permute, or when the program gives
  // an empty tensor.
  std::vector<std::vector<int64_t>> replica_groups;
  int64_t channel_id = 0;               // channel_handle's handle; 0 when absent
  bool use_global_device_ids = false;
  // collective_broadcast: the last operand gives each data operand's root (its position in
  // the group) instead of the group's first process.
  bool has_dynamic_root = false;
  // collective_permute: (source, target) pairs of source_target_pairs.
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;
  // all_gather_dim, scatter_dimension, split_dimension, concat_dimension, split_count: -1 when
  // the op has no such attribute.
  int64_t all_gather_dim = -1;
  int64_t scatter_dimension = -1;
  int64_t split_dimension = -1;
  int64_t concat_dimension = -1;
  int64_t split_count = -1;
};

// The attributes of a collective op of `kind`. kInvalidArgument "<op>: ..." for an attribute of
// the wrong kind, a replica_groups / source_target_pairs that is not a 2-D integer tensor
// (source_target_pairs: [N, 2]), or a required per-op attribute that is missing.
StatusOr<CollectiveAttributes> ReadCollectiveAttributes(OpKind kind,
                                                        std::span<const NamedAttribute> attributes);

// The integers of a dense integer tensor in row-major order (sign-extended for signed types).
// kInvalidArgument naming `what` when the element type is not an integer type.
StatusOr<std::vector<int64_t>> DenseIntegers(const DenseElements& dense, std::string_view what);

// A 2-D i64 DenseElements holding `rows` (equal lengths; an empty list is tensor<0x0xi64>).
DenseElements DenseI64Matrix(const std::vector<std::vector<int64_t>>& rows);

}  // namespace accy::ir_internal

#endif  // ACCY_SRC_IR_COLLECTIVE_ATTRIBUTES_H_
