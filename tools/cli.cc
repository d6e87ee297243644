// Shared pieces of the `accy` subcommands (cli.h).
#include "tools/cli.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_split.h"
#include "accy/stablehlo.h"
#include "src/runtime/load_monitor.h"
#include "src/util/str_cat.h"
#include "src/util/text_file.h"

namespace accy::tools {

std::string ParsedArgs::Get(const std::string& name, const std::string& fallback) const {
  auto it = values.find(name);
  return it == values.end() || it->second.empty() ? fallback : it->second.back();
}

StatusOr<ParsedArgs> ParseArgs(std::span<const std::string> args,
                               std::span<const OptionSpec> specs) {
  ParsedArgs parsed;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      parsed.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      parsed.help = true;
      continue;
    }
    if (!arg.starts_with("--")) return absl::InvalidArgumentError(StrCat("unknown option ", arg));
    const size_t equals = arg.find('=');
    const std::string name =
        arg.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& candidate : specs) {
      if (candidate.name == name) spec = &candidate;
    }
    if (spec == nullptr) return absl::InvalidArgumentError(StrCat("unknown option --", name));
    std::string value;
    if (!spec->takes_value) {
      if (equals != std::string::npos) {
        return absl::InvalidArgumentError(StrCat("--", name, " takes no value"));
      }
    } else if (equals != std::string::npos) {
      value = arg.substr(equals + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(StrCat("--", name, " needs a value"));
    }
    // No option's value may be empty: `--output-dir ""` or `--function ""` (a shell variable
    // left unset) would otherwise fall back to the option's default without a word.
    if (spec->takes_value && value.empty()) {
      return absl::InvalidArgumentError(StrCat("--", name, " needs a value, got an empty one"));
    }
    std::vector<std::string>& slot = parsed.values[name];
    if (!slot.empty() && !spec->repeatable) {
      return absl::InvalidArgumentError(StrCat("--", name, " given more than once"));
    }
    slot.push_back(std::move(value));
  }
  return parsed;
}

StatusOr<int64_t> ParseInt64Option(const std::string& name, const std::string& text, int64_t min,
                                   int64_t max) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || ptr != end || value < min || value > max) {
    return absl::InvalidArgumentError(
        StrCat("--", name, " takes an integer in [", min, ", ", max, "], got '", text, "'"));
  }
  return value;
}

StatusOr<std::vector<int64_t>> ParseIndexListOption(const std::string& name,
                                                    const std::string& text, int64_t count) {
  std::vector<int64_t> indices;
  if (text == "all") {
    for (int64_t i = 0; i < count; ++i) indices.push_back(i);
    return indices;
  }
  auto bad = [&](std::string_view part, std::string_view why) {
    return absl::InvalidArgumentError(StrCat("--", name, ": '", part, "' ", why,
                                             " (expected all, or indices and ranges A-B of the ",
                                             count, " parameters, e.g. 0,3-5)"));
  };
  auto parse = [&](std::string_view digits, int64_t& value) {
    const char* end = digits.data() + digits.size();
    auto [ptr, error] = std::from_chars(digits.data(), end, value);
    return !digits.empty() && error == std::errc() && ptr == end;
  };
  std::vector<bool> listed(static_cast<size_t>(std::max<int64_t>(count, 0)), false);
  for (absl::string_view piece : absl::StrSplit(text, ',')) {
    const std::string_view part(piece.data(), piece.size());
    const size_t dash = part.find('-', 1);
    int64_t first = 0, last = 0;
    if (dash == std::string_view::npos) {
      if (!parse(part, first)) return bad(part, "is not an index or range");
      last = first;
    } else if (!parse(part.substr(0, dash), first) || !parse(part.substr(dash + 1), last)) {
      return bad(part, "is not an index or range");
    }
    if (first > last) return bad(part, "is a range that ends before it starts");
    if (first < 0 || last >= count) return bad(part, "is out of range");
    for (int64_t i = first; i <= last; ++i) {
      if (listed[static_cast<size_t>(i)]) return bad(part, StrCat("repeats parameter ", i, ", already listed"));
      listed[static_cast<size_t>(i)] = true;
      indices.push_back(i);
    }
  }
  return indices;
}

StatusOr<int> ParseIntOption(const std::string& name, const std::string& text, int min, int max) {
  ACCY_ASSIGN_OR_RETURN(int64_t value, ParseInt64Option(name, text, min, max));
  return static_cast<int>(value);  // within [min, max], so it fits
}

const char kLimitOptionsUsage[] =
    "  --max-run-memory-bytes N\n"
    "                     refuse (exit 1) a program whose one run needs more than N bytes of\n"
    "                     arena, scratch and loop state (0 = unlimited; default 16 GiB)\n"
    "  --max-constant-bytes N, --max-total-constant-bytes N\n"
    "                     refuse (exit 1) a file with a constant of more than N bytes (default\n"
    "                     256 MiB) or constants of more than N bytes in all (default 1 GiB);\n"
    "                     splats count at their expanded size\n";

