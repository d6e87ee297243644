// Executable::Impl::GroupIndependentItems on synthetic item tables: which consecutive items may
// run at the same time, decided on memory (arena slices are reused by unrelated values).
#include <gtest/gtest.h>

#include "src/runtime/executor.h"

namespace accy {
namespace {

void DummyKernel(void* const*, const int64_t*, int64_t, int64_t) {}

BufferSlice Arena(int64_t offset, int64_t bytes) {
  return {BufferSlice::Kind::kArena, 0, offset, bytes};
}
BufferSlice Parameter(int64_t index) { return {BufferSlice::Kind::kParameter, index, 0, 65536}; }

// A one-block JIT item reading `inputs` and writing `outputs`, moving 64 KiB.
ExecutorItem Item(std::vector<BufferSlice> inputs, std::vector<BufferSlice> outputs) {
  ExecutorItem item;
  item.launch.function = &DummyKernel;
  item.launch.block_count = 1;
  item.num_inputs = inputs.size();
  item.buffers = std::move(inputs);
  item.buffers.insert(item.buffers.end(), outputs.begin(), outputs.end());
  item.estimated_bytes = 65536;
  return item;
}

TEST(InterOpGroupingTest, GroupsEndAtTheFirstMemoryConflict) {
  Executable::Impl impl;
  impl.num_threads = 2;
  impl.items.push_back(Item({Parameter(0)}, {Arena(0, 4096)}));
  impl.items.push_back(Item({Parameter(0)}, {Arena(4096, 4096)}));  // reads p0 too: fine
  impl.items.push_back(Item({Parameter(1)}, {Arena(8192, 64)}));
  // Writes bytes item 0 wrote (a reused arena slice): starts a new group.
  impl.items.push_back(Item({Parameter(2)}, {Arena(2048, 4096)}));
  impl.items.push_back(Item({Parameter(3)}, {Arena(16384, 4096)}));
  impl.GroupIndependentItems();
  EXPECT_EQ(impl.items[0].group_end, 3u);
  EXPECT_EQ(impl.items[1].group_end, 0u);
  EXPECT_EQ(impl.items[3].group_end, 5u);
  EXPECT_EQ(impl.stats.concurrent_groups, 2);
  EXPECT_EQ(impl.stats.concurrent_items, 5);
}

TEST(InterOpGroupingTest, ReadersOfAnEarlierOutputAndMultiBlockItemsAreNotGrouped) {
  Executable::Impl impl;
  impl.num_threads = 2;
  impl.items.push_back(Item({Parameter(0)}, {Arena(0, 4096)}));
  impl.items.push_back(Item({Arena(1024, 64)}, {Arena(8192, 4096)}));  // reads item 0's bytes
  ExecutorItem wide = Item({Parameter(1)}, {Arena(65536, 4096)});
  wide.launch.block_count = 4;  // intra-op parallel already
  impl.items.push_back(wide);
  ExecutorItem scratch = Item({Parameter(2)}, {Arena(131072, 4096)});
  scratch.scratch_bytes = 256;  // the per-run scratch area is shared
  impl.items.push_back(scratch);
  ExecutorItem small = Item({Parameter(3)}, {Arena(262144, 64)});
  small.estimated_bytes = 128;
  impl.items.push_back(small);
  small.buffers = {Parameter(4), Arena(262144 + 64, 64)};
  impl.items.push_back(small);  // independent, but two items of 128 bytes: not worth a fork/join
  impl.GroupIndependentItems();
  for (const ExecutorItem& item : impl.items) EXPECT_EQ(item.group_end, 0u);
  EXPECT_EQ(impl.stats.concurrent_groups, 0);
}

TEST(InterOpGroupingTest, OneThreadGroupsNothing) {
  Executable::Impl impl;
  impl.num_threads = 1;
  impl.items.push_back(Item({Parameter(0)}, {Arena(0, 4096)}));
  impl.items.push_back(Item({Parameter(1)}, {Arena(4096, 4096)}));
  impl.GroupIndependentItems();
  EXPECT_EQ(impl.items[0].group_end, 0u);
  EXPECT_EQ(impl.stats.concurrent_groups, 0);
}

}  // namespace
}  // namespace accy
