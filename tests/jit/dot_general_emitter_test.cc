// The dot_general emitter (jit/dot_general_emitter.cc) against the reference evaluator: every
// dim mapping (batch dims leading and not, contracting dim first/last/several out of order,
// vector-matrix, matrix-vector, vector dot, outer product, empty contraction, odd sizes 1, 3, 7,
// 17, multi-block shapes) and element types. Tolerances: integers exact (both wrap modulo
// 2^bits); floats |jit - ref| <= K * 2^-21 * max|x| max|y| + eps(result type) * |ref| (f32
// accumulation of inputs in [-1, 1], the reference sums in double; f64 uses K * 2^-50). Plus a
// fused epilogue, bitwise equality at 1 and 2 threads, and block counts.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/jit/jit_test_util.h"
#include "src/util/str_cat.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

struct DotCase {
  std::string name;
  std::vector<int64_t> lhs, rhs;
  std::vector<int64_t> lc, rc, lb, rb;
};

// The result dims of `c` (batch, lhs free, rhs free) and its contraction size.
std::vector<int64_t> ResultDims(const DotCase& c, int64_t* k) {
  auto in = [](const std::vector<int64_t>& v, int64_t d) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  std::vector<int64_t> dims;
  for (int64_t d : c.lb) dims.push_back(c.lhs[static_cast<size_t>(d)]);
  for (size_t d = 0; d < c.lhs.size(); ++d) {
    if (!in(c.lb, static_cast<int64_t>(d)) && !in(c.lc, static_cast<int64_t>(d))) dims.push_back(c.lhs[d]);
  }
  for (size_t d = 0; d < c.rhs.size(); ++d) {
    if (!in(c.rb, static_cast<int64_t>(d)) && !in(c.rc, static_cast<int64_t>(d))) dims.push_back(c.rhs[d]);
  }
  *k = 1;
  for (int64_t d : c.lc) *k *= c.lhs[static_cast<size_t>(d)];
  return dims;
}

const std::vector<DotCase> kCases = {
    {"matmul 3x7x17", {3, 7}, {7, 17}, {1}, {0}, {}, {}},
    {"contracting dim first", {7, 3}, {7, 17}, {0}, {0}, {}, {}},
    {"rhs transposed", {3, 7}, {17, 7}, {1}, {1}, {}, {}},
    {"both transposed", {7, 3}, {17, 7}, {0}, {1}, {}, {}},
    {"leading batch", {2, 3, 7}, {2, 7, 5}, {2}, {1}, {0}, {0}},
    {"non-leading batch", {3, 2, 7}, {7, 2, 5}, {2}, {0}, {1}, {1}},
    {"two batch dims, batch last", {3, 7, 2, 4}, {7, 5, 2, 4}, {1}, {0}, {2, 3}, {2, 3}},
    {"vector-matrix", {7}, {7, 17}, {0}, {0}, {}, {}},
    {"matrix-vector", {17, 7}, {7}, {1}, {0}, {}, {}},
    {"vector dot", {17}, {17}, {0}, {0}, {}, {}},
    {"outer product", {3}, {7}, {}, {}, {}, {}},
    {"two contracting dims, crossed", {3, 4, 5}, {5, 4, 6}, {1, 2}, {1, 0}, {}, {}},
    {"unit dims", {1, 1}, {1, 1}, {1}, {0}, {}, {}},
    {"1x3 by 3x1", {1, 3}, {3, 1}, {1}, {0}, {}, {}},
    {"empty contraction", {3, 0}, {0, 4}, {1}, {0}, {}, {}},
    {"empty result", {0, 5}, {5, 4}, {1}, {0}, {}, {}},
    {"multi-block 67x129x600", {67, 129}, {129, 600}, {1}, {0}, {}, {}},
    {"multi-block transposed", {40, 300}, {33, 300}, {1}, {1}, {}, {}},
};

// Inputs in [-1, 1] for floats, small and full-range integers.
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
    case ElementType::kF64: return std::ldexp(1.0, -52);
    case ElementType::kF32: return std::ldexp(1.0, -23);
    case ElementType::kF16: return std::ldexp(1.0, -10);
    case ElementType::kBF16: return std::ldexp(1.0, -7);
    default: return 0;
  }
}

StatusOr<std::unique_ptr<Module>> DotProgram(const DotCase& c, ElementType in, ElementType out) {
  Builder builder("dot_test");
  ACCY_ASSIGN_OR_RETURN(TensorType lhs, builder.Type(in, c.lhs));
  ACCY_ASSIGN_OR_RETURN(TensorType rhs, builder.Type(in, c.rhs));
  int64_t k = 0;
  ACCY_ASSIGN_OR_RETURN(TensorType result, builder.Type(out, ResultDims(c, &k)));
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", {lhs, rhs}, {result}));
  ACCY_ASSIGN_OR_RETURN(Value * dot, f.DotGeneral(f.Parameter(0), f.Parameter(1), result, c.lc,
                                                  c.rc, c.lb, c.rb));
  ACCY_RETURN_IF_ERROR(f.Return({dot}));
  return builder.Finish();
}

// Runs `c` on the JIT and the reference; checks the bound of the file comment.
void CheckCase(const DotCase& c, ElementType in, ElementType out, int threads = 2) {
  SCOPED_TRACE(StrCat(c.name, " ", ElementTypeName(in), " -> ", ElementTypeName(out)));
  ASSERT_OK_AND_ASSIGN(auto module, DotProgram(c, in, out));
  const Function& main = *module->FindFunction("main");
  std::vector<Tensor> args = {RandomInput(main.parameter_types()[0], 1),
                              RandomInput(main.parameter_types()[1], 2)};
  ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  ASSERT_EQ(program->compiled().items().size(), 1u);
  EXPECT_EQ(program->compiled().items()[0].kind, WorkKind::kDotGeneral);
  ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args, threads));
  int64_t k = 0;
  ResultDims(c, &k);
  const double accumulate = out == ElementType::kF64 ? std::ldexp(1.0, -50) : std::ldexp(1.0, -21);
  const double atol = IsFloat(out) ? static_cast<double>(k) * accumulate : 0;
  TensorComparison cmp = CompareClose(actual[0], expected[0], atol, Epsilon(out));
  EXPECT_TRUE(cmp.ok) << cmp.message << " (first bad index " << cmp.first_bad_index << ")";
}

