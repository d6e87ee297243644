// Targeted syntax tests of the StableHLO parser: each spelling (JAX module framing, pretty and
// generic op forms, attributes, dense literals, calls, checks, split files) read into the exact
// IR expected (op kinds, attributes, types, constant bytes).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/ir.h"
#include "accy/stablehlo.h"
#include "accy/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<OpKind> KindsOf(const Block& block) {
  std::vector<OpKind> kinds;
  for (const auto& op : block.operations()) kinds.push_back(op->kind());
  return kinds;
}

const Operation& OpAt(const Module& module, size_t index) {
  return *module.functions()[0]->entry_block()->operations()[index];
}

// The constant bytes of `text`'s `%0 = stablehlo.constant <literal> : <type>`.
StatusOr<std::vector<uint8_t>> ConstantBytes(const std::string& literal, const std::string& type) {
  const std::string text = "func.func @f() -> " + type + " {\n  %0 = stablehlo.constant " +
                           literal + " : " + type + "\n  return %0 : " + type + "\n}\n";
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseStableHlo(text));
  return OpAt(*module, 0).GetDense("value")->bytes;
}

TEST(SyntaxTest, JaxModuleWithAttributesLocationsAndInlinedCalls) {
  const char* text = R"mlir(#loc1 = loc("x")
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf32> {mhlo.sharding = "{replicated}"} loc("x")) -> (tensor<2xf32> {jax.result_info = ""}) {
    %0 = call @helper(%arg0) : (tensor<2xf32>) -> tensor<2xf32> loc(#loc1)
    %1 = func.call @helper(%0) : (tensor<2xf32>) -> tensor<2xf32>
    return %1 : tensor<2xf32> loc(fused[#loc1, "y"])
  } loc(#loc1)
  func.func private @helper(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %c = stablehlo.constant dense<2.0> : tensor<2xf32>
    %0 = stablehlo.multiply %arg0, %c : tensor<2xf32>
    func.return %0 : tensor<2xf32>
  }
}
#loc2 = loc(callsite(#loc1 at "z":1:2))
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  EXPECT_EQ(module->name(), "jit_f");
  ASSERT_EQ(module->functions().size(), 1u);  // @helper is inlined twice and dropped
  const Function& main = *module->functions()[0];
  EXPECT_TRUE(main.is_public());
  EXPECT_THAT(KindsOf(*main.entry_block()),
              ElementsAre(OpKind::kConstant, OpKind::kMultiply, OpKind::kConstant,
                          OpKind::kMultiply, OpKind::kReturn));
  EXPECT_EQ(OpAt(*module, 3).operand(0), OpAt(*module, 1).result(0));
}

TEST(SyntaxTest, UncalledPrivateFunctionIsKept) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func private @lonely(%a: tensor<i32>) -> tensor<i32> {
  return %a : tensor<i32>
})mlir"));
  ASSERT_EQ(module->functions().size(), 1u);
  EXPECT_FALSE(module->functions()[0]->is_public());
  EXPECT_EQ(module->name(), "");
}

TEST(SyntaxTest, CompareGenericAndPrettyFormsGiveTheSameAttributes) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @f(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xi1>, tensor<3xi1>) {
  %0 = stablehlo.compare  LT, %a, %b,  FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %1 = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0, %1 : tensor<3xi1>, tensor<3xi1>
})mlir"));
  for (size_t i : {0u, 1u}) {
    const Operation& op = OpAt(*module, i);
    EXPECT_EQ(op.kind(), OpKind::kCompare);
    EXPECT_EQ(op.GetString("comparison_direction"), "LT");
    EXPECT_EQ(op.GetString("compare_type"), "FLOAT");
  }
}

