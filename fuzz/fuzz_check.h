// What the libFuzzer targets (fuzz/*_fuzzer.cc) treat as a finding besides a sanitizer report:
// a property of the public API that failed, reported to stderr with the input's context and turned
// into a crash (abort) so that libFuzzer saves the reproducer under crashes/<target>.
// Header-only; used by one target per process, single-threaded.
#ifndef ACCY_FUZZ_FUZZ_CHECK_H_
#define ACCY_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "absl/status/status.h"

namespace accy::fuzz {

// Aborts with `what` and `detail` when `holds` is false.
inline void FuzzCheck(bool holds, std::string_view what, std::string_view detail = {}) {
  if (holds) return;
  std::fprintf(stderr, "FUZZ PROPERTY FAILED: %.*s\n%.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// The status codes the public API documents for bad or unsupported input (include/accy/
// stablehlo.h, engine.h, planner.h): anything else (kInternal, kUnknown, ...) from a fuzzed
// input is a finding, as is an error without a message.
inline bool IsDocumentedInputError(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kOutOfRange:
      return !status.message().empty();
    default:
      return false;
  }
}

}  // namespace accy::fuzz

#endif  // ACCY_FUZZ_FUZZ_CHECK_H_
