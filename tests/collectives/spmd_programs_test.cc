// SPMD programs with collectives through the engine (CollectiveKernel items, RunOptions) and the
// reference evaluator (src/reference/collectives.cc), each process a thread with an in-process
// communicator: the two agree bit for bit (integers, and float sums folded in group order by
// both), and the executor's errors name what is wrong.
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "accy/collectives.h"
#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/collectives/collectives_test_util.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

// Input of process p: iota-like values distinct per process and element.
template <typename T>
Tensor ProcessInput(const TensorType& type, int process) {
  std::vector<T> values(static_cast<size_t>(type.element_count()));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<T>(static_cast<double>(process * 100 + static_cast<int>(i)) * 0.75 + 1);
  }
  return *Tensor::FromVector(type, values);
}

void ExpectSameBytes(const std::vector<std::vector<Tensor>>& a,
                     const std::vector<std::vector<Tensor>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t p = 0; p < a.size(); ++p) {
    ASSERT_EQ(a[p].size(), b[p].size()) << "process " << p;
    for (size_t r = 0; r < a[p].size(); ++r) {
      ASSERT_EQ(a[p][r].type(), b[p][r].type()) << "process " << p << " result " << r;
      EXPECT_TRUE(std::equal(a[p][r].bytes().begin(), a[p][r].bytes().end(),
                             b[p][r].bytes().begin()))
          << "process " << p << " result " << r;
    }
  }
}

// Runs `text`'s @main on its grid through the engine and the reference; compares.
void ExpectEngineMatchesReference(const std::string& text, int threads = 1) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const int world = static_cast<int>(module->num_replicas() * module->num_partitions());
  EngineOptions engine_options;
  engine_options.num_threads = threads;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(engine_options));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module, "main"));
  EXPECT_TRUE(executable->has_collectives());
  EXPECT_EQ(executable->num_replicas() * executable->num_partitions(), world);
  auto inputs_of = [&](int p) {
    std::vector<Tensor> inputs;
    for (const TensorType& type : executable->parameter_types()) {
      inputs.push_back(type.element_type() == ElementType::kF32 ? ProcessInput<float>(type, p)
                                                                : ProcessInput<int64_t>(type, p));
    }
    return inputs;
  };
  ASSERT_OK_AND_ASSIGN(auto engine_out, RunGrid(world, [&](int p, Communicator& c) {
                         RunOptions options;
                         options.communicator = &c;
                         return executable->Run(inputs_of(p), options);
                       }));
  ASSERT_OK_AND_ASSIGN(auto reference_out, RunGrid(world, [&](int p, Communicator& c) {
                         ReferenceOptions options;
                         options.communicator = &c;
                         return Evaluate(*module, "main", inputs_of(p), options);
                       }));
  ExpectSameBytes(engine_out, reference_out);
}

constexpr char kSumBody[] = R"(({
      ^bb0(%lhs: tensor<f32>, %rhs: tensor<f32>):
        %sum = stablehlo.add %lhs, %rhs : tensor<f32>
        stablehlo.return %sum : tensor<f32>
    }))";

std::string Grid(int replicas, int partitions) {
  return "module @m attributes {mhlo.num_replicas = " + std::to_string(replicas) +
         " : i32, mhlo.num_partitions = " + std::to_string(partitions) + " : i32} {\n";
}

TEST(SpmdProgramsTest, EveryCollectiveMatchesTheReferenceOnATwoByTwoGrid) {
  const std::string text = Grid(2, 2) + R"(
  func.func @main(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x12xf32>, tensor<2x6xf32>,
      tensor<8x3xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<ui32>, tensor<ui32>,
      tensor<4x6xf32>, tensor<16x6xf32>) {
    %r = "stablehlo.all_reduce"(%x) )" + std::string(kSumBody) + R"( {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %g = "stablehlo.all_gather"(%x) {all_gather_dim = 1 : i64,
      replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>} : (tensor<4x6xf32>) -> tensor<4x12xf32>
    %s = "stablehlo.reduce_scatter"(%x) )" + std::string(kSumBody) + R"( {scatter_dimension = 0 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x6xf32>) -> tensor<2x6xf32>
    %t = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64,
      split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>}
      : (tensor<4x6xf32>) -> tensor<8x3xf32>
    %p = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}
      : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %b = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>}
      : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %ri = stablehlo.replica_id : tensor<ui32>
    %pi = stablehlo.partition_id : tensor<ui32>
    %c = "stablehlo.collective_reduce"(%x) )" + std::string(kSumBody) + R"( {
      replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %f = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 3, 1, 2]]> : tensor<1x4xi64>, use_global_device_ids,
      channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>}
      : (tensor<4x6xf32>) -> tensor<16x6xf32>
    return %r, %g, %s, %t, %p, %b, %ri, %pi, %c, %f : tensor<4x6xf32>, tensor<4x12xf32>,
      tensor<2x6xf32>, tensor<8x3xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<ui32>,
      tensor<ui32>, tensor<4x6xf32>, tensor<16x6xf32>
  }
})";
  ExpectEngineMatchesReference(text, 1);
  ExpectEngineMatchesReference(text, 2);
}

