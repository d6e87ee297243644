// The executor's collective items: one collective op (replica_id .. collective_reduce,
// accy/ops.def) run through the process's Communicator (accy/collectives.h).
//
// Built at compile time from the op and the module's grid: the process groups of every process
// are computed then (src/collectives/process_groups.h), so a bad replica_groups is a Compile
// error; at run time the kernel finds its process's group by the communicator's rank and calls
// the communicator's primitives on the item's buffers (operands, then results):
//   all_reduce, collective_reduce  AllReduceTo from the operand into the result (a general
//                                  computation: AllGather, then folded in group order by a
//                                  compiled combiner); collective_reduce zeroes the result
//                                  outside each group's first process
//   all_gather                     AllGather, straight into the result when all_gather_dim has
//                                  only size-1 dims before it, else through a staging buffer
//   reduce_scatter                 AllReduceTo a staging buffer (or gather and fold), then
//                                  this process's slice
//   all_to_all                     AllToAll, straight from the operand when split_dimension
//                                  has only size-1 dims before it (else its chunks packed into
//                                  a staging buffer first), straight into the result when
//                                  concat_dimension has only size-1 dims before it (else
//                                  received into a staging buffer and interleaved)
//   collective_permute             Permute (zeros when no process sends here)
//   collective_broadcast           Broadcast from the group's first process, or with
//                                  has_dynamic_root from the position the root operand names
//                                  (zeros outside every group)
// Thread-safe: Run keeps no state between calls (each run's staging is its own).
#ifndef ACCY_SRC_RUNTIME_COLLECTIVE_KERNEL_H_
#define ACCY_SRC_RUNTIME_COLLECTIVE_KERNEL_H_

#include <memory>
#include <optional>
#include <vector>

#include "accy/collectives.h"
#include "accy/engine.h"
#include "accy/ir.h"
#include "accy/status.h"
#include "src/collectives/process_groups.h"

namespace accy {

class CollectiveKernel {
 public:
  // Binds `op` (a verified collective) on `grid`. A computation of one add, multiply, minimum
  // or maximum of its two arguments (or / and on i1) maps onto the communicator's AllReduce;
  // any other computation of elementwise ops and rank-0 constants is compiled with `engine`
  // into a combining executable over whole operands, and the kernel gathers every member's
  // operand and folds them in group order with it (the same bits on every member). Errors:
  // ProcessGroups' and PermutePeersOf's (ids outside the grid, groups not covering it, a group
  // size the types do not allow); kUnimplemented for a computation with other ops (naming the
  // op) or a general computation without an engine; the engine's compile errors.
  static StatusOr<std::unique_ptr<CollectiveKernel>> Create(const Operation& op,
                                                            const collectives::Grid& grid,
                                                            const Engine* engine = nullptr);

  // `buffers`: the op's operands, then its results (each of its value's type, row-major).
  // `communicator`: this process's (rank = process id, world size = the grid's). Errors: the
  // communicator's, prefixed with the op; kInvalidArgument when its world size is not the
  // grid's.
  Status Run(void* const* buffers, Communicator& communicator) const;

  std::span<const Value* const> inputs() const { return inputs_; }
  std::span<const Value* const> outputs() const { return outputs_; }
  // Per output, the operand it may be computed in place over (buffer assignment's
  // output_in_place_on), else -1: result i of an all_reduce with a native reduction reduces
  // over operand i's buffer when the operand dies here (the communicator's ring works in place;
  // otherwise the kernel copies the operand into the result first). Every other collective: -1.
  std::vector<int> OutputsInPlaceOn() const;
  // "all_reduce %3".
  const std::string& name() const { return name_; }

 private:
  CollectiveKernel() = default;
  Status RunOperand(size_t i, const void* in, void* out, Communicator& communicator,
                    const std::vector<int>* group, int position, int root) const;

  OpKind kind_ = OpKind::kAllReduce;
  std::string name_;
  collectives::Grid grid_;
  std::vector<std::vector<int>> groups_;
  std::vector<collectives::PermutePeers> permute_peers_;  // per process (collective_permute)
  std::optional<CollectiveReduction> reduction_;
  // A general computation: (acc, x) -> combined over whole operands, flattened to 1-D.
  std::unique_ptr<Executable> combiner_;
  Status GatherAndFold(const std::vector<int>& group, const void* in, void* out,
                       const TensorType& type, Communicator& communicator) const;
  ir_internal::CollectiveAttributes attrs_;
  std::vector<TensorType> operand_types_;
  std::vector<TensorType> result_types_;
  std::vector<const Value*> inputs_;
  std::vector<const Value*> outputs_;
};

// A Communicator of a world of one process (rank 0): every primitive is a local copy. What a
// run without RunOptions::communicator uses on a 1 x 1 grid.
Communicator& SingleProcessCommunicator();

}  // namespace accy

#endif  // ACCY_SRC_RUNTIME_COLLECTIVE_KERNEL_H_
