// The `accy` program end to end: runs the built binary (ACCY_CLI_PATH) on small files written to
// a temporary folder and checks its output, the .npy files it writes and its exit codes
// (0 ok, 1 error, 2 bad command line).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/util/str_cat.h"
#include "tests/test_util.h"
#include "tests/tools/cli_test_util.h"
#include "tools/npy.h"

namespace accy::tools {
namespace {

using ::testing::HasSubstr;

TEST_F(CliTest, RunReadsNpyInputsAndWritesNpyOutputs) {
  Write("add.mlir", kAddProgram);
  ASSERT_OK(WriteNpyFile((dir_ / "a.npy").string(), F32Matrix({1, 2, 3, 4})));
  ASSERT_OK(WriteNpyFile((dir_ / "b.npy").string(), F32Matrix({0.5f, 0.25f, -10, 4})));
  const CommandResult run =
      Accy("run add.mlir --input a.npy --input=b.npy --threads 1 --output-dir out");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("out0.npy (tensor<2x2xf32>)"));
  ASSERT_OK_AND_ASSIGN(Tensor sum, ReadNpyFile((dir_ / "out" / "out0.npy").string()));
  ASSERT_OK_AND_ASSIGN(Tensor truncated, ReadNpyFile((dir_ / "out" / "out1.npy").string()));
  EXPECT_EQ(sum.type().ToString(), "tensor<2x2xf32>");
  EXPECT_EQ(truncated.type().ToString(), "tensor<2x2xi32>");
  const std::vector<double> expected = {1.5, 2.25, -7, 8};
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(sum.GetAsDouble(i), expected[i]) << i;
    EXPECT_EQ(truncated.GetAsInt64(i), static_cast<int64_t>(expected[i])) << i;
  }
}

TEST_F(CliTest, RunPrintsResultsWithoutOutputDir) {
  Write("add.mlir", kAddProgram);
  ASSERT_OK(WriteNpyFile((dir_ / "a.npy").string(), F32Matrix({1, 2, 3, 4})));
  const CommandResult run = Accy("run add.mlir --function main --input a.npy --input a.npy");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("result 0: tensor<2x2xf32> [2, 4, 6, 8]"));
  EXPECT_THAT(run.output, HasSubstr("result 1: tensor<2x2xi32> [2, 4, 6, 8]"));
}

// A loop whose condition never turns false: --max-while-iterations stops it with exit 1.
TEST_F(CliTest, RunBoundsWhileLoopsOnRequest) {
  Write("forever.mlir", R"(func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.while(%v = %x) : tensor<2xf32>
   cond {
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    %n = stablehlo.negate %v : tensor<2xf32>
    stablehlo.return %n : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
})");
  ASSERT_OK(WriteNpyFile((dir_ / "x.npy").string(),
                         *Tensor::FromVector<float>(*TensorType::Create(ElementType::kF32, {2}),
                                                    {1, 2})));
  const CommandResult run = Accy("run forever.mlir --input x.npy --max-while-iterations 7");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("did not finish within 7 iterations"));
  const CommandResult bad = Accy("run forever.mlir --input x.npy --max-while-iterations -1");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  // accy bench bounds them the same way (its warm-up run fails).
  const CommandResult bench =
      Accy("bench forever.mlir --random-inputs 1 --runs 1 --max-while-iterations 5");
  EXPECT_EQ(bench.exit_code, 1) << bench.output;
  EXPECT_THAT(bench.output, HasSubstr("did not finish within 5 iterations"));
  EXPECT_EQ(Accy("bench forever.mlir --random-inputs 1 --max-while-iterations x").exit_code, 2);
}

