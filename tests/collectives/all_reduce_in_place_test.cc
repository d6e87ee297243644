// Where an all_reduce with a native reduction reduces (CollectiveKernel::OutputsInPlaceOn,
// buffer assignment, Executable::Impl::PlanInputOutputAliases): in the caller's buffer for a
// donated parameter, in its operand's buffer for an operand the program computes and that dies
// there (a gradient), and in the caller's output buffer when that gradient's all_reduce is a
// result; never over memory read later. A probe communicator records the buffers AllReduceTo
// got (one buffer: no copy); values are exact on a grid of 2 (in-process threads).
#include <memory>
#include <string>
#include <vector>

#include "accy/collectives.h"
#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gtest/gtest.h"
#include "tests/collectives/collectives_test_util.h"
#include "tests/test_util.h"

namespace accy {
namespace {

std::string Grid(int replicas, int partitions) {
  return "module @m attributes {mhlo.num_replicas = " + std::to_string(replicas) +
         " : i32, mhlo.num_partitions = " + std::to_string(partitions) + " : i32} {\n";
}

constexpr char kSum[] =
    "%s = stablehlo.add %a, %b : tensor<f32>\n        stablehlo.return %s : tensor<f32>";
// A computation gathered and folded (not native): never in place.
constexpr char kSumTwice[] =
    "%s = stablehlo.add %a, %b : tensor<f32>\n        %t = stablehlo.add %s, %s : tensor<f32>\n"
    "        stablehlo.return %t : tensor<f32>";

// x_p[i] = i + 1000 p: sums of two stay exact in f32.
Tensor ProcessInput(int p) {
  std::vector<float> x(1024);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i) + 1000.0f * float(p);
  return *Tensor::FromVector(*TensorType::Create(ElementType::kF32, {1024}), x);
}

// An engine and @main of `text` (a module body) compiled on a grid of 2 replicas.
struct GridProgram {
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Executable> executable;
};
StatusOr<GridProgram> CompileOnGridOfTwo(const std::string& text) {
  GridProgram program;
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseStableHlo(Grid(2, 1) + text));
  ACCY_ASSIGN_OR_RETURN(program.engine, Engine::Create());
  ACCY_ASSIGN_OR_RETURN(program.executable, program.engine->Compile(*module, "main"));
  return program;
}

// Forwards to `inner`; remembers the buffers of the last AllReduceTo.
class ProbeCommunicator final : public ForwardingCommunicator {
 public:
  using ForwardingCommunicator::ForwardingCommunicator;
  Status AllReduceTo(std::span<const int> group, const void* s, void* r, int64_t count,
                     ElementType type, CollectiveReduction reduction) override {
    send = s;
    recv = r;
    return ForwardingCommunicator::AllReduceTo(group, s, r, count, type, reduction);
  }
  const void* send = nullptr;
  const void* recv = nullptr;
};

// A donated parameter (tf.aliasing_output, what JAX writes for donate_argnums) reduced by an
// all_reduce with a native reduction is reduced in the caller's buffer, with no copy: the
// run's output is the input tensor itself. A general (gather-and-fold) computation cannot reduce
// in place, so the run copies the parameter aside first; both give exact values on a grid of 2.
TEST(AllReduceInPlaceTest, AnAllReduceOfADonatedParameterReducesInTheCallersBuffer) {
  struct Case {
    const char* body;
    bool in_place;
  };
  for (const Case& c : {Case{kSum, true}, Case{kSumTwice, false}}) {
    SCOPED_TRACE(c.body);
    ASSERT_OK_AND_ASSIGN(GridProgram program, CompileOnGridOfTwo(R"(
  func.func @main(%x: tensor<1024xf32> {tf.aliasing_output = 0 : i32}) -> tensor<1024xf32> {
    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        )" + std::string(c.body) + R"(
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<1024xf32>) -> tensor<1024xf32>
    return %r : tensor<1024xf32>
  }
})"));
    std::unique_ptr<Executable>& executable = program.executable;
    ASSERT_EQ(executable->Stats().input_output_aliases_in_place.size(), 1u);
    EXPECT_EQ(executable->Stats().input_output_aliases_in_place[0], c.in_place);
    std::vector<Tensor> buffers;
    for (int p = 0; p < 2; ++p) {
      std::vector<float> x(1024);
      for (size_t i = 0; i < x.size(); ++i) x[i] = float(i) + 1000.0f * float(p);
      buffers.push_back(*Tensor::FromVector(*TensorType::Create(ElementType::kF32, {1024}), x));
    }
    ASSERT_OK(RunGrid(2, [&](int p, Communicator& comm) -> StatusOr<std::vector<Tensor>> {
                RunOptions options;
                options.communicator = &comm;
                std::vector<Tensor> io = {buffers[static_cast<size_t>(p)]};
                ACCY_RETURN_IF_ERROR(executable->Run(io, io, options));
                return io;
              }).status());
    const float scale = c.in_place ? 1.0f : 2.0f;
    for (int p = 0; p < 2; ++p) {
      const float* y = static_cast<const float*>(buffers[static_cast<size_t>(p)].data());
      for (int i : {0, 1, 511, 1023}) {
        EXPECT_EQ(y[i], scale * (2.0f * float(i) + 1000.0f)) << p << " " << i;  // exact
      }
    }
  }
}

