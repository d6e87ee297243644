// EnsureWritableDirectory: the up-front check Engine::Create makes of the folders it will write
// (EngineOptions::cache_dir and dump_dir), so a bad path fails at set-up naming the option and
// the path instead of at the first Compile. Stateless; safe from any thread and process (the
// probe file's name comes from mkstemp).
#ifndef ACCY_SRC_API_WRITABLE_DIRECTORY_H_
#define ACCY_SRC_API_WRITABLE_DIRECTORY_H_

#include <string_view>

#include "accy/status.h"

namespace accy {

// Creates `path` (and its missing parents) when it does not exist, then proves it writable by
// creating and removing an empty probe file in it. `option` names the path in messages
// ("cache_dir"). An empty `path` is OK (the option is off). Errors, each naming `option` and
// `path`: kInvalidArgument when the folder cannot be created (a parent is a regular file, ...)
// or `path` exists and is not a folder; kPermissionDenied when a file cannot be created in it
// (read-only mount, missing permissions), with the system's reason.
Status EnsureWritableDirectory(std::string_view path, std::string_view option);

}  // namespace accy

#endif  // ACCY_SRC_API_WRITABLE_DIRECTORY_H_
