// Type rules of the collectives (StableHLO spec "replica_id", "partition_id", "all_reduce",
// "all_gather", "reduce_scatter", "all_to_all", "collective_permute", "collective_broadcast";
// collective_reduce as the StableHLO interpreter defines it). Result types are given; these
// check them against the operands and attributes. Constraints that need the grid's size (an
// empty replica_groups, groups covering every replica) are checked where the grid is known
// (src/collectives/process_groups.h).
#include <set>
#include <string>

#include "src/ir/collective_attributes.h"
#include "src/ir/type_inference.h"
#include "src/util/str_cat.h"

namespace accy::ir_internal {
namespace {

Status Error(OpKind kind, std::string_view message) {
  return absl::InvalidArgumentError(StrCat(OpName(kind), ": ", message));
}

Status ExpectCounts(OpKind kind, size_t operands, size_t results, size_t want_operands,
                    size_t want_results) {
  if (operands != want_operands || results != want_results) {
    return Error(kind, StrCat("expected ", want_operands, " operand(s) and ", want_results,
                              " result(s), got ", operands, " and ", results));
  }
  return absl::OkStatus();
}

// replica_groups: values unique and >= -1 (-1 pads ragged groups), spec C2 of each op.
Status CheckGroups(OpKind kind, const CollectiveAttributes& attrs) {
  std::set<int64_t> seen;
  for (const std::vector<int64_t>& group : attrs.replica_groups) {
    for (int64_t id : group) {
      if (id < -1) {
        return Error(kind, StrCat("replica_groups holds ", id, ", expected ids >= 0 (-1 pads)"));
      }
      if (id >= 0 && !seen.insert(id).second) {
        return Error(kind, StrCat("replica_groups holds ", id, " twice (spec C2: unique)"));
      }
    }
  }
  if (attrs.use_global_device_ids && attrs.channel_id <= 0) {
    return Error(kind, "use_global_device_ids needs a channel_handle with handle > 0");
  }
  return absl::OkStatus();
}

// The group size the attributes imply (the second dim of replica_groups), or -1 when it
// depends on the grid: no groups given, or cross_replica_and_partition (channel_id > 0 without
// use_global_device_ids: each group spans every partition).
int64_t GroupSize(OpKind kind, const CollectiveAttributes& attrs) {
  if (attrs.replica_groups.empty()) return -1;
  if (kind != OpKind::kAllToAll && attrs.channel_id > 0 && !attrs.use_global_device_ids) {
    return -1;
  }
  // Ragged groups are padded: the size is the longest row's count of ids, and every row must
  // then hold as many (all_gather, reduce_scatter, all_to_all need one size).
  return static_cast<int64_t>(attrs.replica_groups[0].size());
}

Status CheckDim(OpKind kind, std::string_view name, int64_t dim, const TensorType& type) {
  if (dim < 0 || dim >= type.rank()) {
    return Error(kind, StrCat(name, " ", dim, " is out of range [0, ", type.rank(), ") for ",
                              type.ToString()));
  }
  return absl::OkStatus();
}

Status CheckPadding(OpKind kind, const CollectiveAttributes& attrs) {
  for (const std::vector<int64_t>& group : attrs.replica_groups) {
    for (int64_t id : group) {
      if (id == -1) {
        return Error(kind, "replica_groups is padded with -1, but this op needs groups of one "
                           "size (its result's shape depends on it)");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

Status VerifyCollective(OpKind kind, std::span<const TensorType> operands,
                        std::span<const TensorType> results,
                        std::span<const NamedAttribute> attributes) {
  ACCY_ASSIGN_OR_RETURN(CollectiveAttributes attrs, ReadCollectiveAttributes(kind, attributes));
  ACCY_RETURN_IF_ERROR(CheckGroups(kind, attrs));
  const int64_t group_size = GroupSize(kind, attrs);
  switch (kind) {
    case OpKind::kReplicaId:
    case OpKind::kPartitionId: {
      ACCY_RETURN_IF_ERROR(ExpectCounts(kind, operands.size(), results.size(), 0, 1));
      if (results[0] != *TensorType::Create(ElementType::kU32, {})) {
        return Error(kind, StrCat("result has type ", results[0].ToString(),
                                  ", expected tensor<ui32>"));
      }
      return absl::OkStatus();
    }
    case OpKind::kCollectiveBroadcast:
      if (attrs.has_dynamic_root) {
        // Data operands, then tensor<Nxi32> of their roots (one per data operand).
        const TensorType roots = *TensorType::Create(
            ElementType::kI32, {static_cast<int64_t>(results.size())});
        if (operands.size() != results.size() + 1) {
          return Error(kind, StrCat("with has_dynamic_root, expected the ", results.size(),
                                    " data operands then a ", roots.ToString(),
                                    " of their roots, got ", operands.size(), " operands"));
        }
        if (operands.back() != roots) {
          return Error(kind, StrCat("with has_dynamic_root, the roots operand has type ",
                                    operands.back().ToString(), ", expected ",
                                    roots.ToString(), " (one i32 group position per result)"));
        }
        operands = operands.first(results.size());
      }
      [[fallthrough]];
    case OpKind::kAllReduce:
    case OpKind::kCollectiveReduce:
    case OpKind::kCollectivePermute: {
      if (operands.empty() || operands.size() != results.size()) {
        return Error(kind, StrCat("expected as many results as operands (at least one), got ",
                                  operands.size(), " operands and ", results.size(),
                                  " results"));
      }
      for (size_t i = 0; i < operands.size(); ++i) {
        if (operands[i] != results[i]) {
          return Error(kind, StrCat("result ", i, " has type ", results[i].ToString(),
                                    ", expected ", operands[i].ToString(),
                                    " (the operand's type)"));
        }
      }
      if (kind == OpKind::kCollectivePermute) {
        std::set<int64_t> sources, targets;
        for (const auto& [source, target] : attrs.source_target_pairs) {
          if (source < 0 || target < 0) {
            return Error(kind, StrCat("source_target_pairs holds (", source, ", ", target,
                                      "), expected non-negative ids (spec C3)"));
          }
          if (!sources.insert(source).second) {
            return Error(kind, StrCat("source ", source, " appears twice in "
                                      "source_target_pairs (spec C1)"));
          }
          if (!targets.insert(target).second) {
            return Error(kind, StrCat("target ", target, " appears twice in "
                                      "source_target_pairs (spec C2)"));
          }
        }
      }
      return absl::OkStatus();
    }
    case OpKind::kAllGather: {
      if (operands.empty() || operands.size() != results.size()) {
        return Error(kind, StrCat("expected as many results as operands (at least one), got ",
                                  operands.size(), " and ", results.size()));
      }
      ACCY_RETURN_IF_ERROR(CheckPadding(kind, attrs));
      for (size_t i = 0; i < operands.size(); ++i) {
        const TensorType& in = operands[i];
        const TensorType& out = results[i];
        ACCY_RETURN_IF_ERROR(CheckDim(kind, "all_gather_dim", attrs.all_gather_dim, in));
        bool ok = in.element_type() == out.element_type() && in.rank() == out.rank();
        for (int64_t d = 0; ok && d < in.rank(); ++d) {
          if (d == attrs.all_gather_dim) {
            ok = group_size < 0 ? out.dim(d) >= 0 && (in.dim(d) == 0 ? out.dim(d) == 0
                                                                     : out.dim(d) % in.dim(d) == 0)
                                : out.dim(d) == in.dim(d) * group_size;
          } else {
            ok = out.dim(d) == in.dim(d);
          }
        }
        if (!ok) {
          return Error(kind, StrCat("result ", i, " has type ", out.ToString(), ", expected ",
                                    in.ToString(), " with dim ", attrs.all_gather_dim,
                                    " times the group size",
                                    group_size < 0 ? std::string()
                                                   : StrCat(" (", group_size, ")"),
                                    " (spec C6)"));
        }
      }
      return absl::OkStatus();
    }
    case OpKind::kReduceScatter: {
      ACCY_RETURN_IF_ERROR(ExpectCounts(kind, operands.size(), results.size(), 1, 1));
      ACCY_RETURN_IF_ERROR(CheckPadding(kind, attrs));
      const TensorType& in = operands[0];
      const TensorType& out = results[0];
      ACCY_RETURN_IF_ERROR(CheckDim(kind, "scatter_dimension", attrs.scatter_dimension, in));
      bool ok = in.element_type() == out.element_type() && in.rank() == out.rank();
      for (int64_t d = 0; ok && d < in.rank(); ++d) {
        if (d == attrs.scatter_dimension) {
          ok = group_size < 0 ? (out.dim(d) == 0 ? in.dim(d) == 0 : in.dim(d) % out.dim(d) == 0)
                              : in.dim(d) % group_size == 0 && out.dim(d) == in.dim(d) / group_size;
        } else {
          ok = out.dim(d) == in.dim(d);
        }
      }
      if (!ok) {
        return Error(kind, StrCat("result has type ", out.ToString(), ", expected ",
                                  in.ToString(), " with dim ", attrs.scatter_dimension,
                                  " divided by the group size",
                                  group_size < 0 ? std::string() : StrCat(" (", group_size, ")"),
                                  " (spec C8)"));
      }
      return absl::OkStatus();
    }
    case OpKind::kAllToAll: {
      if (operands.empty() || operands.size() != results.size()) {
        return Error(kind, StrCat("expected as many results as operands (at least one), got ",
                                  operands.size(), " and ", results.size()));
      }
      ACCY_RETURN_IF_ERROR(CheckPadding(kind, attrs));
      const int64_t count = attrs.split_count;
      if (count <= 0) return Error(kind, StrCat("split_count is ", count, ", expected > 0 (C3)"));
      if (group_size >= 0 && group_size != count) {
        return Error(kind, StrCat("split_count ", count, " differs from the group size ",
                                  group_size, " (spec C7)"));
      }
      for (size_t i = 0; i < operands.size(); ++i) {
        const TensorType& in = operands[i];
        const TensorType& out = results[i];
        ACCY_RETURN_IF_ERROR(CheckDim(kind, "split_dimension", attrs.split_dimension, in));
        ACCY_RETURN_IF_ERROR(CheckDim(kind, "concat_dimension", attrs.concat_dimension, in));
        if (in.dim(attrs.split_dimension) % count != 0) {
          return Error(kind, StrCat("dim ", attrs.split_dimension, " of ", in.ToString(),
                                    " is not a multiple of split_count ", count, " (spec C4)"));
        }
        std::vector<int64_t> dims = in.dims();
        dims[static_cast<size_t>(attrs.split_dimension)] /= count;
        dims[static_cast<size_t>(attrs.concat_dimension)] *= count;
        if (out.element_type() != in.element_type() || out.dims() != dims) {
          return Error(kind, StrCat("result ", i, " has type ", out.ToString(), ", expected ",
                                    TensorType::Create(in.element_type(), dims)->ToString(),
                                    " (spec C9)"));
        }
      }
      return absl::OkStatus();
    }
    default:
      return Error(kind, "not a collective op");
  }
}

}  // namespace accy::ir_internal
