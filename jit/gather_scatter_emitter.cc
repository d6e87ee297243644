// Shape kernels for gather and scatter (shape_kernel_builder.h), transcribed from the StableHLO
// spec sections of the same names as src/reference/gather_scatter.cc evaluates them.
//
// gather: blocks of kShapeBlockElements output elements; each element computes its operand index
// from the start indices (clamped into the operand), the batching index and the offset index.
// The parts that depend only on the row are hoisted out of the column loop by LICM (index loads
// are in the inputs' alias scope, so output stores do not pin them).
// scatter: one block. The outputs start as copies of the inputs; update elements are applied one
// by one in row-major order of the update index space (so duplicate indices combine in that
// order, as the reference does), an element whose result index is out of bounds is skipped, and
// the update_computation region is lowered per element (region_lowering.h).
#include <algorithm>

#include "jit/region_lowering.h"
#include "jit/shape_kernel_builder.h"
#include "src/fusion/fusion_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// Reads start indices from an index tensor for one batch position.
struct IndexTensor {
  size_t buffer = 0;
  ElementType type = ElementType::kI64;
  std::vector<int64_t> dims;
  int64_t index_vector_dim = 0;

  // The spec's start_index: indices[batch_index with `k` inserted at index_vector_dim] for
  // k < count (or indices[batch_index] when index_vector_dim == rank), as i64 values.
  std::vector<llvm::Value*> Load(ShapeKernelBuilder& k, const std::vector<llvm::Value*>& batch,
                                 size_t count) const {
    llvm::IRBuilder<>& b = k.ir();
    const std::vector<int64_t> strides = RowMajorStrides(dims);
    const bool has_vector = index_vector_dim < static_cast<int64_t>(dims.size());
    llvm::Value* base = k.Int(0);
    for (size_t i = 0; i < batch.size(); ++i) {
      const size_t d = has_vector && static_cast<int64_t>(i) >= index_vector_dim ? i + 1 : i;
      base = b.CreateAdd(base, b.CreateMul(batch[i], k.Int(strides[d])));
    }
    std::vector<llvm::Value*> values;
    for (size_t j = 0; j < count; ++j) {
      llvm::Value* at = base;
      if (has_vector) {
        at = b.CreateAdd(
            base, k.Int(static_cast<int64_t>(j) * strides[static_cast<size_t>(index_vector_dim)]));
      }
      values.push_back(k.LoadIndex(buffer, type, at));
    }
    return values;
  }
};

// batch_index[d_start - (d_start < index_vector_dim ? 0 : 1)] of the spec's full_batching_index.
size_t BatchPosition(int64_t d_start, int64_t index_vector_dim) {
  return static_cast<size_t>(d_start - (d_start < index_vector_dim ? 0 : 1));
}

}  // namespace

