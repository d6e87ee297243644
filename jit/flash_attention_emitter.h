// Internal to jit/: the flash_attention kernel emitter (flash_attention_emitter.cc has the
// algorithm and numerics; it matches the work item and lays out the kernel, and
// flash_attention_kernel.cc emits the kernel's vector code). Includes LLVM headers: include it
// only from those two files. One emitter emits one kernel; not thread-safe (one IRBuilder).
#ifndef ACCY_JIT_FLASH_ATTENTION_EMITTER_H_
#define ACCY_JIT_FLASH_ATTENTION_EMITTER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "accy/status.h"
#include "jit/elementwise_lowering.h"
#include "jit/kernel_prologue.h"
#include "jit/kernel_signature.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "jit/emitters.h"
#include "src/fusion/fusion_plan.h"
#include "src/schedule/schedule_plan.h"

namespace accy::jit::flash_attention_internal {

// Query rows per vector (the largest query tile): one f32 register of the target
// (KernelTarget::vector_bits / 32: 16 on AVX-512, 8 on AVX2, 4 below).
constexpr int64_t kMaxValueDim = kFlashAttentionMaxValueDim;
// The lane count key tiles and head-dim chunks are sized for on every target (the AVX-512
// vector), so the summation order, and the f32 bits, are the same on every ISA.
constexpr int64_t kGeometryLanes = 16;
// Stack budgets (bytes): the block's accumulator rows, one key tile of scores, the packed Q^T.
constexpr int64_t kAccumulatorBytes = 64 * 1024;
constexpr int64_t kScoreTileBytes = 8 * 1024;
constexpr int64_t kQueryPackBytes = 16 * 1024;
// Largest lanes-major copy of a constant mask embedded in the module (Access::packed).
constexpr int64_t kMaxPackedBytes = 8 << 20;
// Register blocking: keys per score step (f32, f64: one vector accumulator each, a 16-lane f64
// vector is two registers), and rows x 64-byte chunks of P·V accumulators.
constexpr int64_t kKeysPerStep = 8;
constexpr int64_t kKeysPerStepF64 = 4;
constexpr int64_t kRowsPerStep = 4;
// Keys per step of the softmax loops (scale, mask and max; exp and sum).
constexpr int64_t kSoftmaxKeysPerStep = 4;
// 4 x 4 chunk accumulators fill half the 32 zmm registers; with 16 ymm registers (AVX2) 4 x 2.
constexpr int64_t kChunksPerStepWide = 4;
constexpr int64_t kChunksPerStepNarrow = 2;

// A read of a value over the score space [batch..., q, k]: a buffer through strides, or a folded
// one-element constant.
struct Access {
  int buffer = -1;
  const uint8_t* constant = nullptr;
  std::vector<int64_t> strides;  // per score dim
  // The whole payload when a constant op defines the operand (any size), else null.
  const DenseElements* payload = nullptr;
  // A compile-time copy in lanes-major order, [query tile][key][lane] in the compute type, for
  // an operand that varies along the query dim (a causal mask): one vector load per key
  // instead of a gather (PackLanesMajor). Null when not packed.
  llvm::GlobalVariable* packed = nullptr;
};

// Emits the kernel of one flash_attention work item into a module (EmitFlashAttentionKernel).
class FlashAttentionEmitter {
 public:
  FlashAttentionEmitter(const WorkItem& item, const FusionPlan& fusion, llvm::Module& module,
                        const KernelTarget& target)
      : item_(item), fusion_(fusion), module_(module), context_(module.getContext()),
        b_(context_), lowering_(module, b_), vector_bits_(target.vector_bits),
        lanes_(std::max(4, target.vector_bits / 32)),
        chunks_per_step_(target.vector_bits >= 512 ? kChunksPerStepWide : kChunksPerStepNarrow) {}

  // Emits function `symbol` (kernel_abi.h) and returns its signature. Errors: kUnimplemented
  // naming the work item when it is not the attention pattern the kernel runs.
  StatusOr<KernelSignature> Emit(std::string_view symbol);

