// FusionPlan, PlanFusion and the op predicates of fusion_plan.h. The planning itself lives in
// fusion_planner.cc and fusion_patterns.cc.
#include "src/fusion/fusion_plan.h"

#include <algorithm>
#include <functional>
#include <new>
#include <stdexcept>

#include "src/fusion/fusion_planner.h"
#include "src/util/str_cat.h"

namespace accy {

std::string_view ClusterKindName(ClusterKind kind) {
  switch (kind) {
    case ClusterKind::kElementwise:
      return "elementwise";
    case ClusterKind::kDotEpilogue:
      return "dot_epilogue";
    case ClusterKind::kConvolutionEpilogue:
      return "convolution_epilogue";
    case ClusterKind::kReduceWindowEpilogue:
      return "reduce_window_epilogue";
    case ClusterKind::kReductionInput:
      return "reduction_input";
    case ClusterKind::kRowPipeline:
      return "row_pipeline";
    case ClusterKind::kFlashAttention:
      return "flash_attention";
  }
  return "unknown";
}

bool IsFusableElementwiseOp(const Operation& op) {
  return IsElementwise(op) && op.num_results() == 1;
}

bool RegionsAreOpaque(const Operation& op) {
  switch (op.kind()) {
    case OpKind::kReduce:
    case OpKind::kReduceWindow:
    case OpKind::kScatter:
    case OpKind::kSelectAndScatter:
    case OpKind::kSort:
    case OpKind::kWhile:
    case OpKind::kCase:
      return true;
    default:
      return false;
  }
}

FusionPlan::FusionPlan(const allocator_type& alloc)
    : clusters_(alloc), elided_(alloc), elided_by_address_(alloc), member_index_(alloc) {}

bool FusionPlan::IsElided(const Operation* op) const {
  return std::binary_search(elided_by_address_.begin(), elided_by_address_.end(), op,
                            std::less<const Operation*>());
}

const FusionCluster* FusionPlan::ClusterOf(const Operation* op) const {
  auto it = std::lower_bound(
      member_index_.begin(), member_index_.end(), op,
      [](const auto& entry, const Operation* key) {
        return std::less<const Operation*>()(entry.first, key);
      });
  if (it == member_index_.end() || it->first != op) return nullptr;
  return &clusters_[it->second];
}

std::string FusionPlan::ToText() const {
  std::string out;
  for (const FusionCluster& cluster : clusters_) {
    out += StrCat(ClusterKindName(cluster.kind), ":");
    for (size_t i = 0; i < cluster.ops.size(); ++i) {
      out += StrCat(i == 0 ? " " : ", ", cluster.ops[i]->name());
    }
    out += "\n";
  }
  if (!elided_.empty()) {
    out += "elided:";
    for (size_t i = 0; i < elided_.size(); ++i) {
      out += StrCat(i == 0 ? " " : ", ", elided_[i]->name());
    }
    out += "\n";
  }
  return out;
}

StatusOr<FusionPlan*> PlanFusion(const Function& function, std::pmr::memory_resource* resource,
                                 const FusionOptions& options) {
  std::pmr::polymorphic_allocator<> alloc(resource);
  FusionPlan* plan = nullptr;
  Status failure;
  try {
    plan = alloc.new_object<FusionPlan>();
    if (!options.enable_fusion) return plan;  // the empty plan: every op its own item
    FusionPlanner planner(function, resource);
    failure = planner.Run(*plan);
    if (failure.ok()) return plan;
  } catch (const std::bad_alloc&) {
    failure = absl::ResourceExhaustedError(StrCat(
        "fusion plan of @", function.name(), ": the memory resource refused an allocation"));
  } catch (const std::length_error&) {
    failure = absl::ResourceExhaustedError(
        StrCat("fusion plan of @", function.name(), ": a container exceeded its maximum size"));
  }
  if (plan != nullptr) alloc.delete_object(plan);
  return failure;
}

StatusOr<passes::WorkBounds> EstimateFusionPlan(const Function& function) {
  return FusionPlanner::Estimate(function);
}

StatusOr<passes::WorkBounds> EstimateFusionPlanFromCensus(const passes::Census& census) {
  return FusionPlanner::EstimateFromCensus(census);
}

}  // namespace accy
