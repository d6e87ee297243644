// ParseOptions: the per-constant and total limits on constant bytes, splats counted at their
// expanded size before expansion, inlined copies counted per call site, split files counted as
// one call. Every refusal asserts kResourceExhausted, the location and the bytes named.
#include <memory>
#include <string>
#include <vector>

#include "accy/stablehlo.h"
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
