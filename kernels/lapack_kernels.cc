// lapack work items on Debian's LAPACK (BindLapack, onednn_bindings.h): an internal host kernel
// (BoundPrimitive::host) calling the Fortran routines (xPOTRF, xGETRF, xGEQRF, xORGQR, xSYEVD for
// x = s, d; xGESDD in lapack_gesdd.cc) of whatever liblapack.so.3 the system selects (reference LAPACK or OpenBLAS), per batch.
// potrf works on the result buffer in place, with no column-major copy: accy's row-major N x N
// matrix read column-major is a's transpose, whose upper triangle holds a's lower one, so xPOTRF
// with uplo 'U' on the row-major buffer factors exactly the entries 'L' names and writes U =
// L^T column-major, which is L row-major (and the other way round for 'U'). The untouched
// triangle keeps a's values, as in JAX.
// getrf pivots rows, which the transpose would turn into columns, and geqrf / orgqr work by
// columns, so each batch of those is copied into a column-major scratch matrix owned by the
// kernel (M x N elements plus LAPACK's workspace, allocated at binding), run there and copied
// back row-major.
// Batches run one after another on the calling thread: LAPACK (OpenBLAS) may thread inside a
// call, and accy does not stack a team of its own on it. One run at a time per kernel (the
// executor's library mutex): the scratch is the kernel's.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>

#include "kernels/onednn_bindings.h"
#include "src/ir/lapack_targets.h"
#include "src/util/str_cat.h"

// LAPACK's Fortran interface (LP64: INTEGER is a 32-bit int; gfortran passes each CHARACTER
// argument's length as a trailing size_t).
extern "C" {
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info,
             size_t uplo_length);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info,
             size_t uplo_length);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau,
             float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda,
             const double* tau, double* work, const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info,
             size_t jobz_length, size_t uplo_length);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda,
             double* w, double* work, const int* lwork, int* iwork, const int* liwork, int* info,
             size_t jobz_length, size_t uplo_length);
}

namespace accy::kernels {
namespace {

class PotrfKernel {
 public:
  PotrfKernel(ElementType type, int64_t batches, int n, bool lower)
      : type_(type), batches_(batches), n_(n), lower_(lower) {}

  Status Run(const HostKernelArgs& args) const {
    const HostBuffer& a = args.operands[0];
    const HostBuffer& factor = args.results[0];
    int32_t* const info = static_cast<int32_t*>(args.results[1].data);
    if (factor.data != a.data && a.byte_size > 0) {
      std::memcpy(factor.data, a.data, static_cast<size_t>(a.byte_size));
    }
    if (n_ == 0) {
      for (int64_t batch = 0; batch < batches_; ++batch) info[batch] = 0;
      return absl::OkStatus();
    }
    // The row-major buffer is the transpose: factor the other triangle (see the header).
    const char uplo = lower_ ? 'U' : 'L';
    const int64_t matrix = static_cast<int64_t>(n_) * n_;
    for (int64_t batch = 0; batch < batches_; ++batch) {
      int status = 0;
      if (type_ == ElementType::kF32) {
        spotrf_(&uplo, &n_, static_cast<float*>(factor.data) + batch * matrix, &n_, &status, 1);
      } else {
        dpotrf_(&uplo, &n_, static_cast<double*>(factor.data) + batch * matrix, &n_, &status, 1);
      }
      if (status < 0) {  // an illegal argument: a broken invariant of the binding
        return absl::InternalError(StrCat("xPOTRF rejected argument ", -status));
      }
      info[batch] = FirstNaNPivot(factor.data, batch * matrix, status);
    }
    return absl::OkStatus();
  }

 private:
  // LAPACK 3.11's xPOTRF stops at the first pivot that is not positive *or is NaN* (INFO = its
  // 1-based order); OpenBLAS's, which Debian's alternatives may put behind liblapack.so.3, does
  // not test NaN and factors on, so a NaN pivot came back with INFO 0 (and JAX then kept the
  // NaN factor unmasked). A NaN propagates to every later pivot, so the first NaN on the
  // factor's diagonal before the library's own INFO (0: none) is the pivot LAPACK would report.
  int FirstNaNPivot(const void* data, int64_t offset, int status) const {
    const int end = status > 0 ? status - 1 : n_;
    for (int j = 0; j < end; ++j) {
      const int64_t at = offset + static_cast<int64_t>(j) * n_ + j;
      const bool nan = type_ == ElementType::kF32
                           ? std::isnan(static_cast<const float*>(data)[at])
                           : std::isnan(static_cast<const double*>(data)[at]);
      if (nan) return j + 1;
    }
    return status;
  }

