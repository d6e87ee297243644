// KernelSignature: what an emitter reports about the kernel it emitted (kernel_abi.h): its
// buffers in ABI order and its block decomposition. Plain value; internal to jit/ and the
// executor.
#ifndef ACCY_JIT_KERNEL_SIGNATURE_H_
#define ACCY_JIT_KERNEL_SIGNATURE_H_

#include <cstdint>
#include <vector>

#include "accy/ir.h"

namespace accy::jit {

// The buffers of a compiled kernel, in ABI order (kernel_abi.h): inputs, then outputs (then
// the scratch buffer of a two-phase kernel).
struct KernelSignature {
  // External values the kernel reads. An elided broadcast_in_dim contributes its input; a
  // constant with one element is folded into the code and has no buffer.
  std::vector<const Value*> inputs;
  std::vector<const Value*> outputs;
  // Blocks of the iteration space and iterations (output elements) per block.
  int64_t block_count = 0;
  int64_t block_size = 0;
  // Two-phase kernels (kernel_abi.h "Scratch and finish blocks"): bytes of the scratch buffer
  // passed after the outputs (0: none), and how many of the last blocks form the finish phase.
  int64_t scratch_bytes = 0;
  int64_t finish_block_count = 0;
};

}  // namespace accy::jit

#endif  // ACCY_JIT_KERNEL_SIGNATURE_H_
