// The shape emitter's indexed ops -- gather (batching dims, clamped start indices, implicit index
// vector dim), scatter (update regions applied in row-major order of the updates, duplicate
// indices, out-of-bound elements skipped, two inputs), dynamic_slice and dynamic_update_slice
// (clamped starts, signed and unsigned index types) -- x every element type, through the JIT and
// the reference evaluator, compared bit for bit; determinism at 1 and 2 threads.
#include <string>
#include <vector>

#include "tests/jit/shape_test_util.h"

namespace accy::jit::testing {
namespace {

using Dims = std::vector<int64_t>;
using E = ElementType;

ShapeVariant Gather(Dims operand, IndexArg indices, GatherDimensionNumbers numbers,
                    Dims slice_sizes) {
  return {{operand},
          {indices},
          [=](FunctionBuilder& f, ElementType, const std::vector<Value*>& x,
              const std::vector<Value*>& i) { return f.Gather(x[0], i[0], numbers, slice_sizes); }};
}

ShapeVariant DynamicSlice(Dims operand, std::vector<IndexArg> starts, Dims sizes) {
  return {{operand},
          starts,
          [=](FunctionBuilder& f, ElementType, const std::vector<Value*>& x,
              const std::vector<Value*>& i) { return f.DynamicSlice(x[0], i, sizes); }};
}

ShapeVariant DynamicUpdateSlice(Dims operand, Dims update, std::vector<IndexArg> starts) {
  return {{operand, update},
          starts,
          [=](FunctionBuilder& f, ElementType, const std::vector<Value*>& x,
              const std::vector<Value*>& i) { return f.DynamicUpdateSlice(x[0], x[1], i); }};
}

// dynamic_slice (or, with `update`, dynamic_update_slice) whose start indices are constants
// (folded into the kernel: no buffers).
ShapeVariant ConstantStarts(Dims operand, Dims sizes, std::vector<int64_t> starts, E index_type,
                            bool update) {
  std::vector<Dims> data = {operand};
  if (update) data.push_back(sizes);
  return {data,
          {},
          [=](FunctionBuilder& f, ElementType, const std::vector<Value*>& x,
              const std::vector<Value*>&) -> StatusOr<Value*> {
            std::vector<Value*> indices;
            for (int64_t start : starts) {
              ACCY_ASSIGN_OR_RETURN(Value * v,
                                    f.ConstantScalar(index_type, static_cast<double>(start)));
              indices.push_back(v);
            }
            if (update) return f.DynamicUpdateSlice(x[0], x[1], indices);
            return f.DynamicSlice(x[0], indices, sizes);
          }};
}

// scatter of one input with a named update computation ("add", "assign", "maximum", ...).
ShapeVariant Scatter(Dims input, IndexArg indices, Dims updates, ScatterDimensionNumbers numbers,
                     std::string update) {
  return {
      {input, updates},
      {indices},
      [=](FunctionBuilder& f, ElementType, const std::vector<Value*>& x,
          const std::vector<Value*>& i) { return f.Scatter(x[0], i[0], x[1], numbers, update); }};
}

IndexArg Scalar(E type, int64_t value) { return {type, {}, {value}}; }

// Embedding lookup, implicit index vector dim, 2-d windows, batching dims, unsigned and
// out-of-range indices (clamped), zero-size index lists.
std::vector<ShapeVariant> GatherVariants() {
  GatherDimensionNumbers rows;  // operand[indices[b], :]
  rows.offset_dims = {1};
  rows.collapsed_slice_dims = {0};
  rows.start_index_map = {0};
  rows.index_vector_dim = 1;
  GatherDimensionNumbers scalar_rows = rows;  // indices [N], index_vector_dim = rank
  scalar_rows.offset_dims = {};
  GatherDimensionNumbers windows;  // 2-d start, 2x3 windows
  windows.offset_dims = {1, 2};
  windows.start_index_map = {0, 1};
  windows.index_vector_dim = 1;
  GatherDimensionNumbers batched;  // operand [B, N, D], indices [B, K, 1]
  batched.offset_dims = {2};
  batched.collapsed_slice_dims = {1};
  batched.operand_batching_dims = {0};
  batched.start_indices_batching_dims = {0};
  batched.start_index_map = {1};
  batched.index_vector_dim = 2;
  GatherDimensionNumbers leading_vector = windows;  // index vector in dim 0: indices [2, N]
  leading_vector.offset_dims = {1, 2};
  leading_vector.index_vector_dim = 0;
  return {
      Gather({7, 17}, {E::kI32, {5, 1}, {0, 6, -3, 9, 2}}, rows, {1, 17}),
      Gather({1023}, {E::kI64, {4}, {1022, 0, 5000, -1}}, scalar_rows, {1}),
      Gather({7, 17}, {E::kU8, {3, 2}, {5, 15, 0, 0, 255, 7}}, windows, {2, 3}),
      Gather({3, 5, 4}, {E::kI16, {3, 2, 1}, {4, 0, 1, -7, 3, 2}}, batched, {1, 1, 4}),
      Gather({7, 17}, {E::kU64, {2, 4}, {-1, 3, 0, 6, 2, 16, 9, 1}}, leading_vector, {2, 3}),
      Gather({7, 17}, {E::kI32, {0, 1}, {0}}, rows, {1, 17}),
      Gather({1023, 1}, {E::kU32, {1023, 1}, {7, 1022, 3, 1000000, 0}}, rows, {1, 1}),
  };
}

TEST(GatherEmitterTest, GatherMatchesReferenceForEveryElementType) {
  const std::vector<ShapeVariant> variants = GatherVariants();
  for (ElementType type : kAllElementTypes) CheckVariants("gather", type, variants);
}

TEST(DynamicSliceEmitterTest, ClampedStartsMatchReferenceForEveryElementType) {
  const std::vector<ShapeVariant> variants = {
      DynamicSlice({7, 17}, {Scalar(E::kI32, 2), Scalar(E::kI32, -3)}, {3, 5}),
      DynamicSlice({7, 17}, {Scalar(E::kU8, 200), Scalar(E::kU8, 13)}, {7, 5}),
      DynamicSlice({1023}, {Scalar(E::kU64, -1)}, {30}),  // UINT64_MAX clamps to 993
      DynamicSlice({1023}, {Scalar(E::kI8, -128)}, {1023}),
      DynamicSlice({7, 17}, {Scalar(E::kU16, 3), Scalar(E::kU16, 9)}, {0, 5}),
      DynamicSlice({3, 4, 5}, {Scalar(E::kI64, 1), Scalar(E::kI64, 1), Scalar(E::kI64, 1)},
                   {2, 2, 3}),
      DynamicSlice({}, {}, {}),
      ConstantStarts({7, 17}, {3, 5}, {6, -4}, E::kI32, /*update=*/false),
  };
  for (ElementType type : kAllElementTypes) CheckVariants("dynamic_slice", type, variants);
}

TEST(DynamicUpdateSliceEmitterTest, ClampedStartsMatchReferenceForEveryElementType) {
  const std::vector<ShapeVariant> variants = {
      DynamicUpdateSlice({7, 17}, {3, 5}, {Scalar(E::kI32, 5), Scalar(E::kI32, -1)}),
      DynamicUpdateSlice({7, 17}, {3, 5}, {Scalar(E::kU32, 1), Scalar(E::kU32, 2)}),
      DynamicUpdateSlice({1023}, {17}, {Scalar(E::kU64, -1)}),
      DynamicUpdateSlice({1023}, {1}, {Scalar(E::kI16, 511)}),
      DynamicUpdateSlice({7, 17}, {0, 5}, {Scalar(E::kI64, 2), Scalar(E::kI64, 2)}),
      DynamicUpdateSlice({3, 4, 5}, {1, 4, 2},
                         {Scalar(E::kI8, 2), Scalar(E::kI8, 0), Scalar(E::kI8, 4)}),
      DynamicUpdateSlice({}, {}, {}),
      DynamicUpdateSlice({0, 3}, {0, 3}, {Scalar(E::kI32, 0), Scalar(E::kI32, 0)}),
      ConstantStarts({7, 17}, {3, 5}, {2, 100}, E::kU16, /*update=*/true),
  };
  for (ElementType type : kAllElementTypes) {
    CheckVariants("dynamic_update_slice", type, variants);
  }
}

// Named update computations the element type allows (add on i1 is or, in StableHLO's sense).
std::vector<std::string> UpdatesFor(ElementType type) {
  if (type == E::kI1) return {"assign", "maximum"};
  return {"assign", "add", "maximum", "multiply"};
}

std::vector<ShapeVariant> ScatterVariants(const std::string& update) {
  ScatterDimensionNumbers rows;  // input[indices[b], :] op= updates[b, :]
  rows.update_window_dims = {1};
  rows.inserted_window_dims = {0};
  rows.scatter_dims_to_operand_dims = {0};
  rows.index_vector_dim = 1;
  ScatterDimensionNumbers elements = rows;  // input[indices[b]] op= updates[b]
  elements.update_window_dims = {};
  ScatterDimensionNumbers windows;  // 2-d start, 2x3 windows that may hang out of bounds
  windows.update_window_dims = {1, 2};
  windows.scatter_dims_to_operand_dims = {0, 1};
  windows.index_vector_dim = 1;
  ScatterDimensionNumbers batched;  // input [B, N, D], indices [B, K, 1], updates [B, K, D]
  batched.update_window_dims = {2};
  batched.inserted_window_dims = {1};
  batched.input_batching_dims = {0};
  batched.scatter_indices_batching_dims = {0};
  batched.scatter_dims_to_operand_dims = {1};
  batched.index_vector_dim = 2;
  return {
      // Duplicate indices combine in row-major update order; -3 and 9 are skipped.
      Scatter({7, 17}, {E::kI32, {6, 1}, {2, 6, -3, 9, 2, 2}}, {6, 17}, rows, update),
      Scatter({1023}, {E::kU64, {1023}, {5, 5, 1022, -1, 0, 7, 7, 7}}, {1023}, elements, update),
      Scatter({7, 17}, {E::kI16, {4, 2}, {5, 15, 0, 0, 6, 16, -1, 3}}, {4, 2, 3}, windows, update),
      Scatter({3, 5, 4}, {E::kI8, {3, 2, 1}, {4, 4, 1, -7, 3, 0}}, {3, 2, 4}, batched, update),
      Scatter({7, 17}, {E::kI32, {0, 1}, {0}}, {0, 17}, rows, update),
  };
}

TEST(ScatterEmitterTest, NamedUpdatesMatchReferenceForEveryElementType) {
  for (ElementType type : kAllElementTypes) {
    for (const std::string& update : UpdatesFor(type)) {
      CheckVariants("scatter " + update, type, ScatterVariants(update));
    }
  }
}

// Two inputs (one kernel, two outputs) with one region over (a, b, u, v) -> (a + u * b,
// max(b, v)).
TEST(ScatterEmitterTest, TwoInputsWithCustomRegionMatchReference) {
  for (ElementType type : {E::kF32, E::kBF16, E::kI64, E::kU8}) {
    SCOPED_TRACE(std::string(ElementTypeName(type)));
    Builder builder("scatter2");
    TensorType input = TensorType::Create(type, {7, 17}).value();
    TensorType input2 = TensorType::Create(type, {7, 17}).value();
    TensorType indices = TensorType::Create(E::kI32, {5, 1}).value();
    TensorType updates = TensorType::Create(type, {5, 17}).value();
    auto f =
        builder.BeginFunction("main", {input, input2, indices, updates, updates}, {input, input2})
            .value();
    ScatterDimensionNumbers rows;
    rows.update_window_dims = {1};
    rows.inserted_window_dims = {0};
    rows.scatter_dims_to_operand_dims = {0};
    rows.index_vector_dim = 1;
    auto region = [](FunctionBuilder& body, std::span<Value* const> a) -> Status {
      ACCY_ASSIGN_OR_RETURN(Value * product, body.Multiply(a[2], a[1]));
      ACCY_ASSIGN_OR_RETURN(Value * sum, body.Add(a[0], product));
      ACCY_ASSIGN_OR_RETURN(Value * max, body.Maximum(a[1], a[3]));
      return body.Return({sum, max});
    };
    ASSERT_OK_AND_ASSIGN(std::vector<Value*> out,
                         f.Scatter({f.Parameter(0), f.Parameter(1)}, f.Parameter(2),
                                   {f.Parameter(3), f.Parameter(4)}, rows, region));
    ASSERT_OK(f.Return(out));
    ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
    std::vector<Tensor> args = {MakeInput(input, 1), MakeInput(input2, 2),
                                MakeIndexTensor({E::kI32, {5, 1}, {3, 3, 0, 7, 6}}),
                                MakeInput(updates, 4), MakeInput(updates, 5)};
    ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
    ASSERT_EQ(program->compiled().items().size(), 1u);
    EXPECT_EQ(program->compiled().items()[0].outputs.size(), 2u);
    EXPECT_EQ(program->compiled().items()[0].launch.block_count, 1);
    ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args, 2));
    for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(SameBits(actual[i], expected[i])) << i;
  }
}

