// Internal to tests/tools: the fixture of the `accy` program tests (cli_test.cc and the
// cli_*_test.cc, *_command_test.cc files beside it): a fresh folder per test, and the built binary
// (ACCY_CLI_PATH) run in it with its output and exit code (0 ok, 1 error, 2 bad command line).
#ifndef ACCY_TESTS_TOOLS_CLI_TEST_UTIL_H_
#define ACCY_TESTS_TOOLS_CLI_TEST_UTIL_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "accy/tensor.h"

namespace accy::tools {

namespace fs = std::filesystem;

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// A fresh folder per test, removed afterwards.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("accy_cli_test_") + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  // Runs `accy ARGS` in the test folder, with the default object cache inside it (not in the
  // user's ~/.cache).
  CommandResult Accy(const std::string& args) {
    return AccyWithEnv("XDG_CACHE_HOME='" + (dir_ / "xdg").string() + "'", args);
  }
  // Runs `env ENV accy ARGS` in the test folder (ENV: NAME=VALUE or -u NAME words).
  CommandResult AccyWithEnv(const std::string& env, const std::string& args) {
    const std::string command = "cd '" + dir_.string() + "' && env " + env + " '" +
                                std::string(ACCY_CLI_PATH) + "' " + args + " 2>&1";
    CommandResult result;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return result;
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
    const int status = ::pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
  }

  fs::path dir_;
};

// Two parameters, two results of different element types.
inline constexpr char kAddProgram[] = R"(
module @add {
  func.func public @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>) {
    %0 = stablehlo.add %a, %b : tensor<2x2xf32>
    %1 = stablehlo.convert %0 : (tensor<2x2xf32>) -> tensor<2x2xi32>
    return %0, %1 : tensor<2x2xf32>, tensor<2x2xi32>
  }
}
)";

inline Tensor F32Matrix(std::vector<float> values) {
  return *Tensor::FromVector<float>(*TensorType::Create(ElementType::kF32, {2, 2}), values);
}

}  // namespace accy::tools

#endif  // ACCY_TESTS_TOOLS_CLI_TEST_UTIL_H_
