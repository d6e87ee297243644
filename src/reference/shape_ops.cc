// Reference evaluation of the shape and data-movement ops: broadcast_in_dim, reshape, transpose,
// slice, pad, concatenate, iota, reverse, dynamic_slice and dynamic_update_slice.
//
// Each op is a direct transcription of its StableHLO spec section: walk the result's index space
// in row-major order, map every result index to an operand index with the spec's formula and
// copy the element (CopyElement). The ops arrive verified; the checks here only guard memory
// safety and report a malformed op as kInvalidArgument instead of reading out of bounds.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "accy/ir.h"
#include "accy/status.h"
#include "accy/tensor.h"
#include "accy/types.h"
#include "src/reference/evaluator_internal.h"

namespace accy::reference {
namespace {

Status OpError(const Operation& op, std::string_view message) {
  // absl::string_view is not std::string_view in Debian's abseil: go through std::string.
  return absl::InvalidArgumentError(std::string(op.name()) + ": " + std::string(message));
}

std::string DimsString(std::span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

// Calls fn(index, linear) for every index of `dims` in row-major order (nothing when any dim is
// 0; once with an empty index for rank 0).
template <typename Fn>
void ForEachIndex(const std::vector<int64_t>& dims, Fn&& fn) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;  // fits: the dims of a valid TensorType
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    fn(static_cast<const std::vector<int64_t>&>(index), linear);
    for (size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
}

bool InBounds(std::span<const int64_t> index, const std::vector<int64_t>& dims) {
  for (size_t d = 0; d < dims.size(); ++d) {
    if (index[d] < 0 || index[d] >= dims[d]) return false;
  }
  return true;
}

// A start index operand of dynamic_slice / dynamic_update_slice as a signed value. A u64 index
// above INT64_MAX is larger than any dim, so it is pinned at INT64_MAX (clamping then gives the
// same result as with the true value).
int64_t LoadStartIndex(const Tensor& t) {
  int64_t value = LoadInt(t, 0);
  if (IsUnsigned(t.element_type()) && value < 0) return std::numeric_limits<int64_t>::max();
  return value;
}

// clamp(value, 0, high) with high >= 0.
int64_t ClampStart(int64_t value, int64_t high) {
  return std::max<int64_t>(0, std::min(value, high));
}

// ceil(size / stride) for size >= 0, stride > 0, without overflow (size + stride - 1 overflows
// for a huge stride).
int64_t StridedCount(int64_t size, int64_t stride) {
  return size == 0 ? 0 : (size - 1) / stride + 1;
}

// low + high + n + max(n - 1, 0) * interior (spec "pad"), or nullopt when it overflows.
std::optional<int64_t> PaddedSize(int64_t n, int64_t low, int64_t high, int64_t interior) {
  int64_t size = 0;
  if (!CheckedMul(std::max<int64_t>(n - 1, 0), interior, &size) || !CheckedAdd(size, n, &size) ||
      !CheckedAdd(size, low, &size) || !CheckedAdd(size, high, &size)) {
    return std::nullopt;
  }
  return size;
}

StatusOr<Tensor> AllocateResult(const Operation& op) {
  return Tensor::Allocate(op.result(0)->type());
}

// Spec "broadcast_in_dim": operand_index[d] = dim(operand, d) = 1 ? 0
//                                              : result_index[broadcast_dimensions[d]].
StatusOr<Tensor> BroadcastInDim(const Operation& op, const Tensor& operand) {
  ACCY_ASSIGN_OR_RETURN(Tensor result, AllocateResult(op));
  const std::vector<int64_t> broadcast_dimensions = op.GetInts("broadcast_dimensions");
  if (static_cast<int64_t>(broadcast_dimensions.size()) != operand.rank()) {
    return OpError(op, "broadcast_dimensions size differs from the operand rank");
  }
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const int64_t rd = broadcast_dimensions[static_cast<size_t>(d)];
    if (rd < 0 || rd >= result.rank() ||
        (operand.dims()[d] != 1 && operand.dims()[d] != result.dims()[rd])) {
      return OpError(op, absl::StrCat("broadcast_dimensions[", d, "] = ", rd, " is invalid"));
    }
  }
  std::vector<int64_t> operand_index(static_cast<size_t>(operand.rank()));
  ForEachIndex(result.dims(), [&](const std::vector<int64_t>& result_index, int64_t linear) {
    for (size_t d = 0; d < operand_index.size(); ++d) {
      operand_index[d] =
          operand.dims()[d] == 1 ? 0 : result_index[static_cast<size_t>(broadcast_dimensions[d])];
    }
    CopyElement(operand, Ravel(operand_index, operand.dims()), result, linear);
  });
  return result;
}

// Spec "reshape": elements keep their row-major order.
StatusOr<Tensor> Reshape(const Operation& op, const Tensor& operand) {
  ACCY_ASSIGN_OR_RETURN(Tensor result, AllocateResult(op));
  if (result.element_count() != operand.element_count()) {
    return OpError(op, "result and operand element counts differ");
  }
  for (int64_t i = 0; i < result.element_count(); ++i) CopyElement(operand, i, result, i);
  return result;
}

// Spec "transpose": result_index[d] = operand_index[permutation[d]].
StatusOr<Tensor> Transpose(const Operation& op, const Tensor& operand) {
  ACCY_ASSIGN_OR_RETURN(Tensor result, AllocateResult(op));
  const std::vector<int64_t> permutation = op.GetInts("permutation");
  if (static_cast<int64_t>(permutation.size()) != operand.rank() ||
      result.rank() != operand.rank()) {
    return OpError(op, "permutation size differs from the operand rank");
  }
  for (size_t d = 0; d < permutation.size(); ++d) {
    if (permutation[d] < 0 || permutation[d] >= operand.rank() ||
        result.dims()[d] != operand.dims()[static_cast<size_t>(permutation[d])]) {
      return OpError(op, absl::StrCat("permutation ", DimsString(permutation), " is invalid"));
    }
  }
  std::vector<int64_t> operand_index(permutation.size());
  ForEachIndex(result.dims(), [&](const std::vector<int64_t>& result_index, int64_t linear) {
    for (size_t d = 0; d < permutation.size(); ++d) {
      operand_index[static_cast<size_t>(permutation[d])] = result_index[d];
    }
    CopyElement(operand, Ravel(operand_index, operand.dims()), result, linear);
  });
  return result;
}

// Spec "slice": result[result_index] = operand[start_indices + result_index * strides].
StatusOr<Tensor> Slice(const Operation& op, const Tensor& operand) {
  ACCY_ASSIGN_OR_RETURN(Tensor result, AllocateResult(op));
  const std::vector<int64_t> start = op.GetInts("start_indices");
  const std::vector<int64_t> limit = op.GetInts("limit_indices");
  const std::vector<int64_t> strides = op.GetInts("strides");
  const size_t rank = static_cast<size_t>(operand.rank());
  if (start.size() != rank || limit.size() != rank || strides.size() != rank ||
      result.rank() != operand.rank()) {
    return OpError(op, "start_indices, limit_indices and strides must have the operand rank");
  }
  for (size_t d = 0; d < rank; ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > operand.dims()[d] || strides[d] <= 0 ||
        result.dims()[d] != StridedCount(limit[d] - start[d], strides[d])) {
      return OpError(op, absl::StrCat("slice of dim ", d, " is invalid"));
    }
  }
  std::vector<int64_t> operand_index(rank);
  ForEachIndex(result.dims(), [&](const std::vector<int64_t>& result_index, int64_t linear) {
    for (size_t d = 0; d < rank; ++d) operand_index[d] = start[d] + result_index[d] * strides[d];
    CopyElement(operand, Ravel(operand_index, operand.dims()), result, linear);
  });
  return result;
}

// Spec "pad": result_index = edge_padding_low + operand_index * (interior_padding + 1); operand
// elements landing outside the result (negative edge padding) are dropped, every other result
// element is padding_value.
StatusOr<Tensor> Pad(const Operation& op, const Tensor& operand, const Tensor& padding_value) {
  ACCY_ASSIGN_OR_RETURN(Tensor result, AllocateResult(op));
  const std::vector<int64_t> low = op.GetInts("edge_padding_low");
  const std::vector<int64_t> high = op.GetInts("edge_padding_high");
  const std::vector<int64_t> interior = op.GetInts("interior_padding");
  const size_t rank = static_cast<size_t>(operand.rank());
  if (low.size() != rank || high.size() != rank || interior.size() != rank ||
      result.rank() != operand.rank() || padding_value.element_count() != 1) {
    return OpError(op, "padding attributes must have the operand rank");
  }
  for (size_t d = 0; d < rank; ++d) {
    if (interior[d] < 0 ||
        PaddedSize(operand.dims()[d], low[d], high[d], interior[d]) != result.dims()[d]) {
      return OpError(op, absl::StrCat("padding of dim ", d, " does not give the result dim"));
    }
  }
  for (int64_t i = 0; i < result.element_count(); ++i) CopyElement(padding_value, 0, result, i);
  std::vector<int64_t> result_index(rank);
  ForEachIndex(operand.dims(), [&](const std::vector<int64_t>& operand_index, int64_t linear) {
    // low + i * (interior + 1), where interior + 1 may overflow (interior = INT64_MAX with n = 1).
    // i * interior + i <= (n - 1) * interior + n - 1, so each partial sum below is bounded by a
    // partial sum of PaddedSize, which was checked above.
    for (size_t d = 0; d < rank; ++d) {
      result_index[d] = low[d] + (operand_index[d] * interior[d] + operand_index[d]);
    }
    if (InBounds(result_index, result.dims())) {
      CopyElement(operand, linear, result, Ravel(result_index, result.dims()));
    }
  });
  return result;
}

// Spec "concatenate": input k occupies [offset_k, offset_k + dim(inputs[k], dimension)) of the
// result along `dimension`.
StatusOr<Tensor> Concatenate(const Operation& op, std::span<const Tensor> inputs) {
  ACCY_ASSIGN_OR_RETURN(Tensor result, AllocateResult(op));
  const std::optional<int64_t> dimension = op.GetInt("dimension");
  if (!dimension || *dimension < 0 || *dimension >= result.rank()) {
    return OpError(op, "dimension is missing or out of range");
  }
  const size_t cd = static_cast<size_t>(*dimension);
  int64_t offset = 0;
  for (const Tensor& input : inputs) {
    if (input.rank() != result.rank()) return OpError(op, "inputs must have the result rank");
    for (size_t d = 0; d < input.dims().size(); ++d) {
      if (d != cd && input.dims()[d] != result.dims()[d]) {
        return OpError(op, absl::StrCat("input dim ", d, " differs from the result"));
      }
    }
    if (!CheckedAdd(offset, input.dims()[cd], &offset)) {
      return OpError(op, "inputs overflow the result dimension");
    }
  }
  if (offset != result.dims()[cd]) return OpError(op, "inputs do not fill the result dimension");
  offset = 0;
  std::vector<int64_t> result_index;
  for (const Tensor& input : inputs) {
    ForEachIndex(input.dims(), [&](const std::vector<int64_t>& input_index, int64_t linear) {
      result_index = input_index;
      result_index[cd] += offset;
      CopyElement(input, linear, result, Ravel(result_index, result.dims()));
    });
    offset += input.dims()[cd];
  }
  return result;
}

// Spec "iota": output[i0, ..., id, ..., iR-1] = id for d = iota_dimension, converted to the
// element type (floats exactly up to their significand; integers wrap modulo 2^bits).
StatusOr<Tensor> Iota(const Operation& op) {
  ACCY_ASSIGN_OR_RETURN(Tensor result, AllocateResult(op));
  const std::optional<int64_t> iota_dimension = op.GetInt("iota_dimension");
  if (!iota_dimension || *iota_dimension < 0 || *iota_dimension >= result.rank()) {
    return OpError(op, "iota_dimension is missing or out of range");
  }
  const size_t id = static_cast<size_t>(*iota_dimension);
  const bool is_float = IsFloat(result.element_type());
  ForEachIndex(result.dims(), [&](const std::vector<int64_t>& index, int64_t linear) {
    if (is_float) {
      StoreFloat(result, linear, static_cast<double>(index[id]));
    } else {
      StoreInt(result, linear, index[id]);
    }
  });
  return result;
}

// Spec "reverse": operand_index[d] = dim(result, d) - result_index[d] - 1 for d in dimensions.
StatusOr<Tensor> Reverse(const Operation& op, const Tensor& operand) {
  ACCY_ASSIGN_OR_RETURN(Tensor result, AllocateResult(op));
  const std::vector<int64_t> dimensions = op.GetInts("dimensions");
  std::vector<bool> reversed(static_cast<size_t>(operand.rank()), false);
  for (int64_t d : dimensions) {
    if (d < 0 || d >= operand.rank()) {
      return OpError(op, absl::StrCat("dimension ", d, " is out of range"));
    }
    reversed[static_cast<size_t>(d)] = true;
  }
  if (result.dims() != operand.dims()) return OpError(op, "result shape differs from operand");
  std::vector<int64_t> operand_index(reversed.size());
  ForEachIndex(result.dims(), [&](const std::vector<int64_t>& result_index, int64_t linear) {
    for (size_t d = 0; d < reversed.size(); ++d) {
      operand_index[d] = reversed[d] ? result.dims()[d] - result_index[d] - 1 : result_index[d];
    }
    CopyElement(operand, Ravel(operand_index, operand.dims()), result, linear);
  });
  return result;
}

// The spec's adjusted_start_indices = clamp(0, start_indices, shape(operand) - sizes) for
// dynamic_slice (sizes = slice_sizes) and dynamic_update_slice (sizes = shape(update)).
StatusOr<std::vector<int64_t>> AdjustedStartIndices(const Operation& op, const Tensor& operand,
                                                    std::span<const Tensor> start_indices,
                                                    const std::vector<int64_t>& sizes) {
  if (static_cast<int64_t>(start_indices.size()) != operand.rank() ||
      static_cast<int64_t>(sizes.size()) != operand.rank()) {
    return OpError(op, "needs one start index and one size per operand dim");
  }
  std::vector<int64_t> adjusted(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (start_indices[d].element_count() != 1 || sizes[d] < 0 || sizes[d] > operand.dims()[d]) {
      return OpError(op, absl::StrCat("start index or size of dim ", d, " is invalid"));
    }
    adjusted[d] = ClampStart(LoadStartIndex(start_indices[d]), operand.dims()[d] - sizes[d]);
  }
  return adjusted;
}

// Spec "dynamic_slice": result[result_index] = operand[result_index + adjusted_start_indices].
StatusOr<Tensor> DynamicSlice(const Operation& op, const Tensor& operand,
                              std::span<const Tensor> start_indices) {
  ACCY_ASSIGN_OR_RETURN(Tensor result, AllocateResult(op));
  const std::vector<int64_t> slice_sizes = op.GetInts("slice_sizes");
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> start,
                        AdjustedStartIndices(op, operand, start_indices, slice_sizes));
  if (result.dims() != slice_sizes) return OpError(op, "result shape differs from slice_sizes");
  std::vector<int64_t> operand_index(start.size());
  ForEachIndex(result.dims(), [&](const std::vector<int64_t>& result_index, int64_t linear) {
    for (size_t d = 0; d < start.size(); ++d) operand_index[d] = result_index[d] + start[d];
    CopyElement(operand, Ravel(operand_index, operand.dims()), result, linear);
  });
  return result;
}

