// Shape kernels for sort (StableHLO spec "sort") and top_k (CHLO "top_k")
// (shape_kernel_builder.h), computing the orders src/reference/sort_ops.cc computes.
//
// sort: every row along `dimension` (a fixed start and stride in the row-major inputs) is
// copied, every operand, into a per-block scratch slot and sorted there with a stable bottom-up
// merge sort: insertion-sorted runs of kSortRun elements, then merge passes of doubling width
// between the slot's two copies. The elements of all operands move together (as raw bits, so
// NaN payloads survive), so the comparator -- lowered inline (region_lowering.h), any body --
// reads consecutive memory rather than through an index permutation (1M f32: 1.6 s through
// a permutation, random reads). A stable sort also serves is_stable = false. Blocks are runs
// of rows, at most kMaxSortBlocks of them, each with its own slot, so blocks run in parallel.
// The two vqsort paths live in sort_fast_paths.cc. Fast path (MatchFastSort): a single key
// under a plain LT/GT comparator is copied into the slot as integer keys (floats in
// TOTALORDER) and sorted by Highway's vqsort (sort_runtime.h):
// 1M f32 138 ms -> ~6 ms, [4096, 1024] rows 251 ms -> ~20 ms (vqsort alone, same host).
// Keyed path (MatchKeyedSort): a comparator that compares one function of one operand's pair
// (JAX's NaN- and zero-canonicalizing float comparator, argsort's key with an iota payload)
// sorts (key, position) u64 pairs with vqsort and gathers every operand: stable, bit for bit the
// merge sort's result. JAX's f32 comparator on Zen 3 (AVX2), `accy bench`, median of 10:
// [4096, 1024] rows 328 -> 42.3 ms at 1 thread (22.0 at 2), 1M elements 186 -> 18.8 ms;
// torch.sort(stable=True) on the same data 335 / 164 ms and 147 / 150 ms.
// top_k: per last-dim row, a partial selection (O(n) scans, O(n log k) at worst) with a
// threshold scan: 64 bytes of elements at a time are compared with the worst kept key in one
// vector compare, and only the lanes above it are offered to the kept set. k <= 16 keeps the
// best k as two vectors of k lanes (keys and indices, best first; an insertion is a compare, two
// shuffles and selects: no memory, no branch); a larger k keeps a heap in the outputs (each
// position's bits in the values output and its index in the indices output), sorted in place by
// heap extraction, best first. "Better" is TOTALORDER greater on the values (floats compared as
// sign-magnitude bits mapped to two's complement), equal values by lower index, a strict total
// order, so the result is unique. k = 8 of f32[4096, 1024] N(0, 0.05) on Zen 4 (`accy bench`,
// 1 thread): 9.3 ms (a heap of indices checked per element) -> 2.7 ms; torch.topk 10.6 ms.
#include <algorithm>
#include <bit>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "jit/region_lowering.h"
#include "jit/shape_kernel_builder.h"
#include "jit/sort_emitter_internal.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

using sort_internal::AddSortBuffers;
using sort_internal::Min;
using sort_internal::RowGeometry;
using sort_internal::RowsAlong;
using sort_internal::SetSortBlocks;
using sort_internal::SortBuffers;

// Elements of the insertion-sorted runs the merge passes start from.
constexpr int64_t kSortRun = 16;
// Elements of top_k rows per block, as the shape kernels' blocks.
constexpr int64_t kTopKBlockElements = kShapeBlockElements;
// Bytes of elements compared at once by top_k's threshold scan (one zmm, two ymm registers).
constexpr int64_t kTopKScanBytes = 64;
// Largest k kept in registers (two vectors of k lanes) rather than in a heap in the outputs.
constexpr int64_t kTopKVectorMax = 16;

