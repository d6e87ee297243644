// The reduction emitter against the reference evaluator: every named reducer (add, multiply,
// maximum, minimum, and, or, xor) x every element type it is defined for x a table of shapes and
// reduced dims (none, all, non-contiguous, zero-size, row and column layouts, segmented two-phase
// kernels); general bodies (argmax over two operands, non-associative bodies, constants in the
// body); reduction_input fusion; the sum of 2^25 ones; NaN propagation; determinism at 1, 2
// and 3 threads; error paths.
//
// Bounds: integer, bitwise, maximum/minimum and general-body results are exact (bit-identical).
// Float sums: the JIT adds at most 64 terms per lane sequentially, then combines partials by fixed
// pairwise trees (cascade, lanes, segments: < 64 more levels), while the reference rounds a
// compensated double sum once, so |jit - ref| <= ulp(ref) + 128 * u * sum|x|, u = 2^-24 for
// f16/bf16/f32 (f32 accumulators) and 2^-53 for f64. Float products: the reference rounds every
// step in the element type, the JIT accumulates in f32/f64, so |jit - ref| <= 2 (n + 8) u_e |ref|
// with u_e the element type's unit roundoff and n the reduced extent.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/jit/jit_numeric_util.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

struct ReduceShape {
  std::vector<int64_t> dims;
  std::vector<int64_t> reduced;
};

// The reducer x type matrix runs kCoreShapes: zero-size, one row, no reduced dim,
// non-contiguous reduced dims (OUT mode), a row reduction with a vector tail (ROW mode), a
// column reduction. kShapes (a few types) adds the rest.
const std::vector<ReduceShape> kCoreShapes = {
    {{0}, {0}}, {{1023}, {0}}, {{3, 5, 7}, {}}, {{3, 5, 7}, {0, 2}}, {{17, 300}, {1}},
    {{300, 17}, {0}},
};
const std::vector<ReduceShape> kShapes = {
    {{0}, {0}},          {{7}, {0}},           {{1023}, {0}},       {{3, 5, 7}, {}},
    {{3, 5, 7}, {1}},    {{3, 5, 7}, {0, 2}},  {{3, 5, 7}, {0, 1, 2}}, {{2, 0, 3}, {1}},
    {{2, 0, 3}, {0}},    {{17, 300}, {1}},     {{300, 17}, {0}},    {{5, 4, 66}, {2, 0}},
};
// Long reductions: segmented two-phase kernels (rows, columns, a full reduction) and many rows.
const std::vector<ReduceShape> kLongShapes = {
    {{2, 140000}, {1}}, {{140000, 3}, {0}}, {{300001}, {0}}, {{64, 3001}, {1}}, {{3001, 64}, {0}},
};

std::vector<int64_t> ResultDims(const ReduceShape& s) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < s.dims.size(); ++d) {
    if (std::find(s.reduced.begin(), s.reduced.end(), static_cast<int64_t>(d)) == s.reduced.end()) {
      out.push_back(s.dims[d]);
    }
  }
  return out;
}

// Output index of every input element (row-major), for the host-side sum|x| bounds.
std::vector<int64_t> OutputIndexOfInput(const ReduceShape& s) {
  const size_t rank = s.dims.size();
  std::vector<int64_t> out_stride(rank, 0);
  for (int64_t d = static_cast<int64_t>(rank) - 1, stride = 1; d >= 0; --d) {
    if (std::find(s.reduced.begin(), s.reduced.end(), d) != s.reduced.end()) continue;
    out_stride[static_cast<size_t>(d)] = stride;
    stride *= s.dims[static_cast<size_t>(d)];
  }
  int64_t count = 1;
  for (int64_t d : s.dims) count *= d;
  std::vector<int64_t> map(static_cast<size_t>(count));
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < rank; ++d) o += index[d] * out_stride[d];
    map[static_cast<size_t>(i)] = o;
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < s.dims[d]) break;
      index[d] = 0;
    }
  }
  return map;
}

