// batch_norm_inference, batch_norm_training and batch_norm_grad (spec sections of those names):
// the reference evaluator on the spec's own examples (exact values), the engine (the
// expand-batch-norm pass's decomposition, JIT-compiled) against the reference over NCHW and NHWC
// shapes, f32 and f64, at 1 and 2 threads, the imported generic form, and the errors: type
// rules, attribute kinds, and Compile with the expansion disabled.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "accy/planner.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "src/transforms/expand_batch_norm.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using testing::HasSubstr;

EngineOptions OneThread() {
  EngineOptions options;
  options.num_threads = 1;
  return options;
}

TensorType T(ElementType e, std::vector<int64_t> dims) {
  return *TensorType::Create(e, std::move(dims));
}

Tensor Values(const TensorType& type, const std::vector<double>& values) {
  Tensor t = *Tensor::Allocate(type);
  for (size_t i = 0; i < values.size(); ++i) {
    if (type.element_type() == ElementType::kF64) {
      t.data_as<double>()[i] = values[i];
    } else {
      t.data_as<float>()[i] = static_cast<float>(values[i]);
    }
  }
  return t;
}

// Deterministic values in [lo, hi).
Tensor Wave(const TensorType& type, double lo, double hi, double phase) {
  std::vector<double> v(static_cast<size_t>(type.element_count()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = lo + (hi - lo) * 0.5 * (1.0 + std::sin(phase + 0.37 * static_cast<double>(i)));
  }
  return Values(type, v);
}

std::vector<double> Read(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.type().element_count()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = t.element_type() == ElementType::kF64 ? t.data_as<double>()[i]
                                                  : static_cast<double>(t.data_as<float>()[i]);
  }
  return v;
}

// Which op a program holds: 0 inference, 1 training, 2 grad.
std::unique_ptr<Module> Program(int which, const TensorType& x, int64_t feature_index,
                                double epsilon) {
  Builder builder("bn");
  const TensorType v = T(x.element_type(), {x.dim(feature_index)});
  std::vector<TensorType> params, results;
  if (which == 0) params = {x, v, v, v, v}, results = {x};
  if (which == 1) params = {x, v, v}, results = {x, v, v};
  if (which == 2) params = {x, v, v, v, x}, results = {x, v, v};
  FunctionBuilder f = *builder.BeginFunction("main", params, results);
  std::vector<Value*> out;
  if (which == 0) {
    out = {*f.BatchNormInference(f.Parameter(0), f.Parameter(1), f.Parameter(2), f.Parameter(3),
                                 f.Parameter(4), epsilon, feature_index)};
  } else if (which == 1) {
    out = *f.BatchNormTraining(f.Parameter(0), f.Parameter(1), f.Parameter(2), epsilon,
                               feature_index);
  } else {
    out = *f.BatchNormGrad(f.Parameter(0), f.Parameter(1), f.Parameter(2), f.Parameter(3),
                           f.Parameter(4), epsilon, feature_index);
  }
  EXPECT_OK(f.Return(out));
  return *builder.Finish();
}

std::vector<Tensor> Inputs(int which, const TensorType& x, int64_t feature_index) {
  const TensorType v = T(x.element_type(), {x.dim(feature_index)});
  const Tensor operand = Wave(x, -2.0, 3.0, 0.5);
  if (which == 0) {
    return {operand, Wave(v, 0.5, 2.0, 1.0), Wave(v, -1.0, 1.0, 2.0), Wave(v, -0.5, 0.5, 3.0),
            Wave(v, 0.25, 2.0, 4.0)};
  }
  if (which == 1) return {operand, Wave(v, 0.5, 2.0, 1.0), Wave(v, -1.0, 1.0, 2.0)};
  return {operand, Wave(v, 0.5, 2.0, 1.0), Wave(v, -0.5, 0.5, 3.0), Wave(v, 0.25, 2.0, 4.0),
          Wave(x, -1.0, 1.0, 5.0)};
}

