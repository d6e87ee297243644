// PlanSchedule: claims work items, estimates resources, orders by dependencies
// (seed/schedule_pass.zig.txt: addFusionWorkItems, addStandaloneWorkItems,
// addBroadcastWorkItems, resourceEstimateForWork, orderWorkItemsByDependencies).
#include <algorithm>
#include <functional>
#include <limits>
#include <memory>

#include "src/analysis/shape_layout_analysis.h"
#include "src/fusion/fusion_plan.h"
#include "src/ir/outline.h"
#include "src/passes/work_contract.h"
#include "src/schedule/element_ops.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

namespace accy {
namespace {


// Kinds that read a broadcast_in_dim operand through index arithmetic (the seed's
// kernelInputValueForOperand list).
bool ElidesBroadcastOperands(WorkKind kind) {
  switch (kind) {
    case WorkKind::kElementwiseSingle:
    case WorkKind::kElementwiseFusion:
    case WorkKind::kDotGeneral:
    case WorkKind::kReduction:
    case WorkKind::kRowPipeline:
    case WorkKind::kIterate:
    case WorkKind::kFlashAttention:
    case WorkKind::kConvolution:  // its epilogue's operands (rule 8 never elides one it reads)
    case WorkKind::kReduceWindow:  // likewise
      return true;
    default:
      return false;
  }
}

WorkKind WorkKindForCluster(ClusterKind kind) {
  switch (kind) {
    case ClusterKind::kElementwise:
      return WorkKind::kElementwiseFusion;
    case ClusterKind::kDotEpilogue:
      return WorkKind::kDotGeneral;
    case ClusterKind::kReductionInput:
      return WorkKind::kReduction;
    case ClusterKind::kRowPipeline:
      return WorkKind::kRowPipeline;
    case ClusterKind::kFlashAttention:
      return WorkKind::kFlashAttention;
    case ClusterKind::kConvolutionEpilogue:
      return WorkKind::kConvolution;
    case ClusterKind::kReduceWindowEpilogue:
      return WorkKind::kReduceWindow;
  }
  return WorkKind::kElementwiseFusion;
}

// The value an item really reads for `operand`: the input of a broadcast_in_dim that the fusion
// plan elided (the seed's kernelInputValueForOperand, for the kinds above). A broadcast the plan
// keeps (it also has users that cannot read through it, or is returned) is materialized as a
// shape item, and every consumer -- which the emitters then let read its buffer -- depends on it.
const Value* KernelInputValueForOperand(WorkKind kind, const Value* operand,
                                        const FusionPlan& fusion) {
  if (!ElidesBroadcastOperands(kind)) return operand;
  const Operation* def = operand->defining_op();
  if (def == nullptr || def->kind() != OpKind::kBroadcastInDim || def->num_operands() != 1 ||
      !fusion.IsElided(def)) {
    return operand;
  }
  return def->operand(0);
}

bool OperandReads(const Operation& op, int64_t operand_index) {
  if (op.kind() != OpKind::kKernelCall) return true;
  std::vector<std::string> effects = op.GetStrings("operand_effects");
  if (operand_index >= static_cast<int64_t>(effects.size())) return true;
  auto effect = ParseOperandEffect(effects[static_cast<size_t>(operand_index)]);
  if (!effect.ok()) return true;
  return *effect == OperandEffect::kRead || *effect == OperandEffect::kReadWrite;
}

bool IsConstantReduceInitOperand(const Operation& op, int64_t operand_index) {
  if (op.kind() != OpKind::kReduce || operand_index < op.num_operands() / 2) return false;
  const Operation* def = op.operand(operand_index)->defining_op();
  return def != nullptr && def->kind() == OpKind::kConstant;
}


// "%5 (add)": the op's first result as the printer's generic numbering names it (Value::id), or
// "#<op id>" for an op of no results.
std::string OpReference(const Operation& op) {
  const std::string number =
      op.num_results() > 0 ? StrCat("%", op.result(0)->id()) : StrCat("#", op.id());
  return StrCat(number, " (", op.name(), ")");
}


}  // namespace

// Builds one plan; every container lives in `resource_`.
class SchedulePlanner {
 public:
  SchedulePlanner(const Function& function, const ShapeLayoutAnalysis& shapes,
                  const FusionPlan& fusion, std::pmr::memory_resource* resource,
                  uint64_t op_capacity, uint64_t operand_capacity, uint64_t op_ids,
                  uint64_t value_ids)
      : function_(function),
        shapes_(shapes),
        fusion_(fusion),
        resource_(resource),
        claimed_(resource),
        has_item_(resource),
        scratch_values_(resource),
        scratch_items_(resource),
        item_output_id_(resource),
        item_root_id_(resource),
        input_begin_(resource),
        input_ids_(resource),
        broadcast_inputs_(resource),
        returns_(resource) {
    claimed_.assign(op_ids, 0);
    has_item_.assign(op_ids, 0);
    value_ids_ = value_ids;
    op_ids_ = op_ids;
    scratch_values_.reserve(operand_capacity);
    scratch_items_.reserve(operand_capacity);
    // Every op is in at most one item, so items <= ops and their operands together <= operand
    // uses: these never grow past their reservations.
    item_output_id_.reserve(op_capacity);
    item_root_id_.reserve(op_capacity);
    input_begin_.reserve(op_capacity + 1);
    input_begin_.push_back(0);
    input_ids_.reserve(operand_capacity);
    broadcast_inputs_.reserve(operand_capacity);
    returns_.reserve(op_capacity);
  }

