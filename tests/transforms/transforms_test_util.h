// Shared pieces of the graph-pass tests (tests/transforms): parsing a StableHLO text into a
// module, deterministic inputs, compiling and running with passes turned off, comparing f32
// results, editing a program text. Header-only, test code.
#ifndef ACCY_TESTS_TRANSFORMS_TRANSFORMS_TEST_UTIL_H_
#define ACCY_TESTS_TRANSFORMS_TRANSFORMS_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gtest/gtest.h"

namespace accy {

// The module of StableHLO `text`; null, with a test failure naming the parse error, when it
// does not parse.
inline std::unique_ptr<Module> Parse(std::string_view text) {
  StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

// Deterministic values in about [-2, 2] (a fixed LCG: the test needs no seed to replay).
inline Tensor Values(const TensorType& type, uint32_t seed) {
  std::vector<float> values(static_cast<size_t>(type.element_count()));
  uint32_t state = seed;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 4.0f - 2.0f;
  }
  return *Tensor::FromVector(type, values);
}

// A compiled program's work items by kind and its outputs on one run.
struct Compiled {
  std::map<std::string, int64_t> kinds;
  std::vector<Tensor> outputs;
};

// Compiles `module` with the graph passes `disabled` turned off and runs it on `inputs` at
// 1 thread. Errors: those of Engine::Create, Compile and Run.
inline StatusOr<Compiled> CompileAndRun(const Module& module, std::vector<std::string> disabled,
                                        std::span<const Tensor> inputs) {
  EngineOptions options;
  options.num_threads = 1;
  options.disabled_passes = std::move(disabled);
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Create(options));
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable, engine->Compile(module));
  Compiled compiled;
  compiled.kinds = executable->Stats().work_items_by_kind;
  ACCY_ASSIGN_OR_RETURN(compiled.outputs, executable->Run(inputs));
  return compiled;
}

// Largest |a - b| over two f32 tensors of the same type; NaN where exactly one is NaN.
inline double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  double worst = 0;
  const float* x = a.data_as<float>();
  const float* y = b.data_as<float>();
  for (int64_t i = 0; i < a.type().element_count(); ++i) {
    if (std::isnan(x[i]) != std::isnan(y[i])) return std::numeric_limits<double>::quiet_NaN();
    if (!std::isnan(x[i])) worst = std::max(worst, std::fabs(double{x[i]} - double{y[i]}));
  }
  return worst;
}

// `text` with its first occurrence of `from` replaced by `to`; a test failure naming `from`
// when there is none.
inline std::string ReplaceOnce(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

}  // namespace accy

#endif  // ACCY_TESTS_TRANSFORMS_TRANSFORMS_TEST_UTIL_H_
