// Builder and FunctionBuilder (include/accy/builder.h): each op method infers or takes the result
// types, then CreateOp checks visibility, builds regions, verifies and appends.
#include "accy/builder.h"

#include <algorithm>

#include "src/util/str_cat.h"
#include "src/ir/convolution_attributes.h"
#include "src/ir/type_inference.h"

namespace accy {
namespace {

Status OpError(OpKind kind, std::string_view message) {
  return absl::InvalidArgumentError(StrCat(OpName(kind), ": ", message));
}

StatusOr<Value*> SingleResult(StatusOr<Operation*> op) {
  if (!op.ok()) return op.status();
  return (*op)->result(0);
}

StatusOr<std::vector<Value*>> AllResults(StatusOr<Operation*> op) {
  if (!op.ok()) return op.status();
  return (*op)->results();
}

std::vector<TensorType> TypesOf(std::span<Value* const> values) {
  std::vector<TensorType> types;
  for (const Value* v : values) types.push_back(v->type());
  return types;
}

std::vector<TensorType> ScalarTypesOf(std::span<Value* const> values) {
  std::vector<TensorType> types;
  for (const Value* v : values) types.push_back(*TensorType::Create(v->type().element_type(), {}));
  return types;
}

// The body op of a named reducer / scatter update.
StatusOr<OpKind> NamedCombiner(OpKind for_op, std::string_view name) {
  if (name == "sum" || name == "add") return OpKind::kAdd;
  if (name == "max" || name == "maximum") return OpKind::kMaximum;
  if (name == "min" || name == "minimum") return OpKind::kMinimum;
  if (name == "prod" || name == "multiply") return OpKind::kMultiply;
  if (name == "and") return OpKind::kAnd;
  if (name == "or") return OpKind::kOr;
  if (for_op == OpKind::kScatter) {  // "assign" is handled by the caller
    return OpError(for_op, StrCat("unknown update '", name,
                                  "' (expected assign, add, multiply, maximum or minimum)"));
  }
  return OpError(for_op, StrCat("unknown reducer '", name,
                                      "' (expected sum, max, min, prod, and or or)"));
}

}  // namespace

// ---- FunctionBuilder ----

Value* FunctionBuilder::Parameter(int64_t i) const {
  // The block of a finished region may be gone (its op was rejected): do not touch it.
  if (std::find(open_blocks_->begin(), open_blocks_->end(), block()) == open_blocks_->end()) {
    return nullptr;
  }
  Block* b = block();
  if (i < 0 || i >= b->num_arguments()) return nullptr;
  return b->argument(i);
}

Status FunctionBuilder::CheckBlockOpen(OpKind kind) const {
  if (open_blocks_->back() == block()) return absl::OkStatus();
  if (std::find(open_blocks_->begin(), open_blocks_->end(), block()) != open_blocks_->end()) {
    return OpError(kind, "a region of an op of this block is being built; append to the region "
                         "through the FunctionBuilder passed to its body function");
  }
  return OpError(kind, "this region is no longer being built; its FunctionBuilder cannot append");
}

Status FunctionBuilder::CheckOperands(OpKind kind, std::span<Value* const> operands) const {
  // First: the block of a closed region may be gone, so it must not be read below.
  ACCY_RETURN_IF_ERROR(CheckBlockOpen(kind));
  if (block()->terminator() != nullptr) {
    return OpError(kind, "the block already ended with return; no op can follow it");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    Value* v = operands[i];
    if (v == nullptr) {
      return OpError(kind, StrCat("operand ", i, " is null (an earlier call failed, or a "
                                        "parameter index was out of range)"));
    }
    Block* home = v->is_block_argument() ? v->owner_block() : v->defining_op()->parent_block();
    if (std::find(scopes_.begin(), scopes_.end(), home) == scopes_.end()) {
      return OpError(kind, StrCat("operand ", i, " is not visible here: it belongs to "
                                        "another function or to a region that is closed"));
    }
  }
  return absl::OkStatus();
}

StatusOr<Operation*> FunctionBuilder::CreateOp(OpKind kind, std::vector<Value*> operands,
                                               std::vector<TensorType> result_types,
                                               std::vector<NamedAttribute> attributes,
                                               std::vector<RegionSpec> regions) {
  if (static_cast<int>(kind) >= kNumOpKinds) {
    return absl::InvalidArgumentError(StrCat("unknown op kind ", static_cast<int>(kind)));
  }
  ACCY_RETURN_IF_ERROR(CheckOperands(kind, operands));
  std::unique_ptr<Operation> op =
      Operation::Create(kind, std::move(operands), result_types, std::move(attributes));
  for (size_t r = 0; r < regions.size(); ++r) {
    RegionSpec& spec = regions[r];
    Block* body = op->AddRegion()->AddBlock(spec.argument_types);
    std::vector<Block*> scopes = scopes_;
    scopes.push_back(body);
    FunctionBuilder nested(function_, std::move(scopes), open_blocks_);
    std::vector<Value*> args = body->arguments();
    if (!spec.body) return OpError(kind, StrCat("region ", r, " has no body function"));
    open_blocks_->push_back(body);
    Status status = spec.body(nested, args);
    open_blocks_->pop_back();
    if (!status.ok()) {
      return absl::Status(status.code(), StrCat(OpName(kind), " region ", r, ": ",
                                                      status.message()));
    }
    if (body->terminator() == nullptr) {
      return OpError(kind, StrCat("region ", r, " does not end with a return"));
    }
  }
  // A region body can reach the enclosing block only around the builder (Block::Append).
  if (block()->terminator() != nullptr) {
    return OpError(kind, "a region body ended the enclosing block with return; region bodies "
                         "must append through the FunctionBuilder passed to them");
  }
  ACCY_RETURN_IF_ERROR(VerifyOperation(*op));
  return block()->Append(std::move(op));
}

StatusOr<Value*> FunctionBuilder::Unary(OpKind kind, Value* x) {
  ACCY_RETURN_IF_ERROR(CheckOperands(kind, std::span<Value* const>(&x, 1)));
  ACCY_ASSIGN_OR_RETURN(auto types, ir_internal::InferResultTypes(kind, TypesOf({&x, 1}), {}));
  return SingleResult(CreateOp(kind, {x}, *types));
}

StatusOr<Value*> FunctionBuilder::Binary(OpKind kind, Value* lhs, Value* rhs) {
  Value* operands[] = {lhs, rhs};
  ACCY_RETURN_IF_ERROR(CheckOperands(kind, operands));
  ACCY_ASSIGN_OR_RETURN(auto types, ir_internal::InferResultTypes(kind, TypesOf(operands), {}));
  return SingleResult(CreateOp(kind, {lhs, rhs}, *types));
}

StatusOr<Value*> FunctionBuilder::Constant(const TensorType& type, std::span<const uint8_t> bytes) {
  DenseElements value{type, std::vector<uint8_t>(bytes.begin(), bytes.end())};
  return SingleResult(CreateOp(OpKind::kConstant, {}, {type}, {{"value", std::move(value)}}));
}

StatusOr<Value*> FunctionBuilder::Constant(const Tensor& value) {
  if (!value.valid()) return OpError(OpKind::kConstant, "the tensor has no data");
  return Constant(value.type(), value.bytes());
}

StatusOr<Value*> FunctionBuilder::ConstantScalar(ElementType type, double value) {
  ACCY_ASSIGN_OR_RETURN(TensorType scalar, TensorType::Create(type, {}));
  ACCY_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Filled(scalar, value));
  return Constant(tensor);
}

