// BroadcastSplatConstantsPass: a `constant` of more than one element whose elements all have
// the same bits (a splat, as exporters write `dense<1.12837911> : tensor<1x7x3072xf32>`) becomes
// a one-element constant of rank 0 and a broadcast_in_dim of it to the original type (MLIR's
// splat attributes, XLA's broadcast of a scalar constant). The value is unchanged bit for bit
// (spec "constant", "broadcast_in_dim"); what changes is that fusions read the scalar as an
// immediate through an elided broadcast instead of streaming a dense copy from the constant
// area (torch_xla2's BERT: 28 splats of 7 x 3072 f32 per GELU, 2.4 MB of constants, read by
// each of its 12 GELU fusions). Constants in nested regions are rewritten too; the original
// constant is left to eliminate-dead-code. Stateless; one instance may run on many functions,
// not concurrently.
#ifndef ACCY_SRC_TRANSFORMS_BROADCAST_SPLAT_CONSTANTS_H_
#define ACCY_SRC_TRANSFORMS_BROADCAST_SPLAT_CONSTANTS_H_

#include <cstdint>

#include "src/passes/pass_manager.h"

namespace accy {

class BroadcastSplatConstantsPass : public passes::Pass {
 public:
  static constexpr std::string_view kName = "broadcast-splat-constants";
  std::string_view name() const override { return kName; }
  // Identity "broadcast-splat-constants" v1: one visit per op, operand and attribute atom (the
  // splat test reads each constant payload once, bounded by the parser's limits).
  const passes::WorkContract& contract() const override;
  // Never fails. Marks the context modified when it rewrote a constant.
  Status Run(passes::PassContext& context) override;
};

// The pass's rewrite on its own: returns how many constants it replaced.
int64_t BroadcastSplatConstants(Function& function);

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_BROADCAST_SPLAT_CONSTANTS_H_