// The spec's examples: operand [[[1, 2], [3, 4]], [[3, 4], [1, 2]]], feature_index 2.
TEST(BatchNormReferenceTest, SpecExamplesGiveTheirValues) {
  const TensorType x = T(ElementType::kF64, {2, 2, 2});
  const TensorType v = T(ElementType::kF64, {2});
  const Tensor operand = Values(x, {1, 2, 3, 4, 3, 4, 1, 2});
  const Tensor ones = Values(v, {1, 1});
  const Tensor mean = Values(v, {2, 3});
  const std::vector<double> normalized_plus_one = {0, 0, 2, 2, 2, 2, 0, 0};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> inference,
                       Evaluate(*Program(0, x, 2, 0.0), "main",
                                std::vector<Tensor>{operand, ones, ones, mean, ones}));
  EXPECT_EQ(Read(inference[0]), normalized_plus_one);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> training,
                       Evaluate(*Program(1, x, 2, 0.0), "main",
                                std::vector<Tensor>{operand, ones, ones}));
  EXPECT_EQ(Read(training[0]), normalized_plus_one);
  EXPECT_EQ(Read(training[1]), (std::vector<double>{2, 3}));
  EXPECT_EQ(Read(training[2]), (std::vector<double>{1, 1}));
  const Tensor grad_output = Values(x, std::vector<double>(8, 0.1));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> grad,
                       Evaluate(*Program(2, x, 2, 0.0), "main",
                                std::vector<Tensor>{operand, ones, mean, ones, grad_output}));
  for (double g : Read(grad[0])) EXPECT_NEAR(g, 0.0, 1e-15);
  for (double g : Read(grad[1])) EXPECT_NEAR(g, 0.0, 1e-15);
  EXPECT_EQ(Read(grad[2]), (std::vector<double>{0.1 * 4, 0.1 * 4}));
}

struct Shape {
  std::vector<int64_t> dims;
  int64_t feature_index;
};

TEST(BatchNormEngineTest, ExpansionMatchesTheReference) {
  const std::vector<Shape> shapes = {{{2, 3, 5, 4}, 1},   // NCHW
                                     {{2, 5, 4, 3}, 3},   // NHWC
                                     {{7, 16}, 1},        // a dense layer's features
                                     {{1, 1, 1, 6}, 3},   // one element per feature
                                     {{3, 0, 2}, 0}};     // no elements per feature
  for (int threads : {1, 2}) {
    EngineOptions options;
    options.num_threads = threads;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
    for (ElementType e : {ElementType::kF32, ElementType::kF64}) {
      for (const Shape& shape : shapes) {
        for (int which : {0, 1, 2}) {
          SCOPED_TRACE(testing::Message() << "op " << which << " " << T(e, shape.dims).ToString()
                                          << " feature " << shape.feature_index << ", "
                                          << threads << " threads");
          const TensorType x = T(e, shape.dims);
          std::unique_ptr<Module> module = Program(which, x, shape.feature_index, 1e-3);
          ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
          const std::vector<Tensor> inputs = Inputs(which, x, shape.feature_index);
          ASSERT_OK_AND_ASSIGN(std::vector<Tensor> got, exe->Run(inputs));
          ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, Evaluate(*module, "main", inputs));
          ASSERT_EQ(got.size(), want.size());
          // f32: the decomposition rounds each op to f32 (sums of up to 40 elements, a square
          // root and divides), the reference rounds once.
          const double tolerance = e == ElementType::kF32 ? 2e-5 : 1e-12;
          for (size_t r = 0; r < got.size(); ++r) {
            const TensorComparison c = CompareClose(got[r], want[r], tolerance, tolerance);
            EXPECT_TRUE(c.ok) << "result " << r << ": " << c.message;
          }
        }
      }
    }
  }
}

