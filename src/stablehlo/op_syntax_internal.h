// The attribute values the StableHLO parser's pretty op forms write (op_syntax.cc,
// shape_syntax.cc, reduction_syntax.cc), defined in op_syntax.cc. Internal to src/stablehlo.
#ifndef ACCY_SRC_STABLEHLO_OP_SYNTAX_INTERNAL_H_
#define ACCY_SRC_STABLEHLO_OP_SYNTAX_INTERNAL_H_

#include <cstdint>
#include <vector>

#include "src/stablehlo/syntax.h"

namespace accy::stablehlo_internal {

// An `array<i64: ...>` / integer attribute value at `loc`.
AttrValue IntArray(std::vector<int64_t> values, SourceLoc loc);
AttrValue IntValue(int64_t number, SourceLoc loc);

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_OP_SYNTAX_INTERNAL_H_
