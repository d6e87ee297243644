// Checks of a singular value decomposition a = u diag(s) vt shared by the gesdd tests (reference,
// kernels, api): the defining properties of one result, and the comparison of two results up to
// the sign of each pair (u_i, v_i), which LAPACK implementations choose as they like. Tensors
// are row-major [batch..., rows, cols] of f32 or f64, read as doubles; tolerances are absolute
// after scaling by max(1, the batch's largest singular value). Header-only, test code.
#ifndef ACCY_TESTS_LAPACK_SVD_TEST_UTIL_H_
#define ACCY_TESTS_LAPACK_SVD_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "accy/tensor.h"
#include "gtest/gtest.h"

namespace accy::svd_test {

// The result types of gesdd on `a` (type of [batch..., m, n]): {a, s [batch..., K],
// u [batch..., m, m or K], vt [batch..., n or K, n], info i32 [batch...]}, K = min(m, n), the
// square forms when `full_matrices`.
inline std::vector<TensorType> GesddResultTypes(const TensorType& a, bool full_matrices) {
  const std::vector<int64_t>& dims = a.dims();
  const std::vector<int64_t> batch(dims.begin(), dims.end() - 2);
  const int64_t m = dims[dims.size() - 2], n = dims.back(), k = std::min(m, n);
  auto batched = [&](ElementType type, std::vector<int64_t> last) {
    std::vector<int64_t> out = batch;
    out.insert(out.end(), last.begin(), last.end());
    return *TensorType::Create(type, std::move(out));
  };
  const ElementType type = a.element_type();
  return {a, batched(type, {k}), batched(type, {m, full_matrices ? m : k}),
          batched(type, {full_matrices ? n : k, n}), batched(ElementType::kI32, {})};
}

// The shapes of one decomposition: a is m x n per batch, u m x u_cols, vt vt_rows x n, K =
// min(m, n) singular values.
struct SvdShape {
  int64_t batches = 1, m = 0, n = 0, u_cols = 0, vt_rows = 0;
  int64_t k() const { return std::min(m, n); }
};

inline double Scale(const Tensor& s, const SvdShape& g, int64_t b) {
  double scale = 1;
  for (int64_t i = 0; i < g.k(); ++i)
    scale = std::max(scale, std::fabs(s.GetAsDouble(b * g.k() + i)));
  return scale;
}

// s descending and >= 0; u's columns and vt's rows orthonormal (within `tol`); u[:, :K] diag(s)
// vt[:K, :] = a (within `tol` x scale).
inline void ExpectValidSvd(const Tensor& a, const Tensor& s, const Tensor& u, const Tensor& vt,
                           const SvdShape& g, double tol, const std::string& what) {
  const int64_t k = g.k();
  for (int64_t b = 0; b < g.batches; ++b) {
    const double scale = Scale(s, g, b);
    for (int64_t i = 0; i < k; ++i) {
      ASSERT_GE(s.GetAsDouble(b * k + i), 0) << what << " s " << i;
      if (i > 0) {
        ASSERT_LE(s.GetAsDouble(b * k + i), s.GetAsDouble(b * k + i - 1)) << what << " s " << i;
      }
    }
    auto U = [&](int64_t i, int64_t j) { return u.GetAsDouble((b * g.m + i) * g.u_cols + j); };
    auto VT = [&](int64_t i, int64_t j) { return vt.GetAsDouble((b * g.vt_rows + i) * g.n + j); };
    for (int64_t p = 0; p < g.u_cols; ++p) {
      for (int64_t q = p; q < g.u_cols; ++q) {
        double dot = 0;
        for (int64_t i = 0; i < g.m; ++i) dot += U(i, p) * U(i, q);
        ASSERT_NEAR(dot, p == q ? 1.0 : 0.0, tol) << what << " u^T u (" << p << ", " << q << ")";
      }
    }
    for (int64_t p = 0; p < g.vt_rows; ++p) {
      for (int64_t q = p; q < g.vt_rows; ++q) {
        double dot = 0;
        for (int64_t j = 0; j < g.n; ++j) dot += VT(p, j) * VT(q, j);
        ASSERT_NEAR(dot, p == q ? 1.0 : 0.0, tol) << what << " vt vt^T (" << p << ", " << q << ")";
      }
    }
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l) sum += U(i, l) * s.GetAsDouble(b * k + l) * VT(l, j);
        ASSERT_NEAR(sum, a.GetAsDouble((b * g.m + i) * g.n + j), tol * scale)
            << what << " u diag(s) vt (" << i << ", " << j << ") batch " << b;
      }
    }
  }
}

// `got` equals `want` up to the sign of each pair (u_i, v_i), i < K: s within s_tol x scale,
// u's column i and vt's row i, both multiplied by the sign that best aligns got's u_i with
// want's, within v_tol. Columns of u and rows of vt past K (any orthonormal completion) are not
// compared.
inline void ExpectSameSvdUpToPairSigns(const Tensor& got_s, const Tensor& got_u,
                                       const Tensor& got_vt, const Tensor& want_s,
                                       const Tensor& want_u, const Tensor& want_vt,
                                       const SvdShape& g, double s_tol, double v_tol,
                                       const std::string& what) {
  const int64_t k = g.k();
  for (int64_t b = 0; b < g.batches; ++b) {
    const double scale = Scale(want_s, g, b);
    for (int64_t i = 0; i < k; ++i) {
      ASSERT_NEAR(got_s.GetAsDouble(b * k + i), want_s.GetAsDouble(b * k + i), s_tol * scale)
          << what << " s " << i << " batch " << b;
    }
    if (g.u_cols == 0 && g.vt_rows == 0) continue;
    for (int64_t l = 0; l < k; ++l) {
      double dot = 0;
      for (int64_t i = 0; i < g.m; ++i) {
        dot += got_u.GetAsDouble((b * g.m + i) * g.u_cols + l) *
               want_u.GetAsDouble((b * g.m + i) * g.u_cols + l);
      }
      const double sign = dot < 0 ? -1.0 : 1.0;
      for (int64_t i = 0; i < g.m; ++i) {
        const int64_t at = (b * g.m + i) * g.u_cols + l;
        ASSERT_NEAR(sign * got_u.GetAsDouble(at), want_u.GetAsDouble(at), v_tol)
            << what << " u(" << i << ", " << l << ") batch " << b;
      }
      for (int64_t j = 0; j < g.n; ++j) {
        const int64_t at = (b * g.vt_rows + l) * g.n + j;
        ASSERT_NEAR(sign * got_vt.GetAsDouble(at), want_vt.GetAsDouble(at), v_tol)
            << what << " vt(" << l << ", " << j << ") batch " << b << " (flipped with u)";
      }
    }
  }
}

}  // namespace accy::svd_test

#endif  // ACCY_TESTS_LAPACK_SVD_TEST_UTIL_H_
