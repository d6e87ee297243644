// ExpandBatchNormPass (expand_batch_norm.h). Each helper inserts its op just before the
// batch-norm op being expanded, so the expansion keeps program order.
#include "src/transforms/expand_batch_norm.h"

#include <variant>
#include <vector>

#include "accy/tensor.h"
#include "src/transforms/rewrite_util.h"

namespace accy {
namespace {

bool IsBatchNorm(const Operation& op) {
  return op.kind() == OpKind::kBatchNormInference || op.kind() == OpKind::kBatchNormTraining ||
         op.kind() == OpKind::kBatchNormGrad;
}

class Expander {
 public:
  explicit Expander(Operation* op)
      : op_(op),
        block_(op->parent_block()),
        type_(op->operand(0)->type()),
        feature_index_(op->GetInt("feature_index").value_or(0)),
        vector_(*TensorType::Create(type_.element_type(),
                                    {type_.dim(feature_index_)})),
        scalar_(*TensorType::Create(type_.element_type(), {})) {
    for (int64_t d = 0; d < type_.rank(); ++d) {
      if (d != feature_index_) reduced_dims_.push_back(d);
    }
    const AttributeValue* epsilon = op->attribute("epsilon");
    const double* value = epsilon != nullptr ? std::get_if<double>(epsilon) : nullptr;
    // The spec's epsilon is an f32 constant, made a constant of the operand's element type.
    epsilon_ = static_cast<float>(value != nullptr ? *value : 0.0);
  }

  void Run() {
    std::vector<Value*> results;
    switch (op_->kind()) {
      case OpKind::kBatchNormInference:
        results = {Normalize(op_->operand(1), op_->operand(2), op_->operand(3),
                             op_->operand(4))};
        break;
      case OpKind::kBatchNormTraining: {
        Value* x = op_->operand(0);
        Value* mean = Mean(x);
        Value* centered = Binary(OpKind::kSubtract, x, AlongFeature(mean));
        Value* variance = Mean(Binary(OpKind::kMultiply, centered, centered));
        results = {Normalize(op_->operand(1), op_->operand(2), mean, variance), mean, variance};
        break;
      }
      default:
        results = Grad();
        break;
    }
    for (size_t r = 0; r < results.size(); ++r) {
      op_->result(static_cast<int64_t>(r))->ReplaceAllUsesWith(results[r]);
    }
    block_->Erase(op_);
  }

 private:
  // scale * ((x - mean) / sqrt(variance + epsilon)) + offset, the spec's inference formula.
  // sqrt(variance + epsilon) is computed once per feature and then broadcast: the same values
  // as the spec's sqrt of broadcasts, without a square root per element.
  Value* Normalize(Value* scale, Value* offset, Value* mean, Value* variance) {
    Value* x = op_->operand(0);
    Value* centered = Binary(OpKind::kSubtract, x, AlongFeature(mean));
    Value* stddev = AlongFeature(
        Unary(OpKind::kSqrt, Binary(OpKind::kAdd, variance, Splat(epsilon_, vector_))));
    Value* normalized = Binary(OpKind::kDivide, centered, stddev);
    return Binary(OpKind::kAdd, Binary(OpKind::kMultiply, AlongFeature(scale), normalized),
                  AlongFeature(offset));
  }

  // The spec's batch_norm_grad decomposition (the temporaries of XLA's batchnorm_expander.cc),
  // with variance + epsilon and its square root computed per feature and then broadcast (the
  // same values as the spec's ops on broadcasts).
  std::vector<Value*> Grad() {
    Value* x = op_->operand(0);
    Value* scale = AlongFeature(op_->operand(1));
    Value* mean = AlongFeature(op_->operand(2));
    Value* dy = op_->operand(4);
    Value* var_eps_vector = Binary(OpKind::kAdd, op_->operand(3), Splat(epsilon_, vector_));
    Value* var_eps = AlongFeature(var_eps_vector);
    Value* centered = Binary(OpKind::kSubtract, x, mean);
    Value* stddev = AlongFeature(Unary(OpKind::kSqrt, var_eps_vector));
    Value* normalized = Binary(OpKind::kDivide, centered, stddev);
    Value* count = Splat(ElementsPerFeature(), type_);
    Value* i1 = Binary(OpKind::kMultiply, dy, count);
    Value* sum_dy = Sum(dy);
    Value* i2 = AlongFeature(sum_dy);
    Value* i3 = AlongFeature(Sum(Binary(OpKind::kMultiply, dy, centered)));
    Value* i4 = Binary(OpKind::kMultiply, i3, centered);
    Value* i5 = Binary(OpKind::kDivide, i4, var_eps);
    Value* i6 = Binary(OpKind::kSubtract, Binary(OpKind::kSubtract, i1, i2), i5);
    Value* factor =
        Binary(OpKind::kDivide, Binary(OpKind::kDivide, scale, stddev), count);
    Value* grad_operand = Binary(OpKind::kMultiply, factor, i6);
    Value* grad_scale = Sum(Binary(OpKind::kMultiply, dy, normalized));
    return {grad_operand, grad_scale, sum_dy};
  }

