// The helpers FunctionBuilder's methods share (builder.cc and the builder_*.cc op files behind
// include/accy/builder.h): errors naming the op, the results of a created op, operand types,
// the body op of a named reducer or scatter update (functions defined in builder.cc), and
// ACCY_INFER_AND_CREATE. Internal to src/ir.
#ifndef ACCY_SRC_IR_BUILDER_INTERNAL_H_
#define ACCY_SRC_IR_BUILDER_INTERNAL_H_

#include <span>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "src/ir/type_inference.h"

namespace accy::ir_internal {

// kInvalidArgument "<op name>: <message>".
Status OpError(OpKind kind, std::string_view message);

// The first result, or all results, of a created op; the creation's error otherwise.
StatusOr<Value*> SingleResult(StatusOr<Operation*> op);
StatusOr<std::vector<Value*>> AllResults(StatusOr<Operation*> op);

// The types of `values`, and rank-0 tensors of their element types.
std::vector<TensorType> TypesOf(std::span<Value* const> values);
std::vector<TensorType> ScalarTypesOf(std::span<Value* const> values);

// InferResultTypes' types for `kind`; an OpError for an op whose result types it does not imply
// (nullopt: constant, convert, reshape, ... take theirs from the caller).
StatusOr<std::vector<TensorType>> InferredTypes(OpKind kind,
                                                std::span<const TensorType> operand_types,
                                                std::span<const NamedAttribute> attributes);

// The body op of a named reducer / scatter update.
StatusOr<OpKind> NamedCombiner(OpKind for_op, std::string_view name);

}  // namespace accy::ir_internal

// Ops whose result types are inferred from operands and attributes: in a FunctionBuilder method,
// checks `operands`, infers the result types of `kind` (InferredTypes) and creates the op as
// `created`.
#define ACCY_INFER_AND_CREATE(kind, operands, attrs)                                              \
  ACCY_RETURN_IF_ERROR(CheckOperands(kind, operands));                                            \
  ACCY_ASSIGN_OR_RETURN(auto inferred_types,                                                      \
                        ir_internal::InferredTypes(kind, ir_internal::TypesOf(operands), attrs)); \
  auto created = CreateOp(kind, operands, inferred_types, attrs)

#endif  // ACCY_SRC_IR_BUILDER_INTERNAL_H_
