// Import and printing of the window ops: reduce_window and select_and_scatter in the generic form
// JAX writes (properties `<{...}>` before the regions) and the interpreter tests' form
// (attributes after the regions), padding as the [rank, 2] dense tensor, round trips through
// PrintModule, and the errors a malformed padding gives.
#include <memory>
#include <string>

#include "accy/ir.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/stablehlo/import_test_util.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

using ::accy::import_test::ExpectRoundTrip;
using ::accy::import_test::FirstOf;

TEST(WindowImportTest, JaxMaxPoolParsesPrintsAndRoundTrips) {
  const std::string text = R"mlir(
func.func public @main(%arg0: tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32> {
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%arg0, %cst) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) : (tensor<1x8x8x3xf32>, tensor<f32>) -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const Operation& op = FirstOf(*module, OpKind::kReduceWindow);
  EXPECT_EQ(op.GetInts("padding"), (std::vector<int64_t>{0, 0, 1, 1, 1, 1, 0, 0}));
  EXPECT_EQ(op.GetInts("window_dimensions"), (std::vector<int64_t>{1, 3, 3, 1}));
  const std::string printed = PrintModule(*module);
  EXPECT_THAT(printed, HasSubstr("\"stablehlo.reduce_window\"(%arg0, %0) <{padding = dense<[[0, "
                                 "0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, "
                                 "window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = "
                                 "array<i64: 1, 2, 2, 1>}> ({"));
  ExpectRoundTrip(*module);
}

TEST(WindowImportTest, InterpreterFormsWithTrailingAttributesRoundTrip) {
  const std::string text = R"mlir(
func.func @main(%input: tensor<3x2xi64>, %operand: tensor<4x2xi64>, %source: tensor<2x2xi64>) -> (tensor<2x2xi64>, tensor<4x2xi64>) {
  %init_value = stablehlo.constant dense<0> : tensor<i64>
  %result = "stablehlo.reduce_window"(%input, %init_value) ({
    ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
      %0 = stablehlo.add %arg0, %arg1 : tensor<i64>
      stablehlo.return %0 : tensor<i64>
  }) {
    base_dilations = array<i64: 2, 1>,
    padding = dense<[[2, 1], [0, 0]]> : tensor<2x2xi64>,
    window_dilations = array<i64: 3, 1>,
    window_dimensions = array<i64: 2, 1>,
    window_strides = array<i64: 4, 1>
  } : (tensor<3x2xi64>, tensor<i64>) -> tensor<2x2xi64>
  %scattered = "stablehlo.select_and_scatter"(%operand, %source, %init_value) ({
    ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
      %0 = stablehlo.compare GE, %arg0, %arg1 : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %0 : tensor<i1>
  }, {
    ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
      %0 = stablehlo.add %arg0, %arg1 : tensor<i64>
      stablehlo.return %0 : tensor<i64>
  }) {
    window_dimensions = array<i64: 3, 1>,
    window_strides = array<i64: 2, 1>,
    padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>
  } : (tensor<4x2xi64>, tensor<2x2xi64>, tensor<i64>) -> tensor<4x2xi64>
  return %result, %scattered : tensor<2x2xi64>, tensor<4x2xi64>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  EXPECT_EQ(FirstOf(*module, OpKind::kReduceWindow).GetInts("base_dilations"),
            (std::vector<int64_t>{2, 1}));
  const Operation& sas = FirstOf(*module, OpKind::kSelectAndScatter);
  EXPECT_EQ(sas.num_regions(), 2);
  EXPECT_EQ(sas.GetInts("padding"), (std::vector<int64_t>{0, 1, 0, 0}));
  ExpectRoundTrip(*module);
}

TEST(WindowImportTest, MalformedPaddingIsAnErrorNamingTheAttribute) {
  const std::string text = R"mlir(
func.func @main(%x: tensor<4xf32>, %init: tensor<f32>) -> tensor<4xf32> {
  %0 = "stablehlo.reduce_window"(%x, %init) <{padding = dense<[1, 1]> : tensor<2xi64>, window_dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir";
  StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(text);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(module.status().message()),
              HasSubstr("attribute padding must be a tensor<Nx2x integer> of (low, high) pairs, "
                        "found tensor<2xi64>"));
}

TEST(WindowImportTest, AResultTypeThatIsNotTheWindowCountIsAnError) {
  const std::string text = R"mlir(
func.func @main(%x: tensor<4xf32>, %init: tensor<f32>) -> tensor<4xf32> {
  %0 = "stablehlo.reduce_window"(%x, %init) <{window_dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir";
  StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(text);
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(std::string(module.status().message()),
              HasSubstr("reduce_window: result 0 has type tensor<4xf32>, expected tensor<3xf32>"));
}

}  // namespace
}  // namespace accy
