// The graph passes (src/transforms/): what each must and must not rewrite, checked on the
// printed module; and the pipeline as Engine::Compile runs it (a copy of the caller's module,
// switchable passes, a dump after each pass, the same results with or without it).
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/transforms/eliminate_common_subexpressions.h"
#include "src/transforms/eliminate_dead_code.h"
#include "src/transforms/fold_transpose_into_dot_general.h"
#include "src/transforms/graph_pipeline.h"
#include "src/util/file_name.h"
#include "tests/test_util.h"
#include "tests/transforms/transforms_test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int64_t CountOps(const Module& module, OpKind kind) {
  int64_t count = 0;
  WalkOperations(*module.functions()[0]->entry_block(),
                 [&](const Operation* op) { count += op->kind() == kind; });
  return count;
}

Function& Main(Module& module) { return *module.functions()[0]; }

TEST(EliminateCommonSubexpressionsTest, MergesOpsWithTheSameOperandsAndAttributes) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  %1 = stablehlo.add %a, %b : tensor<4xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<4xf32>
  %3 = stablehlo.constant dense<2.0> : tensor<4xf32>
  %4 = stablehlo.constant dense<2.0> : tensor<4xf32>
  %5 = stablehlo.add %2, %3 : tensor<4xf32>
  %6 = stablehlo.add %5, %4 : tensor<4xf32>
  return %6 : tensor<4xf32>
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EliminateCommonSubexpressions(Main(*module)), 2);
  EXPECT_OK(Verify(*module));
  EXPECT_EQ(CountOps(*module, OpKind::kAdd), 3);
  EXPECT_EQ(CountOps(*module, OpKind::kConstant), 1);
  // The multiply now reads one add twice.
  const Operation* multiply = Main(*module).entry_block()->operations()[1].get();
  ASSERT_EQ(multiply->kind(), OpKind::kMultiply);
  EXPECT_EQ(multiply->operand(0), multiply->operand(1));
}

// A CSE that merges ops differing in an attribute, an operand order, a result type or a
// constant's payload (even -0.0 against 0.0) is a bug.
TEST(EliminateCommonSubexpressionsTest, KeepsOpsThatDifferInAnythingThatMatters) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %s: tensor<f32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<4xf16>) {
  %0 = stablehlo.compare LT, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = stablehlo.compare GT, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = stablehlo.subtract %a, %b : tensor<4xf32>
  %3 = stablehlo.subtract %b, %a : tensor<4xf32>
  %4 = stablehlo.constant dense<0.0> : tensor<f32>
  %5 = stablehlo.constant dense<-0.0> : tensor<f32>
  %6 = stablehlo.broadcast_in_dim %a, dims = [0] : (tensor<4xf32>) -> tensor<4x4xf32>
  %7 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<4xf32>) -> tensor<4x4xf32>
  %8 = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xi32>
  %9 = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<4xf16>
})");
  ASSERT_NE(module, nullptr);
  const std::string before = PrintModule(*module);
  EXPECT_EQ(EliminateCommonSubexpressions(Main(*module)), 0);
  EXPECT_EQ(PrintModule(*module), before);
}

// An op inside a region may reuse an equal op of the enclosing block; ops of one region are not
// visible in a sibling region or after the op that holds them.
TEST(EliminateCommonSubexpressionsTest, RespectsRegionScopes) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%x: tensor<8xf32>) -> (tensor<f32>, tensor<f32>, tensor<8xf32>) {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
  %1 = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
  %2 = stablehlo.exponential %x : tensor<8xf32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %3:2 = stablehlo.while(%i = %c, %v = %x) : tensor<i32>, tensor<8xf32>
    cond {
      %n = stablehlo.constant dense<2> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %e = stablehlo.exponential %x : tensor<8xf32>
      %w = stablehlo.add %v, %e : tensor<8xf32>
      stablehlo.return %next, %w : tensor<i32>, tensor<8xf32>
    }
  %4 = stablehlo.add %3#1, %2 : tensor<8xf32>
  return %0, %1, %4 : tensor<f32>, tensor<f32>, tensor<8xf32>
})");
  ASSERT_NE(module, nullptr);
  // The body's exponential of %x becomes the outer one; the second reduce (same operands, same
  // body) becomes the first; the while (never merged) keeps its body's own add.
  EXPECT_EQ(EliminateCommonSubexpressions(Main(*module)), 2);
  EXPECT_OK(Verify(*module));
  EXPECT_EQ(CountOps(*module, OpKind::kExponential), 1);
  EXPECT_EQ(CountOps(*module, OpKind::kReduce), 1);
}