TEST(BatchNormEngineTest, ImportedGenericFormRunsAndRoundTrips) {
  const std::string text = R"mlir(
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %y:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.000000e-05 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return %y#0, %y#1, %y#2 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
}
)mlir";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const std::string printed = PrintModule(*module);
  EXPECT_THAT(printed, HasSubstr("\"stablehlo.batch_norm_training\"(%arg0, %arg1, %arg2) "
                                 "<{epsilon = 1.000000e-05 : f32, feature_index = 1 : i64}>"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> again, ParseStableHlo(printed));
  EXPECT_EQ(PrintModule(*again), printed);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(OneThread()));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  const TensorType v = T(ElementType::kF32, {3});
  const std::vector<Tensor> inputs = {Values(T(ElementType::kF32, {2, 3}), {1, 2, 3, 3, 6, 9}),
                                      Values(v, {1, 1, 2}), Values(v, {0, 1, 0})};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> got, exe->Run(inputs));
  // Per column: mean (2, 4, 6), biased variance (1, 4, 9); output +-scale / sqrt(var + eps).
  EXPECT_EQ(Read(got[1]), (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(Read(got[2]), (std::vector<double>{1, 4, 9}));
  const std::vector<double> y = Read(got[0]);
  EXPECT_NEAR(y[0], -1.0 / std::sqrt(1 + 1e-5), 1e-6);
  EXPECT_NEAR(y[4], 1.0 + 2.0 / std::sqrt(4 + 1e-5), 1e-6);
  EXPECT_NEAR(y[5], 2.0 * 3.0 / std::sqrt(9 + 1e-5), 1e-6);
}

TEST(BatchNormEngineTest, ExpansionLeavesNoBatchNormOp) {
  std::unique_ptr<Module> module = Program(2, T(ElementType::kF32, {2, 3, 4}), 2, 1e-3);
  Function& main = *module->functions().front();
  EXPECT_EQ(ExpandBatchNorm(main), 1);
  int reduces = 0;
  for (const auto& op : main.entry_block()->operations()) {
    EXPECT_NE(op->kind(), OpKind::kBatchNormGrad);
    if (op->kind() == OpKind::kReduce) ++reduces;
  }
  EXPECT_EQ(reduces, 3);  // sum(dy), sum(dy * centered), sum(dy * normalized)
  EXPECT_OK(Verify(*module));
  EXPECT_EQ(ExpandBatchNorm(main), 0);
}

TEST(BatchNormEngineTest, BadOperandsAndAttributesFailNamingTheProblem) {
  Builder builder("bad");
  const TensorType x = T(ElementType::kF32, {2, 4});
  FunctionBuilder f = *builder.BeginFunction(
      "main", {x, T(ElementType::kF32, {4}), T(ElementType::kF32, {3}), T(ElementType::kF64, {4}),
               T(ElementType::kI32, {2, 4})},
      {x});
  Value* a = f.Parameter(0);
  Value* v4 = f.Parameter(1);
  auto wrong_size = f.BatchNormInference(a, v4, v4, f.Parameter(2), v4, 1e-3, 1);
  EXPECT_EQ(wrong_size.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_size.status().message(),
              HasSubstr("batch_norm_inference: mean has type tensor<3xf32>, expected "
                        "tensor<4xf32> (dim 1 of the operand, the feature_index)"));
  auto wrong_type = f.BatchNormTraining(a, f.Parameter(3), v4, 1e-3, 1);
  EXPECT_EQ(wrong_type.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_type.status().message(),
              HasSubstr("batch_norm_training: scale has type tensor<4xf64>, operand "
                        "tensor<2x4xf32>: one element type for all (C2)"));
  auto bad_feature = f.BatchNormTraining(a, v4, v4, 1e-3, 2);
  EXPECT_EQ(bad_feature.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_feature.status().message(),
              HasSubstr("batch_norm_training: feature_index 2 is outside [0, 2) of operand "
                        "tensor<2x4xf32> (C1)"));
  auto integer = f.BatchNormGrad(f.Parameter(4), v4, v4, v4, f.Parameter(4), 1e-3, 1);
  EXPECT_EQ(integer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(integer.status().message(), HasSubstr("expected a floating-point element type"));
  auto grad_shape = f.BatchNormGrad(a, v4, v4, v4, v4, 1e-3, 1);
  EXPECT_EQ(grad_shape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(grad_shape.status().message(),
              HasSubstr("batch_norm_grad: grad_output has type tensor<4xf32>, expected "
                        "tensor<2x4xf32> (the operand's shape)"));
  // Attribute kinds in the text.
  const Status epsilon_kind = ParseStableHlo(R"mlir(
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  %y = "stablehlo.batch_norm_inference"(%x, %s, %s, %s, %s) {epsilon = "small", feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
)mlir").status();
  EXPECT_EQ(epsilon_kind.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(epsilon_kind.message(), HasSubstr("epsilon must be a float"));
  const Status missing = ParseStableHlo(R"mlir(
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  %y = "stablehlo.batch_norm_inference"(%x, %s, %s, %s, %s) {epsilon = 1.0 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
)mlir").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(), HasSubstr("batch_norm_inference: missing attribute feature_index"));
}

// PlanFunction plans the program as written, but batch-norm ops as the ops they expand into.
TEST(BatchNormEngineTest, PlanFunctionPlansTheExpansion) {
  std::unique_ptr<Module> module = Program(1, T(ElementType::kF32, {4, 3, 5}), 1, 1e-3);
  ASSERT_OK_AND_ASSIGN(PlanSummary summary, PlanFunction(*module, "main", PlanOptions{}));
  int reductions = 0;
  for (const PlannedWorkItem& item : summary.items) reductions += item.kind == "reduction";
  EXPECT_EQ(reductions, 2);  // the mean's sum and the variance's sum
  // The caller's module is untouched.
  EXPECT_EQ(module->functions().front()->entry_block()->operations().front()->kind(),
            OpKind::kBatchNormTraining);
}

TEST(BatchNormEngineTest, DisabledExpansionFailsCompileNamingThePass) {
  std::unique_ptr<Module> module = Program(0, T(ElementType::kF32, {2, 3}), 1, 1e-3);
  EngineOptions options = OneThread();
  options.disabled_passes = {"expand-batch-norm"};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
  const Status status = engine->Compile(*module).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), HasSubstr("(batch_norm_inference) has no lowering: the "
                                          "expand-batch-norm graph pass rewrites it"));
}

}  // namespace
}  // namespace accy