TEST(DotGeneralEmitterTest, EveryDimMappingMatchesReferenceF32) {
  for (const DotCase& c : kCases) CheckCase(c, ElementType::kF32, ElementType::kF32);
}

TEST(DotGeneralEmitterTest, EveryElementTypeMatchesReference) {
  const std::vector<std::pair<ElementType, ElementType>> types = {
      {ElementType::kF64, ElementType::kF64},  {ElementType::kF16, ElementType::kF16},
      {ElementType::kBF16, ElementType::kBF16}, {ElementType::kBF16, ElementType::kF32},
      {ElementType::kF16, ElementType::kF32},  {ElementType::kI32, ElementType::kI32},
      {ElementType::kI8, ElementType::kI8},    {ElementType::kI8, ElementType::kI32},
      {ElementType::kU8, ElementType::kU32},   {ElementType::kI64, ElementType::kI64},
      {ElementType::kU32, ElementType::kU32},  {ElementType::kI16, ElementType::kI16},
  };
  for (const auto& [in, out] : types) {
    for (const DotCase& c : kCases) CheckCase(c, in, out);
  }
}

// dot + bias (elided broadcast over rows) + tanh + maximum with 0, fused in the dot's kernel.
TEST(DotGeneralEmitterTest, FusedEpilogueMatchesReference) {
  for (ElementType type : {ElementType::kF32, ElementType::kBF16, ElementType::kI32}) {
    SCOPED_TRACE(std::string(ElementTypeName(type)));
    Builder builder("dot_epilogue_test");
    TensorType lhs = builder.Type(type, {5, 9}).value();
    TensorType rhs = builder.Type(type, {9, 13}).value();
    TensorType bias = builder.Type(type, {13}).value();
    TensorType out = builder.Type(type, {5, 13}).value();
    auto f = builder.BeginFunction("main", {lhs, rhs, bias}, {out}).value();
    Value* dot = f.DotGeneral(f.Parameter(0), f.Parameter(1), out, {1}, {0}, {}, {}).value();
    Value* b = f.BroadcastInDim(f.Parameter(2), out, {1}).value();
    Value* x = f.Add(dot, b).value();
    if (IsFloat(type)) x = f.Tanh(x).value();
    x = f.Maximum(x, f.BroadcastInDim(f.ConstantScalar(type, 0).value(), out, {}).value()).value();
    ASSERT_OK(f.Return({x}));
    auto module = builder.Finish().value();
    std::vector<Tensor> args = {RandomInput(lhs, 3), RandomInput(rhs, 4), RandomInput(bias, 5)};
    ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
    ASSERT_EQ(program->compiled().items().size(), 1u) << program->plan().ToText();
    EXPECT_EQ(program->compiled().items()[0].kind, WorkKind::kDotGeneral);
    EXPECT_EQ(program->compiled().items()[0].inputs.size(), 3u);  // the constant 0 is folded
    ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args, 2));
    const double atol = IsFloat(type) ? 9 * std::ldexp(1.0, -21) + Epsilon(type) : 0;
    TensorComparison cmp = CompareClose(actual[0], expected[0], atol, 2 * Epsilon(type));
    EXPECT_TRUE(cmp.ok) << cmp.message;
  }
}

TEST(DotGeneralEmitterTest, BitsAreEqualAtOneAndTwoThreads) {
  const std::vector<DotCase> cases = {
      {"axpy", {2, 70, 200}, {2, 200, 700}, {2}, {1}, {0}, {0}},
      {"transposed", {90, 256}, {130, 256}, {1}, {1}, {}, {}},
  };
  for (const DotCase& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_OK_AND_ASSIGN(auto module, DotProgram(c, ElementType::kF32, ElementType::kF32));
    const Function& main = *module->FindFunction("main");
    std::vector<Tensor> args = {RandomInput(main.parameter_types()[0], 7),
                                RandomInput(main.parameter_types()[1], 8)};
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
    EXPECT_GT(program->compiled().items()[0].launch.block_count, 2);
    ASSERT_OK_AND_ASSIGN(auto one, program->Run(args, 1));
    ASSERT_OK_AND_ASSIGN(auto two, program->Run(args, 2));
    EXPECT_EQ(0, std::memcmp(one[0].data(), two[0].data(), static_cast<size_t>(one[0].byte_size())));
  }
}

// Blocks are rows x up to 512 columns, rows a multiple of 4 sized from K and the chunk only.
TEST(DotGeneralEmitterTest, BlocksDependOnShapesOnly) {
  ASSERT_OK_AND_ASSIGN(auto module,
                       DotProgram({"", {67, 129}, {129, 600}, {1}, {0}, {}, {}},
                                  ElementType::kF32, ElementType::kF32));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  const CompiledItem& item = program->compiled().items()[0];
  // 2^17 / (512 * 129) = 1 row -> 4; 67 rows -> 17 row tiles; 600 columns -> 2 chunks.
  EXPECT_EQ(item.launch.block_count, 34);
  EXPECT_EQ(item.block_size, 4 * 512);
  EXPECT_EQ(item.scratch_bytes, 0);
}

}  // namespace
}  // namespace accy::jit::testing
