// The table-driven numeric harness of the elementwise emitter: every elementwise op x every
// element type the spec allows x sizes {0, 1, 7, 17, 1023, 4096} and rank-3 shapes, run through
// the JIT and through the reference evaluator (accy::Evaluate), compared exactly -- or, for
// transcendental ops, within the ULP bound stated in the table -- with the first bad index
// reported. Adding an op = one table entry.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/jit/jit_numeric_util.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

enum : unsigned { F = 1, S = 2, U = 4, B = 8, kAll = F | S | U | B };

// One op of the table: element type classes it is defined for (StableHLO spec), and the ULP
// bound of the JIT against the reference for f32/f64 and for f16/bf16 (0 = bit-exact).
// Transcendentals: the JIT's vector loop calls glibc libmvec (AVX-512 `_ZGVeN16v_*` etc.), the
// reference calls glibc's scalar libm; the bound covers both errors (libmvec <= 4 ulp from the
// true result per glibc's libm-test-ulps, scalar libm <= 2). f32 exp, tanh and logistic are the
// JIT's inline polynomials (jit/vector_math.h) instead, held to their own bound (f32_ulp): the
// largest distance from glibc measured over all 2^32 f32 inputs (exp 1, tanh 4, logistic 4).
// f16/bf16 compute in f32 and round once, so they differ by at most one rounding step of the
// narrow type.
struct OpCase {
  OpKind kind;
  unsigned classes;
  int64_t ulp = 0;       // f32 and f64
  int64_t half_ulp = 0;  // f16 and bf16
  int64_t f32_ulp = -1;  // f32 when it differs from `ulp` (inline polynomials)
  // Maps operand `operand`'s random values into the domain where the bound is stated (null:
  // all of them).
  double (*domain)(int operand, double value) = nullptr;
};

// chlo.polygamma's bound holds for n <= 1754 (the kernel's n! table and the reference's long
// double; docs/numerics.md "CHLO"): larger integer n (frequent among bf16 values) are folded
// into it. NaN, infinities and fractions stay as they are.
double PolygammaDomain(int operand, double value) {
  return operand == 0 && value > 1754 && value == std::floor(value) && std::isfinite(value)
             ? std::fmod(value, 1755.0)
             : value;
}

