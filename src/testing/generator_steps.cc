// The generator's contraction, reduction and loop steps and its fusion patterns
// (program_generator.h), and the builder helpers the steps share (generator_internal.h).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/kernel_catalog.h"
#include "src/testing/generator_internal.h"

namespace accy::fuzz::internal {

double Identity(const std::string& reducer, ElementType e) {
  if (reducer == "sum" || reducer == "or") return 0;
  if (reducer == "prod") return 1;
  if (reducer == "and") return IsBool(e) ? 1 : IsUnsigned(e) ? MaxFinite(e) + 1 : -1;
  if (reducer == "max") return IsFloat(e) ? -kInf : IsBool(e) ? 0 : IsSigned(e) ? -MaxFinite(e) - 1 : 0;
  return IsFloat(e) ? kInf : IsBool(e) ? 1 : MaxFinite(e) + 1;  // min
}

std::vector<int64_t> Without(const std::vector<int64_t>& dims, const std::vector<int64_t>& drop) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (std::find(drop.begin(), drop.end(), d) == drop.end()) out.push_back(dims[static_cast<size_t>(d)]);
  }
  return out;
}

std::vector<int64_t> AllBut(int64_t rank, int64_t axis) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis) out.push_back(d);
  }
  return out;
}

StatusOr<Value*> ReduceF(FunctionBuilder& f, Value* x, const std::string& reducer,
                         std::vector<int64_t> dims) {
  const ElementType e = x->type().element_type();
  ACCY_ASSIGN_OR_RETURN(Value * init, f.ConstantScalar(e, Identity(reducer, e)));
  ACCY_ASSIGN_OR_RETURN(TensorType type,
                        TensorType::Create(e, Without(x->type().dims(), dims)));
  return f.Reduce(x, init, type, reducer, std::move(dims));
}

StatusOr<Value*> SplatConstant(FunctionBuilder& f, const TensorType& type, double value) {
  ACCY_ASSIGN_OR_RETURN(Value * scalar, f.ConstantScalar(type.element_type(), value));
  return f.BroadcastInDim(scalar, type, {});
}

int Generator::ReduceNamed(int x, const std::string& reducer, std::vector<int64_t> dimensions) {
  const FuzzValue& v = V(x);
  const ElementType e = v.type.element_type();
  double n = 1;
  for (int64_t d : dimensions) n *= static_cast<double>(v.type.dim(d));
  double bound = v.bound;
  if (reducer == "sum") bound = v.bound * n;
  if (reducer == "prod") bound = std::pow(std::max(v.bound, 1.0), n);
  const bool exact = !IsFloat(e) || (reducer != "sum" && reducer != "prod");
  const TensorType result = Type(e, Without(v.type.dims(), dimensions));
  FuzzValue out = Derive({x}, result, exact, bound, v.non_finite);
  if (!IsFloat(e)) {
    out.non_finite = false;
  }
  return AddRecipe("reduce", {x}, {out},
                   [reducer, dimensions](FunctionBuilder& f, std::span<Value* const> xs,
                                         BuildForm) -> StatusOr<std::vector<Value*>> {
                     ACCY_ASSIGN_OR_RETURN(Value * r, ReduceF(f, xs[0], reducer, dimensions));
                     return std::vector<Value*>{r};
                   });
}

int Generator::Dot(int lhs, int rhs, std::vector<int64_t> lc, std::vector<int64_t> rc,
                   std::vector<int64_t> lb, std::vector<int64_t> rb) {
  const TensorType& a = V(lhs).type;
  const TensorType& b = V(rhs).type;
  std::vector<int64_t> dims;
  double k = 1;
  for (int64_t d : lb) dims.push_back(a.dim(d));
  for (int64_t d : lc) k *= static_cast<double>(a.dim(d));
  for (int64_t d = 0; d < a.rank(); ++d) {
    if (std::find(lb.begin(), lb.end(), d) == lb.end() && std::find(lc.begin(), lc.end(), d) == lc.end()) {
      dims.push_back(a.dim(d));
    }
  }
  for (int64_t d = 0; d < b.rank(); ++d) {
    if (std::find(rb.begin(), rb.end(), d) == rb.end() && std::find(rc.begin(), rc.end(), d) == rc.end()) {
      dims.push_back(b.dim(d));
    }
  }
  const TensorType result = Type(a.element_type(), dims);
  FuzzValue v = Derive({lhs, rhs}, result, !IsFloat(a.element_type()),
                       V(lhs).bound * V(rhs).bound * k, V(lhs).non_finite || V(rhs).non_finite);
  if (!IsFloat(a.element_type())) v.non_finite = false;
  return AddRecipe("dot_general", {lhs, rhs}, {v},
                   [result, lc, rc, lb, rb](FunctionBuilder& f, std::span<Value* const> xs,
                                            BuildForm) -> StatusOr<std::vector<Value*>> {
                     ACCY_ASSIGN_OR_RETURN(Value * r, f.DotGeneral(xs[0], xs[1], result, lc, rc, lb, rb));
                     return std::vector<Value*>{r};
                   });
}

