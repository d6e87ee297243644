// The process-wide registry behind accy::RegisterHostKernel (include/accy/host_kernel.h), as the
// catalog and the binder see it. Thread-safe: lookups take the registry mutex and return shared
// ownership of an immutable spec.
#ifndef ACCY_KERNELS_HOST_KERNEL_REGISTRY_H_
#define ACCY_KERNELS_HOST_KERNEL_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "accy/host_kernel.h"
#include "accy/ir.h"
#include "accy/status.h"

namespace accy::kernels {

// The registered spec of `target`/`version`, or null.
std::shared_ptr<const HostKernelSpec> FindHostKernel(std::string_view target, int64_t version);

// The registered spec named by kernel_call `call`, or null when it names none.
std::shared_ptr<const HostKernelSpec> FindHostKernelFor(const Operation& call);

// Checks `call` against `spec`: operand effects equal to the declared ones (error naming the
// operand), then spec.validate. kInvalidArgument naming the kernel_call.
Status ValidateHostKernelCall(const Operation& call, const HostKernelSpec& spec);

// spec.estimate, or the results' element count.
uint64_t EstimateHostKernel(const Operation& call, const HostKernelSpec& spec);

}  // namespace accy::kernels

#endif  // ACCY_KERNELS_HOST_KERNEL_REGISTRY_H_
