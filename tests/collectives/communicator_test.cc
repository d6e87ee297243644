// The Communicator contract (accy/collectives.h), run on both implementations: in-process (N
// threads over one world) and Gloo (N threads, each with its own Gloo communicator over a
// FileStore in a fresh folder, TCP on 127.0.0.1), for world sizes 1 to 4. Results are checked
// byte for byte; AllReduce against collectives::CombineInto folded in group order.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "accy/collectives.h"
#include "accy/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/collectives/element_reduction.h"
#include "tests/collectives/collectives_test_util.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

enum class Kind { kInProcess, kGloo };

struct WorldParam {
  Kind kind;
  int size;
};

std::string ParamName(const ::testing::TestParamInfo<WorldParam>& info) {
  return std::string(info.param.kind == Kind::kInProcess ? "InProcess" : "Gloo") +
         std::to_string(info.param.size);
}

class CommunicatorTest : public ::testing::TestWithParam<WorldParam> {
 protected:
  int size() const { return GetParam().size; }
  bool gloo() const { return GetParam().kind == Kind::kGloo; }

  // The world's communicators, by rank.
  std::vector<std::unique_ptr<Communicator>> MakeWorld(milliseconds timeout = milliseconds(20000)) {
    std::vector<std::unique_ptr<Communicator>> world(size());
    if (!gloo()) {
      auto created = CreateInProcessCommunicators(size(), CommunicatorOptions{timeout});
      EXPECT_OK(created.status());
      if (created.ok()) world = std::move(created).value();
      return world;
    }
    // With a short timeout the threads of a loaded machine may not all join in time: retry in
    // a fresh folder (the timeout tests need a short one for the primitives).
    for (int attempt = 0;; ++attempt) {
      folders_.push_back(std::make_unique<TempFolder>());
      const std::string rendezvous = "file:" + folders_.back()->path();
      std::vector<Status> statuses(size());
      OnEachRank(size(), [&](int rank) {
        GlooOptions options;
        options.rank = rank;
        options.world_size = size();
        options.rendezvous = rendezvous;
        options.communicator.timeout = timeout;
        auto created = CreateGlooCommunicator(options);
        statuses[rank] = created.status();
        if (created.ok()) world[rank] = std::move(created).value();
      });
      const bool all_ok = std::all_of(statuses.begin(), statuses.end(),
                                      [](const Status& status) { return status.ok(); });
      if (all_ok || attempt == 4) {
        for (const Status& status : statuses) EXPECT_OK(status);
        return world;
      }
      world = std::vector<std::unique_ptr<Communicator>>(size());
    }
  }

  std::vector<std::unique_ptr<TempFolder>> folders_;
};

// Deterministic bytes: the i-th byte a rank contributes in a test (`salt` tells calls apart).
uint8_t PatternByte(int rank, int64_t i, int salt) {
  return static_cast<uint8_t>(rank * 67 + i * 13 + salt * 7 + 1);
}

std::vector<uint8_t> Pattern(int rank, int64_t bytes, int salt) {
  std::vector<uint8_t> out(bytes);
  for (int64_t i = 0; i < bytes; ++i) out[i] = PatternByte(rank, i, salt);
  return out;
}

uint64_t Mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void StoreFloat(ElementType type, double value, uint8_t* out) {
  switch (type) {
    case ElementType::kF16: {
      const uint16_t bits = FloatToHalfBits(static_cast<float>(value));
      std::memcpy(out, &bits, 2);
      return;
    }
    case ElementType::kBF16: {
      const uint16_t bits = FloatToBFloat16Bits(static_cast<float>(value));
      std::memcpy(out, &bits, 2);
      return;
    }
    case ElementType::kF32: {
      const float f = static_cast<float>(value);
      std::memcpy(out, &f, 4);
      return;
    }
    default: {
      std::memcpy(out, &value, 8);
      return;
    }
  }
}

double LoadFloat(ElementType type, const uint8_t* in) {
  uint16_t half;
  float f;
  double d;
  switch (type) {
    case ElementType::kF16:
      std::memcpy(&half, in, 2);
      return HalfBitsToFloat(half);
    case ElementType::kBF16:
      std::memcpy(&half, in, 2);
      return BFloat16BitsToFloat(half);
    case ElementType::kF32:
      std::memcpy(&f, in, 4);
      return f;
    default:
      std::memcpy(&d, in, 8);
      return d;
  }
}

