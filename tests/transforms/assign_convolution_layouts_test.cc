// assign-convolution-layouts (src/transforms/assign_convolution_layouts.h): an NCHW block (conv,
// per-channel affine, relu, max pool, conv, residual add) goes channels-last with one transpose
// left at its input and one at its output; weights that are a parameter not declared constant
// keep a small convolution in its layout; transposes the program wrote itself are not sunk; and
// the engine's results match the reference evaluator with the pass on and off.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/ir/convolution_attributes.h"
#include "src/reference/reference_evaluator.h"
#include "src/transforms/assign_convolution_layouts.h"
#include "src/transforms/eliminate_dead_code.h"
#include "src/transforms/simplify_layout_chains.h"
#include "tests/test_util.h"
#include "tests/transforms/transforms_test_util.h"

namespace accy {
namespace {

Function& Main(Module& module) { return *module.functions()[0]; }

// x [1, 8, 16, 16] NCHW, w1 [8, 8, 3, 3] and w2 [8, 8, 1, 1] OIHW, per-channel scale [8].
constexpr char kBlock[] = R"(
func.func @main(%x: tensor<1x8x16x16xf32>, %w1: tensor<8x8x3x3xf32>, %scale: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>) -> tensor<1x8x8x8xf32> {
  %c = stablehlo.convolution(%x, %w1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  %s = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %m = stablehlo.multiply %c, %s : tensor<1x8x16x16xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<1x8x16x16xf32>
  %r = stablehlo.maximum %m, %z : tensor<1x8x16x16xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %p = "stablehlo.reduce_window"(%r, %ninf) <{padding = dense<[[0, 0], [0, 0], [0, 1], [0, 1]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %mx = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }) : (tensor<1x8x16x16xf32>, tensor<f32>) -> tensor<1x8x8x8xf32>
  %d = stablehlo.convolution(%p, %w2) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x8xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x8x8xf32>
  %y = stablehlo.add %d, %p : tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
})";

// The names of the ops left after the pass, simplify-layout-chains and dead-code elimination.
std::vector<std::string> OpsAfter(Module& module, int64_t expected_rewrites,
                                  std::vector<int64_t> constant_parameters) {
  EXPECT_EQ(AssignConvolutionLayouts(Main(module), constant_parameters), expected_rewrites);
  SimplifyLayoutChains(Main(module));
  EliminateDeadCode(Main(module));
  EXPECT_OK(Verify(module));
  std::vector<std::string> names;
  for (const auto& op : Main(module).entry_block()->operations()) names.emplace_back(op->name());
  return names;
}

TEST(AssignConvolutionLayoutsTest, NchwBlockRunsChannelsLastBetweenOneTransposeEachWay) {
  std::unique_ptr<Module> module = Parse(kBlock);
  ASSERT_NE(module, nullptr);
  // 2 convolutions; sunk: multiply, maximum, reduce_window, add.
  EXPECT_THAT(OpsAfter(*module, 6, {1, 3}),
              ::testing::ElementsAre("transpose", "convolution", "broadcast_in_dim", "multiply",
                                     "constant", "broadcast_in_dim", "maximum", "constant",
                                     "reduce_window", "convolution", "add", "transpose", "return"));
  const Block& block = *Main(*module).entry_block();
  std::vector<std::vector<int64_t>> permutations;
  for (const auto& op : block.operations()) {
    if (op->kind() == OpKind::kTranspose) permutations.push_back(op->GetInts("permutation"));
    if (op->kind() == OpKind::kConvolution) {
      const ConvDimensionNumbers dn = ir_internal::ConvolutionSpecOf(*op).dimension_numbers;
      EXPECT_EQ(dn.input_batch_dimension, 0);
      EXPECT_EQ(dn.input_spatial_dimensions, (std::vector<int64_t>{1, 2}));
      EXPECT_EQ(dn.input_feature_dimension, 3);
      EXPECT_EQ(dn.output_feature_dimension, 3);
      EXPECT_EQ(dn.kernel_output_feature_dimension, 0);  // the kernel keeps OIHW
      EXPECT_EQ(op->result()->type().dims(), op == block.operations()[1] ? (std::vector<int64_t>{1, 16, 16, 8})
                                                                       : (std::vector<int64_t>{1, 8, 8, 8}));
    }
    if (op->kind() == OpKind::kReduceWindow) {
      EXPECT_EQ(op->GetInts("window_dimensions"), (std::vector<int64_t>{1, 3, 3, 1}));
      EXPECT_EQ(op->GetInts("window_strides"), (std::vector<int64_t>{1, 2, 2, 1}));
      EXPECT_EQ(op->GetInts("padding"), (std::vector<int64_t>{0, 0, 0, 1, 0, 1, 0, 0}));
    }
    if (op->kind() == OpKind::kBroadcastInDim && op->operand(0)->type().rank() == 1) {
      EXPECT_EQ(op->GetInts("broadcast_dimensions"), (std::vector<int64_t>{3}));
    }
  }
  EXPECT_THAT(permutations, ::testing::ElementsAre(std::vector<int64_t>{0, 2, 3, 1},
                                                   std::vector<int64_t>{0, 3, 1, 2}));
}

// Weights that are a parameter not declared constant keep the 1x1 convolution over 64
// positions (< 128) in its layout, with transposes around it; declared, it is rewritten. The
// 3x3 one over 256 positions is rewritten either way.
TEST(AssignConvolutionLayoutsTest, SmallConvolutionWithUndeclaredWeightsKeepsItsLayout) {
  std::unique_ptr<Module> module = Parse(kBlock);
  ASSERT_NE(module, nullptr);
  // 1 convolution; sunk: multiply, maximum, reduce_window (the add meets an NCHW convolution).
  const std::vector<std::string> ops = OpsAfter(*module, 4, {1});
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "transpose"), 2);  // x in, and the pool's result out
  int64_t nchw = 0;
  for (const auto& op : Main(*module).entry_block()->operations()) {
    if (op->kind() == OpKind::kConvolution) {
      nchw += ir_internal::ConvolutionSpecOf(*op).dimension_numbers.input_feature_dimension == 1;
    }
  }
  EXPECT_EQ(nchw, 1);
}

