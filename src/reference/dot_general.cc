// Reference evaluation of dot_general (StableHLO spec section "dot_general").
//
// Result dims are the batch dims, then lhs free dims in order, then rhs free dims in order.
// Inputs are first converted to the result element type's domain (docs/numerics.md convert
// rules), then:
//  - float results multiply and accumulate in double, starting from +0, in the row-major order
//    of the contracting index space, and round once to the result type;
//  - integer results multiply and accumulate modulo 2^64, which equals arithmetic modulo
//    2^bits of the result type after the final truncating store;
//  - i1 results are the OR over the contracting space of lhs AND rhs (spec: add/multiply on
//    booleans).
// precision_config does not change the result: the reference is always at full precision.
#include <cmath>
#include <cstdint>
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

// Row-major strides of `dims`, in elements.
std::vector<int64_t> StridesOf(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  for (int64_t v : values) {
    if (v == value) return true;
  }
  return false;
}

// Element `i` of `t` as a double: floats exactly, integers by value (u64 unsigned).
double ElementAsDouble(const Tensor& t, int64_t i) {
  if (IsFloat(t.element_type())) return LoadFloat(t, i);
  const int64_t value = LoadInt(t, i);
  if (IsUnsigned(t.element_type())) return static_cast<double>(static_cast<uint64_t>(value));
  return static_cast<double>(value);
}

// Float -> integer of type `type` as convert does (docs/numerics.md): truncate toward zero
// and saturate to the type's range; NaN -> 0; i1 is x != 0. Returns the two's complement bits.
uint64_t FloatToIntegerBits(double value, ElementType type) {
  if (IsBool(type)) return value != 0 ? 1 : 0;
  if (std::isnan(value)) return 0;
  const int bits = ElementBitWidth(type);
  const double truncated = std::trunc(value);
  if (IsSigned(type)) {
    const double limit = std::ldexp(1.0, bits - 1);  // 2^(bits-1), exact
    if (truncated >= limit) return (uint64_t{1} << (bits - 1)) - 1;
    if (truncated < -limit) return ~uint64_t{0} << (bits - 1);  // the type's minimum
    return static_cast<uint64_t>(static_cast<int64_t>(truncated));
  }
  const double limit = std::ldexp(1.0, bits);  // 2^bits, exact
  if (truncated >= limit) return bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  if (truncated <= 0) return 0;
  return static_cast<uint64_t>(truncated);
}

// The dims in [0, rank) not listed in `batching` or `contracting`, in order.
std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batching,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(batching, d) && !Contains(contracting, d)) free.push_back(d);
  }
  return free;
}

// Checks that `dims` are distinct and in [0, rank).
bool ValidDims(const std::vector<int64_t>& dims, int64_t rank) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank) return false;
    for (size_t j = 0; j < i; ++j) {
      if (dims[j] == dims[i]) return false;
    }
  }
  return true;
}

// How result and contracting indices map to lhs/rhs linear offsets.
struct DotLayout {
  // Per result dim: the lhs and rhs stride it moves (0 when it does not index that side).
  std::vector<int64_t> result_lhs_strides;
  std::vector<int64_t> result_rhs_strides;
  // Per contracting pair: its size and the lhs and rhs strides.
  std::vector<int64_t> contracting_sizes;
  std::vector<int64_t> contracting_lhs_strides;
  std::vector<int64_t> contracting_rhs_strides;
};

// Walks the contracting index space in row-major order, calling fn(lhs_offset, rhs_offset).
template <typename Fn>
void ForEachContraction(const DotLayout& layout, int64_t lhs_base, int64_t rhs_base, Fn&& fn) {
  int64_t count = 1;
  for (int64_t size : layout.contracting_sizes) count *= size;
  std::vector<int64_t> index(layout.contracting_sizes.size(), 0);
  int64_t lhs_offset = lhs_base;
  int64_t rhs_offset = rhs_base;
  for (int64_t k = 0; k < count; ++k) {
    fn(lhs_offset, rhs_offset);
    for (size_t d = index.size(); d-- > 0;) {
      lhs_offset += layout.contracting_lhs_strides[d];
      rhs_offset += layout.contracting_rhs_strides[d];
      if (++index[d] < layout.contracting_sizes[d]) break;
      lhs_offset -= layout.contracting_lhs_strides[d] * index[d];
      rhs_offset -= layout.contracting_rhs_strides[d] * index[d];
      index[d] = 0;
    }
  }
}

}  // namespace

