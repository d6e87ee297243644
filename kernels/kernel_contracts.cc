// Contracts of the shape-generic catalog kernels (kernels/kernel_contracts.h).
#include "kernels/kernel_contracts.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "kernels/kernel_catalog.h"
#include "src/util/str_cat.h"

namespace accy::kernels {
namespace {

Status CallError(const Operation& call, std::string_view message) {
  return absl::InvalidArgumentError(StrCat(KernelCallName(call), ": ", message));
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += StrCat(i ? ", " : "", dims[i]);
  return text + "]";
}

// "operand 1 (b)".
std::string OperandName(int64_t index, std::span<const std::string_view> names) {
  return StrCat("operand ", index, " (", names[static_cast<size_t>(index)], ")");
}

// Operand count within [min, names.size()], one result, every operand read (effect read or
// read_write), and a result alias only to operand 0 when the kernel runs in place.
Status CheckSignature(const Operation& call, std::span<const std::string_view> names,
                      size_t min_operands, bool in_place_ok) {
  const size_t count = static_cast<size_t>(call.num_operands());
  if (count < min_operands || count > names.size()) {
    std::string expected = StrCat(min_operands);
    if (names.size() != min_operands) expected = StrCat(min_operands, " or ", names.size());
    return CallError(call, StrCat("has ", count, " operands, expected ", expected));
  }
  if (call.num_results() != 1) {
    return CallError(call, StrCat("has ", call.num_results(), " results, expected 1"));
  }
  std::vector<std::string> effects = call.GetStrings("operand_effects");
  for (size_t i = 0; i < effects.size() && i < count; ++i) {
    if (effects[i] != "read" && effects[i] != "read_write") {
      return CallError(call, StrCat(OperandName(static_cast<int64_t>(i), names), " has effect ",
                                    effects[i], " but the kernel reads it (expected read or "
                                    "read_write)"));
    }
  }
  std::vector<int64_t> aliases = call.GetInts("result_aliases");
  if (!aliases.empty() && aliases[0] != -1) {
    if (!in_place_ok || aliases[0] != 0) {
      return CallError(call, StrCat("result 0 aliases operand ", aliases[0],
                                    ", but this kernel runs in place only on operand 0",
                                    in_place_ok ? "" : " (and not at all here)"));
    }
  }
  return absl::OkStatus();
}

Status CheckElementType(const Operation& call, int64_t operand,
                        std::span<const std::string_view> names,
                        std::initializer_list<ElementType> allowed) {
  const ElementType type = call.operand(operand)->type().element_type();
  if (std::find(allowed.begin(), allowed.end(), type) != allowed.end()) return absl::OkStatus();
  std::string list;
  for (ElementType t : allowed) list += StrCat(list.empty() ? "" : ", ", ElementTypeName(t));
  return CallError(call, StrCat(OperandName(operand, names), " has element type ",
                                ElementTypeName(type), ", expected one of ", list));
}

Status CheckResult(const Operation& call, ElementType type, const std::vector<int64_t>& dims) {
  const TensorType& result = call.result(0)->type();
  if (result.element_type() != type || result.dims() != dims) {
    return CallError(call, StrCat("result 0 has type ", result.ToString(), ", expected ",
                                  ElementTypeName(type), " ", DimsText(dims)));
  }
  return absl::OkStatus();
}

StatusOr<bool> BoolAttr(const Operation& call, std::string_view name, bool fallback) {
  const AttributeValue* value = call.attribute(name);
  if (value == nullptr) return fallback;
  if (const bool* b = std::get_if<bool>(value)) return *b;
  return CallError(call, StrCat("attribute ", name, " must be a bool"));
}

StatusOr<int64_t> IntAttr(const Operation& call, std::string_view name, int64_t fallback) {
  const AttributeValue* value = call.attribute(name);
  if (value == nullptr) return fallback;
  if (const int64_t* i = std::get_if<int64_t>(value)) return *i;
  return CallError(call, StrCat("attribute ", name, " must be an integer"));
}

StatusOr<double> FloatAttr(const Operation& call, std::string_view name, double fallback) {
  const AttributeValue* value = call.attribute(name);
  if (value == nullptr) return fallback;
  if (const double* d = std::get_if<double>(value)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(value)) return static_cast<double>(*i);
  return CallError(call, StrCat("attribute ", name, " must be a float"));
}

// A list of `size` integers, each >= `min_value`; `fallback` when absent.
StatusOr<std::vector<int64_t>> IntsAttr(const Operation& call, std::string_view name,
                                        size_t size, int64_t min_value,
                                        std::optional<std::vector<int64_t>> fallback) {
  const AttributeValue* value = call.attribute(name);
  if (value == nullptr) {
    if (fallback) return *fallback;
    return CallError(call, StrCat("missing attribute ", name, " (", size, " integers)"));
  }
  const auto* list = std::get_if<std::vector<int64_t>>(value);
  if (list == nullptr || list->size() != size) {
    return CallError(call, StrCat("attribute ", name, " must be a list of ", size, " integers"));
  }
  for (int64_t v : *list) {
    if (v < min_value) {
      return CallError(call, StrCat("attribute ", name, " = ", DimsText(*list),
                                    " has an entry below ", min_value));
    }
  }
  return *list;
}

StatusOr<bool> LayoutAttr(const Operation& call) {
  const AttributeValue* value = call.attribute("layout");
  if (value == nullptr) return false;
  const auto* text = std::get_if<std::string>(value);
  if (text != nullptr && *text == "NCHW") return false;
  if (text != nullptr && *text == "NHWC") return true;
  return CallError(call, "attribute layout must be \"NCHW\" or \"NHWC\"");
}

uint64_t SaturatingProduct(std::initializer_list<uint64_t> factors) {
  uint64_t product = 1;
  for (uint64_t f : factors) {
    if (__builtin_mul_overflow(product, f, &product)) return UINT64_MAX;
  }
  return product;
}

constexpr std::string_view kMatmulNames[] = {"a", "b"};
constexpr std::string_view kSoftmaxNames[] = {"x"};
constexpr std::string_view kLayerNormNames[] = {"x", "scale", "shift"};
constexpr std::string_view kConvNames[] = {"x", "w", "bias"};
constexpr std::string_view kPoolNames[] = {"x"};

// Window geometry shared by conv2d and pooling: reads x (operand 0) in the layout and the
// strides/padding/dilation attributes, and computes the output extents.
Status ParseWindowGeometry(const Operation& call, Window2dParams& p,
                           const std::vector<int64_t>& default_strides) {
  const TensorType& x = call.operand(0)->type();
  if (x.rank() != 4) {
    return CallError(call, StrCat("operand 0 (x) has rank ", x.rank(), ", expected 4"));
  }
  p.n = x.dim(0);
  p.c = p.nhwc ? x.dim(3) : x.dim(1);
  p.h = p.nhwc ? x.dim(1) : x.dim(2);
  p.w = p.nhwc ? x.dim(2) : x.dim(3);
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                        IntsAttr(call, "strides", 2, 1, default_strides));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> padding,
                        IntsAttr(call, "padding", 4, 0, std::vector<int64_t>{0, 0, 0, 0}));
  p.strides = {strides[0], strides[1]};
  p.padding_low = {padding[0], padding[2]};
  p.padding_high = {padding[1], padding[3]};
  const int64_t extents[2] = {p.h, p.w};
  int64_t out[2];
  for (int d = 0; d < 2; ++d) {
    const int64_t span = (p.window[d] - 1) * p.dilation[d] + 1;
    const int64_t padded = extents[d] + p.padding_low[d] + p.padding_high[d];
    if (padded < span) {
      return CallError(call, StrCat("window dim ", d, " spans ", span, " elements but the padded ",
                                    d == 0 ? "height" : "width", " is ", padded));
    }
    out[d] = (padded - span) / p.strides[d] + 1;
  }
  p.oh = out[0];
  p.ow = out[1];
  return absl::OkStatus();
}

