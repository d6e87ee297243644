// Builder tests for structure and the remaining ops: operand visibility (null operands, other
// functions, closed regions), return and Finish rules, function names, Builder::Finish handing
// over a verified module, a rejected op leaving the function unchanged, and the ops constant,
// while, kernel_call and return.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "accy/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ir/builder_test_util.h"
#include "tests/test_util.h"

namespace accy::ir_test {
namespace {

using ::testing::HasSubstr;

// ---- Operand visibility ----

TEST_F(BuilderTest, OpRejectsNullOperandFromOutOfRangeParameter) {
  FunctionBuilder f = Begin({T(kF32, {4})});
  EXPECT_EQ(f.Parameter(99), nullptr);
  EXPECT_EQ(f.Parameter(-1), nullptr);
  EXPECT_REJECTED(f, f.Add(f.Parameter(0), f.Parameter(99)),
                  "add: operand 1 is null (an earlier call failed, or a parameter index was out "
                  "of range)");
  EXPECT_REJECTED(f, f.Concatenate({f.Parameter(0), f.Parameter(-1)}, 0),
                  "concatenate: operand 1 is null");
  EXPECT_REJECTED(f, f.Return({f.Parameter(99)}), "return: operand 0 is null");
}

TEST_F(BuilderTest, OpRejectsOperandFromAnotherFunction) {
  FunctionBuilder f = Begin({T(kF32, {4})}, {}, "f");
  FunctionBuilder g = Begin({T(kF32, {4})}, {}, "g");
  ASSERT_OK_AND_ASSIGN(Value * g_result, g.Negate(g.Parameter(0)));
  const size_t g_uses = g.Parameter(0)->uses().size();
  EXPECT_REJECTED(f, f.Add(f.Parameter(0), g.Parameter(0)),
                  "add: operand 1 is not visible here: it belongs to another function or to a "
                  "region that is closed");
  EXPECT_REJECTED(f, f.Negate(g_result), "negate: operand 0 is not visible here");
  EXPECT_REJECTED(f, f.Return({g_result}), "return: operand 0 is not visible here");
  EXPECT_EQ(g.Parameter(0)->uses().size(), g_uses);
  EXPECT_TRUE(g_result->uses().empty());
}

TEST_F(BuilderTest, RegionBodySeesValuesOfEnclosingBlocks) {
  FunctionBuilder f = Begin({T(kF32, {4}), T(kF32), T(kF32)});
  Value* scale = f.Parameter(2);
  auto body = [scale](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    EXPECT_EQ(b.function()->name(), "f");
    EXPECT_EQ(b.Parameter(0), args[0]);  // Parameter() of a region builder is its argument
    ACCY_ASSIGN_OR_RETURN(Value * scaled, b.Multiply(args[1], scale));
    ACCY_ASSIGN_OR_RETURN(Value * sum, b.Add(args[0], scaled));
    return b.Return({sum});
  };
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> sum,
                       f.Reduce({f.Parameter(0)}, {f.Parameter(1)}, {0}, body));
  EXPECT_EQ(sum[0]->type(), T(kF32));
  ASSERT_EQ(scale->uses().size(), 1u);
  EXPECT_EQ(scale->uses()[0].user->kind(), OpKind::kMultiply);
  EXPECT_EQ(scale->uses()[0].user->parent_function(), f.function());
}

TEST_F(BuilderTest, OpRejectsOperandFromAClosedRegion) {
  FunctionBuilder f = Begin({T(kF32, {4}), T(kF32)});
  Value* inner_argument = nullptr;
  Value* inner_result = nullptr;
  auto body = [&](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    inner_argument = args[0];
    ACCY_ASSIGN_OR_RETURN(inner_result, b.Add(args[0], args[1]));
    return b.Return({inner_result});
  };
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> sum,
                       f.Reduce({f.Parameter(0)}, {f.Parameter(1)}, {0}, body));
  ASSERT_NE(inner_result, nullptr);
  EXPECT_REJECTED(f, f.Add(sum[0], inner_result),
                  "add: operand 1 is not visible here: it belongs to another function or to a "
                  "region that is closed");
  EXPECT_REJECTED(f, f.Negate(inner_argument), "negate: operand 0 is not visible here");
  EXPECT_REJECTED(f, f.Return({inner_result}), "return: operand 0 is not visible here");
}

