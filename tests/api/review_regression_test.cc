// Programs a break-it review or the differential fuzzer (accy fuzz, docs/fuzzing.md) found
// computing wrong results or failing to compile, checked against the reference evaluator through
// the engine (at 1 and 2 threads).
#include <algorithm>
#include <cmath>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/test_util.h"

namespace accy {
namespace {

void ExpectMatchesReference(std::string_view text) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  std::vector<Tensor> inputs;
  for (const TensorType& type : module->FindFunction("main")->parameter_types()) {
    Tensor t = *Tensor::Allocate(type);
    for (int64_t i = 0; i < type.element_count(); ++i) t.SetFromDouble(i, 0.01 * i - 0.3);
    inputs.push_back(std::move(t));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", inputs));
  for (int threads : {1, 2}) {
    EngineOptions options;
    options.num_threads = threads;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(inputs));
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t r = 0; r < outputs.size(); ++r) {
      TensorComparison c = CompareClose(outputs[r], expected[r], 1e-6, 1e-5);
      EXPECT_TRUE(c.ok) << threads << " threads, result " << r << ": " << c.message << "\n"
                        << exe->plan_text();
    }
  }
}

// negate reads %t through a transposing broadcast: it must not write its output over %t.
TEST(ReviewRegressionTest, ElementwiseDoesNotOverwriteAnInputItReadsTransposed) {
  ExpectMatchesReference(R"mlir(module @m {
  func.func @main(%x: tensor<8x8x3xf32>) -> (tensor<8x8xf32>) {
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %t = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [2] : (tensor<8x8x3xf32>, tensor<f32>) -> tensor<8x8xf32>
    %b = stablehlo.broadcast_in_dim %t, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %y = stablehlo.negate %b : tensor<8x8xf32>
    %w = stablehlo.dot_general %y, %y, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    return %w : tensor<8x8xf32>
  }
})mlir");
}

// Softmax over zero keys, then a zero-length P·V: zeros (not the fused kernel's 0/0).
TEST(ReviewRegressionTest, AttentionOverZeroKeysIsZeros) {
  ExpectMatchesReference(R"mlir(module @attn {
  func.func @main(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x0x8xf32>, %v: tensor<1x1x0x8xf32>) -> tensor<1x1x4x8xf32> {
    %s = stablehlo.dot_general %q, %k, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<1x1x4x8xf32>, tensor<1x1x0x8xf32>) -> tensor<1x1x4x0xf32>
    %scb = stablehlo.constant dense<3.535534e-01> : tensor<1x1x4x0xf32>
    %s2 = stablehlo.multiply %s, %scb : tensor<1x1x4x0xf32>
    %ninf = stablehlo.constant dense<-1.0e+30> : tensor<f32>
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %mx = stablehlo.reduce(%s2 init: %ninf) applies stablehlo.maximum across dimensions = [3] : (tensor<1x1x4x0xf32>, tensor<f32>) -> tensor<1x1x4xf32>
    %mxb = stablehlo.broadcast_in_dim %mx, dims = [0, 1, 2] : (tensor<1x1x4xf32>) -> tensor<1x1x4x0xf32>
    %d = stablehlo.subtract %s2, %mxb : tensor<1x1x4x0xf32>
    %e = stablehlo.exponential %d : tensor<1x1x4x0xf32>
    %sm = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<1x1x4x0xf32>, tensor<f32>) -> tensor<1x1x4xf32>
    %smb = stablehlo.broadcast_in_dim %sm, dims = [0, 1, 2] : (tensor<1x1x4xf32>) -> tensor<1x1x4x0xf32>
    %p = stablehlo.divide %e, %smb : tensor<1x1x4x0xf32>
    %o = stablehlo.dot_general %p, %v, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<1x1x4x0xf32>, tensor<1x1x0x8xf32>) -> tensor<1x1x4x8xf32>
    return %o : tensor<1x1x4x8xf32>
  }
})mlir");
}

// A fused consumer of a while's second result is ordered after the while.
TEST(ReviewRegressionTest, ConsumerOfASecondWhileResultRunsAfterTheLoop) {
  ExpectMatchesReference(R"mlir(module @m {
  func.func @main(%a: tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) {
    %0 = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.while(%i = %0, %x = %a) : tensor<i32>, tensor<4xf32>
     cond {
      %c = stablehlo.constant dense<3> : tensor<i32>
      %p = stablehlo.compare LT, %i, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %y = stablehlo.add %x, %x : tensor<4xf32>
      stablehlo.return %next, %y : tensor<i32>, tensor<4xf32>
    }
    %s0 = stablehlo.sine %1#1 : tensor<4xf32>
    %s = stablehlo.multiply %s0, %s0 : tensor<4xf32>
    return %1#0, %s : tensor<i32>, tensor<4xf32>
  }
})mlir");
}

