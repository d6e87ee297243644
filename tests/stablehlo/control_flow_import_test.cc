// Import of map, composite, optimization_barrier and the dynamic-shape ops with constant shape
// operands (issue 18): what each becomes in the IR (no op of its own: inlined, forwarded or
// folded), and the error of every bad or unsupported form, with its location. Their values are
// checked by tests/conformance/control_flow_programs_test.cc.
#include <memory>
#include <optional>
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

std::vector<OpKind> Kinds(const Module& module) {
  std::vector<OpKind> kinds;
  for (const auto& op : module.functions().front()->entry_block()->operations()) {
    kinds.push_back(op->kind());
  }
  return kinds;
}

void ExpectError(const std::string& text, absl::StatusCode code, const std::string& message) {
  const Status status = ParseStableHlo(text).status();
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(message)) << status;
}

TEST(MapImportTest, ComputationBecomesElementwiseOpsOnTheOperands) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "stablehlo.map"(%a, %b) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %c = stablehlo.constant dense<3.0> : tensor<f32>
      %m = stablehlo.multiply %x, %y : tensor<f32>
      %s = stablehlo.add %m, %c : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
)mlir"));
  EXPECT_EQ(Kinds(*module),
            (std::vector<OpKind>{OpKind::kConstant, OpKind::kBroadcastInDim, OpKind::kMultiply,
                                 OpKind::kAdd, OpKind::kReturn}));
  const Function& main = *module->functions().front();
  const Operation& add = *main.entry_block()->operations()[3];
  EXPECT_EQ(add.result(0)->type().ToString(), "tensor<2x3xf32>");
  ExpectRoundTrip(*module);
}

TEST(MapImportTest, BadFormsFailNamingTheProblem) {
  const auto map = [](const std::string& dims, const std::string& args, const std::string& body,
                      const std::string& b_type = "tensor<2xi32>") {
    return "func.func @main(%a: tensor<2xi32>, %b: " + b_type + ") -> tensor<2xi32> {\n" +
           "  %r = \"stablehlo.map\"(%a, %b) ({\n    ^bb0(" + args + "):\n" + body +
           "  }) {dimensions = array<i64: " + dims + ">} : (tensor<2xi32>, " + b_type +
           ") -> tensor<2xi32>\n  func.return %r : tensor<2xi32>\n}\n";
  };
  const std::string args = "%x: tensor<i32>, %y: tensor<i32>";
  const std::string add =
      "      %s = stablehlo.add %x, %y : tensor<i32>\n      stablehlo.return %s : tensor<i32>\n";
  ASSERT_OK(ParseStableHlo(map("0", args, add)).status());
  ExpectError(map("1", args, add), absl::StatusCode::kInvalidArgument,
              "stablehlo.map needs dimensions = array<i64: 0> (every dimension of its operands");
  ExpectError(map("0", args, add, "tensor<3xi32>"), absl::StatusCode::kInvalidArgument,
              "stablehlo.map operand 1 has type tensor<3xi32>, operand 0 tensor<2xi32>; all "
              "must have one shape");
  ExpectError(map("0", "%x: tensor<i32>, %y: tensor<f32>", add),
              absl::StatusCode::kInvalidArgument,
              "the stablehlo.map computation's argument 1 has type tensor<f32>, expected the "
              "rank-0 tensor of operand 1's element type");
  ExpectError(map("0", "%x: tensor<i32>", add), absl::StatusCode::kInvalidArgument,
              "the stablehlo.map computation takes 1 arguments for 2 operands");
  // %b is the whole tensor<2xi32> operand, read from inside the scalar computation.
  ExpectError(map("0", args,
                  "      %s = stablehlo.add %x, %b : tensor<i32>\n"
                  "      stablehlo.return %s : tensor<i32>\n"),
              absl::StatusCode::kInvalidArgument,
              "4:30: the stablehlo.map computation reads %b of type tensor<2xi32> from outside "
              "it; it maps rank-0 tensors, so only rank-0 values may be read from outside");
  ExpectError(map("0", args,
                  "      %s = stablehlo.reshape %x : (tensor<i32>) -> tensor<i32>\n"
                  "      stablehlo.return %s : tensor<i32>\n"),
              absl::StatusCode::kUnimplemented,
              "4:12: 'stablehlo.reshape' in a stablehlo.map computation is not supported");
  ExpectError(map("0", args,
                  "      %s = stablehlo.broadcast_in_dim %x, dims = [] : (tensor<i32>) -> "
                  "tensor<2xi32>\n      stablehlo.return %s : tensor<2xi32>\n"),
              absl::StatusCode::kInvalidArgument,
              "'stablehlo.broadcast_in_dim' in a stablehlo.map computation works on tensors of "
              "rank > 0");
  ExpectError(map("0", args,
                  "      %s = stablehlo.compare LT, %x, %y : (tensor<i32>, tensor<i32>) -> "
                  "tensor<i1>\n      stablehlo.return %s : tensor<i1>\n"),
              absl::StatusCode::kInvalidArgument,
              "the stablehlo.map computation returns 1 values; the map needs one of type "
              "tensor<2xi32>");
}

