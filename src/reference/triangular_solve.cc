// Reference evaluation of triangular_solve (StableHLO spec "triangular_solve"), a direct
// transcription: per batch, op(a) is built as a dense double matrix from the triangle of a that
// is read (`lower`, else upper; the diagonal taken as 1 with `unit_diagonal`), transposed for
// TRANSPOSE and ADJOINT (the same for real types), and every column of x solves
// op(a) * x = b by forward substitution (op(a) lower triangular) or back substitution (upper).
// The right side, x * op(a) = b, is the left side of the transposes: op(a)^T * x^T = b^T, solved
// row by row of b. Sums run in double in index order and round once to the result type.
#include <cstdint>
#include <string>
#include <vector>

#include "src/reference/evaluator_internal.h"

namespace accy::reference {
namespace {

// Solves t * x = rhs in place for one right-hand side (`rhs`, length m); t is m x m row-major
// and triangular (`t_lower`: zero above the diagonal, else below).
void Substitute(const std::vector<double>& t, int64_t m, bool t_lower, std::vector<double>& rhs) {
  for (int64_t step = 0; step < m; ++step) {
    const int64_t i = t_lower ? step : m - 1 - step;
    double sum = rhs[static_cast<size_t>(i)];
    if (t_lower) {
      for (int64_t j = 0; j < i; ++j) {
        sum -= t[static_cast<size_t>(i * m + j)] * rhs[static_cast<size_t>(j)];
      }
    } else {
      for (int64_t j = i + 1; j < m; ++j) {
        sum -= t[static_cast<size_t>(i * m + j)] * rhs[static_cast<size_t>(j)];
      }
    }
    rhs[static_cast<size_t>(i)] = sum / t[static_cast<size_t>(i * m + i)];
  }
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateTriangularSolve(const Operation& op,
                                                      std::span<const Tensor> operands) {
  const Tensor& a = operands[0];
  const Tensor& b = operands[1];
  const bool left_side = op.GetBool("left_side").value_or(false);
  const bool lower = op.GetBool("lower").value_or(false);
  const bool unit_diagonal = op.GetBool("unit_diagonal").value_or(false);
  const std::string transpose_a = op.GetString("transpose_a").value_or("NO_TRANSPOSE");
  const bool transpose = transpose_a != "NO_TRANSPOSE";  // TRANSPOSE, or ADJOINT of a real a
  const std::vector<int64_t>& b_dims = b.type().dims();
  const int64_t rank = b.type().rank();
  const int64_t m = a.type().dim(rank - 1);
  const int64_t rows = b_dims[static_cast<size_t>(rank - 2)];
  const int64_t cols = b_dims[static_cast<size_t>(rank - 1)];
  const int64_t n = left_side ? cols : rows;  // right-hand sides per batch
  int64_t batches = 1;
  for (int64_t d = 0; d + 2 < rank; ++d) batches *= b_dims[static_cast<size_t>(d)];
  ACCY_ASSIGN_OR_RETURN(Tensor result, Tensor::Allocate(b.type()));
  // The matrix solved on the left: op(a) for left_side, op(a)^T otherwise. It is lower
  // triangular when exactly one of (a's triangle is lower, a is transposed once more) holds.
  const bool flip = transpose != !left_side;  // transposes applied to a's triangle, mod 2
  const bool t_lower = lower != flip;
  std::vector<double> t(static_cast<size_t>(m * m));
  std::vector<double> rhs(static_cast<size_t>(m));
  for (int64_t batch = 0; batch < batches; ++batch) {
    const int64_t a_base = batch * m * m;
    const int64_t b_base = batch * rows * cols;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        // Element (i, j) of the solved matrix is a[r][c] with (r, c) = (j, i) when flipped.
        const int64_t r = flip ? j : i, c = flip ? i : j;
        const bool read = lower ? r >= c : r <= c;
        double value = read ? LoadFloat(a, a_base + r * m + c) : 0.0;
        if (r == c && unit_diagonal) value = 1.0;
        t[static_cast<size_t>(i * m + j)] = value;
      }
    }
    for (int64_t k = 0; k < n; ++k) {
      // Right-hand side k: column k of b (left_side) or row k (right side, transposed).
      for (int64_t i = 0; i < m; ++i) {
        const int64_t index = left_side ? i * cols + k : k * cols + i;
        rhs[static_cast<size_t>(i)] = LoadFloat(b, b_base + index);
      }
      Substitute(t, m, t_lower, rhs);
      for (int64_t i = 0; i < m; ++i) {
        const int64_t index = left_side ? i * cols + k : k * cols + i;
        StoreFloat(result, b_base + index, rhs[static_cast<size_t>(i)]);
      }
    }
  }
  std::vector<Tensor> results;
  results.push_back(std::move(result));
  return results;
}

}  // namespace accy::reference
