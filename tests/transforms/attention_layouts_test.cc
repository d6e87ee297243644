// canonicalize-attention-layouts
// (src/transforms/canonicalize_attention_layouts.h) and the simplify-arithmetic
// identity it relies on: attention as JAX exports it (the searchless-chess
// transformer of ../shared/models: q, k, v of [batch, seq, heads, head_dim],
// Q·K batching dims (0, 2), the softmax guard maximum(-inf, max(s)), P·V
// written as V·P and transposed back) becomes one flash_attention work item and
// matches the reference evaluator; what the pass must leave alone.
#include <algorithm>
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

// Found by review: V·P whose V is the raw scores (a value of the softmax chain, which the
// kernel would read from memory it never writes), and a V·P with an f64 result of f32 operands
// (the kernel computes in one element type). The pass leaves both, the rule fuses neither, and
// both run and match the reference.
constexpr char kValuesAreScores[] = R"(
func.func @main(%q: tensor<2x6x4xf32>, %k: tensor<2x6x4xf32>, %v: tensor<2x6x6xf32>) -> (tensor<2x6x6xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sc = stablehlo.constant dense<0.5> : tensor<f32>
  %s0 = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<2x6x4xf32>, tensor<2x6x4xf32>) -> tensor<2x6x6xf32>
  %scb = stablehlo.broadcast_in_dim %sc, dims = [] : (tensor<f32>) -> tensor<2x6x6xf32>
  %s1 = stablehlo.multiply %s0, %scb : tensor<2x6x6xf32>
  %m = stablehlo.reduce(%s1 init: %ninf) applies stablehlo.maximum across dimensions = [2] : (tensor<2x6x6xf32>, tensor<f32>) -> tensor<2x6xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<2x6xf32>) -> tensor<2x6x6xf32>
  %dd = stablehlo.subtract %s1, %mb : tensor<2x6x6xf32>
  %e = stablehlo.exponential %dd : tensor<2x6x6xf32>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<2x6x6xf32>, tensor<f32>) -> tensor<2x6xf32>
  %sbb = stablehlo.broadcast_in_dim %sum, dims = [0, 1] : (tensor<2x6xf32>) -> tensor<2x6x6xf32>
  %p = stablehlo.divide %e, %sbb : tensor<2x6x6xf32>
  %o = stablehlo.dot_general %s0, %p, batching_dims = [0] x [0], contracting_dims = [1] x [2] : (tensor<2x6x6xf32>, tensor<2x6x6xf32>) -> tensor<2x6x6xf32>
  %t = stablehlo.transpose %o, dims = [0, 2, 1] : (tensor<2x6x6xf32>) -> tensor<2x6x6xf32>
  return %t : tensor<2x6x6xf32>
}
)";

constexpr char kMixedTypes[] = R"(
func.func @main(%q: tensor<2x5x4xf32>, %k: tensor<2x6x4xf32>, %v: tensor<2x6x3xf32>) -> (tensor<2x5x3xf64>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sc = stablehlo.constant dense<0.5> : tensor<f32>
  %s0 = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<2x5x4xf32>, tensor<2x6x4xf32>) -> tensor<2x5x6xf32>
  %scb = stablehlo.broadcast_in_dim %sc, dims = [] : (tensor<f32>) -> tensor<2x5x6xf32>
  %s1 = stablehlo.multiply %s0, %scb : tensor<2x5x6xf32>
  %m = stablehlo.reduce(%s1 init: %ninf) applies stablehlo.maximum across dimensions = [2] : (tensor<2x5x6xf32>, tensor<f32>) -> tensor<2x5xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<2x5xf32>) -> tensor<2x5x6xf32>
  %dd = stablehlo.subtract %s1, %mb : tensor<2x5x6xf32>
  %e = stablehlo.exponential %dd : tensor<2x5x6xf32>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<2x5x6xf32>, tensor<f32>) -> tensor<2x5xf32>
  %sbb = stablehlo.broadcast_in_dim %sum, dims = [0, 1] : (tensor<2x5xf32>) -> tensor<2x5x6xf32>
  %p = stablehlo.divide %e, %sbb : tensor<2x5x6xf32>
  %o = stablehlo.dot_general %v, %p, batching_dims = [0] x [0], contracting_dims = [1] x [2] : (tensor<2x6x3xf32>, tensor<2x5x6xf32>) -> tensor<2x3x5xf64>
  %t = stablehlo.transpose %o, dims = [0, 2, 1] : (tensor<2x3x5xf64>) -> tensor<2x5x3xf64>
  return %t : tensor<2x5x3xf64>
}
)";

