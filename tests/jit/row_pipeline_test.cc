// row_pipeline kernels (jit/row_pipeline_emitter.cc) against the reference evaluator: a table of
// pipelines (softmax, log-softmax, layer norm, RMS norm, integer and min/max pipelines, a rank-1
// clamp by row statistics) x element types x shapes with awkward row lengths (1, 7, 17, 511,
// 512, 1023, 1100: partial and whole reduce chunks) and zero-size shapes, each asserted to plan
// as one row_pipeline item; special values (rows of -inf, NaN, +-inf); bitwise determinism at 1
// and 2 threads; and the error path of a reduce body the emitter cannot lower.
//
// Bounds (JIT vs reference, per element, in ULPs of the element type): f32 exp is the inline
// polynomial of jit/vector_math.h (<= 1 ulp), f64 exp and log go through glibc libmvec in the
// vector loop (<= 4 ulp each, elementwise_test.cc) and the row sums are
// f64 sums rounded once (the reference: compensated f64, rounded once), so softmax-like
// pipelines stay within kExpUlp. Layer and RMS norm are held to kNormUlp; their sums of
// squares add in f32 lanes per 512-column chunk (ChunkSummedInF32), within 3.5 ulp of exact, so
// rstd is within about 2 ulp of the reference's, and where layer norm's last add (+ beta)
// cancels, an error of a few ulp of its terms is many ulp of the small result: f32 layer norm
// may instead be off by kNormCancellationAbs, 4 ulp of the largest term that add can see here
// (|(x - mean) * rstd * gamma| <= sqrt(3) * 1.5 < 4 for uniform rows, |beta| <= 1.5).
// f16/bf16 compute in f32 and round once per op: within 2 ulp of the narrow type.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/isa.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "src/util/str_cat.h"
#include "tests/jit/jit_numeric_util.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

constexpr int64_t kExpUlp = 8;
constexpr int64_t kNormUlp = 4;
constexpr double kNormCancellationAbs = 4 * 0x1p-22;  // 4 ulp of f32 values in [2, 4)
constexpr int64_t kHalfUlp = 2;
const double kInf = std::numeric_limits<double>::infinity();

// Builds the pipeline on x (dims F) plus optional per-column parameters; returns the root.
using PipelineFn = std::function<StatusOr<Value*>(FunctionBuilder& f, std::vector<Value*> params,
                                                  ElementType type,
                                                  const std::vector<int64_t>& dims)>;

std::vector<int64_t> RowDims(const std::vector<int64_t>& dims) {
  return std::vector<int64_t>(dims.begin(), dims.end() - 1);
}
std::vector<int64_t> RowMap(const std::vector<int64_t>& dims) {
  std::vector<int64_t> map;
  for (size_t i = 0; i + 1 < dims.size(); ++i) map.push_back(static_cast<int64_t>(i));
  return map;
}

// reduce over the last dim, broadcast back over the row.
StatusOr<Value*> RowStat(FunctionBuilder& f, Value* x, ElementType type,
                         const std::vector<int64_t>& dims, const char* reducer, double init) {
  ACCY_ASSIGN_OR_RETURN(Value * start, f.ConstantScalar(type, init));
  ACCY_ASSIGN_OR_RETURN(TensorType row_type, TensorType::Create(type, RowDims(dims)));
  ACCY_ASSIGN_OR_RETURN(Value * stat, f.Reduce(x, start, row_type, reducer,
                                               {static_cast<int64_t>(dims.size()) - 1}));
  return stat;
}
StatusOr<Value*> ToRow(FunctionBuilder& f, Value* stat, ElementType type,
                       const std::vector<int64_t>& dims) {
  ACCY_ASSIGN_OR_RETURN(TensorType full, TensorType::Create(type, dims));
  return f.BroadcastInDim(stat, full, RowMap(dims));
}
// A rank-0 constant spread over the row dims (as frameworks write 1/N and epsilon).
StatusOr<Value*> RowConstant(FunctionBuilder& f, double value, ElementType type,
                             const std::vector<int64_t>& dims) {
  ACCY_ASSIGN_OR_RETURN(Value * c, f.ConstantScalar(type, value));
  ACCY_ASSIGN_OR_RETURN(TensorType row_type, TensorType::Create(type, RowDims(dims)));
  return f.BroadcastInDim(c, row_type, {});
}
// A per-column parameter [N] spread over F.
StatusOr<Value*> ColumnParam(FunctionBuilder& f, Value* p, ElementType type,
                             const std::vector<int64_t>& dims) {
  ACCY_ASSIGN_OR_RETURN(TensorType full, TensorType::Create(type, dims));
  return f.BroadcastInDim(p, full, {static_cast<int64_t>(dims.size()) - 1});
}

