// canonicalize-attention-layouts
// (src/transforms/canonicalize_attention_layouts.h) and the simplify-arithmetic
// identity it relies on: attention as JAX exports it (the searchless-chess
// transformer of ../shared/models: q, k, v of [batch, seq, heads, head_dim],
// Q·K batching dims (0, 2), the softmax guard maximum(-inf, max(s)), P·V
// written as V·P and transposed back) becomes one flash_attention work item and
// matches the reference evaluator; what the pass must leave alone.
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
#include "src/transforms/canonicalize_attention_layouts.h"
#include "src/transforms/eliminate_dead_code.h"
#include "src/transforms/simplify_arithmetic.h"
#include "src/transforms/simplify_layout_chains.h"
#include "tests/test_util.h"
#include "tests/transforms/transforms_test_util.h"

namespace accy {
namespace {

Function &Main(Module &module) { return *module.functions()[0]; }

// The chess transformer's attention (models/searchless_chess_136m.mlir,
// %47-%69) at batch 2, 7 tokens, 2 heads of 16.
constexpr char kJaxAttention[] = R"(
func.func @main(%q3: tensor<2x7x32xf32>, %k3: tensor<2x7x32xf32>, %v3: tensor<2x7x32xf32>) -> tensor<2x7x32xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %one = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  %d = stablehlo.constant dense<1.600000e+01> : tensor<f32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %q = stablehlo.reshape %q3 : (tensor<2x7x32xf32>) -> tensor<2x7x2x16xf32>
  %k = stablehlo.reshape %k3 : (tensor<2x7x32xf32>) -> tensor<2x7x2x16xf32>
  %v = stablehlo.reshape %v3 : (tensor<2x7x32xf32>) -> tensor<2x7x2x16xf32>
  %qk = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<2x7x2x16xf32>, tensor<2x7x2x16xf32>) -> tensor<2x2x7x7xf32>
  %sq = stablehlo.sqrt %d : tensor<f32>
  %r = stablehlo.divide %one, %sq : tensor<f32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [] : (tensor<f32>) -> tensor<2x2x7x7xf32>
  %s = stablehlo.multiply %qk, %rb : tensor<2x2x7x7xf32>
  %m = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [3] : (tensor<2x2x7x7xf32>, tensor<f32>) -> tensor<2x2x7xf32>
  %nb = stablehlo.broadcast_in_dim %ninf, dims = [] : (tensor<f32>) -> tensor<2x2x7xf32>
  %mg = stablehlo.maximum %nb, %m : tensor<2x2x7xf32>
  %m1 = stablehlo.broadcast_in_dim %mg, dims = [0, 1, 2] : (tensor<2x2x7xf32>) -> tensor<2x2x7x1xf32>
  %mb = stablehlo.broadcast_in_dim %m1, dims = [0, 1, 2, 3] : (tensor<2x2x7x1xf32>) -> tensor<2x2x7x7xf32>
  %x = stablehlo.subtract %s, %mb : tensor<2x2x7x7xf32>
  %e = stablehlo.exponential %x : tensor<2x2x7x7xf32>
  %l = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<2x2x7x7xf32>, tensor<f32>) -> tensor<2x2x7xf32>
  %l1 = stablehlo.broadcast_in_dim %l, dims = [0, 1, 2] : (tensor<2x2x7xf32>) -> tensor<2x2x7x1xf32>
  %lb = stablehlo.broadcast_in_dim %l1, dims = [0, 1, 2, 3] : (tensor<2x2x7x1xf32>) -> tensor<2x2x7x7xf32>
  %p = stablehlo.divide %e, %lb : tensor<2x2x7x7xf32>
  %vp = stablehlo.dot_general %v, %p, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3] : (tensor<2x7x2x16xf32>, tensor<2x2x7x7xf32>) -> tensor<2x2x16x7xf32>
  %t = stablehlo.transpose %vp, dims = [0, 3, 1, 2] : (tensor<2x2x16x7xf32>) -> tensor<2x7x2x16xf32>
  %o = stablehlo.reshape %t : (tensor<2x7x2x16xf32>) -> tensor<2x7x32xf32>
  return %o : tensor<2x7x32xf32>
})";

