// Reference evaluation of gather and scatter, transcribed from the StableHLO spec sections
// "gather" and "scatter" (including operand_batching_dims / input_batching_dims).
//
// gather clamps every start index into the operand (spec: full_start_index = clamp(start_index,
// 0, dim(operand) - slice_sizes)). scatter starts from copies of its inputs, walks the update
// index space in row-major order (accy's choice of the spec's implementation-defined schedule,
// so duplicate indices combine in that order), skips each update element whose result_index is
// out of bounds, and combines in-bounds elements through the update_computation region
// evaluated by the driver. The ops arrive verified; the checks here guard memory safety only.
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

// Calls fn(index, linear) for every index of `dims` in row-major order.
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

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// True when every entry is in [0, bound).
bool AllInRange(const std::vector<int64_t>& values, int64_t bound) {
  return std::all_of(values.begin(), values.end(),
                     [bound](int64_t v) { return v >= 0 && v < bound; });
}

// Element `linear` of an index tensor as a signed value. A u64 index above INT64_MAX is larger
// than any dim, so it is pinned at INT64_MAX (clamping or bounds checks then act as with the
// true value).
int64_t LoadIndex(const Tensor& indices, int64_t linear) {
  const int64_t value = LoadInt(indices, linear);
  if (IsUnsigned(indices.element_type()) && value < 0) return std::numeric_limits<int64_t>::max();
  return value;
}

// The spec's start_index: indices[i0, ..., :, ..., iN] with `:` at index_vector_dim when
// index_vector_dim < rank(indices), else [indices[batch_index]]. `batch_index` indexes the
// indices tensor without its index_vector_dim.
std::vector<int64_t> StartIndex(const Tensor& indices, int64_t index_vector_dim,
                                const std::vector<int64_t>& batch_index, size_t size) {
  std::vector<int64_t> start_index(size);
  if (index_vector_dim >= indices.rank()) {
    start_index[0] = LoadIndex(indices, Ravel(batch_index, indices.dims()));
    return start_index;
  }
  std::vector<int64_t> full_index = batch_index;
  full_index.insert(full_index.begin() + index_vector_dim, 0);
  for (size_t k = 0; k < size; ++k) {
    full_index[static_cast<size_t>(index_vector_dim)] = static_cast<int64_t>(k);
    start_index[k] = LoadIndex(indices, Ravel(full_index, indices.dims()));
  }
  return start_index;
}

// The dims of `indices` without index_vector_dim (the implicit batch dims of gather/scatter).
std::vector<int64_t> IndicesBatchShape(const Tensor& indices, int64_t index_vector_dim) {
  std::vector<int64_t> shape = indices.dims();
  if (index_vector_dim < indices.rank()) shape.erase(shape.begin() + index_vector_dim);
  return shape;
}

// Common checks of the index tensor side of gather/scatter; `map` is start_index_map or
// scatter_dims_to_operand_dims, `operand_rank` the rank it indexes.
Status CheckIndexing(const Operation& op, const Tensor& indices, int64_t index_vector_dim,
                     const std::vector<int64_t>& map,
                     const std::vector<int64_t>& indices_batching_dims, int64_t operand_rank) {
  if (!IsInteger(indices.element_type())) return OpError(op, "indices must be integers");
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return OpError(op, "index_vector_dim is out of range");
  }
  const int64_t vector_size =
      index_vector_dim < indices.rank() ? indices.dims()[index_vector_dim] : 1;
  if (static_cast<int64_t>(map.size()) != vector_size || !AllInRange(map, operand_rank)) {
    return OpError(op, "index map does not match the index vector or the operand rank");
  }
  if (!AllInRange(indices_batching_dims, indices.rank()) ||
      Contains(indices_batching_dims, index_vector_dim)) {
    return OpError(op, "indices batching dims are out of range");
  }
  return absl::OkStatus();
}