StatusOr<Value*> Softmax(FunctionBuilder& f, std::vector<Value*> p, ElementType t,
                         const std::vector<int64_t>& dims) {
  ACCY_ASSIGN_OR_RETURN(Value * max, RowStat(f, p[0], t, dims, "max", -kInf));
  ACCY_ASSIGN_OR_RETURN(Value * max_b, ToRow(f, max, t, dims));
  ACCY_ASSIGN_OR_RETURN(Value * shifted, f.Subtract(p[0], max_b));
  ACCY_ASSIGN_OR_RETURN(Value * e, f.Exponential(shifted));
  ACCY_ASSIGN_OR_RETURN(Value * sum, RowStat(f, e, t, dims, "sum", 0.0));
  ACCY_ASSIGN_OR_RETURN(Value * sum_b, ToRow(f, sum, t, dims));
  return f.Divide(e, sum_b);
}

StatusOr<Value*> LogSoftmax(FunctionBuilder& f, std::vector<Value*> p, ElementType t,
                            const std::vector<int64_t>& dims) {
  ACCY_ASSIGN_OR_RETURN(Value * max, RowStat(f, p[0], t, dims, "max", -kInf));
  ACCY_ASSIGN_OR_RETURN(Value * max_b, ToRow(f, max, t, dims));
  ACCY_ASSIGN_OR_RETURN(Value * shifted, f.Subtract(p[0], max_b));
  ACCY_ASSIGN_OR_RETURN(Value * e, f.Exponential(shifted));
  ACCY_ASSIGN_OR_RETURN(Value * sum, RowStat(f, e, t, dims, "sum", 0.0));
  ACCY_ASSIGN_OR_RETURN(Value * log, f.Log(sum));
  ACCY_ASSIGN_OR_RETURN(Value * log_b, ToRow(f, log, t, dims));
  return f.Subtract(shifted, log_b);
}

StatusOr<Value*> LayerNorm(FunctionBuilder& f, std::vector<Value*> p, ElementType t,
                           const std::vector<int64_t>& dims) {
  const double inv_n = 1.0 / static_cast<double>(dims.back());
  ACCY_ASSIGN_OR_RETURN(Value * inv_n_b, RowConstant(f, inv_n, t, dims));
  ACCY_ASSIGN_OR_RETURN(Value * sum, RowStat(f, p[0], t, dims, "sum", 0.0));
  ACCY_ASSIGN_OR_RETURN(Value * mean, f.Multiply(sum, inv_n_b));
  ACCY_ASSIGN_OR_RETURN(Value * mean_b, ToRow(f, mean, t, dims));
  ACCY_ASSIGN_OR_RETURN(Value * centered, f.Subtract(p[0], mean_b));
  ACCY_ASSIGN_OR_RETURN(Value * square, f.Multiply(centered, centered));
  ACCY_ASSIGN_OR_RETURN(Value * square_sum, RowStat(f, square, t, dims, "sum", 0.0));
  ACCY_ASSIGN_OR_RETURN(Value * variance, f.Multiply(square_sum, inv_n_b));
  ACCY_ASSIGN_OR_RETURN(Value * eps_b, RowConstant(f, 1e-5, t, dims));
  ACCY_ASSIGN_OR_RETURN(Value * padded, f.Add(variance, eps_b));
  ACCY_ASSIGN_OR_RETURN(Value * rstd, f.Rsqrt(padded));
  ACCY_ASSIGN_OR_RETURN(Value * rstd_b, ToRow(f, rstd, t, dims));
  ACCY_ASSIGN_OR_RETURN(Value * normed, f.Multiply(centered, rstd_b));
  ACCY_ASSIGN_OR_RETURN(Value * gamma_b, ColumnParam(f, p[1], t, dims));
  ACCY_ASSIGN_OR_RETURN(Value * scaled, f.Multiply(normed, gamma_b));
  ACCY_ASSIGN_OR_RETURN(Value * beta_b, ColumnParam(f, p[2], t, dims));
  return f.Add(scaled, beta_b);
}

