// The row pipeline's exp(x - max(x)) (jit/row_pipeline_plan.h NonPositiveExponentials, lowered
// by EmitExpNonPositiveF32 of jit/vector_math.h, or by EmitExpNormalRangeF32 on rows whose
// x - max all lie in [-86.5, 0] below AVX-512) against the elementwise kernel's exp (EmitExpF32)
// of the same differences: the same bits for every element, including results that round to
// subnormals or zero (x - max below -87.3), -inf inputs, -0, rows made NaN by a NaN or +inf, and
// rows on either side of the normal range's end. Runs at the process ISA (and under
// ACCY_MAX_ISA=avx2 as accy_jit_test_capped_avx2), so every 2^n step (vscalefps; the shift and
// two multiplies; the integer add) is covered.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/isa.h"
#include "gtest/gtest.h"
#include "src/util/str_cat.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

// The pipeline exp(x - max(x)) over rows of `columns` (one row pipeline item) and the
// elementwise exp of the same shape, for comparing bit for bit.
struct ExpPrograms {
  std::unique_ptr<JitProgram> pipeline;
  std::unique_ptr<JitProgram> plain;
};

StatusOr<ExpPrograms> BuildExpPrograms(int64_t rows, int64_t columns,
                                       const JitCompilerOptions& options = {}) {
  const float inf = std::numeric_limits<float>::infinity();
  Builder builder("exp_of_row_max_difference");
  ACCY_ASSIGN_OR_RETURN(TensorType full, builder.Type(ElementType::kF32, {rows, columns}));
  ACCY_ASSIGN_OR_RETURN(TensorType row, builder.Type(ElementType::kF32, {rows}));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", {full}, {full}));
  ACCY_ASSIGN_OR_RETURN(Value * start, f.ConstantScalar(ElementType::kF32, -inf));
  ACCY_ASSIGN_OR_RETURN(Value * max, f.Reduce(f.Parameter(0), start, row, "max", {1}));
  ACCY_ASSIGN_OR_RETURN(Value * max_b, f.BroadcastInDim(max, full, {0}));
  ACCY_ASSIGN_OR_RETURN(Value * difference, f.Subtract(f.Parameter(0), max_b));
  ACCY_ASSIGN_OR_RETURN(Value * e, f.Exponential(difference));
  ACCY_RETURN_IF_ERROR(f.Return({e}));
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, builder.Finish());
  ExpPrograms programs;
  ACCY_ASSIGN_OR_RETURN(programs.pipeline, JitProgram::Create(std::move(module), "main", options));

  Builder plain_builder("exp");
  ACCY_ASSIGN_OR_RETURN(TensorType plain_full,
                        plain_builder.Type(ElementType::kF32, {rows, columns}));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder g,
                        plain_builder.BeginFunction("main", {plain_full}, {plain_full}));
  ACCY_ASSIGN_OR_RETURN(Value * plain_e, g.Exponential(g.Parameter(0)));
  ACCY_RETURN_IF_ERROR(g.Return({plain_e}));
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> plain_module, plain_builder.Finish());
  ACCY_ASSIGN_OR_RETURN(programs.plain, JitProgram::Create(std::move(plain_module)));
  return programs;
}

constexpr int64_t kRows = 8;
constexpr int64_t kColumns = 1031;  // two whole reduce chunks and a partial one

