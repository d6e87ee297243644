// Example: build a small program with the public builder API, see a type error reported, and
// print the program as StableHLO MLIR text.
//   build/bin/example_build_and_print
#include <cstdio>
#include <string>

#include "accy/builder.h"

int main() {
  accy::Builder builder("example");
  accy::TensorType x_type = builder.Type(accy::ElementType::kF32, {2, 3}).value();
  accy::TensorType b_type = builder.Type(accy::ElementType::kF32, {3}).value();
  accy::FunctionBuilder f = builder.BeginFunction("bias_relu", {x_type, b_type}, {x_type}).value();

  // A wrong call returns a status naming the op and the mismatch; the function is unchanged.
  accy::StatusOr<accy::Value*> bad = f.Add(f.Parameter(0), f.Parameter(1));
  std::printf("expected error: %s\n", std::string(bad.status().message()).c_str());

  accy::Value* bias = f.BroadcastInDim(f.Parameter(1), x_type, {1}).value();
  accy::Value* sum = f.Add(f.Parameter(0), bias).value();
  accy::Value* zero = f.ConstantScalar(accy::ElementType::kF32, 0.0).value();
  accy::Value* zeros = f.BroadcastInDim(zero, x_type, {}).value();
  accy::Value* relu = f.Maximum(sum, zeros).value();
  if (!f.Return({relu}).ok()) return 1;
  auto module = builder.Finish();
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n", std::string(module.status().message()).c_str());
    return 1;
  }
  std::printf("%s", accy::PrintModule(**module).c_str());
  return 0;
}