// An additive mask after the scale, P·V with P first and V as [batch, key,
// head, dv] (the rule's form: the kernel reads Q, K and V through strides), the
// result [batch, head, q, dv].
constexpr char kMaskedPFirst[] = R"(
func.func @main(%q: tensor<2x7x2x16xf32>, %k: tensor<2x7x2x16xf32>, %v: tensor<2x7x2x16xf32>, %mask: tensor<2x2x7x7xf32>) -> tensor<2x2x7x16xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %c = stablehlo.constant dense<2.500000e-01> : tensor<2x2x7x7xf32>
  %qk = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<2x7x2x16xf32>, tensor<2x7x2x16xf32>) -> tensor<2x2x7x7xf32>
  %sc = stablehlo.multiply %c, %qk : tensor<2x2x7x7xf32>
  %s = stablehlo.add %sc, %mask : tensor<2x2x7x7xf32>
  %m = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [3] : (tensor<2x2x7x7xf32>, tensor<f32>) -> tensor<2x2x7xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x2x7xf32>) -> tensor<2x2x7x7xf32>
  %x = stablehlo.subtract %s, %mb : tensor<2x2x7x7xf32>
  %e = stablehlo.exponential %x : tensor<2x2x7x7xf32>
  %l = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<2x2x7x7xf32>, tensor<f32>) -> tensor<2x2x7xf32>
  %lb = stablehlo.broadcast_in_dim %l, dims = [0, 1, 2] : (tensor<2x2x7xf32>) -> tensor<2x2x7x7xf32>
  %p = stablehlo.divide %e, %lb : tensor<2x2x7x7xf32>
  %o = stablehlo.dot_general %p, %v, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1] : (tensor<2x2x7x7xf32>, tensor<2x7x2x16xf32>) -> tensor<2x2x7x16xf32>
  return %o : tensor<2x2x7x16xf32>
})";

// One deterministic input per parameter of `main`.
std::vector<Tensor> Inputs(const Function &main) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < main.parameter_types().size(); ++i) {
    inputs.push_back(Values(main.parameter_types()[i], static_cast<uint32_t>(i + 3)));
  }
  return inputs;
}

// The output is a probability-weighted mean of values in [-2, 2]: the flash
// kernel's online softmax and another summation order differ from the reference
// by a few f32 ulps of O(1).
constexpr double kTolerance = 2e-6;

using Kinds = std::map<std::string, int64_t>;

// Compiles `text` with every graph pass (`on`) and with canonicalize-attention-layouts off
// (`off`), runs both on Inputs and checks each against the reference evaluator within
// kTolerance.
void RunBothWays(const std::string &text, Kinds &on, Kinds &off) {
  std::unique_ptr<Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  const std::vector<Tensor> inputs = Inputs(Main(*module));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, EvaluateFunction(Main(*module), inputs));
  ASSERT_OK_AND_ASSIGN(Compiled with, CompileAndRun(*module, {}, inputs));
  EXPECT_LE(MaxAbsDiff(with.outputs[0], expected[0]), kTolerance);
  ASSERT_OK_AND_ASSIGN(Compiled without,
                       CompileAndRun(*module, {"canonicalize-attention-layouts"}, inputs));
  EXPECT_LE(MaxAbsDiff(without.outputs[0], expected[0]), kTolerance);
  on = with.kinds;
  off = without.kinds;
}

TEST(CanonicalizeAttentionLayoutsTest, JaxAttentionIsOneFlashAttentionItem) {
  Kinds on, off;
  ASSERT_NO_FATAL_FAILURE(RunBothWays(kJaxAttention, on, off));
  // Three reshapes in (Q, K and V read through strides), the kernel, one transpose and one
  // reshape out.
  EXPECT_EQ(on, (Kinds{{"flash_attention", 1}, {"shape", 5}}));
  // Without the pass: two dot_generals around a row pipeline (the softmax).
  EXPECT_EQ(off.count("flash_attention"), 0u);
  EXPECT_EQ(off.at("dot_general"), 2);
  EXPECT_EQ(off.at("row_pipeline"), 1);
}

