// Gloo-only parts of accy/collectives.h: CreateGlooCommunicator's errors, stores shared under
// prefixes, GlooOptionsFromEnvironment, and a peer process that dies mid-run (a forked child).
// The primitives themselves are tested on both communicators in communicator_test.cc.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
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
using ::testing::AnyOf;
using ::testing::HasSubstr;


GlooOptions Options(int rank, int world_size, const std::string& rendezvous,
                    milliseconds timeout = milliseconds(10000)) {
  GlooOptions options;
  options.rank = rank;
  options.world_size = world_size;
  options.rendezvous = rendezvous;
  options.communicator.timeout = timeout;
  return options;
}

void ExpectError(const Status& status, absl::StatusCode code, const std::string& fragment) {
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(fragment));
}

TEST(GlooCommunicatorTest, WrongWorldSizeIsDeadlineExceededWithinTheTimeout) {
  TempFolder folder("accy-gloo-");
  const milliseconds timeout(300);
  const auto start = std::chrono::steady_clock::now();
  const auto created = CreateGlooCommunicator(Options(0, 2, "file:" + folder.path(), timeout));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ExpectError(created.status(), absl::StatusCode::kDeadlineExceeded, "rank 1 did not join");
  EXPECT_GE(elapsed, timeout);
  EXPECT_LT(elapsed, timeout + milliseconds(1000));
}

TEST(GlooCommunicatorTest, MalformedOptionsAreInvalidArgument) {
  TempFolder folder("accy-gloo-");
  const std::string store = "file:" + folder.path();
  ExpectError(CreateGlooCommunicator(Options(2, 2, store)).status(),
              absl::StatusCode::kInvalidArgument, "rank is outside [0, 2)");
  ExpectError(CreateGlooCommunicator(Options(-1, 2, store)).status(),
              absl::StatusCode::kInvalidArgument, "rank is outside");
  ExpectError(CreateGlooCommunicator(Options(0, 0, store)).status(),
              absl::StatusCode::kInvalidArgument, "world_size is below 1");
  ExpectError(CreateGlooCommunicator(Options(0, 1, store, milliseconds(0))).status(),
              absl::StatusCode::kInvalidArgument, "timeout 0 ms");
  for (const char* rendezvous :
       {"", "file:", "nfs:/tmp/x", "redis:localhost", "redis::6379", "redis:localhost:0",
        "redis:localhost:65536", "redis:localhost:port"}) {
    ExpectError(CreateGlooCommunicator(Options(0, 1, rendezvous)).status(),
                absl::StatusCode::kInvalidArgument, "expected file:DIR or redis:HOST:PORT");
  }
  // A folder below a regular file cannot be created.
  const std::string file = folder.path() + "/plain-file";
  std::ofstream(file) << "x";
  ExpectError(CreateGlooCommunicator(Options(0, 1, "file:" + file + "/store")).status(),
              absl::StatusCode::kInvalidArgument, "cannot be created");
  GlooOptions unresolvable = Options(0, 1, store);
  unresolvable.hostname = "no-such-host.invalid";
  ExpectError(CreateGlooCommunicator(unresolvable).status(), absl::StatusCode::kInvalidArgument,
              "'no-such-host.invalid' does not resolve");
}

TEST(GlooCommunicatorTest, UnreachableRedisIsUnavailable) {
  // Port 1 on the loopback: nothing listens, the connection is refused at once.
  ExpectError(CreateGlooCommunicator(Options(0, 1, "redis:127.0.0.1:1")).status(),
              absl::StatusCode::kUnavailable, "cannot be reached");
}

