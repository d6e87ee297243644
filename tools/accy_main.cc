// `accy`: the command-line program. Subcommands (tools/commands.h):
//   accy demo           the transformer block demo (make run's main job)
//   accy [demo-small]   the small built-in demo, the default
//   accy run            compile and run a StableHLO file on .npy inputs
//   accy plan           print the plan of a StableHLO function
//   accy conformance    run StableHLO test programs and evaluate their checks
//   accy bench          compile a StableHLO file cold and time its runs
//   accy bench-load     the demo block and the MLP at 1 and T threads, idle and loaded
//   accy bench-collectives  all_reduce across W processes: accy against raw Gloo
//   accy fuzz           the differential program fuzzer
// Exit codes: 0 ok, 1 error or failed conformance, 2 bad command line (tools/cli.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "accy/isa.h"
#include "jit/jit_compiler.h"
#include "kernels/onednn_isa.h"
#include "tools/cli.h"
#include "tools/commands.h"

namespace {

constexpr char kUsage[] =
    "usage: accy [COMMAND] [ARGS...]\n"
    "commands:\n"
    "  demo          build, compile, time and check a GPT-2-small transformer block\n"
    "  demo-small    build, compile and run the small built-in demo program (the default)\n"
    "  run           compile a StableHLO .mlir function through the JIT and run it on .npy inputs\n"
    "  plan          print the plan (work items) of a StableHLO function as text, JSON or DOT\n"
    "  conformance   run StableHLO test programs (.mlir with check ops) and evaluate their checks\n"
    "  bench         compile a StableHLO function cold, time its runs, report kernels and memory\n"
    "  bench-load    time the demo block and the MLP at 1 and 2 threads, idle and beside spinners\n"
    "  bench-collectives  all_reduce across 2 and 4 processes on loopback: accy's communicator\n"
    "                and executables against Gloo's own allreduce in the same run\n"
    "  fuzz          differential fuzzer: random programs through the JIT and the reference\n"
    "                evaluator at 1 and 2 threads, compared per op\n"
    "`accy COMMAND --help` describes each command. `accy --version`: the version, the host CPU\n"
    "and the ISA in use (ACCY_MAX_ISA=avx2|avx512|x86-64 caps it), the oneDNN and LLVM versions.\n";

// `accy --version`: what a benchmark or bug report needs to name the machine and the code paths.
int PrintVersion() {
  std::printf("accy %s\n", ACCY_VERSION_STRING);
  std::printf("host CPU: %s (LLVM CPU %s)\n", accy::HostCpuDescription().c_str(),
              accy::jit::LlvmHostCpuName().c_str());
  const char* cap = std::getenv("ACCY_MAX_ISA");
  accy::StatusOr<accy::Isa> isa = accy::kernels::ApplyOneDnnIsaCap();
  if (!isa.ok()) {
    std::fprintf(stderr, "accy: %s\n", std::string(isa.status().message()).c_str());
    return accy::tools::kExitError;
  }
  std::printf("ISA in use: %s (ACCY_MAX_ISA %s)\n", std::string(accy::IsaName(*isa)).c_str(),
              cap != nullptr && *cap != '\0' ? cap : "unset");
  std::printf("oneDNN %s, effective ISA %s\n", accy::kernels::OneDnnVersion().c_str(),
              accy::kernels::OneDnnEffectiveIsa().c_str());
  std::printf("LLVM %s\n", accy::jit::LlvmVersion().c_str());
  return accy::tools::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace accy::tools;
  const std::string command = argc > 1 ? argv[1] : "demo-small";
  const std::vector<std::string> args(argv + (argc > 1 ? 2 : 1), argv + argc);
  if (command == "--version" || command == "version") return PrintVersion();
  if (command == "demo") return DemoCommand(args);
  if (command == "demo-small") return DemoSmallCommand(args);
  if (command == "run") return RunCommand(args);
  if (command == "plan") return PlanCommand(args);
  if (command == "conformance") return ConformanceCommand(args);
  if (command == "bench") return BenchCommand(args);
  if (command == "bench-load") return BenchLoadCommand(args);
  if (command == "bench-collectives") return BenchCollectivesCommand(args);
  if (command == "fuzz") return FuzzCommand(args);
  if (command == "-h" || command == "--help" || command == "help") {
    std::printf("%s", kUsage);
    return kExitOk;
  }
  std::fprintf(stderr, "accy: unknown command '%s'\n%s", command.c_str(), kUsage);
  return kExitUsage;
}
