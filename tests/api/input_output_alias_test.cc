// Input-output aliases (donated parameters: CompileOptions::input_output_aliases, and
// `tf.aliasing_output` in StableHLO text): a run whose output is the very buffer of its aliased
// input computes in place when the plan allows it and copies the input aside when it does not;
// either way the results equal the reference evaluator's on the original input, and the input
// buffer holds the result afterwards.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TensorType F32(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}

Tensor Ramp(int64_t n, float scale) {
  std::vector<float> values(static_cast<size_t>(n));
  for (size_t i = 0; i < values.size(); ++i) values[i] = scale * (static_cast<float>(i) - 7.5f);
  return *Tensor::FromVector(F32({n}), values);
}

Tensor Copy(const Tensor& t) { return *Tensor::FromBytes(t.type(), t.bytes()); }

// Runs `exe` in place (output `result` = input `parameter`'s buffer, the other outputs
// separate) on copies of `inputs`, and checks every output bit for bit against a run with
// separate buffers on the original inputs, and within 4 ulp of the reference evaluator.
void ExpectInPlaceRunMatchesSeparateRun(const Module& module, const Executable& exe,
                                        const std::vector<Tensor>& inputs, int64_t parameter,
                                        int64_t result) {
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, exe.Run(inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> reference, Evaluate(module, "main", inputs));
  std::vector<Tensor> in;
  for (const Tensor& t : inputs) in.push_back(Copy(t));
  std::vector<Tensor> out;
  for (size_t r = 0; r < expected.size(); ++r) {
    out.push_back(static_cast<int64_t>(r) == result ? in[static_cast<size_t>(parameter)]
                                                    : *Tensor::Allocate(expected[r].type()));
  }
  ASSERT_EQ(out[static_cast<size_t>(result)].data(), in[static_cast<size_t>(parameter)].data());
  ASSERT_OK(exe.Run(in, out));
  for (size_t r = 0; r < expected.size(); ++r) {
    EXPECT_TRUE(CompareExact(out[r], expected[r]).ok) << "result " << r;
    const TensorComparison close = CompareUlp(out[r], reference[r], 4);
    EXPECT_TRUE(close.ok) << "result " << r << ": " << close.message;
  }
  // The donated input now holds the result.
  EXPECT_TRUE(CompareExact(in[static_cast<size_t>(parameter)],
                           expected[static_cast<size_t>(result)]).ok);
}

// `module` compiled on a default engine with parameter 0 donated to result 0.
StatusOr<std::unique_ptr<Executable>> CompileDonatingFirst(const Module& module) {
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Create());
  CompileOptions options;
  options.input_output_aliases = {{0, 0}};
  return engine->Compile(module, options);
}

// y = exp(x) * x + x (no cancellation: both terms have x's sign): one elementwise fusion
// reading x where it writes y, so y is computed over x's buffer with no copy; a second run (on
// the same engine) is in place again.
TEST(InputOutputAliasTest, ElementwiseResultComputesOverTheDonatedParameter) {
  Builder builder("donate");
  FunctionBuilder f = *builder.BeginFunction("main", {F32({37})}, {F32({37})});
  Value* x = f.Parameter(0);
  ASSERT_OK(f.Return({*f.Add(*f.Multiply(*f.Exponential(x), x), x)}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, CompileDonatingFirst(*module));
  EXPECT_THAT(exe->Stats().input_output_aliases, ElementsAre(InputOutputAlias{0, 0}));
  EXPECT_THAT(exe->Stats().input_output_aliases_in_place, ElementsAre(true));
  ExpectInPlaceRunMatchesSeparateRun(*module, *exe, {Ramp(37, 0.25f)}, 0, 0);
  ExpectInPlaceRunMatchesSeparateRun(*module, *exe, {Ramp(37, -0.5f)}, 0, 0);
  // Separate buffers still work (the alias allows sharing, it does not require it).
  std::vector<Tensor> in = {Ramp(37, 0.25f)};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, exe->Run(in));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", in));
  EXPECT_TRUE(CompareUlp(out[0], expected[0], 4).ok);
  EXPECT_TRUE(CompareExact(in[0], Ramp(37, 0.25f)).ok);  // not donated: unchanged
}

