// FunctionBuilder's sort and top_k (include/accy/builder.h). Each infers its result types
// (type_inference_sort.cc) and creates the op through CreateOp, which verifies it, the
// comparator region included.
#include "accy/builder.h"
#include "src/ir/builder_internal.h"
#include "src/ir/type_inference.h"
#include "src/util/str_cat.h"

namespace accy {
namespace {

std::vector<TensorType> TypesOf(std::span<Value* const> values) {
  std::vector<TensorType> types;
  for (const Value* v : values) types.push_back(v->type());
  return types;
}

}  // namespace

StatusOr<std::vector<Value*>> FunctionBuilder::Sort(std::vector<Value*> inputs,
                                                    int64_t dimension, RegionBodyFn comparator,
                                                    bool is_stable) {
  std::vector<NamedAttribute> attrs = {{"dimension", dimension}, {"is_stable", is_stable}};
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kSort, inputs));
  ACCY_ASSIGN_OR_RETURN(auto types,
                        ir_internal::InferredTypes(OpKind::kSort, TypesOf(inputs), attrs));
  std::vector<TensorType> region_args;
  for (const Value* input : inputs) {
    const TensorType scalar = *TensorType::Create(input->type().element_type(), {});
    region_args.push_back(scalar);
    region_args.push_back(scalar);
  }
  std::vector<RegionSpec> regions;
  regions.push_back(RegionSpec{std::move(region_args), std::move(comparator)});
  StatusOr<Operation*> op =
      CreateOp(OpKind::kSort, inputs, types, std::move(attrs), std::move(regions));
  if (!op.ok()) return op.status();
  return (*op)->results();
}

StatusOr<Value*> FunctionBuilder::Sort(Value* x, int64_t dimension, std::string_view direction) {
  if (direction != "LT" && direction != "GT") {
    return absl::InvalidArgumentError(
        StrCat("sort: direction '", direction, "' is not LT (ascending) or GT (descending)"));
  }
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kSort, {&x, 1}));
  const ElementType type = x->type().element_type();
  const std::string compare_type = IsFloat(type) ? "TOTALORDER" : "";
  const std::string dir(direction);
  RegionBodyFn comparator = [dir, compare_type](FunctionBuilder& b,
                                                std::span<Value* const> args) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value* less, b.Compare(args[0], args[1], dir, compare_type));
    return b.Return({less});
  };
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> results,
                        Sort({x}, dimension, std::move(comparator), /*is_stable=*/true));
  return results[0];
}

StatusOr<std::vector<Value*>> FunctionBuilder::TopK(Value* x, int64_t k) {
  std::vector<NamedAttribute> attrs = {{"k", k}};
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kTopK, {&x, 1}));
  ACCY_ASSIGN_OR_RETURN(auto types,
                        ir_internal::InferredTypes(OpKind::kTopK, TypesOf({&x, 1}), attrs));
  StatusOr<Operation*> op = CreateOp(OpKind::kTopK, {x}, types, std::move(attrs));
  if (!op.ok()) return op.status();
  return (*op)->results();
}

}  // namespace accy