// One rank's AllReduce input of `count` elements. Floats: sums and products take values in
// [0.5, 2) (no cancellation, so other combination orders stay within a few ulps); min and max
// take [-4, 4) with -0 on rank 0 and +0 elsewhere at index 2. Index 0 is NaN on rank 0 only and
// index 1 is +inf on the last rank only (one NaN per element: its payload is then unambiguous).
std::vector<uint8_t> ReductionInput(ElementType type, CollectiveReduction reduction, int rank,
                                    int members, int64_t count) {
  const int64_t width = ElementByteWidth(type);
  std::vector<uint8_t> out(count * width);
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t h = Mix((static_cast<uint64_t>(rank) << 40) ^ (i << 8) ^
                           static_cast<uint64_t>(type) * 977 ^ static_cast<uint64_t>(reduction));
    uint8_t* element = out.data() + i * width;
    if (type == ElementType::kI1) {
      *element = h & 1;
    } else if (!IsFloat(type)) {
      std::memcpy(element, &h, width);
    } else {
      const bool min_max =
          reduction == CollectiveReduction::kMin || reduction == CollectiveReduction::kMax;
      double value = min_max ? -4.0 + static_cast<double>(h % 8192) / 1024.0
                             : 0.5 + static_cast<double>(h % 1536) / 1024.0;
      if (i == 0 && rank == 0) value = std::nan("");
      if (i == 1 && rank == members - 1) value = INFINITY;
      if (i == 2 && min_max) value = rank == 0 ? -0.0 : 0.0;
      StoreFloat(type, value, element);
    }
  }
  return out;
}

// Checks `actual` against `expected` (count elements of type); exact unless `tolerance` > 0,
// then floats match within that relative error (NaN matches NaN, infinities exactly).
void ExpectElements(ElementType type, const std::vector<uint8_t>& actual,
                    const std::vector<uint8_t>& expected, double tolerance,
                    const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  if (tolerance == 0) {
    const auto mismatch = std::mismatch(actual.begin(), actual.end(), expected.begin());
    EXPECT_TRUE(mismatch.first == actual.end())
        << what << ": first bad byte " << (mismatch.first - actual.begin());
    return;
  }
  const int64_t width = ElementByteWidth(type);
  for (size_t i = 0; i < actual.size() / width; ++i) {
    const double a = LoadFloat(type, actual.data() + i * width);
    const double e = LoadFloat(type, expected.data() + i * width);
    if (std::isnan(e) || std::isinf(e)) {
      ASSERT_TRUE(std::isnan(e) ? std::isnan(a) : a == e) << what << " element " << i;
    } else {
      ASSERT_NEAR(a, e, tolerance * std::abs(e)) << what << " element " << i;
    }
  }
}

// All members of `group` reduce their ReductionInput; each result must equal the fold in
// group order (Gloo's ring order differs: float sums and products of more than two members
// are compared within a tolerance) and be the same bits on every member.
void CheckAllReduce(std::vector<std::unique_ptr<Communicator>>& world, bool gloo,
                    const std::vector<int>& group, ElementType type, CollectiveReduction reduction,
                    int64_t count) {
  const int members = static_cast<int>(group.size());
  std::vector<uint8_t> expected = ReductionInput(type, reduction, group[0], members, count);
  for (int p = 1; p < members; ++p) {
    const std::vector<uint8_t> x = ReductionInput(type, reduction, group[p], members, count);
    collectives::CombineInto(expected.data(), x.data(), count, type, reduction);
  }
  std::vector<std::vector<uint8_t>> results(world.size());
  OnEachRank(static_cast<int>(world.size()), [&](int rank) {
    if (std::find(group.begin(), group.end(), rank) == group.end()) return;
    results[rank] = ReductionInput(type, reduction, rank, members, count);
    EXPECT_OK(world[rank]->AllReduce(group, results[rank].data(), count, type, reduction));
  });
  const bool reordered =
      gloo && members > 2 && IsFloat(type) &&
      (reduction == CollectiveReduction::kSum || reduction == CollectiveReduction::kProduct);
  const double tolerance = !reordered                   ? 0
                           : type == ElementType::kBF16 ? 3e-2
                           : type == ElementType::kF16  ? 4e-3
                           : type == ElementType::kF32  ? 1e-6
                                                        : 1e-14;
  const std::string what =
      std::string(ElementTypeName(type)) + " " + std::string(CollectiveReductionName(reduction));
  ExpectElements(type, results[group[0]], expected, tolerance, what);
  for (int p = 1; p < members; ++p) {
    EXPECT_EQ(results[group[p]], results[group[0]]) << what << ": member " << p << " differs";
  }
}

