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
#include "src/runtime/iterate_kernel.h"

namespace accy {

// One runnable item: a JIT kernel (or an aliasing item that only moves data when its input and
// output slices differ) and where each of its buffers lives.
struct ExecutorItem {
  jit::KernelLaunch launch;
  // A library item (oneDNN primitive or registered host kernel) instead of a JIT kernel. Its Run
  // re-points bound memories, so runs of one library item are serialized by `library_mutex`.
  kernels::LibraryKernel* library = nullptr;
  std::mutex* library_mutex = nullptr;
  // An iterate item (StableHLO while): runs its compiled cond and body (iterate_kernel.h).
  const IterateKernel* iterate = nullptr;
  std::vector<BufferSlice> buffers;  // inputs then outputs, ABI order
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
  ExecutableStats stats;
  // One per item when profiling is on, else null.
  std::unique_ptr<ItemCounters[]> counters;
  std::string plan_text;
  // Keeps the JIT code and the library primitives alive.
  std::unique_ptr<jit::CompiledProgram> program;
  std::vector<std::unique_ptr<kernels::LibraryKernel>> library_kernels;
  std::vector<std::unique_ptr<std::mutex>> library_mutexes;
  std::vector<std::unique_ptr<IterateKernel>> iterate_kernels;

  // stats with item_profiles filled from the counters.
  ExecutableStats CurrentStats() const;
  // Validates and runs (Executable::Run).
  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) const;

 private:
  // Per-run scratch: the arena and the pointer table, reused across runs (no allocation and no
  // fresh pages after the first run).
  struct RunContext {
    Tensor arena;
    Tensor scratch;
    std::vector<void*> pointers;
  };
  std::unique_ptr<RunContext> AcquireContext() const;
  void ReleaseContext(std::unique_ptr<RunContext> context) const;
  Status ValidateInputs(std::span<const Tensor> inputs) const;
  Status ValidateOutputs(std::span<const Tensor> outputs) const;

  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<RunContext>> pool_;
};

}  // namespace accy

#endif  // ACCY_SRC_RUNTIME_EXECUTOR_H_
