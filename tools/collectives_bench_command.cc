// `accy bench-collectives`: the issue-19 all_reduce benchmark with processes as ranks. For each
// world size W it forks W processes of this program (before it has started any thread), each a
// rank running tools/collectives_bench.h over a FileStore in a fresh temporary folder, waits
// for them, and prints the report rank 0 wrote. A rank that fails prints its error and exits 1;
// one that dies (a signal) is named here; either way the others fail at their next call (a
// peer gone, or the collective timeout) and are killed if they have not exited within a few
// seconds: the command never hangs.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "accy/isa.h"
#include "src/util/str_cat.h"
#include "tools/cli.h"
#include "tools/collectives_bench.h"
#include "tools/commands.h"
#include "tools/spmd_run.h"

namespace accy::tools {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kCommand[] = "bench-collectives";
constexpr int kMaxWorld = 64;
constexpr char kUsage[] =
    "usage: accy bench-collectives [--processes 2,4] [--sizes 4,64MiB] [--reps R]\n"
    "                              [--sample-ms M] [--collective-timeout-ms T] [--format text|json]\n"
    "  all_reduce (sum) of f32 across W processes of this host, joined by Gloo over TCP loopback\n"
    "  (rendezvous in a temporary folder). In every process, interleaved and barrier-synchronized,\n"
    "  R times (default 15) per size: gloo::allreduce in place and out of place (the baselines,\n"
    "  called directly), accy's Communicator::AllReduce, an executable of one all_reduce of its\n"
    "  parameter, the same with the parameter donated, all_reduce(x * 2) (the operand computed by\n"
    "  the program, as a gradient is) and x * 2 alone. Prints per W and size the median and best\n"
    "  time per call (the slowest rank's), the ratios gloo's time / this time against both\n"
    "  baselines (paired per repetition), and the time over the in-place baseline in us.\n"
    "  --processes LIST   world sizes W, each 2..64 (default 2,4)\n"
    "  --sizes LIST       bytes per all_reduce, multiples of 4, with optional KiB or MiB\n"
    "                     (default 4,64MiB)\n"
    "  --sample-ms M      a sample of a small size repeats the call for about M ms (default 20)\n"
    "  --collective-timeout-ms T  bound on every call and the rendezvous (default 30000)\n"
    "  --format F         text (default) or json\n"
    "  --kill-rank K      (to test the error path) rank K (below every W) kills itself after its\n"
    "                     first sample\n";

volatile std::sig_atomic_t bench_interrupted = 0;
extern "C" void OnInterrupt(int) { bench_interrupted = 1; }

StatusOr<std::vector<std::string>> SplitList(const std::string& option, const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream list(text);
  for (std::string part; std::getline(list, part, ',');) parts.push_back(part);
  if (parts.empty()) return absl::InvalidArgumentError(StrCat("--", option, " is empty"));
  return parts;
}

StatusOr<std::vector<int>> ParseWorlds(const std::string& text) {
  ACCY_ASSIGN_OR_RETURN(std::vector<std::string> parts, SplitList("processes", text));
  std::vector<int> worlds;
  for (const std::string& part : parts) {
    ACCY_ASSIGN_OR_RETURN(int world, ParseIntOption("processes", part, 2, kMaxWorld));
    worlds.push_back(world);
  }
  return worlds;
}

StatusOr<std::vector<int64_t>> ParseSizes(const std::string& text) {
  ACCY_ASSIGN_OR_RETURN(std::vector<std::string> parts, SplitList("sizes", text));
  std::vector<int64_t> sizes;
  for (std::string part : parts) {
    int shift = 0;
    for (const auto& [suffix, bits] : {std::pair<const char*, int>{"KiB", 10}, {"MiB", 20}}) {
      if (part.size() > 3 && part.ends_with(suffix)) {
        part.resize(part.size() - 3);
        shift = bits;
      }
    }
    ACCY_ASSIGN_OR_RETURN(int64_t value,
                          ParseInt64Option("sizes", part, 1, (int64_t{1} << 30) >> shift));
    const int64_t bytes = value << shift;
    if (bytes % 4 != 0) {
      return absl::InvalidArgumentError(
          StrCat("--sizes: ", bytes, " bytes is not a whole number of f32 (a multiple of 4)"));
    }
    sizes.push_back(bytes);
  }
  return sizes;
}

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M UTC", &tm);
  return text;
}

