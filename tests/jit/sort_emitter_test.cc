// sort and top_k through the shape emitter (jit/sort_emitter.cc) -- sort along the last, first
// and middle dims of rank 1-3 inputs, rows long enough for several merge passes, one-element
// and empty dims, two operands (key and payload: the payload shows that ties keep their order),
// ascending and descending in TOTALORDER (16-64-bit types through the vqsort fast path, with
// either argument order), a JAX-style comparator canonicalizing NaNs and zeros and a key with
// a payload (the keyed path: (key, position) pairs through vqsort), a multi-key comparator (the
// general merge sort); top_k with k from 0 to the whole row -- x every element type, through
// the JIT and the reference evaluator (std::stable_sort, a different algorithm), compared bit
// for bit.
#include <cstring>
#include <string>
#include <vector>

#include "tests/jit/shape_test_util.h"

namespace accy::jit::testing {
namespace {

using Dims = std::vector<int64_t>;
using E = ElementType;

constexpr E kAllTypes[] = {E::kF16, E::kBF16, E::kF32, E::kF64, E::kI1,  E::kI8,  E::kI16,
                           E::kI32, E::kI64,  E::kU8,  E::kU16, E::kU32, E::kU64};

// A comparator over the first pair: `compare <direction>` (TOTALORDER for floats).
RegionBodyFn Direction(std::string direction, ElementType type) {
  return [direction, type](FunctionBuilder& b, std::span<Value* const> a) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * c,
                          b.Compare(a[0], a[1], direction, IsFloat(type) ? "TOTALORDER" : ""));
    return b.Return({c});
  };
}

// JAX's float comparator: -0 -> +0 and every NaN -> +NaN, then TOTALORDER LT
// (testdata/sort_float32_5.mlir).
RegionBodyFn JaxFloatLess(ElementType type) {
  return [type](FunctionBuilder& b, std::span<Value* const> a) -> Status {
    std::vector<Value*> canonical;
    for (int side = 0; side < 2; ++side) {
      ACCY_ASSIGN_OR_RETURN(Value * zero, b.ConstantScalar(type, 0.0));
      ACCY_ASSIGN_OR_RETURN(Value * is_zero, b.Compare(a[side], zero, "EQ", "FLOAT"));
      ACCY_ASSIGN_OR_RETURN(Value * no_minus_zero, b.Select(is_zero, zero, a[side]));
      ACCY_ASSIGN_OR_RETURN(Value * is_nan, b.Compare(a[side], a[side], "NE", "FLOAT"));
      ACCY_ASSIGN_OR_RETURN(Value * nan, b.ConstantScalar(type, std::nan("")));
      ACCY_ASSIGN_OR_RETURN(Value * value, b.Select(is_nan, nan, no_minus_zero));
      canonical.push_back(value);
    }
    ACCY_ASSIGN_OR_RETURN(Value * less, b.Compare(canonical[0], canonical[1], "LT", "TOTALORDER"));
    return b.Return({less});
  };
}

// Key-major, then payload: (k0 < k1) or (k0 == k1 and p0 > p1), in the type's order.
RegionBodyFn TwoKeys(ElementType type) {
  return [type](FunctionBuilder& b, std::span<Value* const> a) -> Status {
    const std::string order = IsFloat(type) ? "TOTALORDER" : "";
    ACCY_ASSIGN_OR_RETURN(Value * lt, b.Compare(a[0], a[1], "LT", order));
    ACCY_ASSIGN_OR_RETURN(Value * eq, b.Compare(a[0], a[1], "EQ", order));
    ACCY_ASSIGN_OR_RETURN(Value * gt, b.Compare(a[2], a[3], "GT", order));
    ACCY_ASSIGN_OR_RETURN(Value * tie, b.And(eq, gt));
    ACCY_ASSIGN_OR_RETURN(Value * less, b.Or(lt, tie));
    return b.Return({less});
  };
}

using ComparatorFor = std::function<RegionBodyFn(ElementType)>;

// sort of the data operands along `dimension`; the variant's value is result `result`.
ShapeVariant Sort(std::vector<Dims> operands, int64_t dimension, ComparatorFor comparator,
                  size_t result = 0, bool is_stable = true) {
  return {operands,
          {},
          [=](FunctionBuilder& f, ElementType type, const std::vector<Value*>& x,
              const std::vector<Value*>&) -> StatusOr<Value*> {
            ACCY_ASSIGN_OR_RETURN(std::vector<Value*> sorted,
                                  f.Sort(x, dimension, comparator(type), is_stable));
            return sorted[result];
          }};
}

ShapeVariant TopK(Dims operand, int64_t k, size_t result) {
  return {{operand},
          {},
          [=](FunctionBuilder& f, ElementType, const std::vector<Value*>& x,
              const std::vector<Value*>&) -> StatusOr<Value*> {
            ACCY_ASSIGN_OR_RETURN(std::vector<Value*> top, f.TopK(x[0], k));
            return top[result];
          }};
}

