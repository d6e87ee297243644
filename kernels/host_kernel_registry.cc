// Host kernel registry (include/accy/host_kernel.h, kernels/host_kernel_registry.h).
#include "kernels/host_kernel_registry.h"

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel_catalog.h"
#include "src/util/str_cat.h"

namespace accy {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::pair<std::string, int64_t>, std::shared_ptr<const HostKernelSpec>, std::less<>>
      kernels;
};

Registry& GetRegistry() {
  static Registry registry;
  return registry;
}

}  // namespace

Status RegisterHostKernel(HostKernelSpec spec) {
  if (spec.target.empty()) return absl::InvalidArgumentError("RegisterHostKernel: empty target");
  if (!spec.run) {
    return absl::InvalidArgumentError(StrCat("RegisterHostKernel: ", spec.target, " has no run"));
  }
  if (spec.version < 0 || spec.version > UINT32_MAX) {
    return absl::InvalidArgumentError(
        StrCat("RegisterHostKernel: ", spec.target, " has version ", spec.version));
  }
  if (kernels::FindEntry(spec.target, static_cast<uint32_t>(spec.version))) {
    return absl::InvalidArgumentError(StrCat("RegisterHostKernel: ", spec.target, " version ",
                                             spec.version, " is a catalog kernel"));
  }
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto key = std::make_pair(spec.target, spec.version);
  if (registry.kernels.count(key) != 0) {
    return absl::InvalidArgumentError(StrCat("RegisterHostKernel: ", spec.target, " version ",
                                             spec.version, " is registered already"));
  }
  registry.kernels.emplace(std::move(key), std::make_shared<const HostKernelSpec>(std::move(spec)));
  return absl::OkStatus();
}

Status UnregisterHostKernel(std::string_view target, int64_t version) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (registry.kernels.erase(std::make_pair(std::string(target), version)) == 0) {
    return absl::NotFoundError(StrCat("UnregisterHostKernel: ", target, " version ", version,
                                      " is not registered"));
  }
  return absl::OkStatus();
}

namespace kernels {

std::shared_ptr<const HostKernelSpec> FindHostKernel(std::string_view target, int64_t version) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.kernels.find(std::make_pair(std::string(target), version));
  return it == registry.kernels.end() ? nullptr : it->second;
}

std::shared_ptr<const HostKernelSpec> FindHostKernelFor(const Operation& call) {
  if (call.kind() != OpKind::kKernelCall) return nullptr;
  std::optional<std::string> target = call.GetString("call_target_name");
  std::optional<int64_t> version = call.GetInt("version");
  if (!target || !version) return nullptr;
  return FindHostKernel(*target, *version);
}

Status ValidateHostKernelCall(const Operation& call, const HostKernelSpec& spec) {
  const std::string name = KernelCallName(call);
  std::vector<std::string> effects = call.GetStrings("operand_effects");
  if (effects.empty()) effects.assign(static_cast<size_t>(call.num_operands()), "read");
  if (effects.size() != spec.operand_effects.size()) {
    return absl::InvalidArgumentError(StrCat(name, ": has ", effects.size(),
                                             " operands, the registered kernel declares ",
                                             spec.operand_effects.size()));
  }
  for (size_t i = 0; i < effects.size(); ++i) {
    const std::string_view declared = OperandEffectName(spec.operand_effects[i]);
    if (effects[i] != declared) {
      return absl::InvalidArgumentError(StrCat(name, ": operand ", i, " has effect ", effects[i],
                                               ", the registered kernel declares ", declared));
    }
  }
  if (spec.validate) {
    std::vector<TensorType> operands, results;
    for (const Value* v : call.operands()) operands.push_back(v->type());
    for (const Value* v : call.results()) results.push_back(v->type());
    Status status = spec.validate(operands, results);
    if (!status.ok()) {
      return absl::InvalidArgumentError(StrCat(name, ": ", status.message()));
    }
  }
  return absl::OkStatus();
}

uint64_t EstimateHostKernel(const Operation& call, const HostKernelSpec& spec) {
  std::vector<TensorType> operands, results;
  for (const Value* v : call.operands()) operands.push_back(v->type());
  for (const Value* v : call.results()) results.push_back(v->type());
  if (spec.estimate) return spec.estimate(operands, results);
  uint64_t count = 0;
  for (const TensorType& t : results) count += static_cast<uint64_t>(t.element_count());
  return count;
}

}  // namespace kernels
}  // namespace accy
