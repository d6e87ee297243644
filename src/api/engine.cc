// Engine and Executable (include/accy/engine.h). Compile is one flat list of stage calls
// (src/api/compile_stages.h): verify -> graph passes on a copy -> plan (analyses, fusion,
// schedule) -> bind library items -> while loops -> JIT kernels -> assign buffers -> check the
// per-run memory -> build the executor's item table and constant area.
#include "accy/engine.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "jit/jit_compiler.h"
#include "jit/sleef_functions.h"
#include "kernels/onednn_isa.h"
#include "src/api/compile_stages.h"
#include "src/api/writable_directory.h"
#include "src/transforms/graph_pipeline.h"
#include "src/util/str_cat.h"

namespace accy {

// ---- Executable ----

Executable::Executable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executable::~Executable() = default;

StatusOr<std::vector<Tensor>> Executable::Run(std::span<const Tensor> inputs) const {
  return Run(inputs, RunOptions{});
}

StatusOr<std::vector<Tensor>> Executable::Run(std::span<const Tensor> inputs,
                                              const RunOptions& options) const {
  std::vector<Tensor> outputs;
  outputs.reserve(impl_->result_types.size());
  for (const TensorType& type : impl_->result_types) {
    ACCY_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(type));
    outputs.push_back(std::move(out));
  }
  ACCY_RETURN_IF_ERROR(impl_->Run(inputs, outputs, options));
  return outputs;
}

Status Executable::Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) const {
  return impl_->Run(inputs, outputs);
}

Status Executable::Run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                       const RunOptions& options) const {
  return impl_->Run(inputs, outputs, options);
}

int64_t Executable::num_replicas() const { return impl_->num_replicas; }
int64_t Executable::num_partitions() const { return impl_->num_partitions; }
bool Executable::has_collectives() const { return impl_->has_collectives; }

const std::vector<TensorType>& Executable::parameter_types() const {
  return impl_->parameter_types;
}
const std::vector<TensorType>& Executable::result_types() const { return impl_->result_types; }
ExecutableStats Executable::Stats() const { return impl_->CurrentStats(); }
const std::string& Executable::plan_text() const { return impl_->plan_text; }

// ---- Engine ----

Engine::Engine(EngineOptions options)
    : options_(std::move(options)), object_cache_(std::make_unique<jit::KernelObjectCache>()) {}
Engine::~Engine() = default;

StatusOr<std::unique_ptr<Engine>> Engine::Create(EngineOptions options) {
  if (options.num_threads < 0) {
    return absl::InvalidArgumentError(
        StrCat("EngineOptions: num_threads is ", options.num_threads, ", expected >= 0"));
  }
  if (options.optimization_level < 0 || options.optimization_level > 3) {
    return absl::InvalidArgumentError(StrCat("EngineOptions: optimization_level is ",
                                             options.optimization_level, ", expected 0-3"));
  }
  if (options.max_while_iterations < 0) {
    return absl::InvalidArgumentError(StrCat("EngineOptions: max_while_iterations is ",
                                             options.max_while_iterations,
                                             ", expected >= 0 (0 = unbounded)"));
  }
  if (options.max_run_memory_bytes < 0) {
    return absl::InvalidArgumentError(StrCat("EngineOptions: max_run_memory_bytes is ",
                                             options.max_run_memory_bytes,
                                             ", expected >= 0 (0 = unlimited)"));
  }
  if (options.fast_math) {
    return absl::UnimplementedError(
        "EngineOptions: fast_math is not supported yet; accy computes to IEEE rules");
  }
  // One ISA for the process (ACCY_MAX_ISA), applied to oneDNN before its first kernel.
  ACCY_ASSIGN_OR_RETURN(Isa process_isa, kernels::ApplyOneDnnIsaCap());
  if (options.max_isa.has_value() && *options.max_isa > process_isa) {
    return absl::InvalidArgumentError(StrCat(
        "EngineOptions: max_isa ", IsaName(*options.max_isa), " asks for more than the process ISA ",
        IsaName(process_isa), " (host ", IsaName(HostIsa()), ", ACCY_MAX_ISA ",
        std::getenv("ACCY_MAX_ISA") != nullptr ? std::getenv("ACCY_MAX_ISA") : "unset", ")"));
  }
  if (!options.max_isa.has_value()) options.max_isa = process_isa;
  ACCY_RETURN_IF_ERROR(jit::CheckVectorMathChoice());
  // The folders Compile writes are checked (and created) now, not at the first Compile.
  ACCY_RETURN_IF_ERROR(EnsureWritableDirectory(options.cache_dir, "cache_dir"));
  if (const char* env = std::getenv("ACCY_VERIFY_EACH_PASS"); env != nullptr &&
                                                               std::string_view(env) == "1") {
    options.verify_each_pass = true;
  }
  // The one place the dump folder is resolved: the option, else ACCY_DUMP_DIR.
  if (const char* env = std::getenv("ACCY_DUMP_DIR"); options.dump_dir.empty() && env != nullptr) {
    ACCY_RETURN_IF_ERROR(EnsureWritableDirectory(env, "dump_dir (from ACCY_DUMP_DIR)"));
    options.dump_dir = env;
  } else {
    ACCY_RETURN_IF_ERROR(EnsureWritableDirectory(options.dump_dir, "dump_dir"));
  }
  if (Status names = CheckGraphPassNames(options.disabled_passes); !names.ok()) {
    return absl::InvalidArgumentError(StrCat("EngineOptions: disabled_passes: ", names.message()));
  }
  if (options.num_threads == 0) {
    options.num_threads = std::max(1u, std::thread::hardware_concurrency());
  }
  return std::unique_ptr<Engine>(new Engine(std::move(options)));
}

StatusOr<std::unique_ptr<Executable>> Engine::Compile(const Module& module,
                                                      std::string_view entry) const {
  CompileOptions options;
  options.entry = std::string(entry);
  return Compile(module, options);
}

StatusOr<std::unique_ptr<Executable>> Engine::Compile(const Module& module,
                                                      const CompileOptions& options) const {
  // The stages of src/api/compile_stages.h, in order (docs/compile.md).
  CompileState state(*this, object_cache_.get());
  ACCY_RETURN_IF_ERROR(VerifyEntry(module, options.entry));
  ACCY_RETURN_IF_ERROR(RunGraphPasses(module, options.entry, options.constant_parameters, state));
  ACCY_RETURN_IF_ERROR(ResolveConstantParameters(options.constant_parameters, state));
  ACCY_RETURN_IF_ERROR(ResolveInputOutputAliases(options.input_output_aliases, state));
  ACCY_RETURN_IF_ERROR(PlanItems(state));
  ACCY_RETURN_IF_ERROR(BindLibraryItems(state));
  ACCY_RETURN_IF_ERROR(CompileLoops(state));
  ACCY_RETURN_IF_ERROR(CompileJitItems(state));
  ACCY_RETURN_IF_ERROR(AssignItemBuffers(state));
  ACCY_RETURN_IF_ERROR(CheckRunMemory(state));
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Executable::Impl> impl, BuildExecutable(state));
  return std::unique_ptr<Executable>(new Executable(std::move(impl)));
}

}  // namespace accy