double UnitRoundoff(ElementType type) {
  switch (type) {
    case ElementType::kF16: return 0x1p-11;
    case ElementType::kBF16: return 0x1p-8;
    case ElementType::kF64: return 0x1p-53;
    default: return 0x1p-24;
  }
}

double Ulp(ElementType type, double v) {
  const double tiny = type == ElementType::kF16 ? 0x1p-24 : type == ElementType::kBF16 ? 0x1p-133
                      : type == ElementType::kF64 ? 0x1p-1074 : 0x1p-149;
  return std::max(std::fabs(v) * 2 * UnitRoundoff(type), tiny);
}

// Float sums and products within the file comment's bounds; the first bad index reported.
::testing::AssertionResult FloatClose(const Tensor& actual, const Tensor& expected,
                                      const Tensor& input, const ReduceShape& shape,
                                      OpKind kind) {
  const ElementType type = expected.element_type();
  const int64_t outputs = expected.element_count();
  std::vector<double> abs_sum(static_cast<size_t>(outputs), 0.0);
  const std::vector<int64_t> map = OutputIndexOfInput(shape);
  for (size_t i = 0; i < map.size(); ++i) {
    abs_sum[static_cast<size_t>(map[i])] += std::fabs(input.GetAsDouble(static_cast<int64_t>(i)));
  }
  const int64_t n = outputs == 0 ? 0 : static_cast<int64_t>(map.size()) / outputs;
  const double u_acc = type == ElementType::kF64 ? 0x1p-53 : 0x1p-24;
  for (int64_t o = 0; o < outputs; ++o) {
    const double a = actual.GetAsDouble(o);
    const double e = expected.GetAsDouble(o);
    bool ok;
    if (std::isnan(e) || std::isinf(e) || !std::isfinite(a)) {
      ok = (std::isnan(a) && std::isnan(e)) || a == e;
    } else {
      const double bound = kind == OpKind::kAdd
          ? Ulp(type, e) + 128 * u_acc * abs_sum[static_cast<size_t>(o)]
          : 2.0 * static_cast<double>(n + 8) * UnitRoundoff(type) * std::fabs(e) + Ulp(type, e);
      ok = std::fabs(a - e) <= bound;
    }
    if (!ok) {
      return ::testing::AssertionFailure() << "first bad index " << o << ": jit " << a
                                           << ", reference " << e << " (sum|x| "
                                           << abs_sum[static_cast<size_t>(o)] << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// Inputs near +-1 for products (no overflow over a few thousand factors).
Tensor ProductInput(const TensorType& type, uint64_t seed) {
  Tensor t = Tensor::Allocate(type).value();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0 / 64, 1.0 / 64);
  for (int64_t i = 0; i < t.element_count(); ++i) {
    t.SetFromDouble(i, (rng() % 2 ? 1.0 : -1.0) * (1.0 + unit(rng)));
  }
  return t;
}

Status BinaryBody(FunctionBuilder& body, std::span<Value* const> args, OpKind kind) {
  ACCY_ASSIGN_OR_RETURN(Operation * op, body.CreateOp(kind, {args[0], args[1]}, {args[0]->type()}));
  return body.Return({op->result(0)});
}

struct Program {
  std::unique_ptr<JitProgram> jit;
  std::vector<Tensor> args;
  std::vector<Tensor> expected;
};

// main(x_s..., init) -> reduce(x_s, init) per shape with a one-op body `kind`; odd shapes use a
// constant init (folded), even ones the parameter (a buffer). The init is not the identity, so
// applying it twice (or never) shows.
void CheckNamedReducer(OpKind kind, ElementType type, const std::vector<ReduceShape>& shapes) {
  SCOPED_TRACE(std::string(OpName(kind)) + " on " + std::string(ElementTypeName(type)));
  Builder builder("reduce_test");
  std::vector<TensorType> params, results;
  for (const auto& s : shapes) {
    params.push_back(builder.Type(type, s.dims).value());
    results.push_back(builder.Type(type, ResultDims(s)).value());
  }
  const TensorType scalar = builder.Type(type, {}).value();
  params.push_back(scalar);
  const double init = kind == OpKind::kMaximum ? -0.75 : kind == OpKind::kMinimum ? 0.75 : 3.0;
  auto f = builder.BeginFunction("main", params, results).value();
  ASSERT_OK_AND_ASSIGN(Value * constant_init, f.ConstantScalar(type, init));
  std::vector<Value*> outs;
  for (size_t s = 0; s < shapes.size(); ++s) {
    Value* init_value = s % 2 ? constant_init : f.Parameter(static_cast<int64_t>(shapes.size()));
    ASSERT_OK_AND_ASSIGN(std::vector<Value*> r,
                         f.Reduce({f.Parameter(static_cast<int64_t>(s))}, {init_value},
                                  shapes[s].reduced,
                                  [kind](FunctionBuilder& body, std::span<Value* const> args) {
                                    return BinaryBody(body, args, kind);
                                  }));
    outs.push_back(r[0]);
  }
  ASSERT_OK(f.Return(outs));
  ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
  std::vector<Tensor> args;
  for (size_t p = 0; p + 1 < params.size(); ++p) {
    const bool product = kind == OpKind::kMultiply && IsFloat(type);
    // Sums avoid the special values (inf - inf); max/min see NaN, +-0 and infinities.
    args.push_back(product ? ProductInput(params[p], p)
                           : MakeInput(params[p], kind == OpKind::kAdd ? 3 * p + 2 : p));
  }
  Tensor init_tensor = Tensor::Allocate(scalar).value();
  init_tensor.SetFromDouble(0, init);
  args.push_back(init_tensor);
  ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args, 2));
  for (size_t s = 0; s < shapes.size(); ++s) {
    const bool inexact = IsFloat(type) && (kind == OpKind::kAdd || kind == OpKind::kMultiply);
    EXPECT_TRUE(inexact ? FloatClose(actual[s], expected[s], args[s], shapes[s], kind)
                        : Matches(actual[s], expected[s], 0))
        << "shape " << params[s].ToString() << " reduced over " << shapes[s].reduced.size()
        << " dims";
  }
}

