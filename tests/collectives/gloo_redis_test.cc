// The Gloo communicator's Redis rendezvous (GlooOptions::rendezvous "redis:HOST:PORT",
// accy/collectives.h) against a real redis-server that each test starts on a free loopback port
// (tests/redis_test_server.h; skipped when redis-server is not installed): worlds of 2 and 4
// meet and reduce, prefixes keep runs on one server apart, and an unreachable, stalled or
// vanished server, or a malformed spec, is a clear status within the timeout.
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "accy/collectives.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/collectives/collectives_test_util.h"
#include "tests/redis_test_server.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using std::chrono::milliseconds;
using ::testing::AnyOf;
using ::testing::HasSubstr;

using Clock = std::chrono::steady_clock;

GlooOptions Options(int rank, int world_size, const std::string& rendezvous,
                    const std::string& prefix, milliseconds timeout = milliseconds(10000)) {
  GlooOptions options;
  options.rank = rank;
  options.world_size = world_size;
  options.rendezvous = rendezvous;
  options.prefix = prefix;
  options.communicator.timeout = timeout;
  return options;
}

void ExpectError(const Status& status, absl::StatusCode code,
                 const std::vector<std::string>& fragments) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& fragment : fragments) {
    EXPECT_THAT(std::string(status.message()), HasSubstr(fragment));
  }
}

// What one rank of RunWorld got.
struct RankResult {
  std::vector<int32_t> sum;       // AllReduce (sum) over the world of {r + 1, 10 (r + 1), -r}
  std::vector<int32_t> gathered;  // AllGather over the world of {r, 100 + r + base}
  std::vector<int32_t> pair_sum;  // AllReduce over {r % 2, r % 2 + 2, ...} of r (world of 4)
};

// Runs a world (one thread per rank) through `options[r]`: a world AllReduce, a world
// AllGather (tagged with `base`, so worlds sharing a server can be told apart) and, for a
// world of 4, an AllReduce on the even and the odd ranks (contexts of their own, created
// through the store after the world's).
std::vector<RankResult> RunWorld(const std::vector<GlooOptions>& options, int32_t base) {
  const int n = static_cast<int>(options.size());
  std::vector<RankResult> results(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      auto created = CreateGlooCommunicator(options[static_cast<size_t>(r)]);
      EXPECT_OK(created.status());
      if (!created.ok()) return;
      Communicator& communicator = *created.value();
      std::vector<int> world(static_cast<size_t>(n));
      for (int k = 0; k < n; ++k) world[static_cast<size_t>(k)] = k;
      RankResult& result = results[static_cast<size_t>(r)];
      result.sum = {r + 1, 10 * (r + 1), -r};
      EXPECT_OK(communicator.AllReduce(world, result.sum.data(), 3, ElementType::kI32,
                                       CollectiveReduction::kSum));
      const std::vector<int32_t> mine = {r, 100 + r + base};
      result.gathered.resize(2 * static_cast<size_t>(n));
      EXPECT_OK(
          communicator.AllGather(world, mine.data(), sizeof(int32_t) * 2, result.gathered.data()));
      if (n == 4) {
        const std::vector<int> pair = {r % 2, r % 2 + 2};
        result.pair_sum = {r};
        EXPECT_OK(communicator.AllReduce(pair, result.pair_sum.data(), 1, ElementType::kI32,
                                         CollectiveReduction::kSum));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return results;
}

// The results RunWorld must give for a world of `n` tagged `base`.
void ExpectWorldResults(const std::vector<RankResult>& results, int32_t base) {
  const int32_t n = static_cast<int32_t>(results.size());
  std::vector<int32_t> gathered;
  for (int32_t r = 0; r < n; ++r) {
    gathered.push_back(r);
    gathered.push_back(100 + r + base);
  }
  for (int32_t r = 0; r < n; ++r) {
    const RankResult& result = results[static_cast<size_t>(r)];
    EXPECT_EQ(result.sum,
              (std::vector<int32_t>{n * (n + 1) / 2, 10 * n * (n + 1) / 2, -n * (n - 1) / 2}))
        << "rank " << r << " of " << n;
    EXPECT_EQ(result.gathered, gathered) << "rank " << r << " of " << n;
    if (n == 4) {
      EXPECT_EQ(result.pair_sum, std::vector<int32_t>{r % 2 == 0 ? 0 + 2 : 1 + 3}) << "rank " << r;
    }
  }
}

class GlooRedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = RedisTestServer::Start();
    if (started.status().code() == absl::StatusCode::kNotFound) {
      GTEST_SKIP() << started.status().message();
    }
    ASSERT_OK(started.status());
    server_ = std::move(started).value();
  }
  void TearDown() override { server_.reset(); }  // kills and reaps redis-server

  std::unique_ptr<RedisTestServer> server_;
};

