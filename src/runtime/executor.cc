// The executor (executor.h): input validation, arena pool, items in dependency order.
#include "src/runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include <omp.h>

#include "src/runtime/load_monitor.h"
#include "src/util/str_cat.h"

namespace accy {
namespace {

Status CheckTensor(std::string_view what, int64_t index, const Tensor& tensor,
                   const TensorType& expected) {
  if (tensor.type() != expected) {
    return absl::InvalidArgumentError(StrCat(what, " ", index, " has type ",
                                             tensor.type().ToString(), ", expected ",
                                             expected.ToString()));
  }
  if (tensor.byte_size() > 0 && tensor.data() == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(what, " ", index, " (", expected.ToString(), ") has no data"));
  }
  return absl::OkStatus();
}

// kResourceExhausted for a run whose `what` of `bytes` could not be allocated, naming the bound
// that limits it at Compile (EngineOptions::max_run_memory_bytes).
Status RunMemoryError(std::string_view what, int64_t bytes, const Status& cause) {
  return absl::ResourceExhaustedError(StrCat(
      "Run: cannot allocate the run's ", what, " of ", bytes, " bytes (", cause.message(),
      "); EngineOptions::max_run_memory_bytes (accy --max-run-memory-bytes) makes Compile "
      "refuse programs that need more than a bound"));
}

}  // namespace

Status Executable::Impl::ValidateInputs(std::span<const Tensor> inputs) const {
  if (inputs.size() != parameter_types.size()) {
    return absl::InvalidArgumentError(StrCat("Run: got ", inputs.size(), " inputs, expected ",
                                             parameter_types.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    ACCY_RETURN_IF_ERROR(CheckTensor("input", static_cast<int64_t>(i), inputs[i],
                                     parameter_types[i]));
  }
  return absl::OkStatus();
}

Status Executable::Impl::ValidateOutputs(std::span<const Tensor> outputs) const {
  if (outputs.size() != result_types.size()) {
    return absl::InvalidArgumentError(StrCat("Run: got ", outputs.size(), " outputs, expected ",
                                             result_types.size()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    ACCY_RETURN_IF_ERROR(CheckTensor("output", static_cast<int64_t>(i), outputs[i],
                                     result_types[i]));
  }
  return absl::OkStatus();
}

namespace {

bool Overlaps(const Tensor& a, const Tensor& b) {
  if (a.byte_size() == 0 || b.byte_size() == 0) return false;
  auto lo_a = reinterpret_cast<uintptr_t>(a.data()), lo_b = reinterpret_cast<uintptr_t>(b.data());
  return lo_a < lo_b + static_cast<uintptr_t>(b.byte_size()) &&
         lo_b < lo_a + static_cast<uintptr_t>(a.byte_size());
}

// Whether output `o` is exactly the buffer of the input it is aliased to (an in-place run).
bool IsAliasedPair(std::span<const InputOutputAlias> aliases, std::span<const Tensor> inputs,
                   std::span<const Tensor> outputs, size_t o, size_t i) {
  for (const InputOutputAlias& alias : aliases) {
    if (static_cast<size_t>(alias.result) == o && static_cast<size_t>(alias.parameter) == i) {
      return outputs[o].data() == inputs[i].data() &&
             outputs[o].byte_size() == inputs[i].byte_size();
    }
  }
  return false;
}

}  // namespace

// Kernels read inputs while writing outputs in an order of their own, so an output sharing
// memory with an input or another output would give wrong results: refuse it, except an output
// that is exactly the buffer of the input it is aliased to (PlanInputOutputAliases made that
// safe, or the run copies the input aside).
Status CheckNoOverlap(std::span<const InputOutputAlias> aliases, std::span<const Tensor> inputs,
                      std::span<const Tensor> outputs) {
  for (size_t o = 0; o < outputs.size(); ++o) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (Overlaps(outputs[o], inputs[i]) && !IsAliasedPair(aliases, inputs, outputs, o, i)) {
        return absl::InvalidArgumentError(StrCat(
            "Run: output ", o, " shares memory with input ", i,
            "; outputs must not overlap inputs, except an output that is exactly the buffer "
            "of the input it is aliased to (CompileOptions::input_output_aliases)"));
      }
    }
    for (size_t p = 0; p < o; ++p) {
      if (Overlaps(outputs[o], outputs[p])) {
        return absl::InvalidArgumentError(
            StrCat("Run: output ", o, " shares memory with output ", p));
      }
    }
  }
  return absl::OkStatus();
}

std::unique_ptr<Executable::Impl::RunContext> Executable::Impl::AcquireContext() const {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!pool_.empty()) {
      std::unique_ptr<RunContext> context = std::move(pool_.back());
      pool_.pop_back();
      return context;
    }
  }
  return std::make_unique<RunContext>();
}

