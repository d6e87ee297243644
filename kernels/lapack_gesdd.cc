// The lapack op's gesdd (SVD) on Debian's LAPACK xGESDD (BindLapackGesdd, onednn_bindings.h), as
// jaxlib's SingularValueDecomposition kernel calls it (jaxlib/cpu/lapack_kernels.cc): per batch,
// a column-major copy of a's matrix, JOBZ = mode ('A', 'S' or 'N'), LDU = M, LDVT = N ('A') or
// min(M, N), LAPACK's queried LWORK (LWORK = -1) and IWORK of 8 min(M, N); s goes straight into
// its result, u and vt come back row-major from column-major scratch. All scratch (the copy, u,
// vt, work, iwork) is the kernel's, allocated at binding; one run at a time per kernel (the
// executor's library mutex). Batches run one after another on the calling thread.
// Differences from jaxlib, all invisible to JAX's program (which reads only s, u, vt and info):
// result 0 is a unchanged (xGESDD destroys its copy); with mode 'N' u and vt are zeros (jaxlib
// leaves them unwritten); a batch holding a NaN or an Inf gets info = -4 and NaN s, u, vt without
// calling LAPACK (LAPACK 3.10+ returns INFO = -4 for a NaN; older ones do not check, and an Inf
// turns into NaNs in its scaling), so every liblapack.so.3 behaves alike and none is handed
// non-finite data; k = 0 gives identity for a full u / vt (JAX's _empty_svd).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <type_traits>

#include "kernels/onednn_bindings.h"
#include "src/ir/lapack_targets.h"
#include "src/util/str_cat.h"

// LAPACK's Fortran interface (LP64; gfortran passes CHARACTER lengths as trailing size_t).
extern "C" {
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork,
             int* iwork, int* info, size_t jobz_length);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork,
             int* iwork, int* info, size_t jobz_length);
}

namespace accy::kernels {
namespace {

class GesddKernel {
 public:
  struct Geometry {
    ElementType type = ElementType::kF32;
    int64_t batches = 0;
    int m = 0, n = 0, k = 0;
    char jobz = 'A';
    int u_cols = 0, vt_rows = 0;  // the result shapes' (M or K, N or K), also with 'N'
  };

  static StatusOr<std::shared_ptr<GesddKernel>> Create(const Geometry& g, const std::string& name) {
    auto kernel = std::shared_ptr<GesddKernel>(new GesddKernel(g));
    if (g.k > 0) {
      kernel->lwork_ = g.type == ElementType::kF32 ? kernel->QueryWorkspace<float>()
                                                   : kernel->QueryWorkspace<double>();
      if (kernel->lwork_ < 0) {
        return absl::InternalError(StrCat(name, ": xGESDD's workspace query failed"));
      }
    }
    // Doubles hold either element type: a's copy, u, vt, then the workspace.
    const int64_t count = std::max<int64_t>(
        1, int64_t{g.m} * g.n + kernel->UElements() + kernel->VtElements() + kernel->lwork_);
    kernel->scratch_.reset(new (std::nothrow) double[static_cast<size_t>(count)]);
    kernel->iwork_.reset(new (std::nothrow) int[static_cast<size_t>(std::max(1, 8 * g.k))]);
    if (kernel->scratch_ == nullptr || kernel->iwork_ == nullptr) {
      return absl::ResourceExhaustedError(
          StrCat(name, ": cannot allocate ", count * 8, " bytes of column-major scratch"));
    }
    return kernel;
  }

  Status Run(const HostKernelArgs& args) const {
    const HostBuffer& a = args.operands[0];
    if (args.results[0].data != a.data && a.byte_size > 0) {
      std::memcpy(args.results[0].data, a.data, static_cast<size_t>(a.byte_size));
    }
    for (int64_t batch = 0; batch < g_.batches; ++batch) {
      const int status = g_.type == ElementType::kF32 ? RunBatch<float>(args, batch)
                                                      : RunBatch<double>(args, batch);
      if (status < 0) {  // an illegal argument: a broken invariant of the binding
        return absl::InternalError(StrCat("LAPACK xGESDD rejected argument ", -status));
      }
    }
    return absl::OkStatus();
  }

 private:
  explicit GesddKernel(const Geometry& g) : g_(g) {}

  bool Vectors() const { return g_.jobz != 'N'; }
  // The column-major scratch xGESDD writes: u M x (M or K), vt (N or K) x N; none with 'N'.
  int64_t UElements() const { return Vectors() ? int64_t{g_.m} * g_.u_cols : 0; }
  int64_t VtElements() const { return Vectors() ? int64_t{g_.vt_rows} * g_.n : 0; }
  int Ldu() const { return std::max(1, g_.m); }
  int Ldvt() const { return std::max(1, g_.jobz == 'A' ? g_.n : g_.k); }

