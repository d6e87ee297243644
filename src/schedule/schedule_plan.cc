// SchedulePlan accessors, its work contract, and its text / Graphviz renderings.
#include "src/schedule/schedule_plan.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <optional>

#include "absl/strings/str_join.h"
#include "src/analysis/shape_layout_analysis.h"
#include "src/fusion/fusion_plan.h"
#include "kernels/kernel_catalog.h"
#include "src/util/str_cat.h"

namespace accy {

std::string_view WorkKindName(WorkKind kind) {
  switch (kind) {
    case WorkKind::kElementwiseSingle:
      return "elementwise_single";
    case WorkKind::kElementwiseFusion:
      return "elementwise_fusion";
    case WorkKind::kShape:
      return "shape";
    case WorkKind::kDotGeneral:
      return "dot_general";
    case WorkKind::kReduction:
      return "reduction";
    case WorkKind::kKernelCall:
      return "kernel_call";
    case WorkKind::kRowPipeline:
      return "row_pipeline";
    case WorkKind::kIterate:
      return "iterate";
    case WorkKind::kFlashAttention:
      return "flash_attention";
    case WorkKind::kScan:
      return "scan";
    case WorkKind::kConvolution:
      return "convolution";
    case WorkKind::kTriangularSolve:
      return "triangular_solve";
    case WorkKind::kLapack:
      return "lapack";
    case WorkKind::kRngBitGenerator:
      return "rng_bit_generator";
    case WorkKind::kCollective:
      return "collective";
    case WorkKind::kReduceWindow:
      return "reduce_window";
  }
  return "unknown";
}

namespace {

// The op table's work column names WorkKind enumerators (`using enum`) or one of these two.
namespace op_table_work {
using enum WorkKind;
constexpr LoneOpPlan kNoItem{LoneOpPlan::Mode::kNoItem};
constexpr LoneOpPlan kNoLowering{LoneOpPlan::Mode::kNoLowering};
constexpr LoneOpPlan Plan(WorkKind kind) { return {LoneOpPlan::Mode::kItem, kind}; }
constexpr LoneOpPlan Plan(LoneOpPlan plan) { return plan; }

constexpr LoneOpPlan kPlans[] = {
#define ACCY_OP(kind, name, category, operands, results, classes, regions, pure, commutative, \
                work, rule, evaluate, print)                                                   \
  Plan(work),
#include "accy/ops.def"
#undef ACCY_OP
};
static_assert(std::size(kPlans) == kNumOpKinds, "one op table row per OpKind");
}  // namespace op_table_work

}  // namespace

LoneOpPlan PlanForLoneOp(OpKind kind) {
  const auto index = static_cast<size_t>(kind);
  return index < std::size(op_table_work::kPlans) ? op_table_work::kPlans[index]
                                                  : op_table_work::kNoLowering;
}

uint64_t ResourceEstimate::ElementOpsPerKiB() const {
  if (static_total_bytes == 0) return 0;
  unsigned __int128 scaled = static_cast<unsigned __int128>(estimated_element_ops) * 1024;
  unsigned __int128 per_kib = scaled / static_total_bytes;
  return per_kib > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(per_kib);
}

SchedulePlan::SchedulePlan(std::pmr::memory_resource* resource)
    : items_(resource), root_index_(resource) {}

const WorkItem* SchedulePlan::GetWorkForRoot(const Operation* root) const {
  if (root == nullptr || root->id() < 0 || static_cast<size_t>(root->id()) >= root_index_.size()) {
    return nullptr;
  }
  int64_t position = root_index_[static_cast<size_t>(root->id())];
  if (position < 0 || items_[static_cast<size_t>(position)].root != root) return nullptr;
  return &items_[static_cast<size_t>(position)];
}

namespace {

// Bytes of one allocation of `count` objects of `size`, plus worst-case alignment padding.
constexpr uint64_t kAlignmentSlack = 64;

StatusOr<uint64_t> ArrayBytes(uint64_t count, uint64_t size) {
  ACCY_ASSIGN_OR_RETURN(uint64_t bytes, passes::WorkMul(count, size));
  return passes::WorkAdd(bytes, kAlignmentSlack);
}

}  // namespace

StatusOr<passes::WorkBounds> EstimateSchedulePlan(const Function& function) {
  ACCY_ASSIGN_OR_RETURN(passes::Census census, passes::Census::Inspect(function));
  return EstimateSchedulePlanFromCensus(census);
}

