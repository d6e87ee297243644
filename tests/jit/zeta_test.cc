// The JIT kernels of chlo.zeta and chlo.polygamma (jit/special_functions.h: double IR the loop
// vectorizer widens, for f32 and f64 alike) against the reference evaluator's long double
// functions (special::Zeta, special::Polygamma): known values, the domain rules bit for bit in
// the vector body and the scalar tail, grids over both arguments in every float type, and a
// fused chain. Bounds as docs/numerics.md "CHLO" states them: f32 within 1 ulp of the reference
// (both round a double good to ~1e-15), f64 within 8 ulp; where terms of both signs cancel (q < 0)
// the error is bounded absolutely instead, by those ulps of the sum of the terms' magnitudes.
// This binary also runs under ACCY_MAX_ISA=avx2 (accy_jit_test_capped_avx2).
#include <cmath>
#include <cstdint>
#include <iostream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "src/util/special_math.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Runs `kind` on pairs (a[i], b[i]) of element type `type` through the JIT at 2 threads.
std::vector<double> RunJit(OpKind kind, ElementType type, const std::vector<double>& a,
                           const std::vector<double>& b) {
  Builder builder("zeta_test");
  TensorType t = builder.Type(type, {static_cast<int64_t>(a.size())}).value();
  auto f = builder.BeginFunction("main", {t, t}, {t}).value();
  Operation* op = f.CreateOp(kind, {f.Parameter(0), f.Parameter(1)}, {t}, {}).value();
  EXPECT_OK(f.Return({op->result(0)}));
  auto program = JitProgram::Create(builder.Finish().value()).value();
  Tensor x = Tensor::Allocate(t).value();
  Tensor y = Tensor::Allocate(t).value();
  for (size_t i = 0; i < a.size(); ++i) {
    x.SetFromDouble(static_cast<int64_t>(i), a[i]);
    y.SetFromDouble(static_cast<int64_t>(i), b[i]);
  }
  const std::vector<Tensor> args = {x, y};
  std::vector<Tensor> results = program->Run(args, /*threads=*/2).value();
  std::vector<double> out(a.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = results[0].GetAsDouble(static_cast<int64_t>(i));
  return out;
}

// a and b as the element type holds them.
double Rounded(ElementType type, double v) {
  Tensor t = Tensor::Allocate(TensorType::Create(type, {1}).value()).value();
  t.SetFromDouble(0, v);
  return t.GetAsDouble(0);
}

double Reference(OpKind kind, double a, double b) {
  return kind == OpKind::kZeta ? special::Zeta(a, b) : special::Polygamma(a, b);
}

// The sum of the magnitudes of the series' terms, the scale of its rounding errors: zeta(x, q)
// itself for q > 0; for q < 0 (x an integer), zeta(x, r) + zeta(x, 1 - r) - zeta(x, 1 - q) with
// r = q - floor(q) (the negative terms (r - j)^-x have the magnitudes (j - r)^-x). Polygamma
// scales it by n!.
double TermScale(OpKind kind, double a, double b) {
  if (kind == OpKind::kPolygamma && a == 0) return 1;  // digamma: absolute near its zeros
  const double x = kind == OpKind::kZeta ? a : a + 1;
  const double q = b;
  double scale = std::fabs(special::Zeta(x, q));
  if (q < 0 && std::isfinite(q)) {
    const double r = q - std::floor(q);
    scale = special::Zeta(x, r) + special::Zeta(x, 1 - r) - special::Zeta(x, 1 - q);
  }
  return kind == OpKind::kZeta ? scale : std::tgamma(a + 1) * scale;
}

// Ulps of `type` at `want` (f32 ulps for f16/bf16, which round an f32 result).
double Ulp(ElementType type, double want) {
  const int mantissa = type == ElementType::kF64   ? 52
                       : type == ElementType::kF32 ? 23
                       : type == ElementType::kF16 ? 10
                                                   : 7;
  const int min_exponent = type == ElementType::kF64   ? -1022
                           : type == ElementType::kF16 ? -14
                                                       : -126;
  return std::ldexp(1.0,
                    std::max(want == 0 ? min_exponent : std::ilogb(want), min_exponent) - mantissa);
}

// Checks JIT results against the reference: the same NaN/infinity, else within `ulps` ulps of
// the reference's rounded value or of TermScale (cancellation). Prints the largest error.
void ExpectWithinBound(OpKind kind, ElementType type, const std::vector<double>& a,
                       const std::vector<double>& b, double ulps) {
  SCOPED_TRACE(std::string(OpName(kind)) + " " + std::string(ElementTypeName(type)));
  const std::vector<double> got = RunJit(kind, type, a, b);
  double worst = 0;
  int failures = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double u = Rounded(type, a[i]), v = Rounded(type, b[i]);
    const double exact = Reference(kind, u, v);
    const double want =
        Rounded(type, type == ElementType::kF64 ? exact : static_cast<float>(exact));
    bool ok;
    if (std::isnan(want) || std::isinf(want) || std::isnan(got[i]) || std::isinf(got[i])) {
      ok = (std::isnan(want) && std::isnan(got[i])) || got[i] == want;
    } else {
      const double error = std::fabs(got[i] - want) / Ulp(type, want);
      worst = std::max(worst, error);
      ok = error <= ulps ||
           std::fabs(got[i] - want) <= ulps * Ulp(type, TermScale(kind, u, v)) + Ulp(type, want);
    }
    if (!ok && ++failures <= 8) {
      ADD_FAILURE() << OpName(kind) << "(" << u << ", " << v << "): got " << got[i] << ", want "
                    << want;
    }
  }
  std::cout << OpName(kind) << " " << ElementTypeName(type) << " over " << a.size()
            << " pairs: max " << worst << " ulp\n";
}

