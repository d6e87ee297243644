// Type rule of the lapack op (ops.def; the routine table is src/ir/lapack_targets.h). Result
// types are given by the custom_call, so this checks them rather than inferring them, against
// the shapes jaxlib's FFI kernels take (jaxlib/cpu/lapack_kernels.cc): potrf a [batch..., N, N]
// of the target's element type -> factor (a's type) and info [batch...] i32; getrf a [batch...,
// M, N] -> lu (a's type), pivots [batch..., min(M, N)] i32 and info [batch...] i32; geqrf a
// [batch..., M, N] -> a's type and tau [batch..., min(M, N)]; orgqr a [batch..., M, N], tau
// [batch..., K] with M >= N >= K -> q (a's type); syevd a [batch..., N, N] -> v (a's type), w
// [batch..., N] (a's element type) and info [batch...] i32; gesdd a [batch..., M, N] -> a's type,
// s [batch..., K] (K = min(M, N)), u [batch..., M, M or K], vt [batch..., N or K, N] (a's element
// type; M and N with mode 'A', K with 'S', either with 'N', as JAX's svd lowering sizes them from
// full_matrices) and info [batch...] i32.
#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "src/ir/lapack_targets.h"
#include "src/ir/type_inference.h"
#include "src/util/str_cat.h"

