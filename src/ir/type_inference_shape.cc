// Result type inference for gather, scatter and dot_general: the StableHLO spec constraints
// (spec.md sections "gather" C1-C21, "scatter" C1-C25, "dot_general" C1-C13) in order.
#include <algorithm>
#include <set>

#include "src/util/str_cat.h"
#include "src/ir/type_inference.h"

namespace accy::ir_internal {
namespace {

Status Error(std::string_view op, std::string_view message) {
  return absl::InvalidArgumentError(StrCat(op, ": ", message));
}

bool Contains(std::span<const int64_t> list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

Status CheckSortedUniqueInRange(std::string_view op, std::string_view attr,
                                std::span<const int64_t> dims, int64_t rank, bool need_sorted) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank) {
      return Error(op, StrCat(attr, " ", DimsToString(dims), ": dimension ", dims[i],
                                    " is out of range [0, ", rank, ")"));
    }
    if (i > 0 && need_sorted && dims[i] <= dims[i - 1]) {
      return Error(op, StrCat(attr, " ", DimsToString(dims),
                                    " must be sorted in increasing order without repeats"));
    }
  }
  return absl::OkStatus();
}

Status CheckDisjoint(std::string_view op, std::string_view a_name, std::span<const int64_t> a,
                     std::string_view b_name, std::span<const int64_t> b) {
  std::set<int64_t> seen;
  for (int64_t d : a) {
    if (!seen.insert(d).second) {
      return Error(op, StrCat(a_name, " ", DimsToString(a), " repeats dimension ", d));
    }
  }
  for (int64_t d : b) {
    if (!seen.insert(d).second) {
      return Error(op, StrCat("dimension ", d, " appears in both ", a_name, " and ", b_name,
                                    ", or twice in ", b_name));
    }
  }
  return absl::OkStatus();
}

// Gather C13 / scatter C17: one indices batching dim per operand batching dim. Checked before the
// rank count (gather C1, scatter C1-C2), which a missing batching dim would break first.
Status CheckBatchingDimCounts(std::string_view op, std::span<const int64_t> operand_batching,
                              std::span<const int64_t> indices_batching,
                              std::string_view operand_batching_name,
                              std::string_view indices_batching_name) {
  if (operand_batching.size() != indices_batching.size()) {
    return Error(op, StrCat(operand_batching_name, " ", DimsToString(operand_batching), " and ",
                            indices_batching_name, " ", DimsToString(indices_batching),
                            " must have the same size"));
  }
  return absl::OkStatus();
}

// The batching-dim and index-vector rules shared by gather (C10-C14) and scatter (C14-C18, C22);
// the batching dim counts are equal (CheckBatchingDimCounts).
Status CheckIndexBatching(std::string_view op, const TensorType& operand,
                          const TensorType& indices, std::span<const int64_t> operand_batching,
                          std::span<const int64_t> indices_batching, int64_t index_vector_dim,
                          std::string_view operand_batching_name,
                          std::string_view indices_batching_name) {
  if (!IsInteger(indices.element_type())) {
    return Error(op, StrCat("indices have type ", indices.ToString(),
                                  ", expected an integer element type"));
  }
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return Error(op, StrCat("index_vector_dim ", index_vector_dim, " is outside [0, ",
                                  indices.rank(), "]"));
  }
  std::set<int64_t> seen;
  for (int64_t d : indices_batching) {
    if (d < 0 || d >= indices.rank() || !seen.insert(d).second || d == index_vector_dim) {
      return Error(op, StrCat(indices_batching_name, " ", DimsToString(indices_batching),
                                    ": dimension ", d, " is out of range, repeated, or equal to "
                                    "index_vector_dim"));
    }
  }
  // Range-check before the sizes are compared below (the sorted/unique rule comes later).
  for (int64_t d : operand_batching) {
    if (d < 0 || d >= operand.rank()) {
      return Error(op, StrCat(operand_batching_name, " ", DimsToString(operand_batching),
                              ": dimension ", d, " is out of range [0, ", operand.rank(), ")"));
    }
  }
  for (size_t i = 0; i < operand_batching.size(); ++i) {
    if (operand.dim(operand_batching[i]) != indices.dim(indices_batching[i])) {
      return Error(op, StrCat("batching dim ", operand_batching[i], " of the operand has size ",
                                    operand.dim(operand_batching[i]), " but indices dim ",
                                    indices_batching[i], " has size ",
                                    indices.dim(indices_batching[i])));
    }
  }
  return absl::OkStatus();
}