struct ReducerCase {
  OpKind kind;
  bool floats;
};
const ReducerCase kReducers[] = {{OpKind::kAdd, true},     {OpKind::kMultiply, true},
                                 {OpKind::kMaximum, true}, {OpKind::kMinimum, true},
                                 {OpKind::kAnd, false},    {OpKind::kOr, false},
                                 {OpKind::kXor, false}};

class NamedReducerTest : public ::testing::TestWithParam<ReducerCase> {};

TEST_P(NamedReducerTest, MatchesReferenceForEveryElementType) {
  for (ElementType type : kAllElementTypes) {
    if (IsFloat(type) && !GetParam().floats) continue;
    CheckNamedReducer(GetParam().kind, type, kCoreShapes);
  }
}

INSTANTIATE_TEST_SUITE_P(AllReducers, NamedReducerTest, ::testing::ValuesIn(kReducers),
                         [](const auto& info) { return std::string(OpName(info.param.kind)); });

TEST(ReductionShapeTest, EveryReducedDimSetMatchesReference) {
  CheckNamedReducer(OpKind::kAdd, ElementType::kF32, kShapes);
  CheckNamedReducer(OpKind::kAdd, ElementType::kF16, kShapes);
  CheckNamedReducer(OpKind::kMaximum, ElementType::kBF16, kShapes);
  CheckNamedReducer(OpKind::kMultiply, ElementType::kF64, kShapes);
  CheckNamedReducer(OpKind::kAdd, ElementType::kI64, kShapes);
  CheckNamedReducer(OpKind::kXor, ElementType::kU16, kShapes);
  CheckNamedReducer(OpKind::kAnd, ElementType::kI1, kShapes);
}

TEST(ReductionLongTest, SegmentedAndLongReductionsMatchReference) {
  CheckNamedReducer(OpKind::kAdd, ElementType::kF32, kLongShapes);
  CheckNamedReducer(OpKind::kAdd, ElementType::kBF16, kLongShapes);
  CheckNamedReducer(OpKind::kMaximum, ElementType::kF32, kLongShapes);
  CheckNamedReducer(OpKind::kAdd, ElementType::kI32, kLongShapes);
}