// Spec "dynamic_update_slice": result = operand, except
// result[update_index + adjusted_start_indices] = update[update_index].
StatusOr<Tensor> DynamicUpdateSlice(const Operation& op, const Tensor& operand,
                                    const Tensor& update, std::span<const Tensor> start_indices) {
  ACCY_ASSIGN_OR_RETURN(Tensor result, AllocateResult(op));
  if (result.type() != operand.type() || update.rank() != operand.rank()) {
    return OpError(op, "result, operand and update types are inconsistent");
  }
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> start,
                        AdjustedStartIndices(op, operand, start_indices, update.dims()));
  for (int64_t i = 0; i < result.element_count(); ++i) CopyElement(operand, i, result, i);
  std::vector<int64_t> result_index(start.size());
  ForEachIndex(update.dims(), [&](const std::vector<int64_t>& update_index, int64_t linear) {
    for (size_t d = 0; d < start.size(); ++d) result_index[d] = update_index[d] + start[d];
    CopyElement(update, linear, result, Ravel(result_index, result.dims()));
  });
  return result;
}

// Checks the operand count of `op` against `expected` (a minimum when `at_least`).
Status CheckOperandCount(const Operation& op, std::span<const Tensor> operands, size_t expected,
                         bool at_least = false) {
  if (operands.size() == expected || (at_least && operands.size() > expected)) {
    return absl::OkStatus();
  }
  return OpError(op, absl::StrCat("got ", operands.size(), " operands, expected ",
                                  at_least ? "at least " : "", expected));
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateShapeOp(const Operation& op,
                                              std::span<const Tensor> operands) {
  if (op.num_results() != 1) return OpError(op, "expected one result");
  StatusOr<Tensor> result;
  switch (op.kind()) {
    case OpKind::kBroadcastInDim:
      ACCY_RETURN_IF_ERROR(CheckOperandCount(op, operands, 1));
      result = BroadcastInDim(op, operands[0]);
      break;
    case OpKind::kReshape:
      ACCY_RETURN_IF_ERROR(CheckOperandCount(op, operands, 1));
      result = Reshape(op, operands[0]);
      break;
    case OpKind::kTranspose:
      ACCY_RETURN_IF_ERROR(CheckOperandCount(op, operands, 1));
      result = Transpose(op, operands[0]);
      break;
    case OpKind::kSlice:
      ACCY_RETURN_IF_ERROR(CheckOperandCount(op, operands, 1));
      result = Slice(op, operands[0]);
      break;
    case OpKind::kPad:
      ACCY_RETURN_IF_ERROR(CheckOperandCount(op, operands, 2));
      result = Pad(op, operands[0], operands[1]);
      break;
    case OpKind::kConcatenate:
      ACCY_RETURN_IF_ERROR(CheckOperandCount(op, operands, 1, /*at_least=*/true));
      result = Concatenate(op, operands);
      break;
    case OpKind::kIota:
      ACCY_RETURN_IF_ERROR(CheckOperandCount(op, operands, 0));
      result = Iota(op);
      break;
    case OpKind::kReverse:
      ACCY_RETURN_IF_ERROR(CheckOperandCount(op, operands, 1));
      result = Reverse(op, operands[0]);
      break;
    case OpKind::kDynamicSlice:
      ACCY_RETURN_IF_ERROR(CheckOperandCount(op, operands, 1, /*at_least=*/true));
      result = DynamicSlice(op, operands[0], operands.subspan(1));
      break;
    case OpKind::kDynamicUpdateSlice:
      ACCY_RETURN_IF_ERROR(CheckOperandCount(op, operands, 2, /*at_least=*/true));
      result = DynamicUpdateSlice(op, operands[0], operands[1], operands.subspan(2));
      break;
    default:
      ACCY_CHECK(!"EvaluateShapeOp: the driver dispatched a non-shape op");
      return OpError(op, "not a shape op");
  }
  if (!result.ok()) return result.status();
  std::vector<Tensor> results;
  results.push_back(std::move(result).value());
  return results;
}

}  // namespace accy::reference
