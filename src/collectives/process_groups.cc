#include "src/collectives/process_groups.h"

#include <algorithm>
#include <set>
#include <string>

#include "src/util/str_cat.h"

namespace accy::collectives {
namespace {

using ir_internal::CollectiveAttributes;

Status Error(OpKind kind, GroupMode mode, std::string_view message) {
  return absl::InvalidArgumentError(
      StrCat(OpName(kind), " (", GroupModeName(mode), "): ", message));
}

std::string GroupText(const std::vector<int>& group) {
  std::string out = "[";
  for (size_t i = 0; i < group.size(); ++i) out += StrCat(i > 0 ? ", " : "", group[i]);
  return out + "]";
}

}  // namespace

std::string_view GroupModeName(GroupMode mode) {
  switch (mode) {
    case GroupMode::kCrossReplica:
      return "cross_replica";
    case GroupMode::kCrossPartition:
      return "cross_partition";
    case GroupMode::kCrossReplicaAndPartition:
      return "cross_replica_and_partition";
    case GroupMode::kFlattenedIds:
      return "flattened_ids";
  }
  return "unknown";
}

GroupMode GroupModeOf(OpKind kind, const CollectiveAttributes& attrs) {
  switch (kind) {
    case OpKind::kAllToAll:
    case OpKind::kCollectivePermute:
    case OpKind::kCollectiveBroadcast:
      return attrs.channel_id > 0 ? GroupMode::kCrossPartition : GroupMode::kCrossReplica;
    default:
      if (attrs.channel_id <= 0) return GroupMode::kCrossReplica;
      return attrs.use_global_device_ids ? GroupMode::kFlattenedIds
                                         : GroupMode::kCrossReplicaAndPartition;
  }
}

StatusOr<std::vector<std::vector<int>>> ProcessGroups(OpKind kind,
                                                      const CollectiveAttributes& attrs,
                                                      const Grid& grid, int64_t required_size) {
  const GroupMode mode = GroupModeOf(kind, attrs);
  const int64_t R = grid.num_replicas;
  const int64_t P = grid.num_partitions;
  // The id lists the attribute gives, padding dropped; empty = one group of everything.
  int64_t id_limit = mode == GroupMode::kCrossPartition ? P
                     : mode == GroupMode::kFlattenedIds ? R * P
                                                        : R;
  std::vector<std::vector<int64_t>> id_groups;
  for (const std::vector<int64_t>& row : attrs.replica_groups) {
    std::vector<int64_t> ids;
    for (int64_t id : row) {
      if (id == -1) continue;
      if (id < 0 || id >= id_limit) {
        return Error(kind, mode, StrCat("replica_groups holds id ", id, ", outside [0, ",
                                        id_limit, ") on a grid of ", R, " replicas x ", P,
                                        " partitions"));
      }
      ids.push_back(id);
    }
    if (!ids.empty()) id_groups.push_back(std::move(ids));
  }
  if (id_groups.empty() && !attrs.replica_groups.empty()) {
    // Rows of -1 padding only: no group (not "every replica in one").
    if (kind == OpKind::kCollectiveBroadcast) return std::vector<std::vector<int>>{};
    return Error(kind, mode, StrCat("replica_groups holds only -1 padding: it does not cover "
                                    "id 0 (of ", id_limit, "); every id must be in one group"));
  }
  if (id_groups.empty()) {
    if (mode == GroupMode::kFlattenedIds) {
      return Error(kind, mode, "use_global_device_ids needs explicit replica_groups");
    }
    std::vector<int64_t> all(static_cast<size_t>(id_limit));
    for (int64_t i = 0; i < id_limit; ++i) all[static_cast<size_t>(i)] = i;
    id_groups.push_back(std::move(all));
  }
  // Coverage (spec C3 of each op): every id in some group, except for collective_broadcast.
  std::set<int64_t> covered;
  for (const auto& ids : id_groups) covered.insert(ids.begin(), ids.end());
  if (kind != OpKind::kCollectiveBroadcast && static_cast<int64_t>(covered.size()) != id_limit) {
    for (int64_t i = 0; i < id_limit; ++i) {
      if (covered.count(i) == 0) {
        return Error(kind, mode, StrCat("replica_groups does not cover id ", i, " (of ",
                                        id_limit, "); every id must be in one group"));
      }
    }
  }
  const bool uniform = kind == OpKind::kAllGather || kind == OpKind::kReduceScatter ||
                       kind == OpKind::kAllToAll;
  std::vector<std::vector<int>> groups;
  auto add = [&](std::vector<int> group) { groups.push_back(std::move(group)); };
  for (const std::vector<int64_t>& ids : id_groups) {
    switch (mode) {
      case GroupMode::kCrossReplica:
        for (int64_t p = 0; p < P; ++p) {
          std::vector<int> group;
          for (int64_t r : ids) group.push_back(static_cast<int>(r * P + p));
          add(std::move(group));
        }
        break;
      case GroupMode::kCrossPartition:
        for (int64_t r = 0; r < R; ++r) {
          std::vector<int> group;
          for (int64_t p : ids) group.push_back(static_cast<int>(r * P + p));
          add(std::move(group));
        }
        break;
      case GroupMode::kCrossReplicaAndPartition: {
        std::vector<int> group;
        for (int64_t p = 0; p < P; ++p) {
          for (int64_t r : ids) group.push_back(static_cast<int>(r * P + p));
        }
        add(std::move(group));
        break;
      }
      case GroupMode::kFlattenedIds: {
        std::vector<int> group;
        for (int64_t id : ids) group.push_back(static_cast<int>(id));
        add(std::move(group));
        break;
      }
    }
  }
  if (uniform) {
    for (const std::vector<int>& group : groups) {
      const int64_t size = static_cast<int64_t>(group.size());
      if (size != static_cast<int64_t>(groups[0].size()) ||
          (required_size >= 0 && size != required_size)) {
        return Error(kind, mode, StrCat("process group ", GroupText(group), " has ", size,
                                        " processes, but the op's types need ",
                                        required_size >= 0 ? required_size
                                                           : static_cast<int64_t>(
                                                                 groups[0].size())));
      }
    }
  }
  return groups;
}

const std::vector<int>* GroupOf(const std::vector<std::vector<int>>& groups, int process) {
  for (const std::vector<int>& group : groups) {
    if (std::find(group.begin(), group.end(), process) != group.end()) return &group;
  }
  return nullptr;
}

StatusOr<PermutePeers> PermutePeersOf(const CollectiveAttributes& attrs, const Grid& grid,
                                      int process) {
  const GroupMode mode = GroupModeOf(OpKind::kCollectivePermute, attrs);
  const int64_t P = grid.num_partitions;
  const int64_t replica = process / P;
  const int64_t partition = process % P;
  const bool cross_partition = mode == GroupMode::kCrossPartition;
  const int64_t own = cross_partition ? partition : replica;
  const int64_t limit = cross_partition ? P : grid.num_replicas;
  auto to_process = [&](int64_t id) {
    return static_cast<int>(cross_partition ? replica * P + id : id * P + partition);
  };
  PermutePeers peers;
  for (const auto& [source, target] : attrs.source_target_pairs) {
    if (source >= limit || target >= limit) {
      return Error(OpKind::kCollectivePermute, mode,
                   StrCat("source_target_pairs holds (", source, ", ", target,
                          "), outside [0, ", limit, ") on a grid of ", grid.num_replicas,
                          " replicas x ", P, " partitions"));
    }
    if (source == own) peers.send_to = to_process(target);
    if (target == own) peers.recv_from = to_process(source);
  }
  return peers;
}

}  // namespace accy::collectives