// i64 variables in entry-block stack slots (SROA makes registers of them).
class Vars {
 public:
  explicit Vars(ShapeKernelBuilder& k) : k_(k) {}
  llvm::Value* New(std::string_view name, llvm::Value* init) {
    llvm::Value* slot = k_.EntryAlloca(k_.ir().getInt64Ty(), name);
    k_.ir().CreateStore(init, slot);
    return slot;
  }
  llvm::Value* Get(llvm::Value* slot) { return k_.ir().CreateLoad(k_.ir().getInt64Ty(), slot); }
  void Set(llvm::Value* slot, llvm::Value* value) { k_.ir().CreateStore(value, slot); }

 private:
  ShapeKernelBuilder& k_;
};

// while (condition()) body(); `condition` is emitted at the loop head each iteration.
Status While(ShapeKernelBuilder& k, const std::function<StatusOr<llvm::Value*>()>& condition,
             const std::function<Status()>& body) {
  llvm::IRBuilder<>& b = k.ir();
  llvm::Function* function = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& context = b.getContext();
  auto* head = llvm::BasicBlock::Create(context, "while", function);
  auto* loop = llvm::BasicBlock::Create(context, "while_body", function);
  auto* done = llvm::BasicBlock::Create(context, "while_done", function);
  b.CreateBr(head);
  b.SetInsertPoint(head);
  ACCY_ASSIGN_OR_RETURN(llvm::Value* go, condition());
  b.CreateCondBr(go, loop, done);
  b.SetInsertPoint(loop);
  ACCY_RETURN_IF_ERROR(body());
  b.CreateBr(head);
  b.SetInsertPoint(done);
  return absl::OkStatus();
}

llvm::Value* Max(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, y);
}

// An i32 index slot of scratch (or output) buffer `buffer` at element `at`, as i64.
llvm::Value* LoadIndex32(ShapeKernelBuilder& k, size_t buffer, llvm::Value* at) {
  return k.ir().CreateSExt(k.LoadBits(buffer, ElementType::kI32, at), k.ir().getInt64Ty());
}
void StoreIndex32(ShapeKernelBuilder& k, size_t buffer, llvm::Value* at, llvm::Value* index) {
  k.StoreBits(buffer, ElementType::kI32, at, k.ir().CreateTrunc(index, k.ir().getInt32Ty()));
}

}  // namespace

