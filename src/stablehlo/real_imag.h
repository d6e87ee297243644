// stablehlo.real and stablehlo.imag of a floating-point operand (spec "real", "imag"): real(x)
// is x and imag(x) is 0 for a non-complex x. accy has no complex element types yet, so these are
// import rewrites, not ops: real names its operand, imag a zero of its type.
#ifndef ACCY_SRC_STABLEHLO_REAL_IMAG_H_
#define ACCY_SRC_STABLEHLO_REAL_IMAG_H_

#include <span>

#include "accy/builder.h"
#include "accy/status.h"
#include "src/stablehlo/syntax.h"

namespace accy::stablehlo_internal {

// `op` is a stablehlo.real or stablehlo.imag with `operands` (one, x). Returns the value the result
// names: `x` for real, a broadcast rank-0 zero of x's type for imag (built in `fb`). Errors,
// located at the op, all kInvalidArgument: not one operand and one result, an operand that is
// not floating-point (spec "real"/"imag" I1; complex operands are rejected earlier, by the
// parser, as kUnimplemented), or a result type other than the operand's (C1-C2).
StatusOr<Value*> EmitRealOrImagOfReal(FunctionBuilder& fb, const OpSyntax& op,
                                      std::span<Value* const> operands);

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_REAL_IMAG_H_