TEST(GatherScatterDeterminismTest, ResultsAreBitwiseEqualAtOneAndTwoThreads) {
  GatherDimensionNumbers rows;
  rows.offset_dims = {1};
  rows.collapsed_slice_dims = {0};
  rows.start_index_map = {0};
  rows.index_vector_dim = 1;
  std::vector<int64_t> picks;
  for (int64_t i = 0; i < 997; ++i) picks.push_back((i * 37) % 1100 - 50);
  const std::vector<ShapeVariant> variants = {
      Gather({1000, 33}, {E::kI32, {997, 1}, picks}, rows, {1, 33}),
      DynamicUpdateSlice({300, 200}, {100, 150}, {Scalar(E::kI32, 120), Scalar(E::kI32, 70)}),
      DynamicSlice({300, 200}, {Scalar(E::kI32, 7), Scalar(E::kI32, 3)}, {250, 190}),
  };
  for (ElementType type : {E::kF32, E::kF16, E::kU64}) {
    std::vector<TensorType> result_types;
    ASSERT_OK(BuildVariants(type, variants, nullptr, &result_types).status());
    ASSERT_OK_AND_ASSIGN(auto module, BuildVariants(type, variants, &result_types, nullptr));
    const std::vector<Tensor> args = MakeArguments(type, variants);
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
    for (const CompiledItem& item : program->compiled().items()) {
      EXPECT_GT(item.launch.block_count, 2) << item.symbol;
    }
    ASSERT_OK_AND_ASSIGN(auto one, program->Run(args, 1));
    ASSERT_OK_AND_ASSIGN(auto two, program->Run(args, 2));
    for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(SameBits(two[i], one[i])) << i;
  }
}

}  // namespace
}  // namespace accy::jit::testing
