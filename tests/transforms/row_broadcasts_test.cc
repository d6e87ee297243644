// canonicalize-row-broadcasts, and CSE of ops with regions (src/transforms/): the exporters'
// keepdims layer norm and masked softmax (written as torch_xla2 writes them in
// ../shared/models/pt_bert.mlir) become one row_pipeline work item each and match the reference
// evaluator; what the pass must not rewrite; which reduces CSE merges.
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "src/transforms/canonicalize_row_broadcasts.h"
#include "src/transforms/eliminate_common_subexpressions.h"
#include "tests/test_util.h"
#include "tests/transforms/transforms_test_util.h"

namespace accy {
namespace {

Function& Main(Module& module) { return *module.functions()[0]; }

// torch_xla2's layer norm over the last dim: the mean as sum / n with keepdims, the variance
// recomputing the mean (aten var), rsqrt(var + eps), then scale and shift.
constexpr char kLayerNorm[] = R"(
func.func @main(%x: tensor<3x5x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<3x5x64xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<64.0> : tensor<f32>
  %eps = stablehlo.constant dense<1.0e-12> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<3x5x64xf32>, tensor<f32>) -> tensor<3x5xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<3x5xf32>) -> tensor<3x5x1xf32>
  %2 = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<f32>) -> tensor<3x5x1xf32>
  %mean = stablehlo.divide %1, %2 : tensor<3x5x1xf32>
  %3 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<3x5x64xf32>, tensor<f32>) -> tensor<3x5xf32>
  %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<3x5xf32>) -> tensor<3x5x1xf32>
  %mean2 = stablehlo.divide %4, %2 : tensor<3x5x1xf32>
  %5 = stablehlo.broadcast_in_dim %mean2, dims = [0, 1, 2] : (tensor<3x5x1xf32>) -> tensor<3x5x64xf32>
  %6 = stablehlo.subtract %x, %5 : tensor<3x5x64xf32>
  %7 = stablehlo.multiply %6, %6 : tensor<3x5x64xf32>
  %8 = stablehlo.reduce(%7 init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<3x5x64xf32>, tensor<f32>) -> tensor<3x5xf32>
  %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<3x5xf32>) -> tensor<3x5x1xf32>
  %var = stablehlo.divide %9, %2 : tensor<3x5x1xf32>
  %10 = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<3x5x1xf32>
  %11 = stablehlo.add %var, %10 : tensor<3x5x1xf32>
  %12 = stablehlo.rsqrt %11 : tensor<3x5x1xf32>
  %13 = stablehlo.broadcast_in_dim %mean, dims = [0, 1, 2] : (tensor<3x5x1xf32>) -> tensor<3x5x64xf32>
  %14 = stablehlo.subtract %x, %13 : tensor<3x5x64xf32>
  %15 = stablehlo.broadcast_in_dim %12, dims = [0, 1, 2] : (tensor<3x5x1xf32>) -> tensor<3x5x64xf32>
  %16 = stablehlo.multiply %14, %15 : tensor<3x5x64xf32>
  %17 = stablehlo.broadcast_in_dim %g, dims = [2] : (tensor<64xf32>) -> tensor<3x5x64xf32>
  %18 = stablehlo.multiply %16, %17 : tensor<3x5x64xf32>
  %19 = stablehlo.broadcast_in_dim %b, dims = [2] : (tensor<64xf32>) -> tensor<3x5x64xf32>
  %20 = stablehlo.add %18, %19 : tensor<3x5x64xf32>
  return %20 : tensor<3x5x64xf32>
})";

