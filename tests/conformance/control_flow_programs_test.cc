// Programs with map, composite, optimization_barrier, real/imag of floats, count_leading_zeros
// and the dynamic-shape
// ops whose shape operands are constants (issue 18), run through the JIT with the suite's check
// ops: the values each op must give (spec "map", "composite", "optimization_barrier",
// "count_leading_zeros", "dynamic_iota", "dynamic_reshape", "dynamic_broadcast_in_dim",
// "dynamic_pad", "dynamic_gather", "get_dimension_size"), and a wrong expectation failing.
#include <string_view>

#include "accy/stablehlo.h"
#include "gtest/gtest.h"
#include "src/stablehlo/conformance.h"
#include "tests/test_util.h"

namespace accy {
namespace {

ConformanceResult RunText(std::string_view text) {
  auto engine = Engine::Create(SingleThreadEngineOptions());
  EXPECT_TRUE(engine.ok()) << engine.status();
  return RunConformanceProgram(**engine, "test.mlir", text);
}

void ExpectPass(std::string_view text, int checks) {
  const ConformanceResult result = RunText(text);
  EXPECT_EQ(result.outcome, ConformanceOutcome::kPass) << result.detail;
  EXPECT_EQ(result.checks, checks);
}

TEST(MapProgramTest, ComputationOfElementwiseOpsAndConstantsMapsEveryElement) {
  // f(a, b) = select(a < b, a * b + 3, b - a) on every element.
  ExpectPass(R"mlir(
func.func @map_f32() {
  %a = stablehlo.constant dense<[[0.5, 4.0, -2.0], [1.0, 7.0, 3.0]]> : tensor<2x3xf32>
  %b = stablehlo.constant dense<[[2.0, 1.0, -1.0], [1.0, 8.0, 0.0]]> : tensor<2x3xf32>
  %r = "stablehlo.map"(%a, %b) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %c = stablehlo.constant dense<3.0> : tensor<f32>
      %m = stablehlo.multiply %x, %y : tensor<f32>
      %s = stablehlo.add %m, %c : tensor<f32>
      %d = stablehlo.subtract %y, %x : tensor<f32>
      %lt = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %v = stablehlo.select %lt, %s, %d : tensor<i1>, tensor<f32>
      stablehlo.return %v : tensor<f32>
  }) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  check.expect_eq_const %r, dense<[[4.0, -3.0, 5.0], [0.0, 59.0, -3.0]]> : tensor<2x3xf32>
  func.return
}
)mlir", 1);
}

TEST(MapProgramTest, ConvertingComputationGivesItsOwnElementType) {
  ExpectPass(R"mlir(
func.func @map_convert() {
  %a = stablehlo.constant dense<[1, -2, 300]> : tensor<3xi32>
  %r = "stablehlo.map"(%a) ({
    ^bb0(%x: tensor<i32>):
      %f = stablehlo.convert %x : (tensor<i32>) -> tensor<f64>
      %h = stablehlo.constant dense<0.5> : tensor<f64>
      %p = stablehlo.multiply %f, %h : tensor<f64>
      stablehlo.return %p : tensor<f64>
  }) {dimensions = array<i64: 0>} : (tensor<3xi32>) -> tensor<3xf64>
  check.expect_eq_const %r, dense<[0.5, -1.0, 150.0]> : tensor<3xf64>
  func.return
}
)mlir", 1);
}

