// Executable::Impl: what a compiled function keeps to run, and the executor that runs it.
//
// Built once by Engine::Compile; afterwards immutable except for the arena pool (guarded by a
// mutex), so Run may be called from many threads at once. Nothing on the run path refers to the
// IR: items hold kernel launches and buffer references (parameter / result / constant / arena
// slices), so the module may be destroyed after compiling.
#ifndef ACCY_SRC_RUNTIME_EXECUTOR_H_
#define ACCY_SRC_RUNTIME_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/tensor.h"
#include "jit/compiled_program.h"
#include "kernels/onednn_kernel.h"
#include "src/runtime/buffer_assignment.h"
#include "src/runtime/collective_kernel.h"
#include "src/runtime/control_flow_kernel.h"

namespace accy {

// One runnable item: a JIT kernel (or an aliasing item that only moves data when its input and
// output slices differ) and where each of its buffers lives.
struct ExecutorItem {
  jit::KernelLaunch launch;
  // A library item (oneDNN primitive or registered host kernel) instead of a JIT kernel. Its Run
  // re-points bound memories, so runs of one library item are serialized by `library_mutex`.
  kernels::LibraryKernel* library = nullptr;
  // The same primitive built for a team of one (EngineOptions::reduce_threads_under_load), run
  // instead of `library` when a run uses one thread; null when the engine has one thread.
  kernels::LibraryKernel* library_single = nullptr;
  std::mutex* library_mutex = nullptr;
  // An iterate item (StableHLO while or case): runs its compiled regions (iterate_kernel.h,
  // case_kernel.h).
  const ControlFlowKernel* iterate = nullptr;
  // A collective item (src/runtime/collective_kernel.h): runs through the run's communicator.
  const CollectiveKernel* collective = nullptr;
  std::vector<BufferSlice> buffers;  // inputs then outputs, ABI order
  size_t num_inputs = 0;             // how many of `buffers` the item only reads
  std::vector<int64_t> buffer_bytes;  // one per buffer, then scratch_bytes when it is > 0
  // A two-phase kernel's scratch buffer (kernel_abi.h), passed after the outputs; items run one
  // after another, so all items share one per-run scratch area.
  int64_t scratch_bytes = 0;
  // A reshape whose output may share its input's bytes: skipped when the two slices coincide.
  bool aliasing = false;
  // In-place library outputs (kernel_call result_aliases): (input buffer, output buffer). When
  // buffer assignment gave them different memory, the input's bytes are copied into the output
  // before the item runs and the item reads the output's memory for that input.
  std::vector<std::pair<int, int>> copy_in;
  // (input buffer, output buffer) pairs the item may compute in place: the output written over
  // that input's memory reads each element before writing it (elementwise kernels, a reshape's
  // byte copy, a native all_reduce, in-place library outputs). Input-output aliases use it.
  std::vector<std::pair<int, int>> in_place;
  // The plan's estimate of the bytes this item reads and writes (inter-op grouping).
  int64_t estimated_bytes = 0;
  // Items [this, group_end) are independent single-block JIT items run concurrently, one per
  // thread (set by GroupIndependentItems on the group's first item; 0 = no group starts here).
  size_t group_end = 0;
  // A collective that runs on a thread of its own while the items [this + 1, join_before) run
  // (set by OverlapCollectives; 0 = it runs in order like any item).
  size_t join_before = 0;
  // Profile row of this item (Executable::Impl::profiles), in plan order.
  ItemProfile profile;
};

// Run-time totals of one item, updated by concurrent runs (EngineOptions::enable_profiling).
struct ItemCounters {
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> nanoseconds{0};
};

struct Executable::Impl {
  std::vector<TensorType> parameter_types;
  std::vector<TensorType> result_types;
  std::vector<ExecutorItem> items;
  std::vector<std::pair<int64_t, BufferSlice>> result_copies;
  // The constant area (64-byte aligned), filled at compile time.
  Tensor constants;
  int64_t arena_bytes = 0;
  int64_t scratch_bytes = 0;  // the largest item scratch buffer
  int num_threads = 1;
  bool reduce_threads_under_load = false;
  mutable std::atomic<int64_t> runs_with_fewer_threads{0};
  ExecutableStats stats;
  // One per item when profiling is on, else null.
  std::unique_ptr<ItemCounters[]> counters;
  std::string plan_text;
  // Keeps the JIT code and the library primitives alive.
  std::unique_ptr<jit::CompiledProgram> program;
  std::vector<std::unique_ptr<kernels::LibraryKernel>> library_kernels;
  std::vector<std::unique_ptr<std::mutex>> library_mutexes;
  std::vector<std::unique_ptr<ControlFlowKernel>> iterate_kernels;
  std::vector<std::unique_ptr<CollectiveKernel>> collective_kernels;
  // The SPMD grid the collectives were bound for (Module::num_replicas / num_partitions), and
  // whether this function or a while / case region in it has a collective (then a run on a grid
  // of more than one process needs RunOptions::communicator).
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  bool has_collectives = false;
  // Input-output aliases (the function's, then CompileOptions'), and per alias whether a run
  // passing the parameter's buffer as the result's may compute in place without first copying
  // the parameter aside (set by PlanInputOutputAliases).
  std::vector<InputOutputAlias> aliases;
  std::vector<bool> alias_in_place;