// Size of the index vector: dim(indices, index_vector_dim), or 1 when it is the implicit
// trailing dim.
int64_t IndexVectorSize(const TensorType& indices, int64_t index_vector_dim) {
  return index_vector_dim < indices.rank() ? indices.dim(index_vector_dim) : 1;
}

// Dims of `indices` other than index_vector_dim, in order.
std::vector<int64_t> IndexBatchSizes(const TensorType& indices, int64_t index_vector_dim) {
  std::vector<int64_t> sizes;
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d != index_vector_dim) sizes.push_back(indices.dim(d));
  }
  return sizes;
}

}  // namespace

StatusOr<std::vector<TensorType>> InferGather(std::span<const TensorType> operands,
                                              const AttributeView& attrs) {
  constexpr std::string_view kOp = "gather";
  if (operands.size() != 2) return Error(kOp, "expected 2 operands (operand, start_indices)");
  const TensorType& operand = operands[0];
  const TensorType& indices = operands[1];
  ACCY_ASSIGN_OR_RETURN(auto offset_dims, attrs.OptionalInts(kOp, "offset_dims"));
  ACCY_ASSIGN_OR_RETURN(auto collapsed, attrs.OptionalInts(kOp, "collapsed_slice_dims"));
  ACCY_ASSIGN_OR_RETURN(auto operand_batching, attrs.OptionalInts(kOp, "operand_batching_dims"));
  ACCY_ASSIGN_OR_RETURN(auto indices_batching,
                        attrs.OptionalInts(kOp, "start_indices_batching_dims"));
  ACCY_ASSIGN_OR_RETURN(auto start_index_map, attrs.OptionalInts(kOp, "start_index_map"));
  ACCY_ASSIGN_OR_RETURN(int64_t index_vector_dim, attrs.Int(kOp, "index_vector_dim"));
  ACCY_ASSIGN_OR_RETURN(auto slice_sizes, attrs.Ints(kOp, "slice_sizes"));

  int64_t rank = operand.rank();
  ACCY_RETURN_IF_ERROR(CheckBatchingDimCounts(kOp, operand_batching, indices_batching,
                                              "operand_batching_dims",
                                              "start_indices_batching_dims"));
  if (static_cast<int64_t>(offset_dims.size() + collapsed.size() + operand_batching.size()) !=
      rank) {
    return Error(kOp, StrCat("offset_dims, collapsed_slice_dims and operand_batching_dims "
                                   "have ", offset_dims.size() + collapsed.size() +
                                                operand_batching.size(),
                                   " entries in all, expected the operand rank ", rank));
  }
  ACCY_RETURN_IF_ERROR(CheckIndexBatching(kOp, operand, indices, operand_batching,
                                          indices_batching, index_vector_dim,
                                          "operand_batching_dims", "start_indices_batching_dims"));
  ACCY_RETURN_IF_ERROR(CheckDisjoint(kOp, "collapsed_slice_dims", collapsed,
                                     "operand_batching_dims", operand_batching));
  ACCY_RETURN_IF_ERROR(CheckSortedUniqueInRange(kOp, "collapsed_slice_dims", collapsed, rank, true));
  ACCY_RETURN_IF_ERROR(
      CheckSortedUniqueInRange(kOp, "operand_batching_dims", operand_batching, rank, true));
  if (static_cast<int64_t>(slice_sizes.size()) != rank) {
    return Error(kOp, StrCat("slice_sizes ", DimsToString(slice_sizes),
                                   " must have one entry per operand dim (rank ", rank, ")"));
  }
  for (int64_t d = 0; d < rank; ++d) {
    int64_t s = slice_sizes[static_cast<size_t>(d)];
    if (s < 0 || s > operand.dim(d)) {
      return Error(kOp, StrCat("slice size ", s, " of dim ", d, " is outside [0, ",
                                     operand.dim(d), "]"));
    }
    if ((Contains(collapsed, d) || Contains(operand_batching, d)) && s > 1) {
      return Error(kOp, StrCat("slice size of collapsed or batching dim ", d, " is ", s,
                                     ", expected at most 1"));
    }
  }
  ACCY_RETURN_IF_ERROR(CheckDisjoint(kOp, "start_index_map", start_index_map,
                                     "operand_batching_dims", operand_batching));
  ACCY_RETURN_IF_ERROR(
      CheckSortedUniqueInRange(kOp, "start_index_map", start_index_map, rank, false));
  if (static_cast<int64_t>(start_index_map.size()) != IndexVectorSize(indices, index_vector_dim)) {
    return Error(kOp, StrCat("start_index_map ", DimsToString(start_index_map), " has ",
                                   start_index_map.size(), " entries, expected the index vector "
                                   "size ", IndexVectorSize(indices, index_vector_dim)));
  }
  std::vector<int64_t> batch_sizes = IndexBatchSizes(indices, index_vector_dim);
  int64_t result_rank = static_cast<int64_t>(batch_sizes.size() + offset_dims.size());
  ACCY_RETURN_IF_ERROR(
      CheckSortedUniqueInRange(kOp, "offset_dims", offset_dims, result_rank, true));
  std::vector<int64_t> offset_sizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(collapsed, d) && !Contains(operand_batching, d)) {
      offset_sizes.push_back(slice_sizes[static_cast<size_t>(d)]);
    }
  }
  std::vector<int64_t> dims;
  size_t next_batch = 0, next_offset = 0;
  for (int64_t d = 0; d < result_rank; ++d) {
    dims.push_back(Contains(offset_dims, d) ? offset_sizes[next_offset++]
                                            : batch_sizes[next_batch++]);
  }
  ACCY_ASSIGN_OR_RETURN(TensorType result, TensorType::Create(operand.element_type(), dims));
  return std::vector<TensorType>{result};
}

