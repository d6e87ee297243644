// OperandStrides (operand_access.h).
#include "jit/operand_access.h"

#include <algorithm>

#include "jit/index_math.h"
#include "src/util/str_cat.h"

namespace accy::jit {

StatusOr<std::vector<int64_t>> OperandStrides(std::string_view emitter, const Operation& user,
                                              const Value& source, const Operation* broadcast,
                                              const std::vector<int64_t>& out_dims) {
  const std::vector<int64_t>& dims = source.type().dims();
  std::vector<int64_t> strides(out_dims.size(), 0);
  if (broadcast != nullptr) {
    const std::vector<int64_t> map = broadcast->GetInts("broadcast_dimensions");
    const std::vector<int64_t> source_strides = RowMajorStrides(dims);
    if (map.size() != dims.size() || broadcast->result(0)->type().dims() != out_dims) {
      return absl::UnimplementedError(StrCat(
          emitter, user.name(), " reads an elided broadcast_in_dim of shape ",
          ShapeText(broadcast->result(0)->type().dims()), " in an item of shape ",
          ShapeText(out_dims)));
    }
    for (size_t k = 0; k < map.size(); ++k) {
      if (dims[k] != 1) strides[static_cast<size_t>(map[k])] = source_strides[k];
    }
    return strides;
  }
  if (dims.empty()) return strides;  // a scalar (select's pred, clamp's bounds)
  if (dims != out_dims) {
    return absl::UnimplementedError(StrCat(emitter, user.name(), " reads an operand of shape ",
                                           ShapeText(dims), " in an item of shape ",
                                           ShapeText(out_dims)));
  }
  return RowMajorStrides(out_dims);
}

StatusOr<OperandAccess> ResolveOperandAccess(std::string_view emitter, const Operation& user,
                                             const Value& operand, const FusionPlan& fusion,
                                             const std::vector<int64_t>& out_dims,
                                             std::vector<const Value*>& inputs) {
  const Operation* def = operand.defining_op();
  const Operation* broadcast = nullptr;
  const Value* source = &operand;
  if (def != nullptr && def->kind() == OpKind::kBroadcastInDim && fusion.IsElided(def)) {
    broadcast = def;
    source = def->operand(0);
  }
  OperandAccess access;
  access.type = source->type().element_type();
  ACCY_ASSIGN_OR_RETURN(access.strides,
                        OperandStrides(emitter, user, *source, broadcast, out_dims));
  const Operation* source_def = source->defining_op();
  const DenseElements* dense = source_def != nullptr && source_def->kind() == OpKind::kConstant
                                   ? source_def->GetDense("value")
                                   : nullptr;
  if (dense != nullptr && source->type().element_count() == 1 &&
      static_cast<int64_t>(dense->bytes.size()) == ElementByteWidth(access.type)) {
    access.constant = dense->bytes.data();
  } else {
    auto it = std::find(inputs.begin(), inputs.end(), source);
    access.buffer = static_cast<int>(it - inputs.begin());
    if (it == inputs.end()) inputs.push_back(source);
  }
  return access;
}

}  // namespace accy::jit
