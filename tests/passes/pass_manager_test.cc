// PassManager: order of runs, charging each pass's contract, invalidating what a pass did not
// preserve, stats and failures (src/passes/pass_manager.h).
#include "src/passes/pass_manager.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/passes/test_analyses.h"
#include "tests/test_util.h"

namespace accy::passes {
namespace {

using testutil::CountingAnalysis;
using testutil::DependentAnalysis;

// Declares 2 visits per function.
StatusOr<WorkBounds> TwoVisits(const Function&) {
  WorkBounds bounds;
  bounds.work.structural_visits = 2;
  return bounds;
}
StatusOr<WorkBounds> OverflowingEstimate(const Function&) {
  ACCY_ASSIGN_OR_RETURN(uint64_t visits, WorkAdd(std::numeric_limits<uint64_t>::max(), 1));
  WorkBounds bounds;
  bounds.work.structural_visits = visits;
  return bounds;
}

// A configurable pass: logs "<name>:<function>", may request analyses, mark the IR modified,
// fail, and declares the preservation it is given.
class ScriptedPass : public Pass {
 public:
  struct Script {
    std::string name = "test-pass";
    bool request_counting = false;
    bool request_dependent = false;
    bool modify = false;
    bool fail = false;
    PreservedAnalyses preserved = PreservedAnalyses::None();
    StatusOr<WorkBounds> (*estimate)(const Function&) = &TwoVisits;
  };
  ScriptedPass(Script script, std::vector<std::string>* log)
      : script_(std::move(script)), log_(log), contract_{{script_.name, 1}, script_.estimate} {}

  std::string_view name() const override { return script_.name; }
  const WorkContract& contract() const override { return contract_; }
  PreservedAnalyses preserved_analyses() const override { return script_.preserved; }
  Status Run(PassContext& context) override {
    log_->push_back(script_.name + ":" + context.function().name());
    if (script_.request_counting) {
      ACCY_RETURN_IF_ERROR(context.GetAnalysis<CountingAnalysis>().status());
    }
    if (script_.request_dependent) {
      ACCY_RETURN_IF_ERROR(context.GetAnalysis<DependentAnalysis>().status());
    }
    if (script_.modify) context.MarkModified();
    if (script_.fail) return absl::InvalidArgumentError("test-pass: cannot handle this");
    return absl::OkStatus();
  }

 private:
  Script script_;
  std::vector<std::string>* log_;
  WorkContract contract_;
};

class PassManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testutil::ResetCounters();
    module_ = testutil::TwoFunctionModule();
  }
  void Add(ScriptedPass::Script script) {
    manager_.AddPass(std::make_unique<ScriptedPass>(std::move(script), &log_));
  }

  std::unique_ptr<Module> module_;
  std::vector<std::string> log_;
  PassManager manager_;
};

TEST_F(PassManagerTest, RunsEachPassOverEveryFunctionInOrder) {
  Add({.name = "first"});
  Add({.name = "second", .modify = true});
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  ASSERT_OK(manager_.Run(*module_, cache));
  EXPECT_EQ(log_, (std::vector<std::string>{"first:f", "first:g", "second:f", "second:g"}));
  EXPECT_EQ(manager_.stats().pass_runs, 4u);
  EXPECT_EQ(manager_.stats().passes_modified, 2u);
  // Each pass's own contract is charged once per function.
  EXPECT_EQ(ledger.used().structural_visits, 8u);
  EXPECT_EQ(ledger.receipts().size(), 4u);
}

TEST_F(PassManagerTest, PreservingAllKeepsAnalysesForLaterPasses) {
  Add({.name = "producer", .request_counting = true, .preserved = PreservedAnalyses::All()});
  Add({.name = "consumer", .request_counting = true, .preserved = PreservedAnalyses::All()});
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  ASSERT_OK(manager_.Run(*module_, cache));
  EXPECT_EQ(CountingAnalysis::computations, 2);  // once per function
  EXPECT_EQ(cache.entry_count(), 2u);
}

