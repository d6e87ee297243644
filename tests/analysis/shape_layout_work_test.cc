// ShapeLayoutAnalysis keeps its work contract: it computes inside a fixed buffer of exactly its
// declared workspace (the seed's checkScheduleStorage), and a ledger one visit short of the
// declared charge refuses it while the exact charge admits it (the seed's
// checkScheduleAdmission), for growing chains, a wide graph and nested regions.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <memory_resource>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "accy/builder.h"
#include "gtest/gtest.h"
#include "src/analysis/shape_layout_analysis.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/bounded_resource.h"
#include "src/passes/pass_manager.h"
#include "src/passes/work_ledger.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using passes::AnalysisCache;
using passes::AnalysisContext;
using passes::PassContext;
using passes::PassManager;
using passes::PlanningOptions;
using passes::PreservedAnalyses;
using passes::WorkBounds;
using passes::WorkContract;
using passes::WorkLedger;
using passes::WorkOutcome;

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

// A dependent analysis in the seed's style: the sum of static element counts over all values,
// with checked arithmetic (an aggregate overflow is WorkOverflow).
struct TotalElementsAnalysis {
  static constexpr std::string_view kName = "test-total-elements";
  explicit TotalElementsAnalysis(uint64_t t) : total(t) {}
  uint64_t total;

  static StatusOr<WorkBounds> Estimate(const Function& function) {
    ACCY_ASSIGN_OR_RETURN(passes::Census census, passes::Census::Inspect(function));
    WorkBounds bounds;
    ACCY_ASSIGN_OR_RETURN(bounds.work.structural_visits, passes::WorkAdd(census.values, 1));
    bounds.work.analysis_computations = 1;
    bounds.work.allocation_capacity = sizeof(TotalElementsAnalysis) + alignof(uint64_t);
    bounds.workspace_bytes = bounds.work.allocation_capacity;
    bounds.retained_storage_bytes = bounds.work.allocation_capacity;
    return bounds;
  }
  static const WorkContract& Contract() {
    static const WorkContract contract{{kName, 1}, &Estimate};
    return contract;
  }
  static StatusOr<TotalElementsAnalysis*> Compute(AnalysisContext& ctx, const Function& function) {
    ACCY_ASSIGN_OR_RETURN(const ShapeLayoutAnalysis* shapes,
                          ctx.Get<ShapeLayoutAnalysis>(function));
    uint64_t total = 0;
    for (const TensorInfo& info : shapes->values()) {
      if (!info.element_count) continue;
      ACCY_ASSIGN_OR_RETURN(total, passes::WorkAdd(total, *info.element_count));
    }
    return std::pmr::polymorphic_allocator<>(ctx.resource()).new_object<TotalElementsAnalysis>(
        total);
  }
};

StatusOr<WorkBounds> OneVisit(const Function&) {
  WorkBounds bounds;
  bounds.work.structural_visits = 1;
  return bounds;
}

// Requests the shape analysis, then (optionally) the dependent one; preserves everything.
class PlanShapesPass : public passes::Pass {
 public:
  explicit PlanShapesPass(bool with_total) : with_total_(with_total) {}
  std::string_view name() const override { return "test-plan-shapes"; }
  const WorkContract& contract() const override {
    static const WorkContract contract{{"test-plan-shapes", 1}, &OneVisit};
    return contract;
  }
  PreservedAnalyses preserved_analyses() const override { return PreservedAnalyses::All(); }
  Status Run(PassContext& context) override {
    ACCY_RETURN_IF_ERROR(context.GetAnalysis<ShapeLayoutAnalysis>().status());
    if (with_total_) ACCY_RETURN_IF_ERROR(context.GetAnalysis<TotalElementsAnalysis>().status());
    return absl::OkStatus();
  }

 private:
  bool with_total_;
};

// main(x: tensor<2x3xf32>) -> tensor<2x3xf32>: `count` reshapes in a chain (the seed's
// schedule_chain).
std::unique_ptr<Module> Chain(int count) {
  Builder builder("chain");
  TensorType type = *builder.Type(ElementType::kF32, {2, 3});
  FunctionBuilder f = *builder.BeginFunction("main", {type}, {type});
  Value* result = f.Parameter(0);
  for (int i = 0; i < count; ++i) result = *f.Reshape(result, type);
  ACCY_CHECK(f.Return({result}).ok());
  return *builder.Finish();
}

// main(p0..p7: tensor<4x8xf32>) -> 64 results: add(p[i % 8], p[(i + 1) % 8]) each.
std::unique_ptr<Module> Wide() {
  Builder builder("wide");
  TensorType type = *builder.Type(ElementType::kF32, {4, 8});
  FunctionBuilder f = *builder.BeginFunction("main", std::vector<TensorType>(8, type),
                                             std::vector<TensorType>(64, type));
  std::vector<Value*> results;
  for (int i = 0; i < 64; ++i) {
    results.push_back(*f.Add(f.Parameter(i % 8), f.Parameter((i + 1) % 8)));
  }
  ACCY_CHECK(f.Return(results).ok());
  return *builder.Finish();
}

