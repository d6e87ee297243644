// Builder tests for contraction and reduction: dot_general, reduce (named reducers and body
// regions over several inputs) and cumsum. Each op has a valid form whose result type is checked
// exactly and rejected forms checked for code, message and an unchanged block.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ir/builder_test_util.h"
#include "tests/test_util.h"

namespace accy::ir_test {
namespace {

using ReductionBuilderTest = BuilderTest;

std::vector<OpKind> KindsOf(const Block& block) {
  std::vector<OpKind> kinds;
  for (const auto& op : block.operations()) kinds.push_back(op->kind());
  return kinds;
}

TEST_F(ReductionBuilderTest, DotGeneralComputesMatmulShapes) {
  FunctionBuilder f = Begin({T(kF32, {3, 4}), T(kF32, {4, 5}), T(kF32, {2, 3, 4}),
                             T(kF32, {2, 4, 5}), T(kBF16, {3, 4}), T(kBF16, {4, 5}),
                             T(kF32, {3}), T(kF32, {5})});
  ASSERT_OK_AND_ASSIGN(Value * matmul, f.DotGeneral(f.Parameter(0), f.Parameter(1),
                                                    T(kF32, {3, 5}), {1}, {0}, {}, {}));
  EXPECT_EQ(matmul->type(), T(kF32, {3, 5}));
  const Operation* op = matmul->defining_op();
  EXPECT_EQ(op->kind(), OpKind::kDotGeneral);
  EXPECT_EQ(op->GetInts("lhs_contracting_dimensions"), std::vector<int64_t>{1});
  EXPECT_EQ(op->GetInts("rhs_contracting_dimensions"), std::vector<int64_t>{0});
  EXPECT_TRUE(op->GetInts("lhs_batching_dimensions").empty());
  // Batch dims come first in the result.
  ASSERT_OK_AND_ASSIGN(Value * batched, f.DotGeneral(f.Parameter(2), f.Parameter(3),
                                                     T(kF32, {2, 3, 5}), {2}, {1}, {0}, {0}));
  EXPECT_EQ(batched->type(), T(kF32, {2, 3, 5}));
  // bf16 x bf16 may accumulate into f32.
  ASSERT_OK_AND_ASSIGN(Value * widened, f.DotGeneral(f.Parameter(4), f.Parameter(5),
                                                     T(kF32, {3, 5}), {1}, {0}, {}, {}));
  EXPECT_EQ(widened->type(), T(kF32, {3, 5}));
  // No contraction: an outer product.
  ASSERT_OK_AND_ASSIGN(Value * outer, f.DotGeneral(f.Parameter(6), f.Parameter(7),
                                                   T(kF32, {3, 5}), {}, {}, {}, {}));
  EXPECT_EQ(outer->type(), T(kF32, {3, 5}));
}

TEST_F(ReductionBuilderTest, DotGeneralRejectsMismatchedContractingSizes) {
  FunctionBuilder f = Begin({T(kF32, {3, 4}), T(kF32, {6, 5})});
  EXPECT_REJECTED(f, f.DotGeneral(f.Parameter(0), f.Parameter(1), T(kF32, {3, 5}), {1}, {0}, {},
                                  {}),
                  "dot_general: lhs contracting dim 1 has size 4, rhs contracting dim 0 has "
                  "size 6");
}

TEST_F(ReductionBuilderTest, DotGeneralRejectsAWrongResultType) {
  FunctionBuilder f = Begin({T(kF32, {3, 4}), T(kF32, {4, 5})});
  Value* lhs = f.Parameter(0);
  Value* rhs = f.Parameter(1);
  EXPECT_REJECTED(f, f.DotGeneral(lhs, rhs, T(kF32, {5, 3}), {1}, {0}, {}, {}),
                  "dot_general: result 0 has type tensor<5x3xf32>, expected tensor<3x5xf32>");
  EXPECT_REJECTED(f, f.DotGeneral(lhs, rhs, T(kI32, {3, 5}), {1}, {0}, {}, {}),
                  "dot_general: result 0 has type tensor<3x5xi32>, expected tensor<3x5xf32>");
  EXPECT_REJECTED(f, f.DotGeneral(lhs, rhs, T(kI1, {3, 5}), {1}, {0}, {}, {}),
                  "dot_general: result 0 has type tensor<3x5xi1>");
}

TEST_F(ReductionBuilderTest, DotGeneralRejectsBadOperandsAndDimensionLists) {
  FunctionBuilder f = Begin({T(kF32, {3, 4}), T(kF16, {4, 5}), T(kF32, {4, 5}), T(kI1, {3, 4}),
                             T(kI1, {4, 5}), T(kF32, {2, 3, 4}), T(kF32, {3, 4, 5})});
  Value* lhs = f.Parameter(0);
  Value* rhs = f.Parameter(2);
  const TensorType out = T(kF32, {3, 5});
  EXPECT_REJECTED(f, f.DotGeneral(lhs, f.Parameter(1), out, {1}, {0}, {}, {}),
                  "dot_general: lhs has type tensor<3x4xf32> but rhs has type tensor<4x5xf16> "
                  "(element types must match)");
  EXPECT_REJECTED(f, f.DotGeneral(f.Parameter(3), f.Parameter(4), T(kI1, {3, 5}), {1}, {0}, {},
                                  {}),
                  "dot_general: i1 operands are not supported");
  EXPECT_REJECTED(f, f.DotGeneral(lhs, rhs, out, {1}, {}, {}, {}),
                  "dot_general: lhs_contracting_dimensions [1] and rhs_contracting_dimensions [] "
                  "must have the same size");
  EXPECT_REJECTED(f, f.DotGeneral(lhs, rhs, out, {1}, {0}, {0}, {}),
                  "dot_general: lhs_batching_dimensions [0] and rhs_batching_dimensions [] must "
                  "have the same size");
  EXPECT_REJECTED(f, f.DotGeneral(lhs, rhs, out, {2}, {0}, {}, {}),
                  "dot_general: lhs_contracting_dimensions [2]: dimension 2 is out of range "
                  "[0, 2)");
  EXPECT_REJECTED(f, f.DotGeneral(lhs, rhs, out, {0}, {0}, {0}, {1}),
                  "dot_general: dimension 0 appears in both lhs_batching_dimensions and "
                  "lhs_contracting_dimensions");
  EXPECT_REJECTED(f, f.DotGeneral(f.Parameter(5), f.Parameter(6), T(kF32, {2, 3, 5}), {2}, {1},
                                  {0}, {0}),
                  "dot_general: lhs batching dim 0 has size 2, rhs batching dim 0 has size 3");
}

TEST_F(ReductionBuilderTest, ReduceWithNamedReducerDropsTheReducedDims) {
  FunctionBuilder f = Begin({T(kF32, {4, 5}), T(kF32), T(kI1, {4, 5}), T(kI1)});
  ASSERT_OK_AND_ASSIGN(Value * rows,
                       f.Reduce(f.Parameter(0), f.Parameter(1), T(kF32, {4}), "sum", {1}));
  EXPECT_EQ(rows->type(), T(kF32, {4}));
  const Operation* op = rows->defining_op();
  EXPECT_EQ(op->kind(), OpKind::kReduce);
  EXPECT_EQ(op->GetInts("dimensions"), std::vector<int64_t>{1});
  ASSERT_EQ(op->num_regions(), 1);
  const Block& body = *op->region(0)->entry_block();
  ASSERT_EQ(body.num_arguments(), 2);
  EXPECT_EQ(body.argument(0)->type(), T(kF32));
  EXPECT_EQ(body.argument(1)->type(), T(kF32));
  EXPECT_EQ(KindsOf(body), (std::vector<OpKind>{OpKind::kAdd, OpKind::kReturn}));

  const std::vector<std::pair<std::string, OpKind>> reducers = {
      {"max", OpKind::kMaximum}, {"min", OpKind::kMinimum}, {"prod", OpKind::kMultiply}};
  for (const auto& [name, kind] : reducers) {
    ASSERT_OK_AND_ASSIGN(Value * all, f.Reduce(f.Parameter(0), f.Parameter(1), T(kF32), name,
                                               {0, 1}));
    EXPECT_EQ(all->type(), T(kF32)) << name;
    EXPECT_EQ(KindsOf(*all->defining_op()->region(0)->entry_block()),
              (std::vector<OpKind>{kind, OpKind::kReturn}))
        << name;
  }
  for (const char* name : {"and", "or"}) {
    ASSERT_OK_AND_ASSIGN(Value * any, f.Reduce(f.Parameter(2), f.Parameter(3), T(kI1, {5}), name,
                                               {0}));
    EXPECT_EQ(any->type(), T(kI1, {5})) << name;
  }
}

TEST_F(ReductionBuilderTest, ReduceWithNamedReducerRejectsBadReducerInitAndResult) {
  FunctionBuilder f = Begin({T(kF32, {4, 5}), T(kF32), T(kF32, {1}), T(kI32)});
  Value* x = f.Parameter(0);
  Value* zero = f.Parameter(1);
  EXPECT_REJECTED(f, f.Reduce(x, zero, T(kF32, {4}), "mean", {1}),
                  "reduce: unknown reducer 'mean' (expected sum, max, min, prod, and or or)");
  EXPECT_REJECTED(f, f.Reduce(x, zero, T(kF32, {5}), "sum", {1}),
                  "reduce: result 0 has type tensor<5xf32>, expected tensor<4xf32>");
  EXPECT_REJECTED(f, f.Reduce(x, f.Parameter(2), T(kF32, {4}), "sum", {1}),
                  "reduce: init value 0 has type tensor<1xf32>, expected tensor<f32>");
  EXPECT_REJECTED(f, f.Reduce(x, f.Parameter(3), T(kF32, {4}), "sum", {1}),
                  "reduce: init value 0 has type tensor<i32>, expected tensor<f32>");
  EXPECT_REJECTED(f, f.Reduce(x, zero, T(kF32, {4}), "sum", {2}),
                  "reduce: dimensions [2]: dimension 2 is out of range [0, 2)");
  EXPECT_REJECTED(f, f.Reduce(x, zero, T(kF32), "sum", {1, 1}),
                  "reduce: dimensions [1, 1]: dimension 1 appears twice");
  // The named body is built like any region: its op's error is reported with the region.
  EXPECT_REJECTED(f, f.Reduce(x, zero, T(kF32, {4}), "and", {1}),
                  "reduce region 0: and: operand 0 has type tensor<f32>, expected an i1 or "
                  "integer element type");
  EXPECT_REJECTED(f, f.Reduce(x, f.Parameter(9), T(kF32, {4}), "sum", {1}),
                  "reduce: operand 1 is null");
}

// An argmax body: (max value, its index) over (acc value, acc index, value, index).
Status ArgmaxBody(FunctionBuilder& b, std::span<Value* const> args) {
  ACCY_ASSIGN_OR_RETURN(Value * greater, b.Compare(args[2], args[0], "GT"));
  ACCY_ASSIGN_OR_RETURN(Value * value, b.Select(greater, args[2], args[0]));
  ACCY_ASSIGN_OR_RETURN(Value * index, b.Select(greater, args[3], args[1]));
  return b.Return({value, index});
}

TEST_F(ReductionBuilderTest, ReduceWithBodyReducesSeveralInputs) {
  FunctionBuilder f = Begin({T(kF32, {4, 5}), T(kI32, {4, 5}), T(kF32), T(kI32)});
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> results,
                       f.Reduce({f.Parameter(0), f.Parameter(1)},
                                {f.Parameter(2), f.Parameter(3)}, {1}, ArgmaxBody));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]->type(), T(kF32, {4}));
  EXPECT_EQ(results[1]->type(), T(kI32, {4}));
  const Operation* op = results[0]->defining_op();
  EXPECT_EQ(op, results[1]->defining_op());
  EXPECT_EQ(op->num_operands(), 4);
  const Block& body = *op->region(0)->entry_block();
  ASSERT_EQ(body.num_arguments(), 4);
  EXPECT_EQ(body.argument(0)->type(), T(kF32));
  EXPECT_EQ(body.argument(1)->type(), T(kI32));
  EXPECT_EQ(body.argument(2)->type(), T(kF32));
  EXPECT_EQ(body.argument(3)->type(), T(kI32));
  EXPECT_EQ(KindsOf(body), (std::vector<OpKind>{OpKind::kCompare, OpKind::kSelect,
                                                OpKind::kSelect, OpKind::kReturn}));
}