TEST(CompositeImportTest, DecompositionIsInlined) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = stablehlo.composite "my.double" %a {decomposition = @double.impl} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func private @double.impl(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = stablehlo.add %x, %x : tensor<4xf32>
  func.return %s : tensor<4xf32>
}
)mlir"));
  ASSERT_EQ(module->functions().size(), 1u);
  EXPECT_EQ(Kinds(*module), (std::vector<OpKind>{OpKind::kAdd, OpKind::kReturn}));
  // The inlined ops carry the composite's name; the return is the function's own.
  const auto& ops = module->functions().front()->entry_block()->operations();
  EXPECT_EQ(ops[0]->GetString(kCompositeAttribute), "my.double");
  EXPECT_EQ(ops[1]->GetString(kCompositeAttribute), std::nullopt);
}

// Nested composites: the ops of the inner decomposition keep the inner name, the outer
// decomposition's own ops get the outer one; ops outside any composite get none.
TEST(CompositeImportTest, NestedCompositesKeepTheInnermostName) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = stablehlo.composite "outer.op" %a {decomposition = @outer} : (tensor<4xf32>) -> tensor<4xf32>
  %n = stablehlo.negate %r : tensor<4xf32>
  func.return %n : tensor<4xf32>
}
func.func private @outer(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = stablehlo.exponential %x : tensor<4xf32>
  %i = stablehlo.composite "inner.op" %e {decomposition = @inner, version = 2 : i32} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %i : tensor<4xf32>
}
func.func private @inner(%y: tensor<4xf32>) -> tensor<4xf32> {
  %t = stablehlo.tanh %y : tensor<4xf32>
  func.return %t : tensor<4xf32>
}
)mlir"));
  EXPECT_EQ(Kinds(*module), (std::vector<OpKind>{OpKind::kExponential, OpKind::kTanh,
                                                 OpKind::kNegate, OpKind::kReturn}));
  const auto& ops = module->functions().front()->entry_block()->operations();
  EXPECT_EQ(ops[0]->GetString(kCompositeAttribute), "outer.op");
  EXPECT_EQ(ops[1]->GetString(kCompositeAttribute), "inner.op");
  EXPECT_EQ(ops[2]->GetString(kCompositeAttribute), std::nullopt);
}

