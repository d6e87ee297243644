// StableHLO case and if (spec "case", "if") through the engine: each branch outlined and
// compiled, the index choosing one (out-of-range indices run the last branch), branches reading
// values of the enclosing function, branches with library items, a case inside a while, the
// imported if; results compared with the reference evaluator; errors of bad cases.
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
Tensor I32(int32_t value) { return *Tensor::FromVector<int32_t>(I32Scalar(), {value}); }

Tensor Ramp(const TensorType& type, float scale, float offset) {
  std::vector<float> v(static_cast<size_t>(type.element_count()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(offset + scale * static_cast<float>(i));
  return *Tensor::FromVector(type, v);
}

// (index, x, y) -> case index { 0: (x + y, exp(c)), 1: (x * y, tanh(x)), 2: (y, x - c) } where
// c = exp(y) is computed outside the case (a captured value) and branch 2 returns a captured
// parameter unchanged.
std::unique_ptr<Module> CaseProgram(int64_t size) {
  Builder builder("case");
  TensorType v = F32({size});
  FunctionBuilder f = *builder.BeginFunction("main", {I32Scalar(), v, v}, {v, v});
  Value* x = f.Parameter(1);
  Value* y = f.Parameter(2);
  Value* c = *f.Exponential(y);
  std::vector<RegionBodyFn> branches;
  branches.push_back([&](FunctionBuilder& b, std::span<Value* const>) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * sum, b.Add(x, y));
    ACCY_ASSIGN_OR_RETURN(Value * e, b.Exponential(c));
    return b.Return({sum, e});
  });
  branches.push_back([&](FunctionBuilder& b, std::span<Value* const>) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * product, b.Multiply(x, y));
    ACCY_ASSIGN_OR_RETURN(Value * t, b.Tanh(x));
    return b.Return({product, t});
  });
  branches.push_back([&](FunctionBuilder& b, std::span<Value* const>) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * d, b.Subtract(x, c));
    return b.Return({y, d});
  });
  std::vector<Value*> results = *f.Case(f.Parameter(0), {v, v}, std::move(branches));
  EXPECT_TRUE(f.Return(results).ok());
  return *builder.Finish();
}

void ExpectMatchesReference(const Module& module, std::span<const Tensor> inputs,
                            std::span<const Tensor> outputs) {
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(module, "main", inputs));
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    // exp and tanh differ by a few ULP between the JIT and libm.
    TensorComparison c = CompareClose(outputs[i], expected[i], 1e-6, 1e-5);
    EXPECT_TRUE(c.ok) << "result " << i << ": " << c.message;
  }
}

TEST(CaseTest, IndexChoosesTheBranchAndOutOfRangeRunsTheLast) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  for (int64_t size : {1, 33, 1000}) {
    std::unique_ptr<Module> module = CaseProgram(size);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
    EXPECT_EQ(exe->Stats().work_items_by_kind["iterate"], 1);
    const Tensor x = Ramp(F32({size}), 0.3f, 1.0f);
    const Tensor y = Ramp(F32({size}), 0.1f, -2.0f);
    for (int32_t index : {0, 1, 2, 3, -1, 1000}) {
      std::vector<Tensor> inputs = {I32(index), x, y};
      ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(inputs));
      ExpectMatchesReference(*module, inputs, outputs);
      const float x0 = x.data_as<float>()[0];
      const float y0 = y.data_as<float>()[0];
      const float got = outputs[0].data_as<float>()[0];
      switch (index) {
        case 0: EXPECT_FLOAT_EQ(got, x0 + y0); break;
        case 1: EXPECT_FLOAT_EQ(got, x0 * y0); break;
        default: EXPECT_EQ(got, y0) << "index " << index << " runs the last branch";
      }
    }
  }
}

TEST(CaseTest, ReferenceAgreesOnTheBranchTaken) {
  // The reference evaluator's own case: branch 1 of 3 and an out-of-range index.
  std::unique_ptr<Module> module = CaseProgram(2);
  const Tensor x = *Tensor::FromVector<float>(F32({2}), {2.0f, 3.0f});
  const Tensor y = *Tensor::FromVector<float>(F32({2}), {0.5f, -1.0f});
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> one, Evaluate(*module, "main", std::vector<Tensor>{I32(1), x, y}));
  EXPECT_EQ(one[0].data_as<float>()[0], 1.0f);
  EXPECT_EQ(one[0].data_as<float>()[1], -3.0f);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> last, Evaluate(*module, "main", std::vector<Tensor>{I32(-5), x, y}));
  EXPECT_EQ(last[0].data_as<float>()[1], -1.0f);
}

