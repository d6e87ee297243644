// Emitter of shape work items (emitters.h): one kernel per item's single op.
//
// Data movement copies raw bits (iN of the element's width), so every element type moves
// unchanged, NaN payloads included. Block decompositions, fixed per op and independent of the
// thread count:
// - Affine copies (reshape, broadcast_in_dim, slice, reverse, dynamic_slice, and transposes that
//   keep the innermost dim): every output element reads input[base + sum(coord * stride)].
//   Size-1 dims are dropped and dims contiguous in both buffers merged (a reshape is one flat
//   copy); blocks are kShapeBlockElements output elements in row-major order, walked one row
//   segment at a time with a counted column loop the vectorizer widens.
// - Transposes that move the innermost dim: blocks are square tiles over the output's last dim
//   and the dim that is innermost in the input (64x64 elements, 32x32 for 8-byte types: one tile
//   of input and output stays in L1), so reads and writes both use whole cache lines.
// - pad, concatenate, iota, dynamic_update_slice: blocks of kShapeBlockElements output elements.
// - gather, scatter: gather_scatter_emitter.cc; bitcast_convert to or from i1:
//   bool_bitcast_emitter.cc.
// reshape is a copy here; the executor aliases the operand instead when buffer assignment allows
// (row-major order never changes under reshape).
#include <algorithm>
#include <cstdlib>

#include "jit/emitters.h"
#include "jit/shape_kernel_builder.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

// A copy whose input index is affine in the output coordinates.
struct AffineCopy {
  std::vector<int64_t> dims;     // output dims
  std::vector<int64_t> strides;  // input elements per step of each output dim (may be <= 0)
};

// Drops size-1 dims and merges adjacent dims that are contiguous in both buffers.
AffineCopy Simplify(const AffineCopy& copy) {
  AffineCopy merged;
  for (size_t d = 0; d < copy.dims.size(); ++d) {
    if (copy.dims[d] == 1) continue;
    if (!merged.dims.empty() && merged.strides.back() == copy.strides[d] * copy.dims[d]) {
      merged.dims.back() *= copy.dims[d];
      merged.strides.back() = copy.strides[d];
    } else {
      merged.dims.push_back(copy.dims[d]);
      merged.strides.push_back(copy.strides[d]);
    }
  }
  return merged;
}

int64_t TileSize(ElementType type) { return ElementByteWidth(type) >= 8 ? 32 : 64; }

// Lanes of the in-register transpose: one 64-byte vector per row for 4- and 8-byte types
// (16x16 f32 in zmm registers), 16 lanes for narrower types. Divides TileSize.
int64_t MicroTileSize(ElementType type) {
  return std::min<int64_t>(16, 64 / ElementByteWidth(type));
}

// Transposes m vectors of m lanes (m a power of two) with log2(m) rounds of interleaves: round
// pairs row k with row k + m/2 into their low and high interleaves (the perfect shuffle).
std::vector<llvm::Value*> TransposeInRegisters(llvm::IRBuilder<>& b,
                                               std::vector<llvm::Value*> rows) {
  const size_t m = rows.size();
  const size_t half = m / 2;
  std::vector<int> low, high;
  for (size_t p = 0; p < half; ++p) {
    low.insert(low.end(), {static_cast<int>(p), static_cast<int>(p + m)});
    high.insert(high.end(), {static_cast<int>(p + half), static_cast<int>(p + half + m)});
  }
  for (size_t width = 1; width < m; width *= 2) {
    std::vector<llvm::Value*> next(m);
    for (size_t r = 0; r < half; ++r) {
      next[2 * r] = b.CreateShuffleVector(rows[r], rows[r + half], low);
      next[2 * r + 1] = b.CreateShuffleVector(rows[r], rows[r + half], high);
    }
    rows = std::move(next);
  }
  return rows;
}

