// `accy run` on a grid of processes (tools/spmd_run.h) and `accy conformance --collectives
// gloo`: processes joined by Gloo give the in-process threads' results; a wrong world size, an
// unreachable store and a peer killed mid-run are clear errors within the timeout, never hangs;
// ranks started by hand meet through a Redis server as they would on several hosts.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/redis_test_server.h"
#include "tests/tools/cli_test_util.h"
#include "tools/npy.h"

namespace accy::tools {
namespace {

using ::testing::HasSubstr;

// Two replicas: the sum over both of x, x's replica id, and a loop of n rounds before it (so a
// process can be kept busy while its peer waits at the all_reduce).
constexpr char kProgram[] = R"(
module @spmd attributes {mhlo.num_replicas = 2 : i32} {
  func.func @main(%x: tensor<3xf32>, %n: tensor<i64>) -> (tensor<3xf32>, tensor<ui32>) {
    %zero = stablehlo.constant dense<0> : tensor<i64>
    %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i64>, tensor<3xf32>
      cond {
        %c = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      } do {
        %one = stablehlo.constant dense<1> : tensor<i64>
        %j = stablehlo.add %i, %one : tensor<i64>
        stablehlo.return %j, %v : tensor<i64>, tensor<3xf32>
      }
    %s = "stablehlo.all_reduce"(%r#1) ({
      ^bb0(%lhs: tensor<f32>, %rhs: tensor<f32>):
        %sum = stablehlo.add %lhs, %rhs : tensor<f32>
        stablehlo.return %sum : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<3xf32>) -> tensor<3xf32>
    %id = stablehlo.replica_id : tensor<ui32>
    return %s, %id : tensor<3xf32>, tensor<ui32>
  }
})";

class SpmdCliTest : public CliTest {
 protected:
  // DIR/processK/input0.npy = [K+1, 2K, -K], input1.npy = loops[K].
  void WriteInputs(const std::vector<int64_t>& loops) {
    for (size_t k = 0; k < loops.size(); ++k) {
      const fs::path folder = dir_ / "in" / ("process" + std::to_string(k));
      fs::create_directories(folder);
      const float f = static_cast<float>(k);
      ASSERT_TRUE(WriteNpyFile((folder / "input0.npy").string(),
                               *Tensor::FromVector(*TensorType::Create(ElementType::kF32, {3}),
                                                   std::vector<float>{f + 1, 2 * f, -f}))
                      .ok());
      ASSERT_TRUE(WriteNpyFile((folder / "input1.npy").string(),
                               *Tensor::FromVector(*TensorType::Create(ElementType::kI64, {}),
                                                   std::vector<int64_t>{loops[k]}))
                      .ok());
    }
  }
  // Runs a shell command line in the test folder; stdout and stderr together.
  CommandResult Shell(const std::string& command) {
    CommandResult result;
    FILE* pipe = ::popen(("cd '" + dir_.string() + "' && " + command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return result;
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
    const int status = ::pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
  }
  std::string Cli() const { return "'" + std::string(ACCY_CLI_PATH) + "'"; }
};

TEST_F(SpmdCliTest, ProcessesThreadsAndTheReferenceGiveTheSameResults) {
  Write("spmd.mlir", kProgram);
  WriteInputs({1, 2});
  const std::string expected =
      "process 0 result 0: tensor<3xf32> [3, 2, -1]\n"
      "process 0 result 1: tensor<ui32> [0]\n"
      "process 1 result 0: tensor<3xf32> [3, 2, -1]\n"
      "process 1 result 1: tensor<ui32> [1]\n";
  for (const std::string mode : {"", " --in-process", " --reference"}) {
    const CommandResult result =
        Accy("run spmd.mlir --input-per-process in --no-cache" + mode);
    EXPECT_EQ(result.exit_code, 0) << mode << ": " << result.output;
    EXPECT_EQ(result.output, expected) << mode;
  }
  // --output-dir: one folder per process.
  const CommandResult written = Accy("run spmd.mlir --input-per-process in --output-dir out");
  ASSERT_EQ(written.exit_code, 0) << written.output;
  StatusOr<Tensor> id = ReadNpyFile((dir_ / "out" / "process1" / "out1.npy").string());
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->GetAsInt64(0), 1);
}

// A donated parameter (tf.aliasing_output): `accy run` gives up its own copy of the input, so
// the all_reduce reduces it in place (a native sum: no copy) on both processes and threads, and
// a single-process elementwise program computes over its input; the printed results are the
// same as without donation.
TEST_F(SpmdCliTest, DonatedParametersRunInPlaceWithTheSameResults) {
  Write("donated.mlir", R"(
module @donated attributes {mhlo.num_replicas = 2 : i32} {
  func.func @main(%x: tensor<3xf32> {tf.aliasing_output = 0 : i32}, %n: tensor<i64>)
      -> tensor<3xf32> {
    %s = "stablehlo.all_reduce"(%x) ({
      ^bb0(%lhs: tensor<f32>, %rhs: tensor<f32>):
        %sum = stablehlo.add %lhs, %rhs : tensor<f32>
        stablehlo.return %sum : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<3xf32>) -> tensor<3xf32>
    return %s : tensor<3xf32>
  }
})");
  WriteInputs({0, 0});
  const std::string expected =
      "process 0 result 0: tensor<3xf32> [3, 2, -1]\n"
      "process 1 result 0: tensor<3xf32> [3, 2, -1]\n";
  for (const std::string mode : {"", " --in-process"}) {
    const CommandResult result =
        Accy("run donated.mlir --input-per-process in --no-cache" + mode);
    EXPECT_EQ(result.exit_code, 0) << mode << ": " << result.output;
    EXPECT_EQ(result.output, expected) << mode;
  }
  Write("square.mlir", R"(
  func.func @main(%x: tensor<3xf32> {jax.buffer_donor = true}) -> tensor<3xf32> {
    %y = stablehlo.multiply %x, %x : tensor<3xf32>
    return %y : tensor<3xf32>
  })");
  const CommandResult square = Accy("run square.mlir --input in/process1/input0.npy --no-cache");
  EXPECT_EQ(square.exit_code, 0) << square.output;
  EXPECT_EQ(square.output, "result 0: tensor<3xf32> [4, 4, 1]\n");
}

TEST_F(SpmdCliTest, GridOptionsAndTheirErrors) {
  Write("spmd.mlir", kProgram);
  WriteInputs({1, 2, 3});
  // --replicas 3 does not match replica_groups [[0, 1]]: a compile error naming the id.
  CommandResult result = Accy("run spmd.mlir --replicas 3 --input-per-process in --in-process");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("replica_groups does not cover id 2"));
  result = Accy("run spmd.mlir --replicas 0 --input-per-process in");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.output, HasSubstr("replicas"));
  result = Accy("run spmd.mlir --in-process");  // no inputs
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("takes 2 parameters, 0 --input given"));
  // No temporary folder for the rendezvous: an error naming it, not an uncaught exception.
  result = AccyWithEnv("TMPDIR=/nonexistent/accy", "run spmd.mlir --input-per-process in");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output,
              HasSubstr("accy run: no rendezvous folder: cannot create a folder in the "
                        "temporary folder /nonexistent/accy: "));
}