TEST(SpmdProgramsTest, ExactValuesOfAnAllReduceAndReplicaIds) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(Grid(3, 1) + R"(
  func.func @main(%x: tensor<2xi32>) -> (tensor<2xi32>, tensor<ui32>) {
    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %m = stablehlo.maximum %a, %b : tensor<i32>
        stablehlo.return %m : tensor<i32>
    }) {replica_groups = dense<[[0, 2], [1, -1]]> : tensor<2x2xi64>}
      : (tensor<2xi32>) -> tensor<2xi32>
    %id = stablehlo.replica_id : tensor<ui32>
    return %r, %id : tensor<2xi32>, tensor<ui32>
  }
})"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module, "main"));
  const std::vector<std::vector<int32_t>> inputs = {{5, -1}, {7, 8}, {-3, 9}};
  ASSERT_OK_AND_ASSIGN(auto out, RunGrid(3, [&](int p, Communicator& c) {
                         RunOptions options;
                         options.communicator = &c;
                         Tensor x = *Tensor::FromVector(*TensorType::Create(ElementType::kI32, {2}),
                                                        inputs[static_cast<size_t>(p)]);
                         return executable->Run(std::vector<Tensor>{x}, options);
                       }));
  // Groups {0, 2} (the ragged row's -1 dropped) and {1}.
  const std::vector<std::vector<int32_t>> expected = {{5, 9}, {7, 8}, {5, 9}};
  for (int p = 0; p < 3; ++p) {
    const int32_t* r = static_cast<const int32_t*>(out[static_cast<size_t>(p)][0].data());
    EXPECT_EQ(r[0], expected[static_cast<size_t>(p)][0]) << p;
    EXPECT_EQ(r[1], expected[static_cast<size_t>(p)][1]) << p;
    EXPECT_EQ(*static_cast<const uint32_t*>(out[static_cast<size_t>(p)][1].data()),
              static_cast<uint32_t>(p));
  }
}

TEST(SpmdProgramsTest, GeneralComputationsFoldInGroupOrder) {
  // subtract is not commutative: ((x_g0 - x_g1) - x_g2) with the group order [2, 0, 1]; a body
  // of several ops with a constant (2a + b) in reduce_scatter and collective_reduce.
  const std::string text = Grid(3, 1) + R"(
  func.func @main(%x: tensor<6xf32>) -> (tensor<6xf32>, tensor<2xf32>, tensor<6xf32>) {
    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.subtract %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[2, 0, 1]]> : tensor<1x3xi64>} : (tensor<6xf32>) -> tensor<6xf32>
    %q = "stablehlo.reduce_scatter"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %two = stablehlo.constant dense<2.0> : tensor<f32>
        %t = stablehlo.multiply %a, %two : tensor<f32>
        %s = stablehlo.add %t, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {scatter_dimension = 0 : i64, replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>}
      : (tensor<6xf32>) -> tensor<2xf32>
    %c = "stablehlo.collective_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.subtract %b, %a : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[1, 2, 0]]> : tensor<1x3xi64>} : (tensor<6xf32>) -> tensor<6xf32>
    return %r, %q, %c : tensor<6xf32>, tensor<2xf32>, tensor<6xf32>
  }
})";
  ExpectEngineMatchesReference(text);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module, "main"));
  ASSERT_OK_AND_ASSIGN(auto out, RunGrid(3, [&](int p, Communicator& c) {
                         RunOptions options;
                         options.communicator = &c;
                         std::vector<float> x(6, 10.0f * static_cast<float>(p + 1));
                         return executable->Run(
                             std::vector<Tensor>{*Tensor::FromVector(
                                 *TensorType::Create(ElementType::kF32, {6}), x)},
                             options);
                       }));
  // x_p = 10 (p + 1): all_reduce over [2, 0, 1] = (30 - 10) - 20 = 0;
  // reduce_scatter over [0, 1, 2] = 2 (2 * 10 + 20) + 30 = 110.
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(static_cast<const float*>(out[static_cast<size_t>(p)][0].data())[5], 0.0f);
    EXPECT_EQ(static_cast<const float*>(out[static_cast<size_t>(p)][1].data())[1], 110.0f);
  }
  // collective_reduce over [1, 2, 0] at process 1: x_0 - (x_2 - x_1) = 10 - (30 - 20) = 0;
  // zeros elsewhere.
  EXPECT_EQ(static_cast<const float*>(out[1][2].data())[0], 0.0f);
  EXPECT_EQ(static_cast<const float*>(out[0][2].data())[0], 0.0f);
}

