// SLEEF's function table and symbol names (sleef_functions.h).
#include "jit/sleef_functions.h"

#include <cstdlib>
#include <iterator>

#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

// The defaults follow the measurements in docs/ulp_check.md ("SLEEF against libmvec").
// clang-format off
constexpr SleefFunction kSleefFunctions[] = {
    // name    accuracy  f32    f64
    {"tan",    "u10",    false, true},
    {"asin",   "u10",    false, false},
    {"acos",   "u10",    false, false},
    {"atan",   "u10",    false, false},
    {"sinh",   "u10",    false, false},
    {"cosh",   "u10",    false, false},
    {"asinh",  "u10",    false, false},
    {"acosh",  "u10",    false, false},
    {"atanh",  "u10",    false, false},
    {"erf",    "u10",    false, false},
    {"erfc",   "u15",    false, false},
    {"lgamma", "u10",    false, true},
};
// clang-format on

enum class Choice { kDefault, kSleef, kLibmvec, kBad };

Choice ProcessChoice() {
  static const Choice choice = [] {
    const char* env = std::getenv("ACCY_VECTOR_MATH");
    if (env == nullptr) return Choice::kDefault;
    const std::string_view value = env;
    if (value.empty() || value == "default") return Choice::kDefault;
    if (value == "sleef") return Choice::kSleef;
    if (value == "libmvec") return Choice::kLibmvec;
    return Choice::kBad;
  }();
  return choice;
}

}  // namespace

std::span<const SleefFunction> SleefFunctions() { return kSleefFunctions; }

Status CheckVectorMathChoice() {
  if (ProcessChoice() != Choice::kBad) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat("jit: ACCY_VECTOR_MATH='",
                                           std::getenv("ACCY_VECTOR_MATH"),
                                           "' is not one of default, sleef, libmvec"));
}

StatusOr<const SleefFunction*> SleefFunctionFor(std::string_view name, bool is_float) {
  const Choice choice = ProcessChoice();
  ACCY_RETURN_IF_ERROR(CheckVectorMathChoice());
  for (const SleefFunction& function : kSleefFunctions) {
    if (name != function.name) continue;
    if (choice == Choice::kSleef) return &function;
    if (choice == Choice::kLibmvec) return nullptr;
    return (is_float ? function.default_f32 : function.default_f64) ? &function : nullptr;
  }
  return nullptr;
}

std::string SleefScalarSymbol(const SleefFunction& function, bool is_float, bool fma) {
  return StrCat("Sleef_", function.name, is_float ? "f1_" : "d1_", function.accuracy,
                fma ? "purecfma" : "purec");
}

std::string SleefVectorSymbol(const SleefFunction& function, bool is_float, int lanes,
                              std::string_view isa) {
  return StrCat("Sleef_", function.name, is_float ? "f" : "d", lanes, "_", function.accuracy, isa);
}

}  // namespace accy::jit
