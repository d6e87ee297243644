// Fusion planning: which ops of a function run together as one kernel (a fusion cluster), and
// which broadcast_in_dim ops are elided (consumers read the input through index arithmetic).
// The schedule planner turns each cluster into one work item; FusionPlanAnalysis
// (fusion_analysis.h) caches the plan. PlanFusion reads a verified function it does not own and
// allocates the FusionPlan and all scratch from the std::pmr resource it is given. A FusionPlan
// is immutable once built and may be read from many threads.
#ifndef ACCY_SRC_FUSION_FUSION_PLAN_H_
#define ACCY_SRC_FUSION_FUSION_PLAN_H_

#include <cstdint>
#include <memory_resource>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "src/passes/work_contract.h"

namespace accy {

// Cluster kinds (docs/work_items.md); the schedule planner maps them to work items
// elementwise_fusion, dot_general, reduction, row_pipeline, flash_attention, convolution and
// reduce_window.
inline constexpr int64_t kFlashAttentionMaxValueDim = 8192;

enum class ClusterKind : uint8_t {
  kElementwise,
  kDotEpilogue,
  kReductionInput,
  kRowPipeline,
  kFlashAttention,
  kConvolutionEpilogue,
  kReduceWindowEpilogue,
};
// "elementwise", "dot_epilogue", "reduction_input", "row_pipeline", "flash_attention",
// "convolution_epilogue", "reduce_window_epilogue".
std::string_view ClusterKindName(ClusterKind kind);

// The rules PlanFusion applies (each cluster has at least two ops; every op of a cluster except
// its root has all its uses inside the cluster, so only the root's result leaves the kernel):
//  1. Same iteration space: a chain or diamond of fusable elementwise ops with equal result dims
//     is one kElementwise cluster (an add feeding a mul; shared -> left, right -> product).
//  2. No escaping intermediates: an op whose result is also returned, used by an op outside the
//     cluster, or used inside a nested region is not fused into its consumers; it ends its own
//     cluster (as that cluster's root) or stays a single op for the planner (elementwise_single).
//  3. No fusion across a broadcast: broadcast_in_dim is never a cluster member, so the producer
//     of its input is a separate item and the consumer cluster depends on it.
//  4. kDotEpilogue: a dot_general plus the same-dims elementwise ops computed from its result
//     (bias add through a broadcast, tanh/logistic/maximum-with-zero activation, scaling). The
//     dot_general is the latest one the root is computed from through same-dims elementwise
//     ops; ops not computed from it stay out. If it cannot join (its result is read elsewhere),
//     the root's cluster is plain kElementwise; two dot_generals never share a cluster here.
//     The same with a convolution in the dot_general's place is a kConvolutionEpilogue (batch
//     norm's affine, relu, a residual add after a convolution). The same with a one-result
//     reduce_window is a kReduceWindowEpilogue (JAX's average pool: the divide by the window
//     size, or by a reduce_window of ones, after a reduce_window add); the reduce_window's
//     operands are never fused into it (its producers are not recomputed per window), and a
//     reduce_window of a constant (the ones' window counts) is no source.
//  5. kReductionInput: a reduce (the root) plus the elementwise ops producing its inputs, all of
//     the inputs' dims (exp(x) feeding a reduce-sum); init values are never fused.
//  6. kRowPipeline: ops that keep rows independent, rooted at an elementwise op of dims F:
//     reduces over the last dim only (body add, maximum or minimum, on i1 also or and and;
//     F to F without its last dim), elementwise ops of dims F or F-without-last-dim, joined
//     through row broadcasts (F-without-last-dim to F, broadcast_dimensions 0..rank-2,
//     elided); kept only when it
//     holds a reduce (softmax, log-softmax, layer norm, RMS norm). It is tried before rule 1.
//  7. kFlashAttention: dot_general(Q, K) -> multiply (or divide) by a scale (a constant or a
//     broadcast of a rank-0 value) -> optional add of a mask -> softmax over the last dim
//     (reduce max, subtract, exp, reduce sum, divide) -> dot_general(P, V), where Q·K has b
//     batching dims and one free and one contracted dim on each side, in any order (the kernel
//     reads Q and K through strides: [batch, seq, heads, dim] as JAX writes it needs no copy),
//     P·V batches over P's leading dims 0..b-1 and contracts P's last dim, and V's free dim (the
//     value dim) is its last (V's batching and key dims in any order); V·P, as JAX's einsum
//     writes it, becomes P·V in canonicalize-attention-layouts; there is at least one key; the element type
//     is a float type and P·V's last dim (the value dim) is at most kFlashAttentionMaxValueDim
//     (the kernel keeps one output row on its stack).
//  8. Elision: a broadcast_in_dim of the function's top level is elided when it has uses and
//     every one is by a fusable elementwise op of the top level (a cluster member, or a single
//     elementwise op, which reads through index arithmetic too); one that is returned or used
//     by any other op (dot_general, reduce, shape ops, nested regions) is materialized.
//  9. Scope: only ops outside opaque regions (RegionsAreOpaque) are clustered, never ops of
//     reduce bodies, scatter update computations or while cond/body; a cluster stays in one block.
// 10. Order: roots are tried from the last op of a pre-order walk back to the first. A
//     dot_general root tries rule 7; an elementwise root tries rule 6 (only when a row
//     broadcast or rank-0 row value can reach it), then rule 4, then rule 1; a reduce root tries
//     rule 5. An op joins at most one cluster.
// 11. Work cap: an op joins at most kMaxMemberships (8) growth attempts besides its own (most
//     ops join one to three); past that it is left out. This keeps PlanFusion's work
//     O((n + e) log n) for n ops and e operand uses, as EstimateFusionPlan declares.
// 12. Size cap: a cluster stops growing at FusionPlanner::kMaxClusterOps (128) ops, its root
//     and the 127 latest ops it reached; the ops before them start clusters of their own. (The
//     JIT's compile time grows quadratically with a kernel's loop body: a hostile or unrolled
//     chain of thousands of elementwise ops would otherwise stall Compile.)

// One fusion cluster: its ops in program (topological) order; the last one is the root, the
// only op whose result is read outside the cluster. Elided broadcasts are not listed in `ops`.
struct FusionCluster {
  using allocator_type = std::pmr::polymorphic_allocator<const Operation*>;

