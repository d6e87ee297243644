// FunctionBuilder's shape and data-movement ops (include/accy/builder.h): broadcast_in_dim,
// reshape, transpose, slice, pad, concatenate, iota, reverse, gather, scatter, dynamic_slice and
// dynamic_update_slice.
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "accy/builder.h"
#include "src/ir/builder_internal.h"
#include "src/ir/type_inference.h"

namespace accy {

using ir_internal::AllResults;
using ir_internal::NamedCombiner;
using ir_internal::ScalarTypesOf;
using ir_internal::SingleResult;
using ir_internal::TypesOf;

StatusOr<Value*> FunctionBuilder::BroadcastInDim(Value* x, const TensorType& result_type,
                                                 std::vector<int64_t> broadcast_dimensions) {
  return SingleResult(CreateOp(OpKind::kBroadcastInDim, {x}, {result_type},
                               {{"broadcast_dimensions", std::move(broadcast_dimensions)}}));
}

StatusOr<Value*> FunctionBuilder::Reshape(Value* x, const TensorType& result_type) {
  return SingleResult(CreateOp(OpKind::kReshape, {x}, {result_type}));
}

StatusOr<Value*> FunctionBuilder::Transpose(Value* x, std::vector<int64_t> permutation) {
  std::vector<Value*> operands = {x};
  std::vector<NamedAttribute> attrs = {{"permutation", std::move(permutation)}};
  ACCY_INFER_AND_CREATE(OpKind::kTranspose, operands, attrs);
  return SingleResult(created);
}

StatusOr<Value*> FunctionBuilder::Slice(Value* x, std::vector<int64_t> start_indices,
                                        std::vector<int64_t> limit_indices,
                                        std::vector<int64_t> strides) {
  std::vector<Value*> operands = {x};
  std::vector<NamedAttribute> attrs = {{"start_indices", std::move(start_indices)},
                                       {"limit_indices", std::move(limit_indices)},
                                       {"strides", std::move(strides)}};
  ACCY_INFER_AND_CREATE(OpKind::kSlice, operands, attrs);
  return SingleResult(created);
}

StatusOr<Value*> FunctionBuilder::Pad(Value* x, Value* padding_value,
                                      std::vector<int64_t> edge_padding_low,
                                      std::vector<int64_t> edge_padding_high,
                                      std::vector<int64_t> interior_padding) {
  std::vector<Value*> operands = {x, padding_value};
  std::vector<NamedAttribute> attrs = {{"edge_padding_low", std::move(edge_padding_low)},
                                       {"edge_padding_high", std::move(edge_padding_high)},
                                       {"interior_padding", std::move(interior_padding)}};
  ACCY_INFER_AND_CREATE(OpKind::kPad, operands, attrs);
  return SingleResult(created);
}

StatusOr<Value*> FunctionBuilder::Concatenate(std::vector<Value*> inputs, int64_t dimension) {
  std::vector<NamedAttribute> attrs = {{"dimension", dimension}};
  ACCY_INFER_AND_CREATE(OpKind::kConcatenate, inputs, attrs);
  return SingleResult(created);
}

StatusOr<Value*> FunctionBuilder::Iota(const TensorType& result_type, int64_t iota_dimension) {
  return SingleResult(
      CreateOp(OpKind::kIota, {}, {result_type}, {{"iota_dimension", iota_dimension}}));
}

StatusOr<Value*> FunctionBuilder::Reverse(Value* x, std::vector<int64_t> dimensions) {
  std::vector<Value*> operands = {x};
  std::vector<NamedAttribute> attrs = {{"dimensions", std::move(dimensions)}};
  ACCY_INFER_AND_CREATE(OpKind::kReverse, operands, attrs);
  return SingleResult(created);
}

StatusOr<Value*> FunctionBuilder::Gather(Value* operand, Value* start_indices,
                                         const GatherDimensionNumbers& dn,
                                         std::vector<int64_t> slice_sizes,
                                         bool indices_are_sorted) {
  std::vector<Value*> operands = {operand, start_indices};
  std::vector<NamedAttribute> attrs = {
      {"offset_dims", dn.offset_dims},
      {"collapsed_slice_dims", dn.collapsed_slice_dims},
      {"operand_batching_dims", dn.operand_batching_dims},
      {"start_indices_batching_dims", dn.start_indices_batching_dims},
      {"start_index_map", dn.start_index_map},
      {"index_vector_dim", dn.index_vector_dim},
      {"slice_sizes", std::move(slice_sizes)},
      {"indices_are_sorted", indices_are_sorted}};
  ACCY_INFER_AND_CREATE(OpKind::kGather, operands, attrs);
  return SingleResult(created);
}

StatusOr<std::vector<Value*>> FunctionBuilder::Scatter(
    std::vector<Value*> inputs, Value* scatter_indices, std::vector<Value*> updates,
    const ScatterDimensionNumbers& dn, RegionBodyFn update_computation, bool indices_are_sorted,
    bool unique_indices) {
  std::vector<Value*> operands = inputs;
  operands.push_back(scatter_indices);
  operands.insert(operands.end(), updates.begin(), updates.end());
  std::vector<NamedAttribute> attrs = {
      {"update_window_dims", dn.update_window_dims},
      {"inserted_window_dims", dn.inserted_window_dims},
      {"input_batching_dims", dn.input_batching_dims},
      {"scatter_indices_batching_dims", dn.scatter_indices_batching_dims},
      {"scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims},
      {"index_vector_dim", dn.index_vector_dim},
      {"indices_are_sorted", indices_are_sorted},
      {"unique_indices", unique_indices}};
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kScatter, operands));
  ACCY_ASSIGN_OR_RETURN(auto types,
                        ir_internal::InferredTypes(OpKind::kScatter, TypesOf(operands), attrs));
  std::vector<TensorType> region_args = ScalarTypesOf(inputs);
  std::vector<TensorType> scalars = region_args;
  region_args.insert(region_args.end(), scalars.begin(), scalars.end());
  std::vector<RegionSpec> regions;
  regions.push_back(RegionSpec{region_args, std::move(update_computation)});
  return AllResults(CreateOp(OpKind::kScatter, operands, types, attrs, std::move(regions)));
}