bool Generator::StepDotGeneral() {
  static constexpr int64_t kSizes[] = {1, 2, 3, 5, 7, 8, 16, 17, 32, 64, 100};
  auto size = [&] { return Chance(0.02) ? 0 : kSizes[U(std::size(kSizes))]; };
  const ElementType e = Chance(0.6) ? RandomFloatType() : RandomType(ElementClass::kNumeric);
  const int batches = Chance(0.6) ? 0 : Chance(0.75) ? 1 : 2;
  std::vector<int64_t> batch;
  for (int i = 0; i < batches; ++i) batch.push_back(1 + static_cast<int64_t>(U(4)));
  const int64_t m = size(), k = size(), n = size();
  int64_t batch_elements = 1;
  for (int64_t b : batch) batch_elements *= b;
  if (batch_elements * m * k > options_.max_elements ||
      batch_elements * k * n > options_.max_elements ||
      batch_elements * m * n > options_.max_elements) {
    return false;
  }
  const bool no_m = Chance(0.1), k_first = Chance(0.3), n_first = Chance(0.3);
  std::vector<int64_t> a = batch, b = batch, lb, rb;
  for (int i = 0; i < batches; ++i) {
    lb.push_back(i);
    rb.push_back(i);
  }
  int64_t lc, rc;
  if (no_m) {
    a.push_back(k);
    lc = batches;
  } else if (k_first) {
    a.push_back(k);
    a.push_back(m);
    lc = batches;
  } else {
    a.push_back(m);
    a.push_back(k);
    lc = batches + 1;
  }
  if (n_first) {
    b.push_back(n);
    b.push_back(k);
    rc = batches + 1;
  } else {
    b.push_back(k);
    b.push_back(n);
    rc = batches;
  }
  std::vector<int64_t> lcs = {lc}, rcs = {rc};
  int64_t contracted = k;
  if (Chance(0.15) && batch_elements * m * k * 3 <= options_.max_elements &&
      batch_elements * k * n * 3 <= options_.max_elements) {
    // A second contracting dim, last on the lhs and first on the rhs (so the pairs of
    // lhs/rhs_contracting_dimensions are not in the same positions).
    const int64_t k2 = 1 + static_cast<int64_t>(U(3));
    lcs.push_back(static_cast<int64_t>(a.size()));
    a.push_back(k2);
    for (int64_t& d : rcs) ++d;
    rcs.push_back(batches);
    b.insert(b.begin() + batches, k2);
    contracted *= k2;
  }
  if (Chance(0.1) && batch_elements * m * k * 2 <= options_.max_elements) {
    a.push_back(2);  // a second free lhs dim, after the others
  }
  const Need need{true, 1e3, false};
  const int lhs = Pick(Type(e, a), need);
  const int rhs = Pick(Type(e, b), need);
  // Float products accumulate in f32 (JIT, oneDNN) or double (reference): far below overflow.
  if (IsFloat(e) && V(lhs).bound * V(rhs).bound * static_cast<double>(contracted) > 1e30) {
    return false;
  }
  Dot(lhs, rhs, lcs, rcs, lb, rb);
  return true;
}