// JAX's argmax: a variadic reduce whose index result feeds a fused op.
TEST(ReviewRegressionTest, ConsumerOfAnArgmaxIndexRunsAfterTheReduce) {
  ExpectMatchesReference(R"mlir(module @m {
  func.func @main(%x: tensor<4x6xf32>) -> (tensor<4xf32>, tensor<4xi32>) {
    %io = stablehlo.iota dim = 1 : tensor<4x6xi32>
    %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.reduce(%x init: %ninf), (%io init: %z) across dimensions = [1] : (tensor<4x6xf32>, tensor<4x6xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
     reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>) {
      %gt = stablehlo.compare GT, %a, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %eq = stablehlo.compare EQ, %a, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %lt = stablehlo.compare LT, %b, %d, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %tie = stablehlo.and %eq, %lt : tensor<i1>
      %take = stablehlo.or %gt, %tie : tensor<i1>
      %v = stablehlo.select %take, %a, %c : tensor<i1>, tensor<f32>
      %i = stablehlo.select %take, %b, %d : tensor<i1>, tensor<i32>
      stablehlo.return %v, %i : tensor<f32>, tensor<i32>
    }
    %e = stablehlo.exponential %0#0 : tensor<4xf32>
    %t = stablehlo.multiply %0#1, %0#1 : tensor<4xi32>
    %u = stablehlo.add %t, %0#1 : tensor<4xi32>
    return %e, %u : tensor<4xf32>, tensor<4xi32>
  }
})mlir");
}

// Kernel attributes written accy.<name> in text reach the kernel: a softmax kernel_call over
// axis 0 used to lose its axis (and run over the last axis). Checked against softmax over
// dim 0 computed here in double.
TEST(ReviewRegressionTest, KernelCallAttributesFromTextReachTheKernel) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> call, ParseStableHlo(R"mlir(
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = stablehlo.custom_call @accy.nn.softmax(%x) {accy.version = 1 : i64, accy.axis = 0 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
})mlir"));
  Tensor x = *Tensor::Allocate(call->FindFunction("main")->parameter_types()[0]);
  for (int64_t i = 0; i < 12; ++i) x.SetFromDouble(i, 0.5 * static_cast<double>(i % 5) - 1.0);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*call));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, exe->Run(std::vector<Tensor>{x}));
  for (int64_t c = 0; c < 3; ++c) {
    double max = -INFINITY, sum = 0;
    for (int64_t r = 0; r < 4; ++r) max = std::max(max, x.GetAsDouble(r * 3 + c));
    for (int64_t r = 0; r < 4; ++r) sum += std::exp(x.GetAsDouble(r * 3 + c) - max);
    for (int64_t r = 0; r < 4; ++r) {
      EXPECT_NEAR(out[0].GetAsDouble(r * 3 + c), std::exp(x.GetAsDouble(r * 3 + c) - max) / sum, 1e-6)
          << "row " << r << " column " << c;
    }
  }
}

// Found by accy fuzz (reduced): a row broadcast that feeds both the row reduce and the
// elementwise ops of a softmax-like row pipeline. Rule 8 cannot elide it (the reduce is not
// elementwise), so the schedule materializes it, but the row pipeline had read through it and
// taken its producer (the convert) as a member: Compile failed with "buffer assignment: item 0
// reads a tensor<f32> value that is neither a parameter, a constant nor an earlier item's
// output".
TEST(FuzzRegressionTest, RowBroadcastFeedingTheRowReduceKeepsItsProducerOutside) {
  ExpectMatchesReference(R"(
module @fuzz {
  func.func public @main(%arg0: tensor<ui8>, %arg1: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.convert %arg0 : (tensor<ui8>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %2 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %3 = stablehlo.reduce(%1 init: %2) across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %8 = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %8 : tensor<f32>
    }
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %5 = stablehlo.subtract %1, %4 : tensor<2xf32>
    %6 = stablehlo.exponential %5 : tensor<2xf32>
    %7 = stablehlo.multiply %6, %arg1 : tensor<2xf32>
    return %7 : tensor<2xf32>
  }
})");
}