// A channels-last program and transposes the program wrote itself are left alone.
TEST(AssignConvolutionLayoutsTest, ChannelsLastAndForeignTransposesAreUnchanged) {
  constexpr char kNhwc[] = R"(
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<3x3x3x4xf32>) -> (tensor<1x8x8x4xf32>, tensor<1x8x8x3xf32>) {
  %t = stablehlo.transpose %x, dims = [0, 2, 3, 1] : (tensor<1x3x8x8xf32>) -> tensor<1x8x8x3xf32>
  %c = stablehlo.convolution(%t, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>
  %e = stablehlo.exponential %t : tensor<1x8x8x3xf32>
  return %c, %e : tensor<1x8x8x4xf32>, tensor<1x8x8x3xf32>
})";
  std::unique_ptr<Module> module = Parse(kNhwc);
  ASSERT_NE(module, nullptr);
  const std::string before = PrintModule(*module);
  EXPECT_EQ(AssignConvolutionLayouts(Main(*module), {}), 0);
  EXPECT_EQ(PrintModule(*module), before);
}

// Lone convolutions of a given kernel window and element type: x [1, 8, 16, 16] NCHW, w OIHW,
// declared constant, their results returned.
std::string LoneConvolution(int64_t window, int64_t stride, const std::string& element) {
  const std::string k = std::to_string(window), o = std::to_string(16 / stride);
  const std::string pad = window == 3 ? "[[1, 1], [1, 1]]" : "[[0, 0], [0, 0]]";
  return "func.func @main(%x: tensor<1x8x16x16x" + element + ">, %w: tensor<4x8x" + k + "x" + k + "x" +
         element + ">) -> tensor<1x4x" + o + "x" + o + "x" + element +
         "> {\n  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], "
         "window = {stride = [" + std::to_string(stride) + ", " + std::to_string(stride) + "], pad = " + pad +
         "} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x16x16x" + element +
         ">, tensor<4x8x" + k + "x" + k + "x" + element + ">) -> tensor<1x4x" + o + "x" + o + "x" + element +
         ">\n  return %c : tensor<1x4x" + o + "x" + o + "x" + element + ">\n}";
}

// A lone 1x1 f32 convolution (stride 1 or 2) would keep both of its transposes: it goes back
// to NCHW with none. A lone 3x3 one, and a 1x1 one in f16, stay channels-last between the two.
TEST(AssignConvolutionLayoutsTest, LonePointwiseConvolutionKeepsItsLayout) {
  struct Case {
    int64_t window, stride;
    std::string element;
    std::vector<std::string> ops;
  };
  const std::vector<std::string> kept = {"convolution", "return"};
  const std::vector<std::string> channels_last = {"transpose", "convolution", "transpose", "return"};
  for (const Case& c : std::vector<Case>{{1, 1, "f32", kept},
                                         {1, 2, "f32", kept},
                                         {3, 1, "f32", channels_last},
                                         {1, 1, "f16", channels_last}}) {
    SCOPED_TRACE(LoneConvolution(c.window, c.stride, c.element));
    std::unique_ptr<Module> module = Parse(LoneConvolution(c.window, c.stride, c.element));
    ASSERT_NE(module, nullptr);
    EXPECT_EQ(OpsAfter(*module, 1, {1}), c.ops);
    const ConvDimensionNumbers dn =
        ir_internal::ConvolutionSpecOf(*Main(*module).entry_block()->operations()[c.ops.size() == 2 ? 0 : 1])
            .dimension_numbers;
    EXPECT_EQ(dn.input_feature_dimension, c.ops.size() == 2 ? 1 : 3);
  }
}