TEST(ComputeTheSameTest, IgnoresAttributeOrder) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%a: tensor<4x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = stablehlo.slice %a [0:4:2, 0:8:2] : (tensor<4x8xf32>) -> tensor<2x4xf32>
  %1 = stablehlo.slice %a [0:4:2, 0:8:2] : (tensor<4x8xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
})");
  ASSERT_NE(module, nullptr);
  Block& block = *Main(*module).entry_block();
  Operation* second = block.operations()[1].get();
  // Same attributes set in another order.
  std::vector<NamedAttribute> reversed(second->attributes().rbegin(), second->attributes().rend());
  std::unique_ptr<Operation> reordered = Operation::Create(
      OpKind::kSlice, {Main(*module).parameter(0)},
      std::vector<TensorType>{second->result()->type()}, reversed);
  EXPECT_TRUE(ComputeTheSame(*block.operations()[0], *reordered));
  EXPECT_TRUE(ComputeTheSame(*block.operations()[0], *second));
}

TEST(EliminateDeadCodeTest, ErasesUnusedChainsButKeepsKernelCallsAndWhiles) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.exponential %a : tensor<4xf32>
  %1 = stablehlo.tanh %0 : tensor<4xf32>
  %2 = stablehlo.negate %a : tensor<4xf32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %3:2 = stablehlo.while(%i = %c, %v = %a) : tensor<i32>, tensor<4xf32>
    cond {
      %n = stablehlo.constant dense<2> : tensor<i32>
      %unused = stablehlo.constant dense<7> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next, %v : tensor<i32>, tensor<4xf32>
    }
  return %2 : tensor<4xf32>
})");
  ASSERT_NE(module, nullptr);
  // exponential, tanh and the cond's unused constant.
  EXPECT_EQ(EliminateDeadCode(Main(*module)), 3);
  EXPECT_OK(Verify(*module));
  EXPECT_EQ(CountOps(*module, OpKind::kExponential), 0);
  EXPECT_EQ(CountOps(*module, OpKind::kTanh), 0);
  EXPECT_EQ(CountOps(*module, OpKind::kWhile), 1);
  EXPECT_EQ(CountOps(*module, OpKind::kConstant), 3);  // %c, %n, %one
  EXPECT_EQ(EliminateDeadCode(Main(*module)), 0);
}