constexpr int64_t kMathUlp = 4;
const OpCase kOpCases[] = {
    {OpKind::kAbs, F | S},
    {OpKind::kNegate, F | S | U},
    {OpKind::kSign, F | S},
    {OpKind::kNot, S | U | B},
    {OpKind::kExponential, F, kMathUlp, 1, /*f32_ulp=*/1},
    {OpKind::kExponentialMinusOne, F, kMathUlp, 1},
    {OpKind::kLog, F, kMathUlp, 1},
    {OpKind::kLogPlusOne, F, kMathUlp, 1},
    {OpKind::kLogistic, F, kMathUlp, 1, /*f32_ulp=*/4},
    {OpKind::kTanh, F, kMathUlp, 1, /*f32_ulp=*/4},
    {OpKind::kSqrt, F},
    {OpKind::kRsqrt, F},
    {OpKind::kCbrt, F, kMathUlp, 1},
    {OpKind::kSine, F, kMathUlp, 1},
    {OpKind::kCosine, F, kMathUlp, 1},
    {OpKind::kFloor, F},
    {OpKind::kCeil, F},
    {OpKind::kRoundNearestEven, F},
    {OpKind::kRoundNearestAfz, F},
    {OpKind::kIsFinite, F},
    {OpKind::kPopcnt, S | U},
    {OpKind::kCountLeadingZeros, S | U},
    {OpKind::kAdd, kAll},
    {OpKind::kSubtract, F | S | U},
    {OpKind::kMultiply, kAll},
    {OpKind::kDivide, F | S | U},
    {OpKind::kRemainder, F | S | U},
    {OpKind::kMaximum, kAll},
    {OpKind::kMinimum, kAll},
    {OpKind::kPower, F | S | U, kMathUlp, 1},
    {OpKind::kAtan2, F, kMathUlp, 1},
    {OpKind::kAnd, S | U | B},
    {OpKind::kOr, S | U | B},
    {OpKind::kXor, S | U | B},
    {OpKind::kShiftLeft, S | U},
    {OpKind::kShiftRightLogical, S | U},
    {OpKind::kShiftRightArithmetic, S | U},
    {OpKind::kMulhi, S | U},
    {OpKind::kTan, F, kMathUlp, 1},
    {OpKind::kAsin, F, kMathUlp, 1},
    {OpKind::kAcos, F, kMathUlp, 1},
    {OpKind::kAtan, F, kMathUlp, 1},
    {OpKind::kSinh, F, kMathUlp, 1},
    {OpKind::kCosh, F, kMathUlp, 1},
    {OpKind::kAsinh, F, kMathUlp, 1},
    {OpKind::kAcosh, F, kMathUlp, 1},
    {OpKind::kAtanh, F, kMathUlp, 1},
    {OpKind::kErf, F, kMathUlp, 1},
    {OpKind::kErfc, F, kMathUlp, 1},
    // The same double functions (src/util/special_math.h) on both sides, rounded alike.
    // f32/f16/bf16: double IR (jit/special_functions.h) against special_math's double
    // functions, both rounded once; f64: the same scalar functions (exact), except lgamma, which
    // is SLEEF's (1 ulp away from its zeros) against glibc's lgamma_r (<= 4). The f32 bounds
    // near lgamma's and digamma's zeros are tested in special_functions_test.cc, f64 lgamma's
    // special values in sleef_functions_test.cc.
    {OpKind::kErfInv, F, 1, 1},
    {OpKind::kLgamma, F, kMathUlp, 1, /*f32_ulp=*/1},
    {OpKind::kDigamma, F, 1, 1},
    {OpKind::kBesselI1e, F, 1, 1},
    {OpKind::kIsInf, F},
    {OpKind::kIsPosInf, F},
    {OpKind::kIsNegInf, F},
    {OpKind::kNextAfter, F},
    // Double IR for f32 and f64 (jit/special_functions.h) against special_math's long double
    // functions: f32 rounds both alike (1 ulp), f64 carries the kernel's own error
    // (docs/numerics.md "CHLO"); grids, poles and cancellation in zeta_test.cc.
    {OpKind::kZeta, F, 16, 1, /*f32_ulp=*/1},
    {OpKind::kPolygamma, F, 16, 1, /*f32_ulp=*/1, PolygammaDomain},
};

const std::vector<std::vector<int64_t>> kShapes = {{0},    {1},       {7},        {17},
                                                   {1023}, {4096},    {2, 3, 5},  {3, 1, 17}};

unsigned ClassOf(ElementType type) {
  return IsFloat(type) ? F : IsSigned(type) ? S : IsUnsigned(type) ? U : B;
}

std::string CaseName(const ::testing::TestParamInfo<OpCase>& info) {
  std::string name(OpName(info.param.kind));
  for (char& c : name) {
    if (c == '.') c = '_';  // chlo.erf -> chlo_erf: gtest names are identifiers
  }
  return name;
}

