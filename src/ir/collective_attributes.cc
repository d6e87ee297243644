#include "src/ir/collective_attributes.h"

#include <cstring>
#include <variant>

#include "src/ir/type_inference.h"
#include "src/util/str_cat.h"

namespace accy::ir_internal {
namespace {

StatusOr<std::vector<std::vector<int64_t>>> Matrix(std::string_view op, std::string_view name,
                                                   const AttributeValue& value) {
  const auto* dense = std::get_if<DenseElements>(&value);
  if (dense == nullptr) return WrongAttributeKind(op, name, "a 2-D integer tensor", value);
  if (dense->type.rank() != 2) {
    return absl::InvalidArgumentError(StrCat(op, ": ", name, " has type ",
                                             dense->type.ToString(), ", expected a 2-D tensor"));
  }
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> flat,
                        DenseIntegers(*dense, StrCat(op, ": ", name)));
  const int64_t rows = dense->type.dim(0);
  const int64_t columns = dense->type.dim(1);
  std::vector<std::vector<int64_t>> out;
  if (columns == 0) return out;  // tensor<Nx0>: no groups given
  for (int64_t r = 0; r < rows; ++r) {
    out.emplace_back(flat.begin() + r * columns, flat.begin() + (r + 1) * columns);
  }
  return out;
}

StatusOr<int64_t> OptionalInt(std::string_view op, std::string_view name,
                              const AttributeView& attrs, int64_t fallback) {
  const AttributeValue* value = attrs.Find(name);
  if (value == nullptr) return fallback;
  if (!std::holds_alternative<int64_t>(*value)) {
    return WrongAttributeKind(op, name, "an integer", *value);
  }
  return std::get<int64_t>(*value);
}

StatusOr<int64_t> RequiredInt(std::string_view op, std::string_view name,
                              const AttributeView& attrs) {
  if (attrs.Find(name) == nullptr) {
    return absl::InvalidArgumentError(StrCat(op, ": missing integer attribute ", name));
  }
  return OptionalInt(op, name, attrs, 0);
}

}  // namespace

StatusOr<std::vector<int64_t>> DenseIntegers(const DenseElements& dense, std::string_view what) {
  const ElementType type = dense.type.element_type();
  if (!IsInteger(type)) {
    return absl::InvalidArgumentError(
        StrCat(what, " has element type ", ElementTypeName(type), ", expected an integer type"));
  }
  const int64_t width = ElementByteWidth(type);
  std::vector<int64_t> out;
  const int64_t count = dense.type.element_count();
  if (static_cast<int64_t>(dense.bytes.size()) < count * width) {
    return absl::InvalidArgumentError(StrCat(what, " holds fewer bytes than its type needs"));
  }
  for (int64_t i = 0; i < count; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, dense.bytes.data() + i * width, static_cast<size_t>(width));
    if (IsSigned(type) && width < 8 && (bits >> (8 * width - 1)) != 0) {
      bits |= ~uint64_t{0} << (8 * width);
    }
    out.push_back(static_cast<int64_t>(bits));
  }
  return out;
}

DenseElements DenseI64Matrix(const std::vector<std::vector<int64_t>>& rows) {
  const int64_t columns = rows.empty() ? 0 : static_cast<int64_t>(rows[0].size());
  DenseElements dense;
  dense.type = *TensorType::Create(ElementType::kI64, {static_cast<int64_t>(rows.size()), columns});
  for (const std::vector<int64_t>& row : rows) {
    for (int64_t v : row) {
      uint8_t bytes[8];
      std::memcpy(bytes, &v, 8);
      dense.bytes.insert(dense.bytes.end(), bytes, bytes + 8);
    }
  }
  return dense;
}

StatusOr<CollectiveAttributes> ReadCollectiveAttributes(
    OpKind kind, std::span<const NamedAttribute> attributes) {
  const std::string_view op = OpName(kind);
  AttributeView attrs(attributes);
  CollectiveAttributes out;
  if (const AttributeValue* groups = attrs.Find("replica_groups")) {
    ACCY_ASSIGN_OR_RETURN(out.replica_groups, Matrix(op, "replica_groups", *groups));
  }
  ACCY_ASSIGN_OR_RETURN(out.channel_id, OptionalInt(op, "channel_id", attrs, 0));
  ACCY_ASSIGN_OR_RETURN(out.use_global_device_ids,
                        attrs.OptionalBool(op, "use_global_device_ids", false));
  ACCY_ASSIGN_OR_RETURN(out.has_dynamic_root, attrs.OptionalBool(op, "has_dynamic_root", false));
  switch (kind) {
    case OpKind::kAllGather: {
      ACCY_ASSIGN_OR_RETURN(out.all_gather_dim, RequiredInt(op, "all_gather_dim", attrs));
      break;
    }
    case OpKind::kReduceScatter: {
      ACCY_ASSIGN_OR_RETURN(out.scatter_dimension, RequiredInt(op, "scatter_dimension", attrs));
      break;
    }
    case OpKind::kAllToAll: {
      ACCY_ASSIGN_OR_RETURN(out.split_dimension, RequiredInt(op, "split_dimension", attrs));
      ACCY_ASSIGN_OR_RETURN(out.concat_dimension, RequiredInt(op, "concat_dimension", attrs));
      ACCY_ASSIGN_OR_RETURN(out.split_count, RequiredInt(op, "split_count", attrs));
      break;
    }
    case OpKind::kCollectivePermute: {
      const AttributeValue* pairs = attrs.Find("source_target_pairs");
      if (pairs == nullptr) {
        return absl::InvalidArgumentError(
            StrCat(op, ": missing attribute source_target_pairs"));
      }
      ACCY_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> rows,
                            Matrix(op, "source_target_pairs", *pairs));
      for (const std::vector<int64_t>& row : rows) {
        if (row.size() != 2) {
          return absl::InvalidArgumentError(
              StrCat(op, ": source_target_pairs must be a [N, 2] tensor, found rows of ",
                     row.size()));
        }
        out.source_target_pairs.emplace_back(row[0], row[1]);
      }
      break;
    }
    default:
      break;
  }
  return out;
}

}  // namespace accy::ir_internal
