// accy-ulp-check: the accuracy of the JIT's special functions (issue 18; docs/numerics.md
// "CHLO"), as JIT kernels compute them, against a correctly rounded oracle. Not part of
// `make test`: `make ulp-check` (installs libmpfr-dev, builds and runs it; ULP_FLAGS picks
// functions and sample counts). For each function:
//   f32, every one of the 2^32 inputs: the kernel's result against a double-precision oracle
//     (glibc's double function, or src/util/special_math.h where glibc has none), its error
//     measured in ulps of f32 at the oracle's value (a double is ~2^-29 f32 ulp, so the measure
//     is exact to far below the bounds). An infinite or out-of-range true value must give the
//     infinity; NaN must give NaN.
//   The oracle itself, against MPFR at 96 bits on `--oracle-samples` random f32 inputs: its
//     largest error in f32 ulps must stay below 1/64 (else the f32 figures are not trusted and
//     the run fails).
//   f64, `--f64-samples` inputs (half random bit patterns, half uniform over the function's
//     interesting range): the kernel's result against MPFR, in ulps of f64.
//   Throughput: the f32 and the f64 kernel at 1 thread against the scalar function of the same
//     precision (glibc's `erff`, `tanf`, ... and `erf`, `tan`, ...; special_math's double
//     function where glibc has none), on the same 2^24 inputs uniform over the function's main
//     range, same run.
// The JIT's choice between SLEEF and libmvec follows ACCY_VECTOR_MATH (jit/sleef_functions.h),
// so the same run measures either (docs/ulp_check.md).
// zeta and polygamma, of two arguments, sample their f32 inputs instead (zeta_functions.cc).
// A result passes when its error is within the function's stated bound (docs/numerics.md), or
// within the stated absolute bound near the zeros of lgamma and digamma (counted apart, and left
// out of the reported maximum). Exit 0 when every
// checked function passes, 1 otherwise, 2 on a usage or engine error.
//
// usage: accy-ulp-check [--functions erf,lgamma,...] [--f32-chunks N (of 256, default all;
//                       fewer check every (256 / N)-th f32 input)]
//                       [--oracle-samples N (1000000)] [--f64-samples N (10000000)]
//                       [--throughput 0|1 (1)] [--threads T (all cores)]
#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "src/util/special_math.h"
#include "tools/ulp_check/ulp_check.h"