// Builds main(x_0.., per shape) -> one `kind` result per shape, runs it through the JIT (2
// threads) and the reference, and compares every result.
void CheckOp(OpKind kind, ElementType type, int arity, int64_t ulp,
             const std::vector<NamedAttribute>& attributes = {},
             const std::vector<std::vector<int64_t>>& shapes = kShapes,
             double (*domain)(int operand, double value) = nullptr) {
  SCOPED_TRACE(std::string(OpName(kind)) + " on " + std::string(ElementTypeName(type)));
  Builder builder("op_test");
  std::vector<TensorType> params, results;
  const ElementType result_element =
      kind == OpKind::kIsFinite || kind == OpKind::kCompare || kind == OpKind::kIsInf ||
              kind == OpKind::kIsPosInf || kind == OpKind::kIsNegInf
          ? ElementType::kI1
          : type;
  for (const auto& dims : shapes) {
    for (int a = 0; a < arity; ++a) params.push_back(builder.Type(type, dims).value());
    results.push_back(builder.Type(result_element, dims).value());
  }
  auto f = builder.BeginFunction("main", params, results).value();
  std::vector<Value*> outs;
  for (size_t s = 0; s < shapes.size(); ++s) {
    std::vector<Value*> operands;
    for (int a = 0; a < arity; ++a) operands.push_back(f.Parameter(static_cast<int64_t>(s) * arity + a));
    ASSERT_OK_AND_ASSIGN(Operation * op, f.CreateOp(kind, operands, {results[s]}, attributes));
    outs.push_back(op->result(0));
  }
  ASSERT_OK(f.Return(outs));
  ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
  std::vector<Tensor> args;
  for (size_t p = 0; p < params.size(); ++p) {
    args.push_back(MakeInput(params[p], p));
    for (int64_t i = 0; domain != nullptr && i < args.back().element_count(); ++i) {
      args.back().SetFromDouble(i, domain(static_cast<int>(p % arity), args.back().GetAsDouble(i)));
    }
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, /*threads=*/2));
  ASSERT_EQ(actual.size(), expected.size());
  double max_ulps = 0;
  for (size_t s = 0; s < shapes.size(); ++s) {
    EXPECT_TRUE(Matches(actual[s], expected[s], ulp, &max_ulps))
        << "shape " << results[s].ToString();
  }
  if (ulp > 0) {
    std::cout << OpName(kind) << " " << ElementTypeName(type) << ": max " << max_ulps
              << " ulp (bound " << ulp << ")\n";
  }
}

class ElementwiseOpTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(ElementwiseOpTest, MatchesReferenceForEveryElementType) {
  const OpCase& c = GetParam();
  const int arity = IsElementwiseBinary(c.kind) ? 2 : 1;
  for (ElementType type : kAllElementTypes) {
    if ((c.classes & ClassOf(type)) == 0) continue;
    const bool half = type == ElementType::kF16 || type == ElementType::kBF16;
    const int64_t ulp = type == ElementType::kF32 && c.f32_ulp >= 0 ? c.f32_ulp : c.ulp;
    CheckOp(c.kind, type, arity, !IsFloat(type) ? 0 : half ? c.half_ulp : ulp, {}, kShapes,
            c.domain);
  }
}

// Run by hand (--gtest_also_run_disabled_tests) to measure the transcendental bounds on 2^20
// inputs per op and type; the figures are quoted in the README of jit/ and the issue report.
TEST(ElementwiseUlpMeasurement, DISABLED_TranscendentalsOnManyInputs) {
  for (const OpCase& c : kOpCases) {
    if (c.ulp == 0) continue;
    for (ElementType type : {ElementType::kF32, ElementType::kF64}) {
      CheckOp(c.kind, type, IsElementwiseBinary(c.kind) ? 2 : 1, c.ulp, {}, {{1 << 20}}, c.domain);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, ElementwiseOpTest, ::testing::ValuesIn(kOpCases), CaseName);

// The inline f32 exp/tanh/logistic on their special inputs (NaN, +-inf, +-0, subnormals,
// overflow and underflow thresholds, saturation of tanh and logistic), in the vector loop and
// in its scalar tail (47 = 2 x 16 + 15 elements, the list repeated): every special result glibc
// gives (NaN, +-inf, +-0 with its sign, +-1, 1/2, a subnormal x returned as is) is reproduced
// bit for bit; the ordinary ones (exp(10), ...) are within the table's f32 bound.
TEST(ElementwiseSpecialValuesTest, InlineExpTanhLogisticReproduceSpecialValuesOfReference) {
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), inf, -inf, 0.0f, -0.0f,
                            1e-40f, -1e-40f, 1e-30f, -1e-30f, 89.0f, 100.0f, -104.0f, -200.0f,
                            1e30f, -1e30f, 10.0f, -10.0f, 20.0f, -20.0f, 9.5f, -9.5f};
  const std::pair<OpKind, int64_t> ops[] = {
      {OpKind::kExponential, 1}, {OpKind::kTanh, 4}, {OpKind::kLogistic, 4}};
  for (const auto& [kind, bound] : ops) {
    SCOPED_TRACE(std::string(OpName(kind)));
    Builder builder("special_test");
    TensorType t = builder.Type(ElementType::kF32, {47}).value();
    auto f = builder.BeginFunction("main", {t}, {t}).value();
    ASSERT_OK_AND_ASSIGN(Operation * op, f.CreateOp(kind, {f.Parameter(0)}, {t}, {}));
    ASSERT_OK(f.Return({op->result(0)}));
    ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
    Tensor x = Tensor::Allocate(t).value();
    for (int64_t i = 0; i < 47; ++i) x.SetFromDouble(i, specials[i % std::size(specials)]);
    std::vector<Tensor> args = {x};
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", args));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, 2));
    EXPECT_TRUE(Matches(actual[0], expected[0], bound));
    const float* got = static_cast<const float*>(actual[0].data());
    const float* want = static_cast<const float*>(expected[0].data());
    for (int64_t i = 0; i < 47; ++i) {
      const float e = want[i];
      const bool special = std::isnan(e) || std::isinf(e) || e == 0.0f || std::fabs(e) == 1.0f ||
                           e == 0.5f || std::fabs(e) < 1e-38f;
      if (!special) continue;
      EXPECT_TRUE(std::memcmp(&got[i], &want[i], sizeof(float)) == 0 ||
                  (std::isnan(got[i]) && std::isnan(e)))
          << "x = " << specials[i % std::size(specials)] << ": " << got[i] << " vs " << e;
    }
  }
}

