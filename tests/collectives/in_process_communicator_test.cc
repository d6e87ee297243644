// The in-process communicator's own behaviour (accy/collectives.h), beyond the contract
// communicator_test.cc runs on both implementations: creation errors, Abort waking a waiting
// member with the reason, members whose calls disagree, and ForwardingCommunicator passing
// every call (Abort included) through.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "accy/collectives.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/collectives/collectives_test_util.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

TEST(InProcessCommunicatorTest, CreationErrorsAreInvalidArgument) {
  EXPECT_EQ(CreateInProcessCommunicators(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateInProcessCommunicators(2, CommunicatorOptions{milliseconds(0)}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A member waiting in a primitive when a peer aborts wakes at once (not after the 60 s timeout)
// with kDeadlineExceeded saying it stopped waiting and why the world broke; it does not claim to
// have waited the whole timeout.
TEST(InProcessCommunicatorTest, AbortWakesAWaitingMemberNamingTheReason) {
  ASSERT_OK_AND_ASSIGN(auto world,
                       CreateInProcessCommunicators(2, CommunicatorOptions{milliseconds(60000)}));
  Status waited;
  const auto start = std::chrono::steady_clock::now();
  std::thread member([&] {
    int32_t x = 1;
    const std::vector<int> group = {0, 1};
    waited = world[0]->AllReduce(group, &x, 1, ElementType::kI32, CollectiveReduction::kSum);
  });
  std::this_thread::sleep_for(milliseconds(50));
  world[1]->Abort("input 0 has the wrong shape");
  member.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(30000));
  EXPECT_EQ(waited.code(), absl::StatusCode::kDeadlineExceeded) << waited;
  EXPECT_THAT(std::string(waited.message()), HasSubstr("stopped waiting for rank 1 after "));
  EXPECT_THAT(std::string(waited.message()),
              HasSubstr("the world broke: rank 1 aborted: input 0 has the wrong shape"));
  EXPECT_THAT(std::string(waited.message()), ::testing::Not(HasSubstr("within 60000 ms")));
}

// ForwardingCommunicator passes every call through, Abort included: a wrapped member's
// AllReduce reduces with the other member, and Abort through the wrapper wakes that member.
TEST(ForwardingCommunicatorTest, ForwardsPrimitivesAndAbort) {
  ASSERT_OK_AND_ASSIGN(auto world,
                       CreateInProcessCommunicators(2, CommunicatorOptions{milliseconds(60000)}));
  ForwardingCommunicator wrapped(*world[1]);
  EXPECT_EQ(wrapped.rank(), 1);
  EXPECT_EQ(wrapped.world_size(), 2);
  EXPECT_EQ(wrapped.kind(), "in-process");
  const std::vector<int> group = {0, 1};
  int32_t a = 3, b = 4;
  Status other;
  std::thread member([&] {
    other = world[0]->AllReduce(group, &a, 1, ElementType::kI32, CollectiveReduction::kSum);
  });
  EXPECT_OK(wrapped.AllReduce(group, &b, 1, ElementType::kI32, CollectiveReduction::kSum));
  member.join();
  EXPECT_OK(other);
  EXPECT_EQ(a, 7);
  EXPECT_EQ(b, 7);
  Status waited;
  std::thread waiter([&] {
    int32_t x = 1;
    waited = world[0]->AllReduce(group, &x, 1, ElementType::kI32, CollectiveReduction::kSum);
  });
  std::this_thread::sleep_for(milliseconds(50));
  wrapped.Abort("stopped through the wrapper");
  waiter.join();
  EXPECT_EQ(waited.code(), absl::StatusCode::kDeadlineExceeded) << waited;
  EXPECT_THAT(std::string(waited.message()), HasSubstr("stopped through the wrapper"));
}

// Members that disagree (another primitive, another size) all get kInvalidArgument; only the
// in-process world can see the others' arguments.
TEST(InProcessCommunicatorTest, MismatchedCallsAreInvalidArgumentOnEveryMember) {
  ASSERT_OK_AND_ASSIGN(auto world, CreateInProcessCommunicators(2));
  const std::vector<int> group = {0, 1};
  OnEachRank(2, [&](int rank) {
    std::vector<uint8_t> buffer(64);
    const Status status =
        world[rank]->AllGather(group, buffer.data(), 4 + 4 * rank, buffer.data() + 32);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("member 1 (rank 1) passes size 8"));
    const Status permute = world[rank]->Permute(1 - rank, buffer.data(), -1, nullptr, 4);
    EXPECT_EQ(permute.code(), absl::StatusCode::kInvalidArgument) << permute;
    EXPECT_THAT(std::string(permute.message()), HasSubstr("which receives from -1"));
  });
}

}  // namespace
}  // namespace accy
