// Shared by the communicator tests (communicator_test.cc, gloo_communicator_test.cc,
// gloo_redis_test.cc).
#ifndef ACCY_TESTS_COLLECTIVES_COLLECTIVES_TEST_UTIL_H_
#define ACCY_TESTS_COLLECTIVES_COLLECTIVES_TEST_UTIL_H_

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

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

}  // namespace accy

#endif  // ACCY_TESTS_COLLECTIVES_COLLECTIVES_TEST_UTIL_H_