TEST_F(ReductionBuilderTest, ReduceRejectsBodyReturningTheWrongType) {
  FunctionBuilder f = Begin({T(kF32, {4, 5}), T(kI32, {4, 5}), T(kF32), T(kI32)});
  std::vector<Value*> inputs = {f.Parameter(0), f.Parameter(1)};
  std::vector<Value*> inits = {f.Parameter(2), f.Parameter(3)};
  auto swapped = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    return b.Return({args[1], args[0]});
  };
  EXPECT_REJECTED(f, f.Reduce(inputs, inits, {1}, swapped),
                  "reduce: body returns tensor<i32> as value 0, expected tensor<f32>");
  auto one_value = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    return b.Return({args[0]});
  };
  EXPECT_REJECTED(f, f.Reduce(inputs, inits, {1}, one_value),
                  "reduce: body returns 1 values, expected 2");
  auto bool_value = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * less, b.Compare(args[0], args[2], "LT"));
    return b.Return({less, args[1]});
  };
  EXPECT_REJECTED(f, f.Reduce(inputs, inits, {1}, bool_value),
                  "reduce: body returns tensor<i1> as value 0, expected tensor<f32>");
}

TEST_F(ReductionBuilderTest, ReduceRejectsBodyWithoutReturnOrFailing) {
  FunctionBuilder f = Begin({T(kF32, {4, 5}), T(kF32)});
  auto no_return = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    return b.Add(args[0], args[1]).status();
  };
  EXPECT_REJECTED(f, f.Reduce({f.Parameter(0)}, {f.Parameter(1)}, {1}, no_return),
                  "reduce: region 0 does not end with a return");
  auto failing = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * bad, b.Popcnt(args[0]));
    return b.Return({bad});
  };
  EXPECT_REJECTED(f, f.Reduce({f.Parameter(0)}, {f.Parameter(1)}, {1}, failing),
                  "reduce region 0: popcnt: operand 0 has type tensor<f32>");
  EXPECT_REJECTED(f, f.Reduce({f.Parameter(0)}, {f.Parameter(1)}, {1}, nullptr),
                  "reduce: region 0 has no body function");
}

