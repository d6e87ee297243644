// convolution work items on oneDNN convolution_forward (kernels/onednn_convolution.cc) vs the
// reference evaluator: the layouts and attributes it maps (NHWC, NCHW, strides, padding, rhs
// dilation, feature groups, 1-D and 3-D, constant weights reordered at binding, bf16), transposed
// convolutions (lhs dilation) on deconvolution_forward, weight gradients on
// convolution_backward_weights, and the kUnimplemented refusals the engine
// turns into a JIT item (lhs dilation without window reversal, with a window stride or with
// padding past the deconvolution's reach; window reversal alone, batch groups, negative padding,
// integer types, the size threshold). Programs are planned by the
// real planner; the convolution item is bound and run on the function's parameters.
// Tolerance: oneDNN accumulates in f32, the reference in double; inputs in [-1, 1], so
// |onednn - ref| <= 2e-6 * W + 2e-6 |ref| (W = window positions x input features per group);
// bf16 results round once to bf16 (2^-8 relative) on top.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/onednn_isa.h"
#include "kernels/onednn_kernel.h"
#include "src/reference/reference_evaluator.h"
#include "tests/kernels/kernels_test_util.h"
#include "tests/schedule/schedule_test_util.h"

namespace accy::kernels_test {
namespace {

using kernels::LibraryKernel;
using ::testing::HasSubstr;
constexpr auto kF32 = ElementType::kF32;
constexpr auto kBF16 = ElementType::kBF16;
constexpr kernels::LibraryKernelOptions kAnySize{.min_convolution_element_ops = 0};

ConvDimensionNumbers Nhwc(int spatial = 2) {
  if (spatial == 1) return {0, 2, {1}, 1, 2, {0}, 0, 2, {1}};
  if (spatial == 3) return {0, 4, {1, 2, 3}, 3, 4, {0, 1, 2}, 0, 4, {1, 2, 3}};
  return {0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
}
ConvDimensionNumbers Nchw() { return {0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}}; }

ConvolutionSpec Spec(ConvDimensionNumbers dn, std::vector<int64_t> strides = {},
                     std::vector<std::pair<int64_t, int64_t>> padding = {},
                     std::vector<int64_t> rhs_dilation = {}, int64_t feature_groups = 1) {
  ConvolutionSpec spec;
  spec.dimension_numbers = std::move(dn);
  spec.window_strides = std::move(strides);
  spec.padding = std::move(padding);
  spec.rhs_dilation = std::move(rhs_dilation);
  spec.feature_group_count = feature_groups;
  return spec;
}

ConvolutionSpec WithLhsDilation(ConvolutionSpec spec, std::vector<int64_t> d) {
  spec.lhs_dilation = std::move(d);
  return spec;
}
ConvolutionSpec WithReversal(ConvolutionSpec spec, std::vector<bool> r) {
  spec.window_reversal = std::move(r);
  return spec;
}
ConvolutionSpec WithBatchGroups(ConvolutionSpec spec, int64_t g) {
  spec.batch_group_count = g;
  return spec;
}
// A transposed convolution: lhs dilation `d`, the kernel read reversed on every spatial dim.
ConvolutionSpec Transposed(ConvolutionSpec spec, std::vector<int64_t> d) {
  std::vector<bool> reversal(d.size(), true);
  return WithReversal(WithLhsDilation(std::move(spec), std::move(d)), std::move(reversal));
}

// `main(lhs[, rhs]) -> convolution`, planned; the rhs is a parameter, or a constant when
// `constant_rhs`. Exposes the convolution item.
class PlannedConvolution {
 public:
  static StatusOr<std::unique_ptr<PlannedConvolution>> Make(ElementType type,
                                                            std::vector<int64_t> lhs,
                                                            std::vector<int64_t> rhs,
                                                            const ConvolutionSpec& spec,
                                                            bool constant_rhs = false) {
    // Build once to learn the inferred result type, then again with it as the result.
    TensorType result = T(type, {1});
    ACCY_RETURN_IF_ERROR(Build(type, lhs, rhs, spec, constant_rhs, nullptr, &result).status());
    ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> module,
                          Build(type, lhs, rhs, spec, constant_rhs, &result));
    auto planned = std::unique_ptr<PlannedConvolution>(new PlannedConvolution(std::move(module)));
    ACCY_ASSIGN_OR_RETURN(planned->plan_, planned->planned_.Plan());
    ACCY_ASSIGN_OR_RETURN(auto fusion, planned->planned_.cache().Get<FusionPlanAnalysis>(
                                           planned->planned_.function()));
    planned->fusion_ = &fusion->plan();
    for (const WorkItem& item : planned->plan_->items()) {
      if (item.kind == WorkKind::kConvolution) planned->item_ = &item;
    }
    if (planned->item_ == nullptr) return absl::InternalError("test: no convolution item");
    return planned;
  }

