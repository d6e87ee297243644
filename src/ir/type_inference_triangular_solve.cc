// Type rule of triangular_solve (StableHLO spec "triangular_solve"), each constraint numbered
// as in its spec section: (C1) one element type for a and b, (C2) rank(a) = rank(b) >= 2,
// (C3) equal batch dims, a square in its last two dims, and b's solved dim (dim -2 when
// left_side, else dim -1) of a's size, (C4) the result has b's type. Real float types only
// (the op table's kFloat; accy has no complex types yet).
#include <string>
#include <variant>

#include "src/ir/type_inference.h"
#include "src/util/str_cat.h"

namespace accy::ir_internal {
namespace {

constexpr std::string_view kOp = "triangular_solve";

Status Error(std::string_view message) {
  return absl::InvalidArgumentError(StrCat(kOp, ": ", message));
}

// A required bool attribute (the spec's i1 constants left_side, lower, unit_diagonal).
StatusOr<bool> RequiredBool(const AttributeView& attrs, std::string_view name) {
  const AttributeValue* value = attrs.Find(name);
  if (value == nullptr) return Error(StrCat("missing attribute ", name));
  if (!std::holds_alternative<bool>(*value)) {
    return WrongAttributeKind(kOp, name, "a bool", *value);
  }
  return std::get<bool>(*value);
}

}  // namespace

bool IsTransposeA(std::string_view value) {
  return value == "NO_TRANSPOSE" || value == "TRANSPOSE" || value == "ADJOINT";
}

StatusOr<std::vector<TensorType>> InferTriangularSolve(
    std::span<const TensorType> operands, std::span<const NamedAttribute> attributes) {
  AttributeView attrs(attributes);
  if (operands.size() != 2) {
    return Error(StrCat("expected 2 operands (a, b), got ", operands.size()));
  }
  const TensorType& a = operands[0];
  const TensorType& b = operands[1];
  ACCY_ASSIGN_OR_RETURN(const bool left_side, RequiredBool(attrs, "left_side"));
  ACCY_RETURN_IF_ERROR(RequiredBool(attrs, "lower").status());
  ACCY_RETURN_IF_ERROR(RequiredBool(attrs, "unit_diagonal").status());
  const AttributeValue* transpose = attrs.Find("transpose_a");
  if (transpose == nullptr) return Error("missing attribute transpose_a");
  if (!std::holds_alternative<std::string>(*transpose)) {
    return WrongAttributeKind(kOp, "transpose_a", "a string", *transpose);
  }
  if (!IsTransposeA(std::get<std::string>(*transpose))) {
    return Error(StrCat("transpose_a is '", std::get<std::string>(*transpose),
                        "', expected NO_TRANSPOSE, TRANSPOSE or ADJOINT"));
  }
  // Inputs (I1), (I2): tensors of floating-point type (complex is not an accy type).
  if (!ElementClassContains(GetOpInfo(OpKind::kTriangularSolve).element_classes,
                            a.element_type())) {
    return Error(StrCat("a has type ", a.ToString(), ", expected a floating-point element type"));
  }
  // (C1) element_type(a) = element_type(b).
  if (a.element_type() != b.element_type()) {
    return Error(StrCat("a has type ", a.ToString(), " but b has type ", b.ToString(),
                        " (element types must match)"));
  }
  // (C2) rank(a) = rank(b) >= 2.
  if (a.rank() < 2) {
    return Error(StrCat("a has type ", a.ToString(), ", expected rank >= 2"));
  }
  if (a.rank() != b.rank()) {
    return Error(StrCat("a has rank ", a.rank(), " but b has rank ", b.rank(),
                        " (ranks must match)"));
  }
  const int64_t rank = a.rank();
  // (C3) dim(a, i) = dim(b, i) for the batch dims i in [0, R-3] ...
  for (int64_t i = 0; i + 2 < rank; ++i) {
    if (a.dim(i) != b.dim(i)) {
      return Error(StrCat("batch dim ", i, " of a has size ", a.dim(i), " but of b ", b.dim(i),
                          " (a ", a.ToString(), ", b ", b.ToString(), ")"));
    }
  }
  // ... dim(a, R-2) = dim(a, R-1) (a is square) ...
  const int64_t m = a.dim(rank - 1);
  if (a.dim(rank - 2) != m) {
    return Error(StrCat("a has type ", a.ToString(), ", expected square matrices: dim ",
                        rank - 2, " has size ", a.dim(rank - 2), " but dim ", rank - 1,
                        " has size ", m));
  }
  // ... = dim(b, left_side ? R-2 : R-1).
  const int64_t solved = left_side ? rank - 2 : rank - 1;
  if (b.dim(solved) != m) {
    return Error(StrCat("b has type ", b.ToString(), ": dim ", solved, " has size ",
                        b.dim(solved), ", expected ", m, " (the size of a's matrices, ",
                        left_side ? "left_side: op(a) * x = b" : "right side: x * op(a) = b",
                        ")"));
  }
  // (C4) type(result) = type(b).
  return std::vector<TensorType>{b};
}

}  // namespace accy::ir_internal