TEST(CanonicalizeAttentionLayoutsTest, LeavesAttentionTheKernelCannotRead) {
  // The same in P·V form (the pass has nothing to do; rule 7 must not fuse it).
  std::string p_first = ReplaceOnce(
      kValuesAreScores,
      "%o = stablehlo.dot_general %s0, %p, batching_dims = [0] x [0], contracting_dims = [1] x [2]",
      "%o = stablehlo.dot_general %p, %s0, batching_dims = [0] x [0], contracting_dims = [2] x "
      "[1]");
  p_first = ReplaceOnce(p_first,
                        "  %t = stablehlo.transpose %o, dims = [0, 2, 1] : (tensor<2x6x6xf32>) -> "
                        "tensor<2x6x6xf32>\n  return %t",
                        "  return %o");
  for (const std::string &text :
       {std::string(kValuesAreScores), p_first, std::string(kMixedTypes)}) {
    std::unique_ptr<Module> module = Parse(text);
    ASSERT_NE(module, nullptr);
    std::unique_ptr<Module> copy = Parse(text);
    SimplifyLayoutChains(Main(*copy));
    EXPECT_EQ(CanonicalizeAttentionLayouts(Main(*copy)), 0) << text;
    const std::vector<Tensor> inputs = Inputs(Main(*module));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, EvaluateFunction(Main(*module), inputs));
    ASSERT_OK_AND_ASSIGN(Compiled on, CompileAndRun(*module, {}, inputs));
    EXPECT_EQ(on.kinds.count("flash_attention"), 0u) << text;
    const Tensor &got = on.outputs[0];
    double worst = 0;
    for (int64_t i = 0; i < got.type().element_count(); ++i) {
      worst = std::max(worst, std::fabs(got.GetAsDouble(i) - expected[0].GetAsDouble(i)));
    }
    EXPECT_LE(worst, 1e-5) << text;
  }
}

}  // namespace
}  // namespace accy