  // The plan, or an error; on any error (std::bad_alloc included) the partial plan is destroyed
  // so every byte goes back to `resource_`.
  StatusOr<SchedulePlan*> Run(uint64_t op_capacity) {
    std::pmr::polymorphic_allocator<SchedulePlan> alloc(resource_);
    auto destroy = [alloc](SchedulePlan* plan) mutable { alloc.delete_object(plan); };
    std::unique_ptr<SchedulePlan, decltype(destroy)> plan(alloc.new_object<SchedulePlan>(resource_),
                                                          destroy);
    plan_ = plan.get();
    plan_->items_.reserve(op_capacity);
    ACCY_RETURN_IF_ERROR(Build(op_capacity));
    return plan.release();
  }

 private:
  Status Build(uint64_t op_capacity) {

    ACCY_RETURN_IF_ERROR(AddFusionWorkItems());
    ACCY_RETURN_IF_ERROR(AddStandaloneWorkItems(*function_.entry_block()));
    ACCY_RETURN_IF_ERROR(AddBroadcastWorkItems());
    return OrderWorkItemsByDependencies(op_capacity);
  }

  // claimed_ and has_item_ are indexed by Operation::id().
  size_t OpNumber(const Operation* op) const {
    ACCY_CHECK(op->id() >= 0 && static_cast<uint64_t>(op->id()) < op_ids_);
    return static_cast<size_t>(op->id());
  }
  bool IsClaimed(const Operation* op) const { return claimed_[OpNumber(op)] != 0; }
  void Claim(const Operation* op) { claimed_[OpNumber(op)] = 1; }

  // The seed's staticResultInfo: info of result 0 when its layout is static.
  const TensorInfo* StaticResultInfo(const Operation& op) const {
    if (op.num_results() < 1) return nullptr;
    const TensorInfo* info = shapes_.Get(op.result(0));
    if (info == nullptr || !info->static_layout) return nullptr;
    return info;
  }

