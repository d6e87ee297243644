// `accy bench-collectives` end to end (tools/collectives_bench_command.cc), tiny: worlds of 2
// and 4 forked processes, a few repetitions of 4 B and 4 KiB; the report's structure (every
// variant's row with numeric times and ratios, the notes on where the executables reduce), its
// JSON form, and its errors: a bad command line (exit 2), a rank that dies (exit 1 within the
// timeout, naming it), no temporary folder.
#include <chrono>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tools/cli_test_util.h"

namespace accy::tools {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kLabels = {
    "gloo::allreduce in place",    "gloo::allreduce out of place",
    "Communicator::AllReduce",     "executable all_reduce\\(x\\)",
    "executable all_reduce\\(x\\), x donated", "executable all_reduce\\(x \\* 2\\)",
    "executable x \\* 2 alone"};

// The numbers of every row of `label` in `output`: median ms, best ms, vs gloo, vs gloo out,
// overhead us.
std::vector<std::vector<double>> Rows(const std::string& output, const std::string& label) {
  const std::string number = "(-?[0-9]+\\.[0-9]+)";
  const std::regex row("\n    " + label + " +" + number + " +" + number + " +" + number + " +" +
                       number + " +" + number + "\n");
  std::vector<std::vector<double>> rows;
  for (auto it = std::sregex_iterator(output.begin(), output.end(), row);
       it != std::sregex_iterator(); ++it) {
    std::vector<double> values;
    for (size_t i = 1; i <= 5; ++i) values.push_back(std::stod((*it)[i].str()));
    rows.push_back(values);
  }
  return rows;
}

TEST_F(CliTest, BenchCollectivesReportsEveryVariantAgainstGlooInTheSameRun) {
  const auto start = std::chrono::steady_clock::now();
  const CommandResult result =
      Accy("bench-collectives --processes 2,4 --sizes 4,4KiB --reps 3 --sample-ms 1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::string& out = result.output;
  EXPECT_THAT(out, HasSubstr("all_reduce (sum) of f32 across W processes, Gloo over TCP loopback"));
  EXPECT_THAT(out, HasSubstr("\nCPU: "));
  EXPECT_THAT(out, HasSubstr("; ISA in use: "));
  EXPECT_THAT(out, HasSubstr("W = 2 processes, 3 repetitions"));
  EXPECT_THAT(out, HasSubstr("W = 4 processes, 3 repetitions"));
  EXPECT_TRUE(std::regex_search(out, std::regex("\n  4 B, [0-9]+ calls? per sample +median ms")))
      << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("\n  4 KiB, [0-9]+ calls? per sample"))) << out;
  // Two worlds x two sizes: four rows per variant, every time positive and every ratio a
  // positive number; the in-place baseline against itself is exactly 1 and 0 us.
  for (const std::string& label : kLabels) {
    if (label == kLabels.back()) {  // x * 2 alone: no collective, times only
      const std::regex row("\n    " + label + " +[0-9]+\\.[0-9]+ +[0-9]+\\.[0-9]+ +- +- +-\n");
      EXPECT_EQ(std::distance(std::sregex_iterator(out.begin(), out.end(), row),
                              std::sregex_iterator()),
                4)
          << out;
      continue;
    }
    const std::vector<std::vector<double>> rows = Rows(out, label);
    ASSERT_EQ(rows.size(), 4u) << label << "\n" << out;
    for (const std::vector<double>& row : rows) {
      EXPECT_GT(row[0], 0) << label;
      EXPECT_GT(row[1], 0) << label;
      EXPECT_LE(row[1], row[0]) << label;  // best <= median
      EXPECT_GT(row[2], 0) << label;
      EXPECT_GT(row[3], 0) << label;
      EXPECT_TRUE(std::isfinite(row[4])) << label;
      if (label == kLabels[0]) {
        EXPECT_EQ(row[2], 1.0);
        EXPECT_EQ(row[4], 0.0);
      }
    }
  }
  // Where the executables' all_reduce reduced (the buffers handed to the communicator).
  for (const char* note :
       {"    all_reduce(x): copied its operand into the run's output, then reduced there\n",
        "    all_reduce(x), x donated: reduced in place with no copy, in the run's output buffer "
        "(ExecutableStats: donation in place)\n",
        "    all_reduce(x * 2): reduced in place with no copy, in the run's output buffer (arena "}) {
    EXPECT_THAT(out, HasSubstr(note));
  }
  EXPECT_TRUE(std::regex_search(out, std::regex("vs gloo in place \\+ x \\* 2 alone: [0-9]+\\.[0-9]{3}\n")))
      << out;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 60.0);
}