std::unique_ptr<Module> SumProgram(ElementType type, const std::vector<int64_t>& dims,
                                   const std::vector<int64_t>& reduced) {
  Builder builder("sum");
  TensorType x = builder.Type(type, dims).value();
  TensorType r = builder.Type(type, ResultDims({dims, reduced})).value();
  auto f = builder.BeginFunction("main", {x}, {r}).value();
  Value* zero = f.ConstantScalar(type, 0).value();
  Value* sum = f.Reduce(f.Parameter(0), zero, r, "sum", reduced).value();
  (void)f.Return({sum});
  return builder.Finish().value();
}

TEST(ReductionSumTest, SumOf2To25OnesInF32IsExact) {
  const int64_t n = int64_t{1} << 25;
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(SumProgram(ElementType::kF32, {n}, {0})));
  const CompiledItem& item = program->compiled().items()[0];
  EXPECT_GT(item.scratch_bytes, 0);  // segmented: a two-phase kernel
  EXPECT_EQ(item.launch.finish_block_count, 1);
  ASSERT_OK_AND_ASSIGN(Tensor ones, Tensor::Filled(TensorType::Create(ElementType::kF32, {n}).value(), 1.0));
  for (int threads : {1, 2}) {
    ASSERT_OK_AND_ASSIGN(auto result, program->Run(std::vector<Tensor>{ones}, threads));
    EXPECT_EQ(result[0].GetAsDouble(0), 33554432.0) << threads << " threads";
  }
}

TEST(ReductionNaNTest, MaxMinPropagateNaNAndOrderSignedZeros) {
  for (ElementType type : {ElementType::kF32, ElementType::kF16, ElementType::kF64}) {
    for (const char* reducer : {"max", "min"}) {
      Builder builder("nan");
      TensorType x = builder.Type(type, {4, 100}).value();
      TensorType r = builder.Type(type, {4}).value();
      auto f = builder.BeginFunction("main", {x}, {r}).value();
      Value* init = f.ConstantScalar(type, std::string(reducer) == "max" ? -INFINITY : INFINITY).value();
      ASSERT_OK(f.Return({f.Reduce(f.Parameter(0), init, r, reducer, {1}).value()}));
      ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
      Tensor in = Tensor::Filled(x, 0.0).value();
      in.SetFromDouble(37, std::nan(""));           // row 0: one NaN among zeros
      in.SetFromDouble(199, std::nan(""));          // row 1: NaN last
      for (int64_t i = 200; i < 300; ++i) in.SetFromDouble(i, -0.0);  // row 2: -0 and +0
      in.SetFromDouble(250, 0.0);
      for (int64_t i = 300; i < 400; ++i) in.SetFromDouble(i, -0.0);  // row 3: all -0
      const std::vector<Tensor> args = {in};
      ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
      ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
      ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args, 2));
      EXPECT_TRUE(std::isnan(actual[0].GetAsDouble(0)));
      EXPECT_TRUE(std::isnan(actual[0].GetAsDouble(1)));
      EXPECT_TRUE(Matches(actual[0], expected[0], 0)) << reducer << " " << ElementTypeName(type);
      EXPECT_EQ(std::signbit(actual[0].GetAsDouble(2)), std::string(reducer) == "min");
    }
  }
}

// argmax over (value, index) pairs: the larger value wins; on equal values the smaller index
// (so the first occurrence, as the sequential reference gives); NaN wins over everything.
Status ArgmaxBody(FunctionBuilder& body, std::span<Value* const> a) {
  ACCY_ASSIGN_OR_RETURN(Value * greater, body.Compare(a[2], a[0], "GT"));
  ACCY_ASSIGN_OR_RETURN(Value * equal, body.Compare(a[2], a[0], "EQ"));
  ACCY_ASSIGN_OR_RETURN(Value * is_nan, body.Compare(a[2], a[2], "NE"));
  ACCY_ASSIGN_OR_RETURN(Value * smaller_index, body.Compare(a[3], a[1], "LT"));
  ACCY_ASSIGN_OR_RETURN(Value * tie, body.And(equal, smaller_index));
  ACCY_ASSIGN_OR_RETURN(Value * take, body.Or(body.Or(greater, tie).value(), is_nan));
  ACCY_ASSIGN_OR_RETURN(Value * value, body.Select(take, a[2], a[0]));
  ACCY_ASSIGN_OR_RETURN(Value * index, body.Select(take, a[3], a[1]));
  return body.Return({value, index});
}

