// Reference evaluation of gesdd (the lapack op's SVD; ops.def, src/ir/lapack_targets.h): one-sided
// (Hestenes) Jacobi in double, independent of LAPACK, each result rounded once to its type.
// Per batch, B is a (M >= N) or a^T (M < N), P x Q with P >= Q. Column pairs (i, j) of B are
// rotated until every pair is orthogonal to 1e-15 of the product of their norms (or 100
// sweeps): B W = U_B diag(s) with W orthogonal, so a = U_B diag(s) W^T (M >= N) or a = W diag(s)
// U_B^T (M < N). Singular values are the column norms, sorted descending (stable); the column of
// U_B for a value below 1e-300 of the largest (or zero) and the columns of a full U (or rows of a
// full VT) past K are completed by Gram-Schmidt (twice) from the unit vector with the largest
// residual (the first of equals).
// Sign convention: each pair (u_i, v_i), i < K, is signed so that u_i's first largest-magnitude
// component is positive (u_i and row i of vt flip together, so u diag(s) vt is unchanged);
// completion columns of u and rows of vt are signed the same way by their own components.
// LAPACK's signs are its own: compare up to this sign.
// info: -4 for a NaN or Inf in a (LAPACK 3.10+'s xGESDD for a NaN; accy's kernel for both), with
// s, u and vt NaN; 1 when the sweeps did not converge (squares overflowing double); else 0.
// Mode 'N': u and vt are zeros. Result 0 is a, unchanged.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "src/reference/evaluator_internal.h"

