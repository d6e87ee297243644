// Reference evaluation of reduce and cumsum (evaluator_internal.h).
//
// reduce (spec "reduce"): every result element starts at its init value and is combined with
// each input element that maps to it, visiting the input in row-major order, through the body
// region: acc = body(acc..., input...). A zero-size reduced dim leaves the init value.
// Short cuts, which agree with evaluating the body:
//   - a body that is one commutative binary op of its two arguments (add, multiply, maximum,
//     minimum, and, or, xor) applies that op's scalar arithmetic (elementwise_math.cc) directly
//     instead of evaluating the region per element;
//   - a float add body accumulates in double with Neumaier (compensated) summation, starting at
//     the init value, and rounds once to the result type. This is the reference header's
//     "accumulate in double, round once" rule made robust for f64: the result is the correctly
//     rounded sum except in rare cancellation cases, so long sums stay exact (2^25 ones in f32
//     give 33554432). With an infinite or NaN term the plain double sum is used (inf + -inf is
//     NaN, as sequential addition gives).
// cumsum (accy): inclusive prefix sum along `dimension`; floats accumulate in double and each
// output is rounded once; integers wrap; i1 accumulates with or (i1 add).
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "src/reference/elementwise_math.h"
#include "src/reference/evaluator_internal.h"
#include "src/reference/scalar.h"

namespace accy::reference {
namespace {

Status OpError(const Operation& op, const std::string& what) {
  return absl::InvalidArgumentError("reference evaluator: " + std::string(op.name()) + ": " +
                                    what);
}

// Visits every element of `dims` in row-major order as fn(input_linear, output_linear), where
// the output index drops the dims whose `output_strides` entry is 0 (the reduced dims).
template <typename Fn>
void ForEachInputElement(const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& output_strides, Fn&& fn) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int64_t> index(dims.size(), 0);
  int64_t output = 0;
  for (int64_t i = 0; i < count; ++i) {
    fn(i, output);
    for (size_t d = dims.size(); d-- > 0;) {  // odometer increment
      ++index[d];
      output += output_strides[d];
      if (index[d] < dims[d]) break;
      output -= output_strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

}  // namespace

std::optional<OpKind> SingleOpBody(const Region& region) {
  const Block* block = region.entry_block();
  if (block == nullptr || block->num_arguments() != 2 || block->operations().size() != 2) {
    return std::nullopt;
  }
  const Operation& combine = *block->operations()[0];
  const Operation& ret = *block->operations()[1];
  if (ret.kind() != OpKind::kReturn || ret.num_operands() != 1 || combine.num_results() != 1 ||
      ret.operand(0) != combine.result(0) || combine.num_operands() != 2) {
    return std::nullopt;
  }
  const Value* a = block->argument(0);
  const Value* b = block->argument(1);
  const bool uses_both = (combine.operand(0) == a && combine.operand(1) == b) ||
                         (combine.operand(0) == b && combine.operand(1) == a);
  if (!uses_both) return std::nullopt;
  switch (combine.kind()) {
    case OpKind::kAdd:
    case OpKind::kMultiply:
    case OpKind::kMaximum:
    case OpKind::kMinimum:
    case OpKind::kAnd:
    case OpKind::kOr:
    case OpKind::kXor:
      return combine.kind();
    default:
      return std::nullopt;
  }
}

namespace {

// Float sum of init + inputs mapped to each output, compensated (see the file comment).
void ReduceFloatSum(const Tensor& input, const std::vector<int64_t>& output_strides,
                    Tensor& result) {
  const int64_t outputs = result.element_count();
  std::vector<double> sum(static_cast<size_t>(outputs));
  std::vector<double> compensation(static_cast<size_t>(outputs), 0.0);
  std::vector<double> plain(static_cast<size_t>(outputs));
  for (int64_t o = 0; o < outputs; ++o) {
    sum[static_cast<size_t>(o)] = plain[static_cast<size_t>(o)] = LoadFloat(result, o);
  }
  ForEachInputElement(input.dims(), output_strides, [&](int64_t i, int64_t o) {
    const double x = LoadFloat(input, i);
    double& s = sum[static_cast<size_t>(o)];
    const double t = s + x;
    compensation[static_cast<size_t>(o)] += std::fabs(s) >= std::fabs(x) ? (s - t) + x : (x - t) + s;
    s = t;
    plain[static_cast<size_t>(o)] += x;
  });
  for (int64_t o = 0; o < outputs; ++o) {
    const size_t k = static_cast<size_t>(o);
    double value = plain[k];
    if (std::isfinite(value)) {
      // Adding a zero compensation would turn a -0 sum into +0.
      value = compensation[k] == 0 ? sum[k] : sum[k] + compensation[k];
    }
    StoreFloat(result, o, value);
  }
}

StatusOr<std::vector<Tensor>> EvaluateReduce(const Operation& op,
                                             std::span<const Tensor> operands,
                                             const RegionEvaluator& eval_region) {
  const int64_t n = op.num_results();
  if (n < 1 || static_cast<int64_t>(operands.size()) != 2 * n || op.num_regions() != 1) {
    return OpError(op, "expected N inputs, N init values, N results and a body, got " +
                           std::to_string(operands.size()) + " operands and " +
                           std::to_string(n) + " results");
  }
  std::span<const Tensor> inputs = operands.subspan(0, static_cast<size_t>(n));
  std::span<const Tensor> inits = operands.subspan(static_cast<size_t>(n));
  const std::vector<int64_t>& dims = inputs[0].dims();
  const int64_t rank = inputs[0].rank();

  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t d : op.GetInts("dimensions")) {
    if (d < 0 || d >= rank || reduced[static_cast<size_t>(d)]) {
      return OpError(op, "dimensions must be distinct dims of the rank-" + std::to_string(rank) +
                             " input, got " + std::to_string(d));
    }
    reduced[static_cast<size_t>(d)] = true;
  }
  std::vector<int64_t> result_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[static_cast<size_t>(d)]) result_dims.push_back(dims[static_cast<size_t>(d)]);
  }
  // Output stride of each input dim (0 for reduced dims).
  std::vector<int64_t> output_strides(static_cast<size_t>(rank), 0);
  for (int64_t d = rank - 1, stride = 1; d >= 0; --d) {
    if (reduced[static_cast<size_t>(d)]) continue;
    output_strides[static_cast<size_t>(d)] = stride;
    stride *= dims[static_cast<size_t>(d)];
  }

