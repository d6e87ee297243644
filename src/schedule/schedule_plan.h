// Schedule planning: the ordered work items of one function (the seed's schedule pass,
// seed/schedule_pass.zig.txt, reproduced number for number; docs/schedule_contract.md).
//
// PlanSchedule claims fusion clusters first, then standalone ops in a pre-order walk (not into
// opaque regions), then materialized broadcasts; estimates each item's resources; and orders the
// items producer-before-consumer, lowest original index first among ready items, in
// O((V + E) log V). Everything is allocated from the given std::pmr resource. A SchedulePlan is
// immutable once built and may be read from many threads.
#ifndef ACCY_SRC_SCHEDULE_SCHEDULE_PLAN_H_
#define ACCY_SRC_SCHEDULE_SCHEDULE_PLAN_H_

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_contract.h"

namespace accy {

class FusionPlan;
class ShapeLayoutAnalysis;

// Work item kinds (seed `ScheduleWorkKind`; convolution, reduce_window, triangular_solve,
// rng_bit_generator and lapack are accy's, each with a kind of its own so its element-op estimate
// and binding are looked up by kind).
enum class WorkKind : uint8_t {
  kElementwiseSingle,
  kElementwiseFusion,
  kShape,
  kDotGeneral,
  kReduction,
  kKernelCall,
  kRowPipeline,
  kIterate,
  kFlashAttention,
  kScan,
  kConvolution,
  kTriangularSolve,  // always a library item (kernels/eigen_triangular_solve.cc)
  kRngBitGenerator,  // always a library item (kernels/random123_rng_bit_generator.cc)
  kLapack,           // always a library item (kernels/lapack_kernels.cc)
  kCollective,       // a collective op across processes (src/runtime/collective_kernel.h)
  // A reduce_window and its elementwise epilogue (a reduce_window_epilogue cluster), or a lone
  // reduce_window: oneDNN pooling_forward where it maps exactly (kernels/onednn_pooling.cc),
  // else the JIT (jit/window_emitter.cc).
  kReduceWindow,
};
// "elementwise_single", "elementwise_fusion", "shape", ...
std::string_view WorkKindName(WorkKind kind);

// What the schedule does with a lone (unfused) op of one kind: the op table's work column
// (include/accy/ops.def). Ops inside fusion clusters are planned by their cluster's kind instead.
struct LoneOpPlan {
  enum class Mode : uint8_t {
    kItem,        // one work item of `kind`
    kNoItem,      // never an item of its own (constant: the constant area; return: the results)
    kNoLowering,  // the engine cannot run it: planning fails with kUnimplemented
  };
  Mode mode = Mode::kNoLowering;
  WorkKind kind = WorkKind::kElementwiseSingle;  // meaningful for kItem only
};
// The row of `kind`; kNoLowering for a value outside OpKind. Refinements that depend on the op
// rather than its kind (bitcast_convert between widths is kShape, broadcast_in_dim is planned on
// demand, a kernel_call needs one result) are PlanSchedule's.
LoneOpPlan PlanForLoneOp(OpKind kind);

// Static resource estimate of one work item (seed `ScheduleResourceEstimate`). Byte sums
// saturate at UINT64_MAX; `static_bytes_complete` is false when a size is unknown or overflows.
struct ResourceEstimate {
  uint64_t element_count = 0;  // reduce: the input's element count; else the output's
  uint64_t element_size = 0;   // bytes per output element
  uint64_t op_count = 0;
  uint64_t external_input_value_count = 0;  // distinct values read from outside the item
  uint64_t external_operand_count = 0;      // operand uses reading from outside the item
  uint64_t chain_operand_count = 0;         // operand uses produced inside the item
  uint64_t static_read_bytes = 0;
  uint64_t static_write_bytes = 0;
  uint64_t static_total_bytes = 0;
  bool static_bytes_complete = true;
  uint64_t estimated_element_ops = 0;