#define ACCY_UNARY_METHOD(Method, Kind) \
  StatusOr<Value*> FunctionBuilder::Method(Value* x) { return Unary(OpKind::Kind, x); }
ACCY_UNARY_METHOD(Abs, kAbs)
ACCY_UNARY_METHOD(Negate, kNegate)
ACCY_UNARY_METHOD(Sign, kSign)
ACCY_UNARY_METHOD(Not, kNot)
ACCY_UNARY_METHOD(Exponential, kExponential)
ACCY_UNARY_METHOD(ExponentialMinusOne, kExponentialMinusOne)
ACCY_UNARY_METHOD(Log, kLog)
ACCY_UNARY_METHOD(LogPlusOne, kLogPlusOne)
ACCY_UNARY_METHOD(Logistic, kLogistic)
ACCY_UNARY_METHOD(Tanh, kTanh)
ACCY_UNARY_METHOD(Sqrt, kSqrt)
ACCY_UNARY_METHOD(Rsqrt, kRsqrt)
ACCY_UNARY_METHOD(Cbrt, kCbrt)
ACCY_UNARY_METHOD(Sine, kSine)
ACCY_UNARY_METHOD(Cosine, kCosine)
ACCY_UNARY_METHOD(Floor, kFloor)
ACCY_UNARY_METHOD(Ceil, kCeil)
ACCY_UNARY_METHOD(RoundNearestEven, kRoundNearestEven)
ACCY_UNARY_METHOD(RoundNearestAfz, kRoundNearestAfz)
ACCY_UNARY_METHOD(IsFinite, kIsFinite)
ACCY_UNARY_METHOD(Popcnt, kPopcnt)
ACCY_UNARY_METHOD(CountLeadingZeros, kCountLeadingZeros)
ACCY_UNARY_METHOD(Tan, kTan)
ACCY_UNARY_METHOD(Asin, kAsin)
ACCY_UNARY_METHOD(Acos, kAcos)
ACCY_UNARY_METHOD(Atan, kAtan)
ACCY_UNARY_METHOD(Sinh, kSinh)
ACCY_UNARY_METHOD(Cosh, kCosh)
ACCY_UNARY_METHOD(Asinh, kAsinh)
ACCY_UNARY_METHOD(Acosh, kAcosh)
ACCY_UNARY_METHOD(Atanh, kAtanh)
ACCY_UNARY_METHOD(Erf, kErf)
ACCY_UNARY_METHOD(Erfc, kErfc)
ACCY_UNARY_METHOD(ErfInv, kErfInv)
ACCY_UNARY_METHOD(Lgamma, kLgamma)
ACCY_UNARY_METHOD(Digamma, kDigamma)
ACCY_UNARY_METHOD(BesselI1e, kBesselI1e)
ACCY_UNARY_METHOD(IsInf, kIsInf)
ACCY_UNARY_METHOD(IsPosInf, kIsPosInf)
ACCY_UNARY_METHOD(IsNegInf, kIsNegInf)
#undef ACCY_UNARY_METHOD

