// Dynamic-shape ops whose shape operands are constants, as their static forms (issue 18: "dynamic
// ops whose shape operands are constants fold to their static forms at import"). accy values have
// static shapes, so a dynamic op's result type already says its shape; the shape operands must be
// constants that agree with it. Pure functions; the operand Values belong to the module being
// imported.
//
//   dynamic_iota(output_shape)                 -> iota                 (spec "dynamic_iota")
//   dynamic_reshape(operand, output_shape)     -> reshape              (spec "dynamic_reshape")
//   dynamic_broadcast_in_dim(operand, dims)    -> broadcast_in_dim     (spec
//                                                 "dynamic_broadcast_in_dim"; the known_*
//                                                 expansion hints are dropped)
//   dynamic_pad(operand, value, lo, hi, in)    -> pad                  (spec "dynamic_pad")
//   dynamic_gather(operand, indices, sizes)    -> gather               (spec "dynamic_gather")
//   get_dimension_size(operand)                -> constant tensor<i32> (spec "get_dimension_size")
#ifndef ACCY_SRC_STABLEHLO_DYNAMIC_FOLD_H_
#define ACCY_SRC_STABLEHLO_DYNAMIC_FOLD_H_

#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "src/stablehlo/syntax.h"

namespace accy::stablehlo_internal {

// The op to create instead of a dynamic one: kind, operands and IR attributes, with the dynamic
// op's own result types.
struct StaticForm {
  OpKind kind = OpKind::kConstant;
  std::vector<Value*> operands;
  std::vector<NamedAttribute> attributes;
};

// Whether `name` ("stablehlo.dynamic_iota", ...) is one of the ops above.
bool IsFoldedDynamicOp(std::string_view name);

// The static form of `op` (IsFoldedDynamicOp(op.name)) with operand values `operands`. Errors,
// located at the op or operand: kUnimplemented when a shape operand is not a constant (a
// parameter or a computed value); kInvalidArgument for a wrong operand count, a shape operand
// that is not a 1-D integer tensor, or a constant that disagrees with the result type (the op's
// spec constraints), and for the static op's attribute errors (ConvertAttributes).
StatusOr<StaticForm> StaticFormOf(const OpSyntax& op, const std::vector<Value*>& operands);

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_DYNAMIC_FOLD_H_
