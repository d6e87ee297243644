// IR mutation (include/accy/ir.h): insert before/after, remove, erase, replace all uses,
// renumbering and module clones, with use lists checked after every edit.
#include <memory>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

TensorType F32(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}

// a + b, (a + b) * a, returned.
std::unique_ptr<Module> AddMul() {
  Builder builder("add_mul");
  FunctionBuilder f = *builder.BeginFunction("main", {F32({4}), F32({4})}, {F32({4})});
  Value* sum = *f.Add(f.Parameter(0), f.Parameter(1));
  Value* product = *f.Multiply(sum, f.Parameter(0));
  EXPECT_TRUE(f.Return({product}).ok());
  return *builder.Finish();
}

// Every use list entry names an operand that really is this value, and every operand appears in
// its value's use list exactly once, across the whole function.
void ExpectConsistentUses(const Function& function) {
  const std::vector<Value*> parameters = function.entry_block()->arguments();
  std::vector<const Value*> values(parameters.begin(), parameters.end());
  WalkOperations(*function.entry_block(), [&](const Operation* op) {
    for (const Value* result : op->results()) values.push_back(result);
    for (int64_t r = 0; r < op->num_regions(); ++r) {
      for (const auto& block : op->region(r)->blocks()) {
        for (const Value* argument : block->arguments()) values.push_back(argument);
      }
    }
    for (int64_t i = 0; i < op->num_operands(); ++i) {
      const Value* operand = op->operand(i);
      int64_t found = 0;
      for (const Use& use : operand->uses()) found += use.user == op && use.operand_index == i;
      EXPECT_EQ(found, 1) << op->name() << " operand " << i;
    }
  });
  for (const Value* value : values) {
    for (const Use& use : value->uses()) {
      EXPECT_EQ(use.user->operand(use.operand_index), value);
    }
  }
}

std::vector<OpKind> Kinds(const Block& block) {
  std::vector<OpKind> kinds;
  for (const auto& op : block.operations()) kinds.push_back(op->kind());
  return kinds;
}

TEST(IrMutationTest, InsertBeforeAndAfterPlaceTheOpAndRegisterItsUses) {
  std::unique_ptr<Module> module = AddMul();
  Function& f = *module->functions()[0];
  Block& block = *f.entry_block();
  Operation* add = block.operations()[0].get();
  Operation* mul = block.operations()[1].get();
  const TensorType t = F32({4});
  Operation* neg = block.InsertBefore(
      mul, Operation::Create(OpKind::kNegate, {add->result()}, std::span(&t, 1)));
  Operation* abs = block.InsertAfter(
      add, Operation::Create(OpKind::kAbs, {f.parameter(1)}, std::span(&t, 1)));
  Operation* front = block.InsertAfter(
      nullptr, Operation::Create(OpKind::kSine, {f.parameter(0)}, std::span(&t, 1)));
  EXPECT_THAT(Kinds(block), ::testing::ElementsAre(OpKind::kSine, OpKind::kAdd, OpKind::kAbs,
                                                   OpKind::kNegate, OpKind::kMultiply,
                                                   OpKind::kReturn));
  EXPECT_EQ(block.IndexOf(neg), 3);
  EXPECT_EQ(block.IndexOf(front), 0);
  EXPECT_EQ(neg->parent_block(), &block);
  // Fresh ids above every earlier one.
  EXPECT_GE(neg->id(), 3);
  EXPECT_GE(abs->result()->id(), 5);
  EXPECT_NE(neg->id(), abs->id());
  EXPECT_EQ(add->result()->uses().size(), 2u);  // multiply and negate
  ExpectConsistentUses(f);
  EXPECT_OK(Verify(*module));
}

TEST(IrMutationTest, ReplaceAllUsesThenEraseLeavesAValidFunction) {
  std::unique_ptr<Module> module = AddMul();
  Function& f = *module->functions()[0];
  Block& block = *f.entry_block();
  Operation* add = block.operations()[0].get();
  Operation* mul = block.operations()[1].get();
  // return (a + b) instead of the product; the product is then dead.
  mul->result()->ReplaceAllUsesWith(add->result());
  EXPECT_FALSE(mul->result()->has_uses());
  EXPECT_EQ(block.terminator()->operand(0), add->result());
  block.Erase(mul);
  EXPECT_THAT(Kinds(block), ::testing::ElementsAre(OpKind::kAdd, OpKind::kReturn));
  // The multiply's use of the parameter is gone; the add's and the return's remain.
  EXPECT_EQ(f.parameter(0)->uses().size(), 1u);
  EXPECT_EQ(add->result()->uses().size(), 1u);
  ExpectConsistentUses(f);
  EXPECT_OK(Verify(*module));
}