  std::vector<Tensor> results;
  for (int64_t k = 0; k < n; ++k) {
    const size_t ks = static_cast<size_t>(k);
    const TensorType& result_type = op.result(k)->type();
    if (inputs[ks].dims() != dims || inits[ks].rank() != 0 || result_type.dims() != result_dims ||
        inits[ks].element_type() != result_type.element_type()) {
      return OpError(op, "input " + std::to_string(k) + " " + inputs[ks].type().ToString() +
                             ", init " + inits[ks].type().ToString() + " and result " +
                             result_type.ToString() + " do not agree");
    }
    ACCY_ASSIGN_OR_RETURN(Tensor result, Tensor::Allocate(result_type));
    for (int64_t o = 0; o < result.element_count(); ++o) CopyElement(inits[ks], 0, result, o);
    results.push_back(std::move(result));
  }

  const Region& body = *op.region(0);
  const std::optional<OpKind> single_op = n == 1 ? SingleOpBody(body) : std::nullopt;
  const ElementType element_type = results[0].element_type();
  if (single_op.has_value() && inputs[0].element_type() == element_type &&
      CheckBinaryElementType(*single_op, element_type).ok()) {
    if (*single_op == OpKind::kAdd && IsFloat(element_type)) {
      ReduceFloatSum(inputs[0], output_strides, results[0]);
    } else {
      Tensor& result = results[0];
      ForEachInputElement(dims, output_strides, [&](int64_t i, int64_t o) {
        ApplyBinary(*single_op, result, o, inputs[0], i, result, o);
      });
    }
    return results;
  }

