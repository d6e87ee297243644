// `accy`: the command-line program. Until the executor lands, the main job builds a small
// built-in program with the builder API, prints it as StableHLO text, evaluates it with the
// reference evaluator and prints the result.
#include <cstdio>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/tensor.h"
#include "src/reference/reference_evaluator.h"

namespace {

// y = tanh(a * b + c) * 0.5 + a, and its row sums: the fused chain the benchmarks use.
accy::StatusOr<std::unique_ptr<accy::Module>> BuildDemo() {
  using accy::ElementType;
  accy::Builder builder("demo");
  ACCY_ASSIGN_OR_RETURN(accy::TensorType matrix, builder.Type(ElementType::kF32, {2, 4}));
  ACCY_ASSIGN_OR_RETURN(accy::TensorType rows, builder.Type(ElementType::kF32, {2}));
  ACCY_ASSIGN_OR_RETURN(accy::TensorType scalar, builder.Type(ElementType::kF32, {}));
  ACCY_ASSIGN_OR_RETURN(accy::FunctionBuilder f,
                        builder.BeginFunction("main", {matrix, matrix, matrix}, {matrix, rows}));
  ACCY_ASSIGN_OR_RETURN(accy::Value * ab, f.Multiply(f.Parameter(0), f.Parameter(1)));
  ACCY_ASSIGN_OR_RETURN(accy::Value * abc, f.Add(ab, f.Parameter(2)));
  ACCY_ASSIGN_OR_RETURN(accy::Value * t, f.Tanh(abc));
  ACCY_ASSIGN_OR_RETURN(accy::Value * half, f.ConstantScalar(ElementType::kF32, 0.5));
  ACCY_ASSIGN_OR_RETURN(accy::Value * half_b, f.BroadcastInDim(half, matrix, {}));
  ACCY_ASSIGN_OR_RETURN(accy::Value * scaled, f.Multiply(t, half_b));
  ACCY_ASSIGN_OR_RETURN(accy::Value * y, f.Add(scaled, f.Parameter(0)));
  ACCY_ASSIGN_OR_RETURN(accy::Value * zero, f.ConstantScalar(ElementType::kF32, 0.0));
  ACCY_ASSIGN_OR_RETURN(accy::Value * sums, f.Reduce(y, zero, rows, "sum", {1}));
  (void)scalar;
  ACCY_RETURN_IF_ERROR(f.Return({y, sums}));
  ACCY_RETURN_IF_ERROR(f.Finish());
  return builder.Finish();
}

int Fail(const accy::Status& status) {
  std::fprintf(stderr, "accy: %s\n", std::string(status.ToString()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  auto module = BuildDemo();
  if (!module.ok()) return Fail(module.status());
  std::printf("%s\n", accy::PrintModule(**module).c_str());

  auto type = accy::TensorType::Create(accy::ElementType::kF32, {2, 4});
  std::vector<accy::Tensor> inputs;
  const std::vector<std::vector<float>> values = {
      {1, 2, 3, 4, -1, -2, -3, -4},
      {0.5f, 0.25f, 0.125f, 0, 1, 2, 3, 4},
      {0, 0, 0, 0, 1, 1, 1, 1}};
  for (const auto& v : values) {
    auto tensor = accy::Tensor::FromVector(*type, v);
    if (!tensor.ok()) return Fail(tensor.status());
    inputs.push_back(*std::move(tensor));
  }
  auto outputs = accy::Evaluate(**module, "main", inputs);
  if (!outputs.ok()) return Fail(outputs.status());
  std::printf("reference evaluator results:\n");
  for (size_t i = 0; i < outputs->size(); ++i) {
    std::printf("  result %zu: %s\n", i, (*outputs)[i].ToString().c_str());
  }
  return 0;
}
