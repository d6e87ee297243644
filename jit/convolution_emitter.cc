// The convolution kernel emitter (emitters.h EmitConvolutionKernel): every valid convolution
// (spec "convolution": any dimension numbers, 1+ spatial dims, strides, padding including
// negative, lhs and rhs dilation, window reversal, feature and batch groups) as a direct loop
// nest over the operands' own layouts, no copies.
//
// A unit is one output pixel: an output batch index and one position per spatial dim. For each
// unit the kernel zeroes one accumulator per output feature (a stack array), then walks the
// groups, the kernel positions (skipping those that land in padding or in a hole of the lhs
// dilation) and the kernel input features, and adds lhs * rhs to the group's accumulators in an
// innermost loop over output features (contiguous in HWIO kernels, so it vectorizes); finally
// it stores the accumulators. Blocks hold whole units (about kConvolutionBlockMacs
// multiply-adds), independent of the thread count. Numerics: floats accumulate in f32 (f64 when
// an operand or the result is f64) with separate multiply and add, one rounding to the result
// type at the end; integers are converted to the result type and wrap modulo 2^bits, as the
// reference evaluator (exactly equal for integers; floats within the accumulation error).
//
// A convolution_epilogue item (fusion_plan.h rule 4: batch norm's affine, relu, a residual add)
// runs its elementwise ops on each rounded output element before the store, in registers;
// their other operands are read through their elided broadcasts, folded when they are
// one-element constants, or read from their buffers at the output element's index.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "jit/emitters.h"
#include "jit/index_math.h"
#include "jit/operand_access.h"
#include "jit/shape_kernel_builder.h"
#include "src/fusion/fusion_plan.h"
#include "src/ir/convolution_attributes.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

// Multiply-adds per block (a block holds whole units, at least one).
constexpr int64_t kConvolutionBlockMacs = int64_t{1} << 18;

std::vector<int64_t> StridesOf(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

// Row-major decomposition of `linear` over `sizes`, outermost first. A zero size (its loop runs
// no iteration, so the code is dead) divides by 1 rather than emit a division by zero.
std::vector<llvm::Value*> Decompose(llvm::IRBuilder<>& b, llvm::Value* linear,
                                    const std::vector<int64_t>& sizes) {
  std::vector<llvm::Value*> index(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    if (d == 0) {
      index[d] = linear;
    } else {
      llvm::Value* size = b.getInt64(std::max<int64_t>(1, sizes[d]));
      index[d] = b.CreateURem(linear, size);
      linear = b.CreateUDiv(linear, size);
    }
  }
  return index;
}

}  // namespace