TEST(SyntaxTest, ChloElementwiseFormsAndReducePrecisionFormat) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @f(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xi1>) {
  %0 = chlo.lgamma %a : tensor<3xf32> -> tensor<3xf32>
  %1 = chlo.next_after %0, %b : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %2 = chlo.tan %1 : tensor<3xf32> -> tensor<3xf32>
  %3 = "chlo.erf_inv"(%2) : (tensor<3xf32>) -> tensor<3xf32>
  %4 = stablehlo.reduce_precision %3, format = e5m10 : tensor<3xf32>
  %5 = "stablehlo.reduce_precision"(%4) {exponent_bits = 8 : i32, mantissa_bits = 7 : i32} : (tensor<3xf32>) -> tensor<3xf32>
  %6 = chlo.is_inf %5 : tensor<3xf32> -> tensor<3xi1>
  return %5, %6 : tensor<3xf32>, tensor<3xi1>
})mlir"));
  EXPECT_THAT(KindsOf(*module->functions()[0]->entry_block()),
              ElementsAre(OpKind::kLgamma, OpKind::kNextAfter, OpKind::kTan, OpKind::kErfInv,
                          OpKind::kReducePrecision, OpKind::kReducePrecision, OpKind::kIsInf,
                          OpKind::kReturn));
  EXPECT_EQ(OpAt(*module, 4).GetInt("exponent_bits"), 5);
  EXPECT_EQ(OpAt(*module, 4).GetInt("mantissa_bits"), 10);
  EXPECT_EQ(OpAt(*module, 5).GetInt("exponent_bits"), 8);
  EXPECT_EQ(OpAt(*module, 5).GetInt("mantissa_bits"), 7);
  EXPECT_EQ(OpAt(*module, 6).result(0)->type().element_type(), ElementType::kI1);
  const std::string printed = PrintModule(*module);
  EXPECT_THAT(printed, ::testing::HasSubstr("chlo.next_after %0, %arg1 : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>"));
  EXPECT_THAT(printed, ::testing::HasSubstr("stablehlo.tan"));
  EXPECT_THAT(printed, ::testing::HasSubstr("stablehlo.reduce_precision %3, format = e5m10 : tensor<3xf32>"));
}

// chlo.zeta (x, q) and chlo.polygamma (n, x): ChloOps.td's assembly format, the generic form,
// operand order kept, printed back in the pretty form.
TEST(SyntaxTest, ChloZetaAndPolygammaForms) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @f(%x: tensor<2xf64>, %q: tensor<2xf64>) -> tensor<2xf64> {
  %0 = chlo.zeta %x, %q : tensor<2xf64>, tensor<2xf64> -> tensor<2xf64>
  %1 = "chlo.polygamma"(%q, %0) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %2 = chlo.polygamma %1, %x : tensor<2xf64>, tensor<2xf64> -> tensor<2xf64>
  return %2 : tensor<2xf64>
})mlir"));
  EXPECT_THAT(KindsOf(*module->functions()[0]->entry_block()),
              ElementsAre(OpKind::kZeta, OpKind::kPolygamma, OpKind::kPolygamma, OpKind::kReturn));
  EXPECT_EQ(OpAt(*module, 1).operand(0), module->functions()[0]->entry_block()->argument(1));
  const std::string printed = PrintModule(*module);
  EXPECT_THAT(printed, ::testing::HasSubstr(
                           "chlo.zeta %arg0, %arg1 : tensor<2xf64>, tensor<2xf64> -> tensor<2xf64>"));
  EXPECT_THAT(printed, ::testing::HasSubstr(
                           "chlo.polygamma %arg1, %0 : tensor<2xf64>, tensor<2xf64> -> tensor<2xf64>"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> reparsed, ParseStableHlo(printed));
  EXPECT_EQ(PrintModule(*reparsed), printed);
  // Operands of two float types are refused, naming the op.
  const Status mixed = ParseStableHlo(R"mlir(
func.func @f(%x: tensor<2xf64>, %q: tensor<2xf32>) -> tensor<2xf64> {
  %0 = chlo.zeta %x, %q : tensor<2xf64>, tensor<2xf32> -> tensor<2xf64>
  return %0 : tensor<2xf64>
})mlir").status();
  EXPECT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.message(), ::testing::HasSubstr("chlo.zeta"));
}

