// convolution_epilogue clusters (fusion_plan.h rule 4 with a convolution): the planner makes
// one convolution item of a convolution and the elementwise ops computed from it; oneDNN runs
// them as convolution_forward with a bias and eltwise post-ops (kernels/onednn_convolution.cc),
// a prefix of them with the rest on the JIT, or the JIT runs all of it
// (jit/convolution_emitter.cc).
// Results are compared with the reference evaluator: oneDNN accumulates in f32 against the
// reference's double, |accy - ref| <= 2e-6 * W + 2e-6 |ref| (W = 144, the window positions x
// input features) for inputs in [-1, 1]; integers exactly.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/onednn_kernel.h"
#include "src/reference/reference_evaluator.h"
#include "tests/kernels/kernels_test_util.h"
#include "tests/schedule/schedule_test_util.h"

namespace accy::kernels_test {
namespace {

using kernels::LibraryKernel;
using ::testing::HasSubstr;

// NHWC 3x3 convolution of [2, 10, 10, 16] by [3, 3, 16, 32] (padding 1), then `epilogue` (MLIR
// lines reading %c, the convolution's result, and defining %y), returning %y. Parameters: %x,
// %w, %scale [32], %shift [32], %res [2, 10, 10, 32], each of type `type`.
std::string Program(const std::string& epilogue, const std::string& type = "f32") {
  const std::string out = "tensor<2x10x10x32x" + type + ">";
  return "func.func @main(%x: tensor<2x10x10x16x" + type + ">, %w: tensor<3x3x16x32x" + type +
         ">, %scale: tensor<32x" + type + ">, %shift: tensor<32x" + type + ">, %res: " + out +
         ") -> " + out + " {\n"
         "  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, "
         "1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, "
         "feature_group_count = 1 : i64} : (tensor<2x10x10x16x" + type + ">, tensor<3x3x16x32x" +
         type + ">) -> " + out + "\n"
         "  %s = stablehlo.broadcast_in_dim %scale, dims = [3] : (tensor<32x" + type + ">) -> " +
         out + "\n"
         "  %b = stablehlo.broadcast_in_dim %shift, dims = [3] : (tensor<32x" + type + ">) -> " +
         out + "\n"
         "  %zero = stablehlo.constant dense<" + std::string(type == "i32" ? "0" : "0.0") +
         "> : tensor<" + type + ">\n"
         "  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<" + type + ">) -> " + out +
         "\n" + epilogue + "  return %y : " + out + "\n}\n";
}

// Batch norm's affine, a residual add and relu (the multiply comes first: no bias, and binary
// post-ops are not used on convolutions, so oneDNN runs the convolution alone).
constexpr char kAffineResidualRelu[] =
    "  %m = stablehlo.multiply %c, %s : tensor<2x10x10x32xf32>\n"
    "  %a = stablehlo.add %m, %b : tensor<2x10x10x32xf32>\n"
    "  %r = stablehlo.add %a, %res : tensor<2x10x10x32xf32>\n"
    "  %y = stablehlo.maximum %r, %z : tensor<2x10x10x32xf32>\n";
// A bias (convolution_forward's own argument) and relu.
constexpr char kBiasRelu[] =
    "  %a = stablehlo.add %c, %b : tensor<2x10x10x32xf32>\n"
    "  %y = stablehlo.maximum %a, %z : tensor<2x10x10x32xf32>\n";
// Relu (not a post-op on a convolution), then cosine: the prefix (the bias) on oneDNN.
constexpr char kBiasReluCosine[] =
    "  %a = stablehlo.add %c, %b : tensor<2x10x10x32xf32>\n"
    "  %r = stablehlo.maximum %a, %z : tensor<2x10x10x32xf32>\n"
    "  %y = stablehlo.cosine %r : tensor<2x10x10x32xf32>\n";

std::vector<Tensor> Inputs(ElementType type) {
  return {Random(T(type, {2, 10, 10, 16}), 1), Random(T(type, {3, 3, 16, 32}), 2),
          Random(T(type, {32}), 3), Random(T(type, {32}), 4),
          Random(T(type, {2, 10, 10, 32}), 5)};
}

void ExpectMatchesReference(const Module& module, const std::vector<Tensor>& got) {
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, Evaluate(module, "main", Inputs(ElementType::kF32)));
  ASSERT_EQ(got.size(), 1u);
  ExpectClose(got[0], want[0], 2e-6 * 144, 2e-6);
}

// The planned program and its convolution item.
struct Planned {
  std::unique_ptr<testing_util::PlannedModule> planned;
  const Module* module = nullptr;
  const WorkItem* item = nullptr;
  const FusionPlan* fusion = nullptr;
};

StatusOr<Planned> Plan(const std::string& text) {
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseStableHlo(text));
  Planned p;
  p.module = module.get();
  p.planned = std::make_unique<testing_util::PlannedModule>(std::move(module), "main");
  ACCY_ASSIGN_OR_RETURN(const SchedulePlan* plan, p.planned->Plan());
  ACCY_ASSIGN_OR_RETURN(auto fusion,
                        p.planned->cache().Get<FusionPlanAnalysis>(p.planned->function()));
  p.fusion = &fusion->plan();
  for (const WorkItem& item : plan->items()) {
    if (item.kind == WorkKind::kConvolution) {
      if (p.item != nullptr) return absl::InternalError("test: two convolution items");
      p.item = &item;
    }
  }
  if (p.item == nullptr) return absl::InternalError("test: no convolution item");
  return p;
}