 private:
  // The op defining `value` when it is a cluster member of `kind`, else null.
  const Operation* Member(const Value* value, OpKind kind) const {
    const Operation* def = value->defining_op();
    return def != nullptr && def->kind() == kind && members_.count(def) != 0 ? def : nullptr;
  }
  // The cluster member behind an elided row broadcast feeding `value`'s use, of `kind`.
  const Operation* ThroughBroadcast(const Value* value, OpKind kind) const {
    const Operation* def = value->defining_op();
    if (def == nullptr || def->kind() != OpKind::kBroadcastInDim || !fusion_.IsElided(def)) {
      return nullptr;
    }
    return Member(def->operand(0), kind);
  }
  Status Match();
  int BufferOf(const Value* value);
  StatusOr<Access> ScoreAccess(const Value* value);
  using Carried = std::vector<llvm::Value*>;
  // A counted loop over [begin, end): `body` maps the carried values (phis) of iteration i to
  // the next ones; returns the values after the loop (`init` when it runs zero times).
  Carried CarryLoop(llvm::Value* begin, llvm::Value* end, const std::string& name,
                    const Carried& init,
                    const std::function<Carried(llvm::Value*, const Carried&)>& body);
  void Loop(llvm::Value* begin, llvm::Value* end, const std::string& name,
            const std::function<void(llvm::Value*)>& body);
  llvm::Value* Load(int buffer, llvm::Value* index);
  llvm::Value* Read(const Access& access, llvm::Value* offset);
  llvm::Value* Exp(llvm::Value* x);

  // Kernel code (flash_attention_kernel.cc).
  // A score-space operand prepared for one block: a folded splat, a scalar per key (no query
  // stride), or per-lane offsets `rows` (base + row * query stride) to gather from.
  struct ScoreOperand {
    const Access* access = nullptr;
    llvm::Value* splat = nullptr;
    llvm::Value* base = nullptr;
    llvm::Value* rows = nullptr;
    llvm::Value* packed_tile = nullptr;  // this block's [key][lane] slice of access->packed
  };
  // Builds access.packed for a constant operand that varies along the query dim and not along
  // the batch dims, when the copy stays under kMaxPackedBytes (f32 and f64 only).
  void PackLanesMajor(Access& access, int64_t query_tiles);
  // For a packed mask (PackLanesMajor): per query tile, one past the last key that any of the
  // tile's rows leaves unmasked (mask not -inf); key_ends_ is set only when some tile ends
  // before keys_ (a causal mask), as a module constant of query_tiles i64.
  void FindMaskedKeyEnds(const std::vector<uint8_t>& packed, int64_t query_tiles);
  // The keys this block runs: the tile's key end (key_ends_), unless K or V holds a NaN or an
  // infinity in the keys past it, which the reference would carry into the row; else keys_.
  llvm::Value* BlockKeyEnd(llvm::Value* block, int64_t query_tiles);
  // Whether any element of `buffer` in [begin, end) (compute type) is a NaN or an infinity.
  llvm::Value* AnyNonFinite(int buffer, llvm::Value* begin, llvm::Value* end);
  // Whether any element of rows [first, last) of `buffer` is: `length` elements per row at
  // base + row * row_stride + e * element_stride.
  llvm::Value* AnyNonFiniteRows(int buffer, llvm::Value* base, llvm::Value* first,
                                llvm::Value* last, int64_t row_stride, int64_t length,
                                int64_t element_stride);
  // The element offset of the block's batch entry in an operand with `strides` per batch dim.
  llvm::Value* BatchOffset(const std::vector<int64_t>& strides);
  llvm::Value* Splat(llvm::Value* scalar);
  llvm::Value* Fma(llvm::Value* a, llvm::Value* x, llvm::Value* addend);
  llvm::Value* Widen(llvm::Value* v);
  llvm::Value* Narrow(llvm::Value* v);
  llvm::Value* VectorExp(llvm::Value* x);
  ScoreOperand PrepareScoreOperand(const Access& access, llvm::Value* batch_offset);
  llvm::Value* ScoreVector(const ScoreOperand& op, llvm::Value* key);
  void PackQueries(llvm::Value* d0, llvm::Value* length);
  llvm::Value* ScoreSlot(llvm::Value* j);
  void ScoreKeys(llvm::Value* j0, int64_t count, llvm::Value* d0, llvm::Value* length, bool accumulate);
  void ScoreTile(llvm::Value* d0, llvm::Value* length, bool accumulate);
  void SoftmaxTile();
  llvm::Value* LoadValueChunk(llvm::Value* index, int64_t lanes);
  llvm::Value* ChunkMask(int64_t lanes);
  llvm::Value* AccumulatorSlot(int64_t row, llvm::Value* chunk);
  void AccumulateValues(int64_t r0, int64_t rows, llvm::Value* chunk0, int64_t chunks, int64_t last_lanes);
  void ValueTile();
  void StoreRows(llvm::Value* sum_init);
  // The element type of every operand, and the type the kernel computes in (f32, or f64).
  ElementType element_ = ElementType::kF32;
  ElementType compute_ = ElementType::kF32;
  llvm::Type* ComputeType() { return compute_ == ElementType::kF64 ? b_.getDoubleTy() : b_.getFloatTy(); }