TEST(FoldTransposeIntoDotGeneralTest, DotsReadPastTransposesWithMappedDims) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%x: tensor<7x16xf32>, %w: tensor<24x16xf32>, %q: tensor<2x5x8xf32>, %k: tensor<2x8x5xf32>) -> (tensor<7x24xf32>, tensor<2x5x5xf32>) {
  %wt = stablehlo.transpose %w, dims = [1, 0] : (tensor<24x16xf32>) -> tensor<16x24xf32>
  %0 = stablehlo.dot_general %x, %wt, contracting_dims = [1] x [0] : (tensor<7x16xf32>, tensor<16x24xf32>) -> tensor<7x24xf32>
  %kt = stablehlo.transpose %k, dims = [0, 2, 1] : (tensor<2x8x5xf32>) -> tensor<2x5x8xf32>
  %1 = stablehlo.dot_general %q, %kt, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x5xf32>
  return %0, %1 : tensor<7x24xf32>, tensor<2x5x5xf32>
})");
  ASSERT_NE(module, nullptr);
  std::unique_ptr<Module> unfolded = module->Clone();
  EXPECT_EQ(FoldTransposeIntoDotGeneral(Main(*module)), 2);
  EXPECT_OK(Verify(*module));
  Block& block = *Main(*module).entry_block();
  const Operation* first = block.operations()[1].get();
  EXPECT_EQ(first->operand(1), Main(*module).parameter(1));
  EXPECT_EQ(first->GetInts("rhs_contracting_dimensions"), std::vector<int64_t>({1}));
  const Operation* second = block.operations()[3].get();
  EXPECT_EQ(second->operand(1), Main(*module).parameter(3));
  EXPECT_EQ(second->GetInts("rhs_batching_dimensions"), std::vector<int64_t>({0}));
  EXPECT_EQ(second->GetInts("rhs_contracting_dimensions"), std::vector<int64_t>({1}));
  // The transposes are left for dead-code elimination.
  EXPECT_EQ(CountOps(*module, OpKind::kTranspose), 2);
  EXPECT_EQ(EliminateDeadCode(Main(*module)), 2);

  // Same numbers as the unfolded program (both through the engine with every pass off but the
  // fold's effect; the reference of each product is a plain sum over 16 or 8 terms).
  EngineOptions off;
  off.disabled_passes = {"fold-transpose-into-dot-general"};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine_off, Engine::Create(off));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> folded_exe, engine->Compile(*unfolded));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> plain_exe, engine_off->Compile(*unfolded));
  EXPECT_EQ(folded_exe->Stats().work_items_by_kind.count("shape"), 0u);
  EXPECT_EQ(plain_exe->Stats().work_items_by_kind.at("shape"), 2);
  std::vector<Tensor> inputs;
  for (const TensorType& type : Main(*unfolded).parameter_types()) {
    std::vector<float> v(static_cast<size_t>(type.element_count()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % 11) * 0.25f - 1;
    inputs.push_back(*Tensor::FromVector(type, v));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> got, folded_exe->Run(inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, plain_exe->Run(inputs));
  for (size_t r = 0; r < 2; ++r) {
    // Quarter-integer inputs: every product and partial sum is exact in f32.
    TensorComparison same = CompareUlp(got[r], want[r], 0);
    EXPECT_TRUE(same.ok) << r << ": " << same.message;
  }
}

// Folding a transpose that permutes the operand's free dims would permute the result: kept. A
// transpose of a computed value (not a weight) is kept too.
TEST(FoldTransposeIntoDotGeneralTest, KeepsTransposesThatReorderFreeDims) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%a: tensor<4x3x2xf32>, %b: tensor<4x5xf32>, %c: tensor<5x4xf32>) -> (tensor<2x3x5xf32>, tensor<5x5xf32>) {
  %at = stablehlo.transpose %a, dims = [2, 1, 0] : (tensor<4x3x2xf32>) -> tensor<2x3x4xf32>
  %0 = stablehlo.dot_general %at, %b, contracting_dims = [2] x [0] : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %e = stablehlo.exponential %c : tensor<5x4xf32>
  %et = stablehlo.transpose %e, dims = [1, 0] : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %1 = stablehlo.dot_general %c, %et, contracting_dims = [1] x [0] : (tensor<5x4xf32>, tensor<4x5xf32>) -> tensor<5x5xf32>
  return %0, %1 : tensor<2x3x5xf32>, tensor<5x5xf32>
})");
  ASSERT_NE(module, nullptr);
  const std::string before = PrintModule(*module);
  EXPECT_EQ(FoldTransposeIntoDotGeneral(Main(*module)), 0);
  EXPECT_EQ(PrintModule(*module), before);
}

// A duplicated multiply and a reduce nothing uses.
constexpr char kDuplicatedOrdered[] = R"(
module @dup {
  func.func @main(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %0 = stablehlo.multiply %a, %b : tensor<64xf32>
    %1 = stablehlo.multiply %a, %b : tensor<64xf32>
    %2 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<64xf32>, tensor<f32>) -> tensor<f32>
    %3 = stablehlo.subtract %0, %1 : tensor<64xf32>
    %4 = stablehlo.exponential %3 : tensor<64xf32>
    return %4 : tensor<64xf32>
  }
})";

TEST(GraphPipelineTest, UnknownPassNamesAreRejected) {
  EXPECT_OK(CheckGraphPassNames(std::vector<std::string>{"eliminate-dead-code"}));
  Status status = CheckGraphPassNames(std::vector<std::string>{"eliminate-dead-code", "dce"});
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("unknown graph pass 'dce' (the passes are: expand-batch-norm, "
                        "sink-constants-into-regions, isolate-regions-from-above, "
                        "broadcast-splat-constants, "
                        "assign-convolution-layouts, simplify-layout-chains, "
                        "canonicalize-row-broadcasts, fold-constants, fold-transpose-into-dot-general, "
                        "eliminate-common-subexpressions, simplify-arithmetic, "
                        "canonicalize-attention-layouts, eliminate-dead-code)"));
  EngineOptions options;
  options.disabled_passes = {"cse"};
  StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(options);
  EXPECT_TRUE(absl::IsInvalidArgument(engine.status()));
  EXPECT_THAT(std::string(engine.status().message()),
              HasSubstr("EngineOptions: disabled_passes: unknown graph pass 'cse'"));
}

