// StableHLO attributes to accy IR attributes (attribute_mapping.h). Names and defaults follow
// the StableHLO specification (GatherDimensionNumbers, ScatterDimensionNumbers,
// DotDimensionNumbers, ConvDimensionNumbers: absent lists are empty, an absent
// index_vector_dim is 0; convolution's absent window attributes keep their defaults).
#include "src/stablehlo/attribute_mapping.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "src/stablehlo/dense_literal.h"
#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {
namespace {

constexpr std::string_view kIntListAttributes[] = {
    "broadcast_dimensions", "permutation",      "dimensions",       "start_indices",
    "limit_indices",        "strides",          "edge_padding_low", "edge_padding_high",
    "interior_padding",     "slice_sizes",      "window_dimensions", "window_strides",
    "base_dilations",       "window_dilations"};

struct StructField {
  std::string_view name;
  bool is_list;
};

constexpr StructField kGatherFields[] = {
    {"offset_dims", true},     {"collapsed_slice_dims", true}, {"operand_batching_dims", true},
    {"start_indices_batching_dims", true}, {"start_index_map", true},
    {"index_vector_dim", false}};
constexpr StructField kScatterFields[] = {
    {"update_window_dims", true},
    {"inserted_window_dims", true},
    {"input_batching_dims", true},
    {"scatter_indices_batching_dims", true},
    {"scatter_dims_to_operand_dims", true},
    {"index_vector_dim", false}};
constexpr StructField kConvFields[] = {
    {"input_batch_dimension", false},          {"input_feature_dimension", false},
    {"input_spatial_dimensions", true},        {"kernel_input_feature_dimension", false},
    {"kernel_output_feature_dimension", false}, {"kernel_spatial_dimensions", true},
    {"output_batch_dimension", false},         {"output_feature_dimension", false},
    {"output_spatial_dimensions", true}};
constexpr StructField kDotFields[] = {{"lhs_batching_dimensions", true},
                                      {"rhs_batching_dimensions", true},
                                      {"lhs_contracting_dimensions", true},
                                      {"rhs_contracting_dimensions", true}};

Status WrongKind(const AttrValue& value, std::string_view name, std::string_view expected) {
  return ErrorAt(value.loc, StrCat("attribute ", name, " must be ", expected, ", found ",
                                   value.KindName()));
}

StatusOr<int64_t> ToInt(const AttrValue& value, std::string_view name) {
  if (value.kind != AttrValue::Kind::kInt) return WrongKind(value, name, "an integer");
  return value.int_value;
}

StatusOr<bool> ToBool(const AttrValue& value, std::string_view name) {
  if (value.kind != AttrValue::Kind::kBool) return WrongKind(value, name, "true or false");
  return value.bool_value;
}

StatusOr<std::string> ToWord(const AttrValue& value, std::string_view name) {
  if (value.kind != AttrValue::Kind::kEnum && value.kind != AttrValue::Kind::kString) {
    return WrongKind(value, name, "an enum value");
  }
  return value.text;
}

// Appends the fields of struct attribute `value` as IR attributes, defaults for absent ones.
Status ExpandStruct(const AttrValue& value, std::string_view name,
                    std::span<const StructField> fields, std::vector<NamedAttribute>* out) {
  if (value.kind != AttrValue::Kind::kStruct) {
    return WrongKind(value, name, "a #stablehlo.<struct> attribute");
  }
  for (size_t i = 0; i < value.keys.size(); ++i) {
    const auto known = std::find_if(fields.begin(), fields.end(), [&](const StructField& field) {
      return field.name == value.keys[i];
    });
    if (known == fields.end()) {
      return UnimplementedAt(value.items[i].loc, StrCat("field ", value.keys[i], " of ", name,
                                                        " is not supported"));
    }
  }
  for (const StructField& field : fields) {
    const AttrValue* given = value.Field(field.name);
    if (field.is_list) {
      std::vector<int64_t> ints;
      if (given != nullptr) {
        ACCY_ASSIGN_OR_RETURN(ints, ToInts(*given, field.name));
      }
      out->push_back({std::string(field.name), std::move(ints)});
    } else {
      int64_t number = 0;
      if (given != nullptr) {
        ACCY_ASSIGN_OR_RETURN(number, ToInt(*given, field.name));
      }
      out->push_back({std::string(field.name), number});
    }
  }
  return absl::OkStatus();
}

// convolution's padding: dense<[[low, high], ...]> : tensor<Nx2xi64> (the generic form) or the
// flattened pairs the pretty form's parser writes (convolution_syntax.cc); flattened either way.
StatusOr<std::vector<int64_t>> ToPadding(const AttrValue& value) {
  if (value.kind == AttrValue::Kind::kIntArray) return value.ints;
  if (value.kind != AttrValue::Kind::kDense || value.dense->type.rank() != 2 ||
      value.dense->type.dim(1) != 2 || !IsInteger(value.dense->type.element_type())) {
    return WrongKind(value, "padding", "dense<[[low, high], ...]> : tensor<Nx2xi64>");
  }
  AttrValue flat = value;
  auto flat_type = TensorType::Create(value.dense->type.element_type(),
                                      {value.dense->type.element_count()});
  if (!flat_type.ok()) return flat_type.status();
  DenseElements elements = *value.dense;
  elements.type = *flat_type;
  flat.dense = std::make_shared<const DenseElements>(std::move(elements));
  return ToInts(flat, "padding");
}

// convolution's window_reversal: array<i1: true, false>, dense<[true, false]> : tensor<2xi1>,
// or the pretty form's 0/1 list; as 0/1 integers.
StatusOr<std::vector<int64_t>> ToFlags(const AttrValue& value) {
  if (value.kind == AttrValue::Kind::kDense && value.dense->type.rank() == 1 &&
      IsBool(value.dense->type.element_type())) {
    std::vector<int64_t> flags;
    for (uint8_t byte : value.dense->bytes) flags.push_back(byte != 0 ? 1 : 0);
    return flags;
  }
  if (value.kind == AttrValue::Kind::kList) {
    std::vector<int64_t> flags;
    for (const AttrValue& item : value.items) {
      ACCY_ASSIGN_OR_RETURN(bool flag, ToBool(item, "window_reversal"));
      flags.push_back(flag ? 1 : 0);
    }
    return flags;
  }
  return ToInts(value, "window_reversal");
}

// The attributes only convolution has (StableHLO names, ir.h table); false for any other.
StatusOr<bool> ConvertConvolutionAttribute(const std::string& name, const AttrValue& value,
                                           std::vector<NamedAttribute>* out) {
  if (name == "window_strides" || name == "lhs_dilation" || name == "rhs_dilation") {
    ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> ints, ToInts(value, name));
    out->push_back({name, std::move(ints)});
  } else if (name == "padding") {
    ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> ints, ToPadding(value));
    out->push_back({name, std::move(ints)});
  } else if (name == "window_reversal") {
    ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> ints, ToFlags(value));
    out->push_back({name, std::move(ints)});
  } else if (name == "feature_group_count" || name == "batch_group_count") {
    ACCY_ASSIGN_OR_RETURN(int64_t number, ToInt(value, name));
    out->push_back({name, number});
  } else if (name == "dimension_numbers") {
    ACCY_RETURN_IF_ERROR(ExpandStruct(value, name, kConvFields, out));
  } else {
    return false;
  }
  return true;
}

