// The loop layout of reduction work items (reduction_layout.h).
#include "jit/reduction_layout.h"
#include "jit/index_math.h"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>

#include "jit/kernel_abi.h"
#include "src/fusion/fusion_plan.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

Status Unsupported(const std::string& what) {
  return absl::UnimplementedError(StrCat("jit: reduction emitter: ", what));
}

// Strides (per dim of the reduce input, `dims`) of `source` read by `user`; `broadcast` is the
// elided broadcast_in_dim producing the operand, or null.
StatusOr<std::vector<int64_t>> SourceStrides(const Operation& user, const Value& source,
                                             const Operation* broadcast,
                                             const std::vector<int64_t>& dims) {
  const std::vector<int64_t>& source_dims = source.type().dims();
  std::vector<int64_t> strides(dims.size(), 0);
  if (broadcast != nullptr) {
    const std::vector<int64_t> map = broadcast->GetInts("broadcast_dimensions");
    const std::vector<int64_t> source_strides = RowMajorStrides(source_dims);
    if (map.size() != source_dims.size() || broadcast->result(0)->type().dims() != dims) {
      return Unsupported(StrCat(user.name(), " reads an elided broadcast_in_dim of shape ",
                                ShapeText(broadcast->result(0)->type().dims()),
                                " in a reduction over shape ", ShapeText(dims)));
    }
    for (size_t k = 0; k < map.size(); ++k) {
      if (source_dims[k] != 1) strides[static_cast<size_t>(map[k])] = source_strides[k];
    }
    return strides;
  }
  if (source_dims.empty()) return strides;  // a scalar operand (select's pred, clamp's bounds)
  if (source_dims != dims) {
    return Unsupported(StrCat(user.name(), " reads an operand of shape ", ShapeText(source_dims),
                              " in a reduction over shape ", ShapeText(dims)));
  }
  return RowMajorStrides(dims);
}

// The named combiner of a single-result reduce body `return op(arg0, arg1)` (either order), as
// the reference evaluator's short cut recognises it; kGeneral otherwise.
std::pair<ReduceCombiner, const Operation*> NamedCombiner(const Operation& reduce,
                                                          ElementType type) {
  const Block* block = reduce.region(0)->entry_block();
  if (reduce.num_results() != 1 || block == nullptr || block->num_arguments() != 2 ||
      block->operations().size() != 2) {
    return {ReduceCombiner::kGeneral, nullptr};
  }
  const Operation& combine = *block->operations()[0];
  const Operation& ret = *block->operations()[1];
  const Value* a = block->argument(0);
  const Value* b = block->argument(1);
  if (ret.kind() != OpKind::kReturn || ret.num_operands() != 1 || combine.num_results() != 1 ||
      ret.operand(0) != combine.result(0) || combine.num_operands() != 2 ||
      !((combine.operand(0) == a && combine.operand(1) == b) ||
        (combine.operand(0) == b && combine.operand(1) == a))) {
    return {ReduceCombiner::kGeneral, nullptr};
  }
  const bool bitwise_ok = !IsFloat(type);
  switch (combine.kind()) {
    case OpKind::kAdd:
      return {ReduceCombiner::kAdd, &combine};
    case OpKind::kMultiply:
      return {ReduceCombiner::kMultiply, &combine};
    case OpKind::kMaximum:
      return {ReduceCombiner::kMaximum, &combine};
    case OpKind::kMinimum:
      return {ReduceCombiner::kMinimum, &combine};
    case OpKind::kAnd:
      if (bitwise_ok) return {ReduceCombiner::kAnd, &combine};
      break;
    case OpKind::kOr:
      if (bitwise_ok) return {ReduceCombiner::kOr, &combine};
      break;
    case OpKind::kXor:
      if (bitwise_ok) return {ReduceCombiner::kXor, &combine};
      break;
    default:
      break;
  }
  return {ReduceCombiner::kGeneral, nullptr};
}

