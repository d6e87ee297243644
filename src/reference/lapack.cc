// Reference evaluation of the lapack op (ops.def; targets in src/ir/lapack_targets.h) by direct
// loops in double, independent of LAPACK, each rounded once to the result type.
// potrf: the Cholesky–Banachiewicz order (row by row, each entry a dot product of the rows
// above), per batch. The factor starts as a copy of a; the triangle `uplo` names is overwritten
// with L (a = L L^T, 'L') or U = L^T (a = U^T U, 'U', L then being the factor of a read through
// its upper triangle), as LAPACK's xPOTRF leaves the other triangle untouched. info is 0, or
// the 1-based order of the first leading minor whose pivot is not positive (or NaN), as xPOTRF's
// INFO; the factor's values past that point are a's (LAPACK leaves them unspecified).
// getrf: Doolittle elimination with partial pivoting (EvaluateGetrf). geqrf / orgqr: Householder
// reflectors with LAPACK's xLARFG convention (EvaluateGeqrf, EvaluateOrgqr). syevd: cyclic
// Jacobi (EvaluateSyevd). gesdd: one-sided Jacobi (lapack_gesdd.cc).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "src/ir/lapack_targets.h"
#include "src/reference/evaluator_internal.h"
#include "src/util/str_cat.h"

namespace accy::reference {
namespace {

StatusOr<std::vector<Tensor>> EvaluatePotrf(const Operation& op, const Tensor& a) {
  const bool lower = op.GetInt("uplo").value_or('L') == 'L';
  const int64_t rank = a.type().rank();
  const int64_t n = a.type().dim(rank - 1);
  const int64_t batches = n == 0 ? 0 : a.type().element_count() / (n * n);
  ACCY_ASSIGN_OR_RETURN(Tensor factor, Tensor::Allocate(a.type()));
  ACCY_ASSIGN_OR_RETURN(Tensor info, Tensor::Allocate(op.result(1)->type()));
  for (int64_t i = 0; i < a.type().element_count(); ++i) StoreFloat(factor, i, LoadFloat(a, i));
  for (int64_t i = 0; i < info.type().element_count(); ++i) StoreInt(info, i, 0);
  std::vector<double> l(static_cast<size_t>(n * n));
  for (int64_t batch = 0; batch < batches; ++batch) {
    const int64_t base = batch * n * n;
    // Element (i, j), i >= j, of the lower-triangle view: a[i][j] ('L') or a[j][i] ('U').
    auto read = [&](int64_t i, int64_t j) {
      return LoadFloat(a, base + (lower ? i * n + j : j * n + i));
    };
    int64_t failed = 0;  // xPOTRF's INFO
    for (int64_t i = 0; i < n && failed == 0; ++i) {
      for (int64_t j = 0; j <= i; ++j) {
        double sum = read(i, j);
        for (int64_t k = 0; k < j; ++k) {
          sum -= l[static_cast<size_t>(i * n + k)] * l[static_cast<size_t>(j * n + k)];
        }
        if (i == j) {
          if (!(sum > 0.0)) {  // not positive, or NaN
            failed = i + 1;
            break;
          }
          l[static_cast<size_t>(i * n + i)] = std::sqrt(sum);
        } else {
          l[static_cast<size_t>(i * n + j)] = sum / l[static_cast<size_t>(j * n + j)];
        }
      }
    }
    StoreInt(info, batch, failed);
    if (failed != 0) continue;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j <= i; ++j) {
        StoreFloat(factor, base + (lower ? i * n + j : j * n + i),
                   l[static_cast<size_t>(i * n + j)]);
      }
    }
  }
  std::vector<Tensor> results;
  results.push_back(std::move(factor));
  results.push_back(std::move(info));
  return results;
}