  Status AddWorkItem(WorkKind kind, const Operation* root, std::span<const Operation* const> ops,
                     const Value* output, const TensorInfo& info) {
    if (ops.empty() || has_item_[OpNumber(root)]) return absl::OkStatus();
    if (!info.element_count) return absl::OkStatus();
    uint64_t element_count = *info.element_count;
    uint64_t total;
    if (__builtin_add_overflow(plan_->total_static_elements_, element_count, &total)) {
      return absl::OutOfRangeError(StrCat(
          "WorkOverflow: total static element count of the schedule overflows 64 bits at ",
          OpName(root->kind())));
    }
    has_item_[OpNumber(root)] = 1;
    ACCY_CHECK(item_output_id_.size() < item_output_id_.capacity());
    WorkItem& item = plan_->items_.emplace_back(resource_);
    RecordInputs(kind, root, ops, output);
    item.id = static_cast<int64_t>(plan_->items_.size()) - 1;
    item.kind = kind;
    item.root = root;
    item.ops.assign(ops.begin(), ops.end());
    item.output_value = output;
    item.dtype = info.element_type;
    item.rank = info.rank();
    item.element_count = element_count;
    item.resources = EstimateResources(ops, info);

    switch (kind) {
      case WorkKind::kElementwiseFusion:
      case WorkKind::kRowPipeline:
      case WorkKind::kFlashAttention:
        ++plan_->fusion_work_count_;
        break;
      case WorkKind::kKernelCall:
        ++plan_->kernel_call_work_count_;
        break;
      default:
        ++plan_->single_work_count_;
        break;
    }
    plan_->scheduled_op_count_ += static_cast<int64_t>(ops.size());
    plan_->total_static_elements_ = total;
    return absl::OkStatus();
  }

  // What the ordering and broadcast passes need of the new item, read now while its ops are in
  // cache (a later pass over the items' ops would miss the cache on every op of a large graph):
  // the ids of its output and root, the id of the value each operand really reads, and the
  // operands read through a broadcast_in_dim (candidates for materialization).
  void RecordInputs(WorkKind kind, const Operation* root, std::span<const Operation* const> ops,
                    const Value* output) {
    item_output_id_.push_back(output->id());
    item_root_id_.push_back(root->id());
    for (const Operation* op : ops) {
      for (const Value* operand : op->operands()) {
        const Value* input = KernelInputValueForOperand(kind, operand, fusion_);
        ACCY_CHECK(input_ids_.size() < input_ids_.capacity());
        input_ids_.push_back(input->id());
        const Operation* def = input->defining_op();
        if (def != nullptr && def->kind() == OpKind::kBroadcastInDim) {
          broadcast_inputs_.push_back(input);
        }
      }
    }
    if (kind == WorkKind::kIterate) RecordCapturedInputs(*root);
    input_begin_.push_back(static_cast<int64_t>(input_ids_.size()));
  }

  // A while's cond and body, and a case's branches, may read values of the enclosing blocks
  // (StableHLO regions are not isolated from above; src/ir/outline.h passes them to the outlined
  // functions): the item depends on their producers as on its operands (found by accy fuzz: a
  // while whose body read a convert's result ran before the convert). The outliner copies
  // constants, iotas and broadcasts into the outlined functions and passes their operands
  // instead (IsCopiedIntoOutlinedRegion), so the item reads those: a case branch that read a
  // broadcast of a convert, the broadcast used nowhere else, ran before the convert (accy fuzz
  // --seed 20261206, program 16211). Each captured value is an operand use of a nested op,
  // which no item records (the regions are opaque), and stands for at most one input (a copied
  // op has at most one operand), so input_ids_ keeps within its reservation; duplicates are
  // dropped with a scan of this item's inputs.
  void RecordCapturedInputs(const Operation& loop) {
    const int64_t begin = input_begin_.back();
    for (int64_t r = 0; r < loop.num_regions(); ++r) {
      for (const auto& nested : loop.region(r)->blocks()) {
        WalkOperations(*nested, [&](const Operation* op) {
          for (const Value* operand : op->operands()) {
            if (!DefinedOutside(*operand, loop)) continue;
            const Value* input = operand;
            while (input != nullptr && input->defining_op() != nullptr &&
                   input->defining_op()->num_regions() == 0 &&
                   IsCopiedIntoOutlinedRegion(*input->defining_op())) {
              const Operation* def = input->defining_op();
              input = def->num_operands() == 1 ? def->operand(0) : nullptr;
            }
            if (input == nullptr) continue;  // a constant or iota: copied, nothing read
            const int64_t id = input->id();
            if (std::find(input_ids_.begin() + begin, input_ids_.end(), id) != input_ids_.end()) {
              continue;
            }
            ACCY_CHECK(input_ids_.size() < input_ids_.capacity());
            input_ids_.push_back(id);
          }
        });
      }
    }
  }

