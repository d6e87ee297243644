// Reference evaluator tests for convolution (src/reference/convolution.cc): the StableHLO
// interpreter's own cases (strides, lhs dilation, padding, batch and feature groups, i8 -> i32),
// and the spec's equivalences checked with the evaluator's other ops: lhs dilation and padding
// (negative too) equal an interior/edge pad, window reversal equals a reversed kernel, feature
// groups equal per-group convolutions concatenated, a 1x1 convolution equals a dot_general.
// Integer cases compare exactly; f64 equivalences compare exactly too (the same products summed
// in the same order).
#include <cstdint>
#include <span>
#include <vector>

#include "accy/builder.h"
#include "accy/tensor.h"
#include "gtest/gtest.h"
#include "tests/reference/reference_test_util.h"
#include "tests/test_util.h"

namespace accy::reference_test {
namespace {

ConvolutionSpec Nhwc() {
  ConvolutionSpec spec;
  spec.dimension_numbers = {0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
  return spec;
}

const std::vector<int64_t> kInterpretLhs = {1, 2, 5, 6, 3, 4, 7, 8, 10, 11, 14, 15, 12, 13, 16, 17};

StatusOr<Tensor> RunConv(const Tensor& lhs, const Tensor& rhs, const ConvolutionSpec& spec,
                         std::optional<ElementType> result_type = std::nullopt) {
  Builder probe("probe");
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder pb, probe.BeginFunction("p", {lhs.type(), rhs.type()}, {}));
  ACCY_ASSIGN_OR_RETURN(Value * shape,
                        pb.Convolution(pb.Parameter(0), pb.Parameter(1), spec, result_type));
  return RunOne(shape->type(), {lhs, rhs}, [&](FunctionBuilder& b, std::span<Value* const> p) {
    return b.Convolution(p[0], p[1], spec, result_type);
  });
}

TEST(ConvolutionReferenceTest, InterpreterCasesStrideDilationPadding) {
  const Tensor lhs = Make<int64_t>(E::kI64, {1, 4, 4, 1}, kInterpretLhs);
  const Tensor ones = Make<int64_t>(E::kI64, {3, 3, 1, 1}, std::vector<int64_t>(9, 1));
  ConvolutionSpec spec = Nhwc();
  spec.window_strides = {4, 4};
  spec.lhs_dilation = {2, 2};
  ASSERT_OK_AND_ASSIGN(Tensor plain, RunConv(lhs, ones, spec));
  ExpectTensor<int64_t>(plain, E::kI64, {1, 2, 2, 1}, {10, 26, 46, 62});
  spec.padding = {{1, 1}, {1, 1}};
  ASSERT_OK_AND_ASSIGN(Tensor padded, RunConv(lhs, ones, spec));
  ExpectTensor<int64_t>(padded, E::kI64, {1, 2, 2, 1}, {1, 5, 10, 14});
}

TEST(ConvolutionReferenceTest, Int8OperandsAccumulateInInt32) {
  std::vector<int8_t> lhs_values(kInterpretLhs.begin(), kInterpretLhs.end());
  const Tensor lhs = Make<int8_t>(E::kI8, {1, 4, 4, 1}, lhs_values);
  const Tensor tens = Make<int8_t>(E::kI8, {3, 3, 1, 1}, std::vector<int8_t>(9, 10));
  ConvolutionSpec spec = Nhwc();
  spec.window_strides = {4, 4};
  spec.lhs_dilation = {2, 2};
  ASSERT_OK_AND_ASSIGN(Tensor out, RunConv(lhs, tens, spec, E::kI32));
  ExpectTensor<int32_t>(out, E::kI32, {1, 2, 2, 1}, {100, 260, 460, 620});
}

TEST(ConvolutionReferenceTest, InterpreterCasesBatchAndFeatureGroups) {
  const Tensor lhs = Make<int64_t>(E::kI64, {1, 4, 4, 1}, kInterpretLhs);
  const Tensor ones = Make<int64_t>(E::kI64, {1, 2, 1, 4}, std::vector<int64_t>(8, 1));
  ConvolutionSpec batch_groups;
  batch_groups.dimension_numbers = {1, 3, {0, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
  batch_groups.window_strides = {4, 4};
  batch_groups.lhs_dilation = {2, 2};
  batch_groups.batch_group_count = 4;
  ASSERT_OK_AND_ASSIGN(Tensor weights, RunConv(lhs, ones, batch_groups));
  ExpectTensor<int64_t>(weights, E::kI64, {1, 1, 2, 4}, {1, 3, 10, 12, 5, 7, 14, 16});

  ConvolutionSpec feature_groups;  // [b, 0, f, 1]x[0, i, 1, o]->[b, 0, 1, f]
  feature_groups.dimension_numbers = {0, 2, {1, 3}, 1, 3, {0, 2}, 0, 3, {1, 2}};
  feature_groups.window_strides = {4, 4};
  feature_groups.lhs_dilation = {2, 2};
  feature_groups.feature_group_count = 2;
  ASSERT_OK_AND_ASSIGN(Tensor grouped, RunConv(lhs, ones, feature_groups));
  ExpectTensor<int64_t>(grouped, E::kI64, {1, 2, 1, 4}, {3, 3, 11, 11, 21, 21, 29, 29});
}

// Deterministic small integers as f64 (sums stay exact, so equivalences compare exactly).
Tensor Ramp(std::vector<int64_t> dims, int seed) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<double> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) values[static_cast<size_t>(i)] = ((i * 7 + seed) % 11) - 5;
  return Make<double>(E::kF64, std::move(dims), values);
}

void ExpectSame(const Tensor& actual, const Tensor& expected) {
  TensorComparison comparison = CompareExact(actual, expected);
  EXPECT_TRUE(comparison.ok) << comparison.message;
}

TEST(ConvolutionReferenceTest, LhsDilationAndPaddingEqualAPadOp) {
  const Tensor lhs = Ramp({2, 5, 6, 3}, 1);
  const Tensor rhs = Ramp({3, 2, 3, 4}, 2);
  ConvolutionSpec spec = Nhwc();
  spec.lhs_dilation = {2, 3};
  spec.padding = {{2, -1}, {-2, 1}};
  spec.window_strides = {2, 1};
  spec.rhs_dilation = {1, 2};
  ASSERT_OK_AND_ASSIGN(Tensor direct, RunConv(lhs, rhs, spec));
  ConvolutionSpec plain = Nhwc();
  plain.window_strides = spec.window_strides;
  plain.rhs_dilation = spec.rhs_dilation;
  ASSERT_OK_AND_ASSIGN(
      Tensor padded, RunOne(direct.type(), {lhs, rhs},
                            [&](FunctionBuilder& b, std::span<Value* const> p) -> StatusOr<Value*> {
                              ACCY_ASSIGN_OR_RETURN(Value * zero, b.ConstantScalar(E::kF64, 0.0));
                              ACCY_ASSIGN_OR_RETURN(Value * x, b.Pad(p[0], zero, {0, 2, -2, 0},
                                                                     {0, -1, 1, 0}, {0, 1, 2, 0}));
                              return b.Convolution(x, p[1], plain);
                            }));
  ExpectSame(direct, padded);
}

TEST(ConvolutionReferenceTest, WindowReversalEqualsAReversedKernel) {
  const Tensor lhs = Ramp({1, 3, 7, 6}, 3);  // NCHW
  const Tensor rhs = Ramp({2, 3, 3, 4}, 4);  // OIHW
  ConvolutionSpec spec;
  spec.dimension_numbers = {0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}};
  spec.window_reversal = {true, false};
  ASSERT_OK_AND_ASSIGN(Tensor direct, RunConv(lhs, rhs, spec));
  ConvolutionSpec plain = spec;
  plain.window_reversal = {};
  ASSERT_OK_AND_ASSIGN(
      Tensor reversed,
      RunOne(direct.type(), {lhs, rhs},
             [&](FunctionBuilder& b, std::span<Value* const> p) -> StatusOr<Value*> {
               ACCY_ASSIGN_OR_RETURN(Value * k, b.Reverse(p[1], {2}));
               return b.Convolution(p[0], k, plain);
             }));
  ExpectSame(direct, reversed);
}

TEST(ConvolutionReferenceTest, FeatureGroupsEqualConcatenatedGroupConvolutions) {
  const Tensor lhs = Ramp({2, 5, 5, 6}, 5);
  const Tensor rhs = Ramp({3, 3, 2, 9}, 6);  // 3 groups of 2 inputs -> 3 outputs each
  ConvolutionSpec spec = Nhwc();
  spec.feature_group_count = 3;
  spec.padding = {{1, 1}, {0, 1}};
  ASSERT_OK_AND_ASSIGN(Tensor direct, RunConv(lhs, rhs, spec));
  ConvolutionSpec one = spec;
  one.feature_group_count = 1;
  ASSERT_OK_AND_ASSIGN(
      Tensor concatenated,
      RunOne(direct.type(), {lhs, rhs},
             [&](FunctionBuilder& b, std::span<Value* const> p) -> StatusOr<Value*> {
               std::vector<Value*> parts;
               for (int64_t g = 0; g < 3; ++g) {
                 ACCY_ASSIGN_OR_RETURN(Value * x, b.Slice(p[0], {0, 0, 0, 2 * g},
                                                          {2, 5, 5, 2 * g + 2}, {1, 1, 1, 1}));
                 ACCY_ASSIGN_OR_RETURN(Value * k, b.Slice(p[1], {0, 0, 0, 3 * g},
                                                          {3, 3, 2, 3 * g + 3}, {1, 1, 1, 1}));
                 ACCY_ASSIGN_OR_RETURN(Value * part, b.Convolution(x, k, one));
                 parts.push_back(part);
               }
               return b.Concatenate(parts, 3);
             }));
  ExpectSame(direct, concatenated);
}

TEST(ConvolutionReferenceTest, PointwiseConvolutionEqualsDotGeneral) {
  const Tensor lhs = Ramp({2, 3, 4, 5}, 7);
  const Tensor rhs = Ramp({1, 1, 5, 6}, 8);
  ASSERT_OK_AND_ASSIGN(Tensor direct, RunConv(lhs, rhs, Nhwc()));
  ASSERT_OK_AND_ASSIGN(
      Tensor dot,
      RunOne(direct.type(), {lhs, rhs},
             [&](FunctionBuilder& b, std::span<Value* const> p) -> StatusOr<Value*> {
               ACCY_ASSIGN_OR_RETURN(TensorType k_type, TensorType::Create(E::kF64, {5, 6}));
               ACCY_ASSIGN_OR_RETURN(Value * k, b.Reshape(p[1], k_type));
               return b.DotGeneral(p[0], k, direct.type(), {3}, {0}, {}, {});
             }));
  ExpectSame(direct, dot);
}

TEST(ConvolutionReferenceTest, ZeroSizedDimsGiveZerosOrEmptyResults) {
  // No kernel input features (C = 0): every output element is an empty sum, +0.
  const Tensor lhs = Make<float>(E::kF32, {1, 3, 3, 0}, {});
  const Tensor rhs = Make<float>(E::kF32, {2, 2, 0, 2}, {});
  ASSERT_OK_AND_ASSIGN(Tensor zeros, RunConv(lhs, rhs, Nhwc()));
  ExpectTensor<float>(zeros, E::kF32, {1, 2, 2, 2}, std::vector<float>(8, 0.0f));
  // An empty window (kernel larger than the input) gives an empty result.
  const Tensor small = Make<float>(E::kF32, {1, 2, 2, 1}, {1, 2, 3, 4});
  const Tensor big = Make<float>(E::kF32, {3, 3, 1, 1}, std::vector<float>(9, 1.0f));
  ASSERT_OK_AND_ASSIGN(Tensor empty, RunConv(small, big, Nhwc()));
  EXPECT_EQ(empty.type().element_count(), 0);
}

}  // namespace
}  // namespace accy::reference_test
