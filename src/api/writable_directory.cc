// EnsureWritableDirectory (writable_directory.h).
#include "src/api/writable_directory.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "src/util/str_cat.h"

namespace accy {

Status EnsureWritableDirectory(std::string_view path, std::string_view option) {
  if (path.empty()) return absl::OkStatus();
  const std::filesystem::path dir{std::string(path)};
  std::error_code error;
  const bool exists = std::filesystem::exists(dir, error);
  if (exists && !std::filesystem::is_directory(dir, error)) {
    return absl::InvalidArgumentError(
        StrCat("EngineOptions: ", option, " '", path, "' exists and is not a directory"));
  }
  if (!exists) {
    std::filesystem::create_directories(dir, error);
    if (error || !std::filesystem::is_directory(dir)) {
      return absl::InvalidArgumentError(StrCat("EngineOptions: ", option, " '", path,
                                               "' cannot be created: ",
                                               error ? error.message() : "not a directory"));
    }
  }
  // Permission bits do not tell (root ignores them, read-only mounts keep them): try a file.
  // mkstemp picks a name no file has (retrying past any left by a process that died before
  // removing its probe: a name built from the pid alone collided with those).
  std::string probe = (dir / ".accy-write-probe-XXXXXX").string();
  const int fd = ::mkostemp(probe.data(), O_CLOEXEC);
  if (fd < 0) {
    const int saved = errno;
    return absl::PermissionDeniedError(StrCat("EngineOptions: ", option, " '", path,
                                              "' is not writable: ", std::strerror(saved)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return absl::OkStatus();
}

}  // namespace accy
