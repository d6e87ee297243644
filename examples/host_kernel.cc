// Example: register a user host kernel (include/accy/host_kernel.h) and call it from a program
// with kernel_call, as the seed's `accy.custom.scale` test does.
//   build/bin/example_host_kernel
// The kernel runs wherever a kernel_call names its target and version; until the executor
// lands (src/runtime), this example registers it, builds and prints the program and plans it.
#include <cstdio>
#include <string>

#include "accy/builder.h"
#include "accy/host_kernel.h"
#include "accy/planner.h"

int main() {
  // out = 2 * x, written into the second operand's buffer (declared write, result aliases it).
  accy::HostKernelSpec spec;
  spec.target = "accy.custom.scale";
  spec.version = 1;
  spec.operand_effects = {accy::OperandEffect::kRead, accy::OperandEffect::kWrite};
  spec.run = [](const accy::HostKernelArgs& args) -> accy::Status {
    const auto* x = static_cast<const float*>(args.operands[0].data);
    auto* out = static_cast<float*>(args.results[0].data);
    for (int64_t i = 0; i < args.operands[0].byte_size / 4; ++i) out[i] = 2.0f * x[i];
    return absl::OkStatus();
  };
  spec.estimate = [](std::span<const accy::TensorType> operands, std::span<const accy::TensorType>) {
    return static_cast<uint64_t>(operands[0].element_count());  // one multiply per element
  };
  if (accy::Status status = accy::RegisterHostKernel(spec); !status.ok()) {
    std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
    return 1;
  }

  accy::Builder builder("host_kernel_example");
  accy::TensorType f32x4 = builder.Type(accy::ElementType::kF32, {4}).value();
  accy::FunctionBuilder f = builder.BeginFunction("main", {f32x4, f32x4}, {f32x4}).value();
  accy::StatusOr<accy::Operation*> call =
      f.KernelCall({f.Parameter(0), f.Parameter(1)}, {f32x4},
                   {.target = "accy.custom.scale",
                    .operand_effects = {accy::OperandEffect::kRead, accy::OperandEffect::kWrite},
                    .result_aliases = {1}});
  if (!call.ok() || !f.Return({(*call)->result(0)}).ok()) return 1;
  auto module = builder.Finish();
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n", std::string(module.status().message()).c_str());
    return 1;
  }
  std::printf("%s", accy::PrintModule(**module).c_str());
  auto plan = accy::PlanFunction(**module, "main");
  if (!plan.ok()) {
    std::fprintf(stderr, "%s\n", std::string(plan.status().message()).c_str());
    return 1;
  }
  std::printf("%s", plan->text.c_str());
  return accy::UnregisterHostKernel("accy.custom.scale", 1).ok() ? 0 : 1;
}
