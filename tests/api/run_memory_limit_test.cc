// EngineOptions::max_run_memory_bytes: Compile refuses a program whose one run needs more of its
// own memory (arena + scratch + loop state) than the limit, naming the bytes; at the limit it
// compiles and runs.
#include <memory>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

TensorType F32(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}

// y = exp(transpose(x)) + 1 over f32 [rows, cols]: the transpose is a shape item whose
// [cols, rows] result lives in the arena (rows * cols * 4 bytes); a reduction of y adds a
// scratch area.
std::unique_ptr<Module> TransposeProgram(int64_t rows, int64_t cols) {
  Builder builder("run_memory");
  FunctionBuilder f =
      *builder.BeginFunction("main", {F32({rows, cols})}, {F32({cols, rows}), F32({})});
  Value* t = *f.Transpose(f.Parameter(0), {1, 0});
  Value* one = *f.BroadcastInDim(*f.ConstantScalar(ElementType::kF32, 1), F32({cols, rows}), {});
  Value* y = *f.Add(*f.Exponential(t), one);
  Value* s = *f.Reduce(y, *f.ConstantScalar(ElementType::kF32, 0), F32({}), "sum", {0, 1});
  EXPECT_TRUE(f.Return({y, s}).ok());
  return *builder.Finish();
}

// One run's own bytes as Compile counts them.
int64_t RunBytes(const ExecutableStats& stats) {
  return stats.peak_memory_bytes - stats.constant_bytes;
}

TEST(RunMemoryLimitTest, ProgramAtTheLimitCompilesAndOneByteLessIsRefused) {
  std::unique_ptr<Module> module = TransposeProgram(64, 48);
  EngineOptions unlimited;
  unlimited.max_run_memory_bytes = 0;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> probe, Engine::Create(unlimited));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> measured, probe->Compile(*module));
  const int64_t needed = RunBytes(measured->Stats());
  // The transposed [48, 64] f32 intermediate at least.
  ASSERT_GE(needed, 48 * 64 * 4);

  EngineOptions at_limit;
  at_limit.max_run_memory_bytes = needed;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(at_limit));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  std::vector<Tensor> inputs;
  inputs.push_back(*Tensor::Filled(F32({64, 48}), 0.0));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(inputs));
  // exp(0) + 1 = 2 everywhere, summed over 3,072 elements.
  EXPECT_EQ(outputs[0].GetAsDouble(17), 2.0);
  EXPECT_EQ(outputs[1].GetAsDouble(0), 6144.0);

  EngineOptions below;
  below.max_run_memory_bytes = needed - 1;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> tight, Engine::Create(below));
  StatusOr<std::unique_ptr<Executable>> refused = tight->Compile(*module);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  const std::string message(refused.status().message());
  EXPECT_THAT(message, HasSubstr("Compile: one run of function 'main' needs " +
                                 std::to_string(needed) + " bytes (arena "));
  EXPECT_THAT(message, HasSubstr("above EngineOptions::max_run_memory_bytes of " +
                                 std::to_string(needed - 1) + " bytes"));
  // The engine stays usable.
  EXPECT_OK(engine->Compile(*module).status());
}

TEST(RunMemoryLimitTest, DefaultLimitRefusesIntermediatesBeyondSixteenGiB) {
  // A [100000, 100000] f32 transpose: a 40 GB arena intermediate, never allocated.
  std::unique_ptr<Module> module = TransposeProgram(100000, 100000);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  EXPECT_EQ(engine->options().max_run_memory_bytes, int64_t{16} << 30);
  StatusOr<std::unique_ptr<Executable>> refused = engine->Compile(*module);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), HasSubstr("arena 40000000000"));
  EXPECT_THAT(refused.status().message(),
              HasSubstr("above EngineOptions::max_run_memory_bytes of 17179869184 bytes"));
}

TEST(RunMemoryLimitTest, NegativeLimitIsRejectedByCreate) {
  EngineOptions options;
  options.max_run_memory_bytes = -5;
  StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(options);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(),
              HasSubstr("max_run_memory_bytes is -5, expected >= 0 (0 = unlimited)"));
}

}  // namespace
}  // namespace accy
