// EngineOptions::enable_fusion: the same program compiled fused and forced-unfused gives the same
// results (both checked against the reference evaluator) from different work item lists.
#include <cmath>
#include <string>
#include <vector>

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

// out = softmax_rows(max(x . w + broadcast(bias), 0)) and y = tanh(x0 * 2 + 1), over
// x [rows, k], w [k, n], bias [n]: 1 dot_general, 6 broadcast_in_dim, 2 reduce and 8 elementwise
// ops, plus constants (never work items).
std::unique_ptr<Module> Build(int64_t rows, int64_t k, int64_t n) {
  Builder builder("fusion_option");
  TensorType x_type = F32({rows, k});
  TensorType h_type = F32({rows, n});
  TensorType row_type = F32({rows});
  FunctionBuilder f =
      *builder.BeginFunction("main", {x_type, F32({k, n}), F32({n})}, {h_type, x_type});
  Value* x = f.Parameter(0);
  Value* dot = *f.DotGeneral(x, f.Parameter(1), h_type, {1}, {0}, {}, {});
  Value* h = *f.Add(dot, *f.BroadcastInDim(f.Parameter(2), h_type, {1}));
  Value* zero = *f.ConstantScalar(ElementType::kF32, 0);
  Value* r = *f.Maximum(h, *f.BroadcastInDim(zero, h_type, {}));
  Value* m = *f.Reduce(r, *f.ConstantScalar(ElementType::kF32, -INFINITY), row_type, "max", {1});
  Value* e = *f.Exponential(*f.Subtract(r, *f.BroadcastInDim(m, h_type, {0})));
  Value* s = *f.Reduce(e, zero, row_type, "sum", {1});
  Value* out = *f.Divide(e, *f.BroadcastInDim(s, h_type, {0}));
  Value* two = *f.BroadcastInDim(*f.ConstantScalar(ElementType::kF32, 2), x_type, {});
  Value* one = *f.BroadcastInDim(*f.ConstantScalar(ElementType::kF32, 1), x_type, {});
  Value* y = *f.Tanh(*f.Add(*f.Multiply(x, two), one));
  EXPECT_OK(f.Return({out, y}));
  return *builder.Finish();
}

std::vector<Tensor> Inputs(int64_t rows, int64_t k, int64_t n) {
  auto fill = [](std::vector<int64_t> dims, float scale, float phase) {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    std::vector<float> v(static_cast<size_t>(count));
    for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(phase + 0.731f * i);
    return *Tensor::FromVector(F32(std::move(dims)), v);
  };
  return {fill({rows, k}, 1.0f, 0.3f), fill({k, n}, 0.25f, 1.1f), fill({n}, 0.5f, 2.0f)};
}

int64_t TotalItems(const ExecutableStats& stats) {
  int64_t total = 0;
  for (const auto& [kind, count] : stats.work_items_by_kind) total += count;
  return total;
}

TEST(FusionOptionTest, UnfusedCompileMatchesFusedAndTheReferenceWithOneItemPerOp) {
  constexpr int64_t kRows = 9, kK = 24, kN = 33;
  std::unique_ptr<Module> module = Build(kRows, kK, kN);
  std::vector<Tensor> inputs = Inputs(kRows, kK, kN);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", inputs));

  EngineOptions fused_options;
  ASSERT_TRUE(fused_options.enable_fusion);  // the documented default
  EngineOptions unfused_options;
  unfused_options.enable_fusion = false;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> fused_engine, Engine::Create(fused_options));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> unfused_engine, Engine::Create(unfused_options));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> fused, fused_engine->Compile(*module));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> unfused, unfused_engine->Compile(*module));

  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> fused_out, fused->Run(inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> unfused_out, unfused->Run(inputs));
  ASSERT_EQ(expected.size(), 2u);
  for (size_t i = 0; i < expected.size(); ++i) {
    // exp and tanh: libmvec in the JIT, libm in the reference (a few ULP).
    TensorComparison f = CompareClose(fused_out[i], expected[i], 1e-6, 1e-5);
    EXPECT_TRUE(f.ok) << "fused result " << i << ": " << f.message;
    TensorComparison u = CompareClose(unfused_out[i], expected[i], 1e-6, 1e-5);
    EXPECT_TRUE(u.ok) << "unfused result " << i << ": " << u.message;
  }

  // Fused: dot_general + bias + relu as one epilogue item, the softmax as one row pipeline,
  // y as one elementwise fusion; every broadcast elided.
  ExecutableStats fused_stats = fused->Stats();
  EXPECT_EQ(TotalItems(fused_stats), 3) << fused->plan_text();
  EXPECT_EQ(fused_stats.work_items_by_kind["dot_general"], 1) << fused->plan_text();
  EXPECT_EQ(fused_stats.work_items_by_kind["row_pipeline"], 1) << fused->plan_text();
  EXPECT_EQ(fused_stats.work_items_by_kind["elementwise_fusion"], 1) << fused->plan_text();

  // Unfused: one item per op. 1 dot_general, 6 broadcast_in_dim (bias, zero, row max, row sum,
  // 2, 1), 2 reduce, 8 elementwise (add, maximum, subtract, exp, divide, multiply, add, tanh).
  ExecutableStats unfused_stats = unfused->Stats();
  EXPECT_EQ(TotalItems(unfused_stats), 17) << unfused->plan_text();
  EXPECT_EQ(unfused_stats.work_items_by_kind["dot_general"], 1) << unfused->plan_text();
  EXPECT_EQ(unfused_stats.work_items_by_kind["elementwise_single"], 8) << unfused->plan_text();
  EXPECT_EQ(unfused_stats.work_items_by_kind["elementwise_fusion"], 0) << unfused->plan_text();
  EXPECT_EQ(unfused_stats.work_items_by_kind["row_pipeline"], 0) << unfused->plan_text();
  EXPECT_EQ(unfused_stats.work_items_by_kind["reduction"], 2) << unfused->plan_text();
  EXPECT_EQ(unfused_stats.work_items_by_kind["shape"], 6) << unfused->plan_text();
  // Materialized broadcasts need arena buffers the fused plan does not.
  EXPECT_GT(unfused_stats.arena_bytes, fused_stats.arena_bytes);
}

}  // namespace
}  // namespace accy
