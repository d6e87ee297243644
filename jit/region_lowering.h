// Internal to jit/: lowering a scalar region body (scatter's update_computation, reduce_window's
// body, select_and_scatter's select and scatter) for one element, op by op, with the elementwise
// lowering (elementwise_lowering.h), so every region body computes exactly as the fused
// elementwise ops and the reference evaluator do. Includes LLVM headers: include it only from
// jit/*.cc. Not thread-safe (one IRBuilder).
#ifndef ACCY_JIT_REGION_LOWERING_H_
#define ACCY_JIT_REGION_LOWERING_H_

#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "jit/elementwise_lowering.h"

namespace accy::jit {

// How a region body's read of a value defined outside it is named in the error when it reaches
// an emitter: the graph passes that would have made the value the body's own, and what they
// leave.
inline constexpr char kCapturedValueHint[] =
    "(the graph passes make captured values the body's own: sink-constants-into-regions copies "
    "constants in, isolate-regions-from-above makes rank-0 run-time values of reduce, "
    "reduce_window, sort and scatter bodies operands; other captures are not supported)";

// Lowers the single block of `region` at the lowering's insert point: `arguments` are the
// storage-form values of its block arguments (one each); returns the storage-form values its
// return op returns. Accepted ops: one-element constants, rank-0 broadcast_in_dim and reshape
// (the identity on one element) and every elementwise op ElementwiseLowering lowers. Errors:
// kUnimplemented "jit: <what> op <name> on <type> is not supported" for any other op (`what`
// names the emitter and region, e.g. "shape emitter: scatter update_computation"), or as
// ElementwiseLowering::Emit; kInvalidArgument for a block without return or an argument count
// that does not match.
StatusOr<std::vector<llvm::Value*>> LowerScalarRegion(ElementwiseLowering& lowering,
                                                      const Region& region,
                                                      std::span<llvm::Value* const> arguments,
                                                      std::string_view what);

// Lowers, in block order, each op of `region`'s block whose operands are all in `known` (block
// arguments given, and the values lowered so far), until `target` is known, and returns its
// storage-form value: a function of some of the arguments alone (the sort key a comparator
// computes from one argument, sort_emitter.cc). Accepted ops and errors as LowerScalarRegion;
// kInvalidArgument when `target` is not computable from `known`.
StatusOr<llvm::Value*> LowerRegionValue(ElementwiseLowering& lowering, const Region& region,
                                        std::map<const Value*, llvm::Value*> known,
                                        const Value* target, std::string_view what);

}  // namespace accy::jit

#endif  // ACCY_JIT_REGION_LOWERING_H_
