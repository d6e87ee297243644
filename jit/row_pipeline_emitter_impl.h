// Internal to jit/: the row pipeline emitter's class (row_pipeline_emitter.cc has the
// algorithm's description and most methods; row_pipeline_reduce_pass.cc the reduce passes).
// One emitter builds one kernel function into one module; not thread-safe.
#ifndef ACCY_JIT_ROW_PIPELINE_EMITTER_IMPL_H_
#define ACCY_JIT_ROW_PIPELINE_EMITTER_IMPL_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jit/elementwise_lowering.h"
#include "jit/emitters.h"
#include "jit/kernel_prologue.h"
#include "jit/row_accumulation.h"
#include "jit/row_pipeline_plan.h"
#include "llvm/IR/IRBuilder.h"

namespace accy::jit::row_pipeline {

// Elements per block (rounded to whole rows, at least one row): as elementwise kernels.
constexpr int64_t kRowBlockElements = 8192;
// Columns per reduce chunk: the scratch of one reduce is at most 4 KiB (f64), in L1.
constexpr int64_t kChunk = 512;
// Largest row kept in a stack row when the output is streamed (else the output is not
// streamed): a quarter of L1.
constexpr int64_t kMaxCachedRowBytes = 12 * 1024;
// The last reduce pass's map loop runs in groups of one cache line of its narrowest prefetched
// input (or of MapGroupColumns, below, if that is more) and prefetches the next row's lines of
// each input per group (EmitReducePass). Spread that way, the next row's DRAM reads overlap
// this row's arithmetic (softmax's exp); without it the first pass of each row waits for
// memory while the later passes leave DRAM idle.
// A C model of the kernel on Zen 3 (AVX2, 1 thread, softmax [4096, 1024], beside a build):
// 6.1-7.2 ms without, 4.6 ms with one prefetch per 16 columns, 5.5-6.2 ms with the whole row
// prefetched at its start. The kernel itself: docs/isa.md (8-12% on an idle host, more when
// the memory system is contended).
constexpr int64_t kCacheLineBytes = 64;
// The reduce passes' map loops (softmax's exp(x - max)) ask the loop vectorizer for
// kMapInterleave vectors per iteration (LangRef "llvm.loop.interleave.count"), and the last
// pass's groups span at least that many f32 vectors of the target (MapGroupColumns: 32 columns
// on AVX2, 64 on AVX-512), so that the vectorizer keeps its full width. It then emits each op
// for the four vectors in a row, so the core overlaps their dependent chains (exp's is about 55
// cycles long); left to itself, it kept each vector's chain together (AVX2 has 16 registers)
// and the capped exp loop ran at about 1.5x its FMA-port bound (docs/isa.md, "Four chains").
constexpr int32_t kMapInterleave = 4;
inline int64_t MapGroupColumns(int vector_bits) {
  return int64_t{kMapInterleave} * std::max(4, vector_bits / 32);
}

class RowPipelineEmitter {
 public:
  RowPipelineEmitter(const WorkItem& item, const FusionPlan& fusion, llvm::Module& module,
                     const KernelTarget& target)
      : item_(item), fusion_(fusion), module_(module), context_(module.getContext()),
        b_(context_), lowering_(module, b_), acc_(b_, target.vector_bits),
        scale_primitive_(target.vector_bits >= 512),
        map_group_columns_(MapGroupColumns(target.vector_bits)) {}

  StatusOr<KernelSignature> Emit(std::string_view symbol);