StatusOr<KernelSignature> EmitGatherKernel(const Operation& op, llvm::Module& module,
                                           std::string_view symbol) {
  const std::vector<int64_t> offset_dims = op.GetInts("offset_dims");
  const std::vector<int64_t> collapsed = op.GetInts("collapsed_slice_dims");
  const std::vector<int64_t> operand_batching = op.GetInts("operand_batching_dims");
  const std::vector<int64_t> indices_batching = op.GetInts("start_indices_batching_dims");
  const std::vector<int64_t> start_index_map = op.GetInts("start_index_map");
  const std::vector<int64_t> slice_sizes = op.GetInts("slice_sizes");
  const std::vector<int64_t>& operand_dims = op.operand(0)->type().dims();
  const std::vector<int64_t>& out_dims = op.result(0)->type().dims();
  const std::vector<int64_t> operand_strides = RowMajorStrides(operand_dims);
  const ElementType type = op.result(0)->type().element_type();

  KernelSignature signature;
  const size_t operand = AddInput(signature, op.operand(0));
  IndexTensor indices{AddInput(signature, op.operand(1)), op.operand(1)->type().element_type(),
                      op.operand(1)->type().dims(), op.GetInt("index_vector_dim").value_or(0)};
  signature.outputs.push_back(op.result(0));
  const size_t out = signature.inputs.size();
  const int64_t count = op.result(0)->type().element_count();
  signature.block_size = kShapeBlockElements;
  signature.block_count = BlockCount(count, kShapeBlockElements);

  std::vector<size_t> batch_dims;  // result dims not in offset_dims
  for (size_t d = 0; d < out_dims.size(); ++d) {
    if (!Contains(offset_dims, static_cast<int64_t>(d))) batch_dims.push_back(d);
  }
  std::vector<size_t> offset_operand_dims;  // operand dims receiving offset_dims, in order
  for (size_t d = 0; d < operand_dims.size(); ++d) {
    if (!Contains(collapsed, static_cast<int64_t>(d)) &&
        !Contains(operand_batching, static_cast<int64_t>(d))) {
      offset_operand_dims.push_back(d);
    }
  }
  if (offset_operand_dims.size() != offset_dims.size()) {
    return absl::InvalidArgumentError(StrCat("jit: shape emitter: gather has ", offset_dims.size(),
                                             " offset_dims for ", offset_operand_dims.size(),
                                             " uncollapsed operand dims"));
  }

  ShapeKernelBuilder k(module, symbol, signature.inputs.size(), 1);
  llvm::IRBuilder<>& b = k.ir();
  auto [lo, hi] = k.BlockElements(kShapeBlockElements, count);
  ACCY_RETURN_IF_ERROR(k.Elements(
      lo, hi, out_dims, [&](const std::vector<llvm::Value*>& coords, llvm::Value* linear) {
        std::vector<llvm::Value*> batch;
        for (size_t d : batch_dims) batch.push_back(coords[d]);
        std::vector<llvm::Value*> operand_index(operand_dims.size(), k.Int(0));
        const std::vector<llvm::Value*> start = indices.Load(k, batch, start_index_map.size());
        for (size_t j = 0; j < start_index_map.size(); ++j) {
          const size_t d = static_cast<size_t>(start_index_map[j]);
          llvm::Value* clamped =
              k.Clamp(start[j], k.Int(0), k.Int(operand_dims[d] - slice_sizes[d]));
          operand_index[d] = b.CreateAdd(operand_index[d], clamped);
        }
        for (size_t i = 0; i < operand_batching.size(); ++i) {
          const size_t d = static_cast<size_t>(operand_batching[i]);
          operand_index[d] =
              b.CreateAdd(operand_index[d],
                          batch[BatchPosition(indices_batching[i], indices.index_vector_dim)]);
        }
        for (size_t i = 0; i < offset_dims.size(); ++i) {
          const size_t d = offset_operand_dims[i];
          operand_index[d] =
              b.CreateAdd(operand_index[d], coords[static_cast<size_t>(offset_dims[i])]);
        }
        llvm::Value* at = k.Int(0);
        for (size_t d = 0; d < operand_dims.size(); ++d) {
          at = b.CreateAdd(at, b.CreateMul(operand_index[d], k.Int(operand_strides[d])));
        }
        k.StoreBits(out, type, linear, k.LoadBits(operand, type, at));
        return absl::OkStatus();
      }));
  k.Finish();
  return signature;
}