TEST(SpmdProgramsTest, LargeCollectivesOverlapIndependentItems) {
  // The planner issues ready collectives first: %g (1 MiB) overlaps the independent
  // multiply / add / negate fusion (exact ops: the comparison is bit for bit) and joins before the next collective, %h; %h overlaps %o = %g + %s and joins
  // before %m reads it. Both overlap; the values are the reference's.
  const std::string text = Grid(2, 1) + R"(
  func.func @main(%x: tensor<262144xf32>, %z: tensor<262144xf32>) -> (tensor<262144xf32>,
      tensor<262144xf32>, tensor<262144xf32>) {
    %g = "stablehlo.all_reduce"(%x) )" + std::string(kSumBody) + R"( {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<262144xf32>) -> tensor<262144xf32>
    %e = stablehlo.multiply %z, %z : tensor<262144xf32>
    %t = stablehlo.add %e, %z : tensor<262144xf32>
    %s = stablehlo.negate %t : tensor<262144xf32>
    %o = stablehlo.add %g, %s : tensor<262144xf32>
    %h = "stablehlo.all_reduce"(%s) )" + std::string(kSumBody) + R"( {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<262144xf32>) -> tensor<262144xf32>
    %m = stablehlo.multiply %h, %o : tensor<262144xf32>
    return %o, %m, %g : tensor<262144xf32>, tensor<262144xf32>, tensor<262144xf32>
  }
})";
  for (int threads : {1, 2}) {
    ExpectEngineMatchesReference(text, threads);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
    EngineOptions options;
    options.num_threads = threads;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module, "main"));
    EXPECT_EQ(executable->Stats().overlapped_collectives, 2) << executable->plan_text();
  }
}

TEST(SpmdProgramsTest, SmallOrImmediatelyReadCollectivesRunInOrder) {
  // 4 KiB (below 256 KiB), and 1 MiB read by the very next item: neither overlaps.
  for (const std::string n : {"1024", "262144"}) {
    const std::string type = "tensor<" + n + "xf32>";
    const std::string text = Grid(2, 1) + R"(
  func.func @main(%x: )" + type + ") -> " + type + R"( {
    %g = "stablehlo.all_reduce"(%x) )" + std::string(kSumBody) + R"( {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : ()" + type + ") -> " + type + R"(
    %e = stablehlo.negate %g : )" + type + R"(
    return %e : )" + type + R"(
  }
})";
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module, "main"));
    EXPECT_EQ(executable->Stats().overlapped_collectives, 0) << n;
    ExpectEngineMatchesReference(text);
  }
}