TEST_F(CliTest, BenchCollectivesJsonHoldsTheSameFields) {
  const CommandResult result =
      Accy("bench-collectives --processes 2 --sizes 8 --reps 2 --sample-ms 1 --format json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::string& out = result.output;
  EXPECT_THAT(out, HasSubstr("{\"command\": \"bench-collectives\", \"date\": \""));
  EXPECT_THAT(out, HasSubstr("\"cpu\": \""));
  EXPECT_THAT(out, HasSubstr("\"worlds\": [{\"processes\": 2, \"repetitions\": 2, "));
  EXPECT_THAT(out, HasSubstr("\"sizes\": [{\"bytes\": 8, \"calls_per_sample\": "));
  const std::string number = "-?[0-9.]+(e[-+][0-9]+)?";
  EXPECT_TRUE(std::regex_search(
      out, std::regex("\\{\"name\": \"multiply_alone\", \"median_ms\": " + number +
                      ", \"best_ms\": " + number + "\\}")))
      << out;
  for (const char* name : {"gloo_in_place", "gloo_out_of_place", "communicator", "executable",
                           "executable_donated", "executable_computed"}) {
    const std::regex entry(std::string("\\{\"name\": \"") + name + "\", \"median_ms\": " +
                           number + ", \"best_ms\": " + number + ", \"vs_gloo_in_place\": " +
                           number + ", \"vs_gloo_out_of_place\": " + number +
                           ", \"overhead_us\": " + number + "\\}");
    EXPECT_TRUE(std::regex_search(out, entry)) << name << "\n" << out;
  }
  EXPECT_THAT(out, HasSubstr("\"computed_buffers\": {\"one_buffer\": true, \"into_output\": true"));
  EXPECT_THAT(out, HasSubstr("\"donated_in_place\": true"));
  EXPECT_EQ(out.back(), '\n');
  EXPECT_EQ(out[out.size() - 2], '}');
}

TEST_F(CliTest, BenchCollectivesBadCommandLinesAreUsageErrors) {
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c : {Case{"--processes 1", "--processes"}, Case{"--processes 2,65", "--processes"},
                        Case{"--processes two", "--processes"}, Case{"--processes ''", "--processes needs a value, got an empty one"},
                        Case{"--sizes 6", "6 bytes is not a whole number of f32"},
                        Case{"--sizes 0", "--sizes"}, Case{"--sizes 2GiB", "--sizes"},
                        Case{"--reps 0", "--reps"}, Case{"--format xml", "--format takes text or json"},
                        Case{"--kill-rank 64", "--kill-rank"},
                        Case{"--processes 4,2 --kill-rank 2",
                             "--kill-rank 2 is not a rank of a world of 2 processes"},
                        Case{"extra", "takes no positional"}}) {
    const CommandResult result = Accy(std::string("bench-collectives ") + c.args);
    EXPECT_EQ(result.exit_code, 2) << c.args << ": " << result.output;
    EXPECT_THAT(result.output, HasSubstr(c.message)) << c.args;
    EXPECT_THAT(result.output, HasSubstr("usage: accy bench-collectives")) << c.args;
  }
}

TEST_F(CliTest, BenchCollectivesRankThatDiesIsAnErrorNotAHang) {
  const auto start = std::chrono::steady_clock::now();
  const CommandResult result = Accy(
      "bench-collectives --processes 2 --sizes 4 --reps 100 --sample-ms 5 "
      "--collective-timeout-ms 5000 --kill-rank 1");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output, HasSubstr("accy bench-collectives: W=2: rank 1 died (signal 9: Killed)"));
  // Its peer fails at its next call (the connection closed) or is stopped.
  EXPECT_TRUE(result.output.find("W=2 rank 0: ") != std::string::npos ||
              result.output.find("rank 0 was stopped after rank 1 failed") != std::string::npos)
      << result.output;
  EXPECT_THAT(result.output, ::testing::Not(HasSubstr("W = 2 processes")));
  EXPECT_LT(seconds, 20.0);
  // An ISA cap that names no ISA, as for every command.
  const CommandResult bad_isa =
      AccyWithEnv("ACCY_MAX_ISA=avx9000", "bench-collectives --processes 2 --sizes 4");
  EXPECT_EQ(bad_isa.exit_code, 1);
  EXPECT_THAT(bad_isa.output, HasSubstr("accy bench-collectives: "));
  EXPECT_THAT(bad_isa.output, HasSubstr("ACCY_MAX_ISA"));
  // No temporary folder to meet in.
  const CommandResult no_folder =
      AccyWithEnv("TMPDIR=/nonexistent/accy", "bench-collectives --processes 2 --sizes 4");
  EXPECT_EQ(no_folder.exit_code, 1);
  EXPECT_THAT(no_folder.output,
              HasSubstr("accy bench-collectives: no rendezvous folder: cannot create a folder in "
                        "the temporary folder /nonexistent/accy"));
}

}  // namespace
}  // namespace accy::tools
