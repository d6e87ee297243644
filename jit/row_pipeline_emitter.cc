// Emitter of row_pipeline work items (emitters.h; cluster rule 6 of src/fusion/fusion_plan.h).
//
// The cluster is analysed by PlanRowPipeline (row_pipeline_plan.h, LLVM-free): every value lives
// once per element of a row ("full") or once per row ("row"); a row reduce turns a full value
// into a row value, and an elided row broadcast lets full ops read a row value. A value's depth
// is the longest chain of reduces behind it; a row needs depth(root) reduce passes plus one
// output pass:
//   pass k (k < depth(root)): recompute the full values the reduces of input depth k read, one
//     chunk of kChunk columns at a time, into an L1 scratch array per reduce, then fold the
//     chunk into a 64-byte vector accumulator with explicit vector ops (max/min are IEEE and
//     propagate NaN; float sums accumulate f32/f16/bf16 terms in f64 lanes -- the reference
//     sums in double too -- and round once, except that sums of non-negative terms that
//     ChunkSummedInF32 accepts add each chunk in f32 lanes first); a reduce of a kernel input's
//     contiguous columns whose lanes have the input's type (softmax's max of x) folds whole
//     chunks straight from the input instead; after the pass, the row ops of depth k + 1 run
//     once;
//   the output pass computes the root over the row, a plain loop the O3 vectorizer widens
//     (ops through ElementwiseLowering: exp is the inline polynomial of vector_math.h).
// Full values are recomputed in every pass that needs them (a row is re-read from L1/L2: a
// 1024-float row is 4 KiB), except one: the last reduce pass stores the latest value the output
// pass needs into the output row (softmax's exp(x - max)), so it is computed once. Outputs of
// kStreamingStoreBytes or more keep that value in a stack row instead and write the output
// once, through a stage and non-temporal stores (streaming_store.h). Nothing outside the
// kernel's buffers and its stack scratch is written.
// The last reduce pass's map loop also prefetches the next row of every per-row input, one
// cache line per group of columns (kCacheLineBytes), so a row's DRAM reads overlap the previous
// row's arithmetic instead of stalling its first pass.
// A block is a fixed number of rows (about kRowBlockElements elements), independent of threads.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "jit/elementwise_lowering.h"
#include "jit/index_math.h"
#include "jit/emitters.h"
#include "jit/kernel_abi.h"
#include "jit/row_accumulation.h"
#include "jit/row_pipeline_emitter_impl.h"
#include "jit/row_pipeline_plan.h"
#include "jit/streaming_store.h"
#include "jit/vector_math.h"
#include "src/fusion/fusion_plan.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace row_pipeline {

Status RowPipelineEmitter::Loop(llvm::Value* begin, llvm::Value* end, const std::string& name,
                                const std::function<Status(llvm::Value*)>& body,
                                int32_t interleave) {
  llvm::BasicBlock* before = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context_, name, function_);
  auto* done = llvm::BasicBlock::Create(context_, name + ".done", function_);
  b_.CreateCondBr(b_.CreateICmpSLT(begin, end), header, done);
  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, name + ".i");
  i->addIncoming(begin, before);
  ACCY_RETURN_IF_ERROR(body(i));
  llvm::Value* next = b_.CreateAdd(i, b_.getInt64(1), name + ".next", true, true);
  i->addIncoming(next, b_.GetInsertBlock());
  llvm::BranchInst* latch = b_.CreateCondBr(b_.CreateICmpSLT(next, end), header, done);
  if (interleave > 0) SetLoopHint(latch, "llvm.loop.interleave.count", interleave);
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

