// FusionPlanner: the internal worker behind PlanFusion (fusion_plan.h), shared by
// fusion_planner.cc (numbering, cluster growth, elision, the final plan) and fusion_patterns.cc
// (shape predicates and the flash attention matcher). One planner plans one function once; it
// owns only scratch arrays (from the caller's std::pmr resource) and is not thread-safe.
#ifndef ACCY_SRC_FUSION_FUSION_PLANNER_H_
#define ACCY_SRC_FUSION_FUSION_PLANNER_H_

#include <bit>
#include <cstdint>
#include <memory_resource>
#include <optional>
#include <span>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "src/fusion/fusion_plan.h"

namespace accy {

// Shape predicates of the row pipeline and flash attention rules (fusion_patterns.cc).
bool HasDims(const Value& value, std::span<const int64_t> dims);
// `op` is a reduce of one input of dims `full_dims` (rank >= 1) over the last dim only, whose
// body is one add/maximum/minimum, or on i1 one or/and, which count as maximum/minimum
// (`reducer`, when given, must match).
bool IsRowReduce(const Operation& op, std::span<const int64_t> full_dims,
                 std::optional<OpKind> reducer = std::nullopt);
// `op` is a broadcast_in_dim from `full_dims` without its last dim to `full_dims`, with
// broadcast_dimensions 0..rank-2 (one row value spread along the row).
bool IsRowBroadcast(const Operation& op, std::span<const int64_t> full_dims);
// `qk` is a dot_general rule 7 takes as Q·K for batch rank `batch`: on each side `batch`
// batching dims, one contracted dim and one free dim, in any order.
bool IsAttentionScoreDot(const Operation& qk, size_t batch);

class FusionPlanner {
 public:
  // Scratch arrays come from `resource`; each is sized once for the function's op count.
  FusionPlanner(const Function& function, std::pmr::memory_resource* resource);
  FusionPlanner(const FusionPlanner&) = delete;
  FusionPlanner& operator=(const FusionPlanner&) = delete;

  // Plans the function into `plan` (constructed in the same resource by the caller). May throw
  // std::bad_alloc from the resource; PlanFusion turns that into a status.
  Status Run(FusionPlan& plan);

  // EstimateFusionPlan: bounds mirroring every allocation and counted visit of Run.
  static StatusOr<passes::WorkBounds> Estimate(const Function& function);
  // The same from the function's census (what Estimate computes after Census::Inspect).
  static StatusOr<passes::WorkBounds> EstimateFromCensus(const passes::Census& census);

  static constexpr uint32_t kNone = UINT32_MAX;
  // Functions of more ops are refused (stamps and indices are 32-bit).
  static constexpr uint64_t kMaxOps = uint64_t{1} << 30;
  // Rule 11: how many growth attempts one op may join as a non-root member, in all.
  static constexpr uint8_t kMaxMemberships = 8;
  // Rule 12: ops in one cluster, at most. LLVM's loop vectorizer takes time quadratic in a loop
  // body's size (one elementwise cluster of 2,000 ops compiled in 10 s, 4,000 in 44 s, 8,000 in
  // over 120 s on Zen 5); the largest clusters of the shared models hold tens of ops.
  static constexpr size_t kMaxClusterOps = 128;
  // The flash attention matcher rejects an op with more uses than this (its ops have at most
  // two uses inside the pattern), so its use checks cost O(1).
  static constexpr size_t kFlashMaxUses = 4;

 private:
  enum class GrowMode : uint8_t { kElementwise, kEpilogue, kRow, kReduction };
  enum class Admit : uint8_t { kReject, kMember, kMemberStop, kMemberFirstOperand, kPassThrough };

  // A cluster accepted during the root loop; its ops are cluster_ops_[first, first + count).
  struct ClusterRecord {
    ClusterKind kind;
    uint32_t root;
    uint32_t first;
    uint32_t count;
  };
  // Bits of role_: what the later passes need to know of an op without reading it again.
  static constexpr uint8_t kRoleFusable = 1;    // IsFusableElementwiseOp
  // dot_general, convolution or one-result reduce_window (rule 4: an epilogue source)
  static constexpr uint8_t kRoleDot = 2;
  static constexpr uint8_t kRoleReduce = 4;     // reduce
  static constexpr uint8_t kRoleBroadcast = 8;  // broadcast_in_dim

