// Evaluation of the StableHLO test suites' check ops on computed tensors (EvaluateCheck in
// conformance.h): element rules per check kind and failure messages naming the first bad
// element. The rules follow the conformance folder's README and the StableHLO interpreter's
// check dialect (stablehlo/reference/Ops.cpp, `areApproximatelyEqual`).
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
#include "src/stablehlo/conformance.h"
#include "src/util/str_cat.h"

namespace accy {
namespace {

// Enough significant digits to tell neighbouring values of the type apart.
int SignificantDigits(ElementType type) {
  switch (type) {
    case ElementType::kF16:
      return 5;
    case ElementType::kBF16:
      return 4;
    case ElementType::kF32:
      return 9;
    default:
      return 17;
  }
}

std::string FormatElement(const Tensor& tensor, int64_t index) {
  const ElementType type = tensor.element_type();
  if (IsBool(type)) return tensor.GetAsInt64(index) != 0 ? "true" : "false";
  if (IsUnsigned(type)) return StrCat(static_cast<uint64_t>(tensor.GetAsInt64(index)));
  if (IsInteger(type)) return StrCat(tensor.GetAsInt64(index));
  return absl::StrFormat("%.*g", SignificantDigits(type), tensor.GetAsDouble(index));
}

// "[1, 2]" for linear index 5 of a 2x3 tensor; "[]" for a scalar.
std::string MultiIndex(const TensorType& type, int64_t linear) {
  std::vector<int64_t> index(type.dims().size());
  for (int64_t d = type.rank() - 1; d >= 0; --d) {
    const int64_t size = type.dim(d);
    index[d] = size > 0 ? linear % size : 0;
    linear = size > 0 ? linear / size : 0;
  }
  std::string out = "[";
  for (size_t d = 0; d < index.size(); ++d) out += StrCat(d ? ", " : "", index[d]);
  return out + "]";
}

// How one element is judged; `why` explains a mismatch beyond "got vs expected".
struct ElementRule {
  CheckKind kind;
  double tolerance;
  bool Holds(ElementType type, double got, double expected, std::string* why) const {
    switch (kind) {
      case CheckKind::kExpectEq:
      case CheckKind::kExpectEqConst:
        // IEEE == (-0 == +0), except that a NaN matches a NaN of the same sign: the suite's
        // programs expect +-NaN results under expect_eq (sort_float32_5, top_k_float32_5_chlo:
        // TOTALORDER puts -NaN and +NaN at different ends) and pass in the StableHLO
        // interpreter, whose element equality does not follow IEEE for NaN.
        if (got == expected) return true;
        if (std::isnan(got) && std::isnan(expected)) {
          if (std::signbit(got) == std::signbit(expected)) return true;
          *why = " (a NaN of the other sign)";
        } else if (std::isnan(got) || std::isnan(expected)) {
          *why = " (NaN against a number)";
        }
        return false;
      case CheckKind::kExpectClose:
      case CheckKind::kExpectCloseConst: {
        if (std::isnan(got) || std::isnan(expected)) return std::isnan(got) && std::isnan(expected);
        if (std::isinf(got) || std::isinf(expected)) return got == expected;
        const int64_t ulps = UlpDistance(type, got, expected);
        if (ulps <= kExpectCloseMaxUlps) return true;
        *why = StrCat(" (", ulps, " ULP apart, at most ", kExpectCloseMaxUlps, ")");
        return false;
      }
      case CheckKind::kExpectAlmostEq:
      case CheckKind::kExpectAlmostEqConst: {
        if (std::isnan(got) || std::isnan(expected)) return std::isnan(got) && std::isnan(expected);
        if (std::isinf(got) || std::isinf(expected)) return got == expected;
        const double difference = std::fabs(got - expected);
        if (difference <= tolerance) return true;
        *why = absl::StrFormat(" (|difference| %g > tolerance %g)", difference, tolerance);
        return false;
      }
    }
    return false;
  }
};

Status CheckFailure(const Check& check, const std::string& what) {
  return absl::FailedPreconditionError(
      StrCat(CheckKindName(check.kind), " at ", check.line, ":", check.column, ": ", what));
}

Status CompareTensors(const Check& check, const Tensor& got, const Tensor& expected) {
  if (got.type() != expected.type()) {
    return CheckFailure(check, StrCat("got type ", got.type().ToString(), ", expected type ",
                                      expected.type().ToString()));
  }
  const ElementType type = got.element_type();
  const ElementRule rule{check.kind, check.tolerance.value_or(kExpectAlmostEqTolerance)};
  for (int64_t i = 0; i < got.element_count(); ++i) {
    std::string why;
    bool holds;
    if (IsFloat(type)) {
      holds = rule.Holds(type, got.GetAsDouble(i), expected.GetAsDouble(i), &why);
    } else {  // integers and i1: exact, whatever the check kind (64-bit values exceed double)
      holds = got.GetAsInt64(i) == expected.GetAsInt64(i);
    }
    if (!holds) {
      return CheckFailure(
          check, StrCat("element ", i, " ", MultiIndex(got.type(), i), ": got ",
                        FormatElement(got, i), ", expected ", FormatElement(expected, i), why));
    }
  }
  return absl::OkStatus();
}

}  // namespace

Status EvaluateCheck(const Check& check, std::span<const Tensor> function_results) {
  const auto result_at = [&](int64_t index) -> StatusOr<const Tensor*> {
    if (index < 0 || index >= static_cast<int64_t>(function_results.size())) {
      return absl::InvalidArgumentError(StrCat(
          CheckKindName(check.kind), " at ", check.line, ":", check.column, ": result ", index,
          " of ", check.function, " does not exist (", function_results.size(), " results)"));
    }
    return &function_results[static_cast<size_t>(index)];
  };
  ACCY_ASSIGN_OR_RETURN(const Tensor* got, result_at(check.actual_result));
  if (check.expected_constant.has_value()) {
    ACCY_ASSIGN_OR_RETURN(Tensor expected, Tensor::FromBytes(check.expected_constant->type,
                                                             check.expected_constant->bytes));
    return CompareTensors(check, *got, expected);
  }
  if (!check.expected_result.has_value()) {
    return absl::InvalidArgumentError(StrCat(CheckKindName(check.kind), " at ", check.line, ":",
                                             check.column, ": no expected value"));
  }
  ACCY_ASSIGN_OR_RETURN(const Tensor* expected, result_at(*check.expected_result));
  return CompareTensors(check, *got, *expected);
}

}  // namespace accy
