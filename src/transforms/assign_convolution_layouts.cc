// AssignConvolutionLayoutsPass (assign_convolution_layouts.h).
//
// Notation: t = transpose(a, p) has t.dim(i) = a.dim(p[i]); an op over t-space values is
// rebuilt over a-space values (its transposes' inputs) and followed by transpose(., p), which
// takes the place of its result.
#include "src/transforms/assign_convolution_layouts.h"

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/ir/convolution_attributes.h"
#include "src/transforms/eliminate_dead_code.h"
#include "src/transforms/rewrite_util.h"

namespace accy {
namespace {

using Permutation = std::vector<int64_t>;

// Output positions (batch x spatial) below which a convolution with parameter weights keeps
// its layout (Rewriter::KeepsPlainWeights).
constexpr int64_t kMinChannelsLastPositions = 128;

bool IsIdentity(const Permutation& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

Permutation Inverse(const Permutation& p) {
  Permutation inverse(p.size());
  for (size_t i = 0; i < p.size(); ++i) inverse[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  return inverse;
}

// The type of transpose(x : `type`, p).
TensorType Transposed(const TensorType& type, const Permutation& p) {
  std::vector<int64_t> dims;
  for (int64_t d : p) dims.push_back(type.dim(d));
  return TensorType::Create(type.element_type(), dims).value();
}

class Rewriter {
 public:
  Rewriter(Function& function, std::span<const int64_t> constant_parameters)
      : block_(*function.entry_block()) {
    for (int64_t index : constant_parameters) {
      if (index >= 0 && index < static_cast<int64_t>(function.parameter_types().size())) {
        declared_.insert(function.parameter(index));
      }
    }
  }

  int64_t Run() {
    std::vector<Operation*> ops;
    for (const auto& op : block_.operations()) ops.push_back(op.get());
    int64_t changes = 0;
    for (Operation* op : ops) {
      if (op->kind() == OpKind::kConvolution) {
        changes += RewriteConvolution(*op);
      } else if (IsElementwise(*op) && op->num_results() == 1) {
        changes += SinkThroughElementwise(*op);
      } else if (op->kind() == OpKind::kReduceWindow) {
        changes += SinkThroughReduceWindow(*op);
      }
    }
    KeepLonePointwiseConvolutions();
    return changes;
  }

 private:
  // transpose(x, p) inserted before `before`: composed with x's own transpose when x is one,
  // and x itself for an identity. `sinkable` marks the new transpose as one of this pass's.
  Value* MakeTranspose(Operation* before, Value* x, Permutation p, bool sinkable) {
    const Operation* inner = x->defining_op();
    if (inner != nullptr && inner->kind() == OpKind::kTranspose) {
      const Permutation q = inner->GetInts("permutation");
      Permutation composed;
      for (int64_t d : p) composed.push_back(q[static_cast<size_t>(d)]);
      x = inner->operand(0);
      p = std::move(composed);
    }
    if (IsIdentity(p)) return x;
    const TensorType type = Transposed(x->type(), p);
    Operation* transpose = block_.InsertBefore(
        before, Operation::Create(OpKind::kTranspose, {x}, {&type, 1}, {{"permutation", p}}));
    if (sinkable) sinkable_.insert(transpose);
    return transpose->result();
  }

  // The permutation of `v` when it is a transpose this pass made (or sank), else empty.
  Permutation SinkablePermutation(const Value* v) const {
    const Operation* op = v->defining_op();
    if (op == nullptr || sinkable_.count(op) == 0) return {};
    return op->GetInts("permutation");
  }

  // Whether `conv` keeps its layout because its weights are a function parameter not declared
  // constant (read from a buffer on every run) and its output has fewer than
  // kMinChannelsLastPositions positions: there oneDNN 2.6 convolves channels-last activations
  // only with weights in its own format (a reorder of the weights on every run), while in the
  // program's layout im2col + GEMM reads them in place.
  bool KeepsPlainWeights(const Operation& conv, const ConvDimensionNumbers& dn) const {
    const Value* weights = conv.operand(1);
    if (!weights->is_block_argument() || weights->owner_block() != &block_ ||
        declared_.count(weights) != 0) {
      return false;
    }
    const TensorType& out = conv.result()->type();
    int64_t positions = out.dim(dn.output_batch_dimension);
    for (int64_t d : dn.output_spatial_dimensions) positions *= out.dim(d);
    return positions < kMinChannelsLastPositions;
  }

  int64_t RewriteConvolution(Operation& conv) {
    ConvolutionSpec spec = ir_internal::ConvolutionSpecOf(conv);
    ConvDimensionNumbers& dn = spec.dimension_numbers;
    const int64_t spatial = static_cast<int64_t>(dn.input_spatial_dimensions.size());
    // [batch, spatial..., feature] of the input and of the output, in the op's own dims.
    Permutation input = {dn.input_batch_dimension};
    Permutation output = {dn.output_batch_dimension};
    for (int64_t s = 0; s < spatial; ++s) {
      input.push_back(dn.input_spatial_dimensions[static_cast<size_t>(s)]);
      output.push_back(dn.output_spatial_dimensions[static_cast<size_t>(s)]);
    }
    input.push_back(dn.input_feature_dimension);
    output.push_back(dn.output_feature_dimension);
    if (IsIdentity(input) && IsIdentity(output)) return 0;  // channels-last already
    // A weight gradient keeps its layout: oneDNN's convolution_backward_weights reads it in place
    // (kernels/onednn_convolution_backward.cc); transposes would only add copies.
    if (KeepsPlainWeights(conv, dn) || ir_internal::IsWeightGradientShape(conv)) return 0;

    Value* lhs = MakeTranspose(&conv, conv.operand(0), input, /*sinkable=*/false);
    dn.input_batch_dimension = 0;
    dn.output_batch_dimension = 0;
    for (int64_t s = 0; s < spatial; ++s) {
      dn.input_spatial_dimensions[static_cast<size_t>(s)] = 1 + s;
      dn.output_spatial_dimensions[static_cast<size_t>(s)] = 1 + s;
    }
    dn.input_feature_dimension = spatial + 1;
    dn.output_feature_dimension = spatial + 1;
    const TensorType type = Transposed(conv.result()->type(), output);
    std::unique_ptr<Operation> channels_last =
        Operation::Create(OpKind::kConvolution, {lhs, conv.operand(1)}, {&type, 1}, conv.attributes());
    for (NamedAttribute& attribute : ir_internal::ConvolutionAttributes(spec)) {
      channels_last->SetAttribute(attribute.name, std::move(attribute.value));
    }
    Operation* rewritten = block_.InsertBefore(&conv, std::move(channels_last));
    // Result dim j of the op is dim Inverse(output)[j] of the channels-last result.
    Value* back = MakeTranspose(&conv, rewritten->result(), Inverse(output), /*sinkable=*/true);
    conv.result()->ReplaceAllUsesWith(back);
    rewrites_.push_back({&conv, rewritten, back->defining_op()});
    return 1;
  }

  // A convolution rewritten channels-last, the original it replaced (still in the block, its
  // operands untouched, its result without uses) and the transpose back to the original layout.
  struct Rewrite {
    Operation* original;
    Operation* channels_last;
    Operation* back;
  };

  // Whether `conv` is a pointwise (1x1) f32 convolution that oneDNN 2.6 runs in the program's
  // layout as one GEMM reading the activations in place: every kernel spatial dim 1, no padding,
  // no lhs dilation, no grouping (strides are allowed).
  static bool IsPointwiseF32(const Operation& conv) {
    const ConvolutionSpec spec = ir_internal::ConvolutionSpecOf(conv);
    const TensorType& kernel = conv.operand(1)->type();
    for (int64_t d : spec.dimension_numbers.kernel_spatial_dimensions) {
      if (kernel.dim(d) != 1) return false;
    }
    for (const auto& [low, high] : spec.padding) {
      if (low != 0 || high != 0) return false;
    }
    for (int64_t d : spec.lhs_dilation) {
      if (d != 1) return false;
    }
    return spec.feature_group_count == 1 && spec.batch_group_count == 1 &&
           conv.operand(0)->type().element_type() == ElementType::kF32 &&
           kernel.element_type() == ElementType::kF32 &&
           conv.result()->type().element_type() == ElementType::kF32;
  }

  // The ops of the entry block that something live uses (return, and the ops
  // IsRemovableWhenUnused keeps, are live; a use from a nested region counts as live).
  std::set<const Operation*> LiveOps() const {
    std::set<const Operation*> live;
    const auto& ops = block_.operations();
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      const Operation* op = it->get();
      bool used = !IsRemovableWhenUnused(*op);
      for (int64_t r = 0; r < op->num_results() && !used; ++r) {
        for (const Use& use : op->result(r)->uses()) {
          if (use.user->parent_block() != &block_ || live.count(use.user) != 0) {
            used = true;
            break;
          }
        }
      }
      if (used) live.insert(op);
    }
    return live;
  }

  // After sinking: a pointwise convolution whose transposes both stayed (the one before it did
  // not cancel against a transpose sunk from the layer before, and the one after it was not
  // sunk into the next convolution) and whose channels-last result nothing else live reads (an
  // op sunk through the transpose) goes back to the program's layout, where oneDNN's GEMM
  // reads it in place: the two transposes cost more than the convolution (1x1 64->256 at 56,
  // NCHW, 1 thread, Intel Xeon model 207: 0.85 ms channels-last between transposes, 0.47 ms
  // as written). The channels-last copy and its transposes are left without uses.
  void KeepLonePointwiseConvolutions() {
    if (rewrites_.empty()) return;
    const std::set<const Operation*> live = LiveOps();
    for (const Rewrite& rewrite : rewrites_) {
      const Operation* before = rewrite.channels_last->operand(0)->defining_op();
      const bool transposed_before = before != nullptr && before->kind() == OpKind::kTranspose;
      if (!transposed_before || live.count(rewrite.back) == 0 || !IsPointwiseF32(*rewrite.original)) {
        continue;
      }
      // Users sunk channels-last read the channels-last result directly: with one of them live
      // the channels-last convolution stays, and going back would compute the product twice.
      bool other_live_user = false;
      for (const Use& use : rewrite.channels_last->result()->uses()) {
        other_live_user = other_live_user ||
                          (use.user != rewrite.back &&
                           (use.user->parent_block() != &block_ || live.count(use.user) != 0));
      }
      if (other_live_user) continue;
      rewrite.back->result()->ReplaceAllUsesWith(rewrite.original->result());
    }
  }

  // Whether ToOperandSpace can map `v` for transposes of `p`: a rank-0 value, a sinkable
  // transpose of `p`, or a broadcast_in_dim.
  bool Mappable(const Value* v, const Permutation& p) const {
    const Operation* def = v->defining_op();
    return v->type().rank() == 0 || SinkablePermutation(v) == p ||
           (def != nullptr && def->kind() == OpKind::kBroadcastInDim);
  }

  // `v` (t-space, the op's shape; Mappable) in a-space for transposes of `p`: a sinkable
  // transpose's input, a rank-0 value as it is, or a broadcast_in_dim re-aimed at a-space dims.
  Value* ToOperandSpace(Operation& op, Value* v, const Permutation& p) {
    if (v->type().rank() == 0) return v;
    if (SinkablePermutation(v) == p) return v->defining_op()->operand(0);
    const Operation* broadcast = v->defining_op();
    Permutation dims;
    for (int64_t d : broadcast->GetInts("broadcast_dimensions")) dims.push_back(p[static_cast<size_t>(d)]);
    const TensorType type = Transposed(v->type(), Inverse(p));
    return block_.InsertBefore(&op, Operation::Create(OpKind::kBroadcastInDim, {broadcast->operand(0)},
                                                      {&type, 1}, {{"broadcast_dimensions", dims}}))
        ->result();
  }

  // The permutation every sinkable transpose operand of `op` shares, or empty when there is
  // none or two differ.
  Permutation SharedPermutation(const Operation& op, int64_t operands) const {
    Permutation shared;
    for (int64_t i = 0; i < operands; ++i) {
      Permutation p = SinkablePermutation(op.operand(i));
      if (p.empty()) continue;
      if (!shared.empty() && p != shared) return {};
      shared = std::move(p);
    }
    return shared;
  }

  int64_t SinkThroughElementwise(Operation& op) {
    const Permutation p = SharedPermutation(op, op.num_operands());
    if (p.empty()) return 0;
    // Check every operand before creating anything: broadcasts are only made once all map.
    for (const Value* v : op.operands()) {
      if (!Mappable(v, p)) return 0;
    }
    std::vector<Value*> operands;
    for (Value* v : op.operands()) operands.push_back(ToOperandSpace(op, v, p));
    const TensorType type = Transposed(op.result()->type(), Inverse(p));
    Operation* sunk = block_.InsertBefore(
        &op, Operation::Create(op.kind(), std::move(operands), {&type, 1}, op.attributes()));
    op.result()->ReplaceAllUsesWith(MakeTranspose(&op, sunk->result(), p, /*sinkable=*/true));
    return 1;
  }

  // reduce_window of one input (and one init) that is a sinkable transpose: the window lists
  // follow the dims into a-space (W'[p[i]] = W[i]); the body is copied (body ops without
  // regions only).
  int64_t SinkThroughReduceWindow(Operation& op) {
    if (op.num_operands() != 2 || op.num_results() != 1 || op.num_regions() != 1) return 0;
    const Permutation p = SharedPermutation(op, 1);
    if (p.empty()) return 0;
    const Block* body = op.region(0)->entry_block();
    if (body == nullptr || op.region(0)->blocks().size() != 1) return 0;
    for (const auto& nested : body->operations()) {
      if (nested->num_regions() != 0) return 0;
    }
    std::vector<NamedAttribute> attributes = op.attributes();
    for (NamedAttribute& attribute : attributes) {
      const bool per_dim = attribute.name == "window_dimensions" || attribute.name == "window_strides" ||
                           attribute.name == "base_dilations" || attribute.name == "window_dilations";
      if (!per_dim && attribute.name != "padding") continue;
      const std::vector<int64_t> values = op.GetInts(attribute.name);
      const size_t width = per_dim ? 1 : 2;
      if (values.size() != p.size() * width) return 0;
      std::vector<int64_t> moved(values.size());
      for (size_t i = 0; i < p.size(); ++i) {
        for (size_t k = 0; k < width; ++k) {
          moved[static_cast<size_t>(p[i]) * width + k] = values[i * width + k];
        }
      }
      attribute.value = std::move(moved);
    }
    const TensorType type = Transposed(op.result()->type(), Inverse(p));
    std::unique_ptr<Operation> sunk =
        Operation::Create(OpKind::kReduceWindow, {op.operand(0)->defining_op()->operand(0), op.operand(1)},
                          {&type, 1}, std::move(attributes));
    std::vector<TensorType> argument_types;
    for (const Value* argument : body->arguments()) argument_types.push_back(argument->type());
    Block* copy = sunk->AddRegion()->AddBlock(argument_types);
    std::unordered_map<const Value*, Value*> mapping;
    for (int64_t a = 0; a < body->num_arguments(); ++a) mapping[body->argument(a)] = copy->argument(a);
    for (const auto& nested : body->operations()) {
      std::vector<Value*> operands;
      for (const Value* v : nested->operands()) {
        auto it = mapping.find(v);
        operands.push_back(it != mapping.end() ? it->second : const_cast<Value*>(v));
      }
      std::vector<TensorType> result_types;
      for (const Value* r : nested->results()) result_types.push_back(r->type());
      Operation* cloned = copy->Append(
          Operation::Create(nested->kind(), std::move(operands), result_types, nested->attributes()));
      for (int64_t r = 0; r < nested->num_results(); ++r) mapping[nested->result(r)] = cloned->result(r);
    }
    Operation* inserted = block_.InsertBefore(&op, std::move(sunk));
    op.result()->ReplaceAllUsesWith(MakeTranspose(&op, inserted->result(), p, /*sinkable=*/true));
    return 1;
  }

  Block& block_;
  std::set<const Value*> declared_;  // parameters declared constant
  std::set<const Operation*> sinkable_;
  std::vector<Rewrite> rewrites_;
};

StatusOr<passes::WorkBounds> EstimateWork(const Function& function) {
  ACCY_ASSIGN_OR_RETURN(passes::WorkBounds bounds, EstimateOneVisitPerNode(function));
  // At most four new ops of a few hundred bytes each per op of the entry block.
  ACCY_ASSIGN_OR_RETURN(
      bounds.work.allocation_capacity,
      passes::WorkMul(static_cast<uint64_t>(function.entry_block()->operations().size()), 4 * 512));
  return bounds;
}

}  // namespace

int64_t AssignConvolutionLayouts(Function& function, std::span<const int64_t> constant_parameters) {
  return Rewriter(function, constant_parameters).Run();
}

const passes::WorkContract& AssignConvolutionLayoutsPass::contract() const {
  static const passes::WorkContract kContract{{kName, 1}, &EstimateWork};
  return kContract;
}

Status AssignConvolutionLayoutsPass::Run(passes::PassContext& context) {
  Function& function = context.function();
  const bool entry = function.name() == entry_;
  return FinishRewrite(context, AssignConvolutionLayouts(
                                    function, entry ? std::span<const int64_t>(constant_parameters_)
                                                    : std::span<const int64_t>()));
}

}  // namespace accy
