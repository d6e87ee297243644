// WorkLedger: admits or refuses each pass's and analysis's declared bounds before the work runs
// (the seed's accounting ledger).
//
// The ledger owns an allowance (PlanningOptions) and the totals used so far. A charge is admitted
// when, for every dimension, used + charge <= allowance (so allowance == charge admits and
// charge - 1 refuses), its workspace is <= the workspace allowance, and the retained storage fits.
// A refusal, or a failure reported during the work (MarkExhausted), makes the outcome terminal:
// kExhausted, after which every charge fails with a distinct kFailedPrecondition
// "TerminalWorkOutcome". One ledger per compilation; not thread-safe.
#ifndef ACCY_SRC_PASSES_WORK_LEDGER_H_
#define ACCY_SRC_PASSES_WORK_LEDGER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "accy/status.h"
#include "src/passes/planning_options.h"
#include "src/passes/work_contract.h"

namespace accy::passes {

// kOpen admits charges; kExhausted is terminal (a refused charge or a failed piece of work).
enum class WorkOutcome : uint8_t { kOpen, kExhausted };

// One admitted charge, in admission order (for diagnostics and tests).
struct WorkReceipt {
  std::string name;
  uint32_t version = 1;
  WorkBounds bounds;
};

class WorkLedger {
 public:
  // A ledger granting `options`' allowances (defaults: unlimited).
  explicit WorkLedger(const PlanningOptions& options = PlanningOptions());
  WorkLedger(const WorkLedger&) = delete;
  WorkLedger& operator=(const WorkLedger&) = delete;

  // Admits `bounds` for `identity` (adds them to used()) or refuses them. Errors:
  // kFailedPrecondition "TerminalWorkOutcome: ..." when the outcome is already kExhausted;
  // kResourceExhausted naming the identity and the first dimension that ran out (structural_visits,
  // input_bytes, analysis_computations, allocation_capacity, workspace_bytes,
  // retained_storage_bytes) when refused, which also makes the outcome kExhausted.
  Status Charge(const WorkIdentity& identity, const WorkBounds& bounds);

  // kOk while open; the TerminalWorkOutcome error Charge would return once exhausted. Lets a
  // caller refuse before spending time on an estimate.
  Status CheckOpen(const WorkIdentity& identity) const;

  // Records that work failed after being admitted (or its estimate failed): the outcome becomes
  // kExhausted. The first cause is kept; later calls do not replace it.
  void MarkExhausted(const Status& cause);

  WorkOutcome outcome() const { return outcome_; }
  bool exhausted() const { return outcome_ == WorkOutcome::kExhausted; }
  // The status that made the ledger exhausted (OK while open).
  const Status& terminal_cause() const { return terminal_cause_; }

  // Totals of admitted charges per dimension (counts and bytes as in WorkVector).
  const WorkVector& used() const { return used_; }
  const WorkVector& allowance() const { return options_.allowance; }
  // Largest workspace_bytes of any admitted charge, in bytes.
  uint64_t peak_workspace_bytes() const { return peak_workspace_bytes_; }
  uint64_t workspace_allowance() const { return options_.workspace_allowance; }
  // Sum of retained_storage_bytes of admitted charges, in bytes.
  uint64_t retained_storage_bytes() const { return retained_storage_bytes_; }
  uint64_t retained_storage_allowance() const { return options_.retained_storage_allowance; }
  const std::vector<WorkReceipt>& receipts() const { return receipts_; }
  // The options the ledger was made with (analyses read planning switches such as
  // enable_fusion from here: one ledger per compilation).
  const PlanningOptions& options() const { return options_; }

 private:
  PlanningOptions options_;
  WorkVector used_;
  uint64_t peak_workspace_bytes_ = 0;
  uint64_t retained_storage_bytes_ = 0;
  WorkOutcome outcome_ = WorkOutcome::kOpen;
  Status terminal_cause_;
  std::vector<WorkReceipt> receipts_;
};

}  // namespace accy::passes

#endif  // ACCY_SRC_PASSES_WORK_LEDGER_H_
