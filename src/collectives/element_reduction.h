// The elementwise combination of the communicators' AllReduce (accy/collectives.h), shared by
// the in-process and Gloo communicators so that both give the same bits.
//
// Semantics follow the StableHLO ops the reductions stand for (spec "add", "multiply",
// "minimum", "maximum"): integers wrap (two's complement), i1 sum is or and product is and
// (as i1 add / multiply), float min/max propagate NaN and order -0 below +0; f16 and bf16 are
// combined in f32 and rounded back to the type after each combination.
#ifndef ACCY_SRC_COLLECTIVES_ELEMENT_REDUCTION_H_
#define ACCY_SRC_COLLECTIVES_ELEMENT_REDUCTION_H_

#include <cstdint>

#include "accy/collectives.h"
#include "accy/types.h"

namespace accy::collectives {

// acc[i] = combine(acc[i], x[i]) for i in [0, count): `count` elements of `type` (host layout,
// i1 one byte per element). acc and x may be the same buffer; no other overlap.
void CombineInto(void* acc, const void* x, int64_t count, ElementType type,
                 CollectiveReduction reduction);

}  // namespace accy::collectives

#endif  // ACCY_SRC_COLLECTIVES_ELEMENT_REDUCTION_H_
