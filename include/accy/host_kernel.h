// User-registered host kernels: a C++ callable that runs wherever a kernel_call names its
// target and version, next to the built-in catalog kernels (kernels/kernel_catalog.h).
//
// The registry is process-wide and thread-safe (a mutex guards it); a kernel bound at compile
// time keeps its registration alive, so unregistering never pulls a kernel out from under a
// compiled program. The callable may be invoked from any thread, one call per bound item at a
// time; it must not throw (an escaping exception aborts, as any noexcept boundary does).
#ifndef ACCY_HOST_KERNEL_H_
#define ACCY_HOST_KERNEL_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "accy/types.h"

namespace accy {

// One operand or result buffer of a call: dense row-major host layout (accy/tensor.h).
struct HostBuffer {
  void* data = nullptr;       // may be null when byte_size is 0
  int64_t byte_size = 0;      // element count * element byte width
  ElementType element_type = ElementType::kF32;
  std::span<const int64_t> dims;
};

// What the callable receives: operands in kernel_call order, then results. A result that aliases
// an operand (result_aliases) has the operand's data pointer.
struct HostKernelArgs {
  std::span<const HostBuffer> operands;
  std::span<const HostBuffer> results;
};

struct HostKernelSpec {
  std::string target;  // e.g. "accy.custom.scale"; must not collide with a catalog target
  int64_t version = 1;
  // The kernel. Returns OK or an error status, which the run reports naming the item.
  std::function<Status(const HostKernelArgs&)> run;
  // Declared effect of each operand: a kernel_call naming this kernel must declare the same
  // list (so the planner's and the kernel's view of what is written agree).
  std::vector<OperandEffect> operand_effects;
  // Optional check of a call's operand and result types (kInvalidArgument naming the operand);
  // null accepts any types.
  std::function<Status(std::span<const TensorType> operands, std::span<const TensorType> results)>
      validate;
  // Element ops of one call for the planner (a multiply-add counts 2); null: the results'
  // element count.
  std::function<uint64_t(std::span<const TensorType> operands, std::span<const TensorType> results)>
      estimate;
};

// Registers `spec`. kInvalidArgument when the target is empty, `run` is null, the version is
// negative, the target/version is a catalog kernel, or it is registered already.
Status RegisterHostKernel(HostKernelSpec spec);
// Removes a registration; kNotFound when there is none. Kernels bound earlier keep running.
Status UnregisterHostKernel(std::string_view target, int64_t version);

}  // namespace accy

#endif  // ACCY_HOST_KERNEL_H_
