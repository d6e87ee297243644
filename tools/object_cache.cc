// The subcommands' object cache folder (object_cache.h).
#include "tools/object_cache.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "src/api/writable_directory.h"

namespace accy::tools {

const char kCacheOptionsUsage[] =
    "  --cache-dir DIR  object cache folder (compiled kernels are reused across runs; created\n"
    "                   if missing). Default: $XDG_CACHE_HOME/accy, else ~/.cache/accy\n"
    "  --no-cache       compile every kernel with LLVM; read and write no cache\n";

std::vector<OptionSpec> WithCacheOptions(std::vector<OptionSpec> specs) {
  specs.push_back({"cache-dir", true, false});
  specs.push_back({"no-cache", false, false});
  return specs;
}

std::string DefaultCacheDir() {
  // XDG base directory spec: a relative (or empty) XDG_CACHE_HOME is invalid and ignored.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return (std::filesystem::path(xdg) / "accy").string();
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') {
    return (std::filesystem::path(home) / ".cache" / "accy").string();
  }
  return "";
}

StatusOr<std::string> ResolveCacheDir(const ParsedArgs& parsed, const std::string& command) {
  if (parsed.Has("no-cache") && parsed.Has("cache-dir")) {
    return absl::InvalidArgumentError("--no-cache and --cache-dir exclude each other");
  }
  if (parsed.Has("no-cache")) return std::string();
  if (parsed.Has("cache-dir")) return parsed.Get("cache-dir");  // never empty (ParseArgs)
  std::string dir = DefaultCacheDir();
  // The default is a convenience: when it is unusable the command still runs, without a cache.
  if (Status usable = EnsureWritableDirectory(dir, "cache_dir"); !usable.ok()) {
    std::fprintf(stderr, "accy %s: warning: running without an object cache: %s\n",
                 command.c_str(), std::string(usable.message()).c_str());
    return std::string();
  }
  return dir;
}

}  // namespace accy::tools
