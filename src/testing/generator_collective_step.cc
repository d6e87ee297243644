// The generator's collectives step (generator_internal.h StepCollective): the differential
// runner runs one process, so every collective is on a 1 x 1 grid, where all_reduce,
// all_gather, reduce_scatter, all_to_all, collective_broadcast and collective_reduce return their
// operand, collective_permute its operand (pair (0, 0)) or zeros (no pair), and replica_id /
// partition_id 0. What this checks is the plumbing around them: collective items between fused
// and library items, buffer assignment across them, the executor's single-process communicator
// against the reference evaluator. Grids of several processes are tested in tests/collectives/.
#include <string>
#include <vector>

#include "src/testing/generator_internal.h"

namespace accy::fuzz::internal {

bool Generator::StepCollective() {
  const FunctionBuilder::CollectiveGroups one{{{0}}, 0, false};
  const uint64_t choice = U(9);
  if (choice == 0 || choice == 1) {
    const TensorType id = Type(ElementType::kU32, {});
    const OpKind kind = choice == 0 ? OpKind::kReplicaId : OpKind::kPartitionId;
    AddOp(std::string(OpName(kind)), kind, {}, id, {}, true, 0, false);
    return true;
  }
  const int x = Existing(ElementClass::kAny, Need{}, 1);
  if (x < 0) return false;
  const FuzzValue& in = V(x);
  const TensorType type = in.type;
  const FuzzValue same = Derive({x}, type, true, in.bound, in.non_finite);
  const int64_t dim = static_cast<int64_t>(U(static_cast<uint64_t>(type.rank())));
  // One add / max / min body; i1 takes or / and (add / multiply on i1 are or / and too).
  static constexpr const char* kReducers[] = {"sum", "max", "min"};
  const std::string reducer = kReducers[U(std::size(kReducers))];
  switch (choice) {
    case 2:
      AddRecipe("all_reduce", {x}, {same},
                [=](FunctionBuilder& f, std::span<Value* const> xs,
                    BuildForm) -> StatusOr<std::vector<Value*>> {
                  ACCY_ASSIGN_OR_RETURN(Value * r, f.AllReduce(xs[0], reducer, one));
                  return std::vector<Value*>{r};
                });
      return true;
    case 3:
      AddRecipe("reduce_scatter", {x}, {same},
                [=](FunctionBuilder& f, std::span<Value* const> xs,
                    BuildForm) -> StatusOr<std::vector<Value*>> {
                  ACCY_ASSIGN_OR_RETURN(Value * r,
                                        f.ReduceScatter(xs[0], reducer, dim, type, one));
                  return std::vector<Value*>{r};
                });
      return true;
    case 4:
      AddRecipe("all_gather", {x}, {same},
                [=](FunctionBuilder& f, std::span<Value* const> xs,
                    BuildForm) -> StatusOr<std::vector<Value*>> {
                  ACCY_ASSIGN_OR_RETURN(Value * r, f.AllGather(xs[0], dim, type, one));
                  return std::vector<Value*>{r};
                });
      return true;
    case 5: {
      const int64_t concat = static_cast<int64_t>(U(static_cast<uint64_t>(type.rank())));
      AddRecipe("all_to_all", {x}, {same},
                [=](FunctionBuilder& f, std::span<Value* const> xs,
                    BuildForm) -> StatusOr<std::vector<Value*>> {
                  ACCY_ASSIGN_OR_RETURN(Value * r, f.AllToAll(xs[0], dim, concat, 1, one));
                  return std::vector<Value*>{r};
                });
      return true;
    }
    case 6: {
      const bool has_pair = Chance(0.7);
      const FuzzValue result = has_pair ? same : Derive({x}, type, true, 0, false);
      AddRecipe("collective_permute", {x}, {result},
                [=](FunctionBuilder& f, std::span<Value* const> xs,
                    BuildForm) -> StatusOr<std::vector<Value*>> {
                  std::vector<std::pair<int64_t, int64_t>> pairs;
                  if (has_pair) pairs.emplace_back(0, 0);
                  ACCY_ASSIGN_OR_RETURN(Value * r, f.CollectivePermute(xs[0], pairs));
                  return std::vector<Value*>{r};
                });
      return true;
    }
    case 7:
      AddRecipe("collective_broadcast", {x}, {same},
                [=](FunctionBuilder& f, std::span<Value* const> xs,
                    BuildForm) -> StatusOr<std::vector<Value*>> {
                  ACCY_ASSIGN_OR_RETURN(Value * r, f.CollectiveBroadcast(xs[0], one));
                  return std::vector<Value*>{r};
                });
      return true;
    default: {
      // collective_reduce (the StableHLO interpreter's op; no builder method): the generic form.
      const OpKind combiner = IsBool(type.element_type()) ? OpKind::kOr : OpKind::kAdd;
      AddRecipe("collective_reduce", {x}, {same},
                [=](FunctionBuilder& f, std::span<Value* const> xs,
                    BuildForm) -> StatusOr<std::vector<Value*>> {
                  const TensorType scalar = *TensorType::Create(type.element_type(), {});
                  RegionBodyFn body = [combiner](FunctionBuilder& b,
                                                 std::span<Value* const> args) -> Status {
                    ACCY_ASSIGN_OR_RETURN(Operation * op,
                                          b.CreateOp(combiner, {args[0], args[1]},
                                                     {args[0]->type()}));
                    return b.Return({op->result(0)});
                  };
                  std::vector<RegionSpec> regions;
                  regions.push_back(RegionSpec{{scalar, scalar}, std::move(body)});
                  ACCY_ASSIGN_OR_RETURN(
                      Operation * op,
                      f.CreateOp(OpKind::kCollectiveReduce, {xs[0]}, {type}, {}, std::move(regions)));
                  return op->results();
                });
      return true;
    }
  }
}

}  // namespace accy::fuzz::internal