  ElementType type_;
  int64_t batches_;
  int n_;
  bool lower_;
};

// getrf, geqrf, orgqr and syevd: per batch, a column-major copy of a's matrix in the kernel's scratch,
// the routine, and a row-major copy back into result 0. Pivots and tau go straight between the
// buffers and LAPACK (i32 is LP64's INTEGER; tau is the element type). geqrf and orgqr take a
// workspace of the size LAPACK's query (LWORK = -1) asks for, allocated with the copy at binding;
// syevd's eigenvalues go straight into w, its eigenvectors (columns) come back with the copy.
class ColumnMajorKernel {
 public:
  struct Geometry {
    LapackRoutine routine = LapackRoutine::kGetrf;
    ElementType type = ElementType::kF32;
    int64_t batches = 0;
    int m = 0, n = 0, k = 0;  // a is m x n; k: pivots / reflectors / eigenvalues per batch
    char jobz = 'V', uplo = 'L';  // syevd's mode and uplo
  };

  static StatusOr<std::shared_ptr<ColumnMajorKernel>> Create(const Geometry& g,
                                                             const std::string& name) {
    auto kernel = std::shared_ptr<ColumnMajorKernel>(new ColumnMajorKernel(g));
    if (g.routine != LapackRoutine::kGetrf && g.m > 0 && g.n > 0) {  // geqrf, orgqr, syevd
      kernel->lwork_ = g.type == ElementType::kF32 ? kernel->QueryWorkspace<float>()
                                                   : kernel->QueryWorkspace<double>();
    }
    // Doubles hold either element type: the matrix, then the workspace.
    const size_t count =
        static_cast<size_t>(std::max<int64_t>(1, int64_t{g.m} * g.n + kernel->lwork_));
    kernel->scratch_.reset(new (std::nothrow) double[count]);
    kernel->iwork_.reset(new (std::nothrow) int[static_cast<size_t>(kernel->liwork_)]);
    if (kernel->scratch_ == nullptr || kernel->iwork_ == nullptr) {
      return absl::ResourceExhaustedError(StrCat(name, ": cannot allocate ", count * 8,
                                                 " bytes of column-major scratch"));
    }
    return kernel;
  }

  Status Run(const HostKernelArgs& args) const {
    for (int64_t batch = 0; batch < g_.batches; ++batch) {
      const int status = g_.type == ElementType::kF32 ? RunBatch<float>(args, batch)
                                                      : RunBatch<double>(args, batch);
      if (status < 0) {
        return absl::InternalError(StrCat("LAPACK x", LapackRoutineName(g_.routine),
                                          " rejected argument ", -status));
      }
    }
    return absl::OkStatus();
  }

 private:
  explicit ColumnMajorKernel(const Geometry& g) : g_(g) {}

  // LAPACK's optimal LWORK (and syevd's LIWORK, into liwork_) for this geometry.
  template <typename T>
  int QueryWorkspace() {
    T a[1] = {0}, tau[1] = {0}, size = 0;
    int isize = 1;
    int info = 0;
    Call(a, tau, &size, -1, &info, nullptr, &isize, -1);
    liwork_ = std::max(1, isize);
    return std::max(1, static_cast<int>(size));
  }

