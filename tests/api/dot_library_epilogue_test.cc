// Large dot_general items whose epilogue does not map onto oneDNN post-ops as a whole: matmul
// (with post-ops for the chain's longest mappable prefix, or none) then a JIT elementwise pass
// computing the rest (src/api/engine.cc, kernels::DotPlacement::kLibraryWithJitEpilogue,
// jit::EmitDotEpilogueKernel). Each case checks where the item ran (ItemProfile::runs_on of
// the dot_general item's executor items, so the test fails if the item silently stays on the
// JIT), the values against the reference evaluator, and identical bits at 1 and 2 threads.
//
// Tolerance: inputs are uniform in [-1, 1]; the product of K terms is accumulated in f32 (oneDNN,
// blocked order) against the reference's double sum, so |dot - ref| <= K * 2^-21 (the
// dot_routing_test bound); each case scales that through its epilogue (see Case::atol/rtol).
#include <cmath>
#include <cstring>
#include <functional>
#include <ostream>
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

constexpr int64_t kM = 256, kK = 512, kN = 256;
const double kDotError = kK * std::ldexp(1.0, -21);

TensorType F32(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}

// Uniform in [lo, hi], fixed seed.
Tensor Random(const TensorType& type, uint64_t seed, double lo = -1, double hi = 1) {
  Tensor t = *Tensor::Allocate(type);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.element_count(); ++i) t.SetFromDouble(i, dist(rng));
  return t;
}

Value* Scalar(FunctionBuilder& f, double value, const TensorType& like) {
  return *f.BroadcastInDim(*f.ConstantScalar(like.element_type(), value), like, {});
}

// The epilogue gets the dot's result and the function (parameters 2.. are its extra inputs).
using Epilogue = std::function<Value*(FunctionBuilder&, Value*)>;

