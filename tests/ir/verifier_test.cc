// Verifier tests: Verify(Module) on hand-assembled modules (Module::AddFunction, Operation::Create
// and Block::Append, bypassing the builder's checks) that break dominance, terminators, return
// types or region rules, and VerifyOperation on detached ops with wrong result types, attributes
// and regions. Every case asserts kInvalidArgument and a message naming the op and the rule.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "accy/ir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ir/builder_test_util.h"
#include "tests/test_util.h"

namespace accy::ir_test {
namespace {

std::vector<TensorType> Types(std::vector<TensorType> types) { return types; }

// Appends a detached op to `block` and returns it.
Operation* Append(Block* block, OpKind kind, std::vector<Value*> operands,
                  std::vector<TensorType> result_types, std::vector<NamedAttribute> attrs = {}) {
  return block->Append(Operation::Create(kind, std::move(operands), result_types, std::move(attrs)));
}

Operation* AppendReturn(Block* block, std::vector<Value*> values) {
  return Append(block, OpKind::kReturn, std::move(values), {});
}

::testing::Matcher<Status> InvalidWith(std::vector<std::string> fragments) {
  return IsInvalidArgumentWith(std::move(fragments));
}

// A module with function f(x: tensor<4xf32>) -> tensor<4xf32> whose body the test fills in.
class VerifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(f_, module_.AddFunction("f", {T(kF32, {4})}, {T(kF32, {4})}));
    entry_ = f_->entry_block();
    x_ = f_->parameter(0);
  }

  Module module_{"m"};
  Function* f_ = nullptr;
  Block* entry_ = nullptr;
  Value* x_ = nullptr;
  const TensorType f32x4_ = T(kF32, {4});
};

// ---- Verify(Module) ----

TEST_F(VerifierTest, AcceptsAHandAssembledFunction) {
  Operation* neg = Append(entry_, OpKind::kNegate, {x_}, {f32x4_});
  Operation* sum = Append(entry_, OpKind::kAdd, {neg->result(), x_}, {f32x4_});
  AppendReturn(entry_, {sum->result()});
  EXPECT_OK(Verify(module_));
}

TEST_F(VerifierTest, AcceptsAnEmptyModule) {
  Module empty("empty");
  EXPECT_OK(Verify(empty));
}

TEST_F(VerifierTest, RejectsUseOfAValueDefinedLater) {
  std::unique_ptr<Operation> later = Operation::Create(OpKind::kNegate, {x_}, Types({f32x4_}));
  Operation* early = Append(entry_, OpKind::kAbs, {later->result()}, {f32x4_});
  Operation* defined_later = entry_->Append(std::move(later));
  AppendReturn(entry_, {early->result()});
  EXPECT_THAT(Verify(module_),
              InvalidWith({"function 'f': abs: operand 0 is not defined before its use in "
                           "function 'f'"}));
  // Restore dominance so that the block's destruction order (users first) is safe.
  early->SetOperand(0, x_);
  EXPECT_OK(Verify(module_));
  EXPECT_TRUE(defined_later->result()->uses().empty());
}

TEST_F(VerifierTest, RejectsAnOpUsingItsOwnResult) {
  Operation* neg = Append(entry_, OpKind::kNegate, {x_}, {f32x4_});
  neg->SetOperand(0, neg->result());
  AppendReturn(entry_, {x_});
  EXPECT_THAT(Verify(module_),
              InvalidWith({"function 'f': negate: operand 0 is not defined before its use"}));
  neg->SetOperand(0, x_);
}

TEST_F(VerifierTest, RejectsFunctionReturnTypeMismatch) {
  ASSERT_OK_AND_ASSIGN(Function * g, module_.AddFunction("g", {T(kI32, {4})}, {f32x4_}));
  AppendReturn(entry_, {x_});
  AppendReturn(g->entry_block(), {g->parameter(0)});
  EXPECT_THAT(Verify(module_),
              InvalidWith({"function 'g': return value 0 has type tensor<4xi32>, expected "
                           "tensor<4xf32>"}));
}

TEST_F(VerifierTest, RejectsFunctionReturnCountMismatch) {
  AppendReturn(entry_, {x_, x_});
  EXPECT_THAT(Verify(module_), InvalidWith({"function 'f': return has 2 values, expected 1"}));
}

TEST_F(VerifierTest, RejectsFunctionWithoutReturn) {
  Append(entry_, OpKind::kNegate, {x_}, {f32x4_});
  EXPECT_THAT(Verify(module_), InvalidWith({"function 'f'", "does not end with a return"}));
}