TEST(ReductionGeneralBodyTest, ArgmaxTiesAndNaNMatchTheSequentialReference) {
  const std::vector<ReduceShape> shapes = {{{6, 50}, {1}}, {{50, 6}, {0}}, {{4, 5, 6}, {0, 2}},
                                           {{300}, {0}},   {{2, 0}, {1}}};
  Builder builder("argmax");
  std::vector<TensorType> params, results;
  for (const auto& s : shapes) {
    params.push_back(builder.Type(ElementType::kF32, s.dims).value());
    params.push_back(builder.Type(ElementType::kI32, s.dims).value());
    results.push_back(builder.Type(ElementType::kF32, ResultDims(s)).value());
    results.push_back(builder.Type(ElementType::kI32, ResultDims(s)).value());
  }
  auto f = builder.BeginFunction("main", params, results).value();
  Value* lowest = f.ConstantScalar(ElementType::kF32, -INFINITY).value();
  Value* no_index = f.ConstantScalar(ElementType::kI32, -1).value();
  std::vector<Value*> outs;
  for (size_t s = 0; s < shapes.size(); ++s) {
    ASSERT_OK_AND_ASSIGN(auto r, f.Reduce({f.Parameter(static_cast<int64_t>(2 * s)),
                                           f.Parameter(static_cast<int64_t>(2 * s + 1))},
                                          {lowest, no_index}, shapes[s].reduced, ArgmaxBody));
    outs.insert(outs.end(), r.begin(), r.end());
  }
  ASSERT_OK(f.Return(outs));
  ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
  std::vector<Tensor> args;
  std::mt19937_64 rng(7);
  for (size_t p = 0; p < params.size(); p += 2) {
    Tensor v = Tensor::Allocate(params[p]).value();
    Tensor idx = Tensor::Allocate(params[p + 1]).value();
    for (int64_t i = 0; i < v.element_count(); ++i) {
      v.SetFromDouble(i, static_cast<double>(rng() % 5));  // many ties
      idx.SetFromDouble(i, static_cast<double>(rng() % 1000));
    }
    if (v.element_count() > 40) v.SetFromDouble(40, std::nan(""));
    args.push_back(v);
    args.push_back(idx);
  }
  ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args, 2));
  for (size_t i = 0; i < outs.size(); ++i) {
    EXPECT_TRUE(Matches(actual[i], expected[i], 0)) << "result " << i;
  }
}

// acc * 0.5 + x is not associative: the JIT must walk each output's inputs in row-major order.
// The f16 body also holds a constant and rounds after every op, as the reference does.
TEST(ReductionGeneralBodyTest, NonAssociativeBodyWithConstantIsBitExact) {
  for (ElementType type : {ElementType::kF32, ElementType::kF16, ElementType::kI16}) {
    const std::vector<ReduceShape> shapes = {{{7, 33}, {1}}, {{33, 7}, {0}}, {{3, 4, 5}, {0, 2}},
                                             {{500}, {0}}};
    Builder builder("decay");
    std::vector<TensorType> params, results;
    for (const auto& s : shapes) {
      params.push_back(builder.Type(type, s.dims).value());
      results.push_back(builder.Type(type, ResultDims(s)).value());
    }
    auto f = builder.BeginFunction("main", params, results).value();
    Value* init = f.ConstantScalar(type, 1).value();
    std::vector<Value*> outs;
    for (size_t s = 0; s < shapes.size(); ++s) {
      ASSERT_OK_AND_ASSIGN(
          auto r, f.Reduce({f.Parameter(static_cast<int64_t>(s))}, {init}, shapes[s].reduced,
                           [type](FunctionBuilder& body, std::span<Value* const> a) -> Status {
                             ACCY_ASSIGN_OR_RETURN(Value * k, body.ConstantScalar(type, 3));
                             ACCY_ASSIGN_OR_RETURN(Value * scaled, body.Divide(a[0], k));
                             ACCY_ASSIGN_OR_RETURN(Value * sum, body.Add(scaled, a[1]));
                             return body.Return({sum});
                           }));
      outs.push_back(r[0]);
    }
    ASSERT_OK(f.Return(outs));
    ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
    std::vector<Tensor> args;
    for (size_t p = 0; p < params.size(); ++p) args.push_back(MakeInput(params[p], p + 1));
    ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
    ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args, 2));
    for (size_t s = 0; s < shapes.size(); ++s) {
      EXPECT_TRUE(Matches(actual[s], expected[s], 0)) << ElementTypeName(type) << " shape " << s;
    }
  }
}

