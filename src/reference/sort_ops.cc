// Reference evaluation of sort (StableHLO spec "sort") and top_k (CHLO "top_k"), direct loops
// over the spec's definitions: every row along the sorted dim is ordered by a stable sort of
// its index permutation (std::stable_sort), sort's comparator region evaluated by the evaluator
// on rank-0 tensors for every comparison, and every operand gathered through the permutation.
// top_k orders each last-dim row by a full stable sort in TOTALORDER descending (the oracle does
// not share the JIT's partial selection) and keeps the first k.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "src/reference/evaluator_internal.h"
#include "src/reference/scalar.h"
#include "src/util/str_cat.h"

namespace accy::reference {
namespace {

// Rows of `dims` along `dimension`: their count, the dim's size and stride, and row r's first
// element (r = outer * stride + inner, over the dims before and after `dimension`).
struct RowGeometry {
  int64_t rows = 0;
  int64_t size = 0;
  int64_t stride = 1;
  int64_t Base(int64_t row) const {
    const int64_t outer = row / stride, inner = row % stride;
    return outer * size * stride + inner;
  }
};

RowGeometry RowsAlong(const std::vector<int64_t>& dims, int64_t dimension) {
  RowGeometry g;
  g.size = dims[static_cast<size_t>(dimension)];
  int64_t outer = 1;
  for (int64_t d = 0; d < dimension; ++d) outer *= dims[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(dimension) + 1; d < dims.size(); ++d) g.stride *= dims[d];
  g.rows = outer * g.stride;
  return g;
}

StatusOr<Tensor> Scalar(const Tensor& from, int64_t index) {
  ACCY_ASSIGN_OR_RETURN(Tensor scalar,
                        Tensor::Allocate(*TensorType::Create(from.element_type(), {})));
  CopyElement(from, index, scalar, 0);
  return scalar;
}

StatusOr<std::vector<Tensor>> EvaluateSort(const Operation& op, std::span<const Tensor> operands,
                                           const RegionEvaluator& eval_region) {
  const std::vector<int64_t>& dims = operands[0].type().dims();
  int64_t dimension = op.GetInt("dimension").value_or(0);
  if (dimension < 0) dimension += static_cast<int64_t>(dims.size());
  const RowGeometry g = RowsAlong(dims, dimension);
  std::vector<Tensor> results;
  for (const Tensor& operand : operands) {
    ACCY_ASSIGN_OR_RETURN(Tensor result, Tensor::Allocate(operand.type()));
    results.push_back(std::move(result));
  }
  Status error = absl::OkStatus();
  std::vector<int64_t> order(static_cast<size_t>(g.size));
  for (int64_t row = 0; row < g.rows && g.size > 0; ++row) {
    const int64_t base = g.Base(row);
    std::iota(order.begin(), order.end(), 0);
    // comparator(inputs[0][lhs], inputs[0][rhs], inputs[1][lhs], ...): true when lhs goes first.
    auto less = [&](int64_t lhs, int64_t rhs) -> bool {
      if (!error.ok()) return false;
      std::vector<Tensor> arguments;
      for (const Tensor& operand : operands) {
        for (int64_t index : {lhs, rhs}) {
          StatusOr<Tensor> scalar = Scalar(operand, base + index * g.stride);
          if (!scalar.ok()) {
            error = scalar.status();
            return false;
          }
          arguments.push_back(*std::move(scalar));
        }
      }
      StatusOr<std::vector<Tensor>> returned = eval_region(*op.region(0), arguments);
      if (!returned.ok()) {
        error = returned.status();
        return false;
      }
      if (returned->size() != 1 || (*returned)[0].type() !=
                                       *TensorType::Create(ElementType::kI1, {})) {
        error = absl::InvalidArgumentError(
            "reference evaluator: sort comparator must return one tensor<i1>");
        return false;
      }
      return LoadBits((*returned)[0], 0) != 0;
    };
    std::stable_sort(order.begin(), order.end(), less);
    ACCY_RETURN_IF_ERROR(error);
    for (size_t i = 0; i < operands.size(); ++i) {
      for (int64_t p = 0; p < g.size; ++p) {
        CopyElement(operands[i], base + order[static_cast<size_t>(p)] * g.stride, results[i],
                    base + p * g.stride);
      }
    }
  }
  return results;
}

// a > b in TOTALORDER (spec "compare": -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN, NaNs
// by payload), or as the integer type orders (unsigned types unsigned).
bool TotalOrderGreater(const Tensor& t, int64_t a, int64_t b) {
  const ElementType type = t.element_type();
  if (!IsFloat(type)) {
    if (IsUnsigned(type) || IsBool(type)) return LoadBits(t, a) > LoadBits(t, b);
    return LoadInt(t, a) > LoadInt(t, b);
  }
  const int bits = ElementBitWidth(type);
  const uint64_t sign_bit = uint64_t{1} << (bits - 1);
  const uint64_t x = LoadBits(t, a), y = LoadBits(t, b);
  const double dx = FloatBitsToDouble(type, x), dy = FloatBitsToDouble(type, y);
  // Classes: -NaN 0, numbers 1, +NaN 2.
  const auto cls = [&](uint64_t v, double d) { return std::isnan(d) ? ((v & sign_bit) ? 0 : 2) : 1; };
  const int cx = cls(x, dx), cy = cls(y, dy);
  if (cx != cy) return cx > cy;
  const uint64_t mx = x & ~sign_bit, my = y & ~sign_bit;
  if (cx == 2) return mx > my;
  if (cx == 0) return mx < my;
  if (dx != dy) return dx > dy;
  return (x & sign_bit) == 0 && (y & sign_bit) != 0;  // +0 > -0
}

StatusOr<std::vector<Tensor>> EvaluateTopK(const Operation& op, std::span<const Tensor> operands) {
  const Tensor& x = operands[0];
  const int64_t k = op.GetInt("k").value_or(0);
  const RowGeometry g = RowsAlong(x.type().dims(), x.rank() - 1);
  ACCY_ASSIGN_OR_RETURN(Tensor values, Tensor::Allocate(op.result(0)->type()));
  ACCY_ASSIGN_OR_RETURN(Tensor indices, Tensor::Allocate(op.result(1)->type()));
  std::vector<int64_t> order(static_cast<size_t>(g.size));
  for (int64_t row = 0; row < g.rows && k > 0; ++row) {
    const int64_t base = row * g.size;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return TotalOrderGreater(x, base + a, base + b);
    });
    for (int64_t p = 0; p < k; ++p) {
      CopyElement(x, base + order[static_cast<size_t>(p)], values, row * k + p);
      StoreInt(indices, row * k + p, order[static_cast<size_t>(p)]);
    }
  }
  std::vector<Tensor> results;
  results.push_back(std::move(values));
  results.push_back(std::move(indices));
  return results;
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateSortOp(const Operation& op,
                                             std::span<const Tensor> operands,
                                             const RegionEvaluator& eval_region) {
  switch (op.kind()) {
    case OpKind::kSort:
      return EvaluateSort(op, operands, eval_region);
    case OpKind::kTopK:
      return EvaluateTopK(op, operands);
    default:
      return absl::InternalError(
          StrCat("reference evaluator: ", op.name(), " is not sort or top_k"));
  }
}

}  // namespace accy::reference
