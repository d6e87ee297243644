// Shared pieces of the `accy` subcommands: a small command-line option parser, reading and
// parsing StableHLO files, choosing the function, and the exit-code convention.
//
// Everything here is called from the main thread of the `accy` program; nothing is shared.
#ifndef ACCY_TOOLS_CLI_H_
#define ACCY_TOOLS_CLI_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accy/engine.h"
#include "accy/ir.h"
#include "accy/stablehlo.h"
#include "accy/status.h"

namespace accy::tools {

// Exit codes of every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  // bad input, unsupported program, failed conformance
inline constexpr int kExitUsage = 2;  // bad command line

// One option a subcommand accepts: `--name VALUE` / `--name=VALUE`, or a `--name` flag.
struct OptionSpec {
  std::string name;  // without the dashes
  bool takes_value = false;
  bool repeatable = false;
};

struct ParsedArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> values;  // option -> values in order
  bool help = false;                                       // -h or --help anywhere

  bool Has(const std::string& name) const { return values.count(name) > 0; }
  // The value of a single-valued option, or `fallback`.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
};

// Parses `args` (after the subcommand name). `--` ends the options. kInvalidArgument naming the
// option for unknown options, a missing or empty value, a value given to a flag, or a
// non-repeatable option given twice.
StatusOr<ParsedArgs> ParseArgs(std::span<const std::string> args,
                               std::span<const OptionSpec> specs);

// Parses an integer option in [min, max]; kInvalidArgument naming the option otherwise.
// The parameter indices of --NAME's value over a function of `count` parameters: "all"
// (0..count-1), or a comma-separated list of indices and inclusive ranges "A-B", each within
// [0, count), none listed twice ("0,3-5" is 0, 3, 4, 5). kInvalidArgument naming the option and
// the part that is not an index, range or in bounds.
StatusOr<std::vector<int64_t>> ParseIndexListOption(const std::string& name,
                                                    const std::string& text, int64_t count);
StatusOr<int> ParseIntOption(const std::string& name, const std::string& text, int min, int max);

// Parses an integer option in [min, max] (64-bit); kInvalidArgument naming the option otherwise.
StatusOr<int64_t> ParseInt64Option(const std::string& name, const std::string& text, int64_t min,
                                   int64_t max);

// The resource-limit options of `accy run` and `accy bench`: --max-run-memory-bytes
// (EngineOptions::max_run_memory_bytes), --max-constant-bytes and --max-total-constant-bytes
// (ParseOptions). Their usage text, the specs appended to `specs`, and their values applied
// over the defaults (kInvalidArgument naming the option for a bad value).
extern const char kLimitOptionsUsage[];
std::vector<OptionSpec> WithLimitOptions(std::vector<OptionSpec> specs);
Status ApplyLimitOptions(const ParsedArgs& parsed, EngineOptions* engine, ParseOptions* parse);

// Reads and parses one StableHLO module (check ops dropped, their operands still resolved)
// under `options`, reading at most MaxStableHloTextBytes(options.max_total_constant_bytes) of
// text (src/util/text_file.h). Errors carry the path in front: "FILE:line:column: message" for
// syntax errors, "FILE: message" otherwise (a directory, a file over the limit, or a module
// without functions, e.g. an empty file: kInvalidArgument). `check_ops`, when given, gets
// CountCheckOps of the text.
StatusOr<std::unique_ptr<Module>> LoadModule(const std::string& path,
                                             const ParseOptions& options = {},
                                             int64_t* check_ops = nullptr);

// How many check ops (`check.expect_*`, in any of their spellings) the text holds outside `//`
// comments, by name: what `accy run` does not evaluate and warns about.
int64_t CountCheckOps(std::string_view text);

// `requested` if given (kInvalidArgument listing the module's functions when absent), else
// "main", else the module's only function.
StatusOr<std::string> ChooseFunction(const Module& module, const std::string& requested);

// Prints "accy <command>: <message>" to stderr and returns kExitError.
int ReportError(const std::string& command, const Status& status);
// Prints "accy <command>: <message>" and the usage line to stderr; returns kExitUsage.
int ReportUsage(const std::string& command, const std::string& message, const char* usage);

// Busy and total (busy + idle + iowait) clock ticks of the whole machine from /proc/stat's first
// line, as the load monitor reads them (ParseProcStatCpu, src/runtime/load_monitor.h); false
// when /proc/stat cannot be read or parsed. For the benchmarks' other-process CPU share.
bool MachineJiffies(int64_t* busy, int64_t* total);

}  // namespace accy::tools

#endif  // ACCY_TOOLS_CLI_H_