// Emits the copy of input buffer 0 to output buffer `out` (`base` is the input index of the
// output's first element) and fills in the block decomposition.
Status EmitAffineCopy(ShapeKernelBuilder& k, ElementType type, const AffineCopy& copy,
                      llvm::Value* base, size_t out, KernelSignature& signature) {
  int64_t count = 1;
  for (int64_t d : copy.dims) count *= d;
  const AffineCopy s = Simplify(copy);
  const size_t rank = s.dims.size();
  llvm::IRBuilder<>& b = k.ir();
  // The dim innermost in the input, when it is not the output's innermost one: tile.
  size_t q = rank;
  for (size_t d = 0; d + 1 < rank; ++d) {
    if (s.strides[d] == 1) q = d;
  }
  if (count > 0 && rank >= 2 && q < rank && s.strides.back() != 1) {
    const int64_t tile = TileSize(type);
    const size_t last = rank - 1;
    const int64_t tiles_q = BlockCount(s.dims[q], tile);
    const int64_t tiles_last = BlockCount(s.dims[last], tile);
    const std::vector<int64_t> out_strides = RowMajorStrides(s.dims);
    signature.block_size = tile * tile;
    signature.block_count = count / (s.dims[q] * s.dims[last]) * tiles_q * tiles_last;
    ACCY_RETURN_IF_ERROR(k.Loop(k.block_begin(), k.block_end(), [&](llvm::Value* block) {
      // block = ((rest...) * tiles_q + tq) * tiles_last + tl.
      llvm::Value* tl = b.CreateURem(block, k.Int(tiles_last));
      llvm::Value* rest = b.CreateUDiv(block, k.Int(tiles_last));
      llvm::Value* tq = b.CreateURem(rest, k.Int(tiles_q));
      rest = b.CreateUDiv(rest, k.Int(tiles_q));
      llvm::Value* out_base = k.Int(0);
      llvm::Value* in_base = base;
      for (size_t d = last; d-- > 0;) {
        if (d == q) continue;
        llvm::Value* coord = b.CreateURem(rest, k.Int(s.dims[d]));
        rest = b.CreateUDiv(rest, k.Int(s.dims[d]));
        out_base = b.CreateAdd(out_base, b.CreateMul(coord, k.Int(out_strides[d])));
        in_base = b.CreateAdd(in_base, b.CreateMul(coord, k.Int(s.strides[d])));
      }
      llvm::Value* i0 = b.CreateMul(tq, k.Int(tile));
      llvm::Value* i1 = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateAdd(i0, k.Int(tile)),
                                                k.Int(s.dims[q]));
      llvm::Value* j0 = b.CreateMul(tl, k.Int(tile));
      llvm::Value* j1 = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateAdd(j0, k.Int(tile)),
                                                k.Int(s.dims[last]));
      // Whole micro tiles: m input rows of m contiguous elements, transposed in registers,
      // stored as m output rows of m contiguous elements.
      const int64_t m = MicroTileSize(type);
      llvm::Value* i_full =
          b.CreateAdd(i0, b.CreateMul(b.CreateUDiv(b.CreateSub(i1, i0), k.Int(m)), k.Int(m)));
      llvm::Value* j_full =
          b.CreateAdd(j0, b.CreateMul(b.CreateUDiv(b.CreateSub(j1, j0), k.Int(m)), k.Int(m)));
      ACCY_RETURN_IF_ERROR(k.Loop(
          i0, i_full,
          [&](llvm::Value* ib) -> Status {
            return k.Loop(
                j0, j_full,
                [&](llvm::Value* jb) -> Status {
                  std::vector<llvm::Value*> rows;
                  for (int64_t r = 0; r < m; ++r) {
                    llvm::Value* j = b.CreateAdd(jb, k.Int(r));
                    rows.push_back(
                        k.LoadBitsVector(0, type,
                                         b.CreateAdd(b.CreateAdd(in_base, ib),
                                                     b.CreateMul(j, k.Int(s.strides[last]))),
                                         m));
                  }
                  rows = TransposeInRegisters(b, rows);
                  for (int64_t c = 0; c < m; ++c) {
                    llvm::Value* i = b.CreateAdd(ib, k.Int(c));
                    k.StoreBitsVector(
                        out, type,
                        b.CreateAdd(b.CreateAdd(out_base, b.CreateMul(i, k.Int(out_strides[q]))),
                                    jb),
                        rows[static_cast<size_t>(c)]);
                  }
                  return absl::OkStatus();
                },
                m);
          },
          m));
      // The partial strips: columns past j_full of the whole rows, then the rows past i_full.
      return k.Loop(i0, i1, [&](llvm::Value* i) {
        llvm::Value* out_row = b.CreateAdd(out_base, b.CreateMul(i, k.Int(out_strides[q])));
        llvm::Value* in_row = b.CreateAdd(in_base, i);  // s.strides[q] == 1
        llvm::Value* j_start = b.CreateSelect(b.CreateICmpSLT(i, i_full), j_full, j0);
        return k.Loop(j_start, j1, [&](llvm::Value* j) {
          llvm::Value* in = b.CreateAdd(in_row, b.CreateMul(j, k.Int(s.strides[last])));
          k.StoreBits(out, type, b.CreateAdd(out_row, j), k.LoadBits(0, type, in));
          return absl::OkStatus();
        });
      });
    }));
    return absl::OkStatus();
  }
  signature.block_size = kShapeBlockElements;
  signature.block_count = BlockCount(count, kShapeBlockElements);
  auto [lo, hi] = k.BlockElements(kShapeBlockElements, count);
  const int64_t last_stride = rank == 0 ? 0 : s.strides.back();
  return k.Rows(lo, hi, s.dims,
                [&](const std::vector<llvm::Value*>& outer, llvm::Value* col_begin,
                    llvm::Value* col_end, llvm::Value* row_start) {
                  llvm::Value* in_row = base;
                  for (size_t d = 0; d < outer.size(); ++d) {
                    in_row = b.CreateAdd(in_row, b.CreateMul(outer[d], k.Int(s.strides[d])));
                  }
                  return k.Loop(col_begin, col_end, [&](llvm::Value* col) {
                    llvm::Value* in = b.CreateAdd(in_row, b.CreateMul(col, k.Int(last_stride)));
                    k.StoreBits(out, type, b.CreateAdd(row_start, col), k.LoadBits(0, type, in));
                    return absl::OkStatus();
                  });
                });
}