StatusOr<Value*> FunctionBuilder::Scatter(Value* input, Value* scatter_indices, Value* updates,
                                          const ScatterDimensionNumbers& dn,
                                          std::string_view update, bool indices_are_sorted,
                                          bool unique_indices) {
  RegionBodyFn body;
  if (update == "assign") {
    body = [](FunctionBuilder& b, std::span<Value* const> args) { return b.Return({args[1]}); };
  } else {
    ACCY_ASSIGN_OR_RETURN(OpKind combiner, NamedCombiner(OpKind::kScatter, update));
    body = [combiner](FunctionBuilder& b, std::span<Value* const> args) -> Status {
      ACCY_ASSIGN_OR_RETURN(Value * combined, b.Binary(combiner, args[0], args[1]));
      return b.Return({combined});
    };
  }
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> results,
                        Scatter({input}, scatter_indices, {updates}, dn, std::move(body),
                                indices_are_sorted, unique_indices));
  return results[0];
}

StatusOr<Value*> FunctionBuilder::DynamicSlice(Value* operand, std::vector<Value*> start_indices,
                                               std::vector<int64_t> slice_sizes) {
  std::vector<Value*> operands = {operand};
  operands.insert(operands.end(), start_indices.begin(), start_indices.end());
  std::vector<NamedAttribute> attrs = {{"slice_sizes", std::move(slice_sizes)}};
  ACCY_INFER_AND_CREATE(OpKind::kDynamicSlice, operands, attrs);
  return SingleResult(created);
}

StatusOr<Value*> FunctionBuilder::DynamicUpdateSlice(Value* operand, Value* update,
                                                     std::vector<Value*> start_indices) {
  std::vector<Value*> operands = {operand, update};
  operands.insert(operands.end(), start_indices.begin(), start_indices.end());
  std::vector<NamedAttribute> attrs;
  ACCY_INFER_AND_CREATE(OpKind::kDynamicUpdateSlice, operands, attrs);
  return SingleResult(created);
}

}  // namespace accy