bool IsBatchNorm(OpKind kind) {
  return kind == OpKind::kBatchNormInference || kind == OpKind::kBatchNormTraining ||
         kind == OpKind::kBatchNormGrad;
}

bool Has(const std::vector<NamedAttribute>& attributes, std::string_view name) {
  return std::any_of(attributes.begin(), attributes.end(),
                     [&](const NamedAttribute& a) { return a.name == name; });
}

}  // namespace

StatusOr<std::vector<int64_t>> ToInts(const AttrValue& value, std::string_view name) {
  switch (value.kind) {
    case AttrValue::Kind::kIntArray:
      return value.ints;
    case AttrValue::Kind::kList: {
      std::vector<int64_t> ints;
      for (const AttrValue& item : value.items) {
        ACCY_ASSIGN_OR_RETURN(int64_t number, ToInt(item, name));
        ints.push_back(number);
      }
      return ints;
    }
    case AttrValue::Kind::kDense: {  // older text: dense<[0, 1]> : tensor<2xi64>
      const DenseElements& dense = *value.dense;
      const ElementType type = dense.type.element_type();
      if (!IsInteger(type) || dense.type.rank() > 1) {
        return WrongKind(value, name, "a list of integers");
      }
      const int64_t width = ElementByteWidth(type);
      std::vector<int64_t> ints;
      for (int64_t i = 0; i < dense.type.element_count(); ++i) {
        uint64_t bits = 0;
        std::memcpy(&bits, dense.bytes.data() + i * width, static_cast<size_t>(width));
        if (IsSigned(type) && width < 8 && (bits >> (8 * width - 1)) != 0) {
          bits |= ~uint64_t{0} << (8 * width);  // sign-extend
        }
        ints.push_back(static_cast<int64_t>(bits));
      }
      return ints;
    }
    default:
      return WrongKind(value, name, "a list of integers");
  }
}

