// Kernel deduplication (jit/compiled_program.h): items that compute the same thing on the same
// shapes share one JIT kernel, within an executable, across a while's cond/body executables and
// across Compile calls of one engine (its in-memory object cache); results are bit-identical to
// compiling each computation alone.
#include <cmath>
#include <cstring>

#include "accy/builder.h"
#include "accy/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

TensorType F32(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}

Tensor Ramp(const TensorType& type, float scale, float offset) {
  std::vector<float> v(static_cast<size_t>(type.element_count()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(offset + scale * static_cast<float>(i));
  return *Tensor::FromVector(type, v);
}

// tanh(x) * y + x: one elementwise_fusion item.
StatusOr<Value*> Chain(FunctionBuilder& f, Value* x, Value* y) {
  ACCY_ASSIGN_OR_RETURN(Value * t, f.Tanh(x));
  ACCY_ASSIGN_OR_RETURN(Value * m, f.Multiply(t, y));
  return f.Add(m, x);
}

// Three chains: two on [64, 33] (identical kernels), one on [65, 33] (a kernel of its own).
std::unique_ptr<Module> ThreeChains() {
  Builder builder("three_chains");
  const TensorType a = F32({64, 33});
  const TensorType b = F32({65, 33});
  FunctionBuilder f = *builder.BeginFunction("main", {a, a, a, a, b, b}, {a, a, b});
  Value* first = *Chain(f, f.Parameter(0), f.Parameter(1));
  Value* second = *Chain(f, f.Parameter(2), f.Parameter(3));
  Value* third = *Chain(f, f.Parameter(4), f.Parameter(5));
  EXPECT_TRUE(f.Return({first, second, third}).ok());
  return *builder.Finish();
}

std::unique_ptr<Module> OneChain(const TensorType& type) {
  Builder builder("one_chain");
  FunctionBuilder f = *builder.BeginFunction("main", {type, type}, {type});
  EXPECT_TRUE(f.Return({*Chain(f, f.Parameter(0), f.Parameter(1))}).ok());
  return *builder.Finish();
}

std::vector<Tensor> ThreeChainInputs() {
  const TensorType a = F32({64, 33});
  const TensorType b = F32({65, 33});
  return {Ramp(a, 0.01f, 0), Ramp(a, 0.02f, 1), Ramp(a, 0.03f, 2),
          Ramp(a, 0.04f, 3), Ramp(b, 0.05f, 4), Ramp(b, 0.06f, 5)};
}

bool SameBits(const Tensor& x, const Tensor& y) {
  return x.byte_size() == y.byte_size() &&
         std::memcmp(x.data(), y.data(), static_cast<size_t>(x.byte_size())) == 0;
}

TEST(KernelDedupTest, IdenticalItemsShareOneKernelAndGiveTheSameBits) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  std::unique_ptr<Module> module = ThreeChains();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  const ExecutableStats stats = exe->Stats();
  EXPECT_EQ(stats.work_items_by_kind.at("elementwise_fusion"), 3);
  EXPECT_EQ(stats.jit_items, 3);
  EXPECT_EQ(stats.distinct_kernels, 2);
  EXPECT_EQ(stats.kernels_compiled, 2);
  EXPECT_EQ(stats.kernels_from_cache, 0);

  std::vector<Tensor> inputs = ThreeChainInputs();
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(inputs));
  // Each chain compiled alone, on a fresh engine (no shared objects).
  for (int c = 0; c < 3; ++c) {
    SCOPED_TRACE(c);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> alone_engine, Engine::Create());
    std::unique_ptr<Module> alone = OneChain(inputs[2 * c].type());
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> alone_exe, alone_engine->Compile(*alone));
    EXPECT_EQ(alone_exe->Stats().kernels_compiled, 1);
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected,
                         alone_exe->Run(std::vector<Tensor>{inputs[2 * c], inputs[2 * c + 1]}));
    EXPECT_TRUE(SameBits(outputs[static_cast<size_t>(c)], expected[0]));
  }
}