// reverse(x) reads x at other positions than it writes: the run copies x aside first.
TEST(InputOutputAliasTest, ResultReadingOtherPositionsCopiesTheParameterAside) {
  Builder builder("reverse");
  FunctionBuilder f = *builder.BeginFunction("main", {F32({40})}, {F32({40})});
  ASSERT_OK(f.Return({*f.Reverse(f.Parameter(0), {0})}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, CompileDonatingFirst(*module));
  EXPECT_THAT(exe->Stats().input_output_aliases_in_place, ElementsAre(false));
  ExpectInPlaceRunMatchesSeparateRun(*module, *exe, {Ramp(40, 1.0f)}, 0, 0);
}

// Result 1 returns x itself (copied after the run) while result 0 is aliased to x: the copy
// would read what result 0 wrote, so x is copied aside and result 1 keeps x's values.
TEST(InputOutputAliasTest, ParameterAlsoReturnedAsAnotherResultIsCopiedAside) {
  Builder builder("twice");
  FunctionBuilder f = *builder.BeginFunction("main", {F32({16})}, {F32({16}), F32({16})});
  Value* x = f.Parameter(0);
  ASSERT_OK(f.Return({*f.Multiply(x, x), x}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, CompileDonatingFirst(*module));
  EXPECT_THAT(exe->Stats().input_output_aliases_in_place, ElementsAre(false));
  ExpectInPlaceRunMatchesSeparateRun(*module, *exe, {Ramp(16, 0.5f)}, 0, 0);
}

// x is read by a reduction and by the aliased elementwise result; with one thread and two the
// runs in place agree with the reference whichever order the plan picked.
TEST(InputOutputAliasTest, OtherReadersOfTheParameterSeeItsOriginalValues) {
  const char* text = R"(
  func.func @main(%x: tensor<64x33xf32> {tf.aliasing_output = 1 : i32}, %y: tensor<64x33xf32>)
      -> (tensor<64xf32>, tensor<64x33xf32>, tensor<33x64xf32>) {
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1]
      : (tensor<64x33xf32>, tensor<f32>) -> tensor<64xf32>
    %e = stablehlo.exponential %x : tensor<64x33xf32>
    %p = stablehlo.multiply %e, %y : tensor<64x33xf32>
    %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<64x33xf32>) -> tensor<33x64xf32>
    return %s, %p, %t : tensor<64xf32>, tensor<64x33xf32>, tensor<33x64xf32>
  })";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  EXPECT_THAT(module->FindFunction("main")->input_output_aliases(),
              ElementsAre(InputOutputAlias{0, 1}));
  std::vector<float> xs(64 * 33), ys(64 * 33);
  for (size_t i = 0; i < xs.size(); ++i) {
    xs[i] = 0.01f * static_cast<float>(static_cast<int>(i % 97) - 48);
    ys[i] = 0.5f + 0.001f * static_cast<float>(i % 13);
  }
  std::vector<Tensor> inputs = {*Tensor::FromVector(F32({64, 33}), xs),
                                *Tensor::FromVector(F32({64, 33}), ys)};
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    EngineOptions engine_options;
    engine_options.num_threads = threads;
    engine_options.reduce_threads_under_load = false;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(engine_options));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
    ASSERT_EQ(exe->Stats().input_output_aliases_in_place.size(), 1u);
    // The transpose and the reduction must have read the original x: every result equals a
    // run with separate buffers, bit for bit.
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, exe->Run(inputs));
    std::vector<Tensor> in = {Copy(inputs[0]), Copy(inputs[1])};
    std::vector<Tensor> out = {*Tensor::Allocate(F32({64})), in[0],
                               *Tensor::Allocate(F32({33, 64}))};
    ASSERT_OK(exe->Run(in, out));
    for (size_t r = 0; r < 3; ++r) EXPECT_TRUE(CompareExact(out[r], expected[r]).ok) << r;
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> reference, Evaluate(*module, "main", inputs));
    EXPECT_TRUE(CompareClose(out[0], reference[0], 1e-5, 1e-5).ok);
    EXPECT_TRUE(CompareUlp(out[1], reference[1], 4).ok);
    EXPECT_TRUE(CompareExact(out[2], reference[2]).ok);
  }
}