TEST(SyntaxTest, DotGeneralDimensionsAndPrecision) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %c: tensor<3x4xf32>, %d: tensor<4xf32>) -> (tensor<2x3x5xf32>, tensor<3xf32>) {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, HIGHEST] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = stablehlo.dot %c, %d, precision = [DEFAULT, DEFAULT] : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<2x3x5xf32>, tensor<3xf32>
})mlir"));
  const Operation& batched = OpAt(*module, 0);
  EXPECT_EQ(batched.kind(), OpKind::kDotGeneral);
  EXPECT_THAT(batched.GetInts("lhs_batching_dimensions"), ElementsAre(0));
  EXPECT_THAT(batched.GetInts("rhs_batching_dimensions"), ElementsAre(0));
  EXPECT_THAT(batched.GetInts("lhs_contracting_dimensions"), ElementsAre(2));
  EXPECT_THAT(batched.GetInts("rhs_contracting_dimensions"), ElementsAre(1));
  EXPECT_THAT(batched.GetStrings("precision_config"), ElementsAre("DEFAULT", "HIGHEST"));
  const Operation& dot = OpAt(*module, 1);
  EXPECT_EQ(dot.kind(), OpKind::kDotGeneral);
  EXPECT_THAT(dot.GetInts("lhs_contracting_dimensions"), ElementsAre(1));
  EXPECT_THAT(dot.GetInts("rhs_contracting_dimensions"), ElementsAre(0));
  EXPECT_TRUE(dot.GetInts("lhs_batching_dimensions").empty());
}

// dot_general's algorithm (spec "dot_general"): the algorithms that name what accy computes
// (each operand at its own precision, f32 accumulation, f64 for f64) are accepted in the pretty
// and generic forms and dropped; any other is kUnimplemented naming its fields.
TEST(SyntaxTest, DotGeneralAlgorithmsAccyComputesAreAcceptedOthersNamed) {
  const auto program = [](const std::string& type, const std::string& algorithm, bool generic) {
    const std::string t = "tensor<2x3x" + type + ">";
    const std::string u = "tensor<3x4x" + type + ">";
    const std::string r = "tensor<2x4x" + type + ">";
    const std::string dot =
        generic ? "\"stablehlo.dot_general\"(%a, %b) {dot_dimension_numbers = "
                  "#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = "
                  "[0]>, algorithm = #stablehlo.dot_algorithm<" + algorithm + ">}"
                : "stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <" +
                      algorithm + ">";
    return "func.func @f(%a: " + t + ", %b: " + u + ") -> " + r + " {\n  %0 = " + dot +
           " : (" + t + ", " + u + ") -> " + r + "\n  return %0 : " + r + "\n}\n";
  };
  const auto fields = [](const std::string& lhs, const std::string& rhs,
                         const std::string& accumulation, int components) {
    return "lhs_precision_type = " + lhs + ", rhs_precision_type = " + rhs +
           ", accumulation_type = " + accumulation + ", lhs_component_count = " +
           std::to_string(components) + ", rhs_component_count = " + std::to_string(components) +
           ", num_primitive_operations = 1, allow_imprecise_accumulation = false";
  };
  for (bool generic : {false, true}) {
    SCOPED_TRACE(generic ? "generic" : "pretty");
    for (const auto& [type, accumulation] :
         {std::pair<std::string, std::string>{"f32", "f32"}, {"bf16", "f32"}, {"f16", "f32"},
          {"f64", "f64"}}) {
      SCOPED_TRACE(type);
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                           ParseStableHlo(program(type, fields(type, type, accumulation, 1),
                                                 generic)));
      const Operation& dot = OpAt(*module, 0);
      EXPECT_EQ(dot.kind(), OpKind::kDotGeneral);
      EXPECT_EQ(dot.attribute("algorithm"), nullptr);
      EXPECT_THAT(dot.GetInts("lhs_contracting_dimensions"), ElementsAre(1));
    }
    const auto refused = [&](const std::string& type, const std::string& algorithm,
                             const std::string& message) {
      const Status status = ParseStableHlo(program(type, algorithm, generic)).status();
      EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
      EXPECT_THAT(std::string(status.message()), HasSubstr(message)) << status;
    };
    refused("f32", fields("tf32", "tf32", "f32", 1),
            "dot_general algorithm <lhs_precision_type = tf32, rhs_precision_type = tf32, "
            "accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, "
            "num_primitive_operations = 1> on f32 x f32 operands is not supported: accy computes "
            "each operand at its own precision with f32 accumulation");
    refused("f32", fields("bf16", "bf16", "f32", 3), "lhs_component_count = 3");
    refused("bf16", fields("bf16", "bf16", "bf16", 1), "accumulation_type = bf16");
    refused("f32", fields("f32", "f32", "f32", 1) + ", fast = true",
            "field fast of dot_general's algorithm is not supported");
  }
  EXPECT_EQ(ParseStableHlo(program("f32", "lhs_precision_type = 3", false)).status().code(),
            absl::StatusCode::kInvalidArgument);  // a type field that is a number

  // BF16_BF16_F32 on f32 operands: both operands converted to bf16, the product f32.
  for (bool generic : {false, true}) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                         ParseStableHlo(program("f32", fields("bf16", "bf16", "f32", 1),
                                               generic)));
    EXPECT_EQ(OpAt(*module, 0).kind(), OpKind::kConvert);
    EXPECT_EQ(OpAt(*module, 0).result(0)->type().ToString(), "tensor<2x3xbf16>");
    EXPECT_EQ(OpAt(*module, 1).kind(), OpKind::kConvert);
    EXPECT_EQ(OpAt(*module, 1).result(0)->type().ToString(), "tensor<3x4xbf16>");
    const Operation& dot = OpAt(*module, 2);
    EXPECT_EQ(dot.kind(), OpKind::kDotGeneral);
    EXPECT_EQ(dot.operand(0), OpAt(*module, 0).result(0));
    EXPECT_EQ(dot.result(0)->type().ToString(), "tensor<2x4xf32>");
  }
}