bool Generator::StepReduce() {
  const ElementType e = RandomType(ElementClass::kAny);
  const TensorType type = Type(e, RandomDims(1, 4));
  std::vector<std::string> reducers;
  if (IsBool(e)) {
    reducers = {"and", "or", "max", "min"};
  } else {
    reducers = {"sum", "sum", "max", "min", "prod"};
    if (!IsFloat(e)) {
      reducers.push_back("and");
      reducers.push_back("or");
    }
  }
  const std::string reducer = reducers[U(reducers.size())];
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < type.rank(); ++d) {
    if (Chance(0.5)) dims.push_back(d);
  }
  if (dims.empty() && Chance(0.9)) dims.push_back(type.rank() - 1);
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(type.dim(d));
  // Float products: only short ones of small values, far from overflow on either side.
  if (reducer == "prod" && IsFloat(e) && (n > 16 || std::pow(4.0, n) > MaxFinite(e) / 16)) return false;
  const Need need = reducer == "prod" && IsFloat(e) ? kExactOnly : Need{true, 1e4, false};
  const int x = Pick(type, need);
  // The JIT accumulates f16/bf16/f32 in f32 and the reference in double: float sums and
  // products stay where neither can overflow or underflow into a different special value
  // (a product of finite values of at most 4; sums far below the f32 range).
  if (IsFloat(e) && reducer == "prod" && (V(x).non_finite || V(x).bound > 4)) return false;
  if (IsFloat(e) && reducer == "sum" && V(x).bound * n > 1e30) return false;
  ReduceNamed(x, reducer, dims);
  return true;
}

bool Generator::StepArgmax() {
  const ElementType e = RandomType(ElementClass::kNumeric);
  const TensorType type = Type(e, RandomDims(1, 3));
  const int64_t axis = static_cast<int64_t>(U(static_cast<uint64_t>(type.rank())));
  const int x = Pick(type, kExactOnly);
  const TensorType index_type = type.WithElementType(ElementType::kI32);
  const int index = AddOp("iota", OpKind::kIota, {}, index_type, {{"iota_dimension", axis}}, true,
                          static_cast<double>(type.dim(axis)), false);
  const std::vector<int64_t> out_dims = Without(type.dims(), {axis});
  FuzzValue value = Derive({x}, Type(e, out_dims), true, V(x).bound, V(x).non_finite);
  FuzzValue where = Derive({index}, Type(ElementType::kI32, out_dims), true,
                           static_cast<double>(type.dim(axis)), false);
  AddRecipe("reduce_argmax", {x, index}, {value, where},
            [axis, e](FunctionBuilder& f, std::span<Value* const> xs,
                      BuildForm) -> StatusOr<std::vector<Value*>> {
              ACCY_ASSIGN_OR_RETURN(Value * init, f.ConstantScalar(e, Identity("max", e)));
              ACCY_ASSIGN_OR_RETURN(Value * zero, f.ConstantScalar(ElementType::kI32, 0));
              // Ties take the smaller index and the larger of -0/+0, so the result does not
              // depend on the order the reduction visits elements in.
              RegionBodyFn body = [](FunctionBuilder& b, std::span<Value* const> a) -> Status {
                ACCY_ASSIGN_OR_RETURN(Value * gt, b.Compare(a[2], a[0], "GT"));
                ACCY_ASSIGN_OR_RETURN(Value * eq, b.Compare(a[2], a[0], "EQ"));
                ACCY_ASSIGN_OR_RETURN(Value * larger, b.Maximum(a[0], a[2]));
                ACCY_ASSIGN_OR_RETURN(Value * tie_value, b.Select(eq, larger, a[0]));
                ACCY_ASSIGN_OR_RETURN(Value * value, b.Select(gt, a[2], tie_value));
                ACCY_ASSIGN_OR_RETURN(Value * smaller, b.Minimum(a[1], a[3]));
                ACCY_ASSIGN_OR_RETURN(Value * tie_index, b.Select(eq, smaller, a[1]));
                ACCY_ASSIGN_OR_RETURN(Value * index, b.Select(gt, a[3], tie_index));
                return b.Return({value, index});
              };
              return f.Reduce({xs[0], xs[1]}, {init, zero}, {axis}, std::move(body));
            });
  return true;
}