// --max-run-memory-bytes, --max-constant-bytes and --max-total-constant-bytes refuse with exit 1
// naming the bytes; bad values are usage errors (exit 2).
TEST_F(CliTest, ResourceLimitOptionsRefuseProgramsOverThem) {
  // The transpose's [3, 2] f32 result is an arena intermediate (24 bytes); the splat 16 bytes.
  Write("limits.mlir", R"(func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<3x2xf32>
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %e = stablehlo.exponential %t : tensor<3x2xf32>
  %0 = stablehlo.add %e, %c : tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
})");
  const CommandResult memory =
      Accy("bench limits.mlir --random-inputs 1 --runs 1 --no-cache --max-run-memory-bytes 8");
  EXPECT_EQ(memory.exit_code, 1) << memory.output;
  EXPECT_THAT(memory.output, HasSubstr("above EngineOptions::max_run_memory_bytes of 8 bytes"));
  EXPECT_EQ(Accy("bench limits.mlir --random-inputs 1 --runs 1 --no-cache "
                 "--max-run-memory-bytes 0").exit_code, 0);
  const CommandResult constant =
      Accy("bench limits.mlir --random-inputs 1 --runs 1 --max-constant-bytes 23");
  EXPECT_EQ(constant.exit_code, 1) << constant.output;
  EXPECT_THAT(constant.output, HasSubstr("limits.mlir:2:33: constant of tensor<3x2xf32> takes "
                                         "24 bytes, above the limit of 23 bytes per constant"));
  const CommandResult total =
      Accy("bench limits.mlir --random-inputs 1 --runs 1 --max-total-constant-bytes 20");
  EXPECT_EQ(total.exit_code, 1) << total.output;
  EXPECT_THAT(total.output, HasSubstr("exceeds the limit of 20 bytes"));
  EXPECT_EQ(Accy("bench limits.mlir --random-inputs 1 --max-constant-bytes 0").exit_code, 2);
  const CommandResult bad = Accy("run limits.mlir --max-run-memory-bytes -3");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--max-run-memory-bytes takes an integer in [0, "));
}

// accy bench-load reports every cell, the paired ratios and the bit check; its spinners are
// gone when it returns. Bad options are usage errors.
TEST_F(CliTest, BenchLoadReportsEveryCellAndStopsItsSpinners) {
  const std::string args = "bench-load --workloads mlp --reps 1 --batch-ms 5 --spinners 1 --seq 77";
  const CommandResult result = Accy(args);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("threads 1 vs 2, 1 spinner processes, 1 repetitions, "
                                       "reduce_threads_under_load on"));
  // JIT items give the same bits at any thread count; oneDNN's matmuls may not (README: the
  // MLP under AVX2, up to 5 ULP apart), so the line says which, within that bound.
  const size_t at = result.output.find("output at 1 and 2 threads: ");
  ASSERT_NE(at, std::string::npos) << result.output;
  const std::string verdict = result.output.substr(at + 27, result.output.find(')', at) - at - 27);
  if (verdict != "same bits") {
    int ulps = -1;
    ASSERT_EQ(std::sscanf(verdict.c_str(), "up to %d ULP apart", &ulps), 1) << verdict;
    EXPECT_GT(ulps, 0) << verdict;
    EXPECT_LE(ulps, 5) << verdict;
  }
  for (const char* cell : {"unloaded 1T: median", "unloaded 2T: median", "loaded   1T: median",
                           "loaded   2T: median", "loaded   2T/1T ratio: median"}) {
    EXPECT_THAT(result.output, HasSubstr(cell));
  }
  // No spinner (a fork of the command, so with its command line) outlives the command.
  int survivors = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(args) != std::string::npos) ++survivors;
  }
  EXPECT_EQ(survivors, 0);
  const CommandResult bad = Accy("bench-load --workloads resnet");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--workloads takes block and/or mlp, got 'resnet'"));
  EXPECT_EQ(Accy("bench-load --threads 1").exit_code, 2);
}

// --mechanism-cost times the mechanism on and off at T threads and prints their paired ratio;
// it refuses the options of the spinner mode.
TEST_F(CliTest, BenchLoadMechanismCostPrintsThePairedRatio) {
  const CommandResult result =
      Accy("bench-load --mechanism-cost --workloads mlp --reps 2 --batch-ms 5");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("2 threads, reduce_threads_under_load on vs off, 2 "
                                       "repetitions, no spinners"));
  for (const char* line : {"mechanism on  2T: median", "mechanism off 2T: median",
                           "on/off ratio: median", "over 2 batches"}) {
    EXPECT_THAT(result.output, HasSubstr(line)) << result.output;
  }
  const CommandResult bad = Accy("bench-load --mechanism-cost --spinners 2");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--mechanism-cost runs without spinners"));
}

TEST_F(CliTest, RunWithoutParametersNeedsNoInputs) {
  Write("iota.mlir", R"(func.func @only() -> tensor<4xi32> {
  %0 = stablehlo.iota dim = 0 : tensor<4xi32>
  func.return %0 : tensor<4xi32>
})");
  const CommandResult run = Accy("run iota.mlir");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("result 0: tensor<4xi32> [0, 1, 2, 3]"));
}