// BF16_BF16_F32 rounds each f32 operand to bf16 and accumulates in f32: 1 + 2^-9 rounds to 1 in
// bf16 (8 significant bits), so (1 + 2^-9) * 3 gives 3, not the f32 product 3.005859375.
TEST(SyntaxTest, Bf16AlgorithmRoundsTheOperandsBeforeTheProduct) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @main(%a: tensor<1x2xf32>, %b: tensor<2x1xf32>) -> tensor<1x1xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}
)mlir"));
  ASSERT_OK_AND_ASSIGN(Tensor a, Tensor::FromVector<float>(
                                     *TensorType::Create(ElementType::kF32, {1, 2}),
                                     {1.0f + 0x1p-9f, 2.0f}));
  ASSERT_OK_AND_ASSIGN(Tensor b, Tensor::FromVector<float>(
                                     *TensorType::Create(ElementType::kF32, {2, 1}),
                                     {3.0f, 0.5f}));
  EngineOptions options;
  options.num_threads = 1;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  const std::vector<Tensor> inputs = {a, b};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, exe->Run(inputs));
  EXPECT_EQ(static_cast<const float*>(out[0].data())[0], 4.0f);  // 1 * 3 + 2 * 0.5

  // The deprecated stablehlo.dot with the same algorithm rounds its operands too.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> dot, ParseStableHlo(R"mlir(
func.func @main(%a: tensor<1x2xf32>, %b: tensor<2x1xf32>) -> tensor<1x1xf32> {
  %0 = "stablehlo.dot"(%a, %b) {algorithm = #stablehlo.dot_algorithm<lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false>} : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}
)mlir"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> dot_exe, engine->Compile(*dot));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> dot_out, dot_exe->Run(inputs));
  EXPECT_EQ(static_cast<const float*>(dot_out[0].data())[0], 4.0f);
}