TEST(SpmdProgramsTest, CollectivesInsideAWhileBodyUseTheRunsCommunicator) {
  // Three iterations of x = all_reduce(x) over two replicas: x * 2^3.
  const std::string text = Grid(2, 1) + R"(
  func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<3xf32>
      cond {
        %n = stablehlo.constant dense<3> : tensor<i32>
        %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      } do {
        %one = stablehlo.constant dense<1> : tensor<i32>
        %j = stablehlo.add %i, %one : tensor<i32>
        %s = "stablehlo.all_reduce"(%v) )" + std::string(kSumBody) + R"( {
          replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<3xf32>) -> tensor<3xf32>
        stablehlo.return %j, %s : tensor<i32>, tensor<3xf32>
      }
    return %r#1 : tensor<3xf32>
  }
})";
  ExpectEngineMatchesReference(text);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module, "main"));
  EXPECT_TRUE(executable->has_collectives());
  ASSERT_OK_AND_ASSIGN(auto out, RunGrid(2, [&](int p, Communicator& c) {
                         RunOptions options;
                         options.communicator = &c;
                         Tensor x = *Tensor::FromVector(*TensorType::Create(ElementType::kF32, {3}),
                                                        std::vector<float>{1.0f * (p + 1), 2, 3});
                         return executable->Run(std::vector<Tensor>{x}, options);
                       }));
  // Iteration 1: (1+2, 4, 6); each later one doubles: (12, 16, 24).
  for (int p = 0; p < 2; ++p) {
    const float* r = static_cast<const float*>(out[static_cast<size_t>(p)][0].data());
    EXPECT_EQ(r[0], 12.0f);
    EXPECT_EQ(r[1], 16.0f);
    EXPECT_EQ(r[2], 24.0f);
  }
}

TEST(SpmdProgramsTest, OneProcessGridNeedsNoCommunicator) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"(
  func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<4xf32>) {
    %r = "stablehlo.all_reduce"(%x) )" + std::string(kSumBody) + R"( {
      replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    %g = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64} : (tensor<2xf32>) -> tensor<2xf32>
    %p = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 0]]> : tensor<1x2xi64>}
      : (tensor<2xf32>) -> tensor<2xf32>
    %c = stablehlo.concatenate %g, %p, dim = 0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
    return %r, %c : tensor<2xf32>, tensor<4xf32>
  })"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module, "main"));
  Tensor x = *Tensor::FromVector(*TensorType::Create(ElementType::kF32, {2}),
                                 std::vector<float>{1.5f, -2.0f});
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, executable->Run(std::vector<Tensor>{x}));
  EXPECT_EQ(static_cast<const float*>(out[0].data())[1], -2.0f);
  const float* c = static_cast<const float*>(out[1].data());
  EXPECT_EQ(c[0], 1.5f);
  EXPECT_EQ(c[3], -2.0f);
}

class SpmdErrorsTest : public ::testing::Test {
 protected:
  std::unique_ptr<Executable> CompileTwoReplicas() {
    auto module = ParseStableHlo(Grid(2, 1) + R"(
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %r = "stablehlo.all_reduce"(%x) )" + std::string(kSumBody) + R"( {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %r : tensor<2xf32>
  }
})");
    EXPECT_TRUE(module.ok()) << module.status();
    auto engine = Engine::Create();
    auto executable = (*engine)->Compile(**module, "main");
    EXPECT_TRUE(executable.ok()) << executable.status();
    return *std::move(executable);
  }
  Tensor Input() {
    return *Tensor::FromVector(*TensorType::Create(ElementType::kF32, {2}),
                               std::vector<float>{1, 2});
  }
};

TEST_F(SpmdErrorsTest, RunWithoutCommunicatorOnALargerGridIsAnError) {
  std::unique_ptr<Executable> executable = CompileTwoReplicas();
  StatusOr<std::vector<Tensor>> out = executable->Run(std::vector<Tensor>{Input()});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("needs RunOptions::communicator"));
}

TEST_F(SpmdErrorsTest, CommunicatorOfTheWrongWorldSizeIsAnError) {
  std::unique_ptr<Executable> executable = CompileTwoReplicas();
  ASSERT_OK_AND_ASSIGN(auto communicators, CreateInProcessCommunicators(3));
  RunOptions options;
  options.communicator = communicators[0].get();
  StatusOr<std::vector<Tensor>> out = executable->Run(std::vector<Tensor>{Input()}, options);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("world of 3 processes"));
}

TEST_F(SpmdErrorsTest, ProgramsWithoutCollectivesIgnoreTheCommunicator) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"(
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %y = stablehlo.negate %x : tensor<2xf32>
    return %y : tensor<2xf32>
  })"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module, "main"));
  EXPECT_FALSE(executable->has_collectives());
  ASSERT_OK_AND_ASSIGN(auto communicators, CreateInProcessCommunicators(3));
  RunOptions options;
  options.communicator = communicators[1].get();
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                       executable->Run(std::vector<Tensor>{Input()}, options));
  EXPECT_EQ(static_cast<const float*>(out[0].data())[1], -2.0f);
}