Status CheckGeneralBody(const Operation& reduce) {
  const Block* block = reduce.region(0)->entry_block();
  if (block == nullptr || block->num_arguments() != 2 * reduce.num_results()) {
    return absl::InvalidArgumentError(StrCat("jit: reduction emitter: reduce body of ",
                                             reduce.num_results(), " results is malformed"));
  }
  for (const auto& op : block->operations()) {
    if (op->kind() == OpKind::kReturn) continue;
    if (op->kind() == OpKind::kConstant && op->GetDense("value") != nullptr &&
        op->result(0)->type().element_count() == 1) {
      continue;
    }
    if (op->kind() != OpKind::kConstant && IsElementwise(*op)) continue;
    return Unsupported(StrCat("reduce body op ", op->name(),
                              " is not supported (elementwise ops and scalar constants only)"));
  }
  return absl::OkStatus();
}

// An access for `source` (read by `user`): a folded one-element constant or a buffer, appended
// to the signature's inputs on first use.
ReductionAccess MakeAccess(const Value& source, KernelSignature& signature) {
  ReductionAccess access;
  access.type = source.type().element_type();
  const Operation* def = source.defining_op();
  const DenseElements* dense =
      def != nullptr && def->kind() == OpKind::kConstant ? def->GetDense("value") : nullptr;
  if (dense != nullptr && source.type().element_count() == 1 &&
      static_cast<int64_t>(dense->bytes.size()) == ElementByteWidth(access.type)) {
    access.constant = dense->bytes.data();
    return access;
  }
  auto it = std::find(signature.inputs.begin(), signature.inputs.end(), &source);
  access.buffer = static_cast<int>(it - signature.inputs.begin());
  if (it == signature.inputs.end()) signature.inputs.push_back(&source);
  return access;
}

int64_t Product(const std::vector<ReductionLoopDim>& dims) {
  int64_t p = 1;
  for (const auto& d : dims) p *= d.extent;
  return p;
}

int64_t BitLength(int64_t v) {
  int64_t bits = 0;
  while (v > 0) {
    ++bits;
    v >>= 1;
  }
  return bits;
}

}  // namespace

int64_t AccumulatorBytes(const ReductionLayout& layout, int64_t k) {
  if (layout.combiner != ReduceCombiner::kGeneral) return ElementByteWidth(layout.accumulator);
  return ElementByteWidth(layout.reduce->result(k)->type().element_type());
}