void Executable::Impl::ReleaseContext(std::unique_ptr<RunContext> context) const {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  pool_.push_back(std::move(context));
}

Status Executable::Impl::Run(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                             const RunOptions& options) const {
  ACCY_RETURN_IF_ERROR(ValidateInputs(inputs));
  Communicator* communicator = options.communicator;
  const int64_t grid_size = num_replicas * num_partitions;
  if (has_collectives && communicator != nullptr && communicator->world_size() != grid_size) {
    return absl::InvalidArgumentError(StrCat(
        "RunOptions::communicator has a world of ", communicator->world_size(),
        " processes, but the program runs on a grid of ", num_replicas, " replicas x ",
        num_partitions, " partitions (", grid_size, " processes)"));
  }
  if (communicator == nullptr && has_collectives) {
    if (grid_size != 1) {
      return absl::InvalidArgumentError(StrCat(
          "the program has collective ops on a grid of ", num_replicas, " replicas x ",
          num_partitions, " partitions: Run needs RunOptions::communicator (one per process, "
          "accy/collectives.h)"));
    }
    communicator = &SingleProcessCommunicator();
  }
  RunOptions nested_options = options;
  nested_options.communicator = communicator;
  ACCY_RETURN_IF_ERROR(ValidateOutputs(outputs));
  ACCY_RETURN_IF_ERROR(CheckNoOverlap(aliases, inputs, outputs));
  std::unique_ptr<RunContext> context = AcquireContext();
  // Where each parameter is read from: the caller's input, or for an aliased pair that cannot
  // run in place, a copy taken before anything writes the result.
  std::vector<const void*>& parameter_data = context->parameter_data;
  parameter_data.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) parameter_data[i] = inputs[i].data();
  for (size_t a = 0; a < aliases.size(); ++a) {
    const auto p = static_cast<size_t>(aliases[a].parameter);
    const auto r = static_cast<size_t>(aliases[a].result);
    if (alias_in_place[a] || !IsAliasedPair(aliases, inputs, outputs, r, p)) continue;
    context->alias_copies.resize(aliases.size());
    Tensor& copy = context->alias_copies[a];
    if (copy.byte_size() != inputs[p].byte_size()) {
      auto allocated = Tensor::Allocate(inputs[p].type());
      if (!allocated.ok()) {
        ReleaseContext(std::move(context));
        return allocated.status();
      }
      copy = *std::move(allocated);
    }
    if (copy.byte_size() > 0) std::memcpy(copy.data(), inputs[p].data(), copy.byte_size());
    parameter_data[p] = copy.data();
  }
  if (context->arena.byte_size() < arena_bytes) {
    auto type = TensorType::Create(ElementType::kU8, {arena_bytes});
    if (!type.ok()) return type.status();
    auto arena = Tensor::Allocate(*type);
    if (!arena.ok()) {
      ReleaseContext(std::move(context));
      return RunMemoryError("arena (the intermediate buffers)", arena_bytes, arena.status());
    }
    context->arena = *std::move(arena);
  }
  if (context->scratch.byte_size() < scratch_bytes) {
    auto type = TensorType::Create(ElementType::kU8, {scratch_bytes});
    if (!type.ok()) return type.status();
    auto scratch = Tensor::Allocate(*type);
    if (!scratch.ok()) {
      ReleaseContext(std::move(context));
      return RunMemoryError("scratch area (the kernels' temporary space)", scratch_bytes,
                            scratch.status());
    }
    context->scratch = *std::move(scratch);
  }
  auto* arena = static_cast<uint8_t*>(context->arena.data());
  const auto* constant_area = static_cast<const uint8_t*>(constants.data());
  auto locate = [&](const BufferSlice& slice) -> void* {
    switch (slice.kind) {
      case BufferSlice::Kind::kParameter:
        return const_cast<void*>(parameter_data[static_cast<size_t>(slice.index)]);
      case BufferSlice::Kind::kResult:
        return outputs[static_cast<size_t>(slice.index)].data();
      case BufferSlice::Kind::kConstant:
        return const_cast<uint8_t*>(constant_area + slice.offset);
      case BufferSlice::Kind::kArena:
        return arena + slice.offset;
    }
    return nullptr;
  };
  // This run's team size: the engine's, or one while the calling thread is contended
  // (load_monitor.h).
  const int threads = reduce_threads_under_load
                          ? LoadMonitor::ForThisThread().ThreadsForRun(num_threads)
                          : num_threads;
  if (threads < num_threads) runs_with_fewer_threads.fetch_add(1, std::memory_order_relaxed);
  jit::RunOptions run_options;
  run_options.num_threads = threads;
  // oneDNN primitives whose team size is not fixed at creation size it from this thread's
  // nthreads ICV: set it to the run's thread count and give the caller's setting back afterwards.
  const int caller_threads = omp_get_max_threads();
  omp_set_num_threads(threads);
  struct RestoreThreads {
    int threads;
    ~RestoreThreads() { omp_set_num_threads(threads); }
  } restore{caller_threads};
  // A collective overlapping later items (OverlapCollectives): its thread, joined at
  // `pending_join` (or on any way out of this function).
  struct PendingCollective {
    std::thread thread;
    Status status;
    size_t join = SIZE_MAX;
    std::vector<void*> pointers;
    std::chrono::steady_clock::time_point start;
    ItemCounters* counters = nullptr;
    Status Join() {
      if (!thread.joinable()) return absl::OkStatus();
      thread.join();
      join = SIZE_MAX;
      if (counters != nullptr) {
        counters->calls.fetch_add(1, std::memory_order_relaxed);
        counters->nanoseconds.fetch_add(
            std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::steady_clock::now() - start).count(),
            std::memory_order_relaxed);
      }
      return status;
    }
    ~PendingCollective() {
      if (thread.joinable()) thread.join();
    }
  } pending;
  for (size_t index = 0; index < items.size(); ++index) {
    const ExecutorItem& item = items[index];
    if (index == pending.join) {
      if (Status status = pending.Join(); !status.ok()) {
        ReleaseContext(std::move(context));
        return status;
      }
    }
    if (item.collective != nullptr && item.join_before > index + 1) {
      pending.pointers.clear();
      for (const BufferSlice& slice : item.buffers) pending.pointers.push_back(locate(slice));
      pending.join = item.join_before;
      pending.start = std::chrono::steady_clock::now();
      pending.counters = counters != nullptr ? &counters[index] : nullptr;
      pending.thread = std::thread([&pending, &item, communicator] {
        pending.status = item.collective->Run(pending.pointers.data(), *communicator);
      });
      continue;
    }
    if (item.group_end > index + 1 && threads > 1) {
      RunGroup(index, item.group_end, threads, locate);
      index = item.group_end - 1;
      continue;
    }
    std::chrono::steady_clock::time_point start;
    if (counters != nullptr) start = std::chrono::steady_clock::now();
    struct Record {  // adds this item's time on every path out of the loop body
      ItemCounters* counters;
      std::chrono::steady_clock::time_point start;
      ~Record() {
        if (counters == nullptr) return;
        counters->calls.fetch_add(1, std::memory_order_relaxed);
        counters->nanoseconds.fetch_add(
            std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::steady_clock::now() - start).count(),
            std::memory_order_relaxed);
      }
    } record{counters != nullptr ? &counters[index] : nullptr, start};
    context->pointers.resize(item.buffers.size());
    for (size_t b = 0; b < item.buffers.size(); ++b) {
      context->pointers[b] = locate(item.buffers[b]);
    }
    if (item.scratch_bytes > 0) context->pointers.push_back(context->scratch.data());
    if (item.iterate != nullptr) {
      Status status = item.iterate->Run(context->pointers.data(), nested_options);
      if (!status.ok()) {
        (void)pending.Join();  // its memory goes back to the pool with the context
        ReleaseContext(std::move(context));
        return status;
      }
      continue;
    }
    if (item.collective != nullptr) {
      Status status = item.collective->Run(context->pointers.data(), *communicator);
      if (!status.ok()) {
        (void)pending.Join();  // its memory goes back to the pool with the context
        ReleaseContext(std::move(context));
        return status;
      }
      continue;
    }
    if (item.library != nullptr) {
      for (const auto& [in, out] : item.copy_in) {
        void*& source = context->pointers[static_cast<size_t>(in)];
        void* destination = context->pointers[static_cast<size_t>(out)];
        if (source != destination) {
          const int64_t bytes = item.buffer_bytes[static_cast<size_t>(out)];
          if (bytes > 0) std::memcpy(destination, source, static_cast<size_t>(bytes));
          source = destination;
        }
      }
      std::lock_guard<std::mutex> lock(*item.library_mutex);
      kernels::LibraryKernel* library =
          threads == 1 && item.library_single != nullptr ? item.library_single : item.library;
      Status status = library->Run(context->pointers.data(), item.buffer_bytes.data(),
                                   static_cast<int64_t>(context->pointers.size()));
      if (!status.ok()) {
        (void)pending.Join();  // its memory goes back to the pool with the context
        ReleaseContext(std::move(context));
        return status;
      }
      continue;
    }
    if (item.aliasing) {
      // Input 0 and output 0 hold the same bytes: nothing to do when they are the same memory.
      if (context->pointers.front() == context->pointers.back()) continue;
    }
    jit::RunKernel(item.launch, context->pointers.data(), item.buffer_bytes.data(), run_options);
  }
  if (Status status = pending.Join(); !status.ok()) {
    ReleaseContext(std::move(context));
    return status;
  }
  for (const auto& [result, slice] : result_copies) {
    Tensor& out = outputs[static_cast<size_t>(result)];
    if (out.byte_size() > 0) std::memmove(out.data(), locate(slice), out.byte_size());
  }
  ReleaseContext(std::move(context));
  return absl::OkStatus();
}