std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Forks the W ranks of one world and waits for them. On success `report` holds rank 0's report.
Status RunWorld(const CollectivesBenchConfig& config, int world, const fs::path& dir,
                std::string* report) {
  const std::string store = (dir / StrCat("store-", world)).string();
  const fs::path report_path = dir / StrCat("report-", world);
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> children;
  for (int rank = 0; rank < world; ++rank) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      const Status status =
          RunCollectivesBenchRank(config, world, rank, store, report_path.string());
      if (!status.ok()) {
        std::fprintf(stderr, "accy %s: W=%d rank %d: %s\n", kCommand, world, rank,
                     std::string(status.message()).c_str());
      }
      std::fflush(stderr);
      ::_exit(status.ok() ? 0 : 1);
    }
    if (pid < 0) {
      const int error = errno;
      for (pid_t child : children) ::kill(child, SIGKILL);
      for (pid_t child : children) ::waitpid(child, nullptr, 0);
      return absl::ResourceExhaustedError(
          StrCat("W=", world, ": cannot start rank ", rank, ": ", std::strerror(error)));
    }
    children.push_back(pid);
  }
  // Waits for every rank. After the first failure (or an interrupt) the others get a grace
  // period to report their own error, then SIGKILL.
  std::vector<int> status(static_cast<size_t>(world), -1);  // raw wait status once exited
  std::vector<bool> killed(static_cast<size_t>(world), false);
  int remaining = world;
  int first_failed = -1;
  Clock::time_point kill_at = Clock::time_point::max();
  while (remaining > 0) {
    bool reaped = false;
    for (int rank = 0; rank < world; ++rank) {
      if (status[static_cast<size_t>(rank)] >= 0) continue;
      int raw = 0;
      if (::waitpid(children[static_cast<size_t>(rank)], &raw, WNOHANG) <= 0) continue;
      status[static_cast<size_t>(rank)] = raw;
      --remaining;
      reaped = true;
      const bool ok = WIFEXITED(raw) && WEXITSTATUS(raw) == 0;
      if (!ok && first_failed < 0) {
        first_failed = rank;
        kill_at = std::min(kill_at, Clock::now() + std::chrono::seconds(3));
      }
    }
    if (bench_interrupted != 0 && kill_at == Clock::time_point::max()) kill_at = Clock::now();
    if (remaining > 0 && Clock::now() >= kill_at) {
      for (int rank = 0; rank < world; ++rank) {
        if (status[static_cast<size_t>(rank)] >= 0 || killed[static_cast<size_t>(rank)]) continue;
        ::kill(children[static_cast<size_t>(rank)], SIGKILL);
        killed[static_cast<size_t>(rank)] = true;
      }
    }
    if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Ranks that died first (the cause), then those that failed (their own error is printed
  // above: often a peer gone), then those stopped here.
  std::string died, failed, stopped;
  for (int rank = 0; rank < world; ++rank) {
    const int raw = status[static_cast<size_t>(rank)];
    if (WIFEXITED(raw) && WEXITSTATUS(raw) == 0) continue;
    if (killed[static_cast<size_t>(rank)]) {
      stopped += StrCat("; rank ", rank, " was stopped",
                        bench_interrupted != 0 ? " (interrupted)"
                                               : StrCat(" after rank ", first_failed, " failed"));
    } else if (WIFSIGNALED(raw)) {
      died += StrCat("; rank ", rank, " died (signal ", WTERMSIG(raw), ": ",
                     ::strsignal(WTERMSIG(raw)), ")");
    } else {
      failed += StrCat("; rank ", rank, " failed (exit ", WEXITSTATUS(raw), ")");
    }
  }
  const std::string failures = died + failed + stopped;
  if (bench_interrupted != 0) return absl::CancelledError(StrCat("W=", world, ": interrupted", failures));
  if (!failures.empty()) {
    return absl::UnavailableError(StrCat("W=", world, ": ", failures.substr(2)));
  }
  *report = ReadTextFile(report_path);
  if (report->empty()) {
    return absl::InternalError(StrCat("W=", world, ": rank 0 wrote no report"));
  }
  return absl::OkStatus();
}

int BenchCollectives(const CollectivesBenchConfig& config) {
  StatusOr<Isa> isa = ProcessIsa();
  if (!isa.ok()) return ReportError(kCommand, isa.status());
  const TemporaryFolder folder("bench-collectives");
  if (folder.path().empty()) {
    return ReportError(kCommand, absl::PermissionDeniedError(
                                     StrCat("no rendezvous folder: ", folder.error())));
  }
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  const std::string cpu = HostCpuDescription();
  const std::string isa_name(IsaName(*isa));
  const unsigned cpus = std::thread::hardware_concurrency();
  if (!config.json) {
    std::printf("accy bench-collectives, %s: all_reduce (sum) of f32 across W processes, Gloo "
                "over TCP loopback\nCPU: %s; ISA in use: %s; %u CPUs\n"
                "per sample the slowest rank's time per call; median and best over the "
                "repetitions; vs gloo (in place) and vs gloo out (of place): gloo's time / this "
                "time, the median of per-repetition ratios; overhead: the median of (this - gloo "
                "in place)\n\n",
                UtcNow().c_str(), cpu.c_str(), isa_name.c_str(), cpus);
    std::fflush(stdout);
  }
  std::vector<std::string> reports;
  for (int world : config.worlds) {
    std::string report;
    if (Status status = RunWorld(config, world, folder.path(), &report); !status.ok()) {
      return ReportError(kCommand, status);
    }
    if (!config.json) {
      std::printf("%s\n", report.c_str());
      std::fflush(stdout);
    }
    reports.push_back(report);
  }
  if (config.json) {
    std::string worlds;
    for (const std::string& report : reports) worlds += (worlds.empty() ? "" : ", ") + report;
    std::printf("{\"command\": \"bench-collectives\", \"date\": %s, \"cpu\": %s, \"isa\": %s, "
                "\"cpus\": %u, \"worlds\": [%s]}\n",
                Quoted(UtcNow()).c_str(), Quoted(cpu).c_str(), Quoted(isa_name).c_str(), cpus,
                worlds.c_str());
  }
  return kExitOk;
}

}  // namespace