TEST_F(BuilderTest, OpRejectsValueOfASiblingRegion) {
  // A value of the while cond is not visible in the while body.
  FunctionBuilder f = Begin({T(kI32)});
  Value* cond_value = nullptr;
  auto cond = [&](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    ACCY_ASSIGN_OR_RETURN(cond_value, b.Negate(args[0]));
    ACCY_ASSIGN_OR_RETURN(Value * less, b.Compare(cond_value, args[0], "LT"));
    return b.Return({less});
  };
  auto body = [&](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * next, b.Add(args[0], cond_value));
    return b.Return({next});
  };
  EXPECT_REJECTED(f, f.While({f.Parameter(0)}, cond, body),
                  "while region 1: add: operand 1 is not visible here");
}

// cond: counter < 10, through the region's own builder.
Status CounterBelowTen(FunctionBuilder& b, std::span<Value* const> args);

TEST_F(BuilderTest, RegionBodyCannotAppendThroughAnEnclosingBuilder) {
  FunctionBuilder f = Begin({T(kI32)}, {T(kI32)});
  FunctionBuilder copy_of_f = f;
  Status outer_return, outer_negate, copy_negate;
  auto cond = [&](FunctionBuilder& c, std::span<Value* const> args) -> Status {
    // Each of these would put an op into f's block ahead of the while being built.
    outer_return = f.Return({f.Parameter(0)});
    outer_negate = f.Negate(f.Parameter(0)).status();
    copy_negate = copy_of_f.Negate(f.Parameter(0)).status();
    return CounterBelowTen(c, args);
  };
  auto body = [](FunctionBuilder& b, std::span<Value* const> args) { return b.Return({args[0]}); };
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> loop, f.While({f.Parameter(0)}, cond, body));
  const std::string fragment =
      "a region of an op of this block is being built; append to the region through the "
      "FunctionBuilder passed to its body function";
  using Fragments = std::vector<std::string>;
  EXPECT_THAT(outer_return, IsInvalidArgumentWith(Fragments{"return: " + fragment}));
  EXPECT_THAT(outer_negate, IsInvalidArgumentWith(Fragments{"negate: " + fragment}));
  EXPECT_THAT(copy_negate, IsInvalidArgumentWith(Fragments{"negate: " + fragment}));
  ASSERT_EQ(f.block()->operations().size(), 1u);  // only the while
  // A body that passes the enclosing builder's error on fails the op, leaving f unchanged.
  auto returning_cond = [&](FunctionBuilder& c, std::span<Value* const> args) -> Status {
    return f.Return({f.Parameter(0)});
  };
  EXPECT_REJECTED(f, f.While({f.Parameter(0)}, returning_cond, body),
                  "while region 0: return: " + fragment);
  // Once the while is built, f appends again; the region's builder no longer does.
  std::optional<FunctionBuilder> escaped;
  auto keep_builder = [&](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    escaped = b;
    return b.Return({args[0]});
  };
  ASSERT_OK(f.While({loop[0]}, CounterBelowTen, keep_builder).status());
  FunctionBuilder* region_builder = &*escaped;
  EXPECT_EQ(region_builder->Parameter(0), nullptr);
  EXPECT_THAT(region_builder->Negate(loop[0]),
              IsInvalidArgumentWith(Fragments{"negate: this region is no longer being built"}));
  ASSERT_OK(f.Return({loop[0]}));
  EXPECT_OK(builder_.Finish().status());
}

