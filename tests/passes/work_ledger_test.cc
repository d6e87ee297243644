// WorkLedger admission, refusal and the terminal outcome (src/passes/work_ledger.h).
#include "src/passes/work_ledger.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy::passes {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
constexpr WorkIdentity kIdentity{"test-work", 3};

// One ledger dimension: its name in refusals, and how to set it in a charge and an allowance.
struct DimensionCase {
  std::string name;
  std::function<void(WorkBounds&, uint64_t)> set_charge;
  std::function<void(PlanningOptions&, uint64_t)> set_allowance;
};

std::vector<DimensionCase> AllDimensions() {
  return {
      {"structural_visits", [](WorkBounds& b, uint64_t v) { b.work.structural_visits = v; },
       [](PlanningOptions& o, uint64_t v) { o.allowance.structural_visits = v; }},
      {"input_bytes", [](WorkBounds& b, uint64_t v) { b.work.input_bytes = v; },
       [](PlanningOptions& o, uint64_t v) { o.allowance.input_bytes = v; }},
      {"analysis_computations",
       [](WorkBounds& b, uint64_t v) { b.work.analysis_computations = v; },
       [](PlanningOptions& o, uint64_t v) { o.allowance.analysis_computations = v; }},
      {"allocation_capacity", [](WorkBounds& b, uint64_t v) { b.work.allocation_capacity = v; },
       [](PlanningOptions& o, uint64_t v) { o.allowance.allocation_capacity = v; }},
      {"workspace_bytes", [](WorkBounds& b, uint64_t v) { b.workspace_bytes = v; },
       [](PlanningOptions& o, uint64_t v) { o.workspace_allowance = v; }},
      {"retained_storage_bytes", [](WorkBounds& b, uint64_t v) { b.retained_storage_bytes = v; },
       [](PlanningOptions& o, uint64_t v) { o.retained_storage_allowance = v; }},
  };
}

TEST(WorkLedgerTest, AllowanceEqualToChargeIsAdmittedInEveryDimension) {
  for (const DimensionCase& dimension : AllDimensions()) {
    SCOPED_TRACE(dimension.name);
    WorkBounds charge;
    dimension.set_charge(charge, 1000);
    PlanningOptions options;
    dimension.set_allowance(options, 1000);
    WorkLedger ledger(options);
    EXPECT_OK(ledger.Charge(kIdentity, charge));
    EXPECT_EQ(ledger.outcome(), WorkOutcome::kOpen);
    ASSERT_EQ(ledger.receipts().size(), 1u);
    EXPECT_EQ(ledger.receipts()[0].bounds, charge);
  }
}

TEST(WorkLedgerTest, AllowanceOneBelowChargeIsRefusedNamingTheDimension) {
  for (const DimensionCase& dimension : AllDimensions()) {
    SCOPED_TRACE(dimension.name);
    WorkBounds charge;
    dimension.set_charge(charge, 1000);
    PlanningOptions options;
    dimension.set_allowance(options, 999);
    WorkLedger ledger(options);
    Status status = ledger.Charge(kIdentity, charge);
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), dimension.name)) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "'test-work' v3")) << status;
    EXPECT_EQ(ledger.outcome(), WorkOutcome::kExhausted);
    EXPECT_EQ(ledger.used(), WorkVector{});  // a refused charge adds nothing
    EXPECT_TRUE(ledger.receipts().empty());
  }
}

TEST(WorkLedgerTest, CumulativeDimensionsSumAcrossCharges) {
  PlanningOptions options;
  options.allowance = WorkVector::Uniform(10);
  WorkLedger ledger(options);
  WorkBounds five;
  five.work = WorkVector::Uniform(5);
  EXPECT_OK(ledger.Charge(kIdentity, five));
  EXPECT_OK(ledger.Charge(kIdentity, five));
  EXPECT_EQ(ledger.used(), WorkVector::Uniform(10));
  WorkBounds one;
  one.work.input_bytes = 1;
  Status status = ledger.Charge(kIdentity, one);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(status.message(), "input_bytes")) << status;
}

TEST(WorkLedgerTest, WorkspaceIsAPerChargePeakNotASum) {
  PlanningOptions options;
  options.workspace_allowance = 10;
  WorkLedger ledger(options);
  WorkBounds ten;
  ten.workspace_bytes = 10;
  EXPECT_OK(ledger.Charge(kIdentity, ten));
  EXPECT_OK(ledger.Charge(kIdentity, ten));
  EXPECT_EQ(ledger.peak_workspace_bytes(), 10u);
}

TEST(WorkLedgerTest, ChargeThatWouldWrapUsedIsRefused) {
  WorkLedger ledger;  // unlimited
  WorkBounds huge;
  huge.work.structural_visits = kMax;
  EXPECT_OK(ledger.Charge(kIdentity, huge));
  WorkBounds one;
  one.work.structural_visits = 1;
  EXPECT_EQ(ledger.Charge(kIdentity, one).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ledger.used().structural_visits, kMax);
}

TEST(WorkLedgerTest, ExhaustedLedgerFailsEveryLaterChargeWithTerminalWorkOutcome) {
  PlanningOptions options;
  options.allowance.analysis_computations = 0;
  WorkLedger ledger(options);
  WorkBounds one;
  one.work.analysis_computations = 1;
  ASSERT_EQ(ledger.Charge(kIdentity, one).code(), absl::StatusCode::kResourceExhausted);

  Status later = ledger.Charge(WorkIdentity{"other", 1}, WorkBounds{});  // even a zero charge
  EXPECT_EQ(later.code(), absl::StatusCode::kFailedPrecondition) << later;
  EXPECT_TRUE(absl::StartsWith(later.message(), "TerminalWorkOutcome")) << later;
  EXPECT_TRUE(absl::StrContains(later.message(), "analysis_computations")) << later;
  EXPECT_EQ(ledger.CheckOpen(kIdentity).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ledger.terminal_cause().code(), absl::StatusCode::kResourceExhausted);
}

TEST(WorkLedgerTest, MarkExhaustedKeepsTheFirstCauseAndBlocksCharges) {
  WorkLedger ledger;
  EXPECT_OK(ledger.CheckOpen(kIdentity));
  ledger.MarkExhausted(absl::InvalidArgumentError("first failure"));
  ledger.MarkExhausted(absl::InternalError("second failure"));
  EXPECT_EQ(ledger.outcome(), WorkOutcome::kExhausted);
  EXPECT_EQ(ledger.terminal_cause().message(), "first failure");
  Status status = ledger.Charge(kIdentity, WorkBounds{});
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StartsWith(status.message(), "TerminalWorkOutcome")) << status;
}

TEST(WorkLedgerTest, DefaultOptionsAdmitEverything) {
  WorkLedger ledger;
  EXPECT_EQ(ledger.allowance(), WorkVector::Unlimited());
  EXPECT_EQ(ledger.workspace_allowance(), kMax);
  EXPECT_EQ(ledger.retained_storage_allowance(), kMax);
  WorkBounds big;
  big.work = WorkVector::Uniform(kMax);
  big.workspace_bytes = kMax;
  big.retained_storage_bytes = kMax;
  EXPECT_OK(ledger.Charge(kIdentity, big));
}

}  // namespace
}  // namespace accy::passes