StatusOr<std::vector<int64_t>> ToPaddingPairs(const AttrValue& value, std::string_view name) {
  if (value.kind != AttrValue::Kind::kDense || value.dense == nullptr) {
    return WrongKind(value, name, "a dense<...> : tensor<Nx2xi64>");
  }
  const DenseElements& dense = *value.dense;
  if (!IsInteger(dense.type.element_type()) || dense.type.rank() != 2 || dense.type.dim(1) != 2) {
    return ErrorAt(value.loc, StrCat("attribute ", name, " must be a tensor<Nx2x integer> of "
                                     "(low, high) pairs, found ", dense.type.ToString()));
  }
  // The [N, 2] tensor in row-major order is the flat (low, high) list accy/ir.h stores; ToInts
  // reads rank 0 and 1 only, so read it as the rank-1 tensor of the same bytes.
  AttrValue flat = value;
  DenseElements bytes = dense;
  bytes.type = *TensorType::Create(dense.type.element_type(), {dense.type.element_count()});
  flat.dense = std::make_shared<DenseElements>(std::move(bytes));
  return ToInts(flat, name);
}

StatusOr<std::optional<ElementType>> DotAlgorithmOperandType(const AttrValue& value,
                                                             const OpSyntax& op) {
  if (value.kind != AttrValue::Kind::kStruct) {
    return WrongKind(value, "algorithm", "#stablehlo.dot_algorithm<...>");
  }
  std::string lhs, rhs, accumulation;
  int64_t lhs_components = 1, rhs_components = 1, primitive_operations = 1;
  std::string written;
  for (size_t i = 0; i < value.keys.size(); ++i) {
    const std::string& key = value.keys[i];
    const AttrValue& field = value.items[i];
    if (key == "lhs_precision_type" || key == "rhs_precision_type" || key == "accumulation_type") {
      ACCY_ASSIGN_OR_RETURN(std::string type, ToWord(field, key));
      (key[0] == 'l' ? lhs : key[0] == 'r' ? rhs : accumulation) = type;
      written += StrCat(written.empty() ? "" : ", ", key, " = ", type);
    } else if (key == "lhs_component_count" || key == "rhs_component_count" ||
               key == "num_primitive_operations") {
      ACCY_ASSIGN_OR_RETURN(int64_t count, ToInt(field, key));
      (key[0] == 'l' ? lhs_components : key[0] == 'r' ? rhs_components : primitive_operations) =
          count;
      written += StrCat(written.empty() ? "" : ", ", key, " = ", count);
    } else if (key == "allow_imprecise_accumulation") {
      ACCY_RETURN_IF_ERROR(ToBool(field, key).status());
    } else {
      return UnimplementedAt(field.loc, StrCat("field ", key, " of dot_general's algorithm is "
                                               "not supported"));
    }
  }
  if (!op.operand_types.has_value() || op.operand_types->size() != 2) {
    return ErrorAt(value.loc, "dot_general with an algorithm needs its operand types");
  }
  const std::string lhs_type(ElementTypeName((*op.operand_types)[0].element_type()));
  const std::string rhs_type(ElementTypeName((*op.operand_types)[1].element_type()));
  const bool floats = (lhs_type == "f32" || lhs_type == "bf16" || lhs_type == "f16" ||
                       lhs_type == "f64") && lhs_type == rhs_type;
  const std::string accumulated = lhs_type == "f64" ? "f64" : "f32";
  const bool one_pass = lhs_components == 1 && rhs_components == 1 && primitive_operations == 1;
  if (floats && lhs == lhs_type && rhs == rhs_type && accumulation == accumulated && one_pass) {
    return std::optional<ElementType>();
  }
  // BF16_BF16_F32 on f32 operands: each operand rounded to bf16, products and sums in f32.
  if (lhs_type == "f32" && rhs_type == "f32" && lhs == "bf16" && rhs == "bf16" &&
      accumulation == "f32" && one_pass) {
    return std::optional<ElementType>(ElementType::kBF16);
  }
  return UnimplementedAt(value.loc,
                         StrCat("dot_general algorithm <", written, "> on ", lhs_type, " x ",
                                rhs_type, " operands is not supported: accy computes each operand "
                                "at its own precision with ", floats ? accumulated : "no float",
                                " accumulation, one component and one primitive operation, or "
                                "f32 operands rounded to bf16 with f32 accumulation (spec "
                                "\"dot_general\" algorithm)"));
}

