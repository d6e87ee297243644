// The stages of Engine::Compile (docs/compile.md), each a function over one CompileState that
// it reads from the stages before it and fills for the stages after it (Halide's lower_impl,
// XLA's CPU compiler pipeline). Engine::Compile calls them in order; a stage's error ends the
// compile and the state is dropped. One CompileState per Compile call; not shared by threads.
#ifndef ACCY_SRC_API_COMPILE_STAGES_H_
#define ACCY_SRC_API_COMPILE_STAGES_H_

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "accy/engine.h"
#include "jit/compiled_program.h"
#include "kernels/onednn_kernel.h"
#include "src/api/iterate_compile.h"
#include "src/fusion/fusion_analysis.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/planning_options.h"
#include "src/passes/work_ledger.h"
#include "src/runtime/buffer_assignment.h"
#include "src/runtime/executor.h"
#include "src/schedule/schedule_plan.h"

namespace accy {

// How one plan item runs in the executor: a while loop, a library kernel, a JIT kernel. A split
// dot_general (library matmul, then a JIT epilogue) is two steps of one item.
enum class StepPart : uint8_t { kIterate, kLibrary, kJit, kCollective };
struct CompileStep {
  size_t index;  // plan item
  StepPart part;
};

// The planning options of an engine: its work allowance, and fusion on or off.
inline passes::PlanningOptions PlanningFor(const EngineOptions& options) {
  passes::PlanningOptions planning = passes::ToPlanningOptions(options.work_allowance);
  planning.enable_fusion = options.enable_fusion;
  return planning;
}

struct CompileState {
  CompileState(const Engine& engine, jit::KernelObjectCache* object_cache)
      : engine(engine),
        options(engine.options()),
        object_cache(object_cache),
        planning(PlanningFor(options)),
        ledger(planning),
        cache(&ledger),
        start(std::chrono::steady_clock::now()) {}
  CompileState(const CompileState&) = delete;
  CompileState& operator=(const CompileState&) = delete;

  const Engine& engine;
  const EngineOptions& options;
  jit::KernelObjectCache* object_cache;
  passes::PlanningOptions planning;
  passes::WorkLedger ledger;
  passes::AnalysisCache cache;
  std::chrono::steady_clock::time_point start;             // Compile's start
  std::chrono::steady_clock::time_point jit_start;         // CompileLoops' start
  std::chrono::steady_clock::time_point assignment_start;  // AssignItemBuffers' start

  // RunGraphPasses: the engine's copy of the module and the entry function in it (alive until
  // the end of Compile).
  std::unique_ptr<Module> module;
  const Function* function = nullptr;
  // ResolveConstantParameters: the entry's declared-constant parameters in the copy.
  std::vector<const Value*> constant_parameters;
  // PlanItems.
  const SchedulePlan* plan = nullptr;
  const FusionPlanAnalysis* fusion = nullptr;
  size_t item_count = 0;
  std::vector<bool> nested;  // items inside a while's regions (run by its cond/body executables)
  // BindLibraryItems.
  std::vector<std::unique_ptr<kernels::LibraryKernel>> library;
  // The same kernels built for a team of one (runs under load; null unless num_threads > 1 and
  // EngineOptions::reduce_threads_under_load).
  std::vector<std::unique_ptr<kernels::LibraryKernel>> library_single;
  std::vector<const Value*> library_outputs;  // split dot_generals: the library's value
  // CompileLoops and CompileJitItems.
  std::vector<CompiledIterate> iterates;
  std::vector<std::unique_ptr<CollectiveKernel>> collectives;  // per item, or null
  std::vector<bool> skip;  // items the JIT does not compile
  // AssignItemBuffers.
  std::vector<const jit::CompiledItem*> jit_items;  // per plan item: its JIT kernel, or null
  std::vector<CompileStep> steps;
  std::vector<ItemBuffers> item_buffers;
  std::optional<BufferAssignment> assignment;
  // The executable being built (every stage may fill its stats).
  std::unique_ptr<Executable::Impl> impl = std::make_unique<Executable::Impl>();
};

// Stage 1: the caller's module verifies and has function `entry`. kInvalidArgument otherwise.
Status VerifyEntry(const Module& caller_module, std::string_view entry);
// Stage 2: copies the module and runs the graph pipeline (src/transforms/graph_pipeline.h) on
// the copy; sets state.module and state.function. `constant_parameters` (CompileOptions',
// not yet checked) tells assign-convolution-layouts which weights are declared constant.
// Errors: the pipeline's.
Status RunGraphPasses(const Module& caller_module, std::string_view entry,
                      std::span<const int64_t> constant_parameters, CompileState& state);
// Stage 2b: the parameters of state.function at `indices` (CompileOptions::
// constant_parameters) into state.constant_parameters. kInvalidArgument naming an index
// outside [0, number of parameters) or one listed twice.
Status ResolveConstantParameters(std::span<const int64_t> indices, CompileState& state);
// Stage 2c: adds CompileOptions::input_output_aliases to the entry function's own (in the
// copy). kInvalidArgument, prefixed "CompileOptions: ", for an index out of range, types that
// differ, a parameter or result aliased twice (Function::AddInputOutputAlias), or a donated
// parameter that is also declared constant (run after ResolveConstantParameters).
Status ResolveInputOutputAliases(std::span<const InputOutputAlias> aliases, CompileState& state);
// Stage 3: schedule and fusion plans, the plan text and its dump, item counts by kind.
// Errors: kUnimplemented for a kernel_call of other than one result; the planner's (refused
// allowance, WorkOverflow); kInternal when the dump cannot be written.
Status PlanItems(CompileState& state);
// Stage 4: oneDNN primitives for kernel_calls and the dot_generals that map onto matmul, built
// for a team of EngineOptions::num_threads (oneDNN fixes some primitives' team size when it
// creates them, from the calling thread's OpenMP nthreads ICV, which this stage sets for the
// call), and again for one thread when runs may drop to one (reduce_threads_under_load).
// Errors: LibraryKernel::Create's for kernel_calls (a dot_general oneDNN cannot run stays on
// the JIT).
Status BindLibraryItems(CompileState& state);
// Stage 5: each while's cond and body executables (CompileIterate), and each collective's
// kernel (CollectiveKernel::Create on the module's grid). Errors: theirs.
Status CompileLoops(CompileState& state);
// Stage 6: every remaining item as a deduplicated JIT kernel (jit::CompiledProgram).
// Errors: CompiledProgram::Compile's.
Status CompileJitItems(CompileState& state);
// Stage 7: the executor's steps in plan order with their buffers, and the buffer assignment.
// Errors: BufferAssignment::Assign's.
Status AssignItemBuffers(CompileState& state);
// Stage 8: one run's own memory (arena + largest item scratch + largest while's loop state
// and cond/body peak, as ExecutableStats::peak_memory_bytes counts it without constants)
// against EngineOptions::max_run_memory_bytes. kResourceExhausted naming the function, the
// bytes of each part and the limit.
Status CheckRunMemory(const CompileState& state);
// Stage 9: the executor's item table, constant area and stats; hands the executable over.
StatusOr<std::unique_ptr<Executable::Impl>> BuildExecutable(CompileState& state);

}  // namespace accy

#endif  // ACCY_SRC_API_COMPILE_STAGES_H_
