// accy-ulp-check's two-argument functions, chlo.zeta(x, q) and chlo.polygamma(n, x)
// (docs/numerics.md "CHLO"). Their f32 inputs are 2^64 pairs, so instead of every input:
//   The oracle (special::Zeta / special::Polygamma, long double rounded to double) against MPFR
//     on `--oracle-samples` sampled f32 pairs: below 1/64 f32 ulp, else the f32 figures are not
//     trusted and the run fails.
//   f32: `--f32-chunks` chunks of 2^24 sampled pairs (a quarter random bit patterns, the rest
//     spread over the interesting ranges: x near 1 to 129 against q from 2^-20 to 2^20, integer x
//     against negative q, polygamma's n from 0 to 170 against x from -10^4 to 2^20), the kernel
//     against the oracle, in f32 ulps at the oracle's value.
//   f64: `--f64-samples` pairs from the same distributions in double, the kernel against MPFR.
//   Throughput: the f32 kernel at 1 thread against the oracle's scalar function.
// MPFR has the Riemann zeta function (mpfr_zeta_ui) but no Hurwitz zeta: the MPFR oracle sums
// (q + k)^-x at 128 bits until the rest, at most (q + k)^(1-x) / (x - 1), is below 2^-138 of the
// sum, or up to a = q + k >= max(40, x + 40), then adds Euler-Maclaurin's tail at a with 40
// Bernoulli terms B_2j/(2j)! = (-1)^(j+1) 2 zeta(2j) / (2 pi)^(2j) from mpfr_zeta_ui (each term
// at most 1/10 of the one before there). For q < 0 (x an integer) it sums the negative terms
// (up to 100 of them) or uses zeta(x, q) = zeta(x, r) + (-1)^x (zeta(x, 1-r) - zeta(x, 1-q)),
// r = q - floor(q), which 128 bits carry through the cancellation. Polygamma is then
// (-1)^(n+1) n! zeta(n + 1, x) with mpfr_fac_ui, or mpfr_digamma for n = 0.
// A result passes within the stated ulp bound of the true value, or, where the series has terms
// of both signs (q < 0), within that many ulps of the sum of the terms' magnitudes (times n! for
// polygamma); polygamma's n = 0 is digamma, with digamma's bounds (absolute near its zeros).
#include <mpfr.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>

#include "accy/builder.h"
#include "accy/engine.h"
#include "src/util/special_math.h"
#include "tools/ulp_check/ulp_check.h"