  // Whether `value` is defined in the block of `loop` or a block enclosing it (not inside it).
  static bool DefinedOutside(const Value& value, const Operation& loop) {
    const Block* block = value.defining_op() != nullptr ? value.defining_op()->parent_block()
                                                        : value.owner_block();
    for (const Block* b = loop.parent_block(); b != nullptr;) {
      if (b == block) return true;
      const Region* region = b->parent();
      const Operation* parent_op = region == nullptr ? nullptr : region->parent_op();
      b = parent_op == nullptr ? nullptr : parent_op->parent_block();
    }
    return false;
  }

  ResourceEstimate EstimateResources(std::span<const Operation* const> ops,
                                     const TensorInfo& info) {
    uint64_t element_count = *info.element_count;
    ResourceEstimate r;
    r.element_count = ReductionInputElementCount(ops, shapes_).value_or(element_count);
    r.element_size = static_cast<uint64_t>(ElementByteWidth(info.element_type));
    r.op_count = ops.size();
    r.estimated_element_ops = EstimatedElementOps(ops, element_count, shapes_);
    if (auto bytes = TensorByteSize(info)) {
      r.static_write_bytes = SaturatedAdd(r.static_write_bytes, *bytes);
    } else {
      r.static_bytes_complete = false;
    }
    scratch_values_.clear();
    for (const Operation* op : ops) {
      for (int64_t i = 0; i < op->num_operands(); ++i) {
        if (IsConstantReduceInitOperand(*op, i)) continue;
        const Value* operand = op->operand(i);
        const Operation* def = operand->defining_op();
        if (def != nullptr && std::find(ops.begin(), ops.end(), def) != ops.end()) {
          ++r.chain_operand_count;
          continue;
        }
        ++r.external_operand_count;
        scratch_values_.push_back(operand);
        if (!OperandReads(*op, i)) continue;
        const TensorInfo* operand_info = shapes_.Get(operand);
        std::optional<uint64_t> bytes =
            operand_info ? TensorByteSize(*operand_info) : std::nullopt;
        if (bytes) {
          r.static_read_bytes = SaturatedAdd(r.static_read_bytes, *bytes);
        } else {
          r.static_bytes_complete = false;
        }
      }
    }
    std::sort(scratch_values_.begin(), scratch_values_.end());
    r.external_input_value_count = static_cast<uint64_t>(
        std::unique(scratch_values_.begin(), scratch_values_.end()) - scratch_values_.begin());
    r.static_total_bytes = SaturatedAdd(r.static_read_bytes, r.static_write_bytes);
    return r;
  }

  Status AddFusionWorkItems() {
    for (const FusionCluster& cluster : fusion_.clusters()) {
      const Operation* root = cluster.root();
      if (root == nullptr) continue;
      const TensorInfo* info = StaticResultInfo(*root);
      if (info == nullptr) continue;
      ACCY_RETURN_IF_ERROR(AddWorkItem(WorkKindForCluster(cluster.kind), root, cluster.ops,
                                       root->result(0), *info));
      for (const Operation* op : cluster.ops) Claim(op);
    }
    for (const Operation* op : fusion_.elided()) Claim(op);
    return absl::OkStatus();
  }

  Status AddSingle(WorkKind kind, const Operation& op, const Value* output) {
    const TensorInfo* info = StaticResultInfo(op);
    if (info == nullptr || output == nullptr) return absl::OkStatus();
    const Operation* ops[] = {&op};
    ACCY_RETURN_IF_ERROR(AddWorkItem(kind, &op, ops, output, *info));
    Claim(&op);
    return absl::OkStatus();
  }