StatusOr<std::vector<Value*>> RoundDotOperands(FunctionBuilder& fb, const OpSyntax& op,
                                               std::vector<Value*> operands) {
  const AttrValue* algorithm = op.attribute("algorithm");
  if (algorithm == nullptr) return operands;
  ACCY_ASSIGN_OR_RETURN(std::optional<ElementType> rounded,
                        DotAlgorithmOperandType(*algorithm, op));
  if (!rounded.has_value()) return operands;
  for (Value*& operand : operands) {
    ACCY_ASSIGN_OR_RETURN(operand, fb.Convert(operand, *rounded));
  }
  return operands;
}

StatusOr<std::vector<NamedAttribute>> ConvertAttributes(OpKind kind, const OpSyntax& op) {
  std::vector<NamedAttribute> out;
  for (const NamedAttr& attribute : op.attributes) {
    const std::string& name = attribute.name;
    if (name.find('.') != std::string::npos) continue;  // discardable: mhlo.*, jax.*, ...
    // A splat kept as one element (AttrValue::splat_type) is expanded here: only a constant's
    // value stays one element (Importer::EmitSplatConstant), and that path does not come here.
    AttrValue expanded;
    if (attribute.value.kind == AttrValue::Kind::kDense && attribute.value.splat_type) {
      expanded = attribute.value;
      ACCY_ASSIGN_OR_RETURN(DenseElements payload, ExpandedDense(attribute.value));
      expanded.dense = std::make_shared<const DenseElements>(std::move(payload));
      expanded.splat_type.reset();
    }
    const AttrValue& value = expanded.dense != nullptr ? expanded : attribute.value;
    // XLA's layout annotations (torch-xla exports): the physical layout XLA would give the
    // result; accy chooses its own layouts, and the values do not depend on it.
    if (name == "result_layout" || name == "xla_shape") continue;
    if (kind == OpKind::kConvolution) {
      ACCY_ASSIGN_OR_RETURN(bool converted, ConvertConvolutionAttribute(name, value, &out));
      if (converted) continue;
    }
    if (std::find(std::begin(kIntListAttributes), std::end(kIntListAttributes), name) !=
        std::end(kIntListAttributes)) {
      ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> ints, ToInts(value, name));
      out.push_back({name, std::move(ints)});
    } else if (name == "padding") {
      ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> pairs, ToPaddingPairs(value, name));
      out.push_back({name, std::move(pairs)});
    } else if (name == "dimension" || name == "iota_dimension" || name == "exponent_bits" ||
               name == "mantissa_bits") {
      ACCY_ASSIGN_OR_RETURN(int64_t number, ToInt(value, name));
      out.push_back({name, number});
    } else if (name == "feature_index" && IsBatchNorm(kind)) {
      ACCY_ASSIGN_OR_RETURN(int64_t number, ToInt(value, name));
      out.push_back({name, number});
    } else if (name == "epsilon" && IsBatchNorm(kind)) {
      // `1.0e-05 : f32`; an integer literal is a float constant too.
      if (value.kind == AttrValue::Kind::kFloat) {
        out.push_back({name, value.float_value});
      } else if (value.kind == AttrValue::Kind::kInt) {
        out.push_back({name, static_cast<double>(value.int_value)});
      } else {
        return WrongKind(value, name, "a float");
      }
    } else if (name == "k" && kind == OpKind::kTopK) {
      ACCY_ASSIGN_OR_RETURN(int64_t number, ToInt(value, name));
      out.push_back({name, number});
    } else if (name == "indices_are_sorted" || name == "unique_indices" ||
               (name == "is_stable" && kind == OpKind::kSort) ||
               (kind == OpKind::kTriangularSolve &&
                (name == "left_side" || name == "lower" || name == "unit_diagonal"))) {
      ACCY_ASSIGN_OR_RETURN(bool flag, ToBool(value, name));
      out.push_back({name, flag});
    } else if (name == "comparison_direction") {
      ACCY_ASSIGN_OR_RETURN(std::string word, ToWord(value, name));
      out.push_back({name, std::move(word)});
    } else if (name == "transpose_a" && kind == OpKind::kTriangularSolve) {
      // #stablehlo<transpose TRANSPOSE>: the value; the type rule checks it. Only the enum
      // form: a string ("TRANSPOSE") is not a transpose attribute.
      if (value.kind != AttrValue::Kind::kEnum) {
        return WrongKind(value, name, "#stablehlo<transpose NO_TRANSPOSE|TRANSPOSE|ADJOINT>");
      }
      ACCY_ASSIGN_OR_RETURN(std::string word, ToWord(value, name));
      out.push_back({name, std::move(word)});
    } else if (name == "rng_algorithm" && kind == OpKind::kRngBitGenerator) {
      // #stablehlo<rng_algorithm THREE_FRY> (or the pretty form's word): the value; the type
      // rule checks it. A string ("THREE_FRY") is not an rng_algorithm attribute.
      if (value.kind != AttrValue::Kind::kEnum) {
        return WrongKind(value, name, "#stablehlo<rng_algorithm DEFAULT|THREE_FRY|PHILOX>");
      }
      ACCY_ASSIGN_OR_RETURN(std::string word, ToWord(value, name));
      out.push_back({name, std::move(word)});
    } else if (name == "compare_type") {
      ACCY_ASSIGN_OR_RETURN(std::string word, ToWord(value, name));
      if (word != "NOTYPE") out.push_back({name, std::move(word)});  // NOTYPE: the default
    } else if (name == "value") {
      if (value.kind != AttrValue::Kind::kDense) return WrongKind(value, name, "dense<...>");
      out.push_back({name, *value.dense});
    } else if (name == "precision_config") {
      if (value.kind != AttrValue::Kind::kList) return WrongKind(value, name, "a list");
      std::vector<std::string> words;
      for (const AttrValue& item : value.items) {
        ACCY_ASSIGN_OR_RETURN(std::string word, ToWord(item, name));
        words.push_back(std::move(word));
      }
      out.push_back({name, std::move(words)});
    } else if (name == "dimension_numbers" && kind == OpKind::kGather) {
      ACCY_RETURN_IF_ERROR(ExpandStruct(value, name, kGatherFields, &out));
    } else if (name == "scatter_dimension_numbers") {
      ACCY_RETURN_IF_ERROR(ExpandStruct(value, name, kScatterFields, &out));
    } else if (name == "dot_dimension_numbers") {
      ACCY_RETURN_IF_ERROR(ExpandStruct(value, name, kDotFields, &out));
    } else if (name == "algorithm" && kind == OpKind::kDotGeneral) {
      // Its operand rounding, if any, is the importer's (DotAlgorithmOperandType).
      ACCY_RETURN_IF_ERROR(DotAlgorithmOperandType(value, op).status());
    } else if (GetOpInfo(kind).category == OpCategory::kCollective &&
               (name == "replica_groups" || name == "source_target_pairs")) {
      // dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>; the type rule checks shape and values.
      if (value.kind != AttrValue::Kind::kDense) return WrongKind(value, name, "dense<...>");
      out.push_back({name, *value.dense});
    } else if (GetOpInfo(kind).category == OpCategory::kCollective && name == "channel_handle") {
      // #stablehlo.channel_handle<handle = 1, type = 0>: the handle is the spec's channel_id
      // (the type, device-to-device or host transfer, has no meaning on a CPU grid).
      const AttrValue* handle =
          value.kind == AttrValue::Kind::kStruct ? value.Field("handle") : nullptr;
      if (handle == nullptr) {
        return WrongKind(value, name, "#stablehlo.channel_handle<handle = N, type = T>");
      }
      ACCY_ASSIGN_OR_RETURN(int64_t handle_id, ToInt(*handle, "channel_handle.handle"));
      out.push_back({"channel_id", handle_id});
    } else if (GetOpInfo(kind).category == OpCategory::kCollective &&
               (name == "use_global_device_ids" ||
                (name == "has_dynamic_root" && kind == OpKind::kCollectiveBroadcast))) {
      // A unit attribute (present = true) or an explicit bool.
      bool flag = true;
      if (value.kind != AttrValue::Kind::kUnit) {
        ACCY_ASSIGN_OR_RETURN(flag, ToBool(value, name));
      }
      out.push_back({name, flag});
    } else if (GetOpInfo(kind).category == OpCategory::kCollective &&
               (name == "all_gather_dim" || name == "scatter_dimension" ||
                name == "split_dimension" || name == "concat_dimension" ||
                name == "split_count")) {
      ACCY_ASSIGN_OR_RETURN(int64_t number, ToInt(value, name));
      out.push_back({name, number});
    } else if (name == "result_accuracy") {
      continue;  // an accuracy request for transcendental ops; accy always computes its best
    } else {
      return UnimplementedAt(value.loc, StrCat("attribute ", name, " of ", op.name,
                                               " is not supported"));
    }
  }
  if (kind == OpKind::kGather || kind == OpKind::kScatter) {
    if (!Has(out, "indices_are_sorted")) out.push_back({"indices_are_sorted", false});
  }
  if (kind == OpKind::kScatter && !Has(out, "unique_indices")) {
    out.push_back({"unique_indices", false});
  }
  return out;
}