TEST(SyntaxTest, JaxGenericGatherWithAttributeDictionary) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @f(%x: tensor<5x4xf32>, %i: tensor<2x1xi32>) -> tensor<2x4xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = true, slice_sizes = array<i64: 1, 4>} : (tensor<5x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
})mlir"));
  const Operation& gather = OpAt(*module, 0);
  EXPECT_EQ(gather.kind(), OpKind::kGather);
  EXPECT_THAT(gather.GetInts("offset_dims"), ElementsAre(1));
  EXPECT_THAT(gather.GetInts("collapsed_slice_dims"), ElementsAre(0));
  EXPECT_TRUE(gather.GetInts("operand_batching_dims").empty());
  EXPECT_THAT(gather.GetInts("start_index_map"), ElementsAre(0));
  EXPECT_EQ(gather.GetInt("index_vector_dim"), 1);
  EXPECT_THAT(gather.GetInts("slice_sizes"), ElementsAre(1, 4));
  EXPECT_EQ(gather.GetBool("indices_are_sorted"), true);
}

TEST(SyntaxTest, CompactReduceBuildsTheReducerBody) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @f(%x: tensor<2x3xi32>) -> tensor<3xi32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.maximum across dimensions = [0] : (tensor<2x3xi32>, tensor<i32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
})mlir"));
  const Operation& reduce = OpAt(*module, 1);
  EXPECT_EQ(reduce.kind(), OpKind::kReduce);
  EXPECT_THAT(reduce.GetInts("dimensions"), ElementsAre(0));
  const Block& body = *reduce.region(0)->entry_block();
  EXPECT_EQ(body.num_arguments(), 2);
  EXPECT_THAT(KindsOf(body), ElementsAre(OpKind::kMaximum, OpKind::kReturn));
  EXPECT_EQ(body.operations()[0]->operand(0), body.argument(0));
  EXPECT_EQ(body.operations()[0]->operand(1), body.argument(1));
}

TEST(SyntaxTest, GenericReduceWithBlockHeaderAndOldDenseDimensions) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @f(%x: tensor<2x3xf32>, %init: tensor<f32>) -> tensor<2xf32> {
  %0 = "stablehlo.reduce"(%x, %init) ({
  ^bb0(%a: tensor<f32> loc("a"), %b: tensor<f32>):
    %1 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%1) : (tensor<f32>) -> ()
  }) {dimensions = dense<1> : tensor<1xi64>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  "func.return"(%0) : (tensor<2xf32>) -> ()
})mlir"));
  const Operation& reduce = OpAt(*module, 0);
  EXPECT_THAT(reduce.GetInts("dimensions"), ElementsAre(1));
  EXPECT_THAT(KindsOf(*reduce.region(0)->entry_block()),
              ElementsAre(OpKind::kAdd, OpKind::kReturn));
}

TEST(SyntaxTest, MultiResultNamesAndUses) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @f(%x: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
  %w:2 = stablehlo.while(%i = %x, %j = %x) : tensor<i64>, tensor<i64>
   cond {
    %t = stablehlo.compare  LT, %i, %j : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    stablehlo.return %j, %i : tensor<i64>, tensor<i64>
  }
  %a, %b = "stablehlo.while"(%w#1, %w#0) ({
  ^bb0(%p: tensor<i64>, %q: tensor<i64>):
    %t = stablehlo.compare  GT, %p, %q : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %t : tensor<i1>
  }, {
  ^bb0(%p: tensor<i64>, %q: tensor<i64>):
    stablehlo.return %p, %q : tensor<i64>, tensor<i64>
  }) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
  return %b, %a : tensor<i64>, tensor<i64>
})mlir"));
  const Operation& second = OpAt(*module, 1);
  EXPECT_EQ(second.kind(), OpKind::kWhile);
  EXPECT_EQ(second.operand(0), OpAt(*module, 0).result(1));
  const Operation& ret = OpAt(*module, 2);
  EXPECT_EQ(ret.operand(0), second.result(1));
  EXPECT_EQ(ret.operand(1), second.result(0));
}

