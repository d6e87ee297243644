// Analysis of row_pipeline work items (row_pipeline_plan.h): reads the cluster generically, not
// by matching softmax or layer norm formulas.
#include "jit/row_pipeline_plan.h"

#include <algorithm>
#include <optional>
#include <string>

#include "jit/index_math.h"
#include "jit/row_accumulation.h"
#include "src/fusion/fusion_plan.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/float_format.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

Status Unsupported(const WorkItem& item, const std::string& what) {
  return absl::UnimplementedError(StrCat("jit: row_pipeline emitter: work item ", item.id,
                                         " (root ", item.root->name(), "): ", what));
}


class RowPipelinePlanner {
 public:
  RowPipelinePlanner(const WorkItem& item, const FusionPlan& fusion)
      : item_(item), fusion_(fusion) {}

  StatusOr<RowPlan> Plan() {
    ACCY_RETURN_IF_ERROR(Analyse());
    return std::move(plan_);
  }

 private:
  Status Analyse();
  Status AddSource(const Operation& op, int64_t index);
  StatusOr<RowSource> ExternalAccess(const Operation& op, const Value& source,
                                     const Operation* broadcast);

  const WorkItem& item_;
  const FusionPlan& fusion_;
  RowPlan plan_;
};

Status RowPipelinePlanner::Analyse() {
  if (item_.kind != WorkKind::kRowPipeline) {
    return Unsupported(item_, StrCat("kind ", WorkKindName(item_.kind), " is not row_pipeline"));
  }
  ACCY_CHECK(item_.output_value != nullptr && !item_.ops.empty());
  plan_.full_dims = item_.output_value->type().dims();
  if (plan_.full_dims.empty()) return Unsupported(item_, "the root has rank 0");
  plan_.row_dims.assign(plan_.full_dims.begin(), plan_.full_dims.end() - 1);
  plan_.columns = plan_.full_dims.back();
  plan_.rows = 1;
  for (int64_t d : plan_.row_dims) plan_.rows *= d;
  plan_.members.insert(item_.ops.begin(), item_.ops.end());
  if (item_.ops.back()->result(0) != item_.output_value) {
    return Unsupported(item_, "the output is not the last op's result");
  }

  for (const Operation* op : item_.ops) {
    if (op->num_results() != 1) {
      return Unsupported(item_, StrCat(op->name(), " has ", op->num_results(), " results"));
    }
    const Value* result = op->result(0);
    const bool full = result->type().dims() == plan_.full_dims;
    if (!full && result->type().dims() != plan_.row_dims) {
      return Unsupported(item_, StrCat(op->name(), " has shape ", ShapeText(result->type().dims()),
                                       " in a row pipeline over ", ShapeText(plan_.full_dims)));
    }
    int depth = 0;
    if (op->kind() == OpKind::kReduce) {
      const std::optional<OpKind> reducer = RowReducer(*op);
      const ElementType type = result->type().element_type();
      if (full || !reducer.has_value() || op->num_operands() != 2 ||
          op->GetInts("dimensions") !=
              std::vector<int64_t>{static_cast<int64_t>(plan_.full_dims.size()) - 1} ||
          op->operand(0)->type().dims() != plan_.full_dims ||
          op->operand(0)->type().element_type() != type ||
          op->operand(1)->type().element_type() != type || op->operand(1)->type().rank() != 0) {
        return Unsupported(item_, StrCat(op->name(), " is not a reduce over the last dim with an ",
                                         "add, maximum or minimum body of one element type"));
      }
      ACCY_RETURN_IF_ERROR(AddSource(*op, 0));
      ACCY_RETURN_IF_ERROR(AddSource(*op, 1));
      const RowSource& input = plan_.sources.at({op, 0});
      const int input_depth = input.member != nullptr ? plan_.depth.at(input.member) : 0;
      const RowSource& init = plan_.sources.at({op, 1});
      const int init_depth = init.member != nullptr ? plan_.depth.at(init.member) : 0;
      // The pass reads the input and, when it ends, the init value (a row value of the pass's
      // depth at most); the result is available from the next depth on.
      const int pass = std::max(input_depth, init_depth);
      depth = pass + 1;
      plan_.reduces.push_back({op, *reducer, type, pass});
    } else if (IsFusableElementwiseOp(*op)) {
      for (int64_t i = 0; i < op->num_operands(); ++i) {
        ACCY_RETURN_IF_ERROR(AddSource(*op, i));
        const RowSource& s = plan_.sources.at({op, i});
        if (s.member != nullptr) depth = std::max(depth, plan_.depth.at(s.member));
      }
    } else {
      return Unsupported(item_, StrCat("op ", op->name(), " cannot run in a row pipeline"));
    }
    plan_.is_full[result] = full;
    plan_.depth[result] = depth;
  }
  if (!plan_.is_full.at(item_.output_value)) return Unsupported(item_, "the root is a row value");
  plan_.passes = plan_.depth.at(item_.output_value);
  return absl::OkStatus();
}

