// Catalog table (kernels/kernel_catalog.h).
#include "kernels/kernel_catalog.h"

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/host_kernel_registry.h"
#include "kernels/kernel_contracts.h"
#include "src/util/str_cat.h"

namespace accy::kernels {
namespace {

constexpr int64_t kLhsDims[] = {4, 8};
constexpr int64_t kRhsDims[] = {8, 16};
constexpr int64_t kOutDims[] = {4, 16};
constexpr int64_t kContractDims[] = {8};

constexpr TensorContract kMatrixProductOperands[] = {{ElementType::kF32, kLhsDims},
                                                     {ElementType::kF32, kRhsDims}};
constexpr TensorContract kMatrixProductOutputs[] = {{ElementType::kF32, kOutDims}};
constexpr ReductionContract kMatrixProductReductions[] = {{"k", kContractDims}};

const CatalogDescriptor kDescriptors[] = {
    {kMatrixProduct4x16x8F32,
     1,
     kMatrixProductOperands,
     // 2 * m * n * k = 2 * 4 * 16 * 8.
     {kMatrixProductOutputs, kMatrixProductReductions, 1024},
     "dnnl::matmul (dev_guide_matmul.html)",
     KernelFamily::kFixedMatrixProduct,
     "f32[4,8] x f32[8,16] -> f32[4,16], row-major matrix product accumulated in f32.",
     nullptr,
     nullptr},
    {kMatmulTarget, 1, {}, {}, "dnnl::matmul (dev_guide_matmul.html)", KernelFamily::kMatmul,
     "Batched matrix product a[B..,M,K] x b[B..,K,N] -> [B..,M,N] with optional transposes "
     "(kernel_contracts.h).",
     ValidateMatmul, EstimateMatmul},
    {kSoftmaxTarget, 1, {}, {},
     "dnnl::softmax_v2_forward, algorithm::softmax_accurate (dev_guide_softmax.html)",
     KernelFamily::kSoftmax, "exp(x - max) / sum(exp(x - max)) along attribute axis.",
     ValidateSoftmax, EstimateSoftmax},
    {kLogSoftmaxTarget, 1, {}, {},
     "dnnl::softmax_v2_forward, algorithm::softmax_log (dev_guide_softmax.html)",
     KernelFamily::kLogSoftmax, "x - max - log(sum(exp(x - max))) along attribute axis.",
     ValidateSoftmax, EstimateSoftmax},
    {kLayerNormTarget, 1, {}, {},
     "dnnl::layer_normalization_forward, use_scale | use_shift "
     "(dev_guide_layer_normalization.html)",
     KernelFamily::kLayerNorm,
     "(x - mean) / sqrt(var + epsilon) * scale + shift over the last dim.", ValidateLayerNorm,
     EstimateLayerNorm},
    {kConv2dTarget, 1, {}, {},
     "dnnl::convolution_forward, algorithm::convolution_direct (dev_guide_convolution.html)",
     KernelFamily::kConv2d,
     "2-D cross-correlation, NCHW/OIHW or NHWC/HWIO, strides, padding, dilation, groups, "
     "optional bias.",
     ValidateConv2d, EstimateConv2d},
    {kMaxPool2dTarget, 1, {}, {},
     "dnnl::pooling_v2_forward, algorithm::pooling_max (dev_guide_pooling.html)",
     KernelFamily::kMaxPool2d, "2-D max over windows; padding never wins.", ValidateMaxPool2d,
     EstimatePool2d},
    {kAvgPool2dTarget, 1, {}, {},
     "dnnl::pooling_v2_forward, algorithm::pooling_avg_{include,exclude}_padding "
     "(dev_guide_pooling.html)",
     KernelFamily::kAvgPool2d, "2-D mean over windows (count_include_pad chooses the divisor).",
     ValidateAvgPool2d, EstimatePool2d},
};

std::string DimsText(std::span<const int64_t> dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += StrCat(i ? ", " : "", dims[i]);
  return text + "]";
}

// Fixed-shape entries: operand count, each operand's exact type, every operand read, one result.
Status ValidateFixed(const Operation& call, const CatalogDescriptor& entry) {
  const std::string name = KernelCallName(call);
  if (call.num_operands() != static_cast<int64_t>(entry.operands.size())) {
    return absl::InvalidArgumentError(StrCat(name, ": has ", call.num_operands(),
                                             " operands, expected ", entry.operands.size()));
  }
  std::vector<std::string> effects = call.GetStrings("operand_effects");
  for (size_t i = 0; i < entry.operands.size(); ++i) {
    const TensorType& type = call.operand(static_cast<int64_t>(i))->type();
    const TensorContract& contract = entry.operands[i];
    if (type.element_type() != contract.element_type ||
        !std::equal(type.dims().begin(), type.dims().end(), contract.dims.begin(),
                    contract.dims.end())) {
      return absl::InvalidArgumentError(
          StrCat(name, ": operand ", i, " has type ", type.ToString(), ", expected ",
                 ElementTypeName(contract.element_type), " ", DimsText(contract.dims)));
    }
    if (i < effects.size() && effects[i] != "read" && effects[i] != "read_write") {
      return absl::InvalidArgumentError(StrCat(name, ": operand ", i, " has effect ", effects[i],
                                               " but the kernel reads it"));
    }
  }
  const TensorContract& out = entry.specialization.outputs[0];
  if (call.num_results() != 1 || call.result(0)->type().element_type() != out.element_type ||
      !std::equal(call.result(0)->type().dims().begin(), call.result(0)->type().dims().end(),
                  out.dims.begin(), out.dims.end())) {
    return absl::InvalidArgumentError(StrCat(name, ": expected one result of ",
                                             ElementTypeName(out.element_type), " ",
                                             DimsText(out.dims)));
  }
  std::vector<int64_t> aliases = call.GetInts("result_aliases");
  if (!aliases.empty() && aliases[0] != -1) {
    return absl::InvalidArgumentError(StrCat(name, ": result 0 may not alias an operand"));
  }
  return absl::OkStatus();
}

}  // namespace

std::span<const CatalogDescriptor> CatalogDescriptors() { return kDescriptors; }

std::optional<CatalogDescriptor> FindEntry(std::string_view target, uint32_t version) {
  for (const CatalogDescriptor& descriptor : kDescriptors) {
    if (descriptor.target == target && descriptor.version == version) return descriptor;
  }
  return std::nullopt;
}

std::string KernelCallName(const Operation& call) {
  std::string name = call.num_results() > 0 ? StrCat("kernel_call %", call.result(0)->id())
                                            : StrCat("kernel_call #", call.id());
  std::optional<std::string> target = call.GetString("call_target_name");
  return target ? StrCat(name, " (", *target, ")") : name;
}

StatusOr<CatalogDescriptor> ValidateKernelCall(const Operation& call) {
  if (call.kind() != OpKind::kKernelCall) {
    return absl::InvalidArgumentError(StrCat(call.name(), " is not a kernel_call"));
  }
  std::optional<std::string> target = call.GetString("call_target_name");
  std::optional<int64_t> version = call.GetInt("version");
  std::optional<CatalogDescriptor> entry;
  if (target && version && *version >= 0 && *version <= UINT32_MAX) {
    entry = FindEntry(*target, static_cast<uint32_t>(*version));
  }
  if (!entry) {
    return absl::InvalidArgumentError(
        StrCat(KernelCallName(call), ": unknown kernel target '", target.value_or(""),
               "' version ", version.value_or(-1),
               " (neither in the kernel catalog, kernels/kernel_contracts.h, nor registered "
               "with accy::RegisterHostKernel)"));
  }
  if (entry->validate != nullptr) {
    ACCY_RETURN_IF_ERROR(entry->validate(call));
  } else {
    ACCY_RETURN_IF_ERROR(ValidateFixed(call, *entry));
  }
  return *entry;
}

StatusOr<uint64_t> EstimateElementOps(const Operation& call) {
  if (std::shared_ptr<const HostKernelSpec> host = FindHostKernelFor(call)) {
    ACCY_RETURN_IF_ERROR(ValidateHostKernelCall(call, *host));
    return EstimateHostKernel(call, *host);
  }
  ACCY_ASSIGN_OR_RETURN(CatalogDescriptor entry, ValidateKernelCall(call));
  if (entry.estimate == nullptr) return entry.specialization.estimated_element_ops;
  return entry.estimate(call);
}

}  // namespace accy::kernels