// reduction_input clusters: sum(exp(x)) over rows, max(abs(x - broadcast(row))) over columns
// (an elided broadcast read through index arithmetic), sum(x * y) to a scalar.
TEST(ReductionFusionTest, ElementwiseProducersRunInsideTheReductionLoop) {
  Builder builder("fused");
  TensorType x = builder.Type(ElementType::kF32, {40, 300}).value();
  TensorType row = builder.Type(ElementType::kF32, {300}).value();
  TensorType rows = builder.Type(ElementType::kF32, {40}).value();
  TensorType scalar = builder.Type(ElementType::kF32, {}).value();
  auto f = builder.BeginFunction("main", {x, x, row}, {rows, row, scalar}).value();
  Value* zero = f.ConstantScalar(ElementType::kF32, 0).value();
  Value* lowest = f.ConstantScalar(ElementType::kF32, -INFINITY).value();
  Value* e = f.Exponential(f.Parameter(0)).value();
  Value* sum_exp = f.Reduce(e, zero, rows, "sum", {1}).value();
  Value* b = f.BroadcastInDim(f.Parameter(2), x, {1}).value();
  Value* diff = f.Abs(f.Subtract(f.Parameter(1), b).value()).value();
  Value* max_diff = f.Reduce(diff, lowest, row, "max", {0}).value();
  Value* product = f.Multiply(f.Parameter(0), f.Parameter(1)).value();
  Value* dot = f.Reduce(product, zero, scalar, "sum", {0, 1}).value();
  ASSERT_OK(f.Return({sum_exp, max_diff, dot}));
  ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
  std::vector<Tensor> args = {MakeInput(x, 2), MakeInput(x, 5), MakeInput(row, 8)};
  ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  ASSERT_EQ(program->plan().work_item_count(), 3);  // one fused reduction each, no broadcast
  for (const WorkItem& item : program->plan().items()) {
    EXPECT_EQ(item.kind, WorkKind::kReduction);
    EXPECT_GE(item.op_count(), 2);
  }
  ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args, 2));
  // exp within 4 ulp (libmvec for f64, the inline polynomial of jit/vector_math.h for f32)
  // of the reference's: sum|exp| bounds the error the same way.
  TensorComparison c = CompareClose(actual[0], expected[0], 0, 1e-5);
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_TRUE(Matches(actual[1], expected[1], 0));
  Tensor products = Tensor::Allocate(x).value();
  for (int64_t i = 0; i < products.element_count(); ++i) {
    products.SetFromDouble(i, args[0].GetAsDouble(i) * args[1].GetAsDouble(i));
  }
  EXPECT_TRUE(FloatClose(actual[2], expected[2], products, {{40, 300}, {0, 1}}, OpKind::kAdd));
}