bool Generator::StepReduceBody() {
  // Bodies the named reducers do not write: xor, and operands in the other order (the block
  // arguments are (accumulator, element); a commutative body may read them either way). Some
  // bodies also read a rank-0 value of the program (StableHLO regions are not isolated from
  // above; the graph pass isolate-regions-from-above makes it an operand): the element is
  // first capped by it, max(acc, min(x, s)), min(acc, max(x, s)) or acc ^ (x & s), forms whose
  // partial results are capped too, so any combination order gives the same value.
  const ElementType e = RandomType(ElementClass::kAny);
  std::vector<OpKind> kinds = {OpKind::kMaximum, OpKind::kMinimum};
  if (!IsFloat(e)) kinds.push_back(OpKind::kXor);
  if (!IsFloat(e)) kinds.push_back(OpKind::kAdd);  // float sums: the named "sum" covers them
  const OpKind kind = kinds[U(kinds.size())];
  const bool swapped = Chance(0.5);
  const bool captures = kind != OpKind::kAdd && e != ElementType::kI1 && Chance(0.4);
  const TensorType type = Type(e, RandomDims(1, 3));
  std::vector<int64_t> dims = {static_cast<int64_t>(U(static_cast<uint64_t>(type.rank())))};
  const int x = Pick(type, kExactOnly);
  std::vector<int> operands = {x};
  if (captures) operands.push_back(PickScalar(e, kExactOnly));
  const double init = kind == OpKind::kXor || kind == OpKind::kAdd ? 0
                      : Identity(kind == OpKind::kMaximum ? "max" : "min", e);
  const bool bounded = kind == OpKind::kMaximum || kind == OpKind::kMinimum;
  FuzzValue v = Derive(operands, Type(e, Without(type.dims(), dims)), true,
                       bounded ? std::max(V(x).bound, captures ? V(operands[1]).bound : 0.0) : kInf,
                       V(x).non_finite || (captures && V(operands[1]).non_finite));
  if (!IsFloat(e)) v.non_finite = false;
  AddRecipe(captures ? "reduce_body_capture" : "reduce_body", operands, {v},
            [kind, swapped, captures, dims, init, e](FunctionBuilder& f, std::span<Value* const> xs,
                                                     BuildForm) -> StatusOr<std::vector<Value*>> {
              ACCY_ASSIGN_OR_RETURN(Value * init_value, f.ConstantScalar(e, init));
              Value* cap = captures ? xs[1] : nullptr;
              RegionBodyFn body = [kind, swapped, cap](FunctionBuilder& b,
                                                       std::span<Value* const> a) -> Status {
                Value* element = a[1];
                if (cap != nullptr) {
                  const OpKind cap_kind = kind == OpKind::kMaximum   ? OpKind::kMinimum
                                          : kind == OpKind::kMinimum ? OpKind::kMaximum
                                                                     : OpKind::kAnd;
                  ACCY_ASSIGN_OR_RETURN(Operation * capped,
                                        b.CreateOp(cap_kind, {element, cap}, {element->type()}));
                  element = capped->result(0);
                }
                ACCY_ASSIGN_OR_RETURN(Operation * op,
                                      b.CreateOp(kind, {swapped ? element : a[0], swapped ? a[0] : element},
                                                 {a[0]->type()}));
                return b.Return({op->result(0)});
              };
              return f.Reduce({xs[0]}, {init_value}, dims, std::move(body));
            });
  return true;
}

bool Generator::StepCumsum() {
  const ElementType e = RandomType(ElementClass::kNumeric);
  const TensorType type = Type(e, RandomDims(1, 3));
  const int64_t dim = static_cast<int64_t>(U(static_cast<uint64_t>(type.rank())));
  const int x = Pick(type, Need{true, 1e4, false});
  if (IsFloat(e) && V(x).bound * static_cast<double>(type.dim(dim)) > 1e30) return false;
  FuzzValue v = Derive({x}, type, !IsFloat(e), V(x).bound * static_cast<double>(type.dim(dim)),
                       V(x).non_finite);
  if (!IsFloat(e)) v.non_finite = false;
  AddRecipe("cumsum", {x}, {v},
            [dim](FunctionBuilder& f, std::span<Value* const> xs,
                  BuildForm) -> StatusOr<std::vector<Value*>> {
              ACCY_ASSIGN_OR_RETURN(Value * r, f.Cumsum(xs[0], dim));
              return std::vector<Value*>{r};
            });
  return true;
}

