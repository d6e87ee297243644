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

// Whether `reduce`'s sum adds its terms in f32 lanes within each chunk of the row (each of the
// emitter's 64 lanes adds 8 terms of a 512-column chunk) before they go into the f64 lanes,
// because its terms and its init value (a constant) are >= 0 (or NaN / +inf) and its result is
// only used where a relative error stays a relative error. No cancellation: a lane's chunk sum
// is within 7 roundings, 3.5 f32 ulp, of its exact value, and so is the row's sum at worst (one
// lane carrying the row). Two kinds of sum qualify:
// - f32 exp results whose sum is not taken a log of (softmax's denominator; a division passes
//   the error on as relative error; log(sum) would turn it into absolute error, which is most
//   of the result where one term dominates, so log-softmax keeps the f64 lanes);
// - squares a * a of f32, f16 or bf16 values (layer norm's sum of (x - mean)^2, RMS norm's sum
//   of x^2) whose sum reaches only scalings by non-negative constants (multiply, divide as the
//   dividend, add: 1 / N, epsilon), layout changes and converts on its way to sqrt, rsqrt or
//   the divisor of a divide. A subtraction on the way (E[x^2] - E[x]^2, the one-pass variance)
//   would turn the relative error into cancellation, so that sum keeps the f64 lanes.
// Sums of signed terms (the mean's) always keep the f64 lanes. The f64 lanes cost two converts
// and two f64 adds per 8 terms at 8 f32 lanes per vector, the f32 lanes one add: about 6 of
// softmax's ~21 cycles per 16 floats on Zen 4 (llvm-mca); layer norm [512, 1024] in cache on
// Zen 5 went from 0.133 to 0.116 ms capped to AVX2 and from 0.099 to 0.087 ms at AVX-512.
// Typically a lane's partial sum is about 1/128 of the row's, so the f32 total is the f64
// lanes' one except near a rounding tie, where it is 1 ulp away (docs/numerics.md "Row
// pipelines").
bool ChunkSummedInF32(const RowReduce& reduce);

}  // namespace accy::jit

#endif  // ACCY_JIT_ROW_PIPELINE_PLAN_H_
