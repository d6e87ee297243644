// sink-constants-into-regions (src/transforms/sink_constants_into_regions.h): region bodies that
// read constants (and constant expressions) of an enclosing block get their own copies; while
// bodies, captured run-time values and large constants stay as they are; CSE does not undo the
// copies; and the engine runs torch-xla's form (a reduce body comparing with a captured NaN and
// selecting a captured zero) with the reference evaluator's values, where it failed before.
#include <memory>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "src/transforms/eliminate_common_subexpressions.h"
#include "src/transforms/sink_constants_into_regions.h"
#include "tests/test_util.h"
#include "tests/transforms/transforms_test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

// The number of operands of ops in `block` (and its nested blocks) defined outside `outermost`.
int Captures(const Block& block, const Block& outermost) {
  int captures = 0;
  for (const auto& op : block.operations()) {
    for (const Value* operand : op->operands()) {
      const Block* home = operand->is_block_argument() ? operand->owner_block()
                                                       : operand->defining_op()->parent_block();
      bool inside = false;
      for (const Block* b = home; b != nullptr;) {
        if (b == &outermost) inside = true;
        const Operation* parent = b->parent() == nullptr ? nullptr : b->parent()->parent_op();
        b = parent == nullptr ? nullptr : parent->parent_block();
      }
      captures += inside ? 0 : 1;
    }
    for (int64_t r = 0; r < op->num_regions(); ++r) {
      for (const auto& nested : op->region(r)->blocks()) captures += Captures(*nested, outermost);
    }
  }
  return captures;
}

// torch-xla's form: the body compares with a NaN constant and selects a zero, both defined in
// the function; a second reduce scales by a convert of a broadcast constant (a two-op constant
// expression); a third reads a parameter (a run-time value).
constexpr char kCaptures[] = R"(
func.func @main(%a: tensor<4x8xf32>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %r0 = stablehlo.reduce(%a init: %z) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    reducer(%x: tensor<f32>, %y: tensor<f32>) {
      %c = stablehlo.compare NE, %y, %nan : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %sel = stablehlo.select %c, %y, %z : tensor<i1>, tensor<f32>
      %t = stablehlo.add %x, %sel : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }
  %two = stablehlo.constant dense<2> : tensor<i32>
  %twof = stablehlo.convert %two : (tensor<i32>) -> tensor<f32>
  %r1 = stablehlo.reduce(%a init: %z) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    reducer(%x: tensor<f32>, %y: tensor<f32>) {
      %m = stablehlo.multiply %y, %twof : tensor<f32>
      %t = stablehlo.add %x, %m : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }
  %r2 = stablehlo.reduce(%a init: %z) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    reducer(%x: tensor<f32>, %y: tensor<f32>) {
      %m = stablehlo.multiply %y, %s : tensor<f32>
      %t = stablehlo.add %x, %m : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }
  return %r0, %r1, %r2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
})";

TEST(SinkConstantsIntoRegionsTest, CapturedConstantExpressionsAreCopiedIntoTheBody) {
  std::unique_ptr<Module> module = Parse(kCaptures);
  ASSERT_NE(module, nullptr);
  Function& main = *module->functions()[0];
  const auto& ops = main.entry_block()->operations();
  const Block& body0 = *ops[2]->region(0)->entry_block();
  const Block& body1 = *ops[5]->region(0)->entry_block();
  const Block& body2 = *ops[6]->region(0)->entry_block();
  EXPECT_EQ(Captures(body0, body0), 2);
  EXPECT_EQ(Captures(body1, body1), 1);
  EXPECT_EQ(Captures(body2, body2), 1);
  // %nan and %z in the first body, %twof (convert of a constant) in the second.
  EXPECT_EQ(SinkConstantsIntoRegions(main), 3);
  ASSERT_OK(Verify(*module));
  EXPECT_EQ(Captures(body0, body0), 0);
  EXPECT_EQ(Captures(body1, body1), 0);
  EXPECT_EQ(Captures(body2, body2), 1);  // %s is a parameter: left as it is
  // Copies: constant, constant (body 0); constant, convert (body 1), before their first reader.
  EXPECT_EQ(body0.operations().size(), 6u);
  EXPECT_EQ(body1.operations()[0]->kind(), OpKind::kConstant);
  EXPECT_EQ(body1.operations()[1]->kind(), OpKind::kConvert);
  // A second run finds nothing more to copy, and CSE does not merge the copies back out.
  EXPECT_EQ(SinkConstantsIntoRegions(main), 0);
  EliminateCommonSubexpressions(main);
  EXPECT_EQ(Captures(body0, body0), 0);
  EXPECT_EQ(Captures(body1, body1), 0);
}

TEST(SinkConstantsIntoRegionsTest, WhileBodiesAndLargeConstantsStay) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%a: tensor<2000xf32>) -> (tensor<i32>, tensor<f32>) {
  %one = stablehlo.constant dense<1> : tensor<i32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %w = stablehlo.while(%i = %zero) : tensor<i32>
    cond {
      %c = stablehlo.compare LT, %i, %one : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n : tensor<i32>
    }
  %big = stablehlo.constant dense<3.0> : tensor<2000xf32>
  %f0 = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %f0) across dimensions = [0] : (tensor<2000xf32>, tensor<f32>) -> tensor<f32>
    reducer(%x: tensor<f32>, %y: tensor<f32>) {
      %t = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }
  %s = stablehlo.add %a, %big : tensor<2000xf32>
  return %w, %r : tensor<i32>, tensor<f32>
})");
  ASSERT_NE(module, nullptr);
  // The while's cond and body read %one from outside: outlined bodies take captured values.
  EXPECT_EQ(SinkConstantsIntoRegions(*module->functions()[0]), 0);
  // A constant of more than kMaxSunkElements elements is never copied (the body reads one
  // element of it through a slice and a reshape).
  std::unique_ptr<Module> large = Parse(R"(
func.func @main(%a: tensor<8xf32>) -> tensor<f32> {
  %big = stablehlo.constant dense<1.5> : tensor<2000xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %init) across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    reducer(%x: tensor<f32>, %y: tensor<f32>) {
      %e = stablehlo.slice %big [5:6] : (tensor<2000xf32>) -> tensor<1xf32>
      %k = stablehlo.reshape %e : (tensor<1xf32>) -> tensor<f32>
      %m = stablehlo.multiply %y, %k : tensor<f32>
      %t = stablehlo.add %x, %m : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }
  return %r : tensor<f32>
})");
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(SinkConstantsIntoRegions(*large->functions()[0]), 0);
}

