// The `accy` subcommands. Each takes the arguments after its name, prints to stdout/stderr and
// returns the process exit code (cli.h: 0 ok, 1 error, 2 bad command line). `--help` on each.
// Called from main() only; not thread-safe.
#ifndef ACCY_TOOLS_COMMANDS_H_
#define ACCY_TOOLS_COMMANDS_H_

#include <span>
#include <string>

namespace accy::tools {

// accy demo-small: the built-in program (builder API) compiled by the engine and checked against
// the reference evaluator; the default when no subcommand is given.
int DemoSmallCommand(std::span<const std::string> args);
// accy demo [--threads N] [--seq L] [--runs R]: the GPT-2-small transformer block
// (tools/transformer_block.h) compiled cold and warm, timed, and checked against the reference
// evaluator; make run's main job.
int DemoCommand(std::span<const std::string> args);
// accy run FILE.mlir [--function NAME] [--input FILE.npy]... [--threads N] [--output-dir DIR]
int RunCommand(std::span<const std::string> args);
// accy plan FILE.mlir [--function NAME] [--format text|json|dot] [--dot]
int PlanCommand(std::span<const std::string> args);
// accy conformance DIR_OR_FILE... [--jobs N]
int ConformanceCommand(std::span<const std::string> args);
// accy bench FILE.mlir [--input FILE.npy]... | [--random-inputs SEED] [--threads N] [--runs R]
//                      [--profile] [--format text|json]: cold compile, run times, memory
int BenchCommand(std::span<const std::string> args);
int BenchLoadCommand(std::span<const std::string> args);
// accy bench-collectives [--processes 2,4] [--sizes 4,64MiB] [--reps R] [--format text|json]:
// all_reduce across W forked processes on TCP loopback, accy against raw Gloo in the same run
// (tools/collectives_bench.h)
int BenchCollectivesCommand(std::span<const std::string> args);
// accy fuzz [--seed S] [--programs N] [--first I] [--threads-list 1,2] [--out DIR] ...: the
// differential program fuzzer (src/testing/fuzz_batch.h)
int FuzzCommand(std::span<const std::string> args);

}  // namespace accy::tools

#endif  // ACCY_TOOLS_COMMANDS_H_