TEST(ZetaJitTest, KnownValues) {
  const double pi = 3.14159265358979323846;
  for (ElementType type : {ElementType::kF32, ElementType::kF64}) {
    SCOPED_TRACE(std::string(ElementTypeName(type)));
    const double tolerance = type == ElementType::kF64 ? 4e-16 : 1.2e-7;
    const std::vector<double> zeta = RunJit(OpKind::kZeta, type, {2, 3, 2, 4}, {1, 1, 0.5, 1});
    EXPECT_NEAR(zeta[0], pi * pi / 6, tolerance * 1.7);
    EXPECT_NEAR(zeta[1], 1.2020569031595942, tolerance * 1.3);
    EXPECT_NEAR(zeta[2], pi * pi / 2, tolerance * 5);
    EXPECT_NEAR(zeta[3], std::pow(pi, 4) / 90, tolerance * 1.1);
    const std::vector<double> polygamma =
        RunJit(OpKind::kPolygamma, type, {1, 2, 0, 0, 3}, {1, 1, 1, 2.5, 0.5});
    EXPECT_NEAR(polygamma[0], pi * pi / 6, tolerance * 1.7);
    EXPECT_NEAR(polygamma[1], -2.4041138063191885, tolerance * 2.5);
    EXPECT_NEAR(polygamma[2], -0.5772156649015329, 3 * tolerance);  // digamma's bound
    EXPECT_NEAR(polygamma[3], Rounded(type, special::Digamma(2.5)), tolerance);
    EXPECT_NEAR(polygamma[4], std::pow(pi, 4), tolerance * 100);  // psi'''(1/2) = pi^4
  }
}