TEST_F(ReductionBuilderTest, ReduceRejectsInputsOfDifferentShapesOrUnpairedInits) {
  FunctionBuilder f = Begin({T(kF32, {4, 5}), T(kI32, {5, 4}), T(kF32), T(kI32)});
  EXPECT_REJECTED(f, f.Reduce({f.Parameter(0), f.Parameter(1)}, {f.Parameter(2), f.Parameter(3)},
                              {1}, ArgmaxBody),
                  "reduce: input 1 has type tensor<5x4xi32>, expected the shape of input 0 "
                  "(tensor<4x5xf32>)");
  EXPECT_REJECTED(f, f.Reduce({f.Parameter(0), f.Parameter(0)}, {f.Parameter(2)}, {1}, ArgmaxBody),
                  "reduce: expected N inputs and N init values (an even count >= 2), got 3 "
                  "operands");
}

TEST_F(ReductionBuilderTest, RejectedReduceReleasesUsesMadeInsideItsBody) {
  FunctionBuilder f = Begin({T(kF32, {4, 5}), T(kF32), T(kF32)});
  Value* scale = f.Parameter(2);
  // The body uses an outer value, then returns the wrong type: the op is dropped, and `scale`
  // must not keep a use from the dropped body.
  auto body = [scale](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * scaled, b.Multiply(args[1], scale));
    ACCY_ASSIGN_OR_RETURN(Value * less, b.Compare(scaled, args[0], "LT"));
    return b.Return({less});
  };
  EXPECT_REJECTED(f, f.Reduce({f.Parameter(0)}, {f.Parameter(1)}, {1}, body),
                  "reduce: body returns tensor<i1> as value 0, expected tensor<f32>");
  EXPECT_TRUE(scale->uses().empty());
  EXPECT_TRUE(f.block()->operations().empty());
}

