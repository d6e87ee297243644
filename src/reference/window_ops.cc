// Reference evaluation of reduce_window and select_and_scatter (evaluator_internal.h), direct
// loops transcribed from the StableHLO spec sections of the same names.
//
// reduce_window: the spec pads each input with its init value (low/high padding, base_dilations
// - 1 between elements), slices each window with window_dilations and reduces it with the body,
// starting at the init value. Here each result element starts at the init values and visits
// its window positions in row-major order: a position on an input element combines that
// element, a position on padding or a dilation hole combines the init value, each through the
// body (acc = body(acc..., value...)). Every position is combined in the element type, one at a
// time, so the JIT (jit/window_emitter.cc) can match the bits exactly. A one-op body of one
// input applies the op's arithmetic directly (SingleOpBody), which agrees with the region.
//
// select_and_scatter (XLA's semantics, which the spec describes as reduce_window of the select
// region followed by a scatter): the result starts as init_value everywhere; for each source
// element, in row-major order, the window positions over the operand (padding excluded) are
// visited in row-major order, the first one is selected, and each later one replaces the
// selection when select(selected value, its value) is false; the source element is then combined
// into the result at the selected position: result = scatter(result, source). A window that
// lies entirely in the padding selects nothing, and its source element is dropped.
#include <string>
#include <utility>

#include "src/ir/window_geometry.h"
#include "src/reference/elementwise_math.h"
#include "src/reference/evaluator_internal.h"

