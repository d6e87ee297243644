// Status and StatusOr for accy: every fallible public call returns one of these.
//
// accy uses absl::Status (Debian's libabsl-dev) rather than a home-grown type, so callers that
// already use abseil, XLA or TensorFlow see the same codes. Codes used across accy:
//   kInvalidArgument   bad user input (types, shapes, attributes, tensors passed to Run)
//   kUnimplemented     a well-formed program that accy does not support yet (named in the message)
//   kOutOfRange        arithmetic on sizes that overflows 64 bits
//   kResourceExhausted a work allowance refused a charge
//   kInternal          a foreign library (LLVM, oneDNN) failed; the message carries its text
// Broken internal invariants are not statuses: they abort through ACCY_CHECK with file and line.
#ifndef ACCY_STATUS_H_
#define ACCY_STATUS_H_

#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace accy {

using Status = absl::Status;
template <typename T>
using StatusOr = absl::StatusOr<T>;

}  // namespace accy

#define ACCY_STATUS_CONCAT_INNER_(a, b) a##b
#define ACCY_STATUS_CONCAT_(a, b) ACCY_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define ACCY_RETURN_IF_ERROR(expr)                 \
  do {                                             \
    ::accy::Status accy_status_ = (expr);          \
    if (!accy_status_.ok()) return accy_status_;   \
  } while (false)

// `lhs = value of expr` when expr (a StatusOr) is OK, else returns its status. The temporary is
// named with __COUNTER__ (not __LINE__) so that two uses on one line, as in a macro, compile.
#define ACCY_ASSIGN_OR_RETURN(lhs, expr) \
  ACCY_ASSIGN_OR_RETURN_IMPL_(ACCY_STATUS_CONCAT_(accy_statusor_, __COUNTER__), lhs, expr)
#define ACCY_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

// Internal invariant: aborts with file and line when `cond` is false. Never used for user input.
#define ACCY_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: accy internal check failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                               \
      std::abort();                                                                      \
    }                                                                                    \
  } while (false)

#endif  // ACCY_STATUS_H_
