// SafeFileName: a module or function name made fit to be one file name in a dump folder.
// StableHLO symbol names may hold any character (`@"a/../b"`); a dump must never be written
// outside its folder, nor fail because a name holds a '/'. Stateless, header-only.
#ifndef ACCY_SRC_UTIL_FILE_NAME_H_
#define ACCY_SRC_UTIL_FILE_NAME_H_

#include <string>
#include <string_view>

namespace accy {

// `name` with every character other than ASCII letters, digits, '_', '-' and '.' replaced by
// '_', and a leading '.' too (no hidden files, no ".."); "_" for an empty name. At most 128
// characters are kept.
inline std::string SafeFileName(std::string_view name) {
  std::string safe;
  for (char c : name.substr(0, 128)) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '-' || (c == '.' && !safe.empty());
    safe.push_back(plain ? c : '_');
  }
  return safe.empty() ? "_" : safe;
}

}  // namespace accy

#endif  // ACCY_SRC_UTIL_FILE_NAME_H_
