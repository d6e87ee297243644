// The kernel catalog: one descriptor per library kernel target and version.
//
// A kernel_call op names a target and version; the planner reads the descriptor's specialization
// metadata (output shapes, reductions, estimated element ops) and the oneDNN binding
// (onednn_kernel.h) runs it. The catalog is a static, immutable table: thread-safe. Targets, their
// operand/result contracts and attributes are listed in kernel_contracts.h.
#ifndef ACCY_KERNELS_KERNEL_CATALOG_H_
#define ACCY_KERNELS_KERNEL_CATALOG_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "accy/ir.h"
#include "accy/status.h"
#include "accy/types.h"

namespace accy::kernels {

// A tensor contract of one operand or result: element type and static dims.
struct TensorContract {
  ElementType element_type;
  std::span<const int64_t> dims;
};

// A reduction the kernel performs (e.g. the contracting dim of a matrix product).
struct ReductionContract {
  std::string_view name;          // e.g. "k"
  std::span<const int64_t> dims;  // extent(s) reduced over
};

// What the planner uses to estimate a specialized kernel.
struct Specialization {
  std::span<const TensorContract> outputs;
  std::span<const ReductionContract> reductions;
  // Estimated element operations of one call (a multiply-add counts 2). 0 for shape-generic
  // entries: their estimate depends on the call's shapes (EstimateElementOps).
  uint64_t estimated_element_ops = 0;
};

// Which family of contract and binding an entry belongs to.
enum class KernelFamily : uint8_t {
  kFixedMatrixProduct,  // the seed's fixed-shape entry
  kMatmul,
  kSoftmax,
  kLogSoftmax,
  kLayerNorm,
  kConv2d,
  kMaxPool2d,
  kAvgPool2d,
};

// One catalog entry.
struct CatalogDescriptor {
  std::string_view target;
  uint32_t version = 1;
  // Fixed-shape entries list their operands; shape-generic entries leave this empty and check
  // calls with `validate`.
  std::span<const TensorContract> operands;
  Specialization specialization;
  // Which library primitive runs it and its oneDNN 2.6 developer-guide page.
  std::string_view binding;
  KernelFamily family = KernelFamily::kFixedMatrixProduct;
  // One-paragraph semantics: operands, attributes, results, numerics.
  std::string_view semantics;
  // Checks a kernel_call of this target against the contract (operand count, element types,
  // ranks, shape relations, attributes, effects, aliases); kInvalidArgument naming the operand,
  // result or attribute. Null for fixed-shape entries (checked against `operands`).
  Status (*validate)(const Operation& call) = nullptr;
  // Estimated element ops of a validated call (a multiply-add counts 2); null for fixed entries.
  uint64_t (*estimate)(const Operation& call) = nullptr;
};

// The seed's fixed entry: a [4, 8] x [8, 16] f32 matrix product (estimated element ops 1024).
inline constexpr std::string_view kMatrixProduct4x16x8F32 = "accy.linalg.matrix_product_4x16x8_f32";
// Shape-generic targets (version 1), contracts in kernel_contracts.h.
inline constexpr std::string_view kMatmulTarget = "accy.linalg.matmul";
inline constexpr std::string_view kSoftmaxTarget = "accy.nn.softmax";
inline constexpr std::string_view kLogSoftmaxTarget = "accy.nn.log_softmax";
inline constexpr std::string_view kLayerNormTarget = "accy.nn.layer_norm";
inline constexpr std::string_view kConv2dTarget = "accy.nn.conv2d";
inline constexpr std::string_view kMaxPool2dTarget = "accy.nn.max_pool2d";
inline constexpr std::string_view kAvgPool2dTarget = "accy.nn.avg_pool2d";

// All catalog descriptors, in a fixed order.
std::span<const CatalogDescriptor> CatalogDescriptors();
// The descriptor of `target` at `version`, or nullopt when the catalog has none.
std::optional<CatalogDescriptor> FindEntry(std::string_view target, uint32_t version);

// The descriptor of kernel_call `call` after checking the call against its contract.
// Errors (kInvalidArgument): `call` is not a kernel_call; its target/version is not in the
// catalog ("kernel_call %7: unknown kernel target 'x' version 1 ..."); an operand, result or
// attribute breaks the contract (the message names it, e.g. "operand 1 (weights) ...").
StatusOr<CatalogDescriptor> ValidateKernelCall(const Operation& call);

// Estimated element ops of a valid call: a registered host kernel's estimate
// (include/accy/host_kernel.h), the fixed entry's number, or the entry's shape formula (matmul
// 2*batch*m*n*k; the others are documented in kernel_contracts.h). Errors as ValidateKernelCall,
// or a registered kernel's contract error.
StatusOr<uint64_t> EstimateElementOps(const Operation& call);

// "kernel_call %<result id> (<target>)": how statuses name a kernel_call item.
std::string KernelCallName(const Operation& call);

}  // namespace accy::kernels

#endif  // ACCY_KERNELS_KERNEL_CATALOG_H_
