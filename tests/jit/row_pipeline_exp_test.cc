// The row pipeline's exp(x - max(x)) (jit/row_pipeline_plan.h NonPositiveExponentials, lowered
// by EmitExpNonPositiveF32 of jit/vector_math.h) against the elementwise kernel's exp
// (EmitExpF32) of the same differences: the same bits for every element, including results that
// round to subnormals or zero (x - max below -87.3), -inf inputs, -0 and rows made NaN by a NaN
// or +inf. Runs at the process ISA (and under ACCY_MAX_ISA=avx2 as accy_jit_test_capped_avx2),
// so both of the variant's 2^n steps (vscalefps, and the shift and two multiplies) are covered.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

constexpr int64_t kRows = 6;
constexpr int64_t kColumns = 1031;  // two whole reduce chunks and a partial one

TEST(RowPipelineExpTest, ExpOfRowMaxDifferenceMatchesElementwiseExpBitForBit) {
  const float inf = std::numeric_limits<float>::infinity();
  // Row r spans [-span_r, 0] and more: differences through the subnormal results and below
  // e^-105 (rounded to 0), special values in the later rows.
  std::vector<float> x(kRows * kColumns);
  const float spans[kRows] = {1.0f, 20.0f, 110.0f, 200.0f, 110.0f, 110.0f};
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t j = 0; j < kColumns; ++j) {
      // A fixed, irregular walk over [-span, 0] (the fraction of j * golden ratio).
      const double unit = std::fmod(static_cast<double>(j) * 0.6180339887498949, 1.0);
      x[r * kColumns + j] = static_cast<float>(-spans[r] * unit + 3.25);
    }
  }
  x[3 * kColumns + 5] = -inf;  // exp(-inf - max) = 0
  x[3 * kColumns + 6] = -0.0f;
  x[4 * kColumns + 700] = std::nanf("");  // the row's max is NaN: every result NaN
  x[5 * kColumns + 17] = inf;             // max +inf: inf - inf is NaN there, -inf elsewhere

  Builder builder("exp_of_row_max_difference");
  ASSERT_OK_AND_ASSIGN(TensorType full, builder.Type(ElementType::kF32, {kRows, kColumns}));
  ASSERT_OK_AND_ASSIGN(TensorType row, builder.Type(ElementType::kF32, {kRows}));
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("main", {full}, {full}));
  ASSERT_OK_AND_ASSIGN(Value * start, f.ConstantScalar(ElementType::kF32, -inf));
  ASSERT_OK_AND_ASSIGN(Value * max, f.Reduce(f.Parameter(0), start, row, "max", {1}));
  ASSERT_OK_AND_ASSIGN(Value * max_b, f.BroadcastInDim(max, full, {0}));
  ASSERT_OK_AND_ASSIGN(Value * difference, f.Subtract(f.Parameter(0), max_b));
  ASSERT_OK_AND_ASSIGN(Value * e, f.Exponential(difference));
  ASSERT_OK(f.Return({e}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  ASSERT_OK_AND_ASSIGN(auto pipeline, JitProgram::Create(std::move(module)));
  ASSERT_EQ(pipeline->plan().items().size(), 1u);
  ASSERT_EQ(pipeline->plan().items()[0].kind, WorkKind::kRowPipeline);

  Builder plain_builder("exp");
  ASSERT_OK_AND_ASSIGN(TensorType plain_full,
                       plain_builder.Type(ElementType::kF32, {kRows, kColumns}));
  ASSERT_OK_AND_ASSIGN(FunctionBuilder g,
                       plain_builder.BeginFunction("main", {plain_full}, {plain_full}));
  ASSERT_OK_AND_ASSIGN(Value * plain_e, g.Exponential(g.Parameter(0)));
  ASSERT_OK(g.Return({plain_e}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> plain_module, plain_builder.Finish());
  ASSERT_OK_AND_ASSIGN(auto plain, JitProgram::Create(std::move(plain_module)));

  // The differences as the pipeline forms them: x - max(row) in f32 (IEEE maximum: NaN wins).
  std::vector<float> d(x.size());
  for (int64_t r = 0; r < kRows; ++r) {
    float m = -inf;
    for (int64_t j = 0; j < kColumns; ++j) {
      const float v = x[r * kColumns + j];
      m = std::isnan(v) || std::isnan(m) ? std::nanf("") : std::max(m, v);
    }
    for (int64_t j = 0; j < kColumns; ++j) d[r * kColumns + j] = x[r * kColumns + j] - m;
  }
  Tensor x_tensor = Tensor::Allocate(full).value();
  Tensor d_tensor = Tensor::Allocate(plain_full).value();
  std::memcpy(x_tensor.data(), x.data(), x.size() * sizeof(float));
  std::memcpy(d_tensor.data(), d.data(), d.size() * sizeof(float));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> got, pipeline->Run(std::vector<Tensor>{x_tensor}, 2));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, plain->Run(std::vector<Tensor>{d_tensor}, 2));
  const auto* got_values = static_cast<const float*>(got[0].data());
  const auto* want_values = static_cast<const float*>(want[0].data());

  int64_t subnormal = 0, zero = 0, nan = 0, mismatches = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float a = got_values[i], b = want_values[i];
    if (std::isnan(b)) {
      ++nan;
      if (!std::isnan(a) && mismatches++ < 5) ADD_FAILURE() << "index " << i << ": " << a;
      continue;
    }
    subnormal += std::fpclassify(b) == FP_SUBNORMAL ? 1 : 0;
    zero += b == 0.0f ? 1 : 0;
    if (Bits(a) != Bits(b) && mismatches++ < 5) {
      ADD_FAILURE() << "index " << i << " (x - max = " << d[i] << "): " << a << " vs " << b;
    }
  }
  EXPECT_EQ(mismatches, 0);
  // The inputs reach every kind of result: NaN rows 4 and 5 (whole row 4, one element of 5).
  EXPECT_EQ(nan, kColumns + 1);
  EXPECT_GT(subnormal, 100);
  EXPECT_GT(zero, 100);
  EXPECT_EQ(got_values[0], 1.0f);  // the max of row 0 (j = 0): e^0
}

}  // namespace
}  // namespace accy::jit::testing