TEST_F(BuilderTest, OpRejectedWhenARegionBodyEndsTheEnclosingBlock) {
  // Around the builder, Block::Append can still end the enclosing block while a region is built.
  FunctionBuilder f = Begin({T(kI32)}, {T(kI32)});
  auto cond = [&](FunctionBuilder& c, std::span<Value* const> args) -> Status {
    f.block()->Append(Operation::Create(OpKind::kReturn, {f.Parameter(0)}, {}));
    return CounterBelowTen(c, args);
  };
  auto body = [](FunctionBuilder& b, std::span<Value* const> args) { return b.Return({args[0]}); };
  EXPECT_THAT(f.While({f.Parameter(0)}, cond, body),
              IsInvalidArgumentWith(std::vector<std::string>{
                  "while: a region body ended the enclosing block with return"}));
  ASSERT_EQ(f.block()->operations().size(), 1u);
  EXPECT_EQ(f.block()->terminator()->kind(), OpKind::kReturn);  // no while after the return
}

TEST_F(BuilderTest, CreateOpRejectsAnUnknownOpKind) {
  const OpKind unknown = static_cast<OpKind>(999);
  EXPECT_EQ(OpName(unknown), "<invalid op kind>");
  FunctionBuilder f = Begin({T(kF32, {4})});
  EXPECT_REJECTED(f, f.CreateOp(unknown, {f.Parameter(0)}, {T(kF32, {4})}),
                  "unknown op kind 999");
}

TEST_F(BuilderTest, CreateOpRejectsADuplicateAttribute) {
  FunctionBuilder f = Begin({T(kF32, {2, 3})});
  EXPECT_REJECTED(f,
                  f.CreateOp(OpKind::kTranspose, {f.Parameter(0)}, {T(kF32, {3, 2})},
                             {{"permutation", std::vector<int64_t>{1, 0}},
                              {"permutation", std::vector<int64_t>{0, 1}}}),
                  "transpose: attribute permutation is given more than once");
}

// ---- Return, Finish and function names ----

TEST_F(BuilderTest, ReturnEndsTheFunctionWithItsResults) {
  FunctionBuilder f = Begin({T(kF32, {4}), T(kI32)}, {T(kI32), T(kF32, {4})});
  ASSERT_OK(f.Return({f.Parameter(1), f.Parameter(0)}));
  const Operation* ret = f.block()->terminator();
  ASSERT_NE(ret, nullptr);
  EXPECT_EQ(ret->kind(), OpKind::kReturn);
  EXPECT_EQ(ret->num_results(), 0);
  EXPECT_EQ(ret->operands(), (std::vector<Value*>{f.Parameter(1), f.Parameter(0)}));
  EXPECT_OK(f.Finish());
}

TEST_F(BuilderTest, ReturnRejectsWrongCountOrTypes) {
  FunctionBuilder f = Begin({T(kF32, {4}), T(kI32, {4})}, {T(kF32, {4})});
  EXPECT_REJECTED(f, f.Return({f.Parameter(0), f.Parameter(0)}),
                  "return: function 'f' returns 1 values, got 2");
  EXPECT_REJECTED(f, f.Return({}), "return: function 'f' returns 1 values, got 0");
  EXPECT_REJECTED(f, f.Return({f.Parameter(1)}),
                  "return: value 0 has type tensor<4xi32>, but function 'f' declares "
                  "tensor<4xf32>");
  EXPECT_EQ(f.block()->terminator(), nullptr);
  EXPECT_OK(f.Return({f.Parameter(0)}));
}

TEST_F(BuilderTest, OpAfterReturnIsRejected) {
  FunctionBuilder f = Begin({T(kF32, {4})}, {T(kF32, {4})});
  ASSERT_OK(f.Return({f.Parameter(0)}));
  EXPECT_REJECTED(f, f.Add(f.Parameter(0), f.Parameter(0)),
                  "add: the block already ended with return; no op can follow it");
  EXPECT_REJECTED(f, f.Iota(T(kI32, {4}), 0), "iota: the block already ended with return");
  EXPECT_REJECTED(f, f.Return({f.Parameter(0)}), "return: the block already ended with return");
}

