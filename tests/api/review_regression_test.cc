// Programs a break-it review found computing wrong results, checked against the reference
// evaluator through the engine (at 1 and 2 threads).
#include "accy/engine.h"
#include "accy/stablehlo.h"
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
    TensorComparison c = CompareClose(outputs[0], expected[0], 1e-6, 1e-5);
    EXPECT_TRUE(c.ok) << threads << " threads: " << c.message << "\n" << exe->plan_text();
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

}  // namespace
}  // namespace accy
