#include "tools/spmd_run.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "accy/collectives.h"
#include "src/reference/reference_evaluator.h"
#include "src/util/str_cat.h"
#include "tools/cli.h"
#include "tools/npy.h"

extern char** environ;

namespace accy::tools {
namespace {

namespace fs = std::filesystem;

// Printed elements per result; --output-dir has them all.
constexpr int64_t kPrintedElements = 256;

std::string ProcessName(const Module& module, int process) {
  const int64_t partitions = module.num_partitions();
  return StrCat("process ", process, " (replica ", process / partitions, ", partition ",
                process % partitions, ")");
}

// SIGINT / SIGTERM received by the launcher (LaunchProcesses polls it).
volatile std::sig_atomic_t launcher_signalled = 0;
extern "C" void OnLauncherSignal(int) { launcher_signalled = 1; }
bool LauncherSignalled() { return launcher_signalled != 0; }

// At most this many processes (or threads with --in-process) on this host: beyond it, start
// the ranks yourself (ACCY_RANK ...) on several hosts.
constexpr int64_t kMaxLocalProcesses = 256;

}  // namespace

StatusOr<std::vector<Tensor>> RunDonatingInputs(const Executable& executable,
                                                std::vector<Tensor>& inputs,
                                                const RunOptions& options) {
  std::vector<Tensor> outputs;
  for (const TensorType& type : executable.result_types()) {
    ACCY_ASSIGN_OR_RETURN(Tensor output, Tensor::Allocate(type));
    outputs.push_back(std::move(output));
  }
  for (const InputOutputAlias& alias : executable.Stats().input_output_aliases) {
    outputs[static_cast<size_t>(alias.result)] = inputs[static_cast<size_t>(alias.parameter)];
  }
  ACCY_RETURN_IF_ERROR(executable.Run(inputs, outputs, options));
  return outputs;
}

namespace {

// One process's run with `communicator` (null on a 1 x 1 grid).
StatusOr<std::vector<Tensor>> RunProcess(const SpmdRun& run, const Executable* executable,
                                         int process, Communicator* communicator) {
  const Function& function = *run.module->FindFunction(run.function);
  ACCY_ASSIGN_OR_RETURN(std::vector<Tensor> inputs,
                        ReadProcessInputs(run, process, function.parameter_types()));
  if (run.reference) {
    ReferenceOptions options;
    options.communicator = communicator;
    if (run.engine_options.max_while_iterations > 0) {
      options.max_while_iterations = run.engine_options.max_while_iterations;
    }
    return Evaluate(*run.module, run.function, inputs, options);
  }
  RunOptions options;
  options.communicator = communicator;
  return RunDonatingInputs(*executable, inputs, options);
}

StatusOr<std::unique_ptr<Executable>> CompileFor(const SpmdRun& run,
                                                 std::unique_ptr<Engine>* engine) {
  if (run.reference) {
    ACCY_RETURN_IF_ERROR(Verify(*run.module));
    return std::unique_ptr<Executable>();
  }
  ACCY_ASSIGN_OR_RETURN(*engine, Engine::Create(run.engine_options));
  return (*engine)->Compile(*run.module, run.function);
}

int RunAsRank(const SpmdRun& run) {
  StatusOr<GlooOptions> options = GlooOptionsFromEnvironment();
  if (!options.ok()) return ReportError("run", options.status());
  const int64_t world = run.module->num_replicas() * run.module->num_partitions();
  if (options->world_size != world) {
    return ReportError("run", absl::InvalidArgumentError(StrCat(
                                  "ACCY_WORLD_SIZE is ", options->world_size, " but the program's grid is ",
                                  run.module->num_replicas(), " replicas x ",
                                  run.module->num_partitions(), " partitions")));
  }
  if (std::getenv("ACCY_COLLECTIVE_TIMEOUT_MS") == nullptr) {
    options->communicator.timeout = run.timeout;
  }
  std::unique_ptr<Engine> engine;
  StatusOr<std::unique_ptr<Executable>> executable = CompileFor(run, &engine);
  if (!executable.ok()) return ReportError("run", executable.status());
  StatusOr<std::unique_ptr<Communicator>> communicator = CreateGlooCommunicator(*options);
  if (!communicator.ok()) return ReportError("run", communicator.status());
  StatusOr<std::vector<Tensor>> outputs =
      RunProcess(run, executable->get(), options->rank, communicator->get());
  if (!outputs.ok()) {
    return ReportError("run", Status(outputs.status().code(),
                                     StrCat(ProcessName(*run.module, options->rank), ": ",
                                            outputs.status().message())));
  }
  if (Status emitted = EmitOutputs(run.output_dir, options->rank, true, *outputs); !emitted.ok()) {
    return ReportError("run", emitted);
  }
  return kExitOk;
}

int RunThreads(const SpmdRun& run) {
  const int world = static_cast<int>(run.module->num_replicas() * run.module->num_partitions());
  std::unique_ptr<Engine> engine;
  StatusOr<std::unique_ptr<Executable>> executable = CompileFor(run, &engine);
  if (!executable.ok()) return ReportError("run", executable.status());
  CommunicatorOptions options;
  options.timeout = run.timeout;
  StatusOr<std::vector<std::unique_ptr<Communicator>>> communicators =
      CreateInProcessCommunicators(world, options);
  if (!communicators.ok()) return ReportError("run", communicators.status());
  std::vector<StatusOr<std::vector<Tensor>>> outcomes(static_cast<size_t>(world),
                                                      absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int p = 0; p < world; ++p) {
    threads.emplace_back([&, p] {
      Communicator* communicator = (*communicators)[static_cast<size_t>(p)].get();
      outcomes[static_cast<size_t>(p)] = RunProcess(run, executable->get(), p, communicator);
      // Its peers must not wait for it until their timeout.
      if (!outcomes[static_cast<size_t>(p)].ok()) {
        communicator->Abort(
            std::string(outcomes[static_cast<size_t>(p)].status().message()));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  int exit_code = kExitOk;
  for (int p = 0; p < world; ++p) {
    const auto& outcome = outcomes[static_cast<size_t>(p)];
    Status status = outcome.ok() ? EmitOutputs(run.output_dir, p, true, *outcome)
                                 : outcome.status();
    if (!status.ok()) {
      exit_code = ReportError(
          "run", Status(status.code(), StrCat(ProcessName(*run.module, p), ": ", status.message())));
    }
  }
  return exit_code;
}

// Launches `world` copies of this `accy run` as ranks of a Gloo world on this host (a file
// store in a temporary folder), prints their outputs in rank order.
int LaunchProcesses(const SpmdRun& run) {
  const int world = static_cast<int>(run.module->num_replicas() * run.module->num_partitions());
  struct sigaction action = {};
  action.sa_handler = OnLauncherSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  const TemporaryFolder folder("run");
  if (folder.path().empty()) {
    return ReportError("run", absl::PermissionDeniedError(
                                  StrCat("no rendezvous folder: ", folder.error())));
  }
  const fs::path& dir = folder.path();
  std::vector<std::string> args = {"accy"};
  args.insert(args.end(), run.argv.begin(), run.argv.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<pid_t> children;
  for (int rank = 0; rank < world; ++rank) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view entry(*e);
      if (entry.starts_with("ACCY_RANK=") || entry.starts_with("ACCY_WORLD_SIZE=") ||
          entry.starts_with("ACCY_RENDEZVOUS=") || entry.starts_with("ACCY_RENDEZVOUS_PREFIX=")) {
        continue;
      }
      env.emplace_back(entry);
    }
    env.push_back(StrCat("ACCY_RANK=", rank));
    env.push_back(StrCat("ACCY_WORLD_SIZE=", world));
    env.push_back(StrCat("ACCY_RENDEZVOUS=file:", (dir / "store").string()));
    env.push_back(StrCat("ACCY_RENDEZVOUS_PREFIX=accy-run-", getpid()));
    std::vector<char*> envp;
    for (std::string& entry : env) envp.push_back(entry.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string out = (dir / StrCat("stdout", rank)).string();
    const std::string err = (dir / StrCat("stderr", rank)).string();
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = 0;
    const int spawned =
        posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
      for (pid_t child : children) kill(child, SIGTERM);
      for (pid_t child : children) waitpid(child, nullptr, 0);
      return ReportError("run", absl::InternalError(StrCat("cannot start process ", rank, ": ",
                                                           std::strerror(spawned))));
    }
    children.push_back(pid);
  }
  // A process that fails leaves the others waiting at their next collective: stop them
  // (SIGTERM, and SIGKILL after a grace period: a stopped process ignores SIGTERM). So does a
  // SIGINT / SIGTERM of this launcher, which then removes the rendezvous folder too.
  std::vector<int> codes(static_cast<size_t>(world), -1);
  int remaining = world;
  int first_failed = -1;
  bool interrupted = false;
  std::chrono::steady_clock::time_point kill_at{};
  auto stop_all = [&](int signal) {
    for (int rank = 0; rank < world; ++rank) {
      if (codes[static_cast<size_t>(rank)] < 0) {
        kill(children[static_cast<size_t>(rank)], signal);
        if (signal == SIGTERM) kill(children[static_cast<size_t>(rank)], SIGCONT);
      }
    }
  };
  while (remaining > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid < 0) break;
    if (pid == 0) {
      if (LauncherSignalled() && !interrupted) {
        interrupted = true;
        stop_all(SIGTERM);
        kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      }
      if (kill_at != std::chrono::steady_clock::time_point{} &&
          std::chrono::steady_clock::now() > kill_at) {
        stop_all(SIGKILL);
        kill_at = {};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    for (int rank = 0; rank < world; ++rank) {
      if (children[static_cast<size_t>(rank)] != pid) continue;
      codes[static_cast<size_t>(rank)] =
          WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      --remaining;
      if (codes[static_cast<size_t>(rank)] != 0 && first_failed < 0 && !interrupted) {
        first_failed = rank;
        stop_all(SIGTERM);
        kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(3);
      }
    }
  }
  int exit_code = kExitOk;
  for (int rank = 0; rank < world; ++rank) {
    std::fputs(ReadTextFile(dir / StrCat("stdout", rank)).c_str(), stdout);
    const std::string errors = ReadTextFile(dir / StrCat("stderr", rank));
    std::fputs(errors.c_str(), stderr);
    const int code = codes[static_cast<size_t>(rank)];
    if (code == 0) continue;
    exit_code = kExitError;
    if (!errors.empty()) continue;
    if (rank == first_failed) {
      std::fprintf(stderr, "accy run: %s failed (exit %d)\n",
                   ProcessName(*run.module, rank).c_str(), code);
    } else {
      std::fprintf(stderr, "accy run: %s stopped (exit %d) %s\n",
                   ProcessName(*run.module, rank).c_str(), code,
                   interrupted ? "because accy run was interrupted"
                               : StrCat("after process ", first_failed, " failed").c_str());
    }
  }
  if (interrupted) {
    std::fprintf(stderr, "accy run: interrupted; the processes were stopped\n");
    exit_code = kExitError;
  }
  return exit_code;
}

}  // namespace

TemporaryFolder::TemporaryFolder(const std::string& what) {
  std::error_code error;
  const fs::path root = fs::temp_directory_path(error);  // the throwing overload would abort
  if (error) {
    const char* tmpdir = std::getenv("TMPDIR");
    error_ = StrCat("cannot create a folder in the temporary folder ",
                    tmpdir != nullptr ? tmpdir : "/tmp", ": ", error.message());
    return;
  }
  std::string pattern = (root / ("accy-" + what + "-XXXXXX")).string();
  if (mkdtemp(pattern.data()) != nullptr) {
    path_ = pattern;
  } else {
    error_ = StrCat("cannot create a folder in ", root.string(), ": ", std::strerror(errno));
  }
}

TemporaryFolder::~TemporaryFolder() {
  std::error_code ignored;
  if (!path_.empty()) fs::remove_all(path_, ignored);
}

std::string ReadTextFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

StatusOr<std::vector<Tensor>> ReadProcessInputs(const SpmdRun& run, int process,
                                                std::span<const TensorType> types) {
  std::vector<std::string> paths = run.inputs;
  if (!run.input_per_process.empty()) {
    paths.clear();
    for (size_t i = 0; i < types.size(); ++i) {
      paths.push_back((fs::path(run.input_per_process) / StrCat("process", process) /
                       StrCat("input", i, ".npy"))
                          .string());
    }
  }
  if (paths.size() != types.size()) {
    return absl::InvalidArgumentError(StrCat("@", run.function, " takes ", types.size(),
                                             types.size() == 1 ? " parameter, " : " parameters, ",
                                             paths.size(), " --input given"));
  }
  return ReadNpyInputs(paths, types);
}

Status EmitOutputs(const std::string& output_dir, int process, bool on_grid,
                   std::span<const Tensor> outputs) {
  const std::string prefix = on_grid ? StrCat("process ", process, " ") : "";
  if (output_dir.empty()) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::printf("%sresult %zu: %s\n", prefix.c_str(), i,
                  outputs[i].ToString(kPrintedElements).c_str());
    }
    std::fflush(stdout);
    return absl::OkStatus();
  }
  fs::path dir = output_dir;
  if (on_grid) dir /= StrCat("process", process);
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    return absl::PermissionDeniedError(StrCat(dir.string(), ": cannot create: ", error.message()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string path = (dir / StrCat("out", i, ".npy")).string();
    ACCY_RETURN_IF_ERROR(WriteNpyFile(path, outputs[i]));
    std::printf("wrote %s (%s)\n", path.c_str(), outputs[i].type().ToString().c_str());
  }
  std::fflush(stdout);
  return absl::OkStatus();
}

bool RankVariablesSet() {
  for (const char* name : {"ACCY_RANK", "ACCY_WORLD_SIZE", "ACCY_RENDEZVOUS"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

int RunOnGrid(const SpmdRun& run, bool in_process) {
  if (RankVariablesSet()) {
    if (in_process) {
      return ReportError("run", absl::InvalidArgumentError(
                                    "--in-process runs every process here; it cannot be one rank "
                                    "of a world (ACCY_RANK / ACCY_WORLD_SIZE / ACCY_RENDEZVOUS "
                                    "are set)"));
    }
    return RunAsRank(run);  // GlooOptionsFromEnvironment names a missing variable
  }
  const int64_t world = run.module->num_replicas() * run.module->num_partitions();
  if (world > kMaxLocalProcesses) {
    return ReportError(
        "run", absl::InvalidArgumentError(StrCat(
                   "a grid of ", run.module->num_replicas(), " replicas x ",
                   run.module->num_partitions(), " partitions is ", world,
                   " processes, more than accy run starts on one host (", kMaxLocalProcesses,
                   "); start the ranks yourself with ACCY_RANK, ACCY_WORLD_SIZE and "
                   "ACCY_RENDEZVOUS (README \"Running on several processes or hosts\")")));
  }
  if (in_process || run.reference) return RunThreads(run);
  return LaunchProcesses(run);
}

}  // namespace accy::tools