  const WorkItem& item() const { return *item_; }
  const FusionPlan* fusion() const { return fusion_; }
  const Module& module() const { return *module_; }

 private:
  // Builds main; with `result` unset it stops after the convolution and returns its type in
  // `*inferred` instead (the result shape is inferred, spec C25).
  static StatusOr<std::unique_ptr<Module>> Build(ElementType type, const std::vector<int64_t>& lhs,
                                                 const std::vector<int64_t>& rhs,
                                                 const ConvolutionSpec& spec, bool constant_rhs,
                                                 const TensorType* result,
                                                 TensorType* inferred = nullptr) {
    Builder builder("conv_test");
    std::vector<TensorType> params = {T(type, lhs)};
    if (!constant_rhs) params.push_back(T(type, rhs));
    ACCY_ASSIGN_OR_RETURN(FunctionBuilder fb,
                          builder.BeginFunction("main", params, {result ? *result : T(type, {1})}));
    Value* weights = nullptr;
    if (constant_rhs) {
      ACCY_ASSIGN_OR_RETURN(weights, fb.Constant(Random(T(type, rhs), 99)));
    } else {
      weights = fb.Parameter(1);
    }
    ACCY_ASSIGN_OR_RETURN(Value * out, fb.Convolution(fb.Parameter(0), weights, spec));
    if (result == nullptr) {
      *inferred = out->type();
      return nullptr;
    }
    ACCY_RETURN_IF_ERROR(fb.Return({out}));
    return builder.Finish();
  }

