// `accy`'s object cache from the command line: where compiled objects go by default
// (XDG_CACHE_HOME, then ~/.cache), --cache-dir and --no-cache, and the errors and warnings for an
// unusable cache. Runs the built binary (ACCY_CLI_PATH) through the CliTest fixture
// (cli_test_util.h), one fresh folder per test.
#include <filesystem>
#include <string>
#include <system_error>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"
#include "tests/tools/cli_test_util.h"
#include "tools/npy.h"

namespace accy::tools {
namespace {

using ::testing::HasSubstr;

// Object files ("accy-<digest>.o") in `dir`, 0 when it does not exist.
size_t CountObjects(const fs::path& dir) {
  size_t n = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    n += entry.path().extension() == ".o" ? 1 : 0;
  }
  return n;
}

TEST_F(CliTest, RunCachesObjectsUnderXdgCacheHomeByDefault) {
  Write("add.mlir", kAddProgram);
  ASSERT_OK(WriteNpyFile((dir_ / "a.npy").string(), F32Matrix({1, 2, 3, 4})));
  const CommandResult run = Accy("run add.mlir --input a.npy --input a.npy");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const size_t objects = CountObjects(dir_ / "xdg" / "accy");
  EXPECT_GT(objects, 0u);
  // A second run loads them: the same result and no new entries.
  const CommandResult again = Accy("run add.mlir --input a.npy --input a.npy");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("result 0: tensor<2x2xf32> [2, 4, 6, 8]"));
  EXPECT_EQ(CountObjects(dir_ / "xdg" / "accy"), objects);
}

TEST_F(CliTest, DefaultCacheIsUnderHomeWhenXdgCacheHomeIsUnsetOrRelative) {
  Write("add.mlir", kAddProgram);
  ASSERT_OK(WriteNpyFile((dir_ / "a.npy").string(), F32Matrix({1, 2, 3, 4})));
  const std::string home = "HOME='" + (dir_ / "home").string() + "'";
  const CommandResult unset =
      AccyWithEnv("-u XDG_CACHE_HOME " + home, "run add.mlir --input a.npy --input a.npy");
  ASSERT_EQ(unset.exit_code, 0) << unset.output;
  EXPECT_GT(CountObjects(dir_ / "home" / ".cache" / "accy"), 0u);
  fs::remove_all(dir_ / "home");
  // The XDG spec says a relative XDG_CACHE_HOME is ignored.
  const CommandResult relative = AccyWithEnv("XDG_CACHE_HOME=relative " + home,
                                             "run add.mlir --input a.npy --input a.npy");
  ASSERT_EQ(relative.exit_code, 0) << relative.output;
  EXPECT_GT(CountObjects(dir_ / "home" / ".cache" / "accy"), 0u);
  EXPECT_FALSE(fs::exists(dir_ / "relative"));
}

TEST_F(CliTest, CacheDirAndNoCacheOptionsChooseTheCache) {
  Write("add.mlir", kAddProgram);
  ASSERT_OK(WriteNpyFile((dir_ / "a.npy").string(), F32Matrix({1, 2, 3, 4})));
  const CommandResult chosen = Accy("run add.mlir --input a.npy --input a.npy --cache-dir mine");
  ASSERT_EQ(chosen.exit_code, 0) << chosen.output;
  EXPECT_GT(CountObjects(dir_ / "mine"), 0u);
  EXPECT_FALSE(fs::exists(dir_ / "xdg"));
  const CommandResult none = Accy("run add.mlir --input a.npy --input a.npy --no-cache");
  ASSERT_EQ(none.exit_code, 0) << none.output;
  EXPECT_THAT(none.output, HasSubstr("result 0: tensor<2x2xf32> [2, 4, 6, 8]"));
  EXPECT_FALSE(fs::exists(dir_ / "xdg"));
  const CommandResult small = Accy("demo-small --cache-dir small");
  ASSERT_EQ(small.exit_code, 0) << small.output;
  EXPECT_GT(CountObjects(dir_ / "small"), 0u);
}

TEST_F(CliTest, UnusableCacheDirExitsOneNamingThePath) {
  Write("add.mlir", kAddProgram);
  Write("plain", "a regular file");
  ASSERT_OK(WriteNpyFile((dir_ / "a.npy").string(), F32Matrix({1, 2, 3, 4})));
  const CommandResult run =
      Accy("run add.mlir --input a.npy --input a.npy --cache-dir plain/cache");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("accy run: EngineOptions: cache_dir 'plain/cache' cannot be created"));
  const CommandResult small = Accy("demo-small --cache-dir plain");
  EXPECT_EQ(small.exit_code, 1) << small.output;
  EXPECT_THAT(small.output, HasSubstr("cache_dir 'plain' exists and is not a directory"));
}

// The default is a convenience: an unusable one warns and the command runs without a cache.
TEST_F(CliTest, UnusableDefaultCacheWarnsAndRunsWithoutIt) {
  Write("add.mlir", kAddProgram);
  Write("plain", "a regular file");
  ASSERT_OK(WriteNpyFile((dir_ / "a.npy").string(), F32Matrix({1, 2, 3, 4})));
  const CommandResult run = AccyWithEnv("XDG_CACHE_HOME='" + (dir_ / "plain").string() + "'",
                                        "run add.mlir --input a.npy --input a.npy");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("accy run: warning: running without an object cache: "
                                    "EngineOptions: cache_dir '" +
                                    (dir_ / "plain" / "accy").string() + "' cannot be created"));
  EXPECT_THAT(run.output, HasSubstr("result 0: tensor<2x2xf32> [2, 4, 6, 8]"));
}

TEST_F(CliTest, CacheOptionMisuseExitsTwoWithUsage) {
  Write("add.mlir", kAddProgram);
  const CommandResult both = Accy("run add.mlir --no-cache --cache-dir x");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.output, HasSubstr("--no-cache and --cache-dir exclude each other"));
  EXPECT_THAT(both.output, HasSubstr("usage: accy run"));
  const CommandResult empty = Accy("run add.mlir --cache-dir=");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_THAT(empty.output, HasSubstr("--cache-dir needs a value, got an empty one"));
  EXPECT_EQ(Accy("demo-small --no-cache=yes").exit_code, 2);
  EXPECT_EQ(Accy("conformance x --no-cache --cache-dir y").exit_code, 2);
  for (const char* command : {"run", "demo-small", "conformance"}) {
    const CommandResult help = Accy(std::string(command) + " --help");
    EXPECT_THAT(help.output, HasSubstr("--cache-dir DIR")) << command;
    EXPECT_THAT(help.output, HasSubstr("~/.cache/accy")) << command;
    EXPECT_THAT(help.output, HasSubstr("--no-cache")) << command;
  }
}

}  // namespace
}  // namespace accy::tools
