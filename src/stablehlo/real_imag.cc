// real and imag of floating-point operands as import rewrites (real_imag.h).
#include "src/stablehlo/real_imag.h"

#include <vector>

#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {

StatusOr<Value*> EmitRealOrImagOfReal(FunctionBuilder& fb, const OpSyntax& op,
                                      std::span<Value* const> operands) {
  const bool imag = op.name == "stablehlo.imag";
  if (operands.size() != 1 || op.result_types.size() != 1) {
    return ErrorAt(op.loc, StrCat(op.name, " takes one operand and has one result, found ",
                                  operands.size(), " and ", op.result_types.size()));
  }
  Value* x = operands[0];
  const TensorType& type = x->type();
  // Complex element types never reach here (the parser rejects them, naming them).
  if (!IsFloat(type.element_type())) {
    return ErrorAt(op.loc, StrCat(op.name, " of ", type.ToString(), ": the operand must be "
                                  "floating-point or complex (spec \"", imag ? "imag" : "real",
                                  "\" I1)"));
  }
  if (op.result_types[0] != type) {
    return ErrorAt(op.loc, StrCat(op.name, " of ", type.ToString(), " has result type ",
                                  op.result_types[0].ToString(), ", expected the operand's "
                                  "type (spec \"", imag ? "imag" : "real", "\" C1-C2)"));
  }
  if (!imag) return x;  // real(x) = x for a non-complex x
  ACCY_ASSIGN_OR_RETURN(TensorType scalar, TensorType::Create(type.element_type(), {}));
  ACCY_ASSIGN_OR_RETURN(uint64_t bytes, scalar.ByteSize());
  const std::vector<uint8_t> zero(static_cast<size_t>(bytes), 0);  // +0.0 in every float format
  ACCY_ASSIGN_OR_RETURN(Value * zero_scalar, fb.Constant(scalar, zero));
  return fb.BroadcastInDim(zero_scalar, type, {});
}

}  // namespace accy::stablehlo_internal