StatusOr<Value*> RmsNorm(FunctionBuilder& f, std::vector<Value*> p, ElementType t,
                         const std::vector<int64_t>& dims) {
  ACCY_ASSIGN_OR_RETURN(Value * square, f.Multiply(p[0], p[0]));
  ACCY_ASSIGN_OR_RETURN(Value * square_sum, RowStat(f, square, t, dims, "sum", 0.0));
  ACCY_ASSIGN_OR_RETURN(Value * inv_n_b,
                        RowConstant(f, 1.0 / static_cast<double>(dims.back()), t, dims));
  ACCY_ASSIGN_OR_RETURN(Value * mean_square, f.Multiply(square_sum, inv_n_b));
  ACCY_ASSIGN_OR_RETURN(Value * eps_b, RowConstant(f, 1e-6, t, dims));
  ACCY_ASSIGN_OR_RETURN(Value * rms, f.Rsqrt(*f.Add(mean_square, eps_b)));
  ACCY_ASSIGN_OR_RETURN(Value * rms_b, ToRow(f, rms, t, dims));
  ACCY_ASSIGN_OR_RETURN(Value * normed, f.Multiply(p[0], rms_b));
  ACCY_ASSIGN_OR_RETURN(Value * gamma_b, ColumnParam(f, p[1], t, dims));
  return f.Multiply(normed, gamma_b);
}

// (x - min(x)) * sum(x) + max(x): three reducers in one pass, exact for integers.
StatusOr<Value*> MinMaxSum(FunctionBuilder& f, std::vector<Value*> p, ElementType t,
                           const std::vector<int64_t>& dims) {
  // Init values inside the data's range for integers, so they take part in the result.
  const double low = IsFloat(t) ? -kInf : IsSigned(t) ? -50.0 : 5.0;
  const double high = IsFloat(t) ? kInf : 200.0;
  ACCY_ASSIGN_OR_RETURN(Value * min, RowStat(f, p[0], t, dims, "min", high));
  ACCY_ASSIGN_OR_RETURN(Value * max, RowStat(f, p[0], t, dims, "max", low));
  ACCY_ASSIGN_OR_RETURN(Value * sum, RowStat(f, p[0], t, dims, "sum", 3.0));
  ACCY_ASSIGN_OR_RETURN(Value * shifted, f.Subtract(p[0], *ToRow(f, min, t, dims)));
  ACCY_ASSIGN_OR_RETURN(Value * scaled, f.Multiply(shifted, *ToRow(f, sum, t, dims)));
  return f.Add(scaled, *ToRow(f, max, t, dims));
}

// Rank 1: clamp(min(x) + 1, x, max(x) - 1), the row statistics used directly as rank-0 operands.
StatusOr<Value*> ClampByRowStats(FunctionBuilder& f, std::vector<Value*> p, ElementType t,
                                 const std::vector<int64_t>& dims) {
  ACCY_ASSIGN_OR_RETURN(Value * min, RowStat(f, p[0], t, dims, "min", kInf));
  ACCY_ASSIGN_OR_RETURN(Value * max, RowStat(f, p[0], t, dims, "max", -kInf));
  ACCY_ASSIGN_OR_RETURN(Value * one, f.ConstantScalar(t, 1.0));
  ACCY_ASSIGN_OR_RETURN(Value * low, f.Add(min, one));
  ACCY_ASSIGN_OR_RETURN(Value * high, f.Subtract(max, one));
  return f.Clamp(low, p[0], high);
}

struct PipelineCase {
  const char* name;
  PipelineFn build;
  int column_params;  // extra [N] parameters (gamma, beta)
  std::vector<ElementType> types;
  int64_t ulp;  // f32/f64 bound; f16/bf16 use kHalfUlp
  // f32 elements may instead be within this absolute error (0: not allowed).
  double f32_abs;
  std::vector<std::vector<int64_t>> shapes;
};

const std::vector<std::vector<int64_t>> kRowShapes = {
    {1, 1}, {3, 7}, {2, 3, 17}, {4, 511}, {3, 512}, {5, 1023}, {2, 1100}, {0, 8}, {4, 0}, {16}};

