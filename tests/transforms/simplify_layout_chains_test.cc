// simplify-layout-chains (src/transforms/simplify_layout_chains.h): each rewrite it must do, the
// look-alikes it must leave (a broadcast that transposes, a convert round trip that rounds),
// and the same bits through the engine with the pass on and off.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "src/transforms/eliminate_dead_code.h"
#include "src/transforms/simplify_layout_chains.h"
#include "tests/test_util.h"
#include "tests/transforms/transforms_test_util.h"

namespace accy {
namespace {

Function& Main(Module& module) { return *module.functions()[0]; }

// The ops left after the pass and dead-code elimination, by name, in order.
std::vector<std::string> OpsAfter(Module& module, int64_t expected_rewrites) {
  EXPECT_EQ(SimplifyLayoutChains(Main(module)), expected_rewrites);
  EliminateDeadCode(Main(module));
  EXPECT_OK(Verify(module));
  std::vector<std::string> names;
  for (const auto& op : Main(module).entry_block()->operations()) {
    names.emplace_back(op->name());
  }
  return names;
}

constexpr char kChains[] = R"(
func.func @main(%x: tensor<2x3x4xf32>, %h: tensor<6xf16>, %i: tensor<5xi16>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<5x6xf16>, tensor<6xf16>, tensor<5xi16>) {
  %r0 = stablehlo.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %r1 = stablehlo.reshape %r0 : (tensor<6x4xf32>) -> tensor<24xf32>
  %r2 = stablehlo.reshape %r1 : (tensor<24xf32>) -> tensor<2x3x4xf32>
  %t0 = stablehlo.transpose %x, dims = [1, 2, 0] : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %t1 = stablehlo.transpose %t0, dims = [1, 2, 0] : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  %t2 = stablehlo.transpose %t1, dims = [1, 2, 0] : (tensor<4x2x3xf32>) -> tensor<2x3x4xf32>
  %r3 = stablehlo.reshape %r0 : (tensor<6x4xf32>) -> tensor<6x4xf32>
  %b0 = stablehlo.broadcast_in_dim %h, dims = [0] : (tensor<6xf16>) -> tensor<6x1xf16>
  %b1 = stablehlo.broadcast_in_dim %b0, dims = [1, 0] : (tensor<6x1xf16>) -> tensor<5x6xf16>
  %c0 = stablehlo.convert %h : (tensor<6xf16>) -> tensor<6xf32>
  %c1 = stablehlo.convert %c0 : (tensor<6xf32>) -> tensor<6xf16>
  %c2 = stablehlo.convert %i : (tensor<5xi16>) -> tensor<5xi64>
  %c3 = stablehlo.convert %c2 : (tensor<5xi64>) -> tensor<5xi16>
  return %r2, %t1, %t2, %r3, %b1, %c1, %c3 : tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<5x6xf16>, tensor<6xf16>, tensor<5xi16>
})";

TEST(SimplifyLayoutChainsTest, CollapsesChainsAndDropsIdentities) {
  std::unique_ptr<Module> module = Parse(kChains);
  ASSERT_NE(module, nullptr);
  // r1 (edited onto x), r2 (becomes x), t1 (edited), t2 (becomes x), r3 (becomes r0),
  // b1 (edited), c1 and c3 (become h and i).
  EXPECT_THAT(OpsAfter(*module, 8),
              ::testing::ElementsAre("reshape", "transpose", "broadcast_in_dim", "return"));
  Block& block = *Main(*module).entry_block();
  const Operation* ret = block.terminator();
  const Function& f = Main(*module);
  EXPECT_EQ(ret->operand(0), f.parameter(0));  // reshape chain back to x's type
  EXPECT_EQ(ret->operand(2), f.parameter(0));  // three rotations
  EXPECT_EQ(ret->operand(5), f.parameter(1));  // f16 -> f32 -> f16
  EXPECT_EQ(ret->operand(6), f.parameter(2));  // i16 -> i64 -> i16
  const Operation* transpose = block.operations()[1].get();
  EXPECT_EQ(transpose->operand(0), f.parameter(0));
  EXPECT_EQ(transpose->GetInts("permutation"), std::vector<int64_t>({2, 0, 1}));
  const Operation* broadcast = block.operations()[2].get();
  EXPECT_EQ(broadcast->operand(0), f.parameter(1));
  EXPECT_EQ(broadcast->GetInts("broadcast_dimensions"), std::vector<int64_t>({1}));
}

// A same-type broadcast_in_dim with dims [1, 0] transposes; f32 -> f16 -> f32 rounds; a narrower
// integer in the middle wraps: all kept.
TEST(SimplifyLayoutChainsTest, KeepsLookAlikesThatChangeValues) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%s: tensor<3x3xf32>, %f: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<3x3xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>) {
  %0 = stablehlo.broadcast_in_dim %s, dims = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %1 = stablehlo.convert %f : (tensor<4xf32>) -> tensor<4xf16>
  %2 = stablehlo.convert %1 : (tensor<4xf16>) -> tensor<4xf32>
  %3 = stablehlo.convert %i : (tensor<4xi32>) -> tensor<4xi8>
  %4 = stablehlo.convert %3 : (tensor<4xi8>) -> tensor<4xi32>
  %5 = stablehlo.convert %i : (tensor<4xi32>) -> tensor<4xui64>
  %6 = stablehlo.convert %5 : (tensor<4xui64>) -> tensor<4xi32>
  return %0, %2, %4, %6 : tensor<3x3xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>
})");
  ASSERT_NE(module, nullptr);
  const std::string before = PrintModule(*module);
  EXPECT_EQ(SimplifyLayoutChains(Main(*module)), 0);
  EXPECT_EQ(PrintModule(*module), before);
}

