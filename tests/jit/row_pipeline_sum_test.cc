// Which row pipeline sums add in f32 lanes per chunk (ChunkSummedInF32, jit/row_pipeline_plan.h):
// softmax's sum of exps and the sums of squares that only scale into sqrt, rsqrt or a divisor
// do; sums of signed terms, sums taken a log of, and sums of squares that a subtraction or a
// negative scale could cancel (the one-pass variance E[x^2] - E[x]^2) keep the f64 lanes.
// So does a sum whose init value is negative. Counted in the kernel's IR before O3: one
// "chunk.sums" alloca per sum in f32 chunk lanes. The worst case of the f32 lanes (one lane
// carrying the row, every addition rounding up by almost half an ulp) is checked against the
// reference evaluator within the bound docs/numerics.md states.
// (Their numerics are checked by row_pipeline_test.cc's table. A numeric check cannot tell the
// two here: a lane's 8-term partial sum is about 1/128 of the row's, so its rounding errors
// are about 0.03 ulp of the rounded f32 total and change it only near a rounding tie; E[x^2]
// of the one-pass rows below came out bit-identical with f32 chunk lanes forced on.)
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "src/util/str_cat.h"
#include "tests/jit/jit_numeric_util.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

constexpr int64_t kRows = 4;
constexpr int64_t kColumns = 1031;  // two whole 512-column chunks and a partial one

// Builds root(x, row sums) over x: f32[kRows, kColumns]; `Tail` gets the function, x, and
// helpers to make row sums and rank-0 row constants.
struct Rows {
  FunctionBuilder& f;
  TensorType full;
  TensorType row;
  StatusOr<Value*> Sum(Value* terms, double init = 0.0) {
    ACCY_ASSIGN_OR_RETURN(Value * start, f.ConstantScalar(ElementType::kF32, init));
    return f.Reduce(terms, start, row, "sum", {1});
  }
  StatusOr<Value*> Constant(double value) {
    ACCY_ASSIGN_OR_RETURN(Value * c, f.ConstantScalar(ElementType::kF32, value));
    return f.BroadcastInDim(c, row, {});
  }
  StatusOr<Value*> Spread(Value* row_value) { return f.BroadcastInDim(row_value, full, {0}); }
};
using Tail = std::function<StatusOr<Value*>(Rows& rows, Value* x)>;

StatusOr<std::unique_ptr<Module>> BuildRows(const Tail& tail) {
  Builder builder("row_sums");
  ACCY_ASSIGN_OR_RETURN(TensorType full, builder.Type(ElementType::kF32, {kRows, kColumns}));
  ACCY_ASSIGN_OR_RETURN(TensorType row, builder.Type(ElementType::kF32, {kRows}));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", {full}, {full}));
  Rows rows{f, full, row};
  ACCY_ASSIGN_OR_RETURN(Value * root, tail(rows, f.Parameter(0)));
  ACCY_RETURN_IF_ERROR(f.Return({root}));
  return builder.Finish();
}

// x * rsqrt(scale(sum(x * x))): `scale` maps the sum to what rsqrt reads.
Tail RsqrtOfScaledSquares(std::function<StatusOr<Value*>(Rows&, Value*)> scale) {
  return [scale](Rows& r, Value* x) -> StatusOr<Value*> {
    ACCY_ASSIGN_OR_RETURN(Value * square, r.f.Multiply(x, x));
    ACCY_ASSIGN_OR_RETURN(Value * sum, r.Sum(square));
    ACCY_ASSIGN_OR_RETURN(Value * scaled, scale(r, sum));
    ACCY_ASSIGN_OR_RETURN(Value * root, r.f.Rsqrt(scaled));
    ACCY_ASSIGN_OR_RETURN(Value * spread, r.Spread(root));
    return r.f.Multiply(x, spread);
  };
}

