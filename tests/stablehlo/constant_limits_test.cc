// ParseOptions: the per-constant and total limits on constant bytes, splats counted at their
// expanded size before expansion (and large ones never expanded), inlined copies counted per
// call site, split files counted as one call. Every refusal asserts kResourceExhausted, the location and the bytes named.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "accy/stablehlo.h"
#include "src/reference/reference_evaluator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A function returning the sum of constants of f32[n] each, one per entry of `sizes`, every
// one a splat (`dense<1.5>`).
std::string SplatProgram(const std::vector<int>& sizes) {
  std::string text = "func.func @main() -> tensor<f32> {\n";
  for (size_t i = 0; i < sizes.size(); ++i) {
    text += "  %c" + std::to_string(i) + " = stablehlo.constant dense<1.5> : tensor<" +
            std::to_string(sizes[i]) + "xf32>\n";
  }
  text += "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n  return %z : tensor<f32>\n}\n";
  return text;
}

ParseOptions Limits(int64_t per_constant, int64_t total) {
  ParseOptions options;
  options.max_constant_bytes = per_constant;
  options.max_total_constant_bytes = total;
  return options;
}

TEST(ConstantLimitsTest, DefaultsAreDocumentedValues) {
  ParseOptions options;
  EXPECT_EQ(options.max_constant_bytes, int64_t{256} << 20);
  EXPECT_EQ(options.max_total_constant_bytes, int64_t{1} << 30);
}

TEST(ConstantLimitsTest, OneConstantOverItsLimitNamesBytesAndLimit) {
  // 600 f32 = 2,400 bytes against 2,399 per constant; 2,400 passes.
  StatusOr<std::unique_ptr<Module>> refused =
      ParseStableHlo(SplatProgram({600}), Limits(2399, 1 << 20));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.status().message()),
              StartsWith("2:34: constant of tensor<600xf32> takes 2400 bytes, above the limit "
                         "of 2399 bytes per constant (ParseOptions::max_constant_bytes)"));
  EXPECT_OK(ParseStableHlo(SplatProgram({600}), Limits(2400, 1 << 20)).status());
}

TEST(ConstantLimitsTest, DefaultLimitRefusesAHugeSplatBeforeExpandingIt) {
  // 4e12 bytes from a one-line splat: refused at once (expanding it would exhaust memory).
  StatusOr<std::unique_ptr<Module>> refused = ParseStableHlo(
      "func.func @main() -> tensor<1000000x1000000xf32> {\n"
      "  %0 = stablehlo.constant dense<1.0> : tensor<1000000x1000000xf32>\n"
      "  return %0 : tensor<1000000x1000000xf32>\n}\n");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("takes 4000000000000 bytes, above the limit of 268435456 bytes"));
}

TEST(ConstantLimitsTest, ManySplatsOverTheTotalAreRefusedAndJustUnderPass) {
  // Two splats of 512 f32 (2,048 bytes each) and the scalar (4 bytes): 4,100 bytes in all.
  EXPECT_OK(ParseStableHlo(SplatProgram({512, 512}), Limits(1 << 20, 4100)).status());
  StatusOr<std::unique_ptr<Module>> refused =
      ParseStableHlo(SplatProgram({512, 512}), Limits(1 << 20, 4099));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.status().message()),
              StartsWith("4:33: constant of tensor<f32> takes 4 bytes, which with the text's "
                         "4096 bytes of constants before it exceeds the limit of 4099 bytes "
                         "(ParseOptions::max_total_constant_bytes)"));
}

TEST(ConstantLimitsTest, InlinedCopiesCountOncePerCallSite) {
  // @g's 1,000-f32 constant (4,000 bytes) appears once in the text but three times in the
  // module once @g is inlined at its three call sites.
  const std::string text = R"mlir(func.func @main() -> tensor<1000xf32> {
  %0 = call @g() : () -> tensor<1000xf32>
  %1 = call @g() : () -> tensor<1000xf32>
  %2 = call @g() : () -> tensor<1000xf32>
  %3 = stablehlo.add %0, %1 : tensor<1000xf32>
  %4 = stablehlo.add %3, %2 : tensor<1000xf32>
  return %4 : tensor<1000xf32>
}
func.func private @g() -> tensor<1000xf32> {
  %0 = stablehlo.constant dense<2.0> : tensor<1000xf32>
  return %0 : tensor<1000xf32>
})mlir";
  EXPECT_OK(ParseStableHlo(text, Limits(1 << 20, 12000)).status());
  StatusOr<std::unique_ptr<Module>> refused = ParseStableHlo(text, Limits(1 << 20, 11999));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.status().message()),
              StartsWith("10:27: constant of tensor<1000xf32> takes 4000 bytes, which with the "
                         "module's 8000 bytes of constants before it exceeds the limit of "
                         "11999 bytes"));
}

