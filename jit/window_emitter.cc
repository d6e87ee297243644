// Shape kernels for the window ops (shape_kernel_builder.h), transcribed from the StableHLO spec
// sections of the same names as src/reference/window_ops.cc evaluates them, so the bits agree.
//
// reduce_window: blocks of kShapeBlockElements output elements. Each output element starts its
// accumulators at the init values and walks its window in row-major order (one counted loop per
// dim, the per-dim index arithmetic hoisted to its loop): a position on an input element
// combines that element, a position on padding or a base-dilation hole combines the init value,
// each through the body lowered op by op (region_lowering.h) in the element type. The
// accumulators live in entry-block stack slots that SROA turns into registers. Windows one
// element wide along the last dim (NHWC pooling) take the row form instead (EmitRowReduceWindow):
// the same combinations in the same order, vectorized over columns.
// A reduce_window item with an epilogue (a reduce_window_epilogue cluster, fusion_plan.h rule 4:
// JAX's average pool divides the sum by the window size) applies the epilogue's elementwise ops
// to each finished result before its store, in registers (the row form: over the
// finished row segment, in place); their other operands are read through their elided
// broadcasts, folded when they are one-element constants, or read from their buffers.
// select_and_scatter: one block per index of the leading dims whose window is a single element
// (EmitSelectAndScatterKernel), else one block. The output is filled with init_value; then, for
// each source element in row-major order, the window positions inside the operand are visited in
// row-major order keeping the selection (first position; replaced whenever select(selected,
// current) is false), and the source element is combined into the output at the selected position
// through the scatter region. A window entirely in the padding selects nothing.
#include <functional>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "jit/emitters.h"
#include "jit/index_math.h"
#include "jit/operand_access.h"
#include "jit/region_lowering.h"
#include "jit/shape_kernel_builder.h"
#include "src/fusion/fusion_plan.h"
#include "src/ir/window_geometry.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

// A rank-0 operand: a folded constant or an input buffer.
struct ScalarOperand {
  const uint8_t* constant = nullptr;
  size_t buffer = 0;

  static ScalarOperand Of(KernelSignature& signature, const Value* value) {
    ScalarOperand s;
    s.constant = ConstantScalarBytes(*value);
    if (s.constant == nullptr) s.buffer = AddInput(signature, value);
    return s;
  }
  llvm::Value* Load(ShapeKernelBuilder& k, ElementType type) const {
    if (constant != nullptr) return k.lowering().ConstantElement(type, constant);
    return k.LoadElement(buffer, type, k.Int(0));
  }
};

// The elementwise ops after a one-result reduce_window in its item, over the result's dims, and
// how each reads its operands that are not computed in registers. Empty `ops`: no epilogue.
struct WindowEpilogue {
  const Value* source = nullptr;  // the reduce_window's result
  const Value* output = nullptr;  // the item's result (the last op's)
  std::vector<const Operation*> ops;
  std::vector<OperandAccess> accesses;
  std::map<std::pair<const Operation*, int64_t>, size_t> access_of_use;

  // The epilogue's result for the reduce_window result `value` at the output element whose
  // coordinates are `out` (all dims; `column`, when given, replaces the last one).
  StatusOr<llvm::Value*> Apply(ShapeKernelBuilder& k, llvm::Value* value,
                               const std::vector<llvm::Value*>& out,
                               llvm::Value* column = nullptr) const {
    if (ops.empty()) return value;
    llvm::IRBuilder<>& b = k.ir();
    std::map<const Value*, llvm::Value*> values = {{source, value}};
    ACCY_RETURN_IF_ERROR(k.lowering().EmitChain(
        ops,
        [&](const Operation& e, int64_t i) -> llvm::Value* {
          const OperandAccess& a = accesses[access_of_use.at({&e, i})];
          if (a.buffer < 0) return k.lowering().ConstantElement(a.type, a.constant);
          llvm::Value* at = k.Int(0);
          for (size_t d = 0; d < a.strides.size(); ++d) {
            llvm::Value* coordinate =
                column != nullptr && d + 1 == a.strides.size() ? column : out[d];
            if (a.strides[d] != 0)
              at = b.CreateAdd(at, b.CreateMul(coordinate, k.Int(a.strides[d])));
          }
          return k.LoadElement(static_cast<size_t>(a.buffer), a.type, at);
        },
        values));
    return values.at(output);
  }
};