  // The routine on the column-major `a` (lda = max(1, m)); `tau` is syevd's w.
  template <typename T>
  void Call(T* a, T* tau, T* work, int lwork, int* info, int32_t* pivots = nullptr,
            int* iwork = nullptr, int liwork = 0) const {
    const int lda = std::max(1, g_.m);
    if constexpr (std::is_same_v<T, float>) {
      switch (g_.routine) {
        case LapackRoutine::kSyevd:
          return ssyevd_(&g_.jobz, &g_.uplo, &g_.n, a, &lda, tau, work, &lwork, iwork, &liwork,
                         info, 1, 1);
        case LapackRoutine::kGetrf:
          return sgetrf_(&g_.m, &g_.n, a, &lda, pivots, info);
        case LapackRoutine::kGeqrf:
          return sgeqrf_(&g_.m, &g_.n, a, &lda, tau, work, &lwork, info);
        case LapackRoutine::kOrgqr:
          return sorgqr_(&g_.m, &g_.n, &g_.k, a, &lda, tau, work, &lwork, info);
        default:
          return;
      }
    } else {
      switch (g_.routine) {
        case LapackRoutine::kSyevd:
          return dsyevd_(&g_.jobz, &g_.uplo, &g_.n, a, &lda, tau, work, &lwork, iwork, &liwork,
                         info, 1, 1);
        case LapackRoutine::kGetrf:
          return dgetrf_(&g_.m, &g_.n, a, &lda, pivots, info);
        case LapackRoutine::kGeqrf:
          return dgeqrf_(&g_.m, &g_.n, a, &lda, tau, work, &lwork, info);
        case LapackRoutine::kOrgqr:
          return dorgqr_(&g_.m, &g_.n, &g_.k, a, &lda, tau, work, &lwork, info);
        default:
          return;
      }
    }
  }

  template <typename T>
  int RunBatch(const HostKernelArgs& args, int64_t batch) const {
    const int64_t size = int64_t{g_.m} * g_.n;
    const T* a = static_cast<const T*>(args.operands[0].data) + batch * size;
    T* out = static_cast<T*>(args.results[0].data) + batch * size;
    T* cm = reinterpret_cast<T*>(scratch_.get());
    T* work = cm + size;
    for (int64_t i = 0; i < g_.m; ++i) {
      for (int64_t j = 0; j < g_.n; ++j) cm[j * g_.m + i] = a[i * g_.n + j];
    }
    int status = 0;
    switch (g_.routine) {
      case LapackRoutine::kGetrf: {
        int32_t* pivots = static_cast<int32_t*>(args.results[1].data) + batch * g_.k;
        if (size > 0) Call<T>(cm, nullptr, nullptr, 0, &status, pivots);
        static_cast<int32_t*>(args.results[2].data)[batch] = status;
        break;
      }
      case LapackRoutine::kGeqrf: {
        T* tau = static_cast<T*>(args.results[1].data) + batch * g_.k;
        if (size > 0) Call<T>(cm, tau, work, lwork_, &status);
        break;
      }
      case LapackRoutine::kSyevd: {
        T* w = static_cast<T*>(args.results[1].data) + batch * g_.k;
        if (size > 0) Call<T>(cm, w, work, lwork_, &status, nullptr, iwork_.get(), liwork_);
        static_cast<int32_t*>(args.results[2].data)[batch] = status;
        break;
      }
      case LapackRoutine::kOrgqr: {
        // xORGQR reads tau only; LAPACK's interface is not const.
        T* tau = const_cast<T*>(static_cast<const T*>(args.operands[1].data)) + batch * g_.k;
        if (size > 0) Call<T>(cm, tau, work, lwork_, &status);
        break;
      }
      default:
        break;
    }
    for (int64_t i = 0; i < g_.m; ++i) {
      for (int64_t j = 0; j < g_.n; ++j) out[i * g_.n + j] = cm[j * g_.m + i];
    }
    return status < 0 ? status : 0;
  }