namespace accy_ulp_check {
namespace {

using accy::ElementType;

constexpr mpfr_prec_t kZetaPrecision = 128;
constexpr int kBernoulliTerms = 40;

// B_2j/(2j)!, j = 1..kBernoulliTerms, at kZetaPrecision + 32 bits; filled once, then read-only.
const std::vector<std::unique_ptr<__mpfr_struct, void (*)(mpfr_ptr)>>& BernoulliOverFactorial() {
  static std::vector<std::unique_ptr<__mpfr_struct, void (*)(mpfr_ptr)>> table;
  static std::once_flag once;
  std::call_once(once, [] {
    mpfr_t two_pi;
    mpfr_init2(two_pi, kZetaPrecision + 32);
    mpfr_const_pi(two_pi, MPFR_RNDN);
    mpfr_mul_2ui(two_pi, two_pi, 1, MPFR_RNDN);
    for (int j = 1; j <= kBernoulliTerms; ++j) {
      auto* c = new __mpfr_struct;
      mpfr_init2(c, kZetaPrecision + 32);
      mpfr_t power;
      mpfr_init2(power, kZetaPrecision + 32);
      mpfr_zeta_ui(c, static_cast<unsigned long>(2 * j), MPFR_RNDN);
      mpfr_pow_ui(power, two_pi, static_cast<unsigned long>(2 * j), MPFR_RNDN);
      mpfr_div(c, c, power, MPFR_RNDN);
      mpfr_mul_2ui(c, c, 1, MPFR_RNDN);
      if (j % 2 == 0) mpfr_neg(c, c, MPFR_RNDN);
      mpfr_clear(power);
      table.emplace_back(c, [](mpfr_ptr p) {
        mpfr_clear(p);
        delete p;
      });
    }
    mpfr_clear(two_pi);
  });
  return table;
}

// zeta(s, q) for q > 0 finite and s > 1 (+inf included), MPFR values at kZetaPrecision.
void MpfrZetaOfPositive(mpfr_ptr out, mpfr_srcptr s, mpfr_srcptr q) {
  const auto& coefficients = BernoulliOverFactorial();
  mpfr_t a, sum, term, bound, limit, minus_s, s_minus_1, factor, step;
  mpfr_inits2(kZetaPrecision, a, sum, term, bound, limit, minus_s, s_minus_1, factor, step,
              static_cast<mpfr_ptr>(nullptr));
  const double switch_at = std::max(40.0, mpfr_get_d(s, MPFR_RNDU) + 40.0);
  mpfr_set(a, q, MPFR_RNDN);
  mpfr_set_zero(sum, 1);
  mpfr_neg(minus_s, s, MPFR_RNDN);
  mpfr_sub_ui(s_minus_1, s, 1, MPFR_RNDN);
  bool done = false;
  while (mpfr_cmp_d(a, switch_at) < 0) {
    mpfr_pow(term, a, minus_s, MPFR_RNDN);
    mpfr_add(sum, sum, term, MPFR_RNDN);
    // The rest is at most term * a / (s - 1) (the integral bound).
    mpfr_mul(bound, term, a, MPFR_RNDN);
    mpfr_div(bound, bound, s_minus_1, MPFR_RNDN);
    mpfr_mul_2si(limit, sum, -static_cast<long>(kZetaPrecision + 10), MPFR_RNDN);
    if (mpfr_nan_p(bound) || mpfr_cmp(bound, limit) <= 0) {  // NaN: inf terms (s = +inf)
      done = true;
      break;
    }
    mpfr_add_ui(a, a, 1, MPFR_RNDN);
  }
  if (!done) {
    // a^(1-s)/(s-1) + a^-s/2 + sum_j B_2j/(2j)! (s)_(2j-1) a^(1-s-2j).
    mpfr_pow(term, a, minus_s, MPFR_RNDN);
    mpfr_div(bound, a, s_minus_1, MPFR_RNDN);
    mpfr_add_d(bound, bound, 0.5, MPFR_RNDN);
    mpfr_mul(bound, bound, term, MPFR_RNDN);
    mpfr_add(sum, sum, bound, MPFR_RNDN);
    mpfr_mul(factor, term, s, MPFR_RNDN);
    mpfr_div(factor, factor, a, MPFR_RNDN);
    for (int j = 1; j <= kBernoulliTerms; ++j) {
      mpfr_mul(step, factor, coefficients[static_cast<size_t>(j - 1)].get(), MPFR_RNDN);
      mpfr_add(sum, sum, step, MPFR_RNDN);
      mpfr_add_ui(step, s, static_cast<unsigned long>(2 * j - 1), MPFR_RNDN);
      mpfr_mul(factor, factor, step, MPFR_RNDN);
      mpfr_add_ui(step, s, static_cast<unsigned long>(2 * j), MPFR_RNDN);
      mpfr_mul(factor, factor, step, MPFR_RNDN);
      mpfr_div(factor, factor, a, MPFR_RNDN);
      mpfr_div(factor, factor, a, MPFR_RNDN);
    }
  }
  mpfr_set(out, sum, MPFR_RNDN);
  mpfr_clears(a, sum, term, bound, limit, minus_s, s_minus_1, factor, step,
              static_cast<mpfr_ptr>(nullptr));
}

// zeta(x, q) with the domain rules (special_math.h), written out again from XLA's decomposition.
void MpfrZeta(mpfr_ptr out, double x, double q) {
  if (x == 1) return mpfr_set_inf(out, 1);
  if (std::isnan(x) || std::isnan(q) || x < 1) return mpfr_set_nan(out);
  const bool x_integer = x == std::floor(x);
  const bool x_even = x_integer && std::isfinite(x) && std::fmod(x, 2.0) == 0;
  if (q <= 0 && q == std::floor(q)) return x_even ? mpfr_set_inf(out, 1) : mpfr_set_nan(out);
  if (q < 0 && (!x_integer || std::isinf(x))) return mpfr_set_nan(out);
  if (std::isinf(q)) return mpfr_set_zero(out, 1);
  mpfr_t s, base, term, sum;
  mpfr_inits2(kZetaPrecision, s, base, term, sum, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(s, x, MPFR_RNDN);
  mpfr_set_d(base, q, MPFR_RNDN);
  if (q > 0) {
    MpfrZetaOfPositive(out, s, base);
  } else {
    const double m = -std::floor(q);
    const double r = q + m;  // exact
    mpfr_set_d(base, r, MPFR_RNDN);
    MpfrZetaOfPositive(sum, s, base);
    if (m <= 100) {
      mpfr_t minus_s;
      mpfr_init2(minus_s, kZetaPrecision);
      mpfr_neg(minus_s, s, MPFR_RNDN);
      for (double k = 0; k < m; ++k) {
        mpfr_set_d(base, q, MPFR_RNDN);
        mpfr_add_d(base, base, k, MPFR_RNDN);  // exact at 128 bits
        mpfr_pow(term, base, minus_s, MPFR_RNDN);
        mpfr_add(sum, sum, term, MPFR_RNDN);
      }
      mpfr_clear(minus_s);
    } else {
      mpfr_t low, high;
      mpfr_inits2(kZetaPrecision, low, high, static_cast<mpfr_ptr>(nullptr));
      mpfr_set_d(base, 1 - r, MPFR_RNDN);  // exact
      MpfrZetaOfPositive(low, s, base);
      mpfr_set_d(base, q, MPFR_RNDN);
      mpfr_ui_sub(base, 1, base, MPFR_RNDN);  // 1 - q, exact at 128 bits
      MpfrZetaOfPositive(high, s, base);
      mpfr_sub(low, low, high, MPFR_RNDN);
      if (!x_even) mpfr_neg(low, low, MPFR_RNDN);
      mpfr_add(sum, sum, low, MPFR_RNDN);
      mpfr_clears(low, high, static_cast<mpfr_ptr>(nullptr));
    }
    mpfr_set(out, sum, MPFR_RNDN);
  }
  mpfr_clears(s, base, term, sum, static_cast<mpfr_ptr>(nullptr));
}

void MpfrPolygamma(mpfr_ptr out, double n, double x) {
  if (std::isnan(n) || n < 0 || n != std::floor(n) || std::isinf(n)) return mpfr_set_nan(out);
  if (n == 0) {
    if (std::isnan(x) || (x <= 0 && x == std::floor(x))) return mpfr_set_nan(out);  // poles, -inf
    if (std::isinf(x)) return mpfr_set_inf(out, 1);
    mpfr_t value;
    mpfr_init2(value, kZetaPrecision);
    mpfr_set_d(value, x, MPFR_RNDN);
    mpfr_digamma(out, value, MPFR_RNDN);
    return mpfr_clear(value);
  }
  MpfrZeta(out, n + 1, x);
  mpfr_t factorial;
  mpfr_init2(factorial, kZetaPrecision);
  mpfr_fac_ui(factorial, static_cast<unsigned long>(n), MPFR_RNDN);
  mpfr_mul(out, out, factorial, MPFR_RNDN);
  if (std::fmod(n, 2.0) == 0) mpfr_neg(out, out, MPFR_RNDN);
  mpfr_clear(factorial);
}

double Zeta(double x, double q) { return accy::special::Zeta(x, q); }
double Polygamma(double n, double x) { return accy::special::Polygamma(n, x); }

// The sum of the magnitudes of the terms (times n! for polygamma), where terms of both signs
// cancel (q < 0); 0 elsewhere (the relative bound alone applies).
double TermScale(bool polygamma, double a, double b) {
  const double x = polygamma ? a + 1 : a;
  if (!(b < 0) || std::isinf(b) || (polygamma && a == 0)) return 0;
  const double r = b - std::floor(b);
  double scale = Zeta(x, r) + Zeta(x, 1 - r) - Zeta(x, 1 - b);
  if (polygamma) scale *= std::tgamma(a + 1);
  return std::isfinite(scale) ? scale : 0;
}

struct Binary {
  const char* name;  // for --functions
  const char* op;    // accy::ParseQualifiedOpKind
  double (*oracle)(double, double);
  void (*mpfr)(mpfr_ptr, double, double);
  double f32_bound, f64_bound;    // ulps (docs/numerics.md)
  double a_lo, a_hi, b_lo, b_hi;  // throughput inputs (a an integer for polygamma)
};

const Binary kBinaries[] = {
    {"zeta", "chlo.zeta", Zeta, MpfrZeta, 1, 8, 1.5, 10, 0.5, 20},
    {"polygamma", "chlo.polygamma", Polygamma, MpfrPolygamma, 1, 8, 0, 5, 0.5, 20},
};

bool IsPolygamma(const Binary& f) { return std::strcmp(f.name, "polygamma") == 0; }

// Outside the stated domain: polygamma with n > 1754, where the kernels' n! table ends (+inf,
// docs/numerics.md). Not scored. The sampled n still stop at 170, as when this check was
// written: n 171 .. 1754 (2026-12-07) are checked by tests/jit/zeta_test.cc only.
bool Outside(const Binary& f, double a) { return IsPolygamma(f) && a > 1754; }

// Sampled pairs (docs above), as double; the f32 sweep rounds them to f32.
void Sample(const Binary& f, std::mt19937_64& rng, bool f32, double& a, double& b) {
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  auto bits = [&]() {
    const uint64_t r = rng();
    if (f32) {
      float v;
      const uint32_t u = static_cast<uint32_t>(r);
      std::memcpy(&v, &u, sizeof v);
      return static_cast<double>(v);
    }
    double v;
    std::memcpy(&v, &r, sizeof v);
    return v;
  };
  const uint64_t kind = rng() % 16;
  if (!IsPolygamma(f)) {
    if (kind < 4) {
      a = bits(), b = bits();
    } else if (kind < 10) {
      a = 1 + std::exp2(uniform(-20, 7)), b = std::exp2(uniform(-20, 20));
    } else if (kind < 12) {
      a = static_cast<double>(2 + rng() % 39), b = -uniform(0, 60);
    } else {
      a = uniform(1, 10), b = uniform(0, 20);
    }
    return;
  }
  const double n = static_cast<double>(rng() % 21);
  if (kind < 2) {
    a = bits(), b = bits();
  } else if (kind < 12) {
    a = n, b = uniform(-20, 40);
  } else if (kind < 14) {
    a = n, b = std::exp2(uniform(-20, 20));
  } else if (kind < 15) {
    a = n, b = -uniform(20, 1e4);
  } else {
    a = static_cast<double>(21 + rng() % 150), b = uniform(0.1, 1000);
  }
}

// The bound for one input: f's, or digamma's for polygamma's n = 0 (4 / 10 ulp, absolute 1e-7
// (f32) / 4e-15 max(1, ln|x|) (f64) near its zeros); plus the cancellation allowance.
struct Bound {
  double ulps;
  double absolute;
};
Bound BoundFor(const Binary& f, bool f32, double a, double b) {
  if (IsPolygamma(f) && a == 0) {
    return f32 ? Bound{4, 1e-7} : Bound{10, 4e-15 * std::max(1.0, std::log(std::fabs(b)))};
  }
  const double ulps = f32 ? f.f32_bound : f.f64_bound;
  const double scale = TermScale(IsPolygamma(f), a, b);
  const double ulp = scale == 0 ? 0 : std::ldexp(1.0, std::ilogb(scale) - (f32 ? 23 : 52));
  return {ulps, ulps * ulp};
}

// main(a, b) = op(a, b) on n elements of `type`, at `threads` threads.
std::unique_ptr<accy::Executable> CompileBinary(const Binary& f, ElementType type, int64_t n,
                                                int threads) {
  return CompileOneOp(f.op, type, n, 2, threads);
}

struct PairWorst {
  double ulp = 0, a = 0, b = 0, got = 0, want = 0;
  int64_t failures = 0, by_absolute = 0;
  void Merge(const PairWorst& o) {
    if (o.ulp > ulp) ulp = o.ulp, a = o.a, b = o.b, got = o.got, want = o.want;
    failures += o.failures;
    by_absolute += o.by_absolute;
  }
  void Print(const char* what) const {
    std::printf("  %s: max %.3g ulp", what, ulp);
    if (ulp > 0) std::printf(" at (%a, %a) (got %.17g, true %.17g)", a, b, got, want);
    std::printf("; %lld beyond the bound%s; %lld more within the cancellation/absolute allowance\n",
                static_cast<long long>(failures), failures == 0 ? "" : "  FAIL",
                static_cast<long long>(by_absolute));
  }
};

// One result against the truth `want`: the worst case and the failures.
void Score(PairWorst& w, const Bound& bound, double a, double b, double got, double want,
           double ulp) {
  if (ulp > bound.ulps) {
    if (std::isfinite(want) && std::isfinite(got) && std::fabs(got - want) <= bound.absolute) {
      ++w.by_absolute;
      return;
    }
    ++w.failures;
  }
  if (ulp > w.ulp) w.ulp = ulp, w.a = a, w.b = b, w.got = got, w.want = want;
}

}  // namespace

const std::vector<std::string>& BinaryFunctionNames() {
  static const std::vector<std::string> names = {"zeta", "polygamma"};
  return names;
}

bool CheckBinaryFunction(const std::string& name, const RunOptions& options) {
  const Binary* found = nullptr;
  for (const Binary& f : kBinaries) {
    if (name == f.name) found = &f;
  }
  if (found == nullptr) return false;
  const Binary& f = *found;
  const int threads = options.threads;
  bool ok = true;
  std::printf("%s\n", f.op);
  // 1. The double oracle against MPFR on sampled f32 pairs.
  if (options.oracle_samples > 0) {
    const PairWorst all = ParallelWorst<PairWorst>(
        options.oracle_samples, threads, [&](int64_t begin, int64_t end, PairWorst& worst) {
          std::mt19937_64 rng(static_cast<uint64_t>(begin) + 11);
          mpfr_t truth;
          mpfr_init2(truth, kZetaPrecision);
          for (int64_t i = begin; i < end; ++i) {
            double a, b;
            Sample(f, rng, true, a, b);
            a = static_cast<float>(a), b = static_cast<float>(b);
            if (Outside(f, a)) continue;
            f.mpfr(truth, a, b);
            const double oracle = f.oracle(a, b);
            const double want = mpfr_get_d(truth, MPFR_RNDN);
            double err = mpfr_nan_p(truth) ? (std::isnan(oracle) ? 0 : INFINITY)
                                           : UlpError(oracle, want, 23, -126, INFINITY);
            // Where the allowance is absolute, the oracle must be 1000x inside it.
            const Bound bound = BoundFor(f, true, a, b);
            if (bound.absolute > 0 && std::fabs(oracle - want) <= bound.absolute * 1e-3) err = 0;
            if (err > worst.ulp) worst = {err, a, b, oracle, want, 0, 0};
          }
          mpfr_clear(truth);
        });
    const bool trusted = all.ulp <= 1.0 / 64;
    ok = ok && trusted;
    std::printf("  oracle vs MPFR, %lld sampled f32 pairs: max %.3g f32 ulp%s",
                static_cast<long long>(options.oracle_samples), all.ulp,
                trusted ? "" : "  ORACLE NOT TRUSTED");
    if (all.ulp > 0) std::printf(" (at (%a, %a): %.17g vs %.17g)", all.a, all.b, all.got, all.want);
    std::printf("\n");
  }
  // 2. f32: chunks of 2^24 sampled pairs, kernel vs oracle.
  if (options.f32_chunks > 0) {
    std::unique_ptr<accy::Executable> exe = CompileBinary(f, ElementType::kF32, kChunk, threads);
    accy::TensorType type = accy::TensorType::Create(ElementType::kF32, {kChunk}).value();
    std::vector<accy::Tensor> in = {accy::Tensor::Allocate(type).value(),
                                    accy::Tensor::Allocate(type).value()};
    std::vector<accy::Tensor> out = {accy::Tensor::Allocate(type).value()};
    PairWorst all;
    for (int c = 0; c < options.f32_chunks; ++c) {
      std::mt19937_64 rng(1000 + static_cast<uint64_t>(c));
      float* a = in[0].data_as<float>();
      float* b = in[1].data_as<float>();
      for (int64_t i = 0; i < kChunk; ++i) {
        double u, v;
        Sample(f, rng, true, u, v);
        a[i] = static_cast<float>(u), b[i] = static_cast<float>(v);
      }
      if (!exe->Run(in, out).ok()) std::exit(2);
      const float* y = out[0].data_as<float>();
      all.Merge(ParallelWorst<PairWorst>(kChunk, threads,
                                         [&](int64_t begin, int64_t end, PairWorst& worst) {
                                           for (int64_t i = begin; i < end; ++i) {
                                             if (Outside(f, a[i])) continue;
                                             const double want = f.oracle(a[i], b[i]);
                                             Score(worst, BoundFor(f, true, a[i], b[i]), a[i], b[i],
                                                   y[i], want, UlpError32(y[i], want));
                                           }
                                         }));
    }
    ok = ok && all.failures == 0;
    char what[160];
    std::snprintf(
        what, sizeof what, "f32, %lld sampled pairs (%d chunks of 2^24) vs the oracle (bound %g)",
        static_cast<long long>(options.f32_chunks) * kChunk, options.f32_chunks, f.f32_bound);
    all.Print(what);
  }
  // 3. Throughput at 1 thread against the oracle's scalar function, best of 3.
  if (options.throughput) {
    std::unique_ptr<accy::Executable> one = CompileBinary(f, ElementType::kF32, kChunk, 1);
    accy::TensorType type = accy::TensorType::Create(ElementType::kF32, {kChunk}).value();
    std::vector<accy::Tensor> in = {accy::Tensor::Allocate(type).value(),
                                    accy::Tensor::Allocate(type).value()};
    std::vector<accy::Tensor> out = {accy::Tensor::Allocate(type).value()};
    float* a = in[0].data_as<float>();
    float* b = in[1].data_as<float>();
    float* y = out[0].data_as<float>();
    std::mt19937_64 rng(7);
    for (int64_t i = 0; i < kChunk; ++i) {
      const double u = std::uniform_real_distribution<double>(f.a_lo, f.a_hi)(rng);
      a[i] = static_cast<float>(IsPolygamma(f) ? std::floor(u + 0.5) : u);
      b[i] = static_cast<float>(std::uniform_real_distribution<double>(f.b_lo, f.b_hi)(rng));
    }
    double jit_ns = INFINITY, scalar_ns = INFINITY;
    const int64_t scalar_count = kChunk / 16;  // the long double oracle is slow
    for (int rep = 0; rep < 4; ++rep) {        // the first of each is a warm-up
      auto start = std::chrono::steady_clock::now();
      if (!one->Run(in, out).ok()) std::exit(2);
      if (rep > 0) jit_ns = std::min(jit_ns, Seconds(start) * 1e9 / kChunk);
      start = std::chrono::steady_clock::now();
      for (int64_t i = 0; i < scalar_count; ++i) y[i] = static_cast<float>(f.oracle(a[i], b[i]));
      if (rep > 0) scalar_ns = std::min(scalar_ns, Seconds(start) * 1e9 / scalar_count);
    }
    std::printf(
        "  f32 throughput, 1 thread, a in [%g, %g], b in [%g, %g]: JIT %.2f ns/element, "
        "special_math (long double, scalar) %.2f ns/element (JIT %.1fx faster)\n",
        f.a_lo, f.a_hi, f.b_lo, f.b_hi, jit_ns, scalar_ns, scalar_ns / jit_ns);
  }
  // 4. f64: kernel vs MPFR on sampled pairs.
  if (options.f64_samples > 0) {
    const int64_t n = std::min<int64_t>(options.f64_samples, int64_t{1} << 20);
    std::unique_ptr<accy::Executable> exe = CompileBinary(f, ElementType::kF64, n, threads);
    accy::TensorType type = accy::TensorType::Create(ElementType::kF64, {n}).value();
    std::vector<accy::Tensor> in = {accy::Tensor::Allocate(type).value(),
                                    accy::Tensor::Allocate(type).value()};
    std::vector<accy::Tensor> out = {accy::Tensor::Allocate(type).value()};
    std::mt19937_64 rng(42);
    PairWorst all;
    for (int64_t done = 0; done < options.f64_samples; done += n) {
      double* a = in[0].data_as<double>();
      double* b = in[1].data_as<double>();
      for (int64_t i = 0; i < n; ++i) Sample(f, rng, false, a[i], b[i]);
      if (!exe->Run(in, out).ok()) std::exit(2);
      const double* y = out[0].data_as<double>();
      all.Merge(
          ParallelWorst<PairWorst>(n, threads, [&](int64_t begin, int64_t end, PairWorst& worst) {
            mpfr_t truth, diff;
            mpfr_inits2(kZetaPrecision, truth, diff, static_cast<mpfr_ptr>(nullptr));
            for (int64_t i = begin; i < end; ++i) {
              if (Outside(f, a[i])) continue;
              f.mpfr(truth, a[i], b[i]);
              Score(worst, BoundFor(f, false, a[i], b[i]), a[i], b[i], y[i],
                    mpfr_get_d(truth, MPFR_RNDN), UlpError64(y[i], truth, diff));
            }
            mpfr_clears(truth, diff, static_cast<mpfr_ptr>(nullptr));
          }));
    }
    ok = ok && all.failures == 0;
    char what[160];
    std::snprintf(what, sizeof what, "f64, %lld sampled pairs vs MPFR (bound %g)",
                  static_cast<long long>(options.f64_samples), f.f64_bound);
    all.Print(what);
  }
  std::fflush(stdout);
  return ok;
}

}  // namespace accy_ulp_check