 private:
  // Emits `for (i = begin; i < end; ++i) body(i)`; the builder continues after the loop.
  // `interleave` > 0 asks the loop vectorizer for that many vectors per iteration.
  Status Loop(llvm::Value* begin, llvm::Value* end, const std::string& name,
              const std::function<Status(llvm::Value*)>& body, int32_t interleave = 0);
  // The full ops needed (transitively) for `targets`, in program order (row_pipeline_plan.h).
  std::vector<const Operation*> FullOpsFor(const std::vector<const Value*>& targets,
                                           const Value* cached = nullptr) const {
    return jit::FullOpsFor(plan_, item_, targets, cached);
  }
  // Computes `ops` for column `column`; returns every full value computed.
  // `values` may hold values known beforehand (the cached value).
  StatusOr<std::map<const Value*, llvm::Value*>> EmitColumn(
      const std::vector<const Operation*>& ops, llvm::Value* column,
      std::map<const Value*, llvm::Value*> values = {});
  // The value the last reduce pass stores into the output row for the output pass to read.
  const Value* ChooseCached() const;
  llvm::Value* OutputAddress(llvm::Value* column);
  // Where the cached value of `column` lives: the stack row when streaming, else the output.
  llvm::Value* CachedAddress(llvm::Value* column);
  // Stores the root's value of `column` (the output pass), to the output or to the stage.
  void StoreOutput(llvm::Value* value, llvm::Value* address);
  StatusOr<llvm::Value*> Operand(const Operation& op, int64_t index,
                                 std::map<const Value*, llvm::Value*>& column_values,
                                 std::map<int, llvm::Value*>& column_loads, llvm::Value* column);
  llvm::Value* LoadInput(int access, llvm::Value* index);
  // Per access, the element offset of row `row`'s first column (row * stride per row dim).
  std::vector<llvm::Value*> RowOffsets(llvm::Value* row);
  // The accesses whose next row the last reduce pass prefetches: buffer reads along the
  // columns that move with the row (not a broadcast operand or a per-row scalar).
  std::vector<int> PrefetchedAccesses() const;
  // Prefetches columns [column, column + columns) of the next row (next_offsets_) of every
  // access in `accesses`, one llvm.prefetch per 64-byte line.
  void EmitPrefetchNextRow(const std::vector<int>& accesses, llvm::Value* column, int64_t columns);
  // The row's condition for EmitExpNormalRangeF32 on every exp(a - max) among `ops` (each max's
  // arg_min_ check, and-ed), or null when some has none (AVX-512, or no such exp).
  llvm::Value* NormalRangeCondition(const std::vector<const Operation*>& ops);
  // Runs `emit` once or, when NormalRangeCondition(ops) is not null, twice under a branch on
  // it: first with those exps lowered by EmitExpNormalRangeF32, then as always. Returns the
  // values `emit` returned, merged by phis.
  StatusOr<std::vector<llvm::Value*>> VersionByExpRange(
      const std::vector<const Operation*>& ops,
      const std::function<StatusOr<std::vector<llvm::Value*>>()>& emit);
  Status EmitRowOps(int depth);
  Status EmitReducePass(int pass);
  Status EmitOutputPass();
  // The output pass over `ops` (FullOpsFor the output): reciprocal or divide versions.
  Status EmitOutputPass(const std::vector<const Operation*>& ops);
  Status EmitOutputLoop(const std::vector<const Operation*>& ops);
  // The streamed output through the stage: `column(j, stage, first)` computes column j into
  // element j - first of the stage; each run of kStreamingStageBytes is copied out with
  // EmitStreamingCopy.
  Status EmitStagedOutput(
      const std::function<Status(llvm::Value*, llvm::Value*, llvm::Value*)>& column,
      int64_t element_bytes);
  static bool StreamsFromRegisters(const std::vector<const Operation*>& ops, ElementType out_type);

  const WorkItem& item_;
  const FusionPlan& fusion_;
  llvm::Module& module_;
  llvm::LLVMContext& context_;
  llvm::IRBuilder<> b_;
  ElementwiseLowering lowering_;
  RowAccumulation acc_;
  RowPlan plan_;
  KernelSignature signature_;

  llvm::Function* function_ = nullptr;
  std::vector<llvm::Value*> bases_;
  std::optional<KernelPrologue> prologue_;  // the function, buffers and alias scopes (Emit)
  std::vector<llvm::Value*> offsets_;             // per access, for the current row
  std::vector<llvm::Value*> next_offsets_;        // per access, for the row prefetched
  std::map<int, llvm::Value*> row_loads_;         // per-row accesses, loaded at row start
  std::map<const Value*, llvm::Value*> row_values_;  // row-space member results
  llvm::Value* row_start_ = nullptr;                 // row * columns
  const Value* cached_ = nullptr;                    // see ChooseCached
  std::vector<llvm::AllocaInst*> scratch_;        // per reduce
  std::vector<llvm::AllocaInst*> accumulator_;    // per reduce
  std::vector<llvm::AllocaInst*> compensation_;   // per reduce; null unless compensated
  std::vector<llvm::AllocaInst*> chunk_sums_;     // per reduce; null unless ChunkSummedInF32
  std::vector<llvm::AllocaInst*> nan_flags_;      // per reduce; float max/min only (fast fold)
  bool streaming_ = false;                        // output written with streaming stores
  llvm::AllocaInst* cached_row_ = nullptr;        // streaming: the cached value's row
  llvm::AllocaInst* stage_ = nullptr;             // streaming: the output stage
  std::map<const Operation*, llvm::Value*> reciprocals_;  // output pass: divide -> 1 / divisor
  // exp(a - max(a)) ops (NonPositiveExponentials) and their max, lowered by
  // EmitExpNonPositiveF32; 2^n by vscalefps on 512-bit targets (AVX-512F+VL), by a shift and two
  // multiplies below. Below 512 bits, a row whose a - max are all in [kExpNormalRangeLow, 0]
  // takes EmitExpNormalRangeF32 instead (the same bits in fewer FMA-pipe operations; 0.188-0.191
  // -> 0.161-0.169 ms for softmax [512, 1024] in cache capped to AVX2 on Zen 5; on AVX-512 it
  // measured no faster than vscalefps): the max's pass also folds min(a) (arg_min_), and the
  // passes computing these exps are emitted twice, under a branch on fl(min - max) >= -86.5
  // (fl(a - max) >= fl(min - max): rounding is monotonic; false for NaN and infinities).
  std::map<const Operation*, const Value*> nonpositive_exps_;
  std::vector<llvm::AllocaInst*> arg_min_;                // per reduce; null unless above
  std::map<const Value*, llvm::Value*> normal_exp_rows_;  // per max, this row's i1 condition
  bool normal_range_exps_ = false;  // while emitting the EmitExpNormalRangeF32 version
  const bool scale_primitive_;
  // The last reduce pass's smallest map group (MapGroupColumns).
  const int64_t map_group_columns_;
};

}  // namespace accy::jit::row_pipeline

#endif  // ACCY_JIT_ROW_PIPELINE_EMITTER_IMPL_H_