// reshape, broadcast_in_dim, transpose, slice, reverse: the input index map is static.
StatusOr<AffineCopy> StaticCopy(const Operation& op, int64_t* base) {
  const std::vector<int64_t>& in_dims = op.operand(0)->type().dims();
  const std::vector<int64_t>& out_dims = op.result(0)->type().dims();
  const std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
  AffineCopy copy{out_dims, std::vector<int64_t>(out_dims.size(), 0)};
  *base = 0;
  switch (op.kind()) {
    case OpKind::kReshape:
      copy.strides = RowMajorStrides(out_dims);
      break;
    case OpKind::kBroadcastInDim: {
      const std::vector<int64_t> map = op.GetInts("broadcast_dimensions");
      for (size_t d = 0; d < map.size(); ++d) {
        if (in_dims[d] != 1) copy.strides[static_cast<size_t>(map[d])] = in_strides[d];
      }
      break;
    }
    case OpKind::kTranspose: {
      const std::vector<int64_t> permutation = op.GetInts("permutation");
      for (size_t d = 0; d < permutation.size(); ++d) {
        copy.strides[d] = in_strides[static_cast<size_t>(permutation[d])];
      }
      break;
    }
    case OpKind::kSlice: {
      const std::vector<int64_t> start = op.GetInts("start_indices");
      const std::vector<int64_t> step = op.GetInts("strides");
      for (size_t d = 0; d < start.size(); ++d) {
        *base += start[d] * in_strides[d];
        copy.strides[d] = step[d] * in_strides[d];
      }
      break;
    }
    case OpKind::kReverse: {
      copy.strides = in_strides;
      for (int64_t d : op.GetInts("dimensions")) {
        const size_t u = static_cast<size_t>(d);
        if (in_dims[u] > 0) *base += (in_dims[u] - 1) * in_strides[u];
        copy.strides[u] = -in_strides[u];
      }
      break;
    }
    default:
      return absl::InternalError(StrCat("jit: shape emitter: ", op.name(), " is not affine"));
  }
  return copy;
}