TEST(CompositeImportTest, BadFormsFailNamingTheProblem) {
  const std::string impl =
      "func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %s = stablehlo.add %x, %x : tensor<4xf32>\n  func.return %s : tensor<4xf32>\n}\n";
  const auto main = [&](const std::string& op) {
    return "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %r = " + op +
           "\n  func.return %r : tensor<4xf32>\n}\n" + impl;
  };
  ExpectError(main("stablehlo.composite \"c\" %a {} : (tensor<4xf32>) -> tensor<4xf32>"),
              absl::StatusCode::kInvalidArgument,
              "2:8: stablehlo.composite needs a decomposition symbol (@name)");
  ExpectError(main("stablehlo.composite \"c\" %a {decomposition = @g} : (tensor<4xf32>) -> "
                   "tensor<4xf32>"),
              absl::StatusCode::kInvalidArgument, "call to undefined function @g");
  ExpectError(main("\"stablehlo.composite\"(%a) {decomposition = @f} : (tensor<4xf32>) -> "
                   "tensor<4xf32>"),
              absl::StatusCode::kInvalidArgument,
              "2:8: stablehlo.composite needs a name string");
  ExpectError(main("stablehlo.composite \"c\" %a {decomposition = @f, version = \"1\"} : "
                   "(tensor<4xf32>) -> tensor<4xf32>"),
              absl::StatusCode::kInvalidArgument,
              "stablehlo.composite's version must be an integer");
  ExpectError(main("stablehlo.composite \"c\" %a {decomposition = @f} : (tensor<4xf32>) -> "
                   "tensor<2xf32>"),
              absl::StatusCode::kInvalidArgument,
              "the composite \"c\" (decomposition @f) does not match the signature of @f");
  ExpectError(main("stablehlo.composite %a {decomposition = @f} : (tensor<4xf32>) -> "
                   "tensor<4xf32>"),
              absl::StatusCode::kInvalidArgument, "the composite's name (a string)");
  // A decomposition that reaches its own composite.
  ExpectError(
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %r = stablehlo.composite \"c\" %a {decomposition = @f} : (tensor<4xf32>) -> "
      "tensor<4xf32>\n  func.return %r : tensor<4xf32>\n}\n"
      "func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %s = stablehlo.composite \"c\" %x {decomposition = @f} : (tensor<4xf32>) -> "
      "tensor<4xf32>\n  func.return %s : tensor<4xf32>\n}\n",
      absl::StatusCode::kUnimplemented,
      "6:8: the composite \"c\" (decomposition @f) is recursive: @f is already being inlined");
}

TEST(OptimizationBarrierImportTest, ResultsAreTheOperandsAndBadFormsFail) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @main(%a: tensor<2xf32>, %b: tensor<i32>) -> (tensor<2xf32>, tensor<i32>) {
  %r:2 = stablehlo.optimization_barrier %a, %b : tensor<2xf32>, tensor<i32>
  func.return %r#0, %r#1 : tensor<2xf32>, tensor<i32>
}
)mlir"));
  const Function& main = *module->functions().front();
  ASSERT_EQ(Kinds(*module), (std::vector<OpKind>{OpKind::kReturn}));
  const Operation& ret = *main.entry_block()->operations().front();
  EXPECT_EQ(ret.operand(0), main.parameter(0));
  EXPECT_EQ(ret.operand(1), main.parameter(1));
  ExpectError(R"mlir(
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.optimization_barrier"(%a) : (tensor<2xf32>) -> tensor<2xi32>
  func.return %a : tensor<2xf32>
}
)mlir",
              absl::StatusCode::kInvalidArgument,
              "3:8: stablehlo.optimization_barrier result 0 has type tensor<2xi32>, its operand "
              "tensor<2xf32>");
  ExpectError(R"mlir(
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r:2 = "stablehlo.optimization_barrier"(%a) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %a : tensor<2xf32>
}
)mlir",
              absl::StatusCode::kInvalidArgument,
              "stablehlo.optimization_barrier has 1 operands and 2 results");
}

// real of a float is its operand and imag a broadcast zero; integer operands, mismatched types
// and wrong operand counts fail naming the op.
TEST(RealImagImportTest, FloatOperandsBecomeTheOperandOrAZeroAndBadFormsFail) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @main(%a: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %r = stablehlo.real %a : tensor<2x3xf32>
  %i = stablehlo.imag %a : tensor<2x3xf32>
  func.return %r, %i : tensor<2x3xf32>, tensor<2x3xf32>
}
)mlir"));
  EXPECT_EQ(Kinds(*module), (std::vector<OpKind>{OpKind::kConstant, OpKind::kBroadcastInDim,
                                                 OpKind::kReturn}));
  const Function& main = *module->functions().front();
  const Operation& ret = *main.entry_block()->terminator();
  EXPECT_EQ(ret.operand(0), main.entry_block()->argument(0));
  ExpectRoundTrip(*module);

  ExpectError(R"mlir(
func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {
  %r = stablehlo.real %a : tensor<2xi32>
  func.return %r : tensor<2xi32>
}
)mlir", absl::StatusCode::kInvalidArgument,
              "3:8: stablehlo.real of tensor<2xi32>: the operand must be floating-point or "
              "complex");
  ExpectError(R"mlir(
func.func @main(%a: tensor<2xf32>) -> tensor<2xf64> {
  %r = "stablehlo.imag"(%a) : (tensor<2xf32>) -> tensor<2xf64>
  func.return %r : tensor<2xf64>
}
)mlir", absl::StatusCode::kInvalidArgument,
              "stablehlo.imag of tensor<2xf32> has result type tensor<2xf64>, expected the "
              "operand's type");
  ExpectError(R"mlir(
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.real"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
)mlir", absl::StatusCode::kInvalidArgument, "takes one operand and has one result, found 2 and 1");
}

