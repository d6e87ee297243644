// Buffer assignment: liveness-based arena reuse, parameters/results in caller buffers, constants,
// in-place writes and aliasing reshapes.
#include "src/runtime/buffer_assignment.h"

#include <memory>

#include "accy/builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using testing::HasSubstr;
using Kind = BufferSlice::Kind;

TensorType F32(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}

// One item per non-return op of the entry block: inputs = operands, outputs = results.
std::vector<ItemBuffers> OneItemPerOp(const Function& f, bool in_place) {
  std::vector<ItemBuffers> items;
  for (const auto& op : f.entry_block()->operations()) {
    if (op->kind() == OpKind::kReturn || op->kind() == OpKind::kConstant) continue;
    ItemBuffers item;
    item.inputs.assign(op->operands().begin(), op->operands().end());
    for (Value* r : op->results()) item.outputs.push_back(r);
    item.may_write_in_place = in_place && IsElementwise(*op);
    item.output_aliases_input = op->kind() == OpKind::kReshape;
    items.push_back(item);
  }
  return items;
}

// Two arena values whose lifetimes overlap never share bytes.
void ExpectNoOverlap(const Function& f, std::span<const ItemBuffers> items,
                     const BufferAssignment& a) {
  std::unordered_map<const Value*, std::pair<int64_t, int64_t>> range;  // [def, last use]
  for (size_t i = 0; i < items.size(); ++i) {
    for (const Value* v : items[i].outputs) range[v] = {int64_t(i), int64_t(i)};
    for (const Value* v : items[i].inputs) {
      if (range.count(v)) range[v].second = int64_t(i);
    }
  }
  for (const auto& [v, r] : range) {
    for (const auto& [w, s] : range) {
      if (v == w) continue;
      const BufferSlice* sv = a.SliceOf(v);
      const BufferSlice* sw = a.SliceOf(w);
      if (sv->kind != Kind::kArena || sw->kind != Kind::kArena) continue;
      bool lifetimes_overlap = r.first < s.second && s.first < r.second;
      bool bytes_overlap =
          sv->offset < sw->offset + sw->bytes && sw->offset < sv->offset + sv->bytes;
      EXPECT_FALSE(lifetimes_overlap && bytes_overlap)
          << "values " << v->id() << " and " << w->id() << " share bytes while both live";
    }
  }
}

std::unique_ptr<Module> Chain(int length) {
  Builder builder;
  FunctionBuilder f = *builder.BeginFunction("chain", {F32({1024})}, {F32({1024})});
  Value* v = f.Parameter(0);
  for (int i = 0; i < length; ++i) v = *f.Negate(v);
  EXPECT_TRUE(f.Return({v}).ok());
  return *builder.Finish();
}

TEST(BufferAssignmentTest, FiftyOpChainNeedsAtMostThreeIntermediateBuffers) {
  std::unique_ptr<Module> module = Chain(50);
  const Function& f = *module->functions()[0];
  for (bool in_place : {false, true}) {
    std::vector<ItemBuffers> items = OneItemPerOp(f, in_place);
    ASSERT_EQ(items.size(), 50u);
    ASSERT_OK_AND_ASSIGN(BufferAssignment a, BufferAssignment::Assign(f, items));
    EXPECT_LE(a.arena_buffer_count(), 3);
    EXPECT_EQ(a.arena_buffer_count(), in_place ? 1 : 2);
    EXPECT_EQ(a.arena_bytes(), in_place ? 4096 : 8192);
    // The first item reads the caller's input, the last writes the caller's output.
    EXPECT_EQ(a.SliceOf(items.front().inputs[0])->kind, Kind::kParameter);
    EXPECT_EQ(a.SliceOf(items.back().outputs[0])->kind, Kind::kResult);
    EXPECT_TRUE(a.result_copies().empty());
    ExpectNoOverlap(f, items, a);
  }
}