const std::vector<PipelineCase>& Cases() {
  using E = ElementType;
  static const std::vector<PipelineCase> cases = {
      {"softmax", Softmax, 0, {E::kF32, E::kF64, E::kF16, E::kBF16}, kExpUlp, 0, kRowShapes},
      {"log_softmax", LogSoftmax, 0, {E::kF32, E::kF64, E::kBF16}, kExpUlp, 0, kRowShapes},
      {"layer_norm",
       LayerNorm,
       2,
       {E::kF32, E::kF64, E::kF16, E::kBF16},
       kNormUlp,
       kNormCancellationAbs,
       kRowShapes},
      {"rms_norm", RmsNorm, 1, {E::kF32, E::kF64, E::kBF16}, kNormUlp, 0, kRowShapes},
      {"min_max_sum",
       MinMaxSum,
       0,
       {E::kI32, E::kU8, E::kI64, E::kF32},
       kNormUlp,
       0,
       {{3, 7}, {2, 600}, {9}}},
      {"clamp_by_row_stats", ClampByRowStats, 0, {E::kF32, E::kBF16}, 0, 0, {{1}, {17}, {1030}}},
  };
  return cases;
}

// Uniform values in [-scale, scale] (no special values: accuracy, not NaN plumbing).
Tensor SmoothInput(const TensorType& type, uint64_t seed, double scale) {
  Tensor t = Tensor::Allocate(type).value();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-scale, scale);
  for (int64_t i = 0; i < t.element_count(); ++i) {
    const double v = unit(rng);
    const ElementType e = type.element_type();
    t.SetFromDouble(i, IsFloat(e) ? v : IsUnsigned(e) ? std::floor(std::fabs(v)) : std::floor(v));
  }
  return t;
}

struct Built {
  std::unique_ptr<Module> module;
  std::vector<TensorType> params;
};

StatusOr<Built> Build(const PipelineCase& c, ElementType type, const std::vector<int64_t>& dims) {
  Builder builder(c.name);
  Built built;
  ACCY_ASSIGN_OR_RETURN(TensorType x, builder.Type(type, dims));
  built.params.push_back(x);
  for (int i = 0; i < c.column_params; ++i) {
    ACCY_ASSIGN_OR_RETURN(TensorType column, builder.Type(type, {dims.back()}));
    built.params.push_back(column);
  }
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", built.params, {x}));
  std::vector<Value*> params;
  for (size_t i = 0; i < built.params.size(); ++i) params.push_back(f.Parameter(static_cast<int64_t>(i)));
  ACCY_ASSIGN_OR_RETURN(Value * root, c.build(f, params, type, dims));
  ACCY_RETURN_IF_ERROR(f.Return({root}));
  ACCY_ASSIGN_OR_RETURN(built.module, builder.Finish());
  return built;
}

int CountKind(const JitProgram& program, WorkKind kind) {
  int n = 0;
  for (const WorkItem& item : program.plan().items()) n += item.kind == kind ? 1 : 0;
  return n;
}

// Runs case `c` on `type` x `dims` through the JIT (`threads`) and the reference.
void CheckCase(const PipelineCase& c, ElementType type, const std::vector<int64_t>& dims,
               int threads, double* max_ulps) {
  SCOPED_TRACE(StrCat(c.name, " ", ElementTypeName(type), " ",
                      TensorType::Create(type, dims)->ToString()));
  ASSERT_OK_AND_ASSIGN(Built built, Build(c, type, dims));
  std::vector<Tensor> args;
  const double scale = IsFloat(type) ? 4.0 : 100.0;
  for (size_t i = 0; i < built.params.size(); ++i) {
    args.push_back(SmoothInput(built.params[i], 17 * i + dims.back(), i == 0 ? scale : 1.5));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*built.module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(built.module)));
  EXPECT_EQ(CountKind(*program, WorkKind::kRowPipeline), 1) << program->plan().ToText();
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, threads));
  const bool half = type == ElementType::kF16 || type == ElementType::kBF16;
  const int64_t bound = !IsFloat(type) ? 0 : half ? std::max<int64_t>(c.ulp, kHalfUlp) : c.ulp;
  EXPECT_TRUE(MatchesUlpOrAbs(actual[0], expected[0], bound, c.f32_abs, max_ulps));
}

class RowPipelineCaseTest : public ::testing::TestWithParam<size_t> {};

TEST_P(RowPipelineCaseTest, MatchesReferenceForEveryTypeAndShape) {
  const PipelineCase& c = Cases()[GetParam()];
  for (ElementType type : c.types) {
    double max_ulps = 0;
    for (const auto& dims : c.shapes) CheckCase(c, type, dims, /*threads=*/2, &max_ulps);
    std::cout << c.name << " " << ElementTypeName(type) << ": max " << max_ulps << " ulp\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Pipelines, RowPipelineCaseTest, ::testing::Range<size_t>(0, 6),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return std::string(Cases()[info.param].name);
                         });