// compare <direction> with the arguments swapped (rhs, lhs).
ComparatorFor Swapped(std::string direction) {
  return [direction](ElementType type) -> RegionBodyFn {
    return [direction, type](FunctionBuilder& b, std::span<Value* const> a) -> Status {
      ACCY_ASSIGN_OR_RETURN(Value * c,
                            b.Compare(a[1], a[0], direction, IsFloat(type) ? "TOTALORDER" : ""));
      return b.Return({c});
    };
  };
}

// Keyed on the second operand, by a function of it (x * x, then LT: the square's order; equal
// squares of x and -x tie and keep their order): the keyed path's key function and operand.
RegionBodyFn SquareOfSecondLess(ElementType type) {
  return [type](FunctionBuilder& b, std::span<Value* const> a) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * lhs, b.Multiply(a[2], a[2]));
    ACCY_ASSIGN_OR_RETURN(Value * rhs, b.Multiply(a[3], a[3]));
    ACCY_ASSIGN_OR_RETURN(Value * c, b.Compare(lhs, rhs, "LT", IsFloat(type) ? "TOTALORDER" : ""));
    return b.Return({c});
  };
}

ComparatorFor Ascending() {
  return [](ElementType t) { return Direction("LT", t); };
}
ComparatorFor Descending() {
  return [](ElementType t) { return Direction("GT", t); };
}

TEST(SortEmitterTest, SingleOperandSortsMatchTheReferenceForEveryType) {
  for (E type : kAllTypes) {
    CheckVariants("sort", type,
                  {
                      Sort({{1000}}, 0, Ascending()),
                      Sort({{1000}}, -1, Descending()),
                      Sort({{7, 33}}, 1, Ascending()),
                      Sort({{33, 7}}, 0, Descending()),
                      Sort({{3, 37, 4}}, 1, Ascending()),
                      Sort({{3, 4, 37}}, -1, Descending(), 0, /*is_stable=*/false),
                      Sort({{5}}, 0, Ascending()),
                      Sort({{1}}, 0, Ascending()),
                      Sort({{4, 1}}, 1, Descending()),
                      Sort({{0, 5}}, 1, Ascending()),
                      Sort({{4, 0}}, 1, Ascending()),
                      Sort({{17}}, 0, Ascending()),  // one run plus one element
                      // compare GT (rhs, lhs) is ascending; LT (rhs, lhs) descending.
                      Sort({{5, 300}}, 1, Swapped("GT")),
                      Sort({{300, 5}}, 0, Swapped("LT")),
                  });
  }
}

TEST(SortEmitterTest, PayloadsFollowTheirKeysAndTiesKeepTheirOrder) {
  for (E type : kAllTypes) {
    CheckVariants("sort key+payload", type,
                  {
                      Sort({{300}, {300}}, 0, Ascending(), 0),
                      Sort({{300}, {300}}, 0, Ascending(), 1),
                      Sort({{9, 40}, {9, 40}}, 1, Descending(), 1),
                      Sort({{40, 9}, {40, 9}}, 0, Ascending(), 1),
                      Sort({{2, 50, 3}, {2, 50, 3}, {2, 50, 3}}, 1, Descending(), 2),
                      Sort({{64}, {64}}, 0, TwoKeys, 0),
                      Sort({{64}, {64}}, 0, TwoKeys, 1),
                      Sort({{200}, {200}}, 0, SquareOfSecondLess, 0),
                      Sort({{3, 70}, {3, 70}}, 1, SquareOfSecondLess, 1),
                  });
  }
}

TEST(SortEmitterTest, JaxNaNCanonicalizingComparatorMatchesTheReference) {
  for (E type : {E::kF16, E::kBF16, E::kF32, E::kF64}) {
    CheckVariants("sort jax comparator", type,
                  {
                      Sort({{300}}, 0, JaxFloatLess),
                      Sort({{5, 70}, {5, 70}}, 1, JaxFloatLess, 1),
                  });
  }
}

TEST(TopKEmitterTest, ValuesAndIndicesMatchTheReferenceForEveryType) {
  for (E type : kAllTypes) {
    std::vector<ShapeVariant> variants;
    for (size_t result : {0, 1}) {
      variants.push_back(TopK({5, 3}, 2, result));
      variants.push_back(TopK({1000}, 8, result));
      variants.push_back(TopK({4, 37}, 37, result));
      variants.push_back(TopK({2, 3, 16}, 5, result));
      variants.push_back(TopK({3, 6}, 1, result));
      variants.push_back(TopK({3, 6}, 0, result));
      variants.push_back(TopK({0, 6}, 2, result));
      // The largest k kept in registers and the smallest kept in a heap (kTopKVectorMax),
      // over rows whose threshold scan ends in a partial vector.
      variants.push_back(TopK({3, 203}, 16, result));
      variants.push_back(TopK({3, 203}, 17, result));
    }
    CheckVariants("top_k", type, variants);
  }
}

