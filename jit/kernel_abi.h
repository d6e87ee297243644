// The one kernel ABI every JIT emitter produces and every caller of compiled code uses
// (jit/kernel_runner.h and the executor in src/runtime/executor.h).
//
// Header-only, no LLVM. The constants are immutable; a compiled kernel is a pure function of its
// buffers and block range, so distinct block ranges of one kernel may run concurrently.
#ifndef ACCY_JIT_KERNEL_ABI_H_
#define ACCY_JIT_KERNEL_ABI_H_

#include <cstdint>

namespace accy::jit {

// Every compiled work item is one C function:
//
//   extern "C" void kernel(void* const* buffers, const int64_t* buffer_bytes,
//                          int64_t block_begin, int64_t block_end);
//
// - `buffers` holds the item's external input buffers, in the order of the item's
//   KernelSignature (for elementwise items: the first use of each value while walking the item's
//   ops in topological order, operands left to right, an elided broadcast_in_dim standing for its
//   input), followed by its output buffers (one per output value). Each buffer is dense,
//   row-major, little-endian, with the element layout of accy::Tensor (i1 = one byte, 0 or 1;
//   f16 = IEEE binary16; bf16 = the upper half of an f32). Output buffers never alias input
//   buffers, with one exception: the executor may pass an elementwise kernel's output as the
//   very same buffer (same pointer, same byte size) as one of its inputs, an in-place write at
//   that input's last use; elementwise kernels read element i before writing element i, so this
//   is safe. Any alignment is accepted (64 bytes is fastest).
// - `buffer_bytes[i]` is the byte size of buffers[i]. Emitters bake the static sizes into the
//   code; the caller checks the sizes before the call (the kernel does not re-check them).
// - [block_begin, block_end) is a range of the item's blocks. A block is a fixed number of
//   iterations chosen by the emitter at compile time, independent of the thread count, so any
//   split of [0, block_count) over threads computes the same bits. The last block may be
//   partial. Blocks write disjoint parts of the outputs.
// - Scratch and finish blocks (two-phase kernels; today reductions whose reduced extent is split
//   into fixed segments): a kernel whose KernelSignature has scratch_bytes > 0 takes one more
//   buffer after its outputs, a scratch buffer of that many bytes (buffer_bytes[] lists it too).
//   Its contents on entry are undefined and need not survive the call, so the executor may lend
//   it arena memory; it must not be shared by two runs at once. When finish_block_count = F > 0,
//   the last F blocks [block_count - F, block_count) are the finish phase: the caller runs
//   them only after every earlier block has completed (they combine the partials the earlier
//   blocks wrote to scratch, in a fixed order). Ranges never straddle the two phases.
//
// The kernel never allocates, never calls back into accy, and leaves the floating-point
// environment (MXCSR: rounding, FTZ/DAZ) untouched. One exception: the sort kernels' single-key
// fast path calls the runtime functions of jit/sort_runtime.h (Highway's vqsort), whose
// per-thread sorter allocates once, on a thread's first call.
using KernelFunction = void (*)(void* const* buffers, const int64_t* buffer_bytes,
                                int64_t block_begin, int64_t block_end);

// Output elements per block of elementwise kernels: 8192 elements is 32 KiB of f32 output, small
// enough to balance 64K-element items over 2+ threads and large enough that one block costs
// microseconds, far above the per-block loop set-up.
inline constexpr int64_t kElementwiseBlockElements = 8192;

// Number of blocks covering `iterations` with blocks of `block_size` > 0 (0 for no iterations).
// Rounds up without forming iterations + block_size - 1, which overflows int64 for counts
// within block_size of INT64_MAX (a valid tensor<9223372036854775807xi8> reaches here).
inline constexpr int64_t BlockCount(int64_t iterations, int64_t block_size) {
  return iterations <= 0 ? 0 : iterations / block_size + (iterations % block_size != 0 ? 1 : 0);
}

}  // namespace accy::jit

#endif  // ACCY_JIT_KERNEL_ABI_H_
