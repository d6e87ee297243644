// convolution's StableHLO spellings: the pretty form JAX writes (dim_numbers, window, group
// counts, precision), the generic form with #stablehlo.conv<...> (layout and raw syntax), dense
// padding and i1 reversal lists, read into the exact IR attributes; the printer's output reads
// back to the same text; and each malformed spelling fails with its line, column and cause.
#include <memory>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

// A module whose @main(%lhs: lhs_type, %rhs: rhs_type) -> result_type returns `op_text`'s %0.
std::string Program(const std::string& op_text, const std::string& lhs_type,
                    const std::string& rhs_type, const std::string& result_type) {
  return "func.func @main(%lhs: " + lhs_type + ", %rhs: " + rhs_type + ") -> " + result_type +
         " {\n  %0 = " + op_text + "\n  return %0 : " + result_type + "\n}\n";
}

const Operation& FirstOp(const Module& module) {
  return *module.functions()[0]->entry_block()->operations()[0];
}

TEST(ConvolutionSyntaxTest, PrettyFormReadsEveryWindowAttribute) {
  const std::string text = Program(
      "stablehlo.convolution(%lhs, %rhs) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
      "window = {stride = [2, 1], pad = [[3, -1], [0, 2]], lhs_dilate = [1, 2], rhs_dilate = "
      "[2, 1], reverse = [true, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : "
      "i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]} "
      ": (tensor<1x16x16x2xf32>, tensor<2x3x2x4xf32>) -> tensor<1x8x31x4xf32>",
      "tensor<1x16x16x2xf32>", "tensor<2x3x2x4xf32>", "tensor<1x8x31x4xf32>");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const Operation& op = FirstOp(*module);
  EXPECT_EQ(op.kind(), OpKind::kConvolution);
  EXPECT_EQ(op.GetInts("window_strides"), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(op.GetInts("padding"), (std::vector<int64_t>{3, -1, 0, 2}));
  EXPECT_EQ(op.GetInts("lhs_dilation"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(op.GetInts("rhs_dilation"), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(op.GetInts("window_reversal"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(op.GetInt("input_batch_dimension"), 0);
  EXPECT_EQ(op.GetInt("input_feature_dimension"), 3);
  EXPECT_EQ(op.GetInts("input_spatial_dimensions"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(op.GetInt("kernel_input_feature_dimension"), 2);
  EXPECT_EQ(op.GetInt("kernel_output_feature_dimension"), 3);
  EXPECT_EQ(op.GetInts("kernel_spatial_dimensions"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(op.GetStrings("precision_config"), (std::vector<std::string>{"DEFAULT", "HIGHEST"}));
  // The printer writes it back in the same form, and that text reads back unchanged.
  const std::string printed = PrintModule(*module);
  EXPECT_THAT(printed,
              HasSubstr("stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, "
                        "f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = "
                        "[[3, -1], [0, 2]], lhs_dilate = [1, 2], rhs_dilate = [2, 1], "
                        "reverse = [true, false]} {batch_group_count = 1 : i64, "
                        "feature_group_count = 1 : i64, precision_config = "
                        "[#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]}"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> again, ParseStableHlo(printed));
  EXPECT_EQ(PrintModule(*again), printed);
}

TEST(ConvolutionSyntaxTest, EmptyWindowAndOlderIntegerReversal) {
  const std::string text = Program(
      "stablehlo.convolution(%lhs, %rhs) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = "
      "{reverse = [1]} {batch_group_count = 1 : i64, feature_group_count = 3 : i64} : "
      "(tensor<2x3x9xf32>, tensor<12x1x3xf32>) -> tensor<2x12x7xf32>",
      "tensor<2x3x9xf32>", "tensor<12x1x3xf32>", "tensor<2x12x7xf32>");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const Operation& op = FirstOp(*module);
  EXPECT_EQ(op.GetInts("window_reversal"), (std::vector<int64_t>{1}));
  EXPECT_EQ(op.GetInt("feature_group_count"), 3);
  EXPECT_EQ(op.attribute("window_strides"), nullptr);  // absent: the default
  EXPECT_EQ(op.GetInt("kernel_output_feature_dimension"), 0);
}

TEST(ConvolutionSyntaxTest, GenericFormWithLayoutAndRawDimensionNumbers) {
  const std::string properties =
      "batch_group_count = 1 : i64, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, "
      "1>, padding = dense<[[1, 1], [0, -1]]> : tensor<2x2xi64>, rhs_dilation = array<i64: 1, "
      "1>, window_reversal = array<i1: false, true>, window_strides = array<i64: 1, 2>";
  const std::string types = " : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x3xf32>";
  for (const std::string numbers :
       {std::string("#stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>"),
        std::string("#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 1, "
                    "input_spatial_dimensions = [2, 3], kernel_input_feature_dimension = 1, "
                    "kernel_output_feature_dimension = 0, kernel_spatial_dimensions = [2, 3], "
                    "output_batch_dimension = 0, output_feature_dimension = 1, "
                    "output_spatial_dimensions = [2, 3]>")}) {
    SCOPED_TRACE(numbers);
    const std::string text =
        Program("\"stablehlo.convolution\"(%lhs, %rhs) <{" + properties +
                    ", dimension_numbers = " + numbers + "}>" + types,
                "tensor<1x3x8x8xf32>", "tensor<4x3x3x3xf32>", "tensor<1x4x8x3xf32>");
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
    const Operation& op = FirstOp(*module);
    EXPECT_EQ(op.GetInts("padding"), (std::vector<int64_t>{1, 1, 0, -1}));
    EXPECT_EQ(op.GetInts("window_reversal"), (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(op.GetInts("window_strides"), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(op.GetInt("input_feature_dimension"), 1);
    EXPECT_EQ(op.GetInt("kernel_output_feature_dimension"), 0);
    EXPECT_EQ(op.GetInts("output_spatial_dimensions"), (std::vector<int64_t>{2, 3}));
  }
}

TEST(ConvolutionSyntaxTest, BuilderProgramsRoundTripThroughText) {
  Builder builder("conv");
  auto lhs = *TensorType::Create(ElementType::kI8, {2, 5, 5, 4});
  auto rhs = *TensorType::Create(ElementType::kI8, {3, 3, 2, 6});
  // [6, 4, 8, 2]: dims [f, 1, 0, b] (see the layout checked below).
  const auto result = *TensorType::Create(ElementType::kI32, {6, 4, 8, 2});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("main", {lhs, rhs}, {result}));
  ConvolutionSpec spec;
  spec.dimension_numbers = {0, 3, {1, 2}, 2, 3, {0, 1}, 3, 0, {2, 1}};
  spec.feature_group_count = 2;
  spec.padding = {{-1, 2}, {1, 0}};
  spec.lhs_dilation = {2, 1};
  spec.window_reversal = {false, true};
  ASSERT_OK_AND_ASSIGN(Value * out, fb.Convolution(fb.Parameter(0), fb.Parameter(1), spec,
                                                   ElementType::kI32));
  EXPECT_EQ(out->type(), result);
  ASSERT_OK(fb.Return({out}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  const std::string text = PrintModule(*module);
  EXPECT_THAT(text, HasSubstr("->[f, 1, 0, b]"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> parsed, ParseStableHlo(text));
  EXPECT_EQ(PrintModule(*parsed), text);
  EXPECT_EQ(FirstOp(*parsed).GetInts("padding"), (std::vector<int64_t>{-1, 2, 1, 0}));
}

struct SyntaxError {
  const char* name;
  std::string op_text;
  const char* fragment;
};

TEST(ConvolutionSyntaxTest, MalformedSpellingsNameLocationAndCause) {
  const std::string tail =
      " {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, "
      "tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>";
  const std::string numbers = "dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]";
  const SyntaxError cases[] = {
      {"letter twice",
       "stablehlo.convolution(%lhs, %rhs) dim_numbers = [b, 0, b, f]x[0, 1, i, "
       "o]->[b, 0, 1, f], window = {}" +
           tail,
       "'b' appears twice in a convolution dim layout"},
      {"spatial gap",
       "stablehlo.convolution(%lhs, %rhs) dim_numbers = [b, 0, 2, f]x[0, 1, i, "
       "o]->[b, 0, 1, f], window = {}" +
           tail,
       "spatial dim 1 is missing from a convolution dim layout"},
      {"missing letter",
       "stablehlo.convolution(%lhs, %rhs) dim_numbers = [b, 0, 1, 2]x[0, 1, i, "
       "o]->[b, 0, 1, f], window = {}" +
           tail,
       "a convolution dim layout needs one 'b' and one 'f'"},
      {"kernel letter",
       "stablehlo.convolution(%lhs, %rhs) dim_numbers = [b, 0, 1, f]x[0, 1, f, "
       "o]->[b, 0, 1, f], window = {}" +
           tail,
       "expected 'i', 'o' or a spatial dim number"},
      {"unknown window entry",
       "stablehlo.convolution(%lhs, %rhs) " + numbers + ", window = {strides = [1, 1]}" + tail,
       "unknown convolution window entry 'strides'"},
      {"bad pad pair",
       "stablehlo.convolution(%lhs, %rhs) " + numbers + ", window = {pad = [[1], [0, 0]]}" + tail,
       "a padding entry is [low, high], found 1 values"},
      {"bad reversal",
       "stablehlo.convolution(%lhs, %rhs) " + numbers + ", window = {reverse = [2, 0]}" + tail,
       "a window reversal entry is 0 or 1, found 2"},
      {"missing window", "stablehlo.convolution(%lhs, %rhs) " + numbers + tail,
       "expected ',' after the convolution dim numbers"},
  };
  for (const SyntaxError& c : cases) {
    SCOPED_TRACE(c.name);
    const Status status = ParseStableHlo(Program(c.op_text, "tensor<1x4x4x1xf32>",
                                                 "tensor<3x3x1x1xf32>", "tensor<1x2x2x1xf32>"))
                              .status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.fragment));
    EXPECT_THAT(std::string(status.message()), ::testing::StartsWith("2:"));
  }
  // A well-formed op whose attributes break a spec constraint is the verifier's error.
  const Status verifier =
      ParseStableHlo(Program("stablehlo.convolution(%lhs, %rhs) " + numbers +
                                 ", window = {stride = [0, 1]}" + tail,
                             "tensor<1x4x4x1xf32>", "tensor<3x3x1x1xf32>", "tensor<1x2x2x1xf32>"))
          .status();
  EXPECT_EQ(verifier.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(verifier.message()),
              HasSubstr("convolution: window_strides [0, 1]: entry 0 is 0, must be positive"));
}

}  // namespace
}  // namespace accy