// A kernel attribute `accy.<name>` as an IR attribute value: integers, floats, booleans,
// strings, array<i64: ...>, lists of integers or of strings, dense constants.
StatusOr<AttributeValue> KernelAttributeValue(const AttrValue& value, std::string_view name) {
  switch (value.kind) {
    case AttrValue::Kind::kInt:
      return AttributeValue(value.int_value);
    case AttrValue::Kind::kFloat:
      return AttributeValue(value.float_value);
    case AttrValue::Kind::kBool:
      return AttributeValue(value.bool_value);
    case AttrValue::Kind::kString:
      return AttributeValue(value.text);
    case AttrValue::Kind::kIntArray:
      return AttributeValue(value.ints);
    case AttrValue::Kind::kDense:
      if (value.dense != nullptr) return AttributeValue(*value.dense);
      break;
    case AttrValue::Kind::kList: {
      std::vector<int64_t> ints;
      std::vector<std::string> strings;
      for (const AttrValue& item : value.items) {
        if (item.kind == AttrValue::Kind::kInt && strings.empty()) {
          ints.push_back(item.int_value);
        } else if (item.kind == AttrValue::Kind::kString && ints.empty()) {
          strings.push_back(item.text);
        } else {
          return WrongKind(item, name, "an element of a list of integers or of strings");
        }
      }
      if (!strings.empty()) return AttributeValue(std::move(strings));
      return AttributeValue(std::move(ints));
    }
    default:
      break;
  }
  return WrongKind(value, name,
                   "an integer, float, bool, string, array<i64>, list or dense constant");
}