namespace {

using accy::ElementType;
using namespace accy_ulp_check;
using MpfrFn = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

// x -> erf_inv(x) to kPrecision bits: Newton's method on erf(t) - x from the double value.
int MpfrErfInv(mpfr_ptr out, mpfr_srcptr x, mpfr_rnd_t rnd) {
  const double y = mpfr_get_d(x, MPFR_RNDN);
  if (std::isnan(y) || std::fabs(y) > 1) return mpfr_set_nan(out), 0;
  if (std::fabs(y) == 1) return mpfr_set_inf(out, y > 0 ? 1 : -1), 0;
  mpfr_t t, e, step;
  mpfr_inits2(kPrecision, t, e, step, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(t, accy::special::ErfInv(y), MPFR_RNDN);
  for (int i = 0; i < 8; ++i) {  // quadratic convergence from ~53 bits
    // step = (erf(t) - x) * sqrt(pi) / 2 * exp(t^2)
    mpfr_erf(e, t, MPFR_RNDN);
    mpfr_sub(e, e, x, MPFR_RNDN);
    mpfr_sqr(step, t, MPFR_RNDN);
    mpfr_exp(step, step, MPFR_RNDN);
    mpfr_mul(e, e, step, MPFR_RNDN);
    mpfr_const_pi(step, MPFR_RNDN);
    mpfr_sqrt(step, step, MPFR_RNDN);
    mpfr_mul(e, e, step, MPFR_RNDN);
    mpfr_div_2ui(e, e, 1, MPFR_RNDN);
    mpfr_sub(t, t, e, MPFR_RNDN);
  }
  const int inexact = mpfr_set(out, t, rnd);
  mpfr_clears(t, e, step, static_cast<mpfr_ptr>(nullptr));
  return inexact;
}

// log|Gamma(x)|.
int MpfrLgamma(mpfr_ptr out, mpfr_srcptr x, mpfr_rnd_t rnd) {
  int sign = 0;
  return mpfr_lgamma(out, &sign, x, rnd);
}

// exp(-|x|) I1(x): the power series sum (x/2)^(2k+1) / (k! (k+1)!) (positive terms) for
// |x| <= 2000, else the asymptotic series exp(-x) I1(x) ~ (2 pi x)^-1/2 sum_k (-1)^k a_k / x^k,
// a_k = prod_{j=1..k} (4 - (2j-1)^2) / (k! 8^k), whose first 12 terms leave an error far below
// 2^-100 there.
int MpfrBesselI1e(mpfr_ptr out, mpfr_srcptr x, mpfr_rnd_t rnd) {
  if (mpfr_nan_p(x)) return mpfr_set_nan(out), 0;
  if (mpfr_inf_p(x)) return mpfr_set_zero(out, mpfr_sgn(x)), 0;
  if (mpfr_zero_p(x)) return mpfr_set(out, x, rnd);
  mpfr_t ax, sum, term, half, scale;
  mpfr_inits2(kPrecision + 64, ax, sum, term, half, scale, static_cast<mpfr_ptr>(nullptr));
  mpfr_abs(ax, x, MPFR_RNDN);
  if (mpfr_cmp_ui(ax, 2000) <= 0) {
    mpfr_div_2ui(half, ax, 1, MPFR_RNDN);  // x/2
    mpfr_set(term, half, MPFR_RNDN);       // k = 0: (x/2) / (0! 1!)
    mpfr_set(sum, term, MPFR_RNDN);
    mpfr_sqr(scale, half, MPFR_RNDN);      // (x/2)^2
    for (unsigned long k = 1;; ++k) {
      mpfr_mul(term, term, scale, MPFR_RNDN);
      mpfr_div_ui(term, term, k * (k + 1), MPFR_RNDN);
      mpfr_add(sum, sum, term, MPFR_RNDN);
      // Past the peak, stop when the term no longer changes the sum's top 2*precision bits.
      if (k > 2 * 2000 || (mpfr_cmp(term, sum) < 0 &&
                           mpfr_get_exp(sum) - mpfr_get_exp(term) > 2 * (kPrecision + 64))) {
        break;
      }
    }
    mpfr_neg(scale, ax, MPFR_RNDN);
    mpfr_exp(scale, scale, MPFR_RNDN);
    mpfr_mul(sum, sum, scale, MPFR_RNDN);
  } else {
    mpfr_set_ui(sum, 1, MPFR_RNDN);
    mpfr_set_ui(term, 1, MPFR_RNDN);
    for (long k = 1; k <= 12; ++k) {
      mpfr_mul_si(term, term, 4 - (2 * k - 1) * (2 * k - 1), MPFR_RNDN);
      mpfr_div_si(term, term, -8 * k, MPFR_RNDN);
      mpfr_div(term, term, ax, MPFR_RNDN);
      mpfr_add(sum, sum, term, MPFR_RNDN);
    }
    mpfr_const_pi(scale, MPFR_RNDN);
    mpfr_mul(scale, scale, ax, MPFR_RNDN);
    mpfr_mul_2ui(scale, scale, 1, MPFR_RNDN);
    mpfr_rec_sqrt(scale, scale, MPFR_RNDN);
    mpfr_mul(sum, sum, scale, MPFR_RNDN);
  }
  if (mpfr_sgn(x) < 0) mpfr_neg(sum, sum, MPFR_RNDN);
  const int inexact = mpfr_set(out, sum, rnd);
  mpfr_clears(ax, sum, term, half, scale, static_cast<mpfr_ptr>(nullptr));
  return inexact;
}

struct Special {
  const char* op;                // StableHLO/CHLO op name (accy::ParseOpKind)
  double (*oracle)(double);      // double-precision reference for the f32 sweep
  float (*scalar_f32)(float);    // glibc's f32 function (null: the oracle, in double)
  MpfrFn mpfr;                   // correctly rounded reference
  double f32_bound, f64_bound;   // stated bounds, ulps (docs/numerics.md)
  double f32_per_abs_x;          // f32 bound's part growing with |x|: f32_bound + this * |x|
  double absolute;               // f32: also accepted, |error| <= this (near zeros); 0 = none
  double absolute64;             // f64: the same, times max(1, ln|x|) (see Specials)
  double lo, hi;                 // the f64 sweep's uniform half
};

double Lgamma(double x) { return accy::special::Lgamma(x); }

const std::vector<Special>& Specials() {
  static const std::vector<Special> specials = {
      {"chlo.erf", [](double x) { return std::erf(x); }, erff, mpfr_erf, 3, 3, 0, 0, 0, -6, 6},
      {"chlo.erfc", [](double x) { return std::erfc(x); }, erfcf, mpfr_erfc, 3, 3, 0, 0, 0, -6, 30},
      {"chlo.erf_inv", accy::special::ErfInv, nullptr, MpfrErfInv, 3, 3, 0, 0, 0, -1, 1},
      // Absolute near lgamma's zeros (1, 2 and one or two in each negative unit interval); f64:
      // SLEEF's documented max(1 ulp, 1e-15) for x < 0.
      {"chlo.lgamma", Lgamma, lgammaf, MpfrLgamma, 3, 3, 0, 1e-7, 1e-15, -30, 30},
      // Absolute near digamma's zeros (1.4616... and one in each negative unit interval): the
      // recurrence's error is absolute, ~1e-18 in the long double function, and for x < 0 the
      // reflection subtracts pi / tan(pi r) from psi(1 - x) ~ ln|x|, so the allowance grows
      // with ln|x| (docs/numerics.md).
      {"chlo.digamma", accy::special::Digamma, nullptr, mpfr_digamma, 3, 3, 0, 1e-7, 1e-16, -30,
       30},
      {"chlo.bessel_i1e", accy::special::BesselI1e, nullptr, MpfrBesselI1e, 3, 3, 0, 0, 0, -60, 60},
      {"stablehlo.tan", [](double x) { return std::tan(x); }, tanf, mpfr_tan, 3, 3, 0, 0, 0, -10,
       10},
      // f32 sinh and cosh are CHLO's decomposition exp(x + log 1/2) +- exp(-x + log 1/2), as XLA
      // computes them and the conformance suite expects: x + log 1/2 rounds by up to
      // |x| 2^-24 relative, which exp turns into up to 2|x| ulp of the result.
      {"chlo.sinh", [](double x) { return std::sinh(x); }, sinhf, mpfr_sinh, 4, 3, 2, 0, 0, -90,
       90},
      {"chlo.cosh", [](double x) { return std::cosh(x); }, coshf, mpfr_cosh, 4, 3, 2, 0, 0, -90,
       90},
      {"chlo.asin", [](double x) { return std::asin(x); }, asinf, mpfr_asin, 3, 3, 0, 0, 0, -1, 1},
      {"chlo.acos", [](double x) { return std::acos(x); }, acosf, mpfr_acos, 3, 3, 0, 0, 0, -1, 1},
      {"chlo.atan", [](double x) { return std::atan(x); }, atanf, mpfr_atan, 3, 3, 0, 0, 0, -20,
       20},
      {"chlo.asinh", [](double x) { return std::asinh(x); }, asinhf, mpfr_asinh, 3, 3, 0, 0, 0, -20,
       20},
      {"chlo.acosh", [](double x) { return std::acosh(x); }, acoshf, mpfr_acosh, 3, 3, 0, 0, 0, 1,
       40},
      {"chlo.atanh", [](double x) { return std::atanh(x); }, atanhf, mpfr_atanh, 3, 3, 0, 0, 0, -1,
       1},
  };
  return specials;
}

// The function `main(x: tensor<n x type>) = op(x)`, compiled at `threads` threads.
std::unique_ptr<accy::Executable> Compile(const Special& s, ElementType type, int64_t n, int threads) {
  return CompileOneOp(s.op, type, n, 1, threads);
}

// The kernel of `type` (f32 or f64) at 1 thread against the scalar function of that precision
// (glibc's f32 function, or the double oracle: glibc's double function or special_math's), on
// 2^24 inputs uniform over [s.lo, s.hi], best of 3 runs each after a warm-up.
template <typename T>
void TimeAgainstScalar(const Special& s, ElementType type) {
  std::unique_ptr<accy::Executable> one = Compile(s, type, kChunk, 1);
  accy::TensorType tensor_type = accy::TensorType::Create(type, {kChunk}).value();
  std::vector<accy::Tensor> in = {accy::Tensor::Allocate(tensor_type).value()};
  std::vector<accy::Tensor> out = {accy::Tensor::Allocate(tensor_type).value()};
  T* x = in[0].data_as<T>();
  T* y = out[0].data_as<T>();
  std::mt19937 rng(7);
  std::uniform_real_distribution<T> uniform(static_cast<T>(s.lo), static_cast<T>(s.hi));
  for (int64_t i = 0; i < kChunk; ++i) x[i] = uniform(rng);
  const bool f32 = type == ElementType::kF32;
  const bool glibc_f32 = f32 && s.scalar_f32 != nullptr;
  double jit_ns = INFINITY, scalar_ns = INFINITY;
  for (int rep = 0; rep < 4; ++rep) {  // the first of each is a warm-up
    auto start = std::chrono::steady_clock::now();
    if (!one->Run(in, out).ok()) std::exit(2);
    if (rep > 0) jit_ns = std::min(jit_ns, Seconds(start) * 1e9 / kChunk);
    start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < kChunk; ++i) {
      if constexpr (std::is_same_v<T, float>) {
        y[i] = glibc_f32 ? s.scalar_f32(x[i]) : static_cast<float>(s.oracle(x[i]));
      } else {
        y[i] = s.oracle(x[i]);
      }
    }
    if (rep > 0) scalar_ns = std::min(scalar_ns, Seconds(start) * 1e9 / kChunk);
  }
  const char* scalar = glibc_f32                 ? "glibc scalar f32"
                       : s.scalar_f32 != nullptr ? "glibc scalar double"
                                                 : "special_math double (scalar)";
  std::printf(
      "  %s throughput, 1 thread, uniform on [%g, %g]: JIT %.2f ns/element, %s %.2f "
      "ns/element (JIT %.1fx faster)\n",
      f32 ? "f32" : "f64", s.lo, s.hi, jit_ns, scalar, scalar_ns, scalar_ns / jit_ns);
}

void ReportThroughput(const Special& s, ElementType type) {
  if (type == ElementType::kF32) {
    TimeAgainstScalar<float>(s, type);
  } else {
    TimeAgainstScalar<double>(s, type);
  }
}

bool Check(const Special& s, int chunks, int64_t oracle_samples, int64_t f64_samples, int threads,
           bool throughput) {
  bool ok = true;
  std::printf("%s\n", s.op);
  // 1. The oracle against MPFR on random f32 inputs.
  if (oracle_samples > 0) {
    const Worst all = ParallelWorst<Worst>(
        oracle_samples, threads, [&](int64_t begin, int64_t end, Worst& worst) {
          std::mt19937_64 rng(static_cast<uint64_t>(begin) + 1);
          mpfr_t x, y;
          mpfr_inits2(kPrecision, x, y, static_cast<mpfr_ptr>(nullptr));
          for (int64_t i = begin; i < end; ++i) {
            const uint32_t bits = static_cast<uint32_t>(rng());
            float v;
            std::memcpy(&v, &bits, sizeof v);
            if (std::isnan(v)) continue;
            mpfr_set_flt(x, v, MPFR_RNDN);
            s.mpfr(y, x, MPFR_RNDN);
            const double oracle = s.oracle(v);
            // The oracle's distance from the true value, in f32 ulps (at the true value).
            const double truth = mpfr_get_d(y, MPFR_RNDN);
            double err = mpfr_nan_p(y) ? (std::isnan(oracle) ? 0 : INFINITY)
                                       : UlpError(oracle, truth, 23, -126, INFINITY);
            // Near a zero the oracle must be 1000x inside the absolute allowance it is used for.
            if (s.absolute > 0 && std::fabs(oracle - truth) <= s.absolute * 1e-3) err = 0;
            worst.Note(err, v, oracle, truth);
          }
          mpfr_clears(x, y, static_cast<mpfr_ptr>(nullptr));
        });
    const bool trusted = all.ulp <= 1.0 / 64;
    ok = ok && trusted;
    std::printf("  oracle vs MPFR, %lld random f32 inputs: max %.3g f32 ulp%s", static_cast<long long>(oracle_samples),
                all.ulp, trusted ? "" : "  ORACLE NOT TRUSTED");
    if (all.ulp > 0) std::printf(" (at %a: %.17g vs %.17g)", all.input, all.got, all.want);
    std::printf("\n");
  }
  // 2. Every f32 input, kernel vs oracle, in 256 runs of 2^24; with `chunks` < 256 runs, every
  // (256 / chunks)-th input (bit pattern) instead, so a partial check still spans every binade.
  if (chunks > 0) {
    std::unique_ptr<accy::Executable> exe = Compile(s, ElementType::kF32, kChunk, threads);
    accy::TensorType type = accy::TensorType::Create(ElementType::kF32, {kChunk}).value();
    std::vector<accy::Tensor> in = {accy::Tensor::Allocate(type).value()};
    std::vector<accy::Tensor> out = {accy::Tensor::Allocate(type).value()};
    Worst all;
    for (int c = 0; c < chunks; ++c) {
      const uint32_t stride = static_cast<uint32_t>(256 / chunks);
      uint32_t* bits = static_cast<uint32_t*>(in[0].data());
      for (int64_t i = 0; i < kChunk; ++i) {
        // Inputs c 2^24 + i, spread by the stride; the offset c % stride varies the low bits.
        const uint32_t index =
            static_cast<uint32_t>(c) * static_cast<uint32_t>(kChunk) + static_cast<uint32_t>(i);
        bits[i] = index * stride + static_cast<uint32_t>(c) % stride;
      }
      if (!exe->Run(in, out).ok()) std::exit(2);
      const float* x = in[0].data_as<float>();
      const float* y = out[0].data_as<float>();
      all.Merge(
          ParallelWorst<Worst>(kChunk, threads, [&](int64_t begin, int64_t end, Worst& worst) {
            for (int64_t i = begin; i < end; ++i) {
              const double want = s.oracle(x[i]);
              const double err = UlpError32(y[i], want);
              if (err > s.f32_bound + s.f32_per_abs_x * std::fabs(x[i])) {
                if (s.absolute > 0 && std::fabs(y[i] - want) <= s.absolute) {
                  ++worst.by_absolute;
                  continue;
                }
                ++worst.failures;
              }
              worst.Note(err, x[i], y[i], want);
            }
          }));
    }
    const bool pass = all.failures == 0;
    ok = ok && pass;
    std::printf("  f32, %lld inputs (%s): max %.3g ulp (bound %g",
                static_cast<long long>(chunks) * kChunk,
                chunks == 256 ? "all" : ("every " + std::to_string(256 / chunks) + "th").c_str(),
                all.ulp, s.f32_bound);
    if (s.f32_per_abs_x > 0) std::printf(" + %g |x|", s.f32_per_abs_x);
    std::printf(")");
    if (all.ulp > 0) std::printf(" at %a (got %a, true %.17g)", all.input, all.got, all.want);
    std::printf("; %lld beyond the bound%s", static_cast<long long>(all.failures), pass ? "" : "  FAIL");
    if (s.absolute > 0) {
      std::printf("; %lld more within the absolute %g", static_cast<long long>(all.by_absolute),
                  s.absolute);
    }
    std::printf("\n");
  }
  // 3. Throughput: the kernel at 1 thread against glibc's scalar function, on 2^24 inputs
  // uniform over the function's main range (not special values, which libmvec hands to its
  // scalar fallback), best of 3 each; f32, then f64 against the double function.
  if (throughput) {
    ReportThroughput(s, ElementType::kF32);
    ReportThroughput(s, ElementType::kF64);
  }
  // 4. f64: kernel vs MPFR on f64_samples inputs.
  if (f64_samples > 0) {
    const int64_t n = std::min<int64_t>(f64_samples, int64_t{1} << 20);
    std::unique_ptr<accy::Executable> exe = Compile(s, ElementType::kF64, n, threads);
    accy::TensorType type = accy::TensorType::Create(ElementType::kF64, {n}).value();
    std::vector<accy::Tensor> in = {accy::Tensor::Allocate(type).value()};
    std::vector<accy::Tensor> out = {accy::Tensor::Allocate(type).value()};
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> uniform(s.lo, s.hi);
    Worst all;
    for (int64_t done = 0; done < f64_samples; done += n) {
      double* x = in[0].data_as<double>();
      for (int64_t i = 0; i < n; ++i) {
        if (i % 2 == 0) {
          const uint64_t bits = rng();
          std::memcpy(&x[i], &bits, sizeof bits);
        } else {
          x[i] = uniform(rng);
        }
      }
      if (!exe->Run(in, out).ok()) std::exit(2);
      const double* y = out[0].data_as<double>();
      all.Merge(ParallelWorst<Worst>(n, threads, [&](int64_t begin, int64_t end, Worst& worst) {
        mpfr_t mx, my, diff;
        mpfr_inits2(kPrecision, mx, my, diff, static_cast<mpfr_ptr>(nullptr));
        for (int64_t i = begin; i < end; ++i) {
          if (std::isnan(x[i])) continue;
          mpfr_set_d(mx, x[i], MPFR_RNDN);
          s.mpfr(my, mx, MPFR_RNDN);
          const double err = UlpError64(y[i], my, diff);
          if (err > s.f64_bound && s.absolute64 > 0 &&
              std::fabs(y[i] - mpfr_get_d(my, MPFR_RNDN)) <=
                  s.absolute64 * std::max(1.0, std::log(std::fabs(x[i])))) {
            ++worst.by_absolute;
            continue;
          }
          if (err > s.f64_bound) ++worst.failures;
          worst.Note(err, x[i], y[i], mpfr_get_d(my, MPFR_RNDN));
        }
        mpfr_clears(mx, my, diff, static_cast<mpfr_ptr>(nullptr));
      }));
    }
    const bool pass = all.failures == 0;
    ok = ok && pass;
    std::printf("  f64, %lld inputs vs MPFR: max %.3g ulp (bound %g)", static_cast<long long>(f64_samples), all.ulp,
                s.f64_bound);
    if (all.ulp > 0) std::printf(" at %a (got %.17g, true %.17g)", all.input, all.got, all.want);
    std::printf("; %lld beyond the bound%s", static_cast<long long>(all.failures),
                pass ? "" : "  FAIL");
    if (s.absolute64 > 0) {
      std::printf("; %lld more within the absolute %g max(1, ln|x|)",
                  static_cast<long long>(all.by_absolute), s.absolute64);
    }
    std::printf("\n");
  }
  std::fflush(stdout);
  return ok;
}

int Usage(const char* why) {
  std::fprintf(stderr,
               "accy-ulp-check: %s\nusage: accy-ulp-check [--functions erf,lgamma,...] [--f32-chunks N]"
               " [--oracle-samples N] [--f64-samples N] [--throughput 0|1] [--threads T]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> selected;
  int chunks = 256;
  int64_t oracle_samples = 1000000, f64_samples = 10000000;
  bool throughput = true;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return Usage(("missing the value of " + flag).c_str());
    const std::string value = argv[++i];
    if (flag == "--functions") {
      for (size_t at = 0; at <= value.size();) {
        const size_t comma = std::min(value.find(',', at), value.size());
        selected.push_back(value.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (flag == "--f32-chunks") {
      chunks = std::atoi(value.c_str());
      if (chunks < 0 || chunks > 256 || (chunks > 0 && 256 % chunks != 0)) {
        return Usage("--f32-chunks takes 0 or a divisor of 256");
      }
    } else if (flag == "--oracle-samples") {
      oracle_samples = std::atoll(value.c_str());
    } else if (flag == "--f64-samples") {
      f64_samples = std::atoll(value.c_str());
    } else if (flag == "--throughput") {
      if (value != "0" && value != "1") return Usage("--throughput takes 0 or 1");
      throughput = value == "1";
    } else if (flag == "--threads") {
      threads = std::atoi(value.c_str());
      if (threads < 1) return Usage("--threads takes a positive count");
    } else {
      return Usage(("unknown flag " + flag).c_str());
    }
  }
  if (oracle_samples < 0 || f64_samples < 0) return Usage("sample counts cannot be negative");
  auto wanted = [&](const std::string& name) {
    return selected.empty() || std::find(selected.begin(), selected.end(), name) != selected.end();
  };
  bool ok = true;
  int checked = 0;
  for (const Special& s : Specials()) {
    std::string name = s.op;
    name = name.substr(name.find('.') + 1);
    if (!wanted(name)) continue;
    ok = Check(s, chunks, oracle_samples, f64_samples, threads, throughput) && ok;
    ++checked;
  }
  RunOptions options;
  options.f32_chunks = chunks;
  options.oracle_samples = oracle_samples;
  options.f64_samples = f64_samples;
  options.throughput = throughput;
  options.threads = threads;
  for (const std::string& name : BinaryFunctionNames()) {
    if (!wanted(name)) continue;
    ok = CheckBinaryFunction(name, options) && ok;
    ++checked;
  }
  if (checked == 0) return Usage("no function selected (names: erf, erfc, erf_inv, lgamma, digamma, bessel_i1e, "
                                 "tan, sinh, cosh, asin, acos, atan, asinh, acosh, atanh, zeta, polygamma)");
  std::printf("%s\n", ok ? "all checked functions within their bounds" : "FAILED");
  return ok ? 0 : 1;
}
