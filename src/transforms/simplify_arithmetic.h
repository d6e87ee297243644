// SimplifyArithmeticPass: algebraic identities of elementwise ops (XLA's AlgebraicSimplifier,
// MLIR's arith canonicalizations), each exact for every value the operand can hold, IEEE
// specials included (StableHLO spec "add", "multiply", ...). `c` stands for a splat: a
// `constant` whose elements are all the same bits, or a broadcast_in_dim of one.
//   add(x, c=0)          -> x   integers, i1; floats only for c = -0.0 (x + +0.0 turns -0 into +0)
//   subtract(x, c=0)     -> x   integers; floats only for c = +0.0
//   multiply(x, c=1)     -> x   (i1: c = true)
//   divide(x, c=1)       -> x
//   power(x, c=1)        -> x
//   multiply(x, c=0)     -> c   integers and i1 only (floats: NaN, inf and -0 make it wrong)
//   and(x, c=~0) or(x, c=0) xor(x, c=0) shift_*(x, c=0) -> x
//   and(x, c=0)          -> c   or(x, c=~0) -> c
//   maximum(x, x) minimum(x, x) and(x, x) or(x, x) -> x
//   maximum(x, c=-inf) minimum(x, c=+inf) -> x   floats (NaN propagates either way)
//   negate(negate(x)) not(not(x)) -> x
//   select(c=true, a, b) -> a   select(c=false, a, b) -> b   select(p, a, a) -> a
// Commutative ops match the splat on either side. The replacement always has the op's result
// type, so uses are pointed at it; the op is left to eliminate-dead-code. Stateless.
#ifndef ACCY_SRC_TRANSFORMS_SIMPLIFY_ARITHMETIC_H_
#define ACCY_SRC_TRANSFORMS_SIMPLIFY_ARITHMETIC_H_

#include <cstdint>

#include "src/passes/pass_manager.h"

namespace accy {

class SimplifyArithmeticPass : public passes::Pass {
 public:
  static constexpr std::string_view kName = "simplify-arithmetic";
  std::string_view name() const override { return kName; }
  // Identity "simplify-arithmetic" v1: one visit per op, operand and attribute atom (a splat
  // test reads each constant payload once: at most its bytes, bounded by the parser's limits).
  const passes::WorkContract& contract() const override;
  // Never fails. Marks the context modified when it simplified an op.
  Status Run(passes::PassContext& context) override;
};

// The pass's rewrite on its own: returns how many ops it replaced.
int64_t SimplifyArithmetic(Function& function);

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_SIMPLIFY_ARITHMETIC_H_