std::vector<int64_t> OutputDims(const Window2dParams& p) {
  return p.nhwc ? std::vector<int64_t>{p.n, p.oh, p.ow, p.o}
                : std::vector<int64_t>{p.n, p.o, p.oh, p.ow};
}

}  // namespace

StatusOr<MatmulParams> ParseMatmul(const Operation& call) {
  ACCY_RETURN_IF_ERROR(CheckSignature(call, kMatmulNames, 2, false));
  MatmulParams p;
  ACCY_ASSIGN_OR_RETURN(p.transpose_a, BoolAttr(call, "transpose_a", false));
  ACCY_ASSIGN_OR_RETURN(p.transpose_b, BoolAttr(call, "transpose_b", false));
  const TensorType& a = call.operand(0)->type();
  const TensorType& b = call.operand(1)->type();
  constexpr auto kF32 = ElementType::kF32;
  ACCY_RETURN_IF_ERROR(
      CheckElementType(call, 0, kMatmulNames, {kF32, ElementType::kBF16, ElementType::kF16}));
  if (b.element_type() != a.element_type()) {
    return CallError(call, StrCat("operand 1 (b) has element type ",
                                  ElementTypeName(b.element_type()), ", expected ",
                                  ElementTypeName(a.element_type()), " (a's)"));
  }
  if (a.rank() < 2) return CallError(call, StrCat("operand 0 (a) has rank ", a.rank(), ", expected >= 2"));
  if (b.rank() != a.rank() && b.rank() != 2) {
    return CallError(call, StrCat("operand 1 (b) has rank ", b.rank(), ", expected ", a.rank(),
                                  " (a's) or 2"));
  }
  const int64_t ra = a.rank(), rb = b.rank();
  p.m = p.transpose_a ? a.dim(ra - 1) : a.dim(ra - 2);
  p.k = p.transpose_a ? a.dim(ra - 2) : a.dim(ra - 1);
  const int64_t kb = p.transpose_b ? b.dim(rb - 1) : b.dim(rb - 2);
  p.n = p.transpose_b ? b.dim(rb - 2) : b.dim(rb - 1);
  if (kb != p.k) {
    return CallError(call, StrCat("operand 1 (b) has K = ", kb, ", expected ", p.k, " (a's K)"));
  }
  for (int64_t d = 0; d + 2 < ra; ++d) {
    const int64_t da = a.dim(d);
    const int64_t db = rb == ra ? b.dim(d) : 1;
    if (da != db && da != 1 && db != 1) {
      return CallError(call, StrCat("operand 1 (b) has batch dim ", d, " of size ", db,
                                    ", expected ", da, " (a's) or 1"));
    }
    p.batch_dims.push_back(std::max(da, db));
  }
  std::vector<int64_t> dims = p.batch_dims;
  dims.push_back(p.m);
  dims.push_back(p.n);
  const ElementType out = call.result(0)->type().element_type();
  ACCY_RETURN_IF_ERROR(CheckResult(call, out == kF32 ? kF32 : a.element_type(), dims));
  return p;
}