TEST(InputOutputAliasTest, BadAliasesAreCompileErrorsNamingThem) {
  Builder builder("bad");
  FunctionBuilder f = *builder.BeginFunction("main", {F32({4}), F32({2})}, {F32({4}), F32({4})});
  ASSERT_OK(f.Return({*f.Negate(f.Parameter(0)), *f.Abs(f.Parameter(0))}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  struct Case {
    std::vector<InputOutputAlias> aliases;
    const char* message;
  };
  for (const Case& c : {Case{{{2, 0}}, "parameter 2 is out of range (the function has 2"},
                        Case{{{0, -1}}, "result -1 is out of range (the function has 2 results)"},
                        Case{{{1, 0}}, "parameter 1 (tensor<2xf32>) and result 0 (tensor<4xf32>)"
                                       " have different types"},
                        Case{{{0, 0}, {0, 1}}, "parameter 0 -> result 1 conflicts with parameter 0"
                                               " -> result 0"}}) {
    SCOPED_TRACE(c.message);
    CompileOptions options;
    options.input_output_aliases = c.aliases;
    auto exe = engine->Compile(*module, options);
    ASSERT_FALSE(exe.ok());
    EXPECT_EQ(exe.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(exe.status().message()), HasSubstr("CompileOptions: "));
    EXPECT_THAT(std::string(exe.status().message()), HasSubstr(c.message));
  }
}

// Declared-constant weights are packed once per address; a donated parameter is overwritten, so
// the two cannot be combined (the packed copy would go stale).
TEST(InputOutputAliasTest, ADonatedParameterCannotBeDeclaredConstant) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"(
  func.func @main(%x: tensor<8x8xf32>, %w: tensor<8x8xf32> {tf.aliasing_output = 0 : i32})
      -> (tensor<8x8xf32>, tensor<8x8xf32>) {
    %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %n = stablehlo.negate %w : tensor<8x8xf32>
    return %n, %d : tensor<8x8xf32>, tensor<8x8xf32>
  })"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  CompileOptions options;
  options.constant_parameters = {1};
  auto exe = engine->Compile(*module, options);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(exe.status().message()),
              HasSubstr("parameter 1 is declared constant (constant_parameters) and donated to "
                        "result 0"));
  options.constant_parameters = {0};  // the other parameter: fine
  EXPECT_OK(engine->Compile(*module, options).status());
}

// A buffer shared with an input that is not the aliased one, or only partly, is still refused.
TEST(InputOutputAliasTest, OtherOverlapsAreStillRejected) {
  Builder builder("overlap");
  FunctionBuilder f = *builder.BeginFunction("main", {F32({8}), F32({8})}, {F32({8})});
  ASSERT_OK(f.Return({*f.Add(f.Parameter(0), f.Parameter(1))}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, CompileDonatingFirst(*module));
  Tensor big = *Tensor::Filled(F32({16}), 1.0);
  Tensor a = *Tensor::Borrow(F32({8}), big.data());
  Tensor shifted = *Tensor::Borrow(F32({8}), static_cast<float*>(big.data()) + 4);
  Tensor b = *Tensor::Filled(F32({8}), 2.0);
  {
    std::vector<Tensor> in = {a, b}, out = {b};  // output 0 is input 1's buffer
    Status s = exe->Run(in, out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()), HasSubstr("output 0 shares memory with input 1"));
  }
  {
    std::vector<Tensor> in = {a, b}, out = {shifted};  // overlaps input 0 by half
    Status s = exe->Run(in, out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()), HasSubstr("output 0 shares memory with input 0"));
  }
  {
    std::vector<Tensor> in = {a, a}, out = {a};  // x + x over x's buffer: both operands alias
    Status s = exe->Run(in, out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()), HasSubstr("output 0 shares memory with input 1"));
  }
}