TEST(IrMutationTest, RemoveDetachesAndAnOpMovesToAnotherPlace) {
  std::unique_ptr<Module> module = AddMul();
  Function& f = *module->functions()[0];
  Block& block = *f.entry_block();
  const TensorType t = F32({4});
  Operation* sine = block.InsertBefore(
      block.terminator(), Operation::Create(OpKind::kSine, {f.parameter(1)}, std::span(&t, 1)));
  std::unique_ptr<Operation> detached = block.Remove(sine);
  EXPECT_EQ(detached->parent_block(), nullptr);
  EXPECT_EQ(detached->id(), -1);
  EXPECT_EQ(detached->result()->id(), -1);
  EXPECT_EQ(detached->parent_function(), nullptr);
  // Still a user of its operand while detached.
  EXPECT_EQ(f.parameter(1)->uses().size(), 2u);
  Operation* moved = block.InsertBefore(block.operations()[0].get(), std::move(detached));
  EXPECT_EQ(block.IndexOf(moved), 0);
  EXPECT_GE(moved->id(), 0);
  ExpectConsistentUses(f);
  EXPECT_OK(Verify(*module));
  EXPECT_EQ(block.IndexOf(nullptr), -1);
}

TEST(IrMutationTest, RenumberGivesDenseIdsInProgramOrder) {
  std::unique_ptr<Module> module = AddMul();
  Function& f = *module->functions()[0];
  Block& block = *f.entry_block();
  const TensorType t = F32({4});
  block.InsertBefore(block.operations()[0].get(),
                     Operation::Create(OpKind::kSine, {f.parameter(1)}, std::span(&t, 1)));
  block.Erase(block.operations()[0].get());  // the sine again: no uses
  f.Renumber();
  EXPECT_EQ(f.parameter(0)->id(), 0);
  EXPECT_EQ(f.parameter(1)->id(), 1);
  EXPECT_EQ(block.operations()[0]->id(), 0);
  EXPECT_EQ(block.operations()[0]->result()->id(), 2);
  EXPECT_EQ(block.operations()[1]->id(), 1);
  EXPECT_EQ(block.operations()[1]->result()->id(), 3);
  EXPECT_EQ(block.operations()[2]->id(), 2);  // return
  EXPECT_EQ(f.op_id_bound(), 3);
  EXPECT_EQ(f.value_id_bound(), 4);
}

// A while with a reduce inside: the clone prints as the original, shares no value with it, and
// the original is untouched by edits to the clone.
TEST(IrMutationTest, CloneIsADeepCopyThatPrintsTheSame) {
  Builder builder("nested");
  const TensorType v = F32({8});
  const TensorType i32 = *TensorType::Create(ElementType::kI32, {});
  FunctionBuilder f = *builder.BeginFunction("main", {v}, {v});
  Value* zero = *f.ConstantScalar(ElementType::kI32, 0);
  std::vector<Value*> loop = *f.While(
      {zero, f.Parameter(0)},
      [&](FunctionBuilder& cond, std::span<Value* const> args) -> Status {
        ACCY_ASSIGN_OR_RETURN(Value * two, cond.ConstantScalar(ElementType::kI32, 2));
        ACCY_ASSIGN_OR_RETURN(Value * less, cond.Compare(args[0], two, "LT"));
        return cond.Return({less});
      },
      [&](FunctionBuilder& body, std::span<Value* const> args) -> Status {
        ACCY_ASSIGN_OR_RETURN(Value * one, body.ConstantScalar(ElementType::kI32, 1));
        ACCY_ASSIGN_OR_RETURN(Value * next_i, body.Add(args[0], one));
        ACCY_ASSIGN_OR_RETURN(Value * init, body.ConstantScalar(ElementType::kF32, 0));
        ACCY_ASSIGN_OR_RETURN(Value * total, body.Reduce(args[1], init, F32({}), "sum", {0}));
        ACCY_ASSIGN_OR_RETURN(Value * spread, body.BroadcastInDim(total, v, {}));
        ACCY_ASSIGN_OR_RETURN(Value * next_x, body.Add(args[1], spread));
        return body.Return({next_i, next_x});
      });
  ASSERT_OK(f.Return({loop[1]}));
  std::unique_ptr<Module> original = *builder.Finish();
  (void)i32;
  const std::string text = PrintModule(*original);

  std::unique_ptr<Module> copy = original->Clone();
  EXPECT_EQ(copy->name(), "nested");
  EXPECT_EQ(PrintModule(*copy), text);
  EXPECT_OK(Verify(*copy));
  Function& cf = *copy->functions()[0];
  ExpectConsistentUses(cf);
  EXPECT_EQ(cf.op_id_bound(), original->functions()[0]->op_id_bound());
  EXPECT_EQ(cf.value_id_bound(), original->functions()[0]->value_id_bound());
  // No operand of the copy is a value of the original.
  std::vector<const Value*> original_values;
  WalkOperations(*original->functions()[0]->entry_block(), [&](const Operation* op) {
    for (const Value* result : op->results()) original_values.push_back(result);
  });
  WalkOperations(*cf.entry_block(), [&](const Operation* op) {
    for (const Value* operand : op->operands()) {
      EXPECT_THAT(original_values, ::testing::Not(::testing::Contains(operand)));
    }
  });
  // Editing the copy leaves the original as it was.
  Operation* ret = cf.entry_block()->terminator();
  ret->SetOperand(0, cf.parameter(0));
  cf.entry_block()->Erase(cf.entry_block()->operations()[1].get());  // the while
  EXPECT_EQ(PrintModule(*original), text);
  EXPECT_OK(Verify(*original));
}