// getrf: right-looking Doolittle elimination with partial pivoting, per batch: at step k the
// pivot is the first row i >= k of largest |a[i][k]| (LAPACK's IxAMAX picks the first too), rows
// k and i swap across the whole matrix, the column below the pivot is divided by it (skipped for
// a zero pivot, which sets info to k + 1 if it is the first) and the trailing block loses the
// outer product.
StatusOr<std::vector<Tensor>> EvaluateGetrf(const Operation& op, const Tensor& a) {
  const int64_t rank = a.type().rank();
  const int64_t m = a.type().dim(rank - 2);
  const int64_t n = a.type().dim(rank - 1);
  const int64_t k_max = std::min(m, n);
  ACCY_ASSIGN_OR_RETURN(Tensor lu, Tensor::Allocate(a.type()));
  ACCY_ASSIGN_OR_RETURN(Tensor pivots, Tensor::Allocate(op.result(1)->type()));
  ACCY_ASSIGN_OR_RETURN(Tensor info, Tensor::Allocate(op.result(2)->type()));
  const int64_t batches = info.type().element_count();
  std::vector<double> w(static_cast<size_t>(m * n));
  auto at = [&w, n](int64_t i, int64_t j) -> double& { return w[static_cast<size_t>(i * n + j)]; };
  for (int64_t batch = 0; batch < batches; ++batch) {
    const int64_t base = batch * m * n;
    for (int64_t i = 0; i < m * n; ++i) w[static_cast<size_t>(i)] = LoadFloat(a, base + i);
    int64_t first_zero = 0;
    for (int64_t k = 0; k < k_max; ++k) {
      int64_t p = k;
      for (int64_t i = k + 1; i < m; ++i) {
        if (std::fabs(at(i, k)) > std::fabs(at(p, k))) p = i;
      }
      StoreInt(pivots, batch * k_max + k, p + 1);
      if (p != k) {
        for (int64_t j = 0; j < n; ++j) std::swap(at(k, j), at(p, j));
      }
      const double pivot = at(k, k);
      if (pivot == 0.0) {
        if (first_zero == 0) first_zero = k + 1;
        continue;  // the column below is zero too: nothing to eliminate
      }
      for (int64_t i = k + 1; i < m; ++i) {
        at(i, k) /= pivot;
        for (int64_t j = k + 1; j < n; ++j) at(i, j) -= at(i, k) * at(k, j);
      }
    }
    StoreInt(info, batch, first_zero);
    for (int64_t i = 0; i < m * n; ++i) StoreFloat(lu, base + i, w[static_cast<size_t>(i)]);
  }
  std::vector<Tensor> results;
  results.push_back(std::move(lu));
  results.push_back(std::move(pivots));
  results.push_back(std::move(info));
  return results;
}

// geqrf: Householder QR column by column in double, with xLARFG's reflector: for column i,
// alpha = a[i][i] and x the column below it; x = 0 gives tau 0 (H = I); otherwise beta =
// -sign(alpha) * hypot(alpha, |x|), tau = (beta - alpha) / beta, v = x / (alpha - beta) is
// stored below the diagonal and beta on it, and H = I - tau v v^T (v[i] = 1) updates the
// columns to the right.
StatusOr<std::vector<Tensor>> EvaluateGeqrf(const Operation& op, const Tensor& a) {
  const int64_t rank = a.type().rank();
  const int64_t m = a.type().dim(rank - 2);
  const int64_t n = a.type().dim(rank - 1);
  const int64_t k = std::min(m, n);
  ACCY_ASSIGN_OR_RETURN(Tensor factored, Tensor::Allocate(a.type()));
  ACCY_ASSIGN_OR_RETURN(Tensor tau, Tensor::Allocate(op.result(1)->type()));
  const int64_t batches = m * n == 0 ? tau.type().element_count() / std::max<int64_t>(1, k)
                                     : a.type().element_count() / (m * n);
  std::vector<double> w(static_cast<size_t>(m * n));
  auto at = [&w, n](int64_t i, int64_t j) -> double& { return w[static_cast<size_t>(i * n + j)]; };
  for (int64_t batch = 0; batch < batches && m * n > 0; ++batch) {
    const int64_t base = batch * m * n;
    for (int64_t i = 0; i < m * n; ++i) w[static_cast<size_t>(i)] = LoadFloat(a, base + i);
    for (int64_t i = 0; i < k; ++i) {
      double x_norm2 = 0;
      for (int64_t r = i + 1; r < m; ++r) x_norm2 += at(r, i) * at(r, i);
      double t = 0;
      if (x_norm2 != 0) {
        const double alpha = at(i, i);
        const double beta = -std::copysign(std::hypot(alpha, std::sqrt(x_norm2)), alpha);
        t = (beta - alpha) / beta;
        for (int64_t r = i + 1; r < m; ++r) at(r, i) /= alpha - beta;
        at(i, i) = beta;
        for (int64_t j = i + 1; j < n; ++j) {
          double s = at(i, j);
          for (int64_t r = i + 1; r < m; ++r) s += at(r, i) * at(r, j);
          s *= t;
          at(i, j) -= s;
          for (int64_t r = i + 1; r < m; ++r) at(r, j) -= s * at(r, i);
        }
      }
      StoreFloat(tau, batch * k + i, t);
    }
    for (int64_t i = 0; i < m * n; ++i) StoreFloat(factored, base + i, w[static_cast<size_t>(i)]);
  }
  std::vector<Tensor> results;
  results.push_back(std::move(factored));
  results.push_back(std::move(tau));
  return results;
}

