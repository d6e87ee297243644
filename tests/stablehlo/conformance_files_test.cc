// Parses every StableHLO conformance program in ../shared/conformance/stablehlo (beside the
// project root; ACCY_CONFORMANCE_DIR overrides): each must parse, with its checks, or fail with
// kUnimplemented naming what accy does not support. The test is skipped (not passed) when the
// folder is absent.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

namespace fs = std::filesystem;

// The folder from ACCY_CONFORMANCE_DIR, else found from this source file's path (the repository
// root is three levels up) or by walking up from the working directory.
std::optional<fs::path> ConformanceDir() {
  if (const char* env = std::getenv("ACCY_CONFORMANCE_DIR")) return fs::path(env);
  std::vector<fs::path> starts = {fs::path(__FILE__).parent_path(), fs::current_path()};
  for (fs::path dir : starts) {
    for (int up = 0; up < 6 && !dir.empty(); ++up) {
      const fs::path candidate = dir / ".." / "shared" / "conformance" / "stablehlo";
      std::error_code error;
      if (fs::is_directory(candidate, error)) return fs::weakly_canonical(candidate);
      if (dir == dir.parent_path()) break;
      dir = dir.parent_path();
    }
  }
  return std::nullopt;
}

std::vector<fs::path> MlirFiles(const fs::path& root) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && entry.path().extension() == ".mlir") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(ConformanceFilesTest, EveryProgramParsesOrNamesWhatIsUnsupported) {
  const std::optional<fs::path> root = ConformanceDir();
  if (!root.has_value()) GTEST_SKIP() << "../shared/conformance/stablehlo not found";
  const std::vector<fs::path> files = MlirFiles(*root);
  ASSERT_FALSE(files.empty()) << *root;
  int parsed = 0;
  int unsupported = 0;
  int total_checks = 0;
  for (const fs::path& file : files) {
    const std::string text = ReadFile(file);
    StatusOr<std::vector<StableHloProgram>> programs = ParseStableHloProgramSplit(text);
    if (!programs.ok()) {
      EXPECT_EQ(programs.status().code(), absl::StatusCode::kUnimplemented)
          << file << ": " << programs.status();
      EXPECT_THAT(std::string(programs.status().message()), ::testing::HasSubstr("not supported"))
          << file;
      std::cout << "[ unsupported ] " << file.filename().string() << ": "
                << programs.status().message() << "\n";
      ++unsupported;
      continue;
    }
    ++parsed;
    for (const StableHloProgram& program : *programs) {
      ASSERT_NE(program.module, nullptr);
      EXPECT_FALSE(program.module->functions().empty()) << file;
      // Every conformance program checks its result, with check ops or (the reference
      // interpreter's own I/O tests, which the runner skips) FileCheck lines, or is tested by
      // running it: functions that take and return nothing (the tuple case).
      bool run_only = true;
      for (const auto& function : program.module->functions()) {
        run_only = run_only && function->parameter_types().empty() &&
                   function->result_types().empty();
      }
      EXPECT_TRUE(!program.checks.empty() || text.find("// CHECK") != std::string::npos ||
                  run_only)
          << file;
      total_checks += static_cast<int>(program.checks.size());
    }
  }
  std::cout << "[ conformance ] " << parsed << " parsed, " << unsupported << " unsupported, "
            << total_checks << " checks, of " << files.size() << " files in " << *root << "\n";
  EXPECT_EQ(parsed + unsupported, static_cast<int>(files.size()));
}

TEST(ConformanceFilesTest, JaxProgramInlinesInputsAndExpected) {
  const std::optional<fs::path> root = ConformanceDir();
  if (!root.has_value()) GTEST_SKIP() << "../shared/conformance/stablehlo not found";
  const fs::path file = *root / "stablehlo" / "testdata" / "reduce_float32_4_6_int32_4_6.mlir";
  if (!fs::exists(file)) GTEST_SKIP() << file << " not found";
  ASSERT_OK_AND_ASSIGN(StableHloProgram program, ParseStableHloProgram(ReadFile(file)));
  // @inputs and @expected are private and called: inlined into @main and dropped.
  ASSERT_EQ(program.module->functions().size(), 1u);
  const Function& main = *program.module->functions()[0];
  EXPECT_EQ(main.name(), "main");
  // 2 declared results, then (actual, expected) for each of the 2 checks.
  ASSERT_EQ(main.result_types().size(), 6u);
  ASSERT_EQ(program.checks.size(), 2u);
  EXPECT_EQ(program.checks[0].kind, CheckKind::kExpectClose);
  EXPECT_EQ(program.checks[0].actual_result, 2);
  EXPECT_EQ(program.checks[0].expected_result, 3);
  EXPECT_EQ(program.checks[1].kind, CheckKind::kExpectEq);
  EXPECT_EQ(program.checks[1].actual_result, 4);
  EXPECT_EQ(program.checks[1].expected_result, 5);
  EXPECT_EQ(program.checks[1].function, "main");
  EXPECT_EQ(program.checks[1].line, 19);
  EXPECT_EQ(program.checks[1].column, 5);
}

}  // namespace
}  // namespace accy