TEST(CanonicalizeAttentionLayoutsTest, RewritesTheDotsAndComposesTheTransposeBack) {
  std::unique_ptr<Module> module = Parse(kJaxAttention);
  ASSERT_NE(module, nullptr);
  Function &main = Main(*module);
  // The passes before it in the pipeline: broadcast(broadcast(row)) becomes one
  // broadcast, and the guard maximum(-inf, max(s)) goes.
  EXPECT_GT(SimplifyLayoutChains(main), 0);
  EXPECT_EQ(SimplifyArithmetic(main), 1);
  EXPECT_EQ(CanonicalizeAttentionLayouts(main), 1);
  ASSERT_OK(Verify(*module));
  EliminateDeadCode(main);
  // return reshape(transpose(P·V', [0, 2, 1, 3])): the swap back composed with
  // [0, 3, 1, 2].
  const Operation *ret = main.entry_block()->terminator();
  const Operation *reshape = ret->operand(0)->defining_op();
  ASSERT_EQ(reshape->kind(), OpKind::kReshape);
  const Operation *back = reshape->operand(0)->defining_op();
  ASSERT_EQ(back->kind(), OpKind::kTranspose);
  EXPECT_EQ(back->GetInts("permutation"), (std::vector<int64_t>{0, 2, 1, 3}));
  const Operation *pv = back->operand(0)->defining_op();
  ASSERT_EQ(pv->kind(), OpKind::kDotGeneral);
  EXPECT_EQ(pv->result()->type().dims(), (std::vector<int64_t>{2, 2, 7, 16}));
  EXPECT_EQ(pv->GetInts("lhs_batching_dimensions"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(pv->GetInts("lhs_contracting_dimensions"), (std::vector<int64_t>{3}));
  ASSERT_EQ(pv->operand(0)->defining_op()->kind(), OpKind::kDivide);  // P
  EXPECT_EQ(pv->operand(1)->defining_op()->kind(),
            OpKind::kReshape);  // V as written
  EXPECT_EQ(pv->GetInts("rhs_batching_dimensions"), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(pv->GetInts("rhs_contracting_dimensions"), (std::vector<int64_t>{1}));
  int64_t dots = 0;
  for (const auto &op : main.entry_block()->operations()) {
    if (op->kind() != OpKind::kDotGeneral || op.get() == pv) continue;
    ++dots;  // Q·K as written: the kernel reads Q and K through strides
    EXPECT_EQ(op->GetInts("lhs_batching_dimensions"), (std::vector<int64_t>{0, 2}));
    EXPECT_EQ(op->GetInts("rhs_batching_dimensions"), (std::vector<int64_t>{0, 2}));
  }
  EXPECT_EQ(dots, 1);
}

TEST(CanonicalizeAttentionLayoutsTest, MaskedAttentionWithPFirstIsOneFlashAttentionItem) {
  std::unique_ptr<Module> module = Parse(kMaskedPFirst);
  ASSERT_NE(module, nullptr);
  std::vector<Tensor> inputs = Inputs(Main(*module));
  float *mask = inputs[3].data_as<float>();
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < inputs[3].type().element_count(); ++i) {
    const int64_t q = (i / 7) % 7, k = i % 7;
    mask[i] = k > q ? -inf : 0.0f;  // causal
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, EvaluateFunction(Main(*module), inputs));
  ASSERT_OK_AND_ASSIGN(Compiled on, CompileAndRun(*module, {}, inputs));
  // The rule's form as written (P first, V's value dim last): no rewrite, no
  // copy; the kernel reads [batch, seq, head, dim] through strides.
  EXPECT_EQ(CanonicalizeAttentionLayouts(Main(*Parse(kMaskedPFirst))), 0);
  EXPECT_EQ(on.kinds, (std::map<std::string, int64_t>{{"flash_attention", 1}}));
  EXPECT_LE(MaxAbsDiff(on.outputs[0], expected[0]), kTolerance);
}

// V as [batch, head, dv, key]: its value dim is not last, so V is transposed to
// [batch, head, key, dv] and the kernel runs.
TEST(CanonicalizeAttentionLayoutsTest, ValueDimNotLastIsTransposed) {
  std::string text =
      ReplaceOnce(kMaskedPFirst, "%v: tensor<2x7x2x16xf32>", "%v: tensor<2x2x16x7xf32>");
  text = ReplaceOnce(text,
                     "%o = stablehlo.dot_general %p, %v, batching_dims = [0, 1] x [0, 2], "
                     "contracting_dims = [3] x [1] : (tensor<2x2x7x7xf32>, tensor<2x7x2x16xf32>)",
                     "%o = stablehlo.dot_general %p, %v, batching_dims = [0, 1] x [0, 1], "
                     "contracting_dims = [3] x [3] : (tensor<2x2x7x7xf32>, tensor<2x2x16x7xf32>)");
  Kinds on, off;
  ASSERT_NO_FATAL_FAILURE(RunBothWays(text, on, off));
  EXPECT_EQ(on, (Kinds{{"flash_attention", 1}, {"shape", 1}}));
  EXPECT_EQ(off.count("flash_attention"), 0u);
}

TEST(CanonicalizeAttentionLayoutsTest, LeavesWhatTheFlashRuleCannotFuse) {
  // The scores also returned: the chain's values are read outside it.
  std::string scores_returned = ReplaceOnce(kMaskedPFirst, "-> tensor<2x2x7x16xf32> {",
                                            "-> (tensor<2x2x7x16xf32>, tensor<2x2x7x7xf32>) {");
  scores_returned = ReplaceOnce(scores_returned, "return %o : tensor<2x2x7x16xf32>",
                                "return %o, %s : tensor<2x2x7x16xf32>, tensor<2x2x7x7xf32>");
  // No exponential: not a softmax.
  const std::string no_exp =
      ReplaceOnce(kMaskedPFirst, "%e = stablehlo.exponential %x", "%e = stablehlo.negate %x");
  // Already the rule's layouts: nothing to rewrite.
  std::string canonical = R"(
func.func @main(%q: tensor<2x2x7x16xf32>, %k: tensor<2x2x7x16xf32>, %v: tensor<2x2x7x16xf32>) -> tensor<2x2x7x16xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %c = stablehlo.constant dense<2.500000e-01> : tensor<2x2x7x7xf32>
  %qk = stablehlo.dot_general %q, %k, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x2x7x16xf32>, tensor<2x2x7x16xf32>) -> tensor<2x2x7x7xf32>
  %s = stablehlo.multiply %qk, %c : tensor<2x2x7x7xf32>
  %m = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [3] : (tensor<2x2x7x7xf32>, tensor<f32>) -> tensor<2x2x7xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x2x7xf32>) -> tensor<2x2x7x7xf32>
  %x = stablehlo.subtract %s, %mb : tensor<2x2x7x7xf32>
  %e = stablehlo.exponential %x : tensor<2x2x7x7xf32>
  %l = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<2x2x7x7xf32>, tensor<f32>) -> tensor<2x2x7xf32>
  %lb = stablehlo.broadcast_in_dim %l, dims = [0, 1, 2] : (tensor<2x2x7xf32>) -> tensor<2x2x7x7xf32>
  %p = stablehlo.divide %e, %lb : tensor<2x2x7x7xf32>
  %o = stablehlo.dot_general %p, %v, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x2x7x7xf32>, tensor<2x2x7x16xf32>) -> tensor<2x2x7x16xf32>
  return %o : tensor<2x2x7x16xf32>
})";
  for (const std::string &text : {scores_returned, no_exp, canonical}) {
    std::unique_ptr<Module> module = Parse(text);
    ASSERT_NE(module, nullptr);
    EXPECT_EQ(CanonicalizeAttentionLayouts(Main(*module)), 0) << text;
  }
}

}  // namespace
}  // namespace accy