TEST(BufferAssignmentTest, OverlappingLifetimesGetDisjointSlices) {
  Builder builder;
  FunctionBuilder f = *builder.BeginFunction("diamond", {F32({100})}, {F32({100})});
  Value* a = *f.Exponential(f.Parameter(0));
  Value* b = *f.Negate(a);
  Value* c = *f.Tanh(a);
  Value* d = *f.Add(b, c);
  Value* e = *f.Multiply(d, a);
  ASSERT_OK(f.Return({e}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  const Function& fn = *module->functions()[0];
  std::vector<ItemBuffers> items = OneItemPerOp(fn, true);
  ASSERT_OK_AND_ASSIGN(BufferAssignment assignment, BufferAssignment::Assign(fn, items));
  ExpectNoOverlap(fn, items, assignment);
  // a lives until the last item: a, b, c are live together; d may reuse b's or c's slice.
  EXPECT_EQ(assignment.arena_buffer_count(), 3);
  EXPECT_EQ(assignment.arena_bytes(), 3 * 448);  // 400 bytes rounded up to 64
  EXPECT_EQ(assignment.SliceOf(e)->kind, Kind::kResult);
}

TEST(BufferAssignmentTest, ConstantsLiveInTheConstantArea) {
  Builder builder;
  FunctionBuilder f = *builder.BeginFunction("scale", {F32({4})}, {F32({4})});
  Value* k = *f.Constant(*Tensor::FromVector(F32({4}), std::vector<float>{1, 2, 3, 4}));
  Value* y = *f.Multiply(f.Parameter(0), k);
  ASSERT_OK(f.Return({y}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  const Function& fn = *module->functions()[0];
  ASSERT_OK_AND_ASSIGN(BufferAssignment a, BufferAssignment::Assign(fn, OneItemPerOp(fn, true)));
  ASSERT_NE(a.SliceOf(k), nullptr);
  EXPECT_EQ(a.SliceOf(k)->kind, Kind::kConstant);
  EXPECT_EQ(a.constant_bytes(), 64);
  ASSERT_EQ(a.constants().size(), 1u);
  EXPECT_EQ(a.constants()[0].first, k);
  EXPECT_EQ(a.arena_bytes(), 0);
}

TEST(BufferAssignmentTest, ReshapeAliasesItsInputAndResultsThatAreNotWrittenAreCopied) {
  Builder builder;
  FunctionBuilder f = *builder.BeginFunction("views", {F32({2, 3})},
                                             {F32({6}), F32({2, 3}), F32({3, 2})});
  Value* flat = *f.Reshape(f.Parameter(0), F32({6}));
  Value* neg = *f.Negate(flat);
  Value* back = *f.Reshape(neg, F32({3, 2}));
  ASSERT_OK(f.Return({neg, f.Parameter(0), back}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  const Function& fn = *module->functions()[0];
  ASSERT_OK_AND_ASSIGN(BufferAssignment a, BufferAssignment::Assign(fn, OneItemPerOp(fn, true)));
  // The reshape of a parameter is a view of the caller's input.
  EXPECT_EQ(a.SliceOf(flat)->kind, Kind::kParameter);
  EXPECT_EQ(a.SliceOf(neg)->kind, Kind::kResult);
  EXPECT_EQ(a.SliceOf(neg)->index, 0);
  // A returned reshape is written into the caller's output (a copy, not an alias).
  EXPECT_EQ(a.SliceOf(back)->kind, Kind::kResult);
  EXPECT_EQ(a.SliceOf(back)->index, 2);
  // The returned parameter is copied after the run.
  ASSERT_EQ(a.result_copies().size(), 1u);
  EXPECT_EQ(a.result_copies()[0].first, 1);
  EXPECT_EQ(a.result_copies()[0].second.kind, Kind::kParameter);
  EXPECT_EQ(a.arena_bytes(), 0);
}

TEST(BufferAssignmentTest, InputThatNoItemProducesIsAnError) {
  std::unique_ptr<Module> module = Chain(3);
  const Function& f = *module->functions()[0];
  std::vector<ItemBuffers> items = OneItemPerOp(f, false);
  items.erase(items.begin());  // the second item now reads a value nobody writes
  StatusOr<BufferAssignment> a = BufferAssignment::Assign(f, items);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(a.status().message()),
              HasSubstr("neither a parameter, a constant nor an earlier item's output"));
}

// Regression (conformance tridiagonal_solve_*): a zero-size value allocated where a freed
// interval starts used to be freed into the free list on top of that interval and abort.
TEST(BufferAssignmentTest, ZeroSizeValuesTakeNoSpaceBesideFreedSlices) {
  Builder builder;
  FunctionBuilder f =
      *builder.BeginFunction("empty_slice", {F32({100})}, {F32({100}), F32({0}), F32({100})});
  Value* x = *f.Exponential(f.Parameter(0));
  Value* y = *f.Negate(x);           // x dies here: its slice [0, 448) is free again
  Value* z = *f.Slice(f.Parameter(0), {0}, {0}, {1});  // 0 bytes
  Value* w = *f.Negate(z);           // z dies here
  Value* u = *f.Tanh(y);
  Value* v = *f.Negate(u);
  ASSERT_OK(f.Return({y, w, v}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  const Function& fn = *module->functions()[0];
  std::vector<ItemBuffers> items = OneItemPerOp(fn, false);
  ASSERT_OK_AND_ASSIGN(BufferAssignment assignment, BufferAssignment::Assign(fn, items));
  ExpectNoOverlap(fn, items, assignment);
  EXPECT_EQ(assignment.SliceOf(z)->bytes, 0);
  // x, then u reusing x's freed slice: one 448-byte slice; z adds nothing.
  EXPECT_EQ(assignment.arena_bytes(), 448);
}

// An item whose output is a result and computes in place over an operand (output_in_place_on:
// an all_reduce the function returns): the operand, dying there, is placed in the caller's
// output buffer from the start, so nothing is copied; the conditions that keep it in the arena.
TEST(BufferAssignmentTest, DyingOperandOfAnInPlaceResultIsPlacedInTheResult) {
  enum class Variant { kPlaced, kOperandReadLater, kOperandReadTwice, kOperandViewed,
                       kOperandIsAView, kOperandComputedInPlace, kOperandReturned };
  for (Variant variant : {Variant::kPlaced, Variant::kOperandReadLater, Variant::kOperandReadTwice,
                          Variant::kOperandViewed, Variant::kOperandIsAView,
                          Variant::kOperandComputedInPlace, Variant::kOperandReturned}) {
    SCOPED_TRACE(static_cast<int>(variant));
    Builder builder;
    std::vector<TensorType> results = {F32({256})};
    if (variant == Variant::kOperandReadLater || variant == Variant::kOperandViewed ||
        variant == Variant::kOperandReturned) {
      results.push_back(F32({256}));
    }
    FunctionBuilder f = *builder.BeginFunction("f", {F32({256})}, results);
    Value* x = f.Parameter(0);
    Value* g = variant == Variant::kOperandIsAView ? *f.Reshape(x, F32({256})) : *f.Negate(x);
    // The in-place item: exponential(g) standing for an all_reduce(g); add(g, g) reads g twice.
    Value* r = variant == Variant::kOperandReadTwice ? *f.Add(g, g) : *f.Exponential(g);
    std::vector<Value*> returned = {r};
    if (variant == Variant::kOperandReadLater) returned.push_back(*f.Negate(g));
    // A view of g read after the in-place item: g's bytes must survive it.
    if (variant == Variant::kOperandViewed) returned.push_back(*f.Negate(*f.Reshape(g, F32({256}))));
    if (variant == Variant::kOperandReturned) returned.push_back(g);
    ASSERT_OK(f.Return(returned));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
    const Function& fn = *module->functions()[0];
    std::vector<ItemBuffers> items = OneItemPerOp(fn, false);
    // Items: g's producer, the in-place item, then the later reader or view if any.
    if (variant == Variant::kOperandViewed) std::swap(items[1], items[2]);  // view before use
    for (ItemBuffers& item : items) {
      if (item.outputs[0] == r) item.output_in_place_on = {0};
      if (item.outputs[0] == g && variant == Variant::kOperandComputedInPlace) {
        item.output_in_place_on = {0};
      }
    }
    ASSERT_OK_AND_ASSIGN(BufferAssignment a, BufferAssignment::Assign(fn, items));
    EXPECT_EQ(a.SliceOf(r)->kind, Kind::kResult);
    EXPECT_EQ(a.SliceOf(r)->index, 0);
    const bool placed = variant == Variant::kPlaced;
    if (placed) {
      EXPECT_EQ(a.SliceOf(g)->kind, Kind::kResult);
      EXPECT_EQ(a.SliceOf(g)->index, 0);
      EXPECT_EQ(a.arena_bytes(), 0);
    } else if (variant == Variant::kOperandIsAView) {
      EXPECT_EQ(a.SliceOf(g)->kind, Kind::kParameter);
    } else if (variant == Variant::kOperandReturned) {
      EXPECT_EQ(a.SliceOf(g)->kind, Kind::kResult);
      EXPECT_EQ(a.SliceOf(g)->index, 1);
    } else {
      EXPECT_EQ(a.SliceOf(g)->kind, Kind::kArena);
      EXPECT_EQ(a.arena_bytes(), 1024);
    }
    EXPECT_TRUE(a.result_copies().empty());
    if (variant != Variant::kOperandViewed) ExpectNoOverlap(fn, items, a);  // a view shares g's bytes
  }
}

}  // namespace
}  // namespace accy
