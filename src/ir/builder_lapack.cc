// FunctionBuilder::Potrf, Getrf, Geqrf, Orgqr, Syevd and Gesdd (include/accy/builder.h): a lapack
// op of JAX's target for a's element type; CreateOp verifies it (type_inference_lapack.cc).
#include <algorithm>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "src/util/str_cat.h"

namespace accy {

namespace {

// "lapack_sgetrf_ffi" for an f32 (or any non-f64: the type rule names the mismatch) a.
std::string TargetFor(const TensorType& a, std::string_view routine) {
  return StrCat("lapack_", a.element_type() == ElementType::kF64 ? "d" : "s", routine, "_ffi");
}

// i32 over a's batch dims, then `extra` dims.
StatusOr<TensorType> I32OverBatch(const TensorType& a, std::vector<int64_t> extra) {
  std::vector<int64_t> dims;
  if (a.rank() >= 2) dims.assign(a.dims().begin(), a.dims().end() - 2);
  dims.insert(dims.end(), extra.begin(), extra.end());
  return TensorType::Create(ElementType::kI32, dims);
}

}  // namespace

StatusOr<std::vector<Value*>> FunctionBuilder::Potrf(Value* a, bool lower) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kLapack, {&a, 1}));
  const TensorType& type = a->type();
  ACCY_ASSIGN_OR_RETURN(TensorType info, I32OverBatch(type, {}));
  std::vector<NamedAttribute> attrs = {{"call_target_name", TargetFor(type, "potrf")},
                                       {"uplo", int64_t{lower ? 'L' : 'U'}}};
  StatusOr<Operation*> op = CreateOp(OpKind::kLapack, {a}, {type, info}, std::move(attrs));
  if (!op.ok()) return op.status();
  return (*op)->results();
}

StatusOr<std::vector<Value*>> FunctionBuilder::Getrf(Value* a) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kLapack, {&a, 1}));
  const TensorType& type = a->type();
  const int64_t rank = type.rank();
  const int64_t k = rank >= 2 ? std::min(type.dim(rank - 2), type.dim(rank - 1)) : 0;
  ACCY_ASSIGN_OR_RETURN(TensorType pivots, I32OverBatch(type, {k}));
  ACCY_ASSIGN_OR_RETURN(TensorType info, I32OverBatch(type, {}));
  std::vector<NamedAttribute> attrs = {{"call_target_name", TargetFor(type, "getrf")}};
  StatusOr<Operation*> op =
      CreateOp(OpKind::kLapack, {a}, {type, pivots, info}, std::move(attrs));
  if (!op.ok()) return op.status();
  return (*op)->results();
}

StatusOr<std::vector<Value*>> FunctionBuilder::Geqrf(Value* a) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kLapack, {&a, 1}));
  const TensorType& type = a->type();
  const int64_t rank = type.rank();
  std::vector<int64_t> tau_dims;
  if (rank >= 2) {
    tau_dims.assign(type.dims().begin(), type.dims().end() - 2);
    tau_dims.push_back(std::min(type.dim(rank - 2), type.dim(rank - 1)));
  }
  ACCY_ASSIGN_OR_RETURN(TensorType tau, TensorType::Create(type.element_type(), tau_dims));
  std::vector<NamedAttribute> attrs = {{"call_target_name", TargetFor(type, "geqrf")}};
  StatusOr<Operation*> op = CreateOp(OpKind::kLapack, {a}, {type, tau}, std::move(attrs));
  if (!op.ok()) return op.status();
  return (*op)->results();
}

StatusOr<Value*> FunctionBuilder::Orgqr(Value* a, Value* tau) {
  Value* operands[] = {a, tau};
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kLapack, operands));
  std::vector<NamedAttribute> attrs = {{"call_target_name", TargetFor(a->type(), "orgqr")}};
  StatusOr<Operation*> op = CreateOp(OpKind::kLapack, {a, tau}, {a->type()}, std::move(attrs));
  if (!op.ok()) return op.status();
  return (*op)->result(0);
}

StatusOr<std::vector<Value*>> FunctionBuilder::Syevd(Value* a, bool lower, bool compute_vectors) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kLapack, {&a, 1}));
  const TensorType& type = a->type();
  std::vector<int64_t> w_dims;
  if (type.rank() >= 2) w_dims.assign(type.dims().begin(), type.dims().end() - 1);
  ACCY_ASSIGN_OR_RETURN(TensorType w, TensorType::Create(type.element_type(), w_dims));
  ACCY_ASSIGN_OR_RETURN(TensorType info, I32OverBatch(type, {}));
  std::vector<NamedAttribute> attrs = {{"call_target_name", TargetFor(type, "syevd")},
                                       {"mode", int64_t{compute_vectors ? 'V' : 'N'}},
                                       {"uplo", int64_t{lower ? 'L' : 'U'}}};
  StatusOr<Operation*> op = CreateOp(OpKind::kLapack, {a}, {type, w, info}, std::move(attrs));
  if (!op.ok()) return op.status();
  return (*op)->results();
}

StatusOr<std::vector<Value*>> FunctionBuilder::Gesdd(Value* a, bool full_matrices,
                                                    bool compute_uv) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kLapack, {&a, 1}));
  const TensorType& type = a->type();
  const int64_t rank = type.rank();
  std::vector<int64_t> batch;
  int64_t m = 0, n = 0;
  if (rank >= 2) {
    batch.assign(type.dims().begin(), type.dims().end() - 2);
    m = type.dim(rank - 2);
    n = type.dim(rank - 1);
  }
  const int64_t k = std::min(m, n);
  auto over_batch = [&](std::vector<int64_t> extra) {
    std::vector<int64_t> dims = batch;
    dims.insert(dims.end(), extra.begin(), extra.end());
    return TensorType::Create(type.element_type(), dims);
  };
  ACCY_ASSIGN_OR_RETURN(TensorType s, over_batch({k}));
  // JAX sizes u and vt from full_matrices even with mode 'N' (_svd_cpu_gpu_lowering).
  ACCY_ASSIGN_OR_RETURN(TensorType u, over_batch({m, full_matrices ? m : k}));
  ACCY_ASSIGN_OR_RETURN(TensorType vt, over_batch({full_matrices ? n : k, n}));
  ACCY_ASSIGN_OR_RETURN(TensorType info, I32OverBatch(type, {}));
  const int64_t mode = !compute_uv ? 'N' : full_matrices ? 'A' : 'S';
  std::vector<NamedAttribute> attrs = {{"call_target_name", TargetFor(type, "gesdd")},
                                       {"mode", mode}};
  StatusOr<Operation*> op =
      CreateOp(OpKind::kLapack, {a}, {type, s, u, vt, info}, std::move(attrs));
  if (!op.ok()) return op.status();
  return (*op)->results();
}

}  // namespace accy