TEST(TupleImportTest, TuplesAreFlattenedAndElementsNameTheirValues) {
  // Nested tuples, an empty one, and get_tuple_element of a tensor and of a tuple: no op of
  // their own; the results are the values the tuples were made of.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @main(%a: tensor<2xf64>, %b: tensor<i64>) -> (tensor<i64>, tensor<2xf64>) {
  %inner = stablehlo.tuple %b : tuple<tensor<i64>>
  %none = stablehlo.tuple : tuple<>
  %t = stablehlo.tuple %a, %inner, %none {attr = 1 : i64} : tuple<tensor<2xf64>, tuple<tensor<i64>>, tuple<>>
  %x = stablehlo.get_tuple_element %t[0] : (tuple<tensor<2xf64>, tuple<tensor<i64>>, tuple<>>) -> tensor<2xf64>
  %u = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2xf64>, tuple<tensor<i64>>, tuple<>>) -> tuple<tensor<i64>>
  %y = stablehlo.get_tuple_element %u[0] : (tuple<tensor<i64>>) -> tensor<i64>
  func.return %y, %x : tensor<i64>, tensor<2xf64>
}
)mlir"));
  const Function& main = *module->functions().front();
  ASSERT_EQ(Kinds(*module), (std::vector<OpKind>{OpKind::kReturn}));
  const Operation& ret = *main.entry_block()->operations().front();
  EXPECT_EQ(ret.operand(0), main.parameter(1));
  EXPECT_EQ(ret.operand(1), main.parameter(0));
}

TEST(TupleImportTest, BadTupleFormsAndUsesFailNamingWhy) {
  const std::string head =
      "func.func @main(%a: tensor<2xf32>, %b: tensor<i32>) -> tensor<2xf32> {\n";
  const std::string tail = "  func.return %a : tensor<2xf32>\n}\n";
  // The declared type disagrees with the operands.
  ExpectError(head + "  %t = stablehlo.tuple %a, %b : tuple<tensor<2xf32>, tensor<i64>>\n" + tail,
              absl::StatusCode::kInvalidArgument,
              "2:8: stablehlo.tuple's type is tuple<tensor<2xf32>, tensor<i64>> but its operands "
              "make tuple<tensor<2xf32>, tensor<i32>> (spec \"tuple\" C1)");
  ExpectError(head + "  %t = stablehlo.tuple %a : tensor<2xf32>\n" + tail,
              absl::StatusCode::kInvalidArgument,
              "stablehlo.tuple's type is tensor<2xf32>, not a tuple type");
  const std::string make = "  %t = stablehlo.tuple %a, %b : tuple<tensor<2xf32>, tensor<i32>>\n";
  const std::string tuple_type = "(tuple<tensor<2xf32>, tensor<i32>>)";
  // Index out of range, wrong result type, wrong operand type, an operand that is no tuple.
  ExpectError(head + make + "  %x = stablehlo.get_tuple_element %t[2] : " + tuple_type +
                  " -> tensor<i32>\n" + tail,
              absl::StatusCode::kInvalidArgument,
              "3:39: get_tuple_element index 2 is outside [0, 2) for tuple<tensor<2xf32>, "
              "tensor<i32>> (spec \"get_tuple_element\" C1)");
  ExpectError(head + make + "  %x = stablehlo.get_tuple_element %t[1] : " + tuple_type +
                  " -> tensor<2xf32>\n" + tail,
              absl::StatusCode::kInvalidArgument,
              "result type is tensor<2xf32> but element 1 of tuple<tensor<2xf32>, tensor<i32>> "
              "is tensor<i32> (spec \"get_tuple_element\" C2)");
  ExpectError(head + make +
                  "  %x = stablehlo.get_tuple_element %t[1] : (tuple<tensor<i32>>) -> tensor<i32>\n" +
                  tail,
              absl::StatusCode::kInvalidArgument,
              "operand type is tuple<tensor<i32>> but %t is tuple<tensor<2xf32>, tensor<i32>>");
  ExpectError(head + "  %x = stablehlo.get_tuple_element %a[0] : (tuple<tensor<2xf32>>) -> "
                     "tensor<2xf32>\n" + tail,
              absl::StatusCode::kInvalidArgument,
              "stablehlo.get_tuple_element's operand %a is not a tuple");
  ExpectError(head + "  %x = stablehlo.get_tuple_element %q[0] : (tuple<tensor<2xf32>>) -> "
                     "tensor<2xf32>\n" + tail,
              absl::StatusCode::kInvalidArgument, "use of undefined value %q");
  // A tuple anywhere else: in another op, a return, a signature, a generic form.
  ExpectError(head + make + "  %y = stablehlo.add %t, %t : tensor<2xf32>\n" + tail,
              absl::StatusCode::kUnimplemented,
              "3:22: %t is a tuple: accy flattens tuples at import, so only stablehlo.tuple and "
              "stablehlo.get_tuple_element may take one");
  ExpectError("func.func @main(%a: tensor<2xf32>) -> tuple<tensor<2xf32>> {\n"
              "  %t = stablehlo.tuple %a : tuple<tensor<2xf32>>\n"
              "  func.return %t : tuple<tensor<2xf32>>\n}\n",
              absl::StatusCode::kUnimplemented,
              "tuple types are supported only as the types of stablehlo.tuple and "
              "stablehlo.get_tuple_element");
  ExpectError(head + "  %t = \"stablehlo.tuple\"(%a) : (tensor<2xf32>) -> tuple<tensor<2xf32>>\n" +
                  tail,
              absl::StatusCode::kUnimplemented, "tuple types are supported only");
  // Malformed tuple types.
  ExpectError(head + "  %t = stablehlo.tuple %a : tuple<tensor<2xf32>\n" + tail,
              absl::StatusCode::kInvalidArgument, "',' or '>' in the tuple type");
  ExpectError(head + "  %t = stablehlo.tuple %a : tuple tensor<2xf32>\n" + tail,
              absl::StatusCode::kInvalidArgument, "'<' after tuple");
}