// erfc's underflow: from glibc's zero point on the kernel gives +0 without calling libmvec
// (whose erfc hands those lanes to scalar libm), so on both sides of that point, far beyond it,
// at +-inf and NaN the f32 and f64 kernels give the reference's (scalar glibc's) bits: exact
// where the reference is 0, within 4 ulp below.
TEST(ElementwiseErfcTest, UnderflowGivesTheReferenceZerosAndNeighbours) {
  for (ElementType type : {ElementType::kF32, ElementType::kF64}) {
    SCOPED_TRACE(std::string(ElementTypeName(type)));
    const bool f32 = type == ElementType::kF32;
    const double zero_from = f32 ? 10.050470352172852 : 27.226364135742188;
    std::vector<double> inputs = {std::numeric_limits<double>::infinity(),
                                  -std::numeric_limits<double>::infinity(),
                                  std::numeric_limits<double>::quiet_NaN(), 1e30, 100.0, -100.0};
    double below = zero_from, above = zero_from;
    for (int k = 0; k < 40; ++k) {  // the point, 39 values above it and 40 below
      below = f32 ? std::nextafter(static_cast<float>(below), 0.0f) : std::nextafter(below, 0.0);
      inputs.push_back(below);
      inputs.push_back(above);
      above = f32 ? std::nextafter(static_cast<float>(above), 100.0f) : std::nextafter(above, 100.0);
    }
    Builder builder("erfc_underflow");
    const int64_t n = static_cast<int64_t>(inputs.size());
    TensorType t = builder.Type(type, {n}).value();
    auto f = builder.BeginFunction("main", {t}, {t}).value();
    ASSERT_OK_AND_ASSIGN(Operation * op, f.CreateOp(OpKind::kErfc, {f.Parameter(0)}, {t}, {}));
    ASSERT_OK(f.Return({op->result(0)}));
    ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
    Tensor x = Tensor::Allocate(t).value();
    for (int64_t i = 0; i < n; ++i) x.SetFromDouble(i, inputs[static_cast<size_t>(i)]);
    std::vector<Tensor> args = {x};
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", args));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, 2));
    EXPECT_TRUE(Matches(actual[0], expected[0], 4));
    int64_t zeros = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double want = expected[0].GetAsDouble(i);
      if (want != 0.0) continue;
      ++zeros;
      EXPECT_TRUE(actual[0].GetAsDouble(i) == 0.0 && !std::signbit(actual[0].GetAsDouble(i)))
          << "x = " << inputs[static_cast<size_t>(i)] << ": got " << actual[0].GetAsDouble(i);
    }
    EXPECT_EQ(zeros, 40 + 3);  // the point and the 39 above it, 1e30, 100, +inf
  }
}