std::vector<llvm::Value*> RowPipelineEmitter::RowOffsets(llvm::Value* row) {
  // The row's coordinates, innermost first, times each access's outer strides.
  std::vector<llvm::Value*> offsets(plan_.accesses.size(), b_.getInt64(0));
  llvm::Value* rest = row;
  for (size_t d = plan_.row_dims.size(); d-- > 0;) {
    llvm::Value* extent = b_.getInt64(plan_.row_dims[d]);
    llvm::Value* coord = d == 0 ? rest : b_.CreateURem(rest, extent);
    if (d > 0) rest = b_.CreateUDiv(rest, extent);
    for (size_t a = 0; a < plan_.accesses.size(); ++a) {
      if (plan_.accesses[a].outer[d] == 0) continue;
      offsets[a] = b_.CreateAdd(offsets[a], b_.CreateMul(coord, b_.getInt64(plan_.accesses[a].outer[d])));
    }
  }
  return offsets;
}

std::vector<int> RowPipelineEmitter::PrefetchedAccesses() const {
  std::vector<int> accesses;
  for (size_t a = 0; a < plan_.accesses.size(); ++a) {
    const RowAccess& access = plan_.accesses[a];
    const bool per_row = std::any_of(access.outer.begin(), access.outer.end(),
                                     [](int64_t stride) { return stride != 0; });
    // One prefetch per buffer row: several accesses may read the same one (softmax's x).
    const bool repeated = std::any_of(accesses.begin(), accesses.end(), [&](int other) {
      const RowAccess& seen = plan_.accesses[static_cast<size_t>(other)];
      return seen.buffer == access.buffer && seen.outer == access.outer && seen.type == access.type;
    });
    if (access.buffer >= 0 && access.column == 1 && per_row && !repeated) {
      accesses.push_back(static_cast<int>(a));
    }
  }
  return accesses;
}

void RowPipelineEmitter::EmitPrefetchNextRow(const std::vector<int>& accesses, llvm::Value* column,
                                             int64_t columns) {
  for (int a : accesses) {
    const RowAccess& access = plan_.accesses[static_cast<size_t>(a)];
    llvm::Type* memory = MemoryType(context_, access.type);
    const int64_t bytes = std::max<int64_t>(1, ElementByteWidth(access.type));
    llvm::Value* start = b_.CreateAdd(next_offsets_[static_cast<size_t>(a)], column);
    for (int64_t line = 0; line * kCacheLineBytes < columns * bytes; ++line) {
      llvm::Value* address = b_.CreateInBoundsGEP(
          memory, bases_[static_cast<size_t>(access.buffer)],
          b_.CreateAdd(start, b_.getInt64(line * kCacheLineBytes / bytes)));
      // llvm.prefetch(address, read, high locality, data cache): a hint, never a fault.
      b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {address->getType()},
                         {address, b_.getInt32(0), b_.getInt32(3), b_.getInt32(1)});
    }
  }
}

llvm::Value* RowPipelineEmitter::LoadInput(int a, llvm::Value* index) {
  const RowAccess& access = plan_.accesses[static_cast<size_t>(a)];
  llvm::Type* memory = MemoryType(context_, access.type);
  llvm::Value* address =
      b_.CreateInBoundsGEP(memory, bases_[static_cast<size_t>(access.buffer)], index);
  llvm::LoadInst* value = b_.CreateAlignedLoad(memory, address, llvm::Align(1));
  prologue_->Tag(value, KernelPrologue::kInputs);
  return lowering_.FromMemory(value, access.type);
}

StatusOr<llvm::Value*> RowPipelineEmitter::Operand(
    const Operation& op, int64_t index, std::map<const Value*, llvm::Value*>& column_values,
    std::map<int, llvm::Value*>& column_loads, llvm::Value* column) {
  const RowSource& s = plan_.sources.at({&op, index});
  if (s.member != nullptr) {
    if (!plan_.is_full.at(s.member)) return row_values_.at(s.member);
    return column_values.at(s.member);
  }
  const RowAccess& access = plan_.accesses[static_cast<size_t>(s.access)];
  if (access.constant != nullptr) return lowering_.ConstantElement(access.type, access.constant);
  if (access.column == 0) return row_loads_.at(s.access);
  auto it = column_loads.find(s.access);
  if (it != column_loads.end()) return it->second;
  llvm::Value* index_value = b_.CreateAdd(offsets_[static_cast<size_t>(s.access)],
                                          b_.CreateMul(column, b_.getInt64(access.column)));
  llvm::Value* loaded = LoadInput(s.access, index_value);
  column_loads[s.access] = loaded;
  return loaded;
}