TEST(CaseTest, BranchWithALibraryMatmulMatchesTheReference) {
  Builder builder("case_dot");
  TensorType m = F32({16, 16});
  FunctionBuilder f = *builder.BeginFunction("main", {I32Scalar(), m, m}, {m});
  Value* a = f.Parameter(1);
  Value* b = f.Parameter(2);
  std::vector<RegionBodyFn> branches;
  branches.push_back([&](FunctionBuilder& body, std::span<Value* const>) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * dot, body.DotGeneral(a, b, m, {1}, {0}, {}, {}));
    ACCY_ASSIGN_OR_RETURN(Value * relu, body.Maximum(dot, a));
    return body.Return({relu});
  });
  branches.push_back([&](FunctionBuilder& body, std::span<Value* const>) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * sum, body.Add(a, b));
    return body.Return({sum});
  });
  ASSERT_TRUE(f.Return(*f.Case(f.Parameter(0), {m}, std::move(branches))).ok());
  std::unique_ptr<Module> module = *builder.Finish();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  for (int32_t index : {0, 1}) {
    std::vector<Tensor> inputs = {I32(index), Ramp(m, 0.01f, 0.5f), Ramp(m, 0.02f, -1.0f)};
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(inputs));
    ExpectMatchesReference(*module, inputs, outputs);
  }
}

TEST(CaseTest, ImportedIfAndCaseInsideAWhileMatchTheReference) {
  // for i in [0, 4): x = i is even ? x * 2 : (case i-1 {0: x + 1, 1: x - 1, 2: x + 10}).
  const char* text = R"mlir(
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<3xf32>
   cond {
    %n = stablehlo.constant dense<4> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %two = stablehlo.constant dense<2> : tensor<i32>
    %rem = stablehlo.remainder %i, %two : tensor<i32>
    %even = stablehlo.compare EQ, %rem, %zero : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %next = "stablehlo.if"(%even) ({
      %c2 = stablehlo.constant dense<2.0> : tensor<3xf32>
      %d = stablehlo.multiply %acc, %c2 : tensor<3xf32>
      stablehlo.return %d : tensor<3xf32>
    }, {
      %k = stablehlo.subtract %i, %one : tensor<i32>
      %v = "stablehlo.case"(%k) ({
        %c1 = stablehlo.constant dense<1.0> : tensor<3xf32>
        %s = stablehlo.add %acc, %c1 : tensor<3xf32>
        stablehlo.return %s : tensor<3xf32>
      }, {
        %c1 = stablehlo.constant dense<1.0> : tensor<3xf32>
        %s = stablehlo.subtract %acc, %c1 : tensor<3xf32>
        stablehlo.return %s : tensor<3xf32>
      }, {
        %c10 = stablehlo.constant dense<10.0> : tensor<3xf32>
        %s = stablehlo.add %acc, %c10 : tensor<3xf32>
        stablehlo.return %s : tensor<3xf32>
      }) : (tensor<i32>) -> tensor<3xf32>
      stablehlo.return %v : tensor<3xf32>
    }) : (tensor<i1>) -> tensor<3xf32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %next : tensor<i32>, tensor<3xf32>
  }
  func.return %r#1 : tensor<3xf32>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  const Tensor x = *Tensor::FromVector<float>(F32({3}), {1.0f, -2.0f, 0.5f});
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(std::vector<Tensor>{x}));
  // i=0: *2; i=1: case 0, +1; i=2: *2; i=3: case 2, +10.
  const float expected[3] = {(1.0f * 2 + 1) * 2 + 10, (-2.0f * 2 + 1) * 2 + 10,
                             (0.5f * 2 + 1) * 2 + 10};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(outputs[0].data_as<float>()[i], expected[i]) << i;
  ExpectMatchesReference(*module, std::vector<Tensor>{x}, outputs);
  // The printed if is a case of not(pred), and it parses back to the same text.
  const std::string printed = PrintModule(*module);
  EXPECT_THAT(printed, HasSubstr("\"stablehlo.case\"("));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> again, ParseStableHlo(printed));
  EXPECT_EQ(PrintModule(*again), printed);
}

