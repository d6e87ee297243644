// The generator's shape and data-movement steps (program_generator.h): broadcast_in_dim,
// reshape, transpose, slice, pad, concatenate, iota, reverse, gather, scatter, dynamic_slice and
// dynamic_update_slice.
#include <algorithm>
#include <numeric>
#include <utility>

#include "src/testing/generator_internal.h"

namespace accy::fuzz::internal {

bool Generator::StepBroadcast() {
  const int x = Existing(ElementClass::kAny, Need{}, 0);
  if (x < 0 || V(x).type.rank() > 3) return false;
  const TensorType in = V(x).type;
  const int64_t rank = in.rank() + static_cast<int64_t>(U(3));
  std::vector<int64_t> positions(static_cast<size_t>(rank));
  std::iota(positions.begin(), positions.end(), 0);
  std::shuffle(positions.begin(), positions.end(), rng_);
  positions.resize(static_cast<size_t>(in.rank()));
  std::sort(positions.begin(), positions.end());
  std::vector<int64_t> dims(static_cast<size_t>(rank), 0);
  for (int64_t d = 0; d < rank; ++d) dims[static_cast<size_t>(d)] = RandomSize();
  for (int64_t i = 0; i < in.rank(); ++i) {
    const int64_t size = in.dim(i);
    dims[static_cast<size_t>(positions[static_cast<size_t>(i)])] =
        size == 1 && Chance(0.5) ? RandomSize() : size;
  }
  double count = 1;
  for (int64_t d : dims) count *= static_cast<double>(d);
  if (count > static_cast<double>(options_.max_elements)) return false;
  Broadcast(x, dims, positions);
  return true;
}

bool Generator::StepReshape() {
  const int x = Existing(ElementClass::kAny, Need{}, 0);
  if (x < 0) return false;
  const TensorType in = V(x).type;
  int64_t n = in.element_count();
  std::vector<int64_t> dims;
  if (n == 0) {
    dims = {0, RandomSize(false)};
    if (Chance(0.5)) std::swap(dims[0], dims[1]);
  } else {
    const int rank = static_cast<int>(U(4)) + (Chance(0.1) ? 0 : 1);
    for (int i = 0; i + 1 < rank; ++i) {
      std::vector<int64_t> divisors;
      for (int64_t d = 1; d <= n && d <= 64; ++d) {
        if (n % d == 0) divisors.push_back(d);
      }
      const int64_t d = divisors[U(divisors.size())];
      dims.push_back(d);
      n /= d;
    }
    if (rank > 0) dims.push_back(n);
    if (rank == 0 && n != 1) dims.push_back(n);
    std::shuffle(dims.begin(), dims.end(), rng_);
  }
  AddOp("reshape", OpKind::kReshape, {x}, Type(in.element_type(), dims), {}, true, V(x).bound,
        V(x).non_finite);
  return true;
}

bool Generator::StepTranspose() {
  const int x = Existing(ElementClass::kAny, Need{}, 2);
  if (x < 0) return false;
  const TensorType in = V(x).type;
  std::vector<int64_t> permutation(static_cast<size_t>(in.rank()));
  std::iota(permutation.begin(), permutation.end(), 0);
  std::shuffle(permutation.begin(), permutation.end(), rng_);
  std::vector<int64_t> dims;
  for (int64_t p : permutation) dims.push_back(in.dim(p));
  AddOp("transpose", OpKind::kTranspose, {x}, Type(in.element_type(), dims),
        {{"permutation", permutation}}, true, V(x).bound, V(x).non_finite);
  return true;
}

bool Generator::StepSlice() {
  const int x = Existing(ElementClass::kAny, Need{}, 1);
  if (x < 0) return false;
  const TensorType in = V(x).type;
  std::vector<int64_t> start, limit, strides, dims;
  for (int64_t d = 0; d < in.rank(); ++d) {
    const int64_t size = in.dim(d);
    const int64_t s = static_cast<int64_t>(U(static_cast<uint64_t>(size) + 1));
    const int64_t l = s + static_cast<int64_t>(U(static_cast<uint64_t>(size - s) + 1));
    const int64_t stride = 1 + static_cast<int64_t>(U(3));
    start.push_back(s);
    limit.push_back(l);
    strides.push_back(stride);
    dims.push_back((l - s + stride - 1) / stride);
  }
  AddOp("slice", OpKind::kSlice, {x}, Type(in.element_type(), dims),
        {{"start_indices", start}, {"limit_indices", limit}, {"strides", strides}}, true,
        V(x).bound, V(x).non_finite);
  return true;
}

bool Generator::StepPad() {
  const int x = Existing(ElementClass::kAny, Need{}, 1);
  if (x < 0) return false;
  const TensorType in = V(x).type;
  const int value = PickScalar(in.element_type());
  std::vector<int64_t> low, high, interior, dims;
  for (int64_t d = 0; d < in.rank(); ++d) {
    const int64_t i = Chance(0.2) ? 1 : 0;
    const int64_t base = in.dim(d) + std::max<int64_t>(in.dim(d) - 1, 0) * i;
    int64_t lo = static_cast<int64_t>(U(4)) - 1;
    int64_t hi = static_cast<int64_t>(U(4)) - 1;
    if (base + lo < 0) lo = 0;
    if (base + lo + hi < 0) hi = 0;
    low.push_back(lo);
    high.push_back(hi);
    interior.push_back(i);
    dims.push_back(base + lo + hi);
  }
  double count = 1;
  for (int64_t d : dims) count *= static_cast<double>(d);
  if (count > static_cast<double>(options_.max_elements) * 4) return false;
  AddOp("pad", OpKind::kPad, {x, value}, Type(in.element_type(), dims),
        {{"edge_padding_low", low}, {"edge_padding_high", high}, {"interior_padding", interior}},
        true, std::max(V(x).bound, V(value).bound), V(x).non_finite || V(value).non_finite);
  return true;
}

bool Generator::StepConcatenate() {
  const TensorType base = Type(RandomType(ElementClass::kAny), RandomDims(1, 4));
  const int64_t dimension = static_cast<int64_t>(U(static_cast<uint64_t>(base.rank())));
  const int inputs = 1 + static_cast<int>(U(3));
  std::vector<int64_t> sizes;  // of each input along `dimension`
  int64_t total = 0;
  for (int i = 0; i < inputs; ++i) {
    sizes.push_back(i == 0 ? base.dim(dimension) : RandomSize());
    total += sizes.back();
  }
  std::vector<int64_t> dims = base.dims();
  dims[static_cast<size_t>(dimension)] = total;
  double count = 1;
  for (int64_t d : dims) count *= static_cast<double>(d);
  if (count > static_cast<double>(options_.max_elements) * 4) return false;
  std::vector<int> operands;
  double bound = 0;
  bool nf = false;
  for (int64_t size : sizes) {
    std::vector<int64_t> in = base.dims();
    in[static_cast<size_t>(dimension)] = size;
    operands.push_back(Pick(Type(base.element_type(), in)));
    bound = std::max(bound, V(operands.back()).bound);
    nf = nf || V(operands.back()).non_finite;
  }
  AddOp("concatenate", OpKind::kConcatenate, operands, Type(base.element_type(), dims),
        {{"dimension", dimension}}, true, bound, nf);
  return true;
}

bool Generator::StepIota() {
  const TensorType type = Type(RandomType(ElementClass::kNumeric), RandomDims(1, 4));
  const int64_t dimension = static_cast<int64_t>(U(static_cast<uint64_t>(type.rank())));
  AddOp("iota", OpKind::kIota, {}, type, {{"iota_dimension", dimension}}, true,
        static_cast<double>(type.dim(dimension)), false);
  return true;
}

bool Generator::StepReverse() {
  const int x = Existing(ElementClass::kAny, Need{}, 1);
  if (x < 0) return false;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < V(x).type.rank(); ++d) {
    if (Chance(0.5)) dims.push_back(d);
  }
  AddOp("reverse", OpKind::kReverse, {x}, V(x).type, {{"dimensions", dims}}, true, V(x).bound,
        V(x).non_finite);
  return true;
}