// orgqr: the first n columns of H(0) ... H(k-1), built by applying H(k-1), ..., H(0) in turn to
// the first n columns of the identity, each H(i) = I - tau[i] v v^T with v read from column i
// of a below the diagonal (v[i] = 1, zero above).
StatusOr<std::vector<Tensor>> EvaluateOrgqr(const Tensor& a, const Tensor& tau) {
  const int64_t rank = a.type().rank();
  const int64_t m = a.type().dim(rank - 2);
  const int64_t n = a.type().dim(rank - 1);
  const int64_t k = tau.type().dims().back();
  ACCY_ASSIGN_OR_RETURN(Tensor q, Tensor::Allocate(a.type()));
  const int64_t batches = m * n == 0 ? 0 : a.type().element_count() / (m * n);
  std::vector<double> w(static_cast<size_t>(m * n));
  std::vector<double> v(static_cast<size_t>(m));
  for (int64_t batch = 0; batch < batches; ++batch) {
    const int64_t base = batch * m * n;
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < n; ++c) w[static_cast<size_t>(r * n + c)] = r == c ? 1.0 : 0.0;
    }
    for (int64_t i = k - 1; i >= 0; --i) {
      const double t = LoadFloat(tau, batch * k + i);
      for (int64_t r = 0; r < m; ++r) {
        v[static_cast<size_t>(r)] = r < i ? 0.0 : r == i ? 1.0 : LoadFloat(a, base + r * n + i);
      }
      for (int64_t c = 0; c < n; ++c) {
        double s = 0;
        for (int64_t r = i; r < m; ++r) s += v[static_cast<size_t>(r)] * w[static_cast<size_t>(r * n + c)];
        for (int64_t r = i; r < m; ++r) {
          w[static_cast<size_t>(r * n + c)] -= t * s * v[static_cast<size_t>(r)];
        }
      }
    }
    for (int64_t i = 0; i < m * n; ++i) StoreFloat(q, base + i, w[static_cast<size_t>(i)]);
  }
  std::vector<Tensor> results;
  results.push_back(std::move(q));
  return results;
}

