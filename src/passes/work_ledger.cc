// WorkLedger admission (work_ledger.h).
#include "src/passes/work_ledger.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include "src/util/str_cat.h"

namespace accy::passes {
namespace {

// One cumulative dimension: name, used so far, the charge, the allowance.
struct Dimension {
  std::string_view name;
  uint64_t used;
  uint64_t charge;
  uint64_t allowance;
};

// True when used + charge <= allowance, without wrapping.
bool Fits(const Dimension& d) {
  return d.used <= d.allowance && d.charge <= d.allowance - d.used;
}

std::string Describe(const WorkIdentity& identity) {
  return StrCat("'", identity.name, "' v", identity.version);
}

}  // namespace

WorkLedger::WorkLedger(const PlanningOptions& options) : options_(options) {}

Status WorkLedger::CheckOpen(const WorkIdentity& identity) const {
  if (outcome_ == WorkOutcome::kOpen) return absl::OkStatus();
  return absl::FailedPreconditionError(
      StrCat("TerminalWorkOutcome: the work ledger is exhausted (",
             terminal_cause_.message(), "); refusing ", Describe(identity)));
}

Status WorkLedger::Charge(const WorkIdentity& identity, const WorkBounds& bounds) {
  ACCY_RETURN_IF_ERROR(CheckOpen(identity));
  const WorkVector& allowance = options_.allowance;
  const std::array<Dimension, 5> cumulative = {{
      {"structural_visits", used_.structural_visits, bounds.work.structural_visits,
       allowance.structural_visits},
      {"input_bytes", used_.input_bytes, bounds.work.input_bytes, allowance.input_bytes},
      {"analysis_computations", used_.analysis_computations, bounds.work.analysis_computations,
       allowance.analysis_computations},
      {"allocation_capacity", used_.allocation_capacity, bounds.work.allocation_capacity,
       allowance.allocation_capacity},
      {"retained_storage_bytes", retained_storage_bytes_, bounds.retained_storage_bytes,
       options_.retained_storage_allowance},
  }};
  std::optional<Status> refusal;
  for (const Dimension& d : cumulative) {
    if (Fits(d)) continue;
    refusal = absl::ResourceExhaustedError(
        StrCat("work charge for ", Describe(identity), " refused: ", d.name, " needs ", d.charge,
               " but ", d.used, " of the allowance of ", d.allowance, " is used"));
    break;
  }
  if (!refusal && bounds.workspace_bytes > options_.workspace_allowance) {
    refusal = absl::ResourceExhaustedError(
        StrCat("work charge for ", Describe(identity), " refused: workspace_bytes needs ",
               bounds.workspace_bytes, " but the workspace allowance is ",
               options_.workspace_allowance));
  }
  if (refusal) {
    MarkExhausted(*refusal);
    return *refusal;
  }
  used_.structural_visits += bounds.work.structural_visits;
  used_.input_bytes += bounds.work.input_bytes;
  used_.analysis_computations += bounds.work.analysis_computations;
  used_.allocation_capacity += bounds.work.allocation_capacity;
  retained_storage_bytes_ += bounds.retained_storage_bytes;
  peak_workspace_bytes_ = std::max(peak_workspace_bytes_, bounds.workspace_bytes);
  receipts_.push_back(WorkReceipt{std::string(identity.name), identity.version, bounds});
  return absl::OkStatus();
}

void WorkLedger::MarkExhausted(const Status& cause) {
  if (outcome_ == WorkOutcome::kExhausted) return;
  outcome_ = WorkOutcome::kExhausted;
  terminal_cause_ = cause.ok() ? absl::UnknownError("work failed without a status") : cause;
}

}  // namespace accy::passes
