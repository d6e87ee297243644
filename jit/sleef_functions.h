// Internal to jit/: SLEEF 3.5 (Debian libsleef-dev, Boost Software License 1.0), the vector math
// library the JIT calls for the CHLO special functions where it measured more accurate or faster
// than glibc's libmvec and accy's own kernels (docs/ulp_check.md "SLEEF against libmvec").
// Owns the table of the functions that may come from SLEEF, the names of their scalar and
// vector variants, and the measurement switch ACCY_VECTOR_MATH (read once). Declares no LLVM
// headers; thread-safe.
//
// Bit-identical lanes: SLEEF's FMA variants (`purecfma` scalar, `avx2128`, `avx2`, `avx512f`)
// are one algorithm with the same operations, as are its non-FMA ones (`purec`, `sse2`), so the
// vectorized loop body and its scalar tail give the same bits. Kernels call the FMA scalar name;
// a target without FMA (ACCY_MAX_ISA=x86-64) gets the `purec` name instead (jit_compiler.cc).
#ifndef ACCY_JIT_SLEEF_FUNCTIONS_H_
#define ACCY_JIT_SLEEF_FUNCTIONS_H_

#include <span>
#include <string>
#include <string_view>

#include "accy/status.h"

namespace accy::jit {

// One SLEEF function: the libm name of its double version ("sinh"), SLEEF's accuracy suffix
// ("u10": 1.0 ulp, "u15": 1.5 ulp, SLEEF's documented bounds), and whether the JIT takes the
// f32 / f64 op from SLEEF by default (the measured choice; docs/ulp_check.md).
struct SleefFunction {
  const char* name;
  const char* accuracy;
  bool default_f32;
  bool default_f64;
};

// Every function the JIT may take from SLEEF (the compiler maps each one's scalar name onto its
// vector variants for the target's widths).
std::span<const SleefFunction> SleefFunctions();

// The SLEEF function computing libm function `name` at f32 (`is_float`) or f64 under the
// process's choice, or nullptr when the JIT computes it otherwise. ACCY_VECTOR_MATH (read once,
// for measurements: docs/ulp_check.md) chooses: unset or `default` the table's defaults, `sleef`
// every function SLEEF has, `libmvec` none (libmvec and accy's own kernels, as before SLEEF).
// Errors: kInvalidArgument naming the variable for any other value.
StatusOr<const SleefFunction*> SleefFunctionFor(std::string_view name, bool is_float);

// OK when ACCY_VECTOR_MATH is unset or one of default, sleef, libmvec; else the error
// SleefFunctionFor gives (kInvalidArgument naming the variable and the value). Engine::Create
// calls it, so a bad value fails every program, not only those with a SLEEF-mapped function.
Status CheckVectorMathChoice();

// The scalar symbol of `function` at f32 or f64: "Sleef_sinhf1_u10purecfma" (`fma`) or
// "Sleef_sinhf1_u10purec".
std::string SleefScalarSymbol(const SleefFunction& function, bool is_float, bool fma);

// The vector symbol with `lanes` lanes in SLEEF's variant `isa` ("avx512f", "avx2", "avx2128",
// "sse2"): "Sleef_sinhf16_u10avx512f".
std::string SleefVectorSymbol(const SleefFunction& function, bool is_float, int lanes,
                              std::string_view isa);

// The shared library the JIT resolves the symbols from (SLEEF's soname).
inline constexpr char kSleefLibrary[] = "libsleef.so.3";

}  // namespace accy::jit

#endif  // ACCY_JIT_SLEEF_FUNCTIONS_H_