// Rows of -inf give NaN (exp(-inf - -inf)), a NaN anywhere in a row makes the row NaN, +inf
// makes the row NaN (inf - inf), and rows of ordinary values next to them are unaffected.
TEST(RowPipelineSpecialValuesTest, SoftmaxRowsOfInfAndNaNMatchReference) {
  const PipelineCase& softmax = Cases()[0];
  for (ElementType type : {ElementType::kF32, ElementType::kBF16}) {
    SCOPED_TRACE(std::string(ElementTypeName(type)));
    const std::vector<int64_t> dims = {6, 37};
    ASSERT_OK_AND_ASSIGN(Built built, Build(softmax, type, dims));
    Tensor x = SmoothInput(built.params[0], 5, 3.0);
    for (int64_t j = 0; j < 37; ++j) x.SetFromDouble(0 * 37 + j, -kInf);  // all -inf
    x.SetFromDouble(1 * 37 + 20, std::nan(""));
    x.SetFromDouble(2 * 37 + 3, kInf);
    x.SetFromDouble(3 * 37 + 36, -kInf);  // one -inf: exp gives 0 there
    x.SetFromDouble(4 * 37 + 0, -0.0);
    std::vector<Tensor> args = {x};
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*built.module, "main", args));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(built.module)));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, 2));
    EXPECT_TRUE(std::isnan(actual[0].GetAsDouble(0)));
    EXPECT_TRUE(std::isnan(actual[0].GetAsDouble(37 + 5)));
    EXPECT_TRUE(Matches(actual[0], expected[0], kExpUlp));
  }
}

// The harness inputs with special values (NaN, +-inf, subnormals, huge) through every float
// pipeline: NaN placement and infinities must agree with the reference exactly.
TEST(RowPipelineSpecialValuesTest, MixedSpecialInputsMatchReference) {
  for (size_t k : {size_t{0}, size_t{2}, size_t{3}}) {
    const PipelineCase& c = Cases()[k];
    SCOPED_TRACE(c.name);
    const std::vector<int64_t> dims = {24, 33};
    ASSERT_OK_AND_ASSIGN(Built built, Build(c, ElementType::kF32, dims));
    std::vector<Tensor> args;
    for (size_t i = 0; i < built.params.size(); ++i) args.push_back(MakeInput(built.params[i], 2 * i + 1));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*built.module, "main", args));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(built.module)));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, 2));
    // Huge and subnormal inputs make sums cancel: compare NaN/inf placement and magnitudes
    // with a relative bound instead of ULPs.
    TensorComparison close = CompareClose(actual[0], expected[0], 1e-30, 1e-5);
    EXPECT_TRUE(close.ok) << close.message;
  }
}

TEST(RowPipelineDeterminismTest, OneAndTwoThreadsGiveIdenticalBits) {
  for (size_t k : {size_t{0}, size_t{2}}) {
    const PipelineCase& c = Cases()[k];
    const std::vector<int64_t> dims = {67, 1000};  // 9 rows per block: a partial last block
    ASSERT_OK_AND_ASSIGN(Built built, Build(c, ElementType::kF32, dims));
    std::vector<Tensor> args;
    for (size_t i = 0; i < built.params.size(); ++i) args.push_back(SmoothInput(built.params[i], i, 4.0));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(built.module)));
    ASSERT_EQ(program->compiled().items().size(), 1u);
    EXPECT_GT(program->compiled().items()[0].launch.block_count, 2);
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> one, program->Run(args, 1));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> two, program->Run(args, 2));
    EXPECT_EQ(0, std::memcmp(one[0].data(), two[0].data(), static_cast<size_t>(one[0].byte_size())))
        << c.name;
  }
}