bool Generator::StepGather() {
  const ElementType e = RandomType(ElementClass::kAny);
  const ElementType index_type = RandomType(ElementClass::kInteger);
  const int64_t n = RandomSize(false), d = RandomSize(), k = RandomSize();
  if (n * d > options_.max_elements || k * d > options_.max_elements) return false;
  GatherDimensionNumbers numbers;
  std::vector<int64_t> slice_sizes, result_dims, index_dims;
  int operand;
  int64_t limit = n;
  if (Chance(0.6)) {  // rows: operand[indices[i], :]
    operand = Pick(Type(e, {n, d}));
    numbers.offset_dims = {1};
    numbers.collapsed_slice_dims = {0};
    numbers.start_index_map = {0};
    numbers.index_vector_dim = 1;
    slice_sizes = {1, d};
    index_dims = {k, 1};
    result_dims = {k, d};
  } else {  // 2-d windows of 1 x w starting at (indices[i, 0], indices[i, 1])
    const int64_t w = d == 0 ? 0 : std::max<int64_t>(1, d / 2);
    operand = Pick(Type(e, {n, d}));
    numbers.offset_dims = {1, 2};
    numbers.start_index_map = {0, 1};
    numbers.index_vector_dim = 1;
    slice_sizes = {std::min<int64_t>(n, 2), w};
    index_dims = {k, 2};
    result_dims = {k, slice_sizes[0], w};
    limit = std::max(n, d);
  }
  const TensorType indices_type = Type(index_type, index_dims);
  const int indices = Chance(0.7) ? Param(indices_type, InputKind::kIndex, limit)
                                  : Pick(indices_type, kExactOnly);
  const TensorType result = Type(e, result_dims);
  FuzzValue v = Derive({operand, indices}, result, true, V(operand).bound, V(operand).non_finite);
  AddRecipe("gather", {operand, indices}, {v},
            [numbers, slice_sizes](FunctionBuilder& f, std::span<Value* const> xs,
                                   BuildForm) -> StatusOr<std::vector<Value*>> {
              ACCY_ASSIGN_OR_RETURN(Value * r, f.Gather(xs[0], xs[1], numbers, slice_sizes));
              return std::vector<Value*>{r};
            });
  return true;
}