// Resolves the epilogue of `item` (ops after the reduce_window) into `epilogue`, appending the
// buffers it reads to `signature`. kUnimplemented for an op that is not elementwise over the
// reduce_window's result dims or an item that does not end at its last op.
Status ResolveWindowEpilogue(const WorkItem& item, const FusionPlan& fusion,
                             KernelSignature& signature, WindowEpilogue& epilogue) {
  const Operation& op = *item.ops.front();
  const std::vector<int64_t>& out_dims = op.result(0)->type().dims();
  epilogue.source = op.result(0);
  epilogue.output = op.result(0);
  std::map<const Value*, bool> in_registers = {{op.result(0), true}};
  for (size_t i = 1; i < item.ops.size(); ++i) {
    const Operation* e = item.ops[i];
    if (!IsFusableElementwiseOp(*e) || e->result(0)->type().dims() != out_dims) {
      return absl::UnimplementedError(StrCat(
          "jit: reduce_window emitter: epilogue op ", e->name(), " %", e->result(0)->id(),
          " is not an elementwise op over the reduce_window's result dims ", ShapeText(out_dims)));
    }
    for (int64_t u = 0; u < e->num_operands(); ++u) {
      const Value* operand = e->operand(u);
      if (in_registers.count(operand) != 0) continue;
      ACCY_ASSIGN_OR_RETURN(OperandAccess access,
                            ResolveOperandAccess("jit: reduce_window emitter: epilogue op ", *e,
                                                 *operand, fusion, out_dims, signature.inputs));
      epilogue.access_of_use[{e, u}] = epilogue.accesses.size();
      epilogue.accesses.push_back(std::move(access));
    }
    in_registers[e->result(0)] = true;
    epilogue.ops.push_back(e);
    epilogue.output = e->result(0);
  }
  if (epilogue.output != item.output_value) {
    return absl::UnimplementedError(
        StrCat("jit: reduce_window emitter: work item ", item.id, " does not end at its last op"));
  }
  return absl::OkStatus();
}

// Nested counted loops over the window positions [0, window_dimensions[d]) of dims d..rank-1;
// `fn` runs at the innermost level with all positions.
Status WindowLoops(ShapeKernelBuilder& k, const std::vector<int64_t>& window, size_t d,
                   std::vector<llvm::Value*>& position,
                   const std::function<Status(const std::vector<llvm::Value*>&)>& fn) {
  if (d == window.size()) return fn(position);
  return k.Loop(k.Int(0), k.Int(window[d]), [&](llvm::Value* w) -> Status {
    position[d] = w;
    return WindowLoops(k, window, d + 1, position, fn);
  });
}