// Outputs of 8 MiB or more keep the cached row on the stack and stream the output through a
// stage (jit/streaming_store.h): same bounds as the table, bitwise identical at 1 and 2 threads.
// 1031 columns: two whole runs of the stage and a partial one (f32), five and a part (f64).
TEST(RowPipelineStreamingTest, LargeOutputsMatchReferenceAndAreDeterministic) {
  struct Large {
    size_t pipeline;
    ElementType type;
    std::vector<int64_t> dims;
  };
  const Large cases[] = {{0, ElementType::kF32, {2051, 1031}},
                         {2, ElementType::kF32, {2051, 1031}},
                         {2, ElementType::kF64, {1027, 1031}}};
  for (const Large& large : cases) {
    const PipelineCase& c = Cases()[large.pipeline];
    SCOPED_TRACE(StrCat(c.name, " ", ElementTypeName(large.type)));
    ASSERT_OK_AND_ASSIGN(Built built, Build(c, large.type, large.dims));
    std::vector<Tensor> args;
    for (size_t i = 0; i < built.params.size(); ++i) {
      args.push_back(SmoothInput(built.params[i], 31 * i + 7, i == 0 ? 4.0 : 1.5));
    }
    ASSERT_GE(args[0].byte_size(), int64_t{8} << 20);
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*built.module, "main", args));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(built.module)));
    EXPECT_EQ(CountKind(*program, WorkKind::kRowPipeline), 1);
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> one, program->Run(args, 1));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> two, program->Run(args, 2));
    EXPECT_TRUE(MatchesUlpOrAbs(one[0], expected[0], c.ulp, c.f32_abs));
    EXPECT_EQ(0, std::memcmp(one[0].data(), two[0].data(), static_cast<size_t>(one[0].byte_size())));
  }
}

// x / max(row): the emitter multiplies by the row's reciprocal when 1/max is a normal number
// (within 2 ulp of the division) and divides when it is not: a row whose max is subnormal
// (1/max overflows) or above 2^126 (1/max is subnormal) matches the reference bit for bit, as
// does a row of zeros (0/0 = NaN).
TEST(RowPipelineReciprocalTest, DivideByRowValueMultipliesOnlyWhenTheReciprocalIsNormal) {
  const PipelineCase c = {"divide_by_row_max",
                          [](FunctionBuilder& f, std::vector<Value*> p, ElementType t,
                             const std::vector<int64_t>& dims) -> StatusOr<Value*> {
                            ACCY_ASSIGN_OR_RETURN(Value * max,
                                                  RowStat(f, p[0], t, dims, "max", -kInf));
                            ACCY_ASSIGN_OR_RETURN(Value * max_b, ToRow(f, max, t, dims));
                            return f.Divide(p[0], max_b);
                          },
                          0,
                          {ElementType::kF32},
                          2,
                          0,
                          {}};
  const int64_t columns = 37;
  const std::vector<int64_t> dims = {4, columns};
  ASSERT_OK_AND_ASSIGN(Built built, Build(c, ElementType::kF32, dims));
  Tensor x = SmoothInput(built.params[0], 3, 2.0);
  for (int64_t j = 0; j < columns; ++j) {
    x.SetFromDouble(1 * columns + j, 1e-39 * static_cast<double>(j + 1) / columns);  // subnormal
    x.SetFromDouble(2 * columns + j, 3e38 * static_cast<double>(j + 1) / columns);   // > 2^126
    x.SetFromDouble(3 * columns + j, 0.0);
  }
  std::vector<Tensor> args = {x};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*built.module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(built.module)));
  EXPECT_EQ(CountKind(*program, WorkKind::kRowPipeline), 1);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, 2));
  EXPECT_TRUE(Matches(actual[0], expected[0], 2));
  const float* got = static_cast<const float*>(actual[0].data());
  const float* want = static_cast<const float*>(expected[0].data());
  for (int64_t i = columns; i < 3 * columns; ++i) {
    EXPECT_EQ(0, std::memcmp(&got[i], &want[i], sizeof(float))) << "index " << i;
  }
  for (int64_t i = 3 * columns; i < 4 * columns; ++i) EXPECT_TRUE(std::isnan(got[i])) << i;
}