std::vector<int> WorldGroup(int size) {
  std::vector<int> group(size);
  for (int r = 0; r < size; ++r) group[r] = r;
  return group;
}

TEST_P(CommunicatorTest, ReportsRankSizeAndKind) {
  auto world = MakeWorld();
  for (int rank = 0; rank < size(); ++rank) {
    ASSERT_NE(world[rank], nullptr);
    EXPECT_EQ(world[rank]->rank(), rank);
    EXPECT_EQ(world[rank]->world_size(), size());
    EXPECT_EQ(world[rank]->kind(), gloo() ? "gloo-tcp" : "in-process");
  }
}

TEST_P(CommunicatorTest, AllReduceEveryTypeAndReductionMatchesGroupOrderFold) {
  auto world = MakeWorld();
  for (ElementType type : kAllElementTypes) {
    for (CollectiveReduction reduction : {CollectiveReduction::kSum, CollectiveReduction::kProduct,
                                          CollectiveReduction::kMin, CollectiveReduction::kMax}) {
      CheckAllReduce(world, gloo(), WorldGroup(size()), type, reduction, 37);
    }
  }
}

TEST_P(CommunicatorTest, AllReduceOfSeveralMegabytes) {
  // Gloo's ring splits above 1 MiB segments; 1.2 MB of f32 takes several.
  auto world = MakeWorld();
  CheckAllReduce(world, gloo(), WorldGroup(size()), ElementType::kF32, CollectiveReduction::kMax,
                 300007);
  CheckAllReduce(world, gloo(), WorldGroup(size()), ElementType::kI64, CollectiveReduction::kSum,
                 150001);
}

TEST_P(CommunicatorTest, AllReduceToLeavesTheInputAndMatchesInPlace) {
  // Out of place (Gloo: Gloo reads the input itself; in-process: the base class's copy) gives
  // the in-place bits and does not write the input.
  auto world = MakeWorld();
  const std::vector<int> group = WorldGroup(size());
  const int64_t count = 70001;  // more than one of Gloo's ring segments
  std::vector<std::vector<uint8_t>> in_place(size()), inputs(size()), outputs(size());
  OnEachRank(size(), [&](int rank) {
    inputs[rank] = ReductionInput(ElementType::kI32, CollectiveReduction::kSum, rank, size(), count);
    in_place[rank] = inputs[rank];
    outputs[rank].assign(inputs[rank].size(), 0xAB);
    EXPECT_OK(world[rank]->AllReduce(group, in_place[rank].data(), count, ElementType::kI32,
                                     CollectiveReduction::kSum));
    EXPECT_OK(world[rank]->AllReduceTo(group, inputs[rank].data(), outputs[rank].data(), count,
                                       ElementType::kI32, CollectiveReduction::kSum));
  });
  for (int rank = 0; rank < size(); ++rank) {
    EXPECT_EQ(outputs[rank], in_place[0]) << "rank " << rank;
    EXPECT_EQ(inputs[rank], ReductionInput(ElementType::kI32, CollectiveReduction::kSum, rank,
                                           size(), count))
        << "rank " << rank << "'s input was written";
  }
}

