// Engine::Create checks EngineOptions::cache_dir and dump_dir up front: missing folders are
// created, and a folder that cannot be created or written fails Create naming the option and path.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "accy/builder.h"
#include "accy/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A fresh folder per test, removed afterwards, holding one regular file `file`.
class EngineDirectoriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            (std::string("accy_engine_dirs_") + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    file_ = root_ / "file";
    std::ofstream(file_) << "not a directory";
  }
  void TearDown() override { fs::remove_all(root_); }

  size_t CountFiles(const fs::path& dir) {
    size_t n = 0;
    for (const auto& entry : fs::directory_iterator(dir)) n += entry.is_regular_file() ? 1 : 0;
    return n;
  }

  fs::path root_;
  fs::path file_;
};

std::unique_ptr<Module> NegateProgram() {
  Builder builder("negate");
  TensorType t = *TensorType::Create(ElementType::kF32, {4});
  FunctionBuilder f = *builder.BeginFunction("main", {t}, {t});
  EXPECT_OK(f.Return({*f.Negate(f.Parameter(0))}));
  return *builder.Finish();
}

TEST_F(EngineDirectoriesTest, MissingCacheAndDumpFoldersAreCreatedAndUsed) {
  EngineOptions options;
  options.cache_dir = (root_ / "a" / "b" / "cache").string();
  options.dump_dir = (root_ / "c" / "dump").string();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
  ASSERT_TRUE(fs::is_directory(options.cache_dir));
  ASSERT_TRUE(fs::is_directory(options.dump_dir));
  // The write probe leaves nothing behind.
  EXPECT_EQ(CountFiles(options.cache_dir), 0u);
  EXPECT_EQ(CountFiles(options.dump_dir), 0u);
  std::unique_ptr<Module> module = NegateProgram();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  Tensor x = *Tensor::FromVector(*TensorType::Create(ElementType::kF32, {4}),
                                 std::vector<float>{1, -2, 3.5f, 0});
  std::vector<Tensor> inputs = {x};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, exe->Run(inputs));
  EXPECT_EQ(out[0].GetAsDouble(2), -3.5);
  EXPECT_EQ(CountFiles(options.cache_dir), 1u);  // one object for the one JIT module
  EXPECT_GT(CountFiles(options.dump_dir), 0u);
  // The plan stage's text is dumped too.
  std::ifstream plan(fs::path(options.dump_dir) / "accy_main.plan.txt");
  std::string text((std::istreambuf_iterator<char>(plan)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, exe->plan_text());
  EXPECT_NE(text.find("elementwise_single ops=[negate]"), std::string::npos) << text;
}

TEST_F(EngineDirectoriesTest, ExistingWritableFoldersAreAccepted) {
  EngineOptions options;
  options.cache_dir = root_.string();
  options.dump_dir = root_.string();
  EXPECT_OK(Engine::Create(options).status());
}

// Probe files left by processes that died before removing them (named after their pid, as the
// probe once was) do not make a writable folder look unwritable, and the check leaves no file.
TEST_F(EngineDirectoriesTest, LeftoverProbeFilesDoNotFailTheCheck) {
  // Every counter this test binary's earlier engines can have reached.
  for (int counter = 0; counter < 1000; ++counter) {
    std::ofstream(root_ / (".accy-write-probe-" + std::to_string(::getpid()) + "-" +
                           std::to_string(counter)));
  }
  const size_t before = CountFiles(root_);
  EngineOptions options;
  options.cache_dir = root_.string();
  options.dump_dir = root_.string();
  for (int i = 0; i < 3; ++i) EXPECT_OK(Engine::Create(options).status());
  EXPECT_EQ(CountFiles(root_), before);
}

TEST_F(EngineDirectoriesTest, CacheDirUnderARegularFileFailsNamingThePath) {
  EngineOptions options;
  options.cache_dir = (file_ / "cache").string();
  StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(options);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(),
              HasSubstr("EngineOptions: cache_dir '" + options.cache_dir + "' cannot be created"));
  EXPECT_FALSE(fs::exists(options.cache_dir));
}

TEST_F(EngineDirectoriesTest, DumpDirUnderARegularFileFailsNamingThePath) {
  EngineOptions options;
  options.dump_dir = (file_ / "x" / "dump").string();
  StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(options);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(),
              HasSubstr("EngineOptions: dump_dir '" + options.dump_dir + "' cannot be created"));
}

TEST_F(EngineDirectoriesTest, CacheDirThatIsARegularFileFails) {
  EngineOptions options;
  options.cache_dir = file_.string();
  StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(options);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(),
              HasSubstr("cache_dir '" + file_.string() + "' exists and is not a directory"));
}

// Root ignores permission bits, so the unwritable folder is one no one can create files in.
TEST_F(EngineDirectoriesTest, UnwritableCacheDirFailsWithPermissionDenied) {
  if (!fs::is_directory("/proc/self")) GTEST_SKIP() << "no /proc on this system";
  EngineOptions options;
  options.cache_dir = "/proc/self";
  StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(options);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(engine.status().message(),
              HasSubstr("EngineOptions: cache_dir '/proc/self' is not writable: "));
}

// A cache entry that cannot be written (here its name is taken by a folder) fails Compile naming
// the entry, and leaves no temporary file behind (a break-it review found the .tmp left).
TEST_F(EngineDirectoriesTest, UnwritableCacheEntryFailsAndLeavesNoTemporaryFile) {
  std::unique_ptr<Module> module = NegateProgram();
  EngineOptions first;
  first.cache_dir = (root_ / "first").string();
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(first));
    ASSERT_OK(engine->Compile(*module).status());
  }
  ASSERT_EQ(CountFiles(first.cache_dir), 1u);
  const std::string entry = fs::directory_iterator(first.cache_dir)->path().filename().string();
  EngineOptions second;
  second.cache_dir = (root_ / "second").string();
  fs::create_directories(fs::path(second.cache_dir) / entry / "occupied");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(second));
  StatusOr<std::unique_ptr<Executable>> exe = engine->Compile(*module);
  ASSERT_FALSE(exe.ok());
  EXPECT_THAT(exe.status().message(),
              HasSubstr(" to " + (fs::path(second.cache_dir) / entry).string() + ": "));
  size_t entries = 0;
  for (const auto& item : fs::directory_iterator(second.cache_dir)) {
    ++entries;
    EXPECT_EQ(item.path().filename().string(), entry);
  }
  EXPECT_EQ(entries, 1u);  // the folder only: no .tmp file
}

TEST_F(EngineDirectoriesTest, DumpDirFromTheEnvironmentIsCheckedToo) {
  const std::string bad = (file_ / "dump").string();
  ASSERT_EQ(::setenv("ACCY_DUMP_DIR", bad.c_str(), 1), 0);
  StatusOr<std::unique_ptr<Engine>> engine = Engine::Create();
  ::unsetenv("ACCY_DUMP_DIR");
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(),
              HasSubstr("dump_dir (from ACCY_DUMP_DIR) '" + bad + "' cannot be created"));
  // The option, when set, wins over the environment variable.
  ASSERT_EQ(::setenv("ACCY_DUMP_DIR", bad.c_str(), 1), 0);
  EngineOptions options;
  options.dump_dir = (root_ / "dump").string();
  StatusOr<std::unique_ptr<Engine>> with_option = Engine::Create(options);
  ::unsetenv("ACCY_DUMP_DIR");
  EXPECT_OK(with_option.status());
}

}  // namespace
}  // namespace accy