// Spec "gather": result[result_index] = operand[operand_index] with
// operand_index = full_start_index + full_batching_index + full_offset_index.
StatusOr<Tensor> Gather(const Operation& op, const Tensor& operand, const Tensor& start_indices) {
  ACCY_ASSIGN_OR_RETURN(Tensor result, Tensor::Allocate(op.result(0)->type()));
  const std::vector<int64_t> offset_dims = op.GetInts("offset_dims");
  const std::vector<int64_t> collapsed_slice_dims = op.GetInts("collapsed_slice_dims");
  const std::vector<int64_t> operand_batching_dims = op.GetInts("operand_batching_dims");
  const std::vector<int64_t> start_indices_batching_dims =
      op.GetInts("start_indices_batching_dims");
  const std::vector<int64_t> start_index_map = op.GetInts("start_index_map");
  const int64_t index_vector_dim = op.GetInt("index_vector_dim").value_or(-1);
  const std::vector<int64_t> slice_sizes = op.GetInts("slice_sizes");
  const int64_t operand_rank = operand.rank();

  ACCY_RETURN_IF_ERROR(CheckIndexing(op, start_indices, index_vector_dim, start_index_map,
                                     start_indices_batching_dims, operand_rank));
  if (static_cast<int64_t>(slice_sizes.size()) != operand_rank ||
      !AllInRange(offset_dims, result.rank()) || !AllInRange(collapsed_slice_dims, operand_rank) ||
      !AllInRange(operand_batching_dims, operand_rank) ||
      operand_batching_dims.size() != start_indices_batching_dims.size() ||
      static_cast<int64_t>(offset_dims.size() + collapsed_slice_dims.size() +
                           operand_batching_dims.size()) != operand_rank) {
    return OpError(op, "dimension numbers do not match the operand and result ranks");
  }
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > operand.dims()[d]) {
      return OpError(op, absl::StrCat("slice_sizes[", d, "] is out of range"));
    }
  }
  // batch_dims = [d for d in axes(result) and d not in offset_dims].
  std::vector<int64_t> batch_dims;
  for (int64_t d = 0; d < result.rank(); ++d) {
    if (!Contains(offset_dims, d)) batch_dims.push_back(d);
  }
  const std::vector<int64_t> indices_batch_shape =
      IndicesBatchShape(start_indices, index_vector_dim);
  bool batch_shape_matches = indices_batch_shape.size() == batch_dims.size();
  for (size_t i = 0; batch_shape_matches && i < batch_dims.size(); ++i) {
    batch_shape_matches = result.dims()[batch_dims[i]] == indices_batch_shape[i];
  }
  if (!batch_shape_matches) return OpError(op, "result batch dims do not match start_indices");
  // The operand dims that receive offset_index entries, in order (all dims but collapsed and
  // operand batching dims).
  std::vector<int64_t> offset_operand_dims;
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (!Contains(collapsed_slice_dims, d) && !Contains(operand_batching_dims, d)) {
      offset_operand_dims.push_back(d);
    }
  }
  if (offset_operand_dims.size() != offset_dims.size()) {
    return OpError(op, "collapsed_slice_dims and operand_batching_dims overlap");
  }

  std::vector<int64_t> batch_index(batch_dims.size());
  std::vector<int64_t> operand_index(static_cast<size_t>(operand_rank));
  Status status;
  ForEachIndex(result.dims(), [&](const std::vector<int64_t>& result_index, int64_t linear) {
    if (!status.ok()) return;
    for (size_t i = 0; i < batch_dims.size(); ++i) {
      batch_index[i] = result_index[static_cast<size_t>(batch_dims[i])];
    }
    const std::vector<int64_t> start_index =
        StartIndex(start_indices, index_vector_dim, batch_index, start_index_map.size());
    std::fill(operand_index.begin(), operand_index.end(), 0);
    // full_start_index[d_operand] = clamp(start_index[d_start], 0,
    //                                     dim(operand, d_operand) - slice_sizes[d_operand]).
    for (size_t d_start = 0; d_start < start_index_map.size(); ++d_start) {
      const size_t d_operand = static_cast<size_t>(start_index_map[d_start]);
      const int64_t high = operand.dims()[d_operand] - slice_sizes[d_operand];
      operand_index[d_operand] += std::max<int64_t>(0, std::min(start_index[d_start], high));
    }
    // full_batching_index[d_operand] = batch_index[d_start - (d_start < index_vector_dim ? 0 : 1)].
    for (size_t i = 0; i < operand_batching_dims.size(); ++i) {
      const int64_t d_start = start_indices_batching_dims[i];
      operand_index[static_cast<size_t>(operand_batching_dims[i])] +=
          batch_index[static_cast<size_t>(d_start - (d_start < index_vector_dim ? 0 : 1))];
    }
    // full_offset_index: offset_index with 0 at collapsed_slice_dims and operand_batching_dims.
    for (size_t i = 0; i < offset_dims.size(); ++i) {
      operand_index[static_cast<size_t>(offset_operand_dims[i])] +=
          result_index[static_cast<size_t>(offset_dims[i])];
    }
    for (int64_t d = 0; d < operand_rank; ++d) {
      if (operand_index[d] < 0 || operand_index[d] >= operand.dims()[d]) {
        status = OpError(op,
                         "operand index out of bounds (result shape inconsistent with "
                         "slice_sizes)");
        return;
      }
    }
    CopyElement(operand, Ravel(operand_index, operand.dims()), result, linear);
  });
  ACCY_RETURN_IF_ERROR(status);
  return result;
}