// The same with a row sum as the broadcast row (rank 2): the max's input is the broadcast.
TEST(FuzzRegressionTest, BroadcastRowSumFeedingARowMaxAndItsSubtract) {
  ExpectMatchesReference(R"(
module @fuzz {
  func.func public @main(%arg0: tensor<5x5xf32>, %arg1: tensor<5x5xf32>) -> tensor<5x5xf32> {
    %0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg1 init: %0) across dimensions = [1] : (tensor<5x5xf32>, tensor<f32>) -> tensor<5xf32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %9 = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %9 : tensor<f32>
    }
    %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<5xf32>) -> tensor<5x5xf32>
    %3 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %4 = stablehlo.reduce(%2 init: %3) across dimensions = [1] : (tensor<5x5xf32>, tensor<f32>) -> tensor<5xf32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %9 = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %9 : tensor<f32>
    }
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<5xf32>) -> tensor<5x5xf32>
    %6 = stablehlo.subtract %2, %5 : tensor<5x5xf32>
    %7 = stablehlo.exponential %6 : tensor<5x5xf32>
    %8 = stablehlo.divide %7, %arg0 : tensor<5x5xf32>
    return %8 : tensor<5x5xf32>
  }
})");
}

// Found by accy fuzz (reduced): a while body reads a value of the enclosing function (%3) that
// no operand of the while names. The schedule ordered the while item before the convert that
// computes %3 (it had no dependency on it), so buffer assignment refused the plan: "item 0 reads
// a tensor<i8> value that is neither a parameter, a constant nor an earlier item's output".
TEST(FuzzRegressionTest, WhileDependsOnTheValuesItsBodyCaptures) {
  ExpectMatchesReference(R"(
module @fuzz {
  func.func public @main(%arg0: tensor<2xui64>, %arg1: tensor<i8>, %arg2: tensor<i32>) -> (tensor<i32>, tensor<i8>) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<2xui64>) -> tensor<100x2xui64>
    %1 = stablehlo.constant dense<0> : tensor<ui64>
    %2 = stablehlo.reduce(%0 init: %1) across dimensions = [0, 1] : (tensor<100x2xui64>, tensor<ui64>) -> tensor<ui64>
     reducer(%a: tensor<ui64>, %b: tensor<ui64>)  {
      %5 = stablehlo.or %a, %b : tensor<ui64>
      stablehlo.return %5 : tensor<ui64>
    }
    %3 = stablehlo.convert %2 : (tensor<ui64>) -> tensor<i8>
    %4:2 = stablehlo.while(%iterArg = %arg2, %iterArg_0 = %arg1) : tensor<i32>, tensor<i8>
     cond {
      %5 = stablehlo.constant dense<3> : tensor<i32>
      %6 = stablehlo.compare  LT, %iterArg, %5 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %6 : tensor<i1>
    } do {
      %5 = stablehlo.constant dense<1> : tensor<i32>
      %6 = stablehlo.add %iterArg, %5 : tensor<i32>
      %7 = stablehlo.add %iterArg_0, %3 : tensor<i8>
      stablehlo.return %6, %7 : tensor<i32>, tensor<i8>
    }
    return %4#0, %4#1 : tensor<i32>, tensor<i8>
  }
})");
}

// accy fuzz --seed 20261206, program 16211 (reduced): case branches read a broadcast of a
// convert that nothing outside the case reads. The outliner copies the broadcast into each
// branch and passes the convert's result, but the schedule only looked through broadcasts that
// fusion elided, so the case item had no dependency on the convert and ran before it: buffer
// assignment refused the plan ("item 0 reads a tensor<i1> value that is neither a parameter, a
// constant nor an earlier item's output"). The broadcast feeding the reduce is materialized as
// the last item, so the reduce and the convert waited for it while the case was ready first.
TEST(FuzzRegressionTest, CaseDependsOnTheOperandOfABroadcastItsBranchesCopy) {
  ExpectMatchesReference(R"(
module @fuzz {
  func.func public @main(%arg0: tensor<f32>, %arg1: tensor<i32>, %arg2: tensor<8xi1>) -> tensor<8xi1> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<f32>) -> tensor<17xf32>
    %1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %2 = stablehlo.reduce(%0 init: %1) across dimensions = [0] : (tensor<17xf32>, tensor<f32>) -> tensor<f32>
     reducer(%arg3: tensor<f32>, %arg4: tensor<f32>)  {
      %6 = stablehlo.maximum %arg3, %arg4 : tensor<f32>
      stablehlo.return %6 : tensor<f32>
    }
    %3 = stablehlo.convert %2 : (tensor<f32>) -> tensor<i1>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<i1>) -> tensor<8xi1>
    %5 = "stablehlo.case"(%arg1) ({
      %6 = stablehlo.add %4, %arg2 : tensor<8xi1>
      stablehlo.return %6 : tensor<8xi1>
    }, {
      %6 = stablehlo.maximum %4, %arg2 : tensor<8xi1>
      stablehlo.return %6 : tensor<8xi1>
    }, {
      stablehlo.return %4 : tensor<8xi1>
    }) : (tensor<i32>) -> tensor<8xi1>
    return %5 : tensor<8xi1>
  }
})");
}