TEST(ConstantLimitsTest, SplitFileChunksShareOneTotal) {
  const std::string chunk = SplatProgram({500});  // 2,000 + 4 bytes
  const std::string text = chunk + "// -----\n" + chunk;
  ASSERT_OK_AND_ASSIGN(std::vector<std::unique_ptr<Module>> modules,
                       ParseStableHloSplit(text, Limits(1 << 20, 4008)));
  EXPECT_EQ(modules.size(), 2u);
  StatusOr<std::vector<StableHloProgram>> refused =
      ParseStableHloProgramSplit(text, Limits(1 << 20, 4007));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  // The second chunk's scalar, on line 9 of the file.
  EXPECT_THAT(std::string(refused.status().message()),
              StartsWith("9:33: constant of tensor<f32> takes 4 bytes, which with the text's "
                         "4004 bytes"));
}

// Splats of kMinUnexpandedSplatBytes (64 KiB) or more stay one element: the constant is a rank-0
// constant and a broadcast_in_dim of it, its values the splat's bit for bit, and the limits
// still count it at its expanded size.
TEST(ConstantLimitsTest, LargeSplatStaysOneElementAndCountsExpanded) {
  const std::string text =
      "func.func @main() -> (tensor<128x128xf32>, tensor<16384xi32>, tensor<16383xf32>) {\n"
      "  %0 = stablehlo.constant dense<1.5> : tensor<128x128xf32>\n"
      "  %1 = stablehlo.constant dense<\"0x07000000\"> : tensor<16384xi32>\n"
      "  %2 = stablehlo.constant dense<2.5> : tensor<16383xf32>\n"
      "  return %0, %1, %2 : tensor<128x128xf32>, tensor<16384xi32>, tensor<16383xf32>\n}\n";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const Function& main = *module->functions()[0];
  std::vector<OpKind> kinds;
  for (const auto& op : main.entry_block()->operations()) kinds.push_back(op->kind());
  // 65,536 bytes each for %0 and %1; %2 (65,532 bytes) is below the threshold and expanded.
  EXPECT_EQ(kinds, (std::vector<OpKind>{OpKind::kConstant, OpKind::kBroadcastInDim,
                                        OpKind::kConstant, OpKind::kBroadcastInDim,
                                        OpKind::kConstant, OpKind::kReturn}));
  EXPECT_EQ(main.entry_block()->operations()[0]->GetDense("value")->bytes.size(), 4u);
  EXPECT_EQ(main.entry_block()->operations()[4]->GetDense("value")->bytes.size(), 65532u);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, Evaluate(*module, "main", {}));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].type().ToString(), "tensor<128x128xf32>");
  EXPECT_EQ(out[0].GetAsDouble(0), 1.5);
  EXPECT_EQ(out[0].GetAsDouble(128 * 128 - 1), 1.5);
  EXPECT_EQ(out[1].GetAsDouble(16383), 7);
  EXPECT_EQ(out[2].GetAsDouble(16382), 2.5);
  // Counted at 65,536 bytes against a per-constant limit of 65,535.
  StatusOr<std::unique_ptr<Module>> refused = ParseStableHlo(text, Limits(65535, 1 << 20));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.status().message()),
              StartsWith("2:33: constant of tensor<128x128xf32> takes 65536 bytes, above the "
                         "limit of 65535 bytes per constant"));
  // Both counts (the text's and the module's) see 65,536 + 65,536 + 65,532 bytes.
  EXPECT_OK(ParseStableHlo(text, Limits(1 << 20, 196604)).status());
  EXPECT_FALSE(ParseStableHlo(text, Limits(1 << 20, 196603)).ok());
}