TEST_F(CliTest, RunReadsBf16FromF32AndWritesBf16AsF32) {
  Write("bf16.mlir", R"(func.func @main(%a: tensor<3xbf16>) -> tensor<3xbf16> {
  %0 = stablehlo.add %a, %a : tensor<3xbf16>
  func.return %0 : tensor<3xbf16>
})");
  // 1 + 2^-8 rounds to bf16 1 (ties to even); 1.5 and -3 are exact.
  ASSERT_OK(WriteNpyFile((dir_ / "a.npy").string(),
                         *Tensor::FromVector<float>(*TensorType::Create(ElementType::kF32, {3}),
                                                    {1.00390625f, 1.5f, -3})));
  const CommandResult run = Accy("run bf16.mlir --input a.npy --output-dir .");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ASSERT_OK_AND_ASSIGN(Tensor out, ReadNpyFile((dir_ / "out0.npy").string()));
  EXPECT_EQ(out.type().ToString(), "tensor<3xf32>");
  EXPECT_EQ(out.GetAsDouble(0), 2.0);
  EXPECT_EQ(out.GetAsDouble(1), 3.0);
  EXPECT_EQ(out.GetAsDouble(2), -6.0);
}

TEST_F(CliTest, PlanPrintsTextJsonAndDot) {
  Write("add.mlir", kAddProgram);
  const CommandResult text = Accy("plan add.mlir");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_THAT(text.output, HasSubstr("#0 "));
  EXPECT_THAT(text.output, HasSubstr("add"));
  const CommandResult dot = Accy("plan add.mlir --dot");
  ASSERT_EQ(dot.exit_code, 0) << dot.output;
  EXPECT_THAT(dot.output, HasSubstr("digraph"));
  const CommandResult json = Accy("plan add.mlir --format json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_THAT(json.output, HasSubstr("\"function\": \"main\""));
  EXPECT_THAT(json.output, HasSubstr("\"kind\": "));
}

// --graph-passes plans what Compile runs: the duplicated multiply is merged by CSE, so one
// elementwise item fewer op than as written.
TEST_F(CliTest, PlanWithGraphPassesShowsTheRewrittenModule) {
  Write("dup.mlir", R"(func.func @main(%a: tensor<64xf32>) -> tensor<64xf32> {
  %0 = stablehlo.multiply %a, %a : tensor<64xf32>
  %1 = stablehlo.multiply %a, %a : tensor<64xf32>
  %2 = stablehlo.subtract %0, %1 : tensor<64xf32>
  return %2 : tensor<64xf32>
})");
  const CommandResult as_written = Accy("plan dup.mlir");
  ASSERT_EQ(as_written.exit_code, 0) << as_written.output;
  EXPECT_THAT(as_written.output, HasSubstr("ops=[multiply,multiply,subtract]"));
  const CommandResult rewritten = Accy("plan dup.mlir --graph-passes");
  ASSERT_EQ(rewritten.exit_code, 0) << rewritten.output;
  EXPECT_THAT(rewritten.output, HasSubstr("ops=[multiply,subtract]"));
}

TEST_F(CliTest, ConformanceReportsEachProgramAndExitsOneOnFailure) {
  fs::create_directories(dir_ / "suite");
  Write("suite/ok.mlir", R"(func.func @ok() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.multiply %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[1, 4]> : tensor<2xi32>
  func.return
}
// -----
func.func @wrong() {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = stablehlo.add %0, %0 : tensor<2xf32>
  check.expect_almost_eq_const %1, dense<[2.0, 4.5]> : tensor<2xf32>
  func.return
})");
  const CommandResult failing = Accy("conformance suite --jobs 2");
  EXPECT_EQ(failing.exit_code, 1) << failing.output;
  EXPECT_THAT(failing.output, HasSubstr("PASS suite/ok.mlir#1\n"));
  EXPECT_THAT(failing.output, HasSubstr("FAIL suite/ok.mlir#2: expect_almost_eq_const at 11:3: "
                                        "element 1 [1]: got 4, expected 4.5"));
  EXPECT_THAT(failing.output, HasSubstr("1 passed, 1 failed, 0 skipped"));

  Write("suite/ok.mlir", R"(func.func @ok() {
  %0 = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %1 = stablehlo.not %0 : tensor<2xi1>
  check.expect_eq_const %1, dense<[false, true]> : tensor<2xi1>
  func.return
})");
  const CommandResult passing = Accy("conformance suite/ok.mlir");
  EXPECT_EQ(passing.exit_code, 0) << passing.output;
  EXPECT_THAT(passing.output, HasSubstr("1 passed, 0 failed, 0 skipped"));
}