TEST(CaseTest, OneExecutableRunsCasesFromManyThreads) {
  std::unique_ptr<Module> module = CaseProgram(257);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  const Tensor x = Ramp(F32({257}), 0.3f, 1.0f);
  const Tensor y = Ramp(F32({257}), 0.1f, -2.0f);
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 20; ++k) {
        auto outputs = exe->Run(std::vector<Tensor>{I32((t + k) % 3), x, y});
        if (!outputs.ok()) return;
        const float got = (*outputs)[0].data_as<float>()[5];
        const float x5 = x.data_as<float>()[5], y5 = y.data_as<float>()[5];
        const float want = (t + k) % 3 == 0 ? x5 + y5 : (t + k) % 3 == 1 ? x5 * y5 : y5;
        if (got != want) return;
      }
      ok[static_cast<size_t>(t)] = 1;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(ok, std::vector<int>(4, 1));
}

TEST(CaseTest, BadCasesFailNamingTheProblem) {
  Builder builder("bad");
  TensorType v = F32({4});
  FunctionBuilder f = *builder.BeginFunction("main", {I32Scalar(), v, F32({})}, {v});
  Value* x = f.Parameter(1);
  // A branch returning another type.
  std::vector<RegionBodyFn> mismatched;
  mismatched.push_back([&](FunctionBuilder& b, std::span<Value* const>) -> Status {
    return b.Return({x});
  });
  mismatched.push_back([&](FunctionBuilder& b, std::span<Value* const>) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * s, b.ConstantScalar(ElementType::kF32, 1.0));
    return b.Return({s});
  });
  auto bad_branch = f.Case(f.Parameter(0), {v}, std::move(mismatched));
  EXPECT_EQ(bad_branch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_branch.status().message(),
              HasSubstr("branch 1 returns tensor<f32> as value 0, expected tensor<4xf32>"));
  // No branch at all.
  auto none = f.Case(f.Parameter(0), {v}, {});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(none.status().message(), HasSubstr("has no regions, expected at least one"));
  // An index that is not tensor<i32>.
  std::vector<RegionBodyFn> one;
  one.push_back([&](FunctionBuilder& b, std::span<Value* const>) -> Status {
    return b.Return({x});
  });
  auto bad_index = f.Case(f.Parameter(2), {v}, std::move(one));
  EXPECT_EQ(bad_index.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_index.status().message(),
              HasSubstr("index has type tensor<f32>, expected tensor<i32>"));
  // if with a pred that is not tensor<i1>.
  auto bad_if = f.If(
      f.Parameter(0), {v},
      [&](FunctionBuilder& b, std::span<Value* const>) -> Status { return b.Return({x}); },
      [&](FunctionBuilder& b, std::span<Value* const>) -> Status { return b.Return({x}); });
  EXPECT_EQ(bad_if.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_if.status().message(), HasSubstr("if: pred has type tensor<i32>"));
  // The imported if's own errors.
  const Status not_pred = ParseStableHlo(R"mlir(
func.func @main(%p: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = "stablehlo.if"(%p) ({
    stablehlo.return %x : tensor<4xf32>
  }, {
    stablehlo.return %x : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
)mlir").status();
  EXPECT_EQ(not_pred.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(not_pred.message(), HasSubstr("3:8: stablehlo.if takes one tensor<i1> pred"));
}

TEST(CaseTest, UncompilableBranchFailsCompileNamingTheItemAndBranch) {
  Builder builder("bad_branch");
  TensorType v = F32({4});
  FunctionBuilder f = *builder.BeginFunction("main", {I32Scalar(), v}, {v});
  Value* x = f.Parameter(1);
  std::vector<RegionBodyFn> branches;
  branches.push_back([&](FunctionBuilder& b, std::span<Value* const>) -> Status {
    return b.Return({x});
  });
  branches.push_back([&](FunctionBuilder& b, std::span<Value* const>) -> Status {
    KernelCallSpec spec;
    spec.target = "no.such.kernel";
    ACCY_ASSIGN_OR_RETURN(Operation * call, b.KernelCall({x}, {v}, spec));
    return b.Return({call->result(0)});
  });
  ASSERT_TRUE(f.Return(*f.Case(f.Parameter(0), {v}, std::move(branches))).ok());
  std::unique_ptr<Module> module = *builder.Finish();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  auto exe = engine->Compile(*module);
  ASSERT_FALSE(exe.ok());
  EXPECT_THAT(exe.status().message(), HasSubstr("iterate work item 0 (case): branch 1: "));
  EXPECT_THAT(exe.status().message(), HasSubstr("no.such.kernel"));
}

}  // namespace
}  // namespace accy