  explicit PlannedConvolution(std::unique_ptr<Module> module)
      : module_(module.get()), planned_(std::move(module), "main") {}
  const Module* module_;
  testing_util::PlannedModule planned_;
  const SchedulePlan* plan_ = nullptr;
  const FusionPlan* fusion_ = nullptr;
  const WorkItem* item_ = nullptr;
};

struct ConvCase {
  std::string name;
  ElementType type;
  std::vector<int64_t> lhs, rhs;
  ConvolutionSpec spec;
  int64_t window;  // kernel window positions x input features per group
  bool constant_rhs = false;
};

class OnednnConvolutionTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(OnednnConvolutionTest, MappedConvolutionsMatchReference) {
  const ConvCase& c = GetParam();
  ASSERT_OK_AND_ASSIGN(auto planned,
                       PlannedConvolution::Make(c.type, c.lhs, c.rhs, c.spec, c.constant_rhs));
  std::vector<Tensor> args;
  for (const TensorType& t : planned->module().functions()[0]->parameter_types()) {
    args.push_back(Random(t, static_cast<uint32_t>(args.size() + 7)));
  }
  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel,
                       LibraryKernel::Create(planned->item(), planned->fusion(), kAnySize));
  EXPECT_THAT(kernel.implementation(), ::testing::Not(HasSubstr("ref")));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, RunKernel(kernel, args));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(planned->module(), "main", args));
  const double tol = c.type == kBF16 ? 1.0 / 64 + 2e-6 * double(c.window)
                                      : 2e-6 * double(c.window);
  ExpectClose(actual[0], expected[0], tol, c.type == kBF16 ? 1.0 / 128 : 2e-6);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, OnednnConvolutionTest,
    ::testing::Values(
        ConvCase{"nhwc_3x3_pad_1", kF32, {2, 9, 8, 5}, {3, 3, 5, 7},
                 Spec(Nhwc(), {}, {{1, 1}, {1, 1}}), 45},
        ConvCase{"nchw_7x7_stride_2_pad_3", kF32, {1, 3, 13, 12}, {6, 3, 7, 7},
                 Spec(Nchw(), {2, 2}, {{3, 3}, {3, 3}}), 147},
        ConvCase{"nhwc_1x1_stride_2", kF32, {1, 7, 7, 16}, {1, 1, 16, 9}, Spec(Nhwc(), {2, 2}), 16},
        // The last window ends one element before the input does (ResNet's shortcut).
        ConvCase{"1x1_stride_2_even_size", kF32, {1, 8, 8, 16}, {1, 1, 16, 8},
                 Spec(Nhwc(), {2, 2}), 16},
        ConvCase{"3x3_stride_2_partial_window", kF32, {1, 10, 9, 4}, {3, 3, 4, 8},
                 Spec(Nhwc(), {2, 3}, {{0, 1}, {1, 2}}), 36},
        ConvCase{"asymmetric_padding", kF32, {1, 10, 9, 3}, {3, 2, 3, 4},
                 Spec(Nhwc(), {1, 2}, {{0, 1}, {2, 0}}), 18},
        ConvCase{"rhs_dilation", kF32, {1, 12, 11, 2}, {3, 3, 2, 5},
                 Spec(Nhwc(), {}, {}, {2, 3}), 18},
        ConvCase{"depthwise_3x3", kF32, {1, 9, 9, 6}, {3, 3, 1, 6},
                 Spec(Nhwc(), {}, {{1, 1}, {1, 1}}, {}, 6), 9},
        ConvCase{"two_feature_groups_nchw", kF32, {2, 4, 6, 6}, {6, 2, 3, 3},
                 Spec(Nchw(), {}, {}, {}, 2), 18},
        ConvCase{"one_spatial_dim", kF32, {2, 17, 4}, {3, 4, 6}, Spec(Nhwc(1), {2}, {{1, 1}}), 12},
        ConvCase{"three_spatial_dims", kF32, {1, 5, 6, 4, 3}, {2, 3, 2, 3, 4},
                 Spec(Nhwc(3)), 36},
        ConvCase{"constant_weights", kF32, {1, 8, 8, 8}, {3, 3, 8, 16},
                 Spec(Nhwc(), {}, {{1, 1}, {1, 1}}), 72, /*constant_rhs=*/true},
        ConvCase{"bf16_nhwc", kBF16, {1, 6, 6, 8}, {3, 3, 8, 4}, Spec(Nhwc()), 72},
        // Transposed convolutions on deconvolution_forward. JAX's input gradient of a 3x3
        // stride-2 convolution with padding (1, 1) of a 10x10 input:
        ConvCase{"transposed_3x3_stride_2", kF32, {1, 5, 5, 6}, {3, 3, 6, 4},
                 Transposed(Spec(Nhwc(), {}, {{1, 2}, {1, 2}}), {2, 2}), 54},
        // ... of ResNet's 1x1 stride-2 shortcut of an 8x8 input: the last row and column
        // receive no tap (padding_r -1 in deconvolution's terms), and 1x1 needs no reversal.
        ConvCase{"transposed_1x1_even_size", kF32, {1, 4, 4, 16}, {1, 1, 16, 8},
                 WithLhsDilation(Spec(Nhwc(), {}, {{0, 1}, {0, 1}}), {2, 2}), 16},
        ConvCase{"transposed_nchw_rhs_dilation", kF32, {1, 3, 4, 5}, {2, 3, 3, 3},
                 Transposed(Spec(Nchw(), {}, {{2, 1}, {0, 2}}, {2, 1}), {3, 2}), 27},
        ConvCase{"transposed_feature_groups", kF32, {1, 4, 4, 4}, {2, 2, 2, 6},
                 Transposed(Spec(Nhwc(), {}, {{1, 1}, {1, 1}}, {}, 2), {2, 2}), 8},
        ConvCase{"transposed_one_spatial_dim", kF32, {2, 7, 4}, {3, 4, 6},
                 Transposed(Spec(Nhwc(1), {}, {{2, 0}}), {3}), 12},
        ConvCase{"transposed_on_one_dim_only", kF32, {1, 5, 6, 3}, {3, 2, 3, 4},
                 Transposed(Spec(Nhwc(), {}, {{2, 1}, {1, 1}}), {2, 1}), 18},
        // Reversing a window of one tap changes nothing: convolution_forward takes it.
        ConvCase{"reversal_on_a_one_tap_dim", kF32, {1, 9, 8, 5}, {1, 3, 5, 7},
                 WithReversal(Spec(Nhwc(), {}, {{0, 0}, {1, 1}}), {true, false}), 15},
        ConvCase{"transposed_bf16", kBF16, {1, 5, 5, 8}, {3, 3, 8, 4},
                 Transposed(Spec(Nhwc(), {}, {{1, 2}, {1, 2}}), {2, 2}), 72},
        ConvCase{"transposed_negative_padding", kF32, {1, 6, 6, 3}, {3, 3, 3, 4},
                 Transposed(Spec(Nhwc(), {}, {{-1, 0}, {1, -2}}), {2, 2}), 27}),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return info.param.name; });

