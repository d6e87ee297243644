// Example: register a user host kernel (include/accy/host_kernel.h) and call it from a program
// with kernel_call, as the seed's `accy.custom.scale` test does.
//   build/bin/example_host_kernel
// The kernel runs wherever a kernel_call names its target and version: this example registers
// it, builds, prints and plans the program, then compiles and runs it through the engine and
// checks out == 2 * x (exit 1 otherwise).
#include <cstdio>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
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

  // Compiled and run: the kernel writes its result over operand 1's buffer; operand 1 is a
  // caller input here, so the executor gives it a copy and the caller's tensor keeps its bytes.
  auto engine = accy::Engine::Create();
  if (!engine.ok()) {
    std::fprintf(stderr, "%s\n", std::string(engine.status().message()).c_str());
    return 1;
  }
  auto executable = (*engine)->Compile(**module);
  if (!executable.ok()) {
    std::fprintf(stderr, "%s\n", std::string(executable.status().message()).c_str());
    return 1;
  }
  std::vector<accy::Tensor> inputs;
  inputs.push_back(accy::Tensor::FromVector(f32x4, std::vector<float>{1, 2, -3, 0.5f}).value());
  inputs.push_back(accy::Tensor::Filled(f32x4, 0).value());
  auto outputs = (*executable)->Run(inputs);
  if (!outputs.ok()) {
    std::fprintf(stderr, "%s\n", std::string(outputs.status().message()).c_str());
    return 1;
  }
  std::printf("run: %s\n", (*outputs)[0].ToString().c_str());
  for (int64_t i = 0; i < 4; ++i) {
    if ((*outputs)[0].GetAsDouble(i) != 2 * inputs[0].GetAsDouble(i)) {
      std::fprintf(stderr, "element %lld is not 2 * x\n", static_cast<long long>(i));
      return 1;
    }
  }
  return accy::UnregisterHostKernel("accy.custom.scale", 1).ok() ? 0 : 1;
}