namespace accy::reference {
namespace {

Status OpError(const Operation& op, const std::string& what) {
  return absl::InvalidArgumentError("reference evaluator: " + std::string(op.name()) + ": " +
                                    what);
}

StatusOr<Tensor> ScalarLike(const Tensor& like) {
  ACCY_ASSIGN_OR_RETURN(TensorType type, TensorType::Create(like.element_type(), {}));
  return Tensor::Allocate(type);
}

// Calls fn(index) for every index of the row-major space `dims`; nothing when it is empty.
template <typename Fn>
void ForEachIndex(const std::vector<int64_t>& dims, Fn&& fn) {
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(dims.size(), 0);
  while (true) {
    fn(index);
    size_t d = dims.size();
    while (d > 0) {
      --d;
      if (++index[d] < dims[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (dims.empty()) return;
  }
}

// Runs region `region` on `arguments` and checks that it returned `count` rank-0 values of the
// element types of `like`.
StatusOr<std::vector<Tensor>> RunRegion(const Operation& op, const Region& region,
                                        std::string_view what, std::span<const Tensor> arguments,
                                        const std::vector<ElementType>& result_types,
                                        const RegionEvaluator& eval_region) {
  ACCY_ASSIGN_OR_RETURN(std::vector<Tensor> values, eval_region(region, arguments));
  if (values.size() != result_types.size()) {
    return OpError(op, std::string(what) + " returned " + std::to_string(values.size()) +
                           " values, expected " + std::to_string(result_types.size()));
  }
  for (size_t k = 0; k < values.size(); ++k) {
    if (values[k].rank() != 0 || values[k].element_type() != result_types[k]) {
      return OpError(op, std::string(what) + " result " + std::to_string(k) + " has type " +
                             values[k].type().ToString() + ", expected a scalar of " +
                             std::string(ElementTypeName(result_types[k])));
    }
  }
  return values;
}

StatusOr<std::vector<Tensor>> EvaluateReduceWindow(const Operation& op,
                                                   std::span<const Tensor> operands,
                                                   const RegionEvaluator& eval_region) {
  const int64_t n = op.num_results();
  if (n < 1 || static_cast<int64_t>(operands.size()) != 2 * n || op.num_regions() != 1) {
    return OpError(op, "expected N inputs, N init values, N results and a body");
  }
  const size_t ns = static_cast<size_t>(n);
  std::span<const Tensor> inputs = operands.subspan(0, ns);
  std::span<const Tensor> inits = operands.subspan(ns);
  const std::vector<int64_t>& dims = inputs[0].dims();
  ACCY_ASSIGN_OR_RETURN(WindowGeometry g,
                        ReadWindowGeometry(op.name(), op.attributes(), dims, true));
  const std::vector<int64_t> result_dims = g.NumWindows(dims);
  std::vector<Tensor> results;
  std::vector<ElementType> types;
  for (size_t k = 0; k < ns; ++k) {
    const TensorType& type = op.result(static_cast<int64_t>(k))->type();
    if (inputs[k].dims() != dims || type.dims() != result_dims ||
        inits[k].element_type() != type.element_type() ||
        inputs[k].element_type() != type.element_type()) {
      return OpError(op, "input " + std::to_string(k) + " " + inputs[k].type().ToString() +
                             " and result " + type.ToString() + " do not agree");
    }
    ACCY_ASSIGN_OR_RETURN(Tensor result, Tensor::Allocate(type));
    results.push_back(std::move(result));
    types.push_back(type.element_type());
  }

  const Region& body = *op.region(0);
  const std::optional<OpKind> single_op = n == 1 ? SingleOpBody(body) : std::nullopt;
  const bool direct = single_op.has_value() && CheckBinaryElementType(*single_op, types[0]).ok();
  std::vector<Tensor> arguments;  // the body's: accumulators, then values
  for (size_t k = 0; k < 2 * ns; ++k) {
    ACCY_ASSIGN_OR_RETURN(Tensor scalar, ScalarLike(results[k % ns]));
    arguments.push_back(std::move(scalar));
  }
  const size_t rank = dims.size();
  std::vector<int64_t> input_index(rank);
  Status status = absl::OkStatus();
  ForEachIndex(result_dims, [&](const std::vector<int64_t>& out) {
    if (!status.ok()) return;
    const int64_t o = Ravel(out, result_dims);
    for (size_t k = 0; k < ns; ++k) CopyElement(inits[k], 0, arguments[k], 0);
    ForEachIndex(g.window_dimensions, [&](const std::vector<int64_t>& w) {
      if (!status.ok()) return;
      // The position in the dilated input (spec: padded index minus the low padding).
      bool on_input = true;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t q =
            out[d] * g.window_strides[d] + w[d] * g.window_dilations[d] - g.padding_low[d];
        if (q < 0 || q >= g.DilatedInput(d, dims[d]) || q % g.base_dilations[d] != 0) {
          on_input = false;
          break;
        }
        input_index[d] = q / g.base_dilations[d];
      }
      const int64_t i = on_input ? Ravel(input_index, dims) : 0;
      if (direct) {
        const Tensor& value = on_input ? inputs[0] : inits[0];
        ApplyBinary(*single_op, arguments[0], 0, value, on_input ? i : 0, arguments[0], 0);
        return;
      }
      for (size_t k = 0; k < ns; ++k) {
        if (on_input) {
          CopyElement(inputs[k], i, arguments[ns + k], 0);
        } else {
          CopyElement(inits[k], 0, arguments[ns + k], 0);
        }
      }
      StatusOr<std::vector<Tensor>> combined =
          RunRegion(op, body, "body", arguments, types, eval_region);
      if (!combined.ok()) {
        status = combined.status();
        return;
      }
      for (size_t k = 0; k < ns; ++k) CopyElement((*combined)[k], 0, arguments[k], 0);
    });
    for (size_t k = 0; k < ns; ++k) CopyElement(arguments[k], 0, results[k], o);
  });
  ACCY_RETURN_IF_ERROR(status);
  return results;
}

StatusOr<std::vector<Tensor>> EvaluateSelectAndScatter(const Operation& op,
                                                       std::span<const Tensor> operands,
                                                       const RegionEvaluator& eval_region) {
  if (operands.size() != 3 || op.num_results() != 1 || op.num_regions() != 2) {
    return OpError(op, "expected operand, source, init_value, one result and two regions");
  }
  const Tensor& operand = operands[0];
  const Tensor& source = operands[1];
  const Tensor& init = operands[2];
  const std::vector<int64_t>& dims = operand.dims();
  ACCY_ASSIGN_OR_RETURN(WindowGeometry g,
                        ReadWindowGeometry(op.name(), op.attributes(), dims, false));
  if (source.dims() != g.NumWindows(dims) || op.result(0)->type() != operand.type() ||
      init.element_type() != operand.element_type()) {
    return OpError(op, "operand " + operand.type().ToString() + ", source " +
                           source.type().ToString() + " and result " +
                           op.result(0)->type().ToString() + " do not agree");
  }
  ACCY_ASSIGN_OR_RETURN(Tensor result, Tensor::Allocate(operand.type()));
  for (int64_t e = 0; e < result.element_count(); ++e) CopyElement(init, 0, result, e);
  const ElementType type = operand.element_type();
  std::vector<Tensor> pair;
  for (int k = 0; k < 2; ++k) {
    ACCY_ASSIGN_OR_RETURN(Tensor scalar, ScalarLike(operand));
    pair.push_back(std::move(scalar));
  }
  const size_t rank = dims.size();
  std::vector<int64_t> index(rank);
  Status status = absl::OkStatus();
  ForEachIndex(source.dims(), [&](const std::vector<int64_t>& s) {
    if (!status.ok()) return;
    int64_t selected = -1;
    ForEachIndex(g.window_dimensions, [&](const std::vector<int64_t>& w) {
      if (!status.ok()) return;
      for (size_t d = 0; d < rank; ++d) {
        index[d] = s[d] * g.window_strides[d] + w[d] - g.padding_low[d];
        if (index[d] < 0 || index[d] >= dims[d]) return;  // padding is never selected
      }
      const int64_t at = Ravel(index, dims);
      if (selected < 0) {
        selected = at;
        return;
      }
      CopyElement(operand, selected, pair[0], 0);
      CopyElement(operand, at, pair[1], 0);
      StatusOr<std::vector<Tensor>> keep =
          RunRegion(op, *op.region(0), "select", pair, {ElementType::kI1}, eval_region);
      if (!keep.ok()) {
        status = keep.status();
        return;
      }
      if (LoadInt((*keep)[0], 0) == 0) selected = at;
    });
    if (!status.ok() || selected < 0) return;
    CopyElement(result, selected, pair[0], 0);
    CopyElement(source, Ravel(s, source.dims()), pair[1], 0);
    StatusOr<std::vector<Tensor>> combined =
        RunRegion(op, *op.region(1), "scatter", pair, {type}, eval_region);
    if (!combined.ok()) {
      status = combined.status();
      return;
    }
    CopyElement((*combined)[0], 0, result, selected);
  });
  ACCY_RETURN_IF_ERROR(status);
  std::vector<Tensor> results;
  results.push_back(std::move(result));
  return results;
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateWindowOp(const Operation& op,
                                               std::span<const Tensor> operands,
                                               const RegionEvaluator& eval_region) {
  switch (op.kind()) {
    case OpKind::kReduceWindow:
      return EvaluateReduceWindow(op, operands, eval_region);
    case OpKind::kSelectAndScatter:
      return EvaluateSelectAndScatter(op, operands, eval_region);
    default:
      return absl::InternalError("reference evaluator: " + std::string(op.name()) +
                                 " is not a window op");
  }
}

}  // namespace accy::reference