TEST_F(ReductionBuilderTest, CumsumKeepsTheType) {
  FunctionBuilder f = Begin({T(kF32, {4, 5}), T(kU8, {7})});
  ASSERT_OK_AND_ASSIGN(Value * y, f.Cumsum(f.Parameter(0), 1));
  EXPECT_EQ(y->type(), T(kF32, {4, 5}));
  EXPECT_EQ(y->defining_op()->kind(), OpKind::kCumsum);
  EXPECT_EQ(y->defining_op()->GetInt("dimension"), 1);
  ASSERT_OK_AND_ASSIGN(Value * z, f.Cumsum(f.Parameter(1), 0));
  EXPECT_EQ(z->type(), T(kU8, {7}));
}

TEST_F(ReductionBuilderTest, CumsumRejectsOutOfRangeDimensionAndI1) {
  FunctionBuilder f = Begin({T(kF32, {4, 5}), T(kI1, {4})});
  EXPECT_REJECTED(f, f.Cumsum(f.Parameter(0), 2), "cumsum: dimension 2 is out of range [0, 2)");
  EXPECT_REJECTED(f, f.Cumsum(f.Parameter(0), -1), "cumsum: dimension -1 is out of range [0, 2)");
  EXPECT_REJECTED(f, f.Cumsum(f.Parameter(1), 0),
                  "cumsum: operand has type tensor<4xi1>, expected an integer or floating-point "
                  "element type");
}

}  // namespace
}  // namespace accy::ir_test
