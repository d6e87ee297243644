// Where Engine::Compile runs dot_general items: oneDNN matmul for mappable products of at least
// kernels::kMinLibraryDotElementOps element ops (with a JIT pass after it for epilogue ops that
// have no exact post-op), the JIT's dot_general emitter for smaller ones and integer types
// (epilogue fused into the JIT kernel). Seen through ItemProfile::runs_on; every result is
// checked against the reference evaluator (f32: |jit - ref| <= K * 2^-21 + 2^-23 |ref| for
// inputs in [-1, 1]).
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "gtest/gtest.h"
#include "kernels/onednn_kernel.h"
#include "src/reference/reference_evaluator.h"
#include "tests/test_util.h"

namespace accy {
namespace {

Tensor Random(const TensorType& type, uint64_t seed) {
  Tensor t = *Tensor::Allocate(type);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int64_t i = 0; i < t.element_count(); ++i) {
    t.SetFromDouble(i, IsFloat(type.element_type()) ? unit(rng) : std::round(20 * unit(rng)));
  }
  return t;
}

// [m,k] x [k,n] of `type`, then `epilogue` (may return its input).
std::unique_ptr<Module> DotProgram(ElementType type, int64_t m, int64_t n, int64_t k,
                                   Value* (*epilogue)(FunctionBuilder&, Value*) = nullptr) {
  Builder builder("routing");
  TensorType out = *TensorType::Create(type, {m, n});
  FunctionBuilder f = *builder.BeginFunction(
      "main", {*TensorType::Create(type, {m, k}), *TensorType::Create(type, {k, n})}, {out});
  Value* y = *f.DotGeneral(f.Parameter(0), f.Parameter(1), out, {1}, {0}, {}, {});
  if (epilogue != nullptr) y = epilogue(f, y);
  EXPECT_TRUE(f.Return({y}).ok());
  return *builder.Finish();
}

// Compiles and runs `module`; returns where its single dot item ran, checking the values.
std::string RunsOn(const Module& module, int64_t k) {
  EngineOptions options;
  options.enable_profiling = true;
  std::unique_ptr<Engine> engine = *Engine::Create(options);
  auto exe = engine->Compile(module);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (!exe.ok()) return "compile failed";
  const Function& main = *module.FindFunction("main");
  std::vector<Tensor> args;
  for (size_t p = 0; p < main.parameter_types().size(); ++p) {
    args.push_back(Random(main.parameter_types()[p], p + 1));
  }
  auto actual = (*exe)->Run(args);
  EXPECT_TRUE(actual.ok()) << actual.status();
  auto expected = Evaluate(module, "main", args);
  EXPECT_TRUE(expected.ok()) << expected.status();
  if (actual.ok() && expected.ok()) {
    TensorComparison c = CompareClose((*actual)[0], (*expected)[0],
                                      static_cast<double>(k) * std::ldexp(1.0, -21),
                                      std::ldexp(1.0, -22));
    EXPECT_TRUE(c.ok) << c.message;
  }
  std::string runs_on;
  for (const ItemProfile& p : (*exe)->Stats().item_profiles) {
    if (p.kind == "dot_general") runs_on += p.runs_on;
  }
  return runs_on;
}

TEST(DotRoutingTest, SmallProductRunsOnJitLargeOnOnednn) {
  EXPECT_EQ(RunsOn(*DotProgram(ElementType::kF32, 8, 8, 8), 8), "jit");
  EXPECT_EQ(RunsOn(*DotProgram(ElementType::kF32, 128, 128, 128), 128), "library");
}

TEST(DotRoutingTest, ThresholdIsElementOpsTwoMNK) {
  // 2 * m * n * k: m = threshold / (2 * 16 * 16) rows reach it exactly, one row fewer does not.
  const int64_t rows = static_cast<int64_t>(kernels::kMinLibraryDotElementOps / (2 * 16 * 16));
  ASSERT_EQ(static_cast<uint64_t>(2 * rows * 16 * 16), kernels::kMinLibraryDotElementOps);
  EXPECT_EQ(RunsOn(*DotProgram(ElementType::kF32, rows, 16, 16), 16), "library");
  EXPECT_EQ(RunsOn(*DotProgram(ElementType::kF32, rows - 1, 16, 16), 16), "jit");
}

TEST(DotRoutingTest, IntegerProductRunsOnJit) {
  EXPECT_EQ(RunsOn(*DotProgram(ElementType::kI32, 96, 96, 96), 96), "jit");
}

Value* ClampLow(FunctionBuilder& f, Value* y) {
  Value* half = *f.BroadcastInDim(*f.ConstantScalar(ElementType::kF32, 0.5), y->type(), {});
  return *f.Maximum(y, half);
}

// maximum with 0.5 has no exact post-op (relu is maximum with 0 only): a product above the
// threshold runs on oneDNN matmul, then a JIT pass computes the epilogue over its output
// (more cases in dot_library_epilogue_test.cc).
TEST(DotRoutingTest, UnmappedEpilogueRunsAsJitPassAfterOnednn) {
  EXPECT_EQ(RunsOn(*DotProgram(ElementType::kF32, 128, 128, 128, ClampLow), 128), "libraryjit");
}

// Below the threshold the whole cluster, product and epilogue, is one JIT kernel.
TEST(DotRoutingTest, SmallProductWithUnmappedEpilogueRunsFusedOnJit) {
  EXPECT_EQ(RunsOn(*DotProgram(ElementType::kF32, 32, 32, 32, ClampLow), 32), "jit");
}

}  // namespace
}  // namespace accy
