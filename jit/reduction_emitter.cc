// The reduction kernel emitter (emitters.h EmitReductionKernel): translates the ReductionLayout
// of a work item (reduction_layout.h) into one kernel (kernel_abi.h).
//
// Loop nest of one unit (ROW: one output; OUT: a tile of up to 256 consecutive outputs):
//   lanes = identity (named combiner) or the init value (general body)
//   for chunk in the unit's chunks (all, or one segment's):
//     for row in the chunk's rows:         decompose the row index -> per-access offsets
//       for step in the row's steps:       ROW: `lanes` consecutive elements of the row
//         for lane in lanes:               independent lanes: the loop vectorizer widens this
//           lane = combine(lane, producers(loads))
//     float sums: push the lanes into the pairwise cascade, lanes = identity
//   collapse the cascade; ROW: combine the lanes by a fixed pairwise tree
//   outputs = init (op) lanes, applied once; or, when segmented, lanes -> scratch partials and a
//   finish block combines the segments' partials by a fixed pairwise tree, then applies init.
// Every order is fixed at compile time, so the bits do not depend on how blocks meet threads.
// Accumulators: f16/bf16 named reducers in f32 (one rounding at the end); everything else in its
// own type. A general body is lowered op by op (ElementwiseLowering) in the element type, one
// input element at a time in row-major order per output, exactly as the reference evaluates it.
#include <string>
#include <vector>

#include "jit/emitters.h"
#include "jit/kernel_abi.h"
#include "jit/reduction_kernel_emitter.h"
#include "jit/region_lowering.h"
#include "llvm/IR/Intrinsics.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {

Status ReductionKernelEmitter::For(llvm::Value* begin, llvm::Value* end, const Body& body) {
  llvm::BasicBlock* before = b_.GetInsertBlock();
  llvm::BasicBlock* loop = NewBlock("loop");
  llvm::BasicBlock* done = NewBlock("loop_done");
  b_.CreateCondBr(b_.CreateICmpSLT(begin, end), loop, done);
  b_.SetInsertPoint(loop);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
  i->addIncoming(begin, before);
  ACCY_RETURN_IF_ERROR(body(i));
  llvm::Value* next = b_.CreateAdd(i, I64(1), "i.next", true, true);
  i->addIncoming(next, b_.GetInsertBlock());
  b_.CreateCondBr(b_.CreateICmpSLT(next, end), loop, done);
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

Status ReductionKernelEmitter::If(llvm::Value* condition, const std::function<Status()>& body) {
  llvm::BasicBlock* then = NewBlock("then");
  llvm::BasicBlock* done = NewBlock("endif");
  b_.CreateCondBr(condition, then, done);
  b_.SetInsertPoint(then);
  ACCY_RETURN_IF_ERROR(body());
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

llvm::Value* ReductionKernelEmitter::LoadLane(llvm::Value* array, int64_t k, llvm::Value* index) {
  const ElementType type = LaneType(k);
  llvm::Type* memory = MemoryType(context_, type);
  llvm::Value* address = b_.CreateInBoundsGEP(memory, array, index);
  llvm::LoadInst* load = b_.CreateLoad(memory, address);
  const bool lane = array != scratch_;
  prologue_->Tag(load, lane ? kLaneScope : KernelPrologue::kOutputs);
  return lowering_.FromMemory(load, type);
}

void ReductionKernelEmitter::StoreLane(llvm::Value* array, int64_t k, llvm::Value* index,
                                       llvm::Value* value) {
  const ElementType type = LaneType(k);
  llvm::Value* address = b_.CreateInBoundsGEP(MemoryType(context_, type), array, index);
  llvm::StoreInst* store = b_.CreateStore(lowering_.ToMemory(value, type), address);
  const bool lane = array != scratch_;
  prologue_->Tag(store, lane ? kLaneScope : KernelPrologue::kOutputs);
}

void ReductionKernelEmitter::StoreOutput(int64_t k, llvm::Value* index, llvm::Value* value) {
  const ElementType type = layout_.reduce->result(k)->type().element_type();
  llvm::Value* address =
      b_.CreateInBoundsGEP(MemoryType(context_, type), outputs_[static_cast<size_t>(k)], index);
  llvm::StoreInst* store =
      b_.CreateAlignedStore(lowering_.ToMemory(value, type), address, llvm::Align(1));
  prologue_->Tag(store, KernelPrologue::kOutputs);
}

std::vector<llvm::Value*> ReductionKernelEmitter::Offsets(
    llvm::Value* index, const std::vector<ReductionLoopDim>& dims, std::vector<llvm::Value*> base) {
  llvm::Value* rest = index;
  for (size_t d = dims.size(); d-- > 0;) {  // innermost first
    llvm::Value* extent = I64(dims[d].extent);
    llvm::Value* coord = d == 0 ? rest : b_.CreateURem(rest, extent);
    if (d > 0) rest = b_.CreateUDiv(rest, extent);
    for (size_t a = 0; a < base.size(); ++a) {
      if (constants_[a] != nullptr || dims[d].strides[a] == 0) continue;
      base[a] = b_.CreateAdd(base[a], b_.CreateMul(coord, I64(dims[d].strides[a])));
    }
  }
  return base;
}

ReductionKernelEmitter::Unit ReductionKernelEmitter::UnitAt(llvm::Value* unit) {
  Unit u;
  u.index = unit;
  std::vector<llvm::Value*> zero(layout_.accesses.size(), I64(0));
  if (layout_.row_mode) {
    u.offsets = Offsets(unit, layout_.unit_dims, zero);
    u.lane_count = I64(layout_.lanes);
    u.out_base = unit;
    return u;
  }
  const int64_t extent = layout_.lane_dim.extent;
  llvm::Value* outer = b_.CreateUDiv(unit, I64(layout_.tiles_per_row));
  llvm::Value* first = b_.CreateMul(b_.CreateURem(unit, I64(layout_.tiles_per_row)),
                                    I64(layout_.lanes));
  u.lane_count = Min(I64(layout_.lanes), b_.CreateSub(I64(extent), first));
  u.out_base = b_.CreateAdd(b_.CreateMul(outer, I64(extent)), first);
  u.offsets = Offsets(outer, layout_.unit_dims, zero);
  for (size_t a = 0; a < u.offsets.size(); ++a) {
    u.offsets[a] = b_.CreateAdd(u.offsets[a], b_.CreateMul(first, I64(layout_.lane_dim.strides[a])));
  }
  return u;
}

StatusOr<std::vector<llvm::Value*>> ReductionKernelEmitter::EmitInputs(
    const std::vector<llvm::Value*>& base, llvm::Value* lane) {
  std::map<const Value*, llvm::Value*> values;
  std::vector<llvm::Value*> loaded(layout_.accesses.size(), nullptr);
  auto operand = [&](const Operation* op, int64_t i) -> llvm::Value* {
    auto use = layout_.access_of_use.find({op, i});
    if (use == layout_.access_of_use.end()) return values.at(op->operand(i));
    const size_t a = static_cast<size_t>(use->second);
    if (constants_[a] != nullptr) return constants_[a];
    if (loaded[a] == nullptr) {
      const ReductionAccess& access = layout_.accesses[a];
      llvm::Type* memory = MemoryType(context_, access.type);
      llvm::Value* index = b_.CreateAdd(base[a], b_.CreateMul(lane, I64(layout_.lane_dim.strides[a])));
      llvm::Value* address = b_.CreateInBoundsGEP(
          memory, inputs_[static_cast<size_t>(access.buffer)], index);
      llvm::LoadInst* value = b_.CreateAlignedLoad(memory, address, llvm::Align(1));
      prologue_->Tag(value, KernelPrologue::kInputs);
      loaded[a] = lowering_.FromMemory(value, access.type);
    }
    return loaded[a];
  };
  for (const Operation* op : item_.ops) {
    if (op == layout_.reduce) continue;
    std::vector<llvm::Value*> operands;
    for (int64_t i = 0; i < op->num_operands(); ++i) operands.push_back(operand(op, i));
    ACCY_ASSIGN_OR_RETURN(llvm::Value * result, lowering_.Emit(*op, operands));
    values[op->result(0)] = result;
  }
  std::vector<llvm::Value*> inputs;
  for (int64_t k = 0; k < layout_.num_results; ++k) inputs.push_back(operand(layout_.reduce, k));
  return inputs;
}

StatusOr<std::vector<llvm::Value*>> ReductionKernelEmitter::EmitBody(
    const std::vector<llvm::Value*>& arguments) {
  const Block& block = *layout_.reduce->region(0)->entry_block();
  std::map<const Value*, llvm::Value*> values;
  for (int64_t i = 0; i < block.num_arguments(); ++i) {
    values[block.argument(i)] = arguments[static_cast<size_t>(i)];
  }
  for (const auto& op : block.operations()) {
    std::vector<llvm::Value*> operands;
    for (const Value* v : op->operands()) {
      auto it = values.find(v);
      if (it == values.end()) {
        return absl::UnimplementedError(StrCat("jit: reduction emitter: reduce body op ",
                                               op->name(), " reads a value from outside the body ",
                                               kCapturedValueHint));
      }
      operands.push_back(it->second);
    }
    if (op->kind() == OpKind::kReturn) return operands;
    if (op->kind() == OpKind::kConstant) {
      values[op->result(0)] = lowering_.ConstantElement(op->result(0)->type().element_type(),
                                                        op->GetDense("value")->bytes.data());
      continue;
    }
    ACCY_ASSIGN_OR_RETURN(llvm::Value * result, lowering_.Emit(*op, operands));
    values[op->result(0)] = result;
  }
  return absl::InvalidArgumentError("jit: reduction emitter: reduce body has no return");
}

Status ReductionKernelEmitter::EmitStep(const std::vector<llvm::Value*>& base,
                                        llvm::Value* lane_count) {
  return For(I64(0), lane_count, [&](llvm::Value* lane) -> Status {
    ACCY_ASSIGN_OR_RETURN(std::vector<llvm::Value*> inputs, EmitInputs(base, lane));
    if (named()) {
      llvm::Value* acc = LoadLane(lanes_[0], 0, lane);
      StoreLane(lanes_[0], 0, lane, Combine(acc, ToAccumulator(inputs[0])));
      return absl::OkStatus();
    }
    std::vector<llvm::Value*> arguments;
    for (int64_t k = 0; k < layout_.num_results; ++k) {
      arguments.push_back(LoadLane(lanes_[static_cast<size_t>(k)], k, lane));
    }
    arguments.insert(arguments.end(), inputs.begin(), inputs.end());
    ACCY_ASSIGN_OR_RETURN(std::vector<llvm::Value*> results, EmitBody(arguments));
    if (static_cast<int64_t>(results.size()) != layout_.num_results) {
      return absl::InvalidArgumentError("jit: reduction emitter: reduce body returns " +
                                        std::to_string(results.size()) + " values");
    }
    for (int64_t k = 0; k < layout_.num_results; ++k) {
      StoreLane(lanes_[static_cast<size_t>(k)], k, lane, results[static_cast<size_t>(k)]);
    }
    return absl::OkStatus();
  });
}

Status ReductionKernelEmitter::EmitRow(const Unit& unit, llvm::Value* row,
                                       llvm::Value* step_begin, llvm::Value* step_end) {
  std::vector<llvm::Value*> offsets = Offsets(row, layout_.row_dims, unit.offsets);
  if (!layout_.row_mode) return EmitStep(offsets, unit.lane_count);
  const int64_t lanes = layout_.lanes;
  const int64_t full = layout_.lane_dim.extent / lanes;
  auto step_base = [&](llvm::Value* step) {
    std::vector<llvm::Value*> base = offsets;
    for (size_t a = 0; a < base.size(); ++a) {
      base[a] = b_.CreateAdd(base[a], b_.CreateMul(step, I64(lanes * layout_.lane_dim.strides[a])));
    }
    return base;
  };
  // Full steps have a constant lane count, which the vectorizer turns into straight vector code.
  ACCY_RETURN_IF_ERROR(For(step_begin, Min(step_end, I64(full)), [&](llvm::Value* step) {
    return EmitStep(step_base(step), I64(lanes));
  }));
  const int64_t tail = layout_.lane_dim.extent % lanes;
  if (tail == 0) return absl::OkStatus();
  return If(b_.CreateICmpSGT(step_end, I64(full)),
            [&] { return EmitStep(step_base(I64(full)), I64(tail)); });
}

Status ReductionKernelEmitter::EmitUnit(const Unit& unit, llvm::Value* chunk_begin,
                                        llvm::Value* chunk_end) {
  ACCY_RETURN_IF_ERROR(For(I64(0), I64(layout_.lanes), [&](llvm::Value* lane) {
    for (int64_t k = 0; k < layout_.num_results; ++k) {
      StoreLane(lanes_[static_cast<size_t>(k)], k, lane,
                named() ? Identity() : inits_[static_cast<size_t>(k)]);
    }
    return absl::OkStatus();
  }));
  if (layout_.cascade) b_.CreateStore(I64(0), chunk_count_);
  ACCY_RETURN_IF_ERROR(For(chunk_begin, chunk_end, [&](llvm::Value* chunk) -> Status {
    if (layout_.chunk_splits_rows) {
      llvm::Value* row = b_.CreateUDiv(chunk, I64(layout_.chunks_per_row));
      llvm::Value* first = b_.CreateMul(b_.CreateURem(chunk, I64(layout_.chunks_per_row)),
                                        I64(kReductionChunkSteps));
      llvm::Value* last = Min(b_.CreateAdd(first, I64(kReductionChunkSteps)),
                              I64(layout_.steps_per_row));
      ACCY_RETURN_IF_ERROR(EmitRow(unit, row, first, last));
    } else {
      llvm::Value* first = b_.CreateMul(chunk, I64(layout_.rows_per_chunk));
      llvm::Value* last = Min(b_.CreateAdd(first, I64(layout_.rows_per_chunk)), I64(layout_.rows));
      ACCY_RETURN_IF_ERROR(For(first, last, [&](llvm::Value* row) {
        return EmitRow(unit, row, I64(0), I64(layout_.steps_per_row));
      }));
    }
    return layout_.cascade ? EmitPush() : absl::OkStatus();
  }));
  if (layout_.cascade) ACCY_RETURN_IF_ERROR(EmitCollapse());
  return layout_.row_mode ? EmitLaneTree() : absl::OkStatus();
}

Status ReductionKernelEmitter::EmitUnitOutputs(const Unit& unit) {
  if (layout_.row_mode) {
    StoreOutput(0, unit.out_base, Finalize(LoadLane(lanes_[0], 0, I64(0))));
    return absl::OkStatus();
  }
  return For(I64(0), unit.lane_count, [&](llvm::Value* lane) {
    llvm::Value* index = b_.CreateAdd(unit.out_base, lane);
    for (int64_t k = 0; k < layout_.num_results; ++k) {
      llvm::Value* acc = LoadLane(lanes_[static_cast<size_t>(k)], k, lane);
      StoreOutput(k, index, named() ? Finalize(acc) : acc);
    }
    return absl::OkStatus();
  });
}

Status ReductionKernelEmitter::Emit(std::string_view symbol) {
  llvm::Type* i64 = b_.getInt64Ty();
  // Buffers: inputs, outputs, scratch (kernel_abi.h); scopes: inputs, outputs, stack lanes.
  const KernelSignature& sig = layout_.signature;
  const size_t buffers = sig.inputs.size() + sig.outputs.size() + (sig.scratch_bytes > 0 ? 1 : 0);
  prologue_.emplace(module_, b_, symbol, buffers, "accy.reduction",
                    std::initializer_list<std::string_view>{"lanes"});
  function_ = prologue_->function();
  size_t slot = 0;
  for (size_t i = 0; i < sig.inputs.size(); ++i) inputs_.push_back(prologue_->buffer(slot++));
  for (size_t i = 0; i < sig.outputs.size(); ++i) outputs_.push_back(prologue_->buffer(slot++));
  if (sig.scratch_bytes > 0) scratch_ = prologue_->buffer(slot++);

  for (int64_t k = 0; k < layout_.num_results; ++k) {
    llvm::AllocaInst* lanes =
        b_.CreateAlloca(MemoryType(context_, LaneType(k)), I64(layout_.lanes), "lanes");
    lanes->setAlignment(llvm::Align(64));
    lanes_.push_back(lanes);
  }
  if (layout_.cascade) {
    auto* cascade = b_.CreateAlloca(MemoryType(context_, LaneType(0)),
                                    I64(layout_.cascade_levels * layout_.lanes), "cascade");
    cascade->setAlignment(llvm::Align(64));
    cascade_ = cascade;
    chunk_count_ = b_.CreateAlloca(i64, nullptr, "chunk_count");
  }
  for (const ReductionAccess& access : layout_.accesses) {
    constants_.push_back(access.constant != nullptr
                             ? lowering_.ConstantElement(access.type, access.constant)
                             : nullptr);
  }
  for (const ReductionAccess& init : layout_.inits) {
    if (init.constant != nullptr) {
      inits_.push_back(lowering_.ConstantElement(init.type, init.constant));
      continue;
    }
    llvm::Type* memory = MemoryType(context_, init.type);
    llvm::LoadInst* value =
        b_.CreateAlignedLoad(memory, inputs_[static_cast<size_t>(init.buffer)], llvm::Align(1));
    prologue_->Tag(value, KernelPrologue::kInputs);
    inits_.push_back(lowering_.FromMemory(value, init.type));
  }
  if (named()) init_accumulator_ = ToAccumulator(inits_[0]);

  llvm::Value* block_begin = prologue_->block_begin();
  llvm::Value* block_end = prologue_->block_end();
  if (layout_.segments == 1) {
    const int64_t per_block = layout_.units_per_block;
    llvm::Value* first = b_.CreateMul(block_begin, I64(per_block));
    llvm::Value* last = Min(b_.CreateMul(block_end, I64(per_block)), I64(layout_.units));
    ACCY_RETURN_IF_ERROR(For(first, last, [&](llvm::Value* u) {
      Unit unit = UnitAt(u);
      ACCY_RETURN_IF_ERROR(EmitUnit(unit, I64(0), I64(layout_.chunks)));
      return EmitUnitOutputs(unit);
    }));
  } else {
    // Blocks [0, units * segments): one (unit, segment) each; block units * segments: finish.
    const int64_t main_blocks = layout_.units * layout_.segments;
    ACCY_RETURN_IF_ERROR(For(block_begin, Min(block_end, I64(main_blocks)), [&](llvm::Value* blk) {
      llvm::Value* segment = b_.CreateURem(blk, I64(layout_.segments));
      Unit unit = UnitAt(b_.CreateUDiv(blk, I64(layout_.segments)));
      llvm::Value* first = b_.CreateMul(segment, I64(layout_.chunks_per_segment));
      llvm::Value* last = Min(b_.CreateAdd(first, I64(layout_.chunks_per_segment)), I64(layout_.chunks));
      ACCY_RETURN_IF_ERROR(EmitUnit(unit, first, last));
      return EmitUnitPartials(unit, segment);
    }));
    ACCY_RETURN_IF_ERROR(If(b_.CreateICmpSGT(block_end, I64(main_blocks)), [&] { return EmitFinish(); }));
  }
  b_.CreateRetVoid();
  return absl::OkStatus();
}

StatusOr<KernelSignature> EmitReductionKernel(const WorkItem& item, const FusionPlan& fusion,
                                              llvm::Module& module, std::string_view symbol) {
  ACCY_ASSIGN_OR_RETURN(ReductionLayout layout, PlanReductionLayout(item, fusion));
  ReductionKernelEmitter emitter(layout, item, module);
  // On an error the half-built function stays in the module, which the caller discards.
  ACCY_RETURN_IF_ERROR(emitter.Emit(symbol));
  return layout.signature;
}

}  // namespace accy::jit