// `accy run` does not evaluate check ops: it says so (and still checks their operands), and an
// empty folder given to `accy conformance` is named.
TEST_F(CliTest, RunWarnsThatItDoesNotEvaluateChecks) {
  Write("checked.mlir", R"(func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // check.expect_eq in a comment is not counted
  check.expect_eq_const %0, dense<[9.0, 9.0]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_close(%0, %0) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return %0 : tensor<2xf32>
})");
  const CommandResult run = Accy("run checked.mlir --no-cache");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("accy run: warning: checked.mlir holds 2 check ops "
                                    "(check.expect_*), which run does not evaluate; "
                                    "`accy conformance checked.mlir` does"));
  EXPECT_THAT(run.output, HasSubstr("result 0: tensor<2xf32> [1, 2]"));

  fs::create_directories(dir_ / "empty");
  const CommandResult conformance = Accy("conformance empty");
  EXPECT_EQ(conformance.exit_code, 1) << conformance.output;
  EXPECT_THAT(conformance.output, HasSubstr("no .mlir files found in empty"));
}

// Binary input given as the program fails at its first NUL byte instead of being read whole.
TEST_F(CliTest, BinaryProgramFailsAtItsFirstNulByte) {
  const CommandResult zero = Accy("run /dev/zero");
  EXPECT_EQ(zero.exit_code, 1) << zero.output;
  EXPECT_THAT(zero.output, HasSubstr("accy run: /dev/zero:1:1: unexpected character byte 0"));
}

// Error paths: exit code and the message fragment.
TEST_F(CliTest, ParseErrorExitsOneWithFileLineAndColumn) {
  Write("bad.mlir",
        "func.func @main() {\n  %0 = stablehlo.constant dense<[1.0> : tensor<2xf32>\n}\n");
  const CommandResult run = Accy("run bad.mlir");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.output, HasSubstr("accy run: "));
  EXPECT_THAT(run.output, HasSubstr("bad.mlir:2:"));
  EXPECT_EQ(Accy("plan bad.mlir").exit_code, 1);
}

TEST_F(CliTest, WrongInputsExitOneNamingTheProblem) {
  Write("add.mlir", kAddProgram);
  ASSERT_OK(WriteNpyFile((dir_ / "a.npy").string(), F32Matrix({1, 2, 3, 4})));
  const CommandResult count = Accy("run add.mlir --input a.npy");
  EXPECT_EQ(count.exit_code, 1);
  EXPECT_THAT(count.output, HasSubstr("@main takes 2 parameters, 1 --input given"));

  ASSERT_OK(WriteNpyFile((dir_ / "v.npy").string(),
                         *Tensor::Allocate(*TensorType::Create(ElementType::kF32, {4}))));
  const CommandResult shape = Accy("run add.mlir --input a.npy --input v.npy");
  EXPECT_EQ(shape.exit_code, 1);
  EXPECT_THAT(shape.output, HasSubstr("input 1 (v.npy)"));
  EXPECT_THAT(shape.output, HasSubstr("does not match the parameter type tensor<2x2xf32>"));

  Write("junk.npy", "not an array");
  const CommandResult junk = Accy("run add.mlir --input a.npy --input junk.npy");
  EXPECT_EQ(junk.exit_code, 1);
  EXPECT_THAT(junk.output, HasSubstr("junk.npy: malformed .npy"));

  const CommandResult missing = Accy("run nothere.mlir");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.output, HasSubstr("nothere.mlir: cannot open"));
}

TEST_F(CliTest, UnknownFunctionExitsOneListingTheFunctions) {
  Write("add.mlir", kAddProgram);
  const CommandResult plan = Accy("plan add.mlir --function nope");
  EXPECT_EQ(plan.exit_code, 1);
  EXPECT_THAT(plan.output, HasSubstr("no function @nope in the module (functions: @main; private "
                                     "functions are inlined into their callers at import and "
                                     "cannot be chosen)"));
}