TEST_F(VerifierTest, MissingReturnNamesTheFunctionOnce) {
  Append(entry_, OpKind::kNegate, {x_}, {f32x4_});
  Status status = Verify(module_);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "function 'f' does not end with a return");
}

TEST_F(VerifierTest, RejectsOpAfterReturn) {
  AppendReturn(entry_, {x_});
  Append(entry_, OpKind::kNegate, {x_}, {f32x4_});
  EXPECT_THAT(Verify(module_),
              InvalidWith({"function 'f': return: return must be the last op of function 'f'"}));
}

TEST_F(VerifierTest, RejectsOperandFromAnotherFunction) {
  ASSERT_OK_AND_ASSIGN(Function * g, module_.AddFunction("g", {f32x4_}, {f32x4_}));
  Operation* neg = Append(entry_, OpKind::kNegate, {g->parameter(0)}, {f32x4_});
  AppendReturn(entry_, {neg->result()});
  AppendReturn(g->entry_block(), {g->parameter(0)});
  EXPECT_THAT(Verify(module_),
              InvalidWith({"function 'f': negate: operand 0 is not defined before its use in "
                           "function 'f' (or belongs to another function or region)"}));
  neg->SetOperand(0, x_);  // no use across functions at destruction
  EXPECT_OK(Verify(module_));
}

TEST_F(VerifierTest, RejectsAnOpThatBreaksItsTypeRules) {
  Operation* sum = Append(entry_, OpKind::kAdd, {x_, x_}, {T(kF32, {5})});
  AppendReturn(entry_, {x_});
  EXPECT_THAT(Verify(module_),
              InvalidWith({"function 'f': add: result 0 has type tensor<5xf32>, expected "
                           "tensor<4xf32>"}));
  EXPECT_EQ(sum->num_results(), 1);
}

TEST_F(VerifierTest, RejectsFunctionBodyWithTwoBlocks) {
  AppendReturn(entry_, {x_});
  f_->body()->AddBlock({});
  EXPECT_THAT(Verify(module_), InvalidWith({"function 'f' must have exactly one block"}));
}

// Builds `reduce(x, init) dimensions=[0]` with an empty body block taking (f32, f32).
Operation* AppendSumReduce(Block* block, Value* input, Value* init) {
  Operation* reduce = Append(block, OpKind::kReduce, {input, init}, {T(kF32)},
                             {{"dimensions", std::vector<int64_t>{0}}});
  reduce->AddRegion()->AddBlock(Types({T(kF32), T(kF32)}));
  return reduce;
}

TEST_F(VerifierTest, AcceptsRegionUsingValuesOfTheEnclosingBlock) {
  Operation* zero = Append(entry_, OpKind::kConstant, {}, {T(kF32)},
                           {{"value", DenseElements{T(kF32), {0, 0, 0, 0}}}});
  Operation* reduce = AppendSumReduce(entry_, x_, zero->result());
  Block* body = reduce->region(0)->entry_block();
  Operation* sum = Append(body, OpKind::kAdd, {body->argument(0), body->argument(1)}, {T(kF32)});
  Operation* shifted = Append(body, OpKind::kAdd, {sum->result(), zero->result()}, {T(kF32)});
  AppendReturn(body, {shifted->result()});
  AppendReturn(entry_, {x_});
  EXPECT_OK(Verify(module_));
}

TEST_F(VerifierTest, RejectsRegionUsingAValueDefinedAfterItsOp) {
  Operation* zero = Append(entry_, OpKind::kConstant, {}, {T(kF32)},
                           {{"value", DenseElements{T(kF32), {0, 0, 0, 0}}}});
  Operation* reduce = AppendSumReduce(entry_, x_, zero->result());
  Operation* later = Append(entry_, OpKind::kNegate, {zero->result()}, {T(kF32)});
  Block* body = reduce->region(0)->entry_block();
  Operation* sum = Append(body, OpKind::kAdd, {body->argument(0), later->result()}, {T(kF32)});
  AppendReturn(body, {sum->result()});
  AppendReturn(entry_, {x_});
  EXPECT_THAT(Verify(module_),
              InvalidWith({"function 'f': add: operand 1 is not defined before its use in a "
                           "region of reduce"}));
  sum->SetOperand(1, body->argument(1));
  EXPECT_OK(Verify(module_));
}

