// FunctionBuilder's control flow (include/accy/builder.h): while, case, and if as a case on
// the negated predicate.
#include <span>
#include <utility>
#include <vector>

#include "accy/builder.h"
#include "src/ir/builder_internal.h"
#include "src/util/str_cat.h"

namespace accy {

using ir_internal::AllResults;
using ir_internal::TypesOf;

StatusOr<std::vector<Value*>> FunctionBuilder::While(std::vector<Value*> initial_values,
                                                     RegionBodyFn cond, RegionBodyFn body) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kWhile, initial_values));
  std::vector<TensorType> types = TypesOf(initial_values);
  std::vector<RegionSpec> regions;
  regions.push_back(RegionSpec{types, std::move(cond)});
  regions.push_back(RegionSpec{types, std::move(body)});
  return AllResults(CreateOp(OpKind::kWhile, initial_values, types, {}, std::move(regions)));
}

StatusOr<std::vector<Value*>> FunctionBuilder::Case(Value* index,
                                                    std::vector<TensorType> result_types,
                                                    std::vector<RegionBodyFn> branches) {
  std::vector<Value*> operands = {index};
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kCase, operands));
  std::vector<RegionSpec> regions;
  for (RegionBodyFn& branch : branches) regions.push_back(RegionSpec{{}, std::move(branch)});
  return AllResults(
      CreateOp(OpKind::kCase, operands, std::move(result_types), {}, std::move(regions)));
}

StatusOr<std::vector<Value*>> FunctionBuilder::If(Value* pred, std::vector<TensorType> result_types,
                                                  RegionBodyFn true_branch,
                                                  RegionBodyFn false_branch) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kNot, std::span<Value* const>(&pred, 1)));
  ACCY_ASSIGN_OR_RETURN(TensorType pred_type, TensorType::Create(ElementType::kI1, {}));
  if (pred->type() != pred_type) {
    return absl::InvalidArgumentError(StrCat("if: pred has type ", pred->type().ToString(),
                                             ", expected tensor<i1> (spec \"if\" C1)"));
  }
  ACCY_ASSIGN_OR_RETURN(Value * is_false, Not(pred));
  ACCY_ASSIGN_OR_RETURN(Value * index, Convert(is_false, ElementType::kI32));
  std::vector<RegionBodyFn> branches;
  branches.push_back(std::move(true_branch));
  branches.push_back(std::move(false_branch));
  return Case(index, std::move(result_types), std::move(branches));
}

}  // namespace accy