TEST_F(BuilderTest, FinishWithoutReturnFails) {
  FunctionBuilder f = Begin({T(kF32, {4})}, {T(kF32, {4})});
  ASSERT_OK(f.Negate(f.Parameter(0)).status());
  Status status = f.Finish();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("function 'f' has no return"));
  // The module cannot be finished either.
  StatusOr<std::unique_ptr<Module>> module = builder_.Finish();
  EXPECT_THAT(module, IsInvalidArgumentWith(std::vector<std::string>{
                          "function 'f'", "does not end with a return"}));
}

TEST_F(BuilderTest, BeginFunctionRejectsDuplicateOrEmptyName) {
  FunctionBuilder f = Begin({}, {}, "f");
  EXPECT_THAT(builder_.BeginFunction("f", {T(kF32)}, {}),
              IsInvalidArgumentWith(std::vector<std::string>{"function 'f' is already defined"}));
  EXPECT_THAT(builder_.BeginFunction("", {}, {}),
              IsInvalidArgumentWith(std::vector<std::string>{"function name must not be empty"}));
}

TEST_F(BuilderTest, BuilderFinishVerifiesAndHandsOverTheModule) {
  FunctionBuilder f = Begin({T(kF32, {4})}, {T(kF32, {4})}, "main");
  ASSERT_OK_AND_ASSIGN(Value * y, f.Exponential(f.Parameter(0)));
  ASSERT_OK(f.Return({y}));
  FunctionBuilder g = Begin({}, {}, "helper");
  ASSERT_OK(g.Return({}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder_.Finish());
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->name(), "test_module");
  ASSERT_EQ(module->functions().size(), 2u);
  Function* main = module->FindFunction("main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->result_types(), std::vector<TensorType>{T(kF32, {4})});
  EXPECT_EQ(main->entry_block()->operations().size(), 2u);
  EXPECT_OK(Verify(*module));

  StatusOr<std::unique_ptr<Module>> again = builder_.Finish();
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.status().message(), HasSubstr("Builder::Finish: the builder already finished"));
  StatusOr<FunctionBuilder> late = builder_.BeginFunction("late", {}, {});
  EXPECT_EQ(late.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(late.status().message(), HasSubstr("the builder already finished"));
}

TEST_F(BuilderTest, BuilderFinishRejectsAModuleThatFailsVerification) {
  FunctionBuilder f = Begin({T(kF32, {4})}, {T(kF32, {4})});
  ASSERT_OK(f.Return({f.Parameter(0)}));
  // Corrupt the finished function behind the builder's back: an op after the return.
  f.block()->Append(Operation::Create(OpKind::kNegate, {f.Parameter(0)},
                                      std::vector<TensorType>{T(kF32, {4})}));
  EXPECT_THAT(builder_.Finish(), IsInvalidArgumentWith(std::vector<std::string>{
                                     "function 'f': return: return must be the last op of "
                                     "function 'f'"}));
  // The failed Finish kept the module: after repair it can be finished.
  f.block()->EraseLast();
  EXPECT_OK(builder_.Finish().status());
}

// ---- A rejected op leaves the function unchanged ----

TEST_F(BuilderTest, RejectedOpLeavesBlockAndUseListsUnchanged) {
  FunctionBuilder f = Begin({T(kF32, {2, 3}), T(kF32, {3, 2}), T(kF32)}, {T(kF32, {2, 3})});
  Value* x = f.Parameter(0);
  Value* other = f.Parameter(1);
  Value* zero = f.Parameter(2);
  ASSERT_OK_AND_ASSIGN(Value * y, f.Add(x, x));
  const size_t ops_before = f.block()->operations().size();
  const std::vector<Use> x_uses = x->uses();
  const std::vector<Use> y_uses = y->uses();

  EXPECT_FALSE(f.Add(y, other).ok());                       // rejected by type inference
  EXPECT_FALSE(f.Reshape(y, T(kF32, {7})).ok());            // rejected by the verifier
  EXPECT_FALSE(f.Select(y, y, x).ok());                     // rejected with three operands
  EXPECT_FALSE(f.Reduce({x}, {zero}, {0}, nullptr).ok());   // rejected while building regions
  EXPECT_FALSE(f.Reduce({x, y}, {zero, zero}, {0}, nullptr).ok());  // zero used twice

  EXPECT_EQ(f.block()->operations().size(), ops_before);
  ASSERT_EQ(x->uses().size(), x_uses.size());
  for (size_t i = 0; i < x_uses.size(); ++i) {
    EXPECT_EQ(x->uses()[i].user, x_uses[i].user);
    EXPECT_EQ(x->uses()[i].operand_index, x_uses[i].operand_index);
  }
  EXPECT_EQ(y->uses().size(), y_uses.size());
  EXPECT_TRUE(other->uses().empty());
  EXPECT_TRUE(zero->uses().empty());

  // The function goes on as if nothing happened.
  ASSERT_OK_AND_ASSIGN(Value * z, f.Multiply(y, x));
  ASSERT_OK(f.Return({z}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder_.Finish());
  EXPECT_EQ(module->functions()[0]->entry_block()->operations().size(), 3u);
}

// ---- constant ----

TEST_F(BuilderTest, ConstantHasTheGivenTypeAndBytes) {
  FunctionBuilder f = Begin({});
  const std::vector<uint8_t> bytes = {0, 0, 128, 63, 0, 0, 0, 64};  // 1.0f, 2.0f
  ASSERT_OK_AND_ASSIGN(Value * c, f.Constant(T(kF32, {2}), bytes));
  EXPECT_EQ(c->type(), T(kF32, {2}));
  const Operation* op = c->defining_op();
  EXPECT_EQ(op->kind(), OpKind::kConstant);
  EXPECT_EQ(op->num_operands(), 0);
  ASSERT_NE(op->GetDense("value"), nullptr);
  EXPECT_EQ(*op->GetDense("value"), (DenseElements{T(kF32, {2}), bytes}));

  ASSERT_OK_AND_ASSIGN(Value * seven, f.ConstantScalar(kI32, 7));
  EXPECT_EQ(seven->type(), T(kI32));
  EXPECT_EQ(seven->defining_op()->GetDense("value")->bytes, (std::vector<uint8_t>{7, 0, 0, 0}));

  ASSERT_OK_AND_ASSIGN(Tensor flags, Tensor::FromVector<uint8_t>(T(kI1, {3}), {1, 0, 1}));
  ASSERT_OK_AND_ASSIGN(Value * from_tensor, f.Constant(flags));
  EXPECT_EQ(from_tensor->type(), T(kI1, {3}));
  EXPECT_EQ(from_tensor->defining_op()->GetDense("value")->bytes,
            (std::vector<uint8_t>{1, 0, 1}));

  ASSERT_OK_AND_ASSIGN(Value * empty, f.Constant(T(kF64, {0, 3}), {}));
  EXPECT_EQ(empty->type(), T(kF64, {0, 3}));
}

TEST_F(BuilderTest, ConstantRejectsBytesOfTheWrongSizeAndEmptyTensor) {
  FunctionBuilder f = Begin({});
  const std::vector<uint8_t> three = {1, 2, 3};
  EXPECT_REJECTED(f, f.Constant(T(kF32, {2}), three),
                  "constant: value holds 3 bytes, expected 8 for tensor<2xf32>");
  EXPECT_REJECTED(f, f.Constant(Tensor()), "constant: the tensor has no data");
}

TEST_F(BuilderTest, ConstantRejectsI1BytesOtherThanZeroOrOne) {
  FunctionBuilder f = Begin({});
  const std::vector<uint8_t> bytes = {1, 0, 7};
  EXPECT_REJECTED(f, f.Constant(T(kI1, {3}), bytes),
                  "constant: i1 element 2 holds byte 7, expected 0 or 1");
}

// ---- while ----

// cond: counter < 10.
Status CounterBelowTen(FunctionBuilder& b, std::span<Value* const> args) {
  ACCY_ASSIGN_OR_RETURN(Value * ten, b.ConstantScalar(ElementType::kI32, 10));
  ACCY_ASSIGN_OR_RETURN(Value * below, b.Compare(args[0], ten, "LT"));
  return b.Return({below});
}

// body: counter + 1, doubled values.
Status CountAndDouble(FunctionBuilder& b, std::span<Value* const> args) {
  ACCY_ASSIGN_OR_RETURN(Value * one, b.ConstantScalar(ElementType::kI32, 1));
  ACCY_ASSIGN_OR_RETURN(Value * next, b.Add(args[0], one));
  ACCY_ASSIGN_OR_RETURN(Value * doubled, b.Add(args[1], args[1]));
  return b.Return({next, doubled});
}

TEST_F(BuilderTest, WhileCarriesValuesOfTheInitialTypes) {
  FunctionBuilder f = Begin({T(kI32), T(kF32, {4})});
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> results,
                       f.While({f.Parameter(0), f.Parameter(1)}, CounterBelowTen, CountAndDouble));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]->type(), T(kI32));
  EXPECT_EQ(results[1]->type(), T(kF32, {4}));
  const Operation* op = results[0]->defining_op();
  EXPECT_EQ(op->kind(), OpKind::kWhile);
  EXPECT_EQ(op->num_operands(), 2);
  ASSERT_EQ(op->num_regions(), 2);
  for (int64_t r = 0; r < 2; ++r) {
    const Block& block = *op->region(r)->entry_block();
    ASSERT_EQ(block.num_arguments(), 2);
    EXPECT_EQ(block.argument(0)->type(), T(kI32));
    EXPECT_EQ(block.argument(1)->type(), T(kF32, {4}));
  }
  EXPECT_EQ(op->region(0)->entry_block()->terminator()->operand(0)->type(), T(kI1));
}