// x - max(row) and x - min(row) with rows whose length takes the fast max/min fold (whole
// 64-lane vectors: RowAccumulation::FastMaxMin) and rows that must fold again exactly: a row
// of mixed +0/-0 (max +0, min -0: the sign shows in x - stat), a row of -0 only, NaN first,
// last or in the tail chunk, all -inf, one +inf. The subtraction is exact, so every element is
// compared bit for bit with the reference (NaN by NaN-ness).
TEST(RowPipelineFastFoldTest, MaxAndMinOfInputRowsMatchReferenceBitForBit) {
  for (const char* reducer : {"max", "min"}) {
    for (ElementType type : {ElementType::kF32, ElementType::kF64}) {
      for (int64_t columns : {int64_t{128}, int64_t{1088}}) {
        SCOPED_TRACE(StrCat(reducer, " ", ElementTypeName(type), " columns ", columns));
        const bool is_max = std::string(reducer) == "max";
        const PipelineCase c = {
            "x_minus_row_stat",
            [&](FunctionBuilder& f, std::vector<Value*> p, ElementType t,
                const std::vector<int64_t>& dims) -> StatusOr<Value*> {
              ACCY_ASSIGN_OR_RETURN(Value * stat,
                                    RowStat(f, p[0], t, dims, reducer, is_max ? -kInf : kInf));
              ACCY_ASSIGN_OR_RETURN(Value * stat_b, ToRow(f, stat, t, dims));
              return f.Subtract(p[0], stat_b);
            },
            0,
            {type},
            2,
            0,
            {}};
        const int64_t rows = 9;
        const std::vector<int64_t> dims = {rows, columns};
        ASSERT_OK_AND_ASSIGN(Built built, Build(c, type, dims));
        Tensor x = SmoothInput(built.params[0], 11, 4.0);
        auto set_row = [&](int64_t row, double value) {
          for (int64_t j = 0; j < columns; ++j) x.SetFromDouble(row * columns + j, value);
        };
        for (int64_t j = 0; j < columns; ++j) x.SetFromDouble(1 * columns + j, j % 3 ? -0.0 : 0.0);
        set_row(2, -0.0);
        x.SetFromDouble(3 * columns + columns - 1, std::nan(""));
        x.SetFromDouble(4 * columns, std::nan(""));
        x.SetFromDouble(5 * columns + columns - 30, std::nan(""));  // in the tail chunk
        set_row(6, -kInf);
        x.SetFromDouble(7 * columns + 77, kInf);
        for (int64_t j = 0; j < columns; ++j) {  // negatives and one -0: the stat is -0 or -5
          x.SetFromDouble(8 * columns + j, j == 50 ? -0.0 : -1.0 - static_cast<double>(j % 5));
        }
        std::vector<Tensor> args = {x};
        ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*built.module, "main", args));
        ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(built.module)));
        EXPECT_EQ(CountKind(*program, WorkKind::kRowPipeline), 1);
        ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, 2));
        const size_t width = ElementByteWidth(type);
        const auto* got = static_cast<const uint8_t*>(actual[0].data());
        const auto* want = static_cast<const uint8_t*>(expected[0].data());
        int mismatches = 0;
        for (int64_t i = 0; i < rows * columns && mismatches < 5; ++i) {
          const double g = actual[0].GetAsDouble(i);
          const double w = expected[0].GetAsDouble(i);
          const bool same = std::isnan(w) ? std::isnan(g)
                                          : std::memcmp(got + i * width, want + i * width, width) == 0;
          if (!same) {
            ++mismatches;
            ADD_FAILURE() << "row " << i / columns << " column " << i % columns << ": got " << g
                          << " (signbit " << std::signbit(g) << "), want " << w << " (signbit "
                          << std::signbit(w) << ")";
          }
        }
        // The special rows really are special: +0/-0 decide the sign of x - stat.
        EXPECT_EQ(std::signbit(actual[0].GetAsDouble(1 * columns + 1)), is_max);
      }
    }
  }
}