TEST(KernelDedupTest, ASecondCompileOnTheSameEngineReusesEveryKernel) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  std::unique_ptr<Module> module = ThreeChains();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> first, engine->Compile(*module));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> second, engine->Compile(*module));
  EXPECT_EQ(second->Stats().distinct_kernels, 2);
  EXPECT_EQ(second->Stats().kernels_compiled, 0);
  EXPECT_EQ(second->Stats().kernels_from_cache, 2);
  // The one-chain program's [64, 33] kernel is the three-chain program's.
  std::unique_ptr<Module> alone = OneChain(F32({64, 33}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> third, engine->Compile(*alone));
  EXPECT_EQ(third->Stats().kernels_compiled, 0);
  EXPECT_EQ(third->Stats().kernels_from_cache, 1);
  // Another engine shares nothing (no cache_dir here).
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> other, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> fourth, other->Compile(*module));
  EXPECT_EQ(fourth->Stats().kernels_compiled, 2);
  EXPECT_EQ(fourth->Stats().kernels_from_cache, 0);

  std::vector<Tensor> inputs = ThreeChainInputs();
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> a, first->Run(inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> b, second->Run(inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> d, fourth->Run(inputs));
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(SameBits(a[i], b[i])) << i;
    EXPECT_TRUE(SameBits(a[i], d[i])) << i;
  }
}

// The body of the while computes the chain the enclosing function computes after the loop, on
// the same shapes: the body executable compiles the kernel (the while is compiled first) and the
// function's item loads it from the engine's object cache.
TEST(KernelDedupTest, AWhileBodySharesItsKernelWithTheEnclosingFunction) {
  Builder builder("loop_chain");
  const TensorType v = F32({1000});
  const TensorType i32 = *TensorType::Create(ElementType::kI32, {});
  FunctionBuilder f = *builder.BeginFunction("main", {v, v}, {v});
  Value* zero = *f.ConstantScalar(ElementType::kI32, 0);
  Value* y = f.Parameter(1);
  std::vector<Value*> loop = *f.While(
      {zero, f.Parameter(0)},
      [&](FunctionBuilder& cond, std::span<Value* const> args) -> Status {
        ACCY_ASSIGN_OR_RETURN(Value * three, cond.ConstantScalar(ElementType::kI32, 3));
        ACCY_ASSIGN_OR_RETURN(Value * less, cond.Compare(args[0], three, "LT"));
        return cond.Return({less});
      },
      [&](FunctionBuilder& body, std::span<Value* const> args) -> Status {
        ACCY_ASSIGN_OR_RETURN(Value * one, body.ConstantScalar(ElementType::kI32, 1));
        ACCY_ASSIGN_OR_RETURN(Value * next_i, body.Add(args[0], one));
        ACCY_ASSIGN_OR_RETURN(Value * next_x, Chain(body, args[1], y));
        return body.Return({next_i, next_x});
      });
  Value* out = *Chain(f, loop[1], y);
  ASSERT_OK(f.Return({out}));
  std::unique_ptr<Module> module = *builder.Finish();
  (void)i32;

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  EXPECT_EQ(exe->Stats().jit_items, 1);
  EXPECT_EQ(exe->Stats().kernels_compiled, 0);
  EXPECT_EQ(exe->Stats().kernels_from_cache, 1);

  // x -> chain applied 4 times, computed on the host in the same order of operations.
  Tensor x0 = Ramp(v, 0.01f, 0);
  Tensor y0 = Ramp(v, 0.02f, 1);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(std::vector<Tensor>{x0, y0}));
  const float* x = x0.data_as<float>();
  const float* yy = y0.data_as<float>();
  const float* got = outputs[0].data_as<float>();
  int64_t mismatches = 0;
  for (int64_t i = 0; i < v.element_count(); ++i) {
    float value = x[i];
    for (int k = 0; k < 4; ++k) value = std::tanh(value) * yy[i] + value;
    // tanh comes from libmvec in the kernel: a few ulps from libm's.
    if (std::fabs(value - got[i]) > 4e-7f * std::max(1.0f, std::fabs(value))) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace accy
