// CompiledProgram: the JIT-compiled work items of one function -- the compile entry of the
// engine (src/api/engine.cc), the tests and the benchmarks. It owns the JitCompiler (and so the code); the
// Function, SchedulePlan and FusionPlan it was compiled from must outlive it (items point at
// their Values). Immutable after Compile: items may be run from many threads at once.
#ifndef ACCY_JIT_COMPILED_PROGRAM_H_
#define ACCY_JIT_COMPILED_PROGRAM_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "jit/jit_compiler.h"
#include "jit/kernel_runner.h"
#include "src/schedule/schedule_plan.h"

namespace accy {
class FusionPlan;
}  // namespace accy

namespace accy::jit {

// One compiled work item.
struct CompiledItem {
  int64_t item_index = 0;  // position in SchedulePlan::items (dependency order)
  WorkKind kind = WorkKind::kElementwiseSingle;
  // The kernel's name in the JIT dylib: "accy_k" + 16 hex digits of the digest of its LLVM IR
  // text (with "_<n>" appended should two different texts share a digest), so items computing
  // the same thing on the same shapes share one kernel.
  std::string symbol;
  KernelLaunch launch;     // the function and its block count (kernel_abi.h)
  int64_t block_size = 0;  // iterations per block
  // Buffers in ABI order: inputs, then outputs, with their byte sizes (same order), then the
  // scratch buffer when scratch_bytes > 0 (buffer_bytes ends with scratch_bytes then).
  std::vector<const Value*> inputs;
  std::vector<const Value*> outputs;
  std::vector<int64_t> buffer_bytes;
  int64_t scratch_bytes = 0;  // a two-phase kernel's scratch buffer (kernel_abi.h)
  // A dot_general item's epilogue alone (EmitDotEpilogueKernel): the value a library kernel
  // computed for the item, one of `inputs`; null for a kernel computing its whole item.
  const Value* library_output = nullptr;
};

class CompiledProgram {
 public:
  // Emits every item of `plan` (a plan of `function`, with `fusion` its fusion plan) as one LLVM
  // function in a module of its own; items whose modules have the same text share one kernel
  // (deduplication: the text holds the ops, attributes, types, shapes and embedded constants,
  // never buffer addresses or value names). The distinct kernels are compiled on
  // options.compile_threads threads (or loaded from options.object_cache / cache_dir) and every
  // kernel is looked up. Items whose entry in `skip` is true (the
  // executor runs them on a library, e.g. oneDNN) are left out; `skip` is empty or has one entry
  // per plan item. `library_outputs` is empty or has one entry per plan item: a non-null entry
  // marks a dot_general item whose dot (and a prefix of whose epilogue) a library computes into
  // that value; its kernel computes only the rest of the epilogue from it
  // (EmitDotEpilogueKernel). Kinds with an emitter: elementwise_single/fusion, shape,
  // reduction, scan, row_pipeline, flash_attention, dot_general. Errors: kUnimplemented naming
  // the item, its kind and root op for any other kind, or naming the op an emitter cannot lower
  // (no fallback to the reference evaluator); kInvalidArgument for a library output on another
  // kind or one EmitDotEpilogueKernel refuses; kInternal from LLVM (JitCompiler::AddModule).
  static StatusOr<std::unique_ptr<CompiledProgram>> Compile(
      const Function& function, const SchedulePlan& plan, const FusionPlan& fusion,
      const JitCompilerOptions& options = {}, std::span<const bool> skip = {},
      std::span<const Value* const> library_outputs = {});

  const std::vector<CompiledItem>& items() const { return items_; }
  const JitCompiler& compiler() const { return *compiler_; }
  // Kernels after deduplication (at most items().size()).
  int64_t distinct_kernels() const { return distinct_kernels_; }
  // Wall time of Compile, in milliseconds (emission + LLVM or cache load + lookups).
  double compile_milliseconds() const { return compile_milliseconds_; }

  // Runs item `i` over all its blocks (RunKernel). `buffers` follow item.inputs then
  // item.outputs (then a scratch buffer of item.scratch_bytes when that is > 0); each must hold at least buffer_bytes[k] bytes. kInvalidArgument naming the
  // buffer when a count or size is wrong; nothing runs then.
  Status RunItem(size_t i, void* const* buffers, const int64_t* buffer_bytes, size_t buffer_count,
                 const RunOptions& options = {}) const;

 private:
  CompiledProgram() = default;
  std::unique_ptr<JitCompiler> compiler_;
  std::vector<CompiledItem> items_;
  int64_t distinct_kernels_ = 0;
  double compile_milliseconds_ = 0;
};

}  // namespace accy::jit

#endif  // ACCY_JIT_COMPILED_PROGRAM_H_
