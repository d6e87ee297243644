// ExecutableStats: per-item profiles (EngineOptions::enable_profiling), peak memory, stage times.
#include <cmath>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/onednn_kernel.h"
#include "tests/test_util.h"

namespace accy {
namespace {

TensorType F32(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}

// y = logistic(-(x @ w)) (oneDNN matmul with eltwise post-ops: 2*32*128*64 element ops, above
// kernels::kMinLibraryDotElementOps), s = sum(y) (JIT reduction), z = tanh(x) * x (JIT
// elementwise fusion).
std::unique_ptr<Module> Program() {
  Builder builder("stats");
  FunctionBuilder f = *builder.BeginFunction("main", {F32({32, 64}), F32({64, 128})},
                                             {F32({32, 128}), F32({}), F32({32, 64})});
  Value* prod = *f.DotGeneral(f.Parameter(0), f.Parameter(1), F32({32, 128}), {1}, {0}, {}, {});
  Value* y = *f.Logistic(*f.Negate(prod));
  Value* s = *f.Reduce(y, *f.ConstantScalar(ElementType::kF32, 0), F32({}), "sum", {0, 1});
  Value* z = *f.Multiply(*f.Tanh(f.Parameter(0)), f.Parameter(0));
  EXPECT_TRUE(f.Return({y, s, z}).ok());
  return *builder.Finish();
}

std::vector<Tensor> Inputs() {
  return {*Tensor::Filled(F32({32, 64}), 0.01), *Tensor::Filled(F32({64, 128}), 0.02)};
}

TEST(StatsTest, ProfilesAreEmptyUnlessProfilingIsOn) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  std::unique_ptr<Module> module = Program();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  ASSERT_OK(exe->Run(Inputs()).status());
  EXPECT_TRUE(exe->Stats().item_profiles.empty());
}

TEST(StatsTest, ProfilesCountEveryRunOfEveryItem) {
  EngineOptions options;
  options.enable_profiling = true;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
  std::unique_ptr<Module> module = Program();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  std::vector<Tensor> inputs = Inputs();
  for (int r = 0; r < 3; ++r) ASSERT_OK(exe->Run(inputs).status());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < 10; ++r) EXPECT_TRUE(exe->Run(inputs).ok());
    });
  }
  for (std::thread& thread : threads) thread.join();
  ExecutableStats stats = exe->Stats();
  // Fusion clusters first: dot_general+negate+logistic (oneDNN, root logistic) and
  // tanh+multiply (root multiply), then the reduce. Where the tiled gemm:jit binding takes this
  // 32 x 64 x 128 product (below avx512_core on AMD: kernels::TiledGemmMinDim() is 1 there), the
  // negate and logistic run as a second executor item of the dot_general, a JIT pass.
  const bool tiled = kernels::TiledGemmHost() && kernels::TiledGemmMinDim() <= 32;
  // (item index, root, runs_on) of each executor item, in order.
  std::vector<std::tuple<int64_t, std::string, std::string>> want = {
      {0, "logistic", "library"}, {1, "multiply", "jit"}, {2, "reduce", "jit"}};
  if (tiled) want.insert(want.begin() + 1, {0, "logistic", "jit"});
  ASSERT_EQ(stats.item_profiles.size(), want.size());
  std::map<std::string, std::string> runs_on;
  for (size_t i = 0; i < stats.item_profiles.size(); ++i) {
    const ItemProfile& p = stats.item_profiles[i];
    EXPECT_EQ(p.item_index, std::get<0>(want[i])) << i;
    EXPECT_EQ(p.root, std::get<1>(want[i])) << i;
    EXPECT_EQ(p.runs_on, std::get<2>(want[i])) << i;
    EXPECT_EQ(p.calls, 43) << p.kind;
    EXPECT_GT(p.total_milliseconds, 0.0) << p.kind;
    runs_on[p.kind] = p.runs_on;
  }
  EXPECT_EQ(runs_on["elementwise_fusion"], "jit");
  EXPECT_EQ(runs_on["reduction"], "jit");
}

TEST(StatsTest, PeakMemoryAddsArenaScratchConstantsAndLoopState) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  std::unique_ptr<Module> module = Program();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  ExecutableStats stats = exe->Stats();
  EXPECT_EQ(stats.peak_memory_bytes,
            stats.arena_bytes + stats.scratch_bytes + stats.constant_bytes);
  EXPECT_GE(stats.library_milliseconds, 0.0);
  EXPECT_GT(stats.assignment_milliseconds, 0.0);

  // A while over a [256] f32 state: the spare copy (1024 bytes) and the predicate are counted.
  Builder builder("loop");
  TensorType v = F32({256});
  FunctionBuilder f = *builder.BeginFunction("main", {v}, {v});
  std::vector<Value*> loop = *f.While(
      {f.Parameter(0)},
      [&](FunctionBuilder& cond, std::span<Value* const> args) -> Status {
        ACCY_ASSIGN_OR_RETURN(Value * no, cond.ConstantScalar(ElementType::kI1, 0));
        return cond.Return({no});
      },
      [&](FunctionBuilder& body, std::span<Value* const> args) -> Status {
        ACCY_ASSIGN_OR_RETURN(Value * e, body.Exponential(args[0]));
        return body.Return({e});
      });
  ASSERT_TRUE(f.Return(loop).ok());
  std::unique_ptr<Module> loop_module = *builder.Finish();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> loop_exe, engine->Compile(*loop_module));
  ExecutableStats loop_stats = loop_exe->Stats();
  EXPECT_GE(loop_stats.peak_memory_bytes, 1024 + 1);
  EXPECT_EQ(loop_stats.work_items_by_kind["iterate"], 1);
}

}  // namespace
}  // namespace accy
