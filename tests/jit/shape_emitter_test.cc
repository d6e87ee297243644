// The shape emitter's data-movement ops (transpose, slice, pad, concatenate, iota, reverse,
// reshape, materialized broadcast_in_dim) x every element type x shapes with awkward sizes (0, 1,
// 7, 17, 1023, partial transpose tiles), through the JIT and the reference evaluator, compared
// bit for bit; plus determinism at 1 and 2 threads over multi-block items. Adding a case = one
// variant line.
#include <string>
#include <vector>

#include "tests/jit/shape_test_util.h"

namespace accy::jit::testing {
namespace {

using Dims = std::vector<int64_t>;

ShapeVariant Transpose(Dims dims, Dims permutation) {
  return {{dims}, {}, [permutation](FunctionBuilder& f, ElementType, const std::vector<Value*>& x,
                                    const std::vector<Value*>&) {
            return f.Transpose(x[0], permutation);
          }};
}

ShapeVariant Slice(Dims dims, Dims start, Dims limit, Dims strides) {
  return {{dims}, {}, [=](FunctionBuilder& f, ElementType, const std::vector<Value*>& x,
                          const std::vector<Value*>&) {
            return f.Slice(x[0], start, limit, strides);
          }};
}

ShapeVariant Pad(Dims dims, Dims low, Dims high, Dims interior) {
  return {{dims, {}}, {}, [=](FunctionBuilder& f, ElementType, const std::vector<Value*>& x,
                              const std::vector<Value*>&) {
            return f.Pad(x[0], x[1], low, high, interior);
          }};
}

// pad with a constant padding value (folded into the kernel: no buffer).
ShapeVariant PadWithConstant(Dims dims, Dims low, Dims high, Dims interior) {
  return {{dims}, {}, [=](FunctionBuilder& f, ElementType type, const std::vector<Value*>& x,
                          const std::vector<Value*>&) -> StatusOr<Value*> {
            ACCY_ASSIGN_OR_RETURN(Value * fill, f.ConstantScalar(type, -1.5));
            return f.Pad(x[0], fill, low, high, interior);
          }};
}

// concatenate of inputs of `dims` along `dimension`; `twice` concatenates the first input with
// itself as well (one buffer read twice).
ShapeVariant Concatenate(std::vector<Dims> dims, int64_t dimension, bool twice = false) {
  return {dims, {}, [=](FunctionBuilder& f, ElementType, const std::vector<Value*>& x,
                        const std::vector<Value*>&) {
            std::vector<Value*> inputs = x;
            if (twice) inputs.push_back(x[0]);
            return f.Concatenate(inputs, dimension);
          }};
}

ShapeVariant Iota(Dims dims, int64_t dimension) {
  return {{}, {}, [=](FunctionBuilder& f, ElementType type, const std::vector<Value*>&,
                      const std::vector<Value*>&) {
            return f.Iota(TensorType::Create(type, dims).value(), dimension);
          }};
}

ShapeVariant Reverse(Dims dims, Dims dimensions) {
  return {{dims}, {}, [=](FunctionBuilder& f, ElementType, const std::vector<Value*>& x,
                          const std::vector<Value*>&) { return f.Reverse(x[0], dimensions); }};
}

ShapeVariant Reshape(Dims dims, Dims to) {
  return {{dims}, {}, [=](FunctionBuilder& f, ElementType type, const std::vector<Value*>& x,
                          const std::vector<Value*>&) {
            return f.Reshape(x[0], TensorType::Create(type, to).value());
          }};
}

ShapeVariant Broadcast(Dims dims, Dims to, Dims broadcast_dimensions) {
  return {{dims}, {}, [=](FunctionBuilder& f, ElementType type, const std::vector<Value*>& x,
                          const std::vector<Value*>&) {
            return f.BroadcastInDim(x[0], TensorType::Create(type, to).value(),
                                    broadcast_dimensions);
          }};
}

void CheckEveryType(const std::string& name, const std::vector<ShapeVariant>& variants) {
  for (ElementType type : kAllElementTypes) CheckVariants(name, type, variants);
}

TEST(ShapeEmitterTest, TransposeMatchesReferenceForEveryElementType) {
  CheckEveryType("transpose", {
      Transpose({0, 3}, {1, 0}),
      Transpose({1, 1}, {1, 0}),
      Transpose({7, 17}, {1, 0}),
      Transpose({17, 1023}, {1, 0}),      // partial tiles along both tiled dims
      Transpose({65, 130}, {1, 0}),
      Transpose({3, 5, 7}, {2, 0, 1}),
      Transpose({3, 5, 7}, {1, 0, 2}),    // innermost dim kept: row copies
      Transpose({3, 5, 7}, {0, 2, 1}),    // batched 2-d transpose
      Transpose({2, 3, 4, 5}, {3, 1, 2, 0}),
      Transpose({1, 7, 1, 17}, {3, 2, 1, 0}),
      Transpose({3, 40, 33}, {0, 2, 1}),  // batched, whole and partial register tiles
      Transpose({20, 3, 36}, {2, 1, 0}),
      Transpose({}, {}),
  });
}

TEST(ShapeEmitterTest, StridedSliceMatchesReferenceForEveryElementType) {
  CheckEveryType("slice", {
      Slice({1023}, {1}, {1020}, {3}),
      Slice({7, 17}, {1, 2}, {6, 17}, {2, 5}),
      Slice({0, 5}, {0, 0}, {0, 5}, {1, 1}),
      Slice({17}, {3}, {3}, {1}),           // zero-size result
      Slice({4, 5, 6}, {0, 0, 0}, {4, 5, 6}, {1, 1, 1}),
      Slice({1}, {0}, {1}, {7}),
      Slice({7, 17, 3}, {6, 0, 1}, {7, 17, 3}, {1, 16, 1}),
  });
}

TEST(ShapeEmitterTest, PadWithNegativeAndInteriorPaddingMatchesReference) {
  CheckEveryType("pad", {
      Pad({7}, {2}, {3}, {0}),
      Pad({7}, {-2}, {-1}, {2}),
      Pad({3, 5}, {1, -1}, {-1, 2}, {1, 0}),
      Pad({0, 4}, {1, 1}, {1, 0}, {0, 0}),  // empty operand: all padding
      Pad({17, 1}, {0, 3}, {0, 3}, {3, 0}),
      Pad({5}, {-3}, {-2}, {0}),            // zero-size result
      Pad({1023}, {0}, {1}, {1}),
      Pad({}, {}, {}, {}),
      PadWithConstant({3, 5}, {2, 0}, {0, -2}, {1, 1}),
  });
}

TEST(ShapeEmitterTest, ConcatenateAlongEveryDimMatchesReference) {
  CheckEveryType("concatenate", {
      Concatenate({{3, 5}, {0, 5}, {4, 5}}, 0),
      Concatenate({{7, 1}, {7, 17}, {7, 0}}, 1),
      Concatenate({{1023}, {1}}, 0),
      Concatenate({{2, 3, 4}, {2, 1, 4}}, 1),
      Concatenate({{3, 7}}, 1, /*twice=*/true),
      Concatenate({{0, 3}, {0, 2}}, 1),
  });
}

// Every element type but i1 (the builder rejects i1 iota results).
TEST(ShapeEmitterTest, IotaMatchesReferenceForEveryElementType) {
  const std::vector<ShapeVariant> variants = {
      Iota({1023}, 0),
      Iota({7, 17}, 0),
      Iota({7, 17}, 1),
      Iota({0, 5}, 1),
      Iota({3, 4, 5}, 1),
      Iota({1}, 0),
      // Past 2048 (f16 and bf16 round) and past 65504 (f16 overflows to inf); i8/u8 wrap.
      Iota({70000}, 0),
  };
  for (ElementType type : kAllElementTypes) {
    if (type != ElementType::kI1) CheckVariants("iota", type, variants);
  }
}

TEST(ShapeEmitterTest, ReverseMatchesReferenceForEveryElementType) {
  CheckEveryType("reverse", {
      Reverse({1023}, {0}),
      Reverse({7, 17}, {0}),
      Reverse({7, 17}, {1}),
      Reverse({7, 17}, {0, 1}),
      Reverse({0, 3}, {1}),
      Reverse({3, 4, 5}, {0, 2}),
      Reverse({}, {}),
  });
}

TEST(ShapeEmitterTest, ReshapeCopiesRowMajorOrderForEveryElementType) {
  CheckEveryType("reshape", {
      Reshape({7, 17}, {119}),
      Reshape({1023}, {3, 11, 31}),
      Reshape({0, 5}, {5, 0}),
      Reshape({}, {1, 1}),
  });
}

TEST(ShapeEmitterTest, MaterializedBroadcastInDimMatchesReference) {
  CheckEveryType("broadcast_in_dim", {
      Broadcast({3}, {4, 3}, {1}),
      Broadcast({3}, {3, 4}, {0}),
      Broadcast({1, 3}, {5, 3}, {0, 1}),    // size-1 expansion
      Broadcast({3, 1}, {3, 7}, {0, 1}),
      Broadcast({}, {17}, {}),
      Broadcast({2, 3}, {3, 4, 2}, {2, 0}), // reordered dims
      Broadcast({1}, {1023}, {0}),
      Broadcast({4, 1, 3}, {3, 5, 4}, {2, 1, 0}),
      Broadcast({0}, {3, 0}, {1}),
  });
}

// Items of several blocks (transpose tiles, row blocks of 8192 elements) give the same bits at
// 1 and 2 threads.
TEST(ShapeDeterminismTest, MultiBlockItemsAreBitwiseEqualAtOneAndTwoThreads) {
  const std::vector<ShapeVariant> variants = {
      Transpose({300, 517}, {1, 0}),
      Pad({200, 100}, {3, -2}, {1, 5}, {1, 0}),
      Concatenate({{100, 300}, {100, 77}}, 1),
      Iota({40000}, 0),
      Reverse({150, 211}, {0, 1}),
      Broadcast({211}, {150, 211}, {1}),
  };
  for (ElementType type : {ElementType::kF32, ElementType::kBF16, ElementType::kI8}) {
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
    ASSERT_EQ(one.size(), two.size());
    for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(SameBits(two[i], one[i])) << i;
  }
}

// A transpose that moves the innermost dim is tiled: its blocks are 64x64 tiles (32x32 for
// 8-byte types), a fixed decomposition whatever the thread count.
TEST(ShapeBlockTest, TransposeBlocksAreTiles) {
  const std::vector<ShapeVariant> variants = {Transpose({130, 65}, {1, 0}),
                                              Transpose({4, 100, 3}, {0, 2, 1})};
  for (ElementType type : {ElementType::kF32, ElementType::kF64}) {
    std::vector<TensorType> result_types;
    ASSERT_OK(BuildVariants(type, variants, nullptr, &result_types).status());
    ASSERT_OK_AND_ASSIGN(auto module, BuildVariants(type, variants, &result_types, nullptr));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
    const int64_t tile = type == ElementType::kF64 ? 32 : 64;
    const auto& items = program->compiled().items();
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[0].block_size, tile * tile);
    EXPECT_EQ(items[0].launch.block_count, BlockCount(65, tile) * BlockCount(130, tile));
    EXPECT_EQ(items[1].launch.block_count, 4 * BlockCount(3, tile) * BlockCount(100, tile));
  }
}

// Buffers are the item's non-constant operands: a constant padding value is folded into the
// code, so pad reads one buffer and writes one.
TEST(ShapeBlockTest, ConstantPaddingValueIsFoldedIntoTheKernel) {
  const std::vector<ShapeVariant> variants = {PadWithConstant({7, 17}, {1, 1}, {1, 1}, {0, 0})};
  std::vector<TensorType> result_types;
  ASSERT_OK(BuildVariants(ElementType::kF32, variants, nullptr, &result_types).status());
  ASSERT_OK_AND_ASSIGN(auto module,
                       BuildVariants(ElementType::kF32, variants, &result_types, nullptr));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  ASSERT_EQ(program->compiled().items().size(), 1u);
  const CompiledItem& item = program->compiled().items()[0];
  EXPECT_EQ(item.inputs.size(), 1u);
  EXPECT_EQ(item.buffer_bytes, (std::vector<int64_t>{7 * 17 * 4, 9 * 19 * 4}));
}

}  // namespace
}  // namespace accy::jit::testing