// Break-it review 2026-12-07: a zero-element tensor whose other dims multiply past 2^63 - 1 is
// valid StableHLO, but its strides overflow int64. The schedule left such values without an
// item (Compile then failed with "buffer assignment: result 0 is not produced by any work
// item") and the JIT multiplied the strides of a reduce's operand (signed overflow; with the
// zero dim last, an elementwise loop's outer count). Compile now refuses the value up front,
// naming it. Runs under UBSan in CI (the api stage).
Status CompileText(std::string_view text) {
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseStableHlo(text));
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Create(EngineOptions{}));
  return engine->Compile(*module).status();
}

TEST(ReviewRegressionTest, ZeroElementTensorWithOverflowingStridesIsRefusedNamingIt) {
  Status parameter = CompileText(R"(
func.func @main(%a: tensor<0x4611686018427387904x4xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<1.5> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<0x4611686018427387904x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
})");
  EXPECT_EQ(parameter.code(), absl::StatusCode::kOutOfRange) << parameter;
  EXPECT_THAT(std::string(parameter.message()),
              testing::HasSubstr("parameter 0 has type tensor<0x4611686018427387904x4xf32>, which "
                                 "has no elements, but whose other dims span more than"));
  Status result = CompileText(R"(
func.func @main() -> tensor<0x9223372036854775807x9223372036854775807xf32> {
  %0 = stablehlo.iota dim = 1 : tensor<0x9223372036854775807x9223372036854775807xf32>
  return %0 : tensor<0x9223372036854775807x9223372036854775807xf32>
})");
  EXPECT_EQ(result.code(), absl::StatusCode::kOutOfRange) << result;
  EXPECT_THAT(std::string(result.message()),
              testing::HasSubstr("result 0 of iota has type "
                                 "tensor<0x9223372036854775807x9223372036854775807xf32>"));
  // The zero dim last: strides fit (0, 0, 1), but the elementwise loop multiplied the other dims.
  Status last = CompileText(R"(
func.func @main(%a: tensor<4611686018427387904x4x0xf32>) -> tensor<4611686018427387904x4x0xf32> {
  %0 = stablehlo.negate %a : tensor<4611686018427387904x4x0xf32>
  return %0 : tensor<4611686018427387904x4x0xf32>
})");
  EXPECT_EQ(last.code(), absl::StatusCode::kOutOfRange) << last;
  // Zero-element tensors whose other dims span less than 2^63 bytes compile and run.
  ExpectMatchesReference(R"(
func.func @main(%a: tensor<0x1099511627776x4xf32>) -> (tensor<4xf32>, tensor<0x1099511627776x4xf32>) {
  %z = stablehlo.constant dense<1.5> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<0x1099511627776x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.negate %a : tensor<0x1099511627776x4xf32>
  return %0, %1 : tensor<4xf32>, tensor<0x1099511627776x4xf32>
})");
}

// Break-it review 2026-12-07: an elementwise item of 2^63 - 1 elements made BlockCount form
// n + 8191 (signed overflow, reported by UBSan); Compile now ends in buffer assignment's error.
TEST(ReviewRegressionTest, ElementwiseItemNearInt64MaxElementsFailsWithoutOverflow) {
  Status status = CompileText(R"(
func.func @main(%a: tensor<i8>) -> tensor<2xi8> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<i8>) -> tensor<9223372036854775807xi8>
  %1 = stablehlo.add %0, %0 : tensor<9223372036854775807xi8>
  %2 = stablehlo.slice %1 [0:2] : (tensor<9223372036854775807xi8>) -> tensor<2xi8>
  return %2 : tensor<2xi8>
})");
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
  EXPECT_THAT(std::string(status.message()),
              testing::HasSubstr("tensor<9223372036854775807xi8> has a byte size that, aligned to "
                                 "64 bytes, overflows a signed 64-bit offset"));
}

}  // namespace
}  // namespace accy