// Rows built from the ends of TOTALORDER, where a kept key equal to the type's smallest or
// largest key must still be ordered by index: -NaN with every payload bit set (the smallest
// key), +NaN likewise (the largest), infinities, signed zeros, repeated in blocks so ties span
// the threshold scan's vectors. k = 5 keeps them in registers, k = 40 in a heap.
TEST(TopKEmitterTest, TotalOrderEndsAndTiesMatchTheReference) {
  for (E type : {E::kF16, E::kF32, E::kF64}) {
    const int64_t bytes = ElementByteWidth(type);
    const uint64_t sign = uint64_t{1} << (bytes * 8 - 1);
    const uint64_t all = sign | (sign - 1);
    const uint64_t exponent = type == E::kF16 ? 0x7C00 : type == E::kF32 ? 0x7F800000 : 0x7FF0000000000000;
    const uint64_t patterns[] = {all, sign - 1, exponent, sign | exponent, 0, sign, all, exponent | 1};
    const Dims dims = {4, 150};
    std::vector<Tensor> args;
    for (int variant = 0; variant < 2; ++variant) {
      Tensor t = Tensor::Allocate(TensorType::Create(type, dims).value()).value();
      auto* out = static_cast<uint8_t*>(t.data());
      for (int64_t i = 0; i < t.element_count(); ++i) {
        // Row 0: only the smallest key; the other rows cycle the patterns in runs of 7.
        const uint64_t bits = i < dims[1] ? all : patterns[(i / 7 + variant) % 8];
        std::memcpy(out + i * bytes, &bits, static_cast<size_t>(bytes));
      }
      args.push_back(std::move(t));
    }
    for (int64_t k : {5, 40}) {
      CheckVariantsOn("top_k ends k=" + std::to_string(k), type, {TopK(dims, k, 0), TopK(dims, k, 1)},
                      args);
    }
  }
}

// The scratch of the one item of a sort of `operands` [1000, 64] f32 / i8 along dim 1.
StatusOr<CompiledItem> SortItem(size_t operands, RegionBodyFn comparator) {
  Builder builder("sort_blocks");
  const TensorType f32 = TensorType::Create(ElementType::kF32, {1000, 64}).value();
  const TensorType i8 = TensorType::Create(ElementType::kI8, {1000, 64}).value();
  std::vector<TensorType> types = {f32, i8};
  types.resize(operands);
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", types, types));
  std::vector<Value*> inputs;
  for (size_t i = 0; i < operands; ++i) inputs.push_back(f.Parameter(static_cast<int64_t>(i)));
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> sorted, f.Sort(inputs, 1, std::move(comparator)));
  ACCY_RETURN_IF_ERROR(f.Return(sorted));
  ACCY_ASSIGN_OR_RETURN(auto module, builder.Finish());
  ACCY_ASSIGN_OR_RETURN(auto program, JitProgram::Create(std::move(module)));
  if (program->compiled().items().size() != 1) return absl::InternalError("expected one item");
  return program->compiled().items()[0];
}

TEST(SortEmitterTest, SortKernelTakesAScratchSlotPerBlockOfRows) {
  // 1000 rows over 250 blocks of 4 rows. The single-key fast path (vqsort) takes one f32 key
  // copy of a 64-element row per block; the keyed path (a key function of one operand: JAX's
  // canonicalizing comparator, or a plain compare with a payload) one u64 (key, position) per
  // element; the general merge sort two copies of every operand.
  ASSERT_OK_AND_ASSIGN(CompiledItem fast, SortItem(1, Direction("LT", E::kF32)));
  EXPECT_EQ(fast.launch.block_count, 250);
  EXPECT_EQ(fast.block_size, 4);
  EXPECT_EQ(fast.scratch_bytes, 250 * 64 * 4);
  ASSERT_OK_AND_ASSIGN(CompiledItem payload, SortItem(2, Direction("LT", E::kF32)));
  EXPECT_EQ(payload.launch.block_count, 250);
  EXPECT_EQ(payload.scratch_bytes, 250 * 64 * 8);
  ASSERT_OK_AND_ASSIGN(CompiledItem jax, SortItem(1, JaxFloatLess(E::kF32)));
  EXPECT_EQ(jax.scratch_bytes, 250 * 64 * 8);
  // FLOAT's partial order (NaN compares false) is not a key order: the general path.
  auto partial = [](FunctionBuilder& b, std::span<Value* const> a) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * c, b.Compare(a[0], a[1], "LT", "FLOAT"));
    return b.Return({c});
  };
  ASSERT_OK_AND_ASSIGN(CompiledItem general, SortItem(2, partial));
  EXPECT_EQ(general.launch.block_count, 250);
  EXPECT_EQ(general.scratch_bytes, 250 * 2 * 64 * (4 + 1));
}

}  // namespace
}  // namespace accy::jit::testing