StatusOr<KernelCallSpec> ConvertKernelCallSpec(const OpSyntax& op, const std::string& target,
                                               int64_t num_results) {
  KernelCallSpec spec;
  spec.target = target;
  // custom_call's own attributes (StableHLO spec "custom_call"); kernel attributes are
  // `accy.<name>`. Anything else would be silently ignored, so it is an error.
  static constexpr std::string_view kCustomCallAttributes[] = {
      "call_target_name", "has_side_effect", "backend_config", "api_version",
      "output_operand_aliases", "operand_layouts", "result_layouts", "called_computations"};
  for (const NamedAttr& attribute : op.attributes) {
    const std::string_view name = attribute.name;
    if (name == "accy.version" || name == "accy.operand_effects") continue;
    if (name.starts_with("accy.")) {
      ACCY_ASSIGN_OR_RETURN(AttributeValue value, KernelAttributeValue(attribute.value, name));
      spec.attributes.push_back({std::string(name.substr(5)), std::move(value)});
      continue;
    }
    if (std::find(std::begin(kCustomCallAttributes), std::end(kCustomCallAttributes), name) ==
        std::end(kCustomCallAttributes)) {
      return ErrorAt(attribute.value.loc,
                     StrCat("custom_call @", target, ": attribute '", name, "' is neither a "
                            "custom_call attribute nor a kernel attribute (write those as accy.",
                            name, ")"));
    }
  }
  const AttrValue* version = op.attribute("accy.version");
  ACCY_ASSIGN_OR_RETURN(spec.version, ToInt(*version, "accy.version"));
  if (const AttrValue* effects = op.attribute("accy.operand_effects")) {
    if (effects->kind != AttrValue::Kind::kList) {
      return WrongKind(*effects, "accy.operand_effects", "a list of strings");
    }
    for (const AttrValue& item : effects->items) {
      ACCY_ASSIGN_OR_RETURN(std::string word, ToWord(item, "accy.operand_effects"));
      StatusOr<OperandEffect> effect = ParseOperandEffect(word);
      if (!effect.ok()) return WithLoc(item.loc, effect.status());
      spec.operand_effects.push_back(*effect);
    }
  }
  if (const AttrValue* aliases = op.attribute("output_operand_aliases")) {
    if (aliases->kind != AttrValue::Kind::kList) {
      return WrongKind(*aliases, "output_operand_aliases", "a list");
    }
    spec.result_aliases.assign(static_cast<size_t>(num_results), std::nullopt);
    for (const AttrValue& alias : aliases->items) {
      const AttrValue* output = alias.Field("output_tuple_indices");
      const AttrValue* operand = alias.Field("operand_index");
      if (alias.kind != AttrValue::Kind::kStruct || output == nullptr || operand == nullptr) {
        return WrongKind(alias, "output_operand_aliases", "#stablehlo.output_operand_alias<...>");
      }
      ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> tuple_index,
                            ToInts(*output, "output_tuple_indices"));
      ACCY_ASSIGN_OR_RETURN(int64_t operand_index, ToInt(*operand, "operand_index"));
      const int64_t result = tuple_index.empty() ? 0 : tuple_index[0];
      if (tuple_index.size() > 1 || result < 0 || result >= num_results) {
        return ErrorAt(alias.loc, StrCat("output_operand_alias names result ", result, " of ",
                                         num_results));
      }
      spec.result_aliases[static_cast<size_t>(result)] = operand_index;
    }
  }
  return spec;
}

StatusOr<std::optional<CheckKind>> CheckKindOf(const OpSyntax& op) {
  std::string_view name = op.name;
  if (name == "stablehlo.custom_call") {
    const AttrValue* target = op.attribute("call_target_name");
    if (target == nullptr || target->kind != AttrValue::Kind::kString) return std::nullopt;
    name = target->text;
  }
  if (!name.starts_with("check.")) return std::nullopt;
  constexpr CheckKind kKinds[] = {CheckKind::kExpectEq,          CheckKind::kExpectClose,
                                  CheckKind::kExpectAlmostEq,    CheckKind::kExpectEqConst,
                                  CheckKind::kExpectCloseConst,  CheckKind::kExpectAlmostEqConst};
  for (CheckKind kind : kKinds) {
    if (name.substr(6) == CheckKindName(kind)) return kind;
  }
  return UnimplementedAt(op.loc, StrCat("check op '", name, "' is not supported"));
}

}  // namespace accy::stablehlo_internal