// Where window position `w` of the window starting at `start` falls (the first `start.size()`
// dims): whether it is on an input element (not padding, not a base-dilation hole), and that
// element's linear index in the input (meaningless when it is not).
struct WindowPoint {
  llvm::Value* on_input;
  llvm::Value* at;
};
WindowPoint PointOf(ShapeKernelBuilder& k, const WindowGeometry& g,
                    const std::vector<llvm::Value*>& start, const std::vector<llvm::Value*>& w,
                    const std::vector<int64_t>& in_dims, const std::vector<int64_t>& in_strides) {
  llvm::IRBuilder<>& b = k.ir();
  WindowPoint point{b.getTrue(), k.Int(0)};
  for (size_t d = 0; d < start.size(); ++d) {
    llvm::Value* q = b.CreateAdd(start[d], b.CreateMul(w[d], k.Int(g.window_dilations[d])));
    // Unsigned: a negative position (low padding) is out of range too.
    llvm::Value* inside = b.CreateICmpULT(q, k.Int(g.DilatedInput(d, in_dims[d])));
    llvm::Value* index = q;
    if (g.base_dilations[d] != 1) {
      inside = b.CreateAnd(
          inside, b.CreateICmpEQ(b.CreateURem(q, k.Int(g.base_dilations[d])), k.Int(0)));
      index = b.CreateUDiv(q, k.Int(g.base_dilations[d]));
    }
    point.on_input = b.CreateAnd(point.on_input, inside);
    point.at = b.CreateAdd(point.at, b.CreateMul(index, k.Int(in_strides[d])));
  }
  return point;
}

// reduce_window's body over (accumulators..., elements...), with its n results.
StatusOr<std::vector<llvm::Value*>> LowerBody(ShapeKernelBuilder& k, const Operation& op,
                                              std::span<llvm::Value* const> arguments, size_t n) {
  ACCY_ASSIGN_OR_RETURN(std::vector<llvm::Value*> results,
                        LowerScalarRegion(k.lowering(), *op.region(0), arguments,
                                          "shape emitter: reduce_window body"));
  if (results.size() != n) {
    return absl::InvalidArgumentError(StrCat("jit: shape emitter: reduce_window body returns ",
                                             results.size(), " values, expected ", n));
  }
  return results;
}

// At least two dims and a window one element wide along the last dim with stride 1 and no base
// dilation there: NHWC pooling. Each output row then reads whole input rows, so the column loop
// can be innermost and vectorize. (EmitRowReduceWindow also computes windows along the last dim,
// NCHW pooling, with the same bits; measured on max 3x3/2 pad 1 over 64 channels, 1 thread, Xeon
// AVX-512, it beat the general loop nest at 56x56 (batch 8: 2.37 -> 1.57 ms) but lost at 112x112
// (batch 1: 0.49 -> 0.52 ms), and the average's 2x2/2 sum at 112x112 went 0.23 -> 0.28 ms, so
// those windows keep the general loop nest.)
bool IsRowWindow(const WindowGeometry& g, const std::vector<int64_t>& in_dims) {
  const size_t rank = in_dims.size();
  return rank >= 2 && g.base_dilations[rank - 1] == 1 && g.window_dimensions[rank - 1] == 1 &&
         g.window_strides[rank - 1] == 1;
}