int BenchCollectivesCommand(std::span<const std::string> args) {
  static const OptionSpec kSpecs[] = {
      {"processes", true, false}, {"sizes", true, false},     {"reps", true, false},
      {"sample-ms", true, false}, {"collective-timeout-ms", true, false},
      {"format", true, false},    {"kill-rank", true, false}};
  StatusOr<ParsedArgs> parsed = ParseArgs(args, kSpecs);
  if (!parsed.ok()) return ReportUsage(kCommand, std::string(parsed.status().message()), kUsage);
  if (parsed->help) {
    std::printf("%s", kUsage);
    return kExitOk;
  }
  if (!parsed->positional.empty()) {
    return ReportUsage(kCommand, "takes no positional arguments", kUsage);
  }
  CollectivesBenchConfig config;
  StatusOr<std::vector<int>> worlds = ParseWorlds(parsed->Get("processes", "2,4"));
  if (!worlds.ok()) return ReportUsage(kCommand, std::string(worlds.status().message()), kUsage);
  config.worlds = *worlds;
  StatusOr<std::vector<int64_t>> sizes = ParseSizes(parsed->Get("sizes", "4,64MiB"));
  if (!sizes.ok()) return ReportUsage(kCommand, std::string(sizes.status().message()), kUsage);
  config.sizes = *sizes;
  StatusOr<int> reps = ParseIntOption("reps", parsed->Get("reps", "15"), 1, 100000);
  StatusOr<int> sample_ms = ParseIntOption("sample-ms", parsed->Get("sample-ms", "20"), 1, 60000);
  StatusOr<int> timeout = ParseIntOption("collective-timeout-ms",
                                         parsed->Get("collective-timeout-ms", "30000"), 1,
                                         24 * 3600 * 1000);
  StatusOr<int> kill_rank = ParseIntOption("kill-rank", parsed->Get("kill-rank", "-1"), -1,
                                           kMaxWorld - 1);
  for (const StatusOr<int>* value : {&reps, &sample_ms, &timeout, &kill_rank}) {
    if (!value->ok()) return ReportUsage(kCommand, std::string(value->status().message()), kUsage);
  }
  const int smallest = *std::min_element(config.worlds.begin(), config.worlds.end());
  if (*kill_rank >= smallest) {
    return ReportUsage(kCommand,
                       StrCat("--kill-rank ", *kill_rank, " is not a rank of a world of ",
                              smallest, " processes"),
                       kUsage);
  }
  const std::string format = parsed->Get("format", "text");
  if (format != "text" && format != "json") {
    return ReportUsage(kCommand, "--format takes text or json, got '" + format + "'", kUsage);
  }
  config.reps = *reps;
  config.sample_ms = *sample_ms;
  config.timeout = std::chrono::milliseconds(*timeout);
  config.kill_rank = *kill_rank;
  config.json = format == "json";
  return BenchCollectives(config);
}

}  // namespace accy::tools
