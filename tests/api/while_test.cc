// StableHLO while (iterate work items) through the engine: cond and body compiled, loop-carried
// buffers, captured outer values, nesting, the trip-count bound, concurrency; every result is
// compared with the reference evaluator.
#include <cmath>
#include <thread>

#include "accy/builder.h"
#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using testing::HasSubstr;

TensorType F32(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}
TensorType I32Scalar() { return *TensorType::Create(ElementType::kI32, {}); }

Tensor Ramp(const TensorType& type, float scale, float offset) {
  std::vector<float> v(static_cast<size_t>(type.element_count()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(offset + scale * static_cast<float>(i));
  return *Tensor::FromVector(type, v);
}

Tensor I32(int32_t value) { return *Tensor::FromVector<int32_t>(I32Scalar(), {value}); }

// (i, x) -> while i < n: i = i + 1; x = x * 0.5 + tanh(x) + c * b
// where n is parameter 0, c = exp(param 2) is computed outside the loop (a captured value) and
// b broadcasts the scalar parameter 3 (a captured broadcast the outer plan elides).
std::unique_ptr<Module> LoopProgram(int64_t size) {
  Builder builder("loop");
  TensorType v = F32({size});
  FunctionBuilder f =
      *builder.BeginFunction("main", {I32Scalar(), v, v, F32({})}, {I32Scalar(), v});
  Value* n = f.Parameter(0);
  Value* c = *f.Exponential(f.Parameter(2));
  Value* b = *f.BroadcastInDim(f.Parameter(3), v, {});
  Value* zero = *f.ConstantScalar(ElementType::kI32, 0);
  std::vector<Value*> results = *f.While(
      {zero, f.Parameter(1)},
      [&](FunctionBuilder& cond, std::span<Value* const> args) -> Status {
        ACCY_ASSIGN_OR_RETURN(Value * less, cond.Compare(args[0], n, "LT"));
        return cond.Return({less});
      },
      [&](FunctionBuilder& body, std::span<Value* const> args) -> Status {
        ACCY_ASSIGN_OR_RETURN(Value * one, body.ConstantScalar(ElementType::kI32, 1));
        ACCY_ASSIGN_OR_RETURN(Value * next_i, body.Add(args[0], one));
        ACCY_ASSIGN_OR_RETURN(Value * half_scalar, body.ConstantScalar(ElementType::kF32, 0.5));
        ACCY_ASSIGN_OR_RETURN(Value * half, body.BroadcastInDim(half_scalar, v, {}));
        ACCY_ASSIGN_OR_RETURN(Value * scaled, body.Multiply(args[1], half));
        ACCY_ASSIGN_OR_RETURN(Value * t, body.Tanh(args[1]));
        ACCY_ASSIGN_OR_RETURN(Value * cb, body.Multiply(c, b));
        ACCY_ASSIGN_OR_RETURN(Value * sum, body.Add(scaled, t));
        ACCY_ASSIGN_OR_RETURN(Value * next_x, body.Add(sum, cb));
        return body.Return({next_i, next_x});
      });
  EXPECT_TRUE(f.Return(results).ok());
  return *builder.Finish();
}

void ExpectMatchesReference(const Module& module, std::span<const Tensor> inputs,
                            std::span<const Tensor> outputs, double atol) {
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(module, "main", inputs));
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    // tanh differs by a few ULP between the JIT and libm; the loop adds it up n times.
    TensorComparison c = CompareClose(outputs[i], expected[i], atol, 1e-5);
    EXPECT_TRUE(c.ok) << "result " << i << ": " << c.message;
  }
}

TEST(WhileTest, LoopWithCapturedValuesMatchesTheReference) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  for (int64_t size : {1, 17, 1023}) {
    std::unique_ptr<Module> module = LoopProgram(size);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
    EXPECT_EQ(exe->Stats().work_items_by_kind["iterate"], 1);
    for (int32_t trips : {0, 1, 2, 7}) {
      std::vector<Tensor> inputs = {I32(trips), Ramp(F32({size}), 0.3f, 1.0f),
                                    Ramp(F32({size}), 0.1f, -2.0f),
                                    *Tensor::FromVector<float>(F32({}), {0.25f})};
      ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(inputs));
      EXPECT_EQ(outputs[0].data_as<int32_t>()[0], trips);
      ExpectMatchesReference(*module, inputs, outputs, 1e-5);
    }
  }
}