// All elements of `t` converted to a float result type `to`, as doubles holding values of `to`.
StatusOr<std::vector<double>> ConvertToFloat(const Tensor& t, ElementType to) {
  std::vector<double> values(static_cast<size_t>(t.element_count()));
  if (t.element_type() == to) {
    for (int64_t i = 0; i < t.element_count(); ++i) values[i] = LoadFloat(t, i);
    return values;
  }
  // Round each value to `to` through a rank-0 tensor of that type (StoreFloat rounds to nearest
  // even).
  ACCY_ASSIGN_OR_RETURN(TensorType scalar_type, TensorType::Create(to, {}));
  ACCY_ASSIGN_OR_RETURN(Tensor scalar, Tensor::Allocate(scalar_type));
  for (int64_t i = 0; i < t.element_count(); ++i) {
    StoreFloat(scalar, 0, ElementAsDouble(t, i));
    values[i] = LoadFloat(scalar, 0);
  }
  return values;
}

// All elements of `t` converted to an integer or i1 result type `to`, as two's complement bits
// (only the low ElementBitWidth(to) bits matter).
std::vector<uint64_t> ConvertToInteger(const Tensor& t, ElementType to) {
  std::vector<uint64_t> values(static_cast<size_t>(t.element_count()));
  const bool from_float = IsFloat(t.element_type());
  for (int64_t i = 0; i < t.element_count(); ++i) {
    if (from_float) {
      values[i] = FloatToIntegerBits(LoadFloat(t, i), to);
    } else {
      const uint64_t bits = static_cast<uint64_t>(LoadInt(t, i));
      values[i] = IsBool(to) ? (bits != 0 ? 1 : 0) : bits;
    }
  }
  return values;
}