StatusOr<std::vector<TensorType>> InferScatter(std::span<const TensorType> operands,
                                               const AttributeView& attrs) {
  constexpr std::string_view kOp = "scatter";
  if (operands.size() < 3 || operands.size() % 2 == 0) {
    return Error(kOp, StrCat("expected N inputs, scatter_indices and N updates (an odd count "
                                   ">= 3), got ", operands.size(), " operands"));
  }
  size_t n = (operands.size() - 1) / 2;
  const TensorType& input = operands[0];
  const TensorType& indices = operands[n];
  ACCY_ASSIGN_OR_RETURN(auto window_dims, attrs.OptionalInts(kOp, "update_window_dims"));
  ACCY_ASSIGN_OR_RETURN(auto inserted, attrs.OptionalInts(kOp, "inserted_window_dims"));
  ACCY_ASSIGN_OR_RETURN(auto input_batching, attrs.OptionalInts(kOp, "input_batching_dims"));
  ACCY_ASSIGN_OR_RETURN(auto indices_batching,
                        attrs.OptionalInts(kOp, "scatter_indices_batching_dims"));
  ACCY_ASSIGN_OR_RETURN(auto to_operand, attrs.OptionalInts(kOp, "scatter_dims_to_operand_dims"));
  ACCY_ASSIGN_OR_RETURN(int64_t index_vector_dim, attrs.Int(kOp, "index_vector_dim"));

  for (size_t i = 0; i < n; ++i) {
    if (operands[i].dims() != input.dims()) {
      return Error(kOp, StrCat("input ", i, " has type ", operands[i].ToString(),
                                     ", expected the shape of input 0 (", input.ToString(), ")"));
    }
    const TensorType& update = operands[n + 1 + i];
    if (update.element_type() != operands[i].element_type() ||
        update.dims() != operands[n + 1].dims()) {
      return Error(kOp, StrCat("update ", i, " has type ", update.ToString(),
                                     ", expected the element type of input ", i,
                                     " and the shape of update 0"));
    }
  }
  int64_t rank = input.rank();
  ACCY_RETURN_IF_ERROR(CheckBatchingDimCounts(kOp, input_batching, indices_batching,
                                              "input_batching_dims",
                                              "scatter_indices_batching_dims"));
  if (static_cast<int64_t>(window_dims.size() + inserted.size() + input_batching.size()) != rank) {
    return Error(kOp, "update_window_dims, inserted_window_dims and input_batching_dims must "
                      "have the input rank entries in all");
  }
  ACCY_RETURN_IF_ERROR(CheckIndexBatching(kOp, input, indices, input_batching, indices_batching,
                                          index_vector_dim, "input_batching_dims",
                                          "scatter_indices_batching_dims"));
  ACCY_RETURN_IF_ERROR(
      CheckDisjoint(kOp, "inserted_window_dims", inserted, "input_batching_dims", input_batching));
  ACCY_RETURN_IF_ERROR(CheckSortedUniqueInRange(kOp, "inserted_window_dims", inserted, rank, true));
  ACCY_RETURN_IF_ERROR(
      CheckSortedUniqueInRange(kOp, "input_batching_dims", input_batching, rank, true));
  ACCY_RETURN_IF_ERROR(CheckDisjoint(kOp, "scatter_dims_to_operand_dims", to_operand,
                                     "input_batching_dims", input_batching));
  ACCY_RETURN_IF_ERROR(
      CheckSortedUniqueInRange(kOp, "scatter_dims_to_operand_dims", to_operand, rank, false));
  if (static_cast<int64_t>(to_operand.size()) != IndexVectorSize(indices, index_vector_dim)) {
    return Error(kOp, StrCat("scatter_dims_to_operand_dims ", DimsToString(to_operand),
                                   " has ", to_operand.size(), " entries, expected the index "
                                   "vector size ", IndexVectorSize(indices, index_vector_dim)));
  }
  // (C4) shape(updates) = combine(update_scatter_dim_sizes, update_window_dim_sizes).
  const TensorType& update = operands[n + 1];
  std::vector<int64_t> scatter_sizes = IndexBatchSizes(indices, index_vector_dim);
  if (update.rank() != static_cast<int64_t>(scatter_sizes.size() + window_dims.size())) {
    return Error(kOp, StrCat("updates have type ", update.ToString(), ", expected rank ",
                                   scatter_sizes.size() + window_dims.size(),
                                   " (scatter index dims plus update_window_dims)"));
  }
  ACCY_RETURN_IF_ERROR(
      CheckSortedUniqueInRange(kOp, "update_window_dims", window_dims, update.rank(), true));
  std::vector<int64_t> window_bounds;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(inserted, d) && !Contains(input_batching, d)) window_bounds.push_back(input.dim(d));
  }
  size_t next_scatter = 0, next_window = 0;
  for (int64_t d = 0; d < update.rank(); ++d) {
    if (Contains(window_dims, d)) {
      int64_t bound = window_bounds[next_window++];
      if (update.dim(d) > bound) {
        return Error(kOp, StrCat("update window dim ", d, " has size ", update.dim(d),
                                       ", larger than the input's ", bound));
      }
    } else if (update.dim(d) != scatter_sizes[next_scatter++]) {
      return Error(kOp, StrCat("update scatter dim ", d, " has size ", update.dim(d),
                                     ", expected ", scatter_sizes[next_scatter - 1],
                                     " (the matching scatter_indices dim)"));
    }
  }
  return std::vector<TensorType>(operands.begin(), operands.begin() + static_cast<ptrdiff_t>(n));
}

