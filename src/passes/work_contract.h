// Work contracts: the declared bounds every pass and analysis states before it runs (the seed's
// `passes.pass.work` accounting). A WorkLedger (work_ledger.h) admits or refuses each charge.
//
// An estimate looks only at its input (a function's census), never at results of the work it
// bounds, and uses checked arithmetic: an overflow is a kOutOfRange status whose message starts
// with "WorkOverflow", never a wrap. Bounds must be true upper bounds: tests run each analysis
// over a fixed buffer of exactly `workspace_bytes` (std::pmr, no upstream) to prove it.
// All types here are plain values; thread-compatible.
#ifndef ACCY_SRC_PASSES_WORK_CONTRACT_H_
#define ACCY_SRC_PASSES_WORK_CONTRACT_H_

#include <cstdint>
#include <limits>
#include <string_view>

#include "accy/ir.h"
#include "accy/status.h"

namespace accy::passes {

// The dimensions a ledger accounts, each a count (visits, computations) or bytes.
struct WorkVector {
  uint64_t structural_visits = 0;      // IR nodes/edges visited (loop iterations, probes)
  uint64_t input_bytes = 0;            // bytes of IR payload read (constants, attributes)
  uint64_t analysis_computations = 0;  // analyses computed (1 per analysis run)
  uint64_t allocation_capacity = 0;    // bytes the work may allocate in all

  static WorkVector Uniform(uint64_t value) { return {value, value, value, value}; }
  static WorkVector Unlimited() { return Uniform(std::numeric_limits<uint64_t>::max()); }
  bool operator==(const WorkVector&) const = default;
};

// What one pass or analysis declares before it runs.
struct WorkBounds {
  WorkVector work;
  uint64_t workspace_bytes = 0;         // peak bytes live at once while it runs
  uint64_t retained_storage_bytes = 0;  // bytes its result keeps after it returns
  bool operator==(const WorkBounds&) const = default;
};

// Name and version of a pass or analysis; a contract change bumps the version. The name must
// outlive every cache and ledger that sees it (a string literal): the AnalysisCache keeps the view.
struct WorkIdentity {
  std::string_view name;
  uint32_t version = 1;
};

// Counts of a function's IR, the input every estimate is computed from (the seed's Census):
// every op (nested regions included), every value (results and block arguments), every operand
// use, attribute atoms (one per scalar attribute, one per list entry) and input bytes (constant
// payload bytes plus string attribute bytes). `regions` and `blocks` include the function body;
// `dims` is the sum of the ranks of every value (the dims an analysis copies per value).
struct Census {
  uint64_t operations = 0;
  uint64_t values = 0;
  uint64_t operands = 0;
  uint64_t atoms = 0;
  uint64_t input_bytes = 0;
  uint64_t regions = 0;
  uint64_t blocks = 0;
  uint64_t dims = 0;
  // Function::value_id_bound() and op_id_bound(): sizes of arrays indexed by Value::id() and
  // Operation::id() (at least `values` and `operations`).
  uint64_t value_ids = 0;
  uint64_t op_ids = 0;

  // Visits `function` once. kOutOfRange ("WorkOverflow: ...") if a count overflows.
  static StatusOr<Census> Inspect(const Function& function);
  bool operator==(const Census&) const = default;
};

// Checked arithmetic for estimates: kOutOfRange "WorkOverflow: <what>" on overflow.
StatusOr<uint64_t> WorkAdd(uint64_t a, uint64_t b);
StatusOr<uint64_t> WorkMul(uint64_t a, uint64_t b);

// A work contract: identity plus the estimate function. `estimate_from_census`, when set, must
// return what `estimate` returns for a function with that census; the AnalysisCache then inspects
// each function once and shares the census between every analysis it admits (one walk of the IR
// instead of one per estimate).
struct WorkContract {
  WorkIdentity identity;
  StatusOr<WorkBounds> (*estimate)(const Function& function) = nullptr;
  StatusOr<WorkBounds> (*estimate_from_census)(const Census& census) = nullptr;
};

}  // namespace accy::passes

#endif  // ACCY_SRC_PASSES_WORK_CONTRACT_H_
