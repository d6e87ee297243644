// CompileOptions::constant_parameters (accy/engine.h): weights passed as parameters and declared
// constant across runs. Compile checks the indices; the oneDNN convolution and matmul that read
// them pack them once per address. Results are compared with the reference evaluator (f32
// accumulation against its double: |accy - ref| <= 2e-6 * K + 2e-6 |ref| for inputs in [-1, 1],
// K the products summed per element) and with the same program compiled without the
// declaration.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

// A 3x3 NHWC convolution (weights %w) and a [16, 128] x [128, 256] matmul (weights %v) whose
// results are added: both run on oneDNN (2 x 16 x 8 x 8 x 16 x 144 = 4.7M and 2 x 16 x 128 x
// 256 = 1.0M element ops, above the library thresholds).
constexpr char kProgram[] = R"mlir(
func.func @main(%x: tensor<16x8x8x16xf32>, %w: tensor<3x3x16x16xf32>, %a: tensor<16x128xf32>,
                %v: tensor<128x256xf32>) -> (tensor<16x8x8x16xf32>, tensor<16x256xf32>) {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<16x8x8x16xf32>, tensor<3x3x16x16xf32>) -> tensor<16x8x8x16xf32>
  %1 = stablehlo.dot_general %a, %v, contracting_dims = [1] x [0] : (tensor<16x128xf32>, tensor<128x256xf32>) -> tensor<16x256xf32>
  func.return %0, %1 : tensor<16x8x8x16xf32>, tensor<16x256xf32>
}
)mlir";

Tensor Random(const TensorType& type, uint64_t seed) {
  Tensor t = *Tensor::Allocate(type);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int64_t i = 0; i < t.element_count(); ++i) t.SetFromDouble(i, unit(rng));
  return t;
}

void ExpectNear(const Tensor& actual, const Tensor& expected, double terms) {
  ASSERT_EQ(actual.element_count(), expected.element_count());
  for (int64_t i = 0; i < actual.element_count(); ++i) {
    const double e = expected.GetAsDouble(i);
    ASSERT_NEAR(actual.GetAsDouble(i), e, 2e-6 * terms + 2e-6 * std::fabs(e)) << "element " << i;
  }
}

// Checks both results of kProgram on `args` against the reference evaluator.
void ExpectMatchesReference(const Module& module, const std::vector<Tensor>& args,
                            const std::vector<Tensor>& actual) {
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(module, "main", args));
  ASSERT_EQ(actual.size(), 2u);
  ExpectNear(actual[0], expected[0], 144);
  ExpectNear(actual[1], expected[1], 128);
}

TEST(ConstantParametersTest, WeightsPackedOncePerAddressFollowANewTensor) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(kProgram));
  EngineOptions engine_options;
  engine_options.num_threads = 1;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(engine_options));
  CompileOptions options;
  options.constant_parameters = {3, 1};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> declared, engine->Compile(*module, options));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> plain, engine->Compile(*module));
  const std::vector<TensorType>& types = declared->parameter_types();
  std::vector<Tensor> args;
  for (size_t p = 0; p < types.size(); ++p) args.push_back(Random(types[p], p + 1));

  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> first, declared->Run(args));
  ExpectMatchesReference(*module, args, first);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> undeclared, plain->Run(args));
  for (size_t r = 0; r < 2; ++r) ExpectNear(first[r], undeclared[r], r == 0 ? 144 : 128);

  // New weight tensors (other addresses, both alive): the packed copies are refilled.
  std::vector<Tensor> next = args;
  next[1] = Random(types[1], 11);
  next[3] = Random(types[3], 13);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> second, declared->Run(next));
  ExpectMatchesReference(*module, next, second);
  // The first weights again: the first run's bits.
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> third, declared->Run(args));
  for (size_t r = 0; r < 2; ++r) {
    ASSERT_EQ(third[r].byte_size(), first[r].byte_size());
    EXPECT_EQ(std::memcmp(third[r].data(), first[r].data(),
                          static_cast<size_t>(first[r].byte_size())),
              0)
        << "result " << r;
  }
  // A non-weight input may change freely between runs.
  args[0] = Random(types[0], 21);
  args[2] = Random(types[2], 23);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> fourth, declared->Run(args));
  ExpectMatchesReference(*module, args, fourth);
}

TEST(ConstantParametersTest, BadIndicesFailCompileNamingThem) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(kProgram));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  const std::vector<std::pair<std::vector<int64_t>, std::string>> cases = {
      {{4}, "CompileOptions: constant_parameters[0] is 4, but @main has 4 parameters"},
      {{1, -1}, "CompileOptions: constant_parameters[1] is -1, but @main has 4 parameters"},
      {{3, 1, 3}, "CompileOptions: constant_parameters lists 3 twice"},
  };
  for (const auto& [indices, message] : cases) {
    CompileOptions options;
    options.constant_parameters = indices;
    StatusOr<std::unique_ptr<Executable>> exe = engine->Compile(*module, options);
    ASSERT_FALSE(exe.ok()) << message;
    EXPECT_TRUE(absl::IsInvalidArgument(exe.status())) << exe.status();
    EXPECT_THAT(exe.status().message(), HasSubstr(message));
  }
  // The entry is the options' too.
  CompileOptions missing;
  missing.entry = "nothere";
  StatusOr<std::unique_ptr<Executable>> exe = engine->Compile(*module, missing);
  ASSERT_FALSE(exe.ok());
  EXPECT_THAT(exe.status().message(), HasSubstr("nothere"));
}

}  // namespace
}  // namespace accy
