// `accy conformance --collectives gloo`: the processes of an interpreter.run_parallel run as
// separate `accy run` processes joined by Gloo (tools/spmd_run.h), instead of threads with
// in-process communicators.
#include "tools/conformance_processes.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/util/str_cat.h"
#include "tools/npy.h"
#include "tools/spmd_run.h"

extern char** environ;

namespace accy::tools {
namespace {

namespace fs = std::filesystem;

}  // namespace

StatusOr<std::vector<std::vector<Tensor>>> RunAsGlooProcesses(
    const Module& module, const std::vector<std::string>& process_functions,
    const std::vector<std::vector<Tensor>>& process_inputs) {
  if (process_functions.empty()) return std::vector<std::vector<Tensor>>{};
  const std::string& function_name = process_functions[0];
  for (const std::string& name : process_functions) {
    if (name != function_name) {
      return absl::UnimplementedError(
          "processes running different functions: accy run runs one function on every process");
    }
  }
  const Function* function = module.FindFunction(function_name);
  if (function == nullptr) {
    return absl::InvalidArgumentError(StrCat("no function @", function_name));
  }
  const TemporaryFolder folder("conformance");
  if (folder.path().empty()) {
    return absl::PermissionDeniedError(folder.error());
  }
  const fs::path& dir = folder.path();
  {
    std::ofstream program(dir / "program.mlir", std::ios::binary);
    program << PrintModule(module);
    if (!program) return absl::InternalError("cannot write " + (dir / "program.mlir").string());
  }
  for (size_t p = 0; p < process_inputs.size(); ++p) {
    const fs::path folder = dir / "inputs" / StrCat("process", p);
    std::error_code error;
    fs::create_directories(folder, error);
    if (error) return absl::InternalError(StrCat("cannot create ", folder.string()));
    for (size_t i = 0; i < process_inputs[p].size(); ++i) {
      ACCY_RETURN_IF_ERROR(
          WriteNpyFile((folder / StrCat("input", i, ".npy")).string(), process_inputs[p][i]));
    }
  }
  std::vector<std::string> args = {"accy",
                                   "run",
                                   (dir / "program.mlir").string(),
                                   "--function",
                                   function_name,
                                   "--input-per-process",
                                   (dir / "inputs").string(),
                                   "--output-dir",
                                   (dir / "out").string(),
                                   "--threads",
                                   "1",
                                   "--no-cache",
                                   "--collective-timeout-ms",
                                   "20000"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = (dir / "log").string();
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return absl::InternalError(StrCat("cannot start accy run: ", std::strerror(spawned)));
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string text = ReadTextFile(log);
    // The processes' own "accy run: ..." lines carry the status; keep the first.
    const size_t at = text.find("accy run: ");
    if (at != std::string::npos) text = text.substr(at + 10);
    const size_t end = text.find('\n');
    if (end != std::string::npos) text = text.substr(0, end);
    const bool unsupported = text.find("not supported") != std::string::npos;
    const std::string message = StrCat("accy run over Gloo processes failed: ", text);
    return unsupported ? absl::UnimplementedError(message) : absl::InternalError(message);
  }
  std::vector<std::vector<Tensor>> results;
  for (size_t p = 0; p < process_inputs.size(); ++p) {
    std::vector<Tensor> outputs;
    for (size_t i = 0; i < function->result_types().size(); ++i) {
      const fs::path path = dir / "out" / StrCat("process", p) / StrCat("out", i, ".npy");
      ACCY_ASSIGN_OR_RETURN(Tensor array, ReadNpyFile(path.string()));
      ACCY_ASSIGN_OR_RETURN(Tensor output, ConvertNpyInput(array, function->result_types()[i]));
      outputs.push_back(std::move(output));
    }
    results.push_back(std::move(outputs));
  }
  return results;
}

}  // namespace accy::tools
