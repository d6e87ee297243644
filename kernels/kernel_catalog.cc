// Catalog table (kernels/kernel_catalog.h).
#include "kernels/kernel_catalog.h"

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
     "dnnl::matmul"},
};

}  // namespace

std::span<const CatalogDescriptor> CatalogDescriptors() { return kDescriptors; }

std::optional<CatalogDescriptor> FindEntry(std::string_view target, uint32_t version) {
  for (const CatalogDescriptor& descriptor : kDescriptors) {
    if (descriptor.target == target && descriptor.version == version) return descriptor;
  }
  return std::nullopt;
}

}  // namespace accy::kernels