TEST(InputOutputAliasTest, TextAliasesRoundTripAndBadOnesAreNamed) {
  const char* text = R"(
  func.func @main(%x: tensor<3xf32>, %w: tensor<3xf32> {tf.aliasing_output = 0 : i32})
      -> tensor<3xf32> {
    %y = stablehlo.add %x, %w : tensor<3xf32>
    return %y : tensor<3xf32>
  })";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const std::string printed = PrintModule(*module);
  EXPECT_THAT(printed, HasSubstr("tensor<3xf32> {tf.aliasing_output = 0 : i32}"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> again, ParseStableHlo(printed));
  EXPECT_THAT(again->FindFunction("main")->input_output_aliases(),
              ElementsAre(InputOutputAlias{1, 0}));
  // The function's alias and one from CompileOptions on the same result conflict.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  CompileOptions options;
  options.input_output_aliases = {{0, 0}};
  auto exe = engine->Compile(*module, options);
  ASSERT_FALSE(exe.ok());
  EXPECT_THAT(std::string(exe.status().message()),
              HasSubstr("parameter 0 -> result 0 conflicts with parameter 1 -> result 0"));

  struct Case {
    const char* attr;
    const char* message;
  };
  for (const Case& c :
       {Case{"{tf.aliasing_output = 1 : i32}", "names result 1, but @main has 1 results"},
        Case{"{tf.aliasing_output = \"0\"}", "must be an integer result index, got string"},
        Case{"{tf.aliasing_output = -1 : i32}", "names result -1, but @main has 1 results"}}) {
    SCOPED_TRACE(c.attr);
    const std::string bad = std::string(R"(
  func.func @main(%x: tensor<3xf32> )") + c.attr + R"() -> tensor<3xf32> {
    return %x : tensor<3xf32>
  })";
    auto parsed = ParseStableHlo(bad);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(c.message));
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("2:"));  // its line
  }
  // jax.buffer_donor: each donor takes the first free result of its type, if any.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> donors, ParseStableHlo(R"(
  func.func @main(%a: tensor<3xf32> {jax.buffer_donor = true}, %b: tensor<2xi32> {jax.buffer_donor = true},
                  %c: tensor<3xf32> {jax.buffer_donor = true}, %d: tensor<3xf32> {jax.buffer_donor = false})
      -> (tensor<3xf32>, tensor<3xf32>) {
    %y = stablehlo.add %a, %c : tensor<3xf32>
    %z = stablehlo.add %y, %d : tensor<3xf32>
    return %y, %z : tensor<3xf32>, tensor<3xf32>
  })"));
  EXPECT_THAT(donors->FindFunction("main")->input_output_aliases(),
              ElementsAre(InputOutputAlias{0, 0}, InputOutputAlias{2, 1}));
  auto bad_donor = ParseStableHlo(R"(
  func.func @main(%x: tensor<3xf32> {jax.buffer_donor = 1 : i32}) -> tensor<3xf32> {
    return %x : tensor<3xf32>
  })");
  ASSERT_FALSE(bad_donor.ok());
  EXPECT_THAT(std::string(bad_donor.status().message()),
              HasSubstr("jax.buffer_donor of parameter 0 of @main must be true or false"));
  // A private function inlined into its caller is checked too.
  auto helper = ParseStableHlo(R"(
  func.func private @helper(%x: tensor<4xf32> {tf.aliasing_output = 5 : i32}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  })");
  ASSERT_FALSE(helper.ok());
  EXPECT_THAT(std::string(helper.status().message()),
              HasSubstr("tf.aliasing_output of parameter 0 of @helper names result 5"));
  // Different types: the importer names both.
  auto mismatched = ParseStableHlo(R"(
  func.func @main(%x: tensor<2xf32> {tf.aliasing_output = 0 : i32}) -> tensor<3xf32> {
    %y = stablehlo.constant dense<1.0> : tensor<3xf32>
    return %y : tensor<3xf32>
  })");
  ASSERT_FALSE(mismatched.ok());
  EXPECT_THAT(std::string(mismatched.status().message()),
              HasSubstr("parameter 0 (tensor<2xf32>) and result 0 (tensor<3xf32>)"));
}

}  // namespace
}  // namespace accy