TEST_F(SpmdCliTest, WrongWorldSizeAndUnreachableStoreAreClearErrorsAtStart) {
  Write("spmd.mlir", kProgram);
  WriteInputs({1, 1});
  CommandResult result = AccyWithEnv(
      "ACCY_RANK=0 ACCY_WORLD_SIZE=3 ACCY_RENDEZVOUS=file:store",
      "run spmd.mlir --input-per-process in");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output,
              HasSubstr("ACCY_WORLD_SIZE is 3 but the program's grid is 2 replicas x 1 partitions"));
  result = AccyWithEnv("ACCY_RANK=0 ACCY_WORLD_SIZE=2 ACCY_RENDEZVOUS=redis:127.0.0.1:1",
                       "run spmd.mlir --input-per-process in --collective-timeout-ms 2000");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("accy run:"));
  result = AccyWithEnv("ACCY_RANK=0 ACCY_WORLD_SIZE=2 ACCY_RENDEZVOUS=nowhere",
                       "run spmd.mlir --input-per-process in");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("ACCY_RENDEZVOUS"));
  // Only one of two processes starts: it gives up after the timeout, naming the wait.
  const auto start = std::chrono::steady_clock::now();
  result = AccyWithEnv("ACCY_RANK=0 ACCY_WORLD_SIZE=2 ACCY_RENDEZVOUS=file:alone",
                       "run spmd.mlir --input-per-process in --collective-timeout-ms 1000");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_LT(seconds, 30.0);
}