TEST(DynamicShapeImportTest, ConstantShapesFoldToStaticOps) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @main(%a: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<2x3xi32>, tensor<i32>) {
  %shape = stablehlo.constant dense<[6]> : tensor<1xi64>
  %flat = stablehlo.dynamic_reshape %a, %shape : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
  %dims = stablehlo.constant dense<[2, 3]> : tensor<2xi32>
  %iota = stablehlo.dynamic_iota %dims, dim = 0 : (tensor<2xi32>) -> tensor<2x3xi32>
  %size = stablehlo.get_dimension_size %a, dim = 0 : (tensor<2x3xf32>) -> tensor<i32>
  func.return %flat, %iota, %size : tensor<6xf32>, tensor<2x3xi32>, tensor<i32>
}
)mlir"));
  EXPECT_EQ(Kinds(*module),
            (std::vector<OpKind>{OpKind::kConstant, OpKind::kReshape, OpKind::kConstant,
                                 OpKind::kIota, OpKind::kConstant, OpKind::kReturn}));
  const Operation& iota = *module->functions().front()->entry_block()->operations()[3];
  EXPECT_EQ(iota.GetInt("iota_dimension"), 0);
  const Operation& size = *module->functions().front()->entry_block()->operations()[4];
  const DenseElements* value = size.GetDense("value");
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(value->bytes, (std::vector<uint8_t>{2, 0, 0, 0}));
}