  // General body: the region runs once per input element, on rank-0 tensors.
  std::vector<Tensor> arguments;
  for (int64_t k = 0; k < 2 * n; ++k) {
    const Tensor& like = k < n ? results[static_cast<size_t>(k)] : inputs[static_cast<size_t>(k - n)];
    ACCY_ASSIGN_OR_RETURN(TensorType scalar_type, TensorType::Create(like.element_type(), {}));
    ACCY_ASSIGN_OR_RETURN(Tensor scalar, Tensor::Allocate(scalar_type));
    arguments.push_back(std::move(scalar));
  }
  Status status = absl::OkStatus();
  ForEachInputElement(dims, output_strides, [&](int64_t i, int64_t o) {
    if (!status.ok()) return;
    for (int64_t k = 0; k < n; ++k) {
      const size_t ks = static_cast<size_t>(k);
      CopyElement(results[ks], o, arguments[ks], 0);
      CopyElement(inputs[ks], i, arguments[ks + static_cast<size_t>(n)], 0);
    }
    StatusOr<std::vector<Tensor>> combined = eval_region(body, arguments);
    if (!combined.ok()) {
      status = combined.status();
      return;
    }
    if (static_cast<int64_t>(combined->size()) != n) {
      status = OpError(op, "body returned " + std::to_string(combined->size()) +
                               " values, expected " + std::to_string(n));
      return;
    }
    for (int64_t k = 0; k < n; ++k) {
      const size_t ks = static_cast<size_t>(k);
      const Tensor& value = (*combined)[ks];
      if (value.rank() != 0 || value.element_type() != results[ks].element_type()) {
        status = OpError(op, "body result " + std::to_string(k) + " has type " +
                                 value.type().ToString() + ", expected a scalar of " +
                                 std::string(ElementTypeName(results[ks].element_type())));
        return;
      }
      CopyElement(value, 0, results[ks], o);
    }
  });
  ACCY_RETURN_IF_ERROR(status);
  return results;
}

StatusOr<std::vector<Tensor>> EvaluateCumsum(const Operation& op,
                                             std::span<const Tensor> operands) {
  if (operands.size() != 1 || op.num_results() != 1) {
    return OpError(op, "expected 1 operand and 1 result");
  }
  const Tensor& x = operands[0];
  const int64_t dimension = op.GetInt("dimension").value_or(-1);
  if (dimension < 0 || dimension >= x.rank()) {
    return OpError(op, "dimension " + std::to_string(dimension) + " is not a dim of " +
                           x.type().ToString());
  }
  if (op.result(0)->type() != x.type()) {
    return OpError(op, "result type " + op.result(0)->type().ToString() + " differs from " +
                           x.type().ToString());
  }
  ACCY_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(x.type()));
  const ElementType type = x.element_type();
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (d < dimension) outer *= x.dims()[static_cast<size_t>(d)];
    if (d > dimension) inner *= x.dims()[static_cast<size_t>(d)];
  }
  const int64_t length = x.dims()[static_cast<size_t>(dimension)];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      double float_sum = 0;
      uint64_t int_sum = 0;  // wraps; masked to the width on store
      for (int64_t k = 0; k < length; ++k) {
        const int64_t i = (o * length + k) * inner + in;
        if (IsFloat(type)) {
          // Start from the first element itself so that a leading -0 stays -0.
          float_sum = k == 0 ? LoadFloat(x, i) : float_sum + LoadFloat(x, i);
          StoreFloat(out, i, float_sum);
        } else {
          int_sum = IsBool(type) ? (int_sum | LoadBits(x, i)) : int_sum + LoadBits(x, i);
          StoreBits(out, i, int_sum);
        }
      }
    }
  }
  std::vector<Tensor> results;
  results.push_back(std::move(out));
  return results;
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateReductionOp(const Operation& op,
                                                  std::span<const Tensor> operands,
                                                  const RegionEvaluator& eval_region) {
  switch (op.kind()) {
    case OpKind::kReduce:
      return EvaluateReduce(op, operands, eval_region);
    case OpKind::kCumsum:
      return EvaluateCumsum(op, operands);
    default:
      return absl::InternalError("reference evaluator: " + std::string(op.name()) +
                                 " is not a reduction op");
  }
}

}  // namespace accy::reference