// Compile rewrites a copy (the caller's module prints the same afterwards), drops the dead
// reduce and the duplicate multiply (fewer items than with the passes off) and gets the same
// bits either way.
TEST(GraphPipelineTest, CompileRewritesACopyAndKeepsTheResults) {
  std::unique_ptr<Module> module = Parse(kDuplicatedOrdered);
  ASSERT_NE(module, nullptr);
  const std::string before = PrintModule(*module);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  EXPECT_EQ(PrintModule(*module), before);
  EngineOptions off;
  off.disabled_passes = {"simplify-layout-chains", "fold-constants",
                         "fold-transpose-into-dot-general", "eliminate-common-subexpressions",
                         "simplify-arithmetic", "eliminate-dead-code"};
  off.enable_fusion = false;
  EngineOptions on_unfused;
  on_unfused.enable_fusion = false;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine_off, Engine::Create(off));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine_on, Engine::Create(on_unfused));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe_off, engine_off->Compile(*module));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe_on, engine_on->Compile(*module));
  auto count = [](const ExecutableStats& stats) {
    int64_t items = 0;
    for (const auto& [kind, n] : stats.work_items_by_kind) items += n;
    return items;
  };
  // Unfused, one item per op: multiply x2, reduce, subtract, exponential -> multiply, subtract,
  // exponential.
  EXPECT_EQ(count(exe_off->Stats()), 5);
  EXPECT_EQ(count(exe_on->Stats()), 3);
  EXPECT_EQ(exe_off->Stats().work_items_by_kind.count("reduction"), 1u);
  EXPECT_EQ(exe_on->Stats().work_items_by_kind.count("reduction"), 0u);

  TensorType t = *TensorType::Create(ElementType::kF32, {64});
  std::vector<float> a(64), b(64);
  for (int i = 0; i < 64; ++i) {
    a[static_cast<size_t>(i)] = 0.1f * static_cast<float>(i) - 3;
    b[static_cast<size_t>(i)] = 0.03f * static_cast<float>(i);
  }
  std::vector<Tensor> inputs = {*Tensor::FromVector(t, a), *Tensor::FromVector(t, b)};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> x, exe->Run(inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> y, exe_off->Run(inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> z, exe_on->Run(inputs));
  EXPECT_EQ(x[0].data_as<float>()[5], 1.0f);  // exp(a*b - a*b) = exp(0)
  EXPECT_EQ(0, std::memcmp(x[0].data(), y[0].data(), 256));
  EXPECT_EQ(0, std::memcmp(x[0].data(), z[0].data(), 256));
}

// VerifyAfterPass names the pass and the verifier's complaint; a valid module passes.
TEST(GraphPipelineTest, VerifyAfterPassNamesThePassThatBrokeTheModule) {
  std::unique_ptr<Module> module = Parse(kDuplicatedOrdered);
  ASSERT_NE(module, nullptr);
  EXPECT_OK(VerifyAfterPass(*module, "simplify-arithmetic"));
  // A rewrite that reads a value before it is defined: the first multiply's operand 0 becomes
  // the exponential's result (same type, defined three ops later).
  Block& body = *module->functions().front()->entry_block();
  Operation* first = body.operations()[1].get();
  Operation* last = body.operations()[5].get();
  ASSERT_EQ(first->name(), "multiply");
  ASSERT_EQ(last->name(), "exponential");
  Value* original = first->operand(0);
  first->SetOperand(0, last->result(0));
  const Status status = VerifyAfterPass(*module, "simplify-arithmetic");
  EXPECT_TRUE(absl::IsInternal(status)) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("graph pass 'simplify-arithmetic' left a module the verifier rejects: "));
  EXPECT_THAT(std::string(status.message()), HasSubstr("is not defined before its use"));
  // Blocks destroy their ops last to first, so the use must point backwards again.
  first->SetOperand(0, original);
  EXPECT_OK(VerifyAfterPass(*module, "simplify-arithmetic"));
}