StatusOr<passes::WorkBounds> EstimateSchedulePlanFromCensus(const passes::Census& census) {
  using passes::WorkAdd;
  using passes::WorkMul;
  const uint64_t n = census.operations;  // items, roots and op numbers are all <= n
  const uint64_t p = census.operands;    // operand uses: bounds edges and scratch lists
  // Every array PlanSchedule allocates (schedule_planner.cc), each with alignment slack.
  const uint64_t arrays[][2] = {
      {1, sizeof(SchedulePlan)},
      {n, sizeof(WorkItem)},                                // items_
      {census.op_ids, 1},                                   // claimed_
      {census.op_ids, 1},                                   // has_item_
      {p, sizeof(const Value*)},                            // scratch_values_
      {p, sizeof(int64_t)},                                 // scratch_items_
      {census.value_ids, sizeof(int64_t)},                  // output_to_item
      {n, sizeof(int64_t)},                                 // indegree
      {n + 1, sizeof(int64_t)},                             // out_offsets
      {p, sizeof(int64_t)},                                 // out_edges
      {n, sizeof(int64_t)},                                 // fill
      {n, sizeof(int64_t)},                                 // heap
      {n, sizeof(int64_t)},                                 // position
      {census.op_ids, sizeof(int64_t)},                     // root_index_
      {n, sizeof(int64_t)},                                 // item_output_id_
      {n, sizeof(int64_t)},                                 // item_root_id_
      {n + 1, sizeof(int64_t)},                             // input_begin_
      {p, sizeof(int64_t)},                                 // input_ids_
      {p, sizeof(const Value*)},                            // broadcast_inputs_
      {n, sizeof(const Operation*)},                        // returns_
  };
  uint64_t bytes = 0;
  for (const auto& array : arrays) {
    ACCY_ASSIGN_OR_RETURN(uint64_t array_bytes, ArrayBytes(array[0], array[1]));
    ACCY_ASSIGN_OR_RETURN(bytes, WorkAdd(bytes, array_bytes));
  }
  // Per item: its ops list (all items together hold at most n ops) and its dependency list (at
  // most one entry per operand use), each one allocation with slack.
  ACCY_ASSIGN_OR_RETURN(uint64_t item_lists, WorkMul(n, 2 * kAlignmentSlack));
  ACCY_ASSIGN_OR_RETURN(uint64_t op_lists, WorkMul(n, sizeof(const Operation*)));
  ACCY_ASSIGN_OR_RETURN(uint64_t dep_lists, WorkMul(p, sizeof(int64_t)));
  ACCY_ASSIGN_OR_RETURN(bytes, WorkAdd(bytes, item_lists));
  ACCY_ASSIGN_OR_RETURN(bytes, WorkAdd(bytes, op_lists));
  ACCY_ASSIGN_OR_RETURN(bytes, WorkAdd(bytes, dep_lists));

  // Visits: each op, operand and value is touched a bounded number of times, each touch costing
  // at most one binary search (log2 n + 1 probes); sorting is n log n; kernel_calls scan the
  // catalog.
  const uint64_t log_n = static_cast<uint64_t>(std::bit_width(n + 1)) + 1;
  ACCY_ASSIGN_OR_RETURN(uint64_t touches, WorkAdd(n, p));
  ACCY_ASSIGN_OR_RETURN(touches, WorkAdd(touches, census.values));
  ACCY_ASSIGN_OR_RETURN(touches, WorkAdd(touches, 1));
  ACCY_ASSIGN_OR_RETURN(uint64_t visits, WorkMul(touches, log_n));
  ACCY_ASSIGN_OR_RETURN(visits, WorkMul(visits, 16));
  ACCY_ASSIGN_OR_RETURN(uint64_t catalog, WorkMul(n, kernels::CatalogDescriptors().size()));
  ACCY_ASSIGN_OR_RETURN(visits, WorkAdd(visits, catalog));

  passes::WorkBounds bounds;
  bounds.work.structural_visits = visits;
  bounds.work.input_bytes = census.input_bytes;
  bounds.work.analysis_computations = 1;
  bounds.work.allocation_capacity = bytes;
  bounds.workspace_bytes = bytes;
  bounds.retained_storage_bytes = bytes;
  return bounds;
}

std::string SchedulePlan::ToText() const {
  std::string out;
  for (size_t pos = 0; pos < items_.size(); ++pos) {
    const WorkItem& item = items_[pos];
    std::vector<std::string> ops;
    for (const Operation* op : item.ops) ops.emplace_back(op->name());
    const TensorType& type = item.output_value->type();
    // The composites the item's ops were inlined from (kCompositeAttribute), first seen first.
    std::vector<std::string> composites;
    for (const Operation* op : item.ops) {
      std::optional<std::string> name = op->GetString(kCompositeAttribute);
      if (name.has_value() &&
          std::find(composites.begin(), composites.end(), *name) == composites.end()) {
        composites.push_back(*std::move(name));
      }
    }
    out += StrCat("#", pos, " id=", item.id, " ", WorkKindName(item.kind), " ops=[",
                  absl::StrJoin(ops, ","), "] ", type.ToString(),
                  " read=", item.resources.static_read_bytes,
                  "B write=", item.resources.static_write_bytes,
                  "B element_ops=", item.resources.estimated_element_ops, " deps=[",
                  absl::StrJoin(item.dependencies, ","), "]",
                  composites.empty() ? "" : StrCat(" composites=[", absl::StrJoin(composites, ","), "]"),
                  "\n");
  }
  return out;
}

std::string SchedulePlan::ToDot() const {
  std::string out = "digraph schedule {\n  node [shape=box];\n";
  for (size_t pos = 0; pos < items_.size(); ++pos) {
    const WorkItem& item = items_[pos];
    std::vector<std::string> ops;
    for (const Operation* op : item.ops) ops.emplace_back(op->name());
    out += StrCat("  item", pos, " [label=\"#", pos, " ", WorkKindName(item.kind), "\\n",
                  absl::StrJoin(ops, " "), "\\n", item.output_value->type().ToString(), "\"];\n");
  }
  for (size_t pos = 0; pos < items_.size(); ++pos) {
    for (int64_t dep : items_[pos].dependencies) out += StrCat("  item", dep, " -> item", pos, ";\n");
  }
  return out + "}\n";
}

}  // namespace accy
