// OutlineRegion (src/ir/outline.h): parameters (block arguments, then captured values in order of
// first use), copied defs, and the malformed-region errors.
#include "src/ir/outline.h"

#include "accy/builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using testing::HasSubstr;

TensorType F32(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}

bool CopyConstantsAndBroadcasts(const Operation& op) {
  return op.kind() == OpKind::kConstant || op.kind() == OpKind::kBroadcastInDim;
}

TEST(OutlineTest, BodyCapturesOuterValuesAndCopiesConstantsAndBroadcasts) {
  Builder builder("m");
  TensorType v = F32({3});
  FunctionBuilder f = *builder.BeginFunction("main", {v, v, F32({})}, {v});
  Value* e = *f.Exponential(f.Parameter(1));            // captured
  Value* b = *f.BroadcastInDim(f.Parameter(2), v, {});  // copied; parameter 2 captured
  std::vector<Value*> loop = *f.While(
      {f.Parameter(0)},
      [&](FunctionBuilder& cond, std::span<Value* const> args) -> Status {
        ACCY_ASSIGN_OR_RETURN(Value * t, cond.ConstantScalar(ElementType::kI1, 0));
        return cond.Return({t});
      },
      [&](FunctionBuilder& body, std::span<Value* const> args) -> Status {
        ACCY_ASSIGN_OR_RETURN(Value * x, body.Add(args[0], b));
        ACCY_ASSIGN_OR_RETURN(Value * y, body.Multiply(x, e));
        ACCY_ASSIGN_OR_RETURN(Value * z, body.Add(y, e));
        return body.Return({z});
      });
  ASSERT_TRUE(f.Return(loop).ok());
  std::unique_ptr<Module> module = *builder.Finish();
  const Operation& while_op = *loop[0]->defining_op();

  Module out("outlined");
  ASSERT_OK_AND_ASSIGN(OutlinedRegion body, OutlineRegion(*while_op.region(1), out, "body", {v},
                                                          CopyConstantsAndBroadcasts));
  // (carried x, then parameter 2 (under the copied broadcast), then exp): first-use order.
  ASSERT_EQ(body.captured.size(), 2u);
  EXPECT_EQ(body.captured[0], module->FindFunction("main")->parameter(2));
  EXPECT_EQ(body.captured[1], e);
  EXPECT_EQ(body.function->parameter_types(), (std::vector<TensorType>{v, F32({}), v}));
  ASSERT_OK(Verify(out));
  // broadcast_in_dim, add, multiply, add, return.
  const auto& ops = body.function->entry_block()->operations();
  ASSERT_EQ(ops.size(), 5u);
  EXPECT_EQ(ops[0]->kind(), OpKind::kBroadcastInDim);
  EXPECT_EQ(ops[0]->operand(0), body.function->parameter(1));
  EXPECT_EQ(ops[2]->operand(1), body.function->parameter(2));

  ASSERT_OK_AND_ASSIGN(OutlinedRegion cond,
                       OutlineRegion(*while_op.region(0), out, "cond",
                                     {*TensorType::Create(ElementType::kI1, {})},
                                     CopyConstantsAndBroadcasts));
  EXPECT_TRUE(cond.captured.empty());
  ASSERT_OK(Verify(out));

  auto duplicate = OutlineRegion(*while_op.region(0), out, "cond", {}, nullptr);
  ASSERT_FALSE(duplicate.ok());
  EXPECT_THAT(duplicate.status().message(), HasSubstr("'cond' is already defined"));
}

TEST(OutlineTest, MalformedRegionsAreRejected) {
  std::unique_ptr<Operation> op = Operation::Create(OpKind::kWhile, {}, {});
  Region* empty = op->AddRegion();
  Module out("outlined");
  auto no_block = OutlineRegion(*empty, out, "f", {}, nullptr);
  ASSERT_FALSE(no_block.ok());
  EXPECT_THAT(no_block.status().message(), HasSubstr("region has 0 blocks, expected 1"));

  Region* unterminated = op->AddRegion();
  unterminated->AddBlock({});
  auto no_return = OutlineRegion(*unterminated, out, "g", {}, nullptr);
  ASSERT_FALSE(no_return.ok());
  EXPECT_THAT(no_return.status().message(), HasSubstr("region has no return"));
}

}  // namespace
}  // namespace accy