struct Case {
  std::string name;
  std::vector<TensorType> extra_inputs;  // parameters after lhs and rhs
  Epilogue epilogue;
  std::string runs_on;  // the dot_general item's executor items, in order
  double atol, rtol;
  bool batched = false;  // [4, 64, 128] x [4, 128, 96] instead of [M, K] x [K, N]
  // Positive inputs for the extra parameters (divisors), else [-1, 1].
  bool positive_extras = false;
  ElementType result = ElementType::kF32;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::unique_ptr<Module> Program(const Case& c) {
  Builder builder("dot_library_epilogue");
  TensorType lhs = c.batched ? F32({4, 64, 128}) : F32({kM, kK});
  TensorType rhs = c.batched ? F32({4, 128, 96}) : F32({kK, kN});
  TensorType out = c.batched ? F32({4, 64, 96}) : F32({kM, kN});
  std::vector<TensorType> params = {lhs, rhs};
  params.insert(params.end(), c.extra_inputs.begin(), c.extra_inputs.end());
  FunctionBuilder f =
      *builder.BeginFunction("main", params, {*TensorType::Create(c.result, out.dims())});
  Value* y = c.batched ? *f.DotGeneral(f.Parameter(0), f.Parameter(1), out, {2}, {1}, {0}, {0})
                       : *f.DotGeneral(f.Parameter(0), f.Parameter(1), out, {1}, {0}, {}, {});
  y = c.epilogue(f, y);
  EXPECT_TRUE(f.Return({y}).ok());
  return *builder.Finish();
}

std::vector<Tensor> Arguments(const Module& module, const Case& c) {
  std::vector<Tensor> args;
  const std::vector<TensorType>& types = module.FindFunction("main")->parameter_types();
  for (size_t p = 0; p < types.size(); ++p) {
    const bool positive = p >= 2 && c.positive_extras;
    args.push_back(Random(types[p], p + 7, positive ? 1.0 : -1.0, positive ? 2.0 : 1.0));
  }
  return args;
}

struct Outcome {
  std::vector<Tensor> results;
  std::string runs_on;  // runs_on of the dot_general item's executor items, joined by '+'
  int64_t arena_bytes = 0;
};

Outcome CompileAndRun(const Module& module, const std::vector<Tensor>& args, int threads) {
  EngineOptions options;
  options.enable_profiling = true;
  options.num_threads = threads;
  Outcome outcome;
  std::unique_ptr<Engine> engine = *Engine::Create(options);
  auto exe = engine->Compile(module);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (!exe.ok()) return outcome;
  auto results = (*exe)->Run(args);
  EXPECT_TRUE(results.ok()) << results.status();
  if (results.ok()) outcome.results = *std::move(results);
  const ExecutableStats stats = (*exe)->Stats();
  outcome.arena_bytes = stats.arena_bytes;
  for (const ItemProfile& p : stats.item_profiles) {
    if (p.kind != "dot_general") continue;
    EXPECT_EQ(p.calls, 1) << p.runs_on;
    outcome.runs_on += (outcome.runs_on.empty() ? "" : "+") + p.runs_on;
  }
  return outcome;
}

class DotLibraryEpilogueTest : public ::testing::TestWithParam<Case> {};

TEST_P(DotLibraryEpilogueTest, RunsOnOnednnMatchesReferenceSameBitsAtOneAndTwoThreads) {
  const Case& c = GetParam();
  std::unique_ptr<Module> module = Program(c);
  const std::vector<Tensor> args = Arguments(*module, c);
  Outcome one = CompileAndRun(*module, args, 1);
  Outcome two = CompileAndRun(*module, args, 2);
  ASSERT_EQ(one.results.size(), 1u);
  ASSERT_EQ(two.results.size(), 1u);
  // Where the tiled gemm:jit binding takes the dot (kernels::TiledGemmHost), it leaves every
  // epilogue with post-ops to the JIT pass.
  const std::string runs_on =
      c.runs_on == "library" && !c.batched && kernels::TiledGemmHost() ? "library+jit" : c.runs_on;
  EXPECT_EQ(one.runs_on, runs_on);
  EXPECT_EQ(two.runs_on, runs_on);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", args));
  TensorComparison close = CompareClose(one.results[0], expected[0], c.atol, c.rtol);
  EXPECT_TRUE(close.ok) << close.message;
  TensorComparison same = CompareExact(two.results[0], one.results[0]);
  EXPECT_TRUE(same.ok) << "2 threads vs 1: " << same.message;
}

Value* LeakyRelu(FunctionBuilder& f, Value* x) {
  Value* positive = *f.Compare(x, Scalar(f, 0, x->type()), "GT");
  return *f.Select(positive, x, *f.Multiply(Scalar(f, 0.1, x->type()), x));
}

Value* AddRowBias(FunctionBuilder& f, Value* x) {  // x + bias[n], bias broadcast over rows
  return *f.Add(x, *f.BroadcastInDim(f.Parameter(2), x->type(), {1}));
}

INSTANTIATE_TEST_SUITE_P(
    Epilogues, DotLibraryEpilogueTest,
    ::testing::Values(
        // abs, sqrt and a divide by a same-shape tensor have exact post-ops: one library item.
        // exp has none (oneDNN 2.6's eltwise_exp gives +inf for a NaN): matmul, then the JIT
        // pass. exp's relative error is the argument's absolute error.
        Case{"exp", {}, [](FunctionBuilder& f, Value* x) { return *f.Exponential(x); },
             "library+jit", 0, kDotError + std::ldexp(1.0, -20)},
        // sqrt(|x|) moves by at most sqrt(error) near 0.
        Case{"sqrt_abs", {},
             [](FunctionBuilder& f, Value* x) { return *f.Sqrt(*f.Abs(x)); },
             "library", std::sqrt(kDotError), std::ldexp(1.0, -20)},
        Case{"divide_by_tensor", {F32({kM, kN})},
             [](FunctionBuilder& f, Value* x) { return *f.Divide(x, f.Parameter(2)); },
             "library", kDotError, std::ldexp(1.0, -22), false, true},
        Case{"bias_then_exp", {F32({kN})},
             [](FunctionBuilder& f, Value* x) { return *f.Exponential(AddRowBias(f, x)); },
             "library+jit", 0, kDotError + std::ldexp(1.0, -20)},
        // compare/select has no post-op: matmul alone, then the JIT pass.
        Case{"leaky_relu_select", {}, LeakyRelu, "library+jit", kDotError,
             std::ldexp(1.0, -22)},
        // The bias add maps (matmul's bias argument); the select runs on the JIT.
        Case{"bias_then_leaky_relu", {F32({kN})},
             [](FunctionBuilder& f, Value* x) { return LeakyRelu(f, AddRowBias(f, x)); },
             "library+jit", kDotError, std::ldexp(1.0, -22)},
        // maximum with 0.5 is no relu; exp after it runs on the JIT too (the first op that does
        // not map ends the post-ops).
        Case{"scale_then_clamp_then_exp", {},
             [](FunctionBuilder& f, Value* x) {
               Value* scaled = *f.Multiply(x, Scalar(f, 0.25, x->type()));
               return *f.Exponential(*f.Maximum(scaled, Scalar(f, 0.5, x->type())));
             },
             "library+jit", 0, kDotError + std::ldexp(1.0, -20)},
        // A second linear eltwise with other parameters, which oneDNN 2.6's brgemm would run
        // with the first one's: negate maps, 2 - x stays on the JIT.
        Case{"negate_then_two_minus", {},
             [](FunctionBuilder& f, Value* x) {
               return *f.Subtract(Scalar(f, 2, x->type()), *f.Negate(x));
             },
             "library+jit", kDotError, std::ldexp(1.0, -22)},
        // The epilogue changes the element type: matmul's f32 output lives in its own buffer.
        // A last-bit difference of the f32 value may round to the neighbouring bf16 (2^-7).
        Case{"convert_to_bf16", {},
             [](FunctionBuilder& f, Value* x) { return *f.Convert(x, ElementType::kBF16); },
             "library+jit", kDotError, std::ldexp(1.0, -7), false, false, ElementType::kBF16},
        // A column bias (broadcast over N) as a post-op has only oneDNN 2.6's reference kernel:
        // matmul computes the dot alone, the JIT the whole epilogue.
        Case{"column_bias_times_tensor", {F32({kM}), F32({kM, kN})},
             [](FunctionBuilder& f, Value* x) {
               Value* column = *f.BroadcastInDim(f.Parameter(2), x->type(), {0});
               return *f.Multiply(*f.Add(column, x), f.Parameter(3));
             },
             "library+jit", 2 * kDotError, std::ldexp(1.0, -22)},
        // An epilogue op that does not read the chain (0.5 t) stops the post-ops too.
        Case{"select_against_scaled_tensor", {F32({kM, kN})},
             [](FunctionBuilder& f, Value* x) {
               Value* half_t = *f.Multiply(f.Parameter(2), Scalar(f, 0.5, x->type()));
               return *f.Select(*f.Compare(x, half_t, "GT"), x, half_t);
             },
             "library+jit", kDotError, std::ldexp(1.0, -22)},
        Case{"batched_leaky_relu", {}, LeakyRelu, "library+jit", 128 * std::ldexp(1.0, -21),
             std::ldexp(1.0, -22), true}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// The JIT pass writes over matmul's output when both live in the arena (here the epilogue's
// result feeds a transpose): the arena holds one [M, N] buffer, not two.
TEST(DotLibraryEpilogueTest, JitEpilogueWritesInPlaceOverMatmulOutput) {
  Builder builder("in_place");
  FunctionBuilder f =
      *builder.BeginFunction("main", {F32({kM, kK}), F32({kK, kN})}, {F32({kN, kM})});
  Value* y = LeakyRelu(f, *f.DotGeneral(f.Parameter(0), f.Parameter(1), F32({kM, kN}), {1}, {0},
                                        {}, {}));
  ASSERT_OK(f.Return({*f.Transpose(y, {1, 0})}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  const std::vector<Tensor> args = {Random(F32({kM, kK}), 1), Random(F32({kK, kN}), 2)};
  Outcome outcome = CompileAndRun(*module, args, 2);
  EXPECT_EQ(outcome.runs_on, "library+jit");
  EXPECT_LT(outcome.arena_bytes, 2 * kM * kN * 4);
  ASSERT_EQ(outcome.results.size(), 1u);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", args));
  TensorComparison close =
      CompareClose(outcome.results[0], expected[0], kDotError, std::ldexp(1.0, -22));
  EXPECT_TRUE(close.ok) << close.message;
}

}  // namespace
}  // namespace accy
