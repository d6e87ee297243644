// broadcast-splat-constants (src/transforms/broadcast_splat_constants.h): splats of every
// element type become a scalar constant and a broadcast, in nested regions too; constants that
// are not splats, one-element constants and unused ones stay; and the engine gives the same bits
// with the pass on and off while the splat leaves the constant area.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/transforms/broadcast_splat_constants.h"
#include "src/transforms/eliminate_dead_code.h"
#include "tests/test_util.h"
#include "tests/transforms/transforms_test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSplats[] = R"(
func.func @main(%x: tensor<2x3xf32>, %i: tensor<4xi32>, %p: tensor<4xi1>, %h: tensor<2x3xbf16>) -> (tensor<2x3xf32>, tensor<4xi32>, tensor<4xi1>, tensor<2x3xbf16>, tensor<2x3xf32>, tensor<1xf32>) {
  %c0 = stablehlo.constant dense<1.12837911> : tensor<2x3xf32>
  %c1 = stablehlo.constant dense<-7> : tensor<4xi32>
  %c2 = stablehlo.constant dense<true> : tensor<4xi1>
  %c3 = stablehlo.constant dense<-0.5> : tensor<2x3xbf16>
  %c4 = stablehlo.constant dense<[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]> : tensor<2x3xf32>
  %c5 = stablehlo.constant dense<4.0> : tensor<1xf32>
  %c6 = stablehlo.constant dense<9.0> : tensor<8xf32>
  %c7 = stablehlo.constant dense<-0.0> : tensor<2x3xf32>
  %a0 = stablehlo.multiply %x, %c0 : tensor<2x3xf32>
  %a1 = stablehlo.add %i, %c1 : tensor<4xi32>
  %a2 = stablehlo.and %p, %c2 : tensor<4xi1>
  %a3 = stablehlo.multiply %h, %c3 : tensor<2x3xbf16>
  %a4 = stablehlo.add %x, %c4 : tensor<2x3xf32>
  %a5 = stablehlo.add %a4, %c7 : tensor<2x3xf32>
  return %a0, %a1, %a2, %a3, %a5, %c5 : tensor<2x3xf32>, tensor<4xi32>, tensor<4xi1>, tensor<2x3xbf16>, tensor<2x3xf32>, tensor<1xf32>
})";

TEST(BroadcastSplatConstantsTest, SplatsOfEveryTypeBecomeBroadcastsOfAScalar) {
  std::unique_ptr<Module> module = Parse(kSplats);
  ASSERT_NE(module, nullptr);
  Function& main = *module->functions()[0];
  // c0, c1, c2, c3, c7; not c4 (two distinct values), c5 (one element), c6 (no use).
  EXPECT_EQ(BroadcastSplatConstants(main), 5);
  EliminateDeadCode(main);
  ASSERT_OK(Verify(*module));
  const std::string text = PrintModule(*module);
  EXPECT_THAT(text, HasSubstr("stablehlo.constant dense<1.1283791> : tensor<f32>"));
  EXPECT_THAT(text, HasSubstr("stablehlo.constant dense<-7> : tensor<i32>"));
  EXPECT_THAT(text, HasSubstr("stablehlo.constant dense<true> : tensor<i1>"));
  EXPECT_THAT(text, HasSubstr(": tensor<bf16>"));
  EXPECT_THAT(text, HasSubstr("stablehlo.constant dense<-0.000000e+00> : tensor<f32>"));
  EXPECT_THAT(text, HasSubstr("tensor<2x3xf32>"));
  EXPECT_THAT(text, HasSubstr("dense<4.000000e+00> : tensor<1xf32>"));
  EXPECT_THAT(text, Not(HasSubstr("tensor<8xf32>")));  // the unused splat, left to DCE
  int64_t broadcasts = 0;
  for (const auto& op : main.entry_block()->operations()) {
    if (op->kind() != OpKind::kBroadcastInDim) continue;
    ++broadcasts;
    EXPECT_EQ(op->operand(0)->type().rank(), 0);
    EXPECT_TRUE(op->GetInts("broadcast_dimensions").empty());
  }
  EXPECT_EQ(broadcasts, 5);
  EXPECT_EQ(BroadcastSplatConstants(main), 0);  // a fixed point
}

constexpr char kNested[] = R"(
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<16xf32>
    cond {
      %three = stablehlo.constant dense<3> : tensor<i32>
      %c = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %half = stablehlo.constant dense<0.5> : tensor<16xf32>
      %n = stablehlo.add %i, %one : tensor<i32>
      %w = stablehlo.multiply %v, %half : tensor<16xf32>
      stablehlo.return %n, %w : tensor<i32>, tensor<16xf32>
    }
  return %r#1 : tensor<16xf32>
})";

// The while body's splat is rewritten too, and the engine gives the same bits with the pass on
// and off (x / 8 exactly).
TEST(BroadcastSplatConstantsTest, NestedRegionsAndTheSameBitsThroughTheEngine) {
  std::unique_ptr<Module> module = Parse(kNested);
  ASSERT_NE(module, nullptr);
  std::unique_ptr<Module> copy = Parse(kNested);
  EXPECT_EQ(BroadcastSplatConstants(*copy->functions()[0]), 1);
  ASSERT_OK(Verify(*copy));

  TensorType t = *TensorType::Create(ElementType::kF32, {16});
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<size_t>(i)] = 0.37f * static_cast<float>(i) - 2.0f;
  const std::vector<Tensor> inputs = {*Tensor::FromVector(t, x)};
  EngineOptions off;
  off.disabled_passes = {"broadcast-splat-constants"};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine_on, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine_off, Engine::Create(off));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> on, engine_on->Compile(*module));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> without, engine_off->Compile(*module));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> a, on->Run(inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> b, without->Run(inputs));
  EXPECT_EQ(std::memcmp(a[0].data(), b[0].data(), 64), 0);
  EXPECT_EQ(a[0].data_as<float>()[1], x[1] / 8);

  // At the top level, the 1,024-float splat (4 KiB) leaves the constant area; at most its
  // 4-byte scalar stays.
  std::unique_ptr<Module> flat = Parse(R"(
func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %c = stablehlo.constant dense<0.5> : tensor<1024xf32>
  %y = stablehlo.multiply %x, %c : tensor<1024xf32>
  return %y : tensor<1024xf32>
})");
  ASSERT_NE(flat, nullptr);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> flat_on, engine_on->Compile(*flat));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> flat_off, engine_off->Compile(*flat));
  EXPECT_EQ(flat_off->Stats().constant_bytes, 4096);
  EXPECT_LE(flat_on->Stats().constant_bytes, 4);
}

}  // namespace
}  // namespace accy