bool Generator::StepScatter() {
  static const char* kUpdates[] = {"assign", "add", "multiply", "maximum", "minimum"};
  std::string update = kUpdates[U(std::size(kUpdates))];
  const ElementType e = RandomType(update == "add" || update == "multiply" ? ElementClass::kNumeric
                                                                            : ElementClass::kAny);
  const ElementType index_type = RandomType(ElementClass::kInteger);
  const int64_t n = RandomSize(false), d = RandomSize();
  int64_t k = RandomSize();
  if (n * d > options_.max_elements || k * d > options_.max_elements) return false;
  ScatterDimensionNumbers numbers;
  numbers.update_window_dims = {1};
  numbers.inserted_window_dims = {0};
  numbers.scatter_dims_to_operand_dims = {0};
  numbers.index_vector_dim = 1;
  const bool unique = update == "assign";
  int indices;
  if (unique) {  // distinct rows in range: the order of the updates cannot matter
    k = std::min(k, n);
    std::vector<int64_t> rows(static_cast<size_t>(n));
    std::iota(rows.begin(), rows.end(), 0);
    std::shuffle(rows.begin(), rows.end(), rng_);
    indices = Param(Type(index_type, {k, 1}), InputKind::kIndex, n);
    Tensor& t = program_.inputs.back();
    for (int64_t i = 0; i < k; ++i) t.SetFromDouble(i, static_cast<double>(rows[static_cast<size_t>(i)]));
  } else {
    indices = Param(Type(index_type, {k, 1}), InputKind::kIndex, n);
  }
  const bool products = update == "multiply" && IsFloat(e);
  const Need need = products ? kExactOnly : Need{};
  const int input = Pick(Type(e, {n, d}), need);
  const int updates = Pick(Type(e, {k, d}), need);
  // Float sums and products over repeated rows depend on the order: approximate.
  const bool exact = !IsFloat(e) || update == "assign" || update == "maximum" || update == "minimum";
  double bound = std::max(V(input).bound, V(updates).bound);
  if (update == "add") bound = V(input).bound + static_cast<double>(k) * V(updates).bound;
  if (update == "multiply") bound = kInf;
  FuzzValue v = Derive({input, indices, updates}, V(input).type, exact, bound,
                       V(input).non_finite || V(updates).non_finite || update == "multiply");
  AddRecipe("scatter", {input, indices, updates}, {v},
            [numbers, update, unique](FunctionBuilder& f, std::span<Value* const> xs,
                                      BuildForm) -> StatusOr<std::vector<Value*>> {
              ACCY_ASSIGN_OR_RETURN(Value * r, f.Scatter(xs[0], xs[1], xs[2], numbers, update,
                                                          /*indices_are_sorted=*/false, unique));
              return std::vector<Value*>{r};
            });
  return true;
}

bool Generator::StepDynamicSlice(bool update) {
  const int x = Existing(ElementClass::kAny, Need{}, 0);
  if (x < 0) return false;
  const TensorType in = V(x).type;
  const ElementType index_type = RandomType(ElementClass::kInteger);
  std::vector<int> starts;
  std::vector<int64_t> sizes;
  for (int64_t d = 0; d < in.rank(); ++d) {
    sizes.push_back(static_cast<int64_t>(U(static_cast<uint64_t>(in.dim(d)) + 1)));
    starts.push_back(Chance(0.6) ? Param(Type(index_type, {}), InputKind::kIndex, in.dim(d))
                                 : PickScalar(index_type, kExactOnly));
  }
  std::vector<int> operands = {x};
  if (update) {
    const int u = Pick(Type(in.element_type(), sizes));
    operands.push_back(u);
    operands.insert(operands.end(), starts.begin(), starts.end());
    FuzzValue v = Derive(operands, in, true, std::max(V(x).bound, V(u).bound),
                         V(x).non_finite || V(u).non_finite);
    AddRecipe("dynamic_update_slice", operands, {v},
              [](FunctionBuilder& f, std::span<Value* const> xs,
                 BuildForm) -> StatusOr<std::vector<Value*>> {
                ACCY_ASSIGN_OR_RETURN(Value * r, f.DynamicUpdateSlice(
                    xs[0], xs[1], std::vector<Value*>(xs.begin() + 2, xs.end())));
                return std::vector<Value*>{r};
              });
  } else {
    operands.insert(operands.end(), starts.begin(), starts.end());
    FuzzValue v = Derive(operands, Type(in.element_type(), sizes), true, V(x).bound, V(x).non_finite);
    AddRecipe("dynamic_slice", operands, {v},
              [sizes](FunctionBuilder& f, std::span<Value* const> xs,
                      BuildForm) -> StatusOr<std::vector<Value*>> {
                ACCY_ASSIGN_OR_RETURN(Value * r, f.DynamicSlice(
                    xs[0], std::vector<Value*>(xs.begin() + 1, xs.end()), sizes));
                return std::vector<Value*>{r};
              });
  }
  return true;
}

}  // namespace accy::fuzz::internal