// The spec's clamped start indices of dynamic_slice / dynamic_update_slice: clamp(start, 0,
// dim - size) for operands first.. (one rank-0 integer each). A constant start is folded; the
// others are read from `signature`'s buffers (AddStartIndices).
std::vector<size_t> AddStartIndices(KernelSignature& signature, const Operation& op,
                                    int64_t first) {
  std::vector<size_t> buffers;
  for (int64_t i = first; i < op.num_operands(); ++i) {
    const bool folded = ConstantScalarBytes(*op.operand(i)) != nullptr;
    buffers.push_back(folded ? 0 : AddInput(signature, op.operand(i)));
  }
  return buffers;
}

std::vector<llvm::Value*> ClampedStarts(ShapeKernelBuilder& k, const Operation& op,
                                        const std::vector<size_t>& buffers,
                                        const std::vector<int64_t>& dims,
                                        const std::vector<int64_t>& sizes, int64_t first) {
  std::vector<llvm::Value*> starts;
  for (size_t d = 0; d < dims.size(); ++d) {
    const Value& start = *op.operand(first + static_cast<int64_t>(d));
    const ElementType type = start.type().element_type();
    const int64_t high = dims[d] - sizes[d];
    if (const uint8_t* bytes = ConstantScalarBytes(start)) {
      starts.push_back(k.Int(std::max<int64_t>(0, std::min(IndexFromBytes(type, bytes), high))));
    } else {
      starts.push_back(k.Clamp(k.LoadIndex(buffers[d], type, k.Int(0)), k.Int(0), k.Int(high)));
    }
  }
  return starts;
}

StatusOr<KernelSignature> EmitStaticCopy(const Operation& op, llvm::Module& module,
                                         std::string_view symbol) {
  KernelSignature signature;
  AddInput(signature, op.operand(0));
  signature.outputs.push_back(op.result(0));
  int64_t base = 0;
  ACCY_ASSIGN_OR_RETURN(AffineCopy copy, StaticCopy(op, &base));
  ShapeKernelBuilder k(module, symbol, 1, 1);
  ACCY_RETURN_IF_ERROR(
      EmitAffineCopy(k, op.result(0)->type().element_type(), copy, k.Int(base), 1, signature));
  k.Finish();
  return signature;
}

// bitcast_convert between widths (spec "bitcast_convert"): the result holds the operand's bytes
// in the same row-major order, so the kernel is a byte copy.
StatusOr<KernelSignature> EmitByteCopy(const Operation& op, llvm::Module& module,
                                       std::string_view symbol) {
  KernelSignature signature;
  AddInput(signature, op.operand(0));
  signature.outputs.push_back(op.result(0));
  auto bytes = op.result(0)->type().ByteSize();
  if (!bytes.ok()) return bytes.status();
  AffineCopy copy{{static_cast<int64_t>(*bytes)}, {1}};
  ShapeKernelBuilder k(module, symbol, 1, 1);
  ACCY_RETURN_IF_ERROR(EmitAffineCopy(k, ElementType::kU8, copy, k.Int(0), 1, signature));
  k.Finish();
  return signature;
}