// Function::CloneInto copies a function into its own module under a new name and into another
// module, aliases and visibility included; the copy verifies, prints as the original but for
// its name, and shares no value with it.
TEST(IrMutationTest, FunctionCloneIntoCopiesUnderANewName) {
  std::unique_ptr<Module> module = AddMul();
  Function& main = *module->functions()[0];
  main.set_public(false);
  ASSERT_OK(main.AddInputOutputAlias({0, 0}));
  const std::string before = PrintModule(*module);
  ASSERT_OK_AND_ASSIGN(Function * twin, main.CloneInto(*module, "twin"));
  ASSERT_EQ(module->functions().size(), 2u);
  EXPECT_EQ(module->FindFunction("twin"), twin);
  EXPECT_EQ(twin->parent(), module.get());
  EXPECT_FALSE(twin->is_public());
  EXPECT_EQ(twin->input_output_aliases(), main.input_output_aliases());
  EXPECT_EQ(twin->entry_block()->operations().size(), 3u);
  ExpectConsistentUses(*twin);
  ExpectConsistentUses(main);
  EXPECT_OK(Verify(*module));
  for (const auto& op : twin->entry_block()->operations()) {
    for (const Value* operand : op->operands()) {
      const Block* where = operand->is_block_argument() ? operand->owner_block()
                                                        : operand->defining_op()->parent_block();
      EXPECT_EQ(where, twin->entry_block());
    }
  }
  // Into another module of the same name: it prints as the original module did.
  Module other("add_mul");
  ASSERT_OK_AND_ASSIGN(Function * copied, main.CloneInto(other, "main"));
  EXPECT_EQ(copied->parent(), &other);
  EXPECT_EQ(PrintModule(other), before);
}

// CloneInto refuses a name the module has, and a body that reads a value before it is defined;
// the module is unchanged either way.
TEST(IrMutationTest, FunctionCloneIntoErrorsLeaveTheModuleUnchanged) {
  std::unique_ptr<Module> module = AddMul();
  Function& main = *module->functions()[0];
  StatusOr<Function*> taken = main.CloneInto(*module, "main");
  EXPECT_TRUE(absl::IsInvalidArgument(taken.status()));
  EXPECT_THAT(std::string(taken.status().message()),
              ::testing::HasSubstr("function 'main' is already defined"));
  EXPECT_TRUE(absl::IsInvalidArgument(main.CloneInto(*module, "").status()));
  // The add reads the multiply's result, defined after it.
  Operation* add = main.entry_block()->operations()[0].get();
  Operation* multiply = main.entry_block()->operations()[1].get();
  ASSERT_EQ(add->name(), "add");
  Value* original = add->operand(1);
  add->SetOperand(1, multiply->result(0));
  StatusOr<Function*> broken = main.CloneInto(*module, "broken");
  EXPECT_TRUE(absl::IsInvalidArgument(broken.status()));
  EXPECT_THAT(std::string(broken.status().message()),
              ::testing::HasSubstr("clone: operand 1 of add is not defined before its use"));
  EXPECT_EQ(module->functions().size(), 1u);
  EXPECT_EQ(module->FindFunction("broken"), nullptr);
  add->SetOperand(1, original);  // blocks destroy ops last to first
  EXPECT_OK(Verify(*module));
}

}  // namespace
}  // namespace accy