Status RowPipelinePlanner::AddSource(const Operation& op, int64_t index) {
  const Value* operand = op.operand(index);
  const Operation* def = operand->defining_op();
  if (def != nullptr && plan_.members.count(def) != 0) {
    const bool op_full = op.result(0)->type().dims() == plan_.full_dims;
    const bool operand_full = operand->type().dims() == plan_.full_dims;
    // A full op reads a full value or (rank-1 rows: a rank-0 select/clamp operand) a row value.
    if (!operand_full && op_full && operand->type().rank() != 0) {
      return Unsupported(item_, StrCat(op.name(), " reads a row value without a broadcast"));
    }
    if (operand_full && !op_full && op.kind() != OpKind::kReduce) {
      return Unsupported(item_, StrCat(op.name(), " reads a full value as a row value"));
    }
    plan_.sources[{&op, index}] = RowSource{operand, -1};
    return absl::OkStatus();
  }
  if (def != nullptr && def->kind() == OpKind::kBroadcastInDim && fusion_.IsElided(def)) {
    const Value* source = def->operand(0);
    const Operation* source_def = source->defining_op();
    if (source_def != nullptr && plan_.members.count(source_def) != 0) {
      // A row broadcast of a row value computed in the pipeline.
      const std::vector<int64_t> map = def->GetInts("broadcast_dimensions");
      std::vector<int64_t> iota(plan_.row_dims.size());
      for (size_t i = 0; i < iota.size(); ++i) iota[i] = static_cast<int64_t>(i);
      if (source->type().dims() != plan_.row_dims || map != iota ||
          def->result(0)->type().dims() != plan_.full_dims) {
        return Unsupported(item_, StrCat(op.name(), " reads a broadcast of a pipeline value that ",
                                         "is not a row broadcast"));
      }
      plan_.sources[{&op, index}] = RowSource{source, -1};
      return absl::OkStatus();
    }
    ACCY_ASSIGN_OR_RETURN(RowSource external, ExternalAccess(op, *source, def));
    plan_.sources[{&op, index}] = external;
    return absl::OkStatus();
  }
  ACCY_ASSIGN_OR_RETURN(RowSource external, ExternalAccess(op, *operand, nullptr));
  plan_.sources[{&op, index}] = external;
  return absl::OkStatus();
}