TEST_F(PassManagerTest, PreservingNoneInvalidatesAndLaterPassesRecompute) {
  Add({.name = "mutator", .request_counting = true, .modify = true});
  Add({.name = "consumer", .request_counting = true, .preserved = PreservedAnalyses::All()});
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  ASSERT_OK(manager_.Run(*module_, cache));
  EXPECT_EQ(CountingAnalysis::computations, 4);
  EXPECT_EQ(CountingAnalysis::destructions, 2);
  EXPECT_EQ(cache.entry_count(), 2u);
}

TEST_F(PassManagerTest, PreservingANamedSetKeepsOnlyThoseAnalyses) {
  Add({.name = "mutator",
       .request_dependent = true,
       .preserved = PreservedAnalyses::Only({std::string(CountingAnalysis::kName)})});
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  ASSERT_OK(manager_.Run(*module_, cache));
  EXPECT_EQ(cache.entry_count(), 2u);
  for (const auto& function : module_->functions()) {
    EXPECT_NE(cache.Find<CountingAnalysis>(*function), nullptr);
    EXPECT_EQ(cache.Find<DependentAnalysis>(*function), nullptr);
  }
}

TEST_F(PassManagerTest, RefusedPassChargeFailsTheRunBeforeThePassRuns) {
  Add({.name = "first"});
  PlanningOptions options;
  options.allowance.structural_visits = 3;  // first:f (2) fits, first:g (2 more) does not
  WorkLedger ledger(options);
  AnalysisCache cache(&ledger);
  Status status = manager_.Run(*module_, cache);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "'first' v1")) << status;
  EXPECT_EQ(log_, (std::vector<std::string>{"first:f"}));
  EXPECT_EQ(ledger.outcome(), WorkOutcome::kExhausted);
  EXPECT_EQ(manager_.stats().pass_runs, 1u);

  // The ledger is terminal: running again fails with the distinct terminal error.
  Status again = manager_.Run(*module_, cache);
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StartsWith(again.message(), "TerminalWorkOutcome")) << again;
}

TEST_F(PassManagerTest, PassEstimateOverflowFailsWithWorkOverflow) {
  Add({.name = "overflowing", .estimate = &OverflowingEstimate});
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  Status status = manager_.Run(*module_, cache);
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(absl::StartsWith(status.message(), "WorkOverflow")) << status;
  EXPECT_TRUE(log_.empty());
  EXPECT_EQ(ledger.outcome(), WorkOutcome::kExhausted);
}

TEST_F(PassManagerTest, FailingPassStopsTheRunAndInvalidatesWhatItTouched) {
  Add({.name = "broken", .request_counting = true, .fail = true});
  Add({.name = "never"});
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  Status status = manager_.Run(*module_, cache);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(log_, (std::vector<std::string>{"broken:f"}));
  EXPECT_EQ(cache.entry_count(), 0u);
  EXPECT_EQ(ledger.outcome(), WorkOutcome::kExhausted);
  EXPECT_EQ(manager_.stats().pass_runs, 0u);
}

TEST_F(PassManagerTest, RefusedAnalysisInsideAPassFailsTheRun) {
  Add({.name = "needs-dependent", .request_dependent = true});
  PlanningOptions options;
  // The pass (2) and the dependent (5) fit; its CountingAnalysis dependency (3) does not.
  options.allowance.structural_visits = 2 + 5 + CountingAnalysis::kVisits - 1;
  WorkLedger ledger(options);
  AnalysisCache cache(&ledger);
  Status status = manager_.Run(*module_, cache);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), std::string(CountingAnalysis::kName))) << status;
  EXPECT_EQ(cache.entry_count(), 0u);
  EXPECT_EQ(ledger.outcome(), WorkOutcome::kExhausted);
}

}  // namespace
}  // namespace accy::passes