StatusOr<SoftmaxParams> ParseSoftmax(const Operation& call) {
  ACCY_RETURN_IF_ERROR(CheckSignature(call, kSoftmaxNames, 1, true));
  ACCY_RETURN_IF_ERROR(CheckElementType(
      call, 0, kSoftmaxNames, {ElementType::kF32, ElementType::kBF16, ElementType::kF16}));
  const TensorType& x = call.operand(0)->type();
  if (x.rank() < 1) return CallError(call, "operand 0 (x) has rank 0, expected >= 1");
  ACCY_ASSIGN_OR_RETURN(int64_t axis, IntAttr(call, "axis", -1));
  if (axis < -x.rank() || axis >= x.rank()) {
    return CallError(call, StrCat("attribute axis = ", axis, " is outside [", -x.rank(), ", ",
                                  x.rank(), ")"));
  }
  ACCY_RETURN_IF_ERROR(CheckResult(call, x.element_type(), x.dims()));
  return SoftmaxParams{axis < 0 ? axis + x.rank() : axis};
}

StatusOr<LayerNormParams> ParseLayerNorm(const Operation& call) {
  ACCY_RETURN_IF_ERROR(CheckSignature(call, kLayerNormNames, 3, true));
  ACCY_RETURN_IF_ERROR(CheckElementType(
      call, 0, kLayerNormNames, {ElementType::kF32, ElementType::kBF16, ElementType::kF16}));
  const TensorType& x = call.operand(0)->type();
  if (x.rank() < 1) return CallError(call, "operand 0 (x) has rank 0, expected >= 1");
  const int64_t c = x.dim(x.rank() - 1);
  for (int64_t i = 1; i <= 2; ++i) {
    ACCY_RETURN_IF_ERROR(CheckElementType(call, i, kLayerNormNames, {ElementType::kF32}));
    const TensorType& t = call.operand(i)->type();
    if (t.dims() != std::vector<int64_t>{c}) {
      return CallError(call, StrCat(OperandName(i, kLayerNormNames), " has dims ",
                                    DimsText(t.dims()), ", expected [", c, "] (x's last dim)"));
    }
  }
  ACCY_ASSIGN_OR_RETURN(double epsilon, FloatAttr(call, "epsilon", 1e-5));
  if (!(epsilon >= 0)) return CallError(call, "attribute epsilon must be >= 0");
  ACCY_RETURN_IF_ERROR(CheckResult(call, x.element_type(), x.dims()));
  return LayerNormParams{static_cast<float>(epsilon)};
}

