// Internal to tools/ulp_check: what the accuracy checks of accy-ulp-check share (the unary
// functions of special_functions.cc, the two-argument zeta and polygamma of zeta_functions.cc):
// ulp distances against a double or an MPFR value, the thread-split check loop and the worst
// case it finds, compiling the one-op function under test, and the two-argument checks' entry
// point. Header-only helpers; not thread-safe
// beyond ParallelWorst's own use (each thread keeps its own Worst).
#ifndef ACCY_TOOLS_ULP_CHECK_ULP_CHECK_H_
#define ACCY_TOOLS_ULP_CHECK_ULP_CHECK_H_

#include <mpfr.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"

namespace accy_ulp_check {

// Bits of the MPFR values: 96 leaves an f64 result's error measured to ~2^-40 ulp.
inline constexpr mpfr_prec_t kPrecision = 96;
inline constexpr int64_t kChunk = int64_t{1} << 24;

// Distance of `got` from the true value `want` in ulps of a format with `mantissa` explicit
// bits and `min_exponent`, where true values from `overflow_threshold` up round to infinity:
// infinite when the kinds differ (NaN, infinity).
inline double UlpError(double got, double want, int mantissa, int min_exponent,
                       double overflow_threshold) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(want) || std::fabs(want) >= overflow_threshold) {
    return std::isinf(got) && std::signbit(got) == std::signbit(want) ? 0 : INFINITY;
  }
  if (!std::isfinite(got)) return INFINITY;
  const int exponent = want == 0 ? min_exponent : std::max(std::ilogb(want), min_exponent);
  return std::fabs(got - want) / std::ldexp(1.0, exponent - mantissa);
}
inline double UlpError32(float got, double want) {
  // f32 rounds to infinity from FLT_MAX + half an ulp (0x1.ffffffp127).
  return UlpError(got, want, 23, -126, 0x1.ffffffp127);
}

// Error of double `got` against MPFR value `want`, in f64 ulps (computed at kPrecision bits in
// `scratch`, the caller's, so the sample loop allocates nothing).
inline double UlpError64(double got, mpfr_srcptr want, mpfr_ptr scratch) {
  if (mpfr_nan_p(want)) return std::isnan(got) ? 0 : INFINITY;
  const double rounded = mpfr_get_d(want, MPFR_RNDN);
  if (std::isinf(rounded))
    return std::isinf(got) && std::signbit(got) == std::signbit(rounded) ? 0 : INFINITY;
  if (!std::isfinite(got)) return INFINITY;
  mpfr_set_d(scratch, got, MPFR_RNDN);
  mpfr_sub(scratch, scratch, want, MPFR_RNDN);
  const double d = std::fabs(mpfr_get_d(scratch, MPFR_RNDN));
  const int exponent = rounded == 0 ? -1022 : std::max(std::ilogb(rounded), -1022);
  return d / std::ldexp(1.0, exponent - 52);
}

struct Worst {
  double ulp = 0;
  double input = 0;
  double got = 0, want = 0;
  int64_t failures = 0;
  int64_t by_absolute = 0;  // beyond the ulp bound but within the absolute allowance
  // Keeps (ulp, input, got, want) when it is the worst so far.
  void Note(double u, double x, double g, double w) {
    if (u > ulp) ulp = u, input = x, got = g, want = w;
  }
  void Merge(const Worst& o) {
    if (o.ulp > ulp) ulp = o.ulp, input = o.input, got = o.got, want = o.want;
    failures += o.failures;
    by_absolute += o.by_absolute;
  }
};

// The check loop every accuracy check shares: score(begin, end, worst) over [0, n) split across
// `threads` std::threads, each scoring into its own W (Worst, or a type with the same Merge),
// merged in thread order once all have finished.
template <typename W, typename Score>
W ParallelWorst(int64_t n, int threads, const Score& score) {
  std::vector<W> worst(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back(
        [&, t] { score(n * t / threads, n * (t + 1) / threads, worst[static_cast<size_t>(t)]); });
  }
  for (std::thread& thread : pool) thread.join();
  W all;
  for (const W& w : worst) all.Merge(w);
  return all;
}

inline double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The function `main(x0, ..., x{arity-1}: tensor<n x type>) = op(x0, ...)` (op a qualified
// name such as "chlo.zeta"), compiled at `threads` threads with a fixed team. Exits the
// process with status 2, naming the op, when it does not parse, build or compile.
inline std::unique_ptr<accy::Executable> CompileOneOp(const char* op, accy::ElementType type,
                                                      int64_t n, int arity, int threads) {
  accy::Builder builder("ulp_check");
  const accy::TensorType t = builder.Type(type, {n}).value();
  accy::FunctionBuilder f =
      builder.BeginFunction("main", std::vector<accy::TensorType>(arity, t), {t}).value();
  accy::StatusOr<accy::OpKind> kind = accy::ParseQualifiedOpKind(op);
  if (!kind.ok()) {
    std::fprintf(stderr, "accy-ulp-check: %s\n", std::string(kind.status().message()).c_str());
    std::exit(2);
  }
  std::vector<accy::Value*> operands;
  for (int i = 0; i < arity; ++i) operands.push_back(f.Parameter(i));
  accy::StatusOr<accy::Operation*> y = f.CreateOp(*kind, operands, {t});
  if (!y.ok() || !f.Return({(*y)->result()}).ok()) std::exit(2);
  std::unique_ptr<accy::Module> module = builder.Finish().value();
  accy::EngineOptions options;
  options.num_threads = threads;
  options.reduce_threads_under_load = false;
  std::unique_ptr<accy::Engine> engine = accy::Engine::Create(options).value();
  accy::StatusOr<std::unique_ptr<accy::Executable>> exe = engine->Compile(*module);
  if (!exe.ok()) {
    std::fprintf(stderr, "accy-ulp-check: %s: %s\n", op,
                 std::string(exe.status().message()).c_str());
    std::exit(2);
  }
  return *std::move(exe);
}

// Sample counts and threads of one run (the command line's flags).
struct RunOptions {
  int f32_chunks = 256;              // f32 inputs in chunks of kChunk (of 256 for the unary ones)
  int64_t oracle_samples = 1000000;  // the double oracle against MPFR
  int64_t f64_samples = 10000000;    // the f64 kernel against MPFR
  bool throughput = true;
  int threads = 1;
};

// The two-argument functions (zeta, polygamma; zeta_functions.cc): the names it checks, and the
// check of `name` (one of them) with `options`. True when within the stated bounds.
const std::vector<std::string>& BinaryFunctionNames();
bool CheckBinaryFunction(const std::string& name, const RunOptions& options);

}  // namespace accy_ulp_check

#endif  // ACCY_TOOLS_ULP_CHECK_ULP_CHECK_H_