  // Numbering: ops in a pre-order walk that does not enter opaque regions; fills order_, role_
  // and index_of_id_.
  void Number(const Block& block);
  // Index of `op` in the numbering, or kNone (ops inside opaque regions, detached ops).
  uint32_t IndexOf(const Operation* op);
  // Index of the op defining `value`, or kNone (block arguments, unnumbered ops).
  uint32_t ProducerIndex(const Value* value);
  // Numbered, in no accepted cluster, and in `block`.
  bool Available(uint32_t index, const Block* block) const;
  // Every use of every result of op `index` is by an op stamped in the current attempt.
  bool AllUsesInside(uint32_t index);

  // Starts a new attempt (stamps) rooted at `root`, which becomes the first member.
  void BeginAttempt(uint32_t root);
  void Stamp(uint32_t index) { member_stamp_[index] = attempt_; }
  bool Stamped(uint32_t index) const { return member_stamp_[index] == attempt_; }
  void PushProducer(const Value* value);
  uint32_t PopMax();

  // Grows the current attempt backwards from its root (see fusion_planner.cc); in kEpilogue
  // mode only ops computed from `dot` join, and the result says whether `dot` itself joined.
  bool Grow(GrowMode mode, std::span<const int64_t> dims, uint32_t dot = kNone);
  Admit Classify(uint32_t index, GrowMode mode, std::span<const int64_t> dims,
                 const Block* block, uint32_t dot) const;
  // Records members_ as an accepted cluster of `kind`.
  void Accept(ClusterKind kind);
  void PlanRoot(uint32_t index);
  // row_hint_ and dot_source_, in one pass over the ops in program order.
  void ComputeHints();
  // Rule 7; on success members_ holds the cluster (fusion_patterns.cc).
  bool MatchFlashAttention(uint32_t root);
  // Index of the available op of `kind` (in `block`) defining `value`, or kNone.
  uint32_t Def(const Value* value, OpKind kind, const Block* block);
  // A multiply/divide of a dot_general result by a scale; sets *dot. kNone when not.
  uint32_t MatchScale(const Value* value, const Block* block, uint32_t* dot);
  bool IsElidable(uint32_t index);
  void BuildPlan(FusionPlan& plan);

  // Cost convention for the visit counter: a heap push or pop counts 2 * log_ + 1.
  void CountHeapOp() { visits_ += 2 * log_ + 1; }

  const Function& function_;
  uint64_t visits_ = 0;
  uint64_t log_ = 1;  // bit_width(op count) + 1: heap depth bound
  uint32_t attempt_ = 0;

  std::pmr::vector<const Operation*> order_;  // numbered ops, pre-order
  std::pmr::vector<uint8_t> role_;            // kRole* bits per numbered op
  std::pmr::vector<uint32_t> index_of_id_;    // Operation::id() -> index in order_, or kNone
  std::pmr::vector<uint32_t> cluster_of_;     // accepted record, or kNone
  std::pmr::vector<uint8_t> memberships_;     // attempts joined as a non-root member (rule 11)
  std::pmr::vector<uint8_t> row_hint_;        // 1: a row attempt may succeed from this root
  std::pmr::vector<uint32_t> dot_source_;     // latest epilogue source (kRoleDot) computed
                                              // into it, or kNone
  std::pmr::vector<uint32_t> member_stamp_;   // == attempt_: in the current attempt
  std::pmr::vector<uint32_t> queued_stamp_;   // == attempt_: pushed in the current attempt
  std::pmr::vector<uint8_t> elided_mark_;     // 1: elided (final pass)
  std::pmr::vector<uint32_t> heap_;           // max-heap of op indices
  std::pmr::vector<uint32_t> members_;        // current attempt's members (pass-throughs not)
  std::pmr::vector<uint32_t> cluster_ops_;    // accepted clusters' members, program order
  std::pmr::vector<ClusterRecord> records_;   // accepted clusters, roots descending
};

}  // namespace accy

#endif  // ACCY_SRC_FUSION_FUSION_PLANNER_H_