// main(n: tensor<i32>, acc: tensor<3x5xf32>): while n < 10 { n + 1, acc + acc }, then reduce
// acc over dim 1: nested regions with their own block arguments and constants.
std::unique_ptr<Module> Nested() {
  Builder builder("nested");
  TensorType i32 = *builder.Type(ElementType::kI32, {});
  TensorType acc_type = *builder.Type(ElementType::kF32, {3, 5});
  TensorType row_type = *builder.Type(ElementType::kF32, {3});
  FunctionBuilder f = *builder.BeginFunction("main", {i32, acc_type}, {row_type});
  auto cond = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * limit, b.ConstantScalar(ElementType::kI32, 10));
    ACCY_ASSIGN_OR_RETURN(Value * less, b.Compare(args[0], limit, "LT"));
    return b.Return({less});
  };
  auto body = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * one, b.ConstantScalar(ElementType::kI32, 1));
    ACCY_ASSIGN_OR_RETURN(Value * next, b.Add(args[0], one));
    ACCY_ASSIGN_OR_RETURN(Value * doubled, b.Add(args[1], args[1]));
    return b.Return({next, doubled});
  };
  std::vector<Value*> loop = *f.While({f.Parameter(0), f.Parameter(1)}, cond, body);
  Value* zero = *f.ConstantScalar(ElementType::kF32, 0);
  Value* rows = *f.Reduce(loop[1], zero, row_type, "sum", {1});
  ACCY_CHECK(f.Return({rows}).ok());
  return *builder.Finish();
}

// The seed's checkScheduleStorage: recompute over a monotonic buffer of exactly the declared
// workspace bytes with no upstream, and compare with the cached result.
void CheckStorage(const Function& function) {
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  ASSERT_OK_AND_ASSIGN(const ShapeLayoutAnalysis* expected,
                       cache.Get<ShapeLayoutAnalysis>(function));
  ASSERT_OK_AND_ASSIGN(WorkBounds bounds, ShapeLayoutAnalysis::Estimate(function));

  std::vector<std::byte> buffer(bounds.workspace_bytes);
  std::pmr::monotonic_buffer_resource fixed(buffer.data(), buffer.size(),
                                            std::pmr::null_memory_resource());
  passes::BoundedResource counter(&fixed, kMax, kMax);  // counts only
  AnalysisContext context(cache, &counter);
  ShapeLayoutAnalysis* actual = nullptr;
  try {
    ASSERT_OK_AND_ASSIGN(actual, ShapeLayoutAnalysis::Compute(context, function));
  } catch (const std::bad_alloc&) {
    FAIL() << "needed more than the declared workspace of " << bounds.workspace_bytes
           << " bytes (allocated " << counter.allocated_bytes() << " before)";
  }
  ASSERT_EQ(actual->size(), expected->size());
  for (size_t i = 0; i < expected->size(); ++i) {
    EXPECT_TRUE(actual->values()[i] == expected->values()[i]) << "value " << i;
    EXPECT_EQ(actual->Get(expected->values()[i].value), &actual->values()[i]);
  }
  EXPECT_GE(counter.allocated_bytes(), sizeof(ShapeLayoutAnalysis));
  EXPECT_LE(counter.allocated_bytes(), bounds.workspace_bytes);
  // Tight up to alignment padding (at most 4 allocations): the bound is not inflated.
  EXPECT_LE(bounds.workspace_bytes - counter.allocated_bytes(), 4 * alignof(std::max_align_t));
  std::pmr::polymorphic_allocator<>(&counter).delete_object(actual);
}

// Runs PlanShapesPass under an allowance of `charge + offset` structural visits.
struct Admission {
  Status status;
  WorkOutcome outcome;
  size_t entries;
};
Admission RunWithVisits(Module& module, uint64_t visits, bool with_total) {
  PlanningOptions options;
  options.allowance.structural_visits = visits;
  WorkLedger ledger(options);
  AnalysisCache cache(&ledger);
  PassManager manager;
  manager.AddPass(std::make_unique<PlanShapesPass>(with_total));
  Status status = manager.Run(module, cache);
  return {status, ledger.outcome(), cache.entry_count()};
}

