// all_to_all through the executor (CollectiveKernel) on both communicators (in-process threads,
// and Gloo: one communicator per thread over a FileStore, TCP on 127.0.0.1), worlds of 2 and 4,
// against the reference evaluator bit for bit, for split / concat dimension pairs that take each
// of the kernel's four paths: the communicator sends straight from the operand when
// split_dimension has only size-1 dims before it, and receives straight into the result when
// concat_dimension has only size-1 dims before it; otherwise through staging buffers. A
// recording communicator checks which buffers the kernel handed to AllToAll.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "accy/collectives.h"
#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/collectives/collectives_test_util.h"
#include "tests/test_util.h"

namespace accy {
namespace {

// Forwards every primitive to `inner`; remembers the buffers of the last AllToAll.
class RecordingCommunicator final : public ForwardingCommunicator {
 public:
  using ForwardingCommunicator::ForwardingCommunicator;
  Status AllToAll(std::span<const int> group, const void* send, int64_t chunk_bytes,
                  void* recv) override {
    last_send = send;
    last_recv = recv;
    last_chunk_bytes = chunk_bytes;
    return ForwardingCommunicator::AllToAll(group, send, chunk_bytes, recv);
  }

  const void* last_send = nullptr;
  const void* last_recv = nullptr;
  int64_t last_chunk_bytes = -1;
};

enum class Kind { kInProcess, kGloo };
struct WorldParam {
  Kind kind;
  int size;
};

// One all_to_all program: operand dims, split / concat dimension, split_count (the group
// size) and replica_groups.
struct Case {
  std::vector<int64_t> dims;
  int64_t split;
  int64_t concat;
  int members;
  std::string groups;  // dense<...> literal
  ElementType type = ElementType::kF32;
};

std::string TypeText(const std::vector<int64_t>& dims, ElementType type) {
  std::string text = "tensor<";
  for (int64_t d : dims) text += std::to_string(d) + "x";
  return text + (type == ElementType::kF32 ? "f32>" : "i64>");
}

std::vector<int64_t> ResultDims(const Case& c) {
  std::vector<int64_t> dims = c.dims;
  dims[static_cast<size_t>(c.split)] /= c.members;
  dims[static_cast<size_t>(c.concat)] *= c.members;
  return dims;
}

std::string Program(const Case& c, int world) {
  const std::string in = TypeText(c.dims, c.type);
  const std::string out = TypeText(ResultDims(c), c.type);
  return "module @m attributes {mhlo.num_replicas = " + std::to_string(world) +
         " : i32} {\n  func.func @main(%x: " + in + ") -> " + out +
         " {\n    %t = \"stablehlo.all_to_all\"(%x) {split_dimension = " +
         std::to_string(c.split) + " : i64, concat_dimension = " + std::to_string(c.concat) +
         " : i64, split_count = " + std::to_string(c.members) +
         " : i64, replica_groups = " + c.groups + "} : (" + in + ") -> " + out +
         "\n    return %t : " + out + "\n  }\n}\n";
}

// Whether every dim before `dim` has size 1 (the chunks are contiguous there).
bool OnlyOnesBefore(const std::vector<int64_t>& dims, int64_t dim) {
  for (int64_t d = 0; d < dim; ++d) {
    if (dims[static_cast<size_t>(d)] != 1) return false;
  }
  return true;
}

// Distinct values per process and element, exact in f32 and i64.
Tensor ProcessInput(const TensorType& type, int process) {
  const size_t n = static_cast<size_t>(type.element_count());
  if (type.element_type() == ElementType::kF32) {
    std::vector<float> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = static_cast<float>(process * 1000 + i) + 0.5f;
    return *Tensor::FromVector(type, values);
  }
  std::vector<int64_t> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = (int64_t{process} << 40) + static_cast<int64_t>(i);
  return *Tensor::FromVector(type, values);
}

class AllToAllTest : public ::testing::TestWithParam<WorldParam> {
 protected:
  int size() const { return GetParam().size; }

  // The world's communicators, by rank: in-process, or Gloo over a fresh FileStore.
  std::vector<std::unique_ptr<Communicator>> MakeWorld() {
    const std::chrono::milliseconds timeout(20000);
    if (GetParam().kind == Kind::kInProcess) {
      return *CreateInProcessCommunicators(size(), CommunicatorOptions{timeout});
    }
    std::vector<std::unique_ptr<Communicator>> world(static_cast<size_t>(size()));
    const std::string rendezvous = "file:" + folder_.path();
    OnEachRank(size(), [&](int rank) {
      GlooOptions options;
      options.rank = rank;
      options.world_size = size();
      options.rendezvous = rendezvous;
      options.communicator.timeout = timeout;
      auto created = CreateGlooCommunicator(options);
      EXPECT_OK(created.status());
      if (created.ok()) world[static_cast<size_t>(rank)] = *std::move(created);
    });
    return world;
  }