  FusionCluster(ClusterKind kind, const allocator_type& alloc) : kind(kind), ops(alloc) {}
  FusionCluster(FusionCluster&& other, const allocator_type& alloc)
      : kind(other.kind), ops(std::move(other.ops), alloc) {}
  FusionCluster(FusionCluster&& other) noexcept = default;

  ClusterKind kind;
  std::pmr::vector<const Operation*> ops;
  // The last op (null only for an empty cluster, which PlanFusion never makes).
  const Operation* root() const { return ops.empty() ? nullptr : ops.back(); }
};

// The fusion plan of one function. Built by PlanFusion; read-only afterwards.
class FusionPlan {
 public:
  using allocator_type = std::pmr::polymorphic_allocator<>;
  explicit FusionPlan(const allocator_type& alloc);
  FusionPlan(const FusionPlan&) = delete;
  FusionPlan& operator=(const FusionPlan&) = delete;

  // Ordered by the position of each cluster's root in a pre-order walk of the function.
  const std::pmr::vector<FusionCluster>& clusters() const { return clusters_; }
  // Elided broadcast_in_dim ops, in pre-order walk order.
  const std::pmr::vector<const Operation*>& elided() const { return elided_; }
  // O(log n) lookups by op address.
  bool IsElided(const Operation* op) const;
  // The cluster holding `op`, or null.
  const FusionCluster* ClusterOf(const Operation* op) const;
  // Structural visits PlanFusion made for this plan (at most EstimateFusionPlan's
  // structural_visits for the same function).
  uint64_t visits() const { return visits_; }

  // One line per cluster ("elementwise: add, multiply"), then "elided: broadcast_in_dim, ...".
  std::string ToText() const;

 private:
  friend class FusionPlanner;
  std::pmr::vector<FusionCluster> clusters_;
  std::pmr::vector<const Operation*> elided_;
  std::pmr::vector<const Operation*> elided_by_address_;  // sorted, for IsElided
  // (member op, position in clusters_) sorted by op address, for ClusterOf.
  std::pmr::vector<std::pair<const Operation*, uint32_t>> member_index_;
  uint64_t visits_ = 0;
};

// Switches of PlanFusion.
struct FusionOptions {
  // false: the plan is empty (no clusters, no elided broadcasts), so the schedule planner makes
  // every op its own work item and materializes every broadcast_in_dim: the unfused baseline
  // that EngineOptions::enable_fusion = false asks for. Default true (the rules above).
  bool enable_fusion = true;
};

// Plans the fusion of `function` (a verified function) by the rules above. The plan and all
// scratch come from `resource`; the FusionPlan object itself is constructed there too, and the
// caller destroys it with std::pmr::polymorphic_allocator<>(resource).delete_object(plan).
// Errors: kResourceExhausted when `resource` refuses an allocation (nothing leaks: everything
// allocated so far is given back), kOutOfRange when the function has 2^30 ops or more.
StatusOr<FusionPlan*> PlanFusion(const Function& function, std::pmr::memory_resource* resource,
                                 const FusionOptions& options = {});

// The bounds PlanFusion declares for `function`, from its Census only: structural visits, input
// bytes read (attributes), one computation, and bytes (workspace = everything PlanFusion
// allocates, alignment padding included, so a monotonic buffer of that size suffices;
// retained = the FusionPlan object and its arrays). kOutOfRange "WorkOverflow: ..." on overflow.
StatusOr<passes::WorkBounds> EstimateFusionPlan(const Function& function);
// The same from the function's census (Census::Inspect of `function`).
StatusOr<passes::WorkBounds> EstimateFusionPlanFromCensus(const passes::Census& census);

// True for ops the planner may fuse or run as elementwise_single: IsElementwise ops (ir.h:
// unary, binary, ternary, same-width bitcast_convert) with one result.
bool IsFusableElementwiseOp(const Operation& op);

// True for ops whose regions belong to the op itself (reduce bodies, scatter update
// computations, while cond/body): walks for work items do not enter them, and ops inside are
// part of the enclosing op, never their own work item or cluster member.
bool RegionsAreOpaque(const Operation& op);

}  // namespace accy

#endif  // ACCY_SRC_FUSION_FUSION_PLAN_H_
