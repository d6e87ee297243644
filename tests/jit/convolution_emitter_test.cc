// The convolution emitter (jit/convolution_emitter.cc) against the reference evaluator, one table
// entry per feature: NHWC and NCHW (and a CHWN-like layout), strides, padding (negative too),
// lhs dilation (transposed convolution), rhs dilation, window reversal, feature groups (grouped
// and depthwise), batch groups (weight gradients), 1-D and 3-D spatial dims, zero-size dims;
// f32 on every entry and f64, f16, bf16, i8 -> i32, i32, u8 on a subset. Tolerances: integers
// exact (both wrap modulo 2^bits); floats |jit - ref| <= W * 2^-21 + eps(result) * |ref| for the
// f32 accumulator (W = kernel window size x input features per group, inputs in [-1, 1]; the
// reference sums in double), W * 2^-50 for f64. Plus bitwise equality at 1 and 2 threads.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "src/util/str_cat.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

struct ConvCase {
  std::string name;
  std::vector<int64_t> lhs, rhs;
  ConvolutionSpec spec;
};

ConvDimensionNumbers Nhwc(int spatial = 2) {
  if (spatial == 1) return {0, 2, {1}, 1, 2, {0}, 0, 2, {1}};
  if (spatial == 3) return {0, 4, {1, 2, 3}, 3, 4, {0, 1, 2}, 0, 4, {1, 2, 3}};
  return {0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
}
ConvDimensionNumbers Nchw() { return {0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}}; }

ConvolutionSpec Spec(ConvDimensionNumbers dn, std::vector<int64_t> strides = {},
                     std::vector<std::pair<int64_t, int64_t>> padding = {},
                     std::vector<int64_t> lhs_dilation = {}, std::vector<int64_t> rhs_dilation = {},
                     std::vector<bool> reversal = {}, int64_t feature_groups = 1,
                     int64_t batch_groups = 1) {
  ConvolutionSpec spec;
  spec.dimension_numbers = std::move(dn);
  spec.window_strides = std::move(strides);
  spec.padding = std::move(padding);
  spec.lhs_dilation = std::move(lhs_dilation);
  spec.rhs_dilation = std::move(rhs_dilation);
  spec.window_reversal = std::move(reversal);
  spec.feature_group_count = feature_groups;
  spec.batch_group_count = batch_groups;
  return spec;
}

const std::vector<ConvCase> kCases = {
    {"nhwc 3x3 pad 1", {2, 9, 8, 5}, {3, 3, 5, 7}, Spec(Nhwc(), {}, {{1, 1}, {1, 1}})},
    {"nchw 7x7 stride 2 pad 3",
     {1, 3, 13, 12},
     {6, 3, 7, 7},
     Spec(Nchw(), {2, 2}, {{3, 3}, {3, 3}})},
    {"nhwc 1x1 stride 2", {1, 7, 7, 16}, {1, 1, 16, 9}, Spec(Nhwc(), {2, 2})},
    {"negative padding", {1, 10, 9, 3}, {3, 2, 3, 4}, Spec(Nhwc(), {1, 2}, {{-2, 1}, {0, -3}})},
    {"lhs dilation (transposed)",
     {1, 5, 6, 3},
     {3, 3, 3, 2},
     Spec(Nhwc(), {1, 1}, {{2, 2}, {1, 2}}, {2, 3})},
    {"rhs dilation", {1, 12, 11, 2}, {3, 3, 2, 5}, Spec(Nhwc(), {}, {}, {}, {2, 3})},
    {"window reversal",
     {2, 3, 8, 7},
     {4, 3, 3, 2},
     Spec(Nchw(), {}, {{1, 0}, {0, 0}}, {}, {}, {true, false})},
    {"depthwise 3x3",
     {1, 9, 9, 6},
     {3, 3, 1, 6},
     Spec(Nhwc(), {}, {{1, 1}, {1, 1}}, {}, {}, {}, 6)},
    {"two feature groups nchw", {2, 4, 6, 6}, {6, 2, 3, 3}, Spec(Nchw(), {}, {}, {}, {}, {}, 2)},
    {"batch groups (weight gradient)",
     {4, 6, 6, 2},
     {4, 3, 3, 8},
     Spec({3, 0, {1, 2}, 0, 3, {1, 2}, 2, 3, {0, 1}}, {}, {{1, 1}, {1, 1}}, {}, {}, {}, 1, 2)},
    {"input gradient (lhs dilation, reversal)",
     {1, 4, 4, 5},
     {3, 3, 3, 5},
     Spec({0, 3, {1, 2}, 3, 2, {0, 1}, 0, 3, {1, 2}}, {}, {{2, 2}, {2, 2}}, {2, 2}, {},
          {true, true})},
    {"1-D", {2, 17, 3}, {5, 3, 4}, Spec(Nhwc(1), {2}, {{2, 1}})},
    {"3-D", {1, 5, 4, 6, 2}, {2, 3, 2, 2, 3}, Spec(Nhwc(3), {1, 1, 2}, {{1, 0}, {0, 0}, {1, 1}})},
    {"chwn-like layout",
     {3, 6, 5, 2},
     {3, 3, 3, 4},
     Spec({3, 0, {1, 2}, 0, 3, {1, 2}, 3, 0, {2, 1}}, {1, 2})},
    {"zero-size output", {2, 3, 9, 10}, {3, 3, 10, 5}, Spec(Nchw())},
    {"no input features", {1, 4, 4, 0}, {2, 2, 0, 3}, Spec(Nhwc())},
    {"zero batch", {0, 4, 4, 2}, {2, 2, 2, 3}, Spec(Nhwc())},
};