// torch_xla2's softmax over the last dim of attention scores, with its guard for rows that are
// all -inf: max with keepdims, exp, sum with keepdims, divide, then
// select(not(any(x != -inf)), 0, softmax).
constexpr char kMaskedSoftmax[] = R"(
func.func @main(%x: tensor<2x3x4x9xf32>) -> tensor<2x3x4x9xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %false = stablehlo.constant dense<false> : tensor<i1>
  %0 = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [3] : (tensor<2x3x4x9xf32>, tensor<f32>) -> tensor<2x3x4xf32>
  %1 = stablehlo.broadcast_in_dim %ninf, dims = [] : (tensor<f32>) -> tensor<2x3x4xf32>
  %2 = stablehlo.maximum %1, %0 : tensor<2x3x4xf32>
  %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1, 2] : (tensor<2x3x4xf32>) -> tensor<2x3x4x1xf32>
  %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2, 3] : (tensor<2x3x4x1xf32>) -> tensor<2x3x4x9xf32>
  %5 = stablehlo.subtract %x, %4 : tensor<2x3x4x9xf32>
  %6 = stablehlo.exponential %5 : tensor<2x3x4x9xf32>
  %7 = stablehlo.reduce(%6 init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<2x3x4x9xf32>, tensor<f32>) -> tensor<2x3x4xf32>
  %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2] : (tensor<2x3x4xf32>) -> tensor<2x3x4x1xf32>
  %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 3] : (tensor<2x3x4x1xf32>) -> tensor<2x3x4x9xf32>
  %10 = stablehlo.divide %6, %9 : tensor<2x3x4x9xf32>
  %11 = stablehlo.broadcast_in_dim %ninf, dims = [] : (tensor<f32>) -> tensor<2x3x4x9xf32>
  %12 = stablehlo.compare EQ, %x, %11, FLOAT : (tensor<2x3x4x9xf32>, tensor<2x3x4x9xf32>) -> tensor<2x3x4x9xi1>
  %13 = stablehlo.not %12 : tensor<2x3x4x9xi1>
  %14 = stablehlo.reduce(%13 init: %false) applies stablehlo.or across dimensions = [3] : (tensor<2x3x4x9xi1>, tensor<i1>) -> tensor<2x3x4xi1>
  %15 = stablehlo.broadcast_in_dim %14, dims = [0, 1, 2] : (tensor<2x3x4xi1>) -> tensor<2x3x4x1xi1>
  %16 = stablehlo.not %15 : tensor<2x3x4x1xi1>
  %17 = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<2x3x4x9xf32>
  %18 = stablehlo.broadcast_in_dim %16, dims = [0, 1, 2, 3] : (tensor<2x3x4x1xi1>) -> tensor<2x3x4x9xi1>
  %19 = stablehlo.select %18, %17, %10 : tensor<2x3x4x9xi1>, tensor<2x3x4x9xf32>
  return %19 : tensor<2x3x4x9xf32>
})";


TEST(CanonicalizeRowBroadcastsTest, ExportedLayerNormIsOneRowPipeline) {
  std::unique_ptr<Module> module = Parse(kLayerNorm);
  ASSERT_NE(module, nullptr);
  const Function& main = Main(*module);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < main.parameter_types().size(); ++i) {
    inputs.push_back(Values(main.parameter_types()[i], static_cast<uint32_t>(i + 1)));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, EvaluateFunction(main, inputs));
  ASSERT_OK_AND_ASSIGN(Compiled on, CompileAndRun(*module, {}, inputs));
  EXPECT_EQ(on.kinds, (std::map<std::string, int64_t>{{"row_pipeline", 1}}));
  // Outputs are O(2): the row sums of 64 terms in another order, then rsqrt and two products.
  EXPECT_LE(MaxAbsDiff(on.outputs[0], expected[0]), 2e-5);
  // Without the pass the keepdims row arithmetic stays apart: reductions, row ops, broadcasts.
  ASSERT_OK_AND_ASSIGN(Compiled off, CompileAndRun(*module, {"canonicalize-row-broadcasts"}, inputs));
  EXPECT_EQ(off.kinds.count("row_pipeline"), 0u);
  EXPECT_EQ(off.kinds.at("reduction"), 2);
  EXPECT_LE(MaxAbsDiff(off.outputs[0], expected[0]), 2e-5);
}

TEST(CanonicalizeRowBroadcastsTest, ExportedMaskedSoftmaxIsOneRowPipeline) {
  std::unique_ptr<Module> module = Parse(kMaskedSoftmax);
  ASSERT_NE(module, nullptr);
  const Function& main = Main(*module);
  Tensor x = Values(main.parameter_types()[0], 7);
  float* data = x.data_as<float>();
  const float inf = std::numeric_limits<float>::infinity();
  for (int k = 0; k < 9; ++k) data[9 * 5 + k] = -inf;  // row 5 fully masked: 0, not NaN
  data[9 * 2 + 3] = -inf;                              // row 2 partly masked
  std::vector<Tensor> inputs = {x};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, EvaluateFunction(main, inputs));
  ASSERT_OK_AND_ASSIGN(Compiled on, CompileAndRun(*module, {}, inputs));
  EXPECT_EQ(on.kinds, (std::map<std::string, int64_t>{{"row_pipeline", 1}}));
  EXPECT_LE(MaxAbsDiff(on.outputs[0], expected[0]), 1e-6);  // probabilities: exp within ULPs
  const float* out = on.outputs[0].data_as<float>();
  for (int k = 0; k < 9; ++k) EXPECT_EQ(out[9 * 5 + k], 0.0f) << k;
  EXPECT_EQ(out[9 * 2 + 3], 0.0f);
}

