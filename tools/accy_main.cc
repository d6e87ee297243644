// `accy`: the command-line program. Subcommands (tools/commands.h):
//   accy demo           the transformer block demo (make run's main job)
//   accy [demo-small]   the small built-in demo, the default
//   accy run            compile and run a StableHLO file on .npy inputs
//   accy plan           print the plan of a StableHLO function
//   accy conformance    run StableHLO test programs and evaluate their checks
// Exit codes: 0 ok, 1 error or failed conformance, 2 bad command line (tools/cli.h).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

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
    "`accy COMMAND --help` describes each command.\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace accy::tools;
  const std::string command = argc > 1 ? argv[1] : "demo-small";
  const std::vector<std::string> args(argv + (argc > 1 ? 2 : 1), argv + argc);
  if (command == "demo") return DemoCommand(args);
  if (command == "demo-small") return DemoSmallCommand(args);
  if (command == "run") return RunCommand(args);
  if (command == "plan") return PlanCommand(args);
  if (command == "conformance") return ConformanceCommand(args);
  if (command == "-h" || command == "--help" || command == "help") {
    std::printf("%s", kUsage);
    return kExitOk;
  }
  std::fprintf(stderr, "accy: unknown command '%s'\n%s", command.c_str(), kUsage);
  return kExitUsage;
}