// The inline f32 exp (jit/vector_math.h) against glibc's expf (the reference evaluator) on
// 2^20 bit patterns spread evenly over all of f32 (every 4,096th: both signs, every exponent,
// NaNs and infinities) and on every 16th f32 in [-104, -86] (results from subnormal up to
// the smallest normals, where 2^n is applied in two steps): at most 1 ulp everywhere.
// (Measured over all 2^32 inputs with the same sequence in C: also at most 1 ulp.)
TEST(ElementwiseExpTest, WithinOneUlpOfGlibcOnASweepOfEveryExponent) {
  std::vector<float> inputs;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4096) {
    const uint32_t u = static_cast<uint32_t>(bits);
    float x;
    std::memcpy(&x, &u, sizeof x);
    inputs.push_back(x);
  }
  auto bits_of = [](float v) {
    uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return u;
  };
  for (uint32_t u = bits_of(-86.0f); u <= bits_of(-104.0f); u += 16) {  // negative: |x| grows
    float x;
    std::memcpy(&x, &u, sizeof x);
    inputs.push_back(x);
  }
  Builder builder("exp_sweep");
  const int64_t n = static_cast<int64_t>(inputs.size());
  TensorType t = builder.Type(ElementType::kF32, {n}).value();
  auto f = builder.BeginFunction("main", {t}, {t}).value();
  ASSERT_OK_AND_ASSIGN(Operation * op, f.CreateOp(OpKind::kExponential, {f.Parameter(0)}, {t}, {}));
  ASSERT_OK(f.Return({op->result(0)}));
  ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
  Tensor x = Tensor::Allocate(t).value();
  std::memcpy(x.data(), inputs.data(), inputs.size() * sizeof(float));
  std::vector<Tensor> args = {x};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, 2));
  double max_ulps = 0;
  EXPECT_TRUE(Matches(actual[0], expected[0], 1, &max_ulps)) << n << " inputs";
  EXPECT_GT(n, (int64_t{1} << 20) + 100000);  // the subnormal-result range is really covered
  std::cout << "exp f32 over " << n << " inputs: max " << max_ulps << " ulp\n";
}

// reduce_precision on the operand's own bits: formats narrower and wider in exponent and
// mantissa than every float type, mantissa 0 (NaN becomes inf) included; bit-exact.
TEST(ElementwiseReducePrecisionTest, EveryFormatIsExactOnEveryFloatType) {
  for (ElementType type : {ElementType::kF16, ElementType::kBF16, ElementType::kF32,
                           ElementType::kF64}) {
    for (auto [exponent_bits, mantissa_bits] :
         {std::pair<int64_t, int64_t>{5, 10}, {8, 7}, {8, 23}, {11, 52}, {2, 0}, {4, 3},
          {1, 1}, {20, 60}}) {
      SCOPED_TRACE("e" + std::to_string(exponent_bits) + "m" + std::to_string(mantissa_bits));
      CheckOp(OpKind::kReducePrecision, type, 1, 0,
              {{"exponent_bits", exponent_bits}, {"mantissa_bits", mantissa_bits}},
              {{1023}, {17}});
    }
  }
}

TEST(ElementwiseCompareTest, EveryDirectionAndCompareTypeIsExact) {
  for (ElementType type : kAllElementTypes) {
    std::vector<std::string> compare_types = {""};
    if (IsFloat(type)) compare_types.push_back("TOTALORDER");
    if (!IsFloat(type)) compare_types = {"", IsSigned(type) ? "SIGNED" : "UNSIGNED"};
    for (const std::string& compare_type : compare_types) {
      for (const char* direction : {"EQ", "NE", "GE", "GT", "LE", "LT"}) {
        std::vector<NamedAttribute> attributes = {{"comparison_direction", std::string(direction)}};
        if (!compare_type.empty()) attributes.push_back({"compare_type", compare_type});
        CheckOp(OpKind::kCompare, type, 2, 0, attributes);
      }
    }
  }
}