TEST_F(BuilderTest, WhileRejectsCondReturningNonI1) {
  FunctionBuilder f = Begin({T(kI32), T(kF32, {4})});
  std::vector<Value*> init = {f.Parameter(0), f.Parameter(1)};
  auto returns_f32 = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    return b.Return({args[1]});
  };
  EXPECT_REJECTED(f, f.While(init, returns_f32, CountAndDouble),
                  "while: cond returns tensor<4xf32> as value 0, expected tensor<i1>");
  auto returns_i1_vector = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * finite, b.IsFinite(args[1]));
    return b.Return({finite});
  };
  EXPECT_REJECTED(f, f.While(init, returns_i1_vector, CountAndDouble),
                  "while: cond returns tensor<4xi1> as value 0, expected tensor<i1>");
  auto returns_nothing = [](FunctionBuilder& b, std::span<Value* const>) -> Status {
    return b.Return({});
  };
  EXPECT_REJECTED(f, f.While(init, returns_nothing, CountAndDouble),
                  "while: cond returns 0 values, expected 1");
}

TEST_F(BuilderTest, WhileRejectsBodyReturningOtherTypes) {
  FunctionBuilder f = Begin({T(kI32), T(kF32, {4})});
  std::vector<Value*> init = {f.Parameter(0), f.Parameter(1)};
  auto swapped = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    return b.Return({args[1], args[0]});
  };
  EXPECT_REJECTED(f, f.While(init, CounterBelowTen, swapped),
                  "while: body returns tensor<4xf32> as value 0, expected tensor<i32>");
  auto one_value = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    return b.Return({args[0]});
  };
  EXPECT_REJECTED(f, f.While(init, CounterBelowTen, one_value),
                  "while: body returns 1 values, expected 2");
  auto no_return = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    return b.Negate(args[0]).status();
  };
  EXPECT_REJECTED(f, f.While(init, no_return, CountAndDouble),
                  "while: region 0 does not end with a return");
  EXPECT_REJECTED(f, f.While({f.Parameter(0), f.Parameter(7)}, CounterBelowTen, CountAndDouble),
                  "while: operand 1 is null");
}

