// Example: a 3-layer MLP (784 -> 512 -> 512 -> 10, ReLU between layers, batch 64, f32) built with
// the builder API, compiled by the engine, timed, and checked against the reference evaluator.
//   build/bin/example_mlp [RUNS]     (RUNS timed runs, default 20, at least 1)
//
//   h1     = relu(x [64, 784] . w1 [784, 512] + b1 [512])
//   h2     = relu(h1 . w2 [512, 512] + b2 [512])
//   logits = h2 . w3 [512, 10] + b3 [10]                       -> [64, 10]
//
// Weights and biases are uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)] (PyTorch's nn.Linear
// default), the input uniform in [-1, 1], all from std::mt19937 seeded with kSeed, so every run
// of the example computes the same numbers. Each dot_general + bias + ReLU is one work item (a
// oneDNN matmul with its post-ops). The reference evaluator (src/reference, built in this tree,
// not installed) accumulates in double; the example exits 1 when the largest absolute error
// exceeds 1e-4 * max(1, max |reference|). Prints the plan, compile time, median run time in
// milliseconds and the achieved GFLOP/s (2 * m * n * k per matmul).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "src/reference/reference_evaluator.h"

namespace {

constexpr int64_t kBatch = 64;
constexpr int64_t kWidths[] = {784, 512, 512, 10};  // input, hidden, hidden, output
constexpr uint32_t kSeed = 20261130;
constexpr double kTolerance = 1e-4;

accy::TensorType F32(std::vector<int64_t> dims) {
  return accy::TensorType::Create(accy::ElementType::kF32, std::move(dims)).value();
}

int Fail(const accy::Status& status) {
  std::fprintf(stderr, "example_mlp: %s\n", std::string(status.message()).c_str());
  return 1;
}

// The MLP as function "main": (x, w1, b1, w2, b2, w3, b3) -> (logits).
accy::StatusOr<std::unique_ptr<accy::Module>> BuildMlp() {
  accy::Builder builder("mlp");
  std::vector<accy::TensorType> parameters = {F32({kBatch, kWidths[0]})};
  for (int layer = 0; layer < 3; ++layer) {
    parameters.push_back(F32({kWidths[layer], kWidths[layer + 1]}));
    parameters.push_back(F32({kWidths[layer + 1]}));
  }
  ACCY_ASSIGN_OR_RETURN(accy::FunctionBuilder f,
                        builder.BeginFunction("main", parameters, {F32({kBatch, kWidths[3]})}));
  ACCY_ASSIGN_OR_RETURN(accy::Value * zero, f.ConstantScalar(accy::ElementType::kF32, 0.0));
  accy::Value* h = f.Parameter(0);
  for (int layer = 0; layer < 3; ++layer) {
    const accy::TensorType out_type = F32({kBatch, kWidths[layer + 1]});
    // h [batch, in] . w [in, out]: contract h's dim 1 with w's dim 0, no batch dims.
    ACCY_ASSIGN_OR_RETURN(accy::Value * dot,
                          f.DotGeneral(h, f.Parameter(1 + 2 * layer), out_type, {1}, {0}, {}, {}));
    ACCY_ASSIGN_OR_RETURN(accy::Value * bias,
                          f.BroadcastInDim(f.Parameter(2 + 2 * layer), out_type, {1}));
    ACCY_ASSIGN_OR_RETURN(h, f.Add(dot, bias));
    if (layer < 2) {
      ACCY_ASSIGN_OR_RETURN(accy::Value * zeros, f.BroadcastInDim(zero, out_type, {}));
      ACCY_ASSIGN_OR_RETURN(h, f.Maximum(h, zeros));
    }
  }
  ACCY_RETURN_IF_ERROR(f.Return({h}));
  return builder.Finish();
}

accy::StatusOr<accy::Tensor> Uniform(const accy::TensorType& type, double bound,
                                     std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(static_cast<float>(-bound), static_cast<float>(bound));
  std::vector<float> values(static_cast<size_t>(type.element_count()));
  for (float& v : values) v = dist(rng);
  return accy::Tensor::FromVector(type, values);
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 20;
  if (argc > 2 || runs < 1) {
    std::fprintf(stderr, "usage: example_mlp [RUNS]   (RUNS >= 1, default 20)\n");
    return 2;
  }
  accy::StatusOr<std::unique_ptr<accy::Module>> module = BuildMlp();
  if (!module.ok()) return Fail(module.status());

  std::mt19937 rng(kSeed);
  std::vector<accy::Tensor> inputs;
  const std::vector<accy::TensorType>& types = (*module)->FindFunction("main")->parameter_types();
  for (size_t i = 0; i < types.size(); ++i) {
    // Parameter 0 is x; then w and b per layer, both bounded by 1/sqrt(fan_in of the layer).
    const double bound = i == 0 ? 1.0 : 1.0 / std::sqrt(double(kWidths[(i - 1) / 2]));
    accy::StatusOr<accy::Tensor> tensor = Uniform(types[i], bound, rng);
    if (!tensor.ok()) return Fail(tensor.status());
    inputs.push_back(*std::move(tensor));
  }

  accy::StatusOr<std::unique_ptr<accy::Engine>> engine = accy::Engine::Create();
  if (!engine.ok()) return Fail(engine.status());
  const auto compile_start = std::chrono::steady_clock::now();
  accy::StatusOr<std::unique_ptr<accy::Executable>> executable = (*engine)->Compile(**module);
  if (!executable.ok()) return Fail(executable.status());
  const double compile_ms = std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - compile_start)
                                .count();
  std::printf("MLP %lld-%lld-%lld-%lld, batch %lld, f32: plan\n%s",
              static_cast<long long>(kWidths[0]), static_cast<long long>(kWidths[1]),
              static_cast<long long>(kWidths[2]), static_cast<long long>(kWidths[3]),
              static_cast<long long>(kBatch), (*executable)->plan_text().c_str());
  std::printf("compile: %.1f ms\n", compile_ms);

