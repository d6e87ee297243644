// How a fused JIT kernel reads one operand of an op of its cluster (no LLVM): from a buffer or
// as a folded constant, with per-output-dim strides that read an elided broadcast_in_dim's
// input through index arithmetic. Shared by the elementwise and dot_general (epilogue) emitters.
#ifndef ACCY_JIT_OPERAND_ACCESS_H_
#define ACCY_JIT_OPERAND_ACCESS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "src/fusion/fusion_plan.h"

namespace accy::jit {

struct OperandAccess {
  int buffer = -1;                    // index into KernelSignature::inputs; -1 for a constant
  const uint8_t* constant = nullptr;  // the element's bytes when buffer == -1
  ElementType type = ElementType::kF32;
  std::vector<int64_t> strides;       // per output dim, in elements
};

// Strides (per output dim, in elements) at which `user`, an op of an item whose output dims are
// `out_dims`, reads `source`: through `broadcast` (the elided broadcast_in_dim producing the
// operand, or null), as a scalar (all zero), or at the output's own index (row-major). Errors:
// kUnimplemented, starting with `emitter` (e.g. "jit: elementwise emitter: "), for a broadcast
// that does not produce the item's shape or an operand of another shape.
StatusOr<std::vector<int64_t>> OperandStrides(std::string_view emitter, const Operation& user,
                                              const Value& source, const Operation* broadcast,
                                              const std::vector<int64_t>& out_dims);

// How `user` reads its operand `operand` (not a cluster member: those are in registers): through
// an elided broadcast_in_dim (fusion.IsElided) with its strides, as a folded one-element
// constant, or from a buffer, found in or appended to `inputs` (KernelSignature::inputs).
// Errors: those of OperandStrides.
StatusOr<OperandAccess> ResolveOperandAccess(std::string_view emitter, const Operation& user,
                                             const Value& operand, const FusionPlan& fusion,
                                             const std::vector<int64_t>& out_dims,
                                             std::vector<const Value*>& inputs);

}  // namespace accy::jit

#endif  // ACCY_JIT_OPERAND_ACCESS_H_