// Weight gradients as JAX writes them (conv(x, dy), x's batch and feature dims swapped, the
// forward stride as rhs_dilation and its dilation as the window stride) run on
// convolution_backward_weights. `window` = batch x dy positions summed per result element.
class OnednnWeightGradientTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(OnednnWeightGradientTest, RunsOnBackwardWeightsAndMatchesReference) {
  const ConvCase& c = GetParam();
  ASSERT_OK_AND_ASSIGN(auto planned, PlannedConvolution::Make(c.type, c.lhs, c.rhs, c.spec));
  std::vector<Tensor> args;
  for (const TensorType& t : planned->module().functions()[0]->parameter_types()) {
    args.push_back(Random(t, static_cast<uint32_t>(args.size() + 3)));
  }
  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel,
                       LibraryKernel::Create(planned->item(), planned->fusion(), kAnySize));
  EXPECT_THAT(kernel.implementation(), HasSubstr("(convolution_backward_weights)"));
  EXPECT_THAT(kernel.implementation(), ::testing::Not(HasSubstr("ref")));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, RunKernel(kernel, args));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(planned->module(), "main", args));
  ExpectClose(actual[0], expected[0], 2e-6 * double(c.window), 2e-6);
}

ConvolutionSpec WeightGradient(ConvDimensionNumbers dn, std::vector<int64_t> window_strides,
                               std::vector<std::pair<int64_t, int64_t>> padding,
                               std::vector<int64_t> rhs_dilation) {
  return Spec(std::move(dn), std::move(window_strides), std::move(padding), std::move(rhs_dilation));
}

INSTANTIATE_TEST_SUITE_P(
    Gradients, OnednnWeightGradientTest,
    ::testing::Values(
        // x [2, 17, 17, 3] NHWC, dy [2, 8, 8, 5] of a 3x3 stride-2 convolution -> dw [3, 3, 3, 5].
        ConvCase{"nhwc_stride_2", kF32, {2, 17, 17, 3}, {2, 8, 8, 5},
                 WeightGradient({3, 0, {1, 2}, 0, 3, {1, 2}, 2, 3, {0, 1}}, {}, {}, {2, 2}), 128},
        // x [1, 20, 17, 4], dy [1, 10, 15, 6] of a 3x3 convolution with strides (2, 1),
        // dilation (1, 2) and padding 1.
        ConvCase{"nhwc_padded_dilated", kF32, {1, 20, 17, 4}, {1, 10, 15, 6},
                 WeightGradient({3, 0, {1, 2}, 0, 3, {1, 2}, 2, 3, {0, 1}}, {1, 2}, {{1, 0}, {1, 1}},
                                {2, 1}),
                 150},
        // PyTorch's layouts: x NCHW [2, 3, 8, 8], dy [2, 4, 6, 6] -> dw OIHW [4, 3, 3, 3].
        ConvCase{"nchw_oihw", kF32, {2, 3, 8, 8}, {2, 4, 6, 6},
                 WeightGradient({1, 0, {2, 3}, 0, 1, {2, 3}, 1, 0, {2, 3}}, {}, {}, {}), 72},
        ConvCase{"one_spatial_dim", kF32, {3, 14, 2}, {3, 12, 4},
                 WeightGradient({2, 0, {1}, 0, 2, {1}, 1, 2, {0}}, {}, {}, {}), 36},
        // A depthwise 3x3 convolution's (6 channels): batch_group_count 6, dw [3, 3, 1, 6].
        ConvCase{"depthwise_batch_groups", kF32, {2, 8, 8, 6}, {2, 6, 6, 6},
                 WithBatchGroups(WeightGradient({3, 0, {1, 2}, 0, 3, {1, 2}, 2, 3, {0, 1}}, {}, {}, {}), 6),
                 72},
        // A grouped one's (2 groups of 4 -> 3): dw [3, 3, 2, 6].
        ConvCase{"grouped_batch_groups", kF32, {2, 10, 10, 4}, {2, 8, 8, 6},
                 WithBatchGroups(WeightGradient({3, 0, {1, 2}, 0, 3, {1, 2}, 2, 3, {0, 1}}, {}, {}, {}), 2),
                 128}),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return info.param.name; });