// Spec "dynamic_slice": result[i] = operand[i + clamp(start, 0, dim - slice_size)].
StatusOr<KernelSignature> EmitDynamicSlice(const Operation& op, llvm::Module& module,
                                           std::string_view symbol) {
  KernelSignature signature;
  AddInput(signature, op.operand(0));  // buffer 0, as EmitAffineCopy reads
  const std::vector<size_t> start_buffers = AddStartIndices(signature, op, 1);
  signature.outputs.push_back(op.result(0));
  const size_t out = signature.inputs.size();
  ShapeKernelBuilder k(module, symbol, signature.inputs.size(), 1);
  const std::vector<int64_t>& dims = op.operand(0)->type().dims();
  const std::vector<int64_t>& sizes = op.result(0)->type().dims();
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  llvm::Value* base = k.Int(0);
  std::vector<llvm::Value*> starts = ClampedStarts(k, op, start_buffers, dims, sizes, 1);
  for (size_t d = 0; d < dims.size(); ++d) {
    base = k.ir().CreateAdd(base, k.ir().CreateMul(starts[d], k.Int(strides[d])));
  }
  ACCY_RETURN_IF_ERROR(EmitAffineCopy(k, op.result(0)->type().element_type(),
                                      AffineCopy{sizes, strides}, base, out, signature));
  k.Finish();
  return signature;
}

// Spec "pad", per output element: operand index j = (c - low) / (interior + 1) in each dim when
// the division is exact and 0 <= j < dim, else padding_value.
StatusOr<KernelSignature> EmitPad(const Operation& op, llvm::Module& module,
                                  std::string_view symbol) {
  const std::vector<int64_t> low = op.GetInts("edge_padding_low");
  const std::vector<int64_t> interior = op.GetInts("interior_padding");
  constexpr int64_t kLimit = int64_t{1} << 62;  // keeps c - low and interior + 1 from overflowing
  for (size_t d = 0; d < low.size(); ++d) {
    if (std::abs(low[d]) >= kLimit || interior[d] >= kLimit) {
      return absl::UnimplementedError(StrCat("jit: shape emitter: pad with edge_padding_low ",
                                             low[d], " and interior_padding ", interior[d],
                                             " in dim ", d, " is not supported"));
    }
  }
  KernelSignature signature;
  const size_t operand = AddInput(signature, op.operand(0));
  // A constant padding value (the common case) is folded into the code.
  const uint8_t* padding_bytes = ConstantScalarBytes(*op.operand(1));
  const size_t padding = padding_bytes != nullptr ? 0 : AddInput(signature, op.operand(1));
  signature.outputs.push_back(op.result(0));
  const size_t out = signature.inputs.size();
  const ElementType type = op.result(0)->type().element_type();
  const std::vector<int64_t>& in_dims = op.operand(0)->type().dims();
  const std::vector<int64_t>& out_dims = op.result(0)->type().dims();
  const std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
  const int64_t count = op.result(0)->type().element_count();
  const bool operand_empty = op.operand(0)->type().element_count() == 0;
  signature.block_size = kShapeBlockElements;
  signature.block_count = BlockCount(count, kShapeBlockElements);
  ShapeKernelBuilder k(module, symbol, signature.inputs.size(), 1);
  llvm::IRBuilder<>& b = k.ir();
  llvm::Value* fill = padding_bytes != nullptr ? k.BitsConstant(type, padding_bytes)
                                               : k.LoadBits(padding, type, k.Int(0));
  auto [lo, hi] = k.BlockElements(kShapeBlockElements, count);
  ACCY_RETURN_IF_ERROR(k.Elements(
      lo, hi, out_dims,
      [&](const std::vector<llvm::Value*>& coords, llvm::Value* linear) -> Status {
        llvm::Value* value = fill;
        if (!operand_empty) {
          llvm::Value* valid = b.getTrue();
          llvm::Value* index = k.Int(0);
          for (size_t d = 0; d < coords.size(); ++d) {
            llvm::Value* t = b.CreateSub(coords[d], k.Int(low[d]));
            llvm::Value* j = t;
            if (interior[d] > 0) {
              const int64_t step = interior[d] + 1;
              j = b.CreateSDiv(t, k.Int(step));
              valid = b.CreateAnd(valid, b.CreateICmpEQ(b.CreateSRem(t, k.Int(step)), k.Int(0)));
            }
            // Unsigned compare: a negative j is out of range too.
            valid = b.CreateAnd(valid, b.CreateICmpULT(j, k.Int(in_dims[d])));
            index = b.CreateAdd(index, b.CreateMul(j, k.Int(in_strides[d])));
          }
          // Padding positions read element 0 (always in bounds here) and discard it.
          llvm::Value* element = k.LoadBits(operand, type, b.CreateSelect(valid, index, k.Int(0)));
          value = b.CreateSelect(valid, element, fill);
        }
        k.StoreBits(out, type, linear, value);
        return absl::OkStatus();
      }));
  k.Finish();
  return signature;
}