// convert between every pair of element types; one program per source type.
TEST(ElementwiseConvertTest, EveryPairOfElementTypesIsExact) {
  for (ElementType from : kAllElementTypes) {
    SCOPED_TRACE("convert from " + std::string(ElementTypeName(from)));
    Builder builder("convert_test");
    std::vector<TensorType> results;
    const std::vector<int64_t> dims = {1023};
    for (ElementType to : kAllElementTypes) results.push_back(builder.Type(to, dims).value());
    TensorType param = builder.Type(from, dims).value();
    auto f = builder.BeginFunction("main", {param}, results).value();
    std::vector<Value*> outs;
    for (ElementType to : kAllElementTypes) {
      ASSERT_OK_AND_ASSIGN(Value * v, f.Convert(f.Parameter(0), to));
      outs.push_back(v);
    }
    ASSERT_OK(f.Return(outs));
    ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
    std::vector<Tensor> args = {MakeInput(param, 3)};
    ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
    ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args));
    for (size_t i = 0; i < results.size(); ++i) {
      EXPECT_TRUE(Matches(actual[i], expected[i], 0)) << "to " << results[i].ToString();
    }
  }
}

TEST(ElementwiseBitcastTest, SameWidthPairsAreExact) {
  for (ElementType from : kAllElementTypes) {
    for (ElementType to : kAllElementTypes) {
      if (from == ElementType::kI1 || to == ElementType::kI1 ||
          ElementBitWidth(from) != ElementBitWidth(to)) {
        continue;
      }
      SCOPED_TRACE(std::string(ElementTypeName(from)) + " -> " + std::string(ElementTypeName(to)));
      Builder builder("bitcast_test");
      TensorType param = builder.Type(from, {17}).value();
      TensorType result = builder.Type(to, {17}).value();
      auto f = builder.BeginFunction("main", {param}, {result}).value();
      ASSERT_OK_AND_ASSIGN(Value * v, f.BitcastConvert(f.Parameter(0), result));
      ASSERT_OK(f.Return({v}));
      ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
      std::vector<Tensor> args = {MakeInput(param, 5)};
      ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
      ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
      ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args));
      // Bits, not values: a NaN pattern must survive unchanged.
      EXPECT_EQ(0, std::memcmp(actual[0].data(), expected[0].data(),
                               static_cast<size_t>(expected[0].byte_size())));
    }
  }
}

// select with a per-element and a scalar predicate; clamp with scalar and per-element bounds.
TEST(ElementwiseTernaryTest, SelectAndClampMatchReferenceForEveryElementType) {
  for (ElementType type : kAllElementTypes) {
    SCOPED_TRACE(std::string(ElementTypeName(type)));
    Builder builder("ternary_test");
    TensorType t = builder.Type(type, {1023}).value();
    TensorType scalar = builder.Type(type, {}).value();
    TensorType pred = builder.Type(ElementType::kI1, {1023}).value();
    TensorType pred_scalar = builder.Type(ElementType::kI1, {}).value();
    const bool clamp_ok = type != ElementType::kI1;
    std::vector<TensorType> results = {t, t};
    if (clamp_ok) results.insert(results.end(), {t, t});
    auto f = builder.BeginFunction("main", {pred, pred_scalar, t, t, scalar, scalar}, results).value();
    std::vector<Value*> outs;
    ASSERT_OK_AND_ASSIGN(Value * s1, f.Select(f.Parameter(0), f.Parameter(2), f.Parameter(3)));
    ASSERT_OK_AND_ASSIGN(Value * s2, f.Select(f.Parameter(1), f.Parameter(2), f.Parameter(3)));
    outs = {s1, s2};
    if (clamp_ok) {
      ASSERT_OK_AND_ASSIGN(Value * c1, f.Clamp(f.Parameter(4), f.Parameter(2), f.Parameter(5)));
      ASSERT_OK_AND_ASSIGN(Value * c2, f.Clamp(f.Parameter(3), f.Parameter(2), f.Parameter(3)));
      outs.insert(outs.end(), {c1, c2});
    }
    ASSERT_OK(f.Return(outs));
    ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
    std::vector<Tensor> args = {MakeInput(pred, 1), MakeInput(pred_scalar, 2), MakeInput(t, 3),
                                MakeInput(t, 4),    MakeInput(scalar, 5),      MakeInput(scalar, 8)};
    ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
    ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args));
    for (size_t i = 0; i < outs.size(); ++i) EXPECT_TRUE(Matches(actual[i], expected[i], 0)) << i;
  }
}

}  // namespace
}  // namespace accy::jit::testing
