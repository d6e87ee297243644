// isolate-regions-from-above (src/transforms/isolate_regions_from_above.h): reduce,
// reduce_window, sort and scatter bodies that read rank-0 run-time values of an enclosing block
// take them as operands (the rewritten op's shape is asserted), and the engine then runs them
// with the reference evaluator's values at 1 and 2 threads, also inside a while body and with a
// capture of another element type; what the pass leaves (a rank-1 capture, select_and_scatter)
// fails to compile naming the op and the passes.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "src/transforms/isolate_regions_from_above.h"
#include "tests/test_util.h"
#include "tests/transforms/transforms_test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

// Operand reads by the ops of `body` of values defined outside it.
int OutsideReads(const Block& body) {
  int reads = 0;
  for (const auto& op : body.operations()) {
    for (const Value* operand : op->operands()) {
      const Block* home = operand->is_block_argument() ? operand->owner_block()
                                                       : operand->defining_op()->parent_block();
      reads += home == &body ? 0 : 1;
    }
  }
  return reads;
}

// A variadic reduce (value and index maxima) whose body also reads two parameters: a threshold
// %s and an i32 offset %k; the captures become the third and fourth inputs.
constexpr char kReduce[] = R"(
func.func @main(%x: tensor<4x8xf32>, %s: tensor<f32>, %k: tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %i = stablehlo.iota dim = 1 : tensor<4x8xi32>
  %f0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.reduce(%x init: %f0), (%i init: %i0) across dimensions = [1] : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
    reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>) {
      %cb = stablehlo.minimum %b, %s : tensor<f32>
      %gt = stablehlo.compare GT, %cb, %a : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %v = stablehlo.select %gt, %cb, %a : tensor<i1>, tensor<f32>
      %bk = stablehlo.add %bi, %k : tensor<i32>
      %ix = stablehlo.select %gt, %bk, %ai : tensor<i1>, tensor<i32>
      stablehlo.return %v, %ix : tensor<f32>, tensor<i32>
    }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xi32>
})";

TEST(IsolateRegionsFromAboveTest, ReduceTakesItsCapturesAsInputsWithThemselvesAsInits) {
  std::unique_ptr<Module> module = Parse(kReduce);
  ASSERT_NE(module, nullptr);
  Function& main = *module->functions()[0];
  EXPECT_EQ(IsolateRegionsFromAbove(main), 1);
  ASSERT_OK(Verify(*module));
  const Operation* reduce = nullptr;
  int broadcasts = 0;
  for (const auto& op : main.entry_block()->operations()) {
    if (op->kind() == OpKind::kReduce) reduce = op.get();
    if (op->kind() == OpKind::kBroadcastInDim) ++broadcasts;
  }
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(broadcasts, 2);
  // Inputs x, iota, bcast(s), bcast(k); inits f0, i0, s, k.
  ASSERT_EQ(reduce->num_operands(), 8);
  EXPECT_EQ(reduce->operand(2)->defining_op()->kind(), OpKind::kBroadcastInDim);
  EXPECT_EQ(reduce->operand(2)->defining_op()->operand(0), main.entry_block()->argument(1));
  EXPECT_EQ(reduce->operand(3)->type().ToString(), "tensor<4x8xi32>");
  EXPECT_EQ(reduce->operand(6), main.entry_block()->argument(1));
  EXPECT_EQ(reduce->operand(7), main.entry_block()->argument(2));
  ASSERT_EQ(reduce->num_results(), 4);
  EXPECT_EQ(reduce->result(3)->type().ToString(), "tensor<4xi32>");
  const Block& body = *reduce->region(0)->entry_block();
  EXPECT_EQ(body.num_arguments(), 8);
  EXPECT_EQ(OutsideReads(body), 0);
  // The body returns the element-side copies of the captures (arguments 6 and 7).
  const Operation* ret = body.terminator();
  ASSERT_EQ(ret->num_operands(), 4);
  EXPECT_EQ(ret->operand(2), body.argument(6));
  EXPECT_EQ(ret->operand(3), body.argument(7));
  // Nothing is left to isolate.
  EXPECT_EQ(IsolateRegionsFromAbove(main), 0);
}

constexpr char kWindowSortScatter[] = R"(
func.func @main(%x: tensor<4x8xf32>, %s: tensor<f32>) -> (tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %w = "stablehlo.reduce_window"(%x, %ninf) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.minimum %b, %s : tensor<f32>
    %n = stablehlo.maximum %a, %m : tensor<f32>
    stablehlo.return %n : tensor<f32>
  }) {window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 2>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x4xf32>
  %sorted = "stablehlo.sort"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %da = stablehlo.subtract %a, %s : tensor<f32>
    %db = stablehlo.subtract %b, %s : tensor<f32>
    %ma = stablehlo.abs %da : tensor<f32>
    %mb = stablehlo.abs %db : tensor<f32>
    %c = stablehlo.compare LT, %ma, %mb, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %idx = stablehlo.constant dense<[[0], [2], [0]]> : tensor<3x1xi32>
  %upd = stablehlo.constant dense<1.0> : tensor<3x8xf32>
  %sc = "stablehlo.scatter"(%x, %idx, %upd) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.multiply %a, %s : tensor<f32>
    %n = stablehlo.add %m, %b : tensor<f32>
    stablehlo.return %n : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<4x8xf32>, tensor<3x1xi32>, tensor<3x8xf32>) -> tensor<4x8xf32>
  return %w, %sorted, %sc : tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>
})";