// An odd trip count leaves the state in the spare buffers: the kernel copies it back.
TEST(WhileTest, OddAndEvenTripCountsGiveTheStateInTheOutputs) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  std::unique_ptr<Module> module = LoopProgram(5);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  std::vector<float> previous;
  for (int32_t trips = 0; trips < 4; ++trips) {
    std::vector<Tensor> inputs = {I32(trips), *Tensor::FromVector<float>(F32({5}), {1, 2, 3, 4, 5}),
                                  *Tensor::FromVector<float>(F32({5}), {0, 0, 0, 0, 0}),
                                  *Tensor::FromVector<float>(F32({}), {0.0f})};
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(inputs));
    const float* x = outputs[1].data_as<float>();
    // c * b = exp(0) * 0 = 0, so x_{k+1} = x_k / 2 + tanh(x_k), element 0 from 1.
    float expected = 1.0f;
    for (int32_t k = 0; k < trips; ++k) expected = expected * 0.5f + std::tanh(expected);
    EXPECT_NEAR(x[0], expected, 1e-6) << trips << " trips";
  }
}

// while (i < 3) { j = 0; while (j < i + 1) { x = x + 1; j++ }; i++ }: x gains 1 + 2 + 3.
TEST(WhileTest, NestedLoopsRunTheInnerLoopInTheOuterBody) {
  Builder builder("nested");
  TensorType v = F32({9});
  FunctionBuilder f = *builder.BeginFunction("main", {v}, {v});
  Value* zero = *f.ConstantScalar(ElementType::kI32, 0);
  std::vector<Value*> outer = *f.While(
      {zero, f.Parameter(0)},
      [&](FunctionBuilder& cond, std::span<Value* const> args) -> Status {
        ACCY_ASSIGN_OR_RETURN(Value * three, cond.ConstantScalar(ElementType::kI32, 3));
        ACCY_ASSIGN_OR_RETURN(Value * less, cond.Compare(args[0], three, "LT"));
        return cond.Return({less});
      },
      [&](FunctionBuilder& body, std::span<Value* const> args) -> Status {
        Value* i = args[0];
        ACCY_ASSIGN_OR_RETURN(Value * one, body.ConstantScalar(ElementType::kI32, 1));
        ACCY_ASSIGN_OR_RETURN(Value * j0, body.ConstantScalar(ElementType::kI32, 0));
        ACCY_ASSIGN_OR_RETURN(
            std::vector<Value*> inner,
            body.While(
                {j0, args[1]},
                [&](FunctionBuilder& c2, std::span<Value* const> a2) -> Status {
                  ACCY_ASSIGN_OR_RETURN(Value * one2, c2.ConstantScalar(ElementType::kI32, 1));
                  ACCY_ASSIGN_OR_RETURN(Value * limit, c2.Add(i, one2));
                  ACCY_ASSIGN_OR_RETURN(Value * less, c2.Compare(a2[0], limit, "LT"));
                  return c2.Return({less});
                },
                [&](FunctionBuilder& b2, std::span<Value* const> a2) -> Status {
                  ACCY_ASSIGN_OR_RETURN(Value * one2, b2.ConstantScalar(ElementType::kI32, 1));
                  ACCY_ASSIGN_OR_RETURN(Value * onef, b2.ConstantScalar(ElementType::kF32, 1));
                  ACCY_ASSIGN_OR_RETURN(Value * ones, b2.BroadcastInDim(onef, v, {}));
                  ACCY_ASSIGN_OR_RETURN(Value * next_j, b2.Add(a2[0], one2));
                  ACCY_ASSIGN_OR_RETURN(Value * next_x, b2.Add(a2[1], ones));
                  return b2.Return({next_j, next_x});
                }));
        ACCY_ASSIGN_OR_RETURN(Value * next_i, body.Add(i, one));
        return body.Return({next_i, inner[1]});
      });
  ASSERT_TRUE(f.Return({outer[1]}).ok());
  std::unique_ptr<Module> module = *builder.Finish();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  Tensor x = Ramp(v, 1.0f, 0.0f);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run({&x, 1}));
  for (int64_t k = 0; k < 9; ++k) {
    EXPECT_FLOAT_EQ(outputs[0].data_as<float>()[k], x.data_as<float>()[k] + 6.0f) << k;
  }
}