StatusOr<std::map<const Value*, llvm::Value*>> RowPipelineEmitter::EmitColumn(
    const std::vector<const Operation*>& ops, llvm::Value* column,
    std::map<const Value*, llvm::Value*> values) {
  std::map<int, llvm::Value*> loads;
  for (const Operation* op : ops) {
    std::vector<llvm::Value*> operands;
    for (int64_t i = 0; i < op->num_operands(); ++i) {
      ACCY_ASSIGN_OR_RETURN(llvm::Value * v, Operand(*op, i, values, loads, column));
      operands.push_back(v);
    }
    if (nonpositive_exps_.count(op) != 0) {
      values[op->result(0)] = normal_range_exps_
                                  ? EmitExpNormalRangeF32(b_, operands[0])
                                  : EmitExpNonPositiveF32(b_, operands[0], scale_primitive_);
      continue;
    }
    auto reciprocal = reciprocals_.find(op);
    if (reciprocal != reciprocals_.end()) {
      values[op->result(0)] = b_.CreateFMul(operands[0], reciprocal->second);
      continue;
    }
    ACCY_ASSIGN_OR_RETURN(values[op->result(0)], lowering_.Emit(*op, operands));
  }
  return values;
}

llvm::Value* RowPipelineEmitter::NormalRangeCondition(const std::vector<const Operation*>& ops) {
  llvm::Value* condition = nullptr;
  for (const Operation* op : ops) {
    auto exp = nonpositive_exps_.find(op);
    if (exp == nonpositive_exps_.end()) continue;
    auto row = normal_exp_rows_.find(exp->second);
    if (row == normal_exp_rows_.end()) return nullptr;
    condition = condition == nullptr ? row->second : b_.CreateAnd(condition, row->second);
  }
  return condition;
}

StatusOr<std::vector<llvm::Value*>> RowPipelineEmitter::VersionByExpRange(
    const std::vector<const Operation*>& ops,
    const std::function<StatusOr<std::vector<llvm::Value*>>()>& emit) {
  llvm::Value* condition = NormalRangeCondition(ops);
  if (condition == nullptr) return emit();
  auto* normal = llvm::BasicBlock::Create(context_, "exp.normal", function_);
  auto* general = llvm::BasicBlock::Create(context_, "exp.general", function_);
  auto* join = llvm::BasicBlock::Create(context_, "exp.join", function_);
  b_.CreateCondBr(condition, normal, general);
  b_.SetInsertPoint(normal);
  normal_range_exps_ = true;
  StatusOr<std::vector<llvm::Value*>> normal_values = emit();
  normal_range_exps_ = false;
  ACCY_RETURN_IF_ERROR(normal_values.status());
  llvm::BasicBlock* normal_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(general);
  ACCY_ASSIGN_OR_RETURN(std::vector<llvm::Value*> general_values, emit());
  llvm::BasicBlock* general_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  for (size_t k = 0; k < general_values.size(); ++k) {
    llvm::PHINode* phi = b_.CreatePHI(general_values[k]->getType(), 2);
    phi->addIncoming((*normal_values)[k], normal_end);
    phi->addIncoming(general_values[k], general_end);
    general_values[k] = phi;
  }
  return general_values;
}