// Random geometries (seeded): transposed convolutions (1-2 spatial dims, lhs dilation 1-3,
// rhs dilation 1-2, kernels 1-4, padding from -1 to past the kernel's reach, NHWC or NCHW) and
// weight gradients (inputs of 8-18 per dim, strides, dilations, padding 0-2; those whose window
// is under ir_internal::kWeightGradientWindowRatio times the result run as forward convolutions). Every one either maps and matches the
// reference (tolerance as above) or is kUnimplemented; enough of each must map.
TEST(OnednnConvolutionSweepTest, RandomTransposedAndWeightGradientGeometries) {
  std::mt19937 rng(20261206);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int mapped_transposed = 0, mapped_gradients = 0;
  for (int trial = 0; trial < 160; ++trial) {
    const bool gradient = trial % 2 == 1;
    const int spatial = pick(1, 2);
    const bool nchw = spatial == 2 && pick(0, 1) == 1;
    ConvolutionSpec spec;
    std::vector<int64_t> lhs, rhs;
    const int64_t batch = pick(1, 3), in = pick(1, 5), out = pick(1, 6);
    if (!gradient) {
      spec.dimension_numbers = nchw ? Nchw() : Nhwc(spatial);
      std::vector<int64_t> sizes, kernel;
      for (int d = 0; d < spatial; ++d) {
        sizes.push_back(pick(1, 7));
        kernel.push_back(pick(1, 4));
        spec.lhs_dilation.push_back(pick(1, 3));
        spec.rhs_dilation.push_back(pick(1, 2));
        spec.window_reversal.push_back(true);
        const int64_t reach = (kernel.back() - 1) * spec.rhs_dilation.back();
        spec.padding.push_back({pick(-1, static_cast<int>(reach) + 1), pick(-1, static_cast<int>(reach) + 1)});
      }
      if (nchw) {
        lhs = {batch, in, sizes[0], sizes[1]};
        rhs = {out, in, kernel[0], kernel[1]};
      } else {
        lhs = {batch};
        lhs.insert(lhs.end(), sizes.begin(), sizes.end());
        lhs.push_back(in);
        rhs = kernel;
        rhs.push_back(in);
        rhs.push_back(out);
      }
    } else {
      // JAX's form: x [N, spatial..., C] with batch and feature swapped, dy [N, spatial..., O].
      spec.dimension_numbers =
          spatial == 1 ? ConvDimensionNumbers{2, 0, {1}, 0, 2, {1}, 1, 2, {0}}
                       : ConvDimensionNumbers{3, 0, {1, 2}, 0, 3, {1, 2}, 2, 3, {0, 1}};
      lhs = {batch};
      rhs = {batch};
      for (int d = 0; d < spatial; ++d) {
        const int64_t kernel = pick(1, 3), stride = pick(1, 2), dilation = pick(1, 2);
        const int64_t pad = pick(0, 2);
        const int64_t size = pick(static_cast<int>(std::max<int64_t>((kernel - 1) * dilation + 1, 8)), 18);
        const int64_t dy = (size + 2 * pad - (kernel - 1) * dilation - 1) / stride + 1;
        lhs.push_back(size);
        rhs.push_back(dy);
        spec.window_strides.push_back(dilation);
        spec.rhs_dilation.push_back(stride);
        spec.padding.push_back({pad, pad});
      }
      lhs.push_back(in);
      rhs.push_back(out);
    }
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    auto planned = PlannedConvolution::Make(kF32, lhs, rhs, spec);
    if (!planned.ok()) continue;  // a geometry the spec rejects (empty or negative sizes)
    StatusOr<LibraryKernel> kernel =
        LibraryKernel::Create((*planned)->item(), (*planned)->fusion(), kAnySize);
    if (!kernel.ok()) {
      EXPECT_TRUE(absl::IsUnimplemented(kernel.status())) << kernel.status();
      continue;
    }
    const std::string implementation = kernel->implementation();
    if (gradient && implementation.find("backward_weights") != std::string::npos) ++mapped_gradients;
    if (!gradient && implementation.find("deconvolution") != std::string::npos) ++mapped_transposed;
    std::vector<Tensor> args;
    for (const TensorType& t : (*planned)->module().functions()[0]->parameter_types()) {
      args.push_back(Random(t, static_cast<uint32_t>(trial * 2 + args.size())));
    }
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, RunKernel(*kernel, args));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate((*planned)->module(), "main", args));
    ExpectClose(actual[0], expected[0], 2e-6 * 200, 2e-6);
  }
  std::printf("mapped: %d transposed convolutions, %d weight gradients of 80 each\n",
              mapped_transposed, mapped_gradients);
  EXPECT_GE(mapped_transposed, 30);
  EXPECT_GE(mapped_gradients, 40);
}

// A forward convolution with a kernel about its output's size (5x5 over 4x4 output positions:
// 25 < 4 x 16) keeps convolution_forward; a gradient-shaped one (28 x 28 window over 3 x 3)
// takes convolution_backward_weights.
TEST(OnednnConvolutionSweepTest, OnlyLargeWindowsOverSmallResultsAreWeightGradients) {
  ASSERT_OK_AND_ASSIGN(auto forward, PlannedConvolution::Make(kF32, {1, 8, 8, 16}, {5, 5, 16, 32},
                                                              Spec(Nhwc())));
  ASSERT_OK_AND_ASSIGN(LibraryKernel f, LibraryKernel::Create(forward->item(), forward->fusion(), kAnySize));
  EXPECT_THAT(f.implementation(), ::testing::Not(HasSubstr("backward_weights")));
  ASSERT_OK_AND_ASSIGN(auto gradient,
                       PlannedConvolution::Make(kF32, {2, 30, 30, 8}, {2, 28, 28, 16},
                                                Spec({3, 0, {1, 2}, 0, 3, {1, 2}, 2, 3, {0, 1}})));
  ASSERT_OK_AND_ASSIGN(LibraryKernel g, LibraryKernel::Create(gradient->item(), gradient->fusion(), kAnySize));
  EXPECT_THAT(g.implementation(), HasSubstr("(convolution_backward_weights)"));
}