// RunGraphPipeline verifies what the passes leave: a module broken after one pass fails with
// kInternal naming that pass when verify_each_pass is set, and with the end-of-pipeline error
// otherwise; an intact module passes both ways.
TEST(GraphPipelineTest, RunGraphPipelineRefusesAModuleAPassLeftInvalid) {
  for (bool each : {true, false}) {
    SCOPED_TRACE(each ? "verify_each_pass" : "verified at the end");
    std::unique_ptr<Module> module = Parse(kDuplicatedOrdered);
    ASSERT_NE(module, nullptr);
    Operation* broken = nullptr;
    Value* original = nullptr;
    GraphPipelineOptions options;
    options.verify_each_pass = each;
    options.after_each_pass = [&](Module& m, std::string_view pass) {
      if (pass != "fold-constants" || broken != nullptr) return;
      // The first multiply reads the second one's result, defined after it (no cycle, so the
      // passes after this one still terminate).
      std::vector<Operation*> multiplies;
      for (const auto& op : m.functions().front()->entry_block()->operations()) {
        if (op->kind() == OpKind::kMultiply) multiplies.push_back(op.get());
      }
      ASSERT_EQ(multiplies.size(), 2u);
      broken = multiplies[0];
      ASSERT_NE(broken, nullptr);
      original = broken->operand(0);
      broken->SetOperand(0, multiplies[1]->result(0));
    };
    passes::WorkLedger ledger;
    passes::AnalysisCache cache(&ledger);
    const Status status = RunGraphPipeline(*module, options, cache);
    EXPECT_TRUE(absl::IsInternal(status)) << status;
    EXPECT_THAT(std::string(status.message()),
                HasSubstr(each ? "graph pass 'fold-constants' left a module the verifier rejects: "
                               : "the graph passes left a module the verifier rejects ("))
        << status;
    ASSERT_NE(broken, nullptr);
    broken->SetOperand(0, original);  // blocks destroy ops last to first
    options.after_each_pass = nullptr;
    EXPECT_OK(RunGraphPipeline(*module, options, cache));
  }
}

// With verify_each_pass (or ACCY_VERIFY_EACH_PASS=1) Compile verifies after every pass and
// still compiles a valid program to the same results; the option shows in options().
TEST(GraphPipelineTest, VerifyEachPassCompilesValidPrograms) {
  std::unique_ptr<Module> module = Parse(kDuplicatedOrdered);
  ASSERT_NE(module, nullptr);
  EngineOptions options;
  options.verify_each_pass = true;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
  EXPECT_TRUE(engine->options().verify_each_pass);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  TensorType t = *TensorType::Create(ElementType::kF32, {64});
  std::vector<float> a(64, 0.5f), b(64, 3.0f);
  std::vector<Tensor> inputs = {*Tensor::FromVector(t, a), *Tensor::FromVector(t, b)};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> x, exe->Run(inputs));
  EXPECT_EQ(x[0].data_as<float>()[5], 1.0f);  // exp(a*b - a*b) = exp(0)
  ::setenv("ACCY_VERIFY_EACH_PASS", "1", 1);
  StatusOr<std::unique_ptr<Engine>> from_env = Engine::Create();
  ::unsetenv("ACCY_VERIFY_EACH_PASS");
  ASSERT_OK(from_env.status());
  EXPECT_TRUE((*from_env)->options().verify_each_pass);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> plain, Engine::Create());
  EXPECT_FALSE(plain->options().verify_each_pass);
}

