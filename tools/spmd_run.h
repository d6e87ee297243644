// `accy run` on an SPMD grid (spec "Parallel execution"): a program whose grid
// (mhlo.num_replicas x mhlo.num_partitions, or --replicas / --partitions) has more than one
// process runs as that many processes of `accy run` joined by Gloo (this process launches them
// on this host), as threads of this process with in-process communicators (--in-process), or,
// when ACCY_WORLD_SIZE is set, as one rank of a world someone else launched (mpirun, Slurm, a
// shell loop: accy/collectives.h GlooOptionsFromEnvironment).
#ifndef ACCY_TOOLS_SPMD_RUN_H_
#define ACCY_TOOLS_SPMD_RUN_H_

#include <chrono>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/ir.h"
#include "accy/tensor.h"

namespace accy::tools {

// What one process needs to run: the module (its grid set), the function, engine options,
// where its inputs come from and where its outputs go.
struct SpmdRun {
  const Module* module = nullptr;
  std::string function;
  EngineOptions engine_options;
  std::vector<std::string> inputs;  // --input: the same files for every process
  std::string input_per_process;    // --input-per-process DIR: DIR/process<K>/input<i>.npy
  std::string output_dir;           // DIR/process<K>/out<i>.npy; empty: print
  bool reference = false;           // the reference evaluator instead of the engine
  std::chrono::milliseconds timeout{60000};
  // The command line after `accy`, for the launched processes.
  std::vector<std::string> argv;
};

// A fresh folder in the system's temporary folder ($TMPDIR, else /tmp), named
// "accy-<what>-XXXXXX", removed with everything in it when destroyed. path() is empty when it
// could not be created, and error() then says why ("cannot create a folder in /x: ..."), for
// instance when $TMPDIR names no folder.
class TemporaryFolder {
 public:
  explicit TemporaryFolder(const std::string& what);
  ~TemporaryFolder();
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  std::filesystem::path path_;
  std::string error_;
};

// The whole content of a file; "" when it cannot be read.
std::string ReadTextFile(const std::filesystem::path& path);

// The inputs of process `process` (file paths as SpmdRun says), converted to `types`.
// Runs `executable` on `inputs`, which the caller owns and gives up: a result aliased to a
// parameter (tf.aliasing_output / jax.buffer_donor, Stats().input_output_aliases) is computed
// into that input's buffer, in place, as JAX runs a donated argument; the other results get
// buffers of their own. The run's errors.
StatusOr<std::vector<Tensor>> RunDonatingInputs(const Executable& executable,
                                                std::vector<Tensor>& inputs,
                                                const RunOptions& options);

StatusOr<std::vector<Tensor>> ReadProcessInputs(const SpmdRun& run, int process,
                                                std::span<const TensorType> types);

// Prints "result i: ..." (prefixed "process K " on a grid) or writes DIR[/process<K>]/out<i>.npy.
Status EmitOutputs(const std::string& output_dir, int process, bool on_grid,
                   std::span<const Tensor> outputs);

// Whether any of ACCY_RANK, ACCY_WORLD_SIZE, ACCY_RENDEZVOUS is set: this process is one rank
// of a world someone else launched (the missing ones are then an error, not ignored).
bool RankVariablesSet();

// Runs `run` on its grid as described above; returns the exit code (kExitOk, or kExitError
// after printing what failed, naming the process). kExitError too for a grid of more than 256
// processes started on this host, and for --in-process with the rank variables set.
int RunOnGrid(const SpmdRun& run, bool in_process);

}  // namespace accy::tools

#endif  // ACCY_TOOLS_SPMD_RUN_H_
