// Internal to jit/: the emitter of elementwise_single and elementwise_fusion work items. One
// kernel (kernel_abi.h) per item: one loop nest over the item's output with all of the item's ops
// computed in registers, elided broadcast_in_dim operands read through index arithmetic.
// Reads the IR, the work item and the fusion plan without owning them; writes into an LLVM module
// the caller owns. Not thread-safe per module.
#ifndef ACCY_JIT_ELEMENTWISE_EMITTER_H_
#define ACCY_JIT_ELEMENTWISE_EMITTER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "jit/kernel_signature.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace accy {
class FusionPlan;
struct WorkItem;
}  // namespace accy

namespace accy::jit {

// Emits `extern "C" void <symbol>(...)` computing `item` (kind elementwise_single or
// elementwise_fusion; ops in topological order, the root's result is the output) into `module`.
// Blocks are kElementwiseBlockElements output elements (row-major linear order).
// Errors: kUnimplemented naming the op (and element type) the emitter cannot lower, or naming
// the kind when the item is not elementwise; kInvalidArgument for malformed attributes.
StatusOr<KernelSignature> EmitElementwiseKernel(const WorkItem& item, const FusionPlan& fusion,
                                                llvm::Module& module, std::string_view symbol);

}  // namespace accy::jit

#endif  // ACCY_JIT_ELEMENTWISE_EMITTER_H_