StatusOr<std::vector<Tensor>> EvaluateDotGeneral(const Operation& op,
                                                 std::span<const Tensor> operands) {
  if (operands.size() != 2 || op.num_results() != 1) {
    return OpError(op, "expects lhs, rhs and one result");
  }
  const Tensor& lhs = operands[0];
  const Tensor& rhs = operands[1];
  ACCY_ASSIGN_OR_RETURN(Tensor result, Tensor::Allocate(op.result(0)->type()));
  const std::vector<int64_t> lhs_batching = op.GetInts("lhs_batching_dimensions");
  const std::vector<int64_t> rhs_batching = op.GetInts("rhs_batching_dimensions");
  const std::vector<int64_t> lhs_contracting = op.GetInts("lhs_contracting_dimensions");
  const std::vector<int64_t> rhs_contracting = op.GetInts("rhs_contracting_dimensions");
  if (!ValidDims(lhs_batching, lhs.rank()) || !ValidDims(rhs_batching, rhs.rank()) ||
      !ValidDims(lhs_contracting, lhs.rank()) || !ValidDims(rhs_contracting, rhs.rank()) ||
      lhs_batching.size() != rhs_batching.size() ||
      lhs_contracting.size() != rhs_contracting.size()) {
    return OpError(op, "batching or contracting dimensions are invalid");
  }
  const std::vector<int64_t> lhs_free = FreeDims(lhs.rank(), lhs_batching, lhs_contracting);
  const std::vector<int64_t> rhs_free = FreeDims(rhs.rank(), rhs_batching, rhs_contracting);
  if (lhs_free.size() + lhs_batching.size() + lhs_contracting.size() !=
          static_cast<size_t>(lhs.rank()) ||
      rhs_free.size() + rhs_batching.size() + rhs_contracting.size() !=
          static_cast<size_t>(rhs.rank())) {
    return OpError(op, "a dim is both batching and contracting");
  }

  const std::vector<int64_t> lhs_strides = StridesOf(lhs.dims());
  const std::vector<int64_t> rhs_strides = StridesOf(rhs.dims());
  DotLayout layout;
  std::vector<int64_t> expected_dims;
  for (size_t i = 0; i < lhs_batching.size(); ++i) {
    const int64_t size = lhs.dims()[lhs_batching[i]];
    if (size != rhs.dims()[rhs_batching[i]]) {
      return OpError(
          op, absl::StrCat("lhs batching dim ", lhs_batching[i], " has size ", size, ", rhs dim ",
                           rhs_batching[i], " has size ", rhs.dims()[rhs_batching[i]]));
    }
    expected_dims.push_back(size);
    layout.result_lhs_strides.push_back(lhs_strides[lhs_batching[i]]);
    layout.result_rhs_strides.push_back(rhs_strides[rhs_batching[i]]);
  }
  for (int64_t d : lhs_free) {
    expected_dims.push_back(lhs.dims()[d]);
    layout.result_lhs_strides.push_back(lhs_strides[d]);
    layout.result_rhs_strides.push_back(0);
  }
  for (int64_t d : rhs_free) {
    expected_dims.push_back(rhs.dims()[d]);
    layout.result_lhs_strides.push_back(0);
    layout.result_rhs_strides.push_back(rhs_strides[d]);
  }
  for (size_t i = 0; i < lhs_contracting.size(); ++i) {
    const int64_t size = lhs.dims()[lhs_contracting[i]];
    if (size != rhs.dims()[rhs_contracting[i]]) {
      return OpError(op, absl::StrCat("lhs contracting dim ", lhs_contracting[i], " has size ",
                                      size, ", rhs dim ", rhs_contracting[i], " has size ",
                                      rhs.dims()[rhs_contracting[i]]));
    }
    layout.contracting_sizes.push_back(size);
    layout.contracting_lhs_strides.push_back(lhs_strides[lhs_contracting[i]]);
    layout.contracting_rhs_strides.push_back(rhs_strides[rhs_contracting[i]]);
  }
  if (expected_dims != result.dims()) {
    return OpError(op, "result shape is not batch dims, lhs free dims, rhs free dims");
  }

  const ElementType result_type = result.element_type();
  const bool float_result = IsFloat(result_type);
  const bool bool_result = IsBool(result_type);
  std::vector<double> lhs_float, rhs_float;
  std::vector<uint64_t> lhs_int, rhs_int;
  if (float_result) {
    ACCY_ASSIGN_OR_RETURN(lhs_float, ConvertToFloat(lhs, result_type));
    ACCY_ASSIGN_OR_RETURN(rhs_float, ConvertToFloat(rhs, result_type));
  } else {
    lhs_int = ConvertToInteger(lhs, result_type);
    rhs_int = ConvertToInteger(rhs, result_type);
  }

  // Walk the result in row-major order, keeping the lhs/rhs base offsets of the current result
  // index (the contracting dims at 0).
  const std::vector<int64_t>& result_dims = result.dims();
  std::vector<int64_t> result_index(result_dims.size(), 0);
  int64_t lhs_base = 0;
  int64_t rhs_base = 0;
  for (int64_t linear = 0; linear < result.element_count(); ++linear) {
    if (float_result) {
      double sum = 0.0;
      ForEachContraction(layout, lhs_base, rhs_base, [&](int64_t l, int64_t r) {
        sum += lhs_float[static_cast<size_t>(l)] * rhs_float[static_cast<size_t>(r)];
      });
      StoreFloat(result, linear, sum);
    } else {
      uint64_t sum = 0;
      ForEachContraction(layout, lhs_base, rhs_base, [&](int64_t l, int64_t r) {
        const uint64_t a = lhs_int[static_cast<size_t>(l)];
        const uint64_t b = rhs_int[static_cast<size_t>(r)];
        sum = bool_result ? (sum | (a & b)) : sum + a * b;  // unsigned: wraps, no UB
      });
      StoreInt(result, linear, static_cast<int64_t>(sum));
    }
    for (size_t d = result_dims.size(); d-- > 0;) {
      lhs_base += layout.result_lhs_strides[d];
      rhs_base += layout.result_rhs_strides[d];
      if (++result_index[d] < result_dims[d]) break;
      lhs_base -= layout.result_lhs_strides[d] * result_index[d];
      rhs_base -= layout.result_rhs_strides[d] * result_index[d];
      result_index[d] = 0;
    }
  }
  std::vector<Tensor> results;
  results.push_back(std::move(result));
  return results;
}

}  // namespace accy::reference