TEST_P(CommunicatorTest, AllGatherPlacesMemberBytesInGroupOrder) {
  auto world = MakeWorld();
  const std::vector<int> group = WorldGroup(size());
  constexpr int64_t kBytes = 13;
  OnEachRank(size(), [&](int rank) {
    const std::vector<uint8_t> send = Pattern(rank, kBytes, 1);
    std::vector<uint8_t> recv(kBytes * size(), 0xee);
    ASSERT_OK(world[rank]->AllGather(group, send.data(), kBytes, recv.data()));
    for (int i = 0; i < size(); ++i) {
      EXPECT_EQ(std::vector<uint8_t>(recv.begin() + i * kBytes, recv.begin() + (i + 1) * kBytes),
                Pattern(i, kBytes, 1))
          << "rank " << rank << " chunk " << i;
    }
  });
}

TEST_P(CommunicatorTest, AllToAllSendsChunkJToMemberJ) {
  auto world = MakeWorld();
  const std::vector<int> group = WorldGroup(size());
  constexpr int64_t kChunk = 9;
  OnEachRank(size(), [&](int rank) {
    const std::vector<uint8_t> send = Pattern(rank, kChunk * size(), 2);
    std::vector<uint8_t> recv(kChunk * size(), 0xee);
    ASSERT_OK(world[rank]->AllToAll(group, send.data(), kChunk, recv.data()));
    for (int i = 0; i < size(); ++i) {
      // Member i's chunk `rank`.
      const std::vector<uint8_t> from_i = Pattern(i, kChunk * size(), 2);
      EXPECT_EQ(std::vector<uint8_t>(recv.begin() + i * kChunk, recv.begin() + (i + 1) * kChunk),
                std::vector<uint8_t>(from_i.begin() + rank * kChunk,
                                     from_i.begin() + (rank + 1) * kChunk))
          << "rank " << rank << " chunk from " << i;
    }
  });
}

TEST_P(CommunicatorTest, BroadcastFromEveryRootPosition) {
  auto world = MakeWorld();
  const std::vector<int> group = WorldGroup(size());
  constexpr int64_t kBytes = 21;
  for (int root = 0; root < size(); ++root) {
    OnEachRank(size(), [&](int rank) {
      std::vector<uint8_t> data = Pattern(rank, kBytes, 3 + root);
      ASSERT_OK(world[rank]->Broadcast(group, root, data.data(), kBytes));
      EXPECT_EQ(data, Pattern(root, kBytes, 3 + root)) << "rank " << rank << " root " << root;
    });
  }
}

// Groups by parity of rank ({0, 2}, {1, 3}) run at the same time, each member calling on its
// own group only; then the whole world reversed ({3, 2, 1, 0}), then the parity groups again.
TEST_P(CommunicatorTest, SubGroupsRunConcurrentlyAndReversedOrderIsGroupOrder) {
  auto world = MakeWorld();
  std::vector<int> evens, odds, reversed = WorldGroup(size());
  std::reverse(reversed.begin(), reversed.end());
  for (int r = 0; r < size(); ++r) (r % 2 == 0 ? evens : odds).push_back(r);
  constexpr int64_t kBytes = 11;
  OnEachRank(size(), [&](int rank) {
    const std::vector<int>& mine = rank % 2 == 0 ? evens : odds;
    for (int round = 0; round < 2; ++round) {
      const std::vector<uint8_t> send = Pattern(rank, kBytes, 10 + round);
      std::vector<uint8_t> recv(kBytes * mine.size());
      ASSERT_OK(world[rank]->AllGather(mine, send.data(), kBytes, recv.data()));
      for (size_t i = 0; i < mine.size(); ++i) {
        EXPECT_EQ(std::vector<uint8_t>(recv.begin() + i * kBytes, recv.begin() + (i + 1) * kBytes),
                  Pattern(mine[i], kBytes, 10 + round))
            << "rank " << rank << " round " << round;
      }
      int32_t value = rank + 1;
      ASSERT_OK(world[rank]->AllReduce(mine, &value, 1, ElementType::kI32,
                                       CollectiveReduction::kProduct));
      int32_t expected = 1;
      for (int member : mine) expected *= member + 1;
      EXPECT_EQ(value, expected) << "rank " << rank;
      if (round == 1) break;
      // The reversed world: member i is rank size-1-i.
      std::vector<uint8_t> all(kBytes * size());
      ASSERT_OK(world[rank]->AllGather(reversed, send.data(), kBytes, all.data()));
      for (int i = 0; i < size(); ++i) {
        EXPECT_EQ(std::vector<uint8_t>(all.begin() + i * kBytes, all.begin() + (i + 1) * kBytes),
                  Pattern(size() - 1 - i, kBytes, 10))
            << "rank " << rank << " reversed position " << i;
      }
      std::vector<uint8_t> data = Pattern(rank, kBytes, 20);
      ASSERT_OK(world[rank]->Broadcast(reversed, 0, data.data(), kBytes));
      EXPECT_EQ(data, Pattern(size() - 1, kBytes, 20)) << "rank " << rank;
    }
  });
  CheckAllReduce(world, gloo(), reversed, ElementType::kF32, CollectiveReduction::kMin, 17);
  CheckAllReduce(world, gloo(), reversed, ElementType::kU16, CollectiveReduction::kSum, 17);
}

