// SimplifyLayoutChainsPass (simplify_layout_chains.h).
#include "src/transforms/simplify_layout_chains.h"

#include <algorithm>
#include <vector>

#include "src/ir/convolution_attributes.h"
#include "src/transforms/rewrite_util.h"

namespace accy {
namespace {

bool IsIdentityPermutation(const std::vector<int64_t>& permutation) {
  for (size_t i = 0; i < permutation.size(); ++i) {
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// True when every value of element type `from` converts to `through` and back unchanged.
bool RoundTripsExactly(ElementType from, ElementType through) {
  if (IsFloat(from) && IsFloat(through)) {
    if (through == ElementType::kF64) return from != ElementType::kF64;
    if (through == ElementType::kF32) return from == ElementType::kF16 || from == ElementType::kBF16;
    return false;
  }
  if (IsInteger(from) && IsInteger(through) &&
      ElementBitWidth(through) > ElementBitWidth(from)) {
    return IsSigned(from) == IsSigned(through) || (IsUnsigned(from) && IsSigned(through));
  }
  return false;
}

// The value `op`'s result equals outright, or null. May instead edit `op` in place (then sets
// `edited`).
Value* Simplify(Operation& op, bool& edited) {
  if (op.num_operands() == 0 || op.num_results() != 1) return nullptr;
  Value* operand = op.operand(0);
  const TensorType& type = op.result()->type();
  const Operation* inner = operand->defining_op();
  switch (op.kind()) {
    case OpKind::kReshape:
      if (operand->type() == type) return operand;
      if (inner != nullptr && inner->kind() == OpKind::kReshape) {
        op.SetOperand(0, inner->operand(0));
        edited = true;
        return op.operand(0)->type() == type ? op.operand(0) : nullptr;
      }
      return nullptr;
    case OpKind::kConvert:
      if (operand->type() == type) return operand;
      if (inner != nullptr && inner->kind() == OpKind::kConvert &&
          inner->operand(0)->type() == type &&
          RoundTripsExactly(type.element_type(), operand->type().element_type())) {
        return inner->operand(0);
      }
      return nullptr;
    case OpKind::kTranspose: {
      std::vector<int64_t> permutation = op.GetInts("permutation");
      if (IsIdentityPermutation(permutation)) return operand;
      if (inner == nullptr || inner->kind() != OpKind::kTranspose) return nullptr;
      // Result dim i is operand dim q[i], which is the inner input's dim p[q[i]].
      const std::vector<int64_t> p = inner->GetInts("permutation");
      std::vector<int64_t> composed;
      for (int64_t q : permutation) composed.push_back(p[static_cast<size_t>(q)]);
      if (IsIdentityPermutation(composed)) return inner->operand(0);
      op.SetAttribute("permutation", composed);
      op.SetOperand(0, inner->operand(0));
      edited = true;
      return nullptr;
    }
    case OpKind::kBroadcastInDim: {
      // Same type with dims [1, 0] on a square operand is a transpose: only identity dims.
      if (operand->type() == type && IsIdentityPermutation(op.GetInts("broadcast_dimensions"))) {
        return operand;
      }
      if (inner == nullptr || inner->kind() != OpKind::kBroadcastInDim) return nullptr;
      // Inner input dim i is the middle's dim d1[i], which is the result's dim d2[d1[i]].
      const std::vector<int64_t> d1 = inner->GetInts("broadcast_dimensions");
      const std::vector<int64_t> d2 = op.GetInts("broadcast_dimensions");
      std::vector<int64_t> composed;
      for (int64_t d : d1) composed.push_back(d2[static_cast<size_t>(d)]);
      op.SetAttribute("broadcast_dimensions", composed);
      op.SetOperand(0, inner->operand(0));
      edited = true;
      return nullptr;
    }
    case OpKind::kPad: {
      // JAX writes a pad of all-zero widths around select_and_scatter (its max-pool gradient).
      auto all_zero = [&](const char* name) {
        for (int64_t v : op.GetInts(name)) {
          if (v != 0) return false;
        }
        return true;
      };
      return all_zero("edge_padding_low") && all_zero("edge_padding_high") &&
                     all_zero("interior_padding")
                 ? operand
                 : nullptr;
    }
    case OpKind::kSlice: {
      // Same shape with unit strides: every start is 0 and every limit the dim (spec C2-C4).
      for (int64_t stride : op.GetInts("strides")) {
        if (stride != 1) return nullptr;
      }
      return operand->type() == type ? operand : nullptr;
    }
    case OpKind::kConvolution: {
      // convolution(x, reverse(w, dims)) with dims all kernel spatial dims is the convolution
      // of w with those dims' window_reversal flipped (spec "convolution": reversal reads the
      // kernel at K - 1 - k): JAX writes an input gradient this way. Only for a transposed
      // convolution (lhs_dilation > 1 on some dim), which oneDNN's deconvolution runs with the
      // reversal; a stride-1 input gradient keeps its reverse (a copy of the small kernel) and
      // runs as a plain convolution_forward.
      const Operation* reverse = op.operand(1)->defining_op();
      if (reverse == nullptr || reverse->kind() != OpKind::kReverse) return nullptr;
      ConvolutionSpec spec = ir_internal::ConvolutionSpecOf(op);
      if (std::all_of(spec.lhs_dilation.begin(), spec.lhs_dilation.end(),
                      [](int64_t d) { return d == 1; })) {
        return nullptr;
      }
      // A chain of such reverses folds whole: each flips its dims in turn.
      const std::vector<int64_t>& kernel_spatial = spec.dimension_numbers.kernel_spatial_dimensions;
      Value* kernel = op.operand(1);
      for (; reverse != nullptr && reverse->kind() == OpKind::kReverse;
           reverse = kernel->defining_op()) {
        std::vector<bool> flipped = spec.window_reversal;
        for (int64_t d : reverse->GetInts("dimensions")) {
          auto it = std::find(kernel_spatial.begin(), kernel_spatial.end(), d);
          if (it == kernel_spatial.end()) {
            flipped.clear();
            break;
          }
          const auto s = static_cast<size_t>(it - kernel_spatial.begin());
          flipped[s] = !flipped[s];
        }
        if (flipped.empty()) break;  // this reverse touches a feature dim: it stays
        spec.window_reversal = std::move(flipped);
        kernel = reverse->operand(0);
      }
      if (kernel == op.operand(1)) return nullptr;
      for (NamedAttribute& attribute : ir_internal::ConvolutionAttributes(spec)) {
        op.SetAttribute(attribute.name, std::move(attribute.value));
      }
      op.SetOperand(1, kernel);
      edited = true;
      return nullptr;
    }
    default:
      return nullptr;
  }
}

int64_t SimplifyBlock(Block& block) {
  int64_t simplified = 0;
  for (const auto& op : block.operations()) {
    simplified += SumOverNestedBlocks(*op, [&](Block& nested) { return SimplifyBlock(nested); });
    bool edited = false;
    if (Value* replacement = Simplify(*op, edited); replacement != nullptr) {
      op->result()->ReplaceAllUsesWith(replacement);
      ++simplified;
    } else if (edited) {
      ++simplified;
    }
  }
  return simplified;
}

}  // namespace

int64_t SimplifyLayoutChains(Function& function) { return SimplifyBlock(*function.entry_block()); }

const passes::WorkContract& SimplifyLayoutChainsPass::contract() const {
  static const passes::WorkContract kContract{{kName, 1}, &EstimateOneVisitPerNode};
  return kContract;
}

Status SimplifyLayoutChainsPass::Run(passes::PassContext& context) {
  return FinishRewrite(context, SimplifyLayoutChains(context.function()));
}

}  // namespace accy