// The row form of reduce_window: per output row segment [c0, c1) (columns of the last dim), the
// results start at the init values in the output buffer; then for each window position in
// row-major order (the outer dims' positions, then the last dim's), every column combines the
// input element there (or the init value where the position is padding or a base-dilation hole)
// through the body. Along the last dim, column c of window position k reads input column
// q = c * stride + k * dilation - padding_low, which is inside the input for one contiguous
// range of columns, known at compile time per k: the columns in it load at stride `stride`
// (interleaved vector loads), the ones before and after combine the init value. Each element sees
// the same combinations in the same order as in the general loop nest, so the bits are the same.
Status EmitRowReduceWindow(ShapeKernelBuilder& k, const Operation& op, const WindowGeometry& g,
                           const std::vector<int64_t>& in_dims,
                           const std::vector<int64_t>& out_dims, const std::vector<size_t>& inputs,
                           const std::vector<ScalarOperand>& inits,
                           const std::vector<ElementType>& types, size_t first_output,
                           const WindowEpilogue& epilogue) {
  llvm::IRBuilder<>& b = k.ir();
  const size_t n = inputs.size();
  const size_t outer_rank = in_dims.size() - 1;
  const size_t last = outer_rank;
  const int64_t stride = g.window_strides[last];
  const std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
  const std::vector<int64_t> outer_window(g.window_dimensions.begin(),
                                          g.window_dimensions.end() - 1);
  auto [lo, hi] = k.BlockElements(kShapeBlockElements, op.result(0)->type().element_count());
  return k.Rows(
      lo, hi, out_dims,
      [&](const std::vector<llvm::Value*>& out, llvm::Value* c0, llvm::Value* c1,
          llvm::Value* row_start) -> Status {
        std::vector<llvm::Value*> init_values;
        for (size_t i = 0; i < n; ++i) init_values.push_back(inits[i].Load(k, types[i]));
        ACCY_RETURN_IF_ERROR(k.Loop(c0, c1, [&](llvm::Value* c) -> Status {
          for (size_t i = 0; i < n; ++i) {
            k.StoreElement(first_output + i, types[i], b.CreateAdd(row_start, c), init_values[i]);
          }
          return absl::OkStatus();
        }));
        std::vector<llvm::Value*> start(outer_rank);
        for (size_t d = 0; d < outer_rank; ++d) {
          start[d] = b.CreateSub(b.CreateMul(out[d], k.Int(g.window_strides[d])),
                                 k.Int(g.padding_low[d]));
        }
        // Combines every column of [begin, end) with what `element(i, c)` gives for operand i.
        auto combine = [&](llvm::Value* begin, llvm::Value* end,
                           const std::function<llvm::Value*(size_t, llvm::Value*)>& element) {
          return k.Loop(begin, end, [&](llvm::Value* c) -> Status {
            llvm::Value* at_out = b.CreateAdd(row_start, c);
            std::vector<llvm::Value*> arguments;
            for (size_t i = 0; i < n; ++i) {
              arguments.push_back(k.LoadElement(first_output + i, types[i], at_out));
            }
            for (size_t i = 0; i < n; ++i) arguments.push_back(element(i, c));
            ACCY_ASSIGN_OR_RETURN(std::vector<llvm::Value*> results,
                                  LowerBody(k, op, arguments, n));
            for (size_t i = 0; i < n; ++i) {
              k.StoreElement(first_output + i, types[i], at_out, results[i]);
            }
            return absl::OkStatus();
          });
        };
        auto init_element = [&](size_t i, llvm::Value*) { return init_values[i]; };
        auto smin = [&](llvm::Value* x, llvm::Value* y) {
          return b.CreateSelect(b.CreateICmpSLT(x, y), x, y);
        };
        auto smax = [&](llvm::Value* x, llvm::Value* y) {
          return b.CreateSelect(b.CreateICmpSGT(x, y), x, y);
        };
        std::vector<llvm::Value*> position(outer_rank);
        ACCY_RETURN_IF_ERROR(WindowLoops(
            k, outer_window, 0, position, [&](const std::vector<llvm::Value*>& w) -> Status {
              const auto [on_input, at] = PointOf(k, g, start, w, in_dims, in_strides);
              // The last dim's window positions, in order, each over the whole segment.
              for (int64_t kw = 0; kw < g.window_dimensions[last]; ++kw) {
                const int64_t offset = kw * g.window_dilations[last] - g.padding_low[last];
                // Columns c with 0 <= c * stride + offset < in_dims[last]: [first, end).
                const int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
                const int64_t end =
                    in_dims[last] - offset <= 0 ? 0 : (in_dims[last] - offset - 1) / stride + 1;
                llvm::Value* inside_begin = smin(smax(c0, k.Int(first)), c1);
                llvm::Value* inside_end = smax(smin(c1, k.Int(end)), inside_begin);
                ACCY_RETURN_IF_ERROR(k.If(on_input, [&]() -> Status {
                  ACCY_RETURN_IF_ERROR(combine(c0, inside_begin, init_element));
                  ACCY_RETURN_IF_ERROR(
                      combine(inside_begin, inside_end, [&](size_t i, llvm::Value* c) {
                        return k.LoadElement(
                            inputs[i], types[i],
                            b.CreateAdd(at,
                                        b.CreateAdd(b.CreateMul(c, k.Int(stride)), k.Int(offset))));
                      }));
                  return combine(inside_end, c1, init_element);
                }));
                ACCY_RETURN_IF_ERROR(k.If(b.CreateNot(on_input), [&]() -> Status {
                  return combine(c0, c1, init_element);
                }));
              }
              return absl::OkStatus();
            }));
        if (epilogue.ops.empty()) return absl::OkStatus();
        // The finished segment, in place (the epilogue keeps the element type: see the caller).
        return k.Loop(c0, c1, [&](llvm::Value* c) -> Status {
          llvm::Value* at_out = b.CreateAdd(row_start, c);
          ACCY_ASSIGN_OR_RETURN(
              llvm::Value * result,
              epilogue.Apply(k, k.LoadElement(first_output, types[0], at_out), out, c));
          k.StoreElement(first_output, types[0], at_out, result);
          return absl::OkStatus();
        });
      });
}