// Each refusal is kUnimplemented naming why, so the engine runs the item on the JIT.
struct RefusalCase {
  std::string name;
  ElementType type;
  std::vector<int64_t> lhs, rhs;
  ConvolutionSpec spec;
  std::string message;
};

class OnednnConvolutionRefusalTest : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(OnednnConvolutionRefusalTest, IsUnimplementedNamingWhy) {
  const RefusalCase& c = GetParam();
  ASSERT_OK_AND_ASSIGN(auto planned, PlannedConvolution::Make(c.type, c.lhs, c.rhs, c.spec));
  StatusOr<LibraryKernel> kernel =
      LibraryKernel::Create(planned->item(), planned->fusion(), kAnySize);
  ASSERT_FALSE(kernel.ok());
  EXPECT_TRUE(absl::IsUnimplemented(kernel.status())) << kernel.status();
  EXPECT_THAT(kernel.status().message(), HasSubstr(c.message));
}


INSTANTIATE_TEST_SUITE_P(
    Unmapped, OnednnConvolutionRefusalTest,
    ::testing::Values(
        RefusalCase{"lhs_dilation_without_reversal", kF32, {1, 5, 6, 3}, {3, 3, 3, 2},
                    WithLhsDilation(Spec(Nhwc(), {}, {{2, 2}, {1, 2}}), {2, 3}),
                    "lhs_dilation without window_reversal on spatial dim 0"},
        RefusalCase{"lhs_dilation_with_window_stride", kF32, {1, 5, 6, 3}, {3, 3, 3, 2},
                    Transposed(Spec(Nhwc(), {1, 2}, {{2, 2}, {1, 2}}), {2, 2}),
                    "lhs_dilation with window stride 2 on spatial dim 1"},
        RefusalCase{"lhs_dilation_padding_beyond_reach", kF32, {1, 5, 6, 3}, {3, 3, 3, 2},
                    Transposed(Spec(Nhwc(), {}, {{3, 0}, {0, 0}}), {2, 2}),
                    "padding (3, 0) on spatial dim 0 (beyond the transposed convolution's reach)"},
        RefusalCase{"window_reversal", kF32, {1, 8, 7, 3}, {3, 3, 3, 2},
                    WithReversal(Spec(Nhwc()), {true, false}), "window_reversal"},
        RefusalCase{"batch_groups", kF32, {4, 6, 6, 2}, {4, 3, 3, 8},
                    WithBatchGroups(Spec({3, 0, {1, 2}, 0, 3, {1, 2}, 2, 3, {0, 1}}, {}, {{1, 1}, {1, 1}}), 2),
                    "batch_group_count 2"},
        RefusalCase{"negative_padding", kF32, {1, 10, 9, 3}, {3, 2, 3, 4},
                    Spec(Nhwc(), {}, {{-2, 1}, {0, 0}}), "padding"},
        RefusalCase{"integer", ElementType::kI32, {1, 6, 6, 3}, {3, 3, 3, 2}, Spec(Nhwc()),
                    "element types i32 -> i32"}),
    [](const ::testing::TestParamInfo<RefusalCase>& info) { return info.param.name; });

TEST(OnednnConvolutionSizeTest, ItemsBelowTheThresholdAreLeftToTheJit) {
  // 2 x (1 x 6 x 6 x 2 outputs) x (3 x 3 x 3 window) = 3,888 element ops.
  ASSERT_OK_AND_ASSIGN(auto planned,
                       PlannedConvolution::Make(kF32, {1, 8, 8, 3}, {3, 3, 3, 2}, Spec(Nhwc())));
  EXPECT_EQ(planned->item().resources.estimated_element_ops, 3888u);
  StatusOr<LibraryKernel> kernel = LibraryKernel::Create(planned->item(), planned->fusion());
  ASSERT_FALSE(kernel.ok());
  EXPECT_TRUE(absl::IsUnimplemented(kernel.status())) << kernel.status();
  EXPECT_THAT(kernel.status().message(),
              HasSubstr("3888 element ops, below the library threshold of 262144"));
  kernels::LibraryKernelOptions just_enough;
  just_enough.min_convolution_element_ops = 3888;
  EXPECT_OK(LibraryKernel::Create(planned->item(), planned->fusion(), just_enough).status());
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.byte_size() == b.byte_size() &&
         std::memcmp(a.data(), b.data(), static_cast<size_t>(a.byte_size())) == 0;
}