std::vector<Tensor> Inputs(const Function& main) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<Tensor> inputs;
  for (const TensorType& type : main.parameter_types()) {
    Tensor t = Tensor::Allocate(type).value();
    for (int64_t i = 0; i < t.element_count(); ++i) t.data_as<float>()[i] = unit(rng);
    inputs.push_back(std::move(t));
  }
  return inputs;
}

// Through the engine, pass on (weights declared or not) and off: each result within 1e-5 of
// the reference evaluator's (max |diff| / max(1, max |ref|); sums of 72 products in another
// order per layout).
TEST(AssignConvolutionLayoutsTest, EngineResultsMatchTheReferenceWithThePassOnAndOff) {
  std::unique_ptr<Module> module = Parse(kBlock);
  ASSERT_NE(module, nullptr);
  const std::vector<Tensor> inputs = Inputs(Main(*module));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", inputs));
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant);
    EngineOptions options;
    if (variant == 2) options.disabled_passes = {"assign-convolution-layouts"};
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
    CompileOptions compile;
    if (variant == 1) compile.constant_parameters = {1, 2, 3};
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module, compile));
    std::vector<Tensor> outputs = {Tensor::Allocate(expected[0].type()).value()};
    ASSERT_OK(exe->Run(inputs, outputs));
    double max_ref = 1, max_diff = 0;
    for (int64_t i = 0; i < expected[0].element_count(); ++i) {
      const double ref = expected[0].data_as<float>()[i];
      max_ref = std::max(max_ref, std::fabs(ref));
      max_diff = std::max(max_diff, std::fabs(ref - outputs[0].data_as<float>()[i]));
    }
    EXPECT_LT(max_diff / max_ref, 1e-5);
  }
}

// A 1x1 convolution whose result a reduce reads (it keeps the transpose back live) and a
// subtract reads too (sunk channels-last: it reads the channels-last result directly) stays
// channels-last: going back to NCHW would leave both convolutions live (batch norm's
// training-mode mean and subtract).
TEST(AssignConvolutionLayoutsTest, PointwiseConvolutionWithASunkUserStaysChannelsLast) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%x: tensor<2x16x8x8xf32>, %w: tensor<24x16x1x1xf32>) -> tensor<2x24x8x8xf32> {
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x16x8x8xf32>, tensor<24x16x1x1xf32>) -> tensor<2x24x8x8xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%c init: %z) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<2x24x8x8xf32>, tensor<f32>) -> tensor<24xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [1] : (tensor<24xf32>) -> tensor<2x24x8x8xf32>
  %d = stablehlo.subtract %c, %mb : tensor<2x24x8x8xf32>
  return %d : tensor<2x24x8x8xf32>
})");
  ASSERT_NE(module, nullptr);
  const std::vector<std::string> ops = OpsAfter(*module, 2, {1});  // the convolution, the subtract
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "convolution"), 1);
  for (const auto& op : Main(*module).entry_block()->operations()) {
    if (op->kind() == OpKind::kConvolution) {
      EXPECT_EQ(ir_internal::ConvolutionSpecOf(*op).dimension_numbers.input_feature_dimension, 3);
    }
  }
}

// The lone 1x1 convolution kept in NCHW computes what the reference does (sums of 8 products).
TEST(AssignConvolutionLayoutsTest, LonePointwiseConvolutionMatchesTheReference) {
  std::unique_ptr<Module> module = Parse(LoneConvolution(1, 2, "f32"));
  ASSERT_NE(module, nullptr);
  const std::vector<Tensor> inputs = Inputs(Main(*module));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", inputs));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(EngineOptions{}));
  CompileOptions compile;
  compile.constant_parameters = {1};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module, compile));
  // The convolution alone: no transpose item.
  EXPECT_EQ(exe->Stats().work_items_by_kind, (std::map<std::string, int64_t>{{"convolution", 1}}));
  std::vector<Tensor> outputs = {Tensor::Allocate(expected[0].type()).value()};
  ASSERT_OK(exe->Run(inputs, outputs));
  for (int64_t i = 0; i < expected[0].element_count(); ++i) {
    EXPECT_NEAR(outputs[0].data_as<float>()[i], expected[0].data_as<float>()[i], 1e-5) << i;
  }
}

}  // namespace
}  // namespace accy