#define ACCY_BINARY_METHOD(Method, Kind)                               \
  StatusOr<Value*> FunctionBuilder::Method(Value* lhs, Value* rhs) {   \
    return Binary(OpKind::Kind, lhs, rhs);                             \
  }
ACCY_BINARY_METHOD(Add, kAdd)
ACCY_BINARY_METHOD(Subtract, kSubtract)
ACCY_BINARY_METHOD(Multiply, kMultiply)
ACCY_BINARY_METHOD(Divide, kDivide)
ACCY_BINARY_METHOD(Remainder, kRemainder)
ACCY_BINARY_METHOD(Maximum, kMaximum)
ACCY_BINARY_METHOD(Minimum, kMinimum)
ACCY_BINARY_METHOD(Power, kPower)
ACCY_BINARY_METHOD(Atan2, kAtan2)
ACCY_BINARY_METHOD(NextAfter, kNextAfter)
ACCY_BINARY_METHOD(Zeta, kZeta)
ACCY_BINARY_METHOD(Polygamma, kPolygamma)
ACCY_BINARY_METHOD(Mulhi, kMulhi)
ACCY_BINARY_METHOD(And, kAnd)
ACCY_BINARY_METHOD(Or, kOr)
ACCY_BINARY_METHOD(Xor, kXor)
ACCY_BINARY_METHOD(ShiftLeft, kShiftLeft)
ACCY_BINARY_METHOD(ShiftRightLogical, kShiftRightLogical)
ACCY_BINARY_METHOD(ShiftRightArithmetic, kShiftRightArithmetic)
#undef ACCY_BINARY_METHOD

StatusOr<Value*> FunctionBuilder::Convert(Value* x, ElementType to) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kConvert, std::span<Value* const>(&x, 1)));
  // TensorType::Create, not WithElementType: `to` may be outside ElementType.
  StatusOr<TensorType> result_type = TensorType::Create(to, x->type().dims());
  if (!result_type.ok()) {
    return OpError(OpKind::kConvert, std::string(result_type.status().message()));
  }
  return SingleResult(CreateOp(OpKind::kConvert, {x}, {*result_type}));
}

StatusOr<Value*> FunctionBuilder::BitcastConvert(Value* x, const TensorType& result_type) {
  return SingleResult(CreateOp(OpKind::kBitcastConvert, {x}, {result_type}));
}

StatusOr<Value*> FunctionBuilder::ReducePrecision(Value* x, int64_t exponent_bits,
                                                  int64_t mantissa_bits) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kReducePrecision, std::span<Value* const>(&x, 1)));
  std::vector<NamedAttribute> attrs = {{"exponent_bits", exponent_bits},
                                       {"mantissa_bits", mantissa_bits}};
  ACCY_ASSIGN_OR_RETURN(auto types, ir_internal::InferResultTypes(OpKind::kReducePrecision,
                                                                  TypesOf({&x, 1}), attrs));
  return SingleResult(CreateOp(OpKind::kReducePrecision, {x}, *types, std::move(attrs)));
}

