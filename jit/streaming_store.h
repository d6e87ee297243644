// Internal to jit/: non-temporal ("streaming") output stores for kernels whose output is too
// large to stay in cache. A kernel computes a short run of output elements into an aligned
// stack stage (ordinary stores the loop vectorizer widens), then EmitStreamingCopy moves the
// stage to the output with 64-byte non-temporal vector stores: the output's cache lines are
// written without being read first (no read-for-ownership), which on these machines saves a
// fifth of a streaming kernel's memory traffic. Values are copied bit for bit, so results do
// not change. Declares no LLVM headers. Not thread-safe (emits through one builder).
#ifndef ACCY_JIT_STREAMING_STORE_H_
#define ACCY_JIT_STREAMING_STORE_H_

#include <cstdint>

namespace llvm {
class AllocaInst;
class Function;
class IRBuilderBase;
class Type;
class Value;
}  // namespace llvm

namespace accy::jit {

// Outputs of at least this many bytes are written with streaming stores: 8 MiB is 8x a core's
// L2 and a quarter of the L3 of these machines, so a consumer would find little of it cached
// anyway, while the write-allocate reads cost 25% more traffic on every byte written.
inline constexpr int64_t kStreamingStoreBytes = int64_t{8} << 20;
// Bytes of the stack stage (a multiple of the 64-byte store width, in L1). Short runs keep
// the streaming stores interleaved with the computation: with 8 KiB runs the copy bursts did
// not overlap the arithmetic and a fused tanh chain lost 15% (measured, 1 thread).
inline constexpr int64_t kStreamingStageBytes = 2048;

// A 64-byte aligned stack array of kStreamingStageBytes, allocated at the function's entry.
llvm::AllocaInst* CreateStreamingStage(llvm::IRBuilderBase& builder, llvm::Function& function);

// Copies `bytes` (i64, at most kStreamingStageBytes) from `stage` to `destination`: when
// `destination` is 64-byte aligned, whole 64-byte pieces with non-temporal stores and the rest
// with llvm.memcpy; otherwise all with llvm.memcpy. The builder continues after the copy.
void EmitStreamingCopy(llvm::IRBuilderBase& builder, llvm::Function& function,
                       llvm::Value* stage, llvm::Value* destination, llvm::Value* bytes);

// Orders the kernel's non-temporal stores before its return (a full fence: mfence on x86), so
// whoever reads the output after the kernel (another thread after the runner's join) sees them.
void EmitStreamingFence(llvm::IRBuilderBase& builder);

}  // namespace accy::jit

#endif  // ACCY_JIT_STREAMING_STORE_H_