TEST(RowPipelineExpTest, ExpOfRowMaxDifferenceMatchesElementwiseExpBitForBit) {
  const float inf = std::numeric_limits<float>::infinity();
  // Row r spans [-span_r, 0] and more: differences through the subnormal results and below
  // e^-105 (rounded to 0), special values in the later rows.
  std::vector<float> x(kRows * kColumns);
  // Rows 6 and 7 end just inside and just outside the normal range (x - max >= -86.5).
  const float spans[kRows] = {1.0f, 20.0f, 110.0f, 200.0f, 110.0f, 110.0f, 86.5f, 86.6f};
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
  // Row 6's smallest difference is exactly -86.5 (max 3.25); row 7's is -88, whose exp is
  // subnormal.
  x[6 * kColumns + 3] = 3.25f;
  x[6 * kColumns + 4] = -83.25f;
  x[7 * kColumns + 3] = 3.25f;
  x[7 * kColumns + 4] = -84.75f;

  ASSERT_OK_AND_ASSIGN(ExpPrograms programs, BuildExpPrograms(kRows, kColumns));
  JitProgram* pipeline = programs.pipeline.get();
  JitProgram* plain = programs.plain.get();
  ASSERT_EQ(pipeline->plan().items().size(), 1u);
  ASSERT_EQ(pipeline->plan().items()[0].kind, WorkKind::kRowPipeline);
  const TensorType full = TensorType::Create(ElementType::kF32, {kRows, kColumns}).value();
  const TensorType& plain_full = full;

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

// Every 97th f32 of [-86.5, -0] (11.5 M values, both ends included), each as x - max of a row
// whose max is +0: the pipeline's exp, which takes EmitExpNormalRangeF32 on these rows below
// AVX-512, against EmitExpF32 bit for bit.
TEST(RowPipelineExpTest, NormalRangeDifferencesMatchElementwiseExpBitForBit) {
  constexpr int64_t kColumnsPerRow = 1024;
  constexpr uint32_t kStride = 97;
  const uint32_t first = 0x80000000u;  // -0
  uint32_t last = 0;
  const float low = -86.5f;
  std::memcpy(&last, &low, sizeof(low));
  std::vector<float> values;
  for (uint64_t bits = first; bits <= last; bits += kStride) {
    float v;
    const auto word = static_cast<uint32_t>(bits);
    std::memcpy(&v, &word, sizeof(v));
    values.push_back(v);
  }
  values.push_back(low);
  // Rows of kColumnsPerRow - 1 values after a +0 (each row's max), the last row padded with -1.
  const int64_t per_row = kColumnsPerRow - 1;
  const int64_t rows = (static_cast<int64_t>(values.size()) + per_row - 1) / per_row;
  std::vector<float> x(static_cast<size_t>(rows * kColumnsPerRow), -1.0f);
  for (int64_t r = 0; r < rows; ++r) x[static_cast<size_t>(r * kColumnsPerRow)] = 0.0f;
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t r = static_cast<int64_t>(i) / per_row;
    x[static_cast<size_t>(r * kColumnsPerRow + 1 + static_cast<int64_t>(i) % per_row)] = values[i];
  }

  ASSERT_OK_AND_ASSIGN(ExpPrograms programs, BuildExpPrograms(rows, kColumnsPerRow));
  const TensorType full = TensorType::Create(ElementType::kF32, {rows, kColumnsPerRow}).value();
  Tensor x_tensor = Tensor::Allocate(full).value();
  std::memcpy(x_tensor.data(), x.data(), x.size() * sizeof(float));
  // x - (+0) is x: the elementwise exp of x itself is the expected value.
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> got,
                       programs.pipeline->Run(std::vector<Tensor>{x_tensor}, 2));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want,
                       programs.plain->Run(std::vector<Tensor>{x_tensor}, 2));
  const auto* got_values = static_cast<const float*>(got[0].data());
  const auto* want_values = static_cast<const float*>(want[0].data());
  int64_t mismatches = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (Bits(got_values[i]) != Bits(want_values[i]) && mismatches++ < 5) {
      ADD_FAILURE() << "x = " << x[i] << ": " << got_values[i] << " vs " << want_values[i];
    }
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(values.size(), 11'000'000u);
  EXPECT_EQ(want_values[1], 1.0f);  // exp(-0)
}

// The normal-range version exists below AVX-512 only (on AVX-512 vscalefps measured as fast):
// the kernel's IR holds one "exp.normal" block per pass computing exp(x - max) (here the output
// pass) at AVX2 and none at AVX-512.
TEST(RowPipelineExpTest, NormalRangeVersionIsEmittedBelowAvx512Only) {
  ASSERT_OK_AND_ASSIGN(Isa isa, ProcessIsa());
  const auto dir = std::filesystem::temp_directory_path() /
                   StrCat("accy_exp_normal_", ::testing::UnitTest::GetInstance()->random_seed(),
                          "_", IsaName(isa));
  std::filesystem::remove_all(dir);
  JitCompilerOptions options;
  options.dump_dir = dir.string();
  ASSERT_OK(BuildExpPrograms(4, 1024, options).status());
  const std::vector<std::string> modules = DumpedModulesBeforeOptimization(dir);
  ASSERT_EQ(modules.size(), 1u);
  EXPECT_EQ(CountOccurrences(modules[0], "\nexp.normal:"), isa == Isa::kAvx512 ? 0u : 1u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace accy::jit::testing