namespace {

constexpr size_t kMaxGroupBuffers = 16;

bool Overlap(const BufferSlice& a, const BufferSlice& b) {
  if (a.kind != b.kind || a.bytes == 0 || b.bytes == 0) return false;
  if (a.kind == BufferSlice::Kind::kParameter || a.kind == BufferSlice::Kind::kResult) {
    return a.index == b.index;
  }
  return a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

bool Groupable(const ExecutorItem& item) {
  return item.library == nullptr && item.iterate == nullptr && item.collective == nullptr &&
         !item.aliasing &&
         item.scratch_bytes == 0 && item.launch.function != nullptr &&
         item.launch.block_count == 1 && item.launch.finish_block_count == 0 &&
         item.buffers.size() <= kMaxGroupBuffers;
}

// Whether `b` may run at the same time as `a`: neither writes memory the other touches.
bool Independent(const ExecutorItem& a, const ExecutorItem& b) {
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    for (size_t j = 0; j < b.buffers.size(); ++j) {
      const bool a_writes = i >= a.num_inputs, b_writes = j >= b.num_inputs;
      if ((a_writes || b_writes) && Overlap(a.buffers[i], b.buffers[j])) return false;
    }
  }
  return true;
}

}  // namespace

void Executable::Impl::RunGroup(size_t begin, size_t end, int threads,
                                const std::function<void*(const BufferSlice&)>& locate) const {
  const int64_t count = static_cast<int64_t>(end - begin);
  const int team = static_cast<int>(std::min<int64_t>(threads, count));
  jit::RunOptions single;
  single.num_threads = 1;
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
  for (int64_t k = 0; k < count; ++k) {
    const size_t index = begin + static_cast<size_t>(k);
    const ExecutorItem& item = items[index];
    const auto start = std::chrono::steady_clock::now();
    void* pointers[kMaxGroupBuffers];
    for (size_t b = 0; b < item.buffers.size(); ++b) pointers[b] = locate(item.buffers[b]);
    jit::RunKernel(item.launch, pointers, item.buffer_bytes.data(), single);
    if (counters != nullptr) {
      counters[index].calls.fetch_add(1, std::memory_order_relaxed);
      counters[index].nanoseconds.fetch_add(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                               start).count(),
          std::memory_order_relaxed);
    }
  }
}