TEST_F(GlooRedisTest, WorldsOfTwoAndFourReduceAndGather) {
  for (const int n : {2, 4}) {
    std::vector<GlooOptions> options;
    for (int r = 0; r < n; ++r) {
      options.push_back(Options(r, n, server_->rendezvous(), "world-of-" + std::to_string(n)));
    }
    ExpectWorldResults(RunWorld(options, 0), 0);
  }
}

TEST_F(GlooRedisTest, RendezvousPrefixesSeparateRunsOnOneServer) {
  // Options as `accy run` builds them: from the environment, one rank at a time.
  const auto from_environment = [&](int world_size, const std::string& prefix) {
    std::vector<GlooOptions> options;
    for (int r = 0; r < world_size; ++r) {
      const std::string rank = std::to_string(r), size = std::to_string(world_size);
      const std::string rendezvous = server_->rendezvous();
      ScopedEnvironment environment({{"ACCY_RANK", rank.c_str()},
                                     {"ACCY_WORLD_SIZE", size.c_str()},
                                     {"ACCY_RENDEZVOUS", rendezvous.c_str()},
                                     {"ACCY_RENDEZVOUS_PREFIX", prefix.c_str()},
                                     {"ACCY_HOSTNAME", "127.0.0.1"},
                                     {"ACCY_COLLECTIVE_TIMEOUT_MS", "10000"}});
      auto parsed = GlooOptionsFromEnvironment();
      EXPECT_OK(parsed.status());
      if (parsed.ok()) options.push_back(*parsed);
    }
    return options;
  };
  // One run after the other, then two at the same time, on the same server.
  const std::vector<GlooOptions> first = from_environment(2, "run-1");
  ASSERT_EQ(first.size(), 2u);
  ExpectWorldResults(RunWorld(first, 0), 0);
  const std::vector<GlooOptions> second = from_environment(2, "run-2");
  ASSERT_EQ(second.size(), 2u);
  ExpectWorldResults(RunWorld(second, 1000), 1000);
  const std::vector<GlooOptions> third = from_environment(2, "run-3");
  const std::vector<GlooOptions> fourth = from_environment(2, "run-4");
  ASSERT_EQ(third.size() + fourth.size(), 4u);
  std::vector<RankResult> third_results, fourth_results;
  std::thread other([&] { fourth_results = RunWorld(fourth, 4000); });
  third_results = RunWorld(third, 3000);
  other.join();
  ExpectWorldResults(third_results, 3000);
  ExpectWorldResults(fourth_results, 4000);
  // The server keeps a run's keys: its prefix again is refused, naming the store.
  ExpectError(CreateGlooCommunicator(first[0]).status(), absl::StatusCode::kInvalidArgument,
              {server_->rendezvous() + " prefix 'run-1' already holds this rank's keys"});
}

