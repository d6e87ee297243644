// How a collective op splits the SPMD grid into process groups (StableHLO spec "Collective
// ops": cross_replica, cross_partition, cross_replica_and_partition, flattened_ids) and which
// strategy each op uses (the op sections' "splits the StableHLO grid into process_groups as
// follows"). Process ids are flattened: replica_id * num_partitions + partition_id, which is
// also the process's Communicator rank (accy/collectives.h).
//
// Shared by the runtime (src/runtime/collective_kernel.h) and the reference evaluator; pure
// functions, thread-safe.
#ifndef ACCY_SRC_COLLECTIVES_PROCESS_GROUPS_H_
#define ACCY_SRC_COLLECTIVES_PROCESS_GROUPS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "src/ir/collective_attributes.h"

namespace accy::collectives {

struct Grid {
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  int64_t size() const { return num_replicas * num_partitions; }
};

enum class GroupMode : uint8_t {
  kCrossReplica,
  kCrossPartition,
  kCrossReplicaAndPartition,
  kFlattenedIds,
};
// "cross_replica", "cross_partition", "cross_replica_and_partition", "flattened_ids".
std::string_view GroupModeName(GroupMode mode);

// The strategy of a collective of `kind` with `attrs`: all_reduce, all_gather, reduce_scatter
// and collective_reduce by channel_id and use_global_device_ids (channel_id <= 0:
// cross_replica; > 0: cross_replica_and_partition, or flattened_ids with
// use_global_device_ids); all_to_all, collective_permute and collective_broadcast by channel_id
// alone (<= 0: cross_replica; > 0: cross_partition).
GroupMode GroupModeOf(OpKind kind, const ir_internal::CollectiveAttributes& attrs);

// The process groups (flattened process ids, in group order) of a collective of `kind` on
// `grid`. replica_groups -1 padding is dropped; an empty replica_groups means one group of
// every replica (cross_replica, cross_replica_and_partition) or partition (cross_partition).
// Errors (kInvalidArgument naming the op, the strategy and the id): an id outside the grid
// (replica ids < num_replicas, partition ids < num_partitions, flattened ids < grid size),
// flattened_ids with empty replica_groups, groups that do not cover every replica / partition
// / process (spec C3 of each op; collective_broadcast may leave processes out), and groups of
// different sizes where the result's shape depends on the size (all_gather, reduce_scatter,
// all_to_all: their size must also match `required_size` when that is >= 0).
StatusOr<std::vector<std::vector<int>>> ProcessGroups(
    OpKind kind, const ir_internal::CollectiveAttributes& attrs, const Grid& grid,
    int64_t required_size = -1);

// The group holding `process`, or null when none does (collective_broadcast).
const std::vector<int>* GroupOf(const std::vector<std::vector<int>>& groups, int process);

// collective_permute: where `process` sends to and receives from (-1: none) on `grid`:
// cross_replica pairs are replica ids within the process's partition, cross_partition pairs
// partition ids within its replica. kInvalidArgument for an id outside the grid.
struct PermutePeers {
  int send_to = -1;
  int recv_from = -1;
};
StatusOr<PermutePeers> PermutePeersOf(const ir_internal::CollectiveAttributes& attrs,
                                      const Grid& grid, int process);

}  // namespace accy::collectives

#endif  // ACCY_SRC_COLLECTIVES_PROCESS_GROUPS_H_
