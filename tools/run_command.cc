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
#include "tools/spmd_run.h"

namespace accy::tools {
namespace {

constexpr char kUsageHead[] =
    "usage: accy run FILE.mlir [--function NAME] [--input FILE.npy]... [--threads N]\n"
    "                [--max-while-iterations N] [--output-dir DIR] [--cache-dir DIR | --no-cache]\n"
    "                [--disable-passes P,Q] [--reference]\n"
    "                [--replicas N] [--partitions M] [--in-process] [--input-per-process DIR]\n"
    "                [--collective-timeout-ms N]\n"
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
    "                   0, the default, lets loops run until their condition is false\n"
    "  SPMD programs (collectives; spec \"Parallel execution\"): the grid is the module's\n"
    "  mhlo.num_replicas x mhlo.num_partitions, or --replicas N / --partitions M. On a grid of\n"
    "  more than one process, accy run starts one `accy run` per process on this host, joined\n"
    "  by Gloo over TCP (a file store in a temporary folder), and prints each process's\n"
    "  results prefixed \"process K\" (K = replica * partitions + partition); with\n"
    "  --output-dir they go to DIR/processK/outI.npy. When ACCY_RANK, ACCY_WORLD_SIZE and\n"
    "  ACCY_RENDEZVOUS (file:DIR or redis:HOST:PORT) are set, this process is that one rank\n"
    "  instead (launch with mpirun, Slurm or a shell loop; README \"Running on several\n"
    "  processes or hosts\").\n"
    "  --in-process     run the processes as threads of this process instead\n"
    "  --input-per-process DIR\n"
    "                   process K reads DIR/processK/input0.npy, input1.npy, ... (else every\n"
    "                   process reads the --input files)\n"
    "  --collective-timeout-ms N\n"
    "                   how long a collective waits for the other processes (default 60000)\n";
std::string Usage() {
  return std::string(kUsageHead) + kLimitOptionsUsage + kCacheOptionsUsage;
}

}  // namespace

int RunCommand(std::span<const std::string> args) {
  const std::vector<OptionSpec> specs =
      WithCacheOptions(WithLimitOptions({{"function", true, false},
                                         {"input", true, true},
                                         {"threads", true, false},
                                         {"max-while-iterations", true, false},
                                         {"output-dir", true, false},
                                         {"disable-passes", true, false},
                                         {"reference", false, false},
                                         {"replicas", true, false},
                                         {"partitions", true, false},
                                         {"in-process", false, false},
                                         {"input-per-process", true, false},
                                         {"collective-timeout-ms", true, false}}));
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
  int64_t check_ops = 0;
  StatusOr<std::unique_ptr<Module>> module =
      LoadModule(parsed->positional[0], parse_options, &check_ops);
  if (!module.ok()) return ReportError("run", module.status());
  if (check_ops > 0) {
    std::fprintf(stderr,
                 "accy run: warning: %s holds %lld check op%s (check.expect_*), which run does "
                 "not evaluate; `accy conformance %s` does\n",
                 parsed->positional[0].c_str(), static_cast<long long>(check_ops),
                 check_ops == 1 ? "" : "s", parsed->positional[0].c_str());
  }
  StatusOr<std::string> function_name = ChooseFunction(**module, parsed->Get("function"));
  if (!function_name.ok()) return ReportError("run", function_name.status());
  const Function& function = *(*module)->FindFunction(*function_name);
  int64_t replicas = (*module)->num_replicas();
  int64_t partitions = (*module)->num_partitions();
  for (auto [name, count] : {std::pair<const char*, int64_t*>{"replicas", &replicas},
                             std::pair<const char*, int64_t*>{"partitions", &partitions}}) {
    if (!parsed->Has(name)) continue;
    StatusOr<int> value = ParseIntOption(name, parsed->Get(name), 1, 4096);
    if (!value.ok()) return ReportUsage("run", std::string(value.status().message()), usage);
    *count = *value;
  }
  if (Status grid = (*module)->SetGrid(replicas, partitions); !grid.ok()) {
    return ReportError("run", grid);
  }
  if (parsed->Has("input") && parsed->Has("input-per-process")) {
    return ReportUsage("run", "give --input or --input-per-process, not both", usage);
  }
  if (replicas * partitions > 1 || RankVariablesSet()) {
    SpmdRun spmd;
    spmd.module = module->get();
    spmd.function = *function_name;
    spmd.engine_options = engine_options;
    if (parsed->Has("input")) spmd.inputs = parsed->values.at("input");
    spmd.input_per_process = parsed->Get("input-per-process");
    spmd.output_dir = parsed->Get("output-dir");
    spmd.reference = parsed->Has("reference");
    if (parsed->Has("collective-timeout-ms")) {
      StatusOr<int> ms = ParseIntOption("collective-timeout-ms",
                                        parsed->Get("collective-timeout-ms"), 1, 86400000);
      if (!ms.ok()) return ReportUsage("run", std::string(ms.status().message()), usage);
      spmd.timeout = std::chrono::milliseconds(*ms);
    }
    spmd.argv.push_back("run");
    spmd.argv.insert(spmd.argv.end(), args.begin(), args.end());
    return RunOnGrid(spmd, parsed->Has("in-process"));
  }

  SpmdRun single;
  single.function = *function_name;
  if (parsed->Has("input")) single.inputs = parsed->values.at("input");
  single.input_per_process = parsed->Get("input-per-process");
  StatusOr<std::vector<Tensor>> read = ReadProcessInputs(single, 0, function.parameter_types());
  if (!read.ok()) return ReportError("run", read.status());
  std::vector<Tensor> inputs = *std::move(read);

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
    outputs = RunDonatingInputs(**executable, inputs, RunOptions{});
  }
  if (!outputs.ok()) return ReportError("run", outputs.status());

  if (Status emitted = EmitOutputs(parsed->Get("output-dir"), 0, false, *outputs);
      !emitted.ok()) {
    return ReportError("run", emitted);
  }
  return kExitOk;
}

}  // namespace accy::tools