TEST_F(VerifierTest, RejectsUseOfARegionArgumentOutsideTheRegion) {
  Operation* zero = Append(entry_, OpKind::kConstant, {}, {T(kF32)},
                           {{"value", DenseElements{T(kF32), {0, 0, 0, 0}}}});
  Operation* reduce = AppendSumReduce(entry_, x_, zero->result());
  Block* body = reduce->region(0)->entry_block();
  AppendReturn(body, {body->argument(0)});
  Operation* escaped = Append(entry_, OpKind::kNegate, {body->argument(1)}, {T(kF32)});
  AppendReturn(entry_, {x_});
  EXPECT_THAT(Verify(module_),
              InvalidWith({"function 'f': negate: operand 0 is not defined before its use in "
                           "function 'f'"}));
  escaped->SetOperand(0, zero->result());
  EXPECT_OK(Verify(module_));
}

TEST_F(VerifierTest, RejectsRegionWithoutReturn) {
  Operation* zero = Append(entry_, OpKind::kConstant, {}, {T(kF32)},
                           {{"value", DenseElements{T(kF32), {0, 0, 0, 0}}}});
  AppendSumReduce(entry_, x_, zero->result());
  AppendReturn(entry_, {x_});
  EXPECT_THAT(Verify(module_), InvalidWith({"function 'f': reduce: body does not end with a "
                                            "return"}));
}

// ---- VerifyOperation on detached ops ----

class VerifyOperationTest : public VerifierTest {};

TEST_F(VerifyOperationTest, RejectsWrongResultCountOrType) {
  auto two_results = Operation::Create(OpKind::kAdd, {x_, x_}, Types({f32x4_, f32x4_}));
  EXPECT_THAT(VerifyOperation(*two_results), InvalidWith({"add: has 2 results, expected 1"}));
  auto wrong_type = Operation::Create(OpKind::kIsFinite, {x_}, Types({f32x4_}));
  EXPECT_THAT(VerifyOperation(*wrong_type),
              InvalidWith({"is_finite: result 0 has type tensor<4xf32>, expected tensor<4xi1>"}));
  auto missing_operand = Operation::Create(OpKind::kAdd, {x_}, Types({f32x4_}));
  EXPECT_THAT(VerifyOperation(*missing_operand), InvalidWith({"add: expected 2 operands, got 1"}));
  auto given = Operation::Create(OpKind::kReshape, {x_, x_}, Types({f32x4_}));
  EXPECT_THAT(VerifyOperation(*given),
              InvalidWith({"reshape: expected 1 operand(s) and 1 result(s), got 2 and 1"}));
  auto ret = Operation::Create(OpKind::kReturn, {x_}, Types({f32x4_}));
  EXPECT_THAT(VerifyOperation(*ret), InvalidWith({"return: return has no results"}));
}

TEST_F(VerifyOperationTest, RejectsMissingOrMistypedAttributes) {
  auto no_permutation = Operation::Create(OpKind::kTranspose, {x_}, Types({f32x4_}));
  EXPECT_THAT(VerifyOperation(*no_permutation),
              InvalidWith({"transpose: missing attribute permutation"}));
  auto int_permutation =
      Operation::Create(OpKind::kTranspose, {x_}, Types({f32x4_}), {{"permutation", int64_t{0}}});
  EXPECT_THAT(VerifyOperation(*int_permutation),
              InvalidWith({"transpose: attribute permutation has the wrong kind: expected a "
                           "list of integers, got an integer"}));
  auto no_direction = Operation::Create(OpKind::kCompare, {x_, x_}, Types({T(kI1, {4})}));
  EXPECT_THAT(VerifyOperation(*no_direction),
              InvalidWith({"compare: missing string attribute comparison_direction"}));
  auto no_value = Operation::Create(OpKind::kConstant, {}, Types({f32x4_}));
  EXPECT_THAT(VerifyOperation(*no_value), InvalidWith({"constant: missing dense attribute value"}));
  auto other_value = Operation::Create(OpKind::kConstant, {}, Types({f32x4_}),
                                       {{"value", DenseElements{T(kI32, {4}), std::vector<uint8_t>(16)}}});
  EXPECT_THAT(VerifyOperation(*other_value),
              InvalidWith({"constant: value has type tensor<4xi32> but the result has type "
                           "tensor<4xf32>"}));
  auto no_broadcast_dims = Operation::Create(OpKind::kBroadcastInDim, {x_}, Types({f32x4_}));
  EXPECT_THAT(VerifyOperation(*no_broadcast_dims),
              InvalidWith({"broadcast_in_dim: missing attribute broadcast_dimensions"}));
  auto no_iota_dim = Operation::Create(OpKind::kIota, {}, Types({f32x4_}));
  EXPECT_THAT(VerifyOperation(*no_iota_dim),
              InvalidWith({"iota: missing integer attribute iota_dimension"}));
  auto bad_precision = Operation::Create(
      OpKind::kDotGeneral, {x_, x_}, Types({T(kF32)}),
      {{"lhs_contracting_dimensions", std::vector<int64_t>{0}},
       {"rhs_contracting_dimensions", std::vector<int64_t>{0}},
       {"precision_config", std::vector<std::string>{"FAST", "DEFAULT"}}});
  EXPECT_THAT(VerifyOperation(*bad_precision),
              InvalidWith({"dot_general: precision 'FAST' is not DEFAULT, HIGH or HIGHEST"}));
}

