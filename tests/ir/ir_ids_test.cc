// Value and op ids: dense per-function numbering that analyses index arrays with.
#include <memory>
#include <set>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

TensorType T(ElementType type, std::vector<int64_t> dims) {
  return *TensorType::Create(type, std::move(dims));
}

TEST(IrIdsTest, ValuesAndOpsAreNumberedDenselyInPreOrderIncludingRegions) {
  Builder builder;
  TensorType f32x4 = T(ElementType::kF32, {4});
  TensorType scalar = T(ElementType::kF32, {});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("f", {f32x4, f32x4}, {scalar}));
  EXPECT_EQ(f.Parameter(0)->id(), 0);
  EXPECT_EQ(f.Parameter(1)->id(), 1);
  ASSERT_OK_AND_ASSIGN(Value * sum, f.Add(f.Parameter(0), f.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * zero, f.ConstantScalar(ElementType::kF32, 0));
  ASSERT_OK_AND_ASSIGN(Value * reduced, f.Reduce(sum, zero, scalar, "sum", {0}));
  ASSERT_OK(f.Return({reduced}));
  EXPECT_EQ(sum->id(), 2);
  EXPECT_EQ(sum->defining_op()->id(), 0);
  EXPECT_EQ(zero->id(), 3);
  EXPECT_EQ(reduced->id(), 4);
  // The reduce body (2 arguments, 1 add, 1 return) is numbered after the reduce itself.
  const Operation* reduce = reduced->defining_op();
  const Block& body = *reduce->region(0)->entry_block();
  EXPECT_EQ(reduce->id(), 2);
  EXPECT_EQ(body.argument(0)->id(), 5);
  EXPECT_EQ(body.argument(1)->id(), 6);
  EXPECT_EQ(body.operations()[0]->id(), 3);
  EXPECT_EQ(body.operations()[0]->result(0)->id(), 7);
  EXPECT_EQ(body.operations()[1]->id(), 4);  // the body's return
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  const Function& function = *module->functions()[0];
  EXPECT_EQ(function.value_id_bound(), 8);
  EXPECT_EQ(function.op_id_bound(), 6);  // add, constant, reduce, body add, body return, return

  std::set<int64_t> op_ids;
  WalkOperations(*function.entry_block(), [&](const Operation* op) { op_ids.insert(op->id()); });
  EXPECT_EQ(op_ids.size(), 6u);
  EXPECT_EQ(*op_ids.begin(), 0);
  EXPECT_EQ(*op_ids.rbegin(), 5);
}

TEST(IrIdsTest, RejectedOpsConsumeNoIds) {
  Builder builder;
  TensorType f32x4 = T(ElementType::kF32, {4});
  TensorType f32x3 = T(ElementType::kF32, {3});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("f", {f32x4, f32x3}, {f32x4}));
  EXPECT_FALSE(f.Add(f.Parameter(0), f.Parameter(1)).ok());
  ASSERT_OK_AND_ASSIGN(Value * neg, f.Negate(f.Parameter(0)));
  EXPECT_EQ(neg->id(), 2);
  EXPECT_EQ(neg->defining_op()->id(), 0);
  EXPECT_EQ(f.function()->value_id_bound(), 3);
}

TEST(IrIdsTest, DetachedOperationsHaveNoIds) {
  Builder builder;
  TensorType f32x4 = T(ElementType::kF32, {4});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("f", {f32x4}, {f32x4}));
  std::unique_ptr<Operation> op =
      Operation::Create(OpKind::kNegate, {f.Parameter(0)}, std::vector<TensorType>{f32x4});
  EXPECT_EQ(op->id(), -1);
  EXPECT_EQ(op->result(0)->id(), -1);
}

}  // namespace
}  // namespace accy
