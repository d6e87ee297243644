// `accy bench` end to end (tools/bench_command.cc): its report in text and JSON, given and
// random inputs, graph passes turned off, declared-constant parameters, and its errors (exit 1
// naming the input or file, exit 2 with the usage for a bad command line).
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"
#include "tests/tools/cli_test_util.h"
#include "tools/npy.h"

namespace accy::tools {
namespace {

using ::testing::HasSubstr;

TEST_F(CliTest, BenchReportsCompileKernelsRunTimesAndMemory) {
  Write("add.mlir", kAddProgram);
  const CommandResult text = Accy("bench add.mlir --random-inputs 7 --runs 3 --threads 1 --no-cache");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_THAT(text.output, HasSubstr("accy bench add.mlir @main: "));
  EXPECT_THAT(text.output, HasSubstr("1 thread\n"));
  EXPECT_THAT(text.output, HasSubstr("items: 2 work items; 2 run on JIT kernels, 2 distinct kernels (2 compiled, 0 "
                                     "from cache)"));
  EXPECT_THAT(text.output, HasSubstr("over 3 runs (after 1 warm-up)"));
  EXPECT_THAT(text.output, HasSubstr("compile: "));
  EXPECT_THAT(text.output,
              HasSubstr("library items own 0.0 MB of weight copies and 0.0 MB of scratch; peak RSS "));

  const CommandResult json =
      Accy("bench add.mlir --random-inputs 7 --runs 2 --threads 1 --no-cache --format json --profile");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  for (const char* field : {"\"work_items\": 2", "\"jit_items\": 2", "\"distinct_kernels\": 2",
                            "\"kernels_compiled\": 2", "\"runs\": 2", "\"threads\": 1",
                            "\"compile_ms\": {\"total\": ", "\"run_ms\": {\"median\": ",
                            "\"peak_memory_bytes\": ", "\"library_weight_bytes\": 0, "
                            "\"library_scratch_bytes\": 0, ",
                            "\"profile\": {\"kinds\": [{\"kind\": "
                            "\"elementwise_single\", \"runs_on\": \"jit\", \"items\": 2",
                            "\"slowest_items\": [{\"item\": "}) {
    EXPECT_THAT(json.output, HasSubstr(field));
  }
  // Given inputs work as for `accy run`.
  ASSERT_OK(WriteNpyFile((dir_ / "a.npy").string(), F32Matrix({1, 2, 3, 4})));
  const CommandResult given = Accy("bench add.mlir --input a.npy --input a.npy --runs 1");
  EXPECT_EQ(given.exit_code, 0) << given.output;
  // --fixed-threads turns the load mechanism off; the report says so and counts the runs that
  // used one thread (none can, with it off).
  const CommandResult fixed = Accy(
      "bench add.mlir --random-inputs 7 --runs 2 --threads 2 --fixed-threads --format json");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.output;
  EXPECT_THAT(fixed.output, HasSubstr("\"runs_with_fewer_threads\": 0, \"fixed_threads\": true"));
  const CommandResult adaptive = Accy("bench add.mlir --random-inputs 7 --runs 2 --format json");
  ASSERT_EQ(adaptive.exit_code, 0) << adaptive.output;
  EXPECT_THAT(adaptive.output, HasSubstr("\"fixed_threads\": false"));
  // Passes can be turned off by name.
  const CommandResult unpassed = Accy(
      "bench add.mlir --random-inputs 7 --runs 1 --disable-passes fold-constants,simplify-arithmetic");
  EXPECT_EQ(unpassed.exit_code, 0) << unpassed.output;
}

TEST_F(CliTest, BenchErrorsNameTheProblem) {
  Write("add.mlir", kAddProgram);
  const CommandResult none = Accy("bench add.mlir");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.output, HasSubstr("@main takes 2 parameters, 0 --input given (or use "
                                     "--random-inputs SEED)"));
  ASSERT_OK(WriteNpyFile((dir_ / "a.npy").string(), F32Matrix({1, 2, 3, 4})));
  ASSERT_OK(WriteNpyFile((dir_ / "v.npy").string(),
                         *Tensor::Allocate(*TensorType::Create(ElementType::kF32, {4}))));
  const CommandResult shape = Accy("bench add.mlir --input a.npy --input v.npy");
  EXPECT_EQ(shape.exit_code, 1);
  EXPECT_THAT(shape.output, HasSubstr("input 1 (v.npy)"));
  const CommandResult unreadable = Accy("bench add.mlir --input a.npy --input gone.npy");
  EXPECT_EQ(unreadable.exit_code, 1);
  EXPECT_THAT(unreadable.output, HasSubstr("gone.npy"));
  const CommandResult missing = Accy("bench nothere.mlir --random-inputs 1");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.output, HasSubstr("nothere.mlir: cannot open"));
  const CommandResult pass = Accy("bench add.mlir --random-inputs 1 --disable-passes fold-constants,dce");
  EXPECT_EQ(pass.exit_code, 1);
  EXPECT_THAT(pass.output, HasSubstr("unknown graph pass 'dce' (the passes are: "));
  // Bad command lines: exit 2 with the usage.
  for (const char* args : {"bench", "bench add.mlir --format xml --random-inputs 1",
                           "bench add.mlir --runs 0 --random-inputs 1",
                           "bench add.mlir --random-inputs -3",
                           "bench add.mlir --input a.npy --random-inputs 1"}) {
    const CommandResult bad = Accy(args);
    EXPECT_EQ(bad.exit_code, 2) << args << ": " << bad.output;
    EXPECT_THAT(bad.output, HasSubstr("usage: accy bench")) << args;
  }
}

