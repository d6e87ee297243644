// convolution through the builder: result shape inference (spec "convolution" C25) for the
// common layouts and window attributes, and one must-fail case per constraint the verifier
// checks, each asserting kInvalidArgument, a message fragment naming what was wrong, and an
// unchanged block.
#include <functional>
#include <string>
#include <vector>

#include "tests/ir/builder_test_util.h"

namespace accy::ir_test {
namespace {

// NHWC input, HWIO kernel, NHWC output (JAX's layout).
ConvolutionSpec Nhwc() {
  ConvolutionSpec spec;
  spec.dimension_numbers = {0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
  return spec;
}

// NCHW input, OIHW kernel, NCHW output (PyTorch's layout).
ConvolutionSpec Nchw() {
  ConvolutionSpec spec;
  spec.dimension_numbers = {0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}};
  return spec;
}

using BuilderConvolutionTest = BuilderTest;

TEST_F(BuilderConvolutionTest, InfersNhwcStridedPaddedShape) {
  FunctionBuilder fb = Begin({T(kF32, {1, 224, 224, 3}), T(kF32, {7, 7, 3, 64})});
  ConvolutionSpec spec = Nhwc();
  spec.window_strides = {2, 2};
  spec.padding = {{3, 3}, {3, 3}};
  ASSERT_OK_AND_ASSIGN(Value * out, fb.Convolution(fb.Parameter(0), fb.Parameter(1), spec));
  EXPECT_EQ(out->type(), T(kF32, {1, 112, 112, 64}));
  // Every window attribute is written explicitly.
  const Operation& op = *out->defining_op();
  EXPECT_EQ(op.GetInts("window_strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(op.GetInts("padding"), (std::vector<int64_t>{3, 3, 3, 3}));
  EXPECT_EQ(op.GetInts("lhs_dilation"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(op.GetInts("window_reversal"), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(op.GetInt("feature_group_count"), 1);
}

TEST_F(BuilderConvolutionTest, InfersDilatedNegativelyPaddedAndGroupedShapes) {
  FunctionBuilder fb = Begin({T(kF32, {2, 6, 9, 10}), T(kF32, {12, 2, 3, 3}), T(kF32, {8, 4, 5, 1}),
                              T(kF32, {1, 2, 1, 4})});
  ConvolutionSpec spec = Nchw();
  spec.feature_group_count = 3;  // 6 input features in 3 groups of 2
  spec.lhs_dilation = {2, 1};    // 9 -> 17
  spec.rhs_dilation = {1, 2};    // kernel 3 -> 5
  spec.padding = {{-1, 0}, {1, 1}};
  spec.window_reversal = {true, false};
  ASSERT_OK_AND_ASSIGN(Value * grouped, fb.Convolution(fb.Parameter(0), fb.Parameter(1), spec));
  // spatial 0: 17 - 1 = 16 padded, window 3: 14; spatial 1: 12 padded, window 5: 8.
  EXPECT_EQ(grouped->type(), T(kF32, {2, 12, 14, 8}));

  // batch_group_count: 8 batch rows in 4 groups, 4 output features (one per group).
  ConvolutionSpec batch_grouped;
  batch_grouped.dimension_numbers = {0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
  batch_grouped.batch_group_count = 4;
  ASSERT_OK_AND_ASSIGN(Value * weights,
                       fb.Convolution(fb.Parameter(2), fb.Parameter(3), batch_grouped));
  EXPECT_EQ(weights->type(), T(kF32, {2, 4, 4, 4}));
}

TEST_F(BuilderConvolutionTest, ZeroSizedWindowsGiveZeroSizedResults) {
  FunctionBuilder fb = Begin({T(kF32, {2, 3, 9, 10}), T(kF32, {3, 3, 10, 5})});
  ASSERT_OK_AND_ASSIGN(Value * out, fb.Convolution(fb.Parameter(0), fb.Parameter(1), Nchw()));
  EXPECT_EQ(out->type(), T(kF32, {2, 3, 0, 6}));
}

TEST_F(BuilderConvolutionTest, OneAndThreeSpatialDims) {
  FunctionBuilder fb = Begin({T(kF32, {1, 28, 1}), T(kF32, {3, 1, 16}), T(kF64, {1, 4, 5, 6, 2}),
                              T(kF64, {2, 2, 2, 2, 3})});
  ConvolutionSpec one;
  one.dimension_numbers = {0, 2, {1}, 1, 2, {0}, 0, 2, {1}};
  one.padding = {{1, 1}};
  ASSERT_OK_AND_ASSIGN(Value * a, fb.Convolution(fb.Parameter(0), fb.Parameter(1), one));
  EXPECT_EQ(a->type(), T(kF32, {1, 28, 16}));
  ConvolutionSpec three;
  three.dimension_numbers = {0, 4, {1, 2, 3}, 3, 4, {0, 1, 2}, 0, 4, {1, 2, 3}};
  ASSERT_OK_AND_ASSIGN(Value * b, fb.Convolution(fb.Parameter(2), fb.Parameter(3), three));
  EXPECT_EQ(b->type(), T(kF64, {1, 3, 4, 5, 3}));
}

TEST_F(BuilderConvolutionTest, IntegerResultMayWiden) {
  FunctionBuilder fb = Begin({T(kI8, {1, 4, 4, 1}), T(kI8, {3, 3, 1, 1})});
  ASSERT_OK_AND_ASSIGN(Value * out, fb.Convolution(fb.Parameter(0), fb.Parameter(1), Nhwc(), kI32));
  EXPECT_EQ(out->type(), T(kI32, {1, 2, 2, 1}));
  EXPECT_REJECTED(fb, fb.Convolution(fb.Parameter(0), fb.Parameter(1), Nhwc(), kF32),
                  "result 0 has type tensor<1x2x2x1xf32>");
}

// One must-fail input per constraint: (what to change, message fragment).
struct BadConvolution {
  std::string name;
  std::function<void(ConvolutionSpec&)> edit;
  std::string fragment;
};

TEST_F(BuilderConvolutionTest, RejectsEachBrokenConstraintNamingIt) {
  const std::vector<BadConvolution> cases = {
      {"C2", [](ConvolutionSpec& s) { s.window_strides = {1}; },
       "window_strides has 1 entries, expected 2"},
      {"C3",
       [](ConvolutionSpec& s) {
         s.window_strides = {1, 0};
       },
       "window_strides [1, 0]: entry 1 is 0, must be positive"},
      {"C4",
       [](ConvolutionSpec& s) {
         s.padding = {{0, 0}};
       },
       "padding has 1 entries"},
      {"C5",
       [](ConvolutionSpec& s) {
         s.lhs_dilation = {1, 1, 1};
       },
       "lhs_dilation has 3 entries"},
      {"C6",
       [](ConvolutionSpec& s) {
         s.lhs_dilation = {-1, 1};
       },
       "lhs_dilation [-1, 1]: entry 0 is -1"},
      {"C7", [](ConvolutionSpec& s) { s.rhs_dilation = {1}; }, "rhs_dilation has 1 entries"},
      {"C8",
       [](ConvolutionSpec& s) {
         s.rhs_dilation = {1, 0};
       },
       "rhs_dilation [1, 0]"},
      {"C9", [](ConvolutionSpec& s) { s.window_reversal = {true}; },
       "window_reversal has 1 entries"},
      {"C10", [](ConvolutionSpec& s) { s.batch_group_count = 3; },
       "dim 0 of lhs (input batch) has size 2, not divisible by batch_group_count 3"},
      {"C11", [](ConvolutionSpec& s) { s.feature_group_count = 4; },
       "dim 3 of lhs (input feature) has size 6, not divisible by feature_group_count 4"},
      {"C12", [](ConvolutionSpec& s) { s.dimension_numbers.input_spatial_dimensions = {1}; },
       "input_spatial_dimensions has 1 entries"},
      {"C13", [](ConvolutionSpec& s) { s.dimension_numbers.input_feature_dimension = 1; },
       "lhs dimension 1 is named twice"},
      {"C13 range", [](ConvolutionSpec& s) { s.dimension_numbers.input_batch_dimension = 4; },
       "input_batch_dimension 4 is out of range [0, 4) for the lhs"},
      {"C14", [](ConvolutionSpec& s) { s.feature_group_count = 2; },
       "dim 2 of rhs (kernel input feature) has size 6, expected 3"},
      {"C15", [](ConvolutionSpec& s) { s.batch_group_count = 2; },
       "dim 3 of rhs (kernel output feature) has size 5, not divisible by batch_group_count 2"},
      {"C17", [](ConvolutionSpec& s) { s.dimension_numbers.kernel_spatial_dimensions = {0}; },
       "kernel_spatial_dimensions has 1 entries"},
      {"C18", [](ConvolutionSpec& s) { s.dimension_numbers.kernel_output_feature_dimension = 2; },
       "rhs dimension 2 is named twice"},
      {"C19", [](ConvolutionSpec& s) { s.dimension_numbers.output_spatial_dimensions = {}; },
       "output_spatial_dimensions has 0 entries"},
      {"C20", [](ConvolutionSpec& s) { s.dimension_numbers.output_feature_dimension = -1; },
       "output_feature_dimension -1 is out of range [0, 4) for the result"},
      {"C21", [](ConvolutionSpec& s) { s.feature_group_count = 0; },
       "feature_group_count 0 must be positive"},
      {"C22", [](ConvolutionSpec& s) { s.batch_group_count = -2; },
       "batch_group_count -2 must be positive"},
      {"C23",
       [](ConvolutionSpec& s) {
         s.feature_group_count = 2;
         s.batch_group_count = 2;
       },
       "at most one of them may exceed 1"},
      {"C24", [](ConvolutionSpec& s) { s.precision_config = {"DEFAULT"}; },
       "precision_config has 1 entries, expected 0 or 2"},
      {"C24 value",
       [](ConvolutionSpec& s) {
         s.precision_config = {"DEFAULT", "FAST"};
       },
       "precision 'FAST' is not DEFAULT, HIGH or HIGHEST"},
  };
  for (const BadConvolution& bad : cases) {
    SCOPED_TRACE(bad.name);
    FunctionBuilder fb = Begin({T(kF32, {2, 8, 8, 6}), T(kF32, {3, 3, 6, 5})}, {}, bad.name);
    ConvolutionSpec spec = Nhwc();
    bad.edit(spec);
    EXPECT_REJECTED(fb, fb.Convolution(fb.Parameter(0), fb.Parameter(1), spec),
                    "convolution: ", bad.fragment);
  }
}

TEST_F(BuilderConvolutionTest, RejectsOperandMismatches) {
  FunctionBuilder fb =
      Begin({T(kF32, {1, 8, 8, 3}), T(kF16, {3, 3, 3, 4}), T(kF32, {3, 3, 4}), T(kI1, {1, 8, 8, 3}),
             T(kF32, {3}), T(kF32, {3, 3, 3, 4}), T(kF32, {3, 3, 1, 5})});
  EXPECT_REJECTED(fb, fb.Convolution(fb.Parameter(0), fb.Parameter(1), Nhwc()),
                  "convolution: lhs has type tensor<1x8x8x3xf32> but rhs has type "
                  "tensor<3x3x3x4xf16> (element types must match)");
  EXPECT_REJECTED(fb, fb.Convolution(fb.Parameter(0), fb.Parameter(2), Nhwc()),
                  "convolution: lhs has rank 4 but rhs has rank 3");
  EXPECT_REJECTED(fb, fb.Convolution(fb.Parameter(3), fb.Parameter(3), Nhwc()),
                  "convolution: operands of element type i1 are not supported");
  EXPECT_REJECTED(fb, fb.Convolution(fb.Parameter(4), fb.Parameter(4), Nhwc()),
                  "convolution: operands have rank 1, expected at least 2");
  // C16: 5 kernel output features do not split into 2 feature groups.
  ConvolutionSpec grouped = Nhwc();
  grouped.feature_group_count = 3;
  EXPECT_REJECTED(fb, fb.Convolution(fb.Parameter(0), fb.Parameter(6), grouped),
                  "convolution: dim 3 of rhs (kernel output feature) has size 5, not divisible "
                  "by feature_group_count 3");
}

TEST_F(BuilderConvolutionTest, VerifierRejectsMissingDimensionNumbersAndWrongResult) {
  FunctionBuilder fb = Begin({T(kF32, {1, 8, 8, 3}), T(kF32, {3, 3, 3, 4})});
  EXPECT_REJECTED(fb,
                  fb.CreateOp(OpKind::kConvolution, {fb.Parameter(0), fb.Parameter(1)},
                              {T(kF32, {1, 6, 6, 4})}, {}),
                  "convolution: missing attribute input_batch_dimension");
  std::vector<NamedAttribute> attrs = {{"input_batch_dimension", int64_t{0}},
                                       {"input_feature_dimension", int64_t{3}},
                                       {"input_spatial_dimensions", std::vector<int64_t>{1, 2}},
                                       {"kernel_input_feature_dimension", int64_t{2}},
                                       {"kernel_output_feature_dimension", int64_t{3}},
                                       {"kernel_spatial_dimensions", std::vector<int64_t>{0, 1}},
                                       {"output_batch_dimension", int64_t{0}},
                                       {"output_feature_dimension", int64_t{3}},
                                       {"output_spatial_dimensions", std::vector<int64_t>{1, 2}}};
  EXPECT_REJECTED(fb,
                  fb.CreateOp(OpKind::kConvolution, {fb.Parameter(0), fb.Parameter(1)},
                              {T(kF32, {1, 8, 8, 4})}, attrs),
                  "convolution: result 0 has type tensor<1x8x8x4xf32>, expected "
                  "tensor<1x6x6x4xf32>");
  std::vector<NamedAttribute> odd_padding = attrs;
  odd_padding.push_back({"padding", std::vector<int64_t>{1, 1, 1}});
  EXPECT_REJECTED(fb,
                  fb.CreateOp(OpKind::kConvolution, {fb.Parameter(0), fb.Parameter(1)},
                              {T(kF32, {1, 6, 6, 4})}, odd_padding),
                  "convolution: padding [1, 1, 1] must hold (low, high) pairs");
  std::vector<NamedAttribute> bad_flag = attrs;
  bad_flag.push_back({"window_reversal", std::vector<int64_t>{0, 2}});
  EXPECT_REJECTED(fb,
                  fb.CreateOp(OpKind::kConvolution, {fb.Parameter(0), fb.Parameter(1)},
                              {T(kF32, {1, 6, 6, 4})}, bad_flag),
                  "convolution: window_reversal [0, 2] must hold 0 or 1");
  ASSERT_OK(fb.CreateOp(OpKind::kConvolution, {fb.Parameter(0), fb.Parameter(1)},
                        {T(kF32, {1, 6, 6, 4})}, attrs)
                .status());
}

}  // namespace
}  // namespace accy::ir_test