StatusOr<KernelSignature> EmitSortKernel(const Operation& op, llvm::Module& module,
                                         std::string_view symbol) {
  const size_t n = static_cast<size_t>(op.num_operands());
  const std::vector<int64_t>& dims = op.operand(0)->type().dims();
  int64_t dimension = op.GetInt("dimension").value_or(0);
  if (dimension < 0) dimension += static_cast<int64_t>(dims.size());
  const RowGeometry g = RowsAlong(dims, dimension);
  if (std::optional<StatusOr<KernelSignature>> fast = EmitSortFastPath(op, g, module, symbol)) {
    return *std::move(fast);
  }
  KernelSignature signature;
  const SortBuffers buffers = AddSortBuffers(op, signature);
  const std::vector<size_t>& inputs = buffers.inputs;
  const std::vector<ElementType>& types = buffers.types;
  const size_t first_output = buffers.first_output;
  const size_t scratch = buffers.scratch;
  // A slot holds two copies (A, B) of the row of every operand, each at a byte offset that is a
  // multiple of 8, so every copy starts at a whole element of its type.
  std::vector<int64_t> offset_a(n), offset_b(n);
  int64_t slot_bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t bytes = (g.size * ElementByteWidth(types[i]) + 7) / 8 * 8;
    offset_a[i] = slot_bytes;
    offset_b[i] = slot_bytes + bytes;
    slot_bytes += 2 * bytes;
  }
  SetSortBlocks(g, slot_bytes, signature);
  ShapeKernelBuilder k(module, symbol, signature.inputs.size(),
                       signature.outputs.size() + (signature.scratch_bytes > 0 ? 1 : 0));
  if (signature.block_count == 0) {
    k.Finish();
    return signature;
  }
  llvm::IRBuilder<>& b = k.ir();
  Vars vars(k);
  llvm::Value* stride = k.Int(g.stride);
  llvm::Value* size = k.Int(g.size);

  Status status = k.Loop(k.block_begin(), k.block_end(), [&](llvm::Value* block) -> Status {
    llvm::Value* slot = b.CreateMul(block, k.Int(slot_bytes));
    // Element index of copy A / B of operand i in the scratch buffer.
    std::vector<llvm::Value*> copy_a(n), copy_b(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t width = ElementByteWidth(types[i]);
      copy_a[i] = b.CreateUDiv(b.CreateAdd(slot, k.Int(offset_a[i])), k.Int(width));
      copy_b[i] = b.CreateUDiv(b.CreateAdd(slot, k.Int(offset_b[i])), k.Int(width));
    }
    llvm::Value* row_begin = b.CreateMul(block, k.Int(signature.block_size));
    llvm::Value* row_end = Min(b, b.CreateAdd(row_begin, k.Int(signature.block_size)),
                               k.Int(g.rows));
    return k.Loop(row_begin, row_end, [&](llvm::Value* row) -> Status {
      llvm::Value* base = b.CreateAdd(
          b.CreateMul(b.CreateUDiv(row, stride), k.Int(g.size * g.stride)),
          b.CreateURem(row, stride));
      // The row's elements of every operand: copy A <- inputs.
      ACCY_RETURN_IF_ERROR(k.Loop(k.Int(0), size, [&](llvm::Value* p) -> Status {
        llvm::Value* from = b.CreateAdd(base, b.CreateMul(p, stride));
        for (size_t i = 0; i < n; ++i) {
          k.StoreBits(scratch, types[i], b.CreateAdd(copy_a[i], p),
                      k.LoadBits(inputs[i], types[i], from));
        }
        return absl::OkStatus();
      }));
      // Element `at` of every operand in the copies starting at `copies`: bits (to move) and
      // storage form (for the comparator).
      struct Tuple {
        std::vector<llvm::Value*> bits, values;
      };
      auto load = [&](const std::vector<llvm::Value*>& copies, llvm::Value* at) {
        Tuple t;
        for (size_t i = 0; i < n; ++i) {
          llvm::Value* index = b.CreateAdd(copies[i], at);
          t.bits.push_back(k.LoadBits(scratch, types[i], index));
          t.values.push_back(k.LoadElement(scratch, types[i], index));
        }
        return t;
      };
      auto store = [&](const std::vector<llvm::Value*>& copies, llvm::Value* at,
                       const std::vector<llvm::Value*>& bits) {
        for (size_t i = 0; i < n; ++i) {
          k.StoreBits(scratch, types[i], b.CreateAdd(copies[i], at), bits[i]);
        }
      };
      // comparator(lhs0, rhs0, lhs1, rhs1, ...): true when lhs goes first.
      auto less = [&](const Tuple& lhs, const Tuple& rhs) -> StatusOr<llvm::Value*> {
        std::vector<llvm::Value*> args;
        for (size_t i = 0; i < n; ++i) {
          args.push_back(lhs.values[i]);
          args.push_back(rhs.values[i]);
        }
        ACCY_ASSIGN_OR_RETURN(
            std::vector<llvm::Value*> result,
            LowerScalarRegion(k.lowering(), *op.region(0), args, "shape emitter: sort comparator"));
        if (result.size() != 1 || !result[0]->getType()->isIntegerTy(1)) {
          return absl::InvalidArgumentError(
              "jit: shape emitter: sort comparator must return one tensor<i1>");
        }
        return result[0];
      };
      // Insertion-sorted runs of kSortRun in copy A.
      ACCY_RETURN_IF_ERROR(k.Loop(k.Int(0), size, [&](llvm::Value* run) -> Status {
        llvm::Value* run_end = Min(b, b.CreateAdd(run, k.Int(kSortRun)), size);
        return k.Loop(b.CreateAdd(run, k.Int(1)), run_end, [&](llvm::Value* i) -> Status {
          const Tuple x = load(copy_a, i);
          llvm::Value* j = vars.New("j", i);
          ACCY_RETURN_IF_ERROR(While(
              k,
              [&]() -> StatusOr<llvm::Value*> {
                llvm::Value* jv = vars.Get(j);
                // Clamped to the run; the j > run flag decides.
                const Tuple prev = load(copy_a, Max(b, b.CreateSub(jv, k.Int(1)), run));
                ACCY_ASSIGN_OR_RETURN(llvm::Value* before, less(x, prev));
                return b.CreateAnd(b.CreateICmpSGT(jv, run), before);
              },
              [&]() -> Status {
                llvm::Value* jv = vars.Get(j);
                const Tuple prev = load(copy_a, b.CreateSub(jv, k.Int(1)));
                store(copy_a, jv, prev.bits);
                vars.Set(j, b.CreateSub(jv, k.Int(1)));
                return absl::OkStatus();
              }));
          store(copy_a, vars.Get(j), x.bits);
          return absl::OkStatus();
        });
      }, kSortRun));
      // Merge passes: runs of `width` from one copy to the other (parity 0: A to B).
      llvm::Value* width = vars.New("width", k.Int(kSortRun));
      llvm::Value* parity = vars.New("parity", k.Int(0));
      auto copies = [&](llvm::Value* in_b) {
        std::vector<llvm::Value*> c(n);
        for (size_t i = 0; i < n; ++i) c[i] = b.CreateSelect(in_b, copy_b[i], copy_a[i]);
        return c;
      };
      ACCY_RETURN_IF_ERROR(While(
          k, [&]() -> StatusOr<llvm::Value*> { return b.CreateICmpSLT(vars.Get(width), size); },
          [&]() -> Status {
            llvm::Value* w = vars.Get(width);
            llvm::Value* from_b = b.CreateICmpNE(vars.Get(parity), k.Int(0));
            const std::vector<llvm::Value*> from = copies(from_b);
            const std::vector<llvm::Value*> to = copies(b.CreateNot(from_b));
            llvm::Value* lo = vars.New("lo", k.Int(0));
            ACCY_RETURN_IF_ERROR(While(
                k, [&]() -> StatusOr<llvm::Value*> { return b.CreateICmpSLT(vars.Get(lo), size); },
                [&]() -> Status {
                  llvm::Value* l = vars.Get(lo);
                  llvm::Value* mid = Min(b, b.CreateAdd(l, w), size);
                  llvm::Value* hi = Min(b, b.CreateAdd(mid, w), size);
                  llvm::Value* left = vars.New("left", l);
                  llvm::Value* right = vars.New("right", mid);
                  ACCY_RETURN_IF_ERROR(k.Loop(l, hi, [&](llvm::Value* out) -> Status {
                    llvm::Value* li = vars.Get(left);
                    llvm::Value* ri = vars.Get(right);
                    // Clamped so that both loads stay in the run; the flags decide.
                    const Tuple lv = load(from, Min(b, li, b.CreateSub(mid, k.Int(1))));
                    const Tuple rv = load(from, Min(b, ri, b.CreateSub(hi, k.Int(1))));
                    ACCY_ASSIGN_OR_RETURN(llvm::Value* right_first, less(rv, lv));
                    // Stable: the right element goes first only when strictly before.
                    llvm::Value* take_right = b.CreateAnd(
                        b.CreateICmpSLT(ri, hi), b.CreateOr(b.CreateICmpSGE(li, mid), right_first));
                    std::vector<llvm::Value*> chosen(n);
                    for (size_t i = 0; i < n; ++i) {
                      chosen[i] = b.CreateSelect(take_right, rv.bits[i], lv.bits[i]);
                    }
                    store(to, out, chosen);
                    llvm::Value* step = b.CreateZExt(take_right, b.getInt64Ty());
                    vars.Set(right, b.CreateAdd(ri, step));
                    vars.Set(left, b.CreateAdd(li, b.CreateSub(k.Int(1), step)));
                    return absl::OkStatus();
                  }));
                  vars.Set(lo, hi);
                  return absl::OkStatus();
                }));
            vars.Set(parity, b.CreateSub(k.Int(1), vars.Get(parity)));
            vars.Set(width, b.CreateMul(w, k.Int(2)));
            return absl::OkStatus();
          }));
      // The sorted copy to the outputs.
      const std::vector<llvm::Value*> sorted = copies(b.CreateICmpNE(vars.Get(parity), k.Int(0)));
      return k.Loop(k.Int(0), size, [&](llvm::Value* p) -> Status {
        llvm::Value* to = b.CreateAdd(base, b.CreateMul(p, stride));
        for (size_t i = 0; i < n; ++i) {
          k.StoreBits(first_output + i, types[i], to,
                      k.LoadBits(scratch, types[i], b.CreateAdd(sorted[i], p)));
        }
        return absl::OkStatus();
      });
    });
  });
  ACCY_RETURN_IF_ERROR(status);
  k.Finish();
  return signature;
}