// The last reduce pass prefetches the next row of each per-row input, one llvm.prefetch per
// 64-byte line, in map groups of four f32 vectors of the target (row_pipeline_emitter_impl.h,
// kCacheLineBytes and MapGroupColumns: 32 columns on AVX2, 64 on AVX-512): counted in the IR
// before O3, where each emitted chunk body holds one call per line of a group per prefetched
// input. Broadcast operands (layer norm's gamma and beta) and rows shorter than a group are not
// prefetched; results still match the reference.
TEST(RowPipelinePrefetchTest, LastReducePassPrefetchesTheNextRowOfPerRowInputs) {
  struct Expectation {
    size_t case_index;  // in Cases()
    ElementType type;
    std::vector<int64_t> dims;
    size_t groups;  // chunk bodies with a prefetching group loop, times prefetched inputs
  };
  const Expectation expectations[] = {
      {0, ElementType::kF32, {8, 1024}, 1},   // softmax: one whole-chunk body, x once
      {0, ElementType::kF32, {3, 1100}, 2},   // plus the 76-column tail chunk
      {2, ElementType::kBF16, {8, 1024}, 1},  // layer norm: x; gamma and beta are broadcasts
      {0, ElementType::kF32, {3, 7}, 0},      // shorter than a group
      {0, ElementType::kF32, {1, 1024}, 1},   // one row: prefetches itself (clamped)
  };
  ASSERT_OK_AND_ASSIGN(Isa isa, ProcessIsa());
  const int64_t group_columns = isa == Isa::kAvx512 ? 64 : isa == Isa::kAvx2 ? 32 : 16;
  for (const Expectation& e : expectations) {
    const int64_t bytes = e.type == ElementType::kBF16 ? 2 : 4;
    // Below AVX-512 softmax's sum pass is emitted twice, for rows whose x - max all lie in
    // exp's normal range and for the others (RowPipelineEmitter::VersionByExpRange).
    const size_t versions = e.case_index == 0 && isa != Isa::kAvx512 ? 2 : 1;
    // A group is also at least one line of the input.
    const size_t prefetches =
        versions * e.groups * static_cast<size_t>(std::max<int64_t>(1, group_columns * bytes / 64));
    const PipelineCase& c = Cases()[e.case_index];
    SCOPED_TRACE(StrCat(c.name, " ", ElementTypeName(e.type), " ",
                        TensorType::Create(e.type, e.dims)->ToString()));
    const auto dir = std::filesystem::temp_directory_path() /
                     StrCat("accy_row_prefetch_", ::testing::UnitTest::GetInstance()->random_seed(),
                            "_", e.dims.back(), "_", e.case_index, "_", ElementTypeName(e.type));
    std::filesystem::remove_all(dir);
    JitCompilerOptions options;
    options.dump_dir = dir.string();
    ASSERT_OK_AND_ASSIGN(Built built, Build(c, e.type, e.dims));
    std::vector<Tensor> args;
    for (size_t i = 0; i < built.params.size(); ++i) {
      args.push_back(SmoothInput(built.params[i], 5 * i + 3, i == 0 ? 4.0 : 1.5));
    }
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*built.module, "main", args));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(built.module), "main", options));
    EXPECT_EQ(CountKind(*program, WorkKind::kRowPipeline), 1);
    const std::vector<std::string> modules = DumpedModulesBeforeOptimization(dir);
    EXPECT_EQ(modules.size(), 1u);
    size_t calls = 0;
    for (const std::string& ir : modules) calls += CountOccurrences(ir, "call void @llvm.prefetch");
    EXPECT_EQ(calls, prefetches);
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, 2));
    const int64_t bound = e.type == ElementType::kBF16 ? std::max<int64_t>(c.ulp, kHalfUlp) : c.ulp;
    EXPECT_TRUE(Matches(actual[0], expected[0], bound));
    std::filesystem::remove_all(dir);
  }
}

// A reduce whose body is add(acc, acc) (not a reducer over both arguments) still plans as a
// row pipeline; the emitter refuses it by name instead of computing something else.
TEST(RowPipelineErrorTest, ReduceBodyThatIsNotAReducerIsUnimplemented) {
  Builder builder("bad_body");
  ASSERT_OK_AND_ASSIGN(TensorType x, builder.Type(ElementType::kF32, {4, 8}));
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("main", {x}, {x}));
  ASSERT_OK_AND_ASSIGN(Value * zero, f.ConstantScalar(ElementType::kF32, 0.0));
  ASSERT_OK_AND_ASSIGN(
      std::vector<Value*> sum,
      f.Reduce({f.Parameter(0)}, {zero}, {1},
               [](FunctionBuilder& body, std::span<Value* const> a) -> Status {
                 ACCY_ASSIGN_OR_RETURN(Value * twice, body.Add(a[0], a[0]));
                 return body.Return({twice});
               }));
  ASSERT_OK_AND_ASSIGN(Value * sum_b, ToRow(f, sum[0], ElementType::kF32, {4, 8}));
  ASSERT_OK_AND_ASSIGN(Value * out, f.Subtract(f.Parameter(0), sum_b));
  ASSERT_OK(f.Return({out}));
  ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
  auto program = JitProgram::Create(std::move(module));
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(std::string(program.status().message()).find("row_pipeline emitter"),
            std::string::npos)
      << program.status();
  EXPECT_NE(std::string(program.status().message()).find("reduce"), std::string::npos);
}

}  // namespace
}  // namespace accy::jit::testing