// A body with a oneDNN matmul, a fused epilogue and a reduction: x = relu(x @ w) / sum(...).
TEST(WhileTest, BodyWithLibraryAndJitItemsMatchesTheReference) {
  Builder builder("mm_loop");
  TensorType m = F32({8, 8});
  FunctionBuilder f = *builder.BeginFunction("main", {m, m}, {m});
  Value* w = f.Parameter(1);
  Value* zero = *f.ConstantScalar(ElementType::kI32, 0);
  std::vector<Value*> loop = *f.While(
      {zero, f.Parameter(0)},
      [&](FunctionBuilder& cond, std::span<Value* const> args) -> Status {
        ACCY_ASSIGN_OR_RETURN(Value * four, cond.ConstantScalar(ElementType::kI32, 4));
        ACCY_ASSIGN_OR_RETURN(Value * less, cond.Compare(args[0], four, "LT"));
        return cond.Return({less});
      },
      [&](FunctionBuilder& body, std::span<Value* const> args) -> Status {
        ACCY_ASSIGN_OR_RETURN(Value * one, body.ConstantScalar(ElementType::kI32, 1));
        ACCY_ASSIGN_OR_RETURN(Value * next_i, body.Add(args[0], one));
        ACCY_ASSIGN_OR_RETURN(Value * prod, body.DotGeneral(args[1], w, m, {1}, {0}, {}, {}));
        ACCY_ASSIGN_OR_RETURN(Value * zf, body.ConstantScalar(ElementType::kF32, 0));
        ACCY_ASSIGN_OR_RETURN(Value * zeros, body.BroadcastInDim(zf, m, {}));
        ACCY_ASSIGN_OR_RETURN(Value * relu, body.Maximum(prod, zeros));
        ACCY_ASSIGN_OR_RETURN(Value * abs, body.Abs(relu));
        ACCY_ASSIGN_OR_RETURN(Value * total, body.Reduce(abs, zf, F32({}), "sum", {0, 1}));
        ACCY_ASSIGN_OR_RETURN(Value * onef, body.ConstantScalar(ElementType::kF32, 1));
        ACCY_ASSIGN_OR_RETURN(Value * denom, body.Add(total, onef));
        ACCY_ASSIGN_OR_RETURN(Value * denoms, body.BroadcastInDim(denom, m, {}));
        ACCY_ASSIGN_OR_RETURN(Value * next_x, body.Divide(relu, denoms));
        return body.Return({next_i, next_x});
      });
  ASSERT_TRUE(f.Return({loop[1]}).ok());
  std::unique_ptr<Module> module = *builder.Finish();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  std::vector<Tensor> inputs = {Ramp(m, 0.7f, 0.2f), Ramp(m, 0.3f, 1.1f)};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(inputs));
  ExpectMatchesReference(*module, inputs, outputs, 1e-6);
}

// The form JAX exports for lax.fori_loop, imported from StableHLO text: a power iteration
// x <- (m x) / |m x|_inf over 6 trips, with m captured from the enclosing function.
TEST(WhileTest, ImportedForiLoopMatchesTheReference) {
  constexpr std::string_view kText = R"mlir(module @fori {
  func.func public @main(%m: tensor<16x16xf32>, %x: tensor<16xf32>) -> (tensor<16xf32>, tensor<i64>) {
    %0 = stablehlo.constant dense<0> : tensor<i64>
    %1:2 = stablehlo.while(%i = %0, %v = %x) : tensor<i64>, tensor<16xf32>
     cond {
      %c = stablehlo.constant dense<6> : tensor<i64>
      %p = stablehlo.compare  LT, %i, %c,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i64>
      %next = stablehlo.add %i, %one : tensor<i64>
      %mv = stablehlo.dot_general %m, %v, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %a = stablehlo.abs %mv : tensor<16xf32>
      %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %n = stablehlo.reduce(%a init: %z) applies stablehlo.maximum across dimensions = [0] : (tensor<16xf32>, tensor<f32>) -> tensor<f32>
      %nb = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<f32>) -> tensor<16xf32>
      %y = stablehlo.divide %mv, %nb : tensor<16xf32>
      stablehlo.return %next, %y : tensor<i64>, tensor<16xf32>
    }
    return %1#1, %1#0 : tensor<16xf32>, tensor<i64>
  }
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(kText));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  std::vector<Tensor> inputs = {Ramp(F32({16, 16}), 0.37f, 0.5f), Ramp(F32({16}), 0.2f, 0.1f)};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(inputs));
  EXPECT_EQ(outputs[1].data_as<int64_t>()[0], 6);
  ExpectMatchesReference(*module, inputs, outputs, 1e-5);
}

