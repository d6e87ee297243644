// OpenMP block splitting for compiled kernels (kernel_runner.h).
#include "jit/kernel_runner.h"

#include <omp.h>

#include <algorithm>

namespace accy::jit {

namespace {

// Runs blocks [first, last) split over threads as RunKernel documents.
void RunBlocks(const KernelLaunch& launch, void* const* buffers, const int64_t* buffer_bytes,
               int64_t first, int64_t last, const RunOptions& options) {
  const int64_t blocks = last - first;
  if (blocks <= 0) return;
  int64_t threads = options.num_threads > 0 ? options.num_threads : omp_get_max_threads();
  threads = std::min<int64_t>(threads, blocks);
  if (threads <= 1 || blocks < options.min_parallel_blocks) {
    launch.function(buffers, buffer_bytes, first, last);
    return;
  }
  // A static, contiguous split: each thread streams through one range of the outputs.
#pragma omp parallel num_threads(static_cast<int>(threads))
  {
    const int64_t team = omp_get_num_threads();
    const int64_t t = omp_get_thread_num();
    const int64_t begin = first + t * blocks / team;
    const int64_t end = first + (t + 1) * blocks / team;
    if (begin < end) launch.function(buffers, buffer_bytes, begin, end);
  }
}

}  // namespace

void RunKernel(const KernelLaunch& launch, void* const* buffers, const int64_t* buffer_bytes,
               const RunOptions& options) {
  const int64_t finish = std::clamp<int64_t>(launch.finish_block_count, 0, launch.block_count);
  RunBlocks(launch, buffers, buffer_bytes, 0, launch.block_count - finish, options);
  RunBlocks(launch, buffers, buffer_bytes, launch.block_count - finish, launch.block_count,
            options);
}

}  // namespace accy::jit