StatusOr<Value*> FunctionBuilder::Compare(Value* lhs, Value* rhs, std::string_view direction,
                                          std::string_view compare_type) {
  Value* operands[] = {lhs, rhs};
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kCompare, operands));
  std::vector<NamedAttribute> attrs = {{"comparison_direction", std::string(direction)}};
  if (!compare_type.empty()) attrs.push_back({"compare_type", std::string(compare_type)});
  ACCY_ASSIGN_OR_RETURN(auto types,
                        ir_internal::InferResultTypes(OpKind::kCompare, TypesOf(operands), attrs));
  return SingleResult(CreateOp(OpKind::kCompare, {lhs, rhs}, *types, std::move(attrs)));
}

// Ops whose result types are inferred from operands and attributes.
#define ACCY_INFER_AND_CREATE(kind, operands, attrs)                                          \
  ACCY_RETURN_IF_ERROR(CheckOperands(kind, operands));                                        \
  ACCY_ASSIGN_OR_RETURN(auto inferred_types,                                                  \
                        ir_internal::InferResultTypes(kind, TypesOf(operands), attrs));       \
  auto created = CreateOp(kind, operands, *inferred_types, attrs)

StatusOr<Value*> FunctionBuilder::Select(Value* pred, Value* on_true, Value* on_false) {
  std::vector<Value*> operands = {pred, on_true, on_false};
  std::vector<NamedAttribute> attrs;
  ACCY_INFER_AND_CREATE(OpKind::kSelect, operands, attrs);
  return SingleResult(created);
}

StatusOr<Value*> FunctionBuilder::Clamp(Value* min, Value* x, Value* max) {
  std::vector<Value*> operands = {min, x, max};
  std::vector<NamedAttribute> attrs;
  ACCY_INFER_AND_CREATE(OpKind::kClamp, operands, attrs);
  return SingleResult(created);
}

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
  ACCY_ASSIGN_OR_RETURN(auto types, ir_internal::InferResultTypes(OpKind::kScatter,
                                                                  TypesOf(operands), attrs));
  std::vector<TensorType> region_args = ScalarTypesOf(inputs);
  std::vector<TensorType> scalars = region_args;
  region_args.insert(region_args.end(), scalars.begin(), scalars.end());
  std::vector<RegionSpec> regions;
  regions.push_back(RegionSpec{region_args, std::move(update_computation)});
  return AllResults(CreateOp(OpKind::kScatter, operands, *types, attrs, std::move(regions)));
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
      ACCY_ASSIGN_OR_RETURN(Value* combined, b.Binary(combiner, args[0], args[1]));
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

StatusOr<Value*> FunctionBuilder::DotGeneral(Value* lhs, Value* rhs,
                                             const TensorType& result_type,
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
  ACCY_ASSIGN_OR_RETURN(auto types, ir_internal::InferResultTypes(OpKind::kConvolution,
                                                                  TypesOf(operands), attrs));
  if (result_element_type.has_value()) {
    (*types)[0] = (*types)[0].WithElementType(*result_element_type);
  }
  return SingleResult(CreateOp(OpKind::kConvolution, operands, *types, std::move(attrs)));
}

StatusOr<Value*> FunctionBuilder::Reduce(Value* x, Value* init, const TensorType& result_type,
                                         std::string_view reducer,
                                         std::vector<int64_t> dimensions) {
  ACCY_ASSIGN_OR_RETURN(OpKind combiner, NamedCombiner(OpKind::kReduce, reducer));
  Value* operands[] = {x, init};
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kReduce, operands));
  TensorType scalar = *TensorType::Create(init->type().element_type(), {});
  RegionBodyFn body = [combiner](FunctionBuilder& b, std::span<Value* const> args) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value* combined, b.Binary(combiner, args[0], args[1]));
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
  ACCY_ASSIGN_OR_RETURN(auto types, ir_internal::InferResultTypes(OpKind::kReduce,
                                                                  TypesOf(operands), attrs));
  std::vector<TensorType> scalars = ScalarTypesOf(inits);
  std::vector<TensorType> region_args = scalars;
  region_args.insert(region_args.end(), scalars.begin(), scalars.end());
  std::vector<RegionSpec> regions;
  regions.push_back(RegionSpec{region_args, std::move(body)});
  return AllResults(CreateOp(OpKind::kReduce, operands, *types, attrs, std::move(regions)));
}

StatusOr<Value*> FunctionBuilder::Cumsum(Value* x, int64_t dimension) {
  std::vector<Value*> operands = {x};
  std::vector<NamedAttribute> attrs = {{"dimension", dimension}};
  ACCY_INFER_AND_CREATE(OpKind::kCumsum, operands, attrs);
  return SingleResult(created);
}

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
  return AllResults(CreateOp(OpKind::kCase, operands, std::move(result_types), {},
                             std::move(regions)));
}