TEST_F(SpmdCliTest, RankVariablesLimitsAndInputOptionsAreCheckedUpFront) {
  Write("spmd.mlir", kProgram);
  WriteInputs({1, 1});
  // One rank variable alone is an error naming the missing one, not a silent launch.
  CommandResult result = AccyWithEnv("ACCY_RANK=0", "run spmd.mlir --input-per-process in");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("ACCY_WORLD_SIZE"));
  result = AccyWithEnv("ACCY_RANK=0 ACCY_WORLD_SIZE=2 ACCY_RENDEZVOUS=file:s",
                       "run spmd.mlir --input-per-process in --in-process");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("--in-process runs every process here"));
  result = Accy("run spmd.mlir --input-per-process in --input a.npy --input b.npy");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.output, HasSubstr("give --input or --input-per-process, not both"));
  // More processes than accy run starts on one host; more than any grid may have.
  result = Accy("run spmd.mlir --replicas 300 --input-per-process in");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("more than accy run starts on one host (256)"));
  result = Accy("run spmd.mlir --replicas 4096 --partitions 4096 --input-per-process in");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("more than accy's limit of 65536 processes"));
  std::string huge = kProgram;
  huge.replace(huge.find("mhlo.num_replicas = 2"), 21, "mhlo.num_replicas = 2147483648");
  Write("huge.mlir", huge);
  result = Accy("run huge.mlir --input-per-process in");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("more than accy's limit of 65536 processes"));
}

TEST_F(SpmdCliTest, AFailingThreadDoesNotMakeTheOthersWaitForTheTimeout) {
  Write("spmd.mlir", kProgram);
  WriteInputs({1, 1});
  // Process 1's first input has the wrong shape: it fails before the all_reduce.
  ASSERT_TRUE(WriteNpyFile((dir_ / "in" / "process1" / "input0.npy").string(),
                           *Tensor::FromVector(*TensorType::Create(ElementType::kF32, {2}),
                                               std::vector<float>{1, 2}))
                  .ok());
  const auto start = std::chrono::steady_clock::now();
  const CommandResult result = Accy("run spmd.mlir --input-per-process in --in-process");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("process 1 (replica 1, partition 0): input 0"));
  EXPECT_LT(seconds, 20.0) << result.output;  // the collective timeout is 60 s
}

TEST_F(SpmdCliTest, TheReferenceRunsCollectivesUnderDivergentControlFlow) {
  // Replica 2 skips the all_reduce of group {0, 1} (case on the replica id): the reference
  // gathers per group, so it does not wait for replica 2.
  Write("div.mlir", R"(
module @div attributes {mhlo.num_replicas = 3 : i32} {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %id = stablehlo.replica_id : tensor<ui32>
    %two = stablehlo.constant dense<2> : tensor<ui32>
    %lt = stablehlo.compare LT, %id, %two : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
    %r = "stablehlo.if"(%lt) ({
      %s = "stablehlo.all_reduce"(%x) ({
        ^bb0(%lhs: tensor<f32>, %rhs: tensor<f32>):
          %sum = stablehlo.add %lhs, %rhs : tensor<f32>
          stablehlo.return %sum : tensor<f32>
      }) {replica_groups = dense<[[0, 1], [2, -1]]> : tensor<2x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
      stablehlo.return %s : tensor<2xf32>
    }, {
      %n = stablehlo.negate %x : tensor<2xf32>
      stablehlo.return %n : tensor<2xf32>
    }) : (tensor<i1>) -> tensor<2xf32>
    return %r : tensor<2xf32>
  }
})");
  const std::vector<float> ones = {1, 1};
  ASSERT_TRUE(WriteNpyFile((dir_ / "x.npy").string(),
                           *Tensor::FromVector(*TensorType::Create(ElementType::kF32, {2}), ones))
                  .ok());
  const std::string expected =
      "process 0 result 0: tensor<2xf32> [2, 2]\n"
      "process 1 result 0: tensor<2xf32> [2, 2]\n"
      "process 2 result 0: tensor<2xf32> [-1, -1]\n";
  for (const std::string mode : {" --in-process", " --reference"}) {
    const CommandResult result =
        Accy("run div.mlir --input x.npy --collective-timeout-ms 10000" + mode);
    EXPECT_EQ(result.exit_code, 0) << mode << ": " << result.output;
    EXPECT_EQ(result.output, expected) << mode;
  }
}

