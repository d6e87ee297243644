// Shared by the collectives tests: temporary store folders, one thread per rank, environment
// variables, and a grid of in-process threads running one function per process.
#ifndef ACCY_TESTS_COLLECTIVES_COLLECTIVES_TEST_UTIL_H_
#define ACCY_TESTS_COLLECTIVES_COLLECTIVES_TEST_UTIL_H_

#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "accy/collectives.h"
#include "accy/status.h"
#include "accy/tensor.h"
#include "gtest/gtest.h"

namespace accy {

// A fresh folder under gtest's temporary folder ("<prefix>XXXXXX"; a Gloo file store),
// removed with its content when destroyed; path() is empty when it could not be created.
class TempFolder {
 public:
  explicit TempFolder(const std::string& prefix = "accy-collectives-") {
    std::string pattern = ::testing::TempDir() + prefix + "XXXXXX";
    path_ = mkdtemp(pattern.data()) != nullptr ? pattern : "";
  }
  ~TempFolder() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs fn(rank) on one thread per rank and joins them.
inline void OnEachRank(int size, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) threads.emplace_back(fn, rank);
  for (std::thread& thread : threads) thread.join();
}

// Sets or unsets (null value) environment variables for the life of the object.
class ScopedEnvironment {
 public:
  explicit ScopedEnvironment(std::vector<std::pair<std::string, const char*>> variables) {
    for (const auto& [name, value] : variables) {
      const char* old = std::getenv(name.c_str());
      saved_.push_back({name, old != nullptr, old != nullptr ? old : ""});
      if (value != nullptr) {
        setenv(name.c_str(), value, 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  ~ScopedEnvironment() {
    for (const Saved& saved : saved_) {
      if (saved.was_set) {
        setenv(saved.name.c_str(), saved.value.c_str(), 1);
      } else {
        unsetenv(saved.name.c_str());
      }
    }
  }

 private:
  struct Saved {
    std::string name;
    bool was_set;
    std::string value;
  };
  std::vector<Saved> saved_;
};

// Runs fn(process, its communicator) on one thread per process of an in-process world of
// `world`: the per-process outputs, or the first process's error (a failing process aborts the
// world, so its peers do not wait for it until `timeout`).
using ProcessFn = std::function<StatusOr<std::vector<Tensor>>(int process, Communicator&)>;

inline StatusOr<std::vector<std::vector<Tensor>>> RunGrid(int world, const ProcessFn& fn,
                                                   std::chrono::milliseconds timeout =
                                                       std::chrono::seconds(20)) {
  CommunicatorOptions options;
  options.timeout = timeout;
  ACCY_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Communicator>> communicators,
                        CreateInProcessCommunicators(world, options));
  std::vector<StatusOr<std::vector<Tensor>>> outcomes(static_cast<size_t>(world),
                                                      absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int p = 0; p < world; ++p) {
    threads.emplace_back([&, p] {
      outcomes[static_cast<size_t>(p)] = fn(p, *communicators[static_cast<size_t>(p)]);
      if (!outcomes[static_cast<size_t>(p)].ok()) {
        communicators[static_cast<size_t>(p)]->Abort(
            std::string(outcomes[static_cast<size_t>(p)].status().message()));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<std::vector<Tensor>> out;
  for (auto& outcome : outcomes) {
    if (!outcome.ok()) return outcome.status();
    out.push_back(*std::move(outcome));
  }
  return out;
}

}  // namespace accy

#endif  // ACCY_TESTS_COLLECTIVES_COLLECTIVES_TEST_UTIL_H_
