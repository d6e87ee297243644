// The epilogue-only kernel of a dot_general item (jit::EmitDotEpilogueKernel through
// CompiledProgram::Compile's library_outputs): it reads the value a library computed (the dot,
// or the last op mapped onto post-ops) from a buffer and computes the item's other ops, out of
// place or in place over that buffer; and its errors.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/compiled_program.h"
#include "src/fusion/fusion_analysis.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_ledger.h"
#include "src/schedule/schedule_plan.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

using ::testing::HasSubstr;

TensorType F32(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}

// A planned function and its fusion plan.
struct Planned {
  std::unique_ptr<Module> module;
  passes::WorkLedger ledger;
  passes::AnalysisCache cache{&ledger};
  const Function* function = nullptr;
  const SchedulePlan* plan = nullptr;
  const FusionPlan* fusion = nullptr;

  // The index of the first item of `kind`.
  size_t IndexOf(WorkKind kind) const {
    for (size_t i = 0; i < plan->items().size(); ++i) {
      if (plan->items()[i].kind == kind) return i;
    }
    ADD_FAILURE() << "no item of kind " << WorkKindName(kind);
    return 0;
  }
  // Compiles with `library_output` as item `index`'s library value.
  StatusOr<std::unique_ptr<CompiledProgram>> Compile(size_t index, const Value* library_output) {
    std::vector<const Value*> outputs(plan->items().size(), nullptr);
    outputs[index] = library_output;
    return CompiledProgram::Compile(*function, *plan, *fusion, {}, {}, outputs);
  }
};

std::unique_ptr<Planned> Plan(std::unique_ptr<Module> module) {
  auto planned = std::make_unique<Planned>();
  planned->module = std::move(module);
  planned->function = planned->module->FindFunction("main");
  planned->plan = *planned->cache.Get<SchedulePlan>(*planned->function);
  planned->fusion = &(*planned->cache.Get<FusionPlanAnalysis>(*planned->function))->plan();
  return planned;
}

// main(a [8, 16], b [16, 12], t [8, 12]) = exp(a @ b) / t, one dot_epilogue item. Sets *dot.
std::unique_ptr<Module> ExpDivide(Value** dot) {
  Builder builder("epilogue");
  FunctionBuilder f = *builder.BeginFunction(
      "main", {F32({8, 16}), F32({16, 12}), F32({8, 12})}, {F32({8, 12})});
  *dot = *f.DotGeneral(f.Parameter(0), f.Parameter(1), F32({8, 12}), {1}, {0}, {}, {});
  EXPECT_TRUE(f.Return({*f.Divide(*f.Exponential(*dot), f.Parameter(2))}).ok());
  return *builder.Finish();
}

TEST(DotEpilogueKernelTest, ComputesTheRestFromTheLibraryValueOutOfPlaceAndInPlace) {
  Value* dot = nullptr;
  std::unique_ptr<Planned> planned = Plan(ExpDivide(&dot));
  const size_t index = planned->IndexOf(WorkKind::kDotGeneral);
  ASSERT_EQ(planned->plan->items()[index].ops.size(), 3u);  // dot, exp, divide
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<CompiledProgram> program, planned->Compile(index, dot));
  ASSERT_EQ(program->items().size(), 1u);
  const CompiledItem& item = program->items()[0];
  EXPECT_EQ(item.library_output, dot);
  // Inputs: the library's value and t (not a, b: the library read those).
  ASSERT_EQ(item.inputs.size(), 2u);
  EXPECT_EQ(item.inputs[0], dot);
  EXPECT_EQ(item.inputs[1], planned->function->parameter(2));
  std::vector<float> x(96), t(96), out(96);
  for (int i = 0; i < 96; ++i) {
    x[static_cast<size_t>(i)] = 0.05f * static_cast<float>(i - 48);
    t[static_cast<size_t>(i)] = 1.0f + 0.01f * static_cast<float>(i);
  }
  const int64_t bytes[] = {384, 384, 384};
  void* out_of_place[] = {x.data(), t.data(), out.data()};
  ASSERT_OK(program->RunItem(0, out_of_place, bytes, 3));
  for (size_t i = 0; i < 96; ++i) {
    const double expected = std::exp(double(x[i])) / double(t[i]);
    EXPECT_NEAR(out[i], expected, 1e-6 * expected) << "element " << i;
  }
  // In place over the library's value (what buffer assignment does at its last use).
  std::vector<float> in_place = x;
  void* same[] = {in_place.data(), t.data(), in_place.data()};
  ASSERT_OK(program->RunItem(0, same, bytes, 3));
  EXPECT_EQ(std::memcmp(in_place.data(), out.data(), 384), 0);
}

TEST(DotEpilogueKernelTest, LibraryValueOutsideTheItemIsInvalidArgument) {
  Value* dot = nullptr;
  std::unique_ptr<Planned> planned = Plan(ExpDivide(&dot));
  const size_t index = planned->IndexOf(WorkKind::kDotGeneral);
  auto program = planned->Compile(index, planned->function->parameter(0));
  EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(program.status().message()), HasSubstr("computes no value"));
}

TEST(DotEpilogueKernelTest, LibraryValueThatIsTheResultLeavesNothingAndIsInvalidArgument) {
  Value* dot = nullptr;
  std::unique_ptr<Planned> planned = Plan(ExpDivide(&dot));
  const size_t index = planned->IndexOf(WorkKind::kDotGeneral);
  auto program = planned->Compile(index, planned->plan->items()[index].output_value);
  EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(program.status().message()), HasSubstr("no epilogue op after"));
}

TEST(DotEpilogueKernelTest, RestReadingAnotherLibraryValueIsUnimplemented) {
  // r = 2y + y: with 2y as the library's value, the add still needs y, which it does not output.
  Builder builder("epilogue");
  FunctionBuilder f =
      *builder.BeginFunction("main", {F32({8, 16}), F32({16, 12})}, {F32({8, 12})});
  Value* y = *f.DotGeneral(f.Parameter(0), f.Parameter(1), F32({8, 12}), {1}, {0}, {}, {});
  Value* two_y =
      *f.Multiply(y, *f.BroadcastInDim(*f.ConstantScalar(ElementType::kF32, 2), y->type(), {}));
  ASSERT_OK(f.Return({*f.Add(two_y, y)}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  std::unique_ptr<Planned> planned = Plan(std::move(module));
  const size_t index = planned->IndexOf(WorkKind::kDotGeneral);
  auto program = planned->Compile(index, two_y);
  EXPECT_EQ(program.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(program.status().message()),
              HasSubstr("which the library computes but does not output"));
}

TEST(DotEpilogueKernelTest, LibraryValueOnAnotherKindIsInvalidArgument) {
  Builder builder("epilogue");
  FunctionBuilder f = *builder.BeginFunction("main", {F32({8})}, {F32({8})});
  Value* e = *f.Exponential(f.Parameter(0));
  ASSERT_OK(f.Return({*f.Negate(e)}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  std::unique_ptr<Planned> planned = Plan(std::move(module));
  auto program = planned->Compile(0, e);
  EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(program.status().message()), HasSubstr("(kind elementwise_fusion)"));
}

}  // namespace
}  // namespace accy::jit::testing
