// Import and printing of triangular_solve: the generic form with attributes (`{...}`, as the
// interpreter tests write it) and with properties (`<{...}>`, as JAX and stablehlo-opt write
// it), the printed form and round trips through PrintModule, and the errors of bad or
// unsupported forms (an unknown transpose_a, a missing attribute, a shape the type rule rejects,
// complex operands).
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

TEST(TriangularSolveImportTest, InterpreterAttributeFormParsesPrintsAndRoundTrips) {
  const std::string text = R"mlir(
func.func @main(%a: tensor<3x3xf32>, %b: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %result = "stablehlo.triangular_solve"(%a, %b) {left_side = false, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose TRANSPOSE>} : (tensor<3x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  func.return %result : tensor<1x3xf32>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const Operation& op = FirstOf(*module, OpKind::kTriangularSolve);
  EXPECT_EQ(op.GetBool("left_side"), false);
  EXPECT_EQ(op.GetBool("lower"), true);
  EXPECT_EQ(op.GetBool("unit_diagonal"), false);
  EXPECT_EQ(op.GetString("transpose_a"), "TRANSPOSE");
  EXPECT_EQ(op.result(0)->type().ToString(), "tensor<1x3xf32>");
  EXPECT_THAT(PrintModule(*module),
              HasSubstr("= \"stablehlo.triangular_solve\"(%arg0, %arg1) <{left_side = false, "
                        "lower = true, transpose_a = #stablehlo<transpose TRANSPOSE>, "
                        "unit_diagonal = false}> : (tensor<3x3xf32>, tensor<1x3xf32>) -> "
                        "tensor<1x3xf32>"));
  ExpectRoundTrip(*module);
}

TEST(TriangularSolveImportTest, JaxPropertiesFormParsesAndRoundTrips) {
  // testdata/triangular_solve_float32_2_8_8_float32_2_10_8.mlir's op, on parameters.
  const std::string text = R"mlir(
module @jit_main attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x8x8xf32>, %arg1: tensor<2x10x8xf32>) -> (tensor<2x10x8xf32> {jax.result_info = ""}) {
    %0 = "stablehlo.triangular_solve"(%arg0, %arg1) <{left_side = false, lower = false, transpose_a = #stablehlo<transpose ADJOINT>, unit_diagonal = true}> : (tensor<2x8x8xf32>, tensor<2x10x8xf32>) -> tensor<2x10x8xf32>
    return %0 : tensor<2x10x8xf32>
  }
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const Operation& op = FirstOf(*module, OpKind::kTriangularSolve);
  EXPECT_EQ(op.GetBool("left_side"), false);
  EXPECT_EQ(op.GetBool("lower"), false);
  EXPECT_EQ(op.GetBool("unit_diagonal"), true);
  EXPECT_EQ(op.GetString("transpose_a"), "ADJOINT");
  EXPECT_THAT(PrintModule(*module),
              HasSubstr("transpose_a = #stablehlo<transpose ADJOINT>, unit_diagonal = true}>"));
  ExpectRoundTrip(*module);
}

TEST(TriangularSolveImportTest, BadFormsFailNamingTheProblem) {
  const auto parse = [](const std::string& attributes, const std::string& b_type) {
    return ParseStableHlo(R"mlir(
func.func @main(%a: tensor<3x3xf32>, %b: )mlir" + b_type + R"mlir() -> )mlir" + b_type +
                          R"mlir( {
  %0 = "stablehlo.triangular_solve"(%a, %b) )mlir" + attributes +
                          " : (tensor<3x3xf32>, " + b_type + ") -> " + b_type + R"mlir(
  func.return %0 : )mlir" + b_type + R"mlir(
}
)mlir")
        .status();
  };
  const Status conjugate = parse(
      "{left_side = true, lower = true, unit_diagonal = false, transpose_a = "
      "#stablehlo<transpose CONJUGATE>}",
      "tensor<3x1xf32>");
  EXPECT_EQ(conjugate.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(conjugate.message(),
              HasSubstr("triangular_solve: transpose_a is 'CONJUGATE', expected NO_TRANSPOSE, "
                        "TRANSPOSE or ADJOINT"));
  const Status as_string = parse(
      "{left_side = true, lower = true, unit_diagonal = false, transpose_a = \"TRANSPOSE\"}",
      "tensor<3x1xf32>");
  EXPECT_EQ(as_string.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(as_string.message(),
              HasSubstr("attribute transpose_a must be #stablehlo<transpose "
                        "NO_TRANSPOSE|TRANSPOSE|ADJOINT>, found string"));
  const Status missing = parse(
      "{left_side = true, unit_diagonal = false, transpose_a = #stablehlo<transpose "
      "NO_TRANSPOSE>}",
      "tensor<3x1xf32>");
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(), HasSubstr("triangular_solve: missing attribute lower"));
  const Status not_bool = parse(
      "<{left_side = 1 : i64, lower = true, unit_diagonal = false, transpose_a = "
      "#stablehlo<transpose NO_TRANSPOSE>}>",
      "tensor<3x1xf32>");
  EXPECT_EQ(not_bool.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(not_bool.message(), HasSubstr("attribute left_side must be true or false"));
  const Status wrong_rows = parse(
      "<{left_side = true, lower = true, unit_diagonal = false, transpose_a = "
      "#stablehlo<transpose NO_TRANSPOSE>}>",
      "tensor<2x3xf32>");
  EXPECT_EQ(wrong_rows.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_rows.message(),
              HasSubstr("triangular_solve: b has type tensor<2x3xf32>: dim 0 has size 2, "
                        "expected 3"));
  // accy has no complex element types yet: the interpreter suite's complex programs skip.
  const Status complex = ParseStableHlo(R"mlir(
func.func @main(%a: tensor<3x3xcomplex<f32>>, %b: tensor<3x1xcomplex<f32>>) -> tensor<3x1xcomplex<f32>> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose ADJOINT>} : (tensor<3x3xcomplex<f32>>, tensor<3x1xcomplex<f32>>) -> tensor<3x1xcomplex<f32>>
  func.return %0 : tensor<3x1xcomplex<f32>>
}
)mlir").status();
  EXPECT_EQ(complex.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(complex.message(), HasSubstr("complex"));
}

}  // namespace
}  // namespace accy