TEST_P(CommunicatorTest, ZeroByteCallsSucceedWithNullPointers) {
  auto world = MakeWorld();
  const std::vector<int> group = WorldGroup(size());
  OnEachRank(size(), [&](int rank) {
    Communicator& c = *world[rank];
    EXPECT_OK(c.AllReduce(group, nullptr, 0, ElementType::kF32, CollectiveReduction::kSum));
    EXPECT_OK(c.AllGather(group, nullptr, 0, nullptr));
    EXPECT_OK(c.AllToAll(group, nullptr, 0, nullptr));
    EXPECT_OK(c.Broadcast(group, 0, nullptr, 0));
    EXPECT_OK(c.Permute((rank + 1) % size(), nullptr, (rank + size() - 1) % size(), nullptr, 0));
    // The world still works afterwards.
    int64_t value = rank;
    EXPECT_OK(c.AllReduce(group, &value, 1, ElementType::kI64, CollectiveReduction::kSum));
    EXPECT_EQ(value, static_cast<int64_t>(size()) * (size() - 1) / 2);
  });
}

TEST_P(CommunicatorTest, PermuteCycleAndPartialSenders) {
  auto world = MakeWorld();
  constexpr int64_t kBytes = 17;
  OnEachRank(size(), [&](int rank) {
    Communicator& c = *world[rank];
    const int n = size();
    // A cycle: rank r sends to r+1 (itself in a world of one).
    const std::vector<uint8_t> send = Pattern(rank, kBytes, 30);
    std::vector<uint8_t> recv(kBytes, 0xee);
    ASSERT_OK(c.Permute((rank + 1) % n, send.data(), (rank + n - 1) % n, recv.data(), kBytes));
    EXPECT_EQ(recv, Pattern((rank + n - 1) % n, kBytes, 30)) << "cycle, rank " << rank;
    // Rank 0 only sends, the last rank only receives, the others do neither; the untouched
    // receive buffers keep their bytes.
    const int last = n - 1;
    const int send_to = rank == 0 && last != 0 ? last : -1;
    const int recv_from = rank == last && last != 0 ? 0 : -1;
    std::vector<uint8_t> partial(kBytes, 0xee);
    ASSERT_OK(c.Permute(send_to, send_to >= 0 ? send.data() : nullptr, recv_from,
                        recv_from >= 0 ? partial.data() : nullptr, kBytes));
    EXPECT_EQ(partial, recv_from >= 0 ? Pattern(0, kBytes, 30) : std::vector<uint8_t>(kBytes, 0xee))
        << "partial, rank " << rank;
    // A step in which nobody sends.
    ASSERT_OK(c.Permute(-1, nullptr, -1, nullptr, kBytes));
  });
}