  // size(operand) / dim(operand, feature_index), as the spec's divisor constant.
  double ElementsPerFeature() const {
    const int64_t features = type_.dim(feature_index_);
    return features == 0 ? 0.0
                         : static_cast<double>(type_.element_count()) /
                               static_cast<double>(features);
  }

  Value* Mean(Value* x) {
    return Binary(OpKind::kDivide, Sum(x), Splat(ElementsPerFeature(), vector_));
  }

  // reduce(x, 0) with an add body over every dim but feature_index: tensor<F x E>.
  Value* Sum(Value* x) {
    Value* zero = Constant(0.0);
    std::unique_ptr<Operation> reduce = Operation::Create(
        OpKind::kReduce, {x, zero}, {&vector_, 1}, {{"dimensions", reduced_dims_}});
    const TensorType args[2] = {scalar_, scalar_};
    Block* body = reduce->AddRegion()->AddBlock(args);
    Operation* add = body->Append(Operation::Create(
        OpKind::kAdd, {body->argument(0), body->argument(1)}, {&scalar_, 1}));
    body->Append(Operation::Create(OpKind::kReturn, {add->result()}, {}));
    return block_->InsertBefore(op_, std::move(reduce))->result();
  }

  // A 1-D tensor<F x E> broadcast to the operand's shape along feature_index.
  Value* AlongFeature(Value* vector) { return Broadcast(vector, type_, {feature_index_}); }

  Value* Splat(double number, const TensorType& to) { return Broadcast(Constant(number), to, {}); }

  Value* Constant(double number) {
    Tensor filled = *Tensor::Filled(scalar_, number);  // rounds once to the element type
    std::vector<uint8_t> bytes(filled.bytes().begin(), filled.bytes().end());
    return Insert(OpKind::kConstant, {}, scalar_,
                  {{"value", DenseElements{scalar_, std::move(bytes)}}});
  }

  Value* Broadcast(Value* x, const TensorType& to, std::vector<int64_t> dims) {
    return Insert(OpKind::kBroadcastInDim, {x}, to, {{"broadcast_dimensions", std::move(dims)}});
  }
  Value* Unary(OpKind kind, Value* x) { return Insert(kind, {x}, x->type(), {}); }
  Value* Binary(OpKind kind, Value* a, Value* b) { return Insert(kind, {a, b}, a->type(), {}); }

  Value* Insert(OpKind kind, std::vector<Value*> operands, const TensorType& type,
                std::vector<NamedAttribute> attributes) {
    return block_
        ->InsertBefore(op_, Operation::Create(kind, std::move(operands), {&type, 1},
                                              std::move(attributes)))
        ->result();
  }

  Operation* op_;
  Block* block_;
  TensorType type_;
  int64_t feature_index_;
  TensorType vector_;
  TensorType scalar_;
  std::vector<int64_t> reduced_dims_;
  double epsilon_ = 0.0;
};

void Collect(Block& block, std::vector<Operation*>* found) {
  for (const auto& owned : block.operations()) {
    for (int64_t r = 0; r < owned->num_regions(); ++r) {
      for (const auto& nested : owned->region(r)->blocks()) Collect(*nested, found);
    }
    if (IsBatchNorm(*owned)) found->push_back(owned.get());
  }
}

uint64_t CountBatchNorms(const Block& block) {
  uint64_t count = 0;
  for (const auto& owned : block.operations()) {
    for (int64_t r = 0; r < owned->num_regions(); ++r) {
      for (const auto& nested : owned->region(r)->blocks()) count += CountBatchNorms(*nested);
    }
    if (IsBatchNorm(*owned)) ++count;
  }
  return count;
}

StatusOr<passes::WorkBounds> EstimateWork(const Function& function) {
  ACCY_ASSIGN_OR_RETURN(passes::WorkBounds bounds, EstimateOneVisitPerNode(function));
  // At most 40 new ops of a few hundred bytes each per batch-norm op (grad's expansion has 36).
  ACCY_ASSIGN_OR_RETURN(bounds.work.allocation_capacity,
                        passes::WorkMul(CountBatchNorms(*function.entry_block()), 40 * 512));
  return bounds;
}

}  // namespace

int64_t CountBatchNormOps(const Function& function) {
  return static_cast<int64_t>(CountBatchNorms(*function.entry_block()));
}

int64_t ExpandBatchNorm(Function& function) {
  std::vector<Operation*> found;
  Collect(*function.entry_block(), &found);
  for (Operation* op : found) Expander(op).Run();
  return static_cast<int64_t>(found.size());
}

const passes::WorkContract& ExpandBatchNormPass::contract() const {
  static const passes::WorkContract kContract{{kName, 1}, &EstimateWork};
  return kContract;
}

Status ExpandBatchNormPass::Run(passes::PassContext& context) {
  return FinishRewrite(context, ExpandBatchNorm(context.function()));
}

}  // namespace accy