StatusOr<RowSource> RowPipelinePlanner::ExternalAccess(const Operation& op, const Value& source,
                                                    const Operation* broadcast) {
  // Strides over the dims of the op's iteration space (F, or the row dims; a reduce's input
  // is F and its init a scalar).
  const bool full_space = op.kind() == OpKind::kReduce
                              ? source.type().rank() != 0
                              : op.result(0)->type().dims() == plan_.full_dims;
  const std::vector<int64_t>& space = full_space ? plan_.full_dims : plan_.row_dims;
  const std::vector<int64_t>& dims = source.type().dims();
  std::vector<int64_t> strides(space.size(), 0);
  if (broadcast != nullptr) {
    const std::vector<int64_t> map = broadcast->GetInts("broadcast_dimensions");
    if (map.size() != dims.size() || broadcast->result(0)->type().dims() != space) {
      return Unsupported(item_, StrCat(op.name(), " reads an elided broadcast_in_dim of shape ",
                                       ShapeText(broadcast->result(0)->type().dims()),
                                       " in a space of shape ", ShapeText(space)));
    }
    const std::vector<int64_t> source_strides = RowMajorStrides(dims);
    for (size_t k = 0; k < map.size(); ++k) {
      if (dims[k] != 1) strides[static_cast<size_t>(map[k])] = source_strides[k];
    }
  } else if (!dims.empty()) {
    if (dims != space) {
      return Unsupported(item_, StrCat(op.name(), " reads an operand of shape ", ShapeText(dims),
                                       " in a space of shape ", ShapeText(space)));
    }
    strides = RowMajorStrides(space);
  }
  RowAccess access;
  access.type = source.type().element_type();
  access.outer.assign(plan_.row_dims.size(), 0);
  for (size_t d = 0; d < plan_.row_dims.size(); ++d) access.outer[d] = strides[d];
  access.column = full_space ? strides.back() : 0;
  const Operation* def = source.defining_op();
  const DenseElements* dense =
      def != nullptr && def->kind() == OpKind::kConstant ? def->GetDense("value") : nullptr;
  if (dense != nullptr && source.type().element_count() == 1 &&
      static_cast<int64_t>(dense->bytes.size()) == ElementByteWidth(access.type)) {
    access.constant = dense->bytes.data();
  } else {
    auto it = std::find(plan_.inputs.begin(), plan_.inputs.end(), &source);
    access.buffer = static_cast<int>(it - plan_.inputs.begin());
    if (it == plan_.inputs.end()) plan_.inputs.push_back(&source);
  }
  plan_.accesses.push_back(std::move(access));
  return RowSource{nullptr, static_cast<int>(plan_.accesses.size()) - 1};
}

}  // namespace

StatusOr<RowPlan> PlanRowPipeline(const WorkItem& item, const FusionPlan& fusion) {
  RowPipelinePlanner planner(item, fusion);
  return planner.Plan();
}

std::vector<const Operation*> FullOpsFor(const RowPlan& plan, const WorkItem& item,
                                         const std::vector<const Value*>& targets,
                                         const Value* cached) {
  std::set<const Operation*> needed;
  std::vector<const Value*> work(targets.begin(), targets.end());
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    const Operation* def = v->defining_op();
    if (v == cached || !plan.is_full.at(v) || !needed.insert(def).second) continue;
    for (int64_t i = 0; i < def->num_operands(); ++i) {
      const RowSource& s = plan.sources.at({def, i});
      if (s.member != nullptr) work.push_back(s.member);
    }
  }
  std::vector<const Operation*> ordered;
  for (const Operation* op : item.ops) {
    if (needed.count(op) != 0) ordered.push_back(op);
  }
  return ordered;
}

std::map<const Operation*, const Value*> NonPositiveExponentials(const RowPlan& plan) {
  auto same_source = [&](const RowSource& a, const RowSource& b) {
    if (a.member != nullptr || b.member != nullptr) return a.member == b.member;
    const RowAccess& x = plan.accesses[static_cast<size_t>(a.access)];
    const RowAccess& y = plan.accesses[static_cast<size_t>(b.access)];
    return x.buffer >= 0 && x.buffer == y.buffer && x.type == y.type && x.outer == y.outer &&
           x.column == y.column;
  };
  std::map<const Operation*, const Value*> exps;
  for (const Operation* op : plan.members) {
    if (op->kind() != OpKind::kExponential ||
        op->result(0)->type().element_type() != ElementType::kF32) {
      continue;
    }
    const Value* difference = plan.sources.at({op, 0}).member;
    const Operation* subtract = difference != nullptr ? difference->defining_op() : nullptr;
    if (subtract == nullptr || subtract->kind() != OpKind::kSubtract) continue;
    const Value* max = plan.sources.at({subtract, 1}).member;
    for (const RowReduce& reduce : plan.reduces) {
      if (reduce.op->result(0) == max && reduce.reducer == OpKind::kMaximum &&
          reduce.type == ElementType::kF32 &&
          same_source(plan.sources.at({reduce.op, 0}), plan.sources.at({subtract, 0}))) {
        exps[op] = max;
      }
    }
  }
  return exps;
}

