// FunctionBuilder's window ops (include/accy/builder.h): reduce_window and select_and_scatter.
// Each infers its result types (type_inference_window.cc) and creates the op through CreateOp,
// which verifies it, regions included.
#include "accy/builder.h"
#include "src/ir/builder_internal.h"
#include "src/ir/builder_reducers.h"
#include "src/ir/type_inference.h"
#include "src/util/str_cat.h"

namespace accy {
namespace {

std::vector<TensorType> TypesOf(std::span<Value* const> values) {
  std::vector<TensorType> types;
  for (const Value* v : values) types.push_back(v->type());
  return types;
}

TensorType ScalarOf(const Value* value) {
  return *TensorType::Create(value->type().element_type(), {});
}

// The IR attributes of `window` (accy/ir.h): empty lists stay absent (the spec defaults).
std::vector<NamedAttribute> WindowAttributes(const WindowOptions& window) {
  std::vector<NamedAttribute> attrs = {{"window_dimensions", window.window_dimensions}};
  if (!window.window_strides.empty()) attrs.push_back({"window_strides", window.window_strides});
  if (!window.base_dilations.empty()) attrs.push_back({"base_dilations", window.base_dilations});
  if (!window.window_dilations.empty()) {
    attrs.push_back({"window_dilations", window.window_dilations});
  }
  if (!window.padding.empty()) {
    std::vector<int64_t> flat;
    for (const auto& [low, high] : window.padding) {
      flat.push_back(low);
      flat.push_back(high);
    }
    attrs.push_back({"padding", std::move(flat)});
  }
  return attrs;
}

}  // namespace

StatusOr<std::vector<Value*>> FunctionBuilder::ReduceWindow(std::vector<Value*> inputs,
                                                            std::vector<Value*> inits,
                                                            const WindowOptions& window,
                                                            RegionBodyFn body) {
  std::vector<Value*> operands = inputs;
  operands.insert(operands.end(), inits.begin(), inits.end());
  std::vector<NamedAttribute> attrs = WindowAttributes(window);
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kReduceWindow, operands));
  ACCY_ASSIGN_OR_RETURN(
      auto types, ir_internal::InferredTypes(OpKind::kReduceWindow, TypesOf(operands), attrs));
  std::vector<TensorType> region_args;
  for (int pass = 0; pass < 2; ++pass) {
    for (const Value* init : inits) region_args.push_back(ScalarOf(init));
  }
  std::vector<RegionSpec> regions;
  regions.push_back(RegionSpec{region_args, std::move(body)});
  StatusOr<Operation*> op =
      CreateOp(OpKind::kReduceWindow, operands, types, std::move(attrs), std::move(regions));
  if (!op.ok()) return op.status();
  return (*op)->results();
}

StatusOr<Value*> FunctionBuilder::ReduceWindow(Value* x, Value* init, const WindowOptions& window,
                                               std::string_view reducer) {
  ACCY_ASSIGN_OR_RETURN(const OpKind combiner,
                        ir_internal::ReducerCombiner(OpKind::kReduceWindow, reducer));
  RegionBodyFn body = [combiner](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value* combined, b.Binary(combiner, args[0], args[1]));
    return b.Return({combined});
  };
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> results,
                        ReduceWindow({x}, {init}, window, std::move(body)));
  return results[0];
}

StatusOr<Value*> FunctionBuilder::SelectAndScatter(Value* operand, Value* source, Value* init,
                                                   const WindowOptions& window,
                                                   RegionBodyFn select, RegionBodyFn scatter) {
  std::vector<Value*> operands = {operand, source, init};
  std::vector<NamedAttribute> attrs = WindowAttributes(window);
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kSelectAndScatter, operands));
  ACCY_ASSIGN_OR_RETURN(
      auto types, ir_internal::InferredTypes(OpKind::kSelectAndScatter, TypesOf(operands), attrs));
  const TensorType scalar = ScalarOf(operand);
  std::vector<RegionSpec> regions;
  regions.push_back(RegionSpec{{scalar, scalar}, std::move(select)});
  regions.push_back(RegionSpec{{scalar, scalar}, std::move(scatter)});
  StatusOr<Operation*> op =
      CreateOp(OpKind::kSelectAndScatter, operands, types, std::move(attrs), std::move(regions));
  if (!op.ok()) return op.status();
  return (*op)->result(0);
}

}  // namespace accy
