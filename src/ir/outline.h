// Region outlining: copies one region of an op (a while's cond or body) into a new function of
// its own, so the region can be planned and compiled like any function (the executor runs it
// around the loop; see src/runtime/iterate_kernel.h).
//
// StableHLO regions may read values of enclosing scopes (the spec's while regions are not
// isolated from above). The outlined function takes the region's entry-block arguments first,
// then one parameter per captured outer value, in order of first use. Captured values whose
// defining op `clone_def` accepts (the engine passes IsCopiedIntoOutlinedRegion: constants,
// iotas, broadcasts) are copied into the function instead, and their own operands are captured
// in turn. The region's trailing `return` becomes the function's return.
//
// The engine's outliners (src/api/iterate_compile.cc: while and case) copy exactly the ops
// IsCopiedIntoOutlinedRegion accepts; the schedule planner follows the same rule to find the
// values an iterate item reads (src/schedule/schedule_planner.cc, RecordCapturedInputs).
#ifndef ACCY_SRC_IR_OUTLINE_H_
#define ACCY_SRC_IR_OUTLINE_H_

#include <functional>
#include <string>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"

namespace accy {

struct OutlinedRegion {
  Function* function = nullptr;         // owned by the destination module
  std::vector<const Value*> captured;   // outer values behind the trailing parameters, in order
};

// Whether the engine copies `op` into the functions it outlines from while and case regions
// instead of passing its result: constant, iota and broadcast_in_dim (cheaper to recompute than
// to pass, and a broadcast's operand is smaller than its result). Each has at most one operand.
bool IsCopiedIntoOutlinedRegion(const Operation& op);

// Outlines `region` (one block, ending in `return`) of some op into a new function `name` of
// `module` with `result_types`. Errors: kInvalidArgument when the region has no block, more
// than one block or no trailing return, or when `name` exists in `module`.
StatusOr<OutlinedRegion> OutlineRegion(const Region& region, Module& module, std::string name,
                                       std::vector<TensorType> result_types,
                                       const std::function<bool(const Operation&)>& clone_def);

}  // namespace accy

#endif  // ACCY_SRC_IR_OUTLINE_H_