// A convolution whose weights are a parameter, as JAX and torch_xla export models.
constexpr char kConvProgram[] = R"(
func.func @main(%x: tensor<1x16x16x8xf32>, %w: tensor<3x3x8x8xf32>) -> tensor<1x16x16x8xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
      window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
      : (tensor<1x16x16x8xf32>, tensor<3x3x8x8xf32>) -> tensor<1x16x16x8xf32>
  func.return %0 : tensor<1x16x16x8xf32>
}
)";

TEST_F(CliTest, BenchDeclaresConstantParameters) {
  Write("conv.mlir", kConvProgram);
  for (const char* list : {"1", "all", "0-1", "0,1"}) {
    const CommandResult run = Accy(std::string("bench conv.mlir --random-inputs 3 --runs 2 "
                                               "--constant-parameters ") + list);
    ASSERT_EQ(run.exit_code, 0) << list << ": " << run.output;
    const std::string count = std::string(list) == "1" ? "1" : "2";
    EXPECT_THAT(run.output, HasSubstr("(after 1 warm-up), " + count +
                                      " parameters declared constant\n")) << list;
  }
  const CommandResult json = Accy("bench conv.mlir --random-inputs 3 --runs 1 --format json "
                                  "--constant-parameters 1");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_THAT(json.output, HasSubstr("\"constant_parameters\": 1, "));
  const CommandResult none = Accy("bench conv.mlir --random-inputs 3 --runs 1 --format json");
  EXPECT_THAT(none.output, HasSubstr("\"constant_parameters\": 0, "));
}

TEST_F(CliTest, BenchConstantParameterListErrorsNameThePart) {
  Write("conv.mlir", kConvProgram);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"x", "'x' is not an index or range"},
      {"0,,1", "'' is not an index or range"},
      {"1-0", "'1-0' is a range that ends before it starts"},
      {"2", "'2' is out of range"},
      {"-1", "'-1' is out of range"},
      {"0-2", "'0-2' is out of range"},
      {"1,0-1", "'0-1' repeats parameter 1, already listed"},
  };
  for (const auto& [list, message] : cases) {
    const CommandResult bad =
        Accy("bench conv.mlir --random-inputs 3 --runs 1 --constant-parameters '" + list + "'");
    EXPECT_EQ(bad.exit_code, 2) << list << ": " << bad.output;
    EXPECT_THAT(bad.output, HasSubstr("--constant-parameters: " + message)) << list;
    EXPECT_THAT(bad.output, HasSubstr("(expected all, or indices and ranges A-B of the 2 "
                                      "parameters, e.g. 0,3-5)")) << list;
  }
}

}  // namespace
}  // namespace accy::tools