  // A lone op becomes one item of the op table's work kind (PlanForLoneOp), refined by what the
  // kind alone does not tell.
  Status AddStandaloneWorkItem(const Operation& op) {
    // Read through by its consumers, or materialized by AddBroadcastWorkItems where one cannot.
    if (op.kind() == OpKind::kBroadcastInDim) return absl::OkStatus();
    const LoneOpPlan plan = PlanForLoneOp(op.kind());
    if (plan.mode == LoneOpPlan::Mode::kNoItem) return absl::OkStatus();
    // Engine::Compile rejects other kernel_calls with a message of its own first; the check here
    // keeps every other planning entry point from dropping their results silently.
    const bool unplannable_call = op.kind() == OpKind::kKernelCall && op.num_results() != 1;
    if (plan.mode == LoneOpPlan::Mode::kNoLowering || unplannable_call) {
      return absl::UnimplementedError(StrCat(
          "op ", OpReference(op), " has no lowering: ",
          unplannable_call ? StrCat("a kernel_call of ", op.num_results(),
                                    " results (the engine runs kernel_calls of exactly one)")
          : op.kind() == OpKind::kBatchNormInference || op.kind() == OpKind::kBatchNormTraining ||
                  op.kind() == OpKind::kBatchNormGrad
              ? std::string("the expand-batch-norm graph pass rewrites it into the ops it "
                            "decomposes into before planning, and it did not run (disabled)")
              : std::string("the op table gives it no work kind")));
    }
    WorkKind kind = plan.kind;
    // Between widths bitcast_convert is a byte copy (IsElementwise holds for equal widths only).
    if (kind == WorkKind::kElementwiseSingle && !IsFusableElementwiseOp(op)) {
      kind = WorkKind::kShape;
    }
    const Value* output = op.num_results() > 0 ? op.result(0) : nullptr;
    if (kind == WorkKind::kIterate) {
      // The seed's iterateOutputResult: the first result with uses, else result 0.
      for (int64_t r = 0; r < op.num_results(); ++r) {
        if (op.result(r)->has_uses()) {
          output = op.result(r);
          break;
        }
      }
    }
    return AddSingle(kind, op, output);
  }

  Status AddStandaloneWorkItems(const Block& block) {
    for (const auto& owned : block.operations()) {
      const Operation& op = *owned;
      // Recorded in walk order for MaterializeReturnedBroadcasts (no second walk of the IR).
      if (op.kind() == OpKind::kReturn) returns_.push_back(&op);
      if (!IsClaimed(&op)) ACCY_RETURN_IF_ERROR(AddStandaloneWorkItem(op));
      if (RegionsAreOpaque(op)) continue;
      for (int64_t r = 0; r < op.num_regions(); ++r) {
        for (const auto& nested : op.region(r)->blocks()) {
          ACCY_RETURN_IF_ERROR(AddStandaloneWorkItems(*nested));
        }
      }
    }
    return absl::OkStatus();
  }

  // The seed's materializeBroadcast: a chain of broadcasts ending at `value` becomes shape items.
  Status MaterializeBroadcast(const Value* value) {
    const Value* current = value;
    while (const Operation* def = current->defining_op()) {
      if (def->kind() != OpKind::kBroadcastInDim || IsClaimed(def)) return absl::OkStatus();
      const TensorInfo* info = StaticResultInfo(*def);
      if (info == nullptr) return absl::OkStatus();
      const Operation* ops[] = {def};
      ACCY_RETURN_IF_ERROR(AddWorkItem(WorkKind::kShape, def, ops, current, *info));
      Claim(def);
      current = def->operand(0);
    }
    return absl::OkStatus();
  }

  // The seed's addBroadcastWorkItems: the broadcast inputs of the items claimed so far, in item,
  // op and operand order (MaterializeBroadcast ignores every other operand, so the recorded
  // candidates are the whole loop), then the values returned by the return ops of the walk.
  Status AddBroadcastWorkItems() {
    const size_t initial = broadcast_inputs_.size();  // items added below record past it
    for (size_t i = 0; i < initial; ++i) {
      ACCY_RETURN_IF_ERROR(MaterializeBroadcast(broadcast_inputs_[i]));
    }
    for (const Operation* op : returns_) {
      for (const Value* v : op->operands()) ACCY_RETURN_IF_ERROR(MaterializeBroadcast(v));
    }
    return absl::OkStatus();
  }