StatusOr<std::vector<TensorType>> InferDotGeneral(std::span<const TensorType> operands,
                                                  const AttributeView& attrs) {
  constexpr std::string_view kOp = "dot_general";
  if (operands.size() != 2) return Error(kOp, "expected 2 operands (lhs, rhs)");
  const TensorType& lhs = operands[0];
  const TensorType& rhs = operands[1];
  ACCY_ASSIGN_OR_RETURN(auto lhs_batch, attrs.OptionalInts(kOp, "lhs_batching_dimensions"));
  ACCY_ASSIGN_OR_RETURN(auto rhs_batch, attrs.OptionalInts(kOp, "rhs_batching_dimensions"));
  ACCY_ASSIGN_OR_RETURN(auto lhs_contract, attrs.OptionalInts(kOp, "lhs_contracting_dimensions"));
  ACCY_ASSIGN_OR_RETURN(auto rhs_contract, attrs.OptionalInts(kOp, "rhs_contracting_dimensions"));
  if (lhs.element_type() != rhs.element_type()) {
    return Error(kOp, StrCat("lhs has type ", lhs.ToString(), " but rhs has type ",
                                   rhs.ToString(), " (element types must match)"));
  }
  if (IsBool(lhs.element_type())) return Error(kOp, "i1 operands are not supported");
  if (lhs_batch.size() != rhs_batch.size()) {
    return Error(kOp, StrCat("lhs_batching_dimensions ", DimsToString(lhs_batch), " and "
                                   "rhs_batching_dimensions ", DimsToString(rhs_batch),
                                   " must have the same size"));
  }
  if (lhs_contract.size() != rhs_contract.size()) {
    return Error(kOp, StrCat("lhs_contracting_dimensions ", DimsToString(lhs_contract),
                                   " and rhs_contracting_dimensions ", DimsToString(rhs_contract),
                                   " must have the same size"));
  }
  ACCY_RETURN_IF_ERROR(CheckDisjoint(kOp, "lhs_batching_dimensions", lhs_batch,
                                     "lhs_contracting_dimensions", lhs_contract));
  ACCY_RETURN_IF_ERROR(CheckDisjoint(kOp, "rhs_batching_dimensions", rhs_batch,
                                     "rhs_contracting_dimensions", rhs_contract));
  ACCY_RETURN_IF_ERROR(CheckSortedUniqueInRange(kOp, "lhs_batching_dimensions", lhs_batch,
                                                lhs.rank(), false));
  ACCY_RETURN_IF_ERROR(CheckSortedUniqueInRange(kOp, "lhs_contracting_dimensions", lhs_contract,
                                                lhs.rank(), false));
  ACCY_RETURN_IF_ERROR(CheckSortedUniqueInRange(kOp, "rhs_batching_dimensions", rhs_batch,
                                                rhs.rank(), false));
  ACCY_RETURN_IF_ERROR(CheckSortedUniqueInRange(kOp, "rhs_contracting_dimensions", rhs_contract,
                                                rhs.rank(), false));
  for (size_t i = 0; i < lhs_batch.size(); ++i) {
    if (lhs.dim(lhs_batch[i]) != rhs.dim(rhs_batch[i])) {
      return Error(kOp, StrCat("lhs batching dim ", lhs_batch[i], " has size ",
                                     lhs.dim(lhs_batch[i]), ", rhs batching dim ", rhs_batch[i],
                                     " has size ", rhs.dim(rhs_batch[i])));
    }
  }
  for (size_t i = 0; i < lhs_contract.size(); ++i) {
    if (lhs.dim(lhs_contract[i]) != rhs.dim(rhs_contract[i])) {
      return Error(kOp, StrCat("lhs contracting dim ", lhs_contract[i], " has size ",
                                     lhs.dim(lhs_contract[i]), ", rhs contracting dim ",
                                     rhs_contract[i], " has size ", rhs.dim(rhs_contract[i])));
    }
  }
  if (const AttributeValue* precision = attrs.Find("precision_config")) {
    if (!std::holds_alternative<std::vector<std::string>>(*precision)) {
      return WrongAttributeKind(kOp, "precision_config", "a list of strings", *precision);
    }
    const auto& values = std::get<std::vector<std::string>>(*precision);
    if (!values.empty() && values.size() != 2) {
      return Error(kOp, "precision_config must have 0 or 2 entries");
    }
    for (const std::string& v : values) {
      if (v != "DEFAULT" && v != "HIGH" && v != "HIGHEST") {
        return Error(kOp, StrCat("precision '", v, "' is not DEFAULT, HIGH or HIGHEST"));
      }
    }
  }
  std::vector<int64_t> dims;
  for (int64_t d : lhs_batch) dims.push_back(lhs.dim(d));
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (!Contains(lhs_batch, d) && !Contains(lhs_contract, d)) dims.push_back(lhs.dim(d));
  }
  for (int64_t d = 0; d < rhs.rank(); ++d) {
    if (!Contains(rhs_batch, d) && !Contains(rhs_contract, d)) dims.push_back(rhs.dim(d));
  }
  auto result = TensorType::Create(lhs.element_type(), dims);
  if (!result.ok()) return Error(kOp, std::string(result.status().message()));
  return std::vector<TensorType>{*result};
}

}  // namespace accy::ir_internal