  template <typename T>
  void Call(T* a, T* s, T* u, T* vt, T* work, int lwork, int* iwork, int* info) const {
    const int lda = std::max(1, g_.m), ldu = Ldu(), ldvt = Ldvt();
    if constexpr (std::is_same_v<T, float>) {
      sgesdd_(&g_.jobz, &g_.m, &g_.n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
    } else {
      dgesdd_(&g_.jobz, &g_.m, &g_.n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
    }
  }

  // LAPACK's optimal LWORK for this geometry (rounded up: sgesdd reports it as a float), or -1.
  template <typename T>
  int QueryWorkspace() const {
    T size = 0;
    int info = 0;
    Call<T>(nullptr, nullptr, nullptr, nullptr, &size, -1, nullptr, &info);
    const double rounded = std::ceil(static_cast<double>(size) * (1 + 1e-6)) + 1;
    if (info != 0 || !(rounded < INT_MAX)) return -1;
    return std::max(1, static_cast<int>(rounded));
  }

  template <typename T>
  int RunBatch(const HostKernelArgs& args, int64_t batch) const {
    const int64_t m = g_.m, n = g_.n, k = g_.k;
    const int64_t u_size = m * g_.u_cols, vt_size = int64_t{g_.vt_rows} * n;
    const T* a = static_cast<const T*>(args.operands[0].data) + batch * m * n;
    T* s = static_cast<T*>(args.results[1].data) + batch * k;
    T* u_out = static_cast<T*>(args.results[2].data) + batch * u_size;
    T* vt_out = static_cast<T*>(args.results[3].data) + batch * vt_size;
    int32_t* info = static_cast<int32_t*>(args.results[4].data) + batch;
    T* cm = reinterpret_cast<T*>(scratch_.get());
    T* u = cm + m * n;
    T* vt = u + UElements();
    T* work = vt + VtElements();
    bool finite = true;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        cm[j * m + i] = a[i * n + j];
        finite = finite && std::isfinite(a[i * n + j]);
      }
    }
    std::fill(u_out, u_out + u_size, T{0});
    std::fill(vt_out, vt_out + vt_size, T{0});
    if (!finite) {  // xGESDD's INFO = -4 (LAPACK 3.10+), for every liblapack.so.3 alike
      const T nan = std::numeric_limits<T>::quiet_NaN();
      std::fill(s, s + k, nan);
      if (Vectors()) {
        std::fill(u_out, u_out + u_size, nan);
        std::fill(vt_out, vt_out + vt_size, nan);
      }
      *info = -4;
      return 0;
    }
    if (k == 0) {  // nothing to decompose: a full u / vt is the identity, as JAX's _empty_svd
      if (g_.jobz == 'A') {
        for (int64_t i = 0; i < m; ++i) u_out[i * m + i] = T{1};
        for (int64_t i = 0; i < n; ++i) vt_out[i * n + i] = T{1};
      }
      *info = 0;
      return 0;
    }
    int status = 0;
    Call<T>(cm, s, u, vt, work, lwork_, iwork_.get(), &status);
    *info = status;
    if (status < 0) return status;
    if (Vectors()) {
      const int64_t ldu = Ldu(), ldvt = Ldvt();
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < g_.u_cols; ++j) u_out[i * g_.u_cols + j] = u[j * ldu + i];
      }
      for (int64_t i = 0; i < g_.vt_rows; ++i) {
        for (int64_t j = 0; j < n; ++j) vt_out[i * n + j] = vt[j * ldvt + i];
      }
    }
    return 0;
  }

  Geometry g_;
  int lwork_ = 0;
  std::unique_ptr<double[]> scratch_;
  std::unique_ptr<int[]> iwork_;
};

}  // namespace

StatusOr<BoundPrimitive> BindLapackGesdd(const Operation& op, const std::string& name,
                                         const LapackTarget& target) {
  const TensorType& a = op.operand(0)->type();
  const int64_t rank = a.rank();
  const int64_t m = a.dim(rank - 2);
  const int64_t n = a.dim(rank - 1);
  // xGESDD's LWORK grows as 4 min(M, N)^2 + ...: keep every size a 32-bit INTEGER.
  if (m > INT_MAX / 8 || n > INT_MAX / 8 || m * n > INT_MAX / 8) {
    return absl::UnimplementedError(
        StrCat(name, ": matrices of ", m, " x ", n, " exceed LAPACK's 32-bit INTEGER workspace"));
  }
  GesddKernel::Geometry g;
  g.type = target.element_type;
  g.batches = 1;
  for (int64_t d = 0; d + 2 < rank; ++d) g.batches *= a.dim(d);
  g.m = static_cast<int>(m);
  g.n = static_cast<int>(n);
  g.k = static_cast<int>(std::min(m, n));
  g.jobz = static_cast<char>(op.GetInt("mode").value_or('A'));
  g.u_cols = static_cast<int>(op.result(2)->type().dims().back());
  g.vt_rows = static_cast<int>(op.result(3)->type().dim(rank - 2));
  ACCY_ASSIGN_OR_RETURN(std::shared_ptr<GesddKernel> kernel, GesddKernel::Create(g, name));
  BoundPrimitive bound;
  bound.name = name;
  bound.inputs = {op.operand(0)};
  for (const Value* result : op.results()) bound.outputs.push_back(result);
  bound.output_aliases.assign(bound.outputs.size(), -1);
  bound.implementation =
      StrCat("lapack:", target.element_type == ElementType::kF32 ? "s" : "d", "gesdd");
  auto spec = std::make_shared<HostKernelSpec>();
  spec->target = "accy.internal.lapack_gesdd";
  spec->run = [kernel](const HostKernelArgs& args) { return kernel->Run(args); };
  spec->operand_effects = {OperandEffect::kRead};
  bound.host = std::move(spec);
  return bound;
}

}  // namespace accy::kernels
