// The LAPACK (and BLAS trsm) custom_call targets of JAX's CPU lowering (jax.numpy.linalg,
// jax.lax.linalg): which routine and element type a target name means and which backend_config
// fields it carries. The importer, the lapack op's type rule, the printer, the reference
// evaluator and the library binding all read this one table. Pure functions over constant
// tables; thread-safe.
#ifndef ACCY_SRC_IR_LAPACK_TARGETS_H_
#define ACCY_SRC_IR_LAPACK_TARGETS_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "accy/status.h"
#include "accy/types.h"

namespace accy {

// The routines accy binds. kPotrf becomes a lapack op (ops.def); kTrsm imports as
// triangular_solve (the same semantics on logical matrices; its Eigen binding already exists).
enum class LapackRoutine : uint8_t {
  kPotrf,  // Cholesky factorization (LAPACK xPOTRF)
  kTrsm,   // triangular solve with several right-hand sides (BLAS xTRSM)
  kGetrf,  // LU factorization with partial (row) pivoting (LAPACK xGETRF)
  kGeqrf,  // QR factorization as Householder reflectors (LAPACK xGEQRF)
  kOrgqr,  // Q from geqrf's reflectors (LAPACK xORGQR)
  kSyevd,  // symmetric eigendecomposition, divide and conquer (LAPACK xSYEVD)
  kGesdd,  // singular value decomposition, divide and conquer (LAPACK xGESDD)
};

// A parsed target: the routine and the real element type its s/d prefix names.
struct LapackTarget {
  LapackRoutine routine = LapackRoutine::kPotrf;
  ElementType element_type = ElementType::kF32;
};

// Whether `target` is in LAPACK's namespace as JAX names it ("lapack_" followed by anything),
// bound or not: the importer sends these through ParseLapackTarget so that an unbound one fails
// with a message naming it.
bool IsLapackTargetName(std::string_view target);

// "lapack_spotrf_ffi" -> {kPotrf, f32}, "lapack_dtrsm_ffi" -> {kTrsm, f64},
// "lapack_sgetrf_ffi" -> {kGetrf, f32}: the `_ffi` targets
// (XLA FFI, custom_call api_version 4) that jaxlib registers in jaxlib/cpu/lapack.cc.
// kUnimplemented "custom_call target @<target> is not supported: ..." for a complex (c, z)
// prefix, a routine accy does not bind (gesdd, geev, ...) or a pre-FFI
// target without the `_ffi` suffix (JAX before 2024).
StatusOr<LapackTarget> ParseLapackTarget(std::string_view target);

// "potrf", "trsm", "getrf", "geqrf", "orgqr", "syevd", "gesdd".
std::string_view LapackRoutineName(LapackRoutine routine);

// The backend_config fields (mhlo.backend_config = {...}) a routine's target takes, each a ui8
// holding a LAPACK character argument, in MLIR's (alphabetical) order: potrf {uplo}, trsm {diag,
// side, trans_x, uplo}, getrf, geqrf, orgqr {}, syevd {mode, uplo}, gesdd {mode}
// (jaxlib/cpu/lapack_kernels.h).
std::span<const std::string_view> LapackConfigFields(LapackRoutine routine);

// Whether `code` is a LAPACK character argument `field` of `routine` accepts: uplo 'L' (76) or
// 'U' (85); side 'L' or 'R' (82); trans_x 'N' (78), 'T' (84) or 'C' (67); diag 'N' or 'U';
// syevd's mode (xSYEVD's JOBZ) 'V' (86, eigenvectors too) or 'N' (eigenvalues only); gesdd's
// mode (xGESDD's JOBZ, jaxlib's svd::ComputationMode) 'A' (65, full U and VT), 'S' (83, the
// first min(M, N) columns of U and rows of VT) or 'N' (78, singular values only).
bool IsLapackConfigValue(LapackRoutine routine, std::string_view field, int64_t code);

// The characters `field` of `routine` accepts, for error messages: "'L' = 76 or 'U' = 85".
std::string_view LapackConfigValues(LapackRoutine routine, std::string_view field);

// Whether operand (`is_result` false) or result `index` of `routine` is a matrix, which JAX lays
// out column-major; the others (info, pivots, alpha) are row-major. potrf: a | factor; info is
// not. trsm: a, b | result; alpha (its third operand before 2025) is not. getrf: a | lu; pivots
// and info are not. geqrf: a | a; tau is not. orgqr: a | q; tau is not. syevd: a | v; w and info
// are not. gesdd: a | a, u, vt; s and info are not.
bool IsLapackMatrix(LapackRoutine routine, bool is_result, size_t index);

// The minor-to-major layout JAX writes for an operand or result of rank `rank`: column-major
// matrices when `matrix` ([rank-2, rank-1, rank-3, ..., 0]), else row-major ([rank-1, ..., 0]).
std::vector<int64_t> LapackLayout(int64_t rank, bool matrix);

}  // namespace accy

#endif  // ACCY_SRC_IR_LAPACK_TARGETS_H_