bool Generator::StepWhile() {
  static constexpr int64_t kTrips[] = {0, 1, 2, 3, 5};
  const int64_t trips = kTrips[U(std::size(kTrips))];
  // Body: 0: x' = x + y (y a value of the enclosing function); 1: max(x, y); 2: tanh(x)
  // (floats); 3: x + broadcast(row max of x) (a reduce and a broadcast in the body); 4: the
  // softmax kernel_call over the last dim (f32, bf16).
  int variant = static_cast<int>(U(5));
  ElementType e = RandomType(ElementClass::kAny);
  if (variant == 4) e = Chance(0.7) ? ElementType::kF32 : ElementType::kBF16;
  if (variant == 2 && !IsFloat(e)) variant = 1;
  const TensorType type = Type(e, RandomDims(variant >= 3 ? 1 : 0, 3));
  const Need need = variant == 0 || variant == 3 ? Need{true, 1e3, false}
                    : variant == 4               ? Need{true, 1e3, true}
                                                 : Need{};
  const int x = Pick(type, need);
  const int y = Pick(type, need);
  const int counter = Splat(Type(ElementType::kI32, {}), 0);
  FuzzValue count = Derive({counter}, Type(ElementType::kI32, {}), true, static_cast<double>(trips), false);
  double bound = std::max(V(x).bound, V(y).bound);
  if (variant == 0) bound = V(x).bound + static_cast<double>(trips) * V(y).bound;
  if (variant == 2 || variant == 4) bound = std::max(V(x).bound, 1.0);
  if (variant == 3) bound = V(x).bound * std::pow(2.0, static_cast<double>(trips));
  if (!IsFloat(e) && (variant == 0 || variant == 3)) bound = kInf;
  FuzzValue carried = Derive({x, y}, type, variant != 2 && variant != 4, bound,
                             V(x).non_finite || V(y).non_finite);
  if (!IsFloat(e)) carried.non_finite = false;
  AddRecipe("while", {counter, x, y}, {count, carried},
            [trips, variant, type](FunctionBuilder& f, std::span<Value* const> xs,
                                   BuildForm form) -> StatusOr<std::vector<Value*>> {
              Value* outer = xs[2];
              return f.While(
                  {xs[0], xs[1]},
                  [trips](FunctionBuilder& c, std::span<Value* const> a) -> Status {
                    ACCY_ASSIGN_OR_RETURN(Value * limit, c.ConstantScalar(ElementType::kI32,
                                                                          static_cast<double>(trips)));
                    ACCY_ASSIGN_OR_RETURN(Value * less, c.Compare(a[0], limit, "LT"));
                    return c.Return({less});
                  },
                  [variant, outer, type, form](FunctionBuilder& b, std::span<Value* const> a) -> Status {
                    ACCY_ASSIGN_OR_RETURN(Value * one, b.ConstantScalar(ElementType::kI32, 1));
                    ACCY_ASSIGN_OR_RETURN(Value * next, b.Add(a[0], one));
                    Value* x = nullptr;
                    const int64_t last = type.rank() - 1;
                    if (variant == 0) {
                      ACCY_ASSIGN_OR_RETURN(x, b.Add(a[1], outer));
                    } else if (variant == 1) {
                      ACCY_ASSIGN_OR_RETURN(x, b.Maximum(a[1], outer));
                    } else if (variant == 2) {
                      ACCY_ASSIGN_OR_RETURN(x, b.Tanh(a[1]));
                    } else if (variant == 3) {
                      ACCY_ASSIGN_OR_RETURN(Value * row_max, ReduceF(b, a[1], "max", {last}));
                      ACCY_ASSIGN_OR_RETURN(Value * spread,
                                            b.BroadcastInDim(row_max, type, AllBut(type.rank(), last)));
                      ACCY_ASSIGN_OR_RETURN(x, b.Add(a[1], spread));
                    } else if (form == BuildForm::kReference) {
                      ACCY_ASSIGN_OR_RETURN(x, SoftmaxReference(b, a[1], last, false));
                    } else {
                      KernelCallSpec spec;
                      spec.target = std::string(kernels::kSoftmaxTarget);
                      ACCY_ASSIGN_OR_RETURN(Operation * call, b.KernelCall({a[1]}, {type}, spec));
                      x = call->result(0);
                    }
                    return b.Return({next, x});
                  });
            });
  return true;
}