Status RowPipelineEmitter::EmitRowOps(int depth) {
  std::map<const Value*, llvm::Value*> no_values;
  std::map<int, llvm::Value*> no_loads;
  for (const Operation* op : item_.ops) {
    const Value* result = op->result(0);
    if (op->kind() == OpKind::kReduce || plan_.is_full.at(result) ||
        plan_.depth.at(result) != depth) {
      continue;
    }
    std::vector<llvm::Value*> operands;
    for (int64_t i = 0; i < op->num_operands(); ++i) {
      ACCY_ASSIGN_OR_RETURN(llvm::Value * v, Operand(*op, i, no_values, no_loads, nullptr));
      operands.push_back(v);
    }
    ACCY_ASSIGN_OR_RETURN(row_values_[result], lowering_.Emit(*op, operands));
  }
  return absl::OkStatus();
}

llvm::Value* RowPipelineEmitter::OutputAddress(llvm::Value* column) {
  llvm::Type* out_memory = MemoryType(context_, item_.output_value->type().element_type());
  return b_.CreateInBoundsGEP(out_memory, bases_.back(), b_.CreateAdd(row_start_, column));
}

// Softmax computes exp(x - max) for the sum and again for the output; storing it into the
// output row in the sum pass (it is the output's type) halves the exp work, and the output
// pass re-reads it from L1. Generically: the latest full value of the last reduce pass that
// the output pass needs and that has the output's element type. Only one fits in the row.
const Value* RowPipelineEmitter::ChooseCached() const {
  if (plan_.passes == 0) return nullptr;
  std::vector<const Value*> targets;
  for (const RowReduce& reduce : plan_.reduces) {
    const RowSource& input = plan_.sources.at({reduce.op, 0});
    if (reduce.pass + 1 == plan_.passes && input.member != nullptr) targets.push_back(input.member);
  }
  const std::vector<const Operation*> last_pass = FullOpsFor(targets);
  const std::vector<const Operation*> output = FullOpsFor({item_.output_value});
  const ElementType out_type = item_.output_value->type().element_type();
  for (size_t i = last_pass.size(); i-- > 0;) {
    const Value* v = last_pass[i]->result(0);
    if (v->type().element_type() == out_type &&
        std::find(output.begin(), output.end(), last_pass[i]) != output.end()) {
      return v;
    }
  }
  return nullptr;
}

llvm::Value* RowPipelineEmitter::CachedAddress(llvm::Value* column) {
  if (cached_row_ == nullptr) return OutputAddress(column);
  llvm::Type* out_memory = MemoryType(context_, item_.output_value->type().element_type());
  return b_.CreateInBoundsGEP(out_memory, cached_row_, column);
}

void RowPipelineEmitter::StoreOutput(llvm::Value* value, llvm::Value* address) {
  llvm::StoreInst* store = b_.CreateAlignedStore(value, address, llvm::Align(1));
  prologue_->Tag(store, KernelPrologue::kOutputs);
}

// A full f32/f64 divide by a row value (softmax's e / sum) multiplies by the row's reciprocal
// instead: one division per row, not per element. x * RN(1/s) is within 1.5 ulp of RN(x/s)
// whenever 1/s is a normal number; a row whose divisor is subnormal or above 2^126 (where 1/s
// would overflow or lose bits) takes a second copy of the loop that divides. 0, inf and NaN
// divisors give the division's results either way (x * inf, x * 0, NaN). f16/bf16 divides
// (computed in f32, rounded once to the narrow type) keep the division.
Status RowPipelineEmitter::EmitOutputPass() {
  const std::vector<const Operation*> ops = FullOpsFor({item_.output_value}, cached_);
  return VersionByExpRange(ops,
                           [&]() -> StatusOr<std::vector<llvm::Value*>> {
                             ACCY_RETURN_IF_ERROR(EmitOutputPass(ops));
                             return std::vector<llvm::Value*>{};
                           })
      .status();
}