// JAX's max-pool gradient pads with zero widths and slices the whole result back: both are
// the operand. A pad of the same shape that shifts (low 1, high -1), a same-shape slice of a
// size-1 dim with stride 2, and real pads and slices are kept.
TEST(SimplifyLayoutChainsTest, DropsZeroPadsAndWholeSlicesOnly) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%x: tensor<4x1xf32>, %z: tensor<f32>) -> (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<6x1xf32>, tensor<2x1xf32>) {
  %0 = stablehlo.pad %x, %z, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %1 = stablehlo.slice %0 [0:4, 0:1] : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %2 = stablehlo.pad %x, %z, low = [1, 0], high = [-1, 0], interior = [0, 0] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %3 = stablehlo.slice %x [0:4, 0:1:2] : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %4 = stablehlo.pad %x, %z, low = [1, 0], high = [1, 0], interior = [0, 0] : (tensor<4x1xf32>, tensor<f32>) -> tensor<6x1xf32>
  %5 = stablehlo.slice %x [1:3, 0:1] : (tensor<4x1xf32>) -> tensor<2x1xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<6x1xf32>, tensor<2x1xf32>
})");
  ASSERT_NE(module, nullptr);
  EXPECT_THAT(OpsAfter(*module, 2),
              ::testing::ElementsAre("pad", "slice", "pad", "slice", "return"));
  const Operation* ret = Main(*module).entry_block()->terminator();
  EXPECT_EQ(ret->operand(0), Main(*module).parameter(0));
  EXPECT_EQ(ret->operand(1), Main(*module).parameter(0));
  EXPECT_EQ(ret->operand(2)->defining_op()->GetInts("edge_padding_low"), std::vector<int64_t>({1, 0}));
}

// JAX's input gradient of a strided convolution: conv(dy, reverse(w, [0, 1])). The reverse
// becomes window_reversal on both spatial dims; a second convolution with window_reversal
// already set on dim 0 gets it cleared there; a reverse that touches a feature dim (2) stays,
// and so does the reverse of a stride-1 input gradient (no lhs dilation: oneDNN's
// convolution_forward runs it, which takes no reversal); a chain of two reverses folds whole.
constexpr char kReversedKernels[] = R"(
func.func @main(%dy: tensor<1x5x5x6xf32>, %w: tensor<3x3x4x6xf32>) -> (tensor<1x10x10x4xf32>, tensor<1x10x10x4xf32>, tensor<1x10x10x4xf32>, tensor<1x5x5x4xf32>, tensor<1x10x10x4xf32>) {
  %r = stablehlo.reverse %w, dims = [0, 1] : tensor<3x3x4x6xf32>
  %a = stablehlo.convolution(%dy, %r) dim_numbers = [b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f], window = {pad = [[1, 2], [1, 2]], lhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x5x6xf32>, tensor<3x3x4x6xf32>) -> tensor<1x10x10x4xf32>
  %b = stablehlo.convolution(%dy, %r) dim_numbers = [b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f], window = {pad = [[1, 2], [1, 2]], lhs_dilate = [2, 2], reverse = [true, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x5x6xf32>, tensor<3x3x4x6xf32>) -> tensor<1x10x10x4xf32>
  %f = stablehlo.reverse %w, dims = [0, 2] : tensor<3x3x4x6xf32>
  %c = stablehlo.convolution(%dy, %f) dim_numbers = [b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f], window = {pad = [[1, 2], [1, 2]], lhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x5x6xf32>, tensor<3x3x4x6xf32>) -> tensor<1x10x10x4xf32>
  %r0 = stablehlo.reverse %w, dims = [0] : tensor<3x3x4x6xf32>
  %r01 = stablehlo.reverse %r0, dims = [1] : tensor<3x3x4x6xf32>
  %n = stablehlo.convolution(%dy, %r01) dim_numbers = [b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f], window = {pad = [[1, 2], [1, 2]], lhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x5x6xf32>, tensor<3x3x4x6xf32>) -> tensor<1x10x10x4xf32>
  %s = stablehlo.convolution(%dy, %r) dim_numbers = [b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x5x6xf32>, tensor<3x3x4x6xf32>) -> tensor<1x5x5x4xf32>
  return %a, %b, %c, %s, %n : tensor<1x10x10x4xf32>, tensor<1x10x10x4xf32>, tensor<1x10x10x4xf32>, tensor<1x5x5x4xf32>, tensor<1x10x10x4xf32>
})";