void Executable::Impl::OverlapCollectives() {
  for (size_t i = 0; i < items.size(); ++i) {
    ExecutorItem& collective = items[i];
    if (collective.collective == nullptr) continue;
    int64_t bytes = 0;
    for (const BufferSlice& slice : collective.buffers) bytes += slice.bytes;
    if (bytes < kMinOverlapBytes) continue;
    auto conflicts = [&](const ExecutorItem& other) {
      return other.collective != nullptr || other.iterate != nullptr ||
             !Independent(collective, other);
    };
    size_t j = i + 1;
    while (j < items.size()) {
      const size_t group_end = std::max(items[j].group_end, j + 1);
      bool stop = false;
      for (size_t k = j; k < group_end && !stop; ++k) stop = conflicts(items[k]);
      if (stop) break;
      j = group_end;
    }
    if (j > i + 1) {
      collective.join_before = j;
      ++stats.overlapped_collectives;
    }
  }
}

void Executable::Impl::GroupIndependentItems() {
  if (num_threads <= 1) return;  // one thread: everything runs in plan order
  size_t begin = 0;
  while (begin < items.size()) {
    if (!Groupable(items[begin])) {
      ++begin;
      continue;
    }
    size_t end = begin + 1;
    int64_t bytes = items[begin].estimated_bytes;
    while (end < items.size() && Groupable(items[end])) {
      bool independent = true;
      for (size_t k = begin; k < end && independent; ++k) {
        independent = Independent(items[k], items[end]);
      }
      if (!independent) break;
      bytes += items[end].estimated_bytes;
      ++end;
    }
    if (end - begin >= 2 && bytes >= kMinGroupBytes) {
      items[begin].group_end = end;
      ++stats.concurrent_groups;
      stats.concurrent_items += static_cast<int64_t>(end - begin);
    }
    begin = end;
  }
}