// syevd: cyclic Jacobi rotations in double on the symmetric matrix the `uplo` triangle names
// (each rotation zeroes one off-diagonal pair: t = sign(theta) / (|theta| + sqrt(theta^2 + 1)),
// theta = (a_qq - a_pp) / (2 a_pq)) until the off-diagonal part is below 1e-30 of the matrix's
// norm, or 100 sweeps; then eigenvalues ascending, each eigenvector (a column of v) signed so its
// first largest-magnitude component is positive (xSYEVD's signs are its own: compare up to sign).
// With mode 'N' v is a copy of a (unspecified).
StatusOr<std::vector<Tensor>> EvaluateSyevd(const Operation& op, const Tensor& a) {
  const bool lower = op.GetInt("uplo").value_or('L') == 'L';
  const bool vectors = op.GetInt("mode").value_or('V') == 'V';
  const int64_t rank = a.type().rank();
  const int64_t n = a.type().dim(rank - 1);
  ACCY_ASSIGN_OR_RETURN(Tensor v_out, Tensor::Allocate(a.type()));
  ACCY_ASSIGN_OR_RETURN(Tensor w_out, Tensor::Allocate(op.result(1)->type()));
  ACCY_ASSIGN_OR_RETURN(Tensor info, Tensor::Allocate(op.result(2)->type()));
  const int64_t batches = info.type().element_count();
  const size_t nn = static_cast<size_t>(n * n);
  std::vector<double> s(nn), v(nn);
  auto A = [&s, n](int64_t i, int64_t j) -> double& { return s[static_cast<size_t>(i * n + j)]; };
  auto V = [&v, n](int64_t i, int64_t j) -> double& { return v[static_cast<size_t>(i * n + j)]; };
  for (int64_t batch = 0; batch < batches; ++batch) {
    const int64_t base = batch * n * n;
    double norm2 = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const bool stored = lower ? i >= j : i <= j;
        A(i, j) = LoadFloat(a, base + (stored ? i * n + j : j * n + i));
        V(i, j) = i == j ? 1.0 : 0.0;
        norm2 += A(i, j) * A(i, j);
      }
    }
    for (int sweep = 0; sweep < 100; ++sweep) {
      double off2 = 0;
      for (int64_t p = 0; p < n; ++p) {
        for (int64_t q = p + 1; q < n; ++q) off2 += 2 * A(p, q) * A(p, q);
      }
      if (off2 <= 1e-30 * norm2 || off2 == 0) break;
      for (int64_t p = 0; p < n; ++p) {
        for (int64_t q = p + 1; q < n; ++q) {
          if (A(p, q) == 0) continue;
          const double theta = (A(q, q) - A(p, p)) / (2 * A(p, q));
          const double t = std::fabs(theta) > 1e150
                               ? 1 / (2 * theta)
                               : std::copysign(1.0, theta) /
                                     (std::fabs(theta) + std::sqrt(theta * theta + 1));
          const double c = 1 / std::sqrt(t * t + 1), sn = t * c;
          for (int64_t k = 0; k < n; ++k) {
            const double kp = A(k, p), kq = A(k, q);
            A(k, p) = c * kp - sn * kq;
            A(k, q) = sn * kp + c * kq;
          }
          for (int64_t k = 0; k < n; ++k) {
            const double pk = A(p, k), qk = A(q, k);
            A(p, k) = c * pk - sn * qk;
            A(q, k) = sn * pk + c * qk;
          }
          for (int64_t k = 0; k < n; ++k) {
            const double kp = V(k, p), kq = V(k, q);
            V(k, p) = c * kp - sn * kq;
            V(k, q) = sn * kp + c * kq;
          }
        }
      }
    }
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) order[static_cast<size_t>(j)] = j;
    std::stable_sort(order.begin(), order.end(),
                     [&A](int64_t x, int64_t y) { return A(x, x) < A(y, y); });
    for (int64_t j = 0; j < n; ++j) {
      const int64_t src = order[static_cast<size_t>(j)];
      StoreFloat(w_out, batch * n + j, A(src, src));
      int64_t largest = 0;
      for (int64_t i = 1; i < n; ++i) {
        if (std::fabs(V(i, src)) > std::fabs(V(largest, src))) largest = i;
      }
      const double sign = V(largest, src) < 0 ? -1.0 : 1.0;
      for (int64_t i = 0; i < n; ++i) {
        StoreFloat(v_out, base + i * n + j, vectors ? sign * V(i, src) : LoadFloat(a, base + i * n + j));
      }
    }
    StoreInt(info, batch, 0);
  }
  std::vector<Tensor> results;
  results.push_back(std::move(v_out));
  results.push_back(std::move(w_out));
  results.push_back(std::move(info));
  return results;
}

}  // namespace

StatusOr<std::vector<Tensor>> EvaluateLapack(const Operation& op,
                                             std::span<const Tensor> operands) {
  const std::string target = op.GetString("call_target_name").value_or("");
  ACCY_ASSIGN_OR_RETURN(LapackTarget parsed, ParseLapackTarget(target));
  switch (parsed.routine) {
    case LapackRoutine::kPotrf:
      return EvaluatePotrf(op, operands[0]);
    case LapackRoutine::kGetrf:
      return EvaluateGetrf(op, operands[0]);
    case LapackRoutine::kGeqrf:
      return EvaluateGeqrf(op, operands[0]);
    case LapackRoutine::kOrgqr:
      return EvaluateOrgqr(operands[0], operands[1]);
    case LapackRoutine::kSyevd:
      return EvaluateSyevd(op, operands[0]);
    case LapackRoutine::kGesdd:
      return EvaluateGesdd(op, operands[0]);
    case LapackRoutine::kTrsm:
      break;  // imports as triangular_solve; never a lapack op (type_inference_lapack.cc)
  }
  return absl::InvalidArgumentError(StrCat("lapack @", target, ": not a lapack op's routine"));
}

}  // namespace accy::reference