// An all_reduce whose operand dies at it (a gradient computed in the program, as data-parallel
// training has them) reduces in the operand's buffer: the arena holds one 4 KiB tensor for
// both, not two. Its values are exact on a grid of 2; a general (gather-and-fold) computation
// keeps a buffer of its own.
TEST(AllReduceInPlaceTest, AnAllReduceOfADyingIntermediateReducesInItsBuffer) {
  auto program = [](const char* body) {
    return Grid(2, 1) + R"(
  func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
    %two = stablehlo.constant dense<2.0> : tensor<1024xf32>
    %g = stablehlo.multiply %x, %two : tensor<1024xf32>
    %r = "stablehlo.all_reduce"(%g) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        )" + std::string(body) + R"(
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<1024xf32>) -> tensor<1024xf32>
    %y = stablehlo.add %r, %x : tensor<1024xf32>
    return %y : tensor<1024xf32>
  }
})";
  };
  struct Case {
    const char* body;
    int64_t arena_bytes;
  };
  for (const Case& c : {Case{"%s = stablehlo.add %a, %b : tensor<f32>\n        stablehlo.return %s : tensor<f32>", 4096},
                        Case{"%s = stablehlo.add %a, %b : tensor<f32>\n        %t = stablehlo.multiply %s, %s : tensor<f32>\n        stablehlo.return %t : tensor<f32>", 8192}}) {
    SCOPED_TRACE(c.body);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(program(c.body)));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module, "main"));
    EXPECT_EQ(executable->Stats().arena_bytes, c.arena_bytes);
    if (c.arena_bytes != 4096) continue;
    ASSERT_OK_AND_ASSIGN(auto out, RunGrid(2, [&](int p, Communicator& comm) {
                           RunOptions options;
                           options.communicator = &comm;
                           std::vector<float> x(1024);
                           for (size_t i = 0; i < x.size(); ++i) x[i] = float(i) + 1000.0f * float(p);
                           Tensor t = *Tensor::FromVector(*TensorType::Create(ElementType::kF32, {1024}), x);
                           return executable->Run(std::vector<Tensor>{t}, options);
                         }));
    for (int p = 0; p < 2; ++p) {
      const float* y = static_cast<const float*>(out[static_cast<size_t>(p)][0].data());
      for (int i : {0, 1, 511, 1023}) {
        // 2 x_0 + 2 x_1 + x_p, all exact in f32.
        const float expected = 2.0f * (2.0f * float(i) + 1000.0f) + float(i) + 1000.0f * float(p);
        EXPECT_EQ(y[i], expected) << p << " " << i;
      }
    }
  }
}

