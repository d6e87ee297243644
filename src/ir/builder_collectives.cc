// FunctionBuilder's collectives (include/accy/builder.h): attributes as the importer writes them
// (src/ir/collective_attributes.h), verified by CreateOp (type_inference_collectives.cc).
#include <string>
#include <vector>

#include "accy/builder.h"
#include "src/ir/builder_reducers.h"
#include "src/ir/collective_attributes.h"

namespace accy {
namespace {

std::vector<NamedAttribute> GroupAttributes(const FunctionBuilder::CollectiveGroups& groups) {
  std::vector<NamedAttribute> attrs;
  if (!groups.replica_groups.empty()) {
    for (const std::vector<int64_t>& row : groups.replica_groups) {
      if (row.size() != groups.replica_groups[0].size()) {
        // Rows of one length: a ragged list is padded with -1, as the StableHLO text does.
        size_t longest = 0;
        for (const auto& r : groups.replica_groups) longest = std::max(longest, r.size());
        std::vector<std::vector<int64_t>> padded = groups.replica_groups;
        for (auto& r : padded) r.resize(longest, -1);
        attrs.push_back({"replica_groups", ir_internal::DenseI64Matrix(padded)});
        break;
      }
    }
    if (attrs.empty()) {
      attrs.push_back({"replica_groups", ir_internal::DenseI64Matrix(groups.replica_groups)});
    }
  }
  if (groups.channel_id != 0) attrs.push_back({"channel_id", groups.channel_id});
  if (groups.use_global_device_ids) attrs.push_back({"use_global_device_ids", true});
  return attrs;
}

// The computation region `return combiner(lhs, rhs)` over rank-0 tensors of x's element type.
StatusOr<std::vector<RegionSpec>> Computation(OpKind for_op, std::string_view reducer,
                                              const Value* x) {
  ACCY_ASSIGN_OR_RETURN(const OpKind combiner, ir_internal::ReducerCombiner(for_op, reducer));
  const TensorType scalar = *TensorType::Create(x->type().element_type(), {});
  RegionBodyFn body = [combiner](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    ACCY_ASSIGN_OR_RETURN(Operation * op,
                          b.CreateOp(combiner, {args[0], args[1]}, {args[0]->type()}));
    return b.Return({op->result(0)});
  };
  std::vector<RegionSpec> regions;
  regions.push_back(RegionSpec{{scalar, scalar}, std::move(body)});
  return regions;
}

StatusOr<Value*> First(StatusOr<Operation*> op) {
  if (!op.ok()) return op.status();
  return (*op)->result(0);
}

}  // namespace

StatusOr<Value*> FunctionBuilder::AllReduce(Value* x, std::string_view reducer,
                                            const CollectiveGroups& groups) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kAllReduce, {&x, 1}));
  ACCY_ASSIGN_OR_RETURN(std::vector<RegionSpec> regions,
                        Computation(OpKind::kAllReduce, reducer, x));
  return First(CreateOp(OpKind::kAllReduce, {x}, {x->type()}, GroupAttributes(groups),
                        std::move(regions)));
}

StatusOr<Value*> FunctionBuilder::AllGather(Value* x, int64_t all_gather_dim,
                                            const TensorType& result_type,
                                            const CollectiveGroups& groups) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kAllGather, {&x, 1}));
  std::vector<NamedAttribute> attrs = GroupAttributes(groups);
  attrs.push_back({"all_gather_dim", all_gather_dim});
  return First(CreateOp(OpKind::kAllGather, {x}, {result_type}, std::move(attrs)));
}

StatusOr<Value*> FunctionBuilder::ReduceScatter(Value* x, std::string_view reducer,
                                                int64_t scatter_dimension,
                                                const TensorType& result_type,
                                                const CollectiveGroups& groups) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kReduceScatter, {&x, 1}));
  ACCY_ASSIGN_OR_RETURN(std::vector<RegionSpec> regions,
                        Computation(OpKind::kReduceScatter, reducer, x));
  std::vector<NamedAttribute> attrs = GroupAttributes(groups);
  attrs.push_back({"scatter_dimension", scatter_dimension});
  return First(CreateOp(OpKind::kReduceScatter, {x}, {result_type}, std::move(attrs),
                        std::move(regions)));
}

StatusOr<Value*> FunctionBuilder::AllToAll(Value* x, int64_t split_dimension,
                                           int64_t concat_dimension, int64_t split_count,
                                           const CollectiveGroups& groups) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kAllToAll, {&x, 1}));
  std::vector<int64_t> dims = x->type().dims();
  if (split_dimension < 0 || split_dimension >= x->type().rank() || concat_dimension < 0 ||
      concat_dimension >= x->type().rank() || split_count <= 0) {
    return absl::InvalidArgumentError(
        "all_to_all: split_dimension and concat_dimension must be dims of the operand and "
        "split_count positive");
  }
  dims[static_cast<size_t>(split_dimension)] /= split_count;
  dims[static_cast<size_t>(concat_dimension)] *= split_count;
  ACCY_ASSIGN_OR_RETURN(TensorType result, TensorType::Create(x->type().element_type(), dims));
  std::vector<NamedAttribute> attrs = GroupAttributes(groups);
  attrs.push_back({"split_dimension", split_dimension});
  attrs.push_back({"concat_dimension", concat_dimension});
  attrs.push_back({"split_count", split_count});
  return First(CreateOp(OpKind::kAllToAll, {x}, {result}, std::move(attrs)));
}

StatusOr<Value*> FunctionBuilder::CollectivePermute(
    Value* x, std::vector<std::pair<int64_t, int64_t>> source_target_pairs, int64_t channel_id) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kCollectivePermute, {&x, 1}));
  std::vector<std::vector<int64_t>> rows;
  for (const auto& [source, target] : source_target_pairs) rows.push_back({source, target});
  DenseElements pairs = ir_internal::DenseI64Matrix(rows);
  if (rows.empty()) pairs.type = *TensorType::Create(ElementType::kI64, {0, 2});
  std::vector<NamedAttribute> attrs = {{"source_target_pairs", std::move(pairs)}};
  if (channel_id != 0) attrs.push_back({"channel_id", channel_id});
  return First(CreateOp(OpKind::kCollectivePermute, {x}, {x->type()}, std::move(attrs)));
}

StatusOr<Value*> FunctionBuilder::CollectiveBroadcast(Value* x, const CollectiveGroups& groups) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kCollectiveBroadcast, {&x, 1}));
  return First(CreateOp(OpKind::kCollectiveBroadcast, {x}, {x->type()}, GroupAttributes(groups)));
}

StatusOr<Value*> FunctionBuilder::ReplicaId() {
  return First(CreateOp(OpKind::kReplicaId, {}, {*TensorType::Create(ElementType::kU32, {})}));
}

StatusOr<Value*> FunctionBuilder::PartitionId() {
  return First(CreateOp(OpKind::kPartitionId, {}, {*TensorType::Create(ElementType::kU32, {})}));
}

}  // namespace accy