TEST(ConvolutionEpilogueTest, PlannerFusesTheEpilogueIntoTheConvolutionItem) {
  ASSERT_OK_AND_ASSIGN(Planned p, Plan(Program(kAffineResidualRelu)));
  std::vector<std::string> names;
  for (const Operation* op : p.item->ops) names.push_back(std::string(op->name()));
  EXPECT_EQ(names, (std::vector<std::string>{"convolution", "multiply", "add", "add", "maximum"}));
  EXPECT_EQ(p.item->output_value, p.item->ops.back()->result(0));
  // 2 x 6,400 outputs x 144 window elements, plus one op per output for each epilogue op.
  EXPECT_EQ(p.item->resources.estimated_element_ops, 2u * 6400 * 144 + 6400 * 4);
  ASSERT_EQ(p.fusion->clusters().size(), 1u);
  EXPECT_EQ(p.fusion->clusters()[0].kind, ClusterKind::kConvolutionEpilogue);
  EXPECT_EQ(ClusterKindName(ClusterKind::kConvolutionEpilogue), "convolution_epilogue");
}

// Batch norm's per-feature multiply (and anything else a binary post-op would take) stays off
// oneDNN: those post-ops run slower than the convolution alone and a JIT pass (measured,
// onednn_dot_epilogue.cc kConvolutionBinaryPostOpsNote).
TEST(ConvolutionEpilogueTest, PerFeatureMultiplyIsNotAPostOp) {
  ASSERT_OK_AND_ASSIGN(Planned p, Plan(Program(kAffineResidualRelu)));
  StatusOr<LibraryKernel> whole = LibraryKernel::Create(*p.item, p.fusion);
  ASSERT_FALSE(whole.ok());
  EXPECT_TRUE(absl::IsUnimplemented(whole.status())) << whole.status();
  EXPECT_THAT(whole.status().message(),
              HasSubstr("epilogue op multiply %" + std::to_string(p.item->ops[1]->result(0)->id()) +
                        " reads a tensor other than a leading bias: a binary post-op"));
  kernels::LibraryKernelOptions prefix;
  prefix.allow_jit_epilogue = true;
  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel, LibraryKernel::Create(*p.item, p.fusion, prefix));
  // The convolution alone: buffers x and w, output the convolution's result.
  EXPECT_EQ(kernel.outputs()[0], p.item->ops[0]->result(0));
  EXPECT_EQ(kernel.inputs().size(), 2u);
  EXPECT_THAT(kernel.implementation(), ::testing::Not(HasSubstr("epilogue ops")));
}

