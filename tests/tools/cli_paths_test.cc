// `accy` command-line values that are empty or name the wrong kind of path: each is a clear error
// naming what was wrong (tools/cli.cc ParseArgs and LoadModule, tools/npy.cc ReadNpyFile), never
// a silent fallback to a default. Found by a hostile-input review (2026-12-07): `--output-dir ""`
// printed the results instead, `--function ""` ran @main, `accy run ""` said ": cannot open" and
// a directory given as --input was "malformed .npy".
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"
#include "tests/tools/cli_test_util.h"
#include "tools/npy.h"

namespace accy::tools {
namespace {

using ::testing::HasSubstr;

TEST_F(CliTest, EmptyOptionValuesAreUsageErrors) {
  Write("add.mlir", kAddProgram);
  ASSERT_OK(WriteNpyFile((dir_ / "a.npy").string(), F32Matrix({1, 2, 3, 4})));
  for (const std::string option : {"--output-dir ''", "--function ''", "--output-dir=",
                                   "--cache-dir=", "--threads ''"}) {
    const CommandResult result =
        Accy("run add.mlir --input a.npy --input a.npy " + std::string(option));
    EXPECT_EQ(result.exit_code, 2) << option << ": " << result.output;
    const std::string name = option.substr(0, option.find_first_of(" ="));
    EXPECT_THAT(result.output, HasSubstr("accy run: " + name + " needs a value, got an empty one"))
        << option;
    EXPECT_THAT(result.output, HasSubstr("usage: accy run")) << option;
  }
  const CommandResult bench = Accy("bench add.mlir --random-inputs 1 --function=");
  EXPECT_EQ(bench.exit_code, 2) << bench.output;
  EXPECT_THAT(bench.output, HasSubstr("--function needs a value, got an empty one"));
}

TEST_F(CliTest, EmptyAndDirectoryPathsAreNamed) {
  Write("add.mlir", kAddProgram);
  ASSERT_OK(WriteNpyFile((dir_ / "a.npy").string(), F32Matrix({1, 2, 3, 4})));
  fs::create_directories(dir_ / "folder");
  const CommandResult empty_program = Accy("run ''");
  EXPECT_EQ(empty_program.exit_code, 1) << empty_program.output;
  EXPECT_THAT(empty_program.output, HasSubstr("accy run: the StableHLO file name is empty"));
  const CommandResult empty_input = Accy("run add.mlir --input a.npy --input ''");
  EXPECT_EQ(empty_input.exit_code, 2) << empty_input.output;
  EXPECT_THAT(empty_input.output, HasSubstr("--input needs a value, got an empty one"));
  const CommandResult folder_input = Accy("run add.mlir --input a.npy --input folder");
  EXPECT_EQ(folder_input.exit_code, 1) << folder_input.output;
  EXPECT_THAT(folder_input.output, HasSubstr("folder: is a directory, not a .npy file"));
}

TEST(NpyFileTest, EmptyAndDirectoryPathsAreInvalidArguments) {
  const StatusOr<Tensor> empty = ReadNpyFile("");
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.status().message(), "the .npy file name is empty");
  const std::string folder = fs::temp_directory_path().string();
  const StatusOr<Tensor> directory = ReadNpyFile(folder);
  EXPECT_EQ(directory.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(directory.status().message(), folder + ": is a directory, not a .npy file");
}

}  // namespace
}  // namespace accy::tools