TEST(ReductionDeterminismTest, BitsAreEqualAtOneTwoAndThreeThreads) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{1 << 20}, {0}}, {{512, 1000}, {1}}, {{100000, 5}, {0}}, {{300, 700}, {0}}};
  for (const auto& [dims, reduced] : cases) {
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(SumProgram(ElementType::kF32, dims, reduced)));
    std::vector<Tensor> args = {MakeInput(TensorType::Create(ElementType::kF32, dims).value(), 11)};
    ASSERT_OK_AND_ASSIGN(auto one, program->Run(args, 1));
    for (int threads : {2, 3}) {
      ASSERT_OK_AND_ASSIGN(auto many, program->Run(args, threads));
      EXPECT_EQ(0, std::memcmp(one[0].data(), many[0].data(), static_cast<size_t>(one[0].byte_size())))
          << threads << " threads, dims[0] " << dims[0];
    }
  }
}

TEST(ReductionLayoutTest, BlocksAndScratchFollowTheLayout) {
  // Row sums of [4096, 1024]: 32 rows (32K elements) per block, no scratch.
  ASSERT_OK_AND_ASSIGN(auto rows, JitProgram::Create(SumProgram(ElementType::kF32, {4096, 1024}, {1})));
  const CompiledItem& row_item = rows->compiled().items()[0];
  EXPECT_EQ(row_item.launch.block_count, 128);
  EXPECT_EQ(row_item.scratch_bytes, 0);
  EXPECT_EQ(row_item.launch.finish_block_count, 0);
  // A full sum of 2^20 f32: 16 segments of 64K elements + 1 finish block, 16 f32 partials.
  ASSERT_OK_AND_ASSIGN(auto full, JitProgram::Create(SumProgram(ElementType::kF32, {1 << 20}, {0})));
  const CompiledItem& full_item = full->compiled().items()[0];
  EXPECT_EQ(full_item.launch.block_count, 17);
  EXPECT_EQ(full_item.launch.finish_block_count, 1);
  EXPECT_EQ(full_item.scratch_bytes, 16 * 4);
  EXPECT_EQ(full_item.buffer_bytes.back(), 16 * 4);
}

// An empty result of reductions long enough to be segmented (0 x 131072 summed over the long
// dim; an i8 product over 257 x 4 x 1023 of an empty batch) has no units: no blocks and no
// scratch, where the segmented layout once asked for neither and the emitter stored through a
// missing scratch buffer (a crash the differential fuzzer found).
TEST(ReductionLayoutTest, EmptyResultsOfLongReductionsHaveNoBlocks) {
  for (const auto& [type, dims, reduced] :
       std::vector<std::tuple<ElementType, std::vector<int64_t>, std::vector<int64_t>>>{
           {ElementType::kF32, {0, 131072}, {1}}, {ElementType::kI8, {0, 257, 4, 1023}, {1, 2}}}) {
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(SumProgram(type, dims, reduced)));
    const CompiledItem& item = program->compiled().items()[0];
    EXPECT_EQ(item.launch.block_count, 0);
    EXPECT_EQ(item.scratch_bytes, 0);
    const TensorType x = TensorType::Create(type, dims).value();
    const std::vector<Tensor> args = {Tensor::Allocate(x).value()};
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, program->Run(args, 2));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].type().element_count(), 0);
  }
}

TEST(ReductionErrorTest, BodyOpThatCannotBeLoweredIsNamed) {
  Builder builder("bad_body");
  TensorType x = builder.Type(ElementType::kF32, {8}).value();
  TensorType s = builder.Type(ElementType::kF32, {}).value();
  auto f = builder.BeginFunction("main", {x}, {s}).value();
  Value* zero = f.ConstantScalar(ElementType::kF32, 0).value();
  ASSERT_OK_AND_ASSIGN(
      auto r, f.Reduce({f.Parameter(0)}, {zero}, {0},
                       [&](FunctionBuilder& body, std::span<Value* const> a) -> Status {
                         ACCY_ASSIGN_OR_RETURN(Value * sum, body.Add(a[0], a[1]));
                         ACCY_ASSIGN_OR_RETURN(Value * same, body.Reshape(sum, s));
                         return body.Return({same});
                       }));
  ASSERT_OK(f.Return(r));
  ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
  auto program = JitProgram::Create(std::move(module));
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(program.status().message().find("reduce body op reshape"), std::string::npos)
      << program.status();
}

}  // namespace
}  // namespace accy::jit::testing