bool Generator::StepCase() {
  // case index {0: x + y, 1: max(x, y), 2: x}: x and y are values of the enclosing function
  // (each branch captures them; branch 2 returns one unchanged); the index is a parameter in
  // [0, 4), so 3 runs the last branch (spec "case").
  const ElementType e = RandomType(ElementClass::kAny);
  const TensorType type = Type(e, RandomDims(0, 3));
  const Need need{true, 1e3, false};
  const int x = Pick(type, need);
  const int y = Pick(type, need);
  const int index = Param(Type(ElementType::kI32, {}), InputKind::kIndex, 4);
  const double bound = IsFloat(e) ? V(x).bound + V(y).bound : kInf;
  FuzzValue result = Derive({x, y}, type, /*exact_op=*/true, bound,
                            IsFloat(e) && (V(x).non_finite || V(y).non_finite));
  AddRecipe("case", {index, x, y}, {result},
            [type](FunctionBuilder& f, std::span<Value* const> xs,
                   BuildForm) -> StatusOr<std::vector<Value*>> {
              Value* x = xs[1];
              Value* y = xs[2];
              std::vector<RegionBodyFn> branches;
              branches.push_back([x, y](FunctionBuilder& b, std::span<Value* const>) -> Status {
                ACCY_ASSIGN_OR_RETURN(Value * sum, b.Add(x, y));
                return b.Return({sum});
              });
              branches.push_back([x, y](FunctionBuilder& b, std::span<Value* const>) -> Status {
                ACCY_ASSIGN_OR_RETURN(Value * larger, b.Maximum(x, y));
                return b.Return({larger});
              });
              branches.push_back([x](FunctionBuilder& b, std::span<Value* const>) -> Status {
                return b.Return({x});
              });
              return f.Case(xs[0], {type}, std::move(branches));
            });
  return true;
}

// ---- Fusion patterns and near misses ----------------------------------------------------------

bool Generator::PatternChain() {
  const TensorType type = Type(Chance(0.6) ? RandomFloatType() : RandomType(ElementClass::kAny),
                               RandomDims(1, 3));
  int current = Pick(type);
  const int length = 3 + static_cast<int>(U(4));
  for (int i = 0; i < length; ++i) {
    bool added = false;
    for (int attempt = 0; attempt < 6 && !added; ++attempt) {
      added = Chance(0.5) ? StepUnary(current) : StepBinary(current);
    }
    if (!added) break;
    current = LastValue();
  }
  return true;
}

bool Generator::PatternSoftmax(int x, int axis, bool near_miss) {
  if (x < 0) {
    const TensorType type = Type(RandomFloatType(), RandomDims(1, 3));
    x = Pick(type, Need{true, 1e3, false});
    axis = static_cast<int>(type.rank()) - 1;
    near_miss = Chance(0.3);
  }
  const TensorType type = V(x).type;
  const int64_t rank = type.rank();
  int sum_axis = axis;
  const uint64_t miss = near_miss ? 1 + U(3) : 0;
  // Near misses: the sum over another dim than the max; exp escaping; multiply for divide.
  if (miss == 1 && rank >= 2) sum_axis = static_cast<int>((axis + 1) % rank);
  const int max = ReduceNamed(x, "max", {axis});
  const int max_b = Broadcast(max, type.dims(), AllBut(rank, axis));
  const int shifted = Binary(OpKind::kSubtract, x, max_b);
  const int e = Unary(OpKind::kExponential, shifted);
  if (miss == 2) extra_outputs().push_back(e);
  const int sum = ReduceNamed(e, "sum", {sum_axis});
  const int sum_b = Broadcast(sum, type.dims(), AllBut(rank, sum_axis));
  Binary(miss == 3 ? OpKind::kMultiply : OpKind::kDivide, e, sum_b);
  return true;
}

bool Generator::PatternLayerNorm() {
  const ElementType e = RandomFloatType();
  std::vector<int64_t> dims = RandomDims(2, 2);
  if (dims[1] < 2) {
    // A row of at least 2; fewer rows keep the element count within max_elements.
    dims[1] = 2 + static_cast<int64_t>(U(60));
    dims[0] = std::min(dims[0], std::max<int64_t>(1, options_.max_elements / dims[1]));
  }
  const TensorType type = Type(e, dims);
  const uint64_t miss = Chance(0.3) ? 1 + U(2) : 0;
  const int x = Pick(type, Need{true, 1e3, false});
  const TensorType row = Type(e, {dims[0]});
  const int sum = ReduceNamed(x, "sum", {1});
  const int count = Splat(row, static_cast<double>(dims[1]));
  const int mean = Binary(OpKind::kDivide, sum, count);
  const int centered = Binary(OpKind::kSubtract, x, Broadcast(mean, dims, {0}));
  if (miss == 1) extra_outputs().push_back(centered);
  const int square = Binary(OpKind::kMultiply, centered, centered);
  const int variance = Binary(OpKind::kDivide, ReduceNamed(square, "sum", {1}), count);
  const double epsilon = ElementBitWidth(e) == 16 ? 1e-2 : 1e-5;
  const int inv = Unary(OpKind::kRsqrt, Binary(OpKind::kAdd, variance, Splat(row, epsilon)));
  const int normed = Binary(OpKind::kMultiply, centered, Broadcast(inv, dims, {0}));
  // Near miss 2: scale and shift per row (broadcast along dim 0) instead of per column.
  const int64_t along = miss == 2 ? 0 : 1;
  const int scale = Pick(Type(e, {dims[static_cast<size_t>(along)]}), Need{true, 10, false});
  const int shift = Pick(Type(e, {dims[static_cast<size_t>(along)]}), Need{true, 10, false});
  const int scaled = Binary(OpKind::kMultiply, normed, Broadcast(scale, dims, {along}));
  Binary(OpKind::kAdd, scaled, Broadcast(shift, dims, {along}));
  return true;
}

