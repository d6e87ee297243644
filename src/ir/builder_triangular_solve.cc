// FunctionBuilder::TriangularSolve (include/accy/builder.h): infers the result type
// (type_inference_triangular_solve.cc) and creates the op through CreateOp, which verifies it.
#include <string>
#include <vector>

#include "accy/builder.h"
#include "src/ir/type_inference.h"

namespace accy {

StatusOr<Value*> FunctionBuilder::TriangularSolve(Value* a, Value* b, bool left_side, bool lower,
                                                  bool unit_diagonal,
                                                  std::string_view transpose_a) {
  std::vector<Value*> operands = {a, b};
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kTriangularSolve, operands));
  std::vector<NamedAttribute> attrs = {{"left_side", left_side},
                                       {"lower", lower},
                                       {"unit_diagonal", unit_diagonal},
                                       {"transpose_a", std::string(transpose_a)}};
  const std::vector<TensorType> operand_types = {a->type(), b->type()};
  ACCY_ASSIGN_OR_RETURN(std::vector<TensorType> types,
                        ir_internal::InferTriangularSolve(operand_types, attrs));
  StatusOr<Operation*> op =
      CreateOp(OpKind::kTriangularSolve, std::move(operands), std::move(types), std::move(attrs));
  if (!op.ok()) return op.status();
  return (*op)->result(0);
}

}  // namespace accy