// Layer norm with the variance E[x^2] - E[x]^2 (Flax's use_fast_variance).
StatusOr<Value*> OnePassVarianceNorm(Rows& r, Value* x) {
  ACCY_ASSIGN_OR_RETURN(Value * inv_n, r.Constant(1.0 / kColumns));
  ACCY_ASSIGN_OR_RETURN(Value * mean, r.f.Multiply(*r.Sum(x), inv_n));
  ACCY_ASSIGN_OR_RETURN(Value * square, r.f.Multiply(x, x));
  ACCY_ASSIGN_OR_RETURN(Value * mean_square, r.f.Multiply(*r.Sum(square), inv_n));
  ACCY_ASSIGN_OR_RETURN(Value * variance, r.f.Subtract(mean_square, *r.f.Multiply(mean, mean)));
  ACCY_ASSIGN_OR_RETURN(Value * rstd, r.f.Rsqrt(*r.f.Add(variance, *r.Constant(1e-5))));
  ACCY_ASSIGN_OR_RETURN(Value * centered, r.f.Subtract(x, *r.Spread(mean)));
  return r.f.Multiply(centered, *r.Spread(rstd));
}

struct SumCase {
  const char* name;
  Tail tail;
  size_t chunk_sums;  // "chunk.sums" allocas expected in the kernel
};

std::vector<SumCase> Cases() {
  auto constant = [](double v) {
    return [v](Rows& r, Value* sum) -> StatusOr<Value*> {
      ACCY_ASSIGN_OR_RETURN(Value * c, r.Constant(v));
      return r.f.Multiply(sum, c);
    };
  };
  return {
      {"layer_norm",  // the variance's sum only; the mean's terms are signed
       [](Rows& r, Value* x) -> StatusOr<Value*> {
         ACCY_ASSIGN_OR_RETURN(Value * inv_n, r.Constant(1.0 / kColumns));
         ACCY_ASSIGN_OR_RETURN(Value * mean, r.f.Multiply(*r.Sum(x), inv_n));
         ACCY_ASSIGN_OR_RETURN(Value * centered, r.f.Subtract(x, *r.Spread(mean)));
         ACCY_ASSIGN_OR_RETURN(Value * square, r.f.Multiply(centered, centered));
         ACCY_ASSIGN_OR_RETURN(Value * variance, r.f.Divide(*r.Sum(square), *r.Constant(kColumns)));
         ACCY_ASSIGN_OR_RETURN(Value * rstd, r.f.Rsqrt(*r.f.Add(*r.Constant(1e-5), variance)));
         return r.f.Multiply(centered, *r.Spread(rstd));
       },
       1},
      {"rms_norm", RsqrtOfScaledSquares(constant(1.0 / kColumns)), 1},
      {"one_pass_variance", OnePassVarianceNorm, 0},
      {"negative_scale",  // rsqrt(2 - sum / 4096): the add may cancel
       RsqrtOfScaledSquares([](Rows& r, Value* sum) -> StatusOr<Value*> {
         ACCY_ASSIGN_OR_RETURN(Value * scaled, r.f.Multiply(sum, *r.Constant(-1.0 / 4096)));
         return r.f.Add(scaled, *r.Constant(2.0));
       }),
       0},
      {"add_of_negative_constant",
       RsqrtOfScaledSquares(
           [](Rows& r, Value* sum) -> StatusOr<Value*> { return r.f.Add(sum, *r.Constant(-1.0)); }),
       0},
      {"log_of_sum", RsqrtOfScaledSquares([](Rows& r, Value* sum) { return r.f.Log(sum); }), 0},
      {"divisor",  // x / sum(x * x)
       [](Rows& r, Value* x) -> StatusOr<Value*> {
         ACCY_ASSIGN_OR_RETURN(Value * sum, r.Sum(*r.f.Multiply(x, x)));
         return r.f.Divide(x, *r.Spread(sum));
       },
       1},
      {"softmax",
       [](Rows& r, Value* x) -> StatusOr<Value*> {
         ACCY_ASSIGN_OR_RETURN(Value * e, r.f.Exponential(x));
         return r.f.Divide(e, *r.Spread(*r.Sum(e)));
       },
       1},
      {"negative_init",  // x * rsqrt(sum(x * x, init -1000)): the init may cancel the sum
       [](Rows& r, Value* x) -> StatusOr<Value*> {
         ACCY_ASSIGN_OR_RETURN(Value * sum, r.Sum(*r.f.Multiply(x, x), -1000.0));
         return r.f.Multiply(x, *r.Spread(*r.f.Rsqrt(sum)));
       },
       0},
      {"softmax_negative_init",
       [](Rows& r, Value* x) -> StatusOr<Value*> {
         ACCY_ASSIGN_OR_RETURN(Value * e, r.f.Exponential(x));
         return r.f.Divide(e, *r.Spread(*r.Sum(e, -1.0)));
       },
       0},
      {"log_softmax_sum",
       [](Rows& r, Value* x) -> StatusOr<Value*> {
         ACCY_ASSIGN_OR_RETURN(Value * e, r.f.Exponential(x));
         return r.f.Subtract(x, *r.Spread(*r.f.Log(*r.Sum(e))));
       },
       0},
  };
}