  const WorkItem& item_;
  const FusionPlan& fusion_;
  llvm::Module& module_;
  llvm::LLVMContext& context_;
  llvm::IRBuilder<> b_;
  ElementwiseLowering lowering_;
  std::set<const Operation*> members_;
  KernelSignature signature_;

  // The matched ops.
  const Operation* qk_ = nullptr;
  const Operation* scale_ = nullptr;  // multiply or divide
  const Operation* mask_ = nullptr;   // add, or null
  const Operation* max_ = nullptr;
  const Operation* exp_ = nullptr;
  const Operation* sum_ = nullptr;
  const Value* scale_value_ = nullptr;
  const Value* mask_value_ = nullptr;
  // Dims.
  std::vector<int64_t> batch_dims_;
  int64_t batch_ = 1, queries_ = 0, keys_ = 0, head_dim_ = 0, value_dim_ = 0;
  // Element strides of Q, K and V (the dot_generals' dimension numbers over row-major operands,
  // so exporters' [batch, seq, heads, dim] layouts are read in place): per batch dim (in the
  // score space's batch order), along the rows (queries, keys) and along the head dim. V's value
  // dim is contiguous (rule 7 requires it).
  std::vector<int64_t> q_batch_strides_, k_batch_strides_, v_batch_strides_;
  int64_t q_row_stride_ = 0, q_d_stride_ = 1, k_row_stride_ = 0, k_d_stride_ = 1, v_row_stride_ = 0;

  // Kernel geometry (Emit): elements per 64-byte value chunk, accumulator row length (value
  // dim rounded up to whole chunks), query rows per block.
  const int vector_bits_;
  const int64_t lanes_;            // query rows per vector
  const int64_t chunks_per_step_;  // P·V chunks per register block
  int64_t value_lanes_ = 16, accumulator_row_ = 0, query_tile_ = 16;
  int q_buffer_ = -1, k_buffer_ = -1, v_buffer_ = -1;

  llvm::Function* function_ = nullptr;
  std::optional<KernelPrologue> prologue_;  // the function, buffers and alias scopes (Emit)
  std::vector<llvm::Value*> bases_;  // inputs, then the output
  llvm::Type* vector_ = nullptr;     // <lanes_ x compute type>
  // Alignment of a <lanes_> vector slot and of a value_lanes_ chunk slot (offsets on the
  // 64-byte aligned stack buffers are multiples of these).
  llvm::Align VectorAlign() const { return llvm::Align(static_cast<uint64_t>(lanes_ * ElementByteWidth(compute_))); }
  llvm::Align ChunkAlign() const { return llvm::Align(static_cast<uint64_t>(value_lanes_ * ElementByteWidth(compute_))); }
  // Stack: qt[d][lane], scores[j][lane], acc[row][accumulator_row_], and per-lane m, l, c.
  llvm::AllocaInst *qt_ = nullptr, *scores_ = nullptr, *accumulator_ = nullptr;
  llvm::AllocaInst *m_ = nullptr, *l_ = nullptr, *correction_ = nullptr;
  // The block being emitted: batch entry, query rows [q_begin, q_end), element offsets of its
  // Q, K, V, the clamped query row of each lane, its scale/mask, and the key tile [k0, k0 + length).
  llvm::Value *block_batch_ = nullptr, *block_q_begin_ = nullptr, *block_q_end_ = nullptr;
  llvm::Value *block_q_batch_ = nullptr, *block_k_batch_ = nullptr, *block_v_batch_ = nullptr;
  llvm::Value* block_lane_rows_ = nullptr;
  ScoreOperand block_scale_, block_mask_;
  llvm::Value *block_k0_ = nullptr, *block_length_ = nullptr;
  llvm::GlobalVariable* key_ends_ = nullptr;  // FindMaskedKeyEnds; null: every tile runs keys_
};

}  // namespace accy::jit::flash_attention_internal

#endif  // ACCY_JIT_FLASH_ATTENTION_EMITTER_H_
