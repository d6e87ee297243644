// Compiling an `iterate` work item (StableHLO `while`): outline its cond and body regions into
// functions of their own and compile each with the same engine (src/runtime/iterate_kernel.h).
#ifndef ACCY_SRC_API_ITERATE_COMPILE_H_
#define ACCY_SRC_API_ITERATE_COMPILE_H_

#include <memory>
#include <vector>

#include "accy/engine.h"
#include "accy/ir.h"
#include "src/runtime/control_flow_kernel.h"

namespace accy {

struct CompiledIterate {
  std::unique_ptr<ControlFlowKernel> kernel;
  std::vector<const Value*> inputs;   // the while's operands, then the captured outer values
  std::vector<const Value*> outputs;  // the while's results
};

// Compiles `while_op` (work item `item_index` of its function's plan) with `engine`: cond and
// body each become one executable. A case op instead compiles each branch into one executable
// (src/runtime/case_kernel.h); its inputs are the index, then the captured outer values. Outer values the regions read are captured as extra inputs,
// except constants and broadcast_in_dim ops, which are copied into the regions' functions (an
// outer broadcast may be elided by the outer fusion plan, so it has no buffer to read).
// Errors: those of outlining (a region that is not one block ending in a return) and of
// compiling cond or body, prefixed with the item and region.
// `num_replicas` x `num_partitions`: the enclosing module's grid, given to the regions' modules
// (their collectives split the same grid).
StatusOr<CompiledIterate> CompileIterate(const Engine& engine, const Operation& while_op,
                                         size_t item_index, int64_t num_replicas = 1,
                                         int64_t num_partitions = 1);

}  // namespace accy

#endif  // ACCY_SRC_API_ITERATE_COMPILE_H_
