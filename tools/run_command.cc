// `accy run`: parse a StableHLO file, compile one function through the engine (the JIT
// pipeline), run it on .npy inputs, and write the results as .npy files or print them.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "accy/engine.h"
#include "src/reference/reference_evaluator.h"
#include "src/util/str_cat.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/npy.h"
#include "tools/object_cache.h"

namespace accy::tools {
namespace {

constexpr char kUsageHead[] =
    "usage: accy run FILE.mlir [--function NAME] [--input FILE.npy]... [--threads N]\n"
    "                [--max-while-iterations N] [--output-dir DIR] [--cache-dir DIR | --no-cache]\n"
    "                [--disable-passes P,Q] [--reference]\n"
    "  Compiles the function (default @main, or the module's only function) through the JIT and\n"
    "  runs it. One --input per parameter, in order (NumPy .npy; bf16 parameters read <f4 or <u2\n"
    "  bit patterns). With --output-dir, writes DIR/out0.npy, out1.npy, ... (bf16 as <f4);\n"
    "  otherwise prints the results.\n"
    "  --threads N      intra-op threads (0 = all cores, the default)\n"
    "  --disable-passes P,Q\n"
    "                   graph passes not to run (EngineOptions::disabled_passes; an unknown\n"
    "                   name is an error listing the passes)\n"
    "  --reference      evaluate with the reference evaluator instead (src/reference: the\n"
    "                   spec's semantics op by op, slow; the oracle the tests compare with)\n"
    "  --max-while-iterations N\n"
    "                   stop a while loop after N body iterations with an error (exit 1);\n"
    "                   0, the default, lets loops run until their condition is false\n";
std::string Usage() {
  return std::string(kUsageHead) + kLimitOptionsUsage + kCacheOptionsUsage;
}

// Printed elements per result; --output-dir has them all.
constexpr int64_t kPrintedElements = 256;

}  // namespace

int RunCommand(std::span<const std::string> args) {
  const std::vector<OptionSpec> specs =
      WithCacheOptions(WithLimitOptions({{"function", true, false},
                                         {"input", true, true},
                                         {"threads", true, false},
                                         {"max-while-iterations", true, false},
                                         {"output-dir", true, false},
                                         {"disable-passes", true, false},
                                         {"reference", false, false}}));
  const std::string usage_text = Usage();
  const char* usage = usage_text.c_str();
  StatusOr<ParsedArgs> parsed = ParseArgs(args, specs);
  if (!parsed.ok()) return ReportUsage("run", std::string(parsed.status().message()), usage);
  if (parsed->help) {
    std::printf("%s", usage);
    return kExitOk;
  }
  if (parsed->positional.size() != 1) {
    return ReportUsage("run", "expected one FILE.mlir", usage);
  }
  EngineOptions engine_options;
  if (parsed->Has("threads")) {
    StatusOr<int> threads = ParseIntOption("threads", parsed->Get("threads"), 0, 4096);
    if (!threads.ok()) return ReportUsage("run", std::string(threads.status().message()), usage);
    engine_options.num_threads = *threads;
  }
  if (parsed->Has("max-while-iterations")) {
    StatusOr<int> bound = ParseIntOption("max-while-iterations",
                                         parsed->Get("max-while-iterations"), 0, 2147483647);
    if (!bound.ok()) return ReportUsage("run", std::string(bound.status().message()), usage);
    engine_options.max_while_iterations = *bound;
  }
  if (parsed->Has("disable-passes")) {
    engine_options.disabled_passes =
        absl::StrSplit(parsed->Get("disable-passes"), ',', absl::SkipEmpty());
  }
  StatusOr<std::string> cache_dir = ResolveCacheDir(*parsed, "run");
  if (!cache_dir.ok()) return ReportUsage("run", std::string(cache_dir.status().message()), usage);
  engine_options.cache_dir = *cache_dir;

  ParseOptions parse_options;
  if (Status limits = ApplyLimitOptions(*parsed, &engine_options, &parse_options); !limits.ok()) {
    return ReportUsage("run", std::string(limits.message()), usage);
  }
  StatusOr<std::unique_ptr<Module>> module = LoadModule(parsed->positional[0], parse_options);
  if (!module.ok()) return ReportError("run", module.status());
  StatusOr<std::string> function_name = ChooseFunction(**module, parsed->Get("function"));
  if (!function_name.ok()) return ReportError("run", function_name.status());
  const Function& function = *(*module)->FindFunction(*function_name);

  const std::vector<std::string> input_paths =
      parsed->Has("input") ? parsed->values.at("input") : std::vector<std::string>{};
  if (input_paths.size() != function.parameter_types().size()) {
    return ReportError(
        "run", absl::InvalidArgumentError(
                   StrCat("@", *function_name, " takes ", function.parameter_types().size(),
                          function.parameter_types().size() == 1 ? " parameter, " : " parameters, ",
                          input_paths.size(), " --input given")));
  }
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < input_paths.size(); ++i) {
    StatusOr<Tensor> array = ReadNpyFile(input_paths[i]);
    if (!array.ok()) return ReportError("run", array.status());
    StatusOr<Tensor> input = ConvertNpyInput(*array, function.parameter_types()[i]);
    if (!input.ok()) {
      return ReportError(
          "run", absl::InvalidArgumentError(
                     StrCat("input ", i, " (", input_paths[i], "): ", input.status().message())));
    }
    inputs.push_back(*std::move(input));
  }

  StatusOr<std::vector<Tensor>> outputs;
  if (parsed->Has("reference")) {
    if (Status verified = Verify(**module); !verified.ok()) return ReportError("run", verified);
    ReferenceOptions reference_options;
    if (engine_options.max_while_iterations > 0) {
      reference_options.max_while_iterations = engine_options.max_while_iterations;
    }
    outputs = EvaluateFunction(function, inputs, reference_options);
  } else {
    StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(engine_options);
    if (!engine.ok()) return ReportError("run", engine.status());
    StatusOr<std::unique_ptr<Executable>> executable =
        (*engine)->Compile(**module, *function_name);
    if (!executable.ok()) return ReportError("run", executable.status());
    outputs = (*executable)->Run(inputs);
  }
  if (!outputs.ok()) return ReportError("run", outputs.status());

  if (!parsed->Has("output-dir")) {
    for (size_t i = 0; i < outputs->size(); ++i) {
      std::printf("result %zu: %s\n", i, (*outputs)[i].ToString(kPrintedElements).c_str());
    }
    return kExitOk;
  }
  const std::filesystem::path dir = parsed->Get("output-dir");
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return ReportError("run", absl::PermissionDeniedError(
                                  StrCat(dir.string(), ": cannot create: ", error.message())));
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string path = (dir / StrCat("out", i, ".npy")).string();
    if (Status written = WriteNpyFile(path, (*outputs)[i]); !written.ok()) {
      return ReportError("run", written);
    }
    std::printf("wrote %s (%s)\n", path.c_str(), (*outputs)[i].type().ToString().c_str());
  }
  return kExitOk;
}

}  // namespace accy::tools