// ---- kernel_call ----

KernelCallSpec Spec(std::string target, std::vector<std::optional<int64_t>> result_aliases = {},
                    std::vector<OperandEffect> operand_effects = {}) {
  KernelCallSpec spec;
  spec.target = std::move(target);
  spec.result_aliases = std::move(result_aliases);
  spec.operand_effects = std::move(operand_effects);
  return spec;
}

TEST_F(BuilderTest, KernelCallRecordsTargetEffectsAndAliases) {
  FunctionBuilder f = Begin({T(kF32, {4}), T(kF32, {4}), T(kF32)});
  KernelCallSpec spec;
  spec.target = "axpy";
  spec.version = 2;
  spec.operand_effects = {OperandEffect::kRead, OperandEffect::kReadWrite, OperandEffect::kNone};
  spec.result_aliases = {1, std::nullopt};
  ASSERT_OK_AND_ASSIGN(Operation * op,
                       f.KernelCall({f.Parameter(0), f.Parameter(1), f.Parameter(2)},
                                    {T(kF32, {4}), T(kI64, {2})}, spec));
  EXPECT_EQ(op->kind(), OpKind::kKernelCall);
  ASSERT_EQ(op->num_results(), 2);
  EXPECT_EQ(op->result(0)->type(), T(kF32, {4}));
  EXPECT_EQ(op->result(1)->type(), T(kI64, {2}));
  EXPECT_EQ(op->GetString("call_target_name"), "axpy");
  EXPECT_EQ(op->GetInt("version"), 2);
  EXPECT_EQ(op->GetStrings("operand_effects"),
            (std::vector<std::string>{"read", "read_write", "none"}));
  EXPECT_EQ(op->GetInts("result_aliases"), (std::vector<int64_t>{1, -1}));

  // Defaults: every operand read, no result aliases.
  ASSERT_OK_AND_ASSIGN(Operation * plain, f.KernelCall({f.Parameter(0)}, {T(kF32, {4})},
                                                       Spec("copy")));
  EXPECT_EQ(plain->GetStrings("operand_effects"), std::vector<std::string>{"read"});
  EXPECT_EQ(plain->GetInts("result_aliases"), std::vector<int64_t>{-1});
  EXPECT_EQ(plain->GetInt("version"), 1);
}