// A directory, an empty file or a module without functions name the file, not a missing @main.
TEST_F(CliTest, DirectoryAndEmptyFileExitOneNamingThePath) {
  std::filesystem::create_directories(dir_ / "models");
  for (const char* command : {"run", "plan", "bench"}) {
    const CommandResult directory = Accy(StrCat(command, " models"));
    EXPECT_EQ(directory.exit_code, 1) << command;
    EXPECT_THAT(directory.output, HasSubstr("models: is a directory, not a StableHLO file"))
        << command;
  }
  Write("empty.mlir", "");
  const CommandResult empty = Accy("plan empty.mlir");
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_THAT(empty.output, HasSubstr("empty.mlir: the module has no functions"));
  Write("bare.mlir", "module {\n}\n");
  const CommandResult bare = Accy("run bare.mlir");
  EXPECT_EQ(bare.exit_code, 1);
  EXPECT_THAT(bare.output, HasSubstr("bare.mlir: the module has no functions"));
}

// A run whose arena cannot be allocated (here: address space capped by `ulimit -v`) fails with
// exit 1 naming the arena, its size and the bound that would have refused it at Compile. Not
// under ASan/TSan, whose shadow memory does not fit such a cap.
TEST_F(CliTest, ArenaThatCannotBeAllocatedIsNamed) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory does not fit under ulimit -v";
#endif
  // iota -> sort -> reduce over 2^28 f32: a 1 GiB intermediate the sort reads, so 2 GiB of
  // arena (and as much scratch), above a 1.9 GB address space.
  Write("big.mlir", R"(
func.func @main() -> tensor<f32> {
  %i = stablehlo.iota dim = 0 : tensor<268435456xf32>
  %s = "stablehlo.sort"(%i) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<268435456xf32>) -> tensor<268435456xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%s init: %z) applies stablehlo.add across dimensions = [0] : (tensor<268435456xf32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
)");
  const std::string command = "cd '" + dir_.string() + "' && ulimit -v 2000000 && '" +
                              std::string(ACCY_CLI_PATH) +
                              "' run big.mlir --threads 1 --no-cache 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  const int status = ::pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 1) << output;
  EXPECT_THAT(output, HasSubstr("Run: cannot allocate the run's arena (the intermediate "
                                "buffers) of 2147483648 bytes"));
  EXPECT_THAT(output, HasSubstr("--max-run-memory-bytes"));
}

TEST_F(CliTest, BadCommandLinesExitTwoWithUsage) {
  Write("add.mlir", kAddProgram);
  const CommandResult unknown_option = Accy("run add.mlir --frobnicate");
  EXPECT_EQ(unknown_option.exit_code, 2);
  EXPECT_THAT(unknown_option.output, HasSubstr("unknown option --frobnicate"));
  EXPECT_THAT(unknown_option.output, HasSubstr("usage: accy run"));
  EXPECT_EQ(Accy("run").exit_code, 2);
  EXPECT_EQ(Accy("run add.mlir --threads -1").exit_code, 2);
  EXPECT_EQ(Accy("plan add.mlir --format svg").exit_code, 2);
  EXPECT_EQ(Accy("conformance").exit_code, 2);
  EXPECT_EQ(Accy("conformance x --jobs many").exit_code, 2);
  const CommandResult unknown_command = Accy("frobnicate");
  EXPECT_EQ(unknown_command.exit_code, 2);
  EXPECT_THAT(unknown_command.output, HasSubstr("unknown command 'frobnicate'"));
}

TEST_F(CliTest, EverySubcommandHasHelp) {
  for (const char* command : {"run", "plan", "conformance", "demo-small", "demo", "bench"}) {
    const CommandResult help = Accy(std::string(command) + " --help");
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_THAT(help.output, HasSubstr(std::string("usage: accy ")));
  }
  const CommandResult top = Accy("--help");
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_THAT(top.output, HasSubstr("conformance"));
}

