// Runs one compiled kernel (jit/kernel_abi.h) over all its blocks, splitting the blocks across
// OpenMP threads (GCC's libgomp, shared with oneDNN) -- the stand-in for the executor's intra-op
// parallel loop until src/runtime lands. The caller owns the buffers and keeps them alive for
// the call. Thread-safe: calls share no state (each parallel call forks its own team).
#ifndef ACCY_JIT_KERNEL_RUNNER_H_
#define ACCY_JIT_KERNEL_RUNNER_H_

#include <cstdint>

#include "jit/kernel_abi.h"

namespace accy::jit {

// A kernel and its iteration space, in blocks.
struct KernelLaunch {
  KernelFunction function = nullptr;
  int64_t block_count = 0;
  // The last finish_block_count blocks run after all earlier ones (kernel_abi.h).
  int64_t finish_block_count = 0;
};

struct RunOptions {
  // Threads to use; 0 means omp_get_max_threads() (OMP_NUM_THREADS). Clamped to block_count.
  int num_threads = 0;
  // Below this many blocks the kernel runs on the calling thread with no fork/join: a parallel
  // region costs a few microseconds, a block of an elementwise kernel about as much.
  int64_t min_parallel_blocks = 2;
};

// Calls launch.function(buffers, buffer_bytes, b, e) so that the calls' [b, e) ranges partition
// [0, launch.block_count): one call on the calling thread when one thread is asked for or the
// item is small, else one contiguous range per thread (thread t of T gets blocks
// [t*n/T, (t+1)*n/T)). Results are bitwise identical for every thread count (the ABI's blocks do
// not depend on it). A launch with no blocks does nothing. With finish blocks, the two phases
// are split this way one after the other (the finish phase starts when the first has joined).
void RunKernel(const KernelLaunch& launch, void* const* buffers, const int64_t* buffer_bytes,
               const RunOptions& options = {});

}  // namespace accy::jit

#endif  // ACCY_JIT_KERNEL_RUNNER_H_