TEST(DynamicShapeImportTest, BroadcastExpansionHintsParseAndAreChecked) {
  // The spec's example of dynamic_broadcast_in_dim, in the pretty form.
  const auto program = [](const std::string& hints) {
    return "func.func @main(%x: tensor<1x3xi64>) -> tensor<2x3x2xi64> {\n"
           "  %d = stablehlo.constant dense<[2, 3, 2]> : tensor<3xi64>\n"
           "  %r = stablehlo.dynamic_broadcast_in_dim %x, %d, dims = [2, 1]" + hints +
           " : (tensor<1x3xi64>, tensor<3xi64>) -> tensor<2x3x2xi64>\n"
           "  func.return %r : tensor<2x3x2xi64>\n}\n";
  };
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                       ParseStableHlo(program(", known_expanding_dimensions = [0], "
                                              "known_nonexpanding_dimensions = [1]")));
  EXPECT_EQ(Kinds(*module), (std::vector<OpKind>{OpKind::kConstant, OpKind::kBroadcastInDim,
                                                 OpKind::kReturn}));
  ExpectError(program(", known_expanding_dimensions = [1], known_nonexpanding_dimensions = [1]"),
              absl::StatusCode::kInvalidArgument,
              "dim 1 is named twice in known_expanding_dimensions and "
              "known_nonexpanding_dimensions");
  ExpectError(program(", known_expanding_dimensions = [5]"), absl::StatusCode::kInvalidArgument,
              "known_expanding_dimensions names dim 5, outside [0, 2) of the operand "
              "tensor<1x3xi64>");
  ExpectError(program(", known_sizes = [0]"), absl::StatusCode::kInvalidArgument,
              "known_expanding_dimensions or known_nonexpanding_dimensions");
}

TEST(DynamicShapeImportTest, BadOrNonConstantShapesFailNamingTheProblem) {
  ExpectError(R"mlir(
func.func @main(%a: tensor<2x3xf32>, %shape: tensor<1xi64>) -> tensor<6xf32> {
  %flat = stablehlo.dynamic_reshape %a, %shape : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
  func.return %flat : tensor<6xf32>
}
)mlir",
              absl::StatusCode::kUnimplemented,
              "3:41: stablehlo.dynamic_reshape: its output_shape is not a constant, which is not "
              "supported");
  ExpectError(R"mlir(
func.func @main() -> tensor<2x3xi32> {
  %dims = stablehlo.constant dense<[3, 2]> : tensor<2xi32>
  %iota = stablehlo.dynamic_iota %dims, dim = 0 : (tensor<2xi32>) -> tensor<2x3xi32>
  func.return %iota : tensor<2x3xi32>
}
)mlir",
              absl::StatusCode::kInvalidArgument,
              "4:11: stablehlo.dynamic_iota's output_shape is [3, 2], its result type "
              "tensor<2x3xi32>");
  ExpectError(R"mlir(
func.func @main() -> tensor<2x3xi32> {
  %dims = stablehlo.constant dense<[[2, 3]]> : tensor<1x2xi32>
  %iota = stablehlo.dynamic_iota %dims, dim = 0 : (tensor<1x2xi32>) -> tensor<2x3xi32>
  func.return %iota : tensor<2x3xi32>
}
)mlir",
              absl::StatusCode::kInvalidArgument,
              "stablehlo.dynamic_iota's output_shape has type tensor<1x2xi32>, expected a 1-D "
              "integer tensor");
  ExpectError(R"mlir(
func.func @main(%a: tensor<2x3xf32>) -> tensor<i32> {
  %size = stablehlo.get_dimension_size %a, dim = 2 : (tensor<2x3xf32>) -> tensor<i32>
  func.return %size : tensor<i32>
}
)mlir",
              absl::StatusCode::kInvalidArgument,
              "get_dimension_size needs a dimension in [0, 2) of tensor<2x3xf32>");
  ExpectError(R"mlir(
func.func @main(%a: tensor<2x3xf32>) -> tensor<i64> {
  %size = stablehlo.get_dimension_size %a, dim = 1 : (tensor<2x3xf32>) -> tensor<i64>
  func.return %size : tensor<i64>
}
)mlir",
              absl::StatusCode::kInvalidArgument,
              "get_dimension_size gives tensor<i32>, the text says tensor<i64>");
  ExpectError(R"mlir(
func.func @main(%a: tensor<2xf32>, %v: tensor<f32>) -> tensor<2xf32> {
  %z = stablehlo.constant dense<0> : tensor<1xi64>
  %p = stablehlo.dynamic_pad %a, %v, %z, %z : (tensor<2xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>
  func.return %p : tensor<2xf32>
}
)mlir",
              absl::StatusCode::kInvalidArgument,
              "stablehlo.dynamic_pad takes 5 operands and gives one result, found 4 and 1");
}

}  // namespace
}  // namespace accy