// Must-fail arguments: each is kInvalidArgument without communicating, and the communicator
// still works afterwards.
TEST_P(CommunicatorTest, MalformedArgumentsAreInvalidArgument) {
  auto world = MakeWorld();
  const int n = size();
  OnEachRank(n, [&](int rank) {
    Communicator& c = *world[rank];
    int32_t x = 1;
    const auto expect_invalid = [&](const Status& status, const std::string& fragment) {
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
      EXPECT_THAT(std::string(status.message()), HasSubstr(fragment));
    };
    const std::vector<int> duplicate = {rank, rank};
    const std::vector<int> outside = {rank, n};
    const std::vector<int> negative = {-1, rank};
    expect_invalid(c.AllReduce(duplicate, &x, 1, ElementType::kI32, CollectiveReduction::kSum),
                   "appears twice");
    expect_invalid(c.AllGather(outside, &x, 4, &x), "is outside [0, ");
    expect_invalid(c.AllToAll(negative, &x, 4, &x), "rank -1 is outside");
    expect_invalid(c.Broadcast({}, 0, &x, 4), "the group is empty");
    if (n > 1) {
      const std::vector<int> other = {(rank + 1) % n};
      expect_invalid(c.AllReduce(other, &x, 1, ElementType::kI32, CollectiveReduction::kSum),
                     "does not include this communicator's rank");
    }
    const std::vector<int> self = {rank};
    expect_invalid(c.AllGather(self, &x, -4, &x), "negative size");
    expect_invalid(c.AllReduce(self, nullptr, 3, ElementType::kI32, CollectiveReduction::kSum),
                   "data is null");
    expect_invalid(c.Broadcast(self, 1, &x, 4), "root position 1");
    expect_invalid(c.Permute(n, &x, -1, nullptr, 4), "send_to");
    expect_invalid(c.Permute(rank, &x, -1, nullptr, 4), "receives from itself");
    int64_t value = 1;
    EXPECT_OK(c.AllReduce(WorldGroup(n), &value, 1, ElementType::kI64, CollectiveReduction::kSum));
    EXPECT_EQ(value, n);
  });
}

// The last rank never calls: the others fail with kDeadlineExceeded within about the timeout,
// then every later call is kFailedPrecondition. With Gloo a member that gives up closes its
// connections, so of three or more members some may see kUnavailable first.
TEST_P(CommunicatorTest, MissingMemberIsDeadlineExceededThenBroken) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  const milliseconds timeout(300);
  auto world = MakeWorld(timeout);
  const std::vector<int> group = WorldGroup(size());
  std::vector<absl::StatusCode> codes(size() - 1);
  OnEachRank(size() - 1, [&](int rank) {
    Communicator& c = *world[rank];
    std::vector<float> data(64, 1.0f);
    const auto start = std::chrono::steady_clock::now();
    const Status status =
        c.AllReduce(group, data.data(), 64, ElementType::kF32, CollectiveReduction::kSum);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    codes[rank] = status.code();
    if (gloo() && size() > 2 && status.code() == absl::StatusCode::kUnavailable) {
      EXPECT_THAT(std::string(status.message()), HasSubstr("closed"));
    } else {
      EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
    }
    EXPECT_THAT(std::string(status.message()), HasSubstr("AllReduce over group {0, 1"));
    EXPECT_LT(elapsed, timeout + milliseconds(2000));
    const Status later = c.AllGather(group, data.data(), 4, data.data() + 8);
    EXPECT_EQ(later.code(), absl::StatusCode::kFailedPrecondition) << later;
    EXPECT_THAT(std::string(later.message()), HasSubstr("broken"));
  });
  EXPECT_THAT(codes, ::testing::Contains(absl::StatusCode::kDeadlineExceeded));
}

// A group first used while one of its members stays away: the message names that rank.
TEST_P(CommunicatorTest, MissingMemberOfNewGroupIsNamed) {
  if (size() < 3) GTEST_SKIP() << "needs a group smaller than the world";
  const milliseconds timeout(300);
  auto world = MakeWorld(timeout);
  const std::vector<int> group = {0, 1};
  int32_t x = 7;
  const Status status = world[0]->AllGather(group, &x, 4, std::vector<int32_t>(2).data());
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("group {0, 1}"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("rank 1 did not"));
}

INSTANTIATE_TEST_SUITE_P(Worlds, CommunicatorTest,
                         ::testing::Values(WorldParam{Kind::kInProcess, 1},
                                           WorldParam{Kind::kInProcess, 2},
                                           WorldParam{Kind::kInProcess, 3},
                                           WorldParam{Kind::kInProcess, 4},
                                           WorldParam{Kind::kGloo, 1}, WorldParam{Kind::kGloo, 2},
                                           WorldParam{Kind::kGloo, 3}, WorldParam{Kind::kGloo, 4}),
                         ParamName);

}  // namespace
}  // namespace accy