TEST_F(CliTest, VersionNamesTheCpuTheIsaAndTheLibraries) {
  const CommandResult version = AccyWithEnv("-u ACCY_MAX_ISA", "--version");
  EXPECT_EQ(version.exit_code, 0) << version.output;
  EXPECT_THAT(version.output, HasSubstr("accy 0.1"));
  EXPECT_THAT(version.output, HasSubstr("host CPU: "));
  EXPECT_THAT(version.output, HasSubstr("ISA in use: "));
  EXPECT_THAT(version.output, HasSubstr("(ACCY_MAX_ISA unset)"));
  EXPECT_THAT(version.output, HasSubstr("oneDNN 2."));
  EXPECT_THAT(version.output, HasSubstr("LLVM 19."));
}

// ACCY_MAX_ISA caps the process: the ISA in use and oneDNN's effective ISA both drop (x86-64 is
// below every host these tests run on, so the cap always bites).
TEST_F(CliTest, MaxIsaEnvironmentVariableCapsJitAndOneDnn) {
  const CommandResult capped = AccyWithEnv("ACCY_MAX_ISA=x86-64", "--version");
  EXPECT_EQ(capped.exit_code, 0) << capped.output;
  EXPECT_THAT(capped.output, HasSubstr("ISA in use: x86-64 (ACCY_MAX_ISA x86-64)"));
  EXPECT_THAT(capped.output, HasSubstr("effective ISA sse41"));
  Write("add.mlir", kAddProgram);
  const CommandResult bad = AccyWithEnv("ACCY_MAX_ISA=avx9000", "demo-small");
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("environment variable ACCY_MAX_ISA: 'avx9000' is not an ISA "
                                    "level (expected avx512, avx2 or x86-64)"));
  const CommandResult bad_version = AccyWithEnv("ACCY_MAX_ISA=avx9000", "--version");
  EXPECT_EQ(bad_version.exit_code, 1);
}

// ACCY_VECTOR_MATH (jit/sleef_functions.h) picks SLEEF or libmvec for measurements; another
// value fails Engine::Create, naming the variable, for every program (it used to fail only the
// compile of an op SLEEF could compute, and a program without one ran; break-it review).
TEST_F(CliTest, VectorMathEnvironmentVariableIsCheckedForEveryProgram) {
  Write("tan.mlir", R"(func.func @only() -> tensor<4xf64> {
  %0 = stablehlo.iota dim = 0 : tensor<4xf64>
  %1 = stablehlo.tan %0 : tensor<4xf64>
  func.return %1 : tensor<4xf64>
})");
  for (const char* choice :
       {"ACCY_VECTOR_MATH=sleef", "ACCY_VECTOR_MATH=libmvec", "-u ACCY_VECTOR_MATH"}) {
    const CommandResult run = AccyWithEnv(choice, "run tan.mlir");
    ASSERT_EQ(run.exit_code, 0) << choice << ": " << run.output;
    EXPECT_THAT(run.output, HasSubstr("[0, 1.557407724654902")) << choice;
  }
  Write("negate.mlir", R"(func.func @only() -> tensor<4xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<4xf32>
  %1 = stablehlo.negate %0 : tensor<4xf32>
  func.return %1 : tensor<4xf32>
})");
  for (const char* program : {"run tan.mlir", "run negate.mlir"}) {
    const CommandResult bad = AccyWithEnv("ACCY_VECTOR_MATH=bogus", program);
    EXPECT_EQ(bad.exit_code, 1) << program << ": " << bad.output;
    EXPECT_THAT(bad.output,
                HasSubstr("jit: ACCY_VECTOR_MATH='bogus' is not one of default, sleef, libmvec"))
        << program;
  }
}

TEST_F(CliTest, NoSubcommandRunsTheDemo) {
  const CommandResult demo = Accy("");
  EXPECT_EQ(demo.exit_code, 0) << demo.output;
  EXPECT_THAT(demo.output, HasSubstr("matches the reference evaluator"));
}

// The transformer block demo at a short sequence (about a second, mostly the reference
// evaluator): it compiles cold and warm, runs through the engine and passes its error check.
TEST_F(CliTest, DemoRunsTheTransformerBlockWithinTolerance) {
  const CommandResult demo = Accy("demo --seq 16 --threads 1 --runs 10");
  ASSERT_EQ(demo.exit_code, 0) << demo.output;
  EXPECT_THAT(demo.output, HasSubstr("seq 16, batch 1, f32"));
  EXPECT_THAT(demo.output, HasSubstr("compile (cold, empty object cache): "));
  EXPECT_THAT(demo.output, HasSubstr("compile (warm, from the object cache): "));
  EXPECT_THAT(demo.output, HasSubstr("flash_attention"));
  EXPECT_THAT(demo.output, HasSubstr("run: median "));
  EXPECT_THAT(demo.output, HasSubstr("GFLOP/s"));
  EXPECT_THAT(demo.output, HasSubstr("same output bits as the cold one"));
  EXPECT_THAT(demo.output, HasSubstr("max abs error "));
  EXPECT_THAT(demo.output, HasSubstr("max rel error "));
  EXPECT_THAT(demo.output, HasSubstr(": PASS"));
}

