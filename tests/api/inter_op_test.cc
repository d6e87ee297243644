// Inter-op parallelism: independent single-block items run concurrently, with the same bits as
// a sequential run; dependent or memory-sharing items never do.
#include <cmath>
#include <cstring>

#include "accy/builder.h"
#include "accy/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/test_util.h"

namespace accy {
namespace {

TensorType F32(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}

// `branches` independent y_i = tanh(p_i) * p_i + 1 over [size] (one fused item each).
std::unique_ptr<Module> Branches(int branches, int64_t size) {
  Builder builder("branches");
  std::vector<TensorType> types(static_cast<size_t>(branches), F32({size}));
  FunctionBuilder f = *builder.BeginFunction("main", types, types);
  Value* one = *f.BroadcastInDim(*f.ConstantScalar(ElementType::kF32, 1), F32({size}), {});
  std::vector<Value*> results;
  for (int b = 0; b < branches; ++b) {
    results.push_back(*f.Add(*f.Multiply(*f.Tanh(f.Parameter(b)), f.Parameter(b)), one));
  }
  EXPECT_TRUE(f.Return(results).ok());
  return *builder.Finish();
}

std::vector<Tensor> Inputs(int branches, int64_t size) {
  std::vector<Tensor> inputs;
  for (int b = 0; b < branches; ++b) {
    std::vector<float> v(static_cast<size_t>(size));
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.01f * static_cast<float>(i) + b);
    inputs.push_back(*Tensor::FromVector(F32({size}), v));
  }
  return inputs;
}

TEST(InterOpTest, IndependentItemsRunConcurrentlyWithSequentialBits) {
  std::unique_ptr<Module> module = Branches(6, 8192);
  std::vector<Tensor> inputs = Inputs(6, 8192);
  EngineOptions one_thread;
  one_thread.num_threads = 1;
  EngineOptions two_threads;
  two_threads.num_threads = 2;
  two_threads.enable_profiling = true;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> sequential, Engine::Create(one_thread));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> parallel, Engine::Create(two_threads));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> seq_exe, sequential->Compile(*module));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> par_exe, parallel->Compile(*module));
  // Six 8192-element items of one block each, 64 KiB apiece: one group of six.
  EXPECT_EQ(par_exe->Stats().concurrent_groups, 1);
  EXPECT_EQ(par_exe->Stats().concurrent_items, 6);
  EXPECT_EQ(seq_exe->Stats().concurrent_groups, 0);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, seq_exe->Run(inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> reference, Evaluate(*module, "main", inputs));
  for (int run = 0; run < 20; ++run) {
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, par_exe->Run(inputs));
    for (size_t b = 0; b < outputs.size(); ++b) {
      ASSERT_EQ(std::memcmp(outputs[b].data(), expected[b].data(), outputs[b].byte_size()), 0)
          << "branch " << b << " run " << run;
    }
  }
  for (size_t b = 0; b < expected.size(); ++b) {
    TensorComparison c = CompareClose(expected[b], reference[b], 1e-6, 1e-5);
    EXPECT_TRUE(c.ok) << c.message;
  }
  for (const ItemProfile& profile : par_exe->Stats().item_profiles) {
    EXPECT_EQ(profile.calls, 20) << profile.kind;
  }
}

TEST(InterOpTest, SmallOrDependentItemsAreNotGrouped) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  // Six items of 1 KiB: below the 64 KiB a fork/join needs to pay.
  std::unique_ptr<Module> small = Branches(6, 64);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> small_exe, engine->Compile(*small));
  EXPECT_EQ(small_exe->Stats().concurrent_groups, 0);
  // A chain of reductions and elementwise items: each reads the one before.
  Builder builder("chain");
  FunctionBuilder f = *builder.BeginFunction("main", {F32({64, 128})}, {F32({64})});
  Value* x = f.Parameter(0);
  Value* zero = *f.ConstantScalar(ElementType::kF32, 0);
  Value* sums = *f.Reduce(*f.Tanh(x), zero, F32({64}), "sum", {1});
  Value* maxes = *f.Reduce(*f.Exponential(*f.Negate(*f.BroadcastInDim(sums, F32({64, 128}), {0}))),
                           zero, F32({64}), "max", {1});
  ASSERT_TRUE(f.Return({maxes}).ok());
  std::unique_ptr<Module> chain = *builder.Finish();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> chain_exe, engine->Compile(*chain));
  EXPECT_EQ(chain_exe->Stats().concurrent_groups, 0);
  Tensor input = Inputs(1, 64 * 128)[0];
  ASSERT_OK_AND_ASSIGN(Tensor shaped, Tensor::Borrow(F32({64, 128}), input.data()));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, chain_exe->Run({&shaped, 1}));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> reference, Evaluate(*chain, "main", {&shaped, 1}));
  TensorComparison c = CompareClose(out[0], reference[0], 1e-6, 1e-5);
  EXPECT_TRUE(c.ok) << c.message;
}

}  // namespace
}  // namespace accy