TEST_F(BuilderTest, KernelCallRejectsAliasOfAMissingOperandOrOfAnotherType) {
  FunctionBuilder f = Begin({T(kF32, {4}), T(kF32, {4})});
  std::vector<Value*> operands = {f.Parameter(0), f.Parameter(1)};
  KernelCallSpec missing = Spec("k", {5});
  EXPECT_REJECTED(f, f.KernelCall(operands, {T(kF32, {4})}, missing),
                  "kernel_call: result 0 aliases operand 5, which does not exist");
  KernelCallSpec negative = Spec("k", {-2});
  EXPECT_REJECTED(f, f.KernelCall(operands, {T(kF32, {4})}, negative),
                  "kernel_call: result 0 aliases operand -2, which does not exist");
  KernelCallSpec other_type = Spec("k", {std::nullopt, 0});
  EXPECT_REJECTED(f, f.KernelCall(operands, {T(kF32, {4}), T(kI32, {4})}, other_type),
                  "kernel_call: result 1 has type tensor<4xi32> but aliases operand 0 of type "
                  "tensor<4xf32>");
  KernelCallSpec too_many = Spec("k", {0, 1});
  EXPECT_REJECTED(f, f.KernelCall(operands, {T(kF32, {4})}, too_many),
                  "kernel_call: result_aliases has 2 entries for 1 results");
}