TEST(GraphPipelineTest, DumpsTheModuleAfterEachPass) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("accy_graph_dump_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::remove_all(dir);
  std::unique_ptr<Module> module = Parse(kDuplicatedOrdered);
  ASSERT_NE(module, nullptr);
  EngineOptions options;
  options.dump_dir = dir.string();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
  ASSERT_OK(engine->Compile(*module).status());
  auto read = [&](const std::string& name) {
    std::ifstream in(dir / name);
    EXPECT_TRUE(in.good()) << name;
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string input = read("accy_dup.00-input.mlir");
  const std::string batch_norm = read("accy_dup.01-expand-batch-norm.mlir");
  const std::string sunk = read("accy_dup.02-sink-constants-into-regions.mlir");
  const std::string isolated = read("accy_dup.03-isolate-regions-from-above.mlir");
  const std::string splats = read("accy_dup.04-broadcast-splat-constants.mlir");
  const std::string layouts = read("accy_dup.05-assign-convolution-layouts.mlir");
  const std::string simplify = read("accy_dup.06-simplify-layout-chains.mlir");
  const std::string rows = read("accy_dup.07-canonicalize-row-broadcasts.mlir");
  const std::string constants = read("accy_dup.08-fold-constants.mlir");
  const std::string fold = read("accy_dup.09-fold-transpose-into-dot-general.mlir");
  const std::string cse = read("accy_dup.10-eliminate-common-subexpressions.mlir");
  const std::string arithmetic = read("accy_dup.11-simplify-arithmetic.mlir");
  const std::string attention = read("accy_dup.12-canonicalize-attention-layouts.mlir");
  const std::string dce = read("accy_dup.13-eliminate-dead-code.mlir");
  EXPECT_EQ(batch_norm, input);  // no batch-norm op
  EXPECT_EQ(sunk, input);        // no region reads an outer constant
  EXPECT_EQ(isolated, input);    // nor an outer run-time value
  EXPECT_EQ(splats, input);      // no splat constant
  EXPECT_EQ(layouts, input);     // no convolution
  EXPECT_EQ(simplify, input);    // nothing to simplify
  EXPECT_EQ(rows, input);        // no keepdims row value
  EXPECT_EQ(constants, input);   // nothing to fold
  EXPECT_EQ(fold, input);        // nothing to fold
  EXPECT_EQ(arithmetic, cse);    // no identity applies
  EXPECT_EQ(attention, cse);     // no attention
  EXPECT_THAT(input, HasSubstr("stablehlo.reduce"));
  EXPECT_THAT(cse, HasSubstr("stablehlo.reduce"));
  EXPECT_THAT(dce, Not(HasSubstr("stablehlo.reduce")));
  auto count = [](const std::string& text, const std::string& what) {
    int64_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(input, "stablehlo.multiply"), 2);
  EXPECT_EQ(count(cse, "stablehlo.multiply"), 1);
  // Each dump parses back.
  for (const std::string* text : {&input, &cse, &dce}) EXPECT_OK(ParseStableHlo(*text).status());
  // Turned off, a pass writes no dump and the numbering skips it.
  std::filesystem::remove_all(dir);
  options.disabled_passes = {"expand-batch-norm", "sink-constants-into-regions",
                             "isolate-regions-from-above", "broadcast-splat-constants", "assign-convolution-layouts",
                             "simplify-layout-chains", "canonicalize-row-broadcasts", "fold-constants",
                             "fold-transpose-into-dot-general",
                             "eliminate-common-subexpressions", "simplify-arithmetic",
                             "canonicalize-attention-layouts"};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> partial, Engine::Create(options));
  ASSERT_OK(partial->Compile(*module).status());
  EXPECT_TRUE(std::filesystem::exists(dir / "accy_dup.01-eliminate-dead-code.mlir"));
  EXPECT_FALSE(std::filesystem::exists(dir / "accy_dup.13-eliminate-dead-code.mlir"));
  std::filesystem::remove_all(dir);
}

// A module name is a symbol that may hold any character: its dumps stay in the dump folder.
TEST(GraphPipelineTest, DumpFileNamesCannotLeaveTheDumpFolder) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("accy_graph_dump_names_" +
       std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::remove_all(dir);
  std::unique_ptr<Module> module = Parse(R"(
module @"x/../../evil" {
  func.func @"f/../g"(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a, %a : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})");
  ASSERT_NE(module, nullptr);
  EngineOptions options;
  options.dump_dir = dir.string();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
  ASSERT_OK(engine->Compile(*module, "f/../g").status());
  EXPECT_TRUE(std::filesystem::exists(dir / "accy_x_.._.._evil.00-input.mlir"));
  EXPECT_TRUE(std::filesystem::exists(dir / "accy_f_.._g.plan.txt"));
  for (const auto& entry : std::filesystem::directory_iterator(dir.parent_path())) {
    EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr("evil.00")));
  }
  EXPECT_EQ(SafeFileName(""), "_");
  EXPECT_EQ(SafeFileName("..a/b"), "_.a_b");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace accy
