// `accy demo-small` (the default when no subcommand is given): builds a small program with the
// builder API, prints it as StableHLO text and its plan, compiles it with the engine (JIT), runs
// it, and checks the results against the reference evaluator (exit code 1 on mismatch).
// The `accy demo` transformer block joins it once dot_general and attention run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "accy/tensor.h"
#include "src/reference/reference_evaluator.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/object_cache.h"

namespace accy::tools {

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

int Fail(const accy::Status& status) { return ReportError("demo-small", status); }

constexpr char kUsageHead[] =
    "usage: accy [demo-small] [--cache-dir DIR | --no-cache]\n"
    "  Builds y = tanh(a * b + c) * 0.5 + a and its row sums with the builder API, prints the\n"
    "  StableHLO text and the plan, runs it through the JIT and compares with the reference\n"
    "  evaluator.\n";
std::string Usage() { return std::string(kUsageHead) + kCacheOptionsUsage; }

}  // namespace

int DemoSmallCommand(std::span<const std::string> args) {
  const std::vector<OptionSpec> specs = WithCacheOptions({});
  const std::string usage_text = Usage();
  const char* usage = usage_text.c_str();
  StatusOr<ParsedArgs> parsed = ParseArgs(args, specs);
  if (!parsed.ok())
    return ReportUsage("demo-small", std::string(parsed.status().message()), usage);
  if (parsed->help) {
    std::printf("%s", usage);
    return kExitOk;
  }
  if (!parsed->positional.empty()) {
    return ReportUsage("demo-small", "takes no arguments", usage);
  }
  accy::EngineOptions options;
  StatusOr<std::string> cache_dir = ResolveCacheDir(*parsed, "demo-small");
  if (!cache_dir.ok()) {
    return ReportUsage("demo-small", std::string(cache_dir.status().message()), usage);
  }
  options.cache_dir = *cache_dir;

  auto module = BuildDemo();
  if (!module.ok()) return Fail(module.status());
  std::printf("%s\n", accy::PrintModule(**module).c_str());

  auto engine = accy::Engine::Create(options);
  if (!engine.ok()) return Fail(engine.status());
  auto executable = (*engine)->Compile(**module, "main");
  if (!executable.ok()) return Fail(executable.status());
  const accy::ExecutableStats stats = (*executable)->Stats();
  std::printf("plan:\n%s", (*executable)->plan_text().c_str());
  std::printf("planning %.2f ms, JIT compile %.2f ms, arena %lld bytes\n\n",
              stats.plan_milliseconds, stats.compile_milliseconds,
              static_cast<long long>(stats.arena_bytes));

  auto type = accy::TensorType::Create(accy::ElementType::kF32, {2, 4});
  std::vector<accy::Tensor> inputs;
  const std::vector<std::vector<float>> values = {
      {1, 2, 3, 4, -1, -2, -3, -4}, {0.5f, 0.25f, 0.125f, 0, 1, 2, 3, 4}, {0, 0, 0, 0, 1, 1, 1, 1}};
  for (const auto& v : values) {
    auto tensor = accy::Tensor::FromVector(*type, v);
    if (!tensor.ok()) return Fail(tensor.status());
    inputs.push_back(*std::move(tensor));
  }
  std::vector<double> microseconds;
  accy::StatusOr<std::vector<accy::Tensor>> outputs = std::vector<accy::Tensor>{};
  for (int run = 0; run < 21; ++run) {
    const auto start = std::chrono::steady_clock::now();
    outputs = (*executable)->Run(inputs);
    microseconds.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
    if (!outputs.ok()) return Fail(outputs.status());
  }
  std::nth_element(microseconds.begin(), microseconds.begin() + 10, microseconds.end());
  std::printf("run: median %.1f us over 21 runs\n", microseconds[10]);

  auto expected = accy::Evaluate(**module, "main", inputs);
  if (!expected.ok()) return Fail(expected.status());
  bool ok = true;
  for (size_t i = 0; i < outputs->size(); ++i) {
    // tanh comes from glibc's vector math in the JIT and from libm in the reference.
    accy::TensorComparison c = accy::CompareClose((*outputs)[i], (*expected)[i], 1e-6, 1e-5);
    std::printf(
        "result %zu: %s\n  reference: %s\n  %s\n", i, (*outputs)[i].ToString().c_str(),
        (*expected)[i].ToString().c_str(),
        c.ok ? "matches the reference evaluator (atol 1e-6, rtol 1e-5)" : c.message.c_str());
    ok = ok && c.ok;
  }
  return ok ? kExitOk : kExitError;
}

}  // namespace accy::tools