  // Timed runs into preallocated outputs (no allocation after the first run).
  std::vector<accy::Tensor> outputs;
  for (const accy::TensorType& type : (*executable)->result_types()) {
    accy::StatusOr<accy::Tensor> out = accy::Tensor::Allocate(type);
    if (!out.ok()) return Fail(out.status());
    outputs.push_back(*std::move(out));
  }
  std::vector<double> milliseconds;
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    if (accy::Status status = (*executable)->Run(inputs, outputs); !status.ok()) {
      return Fail(status);
    }
    milliseconds.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(milliseconds.begin(), milliseconds.end());
  const double median_ms = milliseconds[milliseconds.size() / 2];
  double flops = 0;
  for (int layer = 0; layer < 3; ++layer) flops += 2.0 * kBatch * kWidths[layer] * kWidths[layer + 1];
  std::printf("run: median %.3f ms over %d runs, %.1f GFLOP/s\n", median_ms, runs,
              flops / (median_ms * 1e6));

  accy::StatusOr<std::vector<accy::Tensor>> expected = accy::Evaluate(**module, "main", inputs);
  if (!expected.ok()) return Fail(expected.status());
  double max_abs_error = 0, max_reference = 0;
  const accy::Tensor& logits = outputs[0];
  for (int64_t i = 0; i < logits.type().element_count(); ++i) {
    const double reference = (*expected)[0].GetAsDouble(i);
    max_abs_error = std::max(max_abs_error, std::abs(logits.GetAsDouble(i) - reference));
    max_reference = std::max(max_reference, std::abs(reference));
  }
  const double bound = kTolerance * std::max(1.0, max_reference);
  const bool pass = max_abs_error <= bound;
  std::printf("vs the reference evaluator: max abs error %.3g (bound %.3g, max |reference| %.3g): %s\n",
              max_abs_error, bound, max_reference, pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