StatusOr<ReductionLayout> PlanReductionLayout(const WorkItem& item, const FusionPlan& fusion) {
  if (item.kind != WorkKind::kReduction || item.root == nullptr ||
      item.root->kind() != OpKind::kReduce) {
    return Unsupported(StrCat("work item ", item.id, " has kind ", WorkKindName(item.kind),
                              " and root ", item.root != nullptr ? item.root->name() : "?",
                              ", expected a reduction rooted at a reduce"));
  }
  ReductionLayout layout;
  const Operation& reduce = *item.root;
  layout.reduce = &reduce;
  const int64_t n = reduce.num_results();
  layout.num_results = n;
  if (n < 1 || reduce.num_operands() != 2 * n || reduce.num_regions() != 1) {
    return absl::InvalidArgumentError("jit: reduction emitter: malformed reduce");
  }
  const std::vector<int64_t> dims = reduce.operand(0)->type().dims();
  const size_t rank = dims.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t d : reduce.GetInts("dimensions")) {
    if (d < 0 || d >= static_cast<int64_t>(rank) || reduced[static_cast<size_t>(d)]) {
      return absl::InvalidArgumentError(StrCat("jit: reduction emitter: bad reduce dimension ", d));
    }
    reduced[static_cast<size_t>(d)] = true;
  }
  layout.type = reduce.result(0)->type().element_type();
  std::tie(layout.combiner, layout.combiner_op) = NamedCombiner(reduce, layout.type);
  if (layout.combiner == ReduceCombiner::kGeneral) ACCY_RETURN_IF_ERROR(CheckGeneralBody(reduce));
  const bool narrow_float = layout.type == ElementType::kF16 || layout.type == ElementType::kBF16;
  layout.accumulator = layout.combiner != ReduceCombiner::kGeneral && narrow_float
                           ? ElementType::kF32
                           : layout.type;

  // 1. Accesses and signature, walking the ops in order (operands left to right).
  const std::set<const Operation*> members(item.ops.begin(), item.ops.end());
  std::vector<std::vector<int64_t>> strides;  // per access, per input dim
  for (const Operation* op : item.ops) {
    const bool is_root = op == &reduce;
    if (!is_root && !IsFusableElementwiseOp(*op)) {
      return Unsupported(StrCat("op ", op->name(), " in a reduction item is not elementwise"));
    }
    if (!is_root && op->result(0)->type().dims() != dims) {
      return Unsupported(StrCat(op->name(), " has shape ", ShapeText(op->result(0)->type().dims()),
                                " in a reduction over shape ", ShapeText(dims)));
    }
    for (int64_t i = 0; i < op->num_operands(); ++i) {
      const Value* operand = op->operand(i);
      const Operation* def = operand->defining_op();
      if (def != nullptr && members.count(def) != 0) continue;  // computed in registers
      if (is_root && i >= n) {                                   // an init value (rank 0)
        layout.inits.push_back(MakeAccess(*operand, layout.signature));
        continue;
      }
      const Operation* broadcast = nullptr;
      const Value* source = operand;
      if (def != nullptr && def->kind() == OpKind::kBroadcastInDim && fusion.IsElided(def)) {
        broadcast = def;
        source = def->operand(0);
      }
      ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> s, SourceStrides(*op, *source, broadcast, dims));
      layout.access_of_use[{op, i}] = static_cast<int>(layout.accesses.size());
      layout.accesses.push_back(MakeAccess(*source, layout.signature));
      strides.push_back(std::move(s));
    }
  }
  if (static_cast<int64_t>(layout.inits.size()) != n) {
    return Unsupported("an init value of the reduce is computed inside the item");
  }
  for (int64_t k = 0; k < n; ++k) layout.signature.outputs.push_back(reduce.result(k));

  // 2. Loop dims: drop size-1 dims, merge neighbours of the same class contiguous for every
  // access (a constant access has stride 0 everywhere).
  const size_t access_count = layout.accesses.size();
  std::vector<ReductionLoopDim> loop_dims;
  std::vector<bool> loop_reduced;
  for (size_t d = 0; d < rank; ++d) {
    if (dims[d] == 1) continue;
    bool merge = !loop_dims.empty() && loop_reduced.back() == reduced[d];
    for (size_t a = 0; merge && a < access_count; ++a) {
      merge = loop_dims.back().strides[a] == strides[a][d] * dims[d];
    }
    if (merge) {
      loop_dims.back().extent *= dims[d];
      for (size_t a = 0; a < access_count; ++a) loop_dims.back().strides[a] = strides[a][d];
      continue;
    }
    ReductionLoopDim dim;
    dim.extent = dims[d];
    for (size_t a = 0; a < access_count; ++a) dim.strides.push_back(strides[a][d]);
    loop_dims.push_back(std::move(dim));
    loop_reduced.push_back(reduced[d]);
  }
  std::vector<ReductionLoopDim> kept, reduced_dims;
  for (size_t i = 0; i < loop_dims.size(); ++i) {
    (loop_reduced[i] ? reduced_dims : kept).push_back(loop_dims[i]);
  }
  const ReductionLoopDim unit_lane{1, std::vector<int64_t>(access_count, 0)};

  // 3. Mode and units.
  const bool associative = layout.combiner != ReduceCombiner::kGeneral;
  layout.row_mode = associative && !loop_reduced.empty() && loop_reduced.back() &&
                    reduced_dims.back().extent >= kReductionMinRowExtent;
  int64_t unit_elements = 0;  // input elements one unit reads
  if (layout.row_mode) {
    layout.lane_dim = reduced_dims.back();
    reduced_dims.pop_back();
    layout.row_dims = reduced_dims;
    layout.unit_dims = kept;
    layout.lanes = kReductionRowLanes;
    layout.units = Product(kept);
    layout.rows = Product(reduced_dims);
    layout.steps_per_row = BlockCount(layout.lane_dim.extent, layout.lanes);
    unit_elements = layout.rows * layout.lane_dim.extent;
  } else {
    layout.lane_dim = kept.empty() ? unit_lane : kept.back();
    if (!kept.empty()) kept.pop_back();
    layout.unit_dims = kept;
    layout.row_dims = reduced_dims;
    layout.lanes = std::max<int64_t>(1, std::min(layout.lane_dim.extent, kReductionTileLanes));
    layout.tiles_per_row = BlockCount(layout.lane_dim.extent, layout.lanes);
    layout.units = Product(kept) * layout.tiles_per_row;
    layout.rows = Product(reduced_dims);
    layout.steps_per_row = 1;
    unit_elements = layout.rows * layout.lanes;
  }

  // 4. Chunks: kReductionChunkSteps steps, or whole rows when rows are shorter.
  const int64_t k_steps = kReductionChunkSteps;
  layout.cascade = layout.combiner == ReduceCombiner::kAdd && IsFloat(layout.type);
  if (layout.steps_per_row >= k_steps) {
    layout.chunk_splits_rows = true;
    layout.chunks_per_row = BlockCount(layout.steps_per_row, k_steps);
    layout.chunks = layout.rows * layout.chunks_per_row;
  } else {
    layout.rows_per_chunk = std::max<int64_t>(1, k_steps / std::max<int64_t>(1, layout.steps_per_row));
    layout.chunks = BlockCount(layout.rows, layout.rows_per_chunk);
  }
  const int64_t chunk_elements =
      std::max<int64_t>(1, std::min(unit_elements, layout.chunk_splits_rows
                                                       ? k_steps * layout.lanes
                                                       : layout.rows_per_chunk * layout.steps_per_row * layout.lanes));

  // 5. Segments (two-phase) for few long units of an associative combiner.
  layout.partials_per_unit_segment = layout.row_mode ? 1 : layout.lanes;
  // (No units -- an empty result of long reductions -- means nothing to split: no blocks.)
  if (associative && layout.units > 0 && layout.units < kReductionSplitMaxUnits &&
      unit_elements >= 2 * kReductionSegmentElements) {
    layout.chunks_per_segment = std::max<int64_t>(1, kReductionSegmentElements / chunk_elements);
    layout.segments = BlockCount(layout.chunks, layout.chunks_per_segment);
  } else {
    layout.segments = 1;
    layout.chunks_per_segment = layout.chunks;
  }
  layout.cascade = layout.cascade && layout.chunks_per_segment > 1;
  layout.cascade_levels = BitLength(layout.chunks_per_segment) + 1;

  // 6. Blocks.
  KernelSignature& sig = layout.signature;
  if (layout.segments > 1) {
    layout.units_per_block = 1;
    sig.block_size = 1;
    sig.finish_block_count = layout.units > 0 ? 1 : 0;
    sig.block_count = layout.units * layout.segments + sig.finish_block_count;
    sig.scratch_bytes = layout.units * layout.segments * layout.partials_per_unit_segment *
                        AccumulatorBytes(layout, 0);
  } else {
    const int64_t unit_cost = std::max<int64_t>(unit_elements, layout.lanes);
    layout.units_per_block = std::max<int64_t>(1, kReductionBlockElements / unit_cost);
    sig.block_size = layout.units_per_block;
    sig.block_count = BlockCount(layout.units, layout.units_per_block);
  }
  return layout;
}

}  // namespace accy::jit
