// Helpers of the importer's syntax tree (syntax.h): located errors and lookups.
#include "src/stablehlo/syntax.h"

#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {

std::string LocPrefix(SourceLoc loc) { return StrCat(loc.line, ":", loc.column, ": "); }

Status WithLoc(SourceLoc loc, const Status& status) {
  return Status(status.code(), StrCat(LocPrefix(loc), std::string(status.message())));
}

Status ErrorAt(SourceLoc loc, std::string_view message) {
  return absl::InvalidArgumentError(StrCat(LocPrefix(loc), message));
}

Status UnimplementedAt(SourceLoc loc, std::string_view message) {
  return absl::UnimplementedError(StrCat(LocPrefix(loc), message));
}

const AttrValue* AttrValue::Field(std::string_view key) const {
  for (size_t i = 0; i < keys.size() && i < items.size(); ++i) {
    if (keys[i] == key) return &items[i];
  }
  return nullptr;
}

std::string_view AttrValue::KindName() const {
  switch (kind) {
    case Kind::kUnit:
      return "unit attribute";
    case Kind::kBool:
      return "boolean";
    case Kind::kInt:
      return "integer";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "string";
    case Kind::kSymbol:
      return "symbol";
    case Kind::kEnum:
      return "enum";
    case Kind::kIntArray:
      return "array<i64>";
    case Kind::kList:
      return "list";
    case Kind::kStruct:
      return "struct attribute";
    case Kind::kDict:
      return "dictionary";
    case Kind::kDense:
      return "dense elements";
    case Kind::kOpaque:
      return "opaque attribute";
  }
  return "attribute";
}

std::string TypeTree::ToString() const {
  if (!is_tuple) return tensor.ToString();
  std::string text = "tuple<";
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) text += ", ";
    text += elements[i].ToString();
  }
  return text + ">";
}

int64_t OpSyntax::num_results() const {
  int64_t count = 0;
  for (const auto& group : result_groups) count += group.second;
  return count;
}

const AttrValue* OpSyntax::attribute(std::string_view name) const {
  for (const NamedAttr& attr : attributes) {
    if (attr.name == name) return &attr.value;
  }
  return nullptr;
}

}  // namespace accy::stablehlo_internal
