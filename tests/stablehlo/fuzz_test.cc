// Deterministic fuzz-style test of the StableHLO parser: valid programs are truncated and
// mutated (bytes replaced by syntax characters, ranges deleted or duplicated) with a fixed seed;
// every input must come back as a status (never a crash, hang or leak under
// -fsanitize=address,undefined), and whatever still parses must round-trip through the printer.
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "accy/ir.h"
#include "accy/stablehlo.h"
#include "gtest/gtest.h"

namespace accy {
namespace {

const char* const kSeeds[] = {
    R"mlir(#loc = loc("f")
module @jit_main attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main() -> (tensor<2x3xf32> {jax.result_info = ""}) {
    %0:2 = call @inputs() : () -> (tensor<2x3xf32>, tensor<2x3xi32>)
    %cst = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0#0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
    %3 = stablehlo.convert %0#1 : (tensor<2x3xi32>) -> tensor<2x3xf32>
    %4 = stablehlo.compare  LT, %2, %3,  FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    %5 = stablehlo.select %4, %2, %3 : tensor<2x3xi1>, tensor<2x3xf32>
    %6 = stablehlo.slice %5 [0:2, 0:3:2] : (tensor<2x3xf32>) -> tensor<2x2xf32>
    %7 = stablehlo.pad %6, %cst, low = [0, 1], high = [0, 0], interior = [0, 0] : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x3xf32>
    stablehlo.custom_call @check.expect_close(%7, %5) {has_side_effect = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> ()
    return %7 : tensor<2x3xf32> loc(#loc)
  }
  func.func private @inputs() -> (tensor<2x3xf32>, tensor<2x3xi32>) {
    %cst = stablehlo.constant dense<[[1.5, -2.0, 0x7FC00000], [inf, 4.0, 5.0]]> : tensor<2x3xf32>
    %c = stablehlo.constant dense<"0x010000000200000003000000040000000500000006000000"> : tensor<2x3xi32>
    return %cst, %c : tensor<2x3xf32>, tensor<2x3xi32>
  }
}
)mlir",
    R"mlir(module @loop {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4x2xf32>, %arg2: tensor<3x1xi32>) -> (tensor<4xf32>, tensor<3x2xf32>) {
    %0 = stablehlo.constant dense<0> : tensor<i64>
    %1:2 = stablehlo.while(%iterArg = %0, %iterArg_0 = %arg0) : tensor<i64>, tensor<4xf32>
     cond {
      %6 = stablehlo.constant dense<10> : tensor<i64>
      %7 = stablehlo.compare  LT, %iterArg, %6,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %7 : tensor<i1>
    } do {
      %6 = stablehlo.constant dense<1> : tensor<i64>
      %7 = stablehlo.add %iterArg, %6 : tensor<i64>
      %8 = stablehlo.add %iterArg_0, %iterArg_0 : tensor<4xf32>
      stablehlo.return %7, %8 : tensor<i64>, tensor<4xf32>
    }
    %2 = "stablehlo.gather"(%arg1, %arg2) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2>}> : (tensor<4x2xf32>, tensor<3x1xi32>) -> tensor<3x2xf32>
    %4 = stablehlo.custom_call @mylib.axpy(%1#1, %arg0) {accy.operand_effects = ["read", "read_write"], accy.version = 2 : i64, output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %5 = stablehlo.custom_call @accy.cumsum(%4) {accy.dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    return %5, %2 : tensor<4xf32>, tensor<3x2xf32>
  }
}
)mlir",
    R"mlir(func.func @t() {
  %0 = stablehlo.constant dense<[[[1,2],[3,4],[5,6]], [[7,8],[9,10],[11,12]]]> : tensor<2x3x2xi32>
  %1 = "stablehlo.transpose"(%0) {permutation = array<i64: 1,0,2>} : (tensor<2x3x2xi32>) -> tensor<3x2x2xi32>
  check.expect_eq_const %1, dense<[[[1, 2], [7, 8]], [[3, 4], [9, 10]], [[5, 6], [11, 12]]]> : tensor<3x2x2xi32>
  func.return
}
// -----
func.func @u(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
)mlir"};

constexpr char kSyntaxCharacters[] = "{}()[]<>,:=%@#\"-+0123456789x.^! \nafi";

std::string Mutate(const std::string& seed, std::mt19937& random) {
  std::string text = seed;
  std::uniform_int_distribution<int> kind_of(0, 4);
  const int mutations = 1 + static_cast<int>(random() % 3);
  for (int m = 0; m < mutations && !text.empty(); ++m) {
    const size_t at = random() % text.size();
    const size_t length = 1 + random() % std::min<size_t>(24, text.size() - at);
    switch (kind_of(random)) {
      case 0:  // truncate
        text.resize(at);
        break;
      case 1:  // replace one byte by a syntax character
        text[at] = kSyntaxCharacters[random() % (sizeof(kSyntaxCharacters) - 1)];
        break;
      case 2:  // delete a range
        text.erase(at, length);
        break;
      case 3:  // duplicate a range
        text.insert(at, text.substr(at, length));
        break;
      default:  // a random byte, including non-ASCII and NUL
        text[at] = static_cast<char>(random() & 0xFF);
        break;
    }
  }
  return text;
}

// ACCY_FUZZ_ITERATIONS and ACCY_FUZZ_SEED override the defaults for longer one-off runs.
int EnvOr(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : fallback;
}

TEST(FuzzTest, MutatedProgramsReturnAStatusAndSurvivorsRoundTrip) {
  std::mt19937 random(static_cast<uint32_t>(EnvOr("ACCY_FUZZ_SEED", 20250101)));
  const int iterations = EnvOr("ACCY_FUZZ_ITERATIONS", 6000);
  int parsed = 0;
  int rejected = 0;
  for (int iteration = 0; iteration < iterations; ++iteration) {
    const std::string& seed = kSeeds[iteration % (sizeof(kSeeds) / sizeof(kSeeds[0]))];
    const std::string text = Mutate(seed, random);
    StatusOr<std::vector<StableHloProgram>> programs = ParseStableHloProgramSplit(text);
    if (!programs.ok()) {
      const absl::StatusCode code = programs.status().code();
      EXPECT_TRUE(code == absl::StatusCode::kInvalidArgument ||
                  code == absl::StatusCode::kUnimplemented ||
                  code == absl::StatusCode::kResourceExhausted ||
                  code == absl::StatusCode::kOutOfRange)
          << programs.status() << "\n" << text;
      // Every message is located, except module-level verification after a successful parse.
      EXPECT_FALSE(programs.status().message().empty());
      ++rejected;
      continue;
    }
    ++parsed;
    for (const StableHloProgram& program : *programs) {
      const std::string printed = PrintModule(*program.module);
      StatusOr<std::unique_ptr<Module>> again = ParseStableHlo(printed);
      ASSERT_TRUE(again.ok()) << again.status() << "\nmutated:\n" << text << "\nprinted:\n"
                              << printed;
      EXPECT_EQ(PrintModule(**again), printed);
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(parsed, 0);
}

}  // namespace
}  // namespace accy
