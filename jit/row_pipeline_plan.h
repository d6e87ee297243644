// Internal to jit/: the LLVM-free analysis of a row_pipeline work item (cluster rule 6 of
// src/fusion/fusion_plan.h) that the row pipeline emitter turns into IR. Every value of the
// cluster lives once per element of a row ("full", dims F) or once per row ("row", F without
// the last dim); a value's depth is the longest chain of row reduces behind it, so a row needs
// depth(root) reduce passes and one output pass. Reads the work item and fusion plan (owned by
// the caller, which must outlive the plan); pure functions, thread-compatible.
#ifndef ACCY_JIT_ROW_PIPELINE_PLAN_H_
#define ACCY_JIT_ROW_PIPELINE_PLAN_H_

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"

namespace accy {
class FusionPlan;
struct WorkItem;
}  // namespace accy

namespace accy::jit {

// An external read: a buffer (or a folded one-element constant) addressed per row through
// `outer` strides over the row coordinates and per column through `column` (0: a row value).
struct RowAccess {
  int buffer = -1;
  const uint8_t* constant = nullptr;
  ElementType type = ElementType::kF32;
  std::vector<int64_t> outer;
  int64_t column = 0;
};

// Where one operand use comes from: a cluster member's result, or an access.
struct RowSource {
  const Value* member = nullptr;
  int access = -1;
};

// A row reduce of the cluster: its reducer and the pass that computes it.
struct RowReduce {
  const Operation* op = nullptr;
  OpKind reducer = OpKind::kAdd;
  ElementType type = ElementType::kF32;
  int pass = 0;
};

// The analysed cluster: members, their spaces and depths, sources of every operand use.
struct RowPlan {
  std::vector<int64_t> full_dims;  // F
  std::vector<int64_t> row_dims;   // F without the last dim
  int64_t rows = 0;
  int64_t columns = 0;
  std::set<const Operation*> members;
  std::map<const Value*, bool> is_full;  // member results
  std::map<const Value*, int> depth;     // member results
  std::vector<RowReduce> reduces;
  std::vector<RowAccess> accesses;
  std::map<std::pair<const Operation*, int64_t>, RowSource> sources;
  int passes = 0;  // depth of the root: reduce passes before the output pass
  std::vector<const Value*> inputs;  // the kernel's input buffers, in RowAccess::buffer order
};


// Analyses `item` (kind row_pipeline): shapes, spaces and depths of its members, the source of
// every operand use, the row reduces and their passes, the external reads and input buffers.
// Errors: kUnimplemented naming the work item, its root and the op or read the emitter cannot
// handle (another kind, a rank-0 root, a reduce that is not over the last dim with an add,
// maximum or minimum body, a row value read without a row broadcast, ...).
StatusOr<RowPlan> PlanRowPipeline(const WorkItem& item, const FusionPlan& fusion);

// The full ops of `item` needed (transitively) for `targets`, in program order; `cached`, when
// given, counts as known (it is read back instead of computed).
std::vector<const Operation*> FullOpsFor(const RowPlan& plan, const WorkItem& item,
                                         const std::vector<const Value*>& targets,
                                         const Value* cached = nullptr);

// The f32 exponential ops of the plan whose operand is known to be <= 0 or NaN: exp(a - m)
// where m is a row max reduce of the same a (a member or the same read), so a - m <= 0 for
// every element of the row, whatever the reduce's init (softmax's exp(x - max(x))). Each maps to
// its m (the reduce's result).
std::map<const Operation*, const Value*> NonPositiveExponentials(const RowPlan& plan);

}  // namespace accy::jit

#endif  // ACCY_JIT_ROW_PIPELINE_PLAN_H_