StatusOr<std::vector<Value*>> FunctionBuilder::If(Value* pred,
                                                  std::vector<TensorType> result_types,
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

StatusOr<Operation*> FunctionBuilder::KernelCall(std::vector<Value*> operands,
                                                 std::vector<TensorType> result_types,
                                                 const KernelCallSpec& spec) {
  std::vector<NamedAttribute> attrs = {{"call_target_name", spec.target},
                                       {"version", spec.version}};
  std::vector<std::string> effects;
  for (size_t i = 0; i < spec.operand_effects.size(); ++i) {
    const OperandEffect effect = spec.operand_effects[i];
    if (effect > OperandEffect::kNone) {
      return OpError(OpKind::kKernelCall,
                     StrCat("operand_effects[", i, "] is ", static_cast<int>(effect),
                            ", not a value of OperandEffect (read, write, read_write, none)"));
    }
    effects.emplace_back(OperandEffectName(effect));
  }
  if (effects.empty()) effects.assign(operands.size(), std::string(OperandEffectName(OperandEffect::kRead)));
  attrs.push_back({"operand_effects", std::move(effects)});
  std::vector<int64_t> aliases;
  for (const std::optional<int64_t>& alias : spec.result_aliases) aliases.push_back(alias.value_or(-1));
  if (aliases.empty()) aliases.assign(result_types.size(), -1);
  attrs.push_back({"result_aliases", std::move(aliases)});
  for (const NamedAttribute& attribute : spec.attributes) {
    for (const NamedAttribute& reserved : attrs) {
      if (attribute.name == reserved.name) {
        return OpError(OpKind::kKernelCall, StrCat("kernel attribute '", attribute.name,
                                                   "' is one of the kernel_call's own attributes"));
      }
    }
  }
  for (size_t i = 0; i < spec.attributes.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (spec.attributes[i].name == spec.attributes[j].name) {
        return OpError(OpKind::kKernelCall,
                       StrCat("kernel attribute '", spec.attributes[i].name, "' is given twice"));
      }
    }
  }
  attrs.insert(attrs.end(), spec.attributes.begin(), spec.attributes.end());
  return CreateOp(OpKind::kKernelCall, std::move(operands), std::move(result_types),
                  std::move(attrs));
}

#undef ACCY_INFER_AND_CREATE

Status FunctionBuilder::Return(std::vector<Value*> values) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kReturn, values));
  bool function_level = scopes_.size() == 1;
  if (function_level) {
    const auto& expected = function_->result_types();
    if (values.size() != expected.size()) {
      return OpError(OpKind::kReturn, StrCat("function '", function_->name(), "' returns ",
                                                   expected.size(), " values, got ",
                                                   values.size()));
    }
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i]->type() != expected[i]) {
        return OpError(OpKind::kReturn,
                       StrCat("value ", i, " has type ", values[i]->type().ToString(),
                                    ", but function '", function_->name(), "' declares ",
                                    expected[i].ToString()));
      }
    }
  }
  block()->Append(Operation::Create(OpKind::kReturn, std::move(values), {}));
  return absl::OkStatus();
}

Status FunctionBuilder::Finish() {
  if (block()->terminator() == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("function '", function_->name(), "' has no return"));
  }
  return absl::OkStatus();
}

// ---- Builder ----

Builder::Builder(std::string module_name) : module_(std::make_unique<Module>(std::move(module_name))) {}

StatusOr<TensorType> Builder::Type(ElementType element_type, std::vector<int64_t> dims) const {
  return TensorType::Create(element_type, std::move(dims));
}

StatusOr<FunctionBuilder> Builder::BeginFunction(std::string name,
                                                 std::vector<TensorType> parameters,
                                                 std::vector<TensorType> results) {
  if (module_ == nullptr) {
    return absl::FailedPreconditionError("Builder::BeginFunction: the builder already finished");
  }
  ACCY_ASSIGN_OR_RETURN(Function * function, module_->AddFunction(std::move(name),
                                                                 std::move(parameters),
                                                                 std::move(results)));
  return FunctionBuilder(function, {function->entry_block()},
                         std::make_shared<std::vector<Block*>>(1, function->entry_block()));
}

StatusOr<std::unique_ptr<Module>> Builder::Finish() {
  if (module_ == nullptr) {
    return absl::FailedPreconditionError("Builder::Finish: the builder already finished");
  }
  ACCY_RETURN_IF_ERROR(Verify(*module_));
  return std::move(module_);
}

}  // namespace accy