TEST(SimplifyLayoutChainsTest, FoldsAKernelReverseIntoWindowReversal) {
  std::unique_ptr<Module> module = Parse(kReversedKernels);
  ASSERT_NE(module, nullptr);
  EXPECT_THAT(OpsAfter(*module, 3),
              ::testing::ElementsAre("reverse", "convolution", "convolution", "reverse",
                                     "convolution", "convolution", "convolution", "return"));
  const Operation* ret = Main(*module).entry_block()->terminator();
  const Value* w = Main(*module).parameter(1);
  EXPECT_EQ(ret->operand(0)->defining_op()->operand(1), w);
  EXPECT_EQ(ret->operand(0)->defining_op()->GetInts("window_reversal"), std::vector<int64_t>({1, 1}));
  EXPECT_EQ(ret->operand(1)->defining_op()->operand(1), w);
  EXPECT_EQ(ret->operand(1)->defining_op()->GetInts("window_reversal"), std::vector<int64_t>({0, 1}));
  EXPECT_EQ(ret->operand(2)->defining_op()->operand(1)->defining_op()->kind(), OpKind::kReverse);
  EXPECT_EQ(ret->operand(3)->defining_op()->operand(1)->defining_op()->kind(), OpKind::kReverse);
  // reverse(reverse(w, [0]), [1]) folds whole.
  EXPECT_EQ(ret->operand(4)->defining_op()->operand(1), w);
  EXPECT_EQ(ret->operand(4)->defining_op()->GetInts("window_reversal"), std::vector<int64_t>({1, 1}));
}

// Through the engine (items this small run on the JIT; onednn_convolution_test.cc runs the
// folded form on oneDNN's deconvolution), each result within 2e-6 x 54 (taps x features) of
// the reference evaluator's on the unfolded program.
TEST(SimplifyLayoutChainsTest, FoldedReversesMatchTheReference) {
  std::unique_ptr<Module> module = Parse(kReversedKernels);
  ASSERT_NE(module, nullptr);
  std::vector<Tensor> inputs;
  for (const TensorType& type : Main(*module).parameter_types()) {
    ASSERT_OK_AND_ASSIGN(Tensor t, Tensor::Allocate(type));
    for (int64_t i = 0; i < t.element_count(); ++i) {
      t.data_as<float>()[i] = static_cast<float>((i * 37 + 11) % 23) / 11.0f - 1.0f;
    }
    inputs.push_back(std::move(t));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, Evaluate(*module, "main", inputs));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> got, exe->Run(inputs));
  ASSERT_EQ(got.size(), 5u);
  for (size_t r = 0; r < got.size(); ++r) {
    for (int64_t i = 0; i < want[r].element_count(); ++i) {
      ASSERT_NEAR(got[r].data_as<float>()[i], want[r].data_as<float>()[i], 2e-6 * 54) << r << " " << i;
    }
  }
}

TEST(SimplifyLayoutChainsTest, TheEngineGivesTheSameBitsWithThePassOnAndOff) {
  std::unique_ptr<Module> module = Parse(kChains);
  ASSERT_NE(module, nullptr);
  EngineOptions off;
  off.disabled_passes = {"simplify-layout-chains"};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> on_engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> off_engine, Engine::Create(off));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> on, on_engine->Compile(*module));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> plain, off_engine->Compile(*module));
  std::vector<Tensor> inputs;
  for (const TensorType& type : Main(*module).parameter_types()) {
    ASSERT_OK_AND_ASSIGN(Tensor t, Tensor::Allocate(type));
    auto* bytes = static_cast<uint8_t*>(t.data());
    for (int64_t b = 0; b < t.byte_size(); ++b) {
      // Finite values of every type: f16 bytes with the exponent below all-ones.
      bytes[b] = static_cast<uint8_t>((b * 29 + 7) % 120);
    }
    inputs.push_back(std::move(t));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> got, on->Run(inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, plain->Run(inputs));
  ASSERT_EQ(got.size(), want.size());
  for (size_t r = 0; r < got.size(); ++r) {
    TensorComparison same = CompareExact(got[r], want[r]);
    EXPECT_TRUE(same.ok) << r << ": " << same.message;
  }
}

}  // namespace
}  // namespace accy
