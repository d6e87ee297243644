// FunctionBuilder::BatchNormInference / BatchNormTraining / BatchNormGrad (include/accy/
// builder.h): infer the result types (type_inference_batch_norm.cc) and create the op through
// CreateOp, which verifies it.
#include <vector>

#include "accy/builder.h"
#include "src/ir/type_inference.h"

namespace accy {
namespace {

std::vector<TensorType> TypesOfValues(const std::vector<Value*>& values) {
  std::vector<TensorType> types;
  for (const Value* value : values) types.push_back(value->type());
  return types;
}

}  // namespace

StatusOr<std::vector<Value*>> FunctionBuilder::BatchNorm(OpKind kind,
                                                         std::vector<Value*> operands,
                                                         double epsilon,
                                                         int64_t feature_index) {
  ACCY_RETURN_IF_ERROR(CheckOperands(kind, operands));
  std::vector<NamedAttribute> attrs = {{"epsilon", epsilon}, {"feature_index", feature_index}};
  ACCY_ASSIGN_OR_RETURN(std::vector<TensorType> types,
                        ir_internal::InferBatchNorm(kind, TypesOfValues(operands), attrs));
  StatusOr<Operation*> op = CreateOp(kind, std::move(operands), std::move(types), std::move(attrs));
  if (!op.ok()) return op.status();
  return (*op)->results();
}

StatusOr<Value*> FunctionBuilder::BatchNormInference(Value* operand, Value* scale, Value* offset,
                                                     Value* mean, Value* variance,
                                                     double epsilon, int64_t feature_index) {
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> results,
                        BatchNorm(OpKind::kBatchNormInference,
                                  {operand, scale, offset, mean, variance}, epsilon,
                                  feature_index));
  return results[0];
}

StatusOr<std::vector<Value*>> FunctionBuilder::BatchNormTraining(Value* operand, Value* scale,
                                                                 Value* offset, double epsilon,
                                                                 int64_t feature_index) {
  return BatchNorm(OpKind::kBatchNormTraining, {operand, scale, offset}, epsilon,
                   feature_index);
}

StatusOr<std::vector<Value*>> FunctionBuilder::BatchNormGrad(Value* operand, Value* scale,
                                                             Value* mean, Value* variance,
                                                             Value* grad_output, double epsilon,
                                                             int64_t feature_index) {
  return BatchNorm(OpKind::kBatchNormGrad, {operand, scale, mean, variance, grad_output},
                   epsilon, feature_index);
}

}  // namespace accy
