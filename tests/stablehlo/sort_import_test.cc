// Import and printing of sort (generic form, properties `<{...}>` before the region as JAX
// writes it, or attributes after the region as the interpreter tests do) and chlo.top_k (its
// pretty form and the generic one), round trips through PrintModule, and the errors of
// malformed or unsupported forms.
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

TEST(SortImportTest, JaxTotalOrderSortParsesPrintsAndRoundTrips) {
  const std::string text = R"mlir(
func.func public @main(%arg0: tensor<5x7xf32>, %arg1: tensor<5x7xi32>) -> (tensor<5x7xf32>, tensor<5x7xi32>) {
  %0:2 = "stablehlo.sort"(%arg0, %arg1) <{dimension = -1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %1 = stablehlo.compare  LT, %a, %b,  TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<5x7xf32>, tensor<5x7xi32>) -> (tensor<5x7xf32>, tensor<5x7xi32>)
  return %0#0, %0#1 : tensor<5x7xf32>, tensor<5x7xi32>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const Operation& op = FirstOf(*module, OpKind::kSort);
  EXPECT_EQ(op.GetInt("dimension"), -1);
  EXPECT_EQ(op.GetBool("is_stable"), true);
  EXPECT_EQ(op.num_results(), 2);
  const std::string printed = PrintModule(*module);
  EXPECT_THAT(printed, HasSubstr("\"stablehlo.sort\"(%arg0, %arg1) <{dimension = -1 : i64, "
                                 "is_stable = true}> ({\n"));
  EXPECT_THAT(printed, HasSubstr("^bb0("));
  EXPECT_THAT(printed, HasSubstr("}) : (tensor<5x7xf32>, tensor<5x7xi32>) -> (tensor<5x7xf32>, "
                                 "tensor<5x7xi32>)"));
  ExpectRoundTrip(*module);
}

TEST(SortImportTest, InterpreterFormWithAttributesAfterTheRegionDefaultsToUnstable) {
  const std::string text = R"mlir(
func.func @main(%x: tensor<2x3xi64>) -> tensor<2x3xi64> {
  %0 = "stablehlo.sort"(%x) ({
    ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
      %predicate = stablehlo.compare GT, %arg0, %arg1 : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %predicate : tensor<i1>
  }) {
    dimension = 0 : i64
  } : (tensor<2x3xi64>) -> tensor<2x3xi64>
  func.return %0 : tensor<2x3xi64>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const Operation& op = FirstOf(*module, OpKind::kSort);
  EXPECT_EQ(op.GetInt("dimension"), 0);
  EXPECT_FALSE(op.GetBool("is_stable").has_value());
  EXPECT_THAT(PrintModule(*module), HasSubstr("is_stable = false"));
  ExpectRoundTrip(*module);
}

TEST(SortImportTest, ChloTopKPrettyAndGenericFormsParseAndRoundTrip) {
  const std::string text = R"mlir(
func.func @main(%x: tensor<5x3xf32>) -> (tensor<5x2xf32>, tensor<5x2xi32>) {
  %values, %indices = chlo.top_k(%x, k = 2) : tensor<5x3xf32> -> (tensor<5x2xf32>, tensor<5x2xi32>)
  %1:2 = "chlo.top_k"(%x) {k = 2 : i64} : (tensor<5x3xf32>) -> (tensor<5x2xf32>, tensor<5x2xi32>)
  return %values, %1#1 : tensor<5x2xf32>, tensor<5x2xi32>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const Operation& op = FirstOf(*module, OpKind::kTopK);
  EXPECT_EQ(op.GetInt("k"), 2);
  EXPECT_EQ(op.result(1)->type().ToString(), "tensor<5x2xi32>");
  EXPECT_THAT(PrintModule(*module),
              HasSubstr("= chlo.top_k(%arg0, k = 2) : tensor<5x3xf32> -> (tensor<5x2xf32>, "
                        "tensor<5x2xi32>)"));
  ExpectRoundTrip(*module);
}

TEST(SortImportTest, BadSortAndTopKFormsFailNamingTheProblem) {
  // A comparator returning f32: the verifier's message, located at the op.
  const Status not_pred = ParseStableHlo(R"mlir(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %a : tensor<f32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir").status();
  EXPECT_EQ(not_pred.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(not_pred.message(),
              HasSubstr("sort: comparator returns tensor<f32> as value 0, expected tensor<i1>"));
  const Status big_k = ParseStableHlo(R"mlir(
func.func @main(%x: tensor<3xf32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %v, %i = chlo.top_k(%x, k = 4) : tensor<3xf32> -> (tensor<4xf32>, tensor<4xi32>)
  return %v, %i : tensor<4xf32>, tensor<4xi32>
}
)mlir").status();
  EXPECT_EQ(big_k.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(big_k.message(), HasSubstr("chlo.top_k: k = 4 is out of range [0, 3]"));
  const Status missing_k = ParseStableHlo(R"mlir(
func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %v, %i = chlo.top_k(%x) : tensor<3xf32> -> (tensor<3xf32>, tensor<3xi32>)
  return %v, %i : tensor<3xf32>, tensor<3xi32>
}
)mlir").status();
  EXPECT_EQ(missing_k.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing_k.message(), HasSubstr("expected ',' before k"));
  // top_k is CHLO's: there is no stablehlo.top_k.
  const Status stablehlo_top_k = ParseStableHlo(R"mlir(
func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %v:2 = "stablehlo.top_k"(%x) {k = 3 : i64} : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xi32>)
  return %v#0, %v#1 : tensor<3xf32>, tensor<3xi32>
}
)mlir").status();
  EXPECT_EQ(stablehlo_top_k.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(stablehlo_top_k.message(), HasSubstr("op 'stablehlo.top_k' is not supported"));
}

}  // namespace
}  // namespace accy