StatusOr<KernelSignature> EmitConvolutionKernel(const WorkItem& item, const FusionPlan& fusion,
                                                llvm::Module& module, std::string_view symbol) {
  const Operation* convolution =
      item.ops.empty() || item.ops.front()->kind() != OpKind::kConvolution ? nullptr
                                                                            : item.ops.front();
  if (item.kind != WorkKind::kConvolution || convolution == nullptr ||
      item.output_value == nullptr) {
    return absl::UnimplementedError(StrCat("jit: convolution emitter: work item ", item.id,
                                           " has kind ", WorkKindName(item.kind),
                                           ", expected a convolution and its epilogue"));
  }
  const Operation& op = *convolution;
  const Value* lhs = op.operand(0);
  const Value* rhs = op.operand(1);
  const Value* conv_out = op.result(0);
  const Value* out = item.output_value;
  const ElementType lhs_type = lhs->type().element_type();
  const ConvolutionSpec spec = ir_internal::ConvolutionSpecOf(op);
  const ConvDimensionNumbers& dn = spec.dimension_numbers;
  const size_t spatial_rank = dn.input_spatial_dimensions.size();
  const std::vector<int64_t>& lhs_dims = lhs->type().dims();
  const std::vector<int64_t>& rhs_dims = rhs->type().dims();
  const std::vector<int64_t>& out_dims = conv_out->type().dims();
  const std::vector<int64_t> lhs_strides = StridesOf(lhs_dims);
  const std::vector<int64_t> rhs_strides = StridesOf(rhs_dims);
  const std::vector<int64_t> out_strides = StridesOf(out_dims);
  const ElementType conv_type = conv_out->type().element_type();

  // The epilogue: every other op of the item, elementwise over the convolution's result dims.
  std::vector<const Value*> inputs = {lhs, rhs};
  std::vector<const Operation*> epilogue(item.ops.begin() + 1, item.ops.end());
  std::vector<OperandAccess> accesses;
  std::map<std::pair<const Operation*, int64_t>, size_t> access_of_use;
  std::map<const Value*, bool> in_registers = {{conv_out, true}};
  for (const Operation* e : epilogue) {
    if (!IsFusableElementwiseOp(*e) || e->result(0)->type().dims() != out_dims) {
      return absl::UnimplementedError(StrCat(
          "jit: convolution emitter: epilogue op ", e->name(), " %", e->result(0)->id(),
          " is not an elementwise op over the convolution's result dims ", ShapeText(out_dims)));
    }
    for (int64_t i = 0; i < e->num_operands(); ++i) {
      const Value* operand = e->operand(i);
      if (in_registers.count(operand) != 0) continue;
      ACCY_ASSIGN_OR_RETURN(OperandAccess access,
                            ResolveOperandAccess("jit: convolution emitter: epilogue op ", *e,
                                                 *operand, fusion, out_dims, inputs));
      access_of_use[{e, i}] = accesses.size();
      accesses.push_back(std::move(access));
    }
    in_registers[e->result(0)] = true;
  }
  if (out != (epilogue.empty() ? conv_out : epilogue.back()->result(0))) {
    return absl::UnimplementedError(StrCat("jit: convolution emitter: work item ", item.id,
                                           " does not end at its last op"));
  }
  const ElementType out_type = out->type().element_type();
  const size_t out_buffer = inputs.size();

  const int64_t output_features = out_dims[dn.output_feature_dimension];
  const int64_t kernel_features = rhs_dims[dn.kernel_input_feature_dimension];
  const int64_t groups = spec.feature_group_count * spec.batch_group_count;  // one of them is 1
  const int64_t outputs_per_group = output_features / groups;
  const int64_t batch_step =
      spec.batch_group_count > 1 ? lhs_dims[dn.input_batch_dimension] / spec.batch_group_count : 0;
  const int64_t feature_step = spec.feature_group_count > 1 ? kernel_features : 0;
  // Units: output batch, then output spatial positions in spatial-dim order.
  std::vector<int64_t> unit_sizes = {out_dims[dn.output_batch_dimension]};
  std::vector<int64_t> kernel_sizes;
  int64_t units = out_dims[dn.output_batch_dimension];
  int64_t kernel_positions = 1;
  for (size_t s = 0; s < spatial_rank; ++s) {
    unit_sizes.push_back(out_dims[dn.output_spatial_dimensions[s]]);
    units *= unit_sizes.back();
    kernel_sizes.push_back(rhs_dims[dn.kernel_spatial_dimensions[s]]);
    kernel_positions *= kernel_sizes.back();
  }
  const int64_t macs_per_unit =
      std::max<int64_t>(1, output_features * kernel_positions * kernel_features);
  const int64_t units_per_block = std::max<int64_t>(1, kConvolutionBlockMacs / macs_per_unit);

  KernelSignature signature;
  signature.inputs = inputs;
  signature.outputs = {out};
  signature.block_size = units_per_block;
  signature.block_count = output_features == 0 ? 0 : BlockCount(units, units_per_block);

  ShapeKernelBuilder kb(module, symbol, inputs.size(), 1);
  llvm::IRBuilder<>& b = kb.ir();
  ElementwiseLowering& lowering = kb.lowering();
  const bool is_float = IsFloat(conv_type);
  const ElementType accumulator =
      !is_float
          ? conv_type
          : (conv_type == ElementType::kF64 || lhs_type == ElementType::kF64 ? ElementType::kF64
                                                                              : ElementType::kF32);
  // Epilogue constants, folded once.
  std::vector<llvm::Value*> constants(accesses.size(), nullptr);
  for (size_t a = 0; a < accesses.size(); ++a) {
    if (accesses[a].buffer < 0) {
      constants[a] = lowering.ConstantElement(accesses[a].type, accesses[a].constant);
    }
  }
  llvm::Type* acc_type = StorageType(module.getContext(), accumulator);
  llvm::Value* zero =
      is_float ? llvm::ConstantFP::get(acc_type, 0.0) : llvm::ConstantInt::get(acc_type, 0);
  llvm::AllocaInst* sums =
      b.CreateAlloca(acc_type, kb.Int(std::max<int64_t>(1, output_features)), "sums");
  sums->setAlignment(llvm::Align(64));
  auto I64 = [&](int64_t v) { return kb.Int(v); };
  auto to_accumulator = [&](llvm::Value* element) {
    return lowering.ConvertElement(element, lhs_type, accumulator);
  };

  const auto [first, last] = kb.BlockElements(units_per_block, units);
  ACCY_RETURN_IF_ERROR(kb.Loop(first, last, [&](llvm::Value* unit) -> Status {
    const std::vector<llvm::Value*> position = Decompose(b, unit, unit_sizes);
    llvm::Value* batch = position[0];
    ACCY_RETURN_IF_ERROR(kb.Loop(I64(0), I64(output_features), [&](llvm::Value* o) -> Status {
      b.CreateStore(zero, b.CreateInBoundsGEP(acc_type, sums, o));
      return absl::OkStatus();
    }));
    ACCY_RETURN_IF_ERROR(kb.Loop(I64(0), I64(groups), [&](llvm::Value* group) -> Status {
      llvm::Value* lhs_batch = b.CreateAdd(batch, b.CreateMul(group, I64(batch_step)));
      llvm::Value* group_base = b.CreateAdd(
          b.CreateMul(lhs_batch, I64(lhs_strides[dn.input_batch_dimension])),
          b.CreateMul(group, I64(feature_step * lhs_strides[dn.input_feature_dimension])));
      llvm::Value* first_output = b.CreateMul(group, I64(outputs_per_group));
      return kb.Loop(I64(0), I64(kernel_positions), [&](llvm::Value* k) -> Status {
        const std::vector<llvm::Value*> kernel_index = Decompose(b, k, kernel_sizes);
        llvm::Value* inside = b.getTrue();
        llvm::Value* lhs_offset = group_base;
        llvm::Value* rhs_offset =
            b.CreateMul(first_output, I64(rhs_strides[dn.kernel_output_feature_dimension]));
        for (size_t s = 0; s < spatial_rank; ++s) {
          // Position in the padded, dilated input; then the lhs element it hits, if any.
          llvm::Value* p =
              b.CreateSub(b.CreateAdd(b.CreateMul(position[s + 1], I64(spec.window_strides[s])),
                                      b.CreateMul(kernel_index[s], I64(spec.rhs_dilation[s]))),
                          I64(spec.padding[s].first));
          const int64_t dilation = spec.lhs_dilation[s];
          llvm::Value* i = dilation == 1 ? p : b.CreateSDiv(p, I64(dilation));
          inside = b.CreateAnd(inside, b.CreateICmpSGE(p, I64(0)));
          if (dilation != 1) {
            inside = b.CreateAnd(inside, b.CreateICmpEQ(b.CreateSRem(p, I64(dilation)), I64(0)));
          }
          inside = b.CreateAnd(inside,
                               b.CreateICmpSLT(i, I64(lhs_dims[dn.input_spatial_dimensions[s]])));
          lhs_offset = b.CreateAdd(
              lhs_offset, b.CreateMul(i, I64(lhs_strides[dn.input_spatial_dimensions[s]])));
          llvm::Value* kernel_position =
              spec.window_reversal[s] ? b.CreateSub(I64(kernel_sizes[s] - 1), kernel_index[s])
                                      : kernel_index[s];
          rhs_offset = b.CreateAdd(
              rhs_offset,
              b.CreateMul(kernel_position, I64(rhs_strides[dn.kernel_spatial_dimensions[s]])));
        }
        return kb.If(inside, [&]() -> Status {
          return kb.Loop(I64(0), I64(kernel_features), [&](llvm::Value* c) -> Status {
            llvm::Value* x = to_accumulator(kb.LoadElement(
                0, lhs_type,
                b.CreateAdd(lhs_offset,
                            b.CreateMul(c, I64(lhs_strides[dn.input_feature_dimension])))));
            llvm::Value* rhs_row = b.CreateAdd(
                rhs_offset, b.CreateMul(c, I64(rhs_strides[dn.kernel_input_feature_dimension])));
            return kb.Loop(I64(0), I64(outputs_per_group), [&](llvm::Value* j) -> Status {
              llvm::Value* w = to_accumulator(kb.LoadElement(
                  1, lhs_type,
                  b.CreateAdd(
                      rhs_row,
                      b.CreateMul(j, I64(rhs_strides[dn.kernel_output_feature_dimension])))));
              llvm::Value* slot = b.CreateInBoundsGEP(acc_type, sums, b.CreateAdd(first_output, j));
              llvm::Value* sum = b.CreateLoad(acc_type, slot);
              llvm::Value* next = is_float ? b.CreateFAdd(sum, b.CreateFMul(x, w))
                                           : b.CreateAdd(sum, b.CreateMul(x, w));
              b.CreateStore(next, slot);
              return absl::OkStatus();
            });
          });
        });
      });
    }));
    // Offsets of this unit's first output element: in the result, then in each epilogue
    // operand read from memory (its strides per result dim).
    auto unit_offset = [&](const std::vector<int64_t>& strides) {
      llvm::Value* offset = b.CreateMul(batch, I64(strides[dn.output_batch_dimension]));
      for (size_t s = 0; s < spatial_rank; ++s) {
        offset = b.CreateAdd(
            offset, b.CreateMul(position[s + 1], I64(strides[dn.output_spatial_dimensions[s]])));
      }
      return offset;
    };
    llvm::Value* out_base = unit_offset(out_strides);
    std::vector<llvm::Value*> access_base(accesses.size(), nullptr);
    for (size_t a = 0; a < accesses.size(); ++a) {
      if (constants[a] == nullptr) access_base[a] = unit_offset(accesses[a].strides);
    }
    return kb.Loop(I64(0), I64(output_features), [&](llvm::Value* o) -> Status {
      llvm::Value* sum = b.CreateLoad(acc_type, b.CreateInBoundsGEP(acc_type, sums, o));
      std::map<const Value*, llvm::Value*> values;
      values[conv_out] = lowering.ConvertElement(sum, accumulator, conv_type);
      ACCY_RETURN_IF_ERROR(lowering.EmitChain(
          epilogue,
          [&](const Operation& e, int64_t i) -> llvm::Value* {
            const size_t a = access_of_use.at({&e, i});
            if (constants[a] != nullptr) return constants[a];
            const int64_t feature_stride = accesses[a].strides[dn.output_feature_dimension];
            return kb.LoadElement(static_cast<size_t>(accesses[a].buffer), accesses[a].type,
                                  b.CreateAdd(access_base[a], b.CreateMul(o, I64(feature_stride))));
          },
          values));
      kb.StoreElement(
          out_buffer, out_type,
          b.CreateAdd(out_base, b.CreateMul(o, I64(out_strides[dn.output_feature_dimension]))),
          values.at(out));
      return absl::OkStatus();
    });
  }));
  kb.Finish();
  return signature;
}

}  // namespace accy::jit
