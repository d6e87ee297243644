// FunctionBuilder's contractions and reductions (include/accy/builder.h): dot_general,
// convolution, reduce (a named reducer, or a body of the caller's) and cumsum.
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "accy/builder.h"
#include "src/ir/builder_internal.h"
#include "src/ir/convolution_attributes.h"
#include "src/ir/type_inference.h"

namespace accy {

using ir_internal::AllResults;
using ir_internal::NamedCombiner;
using ir_internal::ScalarTypesOf;
using ir_internal::SingleResult;
using ir_internal::TypesOf;

StatusOr<Value*> FunctionBuilder::DotGeneral(Value* lhs, Value* rhs, const TensorType& result_type,
                                             std::vector<int64_t> lhs_contracting_dimensions,
                                             std::vector<int64_t> rhs_contracting_dimensions,
                                             std::vector<int64_t> lhs_batching_dimensions,
                                             std::vector<int64_t> rhs_batching_dimensions) {
  std::vector<NamedAttribute> attrs = {
      {"lhs_batching_dimensions", std::move(lhs_batching_dimensions)},
      {"rhs_batching_dimensions", std::move(rhs_batching_dimensions)},
      {"lhs_contracting_dimensions", std::move(lhs_contracting_dimensions)},
      {"rhs_contracting_dimensions", std::move(rhs_contracting_dimensions)}};
  return SingleResult(CreateOp(OpKind::kDotGeneral, {lhs, rhs}, {result_type}, std::move(attrs)));
}

StatusOr<Value*> FunctionBuilder::Convolution(Value* lhs, Value* rhs, const ConvolutionSpec& spec,
                                              std::optional<ElementType> result_element_type) {
  std::vector<Value*> operands = {lhs, rhs};
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kConvolution, operands));
  ConvolutionSpec filled = spec;
  ir_internal::FillConvolutionDefaults(&filled, lhs->type().rank() - 2);
  std::vector<NamedAttribute> attrs = ir_internal::ConvolutionAttributes(filled);
  ACCY_ASSIGN_OR_RETURN(auto types,
                        ir_internal::InferredTypes(OpKind::kConvolution, TypesOf(operands), attrs));
  if (result_element_type.has_value()) {
    types[0] = types[0].WithElementType(*result_element_type);
  }
  return SingleResult(CreateOp(OpKind::kConvolution, operands, types, std::move(attrs)));
}

StatusOr<Value*> FunctionBuilder::Reduce(Value* x, Value* init, const TensorType& result_type,
                                         std::string_view reducer,
                                         std::vector<int64_t> dimensions) {
  ACCY_ASSIGN_OR_RETURN(OpKind combiner, NamedCombiner(OpKind::kReduce, reducer));
  Value* operands[] = {x, init};
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kReduce, operands));
  TensorType scalar = *TensorType::Create(init->type().element_type(), {});
  RegionBodyFn body = [combiner](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * combined, b.Binary(combiner, args[0], args[1]));
    return b.Return({combined});
  };
  std::vector<RegionSpec> regions;
  regions.push_back(RegionSpec{{scalar, scalar}, std::move(body)});
  return SingleResult(CreateOp(OpKind::kReduce, {x, init}, {result_type},
                               {{"dimensions", std::move(dimensions)}}, std::move(regions)));
}

StatusOr<std::vector<Value*>> FunctionBuilder::Reduce(std::vector<Value*> inputs,
                                                      std::vector<Value*> inits,
                                                      std::vector<int64_t> dimensions,
                                                      RegionBodyFn body) {
  std::vector<Value*> operands = inputs;
  operands.insert(operands.end(), inits.begin(), inits.end());
  std::vector<NamedAttribute> attrs = {{"dimensions", std::move(dimensions)}};
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kReduce, operands));
  ACCY_ASSIGN_OR_RETURN(auto types,
                        ir_internal::InferredTypes(OpKind::kReduce, TypesOf(operands), attrs));
  std::vector<TensorType> scalars = ScalarTypesOf(inits);
  std::vector<TensorType> region_args = scalars;
  region_args.insert(region_args.end(), scalars.begin(), scalars.end());
  std::vector<RegionSpec> regions;
  regions.push_back(RegionSpec{region_args, std::move(body)});
  return AllResults(CreateOp(OpKind::kReduce, operands, types, attrs, std::move(regions)));
}

StatusOr<Value*> FunctionBuilder::Cumsum(Value* x, int64_t dimension) {
  std::vector<Value*> operands = {x};
  std::vector<NamedAttribute> attrs = {{"dimension", dimension}};
  ACCY_INFER_AND_CREATE(OpKind::kCumsum, operands, attrs);
  return SingleResult(created);
}

}  // namespace accy