TEST(GlooRedisErrorTest, UnreachableServerIsUnavailableNamingHostAndPort) {
  const int port = FreeLoopbackPort();  // nothing listens there
  ASSERT_NE(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const milliseconds timeout(2000);
  const auto start = Clock::now();
  const auto created =
      CreateGlooCommunicator(Options(0, 2, "redis:" + address, "unreachable", timeout));
  EXPECT_LT(Clock::now() - start, timeout);
  ExpectError(created.status(), absl::StatusCode::kUnavailable,
              {"store 'redis:" + address + "' cannot be reached", "Connection refused"});
}

TEST_F(GlooRedisTest, MissingRankIsDeadlineExceededNamingTheStore) {
  const milliseconds timeout(300);
  const auto start = Clock::now();
  const auto created =
      CreateGlooCommunicator(Options(0, 2, server_->rendezvous(), "alone", timeout));
  const auto elapsed = Clock::now() - start;
  ExpectError(created.status(), absl::StatusCode::kDeadlineExceeded,
              {"rank 1 did not join through " + server_->rendezvous() + " prefix 'alone'"});
  EXPECT_GE(elapsed, timeout);
  EXPECT_LT(elapsed, timeout + milliseconds(1000));
}

TEST_F(GlooRedisTest, StalledServerIsDeadlineExceededWithinTheTimeout) {
  // A stopped server still accepts connections (the kernel's backlog) but never replies.
  ASSERT_EQ(kill(server_->pid(), SIGSTOP), 0);
  const milliseconds timeout(500);
  const auto start = Clock::now();
  const auto created =
      CreateGlooCommunicator(Options(0, 2, server_->rendezvous(), "stalled", timeout));
  const auto elapsed = Clock::now() - start;
  ExpectError(created.status(), absl::StatusCode::kDeadlineExceeded,
              {"Redis server 127.0.0.1:" + std::to_string(server_->port()),
               "did not reply before the 500 ms timeout ran out"});
  EXPECT_LT(elapsed, timeout + milliseconds(1000));
}

TEST_F(GlooRedisTest, ServerGoneDuringTheRendezvousIsUnavailable) {
  // Rank 0 waits for rank 1, which never comes; the server dies meanwhile.
  const milliseconds timeout(5000);
  std::thread killer([&] {
    std::this_thread::sleep_for(milliseconds(300));
    server_->Kill();
  });
  const auto start = Clock::now();
  const auto created =
      CreateGlooCommunicator(Options(0, 2, server_->rendezvous(), "vanishing", timeout));
  const auto elapsed = Clock::now() - start;
  killer.join();
  ExpectError(created.status(), absl::StatusCode::kUnavailable,
              {"Redis server 127.0.0.1:" + std::to_string(server_->port())});
  EXPECT_LT(elapsed, timeout);
}

TEST(GlooRedisErrorTest, MalformedRedisSpecIsRejectedNamingTheValue) {
  const struct {
    const char* rendezvous;
    const char* why;
  } kBad[] = {
      {"redis:", "no host and port"},
      {"redis:localhost", "no port"},
      {"redis:localhost:", "port '' is not a number in [1, 65535]"},
      {"redis:localhost:0", "port '0' is not a number in [1, 65535]"},
      {"redis:localhost:65536", "port '65536' is not a number in [1, 65535]"},
      {"redis:localhost:http", "port 'http' is not a number in [1, 65535]"},
      {"redis:localhost:-6379", "port '-6379' is not a number in [1, 65535]"},
      {"redis::6379", "no host"},
  };
  for (const auto& bad : kBad) {
    ScopedEnvironment environment({{"ACCY_RANK", "0"},
                                   {"ACCY_WORLD_SIZE", "2"},
                                   {"ACCY_RENDEZVOUS", bad.rendezvous},
                                   {"ACCY_COLLECTIVE_TIMEOUT_MS", nullptr}});
    ExpectError(GlooOptionsFromEnvironment().status(), absl::StatusCode::kInvalidArgument,
                {"ACCY_RENDEZVOUS", std::string("'") + bad.rendezvous + "': " + bad.why});
  }
}

}  // namespace
}  // namespace accy
