// The object cache of the `accy` subcommands that compile (run, demo-small, conformance): which
// folder EngineOptions::cache_dir gets from the --cache-dir / --no-cache options and the
// environment. Called from main() only; reads the environment, writes nothing but the folder.
#ifndef ACCY_TOOLS_OBJECT_CACHE_H_
#define ACCY_TOOLS_OBJECT_CACHE_H_

#include <string>
#include <vector>

#include "accy/status.h"
#include "tools/cli.h"

namespace accy::tools {

// Usage lines for the two options (each subcommand's --help appends them).
extern const char kCacheOptionsUsage[];

// Appends the options --cache-dir DIR and --no-cache to `specs`.
std::vector<OptionSpec> WithCacheOptions(std::vector<OptionSpec> specs);

// The default cache folder, following the XDG base directory spec: $XDG_CACHE_HOME/accy when
// that variable is an absolute path, else $HOME/.cache/accy when HOME is set (non-empty), else
// "" (no default: run without a cache).
std::string DefaultCacheDir();

// The folder for EngineOptions::cache_dir ("" = no cache). --no-cache: "". --cache-dir DIR: DIR
// as given (Engine::Create then fails naming it if it cannot be created or written).
// Otherwise DefaultCacheDir(); when that cannot be created or written, a warning naming it goes
// to stderr ("accy <command>: warning: ...") and the command runs without a cache.
// kInvalidArgument (a usage error) for --no-cache with --cache-dir, or an empty --cache-dir.
StatusOr<std::string> ResolveCacheDir(const ParsedArgs& parsed, const std::string& command);

}  // namespace accy::tools

#endif  // ACCY_TOOLS_OBJECT_CACHE_H_