// A body the engine cannot compile fails Compile with the body's error, prefixed with the item.
TEST(WhileTest, UncompilableBodyFailsCompileNamingTheItemAndRegion) {
  Builder builder("bad_body");
  TensorType v = F32({4});
  FunctionBuilder f = *builder.BeginFunction("main", {v}, {v});
  std::vector<Value*> loop = *f.While(
      {f.Parameter(0)},
      [&](FunctionBuilder& cond, std::span<Value* const> args) -> Status {
        ACCY_ASSIGN_OR_RETURN(Value * t, cond.ConstantScalar(ElementType::kI1, 0));
        return cond.Return({t});
      },
      [&](FunctionBuilder& body, std::span<Value* const> args) -> Status {
        KernelCallSpec spec;
        spec.target = "no.such.kernel";
        ACCY_ASSIGN_OR_RETURN(Operation * call, body.KernelCall({args[0]}, {v}, spec));
        return body.Return({call->result(0)});
      });
  ASSERT_TRUE(f.Return({loop[0]}).ok());
  std::unique_ptr<Module> module = *builder.Finish();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  auto exe = engine->Compile(*module);
  ASSERT_FALSE(exe.ok());
  EXPECT_THAT(exe.status().message(), HasSubstr("iterate work item 0 (while): body: "));
  EXPECT_THAT(exe.status().message(), HasSubstr("no.such.kernel"));
  // The engine stays usable.
  std::unique_ptr<Module> good = LoopProgram(2);
  EXPECT_TRUE(engine->Compile(*good).ok());
}

TEST(WhileTest, TripCountBoundStopsARunawayLoopAndTheExecutableStaysUsable) {
  EngineOptions options;
  options.max_while_iterations = 5;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
  std::unique_ptr<Module> module = LoopProgram(3);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  auto inputs = [](int32_t trips) {
    return std::vector<Tensor>{I32(trips), Ramp(F32({3}), 0.3f, 1.0f), Ramp(F32({3}), 0.1f, 0.0f),
                               *Tensor::FromVector<float>(F32({}), {1.0f})};
  };
  auto runaway = exe->Run(inputs(1000000));
  ASSERT_FALSE(runaway.ok());
  EXPECT_EQ(runaway.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(runaway.status().message(), HasSubstr("within 5 iterations"));
  EXPECT_THAT(runaway.status().message(), HasSubstr("iterate work item"));
  // Exactly the bound is allowed, and the executable still runs.
  std::vector<Tensor> ok_inputs = inputs(5);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(ok_inputs));
  EXPECT_EQ(outputs[0].data_as<int32_t>()[0], 5);
  ExpectMatchesReference(*module, ok_inputs, outputs, 1e-5);
}

TEST(WhileTest, NegativeTripCountBoundIsRejectedByCreate) {
  EngineOptions options;
  options.max_while_iterations = -1;
  auto engine = Engine::Create(options);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(), HasSubstr("max_while_iterations is -1"));
}

TEST(WhileTest, OneExecutableRunsLoopsFromManyThreads) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  std::unique_ptr<Module> module = LoopProgram(64);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  std::vector<std::vector<Tensor>> inputs;
  std::vector<std::vector<Tensor>> expected;
  for (int32_t t = 0; t < 6; ++t) {
    inputs.push_back({I32(t + 1), Ramp(F32({64}), 0.3f, t), Ramp(F32({64}), 0.1f, -t),
                      *Tensor::FromVector<float>(F32({}), {0.1f * t})});
    expected.push_back(*exe->Run(inputs.back()));
  }
  std::vector<int> failures(6, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 30; ++r) {
        auto outputs = exe->Run(inputs[static_cast<size_t>(t)]);
        if (!outputs.ok() || outputs->size() != 2 ||
            std::memcmp((*outputs)[1].data(), expected[static_cast<size_t>(t)][1].data(),
                        (*outputs)[1].byte_size()) != 0) {
          ++failures[static_cast<size_t>(t)];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 6; ++t) EXPECT_EQ(failures[static_cast<size_t>(t)], 0) << "thread " << t;
}

}  // namespace
}  // namespace accy
