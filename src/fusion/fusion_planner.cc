// FusionPlanner (fusion_planner.h): numbering, backward cluster growth, elision, the final plan,
// and the bounds that mirror them.
//
// Growth is backward from a root, in decreasing program order (a max-heap of op indices): an
// op's users all come after it, so when it is popped every user that can still join the cluster
// has already been decided, and "all uses inside" is final. Visits are counted as they happen
// (FusionPlan::visits) under the cost convention the estimate uses.
#include "src/fusion/fusion_planner.h"

#include <algorithm>
#include <functional>
#include <new>

#include "src/util/str_cat.h"

namespace accy {
namespace {

// Worst-case alignment padding of one allocation (monotonic buffers pad to the alignment).
constexpr uint64_t kAllocationSlack = 64;

// The value comes from a constant, directly or through broadcast_in_dim ops.
bool IsConstantDerived(const Value* value) {
  const Operation* def = value->defining_op();
  while (def != nullptr && def->kind() == OpKind::kBroadcastInDim) {
    def = def->operand(0)->defining_op();
  }
  return def != nullptr && def->kind() == OpKind::kConstant;
}

// Rule 4's sources: an op whose result an epilogue of elementwise ops may join. A reduce_window
// of a constant (an average pool's window counts, a reduce_window of ones) is none: the divide
// reading it belongs with the reduce_window of the data, even when that one comes first.
bool IsEpilogueSource(const Operation& op) {
  if (op.num_results() != 1) return false;
  if (op.kind() == OpKind::kDotGeneral || op.kind() == OpKind::kConvolution) return true;
  return op.kind() == OpKind::kReduceWindow && !IsConstantDerived(op.operand(0));
}

ClusterKind EpilogueClusterKind(const Operation& source) {
  switch (source.kind()) {
    case OpKind::kConvolution:
      return ClusterKind::kConvolutionEpilogue;
    case OpKind::kReduceWindow:
      return ClusterKind::kReduceWindowEpilogue;
    default:
      return ClusterKind::kDotEpilogue;
  }
}

}  // namespace

FusionPlanner::FusionPlanner(const Function& function, std::pmr::memory_resource* resource)
    : function_(function),
      order_(resource),
      role_(resource),
      index_of_id_(resource),
      cluster_of_(resource),
      memberships_(resource),
      row_hint_(resource),
      dot_source_(resource),
      member_stamp_(resource),
      queued_stamp_(resource),
      elided_mark_(resource),
      heap_(resource),
      members_(resource),
      cluster_ops_(resource),
      records_(resource) {}

void FusionPlanner::Number(const Block& block) {
  for (const auto& owned : block.operations()) {
    ++visits_;
    const Operation& op = *owned;
    // Sized for Function::op_id_bound() (every op of the function has a distinct id below it).
    ACCY_CHECK(order_.size() < order_.capacity());
    const int64_t id = op.id();
    ACCY_CHECK(id >= 0 && static_cast<uint64_t>(id) < index_of_id_.size());
    // Dense by Operation::id(): an O(1) look-up with no sort (a search of an address-sorted copy
    // cost log n cache misses per look-up on large graphs).
    index_of_id_[static_cast<size_t>(id)] = static_cast<uint32_t>(order_.size());
    order_.push_back(&op);
    // The later passes read the role and skip other ops without touching them again.
    uint8_t role = 0;
    if (IsFusableElementwiseOp(op)) role |= kRoleFusable;
    if (IsEpilogueSource(op)) role |= kRoleDot;
    if (op.kind() == OpKind::kReduce) role |= kRoleReduce;
    if (op.kind() == OpKind::kBroadcastInDim) role |= kRoleBroadcast;
    role_.push_back(role);
    if (RegionsAreOpaque(op)) continue;
    for (int64_t r = 0; r < op.num_regions(); ++r) {
      for (const auto& nested : op.region(r)->blocks()) Number(*nested);
    }
  }
}

uint32_t FusionPlanner::IndexOf(const Operation* op) {
  ++visits_;
  const int64_t id = op->id();
  if (id < 0 || static_cast<uint64_t>(id) >= index_of_id_.size()) return kNone;
  const uint32_t index = index_of_id_[static_cast<size_t>(id)];
  // An op of another function (or of an opaque region) may share the id: check it is this one.
  if (index == kNone || order_[index] != op) return kNone;
  return index;
}

uint32_t FusionPlanner::ProducerIndex(const Value* value) {
  ++visits_;
  const Operation* def = value->defining_op();
  return def == nullptr ? kNone : IndexOf(def);
}

bool FusionPlanner::Available(uint32_t index, const Block* block) const {
  return index != kNone && cluster_of_[index] == kNone && order_[index]->parent_block() == block;
}

bool FusionPlanner::AllUsesInside(uint32_t index) {
  const Operation& op = *order_[index];
  for (int64_t r = 0; r < op.num_results(); ++r) {
    for (const Use& use : op.result(r)->uses()) {
      ++visits_;
      uint32_t user = IndexOf(use.user);
      if (user == kNone || !Stamped(user)) return false;
    }
  }
  return true;
}

void FusionPlanner::BeginAttempt(uint32_t root) {
  ++attempt_;
  heap_.clear();
  members_.clear();
  Stamp(root);
  queued_stamp_[root] = attempt_;
  members_.push_back(root);
}

void FusionPlanner::PushProducer(const Value* value) {
  uint32_t index = ProducerIndex(value);
  if (index == kNone || queued_stamp_[index] == attempt_) return;
  queued_stamp_[index] = attempt_;
  heap_.push_back(index);  // at most one entry per op per attempt: capacity n suffices
  std::push_heap(heap_.begin(), heap_.end());
  CountHeapOp();
}

uint32_t FusionPlanner::PopMax() {
  std::pop_heap(heap_.begin(), heap_.end());
  uint32_t index = heap_.back();
  heap_.pop_back();
  CountHeapOp();
  return index;
}

FusionPlanner::Admit FusionPlanner::Classify(uint32_t index, GrowMode mode,
                                             std::span<const int64_t> dims, const Block* block,
                                             uint32_t dot) const {
  if (!Available(index, block)) return Admit::kReject;
  const Operation& op = *order_[index];
  const bool same_space = IsFusableElementwiseOp(op) && HasDims(*op.result(0), dims);
  switch (mode) {
    case GrowMode::kElementwise:
    case GrowMode::kReduction:
      return same_space ? Admit::kMember : Admit::kReject;
    case GrowMode::kEpilogue:
      // Rule 4: only ops computed from `dot` (a dot_general, convolution or reduce_window); its
      // operands are the kernel's inputs.
      if (index == dot) return Admit::kMemberStop;
      return same_space && dot_source_[index] == dot ? Admit::kMember : Admit::kReject;
    case GrowMode::kRow:
      if (same_space || (IsFusableElementwiseOp(op) &&
                         HasDims(*op.result(0), dims.first(dims.size() - 1)))) {
        return Admit::kMember;
      }
      if (IsRowReduce(op, dims)) return Admit::kMemberFirstOperand;  // not the init value
      if (IsRowBroadcast(op, dims)) return Admit::kPassThrough;
      return Admit::kReject;
  }
  return Admit::kReject;
}

bool FusionPlanner::Grow(GrowMode mode, std::span<const int64_t> dims, uint32_t dot) {
  const uint32_t root = members_.front();
  const Operation& root_op = *order_[root];
  const Block* block = root_op.parent_block();
  // A reduce root fuses producers of its inputs only, never of its init values.
  const int64_t pushed = mode == GrowMode::kReduction ? root_op.num_operands() / 2
                                                      : root_op.num_operands();
  for (int64_t i = 0; i < pushed; ++i) PushProducer(root_op.operand(i));
  bool dot_joined = false;
  while (!heap_.empty() && members_.size() < kMaxClusterOps) {  // rule 12
    const uint32_t index = PopMax();
    ++visits_;
    const Admit admit = Classify(index, mode, dims, block, dot);
    // Rule 11 caps the attempts an op may join; with it, use checks are paid for by the
    // members' operand slots (a stamped user is a member) plus one failing check per pop.
    if (admit == Admit::kReject || memberships_[index] >= kMaxMemberships ||
        !AllUsesInside(index)) {
      continue;
    }
    // A row broadcast is read through only when rule 8 elides it (every user elementwise). One
    // that also feeds the row reduce is materialized by the schedule, so its operand must stay
    // outside the cluster: that item reads it (found by accy fuzz: the item read a value only
    // the cluster computed).
    if (admit == Admit::kPassThrough && !IsElidable(index)) continue;
    ++memberships_[index];
    Stamp(index);
    const Operation& op = *order_[index];
    switch (admit) {
      case Admit::kPassThrough:
        PushProducer(op.operand(0));
        break;
      case Admit::kMemberStop:
        members_.push_back(index);
        dot_joined = true;
        break;
      case Admit::kMemberFirstOperand:
        members_.push_back(index);
        PushProducer(op.operand(0));
        break;
      case Admit::kMember:
        members_.push_back(index);
        for (const Value* operand : op.operands()) PushProducer(operand);
        break;
      case Admit::kReject:
        break;
    }
  }
  return dot_joined;
}

void FusionPlanner::Accept(ClusterKind kind) {
  // Clusters are disjoint and hold two ops or more, so there are at most n / 2 of them.
  ACCY_CHECK(records_.size() < records_.capacity());
  const uint32_t record = static_cast<uint32_t>(records_.size());
  records_.push_back({kind, members_.front(), static_cast<uint32_t>(cluster_ops_.size()),
                      static_cast<uint32_t>(members_.size())});
  for (size_t k = members_.size(); k-- > 0;) {
    ++visits_;
    cluster_ops_.push_back(members_[k]);
    cluster_of_[members_[k]] = record;
  }
}

void FusionPlanner::PlanRoot(uint32_t index) {
  const Operation& op = *order_[index];
  if (op.kind() == OpKind::kDotGeneral) {
    if (MatchFlashAttention(index)) Accept(ClusterKind::kFlashAttention);
    return;
  }
  if (IsFusableElementwiseOp(op)) {
    std::span<const int64_t> dims = op.result(0)->type().dims();
    if (row_hint_[index] != 0) {
      BeginAttempt(index);
      Grow(GrowMode::kRow, dims);
      bool has_reduce = false;
      for (uint32_t member : members_) {
        ++visits_;
        has_reduce = has_reduce || order_[member]->kind() == OpKind::kReduce;
      }
      if (has_reduce) {
        Accept(ClusterKind::kRowPipeline);
        return;
      }
    }
    if (dot_source_[index] != kNone) {
      BeginAttempt(index);
      if (Grow(GrowMode::kEpilogue, dims, dot_source_[index])) {
        Accept(EpilogueClusterKind(*order_[dot_source_[index]]));
        return;
      }
    }
    BeginAttempt(index);
    Grow(GrowMode::kElementwise, dims);
    if (members_.size() >= 2) Accept(ClusterKind::kElementwise);
    return;
  }
  if (op.kind() == OpKind::kReduce && op.num_operands() >= 2) {
    BeginAttempt(index);
    Grow(GrowMode::kReduction, op.operand(0)->type().dims());
    if (members_.size() >= 2) Accept(ClusterKind::kReductionInput);
  }
}

void FusionPlanner::ComputeHints() {
  // Program order: every operand's producer is done before its users.
  for (uint32_t i = 0; i < order_.size(); ++i) {
    ++visits_;
    if ((role_[i] & (kRoleFusable | kRoleDot)) == 0) continue;  // no hint; op not read
    const Operation& op = *order_[i];
    if (IsEpilogueSource(op)) {
      dot_source_[i] = i;
      continue;
    }
    if (!IsFusableElementwiseOp(op)) continue;
    std::span<const int64_t> dims = op.result(0)->type().dims();
    for (const Value* operand : op.operands()) {
      const uint32_t producer = ProducerIndex(operand);
      if (producer == kNone) continue;
      const Operation& def = *order_[producer];
      // dot_source_: the latest epilogue source (dot_general, convolution, reduce_window) this
      // op is computed from through ops of its dims.
      if (HasDims(*operand, dims) && dot_source_[producer] != kNone &&
          (dot_source_[i] == kNone || dot_source_[producer] > dot_source_[i])) {
        dot_source_[i] = dot_source_[producer];
      }
      // row_hint_: a row pipeline rooted here holds a reduce whose row result re-enters this
      // iteration space through a row broadcast (or, for rank 1, as a rank-0 select/clamp
      // operand) and then reaches here through ops of these dims. A row attempt is made only
      // from flagged roots; it could not succeed from any other.
      if (!dims.empty() &&
          (IsRowBroadcast(def, dims) || (row_hint_[producer] != 0 && HasDims(*operand, dims)) ||
           (dims.size() == 1 && operand->type().rank() == 0 &&
            (def.kind() == OpKind::kReduce || IsFusableElementwiseOp(def))))) {
        row_hint_[i] = 1;
      }
    }
  }
}

bool FusionPlanner::IsElidable(uint32_t index) {
  const Operation& op = *order_[index];
  ++visits_;
  if (op.kind() != OpKind::kBroadcastInDim || !op.result(0)->has_uses()) return false;
  for (const Use& use : op.result(0)->uses()) {
    ++visits_;
    uint32_t user = IndexOf(use.user);
    if (user == kNone || !IsFusableElementwiseOp(*order_[user])) return false;
  }
  return true;
}

void FusionPlanner::BuildPlan(FusionPlan& plan) {
  plan.clusters_.reserve(records_.size());
  plan.member_index_.reserve(cluster_ops_.size());
  for (size_t k = records_.size(); k-- > 0;) {  // records_ are in descending root order
    const ClusterRecord& record = records_[k];
    FusionCluster& cluster = plan.clusters_.emplace_back(record.kind);
    cluster.ops.reserve(record.count);
    const uint32_t position = static_cast<uint32_t>(plan.clusters_.size() - 1);
    for (uint32_t i = 0; i < record.count; ++i) {
      ++visits_;
      const Operation* op = order_[cluster_ops_[record.first + i]];
      cluster.ops.push_back(op);
      plan.member_index_.push_back({op, position});
    }
  }
  std::sort(plan.member_index_.begin(), plan.member_index_.end(),
            [this](const auto& a, const auto& b) {
              ++visits_;
              return std::less<const Operation*>()(a.first, b.first);
            });

  // Elision (rule 8): mark once, then copy the marked ops in pre-order.
  size_t elided = 0;
  for (uint32_t i = 0; i < order_.size(); ++i) {
    if ((role_[i] & kRoleBroadcast) != 0 && IsElidable(i)) {
      elided_mark_[i] = 1;
      ++elided;
    }
  }
  plan.elided_.reserve(elided);
  plan.elided_by_address_.reserve(elided);
  for (uint32_t i = 0; i < order_.size(); ++i) {
    ++visits_;
    if (elided_mark_[i] == 0) continue;
    plan.elided_.push_back(order_[i]);
    plan.elided_by_address_.push_back(order_[i]);
  }
  std::sort(plan.elided_by_address_.begin(), plan.elided_by_address_.end(),
            [this](const Operation* a, const Operation* b) {
              ++visits_;
              return std::less<const Operation*>()(a, b);
            });
}

Status FusionPlanner::Run(FusionPlan& plan) {
  const Block* entry = function_.entry_block();
  if (entry == nullptr) return absl::OkStatus();
  // Every array is sized once: no growth, so the bytes are exactly what Estimate lists. The
  // numbering arrays take the id bound (>= the op count), which saves a counting walk.
  const size_t ids = static_cast<size_t>(function_.op_id_bound());
  order_.reserve(ids);
  role_.reserve(ids);
  index_of_id_.assign(ids, kNone);
  Number(*entry);
  const uint64_t n = order_.size();
  if (n >= kMaxOps) {
    return absl::OutOfRangeError(StrCat("fusion plan: function @", function_.name(), " has ", n,
                                        " ops; at most ", kMaxOps - 1, " are supported"));
  }
  log_ = static_cast<uint64_t>(std::bit_width(n)) + 1;
  cluster_of_.assign(n, kNone);
  memberships_.assign(n, 0);
  row_hint_.assign(n, 0);
  dot_source_.assign(n, kNone);
  member_stamp_.assign(n, 0);
  queued_stamp_.assign(n, 0);
  elided_mark_.assign(n, 0);
  heap_.reserve(n);
  members_.reserve(n);
  cluster_ops_.reserve(n);
  records_.reserve(n / 2);
  ComputeHints();

  // Rule 10: roots from the last op back to the first.
  for (uint32_t index = static_cast<uint32_t>(n); index-- > 0;) {
    ++visits_;
    if (cluster_of_[index] == kNone && (role_[index] & (kRoleFusable | kRoleDot | kRoleReduce))) {
      PlanRoot(index);
    }
  }
  BuildPlan(plan);
  plan.visits_ = visits_;
  return absl::OkStatus();
}

StatusOr<passes::WorkBounds> FusionPlanner::Estimate(const Function& function) {
  ACCY_ASSIGN_OR_RETURN(passes::Census census, passes::Census::Inspect(function));
  return EstimateFromCensus(census);
}

StatusOr<passes::WorkBounds> FusionPlanner::EstimateFromCensus(const passes::Census& census) {
  using passes::WorkAdd;
  using passes::WorkMul;
  const uint64_t n = census.operations;  // numbered ops, cluster members: all <= n
  const uint64_t e = census.operands;    // uses of all values together: <= e
  const uint64_t half = n / 2;           // clusters: disjoint, two ops or more each
  const uint64_t ids = std::max(census.op_ids, n);  // numbering arrays are sized by the id bound

  // Bytes: every allocation of Run, each with its alignment slack.
  const uint64_t scratch_arrays[][2] = {
      {ids, sizeof(const Operation*)},  // order_
      {ids, sizeof(uint8_t)},           // role_
      {ids, sizeof(uint32_t)},          // index_of_id_
      {n, sizeof(uint32_t)},          // cluster_of_
      {n, sizeof(uint8_t)},           // memberships_
      {n, sizeof(uint8_t)},           // row_hint_
      {n, sizeof(uint32_t)},          // dot_source_
      {n, sizeof(uint32_t)},          // member_stamp_
      {n, sizeof(uint32_t)},          // queued_stamp_
      {n, sizeof(uint8_t)},           // elided_mark_
      {n, sizeof(uint32_t)},          // heap_
      {n, sizeof(uint32_t)},          // members_
      {n, sizeof(uint32_t)},          // cluster_ops_
      {half, sizeof(ClusterRecord)},  // records_
  };
  const uint64_t retained_arrays[][2] = {
      {1, sizeof(FusionPlan)},                                        // the plan object
      {half, sizeof(FusionCluster)},                                  // clusters_
      {n, sizeof(std::pair<const Operation*, uint32_t>)},             // member_index_
      {n, sizeof(const Operation*)},                                  // elided_
      {n, sizeof(const Operation*)},                                  // elided_by_address_
      {n, sizeof(const Operation*)},                                  // all clusters' ops
  };
  uint64_t scratch = 0;
  for (const auto& array : scratch_arrays) {
    ACCY_ASSIGN_OR_RETURN(uint64_t bytes, WorkMul(array[0], array[1]));
    ACCY_ASSIGN_OR_RETURN(bytes, WorkAdd(bytes, kAllocationSlack));
    ACCY_ASSIGN_OR_RETURN(scratch, WorkAdd(scratch, bytes));
  }
  uint64_t retained = 0;
  for (const auto& array : retained_arrays) {
    ACCY_ASSIGN_OR_RETURN(uint64_t bytes, WorkMul(array[0], array[1]));
    ACCY_ASSIGN_OR_RETURN(bytes, WorkAdd(bytes, kAllocationSlack));
    ACCY_ASSIGN_OR_RETURN(retained, WorkAdd(retained, bytes));
  }
  // The clusters' ops lists are one allocation each: slack per cluster.
  ACCY_ASSIGN_OR_RETURN(uint64_t per_list_slack, WorkMul(half, kAllocationSlack));
  ACCY_ASSIGN_OR_RETURN(retained, WorkAdd(retained, per_list_slack));
  ACCY_ASSIGN_OR_RETURN(uint64_t workspace, WorkAdd(scratch, retained));

  // Visits, in the units Run counts. log = bit_width(n) + 1 bounds a look-up (IndexOf: one
  // visit; the bound still allows log, from when it was a binary search) and a heap push or pop (counted 2 log + 1). A std::sort of m entries
  // makes at most 5 m log2 m + 27 m comparisons (introsort: 2 log2 m partition levels, heapsort
  // fallback, final insertion sort over runs of 16); 8 m (log + 4) covers it.
  const uint64_t log = static_cast<uint64_t>(std::bit_width(n)) + 1;
  // Growth (rule 11): an op joins at most kMaxMemberships attempts as a non-root member and
  // three as a root (row, dot epilogue, elementwise), so memberships <= (K + 3) n and operand
  // pushes <= (K + 3) e (each: look-up log + 1, heap 2 log + 1); pops <= pushes (heap
  // 2 log + 1, plus 1); use checks <= one per member operand slot plus one failing check per
  // pop (each log + 1); the reduce test walks members once. In all <= (K + 3)(n + e)(7 log + 8).
  const uint64_t k = kMaxMemberships;
  ACCY_ASSIGN_OR_RETURN(uint64_t ops_and_uses, WorkAdd(n, e));
  ACCY_ASSIGN_OR_RETURN(uint64_t visits, WorkMul(ops_and_uses, k + 3));
  ACCY_ASSIGN_OR_RETURN(visits, WorkMul(visits, 7 * log + 8));
  // Flash attention, once per dot_general root: <= 17 producer look-ups, 11 ops of at most
  // kFlashMaxUses use checks, a sort of <= 9 members: <= 64 (log + 3).
  ACCY_ASSIGN_OR_RETURN(uint64_t flash, WorkMul(n, 64 * (log + 3)));
  ACCY_ASSIGN_OR_RETURN(visits, WorkAdd(visits, flash));
  // Three sorts of <= n entries (ops by address, cluster members, elided ops).
  ACCY_ASSIGN_OR_RETURN(uint64_t sorts, WorkMul(n, 3 * 8 * (log + 4)));
  ACCY_ASSIGN_OR_RETURN(visits, WorkAdd(visits, sorts));
  // Hints (each op's operands looked up once) and elision (each broadcast's uses once).
  ACCY_ASSIGN_OR_RETURN(uint64_t lookups, WorkMul(e, 2 * (log + 1)));
  ACCY_ASSIGN_OR_RETURN(visits, WorkAdd(visits, lookups));
  // Linear passes: two numbering walks, row hints, the root loop, acceptance, elision marks, the
  // copies.
  ACCY_ASSIGN_OR_RETURN(uint64_t linear, WorkMul(n, 9));
  ACCY_ASSIGN_OR_RETURN(visits, WorkAdd(visits, linear));
  ACCY_ASSIGN_OR_RETURN(visits, WorkAdd(visits, 64));

  // Attributes read: index lists of reduce, broadcast_in_dim and dot_general (8 bytes an atom).
  ACCY_ASSIGN_OR_RETURN(uint64_t input_bytes, WorkMul(census.atoms, 8));
  ACCY_ASSIGN_OR_RETURN(input_bytes, WorkAdd(input_bytes, census.input_bytes));

  passes::WorkBounds bounds;
  bounds.work.structural_visits = visits;
  bounds.work.input_bytes = input_bytes;
  bounds.work.analysis_computations = 1;
  bounds.work.allocation_capacity = workspace;
  bounds.workspace_bytes = workspace;
  bounds.retained_storage_bytes = retained;
  return bounds;
}

}  // namespace accy
