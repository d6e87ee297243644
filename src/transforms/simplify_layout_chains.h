// SimplifyLayoutChainsPass: algebraic simplification of the layout and type changes exporters
// chain (XLA's AlgebraicSimplifier, MLIR's canonicalization patterns of the same ops), each an
// exact identity by the StableHLO spec ("reshape", "transpose", "broadcast_in_dim", "convert",
// "pad", "slice", "reverse", "convolution"):
//   reshape / convert to the operand's own type, broadcast_in_dim to it
//   with identity dims                                                   -> the operand
//   reshape(reshape(y))                                                  -> reshape(y)
//   transpose(transpose(y, p), q)                                        -> transpose(y, p o q),
//                                                                           or y when identity
//   transpose(y, identity)                                               -> y
//   broadcast_in_dim(broadcast_in_dim(y, d1), d2)                        -> broadcast_in_dim(y,
//                                                                           d2 o d1)
//   convert(convert(y : A -> B) -> A), B holding every value of A exactly -> y
//   pad(y) with every edge and interior width 0 ("pad"), slice(y) of y's
//   whole shape with unit strides ("slice")                              -> y
//   convolution(x, reverse(w, dims)), dims all kernel spatial dims, some  -> convolution(x, w)
//   lhs_dilation > 1 (a transposed convolution)                              with those dims'
//                                                                           window_reversal
//                                                                           flipped (a chain
//                                                                           of reverses whole)
// (B wider float than float A: f16/bf16 -> f32 -> f64; B a wider integer of A's signedness, or a
// wider signed integer than unsigned A.) Rewrites point uses at the simpler value or edit the
// outer op in place; the inner ops are left to eliminate-dead-code. Stateless.
#ifndef ACCY_SRC_TRANSFORMS_SIMPLIFY_LAYOUT_CHAINS_H_
#define ACCY_SRC_TRANSFORMS_SIMPLIFY_LAYOUT_CHAINS_H_

#include <cstdint>

#include "src/passes/pass_manager.h"

namespace accy {

class SimplifyLayoutChainsPass : public passes::Pass {
 public:
  static constexpr std::string_view kName = "simplify-layout-chains";
  std::string_view name() const override { return kName; }
  // Identity "simplify-layout-chains" v1: one visit per op, operand and attribute atom.
  const passes::WorkContract& contract() const override;
  // Never fails. Marks the context modified when it simplified an op.
  Status Run(passes::PassContext& context) override;
};

// The pass's rewrite on its own: returns how many ops it simplified.
int64_t SimplifyLayoutChains(Function& function);

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_SIMPLIFY_LAYOUT_CHAINS_H_