TEST_F(SpmdCliTest, APeerKilledMidRunMakesTheOtherFailNotHang) {
  Write("spmd.mlir", kProgram);
  // Process 1 loops far longer than the test lets it live; process 0 waits at the all_reduce.
  WriteInputs({1, int64_t{1} << 40});
  const std::string env = "ACCY_WORLD_SIZE=2 ACCY_RENDEZVOUS=file:store XDG_CACHE_HOME=xdg ";
  const auto start = std::chrono::steady_clock::now();
  const CommandResult result = Shell(
      "(env ACCY_RANK=1 " + env + "timeout -s KILL 4 " + Cli() +
      " run spmd.mlir --input-per-process in > /dev/null 2>&1 &) ; env ACCY_RANK=0 " + env +
      Cli() + " run spmd.mlir --input-per-process in --collective-timeout-ms 20000");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output, HasSubstr("process 0 (replica 0, partition 0): all_reduce"));
  EXPECT_LT(seconds, 40.0) << result.output;
}

TEST_F(SpmdCliTest, RanksStartedByHandMeetThroughRedis) {
  // What docs/collectives.md's two-host run does, on one host: each rank is an `accy run` of
  // its own, joined through a Redis server (started here, on a free loopback port).
  auto server = RedisTestServer::Start();
  if (server.status().code() == absl::StatusCode::kNotFound) {
    GTEST_SKIP() << server.status().message();
  }
  ASSERT_TRUE(server.ok()) << server.status();
  Write("spmd.mlir", kProgram);
  WriteInputs({1, 2});
  const std::string env = "ACCY_WORLD_SIZE=2 ACCY_RENDEZVOUS=" + (*server)->rendezvous() +
                          " ACCY_RENDEZVOUS_PREFIX=cli-run ACCY_HOSTNAME=127.0.0.1"
                          " XDG_CACHE_HOME=xdg ";
  const std::string run = " run spmd.mlir --input-per-process in --collective-timeout-ms 20000";
  // Rank 1 in the background, rank 0 in the foreground, both in the test folder; then both
  // exit codes.
  const CommandResult result =
      Shell("{ env ACCY_RANK=1 " + env + Cli() + run + " > rank1.txt 2>&1 & env ACCY_RANK=0 " +
            env + Cli() + run + " > rank0.txt 2>&1; first=$?; wait $!; echo \"exit $first $?\"; }");
  const auto output_of = [&](const char* name) {
    std::ifstream in(dir_ / name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  EXPECT_EQ(result.output, "exit 0 0\n") << output_of("rank0.txt") << output_of("rank1.txt");
  EXPECT_EQ(output_of("rank0.txt"),
            "process 0 result 0: tensor<3xf32> [3, 2, -1]\n"
            "process 0 result 1: tensor<ui32> [0]\n");
  EXPECT_EQ(output_of("rank1.txt"),
            "process 1 result 0: tensor<3xf32> [3, 2, -1]\n"
            "process 1 result 1: tensor<ui32> [1]\n");
}

TEST_F(SpmdCliTest, SuiteCollectivesPassAsGlooProcesses) {
  const fs::path interpret = fs::path(ACCY_SOURCE_DIR) / ".." / "shared" / "conformance" /
                             "stablehlo" / "stablehlo" / "tests" / "interpret";
  std::error_code error;
  if (!fs::is_directory(interpret, error)) GTEST_SKIP() << interpret << " not found";
  std::string files;
  for (const char* name : {"all_reduce", "all_gather", "all_to_all", "reduce_scatter",
                           "collective_permute", "collective_broadcast", "collective_reduce",
                           "replica_id", "partition_id"}) {
    files += " '" + (interpret / (std::string(name) + ".mlir")).string() + "'";
  }
  const CommandResult result = Accy("conformance --collectives gloo --no-cache" + files);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("33 passed, 0 failed, 0 skipped"));
  const CommandResult bad = Accy("conformance --collectives mpi" + files);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.output, HasSubstr("--collectives must be in-process or gloo"));
}

}  // namespace
}  // namespace accy::tools