namespace accy::ir_internal {
namespace {

constexpr std::string_view kOp = "lapack";

Status Error(std::string_view target, std::string_view message) {
  return absl::InvalidArgumentError(StrCat(kOp, " @", target, ": ", message));
}

// info's type: i32 over a's batch dims.
TensorType InfoType(const TensorType& a) {
  std::vector<int64_t> batch(a.dims().begin(), a.dims().end() - 2);
  return *TensorType::Create(ElementType::kI32, batch);
}

// A matrix operand [batch..., rows, cols] of the target's element type, square when `square`.
Status CheckMatrix(std::string_view target, std::string_view role, const TensorType& type,
                   ElementType element_type, bool square) {
  if (type.element_type() != element_type) {
    return Error(target, StrCat(role, " has type ", type.ToString(), ", expected element type ",
                                MlirElementTypeName(element_type), " (the target's prefix)"));
  }
  if (type.rank() < 2) {
    return Error(target, StrCat(role, " has type ", type.ToString(),
                                ", expected rank >= 2 (batch dims, then a matrix)"));
  }
  if (square && type.dim(type.rank() - 1) != type.dim(type.rank() - 2)) {
    return Error(target, StrCat(role, " has type ", type.ToString(),
                                ", expected square matrices"));
  }
  return absl::OkStatus();
}

// The routine's backend_config fields: each a required integer holding a character it accepts.
Status CheckConfig(std::string_view target, LapackRoutine routine, const AttributeView& attrs) {
  for (std::string_view field : LapackConfigFields(routine)) {
    const AttributeValue* value = attrs.Find(field);
    if (value == nullptr) return Error(target, StrCat("missing attribute ", field));
    if (!std::holds_alternative<int64_t>(*value)) {
      return WrongAttributeKind(kOp, field, "an integer (a character code)", *value);
    }
    const int64_t code = std::get<int64_t>(*value);
    if (!IsLapackConfigValue(routine, field, code)) {
      return Error(target, StrCat(field, " is ", code, ", not a character ", target,
                                  " accepts (", LapackConfigValues(routine, field), ")"));
    }
  }
  return absl::OkStatus();
}

Status VerifyPotrf(std::string_view target, const LapackTarget& parsed,
                   std::span<const TensorType> operands, std::span<const TensorType> results) {
  if (operands.size() != 1 || results.size() != 2) {
    return Error(target, StrCat("expected 1 operand (a) and 2 results (factor, info), got ",
                                operands.size(), " and ", results.size()));
  }
  const TensorType& a = operands[0];
  ACCY_RETURN_IF_ERROR(CheckMatrix(target, "a", a, parsed.element_type, /*square=*/true));
  if (results[0] != a) {
    return Error(target, StrCat("factor has type ", results[0].ToString(), ", expected ",
                                a.ToString(), " (a's type)"));
  }
  const TensorType info = InfoType(a);
  if (results[1] != info) {
    return Error(target, StrCat("info has type ", results[1].ToString(), ", expected ",
                                info.ToString(), " (i32 over a's batch dims)"));
  }
  return absl::OkStatus();
}

Status VerifyGetrf(std::string_view target, const LapackTarget& parsed,
                   std::span<const TensorType> operands, std::span<const TensorType> results) {
  if (operands.size() != 1 || results.size() != 3) {
    return Error(target, StrCat("expected 1 operand (a) and 3 results (lu, pivots, info), got ",
                                operands.size(), " and ", results.size()));
  }
  const TensorType& a = operands[0];
  ACCY_RETURN_IF_ERROR(CheckMatrix(target, "a", a, parsed.element_type, /*square=*/false));
  if (results[0] != a) {
    return Error(target, StrCat("lu has type ", results[0].ToString(), ", expected ",
                                a.ToString(), " (a's type)"));
  }
  std::vector<int64_t> pivot_dims(a.dims().begin(), a.dims().end() - 2);
  pivot_dims.push_back(std::min(a.dim(a.rank() - 2), a.dim(a.rank() - 1)));
  const TensorType pivots = *TensorType::Create(ElementType::kI32, pivot_dims);
  if (results[1] != pivots) {
    return Error(target, StrCat("pivots has type ", results[1].ToString(), ", expected ",
                                pivots.ToString(), " (i32 over a's batch dims and min(M, N))"));
  }
  const TensorType info = InfoType(a);
  if (results[2] != info) {
    return Error(target, StrCat("info has type ", results[2].ToString(), ", expected ",
                                info.ToString(), " (i32 over a's batch dims)"));
  }
  return absl::OkStatus();
}

// a's batch dims, then `last`, of a's element type.
TensorType VectorType(const TensorType& a, int64_t last) {
  std::vector<int64_t> dims(a.dims().begin(), a.dims().end() - 2);
  dims.push_back(last);
  return *TensorType::Create(a.element_type(), dims);
}

Status VerifyGeqrf(std::string_view target, const LapackTarget& parsed,
                   std::span<const TensorType> operands, std::span<const TensorType> results) {
  if (operands.size() != 1 || results.size() != 2) {
    return Error(target, StrCat("expected 1 operand (a) and 2 results (a, tau), got ",
                                operands.size(), " and ", results.size()));
  }
  const TensorType& a = operands[0];
  ACCY_RETURN_IF_ERROR(CheckMatrix(target, "a", a, parsed.element_type, /*square=*/false));
  if (results[0] != a) {
    return Error(target, StrCat("result 0 has type ", results[0].ToString(), ", expected ",
                                a.ToString(), " (a's type)"));
  }
  const TensorType tau =
      VectorType(a, std::min(a.dim(a.rank() - 2), a.dim(a.rank() - 1)));
  if (results[1] != tau) {
    return Error(target, StrCat("tau has type ", results[1].ToString(), ", expected ",
                                tau.ToString(), " (a's batch dims and min(M, N))"));
  }
  return absl::OkStatus();
}

Status VerifyOrgqr(std::string_view target, const LapackTarget& parsed,
                   std::span<const TensorType> operands, std::span<const TensorType> results) {
  if (operands.size() != 2 || results.size() != 1) {
    return Error(target, StrCat("expected 2 operands (a, tau) and 1 result (q), got ",
                                operands.size(), " and ", results.size()));
  }
  const TensorType& a = operands[0];
  const TensorType& tau = operands[1];
  ACCY_RETURN_IF_ERROR(CheckMatrix(target, "a", a, parsed.element_type, /*square=*/false));
  const int64_t m = a.dim(a.rank() - 2), n = a.dim(a.rank() - 1);
  const int64_t k = tau.rank() >= 1 ? tau.dim(tau.rank() - 1) : -1;
  if (tau != VectorType(a, k < 0 ? 0 : k) || k < 0) {
    return Error(target, StrCat("tau has type ", tau.ToString(), ", expected ",
                                MlirElementTypeName(a.element_type()),
                                " over a's batch dims and one more dim (K)"));
  }
  if (!(m >= n && n >= k)) {
    return Error(target, StrCat("a is ", m, " x ", n, " with K = ", k,
                                " reflectors; xORGQR needs M >= N >= K"));
  }
  if (results[0] != a) {
    return Error(target, StrCat("q has type ", results[0].ToString(), ", expected ",
                                a.ToString(), " (a's type)"));
  }
  return absl::OkStatus();
}

Status VerifySyevd(std::string_view target, const LapackTarget& parsed,
                   std::span<const TensorType> operands, std::span<const TensorType> results) {
  if (operands.size() != 1 || results.size() != 3) {
    return Error(target, StrCat("expected 1 operand (a) and 3 results (v, w, info), got ",
                                operands.size(), " and ", results.size()));
  }
  const TensorType& a = operands[0];
  ACCY_RETURN_IF_ERROR(CheckMatrix(target, "a", a, parsed.element_type, /*square=*/true));
  if (results[0] != a) {
    return Error(target, StrCat("v has type ", results[0].ToString(), ", expected ",
                                a.ToString(), " (a's type)"));
  }
  const TensorType w = VectorType(a, a.dim(a.rank() - 1));
  if (results[1] != w) {
    return Error(target, StrCat("w has type ", results[1].ToString(), ", expected ",
                                w.ToString(), " (a's batch dims and N)"));
  }
  const TensorType info = InfoType(a);
  if (results[2] != info) {
    return Error(target, StrCat("info has type ", results[2].ToString(), ", expected ",
                                info.ToString(), " (i32 over a's batch dims)"));
  }
  return absl::OkStatus();
}

// a's batch dims, then rows x cols, of a's element type.
TensorType MatrixType(const TensorType& a, int64_t rows, int64_t cols) {
  std::vector<int64_t> dims(a.dims().begin(), a.dims().end() - 2);
  dims.push_back(rows);
  dims.push_back(cols);
  return *TensorType::Create(a.element_type(), dims);
}

// gesdd's results as jaxlib's SingularValueDecomposition kernel takes them (a, s, u, vt, info;
// jaxlib/cpu/lapack_kernels.cc) and JAX's _svd_cpu_gpu_lowering sizes them (jax/_src/lax/linalg.py).
Status VerifyGesdd(std::string_view target, const LapackTarget& parsed, int64_t mode,
                   std::span<const TensorType> operands, std::span<const TensorType> results) {
  if (operands.size() != 1 || results.size() != 5) {
    return Error(target, StrCat("expected 1 operand (a) and 5 results (a, s, u, vt, info), got ",
                                operands.size(), " and ", results.size(),
                                results.size() == 7 ? " (jaxlib's August 2024 form with iwork "
                                                      "and work results is not bound: export "
                                                      "with a current JAX)"
                                                    : ""));
  }
  const TensorType& a = operands[0];
  ACCY_RETURN_IF_ERROR(CheckMatrix(target, "a", a, parsed.element_type, /*square=*/false));
  const int64_t m = a.dim(a.rank() - 2);
  const int64_t n = a.dim(a.rank() - 1);
  const int64_t k = std::min(m, n);
  if (results[0] != a) {
    return Error(target, StrCat("result 0 (a, overwritten) has type ", results[0].ToString(),
                                ", expected ", a.ToString(), " (a's type)"));
  }
  const TensorType s = VectorType(a, k);
  if (results[1] != s) {
    return Error(target, StrCat("s has type ", results[1].ToString(), ", expected ",
                                s.ToString(), " (a's batch dims and min(M, N))"));
  }
  // mode 'A': full U and VT; 'S': K columns / rows; 'N': either (JAX sizes them from
  // full_matrices even though xGESDD writes neither).
  const TensorType u_full = MatrixType(a, m, m), u_reduced = MatrixType(a, m, k);
  const TensorType vt_full = MatrixType(a, n, n), vt_reduced = MatrixType(a, k, n);
  const bool u_ok = mode == 'A'   ? results[2] == u_full
                    : mode == 'S' ? results[2] == u_reduced
                                  : results[2] == u_full || results[2] == u_reduced;
  if (!u_ok) {
    return Error(target, StrCat("u has type ", results[2].ToString(), ", expected ",
                                mode == 'S' ? u_reduced.ToString() : u_full.ToString(),
                                mode == 'N' && u_full != u_reduced
                                    ? StrCat(" or ", u_reduced.ToString())
                                    : "",
                                " (M x M with mode 'A', M x min(M, N) with 'S', either with "
                                "'N')"));
  }
  const bool vt_ok = mode == 'A'   ? results[3] == vt_full
                     : mode == 'S' ? results[3] == vt_reduced
                                   : results[3] == vt_full || results[3] == vt_reduced;
  if (!vt_ok) {
    return Error(target, StrCat("vt has type ", results[3].ToString(), ", expected ",
                                mode == 'S' ? vt_reduced.ToString() : vt_full.ToString(),
                                mode == 'N' && vt_full != vt_reduced
                                    ? StrCat(" or ", vt_reduced.ToString())
                                    : "",
                                " (N x N with mode 'A', min(M, N) x N with 'S', either with "
                                "'N')"));
  }
  const TensorType info = InfoType(a);
  if (results[4] != info) {
    return Error(target, StrCat("info has type ", results[4].ToString(), ", expected ",
                                info.ToString(), " (i32 over a's batch dims)"));
  }
  return absl::OkStatus();
}

}  // namespace

Status VerifyLapack(std::span<const TensorType> operands, std::span<const TensorType> results,
                    std::span<const NamedAttribute> attributes) {
  AttributeView attrs(attributes);
  const AttributeValue* target_value = attrs.Find("call_target_name");
  if (target_value == nullptr) {
    return absl::InvalidArgumentError("lapack: missing attribute call_target_name");
  }
  if (!std::holds_alternative<std::string>(*target_value)) {
    return WrongAttributeKind(kOp, "call_target_name", "a string", *target_value);
  }
  const std::string& target = std::get<std::string>(*target_value);
  ACCY_ASSIGN_OR_RETURN(LapackTarget parsed, ParseLapackTarget(target));
  ACCY_RETURN_IF_ERROR(CheckConfig(target, parsed.routine, attrs));
  switch (parsed.routine) {
    case LapackRoutine::kPotrf:
      return VerifyPotrf(target, parsed, operands, results);
    case LapackRoutine::kGetrf:
      return VerifyGetrf(target, parsed, operands, results);
    case LapackRoutine::kGeqrf:
      return VerifyGeqrf(target, parsed, operands, results);
    case LapackRoutine::kOrgqr:
      return VerifyOrgqr(target, parsed, operands, results);
    case LapackRoutine::kSyevd:
      return VerifySyevd(target, parsed, operands, results);
    case LapackRoutine::kGesdd:
      return VerifyGesdd(target, parsed, std::get<int64_t>(*attrs.Find("mode")), operands,
                         results);
    case LapackRoutine::kTrsm:
      return Error(target, "trsm is not a lapack op: it imports as triangular_solve");
  }
  return Error(target, "no type rule for this routine");
}

}  // namespace accy::ir_internal