// The bias is convolution_forward's; relu is not a post-op (eltwise_relu gives 0 for NaN,
// maximum propagates it), so oneDNN outputs the biased convolution and the JIT takes relu.
TEST(ConvolutionEpilogueTest, LeadingPerFeatureAddIsTheBiasAndReluIsLeftToTheJit) {
  ASSERT_OK_AND_ASSIGN(Planned p, Plan(Program(kBiasRelu)));
  StatusOr<LibraryKernel> whole = LibraryKernel::Create(*p.item, p.fusion);
  ASSERT_FALSE(whole.ok());
  EXPECT_THAT(whole.status().message(),
              HasSubstr("is relu, and oneDNN's eltwise_relu gives 0 for a NaN"));
  kernels::LibraryKernelOptions prefix;
  prefix.allow_jit_epilogue = true;
  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel, LibraryKernel::Create(*p.item, p.fusion, prefix));
  EXPECT_THAT(kernel.implementation(), HasSubstr("(1 epilogue ops as bias/post-ops)"));
  ASSERT_EQ(kernel.outputs().size(), 1u);
  EXPECT_EQ(kernel.outputs()[0], p.item->ops[1]->result(0));
  // Buffers: x, w, then the bias (the broadcast's input).
  ASSERT_EQ(kernel.inputs().size(), 3u);
  EXPECT_EQ(kernel.inputs()[2], p.planned->function().parameter(3));
  // The biased convolution, against the reference evaluator's conv + bias.
  ASSERT_OK_AND_ASSIGN(
      Planned bias_only,
      Plan(Program("  %y = stablehlo.add %c, %b : tensor<2x10x10x32xf32>\n")));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> got, RunKernel(kernel, Inputs(ElementType::kF32)));
  ExpectMatchesReference(*bias_only.module, got);
}

// Adding or subtracting a one-element constant (either side) is an eltwise_linear post-op, and
// tanh an eltwise one; a second eltwise_linear with other parameters is refused (oneDNN 2.6's
// brgemm kernels share one injector per algorithm), so its op is left to the JIT.
TEST(ConvolutionEpilogueTest, ScalarAddSubtractAndReluAreEltwisePostOps) {
  const std::string half =
      "  %h = stablehlo.constant dense<0.5> : tensor<f32>\n"
      "  %hb = stablehlo.broadcast_in_dim %h, dims = [] : (tensor<f32>) -> "
      "tensor<2x10x10x32xf32>\n";
  for (const std::string op : {"add %c, %hb", "subtract %c, %hb", "subtract %hb, %c"}) {
    SCOPED_TRACE(op);
    ASSERT_OK_AND_ASSIGN(
        Planned p, Plan(Program(half + "  %a = stablehlo." + op + " : tensor<2x10x10x32xf32>\n"
                                "  %y = stablehlo.tanh %a : tensor<2x10x10x32xf32>\n")));
    ASSERT_EQ(p.item->ops.size(), 3u);
    ASSERT_OK_AND_ASSIGN(LibraryKernel kernel, LibraryKernel::Create(*p.item, p.fusion));
    EXPECT_THAT(kernel.implementation(), HasSubstr("(2 epilogue ops as bias/post-ops)"));
    EXPECT_EQ(kernel.inputs().size(), 2u);
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> got, RunKernel(kernel, Inputs(ElementType::kF32)));
    ExpectMatchesReference(*p.module, got);
  }
  ASSERT_OK_AND_ASSIGN(
      Planned p, Plan(Program(half +
                              "  %a = stablehlo.add %c, %hb : tensor<2x10x10x32xf32>\n"
                              "  %y = stablehlo.subtract %hb, %a : tensor<2x10x10x32xf32>\n")));
  StatusOr<LibraryKernel> whole = LibraryKernel::Create(*p.item, p.fusion);
  ASSERT_FALSE(whole.ok());
  EXPECT_THAT(whole.status().message(),
              HasSubstr("repeats an eltwise post-op kind with other parameters"));
}

