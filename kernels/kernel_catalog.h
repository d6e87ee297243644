// The kernel catalog: one descriptor per library kernel target and version.
//
// A kernel_call op names a target and version; the planner reads the descriptor's specialization
// metadata (output shapes, reductions, estimated element ops) and, in a later stage, the oneDNN
// binding runs it. The catalog is a static, immutable table: thread-safe.
#ifndef ACCY_KERNELS_KERNEL_CATALOG_H_
#define ACCY_KERNELS_KERNEL_CATALOG_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

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
  // Estimated element operations of one call (a multiply-add counts 2).
  uint64_t estimated_element_ops = 0;
};

// One catalog entry.
struct CatalogDescriptor {
  std::string_view target;
  uint32_t version = 1;
  std::span<const TensorContract> operands;
  Specialization specialization;
  // Which library primitive runs it (documentation for now; bound by the oneDNN stage).
  std::string_view binding;
};

// The seed's fixed entry: a [4, 8] x [8, 16] f32 matrix product (estimated element ops 1024).
inline constexpr std::string_view kMatrixProduct4x16x8F32 = "accy.linalg.matrix_product_4x16x8_f32";

// All catalog descriptors, in a fixed order.
std::span<const CatalogDescriptor> CatalogDescriptors();
// The descriptor of `target` at `version`, or nullopt when the catalog has none (a later stage
// turns that into an error naming the target).
std::optional<CatalogDescriptor> FindEntry(std::string_view target, uint32_t version);

}  // namespace accy::kernels

#endif  // ACCY_KERNELS_KERNEL_CATALOG_H_