namespace {

// `value` is a constant (through broadcast_in_dim, reshape and convert) of a float type whose
// elements are all >= 0 or -0 (+inf included, NaN not).
bool IsNonNegativeConstant(const Value* value) {
  const Operation* def = value->defining_op();
  while (def != nullptr && def->num_operands() == 1 &&
         (def->kind() == OpKind::kBroadcastInDim || def->kind() == OpKind::kReshape ||
          def->kind() == OpKind::kConvert)) {
    def = def->operand(0)->defining_op();
  }
  if (def == nullptr || def->kind() != OpKind::kConstant) return false;
  const DenseElements* dense = def->GetDense("value");
  if (dense == nullptr) return false;
  const ElementType type = dense->type.element_type();
  if (!IsFloat(type)) return false;
  const FloatFormat format = FormatOf(type);
  // The bits of +inf: larger magnitudes are NaN.
  const uint64_t infinity = ((uint64_t{1} << format.exponent_bits) - 1) << format.mantissa_bits;
  const size_t width = static_cast<size_t>(ElementByteWidth(type));
  if (dense->bytes.empty() || dense->bytes.size() % width != 0) return false;
  const uint64_t sign = uint64_t{1} << (8 * width - 1);
  for (size_t at = 0; at < dense->bytes.size(); at += width) {
    uint64_t bits = 0;
    for (size_t k = 0; k < width; ++k) bits |= uint64_t{dense->bytes[at + k]} << (8 * k);
    const uint64_t magnitude = bits & ~sign;
    if (magnitude > infinity || ((bits & sign) != 0 && magnitude != 0)) return false;
  }
  return true;
}

// Every use of `sum`, followed through multiplies, dividends and adds with non-negative
// constants, layout changes and converts, ends at sqrt, rsqrt or a divisor (ChunkSummedInF32's
// rule for sums of squares).
bool OnlyScaledIntoRoots(const Value* sum) {
  std::vector<const Value*> pending = {sum};
  while (!pending.empty()) {
    const Value* value = pending.back();
    pending.pop_back();
    for (const Use& use : value->uses()) {
      const Operation& user = *use.user;
      switch (user.kind()) {
        case OpKind::kSqrt:
        case OpKind::kRsqrt:
          continue;
        case OpKind::kDivide:
          if (user.operand(0) == value && user.operand(1) == value) return false;
          if (user.operand(1) == value) continue;  // the divisor
          if (!IsNonNegativeConstant(user.operand(1))) return false;
          break;
        case OpKind::kAdd:
        case OpKind::kMultiply:
          // A non-negative constant keeps the value's sign, so a later add cannot cancel.
          if (!IsNonNegativeConstant(user.operand(user.operand(0) == value ? 1 : 0))) return false;
          break;
        case OpKind::kBroadcastInDim:
        case OpKind::kReshape:
        case OpKind::kConvert:
        case OpKind::kTranspose:
          break;
        default:
          return false;
      }
      if (user.num_results() != 1 || !IsFloat(user.result(0)->type().element_type())) return false;
      pending.push_back(user.result(0));
    }
  }
  return true;
}

}  // namespace

bool ChunkSummedInF32(const RowReduce& reduce) {
  // The init value is added to the lanes' total: a negative one could cancel it.
  if (reduce.reducer != OpKind::kAdd || reduce.op->num_operands() != 2 ||
      !IsNonNegativeConstant(reduce.op->operand(1))) {
    return false;
  }
  const Operation* term = reduce.op->operand(0)->defining_op();
  if (term == nullptr) return false;
  if (term->kind() == OpKind::kMultiply && term->num_operands() == 2 &&
      term->operand(0) == term->operand(1)) {
    return (reduce.type == ElementType::kF32 || reduce.type == ElementType::kF16 ||
            reduce.type == ElementType::kBF16) &&
           OnlyScaledIntoRoots(reduce.op->result(0));
  }
  if (term->kind() != OpKind::kExponential || reduce.type != ElementType::kF32) return false;
  // Every use, through layout changes and converts, must not be a log.
  std::vector<const Value*> pending = {reduce.op->result(0)};
  while (!pending.empty()) {
    const Value* value = pending.back();
    pending.pop_back();
    for (const Use& use : value->uses()) {
      const OpKind kind = use.user->kind();
      if (kind == OpKind::kLog || kind == OpKind::kLogPlusOne) return false;
      if (kind == OpKind::kBroadcastInDim || kind == OpKind::kReshape || kind == OpKind::kConvert ||
          kind == OpKind::kTranspose) {
        pending.push_back(use.user->result(0));
      }
    }
  }
  return true;
}

}  // namespace accy::jit
