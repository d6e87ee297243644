// FunctionBuilder::Potrf (include/accy/builder.h): a lapack op of JAX's potrf target for a's
// element type; CreateOp verifies it (type_inference_lapack.cc).
#include <string>
#include <vector>

#include "accy/builder.h"
#include "src/util/str_cat.h"

namespace accy {

StatusOr<std::vector<Value*>> FunctionBuilder::Potrf(Value* a, bool lower) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kLapack, {&a, 1}));
  const TensorType& type = a->type();
  const char prefix = type.element_type() == ElementType::kF64 ? 'd' : 's';
  std::vector<int64_t> batch;
  if (type.rank() >= 2) batch.assign(type.dims().begin(), type.dims().end() - 2);
  StatusOr<TensorType> info = TensorType::Create(ElementType::kI32, batch);
  if (!info.ok()) return info.status();
  std::vector<NamedAttribute> attrs = {
      {"call_target_name", StrCat("lapack_", std::string(1, prefix), "potrf_ffi")},
      {"uplo", int64_t{lower ? 'L' : 'U'}}};
  StatusOr<Operation*> op = CreateOp(OpKind::kLapack, {a}, {type, *info}, std::move(attrs));
  if (!op.ok()) return op.status();
  return (*op)->results();
}

}  // namespace accy
