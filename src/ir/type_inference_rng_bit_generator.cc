// Type rule of rng_bit_generator (StableHLO spec "rng_bit_generator"), each constraint labelled
// as in its spec section: (I1) rng_algorithm is DEFAULT, THREE_FRY or PHILOX, (I2) initial_state
// is a 1-dimensional ui64 tensor, (C1) output_state has initial_state's type, (C2) the state
// size of the algorithm, and the output is a tensor of integer or floating-point type. The
// output's shape and element type are the caller's (nothing implies them), so this checks given
// result types rather than inferring them.
#include <string>
#include <variant>

#include "src/ir/type_inference.h"
#include "src/util/str_cat.h"

namespace accy::ir_internal {
namespace {

constexpr std::string_view kOp = "rng_bit_generator";

Status Error(std::string_view message) {
  return absl::InvalidArgumentError(StrCat(kOp, ": ", message));
}

}  // namespace

bool IsRngAlgorithm(std::string_view value) {
  return value == "DEFAULT" || value == "THREE_FRY" || value == "PHILOX";
}

Status VerifyRngBitGenerator(std::span<const TensorType> operands,
                             std::span<const TensorType> results,
                             std::span<const NamedAttribute> attributes) {
  AttributeView attrs(attributes);
  if (operands.size() != 1 || results.size() != 2) {
    return Error(StrCat("expected 1 operand (initial_state) and 2 results (output_state, "
                        "output), got ", operands.size(), " and ", results.size()));
  }
  // (I1) rng_algorithm: enum of DEFAULT, THREE_FRY and PHILOX.
  const AttributeValue* algorithm_value = attrs.Find("rng_algorithm");
  if (algorithm_value == nullptr) return Error("missing attribute rng_algorithm");
  if (!std::holds_alternative<std::string>(*algorithm_value)) {
    return WrongAttributeKind(kOp, "rng_algorithm", "a string", *algorithm_value);
  }
  const std::string& algorithm = std::get<std::string>(*algorithm_value);
  if (!IsRngAlgorithm(algorithm)) {
    return Error(StrCat("rng_algorithm is '", algorithm,
                        "', expected DEFAULT, THREE_FRY or PHILOX"));
  }
  // (I2) initial_state: 1-dimensional tensor of type ui64.
  const TensorType& state = operands[0];
  if (state.rank() != 1 || state.element_type() != ElementType::kU64) {
    return Error(StrCat("initial_state has type ", state.ToString(),
                        ", expected a 1-dimensional tensor of ui64"));
  }
  // (C1) type(initial_state) = type(output_state).
  if (results[0] != state) {
    return Error(StrCat("output_state has type ", results[0].ToString(), ", expected ",
                        state.ToString(), " (the type of initial_state)"));
  }
  // (C2) size(initial_state): 2 for THREE_FRY, 2 or 3 for PHILOX; implementation-defined for
  // DEFAULT, which is PHILOX in accy (as on XLA:CPU).
  const int64_t size = state.dim(0);
  if (algorithm == "THREE_FRY" && size != 2) {
    return Error(StrCat("initial_state has type ", state.ToString(),
                        ", expected 2 elements for THREE_FRY"));
  }
  if (algorithm != "THREE_FRY" && size != 2 && size != 3) {
    return Error(StrCat("initial_state has type ", state.ToString(),
                        ", expected 2 or 3 elements for ", algorithm,
                        algorithm == "DEFAULT" ? " (PHILOX in accy)" : ""));
  }
  // output: tensor of integer or floating-point type (the op table's kNumeric; i1 is neither).
  const TensorType& output = results[1];
  if (!ElementClassContains(GetOpInfo(OpKind::kRngBitGenerator).element_classes,
                            output.element_type())) {
    return Error(StrCat("output has type ", output.ToString(),
                        ", expected an integer or floating-point element type"));
  }
  return absl::OkStatus();
}

}  // namespace accy::ir_internal