TEST(RowPipelineSumTest, SumsOfPositiveTermsThatOnlyScaleAddInF32ChunkLanes) {
  for (const SumCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    const auto dir =
        std::filesystem::temp_directory_path() /
        StrCat("accy_row_sums_", ::testing::UnitTest::GetInstance()->random_seed(), "_", c.name);
    std::filesystem::remove_all(dir);
    JitCompilerOptions options;
    options.dump_dir = dir.string();
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, BuildRows(c.tail));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module), "main", options));
    size_t pipelines = 0;
    for (const WorkItem& item : program->plan().items()) {
      pipelines += item.kind == WorkKind::kRowPipeline ? 1 : 0;
    }
    EXPECT_EQ(pipelines, 1u) << program->plan().ToText();
    const std::vector<std::string> modules = DumpedModulesBeforeOptimization(dir);
    EXPECT_EQ(modules.size(), 1u);
    size_t chunk_sums = 0;
    for (const std::string& ir : modules)
      chunk_sums += CountOccurrences(ir, "%chunk.sums = alloca");
    EXPECT_EQ(chunk_sums, c.chunk_sums);
    std::filesystem::remove_all(dir);
  }
}

// RMS norm x * rsqrt(sum(x * x) / 512) of one row whose column 0 (x = 2 + 2^-22, square just
// above 4) and columns 64, 128, ..., 448 (squares of 2.5e-7, just over half an ulp of 4) fall in
// one f32 lane, the others 1e-6: each of the lane's 7 additions rounds up, so the sum is about 3
// ulp above its exact value (the bound is 3.5), and the result, after the rsqrt and multiply,
// within 8 ulp of the reference (docs/numerics.md "Row pipelines"; measured 5, and 0 with f64
// lanes).
TEST(RowPipelineSumTest, OneLaneCarryingTheRowStaysWithinTheStatedBound) {
  constexpr int64_t kWidth = 512;
  Builder builder("rms_one_lane");
  ASSERT_OK_AND_ASSIGN(TensorType full, builder.Type(ElementType::kF32, {1, kWidth}));
  ASSERT_OK_AND_ASSIGN(TensorType row, builder.Type(ElementType::kF32, {1}));
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("main", {full}, {full}));
  Rows r{f, full, row};
  Value* x = f.Parameter(0);
  ASSERT_OK_AND_ASSIGN(Value * sum, r.Sum(*f.Multiply(x, x)));
  ASSERT_OK_AND_ASSIGN(Value * mean_square, f.Multiply(sum, *r.Constant(1.0 / kWidth)));
  ASSERT_OK_AND_ASSIGN(Value * root, f.Multiply(x, *r.Spread(*f.Rsqrt(mean_square))));
  ASSERT_OK(f.Return({root}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  Tensor input = Tensor::Allocate(full).value();
  for (int64_t j = 0; j < kWidth; ++j) input.SetFromDouble(j, 1e-6);
  input.SetFromDouble(0, 2.0 + 0x1p-22);
  for (int64_t k = 1; k < 8; ++k)
    input.SetFromDouble(64 * k, 0.0005 + 4e-7 * static_cast<double>(k));
  const std::vector<Tensor> args = {input};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, 1));
  double max_ulps = 0;
  EXPECT_TRUE(Matches(actual[0], expected[0], 8, &max_ulps));
  std::cout << "one lane carrying the row: max " << max_ulps << " ulp\n";
}

}  // namespace
}  // namespace accy::jit::testing