// Runs `kernel` (inputs lhs, rhs; one output) over the callers' own buffers, so a test controls
// the address each run reads its weights from.
Status RunOver(LibraryKernel& kernel, Tensor& lhs, Tensor& rhs, Tensor& out) {
  void* buffers[] = {lhs.data(), rhs.data(), out.data()};
  const int64_t bytes[] = {lhs.byte_size(), rhs.byte_size(), out.byte_size()};
  return kernel.Run(buffers, bytes, 3);
}

// The weights layout (onednn_convolution.cc): a parameter declared constant takes the layout
// the primitive prefers, filled on the first run and again only from a new address.
TEST(OnednnConvolutionWeightsTest, DeclaredConstantWeightsAreReorderedOncePerAddress) {
  ASSERT_OK_AND_ASSIGN(auto planned,
                       PlannedConvolution::Make(kF32, {1, 12, 12, 16}, {3, 3, 16, 16},
                                                Spec(Nhwc(), {}, {{1, 1}, {1, 1}})));
  const Function& main = *planned->module().functions()[0];
  const Value* weights = main.parameter(1);
  kernels::LibraryKernelOptions options = kAnySize;
  options.constant_parameters = std::span<const Value* const>(&weights, 1);
  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel,
                       LibraryKernel::Create(planned->item(), planned->fusion(), options));
  // Every ISA oneDNN 2.6 has an optimized NHWC convolution for prefers blocked weights.
  EXPECT_THAT(kernel.implementation(), HasSubstr("(declared-constant weights reordered once)"));
  Tensor x = Random(main.parameter_types()[0], 1);
  Tensor w1 = Random(main.parameter_types()[1], 2);
  Tensor w2 = Random(main.parameter_types()[1], 3);
  ASSERT_OK_AND_ASSIGN(Tensor out, Tensor::Allocate(main.result_types()[0]));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected1,
                       Evaluate(planned->module(), "main", std::vector<Tensor>{x, w1}));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected2,
                       Evaluate(planned->module(), "main", std::vector<Tensor>{x, w2}));
  const double tol = 2e-6 * 144;  // window 3 x 3 x 16
  ASSERT_OK(RunOver(kernel, x, w1, out));
  ExpectClose(out, expected1[0], tol, 2e-6);
  ASSERT_OK_AND_ASSIGN(Tensor first, out.Clone());
  // Another address: refilled.
  ASSERT_OK(RunOver(kernel, x, w2, out));
  ExpectClose(out, expected2[0], tol, 2e-6);
  // Back to w1: refilled again, the same bits as its first run.
  ASSERT_OK(RunOver(kernel, x, w1, out));
  EXPECT_TRUE(SameBytes(out, first));
  // New values at the address of the last fill break the promise: the copy is not refilled
  // (the documented cost of CompileOptions::constant_parameters), so the result is unchanged.
  std::memcpy(w1.data(), w2.data(), static_cast<size_t>(w1.byte_size()));
  ASSERT_OK(RunOver(kernel, x, w1, out));
  EXPECT_TRUE(SameBytes(out, first));
}