StatusOr<Window2dParams> ParseConv2d(const Operation& call) {
  ACCY_RETURN_IF_ERROR(CheckSignature(call, kConvNames, 2, false));
  Window2dParams p;
  ACCY_ASSIGN_OR_RETURN(p.nhwc, LayoutAttr(call));
  ACCY_RETURN_IF_ERROR(
      CheckElementType(call, 0, kConvNames, {ElementType::kF32, ElementType::kBF16}));
  const TensorType& w = call.operand(1)->type();
  const ElementType type = call.operand(0)->type().element_type();
  ACCY_RETURN_IF_ERROR(CheckElementType(call, 1, kConvNames, {type}));
  if (w.rank() != 4) return CallError(call, StrCat("operand 1 (w) has rank ", w.rank(), ", expected 4"));
  ACCY_ASSIGN_OR_RETURN(p.groups, IntAttr(call, "groups", 1));
  if (p.groups < 1) return CallError(call, "attribute groups must be >= 1");
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> dilation,
                        IntsAttr(call, "dilation", 2, 1, std::vector<int64_t>{1, 1}));
  p.dilation = {dilation[0], dilation[1]};
  // OIHW or HWIO.
  p.o = p.nhwc ? w.dim(3) : w.dim(0);
  const int64_t wi = p.nhwc ? w.dim(2) : w.dim(1);
  p.window = p.nhwc ? std::array<int64_t, 2>{w.dim(0), w.dim(1)}
                    : std::array<int64_t, 2>{w.dim(2), w.dim(3)};
  ACCY_RETURN_IF_ERROR(ParseWindowGeometry(call, p, {1, 1}));
  if (p.c % p.groups != 0 || p.o % p.groups != 0) {
    return CallError(call, StrCat("attribute groups = ", p.groups, " does not divide C = ", p.c,
                                  " and O = ", p.o));
  }
  if (wi != p.c / p.groups) {
    return CallError(call, StrCat("operand 1 (w) has ", wi, " input channels, expected ",
                                  p.c / p.groups, " (C / groups)"));
  }
  if (call.num_operands() == 3) {
    p.has_bias = true;
    ACCY_RETURN_IF_ERROR(CheckElementType(call, 2, kConvNames, {ElementType::kF32, type}));
    if (call.operand(2)->type().dims() != std::vector<int64_t>{p.o}) {
      return CallError(call, StrCat("operand 2 (bias) has dims ",
                                    DimsText(call.operand(2)->type().dims()), ", expected [",
                                    p.o, "] (output channels)"));
    }
  }
  ACCY_RETURN_IF_ERROR(CheckResult(call, type, OutputDims(p)));
  return p;
}