  // floor(estimated_element_ops * 1024 / static_total_bytes) (saturating), 0 when no bytes.
  uint64_t ElementOpsPerKiB() const;
  bool operator==(const ResourceEstimate&) const = default;
};

// One work item: a kernel the executor runs.
struct WorkItem {
  int64_t id = 0;  // creation order (stable across reordering)
  WorkKind kind = WorkKind::kElementwiseSingle;
  const Operation* root = nullptr;
  std::pmr::vector<const Operation*> ops;  // topological order; root last for clusters
  const Value* output_value = nullptr;
  ElementType dtype = ElementType::kF32;
  int64_t rank = 0;
  uint64_t element_count = 0;
  ResourceEstimate resources;
  // Positions (in SchedulePlan::items) of the items this one reads from, ascending.
  std::pmr::vector<int64_t> dependencies;

  explicit WorkItem(std::pmr::memory_resource* resource) : ops(resource), dependencies(resource) {}
  int64_t op_count() const { return static_cast<int64_t>(ops.size()); }
};

// The ordered work items of a function and the seed's counters.
class SchedulePlan {
 public:
  explicit SchedulePlan(std::pmr::memory_resource* resource);

  // The analysis contract (AnalysisCache): identity "accy-schedule-plan" v1 and its estimate.
  static const passes::WorkContract& Contract();
  // Computes the plan for `function` with the shape/layout analysis and fusion plan from `ctx`.
  static StatusOr<SchedulePlan*> Compute(passes::AnalysisContext& ctx, const Function& function);

  // In dependency order.
  const std::pmr::vector<WorkItem>& items() const { return items_; }
  int64_t work_item_count() const { return static_cast<int64_t>(items_.size()); }
  // The item whose root is `root`, or null.
  const WorkItem* GetWorkForRoot(const Operation* root) const;

  int64_t single_work_count() const { return single_work_count_; }
  int64_t fusion_work_count() const { return fusion_work_count_; }
  int64_t kernel_call_work_count() const { return kernel_call_work_count_; }
  int64_t scheduled_op_count() const { return scheduled_op_count_; }
  uint64_t total_static_elements() const { return total_static_elements_; }

  // One line per item: id, kind, ops, dtype, shape, bytes, element ops, dependencies.
  std::string ToText() const;
  // Graphviz DOT: items as nodes (labelled by kind), dependencies as edges.
  std::string ToDot() const;

 private:
  friend class SchedulePlanner;
  std::pmr::vector<WorkItem> items_;
  std::pmr::vector<int64_t> root_index_;  // Operation::id() -> position in items_ (-1: none)
  int64_t single_work_count_ = 0;
  int64_t fusion_work_count_ = 0;
  int64_t kernel_call_work_count_ = 0;
  int64_t scheduled_op_count_ = 0;
  uint64_t total_static_elements_ = 0;
};

// Plans `function` from its analyses, allocating the plan and all scratch from `resource`.
// Errors: kOutOfRange "WorkOverflow: ..." when the total static element count overflows 64 bits;
// kInvalidArgument "CyclicScheduleDependency" when items depend on each other in a cycle;
// kUnimplemented "op %<result id> (<name>) has no lowering: ..." for an op the schedule cannot
// give a work item (PlanForLoneOp says kNoLowering, or a kernel_call of other than one result).
StatusOr<SchedulePlan*> PlanSchedule(const Function& function, const ShapeLayoutAnalysis& shapes,
                                     const FusionPlan& fusion, std::pmr::memory_resource* resource);
// The same with the function's census (Census::Inspect of `function`) given, as the analysis
// cache has it: no walk of the IR to count it again.
StatusOr<SchedulePlan*> PlanSchedule(const Function& function, const passes::Census& census,
                                     const ShapeLayoutAnalysis& shapes, const FusionPlan& fusion,
                                     std::pmr::memory_resource* resource);

// The bounds PlanSchedule declares for `function` (true upper bounds of its visits and bytes).
StatusOr<passes::WorkBounds> EstimateSchedulePlan(const Function& function);
// The same from the function's census (what the AnalysisCache uses: one census per function).
StatusOr<passes::WorkBounds> EstimateSchedulePlanFromCensus(const passes::Census& census);

}  // namespace accy

#endif  // ACCY_SRC_SCHEDULE_SCHEDULE_PLAN_H_