// reduce_window `op`, with the epilogue of `item` when it is given (else none).
StatusOr<KernelSignature> EmitReduceWindow(const Operation& op, const WorkItem* item,
                                           const FusionPlan* fusion, llvm::Module& module,
                                           std::string_view symbol) {
  const size_t n = static_cast<size_t>(op.num_results());
  const WindowGeometry g = WindowGeometryOf(op);
  const std::vector<int64_t>& in_dims = op.operand(0)->type().dims();
  const std::vector<int64_t>& out_dims = op.result(0)->type().dims();
  const std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
  const size_t rank = in_dims.size();
  const bool input_empty = op.operand(0)->type().element_count() == 0;

  KernelSignature signature;
  std::vector<size_t> inputs;
  std::vector<ScalarOperand> inits;
  std::vector<ElementType> types;
  for (size_t i = 0; i < n; ++i) {
    inputs.push_back(AddInput(signature, op.operand(static_cast<int64_t>(i))));
    types.push_back(op.result(static_cast<int64_t>(i))->type().element_type());
  }
  for (size_t i = 0; i < n; ++i) {
    inits.push_back(ScalarOperand::Of(signature, op.operand(static_cast<int64_t>(n + i))));
  }
  WindowEpilogue epilogue;
  if (item != nullptr && item->ops.size() > 1) {
    ACCY_RETURN_IF_ERROR(ResolveWindowEpilogue(*item, *fusion, signature, epilogue));
  }
  for (size_t i = 0; i < n; ++i) {
    signature.outputs.push_back(epilogue.ops.empty() ? op.result(static_cast<int64_t>(i))
                                                     : epilogue.output);
  }
  const ElementType out_type = signature.outputs[0]->type().element_type();
  const size_t first_output = signature.inputs.size();
  const int64_t count = op.result(0)->type().element_count();
  signature.block_size = kShapeBlockElements;
  signature.block_count = BlockCount(count, kShapeBlockElements);

  ShapeKernelBuilder k(module, symbol, signature.inputs.size(), n);
  llvm::IRBuilder<>& b = k.ir();
  // The row form accumulates in the output buffer: only when the epilogue keeps the element
  // type.
  if (IsRowWindow(g, in_dims) && !input_empty && out_type == types[0]) {
    ACCY_RETURN_IF_ERROR(EmitRowReduceWindow(k, op, g, in_dims, out_dims, inputs, inits, types,
                                             first_output, epilogue));
    k.Finish();
    return signature;
  }
  std::vector<llvm::Value*> acc_slots;
  for (size_t i = 0; i < n; ++i) {
    acc_slots.push_back(k.EntryAlloca(StorageType(module.getContext(), types[i]), "acc"));
  }
  auto [lo, hi] = k.BlockElements(kShapeBlockElements, count);
  ACCY_RETURN_IF_ERROR(k.Elements(
      lo, hi, out_dims, [&](const std::vector<llvm::Value*>& out, llvm::Value* linear) -> Status {
        std::vector<llvm::Value*> init_values;
        for (size_t i = 0; i < n; ++i) {
          init_values.push_back(inits[i].Load(k, types[i]));
          b.CreateStore(init_values[i], acc_slots[i]);
        }
        // Start of the window in the dilated input (spec: window_start minus the low padding).
        std::vector<llvm::Value*> start(rank);
        for (size_t d = 0; d < rank; ++d) {
          start[d] = b.CreateSub(b.CreateMul(out[d], k.Int(g.window_strides[d])),
                                 k.Int(g.padding_low[d]));
        }
        std::vector<llvm::Value*> position(rank);
        ACCY_RETURN_IF_ERROR(WindowLoops(
            k, g.window_dimensions, 0, position,
            [&](const std::vector<llvm::Value*>& w) -> Status {
              auto [on_input, at] = PointOf(k, g, start, w, in_dims, in_strides);
              // Padding reads element 0 (in bounds) and takes the init value instead.
              at = b.CreateSelect(on_input, at, k.Int(0));
              std::vector<llvm::Value*> arguments;
              for (size_t i = 0; i < n; ++i) {
                arguments.push_back(
                    b.CreateLoad(StorageType(module.getContext(), types[i]), acc_slots[i]));
              }
              for (size_t i = 0; i < n; ++i) {
                llvm::Value* value = init_values[i];
                if (!input_empty) {
                  value = b.CreateSelect(on_input, k.LoadElement(inputs[i], types[i], at), value);
                }
                arguments.push_back(value);
              }
              ACCY_ASSIGN_OR_RETURN(std::vector<llvm::Value*> results,
                                    LowerBody(k, op, arguments, n));
              for (size_t i = 0; i < n; ++i) b.CreateStore(results[i], acc_slots[i]);
              return absl::OkStatus();
            }));
        for (size_t i = 0; i < n; ++i) {
          llvm::Value* result =
              b.CreateLoad(StorageType(module.getContext(), types[i]), acc_slots[i]);
          if (i == 0) {
            ACCY_ASSIGN_OR_RETURN(result, epilogue.Apply(k, result, out));
          }
          k.StoreElement(first_output + i, i == 0 ? out_type : types[i], linear, result);
        }
        return absl::OkStatus();
      }));
  k.Finish();
  return signature;
}

}  // namespace