TEST(CanonicalizeRowBroadcastsTest, RewritesOnlyRowValues) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%r: tensor<3xf32>, %p: tensor<3x1xf32>, %s: tensor<1xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %c = stablehlo.constant dense<[[1.0], [2.0], [3.0]]> : tensor<3x1xf32>
  %u = stablehlo.reshape %r : (tensor<3xf32>) -> tensor<3x1xf32>
  %e = stablehlo.exponential %u : tensor<3x1xf32>
  %m = stablehlo.multiply %e, %c : tensor<3x1xf32>
  %0 = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x4xf32>
  %1 = stablehlo.broadcast_in_dim %p, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x4xf32>
  %a = stablehlo.add %u, %p : tensor<3x1xf32>
  %2 = stablehlo.broadcast_in_dim %a, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x4xf32>
  %t = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<1xf32>) -> tensor<3x1xf32>
  %3 = stablehlo.broadcast_in_dim %t, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x4xf32>
  return %0, %1, %2, %3 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
})");
  ASSERT_NE(module, nullptr);
  Function& main = Main(*module);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < main.parameter_types().size(); ++i) {
    inputs.push_back(Values(main.parameter_types()[i], static_cast<uint32_t>(i + 11)));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> before, EvaluateFunction(main, inputs));
  // Only %0: %p is a parameter (no row form), %a adds it, %t puts %s's dim on the unit dim.
  EXPECT_EQ(CanonicalizeRowBroadcasts(main), 1);
  ASSERT_OK(Verify(*module));
  const Operation* ret = main.entry_block()->terminator();
  const Operation* rewritten = ret->operand(0)->defining_op();
  EXPECT_EQ(rewritten->operand(0)->type().dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(rewritten->GetInts("broadcast_dimensions"), (std::vector<int64_t>{0}));
  EXPECT_EQ(rewritten->operand(0)->defining_op()->kind(), OpKind::kMultiply);
  for (int64_t i = 1; i < 4; ++i) {
    EXPECT_EQ(ret->operand(i)->defining_op()->operand(0)->type().dims(),
              (std::vector<int64_t>{3, 1}))
        << i;
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> after, EvaluateFunction(main, inputs));
  for (size_t k = 0; k < after.size(); ++k) EXPECT_EQ(MaxAbsDiff(after[k], before[k]), 0.0) << k;
}

TEST(CanonicalizeRowBroadcastsTest, LongChainsStayAsTheyAre) {
  std::string text = R"(
func.func @main(%r: tensor<3xf32>) -> tensor<3x4xf32> {
  %v0 = stablehlo.reshape %r : (tensor<3xf32>) -> tensor<3x1xf32>
)";
  constexpr int kChain = 100;  // past the pass's depth of 64
  for (int i = 1; i <= kChain; ++i) {
    text += "  %v" + std::to_string(i) + " = stablehlo.negate %v" + std::to_string(i - 1) +
            " : tensor<3x1xf32>\n";
  }
  text += "  %b = stablehlo.broadcast_in_dim %v" + std::to_string(kChain) +
          ", dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x4xf32>\n"
          "  return %b : tensor<3x4xf32>\n}\n";
  std::unique_ptr<Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(CanonicalizeRowBroadcasts(Main(*module)), 0);
  EXPECT_OK(Verify(*module));
}

TEST(EliminateCommonSubexpressionsTest, MergesReducesWithTheSameBody) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = stablehlo.reduce(%x init: %zero) applies stablehlo.maximum across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = stablehlo.reduce(%x init: %one) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
})");
  ASSERT_NE(module, nullptr);
  Function& main = Main(*module);
  // %1 is %0; %2 has another body, %3 another init value.
  EXPECT_EQ(EliminateCommonSubexpressions(main), 1);
  ASSERT_OK(Verify(*module));
  const Operation* ret = main.entry_block()->terminator();
  EXPECT_EQ(ret->operand(0), ret->operand(1));
  EXPECT_NE(ret->operand(0), ret->operand(2));
  EXPECT_NE(ret->operand(0), ret->operand(3));
  EXPECT_FALSE(ComputeTheSame(*ret->operand(0)->defining_op(), *ret->operand(2)->defining_op()));
}

}  // namespace
}  // namespace accy