namespace accy {
namespace {

// Q, K and V in any dim order (a permutation of B, S, H and the head dim D for Q and K; of B,
// S, H for V with its value dim E last), the batching dims listed B, H or H, B, a causal mask
// as a broadcast [S, S] constant (the kernel skips each query tile's masked keys), 40 tokens
// (three query tiles on AVX-512, five on AVX2): the flash kernel's strided reads, its key
// skipping and the NaN/infinity check over the skipped K and V rows against the reference.
struct StridedCase {
  const char *q;  // dim letters, outermost first
  const char *k;
  const char *v;     // B, S, H in some order, then E
  bool heads_first;  // batching dims listed H, B (the scores are [H, B, S, S])
};

constexpr int64_t kB = 2, kS = 40, kH = 3, kD = 8, kE = 16;

int64_t Extent(char letter) {
  switch (letter) {
    case 'B':
      return kB;
    case 'S':
      return kS;
    case 'H':
      return kH;
    case 'D':
      return kD;
    default:
      return kE;
  }
}

std::string Shape(const std::string &letters) {
  std::string shape;
  for (char c : letters) shape += std::to_string(Extent(c)) + "x";
  return "tensor<" + shape + "f32>";
}

int64_t Position(const std::string &letters, char letter) {
  return static_cast<int64_t>(letters.find(letter));
}

std::string StridedProgram(const StridedCase &c) {
  const std::string q = c.q, k = c.k, v = c.v;
  const char first = c.heads_first ? 'H' : 'B', second = c.heads_first ? 'B' : 'H';
  const std::string scores = Shape(std::string{first, second} + "SS");
  const std::string out = Shape(std::string{first, second} + "SE");
  auto dims = [&](const std::string &letters, std::initializer_list<char> which) {
    std::string list;
    for (char w : which) list += (list.empty() ? "" : ", ") + std::to_string(Position(letters, w));
    return "[" + list + "]";
  };
  std::string mask = "[";
  for (int64_t i = 0; i < kS; ++i) {
    mask += i == 0 ? "[" : ", [";
    for (int64_t j = 0; j < kS; ++j)
      mask += std::string(j == 0 ? "" : ", ") + (j > i ? "0xFF800000" : "0.0");
    mask += "]";
  }
  mask += "]";
  std::string text = "func.func @main(%q: " + Shape(q) + ", %k: " + Shape(k) + ", %v: " + Shape(v) +
                     ") -> " + out + " {\n";
  text += "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n";
  text += "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n";
  text += "  %c = stablehlo.constant dense<0.35> : tensor<f32>\n";
  text += "  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> " + scores + "\n";
  text += "  %m = stablehlo.constant dense<" + mask + "> : tensor<40x40xf32>\n";
  text += "  %mb = stablehlo.broadcast_in_dim %m, dims = [2, 3] : (tensor<40x40xf32>) -> " +
          scores + "\n";
  text += "  %qk = stablehlo.dot_general %q, %k, batching_dims = " + dims(q, {first, second}) +
          " x " + dims(k, {first, second}) + ", contracting_dims = " + dims(q, {'D'}) + " x " +
          dims(k, {'D'}) + " : (" + Shape(q) + ", " + Shape(k) + ") -> " + scores + "\n";
  text += "  %sc = stablehlo.multiply %qk, %cb : " + scores + "\n";
  text += "  %s = stablehlo.add %sc, %mb : " + scores + "\n";
  text +=
      "  %mx = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [3] "
      ": (" +
      scores + ", tensor<f32>) -> " + Shape(std::string{first, second} + "S") + "\n";
  text += "  %mxb = stablehlo.broadcast_in_dim %mx, dims = [0, 1, 2] : (" +
          Shape(std::string{first, second} + "S") + ") -> " + scores + "\n";
  text += "  %x = stablehlo.subtract %s, %mxb : " + scores + "\n";
  text += "  %e = stablehlo.exponential %x : " + scores + "\n";
  text +=
      "  %l = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [3] : (" +
      scores + ", tensor<f32>) -> " + Shape(std::string{first, second} + "S") + "\n";
  text += "  %lb = stablehlo.broadcast_in_dim %l, dims = [0, 1, 2] : (" +
          Shape(std::string{first, second} + "S") + ") -> " + scores + "\n";
  text += "  %p = stablehlo.divide %e, %lb : " + scores + "\n";
  text += "  %o = stablehlo.dot_general %p, %v, batching_dims = [0, 1] x " +
          dims(v, {first, second}) + ", contracting_dims = [3] x " + dims(v, {'S'}) + " : (" +
          scores + ", " + Shape(v) + ") -> " + out + "\n";
  text += "  return %o : " + out + "\n}\n";
  return text;
}

// Sets the element of `t` (dims `letters`) at B = 1, S = `token`, H = 2 and the first head or
// value index to `value`.
void SetAt(Tensor &t, const std::string &letters, int64_t token, float value) {
  int64_t index = 0;
  for (char c : letters) {
    const int64_t coordinate = c == 'B' ? 1 : c == 'S' ? token : c == 'H' ? 2 : 0;
    index = index * Extent(c) + coordinate;
  }
  t.data_as<float>()[index] = value;
}

class StridedAttentionTest : public ::testing::TestWithParam<StridedCase> {};

TEST_P(StridedAttentionTest, OneFlashAttentionItemMatchesTheReference) {
  const StridedCase &c = GetParam();
  std::unique_ptr<Module> module = Parse(StridedProgram(c));
  ASSERT_NE(module, nullptr);
  const float inf = std::numeric_limits<float>::infinity();
  // Finite inputs; an infinity in K, then in V, at key 30: masked for the first query tile
  // (rows 0-15), whose skipped keys must then run (the reference's row becomes NaN or stays
  // finite by the same IEEE arithmetic).
  for (int variant = 0; variant < 3; ++variant) {
    std::vector<Tensor> inputs = Inputs(Main(*module));
    if (variant == 1) SetAt(inputs[1], c.k, 30, inf);
    if (variant == 2) SetAt(inputs[2], c.v, 30, -inf);
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, EvaluateFunction(Main(*module), inputs));
    const float *e = expected[0].data_as<float>();
    const bool finite = std::all_of(e, e + expected[0].type().element_count(),
                                    [](float x) { return std::isfinite(x); });
    EXPECT_EQ(finite, variant == 0) << variant;  // the infinity reaches some rows
    ASSERT_OK_AND_ASSIGN(Compiled on, CompileAndRun(*module, {}, inputs));
    EXPECT_EQ(on.kinds, (Kinds{{"flash_attention", 1}})) << variant;
    EXPECT_LE(MaxAbsDiff(on.outputs[0], expected[0]), kTolerance) << variant;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, StridedAttentionTest,
                         ::testing::Values(StridedCase{"BSHD", "BSHD", "BSHE", false},
                                           StridedCase{"BSHD", "BHDS", "SBHE", true},
                                           StridedCase{"DSHB", "HBSD", "HSBE", false},
                                           StridedCase{"HDBS", "SDBH", "BHSE", true}));

}  // namespace
}  // namespace accy