// A 1x1 NHWC convolution reading its weights from a buffer gets oneDNN's im2col + GEMM
// convolution, which applies a bias and post-ops element by element: it then computes the
// convolution alone and leaves the epilogue to the JIT.
TEST(ConvolutionEpilogueTest, GemmConvolutionTakesNoEpilogue) {
  const std::string text =
      "func.func @main(%x: tensor<1x56x56x64xf32>, %w: tensor<1x1x64x256xf32>, %bias: "
      "tensor<256xf32>) -> tensor<1x56x56x256xf32> {\n"
      "  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, "
      "f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
      "(tensor<1x56x56x64xf32>, tensor<1x1x64x256xf32>) -> tensor<1x56x56x256xf32>\n"
      "  %b = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<256xf32>) -> "
      "tensor<1x56x56x256xf32>\n"
      "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> "
      "tensor<1x56x56x256xf32>\n"
      "  %a = stablehlo.add %c, %b : tensor<1x56x56x256xf32>\n"
      "  %y = stablehlo.maximum %a, %z : tensor<1x56x56x256xf32>\n"
      "  return %y : tensor<1x56x56x256xf32>\n}\n";
  ASSERT_OK_AND_ASSIGN(Planned p, Plan(text));
  ASSERT_EQ(p.item->ops.size(), 3u);
  kernels::LibraryKernelOptions prefix;
  prefix.allow_jit_epilogue = true;
  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel, LibraryKernel::Create(*p.item, p.fusion, prefix));
  if (kernel.implementation().find("gemm") != std::string::npos) {
    EXPECT_EQ(kernel.outputs()[0], p.item->ops[0]->result(0));
    EXPECT_THAT(kernel.implementation(), ::testing::Not(HasSubstr("epilogue ops")));
  } else {
    EXPECT_EQ(kernel.outputs()[0], p.item->ops[1]->result(0));  // the bias; relu on the JIT
  }
}

TEST(ConvolutionEpilogueTest, UnmappedOpIsNamedOrLeftToTheJit) {
  ASSERT_OK_AND_ASSIGN(Planned p, Plan(Program(kBiasReluCosine)));
  ASSERT_EQ(p.item->ops.size(), 4u);
  // The whole epilogue or nothing: kUnimplemented naming the cosine.
  StatusOr<LibraryKernel> whole = LibraryKernel::Create(*p.item, p.fusion);
  ASSERT_FALSE(whole.ok());
  EXPECT_TRUE(absl::IsUnimplemented(whole.status())) << whole.status();
  EXPECT_THAT(whole.status().message(), HasSubstr("does not map onto oneDNN convolution_forward"));
  EXPECT_THAT(whole.status().message(), HasSubstr("epilogue op maximum"));
  // A prefix: oneDNN outputs the biased convolution, from which the JIT computes relu and the
  // cosine.
  kernels::LibraryKernelOptions prefix;
  prefix.allow_jit_epilogue = true;
  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel, LibraryKernel::Create(*p.item, p.fusion, prefix));
  EXPECT_EQ(kernel.outputs()[0], p.item->ops[1]->result(0));
  EXPECT_THAT(kernel.implementation(), HasSubstr("(1 epilogue ops as bias/post-ops)"));
}

// A NaN in the input reaches every output it touches through the whole epilogue, as the
// reference gives (relu and exp are not post-ops: oneDNN's give 0 and +inf for NaN).
TEST(ConvolutionEpilogueTest, NanPropagatesThroughReluAndExp) {
  for (const char* epilogue :
       {kBiasRelu, "  %y = stablehlo.exponential %c : tensor<2x10x10x32xf32>\n"}) {
    SCOPED_TRACE(epilogue);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(Program(epilogue)));
    std::vector<Tensor> inputs = Inputs(ElementType::kF32);
    // x[0, 3, 4, 5] of [2, 10, 10, 16]: an inner pixel.
    inputs[0].SetFromDouble((3 * 10 + 4) * 16 + 5, std::numeric_limits<double>::quiet_NaN());
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, Evaluate(*module, "main", inputs));
    EngineOptions options;
    options.num_threads = 1;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> got, exe->Run(inputs));
    int64_t nans = 0;
    for (int64_t i = 0; i < got[0].element_count(); ++i) nans += std::isnan(got[0].GetAsDouble(i));
    EXPECT_EQ(nans, 9 * 32);  // the 3x3 output pixels around it, every feature
    // exp turns the convolution's absolute error (2e-6 * 144) into a relative one.
    const bool exp = std::string(epilogue).find("exponential") != std::string::npos;
    ExpectClose(got[0], want[0], exp ? 0 : 2e-6 * 144, exp ? 1e-3 : 2e-6);
  }
}