namespace accy::reference {
namespace {

// A column-major P x Q matrix of doubles.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<double> data;
  Matrix(int64_t r, int64_t c) : rows(r), cols(c), data(static_cast<size_t>(r * c), 0.0) {}
  double& operator()(int64_t i, int64_t j) { return data[static_cast<size_t>(j * rows + i)]; }
  double* column(int64_t j) { return data.data() + j * rows; }
};

double Dot(const double* x, const double* y, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

// One-sided Jacobi on b (P x Q, P >= Q), accumulating the rotations into w (Q x Q, starts as I).
// Returns whether every pair converged within the sweep limit.
bool OneSidedJacobi(Matrix& b, Matrix& w) {
  const int64_t p = b.rows, q = b.cols;
  for (int sweep = 0; sweep < 100; ++sweep) {
    bool rotated = false;
    for (int64_t i = 0; i < q; ++i) {
      for (int64_t j = i + 1; j < q; ++j) {
        double* bi = b.column(i);
        double* bj = b.column(j);
        const double alpha = Dot(bi, bi, p), beta = Dot(bj, bj, p), gamma = Dot(bi, bj, p);
        if (!(std::fabs(gamma) > 1e-15 * std::sqrt(alpha) * std::sqrt(beta))) {
          if (std::isfinite(gamma)) continue;
          return false;  // Inf - Inf: no rotation will converge
        }
        rotated = true;
        const double zeta = (beta - alpha) / (2 * gamma);
        const double t =
            std::fabs(zeta) > 1e150
                ? 1 / (2 * zeta)
                : std::copysign(1.0, zeta) / (std::fabs(zeta) + std::sqrt(zeta * zeta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int64_t r = 0; r < p; ++r) {
          const double x = bi[r], y = bj[r];
          bi[r] = c * x - s * y;
          bj[r] = s * x + c * y;
        }
        double* wi = w.column(i);
        double* wj = w.column(j);
        for (int64_t r = 0; r < q; ++r) {
          const double x = wi[r], y = wj[r];
          wi[r] = c * x - s * y;
          wj[r] = s * x + c * y;
        }
      }
    }
    if (!rotated) return true;
  }
  return false;
}

// Column `col` of `basis` (P rows): a unit vector orthogonal to columns 0..col-1, from the unit
// vector e_r with the largest residual, Gram-Schmidt twice.
void Complete(Matrix& basis, int64_t col) {
  const int64_t p = basis.rows;
  std::vector<double> best, trial(static_cast<size_t>(p));
  double best_norm = -1;
  for (int64_t r = 0; r < p; ++r) {
    std::fill(trial.begin(), trial.end(), 0.0);
    trial[static_cast<size_t>(r)] = 1;
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t j = 0; j < col; ++j) {
        const double proj = Dot(basis.column(j), trial.data(), p);
        for (int64_t i = 0; i < p; ++i) trial[static_cast<size_t>(i)] -= proj * basis(i, j);
      }
    }
    const double norm = std::sqrt(Dot(trial.data(), trial.data(), p));
    if (norm > best_norm + 1e-12) {
      best_norm = norm;
      best = trial;
    }
  }
  for (int64_t i = 0; i < p; ++i) basis(i, col) = best[static_cast<size_t>(i)] / best_norm;
}

// +1 or -1: the sign of column j's first largest-magnitude entry.
double ColumnSign(Matrix& m, int64_t j) {
  int64_t largest = 0;
  for (int64_t i = 1; i < m.rows; ++i) {
    if (std::fabs(m(i, j)) > std::fabs(m(largest, j))) largest = i;
  }
  return m.rows > 0 && m(largest, j) < 0 ? -1.0 : 1.0;
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateGesdd(const Operation& op, const Tensor& a) {
  const int64_t mode = op.GetInt("mode").value_or('A');
  const int64_t rank = a.type().rank();
  const int64_t m = a.type().dim(rank - 2);
  const int64_t n = a.type().dim(rank - 1);
  const int64_t k = std::min(m, n);
  ACCY_ASSIGN_OR_RETURN(Tensor a_out, Tensor::Allocate(a.type()));
  ACCY_ASSIGN_OR_RETURN(Tensor s_out, Tensor::Allocate(op.result(1)->type()));
  ACCY_ASSIGN_OR_RETURN(Tensor u_out, Tensor::Allocate(op.result(2)->type()));
  ACCY_ASSIGN_OR_RETURN(Tensor vt_out, Tensor::Allocate(op.result(3)->type()));
  ACCY_ASSIGN_OR_RETURN(Tensor info, Tensor::Allocate(op.result(4)->type()));
  const int64_t u_cols = u_out.type().dims().back();    // M or K
  const int64_t vt_rows = vt_out.type().dim(rank - 2);  // N or K
  for (int64_t i = 0; i < a.type().element_count(); ++i) StoreFloat(a_out, i, LoadFloat(a, i));
  for (int64_t i = 0; i < u_out.type().element_count(); ++i) StoreFloat(u_out, i, 0.0);
  for (int64_t i = 0; i < vt_out.type().element_count(); ++i) StoreFloat(vt_out, i, 0.0);
  const bool vectors = mode != 'N';
  const bool tall = m >= n;
  const int64_t p = tall ? m : n, q = tall ? n : m;  // B is P x Q, P >= Q = K
  const int64_t batches = info.type().element_count();
  for (int64_t batch = 0; batch < batches; ++batch) {
    const int64_t base = batch * m * n;
    Matrix b(p, q), w(q, q);
    bool non_finite = false;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const double x = LoadFloat(a, base + i * n + j);
        non_finite = non_finite || !std::isfinite(x);
        if (tall) {
          b(i, j) = x;
        } else {
          b(j, i) = x;
        }
      }
    }
    if (non_finite) {  // xGESDD's INFO = -4 before touching anything; JAX masks with NaN
      const double nan = std::numeric_limits<double>::quiet_NaN();
      StoreInt(info, batch, -4);
      for (int64_t i = 0; i < k; ++i) StoreFloat(s_out, batch * k + i, nan);
      for (int64_t i = 0; i < m * u_cols && vectors; ++i)
        StoreFloat(u_out, batch * m * u_cols + i, nan);
      for (int64_t i = 0; i < vt_rows * n && vectors; ++i) {
        StoreFloat(vt_out, batch * vt_rows * n + i, nan);
      }
      continue;
    }
    for (int64_t i = 0; i < q; ++i) w(i, i) = 1;
    const bool converged = OneSidedJacobi(b, w);
    StoreInt(info, batch, converged ? 0 : 1);
    std::vector<double> sigma(static_cast<size_t>(q));
    std::vector<int64_t> order(static_cast<size_t>(q));
    for (int64_t j = 0; j < q; ++j) {
      sigma[static_cast<size_t>(j)] = std::sqrt(Dot(b.column(j), b.column(j), p));
      order[static_cast<size_t>(j)] = j;
    }
    // NaN (an unconverged Inf input) sorts last, keeping the order strict.
    auto key = [&sigma](int64_t j) {
      const double value = sigma[static_cast<size_t>(j)];
      return std::isnan(value) ? -1.0 : value;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&key](int64_t x, int64_t y) { return key(x) > key(y); });
    const double largest = q > 0 ? sigma[static_cast<size_t>(order[0])] : 0.0;
    // left: B's side (P x P when full, its first Q columns from B); right: W reordered.
    const bool full = vectors && (tall ? u_cols == m : vt_rows == n);
    Matrix left(p, full ? p : q), right(q, q);
    for (int64_t j = 0; j < q; ++j) {
      const int64_t src = order[static_cast<size_t>(j)];
      const double value = sigma[static_cast<size_t>(src)];
      StoreFloat(s_out, batch * k + j, value);
      for (int64_t i = 0; i < q; ++i) right(i, j) = w(i, src);
      if (value > 1e-300 * largest && value > 0) {
        for (int64_t i = 0; i < p; ++i) left(i, j) = b(i, src) / value;
      } else {
        Complete(left, j);
      }
      const double sign = ColumnSign(tall ? left : right, j);
      for (int64_t i = 0; i < p; ++i) left(i, j) *= sign;
      for (int64_t i = 0; i < q; ++i) right(i, j) *= sign;
    }
    for (int64_t j = q; j < left.cols; ++j) {
      Complete(left, j);
      const double sign = ColumnSign(left, j);
      for (int64_t i = 0; i < p; ++i) left(i, j) *= sign;
    }
    if (!vectors) continue;
    // a = U diag(s) VT: U = left, VT = right^T when tall; U = right, VT = left^T otherwise.
    Matrix& u = tall ? left : right;
    Matrix& v = tall ? right : left;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < u_cols; ++j) StoreFloat(u_out, (batch * m + i) * u_cols + j, u(i, j));
    }
    for (int64_t i = 0; i < vt_rows; ++i) {
      for (int64_t j = 0; j < n; ++j) StoreFloat(vt_out, (batch * vt_rows + i) * n + j, v(j, i));
    }
  }
  std::vector<Tensor> results;
  results.push_back(std::move(a_out));
  results.push_back(std::move(s_out));
  results.push_back(std::move(u_out));
  results.push_back(std::move(vt_out));
  results.push_back(std::move(info));
  return results;
}

}  // namespace accy::reference