ExecutableStats Executable::Impl::CurrentStats() const {
  ExecutableStats current = stats;
  current.runs_with_fewer_threads = runs_with_fewer_threads.load(std::memory_order_relaxed);
  if (counters == nullptr) return current;
  current.item_profiles.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    ItemProfile profile = items[i].profile;
    profile.calls = counters[i].calls.load(std::memory_order_relaxed);
    profile.total_milliseconds =
        static_cast<double>(counters[i].nanoseconds.load(std::memory_order_relaxed)) / 1e6;
    current.item_profiles.push_back(std::move(profile));
  }
  return current;
}

void Executable::Impl::PlanInputOutputAliases() {
  alias_in_place.assign(aliases.size(), false);
  auto is = [](const BufferSlice& slice, BufferSlice::Kind kind, int64_t index) {
    return slice.kind == kind && slice.index == index;
  };
  // The inter-op group holding each item: [start, end), or [i, i + 1) when it runs alone.
  std::vector<size_t> group_start(items.size()), group_stop(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    group_start[i] = i;
    group_stop[i] = i + 1;
  }
  if (num_threads > 1) {
    for (size_t i = 0; i < items.size(); ++i) {
      for (size_t k = i; k < items[i].group_end; ++k) {
        group_start[k] = i;
        group_stop[k] = items[i].group_end;
      }
    }
  }
  for (size_t a = 0; a < aliases.size(); ++a) {
    const int64_t p = aliases[a].parameter, r = aliases[a].result;
    bool safe = true;
    // Results are copied after every item ran: one copied from the parameter into another
    // result would read what the aliased result wrote.
    for (const auto& [result, slice] : result_copies) {
      if (is(slice, BufferSlice::Kind::kParameter, p) && result != r) safe = false;
    }
    // The first item that writes the result's buffer. A later writer must compute in place
    // over it (buffer assignment placed a dying operand there: its producer writes first, then,
    // say, an all_reduce reduces it there); the parameter rules below hold for the first.
    size_t writer = SIZE_MAX;
    int writer_buffer = -1;
    for (size_t i = 0; i < items.size() && safe; ++i) {
      const ExecutorItem& item = items[i];
      for (size_t b = item.num_inputs; b < item.buffers.size(); ++b) {
        if (!is(item.buffers[b], BufferSlice::Kind::kResult, r)) continue;
        if (writer == SIZE_MAX || writer == i) {
          writer = i;
          writer_buffer = static_cast<int>(b);
          continue;
        }
        bool over_itself = false;
        for (size_t k = 0; k < item.num_inputs; ++k) {
          const std::pair<int, int> pair{static_cast<int>(k), static_cast<int>(b)};
          over_itself = over_itself ||
                        (is(item.buffers[k], BufferSlice::Kind::kResult, r) &&
                         std::find(item.in_place.begin(), item.in_place.end(), pair) !=
                             item.in_place.end());
        }
        safe = safe && over_itself;
      }
    }
    for (size_t j = 0; j < items.size() && safe; ++j) {
      const ExecutorItem& item = items[j];
      for (size_t b = 0; b < item.num_inputs && safe; ++b) {
        if (!is(item.buffers[b], BufferSlice::Kind::kParameter, p)) continue;
        if (j == writer) {
          // The producer reads the parameter: only where it computes the result in place.
          const std::pair<int, int> pair{static_cast<int>(b), writer_buffer};
          safe = std::find(item.in_place.begin(), item.in_place.end(), pair) !=
                 item.in_place.end();
        } else if (writer != SIZE_MAX) {
          // Another reader must have finished before the producer starts.
          const bool before = j < writer && group_stop[j] <= group_start[writer];
          const bool still_running = item.join_before > writer;
          safe = before && !still_running;
        }
      }
    }
    alias_in_place[a] = safe;
  }
  stats.input_output_aliases = aliases;
  stats.input_output_aliases_in_place = alias_in_place;
}

}  // namespace accy
