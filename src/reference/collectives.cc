// The collectives in the reference evaluator (spec "replica_id", "partition_id", "all_reduce",
// "all_gather", "reduce_scatter", "all_to_all", "collective_permute", "collective_broadcast";
// collective_reduce as the StableHLO interpreter defines it).
//
// Independent of the runtime's collective kernels: every process gathers its group's operands
// with Communicator::AllGather of raw bytes (collective_permute: one Permute of them), then
// computes its own result from the spec's formulas element by element (index loops, regions
// evaluated per element in group order). Only the process groups (src/collectives/
// process_groups.h, the spec's strategies) are shared with the runtime. Gathering per group, not
// world-wide, lets processes of other groups skip the op (divergent control flow).
#include <cstring>
#include <numeric>
#include <string>

#include "accy/collectives.h"
#include "src/collectives/process_groups.h"
#include "src/ir/collective_attributes.h"
#include "src/reference/evaluator_internal.h"
#include "src/util/str_cat.h"

namespace accy::reference {
namespace {

using collectives::Grid;

// Every group member's copy of `operand`, in group order.
StatusOr<std::vector<Tensor>> GatherGroup(Communicator* communicator, const Tensor& operand,
                                          const std::vector<int>& group) {
  if (communicator == nullptr) return std::vector<Tensor>{operand};  // a 1 x 1 grid
  const int64_t bytes = operand.byte_size();
  const int members = static_cast<int>(group.size());
  std::vector<uint8_t> all(static_cast<size_t>(bytes * members));
  ACCY_RETURN_IF_ERROR(communicator->AllGather(group, operand.data(), bytes, all.data()));
  std::vector<Tensor> out;
  for (int p = 0; p < members; ++p) {
    ACCY_ASSIGN_OR_RETURN(Tensor t, Tensor::FromBytes(operand.type(),
                                                      std::span<const uint8_t>(all).subspan(
                                                          static_cast<size_t>(p * bytes),
                                                          static_cast<size_t>(bytes))));
    out.push_back(std::move(t));
  }
  return out;
}

StatusOr<Tensor> Scalar(const Tensor& from, int64_t index) {
  ACCY_ASSIGN_OR_RETURN(Tensor scalar,
                        Tensor::Allocate(*TensorType::Create(from.type().element_type(), {})));
  CopyElement(from, index, scalar, 0);
  return scalar;
}

// The elementwise fold over `values` (in order) with the computation region.
StatusOr<Tensor> Fold(const Region& computation, std::span<const Tensor> values,
                      const RegionEvaluator& eval_region) {
  ACCY_ASSIGN_OR_RETURN(Tensor result, values[0].Clone());
  const int64_t count = result.type().element_count();
  for (size_t v = 1; v < values.size(); ++v) {
    for (int64_t i = 0; i < count; ++i) {
      ACCY_ASSIGN_OR_RETURN(Tensor lhs, Scalar(result, i));
      ACCY_ASSIGN_OR_RETURN(Tensor rhs, Scalar(values[v], i));
      const Tensor args[] = {lhs, rhs};
      ACCY_ASSIGN_OR_RETURN(std::vector<Tensor> out, eval_region(computation, args));
      if (out.size() != 1) {
        return absl::InvalidArgumentError("reference evaluator: the computation returned " +
                                          std::to_string(out.size()) + " values, expected 1");
      }
      CopyElement(out[0], 0, result, i);
    }
  }
  return result;
}

// result[index] = parts[k][index with dim `dim` shifted into part k] for parts concatenated
// along `dim`.
StatusOr<Tensor> Concatenate(std::span<const Tensor> parts, int64_t dim, const TensorType& type) {
  ACCY_ASSIGN_OR_RETURN(Tensor result, Tensor::Allocate(type));
  const std::vector<int64_t>& dims = type.dims();
  const int64_t part = parts.empty() ? 0 : parts[0].type().dim(dim);
  for (int64_t i = 0; i < type.element_count(); ++i) {
    std::vector<int64_t> index = Unravel(i, dims);
    const int64_t k = index[static_cast<size_t>(dim)] / part;
    index[static_cast<size_t>(dim)] %= part;
    CopyElement(parts[static_cast<size_t>(k)], Ravel(index, parts[0].type().dims()), result, i);
  }
  return result;
}

// Part `k` of `count` equal parts of `t` along `dim`.
StatusOr<Tensor> Part(const Tensor& t, int64_t dim, int64_t count, int64_t k) {
  std::vector<int64_t> dims = t.type().dims();
  const int64_t size = dims[static_cast<size_t>(dim)] / count;
  dims[static_cast<size_t>(dim)] = size;
  ACCY_ASSIGN_OR_RETURN(TensorType type, TensorType::Create(t.type().element_type(), dims));
  ACCY_ASSIGN_OR_RETURN(Tensor result, Tensor::Allocate(type));
  for (int64_t i = 0; i < type.element_count(); ++i) {
    std::vector<int64_t> index = Unravel(i, dims);
    index[static_cast<size_t>(dim)] += k * size;
    CopyElement(t, Ravel(index, t.type().dims()), result, i);
  }
  return result;
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateCollective(const Operation& op,
                                                 std::span<const Tensor> operands,
                                                 const RegionEvaluator& eval_region,
                                                 const CollectiveProcess& process) {
  const Grid grid{process.num_replicas, process.num_partitions};
  Communicator* communicator = process.communicator;
  const int rank = communicator != nullptr ? communicator->rank() : 0;
  if (communicator == nullptr && grid.size() != 1) {
    return absl::FailedPreconditionError(StrCat(
        "reference evaluator: ", OpName(op.kind()), " on a grid of ", grid.num_replicas,
        " replicas x ", grid.num_partitions, " partitions needs a communicator"));
  }
  if (communicator != nullptr && communicator->world_size() != grid.size()) {
    return absl::InvalidArgumentError(StrCat(
        "reference evaluator: the communicator's world has ", communicator->world_size(),
        " processes, the grid ", grid.num_replicas, " x ", grid.num_partitions));
  }
  if (op.kind() == OpKind::kReplicaId || op.kind() == OpKind::kPartitionId) {
    const int64_t id = op.kind() == OpKind::kReplicaId ? rank / grid.num_partitions
                                                       : rank % grid.num_partitions;
    ACCY_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(op.result(0)->type()));
    StoreInt(t, 0, id);
    return std::vector<Tensor>{std::move(t)};
  }
  ACCY_ASSIGN_OR_RETURN(ir_internal::CollectiveAttributes attrs,
                        ir_internal::ReadCollectiveAttributes(op.kind(), op.attributes()));
  std::vector<Tensor> results;
  if (op.kind() == OpKind::kCollectivePermute) {
    ACCY_ASSIGN_OR_RETURN(collectives::PermutePeers peers,
                          collectives::PermutePeersOf(attrs, grid, rank));
    ACCY_ASSIGN_OR_RETURN(Tensor received, Tensor::Allocate(op.result(0)->type()));
    if (communicator != nullptr) {
      ACCY_RETURN_IF_ERROR(communicator->Permute(peers.send_to, operands[0].data(),
                                                 peers.recv_from, received.data(),
                                                 operands[0].byte_size()));
    } else if (peers.recv_from == 0) {
      ACCY_ASSIGN_OR_RETURN(received, operands[0].Clone());
    }
    if (peers.recv_from < 0) {
      ACCY_ASSIGN_OR_RETURN(received, Tensor::Allocate(op.result(0)->type()));  // zeros
    }
    results.push_back(std::move(received));
    return results;
  }
  int64_t required = -1;
  if (op.kind() == OpKind::kAllToAll) required = attrs.split_count;
  if (op.kind() == OpKind::kAllGather && op.operand(0)->type().dim(attrs.all_gather_dim) > 0) {
    required = op.result(0)->type().dim(attrs.all_gather_dim) /
               op.operand(0)->type().dim(attrs.all_gather_dim);
  }
  if (op.kind() == OpKind::kReduceScatter &&
      op.result(0)->type().dim(attrs.scatter_dimension) > 0) {
    required = op.operand(0)->type().dim(attrs.scatter_dimension) /
               op.result(0)->type().dim(attrs.scatter_dimension);
  }
  ACCY_ASSIGN_OR_RETURN(std::vector<std::vector<int>> groups,
                        collectives::ProcessGroups(op.kind(), attrs, grid, required));
  const std::vector<int>* group = collectives::GroupOf(groups, rank);
  if (group == nullptr) {
    // Only collective_broadcast may leave a process out: its results are zeros.
    for (int64_t r = 0; r < op.num_results(); ++r) {
      ACCY_ASSIGN_OR_RETURN(Tensor zeros, Tensor::Allocate(op.result(r)->type()));
      results.push_back(std::move(zeros));
    }
    return results;
  }
  const int64_t position = std::find(group->begin(), group->end(), rank) - group->begin();
  const int64_t size = static_cast<int64_t>(group->size());
  for (size_t i = 0; i < static_cast<size_t>(op.num_results()); ++i) {
    ACCY_ASSIGN_OR_RETURN(std::vector<Tensor> members,
                          GatherGroup(communicator, operands[i], *group));
    const TensorType& type = op.result(static_cast<int64_t>(i))->type();
    switch (op.kind()) {
      case OpKind::kAllReduce: {
        ACCY_ASSIGN_OR_RETURN(Tensor t, Fold(*op.region(0), members, eval_region));
        results.push_back(std::move(t));
        break;
      }
      case OpKind::kCollectiveReduce: {
        if (position == 0) {
          ACCY_ASSIGN_OR_RETURN(Tensor t, Fold(*op.region(0), members, eval_region));
          results.push_back(std::move(t));
        } else {
          ACCY_ASSIGN_OR_RETURN(Tensor zeros, Tensor::Allocate(type));
          results.push_back(std::move(zeros));
        }
        break;
      }
      case OpKind::kCollectiveBroadcast: {
        int64_t root = 0;
        if (attrs.has_dynamic_root) {
          root = LoadInt(operands.back(), static_cast<int64_t>(i));
          if (root < 0 || root >= size) {
            return absl::InvalidArgumentError(
                StrCat("reference evaluator: collective_broadcast root ", root, " of operand ", i,
                       " is outside the group of ", size, " processes"));
          }
        }
        ACCY_ASSIGN_OR_RETURN(Tensor t, members[static_cast<size_t>(root)].Clone());
        results.push_back(std::move(t));
        break;
      }
      case OpKind::kAllGather: {
        ACCY_ASSIGN_OR_RETURN(Tensor t, Concatenate(members, attrs.all_gather_dim, type));
        results.push_back(std::move(t));
        break;
      }
      case OpKind::kReduceScatter: {
        ACCY_ASSIGN_OR_RETURN(Tensor reduced, Fold(*op.region(0), members, eval_region));
        ACCY_ASSIGN_OR_RETURN(Tensor t, Part(reduced, attrs.scatter_dimension, size, position));
        results.push_back(std::move(t));
        break;
      }
      case OpKind::kAllToAll: {
        std::vector<Tensor> parts;
        for (const Tensor& member : members) {
          ACCY_ASSIGN_OR_RETURN(Tensor part,
                                Part(member, attrs.split_dimension, size, position));
          parts.push_back(std::move(part));
        }
        ACCY_ASSIGN_OR_RETURN(Tensor t, Concatenate(parts, attrs.concat_dimension, type));
        results.push_back(std::move(t));
        break;
      }
      default:
        return absl::InternalError(StrCat("reference evaluator: ", OpName(op.kind()),
                                          " is not a collective"));
    }
  }
  return results;
}

}  // namespace accy::reference