StatusOr<KernelSignature> EmitReduceWindowKernel(const Operation& op, llvm::Module& module,
                                                 std::string_view symbol) {
  return EmitReduceWindow(op, nullptr, nullptr, module, symbol);
}

StatusOr<KernelSignature> EmitReduceWindowItemKernel(const WorkItem& item, const FusionPlan& fusion,
                                                     llvm::Module& module,
                                                     std::string_view symbol) {
  if (item.kind != WorkKind::kReduceWindow || item.ops.empty() ||
      item.ops.front()->kind() != OpKind::kReduceWindow || item.output_value == nullptr ||
      (item.ops.size() > 1 && item.ops.front()->num_results() != 1)) {
    return absl::UnimplementedError(StrCat("jit: reduce_window emitter: work item ", item.id,
                                           " has kind ", WorkKindName(item.kind),
                                           ", expected a reduce_window and its epilogue"));
  }
  return EmitReduceWindow(*item.ops.front(), &item, &fusion, module, symbol);
}

StatusOr<KernelSignature> EmitSelectAndScatterKernel(const Operation& op, llvm::Module& module,
                                                     std::string_view symbol) {
  const WindowGeometry g = WindowGeometryOf(op);
  const std::vector<int64_t>& dims = op.operand(0)->type().dims();
  const std::vector<int64_t>& source_dims = op.operand(1)->type().dims();
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  const size_t rank = dims.size();
  const ElementType type = op.operand(0)->type().element_type();
  llvm::Type* storage = StorageType(module.getContext(), type);

  KernelSignature signature;
  const size_t operand = AddInput(signature, op.operand(0));
  const size_t source = AddInput(signature, op.operand(1));
  const ScalarOperand init = ScalarOperand::Of(signature, op.operand(2));
  signature.outputs.push_back(op.result(0));
  const size_t out = signature.inputs.size();
  const int64_t count = op.result(0)->type().element_count();
  const int64_t source_count = op.operand(1)->type().element_count();
  // Blocks: the leading dims whose window is one element with stride 1 and no padding (batch,
  // and features in NCHW: JAX's max-pool gradient has window [1, k, k, 1]) map source index i
  // to operand index i, so the windows of different indices there never select the same output
  // element. A block is one index of those dims: its output slice and its source slice are
  // contiguous, filled and scattered on their own, and each output element still combines its
  // sources in source order after the fill (the same bits as one block). Without such dims, one
  // block.
  size_t leading = 0;
  while (leading < rank && g.window_dimensions[leading] == 1 && g.window_strides[leading] == 1 &&
         g.padding_low[leading] == 0 && g.padding_high[leading] == 0) {
    ++leading;
  }
  int64_t units = 1, unit_count = 1, unit_source = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (d < leading) {
      units *= dims[d];
    } else {
      unit_count *= dims[d];
      unit_source *= source_dims[d];
    }
  }
  signature.block_size = unit_count;
  signature.block_count = count > 0 ? units : 0;
  // No padding: every window lies inside the operand (the source has num_windows elements per
  // dim, spec C2), so no position needs the bounds test.
  bool unpadded = true;
  for (size_t d = 0; d < rank; ++d) {
    unpadded = unpadded && g.padding_low[d] == 0 && g.padding_high[d] == 0;
  }
  // Tiling windows (unpadded, stride = window in every dim: max pooling's gradient): each output
  // element lies in at most one window, so instead of scattering into the selected position,
  // every position of the window is stored once, scatter(init, source) at the selected one and
  // init elsewhere -- the same bits as the fill then the scatter, with only affine stores, which
  // vectorize along the innermost dim. The fill is kept only for the elements outside every
  // window (a dim the windows do not cover to its end).
  bool tiled = unpadded;
  bool covered = true;
  for (size_t d = 0; d < rank; ++d) {
    tiled = tiled && g.window_strides[d] == g.window_dimensions[d];
    covered = covered && source_dims[d] * g.window_dimensions[d] == dims[d];
  }

  ShapeKernelBuilder k(module, symbol, signature.inputs.size(), 1);
  llvm::IRBuilder<>& b = k.ir();
  llvm::Value* selected_slot = k.EntryAlloca(b.getInt64Ty(), "selected");
  llvm::Value* value_slot = k.EntryAlloca(storage, "selected_value");
  ACCY_RETURN_IF_ERROR(k.If(
      b.CreateICmpSLT(k.block_begin(), k.block_end()),
      [&]() -> Status {
        llvm::Value* init_value = init.Load(k, type);
        if (!tiled || !covered || source_count == 0) {
          ACCY_RETURN_IF_ERROR(k.Loop(b.CreateMul(k.block_begin(), k.Int(unit_count)),
                                      b.CreateMul(k.block_end(), k.Int(unit_count)),
                                      [&](llvm::Value* i) -> Status {
            k.StoreElement(out, type, i, init_value);
            return absl::OkStatus();
          }));
        }
        if (source_count == 0) return absl::OkStatus();
        return k.Elements(
            b.CreateMul(k.block_begin(), k.Int(unit_source)),
            b.CreateMul(k.block_end(), k.Int(unit_source)), source_dims,
            [&](const std::vector<llvm::Value*>& s, llvm::Value* source_linear) -> Status {
              b.CreateStore(k.Int(-1), selected_slot);
              b.CreateStore(init_value, value_slot);
              std::vector<llvm::Value*> start(rank);
              for (size_t d = 0; d < rank; ++d) {
                start[d] = b.CreateSub(b.CreateMul(s[d], k.Int(g.window_strides[d])),
                                       k.Int(g.padding_low[d]));
              }
              std::vector<llvm::Value*> position(rank);
              ACCY_RETURN_IF_ERROR(WindowLoops(
                  k, g.window_dimensions, 0, position,
                  [&](const std::vector<llvm::Value*>& w) -> Status {
                    llvm::Value* inside = b.getTrue();
                    llvm::Value* at = k.Int(0);
                    for (size_t d = 0; d < rank; ++d) {
                      llvm::Value* q = b.CreateAdd(start[d], w[d]);
                      if (!unpadded) inside = b.CreateAnd(inside, b.CreateICmpULT(q, k.Int(dims[d])));
                      at = b.CreateAdd(at, b.CreateMul(q, k.Int(strides[d])));
                    }
                    return k.If(inside, [&]() -> Status {
                      llvm::Value* current = k.LoadElement(operand, type, at);
                      llvm::Value* selected = b.CreateLoad(b.getInt64Ty(), selected_slot);
                      llvm::Value* selected_value = b.CreateLoad(storage, value_slot);
                      llvm::Value* pair[] = {selected_value, current};
                      ACCY_ASSIGN_OR_RETURN(
                          std::vector<llvm::Value*> keep,
                          LowerScalarRegion(k.lowering(), *op.region(0), pair,
                                            "shape emitter: select_and_scatter select"));
                      if (keep.size() != 1) {
                        return absl::InvalidArgumentError(
                            "jit: shape emitter: select_and_scatter select must return one "
                            "value");
                      }
                      // The first position is selected; a later one when select is false.
                      llvm::Value* replace =
                          b.CreateOr(b.CreateICmpSLT(selected, k.Int(0)), b.CreateNot(keep[0]));
                      b.CreateStore(b.CreateSelect(replace, at, selected), selected_slot);
                      b.CreateStore(b.CreateSelect(replace, current, selected_value), value_slot);
                      return absl::OkStatus();
                    });
                  }));
              llvm::Value* selected = b.CreateLoad(b.getInt64Ty(), selected_slot);
              // The scatter computation over (current output value, this source element).
              auto scatter = [&](llvm::Value* current) -> StatusOr<llvm::Value*> {
                llvm::Value* pair[] = {current, k.LoadElement(source, type, source_linear)};
                ACCY_ASSIGN_OR_RETURN(
                    std::vector<llvm::Value*> combined,
                    LowerScalarRegion(k.lowering(), *op.region(1), pair,
                                      "shape emitter: select_and_scatter scatter"));
                if (combined.size() != 1) {
                  return absl::InvalidArgumentError(
                      "jit: shape emitter: select_and_scatter scatter must return one value");
                }
                return combined[0];
              };
              if (tiled) {
                ACCY_ASSIGN_OR_RETURN(llvm::Value * combined, scatter(init_value));
                return WindowLoops(k, g.window_dimensions, 0, position,
                                   [&](const std::vector<llvm::Value*>& w) -> Status {
                  llvm::Value* at = k.Int(0);
                  for (size_t d = 0; d < rank; ++d) {
                    at = b.CreateAdd(at, b.CreateMul(b.CreateAdd(start[d], w[d]), k.Int(strides[d])));
                  }
                  k.StoreElement(out, type, at,
                                 b.CreateSelect(b.CreateICmpEQ(at, selected), combined, init_value));
                  return absl::OkStatus();
                });
              }
              return k.If(b.CreateICmpSGE(selected, k.Int(0)), [&]() -> Status {
                ACCY_ASSIGN_OR_RETURN(llvm::Value * combined,
                                      scatter(k.LoadElement(out, type, selected)));
                k.StoreElement(out, type, selected, combined);
                return absl::OkStatus();
              });
            });
      }));
  k.Finish();
  return signature;
}

}  // namespace accy::jit