  Geometry g_;
  int lwork_ = 0;
  int liwork_ = 1;
  std::unique_ptr<double[]> scratch_;
  std::unique_ptr<int[]> iwork_;  // syevd's integer workspace
};

// getrf (a -> lu, pivots, info), geqrf (a -> a, tau) or orgqr (a, tau -> q).
StatusOr<BoundPrimitive> BindColumnMajor(const Operation& op, const std::string& name,
                                         const LapackTarget& target) {
  const TensorType& a = op.operand(0)->type();
  const int64_t rank = a.rank();
  const int64_t m = a.dim(rank - 2);
  const int64_t n = a.dim(rank - 1);
  if (m > INT_MAX || n > INT_MAX) {
    return absl::UnimplementedError(StrCat(name, ": matrices of ", m, " x ", n,
                                           " exceed LAPACK's 32-bit INTEGER"));
  }
  ColumnMajorKernel::Geometry g;
  g.routine = target.routine;
  g.type = target.element_type;
  g.batches = 1;
  for (int64_t d = 0; d + 2 < rank; ++d) g.batches *= a.dim(d);
  g.m = static_cast<int>(m);
  g.n = static_cast<int>(n);
  g.k = target.routine == LapackRoutine::kOrgqr
            ? static_cast<int>(op.operand(1)->type().dims().back())
            : static_cast<int>(std::min(m, n));
  g.jobz = static_cast<char>(op.GetInt("mode").value_or('V'));
  g.uplo = static_cast<char>(op.GetInt("uplo").value_or('L'));
  ACCY_ASSIGN_OR_RETURN(std::shared_ptr<ColumnMajorKernel> kernel,
                        ColumnMajorKernel::Create(g, name));
  BoundPrimitive bound;
  bound.name = name;
  bound.inputs.assign(op.operands().begin(), op.operands().end());
  for (const Value* result : op.results()) bound.outputs.push_back(result);
  bound.output_aliases.assign(bound.outputs.size(), -1);
  bound.implementation = StrCat("lapack:", target.element_type == ElementType::kF32 ? "s" : "d",
                                LapackRoutineName(target.routine));
  auto spec = std::make_shared<HostKernelSpec>();
  spec->target = StrCat("accy.internal.lapack_", LapackRoutineName(target.routine));
  spec->run = [kernel](const HostKernelArgs& args) { return kernel->Run(args); };
  spec->operand_effects.assign(bound.inputs.size(), OperandEffect::kRead);
  bound.host = std::move(spec);
  return bound;
}

StatusOr<BoundPrimitive> BindPotrf(const Operation& op, const std::string& name,
                                   const LapackTarget& target) {
  const TensorType& a = op.operand(0)->type();
  const int64_t rank = a.rank();
  const int64_t n = a.dim(rank - 1);
  if (n > INT_MAX) {
    return absl::UnimplementedError(StrCat(name, ": matrices of ", n, " x ", n,
                                           " exceed LAPACK's 32-bit INTEGER"));
  }
  int64_t batches = 1;
  for (int64_t d = 0; d + 2 < rank; ++d) batches *= a.dim(d);
  BoundPrimitive bound;
  bound.name = name;
  bound.inputs = {op.operand(0)};
  bound.outputs = {op.result(0), op.result(1)};
  bound.output_aliases = {-1, -1};
  bound.implementation = StrCat("lapack:", target.element_type == ElementType::kF32 ? "s" : "d",
                                "potrf");
  auto kernel = std::make_shared<const PotrfKernel>(target.element_type, batches,
                                                    static_cast<int>(n),
                                                    op.GetInt("uplo").value_or('L') == 'L');
  auto spec = std::make_shared<HostKernelSpec>();
  spec->target = "accy.internal.lapack_potrf";
  spec->run = [kernel](const HostKernelArgs& args) { return kernel->Run(args); };
  spec->operand_effects = {OperandEffect::kRead};
  bound.host = std::move(spec);
  return bound;
}

}  // namespace

StatusOr<BoundPrimitive> BindLapack(const Operation& op) {
  if (op.kind() != OpKind::kLapack || op.num_operands() < 1) {
    return absl::InvalidArgumentError(StrCat("BindLapack: ", op.name(),
                                             " is not a verified lapack op"));
  }
  const std::string target_name = op.GetString("call_target_name").value_or("");
  ACCY_ASSIGN_OR_RETURN(LapackTarget target, ParseLapackTarget(target_name));
  const std::string name = StrCat("lapack @", target_name, " %", op.result(0)->id());
  switch (target.routine) {
    case LapackRoutine::kPotrf:
      return BindPotrf(op, name, target);
    case LapackRoutine::kGetrf:
    case LapackRoutine::kGeqrf:
    case LapackRoutine::kOrgqr:
    case LapackRoutine::kSyevd:
      return BindColumnMajor(op, name, target);
    case LapackRoutine::kGesdd:
      return BindLapackGesdd(op, name, target);
    case LapackRoutine::kTrsm:
      break;
  }
  return absl::InvalidArgumentError(StrCat(name, ": ", LapackRoutineName(target.routine),
                                           " is not a lapack op's routine"));
}

}  // namespace accy::kernels