TEST_F(VerifyOperationTest, NamesAttributesOfTheWrongKindAsSuch) {
  auto int_value =
      Operation::Create(OpKind::kConstant, {}, Types({f32x4_}), {{"value", int64_t{1}}});
  EXPECT_THAT(VerifyOperation(*int_value),
              InvalidWith({"constant: attribute value has the wrong kind: expected a dense "
                           "tensor, got an integer"}));
  auto list_iota_dim = Operation::Create(OpKind::kIota, {}, Types({f32x4_}),
                                         {{"iota_dimension", std::vector<int64_t>{0}}});
  EXPECT_THAT(VerifyOperation(*list_iota_dim),
              InvalidWith({"iota: attribute iota_dimension has the wrong kind: expected an "
                           "integer, got a list of integers"}));
  auto float_version = Operation::Create(
      OpKind::kKernelCall, {x_}, Types({f32x4_}),
      {{"call_target_name", std::string("k")}, {"version", 1.5}});
  EXPECT_THAT(VerifyOperation(*float_version),
              InvalidWith({"kernel_call: attribute version has the wrong kind: expected an "
                           "integer, got a float"}));
  auto int_direction = Operation::Create(OpKind::kCompare, {x_, x_}, Types({T(kI1, {4})}),
                                         {{"comparison_direction", int64_t{0}}});
  EXPECT_THAT(VerifyOperation(*int_direction),
              InvalidWith({"compare: attribute comparison_direction has the wrong kind: "
                           "expected a string, got an integer"}));
  auto bool_broadcast_dims = Operation::Create(OpKind::kBroadcastInDim, {x_}, Types({f32x4_}),
                                               {{"broadcast_dimensions", true}});
  EXPECT_THAT(VerifyOperation(*bool_broadcast_dims),
              InvalidWith({"broadcast_in_dim: attribute broadcast_dimensions has the wrong kind: "
                           "expected a list of integers, got a bool"}));
}

TEST_F(VerifyOperationTest, RejectsAnUnknownOpKindAndI1ConstantBytesAboveOne) {
  auto unknown = Operation::Create(static_cast<OpKind>(999), {x_}, Types({f32x4_}));
  EXPECT_THAT(VerifyOperation(*unknown), InvalidWith({"unknown op kind 999"}));
  auto flags = Operation::Create(OpKind::kConstant, {}, Types({T(kI1, {2})}),
                                 {{"value", DenseElements{T(kI1, {2}), {0, 255}}}});
  EXPECT_THAT(VerifyOperation(*flags),
              InvalidWith({"constant: i1 element 1 holds byte 255, expected 0 or 1"}));
}

TEST_F(VerifyOperationTest, RejectsKernelCallAttributesOfTheWrongKind) {
  std::vector<NamedAttribute> base = {{"call_target_name", std::string("k")},
                                      {"version", int64_t{1}}};
  auto valid = Operation::Create(OpKind::kKernelCall, {x_}, Types({f32x4_}), base);
  EXPECT_OK(VerifyOperation(*valid));  // operand_effects and result_aliases are optional

  std::vector<NamedAttribute> bad_effect = base;
  bad_effect.push_back({"operand_effects", std::vector<std::string>{"bogus"}});
  auto op = Operation::Create(OpKind::kKernelCall, {x_}, Types({f32x4_}), bad_effect);
  EXPECT_THAT(VerifyOperation(*op),
              InvalidWith({"kernel_call: unknown operand effect 'bogus' (expected read, write, "
                           "read_write or none)"}));

  std::vector<NamedAttribute> effects_as_ints = base;
  effects_as_ints.push_back({"operand_effects", std::vector<int64_t>{0}});
  op = Operation::Create(OpKind::kKernelCall, {x_}, Types({f32x4_}), effects_as_ints);
  EXPECT_THAT(VerifyOperation(*op),
              InvalidWith({"kernel_call: attribute operand_effects has the wrong kind: expected "
                           "a list of strings, got a list of integers"}));

  std::vector<NamedAttribute> aliases_as_strings = base;
  aliases_as_strings.push_back({"result_aliases", std::vector<std::string>{"0"}});
  op = Operation::Create(OpKind::kKernelCall, {x_}, Types({f32x4_}), aliases_as_strings);
  EXPECT_THAT(VerifyOperation(*op),
              InvalidWith({"kernel_call: attribute result_aliases has the wrong kind: expected "
                           "a list of integers, got a list of strings"}));

  auto no_version = Operation::Create(OpKind::kKernelCall, {x_}, {},
                                      {{"call_target_name", std::string("k")}});
  EXPECT_THAT(VerifyOperation(*no_version),
              InvalidWith({"kernel_call: missing non-negative integer attribute version"}));
}

