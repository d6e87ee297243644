// Fuzz regressions: every folder of tests/tools/fuzz_regressions/ is one reproducer, in the form
// `accy fuzz --out DIR` writes a failure (program.mlir, in<k>.npy, expected<k>.npy) plus an
// expect.txt saying what must happen now (docs/fuzzing.md, "Regressions"):
//   match TOL      parse, compile and run at 1 and 2 threads; every output k agrees with
//                  expected<k>.npy (integers, i1 and TOL 0 bit for bit, any NaN matching any
//                  NaN; otherwise within TOL * (max(1, max |expected|) + |expected|), as `accy
//                  fuzz` compares approximate values)
//   error CODE TEXT
//                  parsing, compiling or running fails with status CODE (absl's name, e.g.
//                  RESOURCE_EXHAUSTED) and a message containing TEXT
// Lines starting with '#' say what the reproducer found. A test that cannot find the folder, or
// finds no reproducer in it, fails.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/testing/differential_runner.h"
#include "tests/test_util.h"
#include "tools/npy.h"

namespace accy {
namespace {

namespace fs = std::filesystem;

struct Expectation {
  bool match = false;
  double tolerance = 0;
  std::string code;  // error: absl::StatusCodeToString
  std::string text;  // error: a substring of the message
};

StatusOr<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot read " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

StatusOr<Expectation> ParseExpectation(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string verb;
    words >> verb;
    Expectation e;
    if (verb == "match" && (words >> e.tolerance) && e.tolerance >= 0) {
      e.match = true;
      return e;
    }
    if (verb == "error" && (words >> e.code)) {
      std::getline(words >> std::ws, e.text);
      if (!e.text.empty()) return e;
    }
    return absl::InvalidArgumentError("expect.txt: cannot read \"" + line + "\"");
  }
  return absl::InvalidArgumentError("expect.txt: no `match` or `error` line");
}

// The files of `dir` named <prefix><k>.npy, k = 0, 1, ... while they exist.
std::vector<std::string> Numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> paths;
  for (int k = 0; fs::exists(dir / (prefix + std::to_string(k) + ".npy")); ++k) {
    paths.push_back((dir / (prefix + std::to_string(k) + ".npy")).string());
  }
  return paths;
}

// Parses, compiles and runs the reproducer at `threads`; the first failing status, or the
// outputs.
StatusOr<std::vector<Tensor>> Run(const fs::path& dir, int threads) {
  ACCY_ASSIGN_OR_RETURN(std::string text, ReadText(dir / "program.mlir"));
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseStableHlo(text));
  EngineOptions options;
  options.num_threads = threads;
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Create(options));
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  const Function* main = module->FindFunction("main");
  if (main == nullptr) return absl::InvalidArgumentError("program.mlir has no @main");
  const std::vector<std::string> inputs = Numbered(dir, "in");
  ACCY_ASSIGN_OR_RETURN(std::vector<Tensor> arguments,
                        tools::ReadNpyInputs(inputs, main->parameter_types()));
  return exe->Run(arguments);
}

void CheckReproducer(const fs::path& dir) {
  SCOPED_TRACE(dir.filename().string());
  ASSERT_OK_AND_ASSIGN(std::string expect_text, ReadText(dir / "expect.txt"));
  ASSERT_OK_AND_ASSIGN(Expectation expect, ParseExpectation(expect_text));
  for (int threads : {1, 2}) {
    SCOPED_TRACE(testing::Message() << threads << " threads");
    StatusOr<std::vector<Tensor>> outputs = Run(dir, threads);
    if (!expect.match) {
      ASSERT_FALSE(outputs.ok()) << "expected " << expect.code << ", the program ran";
      EXPECT_EQ(absl::StatusCodeToString(outputs.status().code()), expect.code)
          << outputs.status();
      EXPECT_THAT(std::string(outputs.status().message()), ::testing::HasSubstr(expect.text));
      continue;
    }
    ASSERT_OK(outputs.status());
    const std::vector<std::string> expected_paths = Numbered(dir, "expected");
    ASSERT_EQ(outputs->size(), expected_paths.size());
    for (size_t k = 0; k < outputs->size(); ++k) {
      const Tensor& actual = (*outputs)[k];
      ASSERT_OK_AND_ASSIGN(Tensor array, tools::ReadNpyFile(expected_paths[k]));
      ASSERT_OK_AND_ASSIGN(Tensor expected, tools::ConvertNpyInput(array, actual.type()));
      fuzz::FuzzValue value;
      value.type = actual.type();
      value.exact = expect.tolerance == 0;
      value.tolerance = expect.tolerance;
      const TensorComparison c = fuzz::CompareOutput(actual, expected, value);
      EXPECT_TRUE(c.ok) << "output " << k << ": " << c.message;
    }
  }
}

TEST(FuzzRegressionFilesTest, EveryReproducerBehavesAsItsExpectSays) {
  const fs::path root = fs::path(ACCY_SOURCE_DIR) / "tests" / "tools" / "fuzz_regressions";
  ASSERT_TRUE(fs::is_directory(root)) << root;
  std::vector<fs::path> cases;
  for (const fs::directory_entry& entry : fs::directory_iterator(root)) {
    if (entry.is_directory()) cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  ASSERT_FALSE(cases.empty()) << "no reproducer in " << root;
  for (const fs::path& dir : cases) CheckReproducer(dir);
}

TEST(FuzzRegressionFilesTest, ExpectLinesAreReadOrRefused) {
  ASSERT_OK_AND_ASSIGN(Expectation match, ParseExpectation("# a comment\nmatch 0.05\n"));
  EXPECT_TRUE(match.match);
  EXPECT_EQ(match.tolerance, 0.05);
  ASSERT_OK_AND_ASSIGN(Expectation error,
                       ParseExpectation("error RESOURCE_EXHAUSTED takes 4000 bytes\n"));
  EXPECT_FALSE(error.match);
  EXPECT_EQ(error.code, "RESOURCE_EXHAUSTED");
  EXPECT_EQ(error.text, "takes 4000 bytes");
  for (const char* bad : {"", "# only a comment\n", "match\n", "match -1\n", "error CODE\n",
                          "crash 1\n"}) {
    StatusOr<Expectation> refused = ParseExpectation(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(refused.status().message()), ::testing::StartsWith("expect.txt: "));
  }
}

}  // namespace
}  // namespace accy
