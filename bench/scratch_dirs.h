// Scratch folders for benchmarks: made fresh under the system temp directory and removed when
// the benchmark process exits normally, so repeated runs leave nothing behind in /tmp.
#ifndef ACCY_BENCH_SCRATCH_DIRS_H_
#define ACCY_BENCH_SCRATCH_DIRS_H_

#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace accy::bench {

// An empty folder "accy-bench-<pid>-<name>-<n>" under std::filesystem::temp_directory_path(),
// unique within the process; removed (with its contents) at exit. Throws
// std::filesystem::filesystem_error when it cannot be made.
inline std::filesystem::path ScratchDir(const std::string& name) {
  struct Registry {
    std::mutex mutex;
    std::vector<std::filesystem::path> dirs;
    int counter = 0;
    ~Registry() {
      for (const std::filesystem::path& dir : dirs) {
        std::error_code ignored;  // best effort: a folder already gone is fine
        std::filesystem::remove_all(dir, ignored);
      }
    }
  };
  static Registry registry;
  std::lock_guard<std::mutex> lock(registry.mutex);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("accy-bench-" + std::to_string(::getpid()) + "-" + name + "-" +
       std::to_string(registry.counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  registry.dirs.push_back(dir);
  return dir;
}

}  // namespace accy::bench

#endif  // ACCY_BENCH_SCRATCH_DIRS_H_