Status RowPipelineEmitter::EmitOutputPass(const std::vector<const Operation*>& ops) {
  reciprocals_.clear();
  llvm::Value* all_normal = b_.getTrue();
  std::map<const Value*, llvm::Value*> no_values;
  std::map<int, llvm::Value*> no_loads;
  for (const Operation* op : ops) {
    const ElementType type = op->result(0)->type().element_type();
    if (op->kind() != OpKind::kDivide ||
        (type != ElementType::kF32 && type != ElementType::kF64)) {
      continue;
    }
    const RowSource& divisor = plan_.sources.at({op, 1});
    // A constant divisor keeps the exact division (x / 3 is not always RN(x * RN(1/3))).
    const bool row_divisor =
        divisor.member != nullptr
            ? !plan_.is_full.at(divisor.member)
            : plan_.accesses[static_cast<size_t>(divisor.access)].column == 0 &&
                  plan_.accesses[static_cast<size_t>(divisor.access)].constant == nullptr;
    if (!row_divisor) continue;
    ACCY_ASSIGN_OR_RETURN(llvm::Value * s, Operand(*op, 1, no_values, no_loads, nullptr));
    llvm::Type* t = s->getType();
    const bool f32 = type == ElementType::kF32;
    llvm::Value* magnitude = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, s);
    llvm::Value* tiny = b_.CreateAnd(
        b_.CreateFCmpOGT(magnitude, llvm::ConstantFP::get(t, 0.0)),
        b_.CreateFCmpOLT(magnitude, llvm::ConstantFP::get(t, f32 ? 0x1p-126 : 0x1p-1022)));
    llvm::Value* huge = b_.CreateAnd(
        b_.CreateFCmpOGT(magnitude, llvm::ConstantFP::get(t, f32 ? 0x1p126 : 0x1p1022)),
        b_.CreateFCmpOLT(magnitude, llvm::ConstantFP::getInfinity(t)));
    all_normal = b_.CreateAnd(all_normal, b_.CreateNot(b_.CreateOr(tiny, huge)));
    reciprocals_[op] = b_.CreateFDiv(llvm::ConstantFP::get(t, 1.0), s);
  }
  if (reciprocals_.empty()) return EmitOutputLoop(ops);
  auto* multiply = llvm::BasicBlock::Create(context_, "out.reciprocal", function_);
  auto* divide = llvm::BasicBlock::Create(context_, "out.divide", function_);
  auto* join = llvm::BasicBlock::Create(context_, "out.join", function_);
  b_.CreateCondBr(all_normal, multiply, divide);
  b_.SetInsertPoint(multiply);
  ACCY_RETURN_IF_ERROR(EmitOutputLoop(ops));
  b_.CreateBr(join);
  b_.SetInsertPoint(divide);
  reciprocals_.clear();
  ACCY_RETURN_IF_ERROR(EmitOutputLoop(ops));
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  return absl::OkStatus();
}