TEST_F(BuilderTest, KernelCallRejectsOperandEffectsOfTheWrongSize) {
  FunctionBuilder f = Begin({T(kF32, {4}), T(kF32, {4})});
  KernelCallSpec spec = Spec("k", {}, {OperandEffect::kWrite});
  EXPECT_REJECTED(f, f.KernelCall({f.Parameter(0), f.Parameter(1)}, {}, spec),
                  "kernel_call: operand_effects has 1 entries for 2 operands");
}

TEST_F(BuilderTest, KernelCallRejectsEmptyTargetAndNegativeVersion) {
  KernelCallSpec negative_version = Spec("k");
  negative_version.version = -1;
  FunctionBuilder f = Begin({T(kF32, {4})});
  EXPECT_REJECTED(f, f.KernelCall({f.Parameter(0)}, {}, KernelCallSpec{}),
                  "kernel_call: missing non-empty call_target_name");
  EXPECT_REJECTED(f, f.KernelCall({f.Parameter(0)}, {}, negative_version),
                  "kernel_call: missing non-negative integer attribute version");
  EXPECT_REJECTED(f, f.KernelCall({f.Parameter(3)}, {}, Spec("k")),
                  "kernel_call: operand 0 is null");
}

TEST_F(BuilderTest, KernelCallRejectsAnUnknownOperandEffect) {
  FunctionBuilder f = Begin({T(kF32, {4})});
  KernelCallSpec spec = Spec("k", {}, {static_cast<OperandEffect>(9)});
  EXPECT_REJECTED(f, f.KernelCall({f.Parameter(0)}, {}, spec),
                  "kernel_call: operand_effects[0] is 9, not a value of OperandEffect");
  EXPECT_EQ(OperandEffectName(static_cast<OperandEffect>(9)), "<invalid operand effect>");
}

TEST_F(BuilderTest, KernelCallRejectsTwoResultsAliasingOneOperand) {
  FunctionBuilder f = Begin({T(kF32, {4})});
  KernelCallSpec spec = Spec("k", {0, 0}, {OperandEffect::kReadWrite});
  EXPECT_REJECTED(f, f.KernelCall({f.Parameter(0)}, {T(kF32, {4}), T(kF32, {4})}, spec),
                  "kernel_call: results 0 and 1 both alias operand 0");
}

TEST_F(BuilderTest, KernelCallRejectsAliasOfAReadOrUnusedOperand) {
  FunctionBuilder f = Begin({T(kF32, {4}), T(kF32, {4})});
  std::vector<Value*> operands = {f.Parameter(0), f.Parameter(1)};
  const std::vector<TensorType> result = {T(kF32, {4})};
  EXPECT_REJECTED(f, f.KernelCall(operands, result,
                                  Spec("k", {0}, {OperandEffect::kRead, OperandEffect::kWrite})),
                  "kernel_call: result 0 aliases operand 0, whose effect is read (an aliased "
                  "operand must be write or read_write)");
  EXPECT_REJECTED(f, f.KernelCall(operands, result,
                                  Spec("k", {1}, {OperandEffect::kWrite, OperandEffect::kNone})),
                  "kernel_call: result 0 aliases operand 1, whose effect is none");
  // Without operand_effects every operand is read.
  EXPECT_REJECTED(f, f.KernelCall(operands, result, Spec("k", {1})),
                  "kernel_call: result 0 aliases operand 1, whose effect is read");
  ASSERT_OK_AND_ASSIGN(
      Operation * in_place,
      f.KernelCall(operands, {T(kF32, {4}), T(kF32, {4})},
                   Spec("k", {1, 0}, {OperandEffect::kWrite, OperandEffect::kReadWrite})));
  EXPECT_EQ(in_place->GetInts("result_aliases"), (std::vector<int64_t>{1, 0}));
}

}  // namespace
}  // namespace accy::ir_test