// A body too large for CSE to merge its op as a whole (over 64 ops): CSE then merges inside
// it, and must not replace the body's copy of a constant by the equal constant outside.
TEST(SinkConstantsIntoRegionsTest, CseKeepsTheCopiesInsideLargeBodies) {
  std::string body;
  std::string last = "%y";
  for (int i = 0; i < 70; ++i) {
    body += "      %a" + std::to_string(i) + " = stablehlo.add " + last +
            ", %one : tensor<f32>\n";
    last = "%a" + std::to_string(i);
  }
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%a: tensor<8xf32>) -> (tensor<f32>, tensor<f32>) {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %init) across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    reducer(%x: tensor<f32>, %y: tensor<f32>) {
)" + body + R"(      %t = stablehlo.add %x, )" + last + R"( : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }
  return %r, %one : tensor<f32>, tensor<f32>
})");
  ASSERT_NE(module, nullptr);
  Function& main = *module->functions()[0];
  const Block& reducer = *main.entry_block()->operations()[2]->region(0)->entry_block();
  EXPECT_EQ(SinkConstantsIntoRegions(main), 70);  // 70 reads of %one, one copy
  EXPECT_EQ(reducer.operations()[0]->kind(), OpKind::kConstant);
  EliminateCommonSubexpressions(main);
  ASSERT_OK(Verify(*module));
  EXPECT_EQ(Captures(reducer, reducer), 0);
  EXPECT_EQ(reducer.operations()[0]->kind(), OpKind::kConstant);
}

// Through the engine: the captured constants' reduces give the reference evaluator's values;
// with the pass and isolate-regions-from-above (which would make the constants operands) off the
// same program fails to compile, naming the body op and the passes; so does a captured run-time
// value with isolate-regions-from-above off.
TEST(SinkConstantsIntoRegionsTest, TheEngineRunsCapturedConstantsAndNamesRunTimeCaptures) {
  const std::string constants_only = R"(
func.func @main(%a: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %r0 = stablehlo.reduce(%a init: %z) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    reducer(%x: tensor<f32>, %y: tensor<f32>) {
      %c = stablehlo.compare EQ, %y, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %sel = stablehlo.select %c, %y, %nan : tensor<i1>, tensor<f32>
      %t = stablehlo.maximum %x, %sel : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }
  %two = stablehlo.constant dense<2> : tensor<i32>
  %twof = stablehlo.convert %two : (tensor<i32>) -> tensor<f32>
  %r1 = stablehlo.reduce(%a init: %z) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    reducer(%x: tensor<f32>, %y: tensor<f32>) {
      %m = stablehlo.multiply %y, %twof : tensor<f32>
      %t = stablehlo.add %x, %m : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }
  return %r0, %r1 : tensor<4xf32>, tensor<4xf32>
})";
  std::unique_ptr<Module> module = Parse(constants_only);
  ASSERT_NE(module, nullptr);
  TensorType t = *TensorType::Create(ElementType::kF32, {4, 8});
  std::vector<float> a(32);
  for (int i = 0; i < 32; ++i) a[static_cast<size_t>(i)] = 0.25f * static_cast<float>((i * 7) % 13) - 1.0f;
  const std::vector<Tensor> inputs = {*Tensor::FromVector(t, a)};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", inputs));
  for (int threads : {1, 2}) {
    EngineOptions options;
    options.num_threads = threads;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, executable->Run(inputs));
    for (size_t r = 0; r < 2; ++r) {
      for (int i = 0; i < 4; ++i) {
        // Sums of 8 multiples of 0.5 and maxima: exact in f32.
        EXPECT_EQ(actual[r].data_as<float>()[i], expected[r].data_as<float>()[i])
            << "result " << r << " row " << i << " at " << threads << " threads";
      }
    }
  }
  EXPECT_EQ(expected[1].data_as<float>()[0], 2.0f * (a[0] + a[1] + a[2] + a[3] + a[4] + a[5] +
                                                    a[6] + a[7]));
  EngineOptions off;
  off.disabled_passes = {"sink-constants-into-regions", "isolate-regions-from-above"};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> without, Engine::Create(off));
  StatusOr<std::unique_ptr<Executable>> failed = without->Compile(*module);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(failed.status().message()),
              HasSubstr("reads a value from outside the body (the graph passes make captured "
                        "values the body's own: sink-constants-into-regions copies constants in"));

  // The run-time capture is isolate-regions-from-above's: without it the engine names the op.
  std::unique_ptr<Module> run_time = Parse(kCaptures);
  ASSERT_NE(run_time, nullptr);
  EngineOptions no_isolation;
  no_isolation.disabled_passes = {"isolate-regions-from-above"};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(no_isolation));
  StatusOr<std::unique_ptr<Executable>> refused = engine->Compile(*run_time);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("reduce body op multiply reads a value from outside the body"));
}

}  // namespace
}  // namespace accy