// all_reduce(x * 2) returned as the result (a gradient the step hands back): the multiply
// writes the caller's output buffer and the all_reduce reduces it there: one buffer for
// AllReduceTo, the output's, and no arena. A general computation keeps a buffer of its own.
TEST(AllReduceInPlaceTest, AReturnedGradientIsReducedInTheOutputBuffer) {
  for (const char* body : {kSum, kSumTwice}) {
    SCOPED_TRACE(body);
    const bool native = body == kSum;
    ASSERT_OK_AND_ASSIGN(GridProgram program, CompileOnGridOfTwo(R"(
  func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
    %two = stablehlo.constant dense<2.0> : tensor<1024xf32>
    %g = stablehlo.multiply %x, %two : tensor<1024xf32>
    %r = "stablehlo.all_reduce"(%g) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        )" + std::string(body) + R"(
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<1024xf32>) -> tensor<1024xf32>
    return %r : tensor<1024xf32>
  }
})"));
    std::unique_ptr<Executable>& executable = program.executable;
    EXPECT_EQ(executable->Stats().arena_bytes, native ? 0 : 4096);
    std::vector<Tensor> outputs = {*Tensor::Allocate(executable->result_types()[0]),
                                   *Tensor::Allocate(executable->result_types()[0])};
    std::vector<const void*> sends(2), recvs(2);
    ASSERT_OK(RunGrid(2, [&](int p, Communicator& comm) -> StatusOr<std::vector<Tensor>> {
                ProbeCommunicator probe(comm);
                RunOptions options;
                options.communicator = &probe;
                const Tensor input = ProcessInput(p);
                ACCY_RETURN_IF_ERROR(executable->Run(std::span<const Tensor>(&input, 1),
                                                     std::span<Tensor>(&outputs[p], 1), options));
                sends[p] = probe.send;
                recvs[p] = probe.recv;
                return std::vector<Tensor>{};
              }).status());
    for (int p = 0; p < 2; ++p) {
      if (native) {
        EXPECT_EQ(sends[p], outputs[p].data()) << p;
        EXPECT_EQ(recvs[p], outputs[p].data()) << p;
      }
      const float* y = static_cast<const float*>(outputs[p].data());
      for (int i : {0, 1, 511, 1023}) {
        const float sum = 2.0f * float(i) + 2.0f * (float(i) + 1000.0f);  // 2 x_0 + 2 x_1
        EXPECT_EQ(y[i], native ? sum : 2.0f * sum) << p << " " << i;
      }
    }
  }
}

// The same with x donated to the result: the multiply reads x where it writes the gradient
// (elementwise, in place over the caller's buffer) and the all_reduce reduces there, so the run
// stays in place (no copy of x). With another read of x after the multiply, the run copies x
// aside first; the values are exact either way.
TEST(AllReduceInPlaceTest, ADonatedInputOfAReturnedGradientStaysInPlaceUnlessReadLater) {
  for (bool read_later : {false, true}) {
    SCOPED_TRACE(read_later);
    const std::string results = read_later ? "(tensor<1024xf32>, tensor<1024xf32>)" : "tensor<1024xf32>";
    ASSERT_OK_AND_ASSIGN(GridProgram program, CompileOnGridOfTwo(R"(
  func.func @main(%x: tensor<1024xf32> {tf.aliasing_output = 0 : i32}) -> )" + results + R"( {
    %two = stablehlo.constant dense<2.0> : tensor<1024xf32>
    %g = stablehlo.multiply %x, %two : tensor<1024xf32>
    %r = "stablehlo.all_reduce"(%g) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        )" + std::string(kSum) + R"(
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<1024xf32>) -> tensor<1024xf32>
    %y = stablehlo.subtract %r, %x : tensor<1024xf32>
    return )" + (read_later ? "%r, %y : tensor<1024xf32>, tensor<1024xf32>" : "%r : tensor<1024xf32>") + R"(
  }
})"));
    std::unique_ptr<Executable>& executable = program.executable;
    ASSERT_EQ(executable->Stats().input_output_aliases_in_place.size(), 1u);
    EXPECT_EQ(executable->Stats().input_output_aliases_in_place[0], !read_later);
    std::vector<std::vector<Tensor>> io(2);
    for (int p = 0; p < 2; ++p) {
      io[p].push_back(ProcessInput(p));
      if (read_later) io[p].push_back(*Tensor::Allocate(executable->result_types()[1]));
    }
    ASSERT_OK(RunGrid(2, [&](int p, Communicator& comm) -> StatusOr<std::vector<Tensor>> {
                RunOptions options;
                options.communicator = &comm;
                const std::vector<Tensor> inputs = {io[p][0]};
                ACCY_RETURN_IF_ERROR(executable->Run(inputs, io[p], options));
                return std::vector<Tensor>{};
              }).status());
    for (int p = 0; p < 2; ++p) {
      const float* r = static_cast<const float*>(io[p][0].data());
      for (int i : {0, 1, 511, 1023}) {
        const float sum = 2.0f * float(i) + 2.0f * (float(i) + 1000.0f);
        EXPECT_EQ(r[i], sum) << p << " " << i;
        if (read_later) {
          const float* y = static_cast<const float*>(io[p][1].data());
          EXPECT_EQ(y[i], sum - (float(i) + 1000.0f * float(p))) << p << " " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace accy