TEST(MapProgramTest, ComputationReadsRankZeroValuesFromOutside) {
  // StableHLO regions are not isolated from above: %half and %bias are read inside.
  ExpectPass(R"mlir(
func.func @map_outer() {
  %a = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %half = stablehlo.constant dense<0.5> : tensor<f32>
  %bias = stablehlo.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %b0 = stablehlo.slice %bias [0:1] : (tensor<2xf32>) -> tensor<1xf32>
  %b = stablehlo.reshape %b0 : (tensor<1xf32>) -> tensor<f32>
  %r = "stablehlo.map"(%a) ({
    ^bb0(%x: tensor<f32>):
      %m = stablehlo.multiply %x, %half : tensor<f32>
      %s = stablehlo.add %m, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {dimensions = array<i64: 0, 1>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  check.expect_eq_const %r, dense<[[10.5, 11.0], [11.5, 12.0]]> : tensor<2x2xf32>
  func.return
}
)mlir", 1);
}

TEST(MapProgramTest, WrongExpectationFails) {
  const ConformanceResult result = RunText(R"mlir(
func.func @map_wrong() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %r = "stablehlo.map"(%a, %a) ({
    ^bb0(%x: tensor<i64>, %y: tensor<i64>):
      %m = stablehlo.multiply %x, %y : tensor<i64>
      stablehlo.return %m : tensor<i64>
  }) {dimensions = array<i64: 0>} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  check.expect_eq_const %r, dense<[1, 5]> : tensor<2xi64>
  func.return
}
)mlir");
  EXPECT_EQ(result.outcome, ConformanceOutcome::kFail);
  EXPECT_EQ(result.detail, "expect_eq_const at 9:3: element 1 [1]: got 4, expected 5");
}

TEST(CompositeProgramTest, DecompositionIsInlinedInPrettyAndGenericForms) {
  ExpectPass(R"mlir(
func.func private @scale_add.impl(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %two = stablehlo.constant dense<2.0> : tensor<3xf32>
  %m = stablehlo.multiply %x, %two : tensor<3xf32>
  %s = stablehlo.add %m, %y : tensor<3xf32>
  func.return %s : tensor<3xf32>
}
func.func @main() {
  %a = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = stablehlo.constant dense<[0.5, 0.25, -1.0]> : tensor<3xf32>
  %r = stablehlo.composite "my.scale_add" %a, %b {
    composite_attributes = {scale = 2.0 : f32}, decomposition = @scale_add.impl, version = 1 : i32
  } : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %g = "stablehlo.composite"(%r, %b) {name = "my.scale_add", decomposition = @scale_add.impl} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  check.expect_eq_const %r, dense<[2.5, 4.25, 5.0]> : tensor<3xf32>
  check.expect_eq_const %g, dense<[5.5, 8.75, 9.0]> : tensor<3xf32>
  func.return
}
)mlir", 2);
}

TEST(OptimizationBarrierProgramTest, ResultsAreTheOperands) {
  ExpectPass(R"mlir(
func.func @barrier() {
  %a = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %b = stablehlo.constant dense<7> : tensor<i32>
  %r:2 = stablehlo.optimization_barrier %a, %b : tensor<2xf32>, tensor<i32>
  %g = "stablehlo.optimization_barrier"(%r#0) : (tensor<2xf32>) -> tensor<2xf32>
  %n = stablehlo.negate %g : tensor<2xf32>
  check.expect_eq_const %n, dense<[-1.5, 2.0]> : tensor<2xf32>
  check.expect_eq_const %r#1, dense<7> : tensor<i32>
  func.return
}
)mlir", 2);
}

// real(x) = x and imag(x) = 0 for floating-point x (spec "real", "imag"), bf16 and f64 too; imag
// is zero for every element, -0.0 and NaN included (expect_eq_const compares with IEEE ==, so
// it does not tell +0.0 from -0.0).
TEST(RealImagProgramTest, RealIsTheOperandAndImagIsZeroForFloats) {
  ExpectPass(R"mlir(
func.func @real_imag() {
  %a = stablehlo.constant dense<[1.5, -0.0, 0x7FF8000000000000]> : tensor<3xf64>
  %re = stablehlo.real %a : tensor<3xf64>
  %im = stablehlo.imag %a : tensor<3xf64>
  %b = stablehlo.constant dense<[[2.0, -3.0]]> : tensor<1x2xbf16>
  %re_b = "stablehlo.real"(%b) : (tensor<1x2xbf16>) -> tensor<1x2xbf16>
  %im_b = "stablehlo.imag"(%b) : (tensor<1x2xbf16>) -> tensor<1x2xbf16>
  %sum = stablehlo.add %re_b, %im_b : tensor<1x2xbf16>
  check.expect_eq_const %re, dense<[1.5, -0.0, 0x7FF8000000000000]> : tensor<3xf64>
  check.expect_eq_const %im, dense<0.0> : tensor<3xf64>
  check.expect_eq_const %sum, dense<[[2.0, -3.0]]> : tensor<1x2xbf16>
  func.return
}
)mlir", 3);
}

TEST(CountLeadingZerosProgramTest, CountsWithinTheElementWidth) {
  ExpectPass(R"mlir(
func.func @clz() {
  %a = stablehlo.constant dense<[0, 1, 128, 255, 16]> : tensor<5xui8>
  %b = stablehlo.constant dense<[0, -1, 1, 65536, 2147483647]> : tensor<5xi32>
  %c = stablehlo.constant dense<[0, 1, -9223372036854775808, 4294967296, 3]> : tensor<5xi64>
  %ra = stablehlo.count_leading_zeros %a : tensor<5xui8>
  %rb = stablehlo.count_leading_zeros %b : tensor<5xi32>
  %rc = stablehlo.count_leading_zeros %c : tensor<5xi64>
  check.expect_eq_const %ra, dense<[8, 7, 0, 0, 3]> : tensor<5xui8>
  check.expect_eq_const %rb, dense<[32, 0, 31, 15, 1]> : tensor<5xi32>
  check.expect_eq_const %rc, dense<[64, 63, 0, 31, 62]> : tensor<5xi64>
  func.return
}
)mlir", 3);
}

TEST(DynamicShapeProgramTest, ConstantShapeOperandsFoldToTheStaticOps) {
  ExpectPass(R"mlir(
func.func @dynamic() {
  %shape = stablehlo.constant dense<[2, 3]> : tensor<2xi32>
  %iota = stablehlo.dynamic_iota %shape, dim = 1 : (tensor<2xi32>) -> tensor<2x3xi64>
  check.expect_eq_const %iota, dense<[[0, 1, 2], [0, 1, 2]]> : tensor<2x3xi64>
  %flat_shape = stablehlo.constant dense<[6]> : tensor<1xi64>
  %flat = stablehlo.dynamic_reshape %iota, %flat_shape : (tensor<2x3xi64>, tensor<1xi64>) -> tensor<6xi64>
  check.expect_eq_const %flat, dense<[0, 1, 2, 0, 1, 2]> : tensor<6xi64>
  %out = stablehlo.constant dense<[2, 2, 3]> : tensor<3xui32>
  %bcast = stablehlo.dynamic_broadcast_in_dim %iota, %out, dims = [0, 2] {known_expanding_dimensions = array<i64: 1>} : (tensor<2x3xi64>, tensor<3xui32>) -> tensor<2x2x3xi64>
  check.expect_eq_const %bcast, dense<[[[0, 1, 2], [0, 1, 2]], [[0, 1, 2], [0, 1, 2]]]> : tensor<2x2x3xi64>
  %pv = stablehlo.constant dense<9> : tensor<i64>
  %lo = stablehlo.constant dense<[0, -1]> : tensor<2xi64>
  %hi = stablehlo.constant dense<[1, 0]> : tensor<2xi64>
  %in = stablehlo.constant dense<[0, 1]> : tensor<2xi64>
  %pad = stablehlo.dynamic_pad %iota, %pv, %lo, %hi, %in : (tensor<2x3xi64>, tensor<i64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x4xi64>
  check.expect_eq_const %pad, dense<[[9, 1, 9, 2], [9, 1, 9, 2], [9, 9, 9, 9]]> : tensor<3x4xi64>
  %size = stablehlo.get_dimension_size %pad, dim = 1 : (tensor<3x4xi64>) -> tensor<i32>
  check.expect_eq_const %size, dense<4> : tensor<i32>
  %indices = stablehlo.constant dense<[[1], [0]]> : tensor<2x1xi64>
  %sizes = stablehlo.constant dense<[1, 4]> : tensor<2xi64>
  %rows = "stablehlo.dynamic_gather"(%pad, %indices, %sizes) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>} : (tensor<3x4xi64>, tensor<2x1xi64>, tensor<2xi64>) -> tensor<2x4xi64>
  check.expect_eq_const %rows, dense<[[9, 1, 9, 2], [9, 1, 9, 2]]> : tensor<2x4xi64>
  func.return
}
)mlir", 6);
}

}  // namespace
}  // namespace accy