// End to end through Engine: one convolution item, on the library or the JIT, at 1 and 2
// threads, and nothing else to run.
struct EngineCase {
  std::string name;
  const char* epilogue;
  std::string type;
  // The steps of the convolution item (a library item whose epilogue is partly on the JIT runs
  // as two: the library's, then the JIT's).
  std::vector<std::string> runs_on;
  int64_t items;        // work items in all
};

class ConvolutionEpilogueEngineTest : public ::testing::TestWithParam<EngineCase> {};

TEST_P(ConvolutionEpilogueEngineTest, MatchesReference) {
  const EngineCase& c = GetParam();
  std::string epilogue = c.epilogue;
  if (c.type != "f32") {
    for (size_t at; (at = epilogue.find("xf32>")) != std::string::npos;) {
      epilogue.replace(at, 5, "x" + c.type + ">");
    }
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(Program(epilogue, c.type)));
  const ElementType element = c.type == "i32" ? ElementType::kI32 : ElementType::kF32;
  std::vector<Tensor> inputs;
  if (element == ElementType::kI32) {
    for (const Tensor& t : Inputs(ElementType::kF32)) {
      Tensor i = Tensor::Allocate(T(element, t.type().dims())).value();
      for (int64_t k = 0; k < t.element_count(); ++k) {
        i.SetFromDouble(k, static_cast<double>(static_cast<int64_t>(t.GetAsDouble(k) * 8)));
      }
      inputs.push_back(i);
    }
  } else {
    inputs = Inputs(element);
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, Evaluate(*module, "main", inputs));
  for (int threads : {1, 2}) {
    SCOPED_TRACE(testing::Message() << threads << " threads");
    EngineOptions options;
    options.num_threads = threads;
    options.enable_profiling = true;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> got, exe->Run(inputs));
    ASSERT_EQ(got.size(), 1u);
    if (element == ElementType::kI32) {
      const TensorComparison exact = CompareClose(got[0], want[0], 0, 0);
      EXPECT_TRUE(exact.ok) << exact.message;
    } else {
      ExpectClose(got[0], want[0], 2e-6 * 144, 2e-6);
    }
    const ExecutableStats stats = exe->Stats();
    EXPECT_EQ(stats.work_items_by_kind.at("convolution"), 1);
    int64_t items = 0;
    std::vector<std::string> conv_runs_on;
    for (const auto& [kind, count] : stats.work_items_by_kind) items += count;
    for (const ItemProfile& profile : stats.item_profiles) {
      if (profile.kind == "convolution") conv_runs_on.push_back(profile.runs_on);
    }
    EXPECT_EQ(items, c.items);
    EXPECT_EQ(conv_runs_on, c.runs_on);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Epilogues, ConvolutionEpilogueEngineTest,
    ::testing::Values(EngineCase{"affine_residual_relu", kAffineResidualRelu, "f32", {"library", "jit"}, 1},
                      EngineCase{"bias_relu", kBiasRelu, "f32", {"library", "jit"}, 1},
                      EngineCase{"bias_relu_cosine", kBiasReluCosine, "f32", {"library", "jit"}, 1},
                                      // oneDNN has no integer convolution: the JIT runs it all, exactly.
                      EngineCase{"integer_on_the_jit", kAffineResidualRelu, "i32", {"jit"}, 1}),
    [](const ::testing::TestParamInfo<EngineCase>& info) { return info.param.name; });

}  // namespace
}  // namespace accy::kernels_test