// Special values repeated to 47 pairs (two 16-lane vectors and a 15-element tail): the domain
// rules of special_math.h bit for bit wherever the reference gives NaN, an infinity or zero.
TEST(ZetaJitTest, DomainRulesMatchTheReferenceInVectorBodyAndTail) {
  const double zeta_pairs[][2] = {
      {1, 2},       {1, -3},     {1, kNaN},   {0.999, 2},   {0, 2},    {-kInf, 2},   {kNaN, 2},
      {2, kNaN},    {2, 0},      {2, -0.0},   {4, -3},      {3, -3},   {2.5, -3},    {kInf, -3},
      {2, -kInf},   {3, -kInf},  {2.5, -1.5}, {kInf, -1.5}, {2, kInf}, {kInf, kInf}, {kInf, 2},
      {kInf, 1},    {kInf, 0.5}, {2000, 0.5}, {2000, 1.5},  {1e30, 2}, {2, 1e-300},  {3, 1e300},
      {1.5, 1e300}, {2, -2.5},   {3, -2.5},   {6, -40.5}};
  const double polygamma_pairs[][2] = {{-1, 2},    {0.5, 2},    {kInf, 2}, {-kInf, 2}, {kNaN, 2},
                                       {1, 0},     {3, -1},     {2, 0},    {2, -6},    {0, 0},
                                       {0, -3},    {1, kNaN},   {1, kInf}, {2, kInf},  {0, kInf},
                                       {1, -kInf}, {1, 1e-200}, {4, -2.5}};
  for (OpKind kind : {OpKind::kZeta, OpKind::kPolygamma}) {
    for (ElementType type : {ElementType::kF32, ElementType::kF64}) {
      SCOPED_TRACE(std::string(OpName(kind)) + " " + std::string(ElementTypeName(type)));
      std::vector<double> a, b;
      const size_t count =
          kind == OpKind::kZeta ? std::size(zeta_pairs) : std::size(polygamma_pairs);
      for (size_t i = 0; i < 47; ++i) {
        const double* pair =
            kind == OpKind::kZeta ? zeta_pairs[i % count] : polygamma_pairs[i % count];
        a.push_back(pair[0]);
        b.push_back(pair[1]);
      }
      const std::vector<double> got = RunJit(kind, type, a, b);
      for (size_t i = 0; i < a.size(); ++i) {
        const double u = Rounded(type, a[i]), v = Rounded(type, b[i]);
        const double exact = Reference(kind, u, v);
        const double want =
            Rounded(type, type == ElementType::kF64 ? exact : static_cast<float>(exact));
        if (!(std::isnan(want) || std::isinf(want) || want == 0)) continue;
        EXPECT_TRUE((std::isnan(want) && std::isnan(got[i])) ||
                    (got[i] == want && std::signbit(got[i]) == std::signbit(want)))
            << OpName(kind) << "(" << u << ", " << v << "): got " << got[i] << ", want " << want;
      }
    }
  }
}

// Grids over both arguments: x in (1, 60] by uneven steps (integers among them) against q over
// (0, 200] and, for the integer x, negative q down to -100; polygamma n = 0..8 against x over
// [-12, 40] (poles excluded by the step) and big x. f16 and bf16 on a coarser grid.
TEST(ZetaJitTest, WithinTheStatedBoundsOfTheReferenceOnGrids) {
  std::vector<double> zx, zq, pn, px;
  for (double x = 1.0078125; x <= 60; x = x < 4 ? x + 0.2421875 : x * 1.37) {
    for (double q = 0.0009765625; q <= 200; q *= 1.61) {
      zx.push_back(x);
      zq.push_back(q);
    }
  }
  for (double x : {2.0, 3.0, 4.0, 5.0, 8.0, 13.0}) {
    for (double q = -100.3; q < 0; q = q < -12 ? q * 0.83 : q + 0.3125) {
      if (q == std::floor(q)) continue;
      zx.push_back(x);
      zq.push_back(q);
    }
  }
  for (int n = 0; n <= 8; ++n) {
    for (double x = -11.96875; x <= 40; x += 0.2265625) {
      pn.push_back(n);
      px.push_back(x);
    }
    for (double x : {100.5, 1e3, 1e5, 3e7}) {
      pn.push_back(n);
      px.push_back(x);
    }
  }
  ExpectWithinBound(OpKind::kZeta, ElementType::kF32, zx, zq, 1);
  ExpectWithinBound(OpKind::kZeta, ElementType::kF64, zx, zq, 8);
  ExpectWithinBound(OpKind::kPolygamma, ElementType::kF32, pn, px, 1);
  ExpectWithinBound(OpKind::kPolygamma, ElementType::kF64, pn, px, 8);
  std::vector<double> hx, hq;
  for (size_t i = 0; i < zx.size(); i += 7) {
    hx.push_back(zx[i]);
    hq.push_back(zq[i]);
  }
  for (ElementType type : {ElementType::kF16, ElementType::kBF16}) {
    ExpectWithinBound(OpKind::kZeta, type, hx, hq, 1);
    ExpectWithinBound(OpKind::kPolygamma, type, pn, px, 1);
  }
}

