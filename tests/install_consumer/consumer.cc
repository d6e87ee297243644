// Built against an installed accy (tests/install_consumer/CMakeLists.txt): compiles y = x * x + 1
// on a 2x3 f32 tensor through the engine and checks every element. Exit code 0 and "consumer: ok"
// on success; 1 with the reason otherwise.
#include <cstdio>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"

int main() {
  accy::Builder builder("consumer");
  accy::TensorType type = *accy::TensorType::Create(accy::ElementType::kF32, {2, 3});
  accy::FunctionBuilder f = *builder.BeginFunction("main", {type}, {type});
  accy::Value* one = *f.BroadcastInDim(*f.ConstantScalar(accy::ElementType::kF32, 1), type, {});
  accy::Value* y = *f.Add(*f.Multiply(f.Parameter(0), f.Parameter(0)), one);
  if (accy::Status s = f.Return({y}); !s.ok()) {
    std::printf("consumer: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::unique_ptr<accy::Module> module = *builder.Finish();
  auto engine = accy::Engine::Create();
  if (!engine.ok()) {
    std::printf("consumer: %s\n", std::string(engine.status().message()).c_str());
    return 1;
  }
  auto executable = (*engine)->Compile(*module);
  if (!executable.ok()) {
    std::printf("consumer: %s\n", std::string(executable.status().message()).c_str());
    return 1;
  }
  const std::vector<float> x = {0, 1, -2, 0.5f, 3, -1.5f};
  std::vector<accy::Tensor> inputs;
  inputs.push_back(*accy::Tensor::FromVector(type, x));
  auto outputs = (*executable)->Run(inputs);
  if (!outputs.ok()) {
    std::printf("consumer: %s\n", std::string(outputs.status().message()).c_str());
    return 1;
  }
  for (size_t i = 0; i < x.size(); ++i) {
    const double got = (*outputs)[0].GetAsDouble(static_cast<int64_t>(i));
    const double expected = static_cast<double>(x[i] * x[i] + 1.0f);  // exact in f32
    if (got != expected) {
      std::printf("consumer: element %zu is %g, expected %g\n", i, got, expected);
      return 1;
    }
  }
  std::printf("consumer: ok (%zu elements of x * x + 1)\n", x.size());
  return 0;
}
