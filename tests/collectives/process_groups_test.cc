// Process groups of the spec's four strategies (StableHLO spec "Collective ops": the examples of
// cross_replica, cross_partition, cross_replica_and_partition and flattened_ids), the op ->
// strategy table, collective_permute peers, and every error ProcessGroups names.
#include "src/collectives/process_groups.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy::collectives {
namespace {

using ::testing::HasSubstr;
using ir_internal::CollectiveAttributes;
using Groups = std::vector<std::vector<int>>;

CollectiveAttributes Attrs(std::vector<std::vector<int64_t>> groups, int64_t channel = 0,
                           bool global = false) {
  CollectiveAttributes attrs;
  attrs.replica_groups = std::move(groups);
  attrs.channel_id = channel;
  attrs.use_global_device_ids = global;
  return attrs;
}

TEST(ProcessGroupsTest, SpecExamplesOfTheFourStrategies) {
  // cross_replica: replica_groups [[0, 1], [2, 3]], 2 partitions -> [[(0,0),(1,0)],
  // [(0,1),(1,1)], [(2,0),(3,0)], [(2,1),(3,1)]] (process id = replica * 2 + partition).
  ASSERT_OK_AND_ASSIGN(Groups g, ProcessGroups(OpKind::kAllReduce, Attrs({{0, 1}, {2, 3}}),
                                               Grid{4, 2}));
  EXPECT_EQ(g, (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  // cross_partition: partition_groups [[0, 1]], 4 replicas -> [[(0,0),(0,1)], ... [(3,0),(3,1)]].
  ASSERT_OK_AND_ASSIGN(g, ProcessGroups(OpKind::kAllToAll, Attrs({{0, 1}}, 1), Grid{4, 2}));
  EXPECT_EQ(g, (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  // cross_replica_and_partition: [[0, 1], [2, 3]], 2 partitions -> [[(0,0),(1,0),(0,1),(1,1)],
  // [(2,0),(3,0),(2,1),(3,1)]].
  ASSERT_OK_AND_ASSIGN(g, ProcessGroups(OpKind::kAllGather, Attrs({{0, 1}, {2, 3}}, 1),
                                        Grid{4, 2}));
  EXPECT_EQ(g, (Groups{{0, 2, 1, 3}, {4, 6, 5, 7}}));
  // flattened_ids: [[0, 1, 2, 3], [4, 5, 6, 7]], 4 replicas x 2 partitions.
  ASSERT_OK_AND_ASSIGN(g, ProcessGroups(OpKind::kReduceScatter,
                                        Attrs({{0, 1, 2, 3}, {4, 5, 6, 7}}, 1, true), Grid{4, 2}));
  EXPECT_EQ(g, (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
}

TEST(ProcessGroupsTest, StrategyPerOp) {
  EXPECT_EQ(GroupModeOf(OpKind::kAllReduce, Attrs({}, 0)), GroupMode::kCrossReplica);
  EXPECT_EQ(GroupModeOf(OpKind::kAllReduce, Attrs({}, 1)), GroupMode::kCrossReplicaAndPartition);
  EXPECT_EQ(GroupModeOf(OpKind::kAllReduce, Attrs({}, 1, true)), GroupMode::kFlattenedIds);
  EXPECT_EQ(GroupModeOf(OpKind::kCollectivePermute, Attrs({}, 1)), GroupMode::kCrossPartition);
  EXPECT_EQ(GroupModeOf(OpKind::kCollectiveBroadcast, Attrs({}, 0)), GroupMode::kCrossReplica);
  EXPECT_EQ(GroupModeName(GroupMode::kCrossReplicaAndPartition), "cross_replica_and_partition");
}

TEST(ProcessGroupsTest, EmptyGroupsMeanEveryReplicaAndPaddingIsDropped) {
  ASSERT_OK_AND_ASSIGN(Groups g, ProcessGroups(OpKind::kAllReduce, Attrs({}), Grid{3, 1}));
  EXPECT_EQ(g, (Groups{{0, 1, 2}}));
  ASSERT_OK_AND_ASSIGN(g, ProcessGroups(OpKind::kAllReduce, Attrs({{0, 2}, {1, -1}}), Grid{3, 1}));
  EXPECT_EQ(g, (Groups{{0, 2}, {1}}));
  EXPECT_EQ(*GroupOf(g, 2), (std::vector<int>{0, 2}));
  // Rows of -1 padding only are no group at all, not "every replica".
  ASSERT_OK_AND_ASSIGN(g, ProcessGroups(OpKind::kCollectiveBroadcast, Attrs({{-1, -1}}), Grid{2, 1}));
  EXPECT_TRUE(g.empty());
  StatusOr<Groups> padding = ProcessGroups(OpKind::kAllReduce, Attrs({{-1, -1}}), Grid{2, 1});
  ASSERT_FALSE(padding.ok());
  EXPECT_THAT(padding.status().message(), HasSubstr("holds only -1 padding"));
  // collective_broadcast may leave processes out.
  ASSERT_OK_AND_ASSIGN(g, ProcessGroups(OpKind::kCollectiveBroadcast, Attrs({{2, 1}}), Grid{4, 1}));
  EXPECT_EQ(g, (Groups{{2, 1}}));
  EXPECT_EQ(GroupOf(g, 0), nullptr);
}

TEST(ProcessGroupsTest, ErrorsNameTheOpStrategyAndId) {
  struct Case {
    OpKind kind;
    CollectiveAttributes attrs;
    Grid grid;
    int64_t required;
    std::string message;
  };
  const std::vector<Case> cases = {
      {OpKind::kAllReduce, Attrs({{0, 3}}), Grid{2, 1}, -1,
       "all_reduce (cross_replica): replica_groups holds id 3, outside [0, 2)"},
      {OpKind::kAllReduce, Attrs({{0}}), Grid{2, 1}, -1, "does not cover id 1"},
      {OpKind::kAllGather, Attrs({}, 1, true), Grid{2, 1}, -1,
       "use_global_device_ids needs explicit replica_groups"},
      {OpKind::kAllGather, Attrs({{0, 1}, {2, -1}}), Grid{3, 1}, -1,
       "process group [2] has 1 processes, but the op's types need 2"},
      {OpKind::kAllToAll, Attrs({{0, 1}}), Grid{2, 1}, 3, "the op's types need 3"},
      {OpKind::kAllToAll, Attrs({{0, 2}}, 1), Grid{1, 2}, -1,
       "all_to_all (cross_partition): replica_groups holds id 2, outside [0, 2)"},
  };
  for (const Case& c : cases) {
    StatusOr<Groups> g = ProcessGroups(c.kind, c.attrs, c.grid, c.required);
    ASSERT_FALSE(g.ok()) << c.message;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(g.status().message(), HasSubstr(c.message));
  }
}

TEST(ProcessGroupsTest, PermutePeersWithinAPartitionOrAReplica) {
  CollectiveAttributes attrs;
  attrs.source_target_pairs = {{0, 1}, {1, 2}};
  // cross_replica on 3 replicas x 2 partitions: process (1, 1) = 3 receives from (0, 1) = 1 and
  // sends to (2, 1) = 5; process (2, 0) = 4 only receives from (1, 0) = 2.
  ASSERT_OK_AND_ASSIGN(PermutePeers peers, PermutePeersOf(attrs, Grid{3, 2}, 3));
  EXPECT_EQ(peers.recv_from, 1);
  EXPECT_EQ(peers.send_to, 5);
  ASSERT_OK_AND_ASSIGN(peers, PermutePeersOf(attrs, Grid{3, 2}, 4));
  EXPECT_EQ(peers.recv_from, 2);
  EXPECT_EQ(peers.send_to, -1);
  // cross_partition (a channel): pairs are partition ids within the replica.
  attrs.channel_id = 1;
  attrs.source_target_pairs = {{1, 0}};
  ASSERT_OK_AND_ASSIGN(peers, PermutePeersOf(attrs, Grid{2, 2}, 3));
  EXPECT_EQ(peers.send_to, 2);
  EXPECT_EQ(peers.recv_from, -1);
  attrs.source_target_pairs = {{0, 2}};
  StatusOr<PermutePeers> bad = PermutePeersOf(attrs, Grid{2, 2}, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("source_target_pairs holds (0, 2)"));
}

}  // namespace
}  // namespace accy::collectives
