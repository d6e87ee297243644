// Internal interface between the reference evaluator's driver (evaluator.cc) and its op
// families (elementwise_ops.cc, reduction_ops.cc, shape_ops.cc, gather_scatter.cc,
// window_ops.cc, sort_ops.cc, dot_general.cc, convolution.cc, triangular_solve.cc,
// rng_bit_generator.cc, lapack.cc). Each family function evaluates one verified op on already-evaluated
// operand tensors and returns new owned result tensors, one per op result.
#ifndef ACCY_SRC_REFERENCE_EVALUATOR_INTERNAL_H_
#define ACCY_SRC_REFERENCE_EVALUATOR_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "accy/collectives.h"
#include "accy/ir.h"
#include "accy/status.h"
#include "accy/tensor.h"

namespace accy::reference {

// Evaluates a region's single block with `arguments`; returns the operands of its return op.
using RegionEvaluator =
    std::function<StatusOr<std::vector<Tensor>>(const Region&, std::span<const Tensor>)>;

// constant, every elementwise unary/binary/ternary op, convert, bitcast_convert.
StatusOr<std::vector<Tensor>> EvaluateElementwiseOp(const Operation& op,
                                                    std::span<const Tensor> operands);
// reduce (any dims, N operands, body region via `eval_region`; named bodies may be
// short-cut but must agree with the region) and cumsum.
StatusOr<std::vector<Tensor>> EvaluateReductionOp(const Operation& op,
                                                  std::span<const Tensor> operands,
                                                  const RegionEvaluator& eval_region);
// The op of a one-op body `return op(arg0, arg1)` (either argument order) when it is add,
// multiply, maximum, minimum, and, or or xor: reduce and reduce_window apply that op's scalar
// arithmetic (elementwise_math.h) instead of evaluating the region per element, which agrees
// with the region (reduction_ops.cc).
std::optional<OpKind> SingleOpBody(const Region& region);
// broadcast_in_dim, reshape, transpose, slice, pad, concatenate, iota, reverse,
// dynamic_slice, dynamic_update_slice.
StatusOr<std::vector<Tensor>> EvaluateShapeOp(const Operation& op,
                                              std::span<const Tensor> operands);
// gather and scatter (scatter applies its update region through `eval_region`).
StatusOr<std::vector<Tensor>> EvaluateGatherScatterOp(const Operation& op,
                                                      std::span<const Tensor> operands,
                                                      const RegionEvaluator& eval_region);
// reduce_window and select_and_scatter (window_ops.cc; regions through `eval_region`).
StatusOr<std::vector<Tensor>> EvaluateWindowOp(const Operation& op,
                                               std::span<const Tensor> operands,
                                               const RegionEvaluator& eval_region);
// sort (comparator through `eval_region`) and top_k (sort_ops.cc).
StatusOr<std::vector<Tensor>> EvaluateSortOp(const Operation& op,
                                             std::span<const Tensor> operands,
                                             const RegionEvaluator& eval_region);
// dot_general.
StatusOr<std::vector<Tensor>> EvaluateDotGeneral(const Operation& op,
                                                 std::span<const Tensor> operands);
// convolution (convolution.cc).
StatusOr<std::vector<Tensor>> EvaluateConvolution(const Operation& op,
                                                  std::span<const Tensor> operands);
// batch_norm_inference / _training / _grad (batch_norm.cc): per-feature loops in double.
StatusOr<std::vector<Tensor>> EvaluateBatchNorm(const Operation& op,
                                                std::span<const Tensor> operands);
// triangular_solve (triangular_solve.cc): substitution per batch in double, rounded once.
StatusOr<std::vector<Tensor>> EvaluateTriangularSolve(const Operation& op,
                                                      std::span<const Tensor> operands);

// rng_bit_generator (rng_bit_generator.cc): Threefry-2x32-20 and Philox-4x32-10 written out from
// Salmon et al. (SC 2011), with XLA:CPU's counter layout; results output_state, output.
StatusOr<std::vector<Tensor>> EvaluateRngBitGenerator(const Operation& op,
                                                      std::span<const Tensor> operands);

// lapack (lapack.cc): the LAPACK routine of call_target_name by direct loops in double
// (potrf: Cholesky–Banachiewicz; getrf: Doolittle with partial pivoting; geqrf, orgqr:
// Householder reflectors; syevd: cyclic Jacobi; gesdd: one-sided Jacobi), independent of
// LAPACK; results as the routine's (potrf: factor, info; getrf: lu, pivots, info; geqrf: a, tau;
// orgqr: q; syevd: v, w, info; gesdd: a, s, u, vt, info).
StatusOr<std::vector<Tensor>> EvaluateLapack(const Operation& op,
                                             std::span<const Tensor> operands);

// lapack gesdd (lapack_gesdd.cc): a [batch..., M, N] -> a (unchanged), s, u, vt, info by
// one-sided Jacobi in double, singular values descending, each pair (u_i, v_i) signed so u_i's
// first largest-magnitude component is positive; info -4 for a NaN or Inf in a (as LAPACK
// 3.10+'s xGESDD for a NaN).
// Called by EvaluateLapack on a verified op.
StatusOr<std::vector<Tensor>> EvaluateGesdd(const Operation& op, const Tensor& a);

// The SPMD process an evaluation runs as (ReferenceOptions): its communicator (null on a 1x1
// grid) and the grid.
struct CollectiveProcess {
  Communicator* communicator = nullptr;
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
};
// replica_id .. collective_reduce (collectives.cc): every process's operands gathered through
// the communicator, the result computed from the spec's formulas. kFailedPrecondition without a
// communicator on a grid of more than one process; the process-group errors of
// src/collectives/process_groups.h; the communicator's errors.
StatusOr<std::vector<Tensor>> EvaluateCollective(const Operation& op,
                                                 std::span<const Tensor> operands,
                                                 const RegionEvaluator& eval_region,
                                                 const CollectiveProcess& process);
// Operand conversion of the contractions (dot_general.cc), to the result element type's domain
// (docs/numerics.md convert rules): every element of `t` as a double holding a value of float
// type `to`, or as the two's complement bits of integer or i1 type `to` (only the low
// ElementBitWidth(to) bits matter).
StatusOr<std::vector<double>> ConvertToFloat(const Tensor& t, ElementType to);
std::vector<uint64_t> ConvertToInteger(const Tensor& t, ElementType to);

// Element access shared by the families (scalar.cc). Floats load as double (exact for every
// float type); integers and i1 load as int64 (signed types sign-extended, unsigned types
// zero-extended, u64 reinterpreted bit for bit).
double LoadFloat(const Tensor& t, int64_t linear_index);
int64_t LoadInt(const Tensor& t, int64_t linear_index);
// Rounds `value` to the tensor's float type (nearest even) and stores it.
void StoreFloat(Tensor& t, int64_t linear_index, double value);
// Truncates `value` to the tensor's integer width (i1: value & 1) and stores it.
void StoreInt(Tensor& t, int64_t linear_index, int64_t value);
// Copies one element (raw bytes) between tensors of the same element type.
void CopyElement(const Tensor& from, int64_t from_index, Tensor& to, int64_t to_index);

// Row-major index arithmetic.
inline std::vector<int64_t> Unravel(int64_t linear, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size(), 0);
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] == 0) return index;
    index[d] = linear % dims[d];
    linear /= dims[d];
  }
  return index;
}
inline int64_t Ravel(std::span<const int64_t> index, const std::vector<int64_t>& dims) {
  int64_t linear = 0;
  for (size_t d = 0; d < dims.size(); ++d) linear = linear * dims[d] + index[d];
  return linear;
}

}  // namespace accy::reference

#endif  // ACCY_SRC_REFERENCE_EVALUATOR_INTERNAL_H_
