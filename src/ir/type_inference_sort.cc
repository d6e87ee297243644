// Type rules of sort (StableHLO spec "sort") and top_k (CHLO "top_k", chlo/ChloOps.td), each
// constraint numbered as in its spec section. The comparator's signature is the verifier's.
#include "src/ir/type_inference.h"
#include "src/util/str_cat.h"

namespace accy::ir_internal {
namespace {

Status Error(std::string_view op, std::string_view message) {
  return absl::InvalidArgumentError(StrCat(op, ": ", message));
}

}  // namespace

StatusOr<std::vector<TensorType>> InferSort(std::span<const TensorType> operands,
                                            std::span<const NamedAttribute> attributes) {
  constexpr std::string_view kOp = "sort";
  AttributeView attrs(attributes);
  // (C1) 0 < size(inputs).
  if (operands.empty()) return Error(kOp, "expected at least one input, got none");
  // (C2) shape(inputs...) = shape(results...).
  const TensorType& first = operands[0];
  for (size_t i = 1; i < operands.size(); ++i) {
    if (operands[i].dims() != first.dims()) {
      return Error(kOp, StrCat("input ", i, " has type ", operands[i].ToString(),
                               ", expected the shape of input 0 (", first.ToString(), ")"));
    }
  }
  // (C4) -R <= dimension < R.
  ACCY_ASSIGN_OR_RETURN(int64_t dimension, attrs.Int(kOp, "dimension"));
  const int64_t rank = first.rank();
  if (dimension < -rank || dimension >= rank) {
    return Error(kOp, StrCat("dimension ", dimension, " is out of range [", -rank, ", ", rank,
                             ") for inputs of rank ", rank));
  }
  ACCY_RETURN_IF_ERROR(attrs.OptionalBool(kOp, "is_stable", false).status());
  // (C3) type(inputs...) = type(results...).
  return std::vector<TensorType>(operands.begin(), operands.end());
}

StatusOr<std::vector<TensorType>> InferTopK(std::span<const TensorType> operands,
                                            std::span<const NamedAttribute> attributes) {
  constexpr std::string_view kOp = "chlo.top_k";
  AttributeView attrs(attributes);
  if (operands.size() != 1) {
    return Error(kOp, StrCat("expected 1 operand, got ", operands.size()));
  }
  const TensorType& operand = operands[0];
  if (operand.rank() < 1) {
    return Error(kOp, StrCat("operand has type ", operand.ToString(), ", expected rank >= 1"));
  }
  ACCY_ASSIGN_OR_RETURN(int64_t k, attrs.Int(kOp, "k"));
  const int64_t last = operand.dim(operand.rank() - 1);
  if (k < 0 || k > last) {
    return Error(kOp, StrCat("k = ", k, " is out of range [0, ", last,
                             "] (the size of the last dim of ", operand.ToString(), ")"));
  }
  std::vector<int64_t> dims = operand.dims();
  dims.back() = k;
  auto values = TensorType::Create(operand.element_type(), dims);
  auto indices = TensorType::Create(ElementType::kI32, dims);
  if (!values.ok()) return Error(kOp, StrCat("result type is invalid: ", values.status().message()));
  if (!indices.ok()) {
    return Error(kOp, StrCat("result type is invalid: ", indices.status().message()));
  }
  return std::vector<TensorType>{*std::move(values), *std::move(indices)};
}

}  // namespace accy::ir_internal