// Spec "concatenate": input n covers [offset_n, offset_n + dim_n) of `dimension`. Per row
// segment: along the last dim, each input fills its column range; along an outer dim, the row
// comes whole from the input that covers its coordinate.
StatusOr<KernelSignature> EmitConcatenate(const Operation& op, llvm::Module& module,
                                          std::string_view symbol) {
  KernelSignature signature;
  std::vector<size_t> buffers;
  for (const Value* input : op.operands()) buffers.push_back(AddInput(signature, input));
  signature.outputs.push_back(op.result(0));
  const size_t out = signature.inputs.size();
  const ElementType type = op.result(0)->type().element_type();
  const std::vector<int64_t>& out_dims = op.result(0)->type().dims();
  const size_t rank = out_dims.size();
  const size_t cd = static_cast<size_t>(op.GetInt("dimension").value_or(0));
  const int64_t count = op.result(0)->type().element_count();
  signature.block_size = kShapeBlockElements;
  signature.block_count = BlockCount(count, kShapeBlockElements);
  ShapeKernelBuilder k(module, symbol, signature.inputs.size(), 1);
  llvm::IRBuilder<>& b = k.ir();
  auto [lo, hi] = k.BlockElements(kShapeBlockElements, count);
  ACCY_RETURN_IF_ERROR(k.Rows(
      lo, hi, out_dims,
      [&](const std::vector<llvm::Value*>& outer, llvm::Value* col_begin, llvm::Value* col_end,
          llvm::Value* row_start) -> Status {
        int64_t offset = 0;
        for (size_t n = 0; n < buffers.size(); ++n) {
          const std::vector<int64_t>& in_dims = op.operand(static_cast<int64_t>(n))->type().dims();
          const int64_t size = in_dims[cd];
          const int64_t first = offset;
          offset += size;
          if (size == 0) continue;
          const std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
          if (cd + 1 == rank) {
            // Columns [first, first + size) of every row; the input's rows are as long as `size`.
            llvm::Value* row = b.CreateUDiv(row_start, k.Int(out_dims.back()));
            llvm::Value* in_row = b.CreateSub(b.CreateMul(row, k.Int(size)), k.Int(first));
            llvm::Value* c0 =
                b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, col_begin, k.Int(first));
            llvm::Value* c1 =
                b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, col_end, k.Int(first + size));
            ACCY_RETURN_IF_ERROR(k.Loop(c0, c1, [&](llvm::Value* col) {
              k.StoreBits(out, type, b.CreateAdd(row_start, col),
                          k.LoadBits(buffers[n], type, b.CreateAdd(in_row, col)));
              return absl::OkStatus();
            }));
            continue;
          }
          llvm::Value* c = b.CreateSub(outer[cd], k.Int(first));
          ACCY_RETURN_IF_ERROR(k.If(b.CreateICmpULT(c, k.Int(size)), [&]() -> Status {
            llvm::Value* in_row = k.Int(0);
            for (size_t d = 0; d < outer.size(); ++d) {
              in_row =
                  b.CreateAdd(in_row, b.CreateMul(d == cd ? c : outer[d], k.Int(in_strides[d])));
            }
            return k.Loop(col_begin, col_end, [&](llvm::Value* col) {
              k.StoreBits(out, type, b.CreateAdd(row_start, col),
                          k.LoadBits(buffers[n], type, b.CreateAdd(in_row, col)));
              return absl::OkStatus();
            });
          }));
        }
        return absl::OkStatus();
      }));
  k.Finish();
  return signature;
}