Tensor RandomInput(const TensorType& type, uint64_t seed) {
  Tensor t = Tensor::Allocate(type).value();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int64_t i = 0; i < t.element_count(); ++i) {
    if (IsFloat(type.element_type())) {
      t.SetFromDouble(i, unit(rng));
    } else {
      const uint64_t v = i % 3 == 0 ? rng() : rng() % 21;
      std::memcpy(static_cast<uint8_t*>(t.data()) + i * ElementByteWidth(type.element_type()), &v,
                  static_cast<size_t>(ElementByteWidth(type.element_type())));
    }
  }
  return t;
}

double Epsilon(ElementType type) {
  switch (type) {
    case ElementType::kF64:
      return std::ldexp(1.0, -52);
    case ElementType::kF32:
      return std::ldexp(1.0, -23);
    case ElementType::kF16:
      return std::ldexp(1.0, -10);
    case ElementType::kBF16:
      return std::ldexp(1.0, -7);
    default:
      return 0;
  }
}

StatusOr<std::unique_ptr<Module>> ConvProgram(const ConvCase& c, ElementType in,
                                              std::optional<ElementType> out) {
  Builder builder("conv_test");
  ACCY_ASSIGN_OR_RETURN(TensorType lhs, builder.Type(in, c.lhs));
  ACCY_ASSIGN_OR_RETURN(TensorType rhs, builder.Type(in, c.rhs));
  // The result type comes from the builder's inference: build once to learn it.
  Builder probe("probe");
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder p, probe.BeginFunction("p", {lhs, rhs}, {}));
  ACCY_ASSIGN_OR_RETURN(Value * shape, p.Convolution(p.Parameter(0), p.Parameter(1), c.spec, out));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f,
                        builder.BeginFunction("main", {lhs, rhs}, {shape->type()}));
  ACCY_ASSIGN_OR_RETURN(Value * conv, f.Convolution(f.Parameter(0), f.Parameter(1), c.spec, out));
  ACCY_RETURN_IF_ERROR(f.Return({conv}));
  return builder.Finish();
}

// The window of one output element: kernel positions x input features per group.
int64_t WindowSize(const ConvCase& c) {
  int64_t window =
      c.rhs[static_cast<size_t>(c.spec.dimension_numbers.kernel_input_feature_dimension)];
  for (int64_t d : c.spec.dimension_numbers.kernel_spatial_dimensions) {
    window *= c.rhs[static_cast<size_t>(d)];
  }
  return window;
}

void CheckCase(const ConvCase& c, ElementType in, std::optional<ElementType> out = std::nullopt,
               int threads = 2) {
  const ElementType result = out.value_or(in);
  SCOPED_TRACE(StrCat(c.name, " ", ElementTypeName(in), " -> ", ElementTypeName(result)));
  ASSERT_OK_AND_ASSIGN(auto module, ConvProgram(c, in, out));
  const Function& main = *module->FindFunction("main");
  std::vector<Tensor> args = {RandomInput(main.parameter_types()[0], 1),
                              RandomInput(main.parameter_types()[1], 2)};
  ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  ASSERT_EQ(program->compiled().items().size(), 1u);
  EXPECT_EQ(program->compiled().items()[0].kind, WorkKind::kConvolution);
  ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args, threads));
  const double accumulate =
      result == ElementType::kF64 ? std::ldexp(1.0, -50) : std::ldexp(1.0, -21);
  const double atol = IsFloat(result) ? static_cast<double>(WindowSize(c)) * accumulate : 0;
  TensorComparison cmp = CompareClose(actual[0], expected[0], atol, Epsilon(result));
  EXPECT_TRUE(cmp.ok) << cmp.message << " (first bad index " << cmp.first_bad_index << ")";
}

TEST(ConvolutionEmitterTest, EveryFeatureMatchesReferenceF32) {
  for (const ConvCase& c : kCases) CheckCase(c, ElementType::kF32);
}

TEST(ConvolutionEmitterTest, OtherElementTypesMatchReference) {
  for (const ConvCase& c : kCases) {
    if (c.name != "nhwc 3x3 pad 1" && c.name != "lhs dilation (transposed)" &&
        c.name != "depthwise 3x3" && c.name != "batch groups (weight gradient)" &&
        c.name != "3-D" && c.name != "no input features") {
      continue;
    }
    CheckCase(c, ElementType::kF64);
    CheckCase(c, ElementType::kF16);
    CheckCase(c, ElementType::kBF16);
    CheckCase(c, ElementType::kF16, ElementType::kF32);
    CheckCase(c, ElementType::kI8, ElementType::kI32);
    CheckCase(c, ElementType::kI32);
    CheckCase(c, ElementType::kU8);
  }
}

TEST(ConvolutionEmitterTest, SameBitsAtOneAndTwoThreadsAcrossBlocks) {
  // 2 x 30 x 30 output pixels of 16 features over a 3x3x16 window: several blocks.
  const ConvCase c = {"multi-block", {2, 32, 32, 16}, {3, 3, 16, 16}, Spec(Nhwc())};
  ASSERT_OK_AND_ASSIGN(auto module, ConvProgram(c, ElementType::kF32, std::nullopt));
  const Function& main = *module->FindFunction("main");
  std::vector<Tensor> args = {RandomInput(main.parameter_types()[0], 3),
                              RandomInput(main.parameter_types()[1], 4)};
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  EXPECT_GT(program->compiled().items()[0].launch.block_count, 1);
  ASSERT_OK_AND_ASSIGN(auto one, program->Run(args, 1));
  ASSERT_OK_AND_ASSIGN(auto two, program->Run(args, 2));
  EXPECT_TRUE(CompareExact(one[0], two[0]).ok);
}

}  // namespace
}  // namespace accy::jit::testing
