// MapComputationOnTensors (map_rewrite.h).
#include "src/stablehlo/map_rewrite.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {
namespace {

bool AllRankZero(const std::vector<TensorType>& types) {
  return std::all_of(types.begin(), types.end(),
                     [](const TensorType& type) { return type.rank() == 0; });
}

Status CheckMapOperands(const OpSyntax& map, const std::vector<TensorType>& operand_types) {
  if (map.regions.size() != 1 || operand_types.empty() || map.result_types.size() != 1) {
    return ErrorAt(map.loc, "stablehlo.map takes one or more operands, one computation region "
                            "and gives one result (spec \"map\")");
  }
  const std::vector<int64_t>& dims = operand_types[0].dims();
  for (size_t i = 1; i < operand_types.size(); ++i) {
    if (operand_types[i].dims() != dims) {
      return ErrorAt(map.operands[i].loc,
                     StrCat("stablehlo.map operand ", i, " has type ",
                            operand_types[i].ToString(), ", operand 0 ",
                            operand_types[0].ToString(), "; all must have one shape (spec "
                            "\"map\" C1)"));
    }
  }
  const AttrValue* dimensions = map.attribute("dimensions");
  std::vector<int64_t> all_dims(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) all_dims[d] = static_cast<int64_t>(d);
  if (dimensions == nullptr || dimensions->kind != AttrValue::Kind::kIntArray ||
      dimensions->ints != all_dims) {
    std::string expected = "array<i64";
    for (size_t d = 0; d < all_dims.size(); ++d) expected += StrCat(d == 0 ? ": " : ", ", d);
    return ErrorAt(dimensions == nullptr ? map.loc : dimensions->loc,
                   StrCat("stablehlo.map needs dimensions = ", expected, "> (every dimension "
                          "of its operands, spec \"map\" C2)"));
  }
  const RegionSyntax& region = map.regions[0];
  if (region.arg_types.size() != operand_types.size()) {
    return ErrorAt(region.loc, StrCat("the stablehlo.map computation takes ",
                                      region.arg_types.size(), " arguments for ",
                                      operand_types.size(), " operands (spec \"map\" C3)"));
  }
  for (size_t i = 0; i < operand_types.size(); ++i) {
    const TensorType& arg = region.arg_types[i];
    if (arg.rank() != 0 || arg.element_type() != operand_types[i].element_type()) {
      return ErrorAt(region.loc, StrCat("the stablehlo.map computation's argument ", i, " has "
                                        "type ", arg.ToString(), ", expected the rank-0 tensor "
                                        "of operand ", i, "'s element type (spec \"map\" C3)"));
    }
  }
  return absl::OkStatus();
}

// `%name = broadcast_in_dim %operand, dims = [] : type`.
OpSyntax BroadcastOf(const ValueRef& operand, std::string name, const TensorType& type,
                     SourceLoc loc) {
  OpSyntax broadcast;
  broadcast.loc = loc;
  broadcast.name = "stablehlo.broadcast_in_dim";
  broadcast.result_groups = {{std::move(name), 1}};
  broadcast.operands = {operand};
  AttrValue no_dims;
  no_dims.kind = AttrValue::Kind::kIntArray;
  no_dims.loc = loc;
  broadcast.attributes.push_back({"broadcast_dimensions", std::move(no_dims)});
  broadcast.result_types = {type};
  return broadcast;
}

}  // namespace