// Four splats of almost 256 MiB (the default limits: 256 MiB each, 1 GiB in all) in a file of a
// few hundred bytes parse without allocating them; a check op's expected splat is expanded for the check.
TEST(ConstantLimitsTest, SplatsAtTheDefaultLimitsAreNotAllocatedAtParse) {
  std::string text = "func.func @main() -> tensor<2xf32> {\n";
  for (int i = 0; i < 4; ++i) {
    text += "  %c" + std::to_string(i) + " = stablehlo.constant dense<" + std::to_string(i) +
            ".0> : tensor<8192x8191xf32>\n";
  }
  text += "  %r = stablehlo.constant dense<3.0> : tensor<2xf32>\n"
          "  check.expect_eq_const %r, dense<3.0> : tensor<2xf32>\n"
          "  return %r : tensor<2xf32>\n}\n";
  ASSERT_OK_AND_ASSIGN(StableHloProgram program, ParseStableHloProgram(text));
  int64_t constant_bytes = 0;
  for (const auto& op : program.module->functions()[0]->entry_block()->operations()) {
    if (op->kind() == OpKind::kConstant) constant_bytes += static_cast<int64_t>(op->GetDense("value")->bytes.size());
  }
  EXPECT_EQ(constant_bytes, 4 * 4 + 8);
  ASSERT_EQ(program.checks.size(), 1u);
  ASSERT_TRUE(program.checks[0].expected_constant.has_value());
  EXPECT_EQ(program.checks[0].expected_constant->bytes.size(), 8u);
}

TEST(ConstantLimitsTest, LargeExpectedSplatOfACheckIsExpanded) {
  const std::string text =
      "func.func @main() -> tensor<16384xf32> {\n"
      "  %r = stablehlo.constant dense<3.0> : tensor<16384xf32>\n"
      "  check.expect_eq_const %r, dense<3.0> : tensor<16384xf32>\n"
      "  return %r : tensor<16384xf32>\n}\n";
  ASSERT_OK_AND_ASSIGN(StableHloProgram program, ParseStableHloProgram(text));
  ASSERT_EQ(program.checks.size(), 1u);
  ASSERT_TRUE(program.checks[0].expected_constant.has_value());
  const DenseElements& expected = *program.checks[0].expected_constant;
  EXPECT_EQ(expected.type.ToString(), "tensor<16384xf32>");
  ASSERT_EQ(expected.bytes.size(), 65536u);
  float last = 0;
  std::memcpy(&last, expected.bytes.data() + 65532, 4);
  EXPECT_EQ(last, 3.0f);
  // The wrong type is named with the declared (expanded) type.
  StatusOr<StableHloProgram> wrong = ParseStableHloProgram(
      "func.func @main() -> tensor<16384xf32> {\n"
      "  %r = stablehlo.constant dense<3.0> : tensor<16384xf32>\n"
      "  check.expect_eq_const %r, dense<3.0> : tensor<16385xf32>\n"
      "  return %r : tensor<16384xf32>\n}\n");
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(std::string(wrong.status().message()),
              HasSubstr("expected value has type tensor<16385xf32>, the checked value "
                        "tensor<16384xf32>"));
}

// A large splat in an attribute other than a constant's value is expanded where it is read:
// an i1 splat of 65,536 elements as a constant stays one element too.
TEST(ConstantLimitsTest, LargeBoolSplatConstantStaysOneElement) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                       ParseStableHlo("func.func @main() -> tensor<65536xi1> {\n"
                                      "  %0 = stablehlo.constant dense<true> : tensor<65536xi1>\n"
                                      "  return %0 : tensor<65536xi1>\n}\n"));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, Evaluate(*module, "main", {}));
  EXPECT_EQ(out[0].GetAsDouble(65535), 1);
  EXPECT_EQ(module->functions()[0]->entry_block()->operations()[1]->kind(), OpKind::kBroadcastInDim);
}

TEST(ConstantLimitsTest, NonPositiveLimitsAreInvalidArguments) {
  for (const ParseOptions& options : {Limits(0, 100), Limits(100, -1)}) {
    StatusOr<StableHloProgram> program = ParseStableHloProgram(SplatProgram({4}), options);
    ASSERT_FALSE(program.ok());
    EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(program.status().message()),
                StartsWith("ParseOptions: max_constant_bytes is "));
    EXPECT_THAT(std::string(program.status().message()), HasSubstr("expected both > 0"));
  }
}

}  // namespace
}  // namespace accy
