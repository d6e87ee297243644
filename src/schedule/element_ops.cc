// Resource estimates of a work item (element_ops.h).
#include "src/schedule/element_ops.h"

#include <limits>
#include <vector>

#include "kernels/kernel_catalog.h"
#include "src/ir/convolution_attributes.h"
#include "src/ir/lapack_targets.h"
#include "src/ir/window_geometry.h"

namespace accy {

uint64_t SaturatedAdd(uint64_t a, uint64_t b) {
  uint64_t out;
  return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<uint64_t>::max() : out;
}
uint64_t SaturatedMul(uint64_t a, uint64_t b) {
  uint64_t out;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<uint64_t>::max() : out;
}

namespace {

// 2 * m * n * k for a rank-2 x rank-2 -> rank-2 dot_general with one contracting dim.
std::optional<uint64_t> DotGeneralElementOps(const Operation& op) {
  if (op.num_operands() != 2) return std::nullopt;
  const TensorType& lhs = op.operand(0)->type();
  const TensorType& rhs = op.operand(1)->type();
  if (lhs.rank() != 2 || rhs.rank() != 2 || op.result(0)->type().rank() != 2) return std::nullopt;
  std::vector<int64_t> lhs_contract = op.GetInts("lhs_contracting_dimensions");
  std::vector<int64_t> rhs_contract = op.GetInts("rhs_contracting_dimensions");
  if (lhs_contract.size() != 1 || rhs_contract.size() != 1) return std::nullopt;
  uint64_t m = static_cast<uint64_t>(lhs.dim(1 - lhs_contract[0]));
  uint64_t k = static_cast<uint64_t>(lhs.dim(lhs_contract[0]));
  uint64_t n = static_cast<uint64_t>(rhs.dim(1 - rhs_contract[0]));
  return SaturatedMul(SaturatedMul(SaturatedMul(m, n), k), 2);
}

// convolution: 2 x output elements x kernel window positions x kernel input features.
uint64_t ConvolutionElementOps(const Operation& op) {
  const ConvolutionSpec spec = ir_internal::ConvolutionSpecOf(op);
  const TensorType& rhs = op.operand(1)->type();
  uint64_t window =
      static_cast<uint64_t>(rhs.dim(spec.dimension_numbers.kernel_input_feature_dimension));
  for (int64_t d : spec.dimension_numbers.kernel_spatial_dimensions) {
    window = SaturatedMul(window, static_cast<uint64_t>(rhs.dim(d)));
  }
  return SaturatedMul(
      SaturatedMul(static_cast<uint64_t>(op.result(0)->type().element_count()), window), 2);
}

// reduce_window: one body application per output element, window position and input (spec
// "reduce_window": every position combines an element or the init value).
uint64_t ReduceWindowElementOps(const Operation& op) {
  const WindowGeometry g = WindowGeometryOf(op);
  uint64_t window = static_cast<uint64_t>(op.num_results());
  for (int64_t d : g.window_dimensions) window = SaturatedMul(window, static_cast<uint64_t>(d));
  return SaturatedMul(static_cast<uint64_t>(op.result(0)->type().element_count()), window);
}

// triangular_solve: batch x M x M x N, M the size of a's matrices and N the right-hand sides
// per batch (b's other matrix dim). Substitution does about M^2 / 2 multiply-adds per
// right-hand side, a multiply-add counting 2.
uint64_t TriangularSolveElementOps(const Operation& op) {
  const TensorType& a = op.operand(0)->type();
  const TensorType& b = op.operand(1)->type();
  const int64_t rank = b.rank();
  const bool left_side = op.GetBool("left_side").value_or(false);
  const uint64_t m = static_cast<uint64_t>(a.dim(rank - 1));
  const uint64_t n = static_cast<uint64_t>(b.dim(left_side ? rank - 1 : rank - 2));
  uint64_t batch = 1;
  for (int64_t d = 0; d + 2 < rank; ++d) {
    batch = SaturatedMul(batch, static_cast<uint64_t>(b.dim(d)));
  }
  return SaturatedMul(SaturatedMul(SaturatedMul(batch, m), m), n);
}

// rng_bit_generator: 32 per output element. Its item's output value is output_state (result 0,
// a few words), so the default (element count x ops) would miss the work, which is the output's:
// a cipher block is about 80 integer operations (Threefry-2x32-20: 20 add-rotate-xor rounds and 5
// key injections; Philox-4x32-10: 10 rounds of two widening multiplies and xors) for 1 to 4
// output elements.
uint64_t RngBitGeneratorElementOps(const Operation& op) {
  return SaturatedMul(static_cast<uint64_t>(op.result(1)->type().element_count()), 32);
}

// lapack: the routine's floating-point operations (LAPACK Working Note 41): potrf N^3 / 3 per
// batch; getrf M N k - k^3 / 3 with k = min(M, N) (2 N^3 / 3 when square); geqrf and orgqr
// counted as getrf (their counts are about twice that: an underestimate within 2x), syevd too
// (with eigenvectors about 9 N^3: an underestimate within 14x), gesdd too (about 4 M N k +
// 8 k^3 with vectors: an underestimate within about 20x).
uint64_t LapackElementOps(const Operation& op) {
  const TensorType& a = op.operand(0)->type();
  const int64_t rank = a.rank();
  if (rank < 2) return 0;
  const uint64_t m = static_cast<uint64_t>(a.dim(rank - 2));
  const uint64_t n = static_cast<uint64_t>(a.dim(rank - 1));
  const uint64_t k = std::min(m, n);
  uint64_t batch = 1;
  for (int64_t d = 0; d + 2 < rank; ++d) {
    batch = SaturatedMul(batch, static_cast<uint64_t>(a.dim(d)));
  }
  const uint64_t k3 = SaturatedMul(SaturatedMul(k, k), k) / 3;
  StatusOr<LapackTarget> target = ParseLapackTarget(op.GetString("call_target_name").value_or(""));
  if (target.ok() && target->routine == LapackRoutine::kPotrf) return SaturatedMul(batch, k3);
  const uint64_t mnk = SaturatedMul(SaturatedMul(m, n), k);
  return SaturatedMul(batch, mnk - k3);  // getrf; k^3 / 3 <= m n k
}

// The catalog's (or a registered host kernel's) estimate for a valid call; nullopt for a
// kernel_call the catalog does not know or rejects (the seed falls back to element count x ops).
std::optional<uint64_t> KernelCallElementOps(const Operation& op) {
  StatusOr<uint64_t> estimate = kernels::EstimateElementOps(op);
  if (!estimate.ok()) return std::nullopt;
  return *estimate;
}

}  // namespace

std::optional<uint64_t> ReductionInputElementCount(std::span<const Operation* const> ops,
                                                   const ShapeLayoutAnalysis& shapes) {
  if (ops.size() != 1 || ops[0]->kind() != OpKind::kReduce || ops[0]->num_operands() < 1) {
    return std::nullopt;
  }
  const TensorInfo* info = shapes.Get(ops[0]->operand(0));
  if (info == nullptr) return std::nullopt;
  return info->element_count;
}

uint64_t EstimatedElementOps(std::span<const Operation* const> ops, uint64_t element_count,
                             const ShapeLayoutAnalysis& shapes) {
  if (ops.size() == 1) {
    std::optional<uint64_t> estimate;
    switch (ops[0]->kind()) {
      case OpKind::kDotGeneral:
        estimate = DotGeneralElementOps(*ops[0]);
        break;
      case OpKind::kConvolution:
        estimate = ConvolutionElementOps(*ops[0]);
        break;
      case OpKind::kReduceWindow:
        estimate = ReduceWindowElementOps(*ops[0]);
        break;
      case OpKind::kReduce:
        estimate = ReductionInputElementCount(ops, shapes);
        break;
      case OpKind::kKernelCall:
        estimate = KernelCallElementOps(*ops[0]);
        break;
      case OpKind::kTriangularSolve:
        estimate = TriangularSolveElementOps(*ops[0]);
        break;
      case OpKind::kRngBitGenerator:
        estimate = RngBitGeneratorElementOps(*ops[0]);
        break;
      case OpKind::kLapack:
        estimate = LapackElementOps(*ops[0]);
        break;
      default:
        break;
    }
    if (estimate) return *estimate;
  }
  // A convolution or reduce_window with its epilogue: its own work plus one op per epilogue
  // element. (A dot_general's epilogue item keeps the seed's element count x ops.)
  for (const Operation* op : ops) {
    if (op->kind() == OpKind::kConvolution) {
      return SaturatedAdd(ConvolutionElementOps(*op), SaturatedMul(element_count, ops.size() - 1));
    }
    if (op->kind() == OpKind::kReduceWindow) {
      return SaturatedAdd(ReduceWindowElementOps(*op), SaturatedMul(element_count, ops.size() - 1));
    }
  }
  return SaturatedMul(element_count, ops.size());
}

std::optional<uint64_t> TensorByteSize(const TensorInfo& info) {
  if (!info.element_count) return std::nullopt;
  uint64_t bytes;
  if (__builtin_mul_overflow(*info.element_count,
                             static_cast<uint64_t>(ElementByteWidth(info.element_type)), &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

}  // namespace accy
