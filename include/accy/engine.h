// accy::Engine and accy::Executable: compile a function once, run it many times.
//
// Engine::Create(options) sets up compilation (threads, LLVM optimization, object caches, dumps,
// the planning work allowance). Engine::Compile(module, entry) verifies, plans, JIT-compiles every
// work item and assigns buffers; the module may be destroyed afterwards (the executable keeps what
// it needs). Executable::Run validates its inputs and runs the items in dependency order over
// host tensors. An Executable may be run from many threads at once (each run takes its own
// arena from a pool; arenas and their pages are kept across runs). No LLVM or oneDNN header is
// reachable from here.
#ifndef ACCY_ENGINE_H_
#define ACCY_ENGINE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accy/collectives.h"
#include "accy/ir.h"
#include "accy/isa.h"
#include "accy/planner.h"
#include "accy/status.h"
#include "accy/tensor.h"

namespace accy {

namespace jit {
class KernelObjectCache;
}  // namespace jit

struct EngineOptions {
  // Threads for intra-op parallel loops (OpenMP, shared with oneDNN) and for compiling distinct
  // JIT kernels in parallel; 0 = the machine's cores.
  int num_threads = 0;
  // LLVM optimization level, 0-3 (default 3: O3 for the host CPU).
  int optimization_level = 3;
  // Folder of the on-disk object cache (empty = no cache): a second compile of the same program
  // loads objects instead of running LLVM. Create makes it (and missing parents) if needed and
  // fails when it cannot be created or written. Entries are never evicted.
  std::string cache_dir;
  // Folder for dumps of each stage (the module after each graph pass, plan text, LLVM IR
  // before/after optimization, assembly); empty = none. When empty, Create takes the
  // environment variable ACCY_DUMP_DIR if set (options().dump_dir then shows it). Checked by
  // Create as cache_dir is.
  std::string dump_dir;
  // Reserved: fast-math (reassociation, no NaN/Inf guarantees). accy computes to the IEEE rules
  // in docs/numerics.md; `true` is rejected by Create with kUnimplemented until it is supported.
  bool fast_math = false;
  // Limits on planning work per Compile (accy/planner.h): a refused program fails Compile with
  // kResourceExhausted and leaves the engine usable.
  WorkAllowance work_allowance;
  // Trip-count bound for every StableHLO `while` (spec "while") the executable runs: a loop still
  // running after this many body iterations fails Run with kResourceExhausted naming the work
  // item, so a program whose cond never turns false cannot hang a service. 0 = unbounded (what
  // XLA and the spec do). Negative values are rejected by Create.
  int64_t max_while_iterations = 0;
  // Graceful under load (docs/load.md): with num_threads > 1, Run reads how long the calling
  // thread recently waited for a CPU (/proc/thread-self/schedstat, at most once per 4 ms, ~2 us
  // a read) and runs with one thread -- JIT items, inter-op groups and oneDNN primitives, which
  // Compile then also builds for one thread -- while other processes keep the cores busy, since
  // a team member the scheduler has descheduled stalls every barrier of the run.
  // ExecutableStats::runs_with_fewer_threads counts those runs. JIT items compute the same
  // bits at any team size; a oneDNN primitive may not (its blocking, and whether it splits K
  // across the team, depend on the team size): measured the same bits for the demo block and
  // the MLP on AVX-512 (brgemm), up to 5 ULP apart for the MLP capped to AVX2 (gemm:jit), so a
  // run on one thread can differ in the last bits from a full one there (docs/load.md).
  // false: every run uses num_threads (run-to-run bit reproducibility on every host).
  bool reduce_threads_under_load = true;
  // Per-run memory bound for services (as work_allowance bounds planning): Compile fails with
  // kResourceExhausted naming the bytes when one Run would need more than this many bytes of
  // its own buffers, i.e. ExecutableStats::peak_memory_bytes minus constant_bytes: the arena of
  // intermediates, the two-phase kernels' scratch, and the largest while's loop state and
  // cond/body peak. Each concurrent Run takes its own set, so a service running R at once needs
  // R times this. Checked after buffer assignment, before any of it (or the constant area) is
  // allocated. 0 = unlimited; negative values are rejected by Create. The default, 16 GiB, lets
  // every shared model through (the chess model needs 118 MB) and refuses programs whose
  // intermediates could not fit in these machines' memory instead of failing at Run.
  int64_t max_run_memory_bytes = kDefaultMaxRunMemoryBytes;
  static constexpr int64_t kDefaultMaxRunMemoryBytes = int64_t{16} << 30;
  // Per-item profiling: every Run times each work item (steady clock, two reads per item) and
  // ExecutableStats::item_profiles reports the totals. Off by default (no clock reads).
  bool enable_profiling = false;
  // Fusion (docs/work_items.md; the rules in src/fusion/fusion_plan.h). false: no
  // fusion cluster is formed and no broadcast_in_dim is elided, so every op of the program is
  // its own work item and broadcasts are materialized into arena buffers. Results are the same
  // (each item computes to the same IEEE rules); only the item count, memory traffic and speed
  // change. For benchmarks comparing fused against forced-unfused runs. Default true.
  bool enable_fusion = true;
  // Graph passes Compile skips, by name (the pipeline in src/transforms/graph_pipeline.h, in
  // order: "expand-batch-norm", "sink-constants-into-regions", "isolate-regions-from-above",
  // "broadcast-splat-constants", "assign-convolution-layouts", "simplify-layout-chains",
  // "canonicalize-row-broadcasts", "fold-constants", "fold-transpose-into-dot-general",
  // "eliminate-common-subexpressions", "simplify-arithmetic", "eliminate-dead-code";
  // GraphPassNames() lists them). Compile runs the others on its own copy of the module; the
  // caller's module is never changed. Create fails with kInvalidArgument naming an unknown
  // pass. Results are the same with any set turned off, except that a program the engine runs
  // only after a pass fails Compile without it (batch-norm ops without expand-batch-norm,
  // region bodies that capture run-time values without isolate-regions-from-above: the JIT's
  // kUnimplemented naming what it cannot lower).
  std::vector<std::string> disabled_passes;
  // Run the verifier (Verify, accy/ir.h) after every graph pass, so that a pass that leaves an
  // invalid module is named: Compile fails with kInternal "graph pass '<name>' left a module the
  // verifier rejects: ...". Without it the module is verified once, after the last pass (the
  // error then names no pass). A debugging and fuzzing aid: it costs one Verify per pass.
  // Also set by the environment variable ACCY_VERIFY_EACH_PASS=1 (options() then shows it).
  bool verify_each_pass = false;
  // The highest ISA level this engine's JIT code may use (include/accy/isa.h); unset = the
  // process ISA (the host's, capped by ACCY_MAX_ISA). A lower level turns the host's higher
  // features off for this engine's JIT kernels only: oneDNN's ISA is process-wide, so library
  // items keep the process ISA. Create fails with kInvalidArgument when this asks for more than
  // the process ISA, naming both (and the host's).
  std::optional<Isa> max_isa;
};

// One work item's run-time totals over every Run since Compile (EngineOptions::enable_profiling).
struct ItemProfile {
  int64_t item_index = 0;    // position in the plan's order (plan_text's "#N")
  std::string kind;          // "elementwise_fusion", "dot_general", "iterate", ...
  std::string root;          // the root op's name ("add", "dot_general", "while", ...)
  std::string runs_on;       // "jit", "library" (oneDNN or a registered host kernel) or "loop"
  int64_t calls = 0;         // times the item ran (a while item counts once per Run)
  double total_milliseconds = 0;  // wall time summed over calls (a while includes its loop)
};

// What an executable is made of and costs.
struct ExecutableStats {
  std::map<std::string, int64_t> work_items_by_kind;  // "elementwise_fusion" -> count
  double plan_milliseconds = 0;     // verification + analyses + fusion + schedule
  double compile_milliseconds = 0;  // emission + LLVM (or object cache) + symbol lookup
  // JIT kernels of this function's items (a while's cond and body executables count apart):
  // items run by a JIT kernel, the distinct kernels they share after deduplication (items that
  // compute the same thing on the same shapes, such as a model's identical layers, share one),
  // and of those, how many LLVM compiled and how many came from an object cache (the engine's
  // in-memory one, or cache_dir).
  int64_t jit_items = 0;
  int64_t distinct_kernels = 0;
  int64_t kernels_compiled = 0;
  int64_t kernels_from_cache = 0;
  int64_t arena_bytes = 0;          // per-run scratch memory for intermediates
  int64_t constant_bytes = 0;       // constants read by kernels
  int64_t scratch_bytes = 0;        // per-run scratch of two-phase kernels (reductions, scans)
  // Bytes one run needs beyond the caller's inputs and outputs: arena + scratch + constants,
  // plus, for each while, its loop state (one spare copy of the carried values) and the peak of
  // its cond and body executables (the largest while counts, as items run one at a time).
  int64_t peak_memory_bytes = 0;
  // Memory the library items (oneDNN primitives and accy's host kernels) of this executable's
  // own item list own for its lifetime, in bytes, outside peak_memory_bytes (items inside a
  // while's cond or body are not counted):
  // - library_weight_bytes: copies of weights kept across runs in the layout a kernel reads
  //   (compile-time constant weights packed once, declared-constant parameters'
  //   CompileOptions::constant_parameters copies, the small-M kernel's packed panels);
  // - library_scratch_bytes: working memory of a run (oneDNN scratchpads, weights copied to a
  //   padded row stride before each run, bf16/f16 operands staged as f32).
  // With num_threads > 1 and reduce_threads_under_load, oneDNN items are bound a second time
  // for one-thread runs (docs/load.md), and both bindings count.
  int64_t library_weight_bytes = 0;
  int64_t library_scratch_bytes = 0;
  // Compile stages in milliseconds: plan_milliseconds above, then binding library items
  // (oneDNN primitive descriptors and primitives), then buffer assignment and the item table.
  double library_milliseconds = 0;
  double assignment_milliseconds = 0;
  // Inter-op parallelism: groups of independent single-block JIT items that run concurrently
  // (one item per thread) when num_threads > 1, and the items in them.
  int64_t concurrent_groups = 0;
  int64_t concurrent_items = 0;
  // Collectives (of at least 256 KiB of buffers) that run on a thread of their own while the
  // independent work items after them run (docs/collectives.md).
  int64_t overlapped_collectives = 0;
  // Per input-output alias (the function's, then CompileOptions'), in that order: whether a run
  // that passes the parameter's buffer as the result's computes in place with no copy (true),
  // or copies the parameter aside first (false: another item reads the parameter after the
  // result's producer writes, or the producer reads it at other positions than it writes).
  std::vector<InputOutputAlias> input_output_aliases;
  std::vector<bool> input_output_aliases_in_place;
  // Runs since Compile that used one thread instead of num_threads because the calling thread
  // was contended (EngineOptions::reduce_threads_under_load).
  int64_t runs_with_fewer_threads = 0;
  // Per-item run-time totals, in plan order; empty unless EngineOptions::enable_profiling.
  std::vector<ItemProfile> item_profiles;
};

// Per-Compile choices (Engine::Compile).
struct CompileOptions {
  // The function to compile.
  std::string entry = "main";
  // Parameters of `entry`, by index (0-based, in declaration order), whose values the caller
  // promises are the same on every Run: model weights passed as parameters (as JAX and
  // torch_xla export them). A oneDNN convolution or matmul that reads one as its weights takes
  // the weights layout the primitive prefers (dev_guide_understanding_memory_formats.html),
  // filled by a reorder on the first Run and again only when that input's data pointer differs
  // from the previous run's, instead of reading the plain layout (or reordering it) on every
  // run. Other values at the same address break the promise: runs then compute with the values
  // of the run that last filled the copy. Costs memory: one packed copy of each such weight per
  // library kernel (two with EngineOptions::reduce_threads_under_load). Errors (Compile,
  // kInvalidArgument): an index outside [0, number of parameters) or listed twice.
  std::vector<int64_t> constant_parameters;
  // Donated parameters (XLA's input_output_alias, JAX's donate_argnums): result `result` of
  // `entry` may be computed into the memory of parameter `parameter` (same element type and
  // dims), added to the entry function's own aliases (Function::input_output_aliases, from
  // `tf.aliasing_output` in StableHLO text). A Run whose output `result` is the very buffer of
  // input `parameter` (same data pointer) then runs in place: the input's contents are consumed
  // and afterwards hold the result. Where the plan lets the item producing the result write over
  // the parameter (every other read of it done before; the item reads it at the positions it
  // writes, as an elementwise kernel or a native all_reduce does) nothing is copied; otherwise
  // the Run first copies the parameter aside (ExecutableStats::input_output_aliases_in_place
  // says which). Errors (Compile, kInvalidArgument): an index out of range, types that differ,
  // a parameter or a result in two aliases (here or with the function's own), a donated
  // parameter that is also in constant_parameters.
  std::vector<InputOutputAlias> input_output_aliases;
};

// Per-Run choices (Executable::Run).
struct RunOptions {
  // This process's endpoint of the SPMD grid the program runs on (spec "Parallel execution";
  // accy/collectives.h): its rank is the process id replica_id * num_partitions + partition_id
  // and its world size must be num_replicas * num_partitions of the module (Module::
  // num_replicas / num_partitions, from mhlo.num_replicas / mhlo.num_partitions). Every process
  // runs the same executable (or one compiled from the same module) with its own communicator.
  // Null: a program without collectives, or one on a 1 x 1 grid (its collectives then work on
  // the one process). Ignored by a program without collectives. Not owned; used only during the
  // Run.
  Communicator* communicator = nullptr;
};

class Executable {
 public:
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  // Runs on `inputs` (one per parameter: element type and dims as declared, non-null data) and
  // returns new owned output tensors. kInvalidArgument naming the input and what was expected.
  StatusOr<std::vector<Tensor>> Run(std::span<const Tensor> inputs) const;
  // Runs writing into caller-provided `outputs` (one per result, of the declared types): no
  // allocation after the first run and no copies of inputs or outputs. kInvalidArgument when an
  // output shares memory with an input or another output, except an output that is exactly the
  // buffer of the input it is aliased to (CompileOptions::input_output_aliases): that run is in
  // place, and the input then holds the result.
  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) const;
  // The same with `options` (the communicator of an SPMD process). More errors:
  // kInvalidArgument when the program has collectives on a grid of more than one process and
  // no communicator is given, or the communicator's world size is not the grid's; the
  // collectives' errors (a peer gone: kUnavailable; a peer late beyond the communicator's
  // timeout: kDeadlineExceeded; a broken communicator: kFailedPrecondition), naming the op.
  // After a collective fails, the outputs hold unspecified values; the executable stays usable
  // with a working communicator.
  StatusOr<std::vector<Tensor>> Run(std::span<const Tensor> inputs,
                                    const RunOptions& options) const;
  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
             const RunOptions& options) const;
  // The SPMD grid the executable was compiled for (1 x 1 for a module without grid
  // attributes), and whether it has collectives (replica_id .. collective_reduce, in while /
  // case regions too).
  int64_t num_replicas() const;
  int64_t num_partitions() const;
  bool has_collectives() const;

  const std::vector<TensorType>& parameter_types() const;
  const std::vector<TensorType>& result_types() const;
  ExecutableStats Stats() const;
  // The plan, one line per work item (as PlanSummary::text).
  const std::string& plan_text() const;

  struct Impl;

 private:
  friend class Engine;
  explicit Executable(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Engine {
 public:
  // kInvalidArgument for out-of-range options (negative threads, optimization level outside
  // 0-3, negative max_while_iterations or max_run_memory_bytes); kUnimplemented for fast_math. cache_dir and dump_dir
  // (or ACCY_DUMP_DIR) are created when missing; kInvalidArgument naming the option and path
  // when one cannot be created or is not a folder, kPermissionDenied when no file can be
  // written in it.
  static StatusOr<std::unique_ptr<Engine>> Create(EngineOptions options = {});

  // Compiles function `entry` of `module`. Errors: Verify's errors; kInvalidArgument when the
  // function does not exist; the planner's (allowance refusals, WorkOverflow); kUnimplemented
  // naming a work item whose kind or op has no kernel yet; kInternal from LLVM;
  // kResourceExhausted when one run needs more than EngineOptions::max_run_memory_bytes.
  StatusOr<std::unique_ptr<Executable>> Compile(const Module& module,
                                                std::string_view entry = "main") const;
  // As above, with the entry and the declared-constant parameters of `options`; also
  // kInvalidArgument for a bad CompileOptions::constant_parameters index.
  StatusOr<std::unique_ptr<Executable>> Compile(const Module& module,
                                                const CompileOptions& options) const;

  const EngineOptions& options() const { return options_; }

  ~Engine();

 private:
  explicit Engine(EngineOptions options);
  EngineOptions options_;
  // Objects of every JIT kernel this engine compiled (thread-safe): a kernel a later Compile
  // (a while's cond or body, another program) needs again is not compiled twice.
  std::unique_ptr<jit::KernelObjectCache> object_cache_;
};

}  // namespace accy

#endif  // ACCY_ENGINE_H_