TEST(SyntaxTest, DenseLiteralsOfEveryForm) {
  using Bytes = std::vector<uint8_t>;
  EXPECT_EQ(ConstantBytes("dense<[[1, -2], [3, 4]]>", "tensor<2x2xi8>").value(),
            (Bytes{1, 0xFE, 3, 4}));
  EXPECT_EQ(ConstantBytes("dense<\"0x0100000002000000\">", "tensor<2xi32>").value(),
            (Bytes{1, 0, 0, 0, 2, 0, 0, 0}));
  EXPECT_EQ(ConstantBytes("dense<\"0x0300\">", "tensor<3xui16>").value(),
            (Bytes{3, 0, 3, 0, 3, 0}));  // a one-element hex payload is a splat
  EXPECT_EQ(ConstantBytes("dense<[0x7FC00000, -1.0]>", "tensor<2xf32>").value(),
            (Bytes{0, 0, 0xC0, 0x7F, 0, 0, 0x80, 0xBF}));
  EXPECT_EQ(ConstantBytes("dense<[inf, -inf, nan]>", "tensor<3xf16>").value(),
            (Bytes{0x00, 0x7C, 0x00, 0xFC, 0x00, 0x7E}));
  EXPECT_EQ(ConstantBytes("dense<[1.0, -2.5]>", "tensor<2xbf16>").value(),
            (Bytes{0x80, 0x3F, 0x20, 0xC0}));
  EXPECT_EQ(ConstantBytes("dense<1.000000e-01>", "tensor<f16>").value(), (Bytes{0x66, 0x2E}));
  EXPECT_EQ(ConstantBytes("dense<[true, false]>", "tensor<2xi1>").value(), (Bytes{1, 0}));
  EXPECT_EQ(ConstantBytes("dense<[255, 0]>", "tensor<2xui8>").value(), (Bytes{255, 0}));
  EXPECT_EQ(ConstantBytes("dense<>", "tensor<0x3xf32>").value(), Bytes{});
  EXPECT_EQ(ConstantBytes("dense<[]>", "tensor<0xf32>").value(), Bytes{});
  EXPECT_EQ(ConstantBytes("dense<2>", "tensor<2xf64>").value(),
            (Bytes{0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0x40}));
  EXPECT_EQ(ConstantBytes("dense<1e5>", "tensor<f32>").value(), (Bytes{0x00, 0x50, 0xC3, 0x47}));
}

TEST(SyntaxTest, InterpreterChecksAreKeptWithTheirValues) {
  const char* text = R"mlir(// RUN: header
func.func @t() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  check.expect_eq_const %0, dense<[1, 2]> : tensor<2xi32>
  func.return
}

// -----

func.func @t() {
  %0 = stablehlo.constant dense<1.0> : tensor<f32>
  check.expect_almost_eq_const %0, dense<1.0001> : tensor<f32>
  check.expect_eq %0, %0 : tensor<f32>
  func.return
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::vector<StableHloProgram> programs, ParseStableHloProgramSplit(text));
  ASSERT_EQ(programs.size(), 2u);
  ASSERT_EQ(programs[0].checks.size(), 1u);
  const Check& first = programs[0].checks[0];
  EXPECT_EQ(first.kind, CheckKind::kExpectEqConst);
  EXPECT_EQ(first.actual_result, 0);
  EXPECT_FALSE(first.expected_result.has_value());
  ASSERT_TRUE(first.expected_constant.has_value());
  EXPECT_EQ(first.expected_constant->bytes, (std::vector<uint8_t>{1, 0, 0, 0, 2, 0, 0, 0}));
  EXPECT_EQ(first.line, 4);
  ASSERT_EQ(programs[1].checks.size(), 2u);
  EXPECT_EQ(programs[1].checks[0].kind, CheckKind::kExpectAlmostEqConst);
  EXPECT_EQ(programs[1].checks[0].line, 12);  // lines count in the whole file
  EXPECT_EQ(programs[1].checks[1].actual_result, 1);
  EXPECT_EQ(programs[1].checks[1].expected_result, 2);
  EXPECT_EQ(programs[1].module->functions()[0]->result_types().size(), 3u);
  // Without checks: dropped, and the function keeps its own signature.
  ASSERT_OK_AND_ASSIGN(std::vector<std::unique_ptr<Module>> modules, ParseStableHloSplit(text));
  ASSERT_EQ(modules.size(), 2u);
  EXPECT_TRUE(modules[1]->functions()[0]->result_types().empty());
}

