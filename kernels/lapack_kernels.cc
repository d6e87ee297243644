// lapack work items on Debian's LAPACK (BindLapack, onednn_bindings.h): an internal host kernel
// (BoundPrimitive::host) calling the Fortran routines (spotrf_, dpotrf_, sgetrf_, dgetrf_) of
// whatever liblapack.so.3 the system selects (reference LAPACK or OpenBLAS), per batch.
// potrf works on the result buffer in place, with no column-major copy: accy's row-major N x N
// matrix read column-major is a's transpose, whose upper triangle holds a's lower one, so xPOTRF
// with uplo 'U' on the row-major buffer factors exactly the entries 'L' names and writes U =
// L^T column-major, which is L row-major (and the other way round for 'U'). The untouched
// triangle keeps a's values, as in JAX.
// getrf pivots rows, which the transpose would turn into columns, so each batch is copied into a
// column-major scratch matrix owned by the kernel (M x N elements, allocated at binding),
// factored there and copied back row-major; xGETRF writes the 1-based pivots straight into the
// pivots buffer (LP64 INTEGER is i32).
// Batches run one after another on the calling thread: LAPACK (OpenBLAS) may thread inside a
// call, and accy does not stack a team of its own on it. One run at a time per kernel (the
// executor's library mutex): getrf's scratch is the kernel's.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>

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
      info[batch] = status;
    }
    return absl::OkStatus();
  }

 private:
  ElementType type_;
  int64_t batches_;
  int n_;
  bool lower_;
};

// Per batch: column-major copy, xGETRF, row-major copy back.
class GetrfKernel {
 public:
  static StatusOr<std::shared_ptr<GetrfKernel>> Create(ElementType type, int64_t batches, int m,
                                                       int n, const std::string& name) {
    auto kernel = std::shared_ptr<GetrfKernel>(new GetrfKernel(type, batches, m, n));
    const size_t count = static_cast<size_t>(std::max<int64_t>(1, int64_t{m} * n));
    kernel->scratch_.reset(new (std::nothrow) double[count]);
    if (kernel->scratch_ == nullptr) {
      return absl::ResourceExhaustedError(StrCat(name, ": cannot allocate ", count * 8,
                                                 " bytes of column-major scratch"));
    }
    return kernel;
  }

  Status Run(const HostKernelArgs& args) const {
    int32_t* const pivots = static_cast<int32_t*>(args.results[1].data);
    int32_t* const info = static_cast<int32_t*>(args.results[2].data);
    const int64_t k = std::min(m_, n_);
    for (int64_t batch = 0; batch < batches_; ++batch) {
      int status = 0;
      if (type_ == ElementType::kF32) {
        status = FactorBatch<float>(args, batch, pivots + batch * k, sgetrf_);
      } else {
        status = FactorBatch<double>(args, batch, pivots + batch * k, dgetrf_);
      }
      if (status < 0) return absl::InternalError(StrCat("xGETRF rejected argument ", -status));
      info[batch] = status;
    }
    return absl::OkStatus();
  }

 private:
  GetrfKernel(ElementType type, int64_t batches, int m, int n)
      : type_(type), batches_(batches), m_(m), n_(n) {}

  template <typename T, typename Routine>
  int FactorBatch(const HostKernelArgs& args, int64_t batch, int32_t* pivots,
                  Routine routine) const {
    const int64_t size = int64_t{m_} * n_;
    if (size == 0) return 0;
    const T* a = static_cast<const T*>(args.operands[0].data) + batch * size;
    T* lu = static_cast<T*>(args.results[0].data) + batch * size;
    T* cm = reinterpret_cast<T*>(scratch_.get());
    for (int64_t i = 0; i < m_; ++i) {
      for (int64_t j = 0; j < n_; ++j) cm[j * m_ + i] = a[i * n_ + j];
    }
    int status = 0;
    const int lda = std::max(1, m_);
    routine(&m_, &n_, cm, &lda, pivots, &status);
    for (int64_t i = 0; i < m_; ++i) {
      for (int64_t j = 0; j < n_; ++j) lu[i * n_ + j] = cm[j * m_ + i];
    }
    return status;
  }

  ElementType type_;
  int64_t batches_;
  int m_;
  int n_;
  std::unique_ptr<double[]> scratch_;  // M x N elements of the type (f32 uses half of it)
};

StatusOr<BoundPrimitive> BindGetrf(const Operation& op, const std::string& name,
                                   const LapackTarget& target) {
  const TensorType& a = op.operand(0)->type();
  const int64_t rank = a.rank();
  const int64_t m = a.dim(rank - 2);
  const int64_t n = a.dim(rank - 1);
  if (m > INT_MAX || n > INT_MAX) {
    return absl::UnimplementedError(StrCat(name, ": matrices of ", m, " x ", n,
                                           " exceed LAPACK's 32-bit INTEGER"));
  }
  int64_t batches = 1;
  for (int64_t d = 0; d + 2 < rank; ++d) batches *= a.dim(d);
  ACCY_ASSIGN_OR_RETURN(std::shared_ptr<GetrfKernel> kernel,
                        GetrfKernel::Create(target.element_type, batches, static_cast<int>(m),
                                            static_cast<int>(n), name));
  BoundPrimitive bound;
  bound.name = name;
  bound.inputs = {op.operand(0)};
  bound.outputs = {op.result(0), op.result(1), op.result(2)};
  bound.output_aliases = {-1, -1, -1};
  bound.implementation = StrCat("lapack:", target.element_type == ElementType::kF32 ? "s" : "d",
                                "getrf");
  auto spec = std::make_shared<HostKernelSpec>();
  spec->target = "accy.internal.lapack_getrf";
  spec->run = [kernel](const HostKernelArgs& args) { return kernel->Run(args); };
  spec->operand_effects = {OperandEffect::kRead};
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
      return BindGetrf(op, name, target);
    case LapackRoutine::kTrsm:
      break;
  }
  return absl::InvalidArgumentError(StrCat(name, ": ", LapackRoutineName(target.routine),
                                           " is not a lapack op's routine"));
}

}  // namespace accy::kernels