// Weights not declared constant: reordered before every run where the buffer's own layout gets
// only the im2col + GEMM convolution and the window pays for it (PreferredWeightsPay), so a
// change of the values at the same address shows in the next run; read in place otherwise.
TEST(OnednnConvolutionWeightsTest, BufferWeightsFollowTheirValuesOnEveryRun) {
  struct Case {
    std::vector<int64_t> lhs, rhs;
    int64_t window;
  };
  for (const Case& c : {Case{{1, 16, 16, 8}, {3, 3, 8, 8}, 72},
                        Case{{1, 16, 16, 8}, {1, 1, 8, 8}, 8},
                        Case{{1, 8, 8, 32}, {3, 3, 32, 16}, 288}}) {
    SCOPED_TRACE("rhs " + std::to_string(c.rhs[0]) + "x" + std::to_string(c.rhs[1]) + "x" +
                 std::to_string(c.rhs[2]) + "x" + std::to_string(c.rhs[3]));
    ASSERT_OK_AND_ASSIGN(auto planned,
                         PlannedConvolution::Make(kF32, c.lhs, c.rhs,
                                                  Spec(Nhwc(), {}, {{1, 1}, {1, 1}})));
    const Function& main = *planned->module().functions()[0];
    ASSERT_OK_AND_ASSIGN(LibraryKernel kernel,
                         LibraryKernel::Create(planned->item(), planned->fusion(), kAnySize));
    const std::string& implementation = kernel.implementation();
    EXPECT_THAT(implementation, ::testing::Not(HasSubstr("declared-constant")));
    if (kernels::OneDnnHasAvx512Core() && !std::getenv("ONEDNN_MAX_CPU_ISA")) {
      // Measured there (PreferredWeightsPay): 3x3 over 256 output positions is reordered, 1x1
      // and 3x3 over 64 positions (8x8) are not.
      EXPECT_EQ(implementation.find("(weights reordered per run)") != std::string::npos,
                c.rhs[0] == 3 && c.lhs[1] == 16)
          << implementation;
    }
    Tensor x = Random(main.parameter_types()[0], 1);
    Tensor w = Random(main.parameter_types()[1], 2);
    const Tensor w2 = Random(main.parameter_types()[1], 3);
    ASSERT_OK_AND_ASSIGN(Tensor out, Tensor::Allocate(main.result_types()[0]));
    ASSERT_OK(RunOver(kernel, x, w, out));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected1,
                         Evaluate(planned->module(), "main", std::vector<Tensor>{x, w}));
    ExpectClose(out, expected1[0], 2e-6 * double(c.window), 2e-6);
    std::memcpy(w.data(), w2.data(), static_cast<size_t>(w.byte_size()));
    ASSERT_OK(RunOver(kernel, x, w, out));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected2,
                         Evaluate(planned->module(), "main", std::vector<Tensor>{x, w}));
    ExpectClose(out, expected2[0], 2e-6 * double(c.window), 2e-6);
  }
}

// NCHW activations (onednn_convolution.cc, BlockedActivationsPay): oneDNN 2.6 convolves plain
// NCHW f32 only by im2col + GEMM on AVX2 and AVX-512 hosts, so a window of more than one position
// runs a direct convolution over blocked copies of the input and result, reordered around each
// run; a 1x1 window stays a GEMM over the buffers. Both match the reference, run after run
// (the staged result is written back every time).
TEST(OnednnConvolutionLayoutTest, NchwWindowsRunDirectOverBlockedActivations) {
  struct Case {
    std::vector<int64_t> lhs, rhs;
    int64_t groups, window;
    bool blocked;
  };
  for (const Case& c : {Case{{2, 16, 20, 20}, {32, 16, 3, 3}, 1, 144, true},
                        Case{{1, 32, 24, 24}, {32, 1, 3, 3}, 32, 9, true},  // depthwise
                        Case{{1, 64, 20, 20}, {64, 64, 1, 1}, 1, 64, false}}) {
    SCOPED_TRACE("lhs channels " + std::to_string(c.lhs[1]) + ", window " +
                 std::to_string(c.rhs[2]) + ", groups " + std::to_string(c.groups));
    ConvolutionSpec spec = Spec(Nchw(), {}, {{1, 1}, {1, 1}});
    if (c.rhs[2] == 1) spec.padding = {{0, 0}, {0, 0}};
    spec.feature_group_count = c.groups;
    ASSERT_OK_AND_ASSIGN(auto planned, PlannedConvolution::Make(kF32, c.lhs, c.rhs, spec));
    const Function& main = *planned->module().functions()[0];
    ASSERT_OK_AND_ASSIGN(LibraryKernel kernel,
                         LibraryKernel::Create(planned->item(), planned->fusion(), kAnySize));
    const std::string& implementation = kernel.implementation();
    EXPECT_EQ(implementation.find("(activations reordered to its layouts per run)") !=
                  std::string::npos,
              c.blocked)
        << implementation;
    if (c.blocked) {
      EXPECT_THAT(implementation, ::testing::Not(HasSubstr("gemm"))) << implementation;
    }
    for (uint64_t seed : {1u, 2u}) {
      Tensor x = Random(main.parameter_types()[0], seed);
      Tensor w = Random(main.parameter_types()[1], seed + 10);
      ASSERT_OK_AND_ASSIGN(Tensor out, Tensor::Allocate(main.result_types()[0]));
      ASSERT_OK(RunOver(kernel, x, w, out));
      ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected,
                           Evaluate(planned->module(), "main", std::vector<Tensor>{x, w}));
      ExpectClose(out, expected[0], 2e-6 * double(c.window), 2e-6);
    }
  }
}

}  // namespace
}  // namespace accy::kernels_test