TEST(SyntaxTest, SliceIotaPadConcatenateAndSelect) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @f(%x: tensor<7x5xf32>, %p: tensor<f32>, %m: tensor<i1>) -> tensor<4x3xf32> {
  %0 = stablehlo.slice %x [1:5:2, 1:3] : (tensor<7x5xf32>) -> tensor<2x2xf32>
  %1 = stablehlo.pad %0, %p, low = [0, -1], high = [0, 1], interior = [0, 1] : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x3xf32>
  %2 = stablehlo.iota dim = 1 : tensor<2x3xf32>
  %3 = stablehlo.concatenate %1, %2, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %4 = stablehlo.select %m, %3, %3 : tensor<i1>, tensor<4x3xf32>
  return %4 : tensor<4x3xf32>
})mlir"));
  const Operation& slice = OpAt(*module, 0);
  EXPECT_THAT(slice.GetInts("start_indices"), ElementsAre(1, 1));
  EXPECT_THAT(slice.GetInts("limit_indices"), ElementsAre(5, 3));
  EXPECT_THAT(slice.GetInts("strides"), ElementsAre(2, 1));
  const Operation& pad = OpAt(*module, 1);
  EXPECT_THAT(pad.GetInts("edge_padding_low"), ElementsAre(0, -1));
  EXPECT_THAT(pad.GetInts("interior_padding"), ElementsAre(0, 1));
  EXPECT_EQ(OpAt(*module, 2).GetInt("iota_dimension"), 1);
  EXPECT_EQ(OpAt(*module, 3).GetInt("dimension"), 0);
  EXPECT_EQ(OpAt(*module, 4).kind(), OpKind::kSelect);
  EXPECT_EQ(OpAt(*module, 4).result(0)->type().ToString(), "tensor<4x3xf32>");
}

// torch-xla writes XLA's layout annotations on ops: index-typed dense attributes, xla_shape and
// mhlo.frontend_attributes (issue 18, "exporter forms that must be accepted"). They carry no
// semantics for accy and are dropped; an index-typed constant value is still refused.
TEST(SyntaxTest, XlaLayoutAttributesAreAcceptedAndDropped) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(R"mlir(
func.func @main(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %r = stablehlo.transpose %x, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[8,4]{0,1}", mhlo.frontend_attributes = {_xla_compute_type = "dense"}} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return %r : tensor<8x4xf32>
}
)mlir"));
  const Operation& transpose = *module->functions().front()->entry_block()->operations()[0];
  EXPECT_EQ(transpose.kind(), OpKind::kTranspose);
  EXPECT_EQ(transpose.attribute("result_layout"), nullptr);
  EXPECT_EQ(transpose.attribute("xla_shape"), nullptr);
  EXPECT_EQ(transpose.GetInts("permutation"), (std::vector<int64_t>{1, 0}));
  const Status constant = ParseStableHlo(R"mlir(
func.func @main() -> tensor<2xi64> {
  %c = stablehlo.constant dense<[1, 0]> : tensor<2xindex>
  func.return %c : tensor<2xi64>
}
)mlir").status();
  EXPECT_EQ(constant.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(constant.message(),
              ::testing::HasSubstr("3:27: a constant of index elements is not a StableHLO value"));
}

}  // namespace
}  // namespace accy