// Spec "iota": element = its coordinate along iota_dimension, converted as the convert op does
// (integers wrap, i1 keeps the low bit, floats round to nearest even).
StatusOr<KernelSignature> EmitIota(const Operation& op, llvm::Module& module,
                                   std::string_view symbol) {
  KernelSignature signature;
  signature.outputs.push_back(op.result(0));
  const ElementType type = op.result(0)->type().element_type();
  const std::vector<int64_t>& dims = op.result(0)->type().dims();
  const size_t id = static_cast<size_t>(op.GetInt("iota_dimension").value_or(0));
  const int64_t count = op.result(0)->type().element_count();
  signature.block_size = kShapeBlockElements;
  signature.block_count = BlockCount(count, kShapeBlockElements);
  ShapeKernelBuilder k(module, symbol, 0, 1);
  llvm::IRBuilder<>& b = k.ir();
  llvm::LLVMContext& context = module.getContext();
  auto [lo, hi] = k.BlockElements(kShapeBlockElements, count);
  ACCY_RETURN_IF_ERROR(
      k.Elements(lo, hi, dims, [&](const std::vector<llvm::Value*>& coords, llvm::Value* linear) {
        llvm::Value* index = coords[id];
        llvm::Value* value = IsFloat(type)
                                 ? k.lowering().ConvertElement(index, ElementType::kI64, type)
                                 : b.CreateTrunc(index, StorageType(context, type));
        k.StoreElement(0, type, linear, value);
        return absl::OkStatus();
      }));
  k.Finish();
  return signature;
}

// Spec "dynamic_update_slice": the operand, with the update written at the clamped start
// indices. Per row segment: copy the operand's segment, then overwrite the update's columns
// when the row lies in the update.
StatusOr<KernelSignature> EmitDynamicUpdateSlice(const Operation& op, llvm::Module& module,
                                                 std::string_view symbol) {
  KernelSignature signature;
  const size_t operand = AddInput(signature, op.operand(0));
  const size_t update = AddInput(signature, op.operand(1));
  const std::vector<size_t> start_buffers = AddStartIndices(signature, op, 2);
  signature.outputs.push_back(op.result(0));
  const size_t out = signature.inputs.size();
  const ElementType type = op.result(0)->type().element_type();
  const std::vector<int64_t>& dims = op.operand(0)->type().dims();
  const std::vector<int64_t>& update_dims = op.operand(1)->type().dims();
  const std::vector<int64_t> update_strides = RowMajorStrides(update_dims);
  const int64_t count = op.result(0)->type().element_count();
  const bool update_empty = op.operand(1)->type().element_count() == 0;
  signature.block_size = kShapeBlockElements;
  signature.block_count = BlockCount(count, kShapeBlockElements);
  ShapeKernelBuilder k(module, symbol, signature.inputs.size(), 1);
  llvm::IRBuilder<>& b = k.ir();
  const std::vector<llvm::Value*> starts =
      ClampedStarts(k, op, start_buffers, dims, update_dims, 2);
  auto [lo, hi] = k.BlockElements(kShapeBlockElements, count);
  ACCY_RETURN_IF_ERROR(
      k.Rows(lo, hi, dims,
             [&](const std::vector<llvm::Value*>& outer, llvm::Value* col_begin,
                 llvm::Value* col_end, llvm::Value* row_start) -> Status {
               ACCY_RETURN_IF_ERROR(k.Loop(col_begin, col_end, [&](llvm::Value* col) {
                 llvm::Value* at = b.CreateAdd(row_start, col);
                 k.StoreBits(out, type, at, k.LoadBits(operand, type, at));
                 return absl::OkStatus();
               }));
               if (update_empty) return absl::OkStatus();
               if (dims.empty()) {  // rank 0: the update replaces the one element
                 k.StoreBits(out, type, k.Int(0), k.LoadBits(update, type, k.Int(0)));
                 return absl::OkStatus();
               }
               llvm::Value* inside = b.getTrue();
               llvm::Value* update_row = k.Int(0);
               for (size_t d = 0; d < outer.size(); ++d) {
                 llvm::Value* u = b.CreateSub(outer[d], starts[d]);
                 inside = b.CreateAnd(inside, b.CreateICmpULT(u, k.Int(update_dims[d])));
                 update_row = b.CreateAdd(update_row, b.CreateMul(u, k.Int(update_strides[d])));
               }
               return k.If(inside, [&]() -> Status {
                 llvm::Value* first = starts.back();
                 llvm::Value* c0 = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, col_begin, first);
                 llvm::Value* c1 = b.CreateBinaryIntrinsic(
                     llvm::Intrinsic::smin, col_end, b.CreateAdd(first, k.Int(update_dims.back())));
                 llvm::Value* update_base = b.CreateSub(update_row, first);
                 return k.Loop(c0, c1, [&](llvm::Value* col) {
                   k.StoreBits(out, type, b.CreateAdd(row_start, col),
                               k.LoadBits(update, type, b.CreateAdd(update_base, col)));
                   return absl::OkStatus();
                 });
               });
             }));
  k.Finish();
  return signature;
}

}  // namespace