bool Generator::PatternMatmulEpilogue() {
  static constexpr int64_t kSizes[] = {1, 2, 3, 5, 8, 16, 17, 32, 64, 100};
  const ElementType e = RandomFloatType();
  const int64_t m = kSizes[U(std::size(kSizes))], k = kSizes[U(std::size(kSizes))],
                n = kSizes[U(std::size(kSizes))];
  // A batch of 2 only where it keeps every tensor within 4x max_elements (2 x 100 x 100 would
  // not; the generator's tests bound element counts so).
  const bool batched =
      Chance(0.25) && 2 * std::max({m * k, k * n, m * n}) <= 4 * options_.max_elements;
  std::vector<int64_t> a = {m, k}, out = {m, n};
  if (batched) {
    a.insert(a.begin(), 2);
    out.insert(out.begin(), 2);
  }
  const int64_t last = static_cast<int64_t>(out.size()) - 1;
  const Need need{true, 100, false};
  const int lhs = Pick(Type(e, a), need);
  const int rhs = Pick(Type(e, {k, n}), need);
  const int y = Dot(lhs, rhs, {last}, {0}, {}, {});
  const uint64_t miss = Chance(0.3) ? 1 + U(2) : 0;
  if (miss == 1) extra_outputs().push_back(y);
  // Near miss 2: the bias runs along the rows (dim last-1) instead of the columns.
  const int64_t along = miss == 2 ? last - 1 : last;
  const int bias = Pick(Type(e, {out[static_cast<size_t>(along)]}), need);
  const int biased = Binary(OpKind::kAdd, y, Broadcast(bias, out, {along}));
  const TensorType type = Type(e, out);
  switch (U(4)) {
    case 0:
      Binary(OpKind::kMaximum, biased, Splat(type, 0));
      break;
    case 1:
      Unary(OpKind::kTanh, biased);
      break;
    case 2: {  // x * logistic(1.702 x), the sigmoid form of GELU
      const int scaled = Binary(OpKind::kMultiply, biased, Splat(type, 1.702));
      Binary(OpKind::kMultiply, biased, Unary(OpKind::kLogistic, scaled));
      break;
    }
    default:
      break;  // bias only
  }
  return true;
}

bool Generator::PatternAttention() {
  static constexpr int64_t kSeq[] = {1, 2, 5, 7, 16, 17, 33};
  static constexpr int64_t kHead[] = {4, 8, 16, 32, 64};
  const ElementType e = Chance(0.7) ? ElementType::kF32 : RandomFloatType();
  const int64_t b = 1 + static_cast<int64_t>(U(2)), s = kSeq[U(std::size(kSeq))],
                t = kSeq[U(std::size(kSeq))], d = kHead[U(std::size(kHead))];
  const Need need{true, 10, false};
  const int q = Pick(Type(e, {b, s, d}), need);
  const int key = Pick(Type(e, {b, t, d}), need);
  const int v = Pick(Type(e, {b, t, d}), need);
  const int scores = Dot(q, key, {2}, {2}, {0}, {0});
  int scaled = Binary(OpKind::kMultiply, scores,
                      Splat(Type(e, {b, s, t}), 1.0 / std::sqrt(static_cast<double>(d))));
  if (Chance(0.3)) {  // an additive mask [s, t]
    scaled = Binary(OpKind::kAdd, scaled, Broadcast(Pick(Type(e, {s, t}), need), {b, s, t}, {1, 2}));
  }
  // Near miss: the softmax over the query dim.
  PatternSoftmax(scaled, Chance(0.2) ? 1 : 2, false);
  Dot(LastValue(), v, {2}, {1}, {0}, {0});
  return true;
}

}  // namespace accy::fuzz::internal