// A rank-0 tensor holding element `linear` of `from`.
StatusOr<Tensor> ScalarOf(const Tensor& from, int64_t linear) {
  ACCY_ASSIGN_OR_RETURN(TensorType type, TensorType::Create(from.element_type(), {}));
  ACCY_ASSIGN_OR_RETURN(Tensor scalar, Tensor::Allocate(type));
  CopyElement(from, linear, scalar, 0);
  return scalar;
}

// a + b, or nullopt when it overflows.
std::optional<int64_t> AddIndex(int64_t a, int64_t b) {
  int64_t sum;
  if (!CheckedAdd(a, b, &sum)) return std::nullopt;
  return sum;
}

// Spec "scatter": for each update_index (row-major), result_index = full_start_index +
// full_batching_index + full_window_index; in-bounds elements become
// update_computation(results...[result_index], updates...[update_index]).
StatusOr<std::vector<Tensor>> Scatter(const Operation& op, std::span<const Tensor> operands,
                                      const RegionEvaluator& eval_region) {
  if (operands.size() < 3 || operands.size() % 2 == 0 ||
      op.num_results() != static_cast<int64_t>(operands.size() / 2) || op.num_regions() != 1) {
    return OpError(op, "expects N inputs, scatter_indices, N updates, N results and a region");
  }
  const size_t n = operands.size() / 2;
  std::span<const Tensor> inputs = operands.first(n);
  const Tensor& scatter_indices = operands[n];
  std::span<const Tensor> updates = operands.subspan(n + 1);
  const std::vector<int64_t> update_window_dims = op.GetInts("update_window_dims");
  const std::vector<int64_t> inserted_window_dims = op.GetInts("inserted_window_dims");
  const std::vector<int64_t> input_batching_dims = op.GetInts("input_batching_dims");
  const std::vector<int64_t> scatter_indices_batching_dims =
      op.GetInts("scatter_indices_batching_dims");
  const std::vector<int64_t> scatter_dims_to_operand_dims =
      op.GetInts("scatter_dims_to_operand_dims");
  const int64_t index_vector_dim = op.GetInt("index_vector_dim").value_or(-1);
  const int64_t input_rank = inputs[0].rank();
  const std::vector<int64_t>& input_dims = inputs[0].dims();

  ACCY_RETURN_IF_ERROR(CheckIndexing(op, scatter_indices, index_vector_dim,
                                     scatter_dims_to_operand_dims, scatter_indices_batching_dims,
                                     input_rank));
  for (size_t i = 0; i < n; ++i) {
    if (inputs[i].dims() != input_dims || updates[i].dims() != updates[0].dims() ||
        op.result(static_cast<int64_t>(i))->type() != inputs[i].type()) {
      return OpError(op, "inputs, updates and results must have matching shapes");
    }
  }
  if (!AllInRange(update_window_dims, updates[0].rank()) ||
      !AllInRange(inserted_window_dims, input_rank) ||
      !AllInRange(input_batching_dims, input_rank) ||
      input_batching_dims.size() != scatter_indices_batching_dims.size()) {
    return OpError(op, "dimension numbers are out of range");
  }
  // update_scatter_dims = [d for d in axes(updates[0]) and d not in update_window_dims].
  std::vector<int64_t> update_scatter_dims;
  for (int64_t d = 0; d < updates[0].rank(); ++d) {
    if (!Contains(update_window_dims, d)) update_scatter_dims.push_back(d);
  }
  const std::vector<int64_t> indices_batch_shape =
      IndicesBatchShape(scatter_indices, index_vector_dim);
  bool batch_shape_matches = indices_batch_shape.size() == update_scatter_dims.size();
  for (size_t i = 0; batch_shape_matches && i < update_scatter_dims.size(); ++i) {
    batch_shape_matches = updates[0].dims()[update_scatter_dims[i]] == indices_batch_shape[i];
  }
  if (!batch_shape_matches) {
    return OpError(op, "update scatter dims do not match scatter_indices");
  }
  // The input dims that receive update_window_index entries, in order.
  std::vector<int64_t> window_input_dims;
  for (int64_t d = 0; d < input_rank; ++d) {
    if (!Contains(inserted_window_dims, d) && !Contains(input_batching_dims, d)) {
      window_input_dims.push_back(d);
    }
  }
  if (window_input_dims.size() != update_window_dims.size()) {
    return OpError(op, "update_window_dims do not match the input rank");
  }
  const Region& update_computation = *op.region(0);

  std::vector<Tensor> results;
  for (const Tensor& input : inputs) {
    ACCY_ASSIGN_OR_RETURN(Tensor copy, input.Clone());
    results.push_back(std::move(copy));
  }
  std::vector<int64_t> update_scatter_index(update_scatter_dims.size());
  std::vector<int64_t> result_index(static_cast<size_t>(input_rank));
  std::vector<Tensor> arguments(2 * n);
  Status status;
  ForEachIndex(
      updates[0].dims(), [&](const std::vector<int64_t>& update_index, int64_t update_linear) {
        if (!status.ok()) return;
        for (size_t i = 0; i < update_scatter_dims.size(); ++i) {
          update_scatter_index[i] = update_index[static_cast<size_t>(update_scatter_dims[i])];
        }
        const std::vector<int64_t> start_index =
            StartIndex(scatter_indices, index_vector_dim, update_scatter_index,
                       scatter_dims_to_operand_dims.size());
        // full_start_index, full_batching_index and full_window_index, summed per dim; a sum that
        // overflows int64 is out of bounds anyway.
        std::vector<std::optional<int64_t>> sum(static_cast<size_t>(input_rank), int64_t{0});
        auto add = [&sum](int64_t d, int64_t value) {
          std::optional<int64_t>& entry = sum[static_cast<size_t>(d)];
          if (entry) entry = AddIndex(*entry, value);
        };
        for (size_t d_start = 0; d_start < scatter_dims_to_operand_dims.size(); ++d_start) {
          add(scatter_dims_to_operand_dims[d_start], start_index[d_start]);
        }
        for (size_t i = 0; i < input_batching_dims.size(); ++i) {
          const int64_t d_start = scatter_indices_batching_dims[i];
          add(input_batching_dims[i], update_scatter_index[static_cast<size_t>(
                                          d_start - (d_start < index_vector_dim ? 0 : 1))]);
        }
        for (size_t i = 0; i < update_window_dims.size(); ++i) {
          add(window_input_dims[i], update_index[static_cast<size_t>(update_window_dims[i])]);
        }
        for (int64_t d = 0; d < input_rank; ++d) {
          if (!sum[d] || *sum[d] < 0 || *sum[d] >= input_dims[d]) return;  // skipped per spec
          result_index[d] = *sum[d];
        }
        const int64_t result_linear = Ravel(result_index, input_dims);
        for (size_t i = 0; i < n; ++i) {
          StatusOr<Tensor> current = ScalarOf(results[i], result_linear);
          StatusOr<Tensor> update = ScalarOf(updates[i], update_linear);
          if (!current.ok() || !update.ok()) {
            status = !current.ok() ? current.status() : update.status();
            return;
          }
          arguments[i] = std::move(current).value();
          arguments[n + i] = std::move(update).value();
        }
        StatusOr<std::vector<Tensor>> updated = eval_region(update_computation, arguments);
        if (!updated.ok()) {
          status = updated.status();
          return;
        }
        if (updated->size() != n) {
          status = OpError(op, "update_computation returned the wrong number of values");
          return;
        }
        for (size_t i = 0; i < n; ++i) {
          const Tensor& value = (*updated)[i];
          if (value.element_count() != 1 || value.element_type() != results[i].element_type()) {
            status = OpError(op, "update_computation returned a value of the wrong type");
            return;
          }
          CopyElement(value, 0, results[i], result_linear);
        }
      });
  ACCY_RETURN_IF_ERROR(status);
  return results;
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateGatherScatterOp(const Operation& op,
                                                      std::span<const Tensor> operands,
                                                      const RegionEvaluator& eval_region) {
  switch (op.kind()) {
    case OpKind::kGather: {
      if (operands.size() != 2 || op.num_results() != 1) {
        return OpError(op, "expects operand, start_indices and one result");
      }
      ACCY_ASSIGN_OR_RETURN(Tensor result, Gather(op, operands[0], operands[1]));
      std::vector<Tensor> results;
      results.push_back(std::move(result));
      return results;
    }
    case OpKind::kScatter:
      return Scatter(op, operands, eval_region);
    default:
      ACCY_CHECK(!"EvaluateGatherScatterOp: the driver dispatched another op");
      return OpError(op, "not gather or scatter");
  }
}

}  // namespace accy::reference