  Status OrderWorkItemsByDependencies(uint64_t op_capacity) {
    auto& items = plan_->items_;
    const int64_t n = static_cast<int64_t>(items.size());
    // Value::id() of each item's output -> the item.
    std::pmr::vector<int64_t> output_to_item(value_ids_, -1, resource_);
    ACCY_CHECK(static_cast<int64_t>(item_output_id_.size()) == n);
    for (int64_t i = 0; i < n; ++i) {
      output_to_item[static_cast<size_t>(item_output_id_[static_cast<size_t>(i)])] = i;
      // A multi-result root (while, variadic reduce such as argmax, sort, top_k, variadic
      // reduce_window) produces every result: a consumer of result 1 depends on it as much as
      // one of result 0.
      const Operation* root = items[i].root;
      if (root != nullptr && root->num_results() > 1) {
        for (int64_t r = 0; r < root->num_results(); ++r) {
          int64_t& slot = output_to_item[static_cast<size_t>(root->result(r)->id())];
          if (slot < 0) slot = i;
        }
      }
    }

    // Edges, deduplicated per consumer (the seed's appendScheduleDependency).
    std::pmr::vector<int64_t> indegree(static_cast<size_t>(n), 0, resource_);
    std::pmr::vector<int64_t> out_offsets(static_cast<size_t>(n) + 1, 0, resource_);
    for (int64_t consumer = 0; consumer < n; ++consumer) {
      WorkItem& work = items[consumer];
      scratch_items_.clear();
      for (int64_t k = input_begin_[static_cast<size_t>(consumer)];
           k < input_begin_[static_cast<size_t>(consumer) + 1]; ++k) {
        int64_t producer = output_to_item[static_cast<size_t>(input_ids_[static_cast<size_t>(k)])];
        if (producer < 0 || producer == consumer) continue;
        scratch_items_.push_back(producer);
      }
      std::sort(scratch_items_.begin(), scratch_items_.end());
      auto end = std::unique(scratch_items_.begin(), scratch_items_.end());
      work.dependencies.assign(scratch_items_.begin(), end);
      indegree[static_cast<size_t>(consumer)] = static_cast<int64_t>(work.dependencies.size());
      for (int64_t producer : work.dependencies) ++out_offsets[static_cast<size_t>(producer) + 1];
    }
    for (int64_t i = 0; i < n; ++i) out_offsets[i + 1] += out_offsets[i];
    std::pmr::vector<int64_t> out_edges(static_cast<size_t>(out_offsets[n]), 0, resource_);
    {
      std::pmr::vector<int64_t> fill(out_offsets.begin(), out_offsets.end() - 1, resource_);
      for (int64_t consumer = 0; consumer < n; ++consumer) {
        for (int64_t producer : items[consumer].dependencies) {
          out_edges[static_cast<size_t>(fill[static_cast<size_t>(producer)]++)] = consumer;
        }
      }
    }

    // Kahn's algorithm with a min-heap: among ready items the lowest original index goes first,
    // exactly the order of the seed's scan, in O((V + E) log V) -- except that a ready
    // collective goes before every other ready item (accy's extension for a kind the seed does
    // not have: communication starts as early as it can, so the executor can overlap it with
    // the independent items after it; src/runtime/executor.h OverlapCollectives).
    std::pmr::vector<int64_t> heap(resource_);
    heap.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      if (indegree[static_cast<size_t>(i)] == 0) heap.push_back(i);
    }
    auto later = [&items](int64_t a, int64_t b) {
      const bool a_first = items[static_cast<size_t>(a)].kind == WorkKind::kCollective;
      const bool b_first = items[static_cast<size_t>(b)].kind == WorkKind::kCollective;
      if (a_first != b_first) return b_first;
      return a > b;
    };
    std::make_heap(heap.begin(), heap.end(), later);
    std::pmr::vector<int64_t> position(static_cast<size_t>(n), -1, resource_);
    int64_t emitted = 0;
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), later);
      int64_t next = heap.back();
      heap.pop_back();
      position[static_cast<size_t>(next)] = emitted++;
      for (int64_t e = out_offsets[next]; e < out_offsets[next + 1]; ++e) {
        int64_t consumer = out_edges[static_cast<size_t>(e)];
        if (--indegree[static_cast<size_t>(consumer)] == 0) {
          heap.push_back(consumer);
          std::push_heap(heap.begin(), heap.end(), later);
        }
      }
    }
    if (emitted != n) {
      return absl::InvalidArgumentError(StrCat(
          "CyclicScheduleDependency: ", n - emitted, " work items of function '",
          function_.name(), "' depend on each other in a cycle"));
    }
    for (WorkItem& item : items) {
      for (int64_t& dep : item.dependencies) dep = position[static_cast<size_t>(dep)];
      std::sort(item.dependencies.begin(), item.dependencies.end());
    }
    plan_->root_index_.assign(op_ids_, -1);
    for (int64_t i = 0; i < n; ++i) {
      plan_->root_index_[static_cast<size_t>(item_root_id_[static_cast<size_t>(i)])] =
          position[static_cast<size_t>(i)];
    }
    // Apply the permutation in place (cycle by cycle): no second copy of the items.
    for (int64_t i = 0; i < n; ++i) {
      while (position[static_cast<size_t>(i)] != i) {
        int64_t target = position[static_cast<size_t>(i)];
        std::swap(items[i], items[target]);
        std::swap(position[static_cast<size_t>(i)], position[static_cast<size_t>(target)]);
      }
    }
    (void)op_capacity;
    return absl::OkStatus();
  }

  const Function& function_;
  const ShapeLayoutAnalysis& shapes_;
  const FusionPlan& fusion_;
  std::pmr::memory_resource* resource_;
  SchedulePlan* plan_ = nullptr;
  uint64_t op_ids_ = 0;
  uint64_t value_ids_ = 0;
  std::pmr::vector<uint8_t> claimed_;
  std::pmr::vector<uint8_t> has_item_;  // by op number: is the op some item's root
  std::pmr::vector<const Value*> scratch_values_;
  std::pmr::vector<int64_t> scratch_items_;
  // Per item in claim order (before reordering), recorded by RecordInputs.
  std::pmr::vector<int64_t> item_output_id_;  // Value::id() of the output
  std::pmr::vector<int64_t> item_root_id_;    // Operation::id() of the root
  std::pmr::vector<int64_t> input_begin_;     // item i reads input_ids_[begin[i], begin[i + 1])
  std::pmr::vector<int64_t> input_ids_;       // Value::id() each operand really reads
  std::pmr::vector<const Value*> broadcast_inputs_;  // inputs defined by broadcast_in_dim
  std::pmr::vector<const Operation*> returns_;       // return ops, in walk order
};

}  // namespace accy

namespace accy {

StatusOr<SchedulePlan*> PlanSchedule(const Function& function, const ShapeLayoutAnalysis& shapes,
                                     const FusionPlan& fusion, std::pmr::memory_resource* resource) {
  ACCY_ASSIGN_OR_RETURN(passes::Census census, passes::Census::Inspect(function));
  return PlanSchedule(function, census, shapes, fusion, resource);
}

StatusOr<SchedulePlan*> PlanSchedule(const Function& function, const passes::Census& census,
                                     const ShapeLayoutAnalysis& shapes, const FusionPlan& fusion,
                                     std::pmr::memory_resource* resource) {
  try {
    SchedulePlanner planner(function, shapes, fusion, resource, census.operations,
                            census.operands, census.op_ids, census.value_ids);
    return planner.Run(census.operations);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(StrCat(
        "schedule planning of function '", function.name(),
        "' needed more memory than its declared workspace"));
  }
}

}  // namespace accy