TEST_F(CliTest, DemoRejectsBadOptions) {
  EXPECT_EQ(Accy("demo --seq 0").exit_code, 2);
  EXPECT_EQ(Accy("demo --threads -1").exit_code, 2);
  EXPECT_EQ(Accy("demo --runs 3").exit_code, 2);
  EXPECT_EQ(Accy("demo extra").exit_code, 2);
}

// ---- accy bench ----

TEST_F(CliTest, FuzzRunsABatchAndPrintsCoverage) {
  const CommandResult run = Accy("fuzz --seed 3 --programs 4 --threads-list 1,2 --out found");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("programs: 4\n"));
  EXPECT_THAT(run.output, HasSubstr("verdicts: match="));
  EXPECT_THAT(run.output, HasSubstr("mismatch=0"));
  EXPECT_THAT(run.output, HasSubstr("element types (op results): f16="));
  EXPECT_THAT(run.output, HasSubstr("failures: 0\n"));
  // One program of the run replays alone.
  const CommandResult one = Accy("fuzz --seed 3 --first 2 --programs 1 --verbose");
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_THAT(one.output, HasSubstr("program 2 (seed "));
  EXPECT_THAT(one.output, HasSubstr("programs: 1\n"));
}

TEST_F(CliTest, FuzzRejectsBadOptions) {
  struct Case {
    const char* args;
    const char* message;
  };
  const Case cases[] = {
      {"fuzz --programs 0", "--programs takes an integer in [1, 100000000], got '0'"},
      {"fuzz --seed -1", "--seed takes an unsigned 64-bit integer, got '-1'"},
      {"fuzz --seed 12x", "--seed takes an unsigned 64-bit integer, got '12x'"},
      {"fuzz --threads-list 1,,2", "--threads-list takes comma-separated thread counts"},
      {"fuzz --threads-list 0", "--threads-list takes comma-separated thread counts"},
      {"fuzz --max-steps 65", "--max-steps takes an integer in [1, 64], got '65'"},
      {"fuzz --first -2", "--first takes an integer in [0, 2000000000], got '-2'"},
      {"fuzz extra", "unexpected argument 'extra'"},
      {"fuzz --bogus", "bogus"},
  };
  for (const Case& c : cases) {
    const CommandResult bad = Accy(c.args);
    EXPECT_EQ(bad.exit_code, 2) << c.args << ": " << bad.output;
    EXPECT_THAT(bad.output, HasSubstr(c.message)) << c.args;
    EXPECT_THAT(bad.output, HasSubstr("usage: accy fuzz")) << c.args;
  }
  Write("file", "x");
  const CommandResult out = Accy("fuzz --programs 1 --out file");
  EXPECT_EQ(out.exit_code, 1) << out.output;
  EXPECT_THAT(out.output, HasSubstr("--out file: cannot create the folder"));
}

// A crash (here a SIGSEGV sent from outside) ends the run with the program to replay named.
TEST_F(CliTest, FuzzNamesTheProgramWhenItCrashes) {
  const std::string command = "cd '" + dir_.string() + "' && XDG_CACHE_HOME=xdg '" +
                              std::string(ACCY_CLI_PATH) +
                              "' fuzz --programs 100000 > out.txt 2>&1 & p=$!; sleep 2; "
                              "kill -SEGV $p; wait $p; echo exit $?";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[256];
  std::string status;
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) status += buffer;
  ::pclose(pipe);
  EXPECT_THAT(status, HasSubstr("exit 139"));  // 128 + SIGSEGV: the signal is re-raised
  std::ifstream in(dir_ / "out.txt");
  const std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(output, HasSubstr("accy fuzz: crashed"));
}

}  // namespace
}  // namespace accy::tools