TEST(GlooCommunicatorTest, FolderIsCreatedAndPrefixesSeparateWorlds) {
  TempFolder folder("accy-gloo-");
  const std::string store = "file:" + folder.path() + "/made/here";
  // Two worlds of two in one folder at the same time, told apart by their prefixes.
  std::vector<std::unique_ptr<Communicator>> communicators(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      GlooOptions options = Options(i % 2, 2, store);
      options.prefix = i < 2 ? "first" : "second";
      auto created = CreateGlooCommunicator(options);
      EXPECT_OK(created.status());
      if (!created.ok()) return;
      communicators[i] = std::move(created).value();
      int32_t value = i + 1;
      const std::vector<int> group = {0, 1};
      EXPECT_OK(communicators[i]->AllReduce(group, &value, 1, ElementType::kI32,
                                            CollectiveReduction::kSum));
      EXPECT_EQ(value, i < 2 ? 1 + 2 : 3 + 4);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_TRUE(std::filesystem::is_directory(folder.path() + "/made/here"));
  communicators.clear();
  // The store keeps a world's keys: the same prefix again is refused.
  GlooOptions again = Options(0, 2, store);
  again.prefix = "first";
  ExpectError(CreateGlooCommunicator(again).status(), absl::StatusCode::kInvalidArgument,
              "already holds this rank's keys");
}

TEST(GlooCommunicatorTest, OptionsFromEnvironment) {
  {
    ScopedEnvironment environment({{"ACCY_RANK", "2"},
                                   {"ACCY_WORLD_SIZE", "4"},
                                   {"ACCY_RENDEZVOUS", "redis:store.example:6379"},
                                   {"ACCY_RENDEZVOUS_PREFIX", nullptr},
                                   {"ACCY_HOSTNAME", nullptr},
                                   {"ACCY_COLLECTIVE_TIMEOUT_MS", nullptr}});
    ASSERT_OK_AND_ASSIGN(const GlooOptions options, GlooOptionsFromEnvironment());
    EXPECT_EQ(options.rank, 2);
    EXPECT_EQ(options.world_size, 4);
    EXPECT_EQ(options.rendezvous, "redis:store.example:6379");
    EXPECT_EQ(options.prefix, GlooOptions().prefix);
    EXPECT_EQ(options.hostname, GlooOptions().hostname);
    EXPECT_EQ(options.communicator.timeout, CommunicatorOptions().timeout);
  }
  {
    ScopedEnvironment environment({{"ACCY_RANK", "0"},
                                   {"ACCY_WORLD_SIZE", "1"},
                                   {"ACCY_RENDEZVOUS", "file:/tmp/accy-store"},
                                   {"ACCY_RENDEZVOUS_PREFIX", "job7"},
                                   {"ACCY_HOSTNAME", "10.0.0.5"},
                                   {"ACCY_COLLECTIVE_TIMEOUT_MS", "1500"}});
    ASSERT_OK_AND_ASSIGN(const GlooOptions options, GlooOptionsFromEnvironment());
    EXPECT_EQ(options.prefix, "job7");
    EXPECT_EQ(options.hostname, "10.0.0.5");
    EXPECT_EQ(options.communicator.timeout, milliseconds(1500));
  }
  const struct {
    const char* rank;
    const char* world_size;
    const char* rendezvous;
    const char* timeout;
    const char* fragment;
  } kBad[] = {
      {nullptr, "2", "file:/tmp/x", nullptr, "ACCY_RANK is not set"},
      {"0", nullptr, "file:/tmp/x", nullptr, "ACCY_WORLD_SIZE is not set"},
      {"0", "2", nullptr, nullptr, "ACCY_RENDEZVOUS is not set"},
      {"zero", "2", "file:/tmp/x", nullptr, "ACCY_RANK='zero' is not an integer in [0, 1]"},
      {"2", "2", "file:/tmp/x", nullptr, "ACCY_RANK='2' is not an integer in [0, 1]"},
      {"0", "0", "file:/tmp/x", nullptr, "ACCY_WORLD_SIZE='0'"},
      {"0", "2x", "file:/tmp/x", nullptr, "ACCY_WORLD_SIZE='2x'"},
      {"0", "2", "tcp://x", nullptr, "ACCY_RENDEZVOUS"},
      {"0", "2", "file:/tmp/x", "-5", "ACCY_COLLECTIVE_TIMEOUT_MS='-5'"},
      {"0", "2", "file:/tmp/x", "soon", "ACCY_COLLECTIVE_TIMEOUT_MS='soon'"},
  };
  for (const auto& bad : kBad) {
    ScopedEnvironment environment({{"ACCY_RANK", bad.rank},
                                   {"ACCY_WORLD_SIZE", bad.world_size},
                                   {"ACCY_RENDEZVOUS", bad.rendezvous},
                                   {"ACCY_COLLECTIVE_TIMEOUT_MS", bad.timeout}});
    ExpectError(GlooOptionsFromEnvironment().status(), absl::StatusCode::kInvalidArgument,
                bad.fragment);
  }
}

// A child process joins a world of two, then exits without calling the collective: the
// parent's AllReduce fails (its connection closed, or the timeout) and never hangs. The child
// is forked before this test starts any thread.
TEST(GlooCommunicatorTest, PeerProcessDyingMidRunFailsTheCollective) {
  TempFolder folder("accy-gloo-");
  const std::string store = "file:" + folder.path();
  const milliseconds timeout(1500);
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(go[1]);
    auto created = CreateGlooCommunicator(Options(1, 2, store, timeout));
    char byte;
    // Wait until the parent holds its communicator too, then die without a word.
    const bool told = read(go[0], &byte, 1) == 1;
    _exit(created.ok() && told ? 0 : 2);
  }
  close(go[0]);
  auto created = CreateGlooCommunicator(Options(0, 2, store, timeout));
  ASSERT_EQ(write(go[1], "x", 1), 1);
  close(go[1]);
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  ASSERT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << wait_status;
  ASSERT_OK(created.status());
  Communicator& communicator = *created.value();

  std::vector<float> data(1 << 16, 1.0f);
  const std::vector<int> group = {0, 1};
  const auto start = std::chrono::steady_clock::now();
  const Status status = communicator.AllReduce(group, data.data(), data.size(), ElementType::kF32,
                                               CollectiveReduction::kSum);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_THAT(status.code(),
              AnyOf(absl::StatusCode::kUnavailable, absl::StatusCode::kDeadlineExceeded))
      << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("AllReduce over group {0, 1}"));
  EXPECT_LT(elapsed, timeout + milliseconds(1000));
  ExpectError(communicator.Broadcast(group, 0, data.data(), 4),
              absl::StatusCode::kFailedPrecondition, "broken");
}

}  // namespace
}  // namespace accy