StatusOr<KernelSignature> EmitTopKKernel(const Operation& op, llvm::Module& module,
                                         std::string_view symbol) {
  const TensorType& type = op.operand(0)->type();
  const ElementType element = type.element_type();
  const int64_t n = type.dim(type.rank() - 1);
  const int64_t k_count = op.GetInt("k").value_or(0);
  const int64_t rows = n > 0 ? type.element_count() / n : 0;
  if (n > std::numeric_limits<int32_t>::max()) {
    return absl::UnimplementedError(StrCat("jit: shape emitter: top_k over a last dim of ", n,
                                           " elements (at most 2^31 - 1 are supported)"));
  }
  KernelSignature signature;
  const size_t input = AddInput(signature, op.operand(0));
  signature.outputs = {op.result(0), op.result(1)};
  const size_t values_out = signature.inputs.size();
  const size_t heap = values_out + 1;  // the indices output holds each row's heap
  if (rows > 0 && k_count > 0) {
    signature.block_size = std::max<int64_t>(1, kTopKBlockElements / n);
    signature.block_count = BlockCount(rows, signature.block_size);
  }
  ShapeKernelBuilder k(module, symbol, signature.inputs.size(), signature.outputs.size());
  if (signature.block_count == 0) {
    k.Finish();
    return signature;
  }
  llvm::IRBuilder<>& b = k.ir();
  Vars vars(k);
  const unsigned bits = static_cast<unsigned>(ElementByteWidth(element) * 8);
  // The TOTALORDER key of an element's bits: floats' sign-magnitude mapped onto two's
  // complement (negative values flip their magnitude bits), compared signed; other types as
  // they order (unsigned and i1 unsigned).
  const bool is_unsigned = IsUnsigned(element) || IsBool(element);
  // Scalar or vector bits alike.
  auto key = [&](llvm::Value* raw) -> llvm::Value* {
    if (!IsFloat(element)) return raw;
    llvm::Type* type = raw->getType();
    llvm::Value* magnitude = llvm::ConstantInt::get(type, llvm::APInt::getSignedMaxValue(bits));
    return b.CreateSelect(b.CreateICmpSLT(raw, llvm::Constant::getNullValue(type)),
                          b.CreateXor(raw, magnitude), raw);
  };
  // Lanes of the threshold scan: one 64-byte vector of elements.
  const int64_t lanes = std::max<int64_t>(1, kTopKScanBytes / ElementByteWidth(element));
  auto greater = [&](llvm::Value* x, llvm::Value* y) {
    return is_unsigned ? b.CreateICmpUGT(x, y) : b.CreateICmpSGT(x, y);
  };
  // The threshold scan over [first, n) of the row at `base`: `lanes` elements at a time are
  // compared with `threshold()` (the worst kept key); only the lanes above it are passed to
  // `offer`, lowest first, which re-checks each against the worst kept as it is by then. Every
  // kept index is below the scanned ones, so a scanned element is better than the worst kept
  // exactly when its key is greater, and the vector compare misses none.
  auto scan = [&](llvm::Value* base, int64_t first, const std::function<llvm::Value*()>& threshold,
                  const std::function<Status(llvm::Value*)>& offer) -> Status {
    const int64_t scanned_end = first + (n - first) / lanes * lanes;
    ACCY_RETURN_IF_ERROR(k.Loop(k.Int(first), k.Int(scanned_end), [&](llvm::Value* start) -> Status {
      llvm::Value* keys = key(k.LoadBitsVector(input, element, b.CreateAdd(base, start), lanes));
      llvm::Value* splat = b.CreateVectorSplat(static_cast<unsigned>(lanes), threshold());
      llvm::Value* mask = b.CreateZExt(
          b.CreateBitCast(greater(keys, splat), b.getIntNTy(static_cast<unsigned>(lanes))),
          b.getInt64Ty());
      llvm::Value* pending = vars.New("pending", mask);
      return While(
          k, [&]() -> StatusOr<llvm::Value*> { return b.CreateICmpNE(vars.Get(pending), k.Int(0)); },
          [&]() -> Status {
            llvm::Value* bits_left = vars.Get(pending);
            llvm::Value* lane = b.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, bits_left, b.getTrue());
            vars.Set(pending, b.CreateAnd(bits_left, b.CreateSub(bits_left, k.Int(1))));
            return offer(b.CreateAdd(start, lane));
          });
    }, lanes));
    return k.Loop(k.Int(scanned_end), k.Int(n), offer);
  };
  auto [lo, hi] = k.BlockElements(signature.block_size, rows);
  if (k_count <= kTopKVectorMax) {
    // The kept elements as two vectors of k lanes, best first: keys and i32 indices. A new
    // element (its index above every kept one) goes after the kept keys >= its own, the lanes
    // behind it move one down and the last falls off; one that is no better changes nothing.
    // Lanes from `valid` on are unset (while the first k elements go in).
    const unsigned width = static_cast<unsigned>(k_count);
    llvm::Type* key_type = b.getIntNTy(bits);
    auto* keys_type = llvm::FixedVectorType::get(key_type, width);
    auto* indices_type = llvm::FixedVectorType::get(b.getInt32Ty(), width);
    llvm::Value* kept_keys = k.EntryAlloca(keys_type, "kept_keys");
    llvm::Value* kept_indices = k.EntryAlloca(indices_type, "kept_indices");
    std::vector<llvm::Constant*> lane_numbers;
    std::vector<int> shift_mask = {static_cast<int>(width)};  // lane 0 from the second operand
    for (unsigned j = 0; j < width; ++j) {
      lane_numbers.push_back(b.getInt32(j));
      if (j + 1 < width) shift_mask.push_back(static_cast<int>(j));
    }
    llvm::Value* lane_vector = llvm::ConstantVector::get(lane_numbers);
    auto insert = [&](llvm::Value* bits_i, llvm::Value* i, llvm::Value* valid) {
      llvm::Value* x = b.CreateVectorSplat(width, key(bits_i));
      llvm::Value* index = b.CreateVectorSplat(width, b.CreateTrunc(i, b.getInt32Ty()));
      llvm::Value* old_keys = b.CreateLoad(keys_type, kept_keys);
      llvm::Value* old_indices = b.CreateLoad(indices_type, kept_indices);
      llvm::Value* stays = b.CreateAnd(
          is_unsigned ? b.CreateICmpUGE(old_keys, x) : b.CreateICmpSGE(old_keys, x),
          b.CreateICmpSLT(lane_vector, b.CreateVectorSplat(width, b.CreateTrunc(valid, b.getInt32Ty()))));
      // Lane j takes the new element when lane j - 1 stays (lane 0: when it does not stay).
      llvm::Value* previous_stays = b.CreateShuffleVector(
          stays, llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(width), b.getTrue()),
          shift_mask);
      b.CreateStore(b.CreateSelect(stays, old_keys,
                                   b.CreateSelect(previous_stays, x,
                                                  b.CreateShuffleVector(old_keys, x, shift_mask))),
                    kept_keys);
      b.CreateStore(b.CreateSelect(stays, old_indices,
                                   b.CreateSelect(previous_stays, index,
                                                  b.CreateShuffleVector(old_indices, index, shift_mask))),
                    kept_indices);
    };
    Status status = k.Loop(lo, hi, [&](llvm::Value* row) -> Status {
      llvm::Value* base = b.CreateMul(row, k.Int(n));
      b.CreateStore(llvm::Constant::getNullValue(keys_type), kept_keys);
      b.CreateStore(llvm::Constant::getNullValue(indices_type), kept_indices);
      ACCY_RETURN_IF_ERROR(k.Loop(k.Int(0), k.Int(k_count), [&](llvm::Value* i) -> Status {
        insert(k.LoadBits(input, element, b.CreateAdd(base, i)), i, i);
        return absl::OkStatus();
      }));
      ACCY_RETURN_IF_ERROR(scan(
          base, k_count,
          [&]() {
            return b.CreateExtractElement(b.CreateLoad(keys_type, kept_keys), b.getInt32(width - 1));
          },
          [&](llvm::Value* i) -> Status {
            insert(k.LoadBits(input, element, b.CreateAdd(base, i)), i, k.Int(k_count));
            return absl::OkStatus();
          }));
      // Keys back to bits (the TOTALORDER mapping is its own inverse).
      llvm::Value* out = b.CreateMul(row, k.Int(k_count));
      k.StoreBitsVector(values_out, element, out, key(b.CreateLoad(keys_type, kept_keys)));
      k.StoreBitsVector(heap, ElementType::kI32, out, b.CreateLoad(indices_type, kept_indices));
      return absl::OkStatus();
    });
    ACCY_RETURN_IF_ERROR(status);
    k.Finish();
    return signature;
  }
  Status status = k.Loop(lo, hi, [&](llvm::Value* row) -> Status {
    llvm::Value* base = b.CreateMul(row, k.Int(n));
    llvm::Value* heap_base = b.CreateMul(row, k.Int(k_count));
    auto at = [&](llvm::Value* p) { return b.CreateAdd(heap_base, p); };
    // Heap position p holds a kept element: its bits in the values output and its index in
    // the indices output, at the row's offset p; the two move together.
    auto key_at = [&](llvm::Value* p) { return key(k.LoadBits(values_out, element, at(p))); };
    // better(p, q): the element at p after the one at q in TOTALORDER, or equal and of a lower
    // index.
    auto better = [&](llvm::Value* p, llvm::Value* q) -> llvm::Value* {
      llvm::Value* kp = key_at(p);
      llvm::Value* kq = key_at(q);
      llvm::Value* lower = b.CreateICmpSLT(LoadIndex32(k, heap, at(p)), LoadIndex32(k, heap, at(q)));
      return b.CreateOr(greater(kp, kq), b.CreateAnd(b.CreateICmpEQ(kp, kq), lower));
    };
    auto swap = [&](llvm::Value* p, llvm::Value* q, llvm::Value* when) {
      llvm::Value* vp = k.LoadBits(values_out, element, at(p));
      llvm::Value* vq = k.LoadBits(values_out, element, at(q));
      llvm::Value* ip = k.LoadBits(heap, ElementType::kI32, at(p));
      llvm::Value* iq = k.LoadBits(heap, ElementType::kI32, at(q));
      k.StoreBits(values_out, element, at(p), b.CreateSelect(when, vq, vp));
      k.StoreBits(values_out, element, at(q), b.CreateSelect(when, vp, vq));
      k.StoreBits(heap, ElementType::kI32, at(p), b.CreateSelect(when, iq, ip));
      k.StoreBits(heap, ElementType::kI32, at(q), b.CreateSelect(when, ip, iq));
    };
    // Restores the heap (every parent worse than its children: the root is the worst kept)
    // from heap position `start` down, over positions [0, size).
    auto sift_down = [&](llvm::Value* start, llvm::Value* size) -> Status {
      llvm::Value* pos = vars.New("pos", start);
      llvm::Value* child = vars.New("child", b.CreateAdd(b.CreateMul(start, k.Int(2)), k.Int(1)));
      return While(
          k, [&]() -> StatusOr<llvm::Value*> { return b.CreateICmpSLT(vars.Get(child), size); },
          [&]() -> Status {
            llvm::Value* c = vars.Get(child);
            llvm::Value* r = b.CreateAdd(c, k.Int(1));
            llvm::Value* use_right =
                b.CreateAnd(b.CreateICmpSLT(r, size), better(c, Min(b, r, b.CreateSub(size, k.Int(1)))));
            llvm::Value* worse_child = b.CreateSelect(use_right, r, c);
            llvm::Value* p = vars.Get(pos);
            // The parent must be worse than its worse child; swap when it is better.
            llvm::Value* swapped = better(p, worse_child);
            swap(p, worse_child, swapped);
            vars.Set(pos, b.CreateSelect(swapped, worse_child, p));
            vars.Set(child, b.CreateSelect(
                                swapped, b.CreateAdd(b.CreateMul(worse_child, k.Int(2)), k.Int(1)),
                                size));
            return absl::OkStatus();
          });
    };
    llvm::Value* kept = k.Int(k_count);
    // The first k elements, made a heap.
    ACCY_RETURN_IF_ERROR(k.Loop(k.Int(0), kept, [&](llvm::Value* i) -> Status {
      k.StoreBits(values_out, element, at(i), k.LoadBits(input, element, b.CreateAdd(base, i)));
      StoreIndex32(k, heap, at(i), i);
      return absl::OkStatus();
    }));
    ACCY_RETURN_IF_ERROR(k.Loop(k.Int(0), k.Int(k_count / 2), [&](llvm::Value* t) -> Status {
      return sift_down(b.CreateSub(k.Int(k_count / 2 - 1), t), kept);
    }));
    // Every later element better than the worst kept replaces it. Its index is above every
    // kept one, so it is better exactly when its key is greater.
    auto offer = [&](llvm::Value* i) -> Status {
      llvm::Value* bits_i = k.LoadBits(input, element, b.CreateAdd(base, i));
      return k.If(greater(key(bits_i), key_at(k.Int(0))), [&]() -> Status {
        k.StoreBits(values_out, element, at(k.Int(0)), bits_i);
        StoreIndex32(k, heap, at(k.Int(0)), i);
        return sift_down(k.Int(0), kept);
      });
    };
    ACCY_RETURN_IF_ERROR(scan(base, k_count, [&]() { return key_at(k.Int(0)); }, offer));
    // Heap extraction: the worst kept goes to the end, best first in the end.
    return k.Loop(k.Int(0), k.Int(k_count - 1), [&](llvm::Value* t) -> Status {
      llvm::Value* e = b.CreateSub(k.Int(k_count - 1), t);
      swap(k.Int(0), e, b.getTrue());
      return sift_down(k.Int(0), e);
    });
  });
  ACCY_RETURN_IF_ERROR(status);
  k.Finish();
  return signature;
}

}  // namespace accy::jit