TEST_F(VerifyOperationTest, RejectsWrongRegionCount) {
  auto add_with_region = Operation::Create(OpKind::kAdd, {x_, x_}, Types({f32x4_}));
  add_with_region->AddRegion()->AddBlock({});
  EXPECT_THAT(VerifyOperation(*add_with_region), InvalidWith({"add: has 1 regions, expected 0"}));
  auto zero = Operation::Create(OpKind::kConstant, {}, Types({T(kF32)}),
                                {{"value", DenseElements{T(kF32), {0, 0, 0, 0}}}});
  auto reduce = Operation::Create(OpKind::kReduce, {x_, zero->result()}, Types({T(kF32)}),
                                  {{"dimensions", std::vector<int64_t>{0}}});
  EXPECT_THAT(VerifyOperation(*reduce), InvalidWith({"reduce: has 0 regions, expected 1"}));
  auto loop = Operation::Create(OpKind::kWhile, {x_}, Types({f32x4_}));
  loop->AddRegion()->AddBlock(Types({f32x4_}));
  EXPECT_THAT(VerifyOperation(*loop), InvalidWith({"while: has 1 regions, expected 2"}));
}

TEST_F(VerifyOperationTest, RejectsRegionArgumentsOfTheWrongTypeOrBlockCount) {
  auto loop = Operation::Create(OpKind::kWhile, {x_}, Types({f32x4_}));
  Block* cond = loop->AddRegion()->AddBlock(Types({T(kF32, {5})}));
  Block* body = loop->AddRegion()->AddBlock(Types({f32x4_}));
  body->Append(Operation::Create(OpKind::kReturn, {body->argument(0)}, {}));
  cond->Append(Operation::Create(OpKind::kReturn, {}, {}));
  EXPECT_THAT(VerifyOperation(*loop),
              InvalidWith({"while: cond argument 0 has type tensor<5xf32>, expected "
                           "tensor<4xf32>"}));

  auto loop2 = Operation::Create(OpKind::kWhile, {x_}, Types({f32x4_}));
  loop2->AddRegion()->AddBlock(Types({f32x4_, f32x4_}));
  loop2->AddRegion()->AddBlock(Types({f32x4_}));
  EXPECT_THAT(VerifyOperation(*loop2), InvalidWith({"while: cond has 2 arguments, expected 1"}));

  auto loop3 = Operation::Create(OpKind::kWhile, {x_}, Types({f32x4_}));
  Region* two_blocks = loop3->AddRegion();
  two_blocks->AddBlock(Types({f32x4_}));
  two_blocks->AddBlock(Types({f32x4_}));
  loop3->AddRegion()->AddBlock(Types({f32x4_}));
  EXPECT_THAT(VerifyOperation(*loop3), InvalidWith({"while: cond must have exactly one block"}));

  auto loop4 = Operation::Create(OpKind::kWhile, {x_}, Types({T(kF32, {5})}));
  EXPECT_THAT(VerifyOperation(*loop4),
              InvalidWith({"while: result 0 has type tensor<5xf32>, expected tensor<4xf32>"}));
}

TEST_F(VerifyOperationTest, AcceptsWhatTheBuilderWouldBuild) {
  auto neg = Operation::Create(OpKind::kNegate, {x_}, Types({f32x4_}));
  EXPECT_OK(VerifyOperation(*neg));
  auto cmp = Operation::Create(OpKind::kCompare, {x_, x_}, Types({T(kI1, {4})}),
                               {{"comparison_direction", std::string("EQ")}});
  EXPECT_OK(VerifyOperation(*cmp));
}

}  // namespace
}  // namespace accy::ir_test