StatusOr<Window2dParams> ParsePool2d(const Operation& call, bool is_max) {
  ACCY_RETURN_IF_ERROR(CheckSignature(call, kPoolNames, 1, false));
  Window2dParams p;
  ACCY_ASSIGN_OR_RETURN(p.nhwc, LayoutAttr(call));
  ACCY_RETURN_IF_ERROR(
      CheckElementType(call, 0, kPoolNames, {ElementType::kF32, ElementType::kBF16}));
  ACCY_ASSIGN_OR_RETURN(std::vector<int64_t> window, IntsAttr(call, "window", 2, 1, std::nullopt));
  p.window = {window[0], window[1]};
  if (!is_max) {
    ACCY_ASSIGN_OR_RETURN(p.count_include_pad, BoolAttr(call, "count_include_pad", false));
  } else if (call.attribute("count_include_pad") != nullptr) {
    return CallError(call, "attribute count_include_pad applies to avg_pool2d only");
  }
  ACCY_RETURN_IF_ERROR(ParseWindowGeometry(call, p, window));
  for (int d = 0; d < 2; ++d) {
    // oneDNN (and PyTorch) require each window to start inside the input or its low padding.
    if (p.padding_low[d] >= p.window[d] || p.padding_high[d] >= p.window[d]) {
      return CallError(call, StrCat("attribute padding is ", p.padding_low[d], "/",
                                    p.padding_high[d], " on dim ", d,
                                    ", expected less than the window (", p.window[d], ")"));
    }
  }
  p.o = p.c;
  ACCY_RETURN_IF_ERROR(CheckResult(call, call.operand(0)->type().element_type(), OutputDims(p)));
  return p;
}

Status ValidateMatmul(const Operation& call) { return ParseMatmul(call).status(); }
Status ValidateSoftmax(const Operation& call) { return ParseSoftmax(call).status(); }
Status ValidateLayerNorm(const Operation& call) { return ParseLayerNorm(call).status(); }
Status ValidateConv2d(const Operation& call) { return ParseConv2d(call).status(); }
Status ValidateMaxPool2d(const Operation& call) { return ParsePool2d(call, true).status(); }
Status ValidateAvgPool2d(const Operation& call) { return ParsePool2d(call, false).status(); }

uint64_t EstimateMatmul(const Operation& call) {
  auto p = ParseMatmul(call);
  if (!p.ok()) return 0;
  uint64_t batch = 1;
  for (int64_t d : p->batch_dims) batch = SaturatingProduct({batch, static_cast<uint64_t>(d)});
  return SaturatingProduct({2, batch, static_cast<uint64_t>(p->m), static_cast<uint64_t>(p->n),
                            static_cast<uint64_t>(p->k)});
}

uint64_t EstimateSoftmax(const Operation& call) {
  return SaturatingProduct({5, static_cast<uint64_t>(call.operand(0)->type().element_count())});
}

uint64_t EstimateLayerNorm(const Operation& call) {
  return SaturatingProduct({8, static_cast<uint64_t>(call.operand(0)->type().element_count())});
}

uint64_t EstimateConv2d(const Operation& call) {
  auto p = ParseConv2d(call);
  if (!p.ok()) return 0;
  const uint64_t outputs = SaturatingProduct({static_cast<uint64_t>(p->n), static_cast<uint64_t>(p->o),
                                              static_cast<uint64_t>(p->oh), static_cast<uint64_t>(p->ow)});
  uint64_t ops = SaturatingProduct({2, outputs, static_cast<uint64_t>(p->c / p->groups),
                                    static_cast<uint64_t>(p->window[0]),
                                    static_cast<uint64_t>(p->window[1])});
  if (p->has_bias && __builtin_add_overflow(ops, outputs, &ops)) ops = UINT64_MAX;
  return ops;
}

uint64_t EstimatePool2d(const Operation& call) {
  const bool is_max = call.GetString("call_target_name") == std::string(kMaxPool2dTarget);
  auto p = ParsePool2d(call, is_max);
  if (!p.ok()) return 0;
  return SaturatingProduct({static_cast<uint64_t>(p->n), static_cast<uint64_t>(p->c),
                            static_cast<uint64_t>(p->oh), static_cast<uint64_t>(p->ow),
                            static_cast<uint64_t>(p->window[0]),
                            static_cast<uint64_t>(p->window[1])});
}

}  // namespace accy::kernels
