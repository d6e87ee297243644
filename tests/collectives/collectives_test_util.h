// Shared by the communicator tests (communicator_test.cc, gloo_communicator_test.cc).
#ifndef ACCY_TESTS_COLLECTIVES_COLLECTIVES_TEST_UTIL_H_
#define ACCY_TESTS_COLLECTIVES_COLLECTIVES_TEST_UTIL_H_

#include <stdlib.h>

#include <filesystem>
#include <string>

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

}  // namespace accy

#endif  // ACCY_TESTS_COLLECTIVES_COLLECTIVES_TEST_UTIL_H_