StatusOr<RegionSyntax> MapComputationOnTensors(const OpSyntax& map,
                                               const std::vector<TensorType>& operand_types,
                                               const OuterValueType& outer_type) {
  ACCY_RETURN_IF_ERROR(CheckMapOperands(map, operand_types));
  const std::vector<int64_t>& dims = operand_types[0].dims();
  auto full = [&](const TensorType& scalar) {
    return *TensorType::Create(scalar.element_type(), dims);
  };
  const RegionSyntax& region = map.regions[0];
  RegionSyntax block;
  block.loc = region.loc;
  block.arg_names = region.arg_names;
  block.arg_types = operand_types;
  // Names the computation defines, and the broadcasts of the outer values it reads (emitted
  // first: an outer value is defined before the map).
  std::set<std::string> defined(region.arg_names.begin(), region.arg_names.end());
  std::map<std::pair<std::string, int64_t>, std::string> outer;
  std::vector<OpSyntax> outer_broadcasts;
  std::vector<OpSyntax> body;
  for (const OpSyntax& op : region.ops) {
    OpSyntax rewritten = op;
    for (ValueRef& ref : rewritten.operands) {
      if (defined.count(ref.name) != 0) continue;
      const auto key = std::make_pair(ref.name, ref.index);
      auto it = outer.find(key);
      if (it == outer.end()) {
        ACCY_ASSIGN_OR_RETURN(TensorType type, outer_type(ref));
        if (type.rank() != 0) {
          return ErrorAt(ref.loc, StrCat("the stablehlo.map computation reads %", ref.name,
                                         " of type ", type.ToString(), " from outside it; it "
                                         "maps rank-0 tensors, so only rank-0 values may be "
                                         "read from outside (spec \"map\" C3)"));
        }
        const std::string name = StrCat("\x01map_outer", outer.size());
        outer_broadcasts.push_back(BroadcastOf(ref, name, full(type), ref.loc));
        it = outer.emplace(key, name).first;
      }
      ref = ValueRef{it->second, 0, ref.loc};
    }
    for (const auto& [name, count] : op.result_groups) defined.insert(name);
    body.push_back(std::move(rewritten));
  }
  block.ops = std::move(outer_broadcasts);
  for (const OpSyntax& op : body) {
    if (!AllRankZero(op.result_types) ||
        (op.operand_types.has_value() && !AllRankZero(*op.operand_types))) {
      return ErrorAt(op.loc, StrCat("'", op.name, "' in a stablehlo.map computation works on "
                                    "tensors of rank > 0; the computation maps rank-0 tensors "
                                    "(spec \"map\" C3)"));
    }
    OpSyntax retyped = op;
    for (TensorType& type : retyped.result_types) type = full(type);
    if (retyped.operand_types.has_value()) {
      for (TensorType& type : *retyped.operand_types) type = full(type);
    }
    if (op.name == "func.return" || op.name == "stablehlo.return") {
      block.ops.push_back(std::move(retyped));
      continue;
    }
    StatusOr<OpKind> kind = ParseQualifiedOpKind(op.name);
    if (kind.ok() && *kind == OpKind::kConstant && op.result_groups.size() == 1) {
      // %c = constant dense<v> : tensor<T> becomes %<synthetic> = constant dense<v> :
      // tensor<T> and %c = broadcast_in_dim %<synthetic>, dims = [] : tensor<dims x T>.
      // '\x01' cannot occur in a name of the text.
      const std::string name = StrCat("\x01map_constant", block.ops.size());
      OpSyntax constant = op;
      constant.result_groups = {{name, 1}};
      block.ops.push_back(std::move(constant));
      block.ops.push_back(BroadcastOf(ValueRef{name, 0, op.loc}, op.result_groups[0].first,
                                      retyped.result_types[0], op.loc));
      continue;
    }
    const bool elementwise = kind.ok() && (IsElementwiseUnary(*kind) ||
                                           IsElementwiseBinary(*kind) ||
                                           IsElementwiseTernary(*kind));
    if (!elementwise || !op.regions.empty()) {
      return UnimplementedAt(op.loc, StrCat("'", op.name, "' in a stablehlo.map computation is "
                                            "not supported: accy maps computations of "
                                            "elementwise ops and constants"));
    }
    block.ops.push_back(std::move(retyped));
  }
  return block;
}

}  // namespace accy::stablehlo_internal
