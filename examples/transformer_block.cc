// Example: the GPT-2-small transformer block of `accy demo` (tools/transformer_block.h: pre-layer-
// norm, 12 causal attention heads of 64, GELU-tanh MLP of width 3072, d_model 768, batch 1, f32,
// seeded weights), compiled by the engine, timed, and checked against the reference evaluator.
//   build/bin/example_transformer_block [SEQ [RUNS]]   (defaults: SEQ 32 tokens, RUNS 5)
//
// The default sequence is short so that the example (mostly the double-accumulating reference
// evaluator) finishes in a few seconds under `make test`; `accy demo` runs the full 128 tokens.
// Output: x [SEQ, 768] -> out [SEQ, 768]. Prints the work items by kind, compile time, median
// run time in milliseconds with the achieved matmul GFLOP/s, and the largest absolute error;
// exits 1 when it exceeds 1e-3 * max(1, max |reference|) (the demo's bound), 2 on bad arguments.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "src/reference/reference_evaluator.h"
#include "tools/transformer_block.h"

namespace {

constexpr double kTolerance = 1e-3;

int Fail(const accy::Status& status) {
  std::fprintf(stderr, "example_transformer_block: %s\n", std::string(status.message()).c_str());
  return 1;
}

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  const long seq = argc > 1 ? std::atol(argv[1]) : 32;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  if (argc > 3 || seq < 1 || seq > 4096 || runs < 1) {
    std::fprintf(stderr,
                 "usage: example_transformer_block [SEQ [RUNS]]   (SEQ 1-4096, default 32; "
                 "RUNS >= 1, default 5)\n");
    return 2;
  }
  accy::tools::TransformerBlockConfig config;
  config.seq = seq;
  accy::StatusOr<accy::tools::TransformerBlock> block = accy::tools::BuildTransformerBlock(config);
  if (!block.ok()) return Fail(block.status());

  accy::StatusOr<std::unique_ptr<accy::Engine>> engine = accy::Engine::Create();
  if (!engine.ok()) return Fail(engine.status());
  const auto compile_start = std::chrono::steady_clock::now();
  accy::StatusOr<std::unique_ptr<accy::Executable>> executable =
      (*engine)->Compile(*block->module);
  if (!executable.ok()) return Fail(executable.status());
  const double compile_ms = MillisecondsSince(compile_start);
  std::printf("GPT-2-small transformer block, seq %ld, d_model %lld, %lld heads, MLP %lld\n", seq,
              static_cast<long long>(config.d_model), static_cast<long long>(config.heads),
              static_cast<long long>(config.mlp_width));
  std::printf("work items:");
  for (const auto& [kind, count] : (*executable)->Stats().work_items_by_kind) {
    std::printf(" %s %lld", kind.c_str(), static_cast<long long>(count));
  }
  std::printf("\ncompile: %.1f ms\n", compile_ms);

  std::vector<accy::Tensor> outputs;
  for (const accy::TensorType& type : (*executable)->result_types()) {
    accy::StatusOr<accy::Tensor> out = accy::Tensor::Allocate(type);
    if (!out.ok()) return Fail(out.status());
    outputs.push_back(*std::move(out));
  }
  std::vector<double> milliseconds;
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    if (accy::Status status = (*executable)->Run(block->inputs, outputs); !status.ok()) {
      return Fail(status);
    }
    milliseconds.push_back(MillisecondsSince(start));
  }
  std::sort(milliseconds.begin(), milliseconds.end());
  const double median_ms = milliseconds[milliseconds.size() / 2];
  std::printf("run: median %.3f ms over %d runs, %.1f GFLOP/s (matmuls)\n", median_ms, runs,
              block->matmul_flops / (median_ms * 1e6));

  accy::StatusOr<std::vector<accy::Tensor>> expected =
      accy::Evaluate(*block->module, "main", block->inputs);
  if (!expected.ok()) return Fail(expected.status());
  double max_abs_error = 0, max_reference = 0;
  bool finite = true;
  for (int64_t i = 0; i < outputs[0].type().element_count(); ++i) {
    const double got = outputs[0].GetAsDouble(i);
    const double reference = (*expected)[0].GetAsDouble(i);
    finite = finite && std::isfinite(got);
    max_abs_error = std::max(max_abs_error, std::abs(got - reference));
    max_reference = std::max(max_reference, std::abs(reference));
  }
  const double bound = kTolerance * std::max(1.0, max_reference);
  const bool pass = finite && max_abs_error <= bound;
  std::printf("vs the reference evaluator: max abs error %.3g (bound %.3g, max |reference| %.3g): %s\n",
              max_abs_error, bound, max_reference, pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