// The cases that needed care, held to the relative bound: at half-integer q < 0 with odd x the
// negative terms cancel exactly and the sum is zeta(x, 1 - q) (tiny next to the cancelled
// terms); where q^-x underflows double but the result does not (scaled by a power of two);
// where both terms next to 0 overflow double (the nearer one's infinity).
TEST(ZetaJitTest, CancellationUnderflowAndOverflowCases) {
  struct Case {
    OpKind kind;
    double a, b;
  };
  const Case cases[] = {{OpKind::kZeta, 15, -75.5},
                        {OpKind::kZeta, 7, -3.5},
                        {OpKind::kPolygamma, 14, -93.5},
                        {OpKind::kPolygamma, 74, -12.5},
                        {OpKind::kPolygamma, 44, -19.5},
                        {OpKind::kPolygamma, 108, 996.8},
                        {OpKind::kPolygamma, 125, 496.1},
                        // n! beyond double's range (n > 170: a break-it review found NaN here),
                        // to 1754!, the last long double holds; 1500 and 1754 at q just below a
                        // power of two, where log2 q rounded down left the terms below 2^-1400.
                        {OpKind::kPolygamma, 171, 10},
                        {OpKind::kPolygamma, 172, 10},
                        {OpKind::kPolygamma, 200, 10},
                        {OpKind::kPolygamma, 300, -20.5},
                        {OpKind::kPolygamma, 500, 100},
                        {OpKind::kPolygamma, 1200, 333.3},
                        {OpKind::kPolygamma, 1500, 500},
                        {OpKind::kPolygamma, 1754, 1000},
                        {OpKind::kPolygamma, 1754, 1},
                        {OpKind::kPolygamma, 200, kInf},
                        {OpKind::kZeta, 26, 0x1p40},
                        {OpKind::kZeta, 0x1.f21675eb96f34p+0, 0x1.0f908a3b10823p+912},
                        {OpKind::kZeta, 2047, -0.3},
                        {OpKind::kZeta, 2047, -0.7},
                        {OpKind::kZeta, 2048, -0.7},
                        {OpKind::kZeta, 2049, -0.5}};
  for (ElementType type : {ElementType::kF32, ElementType::kF64}) {
    for (const Case& c : cases) {
      const double u = Rounded(type, c.a), v = Rounded(type, c.b);
      const double exact = Reference(c.kind, u, v);
      const double want =
          Rounded(type, type == ElementType::kF64 ? exact : static_cast<float>(exact));
      const double got = RunJit(c.kind, type, {u}, {v})[0];
      const double ulps = type == ElementType::kF64 ? 8 : 1;
      EXPECT_TRUE(got == want ||
                  (std::isfinite(want) && std::fabs(got - want) <= ulps * Ulp(type, want)))
          << OpName(c.kind) << "(" << u << ", " << v << ") " << ElementTypeName(type) << ": got "
          << got << ", want " << want;
    }
  }
}

// polygamma(n, zeta(x, q) * c) + x in one fused kernel: one elementwise work item, results as
// the reference's within f32's bound (each op's 1 ulp, carried through the chain).
TEST(ZetaJitTest, FusesInAnElementwiseChain) {
  const int64_t n = 1000;
  Builder builder("zeta_chain");
  TensorType t = builder.Type(ElementType::kF32, {n}).value();
  auto f = builder.BeginFunction("main", {t, t, t}, {t}).value();
  Value* zeta = f.Zeta(f.Parameter(0), f.Parameter(1)).value();
  Value* half = f.ConstantScalar(ElementType::kF32, 0.5).value();
  Value* scaled = f.Multiply(zeta, f.BroadcastInDim(half, t, {}).value()).value();
  Value* polygamma = f.Polygamma(f.Parameter(2), scaled).value();
  Value* out = f.Add(polygamma, f.Parameter(0)).value();
  ASSERT_OK(f.Return({out}));
  ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
  std::vector<Tensor> args;
  for (int p = 0; p < 3; ++p) args.push_back(Tensor::Allocate(t).value());
  for (int64_t i = 0; i < n; ++i) {
    args[0].SetFromDouble(i, 1.5 + 0.01 * static_cast<double>(i % 300));    // x
    args[1].SetFromDouble(i, 0.25 + 0.037 * static_cast<double>(i % 211));  // q
    args[2].SetFromDouble(i, static_cast<double>(1 + i % 3));               // n
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  ASSERT_EQ(program->plan().work_item_count(), 1);
  EXPECT_EQ(program->plan().items()[0].kind, WorkKind::kElementwiseFusion);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, 2));
  // A 1-ulp difference in zeta moves polygamma by its condition number (about n + 1 here).
  TensorComparison c = CompareUlp(actual[0], expected[0], 8);
  EXPECT_TRUE(c.ok) << c.message;
}

}  // namespace
}  // namespace accy::jit::testing