StatusOr<KernelSignature> EmitShapeKernel(const WorkItem& item, const FusionPlan&,
                                          llvm::Module& module, std::string_view symbol) {
  if (item.kind != WorkKind::kShape || item.ops.size() != 1) {
    return absl::UnimplementedError(StrCat("jit: shape emitter: work item ", item.id, " (kind ",
                                           WorkKindName(item.kind), ", ", item.ops.size(),
                                           " ops) is not a single shape op"));
  }
  const Operation& op = *item.ops.front();
  switch (op.kind()) {
    case OpKind::kReshape:
    case OpKind::kBroadcastInDim:
    case OpKind::kTranspose:
    case OpKind::kSlice:
    case OpKind::kReverse:
      return EmitStaticCopy(op, module, symbol);
    case OpKind::kBitcastConvert:
      if (IsBool(op.operand(0)->type().element_type()) !=
          IsBool(op.result(0)->type().element_type())) {
        return EmitBoolBitcastKernel(op, module, symbol);
      }
      return EmitByteCopy(op, module, symbol);
    case OpKind::kDynamicSlice:
      return EmitDynamicSlice(op, module, symbol);
    case OpKind::kPad:
      return EmitPad(op, module, symbol);
    case OpKind::kConcatenate:
      return EmitConcatenate(op, module, symbol);
    case OpKind::kIota:
      return EmitIota(op, module, symbol);
    case OpKind::kDynamicUpdateSlice:
      return EmitDynamicUpdateSlice(op, module, symbol);
    case OpKind::kGather:
      return EmitGatherKernel(op, module, symbol);
    case OpKind::kScatter:
      return EmitScatterKernel(op, module, symbol);
    case OpKind::kReduceWindow:
      return EmitReduceWindowKernel(op, module, symbol);
    case OpKind::kSelectAndScatter:
      return EmitSelectAndScatterKernel(op, module, symbol);
    case OpKind::kSort:
      return EmitSortKernel(op, module, symbol);
    case OpKind::kTopK:
      return EmitTopKKernel(op, module, symbol);
    default:
      return absl::UnimplementedError(StrCat("jit: shape emitter: op ", op.name(), " (work item ",
                                             item.id, ") is not a shape op"));
  }
}

}  // namespace accy::jit