// The seed's checkScheduleAdmission over one function module.
void CheckAdmission(Module& module) {
  const Function& function = *module.functions()[0];
  ASSERT_OK_AND_ASSIGN(WorkBounds shape, ShapeLayoutAnalysis::Estimate(function));
  ASSERT_OK_AND_ASSIGN(WorkBounds total, TotalElementsAnalysis::Estimate(function));
  const uint64_t charge = 1 + shape.work.structural_visits;  // the pass, then the analysis

  Admission short_by_one = RunWithVisits(module, charge - 1, false);
  EXPECT_EQ(short_by_one.status.code(), absl::StatusCode::kResourceExhausted)
      << short_by_one.status;
  EXPECT_TRUE(absl::StrContains(short_by_one.status.message(), "structural_visits"));
  EXPECT_EQ(short_by_one.outcome, WorkOutcome::kExhausted);
  EXPECT_EQ(short_by_one.entries, 0u);
  for (uint64_t visits : {charge, charge + 1}) {
    Admission admitted = RunWithVisits(module, visits, false);
    EXPECT_OK(admitted.status);
    EXPECT_EQ(admitted.outcome, WorkOutcome::kOpen);
    EXPECT_EQ(admitted.entries, 1u);
  }

  // With a dependent analysis charged last, one short refuses it and keeps the shapes.
  const uint64_t both = charge + total.work.structural_visits;
  Admission dependent_short = RunWithVisits(module, both - 1, true);
  EXPECT_EQ(dependent_short.status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(dependent_short.outcome, WorkOutcome::kExhausted);
  EXPECT_EQ(dependent_short.entries, 1u);
  Admission dependent_admitted = RunWithVisits(module, both, true);
  EXPECT_OK(dependent_admitted.status);
  EXPECT_EQ(dependent_admitted.entries, 2u);
}

TEST(ShapeLayoutWorkTest, GrowingChainsComputeWithinDeclaredWorkspaceAndAdmitAtTheCharge) {
  for (int count : {1, 2, 6, 7, 16, 64}) {
    SCOPED_TRACE(count);
    std::unique_ptr<Module> module = Chain(count);
    CheckStorage(*module->functions()[0]);
    CheckAdmission(*module);
  }
}

TEST(ShapeLayoutWorkTest, WideGraphComputesWithinDeclaredWorkspaceAndAdmitsAtTheCharge) {
  std::unique_ptr<Module> module = Wide();
  CheckStorage(*module->functions()[0]);
  CheckAdmission(*module);
}

TEST(ShapeLayoutWorkTest, NestedRegionsComputeWithinDeclaredWorkspaceAndAdmitAtTheCharge) {
  std::unique_ptr<Module> module = Nested();
  CheckStorage(*module->functions()[0]);
  CheckAdmission(*module);
}

TEST(ShapeLayoutWorkTest, OneByteShortOfTheWorkspaceAllowanceIsRefused) {
  std::unique_ptr<Module> module = Chain(3);
  const Function& function = *module->functions()[0];
  ASSERT_OK_AND_ASSIGN(WorkBounds bounds, ShapeLayoutAnalysis::Estimate(function));
  for (uint64_t offset : {0, 1}) {
    PlanningOptions options;
    options.workspace_allowance = bounds.workspace_bytes - 1 + offset;
    WorkLedger ledger(options);
    AnalysisCache cache(&ledger);
    StatusOr<const ShapeLayoutAnalysis*> result = cache.Get<ShapeLayoutAnalysis>(function);
    EXPECT_EQ(result.ok(), offset == 1) << result.status();
    EXPECT_EQ(cache.entry_count(), offset);
  }
}

// The seed's "reports aggregate element overflow without caching a plan": three reshapes of
// 2^63-1 elements overflow the total; the shapes stay cached, the total does not, and the ledger
// is terminal.
TEST(ShapeLayoutWorkTest, AggregateElementOverflowCachesOnlyTheShapesAndEndsTheLedger) {
  Builder builder("overflow");
  TensorType type = *builder.Type(ElementType::kF32, {std::numeric_limits<int64_t>::max()});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("main", {type}, {type}));
  Value* result = f.Parameter(0);
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(result, f.Reshape(result, type));
  }
  ASSERT_OK(f.Return({result}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  const Function& function = *module->functions()[0];

  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  StatusOr<const TotalElementsAnalysis*> total = cache.Get<TotalElementsAnalysis>(function);
  EXPECT_EQ(total.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(absl::StartsWith(total.status().message(), "WorkOverflow")) << total.status();
  EXPECT_EQ(ledger.outcome(), WorkOutcome::kExhausted);
  EXPECT_EQ(cache.entry_count(), 1u);
  EXPECT_NE(cache.Find<ShapeLayoutAnalysis>(function), nullptr);
  StatusOr<const TotalElementsAnalysis*> again = cache.Get<TotalElementsAnalysis>(function);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StartsWith(again.status().message(), "TerminalWorkOutcome"));
}

}  // namespace
}  // namespace accy