// A reduce inside a while body reading a loop-carried value of the body.
constexpr char kWhile[] = R"(
func.func @main(%x: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<4xf32>
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%it = %i0, %acc = %z, %t = %s) : tensor<i32>, tensor<4xf32>, tensor<f32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %c = stablehlo.compare LT, %it, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %init = stablehlo.constant dense<0.0> : tensor<f32>
    %red = stablehlo.reduce(%x init: %init) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
     reducer(%a: tensor<f32>, %b: tensor<f32>) {
      %m = stablehlo.maximum %b, %t : tensor<f32>
      %sum = stablehlo.add %a, %m : tensor<f32>
      stablehlo.return %sum : tensor<f32>
    }
    %acc2 = stablehlo.add %acc, %red : tensor<4xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %it2 = stablehlo.add %it, %one : tensor<i32>
    %step = stablehlo.constant dense<1.5> : tensor<f32>
    %t2 = stablehlo.add %t, %step : tensor<f32>
    stablehlo.return %it2, %acc2, %t2 : tensor<i32>, tensor<4xf32>, tensor<f32>
  }
  return %r#1 : tensor<4xf32>
})";

// Runs `text` on x = [i - 10.5 for i in 0..32) (4x8), s = 3.25 (and k = 100 when the function
// takes it) through the engine at 1 and 2 threads and compares every result with the
// reference evaluator bit for bit (the values are exact in f32: sums of few halves, maxima,
// products by 3.25 plus 1).
void ExpectEngineMatchesReference(const char* text) {
  std::unique_ptr<Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i) - 10.5f;
  std::vector<Tensor> inputs = {*Tensor::FromVector(*TensorType::Create(ElementType::kF32, {4, 8}), x),
                                *Tensor::FromVector(*TensorType::Create(ElementType::kF32, {}),
                                                    std::vector<float>{3.25f})};
  if (module->functions()[0]->entry_block()->num_arguments() == 3) {
    inputs.push_back(*Tensor::FromVector(*TensorType::Create(ElementType::kI32, {}),
                                         std::vector<int32_t>{100}));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", inputs));
  for (int threads : {1, 2}) {
    EngineOptions options;
    options.num_threads = threads;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, executable->Run(inputs));
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t r = 0; r < actual.size(); ++r) {
      ASSERT_EQ(actual[r].byte_size(), expected[r].byte_size());
      EXPECT_EQ(0, std::memcmp(actual[r].data(), expected[r].data(), actual[r].byte_size()))
          << "result " << r << " at " << threads << " threads: " << actual[r].ToString()
          << " vs " << expected[r].ToString();
    }
  }
}

TEST(IsolateRegionsFromAboveTest, EngineRunsCapturingReduceWindowSortScatterAndWhileBodies) {
  ExpectEngineMatchesReference(kReduce);
  ExpectEngineMatchesReference(kWindowSortScatter);
  ExpectEngineMatchesReference(kWhile);
  // The expected values themselves: row 0 of x is -10.5..-3.5, so with s = 3.25 the windowed
  // maxima of min(x, s) are the pairs' larger elements, and row 3 (21.5..28.5) gives s.
  std::unique_ptr<Module> module = Parse(kWindowSortScatter);
  ASSERT_NE(module, nullptr);
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i) - 10.5f;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module));
  const std::vector<Tensor> inputs = {
      *Tensor::FromVector(*TensorType::Create(ElementType::kF32, {4, 8}), x),
      *Tensor::FromVector(*TensorType::Create(ElementType::kF32, {}), std::vector<float>{3.25f})};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, executable->Run(inputs));
  EXPECT_EQ(out[0].data_as<float>()[0], -9.5f);
  EXPECT_EQ(out[0].data_as<float>()[15], 3.25f);
  // Row 1 (-2.5..4.5) sorted by distance to 3.25: 3.5 first, then 2.5.
  EXPECT_EQ(out[1].data_as<float>()[8], 3.5f);
  EXPECT_EQ(out[1].data_as<float>()[9], 2.5f);
  // Row 0 is updated twice: (x * s + 1) * s + 1.
  EXPECT_EQ(out[2].data_as<float>()[0], (-10.5f * 3.25f + 1.0f) * 3.25f + 1.0f);
}

// A rank-1 capture (the body slices a parameter, which no body lowering supports) and a
// select_and_scatter capture stay as they are; compiling names the body op (and the passes).
TEST(IsolateRegionsFromAboveTest, CapturesItCannotIsolateFailNamingTheOp) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%x: tensor<8xf32>, %v: tensor<4xf32>) -> tensor<f32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%x init: %init) across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    reducer(%a: tensor<f32>, %b: tensor<f32>) {
      %e = stablehlo.slice %v [1:2] : (tensor<4xf32>) -> tensor<1xf32>
      %k = stablehlo.reshape %e : (tensor<1xf32>) -> tensor<f32>
      %m = stablehlo.multiply %b, %k : tensor<f32>
      %t = stablehlo.add %a, %m : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }
  return %r : tensor<f32>
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(IsolateRegionsFromAbove(*module->functions()[0]), 0);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  StatusOr<std::unique_ptr<Executable>> failed = engine->Compile(*module);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(failed.status().message()),
              HasSubstr("reduce body op slice is not supported"));

  std::unique_ptr<Module> select_and_scatter = Parse(R"(
func.func @main(%x: tensor<4x4xf32>, %src: tensor<2x2xf32>, %s: tensor<f32>) -> tensor<4x4xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.select_and_scatter"(%x, %src, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.multiply %b, %s : tensor<f32>
    %t = stablehlo.add %a, %m : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>} : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
})");
  ASSERT_NE(select_and_scatter, nullptr);
  EXPECT_EQ(IsolateRegionsFromAbove(*select_and_scatter->functions()[0]), 0);
  failed = engine->Compile(*select_and_scatter);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(failed.status().message()), HasSubstr("isolate-regions-from-above"));
}

}  // namespace
}  // namespace accy