TEST_F(SpmdErrorsTest, AMissingPeerIsADeadlineErrorNamingTheOp) {
  std::unique_ptr<Executable> executable = CompileTwoReplicas();
  CommunicatorOptions communicator_options;
  communicator_options.timeout = std::chrono::milliseconds(200);
  ASSERT_OK_AND_ASSIGN(auto communicators, CreateInProcessCommunicators(2, communicator_options));
  RunOptions options;
  options.communicator = communicators[0].get();  // process 1 never runs
  StatusOr<std::vector<Tensor>> out = executable->Run(std::vector<Tensor>{Input()}, options);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(out.status().message(), HasSubstr("all_reduce"));
}

TEST(SpmdCompileErrorsTest, BadGroupsAndBodiesAreCompileErrors) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  struct Case {
    std::string text;
    absl::StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {Grid(2, 1) + R"(func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %r = "stablehlo.all_reduce"(%x) )" + std::string(kSumBody) + R"( {
      replica_groups = dense<[[0, 2]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %r : tensor<2xf32>
  }})",
       absl::StatusCode::kInvalidArgument, "replica_groups holds id 2, outside [0, 2)"},
      {Grid(3, 1) + R"(func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %r = "stablehlo.all_reduce"(%x) )" + std::string(kSumBody) + R"( {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %r : tensor<2xf32>
  }})",
       absl::StatusCode::kInvalidArgument, "does not cover id 2"},
      {Grid(2, 1) + R"(func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %i = stablehlo.constant dense<0> : tensor<i32>
        %s = "stablehlo.case"(%i) ({
          stablehlo.return %a : tensor<f32>
        }) : (tensor<i32>) -> tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %r : tensor<2xf32>
  }})",
       absl::StatusCode::kUnimplemented, "a computation with case"},
      {Grid(2, 2) + R"(func.func @main(%x: tensor<2xf32>) -> tensor<4xf32> {
    %g = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>}
      : (tensor<2xf32>) -> tensor<4xf32>
    return %g : tensor<4xf32>
  }})",
       absl::StatusCode::kInvalidArgument, "has 4 processes, but the op's types need 2"},
  };
  for (const Case& c : cases) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(c.text));
    StatusOr<std::unique_ptr<Executable>> executable = engine->Compile(*module, "main");
    ASSERT_FALSE(executable.ok()) << c.message;
    EXPECT_EQ(executable.status().code(), c.code) << executable.status();
    EXPECT_THAT(executable.status().message(), HasSubstr(c.message));
  }
}

TEST(SpmdProgramsTest, DynamicRootOutsideTheGroupIsARunError) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(Grid(2, 1) + R"(
  func.func @main(%x: tensor<2xf32>, %root: tensor<1xi32>) -> tensor<2xf32> {
    %b = "stablehlo.collective_broadcast"(%x, %root) {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, has_dynamic_root}
      : (tensor<2xf32>, tensor<1xi32>) -> tensor<2xf32>
    return %b : tensor<2xf32>
  }
})"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module, "main"));
  for (int32_t root : {1, 2}) {
    StatusOr<std::vector<std::vector<Tensor>>> out =
        RunGrid(2, [&](int p, Communicator& c) {
          RunOptions options;
          options.communicator = &c;
          Tensor x = *Tensor::FromVector(*TensorType::Create(ElementType::kF32, {2}),
                                         std::vector<float>{1.0f + p, 10.0f + p});
          Tensor r = *Tensor::FromVector(*TensorType::Create(ElementType::kI32, {1}),
                                         std::vector<int32_t>{root});
          return executable->Run(std::vector<Tensor>{x, r}, options);
        }, std::chrono::milliseconds(500));
    if (root == 1) {
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(static_cast<const float*>((*out)[0][0].data())[1], 11.0f);
    } else {
      ASSERT_FALSE(out.ok());
      EXPECT_THAT(out.status().message(), HasSubstr("root 2 of operand 0 is outside the group"));
    }
  }
}

}  // namespace
}  // namespace accy