  // Runs `c` through the engine on `world` and through the reference evaluator (in-process);
  // checks the bytes and which buffers the kernel gave the communicator.
  void Check(const Case& c, std::vector<std::unique_ptr<Communicator>>& world) {
    const std::string text = Program(c, size());
    SCOPED_TRACE(text);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module, "main"));
    const TensorType in_type = executable->parameter_types()[0];
    const TensorType out_type = executable->result_types()[0];
    std::vector<Tensor> inputs, outputs, expected(static_cast<size_t>(size()));
    std::vector<std::unique_ptr<RecordingCommunicator>> recorders;
    for (int p = 0; p < size(); ++p) {
      inputs.push_back(ProcessInput(in_type, p));
      outputs.push_back(*Tensor::Allocate(out_type));
      recorders.push_back(std::make_unique<RecordingCommunicator>(*world[static_cast<size_t>(p)]));
    }
    std::vector<Status> statuses(static_cast<size_t>(size()));
    OnEachRank(size(), [&](int p) {
      RunOptions options;
      options.communicator = recorders[static_cast<size_t>(p)].get();
      statuses[static_cast<size_t>(p)] =
          executable->Run(std::span<const Tensor>(&inputs[static_cast<size_t>(p)], 1),
                          std::span<Tensor>(&outputs[static_cast<size_t>(p)], 1), options);
    });
    for (const Status& status : statuses) ASSERT_OK(status);
    auto reference_world = *CreateInProcessCommunicators(size());
    OnEachRank(size(), [&](int p) {
      ReferenceOptions options;
      options.communicator = reference_world[static_cast<size_t>(p)].get();
      auto out = Evaluate(*module, "main", std::vector<Tensor>{inputs[static_cast<size_t>(p)]},
                          options);
      statuses[static_cast<size_t>(p)] = out.status();
      if (out.ok()) expected[static_cast<size_t>(p)] = (*out)[0];
    });
    for (const Status& status : statuses) ASSERT_OK(status);
    const bool send_direct = OnlyOnesBefore(c.dims, c.split);
    const bool recv_direct = OnlyOnesBefore(ResultDims(c), c.concat);
    for (int p = 0; p < size(); ++p) {
      const size_t i = static_cast<size_t>(p);
      const TensorComparison same = CompareExact(outputs[i], expected[i]);
      EXPECT_TRUE(same.ok) << "process " << p << ": " << same.message;
      const RecordingCommunicator& r = *recorders[i];
      EXPECT_EQ(r.last_chunk_bytes, *in_type.ByteSize() / c.members) << "process " << p;
      EXPECT_EQ(r.last_send == inputs[i].data(), send_direct) << "process " << p;
      EXPECT_EQ(r.last_recv == outputs[i].data(), recv_direct) << "process " << p;
    }
  }

  TempFolder folder_{"accy-all-to-all-"};
};

std::string WholeWorld(int size) {
  std::string groups = "dense<[[";
  for (int r = 0; r < size; ++r) groups += (r > 0 ? ", " : "") + std::to_string(r);
  return groups + "]]> : tensor<1x" + std::to_string(size) + "xi64>";
}

// Every path, on a group of the whole world: staging for neither, one or both sides.
TEST_P(AllToAllTest, EveryLayoutMatchesTheReferenceAndStagesOnlyWhereNeeded) {
  std::vector<std::unique_ptr<Communicator>> world = MakeWorld();
  const int m = size();
  const std::string all = WholeWorld(m);
  const std::vector<Case> cases = {
      {{8, 6}, 0, 0, m, all},                        // send and receive in place
      {{8, 6}, 0, 1, m, all},                        // send in place, receive staged
      {{6, 8}, 1, 0, m, all},                        // send staged, receive in place
      {{6, 8}, 1, 1, m, all},                        // both staged
      {{1, 8, 4}, 1, 1, m, all},                     // size-1 dims before: both in place
      {{1, 4, 8}, 2, 1, m, all},                     // send staged, receive in place
      {{2, 8, 4}, 1, 2, m, all},                     // both staged, three dims
      {{1, 1, 8, 4}, 2, 3, m, all},                  // send in place, receive staged
      {{1, 4, 4}, 1, 2, m, all},                     // chunk [1, 4/m, 4]: m = 4 receives in place
      {{1, 8, 3}, 1, 0, m, all, ElementType::kI64},  // 8-byte elements, both in place
      {{3, 8}, 1, 1, m, all, ElementType::kI64},     // 8-byte elements, both staged
  };
  for (const Case& c : cases) Check(c, world);
}

// Groups smaller than the world, in an order other than the ranks': a group member's position,
// not its rank, picks its chunk.
TEST_P(AllToAllTest, GroupsOfTwoInAnyOrder) {
  if (size() != 4) GTEST_SKIP() << "needs a world of 4";
  std::vector<std::unique_ptr<Communicator>> world = MakeWorld();
  const std::string groups = "dense<[[2, 0], [1, 3]]> : tensor<2x2xi64>";
  for (const Case& c : {Case{{4, 6}, 0, 0, 2, groups}, Case{{6, 4}, 1, 0, 2, groups},
                        Case{{4, 6}, 0, 1, 2, groups}, Case{{3, 4, 2}, 1, 2, 2, groups}}) {
    Check(c, world);
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, AllToAllTest,
                         ::testing::Values(WorldParam{Kind::kInProcess, 2},
                                           WorldParam{Kind::kInProcess, 4},
                                           WorldParam{Kind::kGloo, 2}, WorldParam{Kind::kGloo, 4}),
                         [](const ::testing::TestParamInfo<WorldParam>& info) {
                           return std::string(info.param.kind == Kind::kInProcess ? "InProcess"
                                                                                  : "Gloo") +
                                  std::to_string(info.param.size);
                         });

}  // namespace
}  // namespace accy