std::vector<OptionSpec> WithLimitOptions(std::vector<OptionSpec> specs) {
  specs.push_back({"max-run-memory-bytes", true, false});
  specs.push_back({"max-constant-bytes", true, false});
  specs.push_back({"max-total-constant-bytes", true, false});
  return specs;
}

Status ApplyLimitOptions(const ParsedArgs& parsed, EngineOptions* engine, ParseOptions* parse) {
  constexpr int64_t kMax = INT64_MAX;
  if (parsed.Has("max-run-memory-bytes")) {
    ACCY_ASSIGN_OR_RETURN(engine->max_run_memory_bytes,
                          ParseInt64Option("max-run-memory-bytes",
                                           parsed.Get("max-run-memory-bytes"), 0, kMax));
  }
  if (parsed.Has("max-constant-bytes")) {
    ACCY_ASSIGN_OR_RETURN(parse->max_constant_bytes,
                          ParseInt64Option("max-constant-bytes", parsed.Get("max-constant-bytes"),
                                           1, kMax));
  }
  if (parsed.Has("max-total-constant-bytes")) {
    ACCY_ASSIGN_OR_RETURN(parse->max_total_constant_bytes,
                          ParseInt64Option("max-total-constant-bytes",
                                           parsed.Get("max-total-constant-bytes"), 1, kMax));
  }
  return absl::OkStatus();
}

int64_t CountCheckOps(std::string_view text) {
  int64_t count = 0;
  for (size_t line_start = 0; line_start < text.size();) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view line = text.substr(line_start, line_end - line_start);
    line = line.substr(0, line.find("//"));  // MLIR comments run to the end of the line
    for (size_t at = line.find("check.expect_"); at != std::string_view::npos;
         at = line.find("check.expect_", at + 1)) {
      ++count;
    }
    line_start = line_end + 1;
  }
  return count;
}

StatusOr<std::unique_ptr<Module>> LoadModule(const std::string& path, const ParseOptions& options,
                                             int64_t* check_ops) {
  if (path.empty()) return absl::InvalidArgumentError("the StableHLO file name is empty");
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return absl::InvalidArgumentError(StrCat(path, ": is a directory, not a StableHLO file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat(path, ": cannot open"));
  StatusOr<std::string> text =
      ReadStableHloText(in, MaxStableHloTextBytes(options.max_total_constant_bytes));
  if (!text.ok()) return Status(text.status().code(), StrCat(path, ": ", text.status().message()));
  if (check_ops != nullptr) *check_ops = CountCheckOps(*text);
  StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(*text, options);
  if (!module.ok()) {
    const std::string message(module.status().message());
    // Parse errors start with "line:column: "; keep the compiler convention FILE:line:column.
    const bool located = !message.empty() && std::isdigit(static_cast<unsigned char>(message[0]));
    return Status(module.status().code(), StrCat(path, located ? ":" : ": ", message));
  }
  if ((*module)->functions().empty()) {
    return absl::InvalidArgumentError(StrCat(path, ": the module has no functions"));
  }
  return module;
}

StatusOr<std::string> ChooseFunction(const Module& module, const std::string& requested) {
  if (!requested.empty() && module.FindFunction(requested) != nullptr) return requested;
  if (requested.empty() && module.FindFunction("main") != nullptr) return std::string("main");
  if (requested.empty() && module.functions().size() == 1) return module.functions()[0]->name();
  std::string names;
  for (const auto& function : module.functions()) {
    names += StrCat(names.empty() ? "" : ", ", "@", function->name());
  }
  if (names.empty()) names = "none";
  return absl::InvalidArgumentError(
      requested.empty()
          ? StrCat("no function @main and several functions; choose one with --function (", names,
                   ")")
          : StrCat("no function @", requested, " in the module (functions: ", names,
                   "; private functions are inlined into their callers at import and cannot be "
                   "chosen)"));
}

int ReportError(const std::string& command, const Status& status) {
  std::fprintf(stderr, "accy %s: %s\n", command.c_str(), std::string(status.message()).c_str());
  return kExitError;
}

int ReportUsage(const std::string& command, const std::string& message, const char* usage) {
  std::fprintf(stderr, "accy %s: %s\n%s", command.c_str(), message.c_str(), usage);
  return kExitUsage;
}

bool MachineJiffies(int64_t* busy, int64_t* total) {
  std::ifstream in("/proc/stat");
  std::string line;
  MachineSample sample;
  if (!std::getline(in, line) || !ParseProcStatCpu(line, /*ns_per_tick=*/1, &sample)) {
    return false;
  }
  *busy = sample.busy_ns;
  *total = sample.busy_ns + sample.idle_ns;
  return true;
}

}  // namespace accy::tools