StatusOr<KernelSignature> EmitScatterKernel(const Operation& op, llvm::Module& module,
                                            std::string_view symbol) {
  const size_t n = static_cast<size_t>(op.num_operands() / 2);
  const std::vector<int64_t> update_window_dims = op.GetInts("update_window_dims");
  const std::vector<int64_t> inserted = op.GetInts("inserted_window_dims");
  const std::vector<int64_t> input_batching = op.GetInts("input_batching_dims");
  const std::vector<int64_t> indices_batching = op.GetInts("scatter_indices_batching_dims");
  const std::vector<int64_t> dims_to_operand = op.GetInts("scatter_dims_to_operand_dims");
  const std::vector<int64_t>& input_dims = op.operand(0)->type().dims();
  const std::vector<int64_t>& update_dims = op.operand(static_cast<int64_t>(n + 1))->type().dims();
  const std::vector<int64_t> input_strides = RowMajorStrides(input_dims);

  KernelSignature signature;
  std::vector<size_t> input_buffers, update_buffers;
  for (size_t i = 0; i < n; ++i) {
    input_buffers.push_back(AddInput(signature, op.operand(static_cast<int64_t>(i))));
  }
  const Value* indices_value = op.operand(static_cast<int64_t>(n));
  IndexTensor indices{AddInput(signature, indices_value), indices_value->type().element_type(),
                      indices_value->type().dims(), op.GetInt("index_vector_dim").value_or(0)};
  for (size_t i = 0; i < n; ++i) {
    update_buffers.push_back(AddInput(signature, op.operand(static_cast<int64_t>(n + 1 + i))));
  }
  for (size_t i = 0; i < n; ++i) signature.outputs.push_back(op.result(static_cast<int64_t>(i)));
  const size_t first_output = signature.inputs.size();
  const int64_t input_count = op.operand(0)->type().element_count();
  const int64_t update_count = op.operand(static_cast<int64_t>(n + 1))->type().element_count();
  // One block: updates apply in order, and the copies of the inputs come first.
  signature.block_size = update_count;
  signature.block_count = input_count > 0 ? 1 : 0;

  std::vector<size_t> update_scatter_dims;  // update dims not in update_window_dims
  for (size_t d = 0; d < update_dims.size(); ++d) {
    if (!Contains(update_window_dims, static_cast<int64_t>(d))) update_scatter_dims.push_back(d);
  }
  std::vector<size_t> window_input_dims;  // input dims receiving update_window_dims, in order
  for (size_t d = 0; d < input_dims.size(); ++d) {
    if (!Contains(inserted, static_cast<int64_t>(d)) &&
        !Contains(input_batching, static_cast<int64_t>(d))) {
      window_input_dims.push_back(d);
    }
  }
  if (window_input_dims.size() != update_window_dims.size()) {
    return absl::InvalidArgumentError(StrCat(
        "jit: shape emitter: scatter has ", update_window_dims.size(), " update_window_dims for ",
        window_input_dims.size(), " input dims that are neither inserted nor batching"));
  }

  ShapeKernelBuilder k(module, symbol, signature.inputs.size(), n);
  llvm::IRBuilder<>& b = k.ir();
  // Runs only for the block range [0, 1).
  ACCY_RETURN_IF_ERROR(k.If(
      b.CreateAnd(b.CreateICmpSLE(k.block_begin(), k.Int(0)),
                  b.CreateICmpSGT(k.block_end(), k.Int(0))),
      [&]() -> Status {
        for (size_t i = 0; i < n; ++i) {
          const ElementType type = op.operand(static_cast<int64_t>(i))->type().element_type();
          k.CopyBuffer(first_output + i, input_buffers[i], input_count * ElementByteWidth(type));
        }
        if (input_count == 0) return absl::OkStatus();
        return k.Elements(
            k.Int(0), k.Int(update_count), update_dims,
            [&](const std::vector<llvm::Value*>& coords, llvm::Value* update_linear) -> Status {
              std::vector<llvm::Value*> batch;
              for (size_t d : update_scatter_dims) batch.push_back(coords[d]);
              const std::vector<llvm::Value*> start =
                  indices.Load(k, batch, dims_to_operand.size());
              // full_start_index + full_batching_index + full_window_index, wrapping: a sum past
              // INT64_MAX wraps negative and is out of bounds, as the reference's checked sum.
              std::vector<llvm::Value*> index(input_dims.size(), k.Int(0));
              for (size_t j = 0; j < dims_to_operand.size(); ++j) {
                const size_t d = static_cast<size_t>(dims_to_operand[j]);
                index[d] = b.CreateAdd(index[d], start[j]);
              }
              for (size_t i = 0; i < input_batching.size(); ++i) {
                const size_t d = static_cast<size_t>(input_batching[i]);
                index[d] = b.CreateAdd(
                    index[d], batch[BatchPosition(indices_batching[i], indices.index_vector_dim)]);
              }
              for (size_t i = 0; i < update_window_dims.size(); ++i) {
                const size_t d = window_input_dims[i];
                index[d] =
                    b.CreateAdd(index[d], coords[static_cast<size_t>(update_window_dims[i])]);
              }
              llvm::Value* inside = b.getTrue();
              llvm::Value* at = k.Int(0);
              for (size_t d = 0; d < input_dims.size(); ++d) {
                inside = b.CreateAnd(inside, b.CreateICmpULT(index[d], k.Int(input_dims[d])));
                at = b.CreateAdd(at, b.CreateMul(index[d], k.Int(input_strides[d])));
              }
              return k.If(inside, [&]() -> Status {
                std::vector<llvm::Value*> arguments(2 * n);
                for (size_t i = 0; i < n; ++i) {
                  const ElementType type =
                      op.operand(static_cast<int64_t>(i))->type().element_type();
                  arguments[i] = k.LoadElement(first_output + i, type, at);
                  const ElementType update_type =
                      op.operand(static_cast<int64_t>(n + 1 + i))->type().element_type();
                  arguments[n + i] = k.LoadElement(update_buffers[i], update_type, update_linear);
                }
                ACCY_ASSIGN_OR_RETURN(
                    std::vector<llvm::Value*> results,
                    LowerScalarRegion(k.lowering(), *op.region(0), arguments,
                                      "shape emitter: scatter update_computation"));
                if (results.size() != n) {
                  return absl::InvalidArgumentError(
                      StrCat("jit: shape emitter: scatter update_computation returns ",
                             results.size(), " values, expected ", n));
                }
                for (size_t i = 0; i < n; ++i) {
                  const ElementType type =
                      op.operand(static_cast<int64_t>(i))->type().element_type();
                  k.StoreElement(first_output + i, type, at, results[i]);
                }
                return absl::OkStatus();
              });
            });
      }));
  k.Finish();
  return signature;
}

}  // namespace accy::jit