// Whether the output pass's `ops` lower to IEEE arithmetic, compares, selects and layout
// reads only (no call), for an f32 or f64 output: then the vectorized stage loop and the
// line-by-line path of EmitOutputLoop give the same bits. f32 exp is the inline polynomial
// (vector_math.h), the same IR on both paths.
bool RowPipelineEmitter::StreamsFromRegisters(const std::vector<const Operation*>& ops,
                                              ElementType out_type) {
  if (out_type != ElementType::kF32 && out_type != ElementType::kF64) return false;
  for (const Operation* op : ops) {
    const ElementType type = op->result(0)->type().element_type();
    if (type != ElementType::kF32 && type != ElementType::kF64 && type != ElementType::kI1) {
      return false;
    }
    switch (op->kind()) {
      case OpKind::kAdd: case OpKind::kSubtract: case OpKind::kMultiply: case OpKind::kDivide:
      case OpKind::kNegate: case OpKind::kAbs: case OpKind::kMaximum: case OpKind::kMinimum:
      case OpKind::kSelect: case OpKind::kCompare: case OpKind::kClamp: case OpKind::kSqrt:
      case OpKind::kRsqrt: case OpKind::kBroadcastInDim: case OpKind::kReshape:
        break;
      case OpKind::kExponential:
        if (type != ElementType::kF32) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

Status RowPipelineEmitter::EmitOutputLoop(const std::vector<const Operation*>& ops) {
  const ElementType out_type = item_.output_value->type().element_type();
  llvm::Type* out_memory = MemoryType(context_, out_type);
  // Column j of the root, stored at `destination` (element j - first of it).
  auto column = [&](llvm::Value* j, llvm::Value* destination, llvm::Value* first) -> Status {
    std::map<const Value*, llvm::Value*> known;
    if (cached_ != nullptr) {
      // Written by this row's last reduce pass (same thread, same row): no alias metadata.
      known[cached_] = lowering_.FromMemory(
          b_.CreateAlignedLoad(out_memory, CachedAddress(j), llvm::Align(1)), out_type);
    }
    ACCY_ASSIGN_OR_RETURN(auto values, EmitColumn(ops, j, std::move(known)));
    StoreOutput(lowering_.ToMemory(values.at(item_.output_value), out_type),
                b_.CreateInBoundsGEP(out_memory, destination, b_.CreateSub(j, first)));
    return absl::OkStatus();
  };
  if (!streaming_) {
    llvm::Value* out_row = b_.CreateInBoundsGEP(out_memory, bases_.back(), row_start_);
    return Loop(b_.getInt64(0), b_.getInt64(plan_.columns), "out", [&](llvm::Value* j) {
      return column(j, out_row, b_.getInt64(0));
    });
  }
  const int64_t element_bytes =
      static_cast<int64_t>(module_.getDataLayout().getTypeAllocSize(out_memory));
  // Rows of whole 64-byte lines starting on a line (checked per row at run time) stream each
  // line straight from registers: its `line` columns computed one after another (the SLP
  // vectorizer makes them one vector chain), gathered into a vector and stored non-temporally.
  // The stage path below stores every element twice and loads it once more (softmax [4096,
  // 1024] on Zen 4: docs/isa.md). Only for chains of ops that lower to plain IEEE IR
  // (StreamsFromRegisters): a libm call could take a different (libmvec or scalar) variant on
  // the two paths, and the path depends on the output's alignment.
  const int64_t line = 64 / element_bytes;
  if (plan_.columns % line == 0 && StreamsFromRegisters(ops, out_type)) {
    auto* direct = llvm::BasicBlock::Create(context_, "out.lines", function_);
    auto* staged = llvm::BasicBlock::Create(context_, "out.staged", function_);
    auto* done = llvm::BasicBlock::Create(context_, "out.done", function_);
    llvm::Value* address = b_.CreatePtrToInt(OutputAddress(b_.getInt64(0)), b_.getInt64Ty());
    b_.CreateCondBr(
        b_.CreateICmpEQ(b_.CreateAnd(address, b_.getInt64(63)), b_.getInt64(0)), direct, staged);
    b_.SetInsertPoint(direct);
    ACCY_RETURN_IF_ERROR(
        Loop(b_.getInt64(0), b_.getInt64(plan_.columns / line), "out.line", [&](llvm::Value* l) -> Status {
          llvm::Value* first = b_.CreateMul(l, b_.getInt64(line), "", true, true);
          llvm::Value* vector = llvm::PoisonValue::get(llvm::FixedVectorType::get(out_memory, line));
          for (int64_t k = 0; k < line; ++k) {
            llvm::Value* j = b_.CreateAdd(first, b_.getInt64(k), "", true, true);
            std::map<const Value*, llvm::Value*> known;
            if (cached_ != nullptr) {
              known[cached_] = lowering_.FromMemory(
                  b_.CreateAlignedLoad(out_memory, CachedAddress(j), llvm::Align(1)), out_type);
            }
            ACCY_ASSIGN_OR_RETURN(auto values, EmitColumn(ops, j, std::move(known)));
            vector = b_.CreateInsertElement(
                vector, lowering_.ToMemory(values.at(item_.output_value), out_type), k);
          }
          llvm::StoreInst* store = b_.CreateAlignedStore(vector, OutputAddress(first), llvm::Align(64));
          store->setMetadata(llvm::LLVMContext::MD_nontemporal,
                             llvm::MDNode::get(context_, {llvm::ConstantAsMetadata::get(b_.getInt32(1))}));
          prologue_->Tag(store, KernelPrologue::kOutputs);
          return absl::OkStatus();
        }));
    b_.CreateBr(done);
    b_.SetInsertPoint(staged);
    ACCY_RETURN_IF_ERROR(EmitStagedOutput(column, element_bytes));
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    return absl::OkStatus();
  }
  return EmitStagedOutput(column, element_bytes);
}

Status RowPipelineEmitter::EmitStagedOutput(
    const std::function<Status(llvm::Value*, llvm::Value*, llvm::Value*)>& column,
    int64_t element_bytes) {
  // Runs of the row through the stage, each streamed to the output.
  const int64_t run = kStreamingStageBytes / element_bytes;
  const int64_t runs = (plan_.columns + run - 1) / run;
  return Loop(b_.getInt64(0), b_.getInt64(runs), "out.run", [&](llvm::Value* r) -> Status {
    llvm::Value* first = b_.CreateMul(r, b_.getInt64(run));
    llvm::Value* last = b_.CreateBinaryIntrinsic(
        llvm::Intrinsic::smin, b_.CreateAdd(first, b_.getInt64(run)), b_.getInt64(plan_.columns));
    ACCY_RETURN_IF_ERROR(Loop(first, last, "out", [&](llvm::Value* j) {
      return column(j, stage_, first);
    }));
    EmitStreamingCopy(b_, *function_, stage_, OutputAddress(first),
                      b_.CreateMul(b_.CreateSub(last, first), b_.getInt64(element_bytes)));
    return absl::OkStatus();
  });
}

StatusOr<KernelSignature> RowPipelineEmitter::Emit(std::string_view symbol) {
  ACCY_ASSIGN_OR_RETURN(plan_, PlanRowPipeline(item_, fusion_));
  signature_.inputs = plan_.inputs;
  cached_ = ChooseCached();
  nonpositive_exps_ = NonPositiveExponentials(plan_);
  std::set<const Value*> exp_maxes;
  if (!scale_primitive_) {
    for (const auto& [exp, max] : nonpositive_exps_) exp_maxes.insert(max);
  }
  llvm::Type* out_memory = MemoryType(context_, item_.output_value->type().element_type());
  const int64_t element_bytes =
      static_cast<int64_t>(module_.getDataLayout().getTypeAllocSize(out_memory));
  streaming_ = plan_.rows * plan_.columns * element_bytes >= kStreamingStoreBytes &&
               plan_.columns * element_bytes <= kMaxCachedRowBytes;
  signature_.outputs.push_back(item_.output_value);
  const int64_t rows_per_block = std::max<int64_t>(1, kRowBlockElements / std::max<int64_t>(plan_.columns, 1));
  signature_.block_size = rows_per_block;
  signature_.block_count = plan_.columns == 0 ? 0 : BlockCount(plan_.rows, rows_per_block);

  prologue_.emplace(module_, b_, symbol, signature_.inputs.size() + 1, "accy.kernel");
  function_ = prologue_->function();
  for (size_t i = 0; i <= signature_.inputs.size(); ++i) bases_.push_back(prologue_->buffer(i));
  if (streaming_) {
    stage_ = CreateStreamingStage(b_, *function_);
    if (cached_ != nullptr) {
      cached_row_ = b_.CreateAlloca(
          llvm::ArrayType::get(out_memory, static_cast<uint64_t>(plan_.columns)), nullptr, "cached.row");
      cached_row_->setAlignment(llvm::Align(64));
    }
  }
  for (const RowReduce& reduce : plan_.reduces) {
    const int64_t width = acc_.Width(reduce.reducer, reduce.type);
    llvm::Type* lane = acc_.LaneType(reduce.type);
    const int64_t slots = (std::min(kChunk, std::max<int64_t>(plan_.columns, 1)) + width - 1) / width * width;
    llvm::AllocaInst* scratch = b_.CreateAlloca(llvm::ArrayType::get(lane, static_cast<uint64_t>(slots)));
    scratch->setAlignment(llvm::Align(64));
    scratch_.push_back(scratch);
    llvm::Type* acc_vector =
        llvm::FixedVectorType::get(acc_.AccType(reduce.reducer, reduce.type), width);
    accumulator_.push_back(b_.CreateAlloca(acc_vector));
    compensation_.push_back(RowAccumulation::Compensated(reduce.reducer, reduce.type)
                                ? b_.CreateAlloca(acc_vector)
                                : nullptr);
    chunk_sums_.push_back(
        ChunkSummedInF32(reduce)
            ? b_.CreateAlloca(llvm::FixedVectorType::get(lane, width), nullptr, "chunk.sums")
            : nullptr);
    const bool float_max_min = reduce.reducer != OpKind::kAdd &&
                               (reduce.type == ElementType::kF32 || reduce.type == ElementType::kF64);
    nan_flags_.push_back(
        float_max_min ? b_.CreateAlloca(llvm::FixedVectorType::get(b_.getInt1Ty(), width)) : nullptr);
    arg_min_.push_back(exp_maxes.count(reduce.op->result(0)) != 0
                           ? b_.CreateAlloca(llvm::FixedVectorType::get(lane, width))
                           : nullptr);
  }

  llvm::Value* first_row = b_.CreateMul(prologue_->block_begin(), b_.getInt64(rows_per_block));
  llvm::Value* end_row = b_.CreateBinaryIntrinsic(
      llvm::Intrinsic::smin, b_.CreateMul(prologue_->block_end(), b_.getInt64(rows_per_block)),
      b_.getInt64(plan_.columns == 0 ? 0 : plan_.rows));
  ACCY_RETURN_IF_ERROR(Loop(first_row, end_row, "row", [&](llvm::Value* row) -> Status {
    row_start_ = b_.CreateMul(row, b_.getInt64(plan_.columns));
    offsets_ = RowOffsets(row);
    // The next row of this call's range (this row for the last one), which the last reduce
    // pass prefetches (EmitReducePass).
    next_offsets_ = RowOffsets(b_.CreateBinaryIntrinsic(
        llvm::Intrinsic::smin, b_.CreateAdd(row, b_.getInt64(1), "", true, true),
        b_.CreateSub(end_row, b_.getInt64(1))));
    row_loads_.clear();
    row_values_.clear();
    normal_exp_rows_.clear();
    for (size_t a = 0; a < plan_.accesses.size(); ++a) {
      const RowAccess& access = plan_.accesses[a];
      if (access.buffer >= 0 && access.column == 0) {
        row_loads_[static_cast<int>(a)] = LoadInput(static_cast<int>(a), offsets_[a]);
      }
    }
    ACCY_RETURN_IF_ERROR(EmitRowOps(0));
    for (int pass = 0; pass < plan_.passes; ++pass) ACCY_RETURN_IF_ERROR(EmitReducePass(pass));
    return EmitOutputPass();
  }));
  if (streaming_) EmitStreamingFence(b_);
  b_.CreateRetVoid();
  return std::move(signature_);
}

}  // namespace row_pipeline

StatusOr<KernelSignature> EmitRowPipelineKernel(const WorkItem& item, const FusionPlan& fusion,
                                                llvm::Module& module, std::string_view symbol,
                                                const KernelTarget& target) {
  row_pipeline::RowPipelineEmitter emitter(item, fusion, module, target);
  return emitter.Emit(symbol);
}

}  // namespace accy::jit