  // Inter-op parallelism: marks runs of consecutive items that may run at the same time. An item
  // joins a group when it is a JIT kernel of one block (intra-op parallelism would leave the
  // other threads idle), uses no scratch, and none of its buffers overlaps a buffer another
  // group member writes (arena slices are reused, so independence is checked on memory, not
  // only on values). A group runs concurrently only when it has at least two items and moves
  // at least kMinGroupBytes in all (below that a fork/join costs more than it saves).
  // Call after num_threads is set; with one thread nothing is grouped.
  static constexpr int64_t kMinGroupBytes = 64 * 1024;
  void GroupIndependentItems();
  // Lets a collective item of at least kMinOverlapBytes overlap the items after it that touch
  // none of its memory (neither write what it reads nor touch what it writes), up to the first
  // that does, the next collective or control-flow item (a communicator serves one call at a
  // time), or an inter-op group holding such an item; the executor joins it there (or at the
  // end of the run). Sets ExecutorItem::join_before and stats.overlapped_collectives. Call after
  // GroupIndependentItems.
  static constexpr int64_t kMinOverlapBytes = 256 * 1024;
  void OverlapCollectives();
  // Sets alias_in_place (and the stats' copy of it) for `aliases`: in place when every item
  // that reads the parameter other than the first item writing the result's buffer finishes
  // before that item starts (earlier in order, not in its inter-op group, not an overlapped
  // collective still running), that item reads the parameter only at positions it computes in
  // place (ExecutorItem::in_place), every later writer of the result's buffer computes in place
  // over it (an operand buffer assignment placed there), and no result copied after the run
  // reads the parameter. Call after OverlapCollectives.
  void PlanInputOutputAliases();
  // stats with item_profiles filled from the counters.
  ExecutableStats CurrentStats() const;
  // Validates and runs (Executable::Run).
  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
             const RunOptions& options = {}) const;

 private:
  // Per-run scratch: the arena and the pointer table, reused across runs (no allocation and no
  // fresh pages after the first run).
  struct RunContext {
    Tensor arena;
    Tensor scratch;
    std::vector<void*> pointers;
    // Where this run reads each parameter (the caller's input or its copy in alias_copies).
    std::vector<const void*> parameter_data;
    // Per alias: where a run that aliases the buffers copies the parameter aside when the
    // alias cannot run in place.
    std::vector<Tensor> alias_copies;
  };
  std::unique_ptr<RunContext> AcquireContext() const;
  void ReleaseContext(std::unique_ptr<RunContext> context) const;
  Status ValidateInputs(std::span<const Tensor> inputs) const;
  Status ValidateOutputs(std::span<const Tensor> outputs) const;
  // Runs the grouped items [begin, end) concurrently, one item per OpenMP thread.
  void RunGroup(size_t begin, size_t end, int threads,
                const std::function<void*(const BufferSlice&)>& locate) const;

  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<RunContext>> pool_;
};

}  // namespace accy

#endif  // ACCY_SRC_RUNTIME_EXECUTOR_H_
