// Emitter of row_pipeline work items (emitters.h; cluster rule 6 of src/fusion/fusion_plan.h).
//
// A row pipeline is read generically, not matched against softmax or layer norm formulas: every
// value of the cluster lives either once per element of a row (dims F, "full") or once per row
// (dims F without the last dim, "row"). A row reduce turns a full value into a row value, and
// an elided row broadcast lets full ops read a row value. A value's depth is the longest chain
// of reduces behind it; a row needs depth(root) reduce passes plus one output pass:
//   pass k (k < depth(root)): recompute the full values the reduces of input depth k read, one
//     chunk of kChunk columns at a time, into an L1 scratch array per reduce, then fold the
//     chunk into a 64-byte vector accumulator with explicit vector ops (max/min are IEEE and
//     propagate NaN; float sums accumulate f32/f16/bf16 terms in f64 lanes -- the reference
//     sums in double too -- and round once); after the pass, the row ops of depth k + 1 run once;
//   the output pass computes the root over the row, a plain loop the O3 vectorizer widens
//     (transcendentals through ElementwiseLowering, so glibc libmvec as in elementwise kernels).
// Full values are recomputed in every pass that needs them (a row is re-read from L1/L2: a
// 1024-float row is 4 KiB), except one: the last reduce pass stores the latest value the output
// pass needs into the output row (softmax's exp(x - max)), so it is computed once. Nothing
// outside the kernel's buffers and its stack scratch is written.
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
#include "llvm/IR/MDBuilder.h"
#include "src/fusion/fusion_plan.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {
namespace {

// Elements per block (rounded to whole rows, at least one row): as elementwise kernels.
constexpr int64_t kRowBlockElements = 8192;
// Columns per reduce chunk: the scratch of one reduce is at most 4 KiB (f64), in L1.
constexpr int64_t kChunk = 512;

Status Unsupported(const WorkItem& item, const std::string& what) {
  return absl::UnimplementedError(StrCat("jit: row_pipeline emitter: work item ", item.id,
                                         " (root ", item.root->name(), "): ", what));
}

// An external read: a buffer (or a folded one-element constant) addressed per row through
// `outer` strides over the row coordinates and per column through `column` (0: a row value).
struct Access {
  int buffer = -1;
  const uint8_t* constant = nullptr;
  ElementType type = ElementType::kF32;
  std::vector<int64_t> outer;
  int64_t column = 0;
};

// Where one operand use comes from: a cluster member's result, or an access.
struct Source {
  const Value* member = nullptr;
  int access = -1;
};

// A row reduce of the cluster: its reducer and the pass that computes it.
struct RowReduce {
  const Operation* op = nullptr;
  OpKind reducer = OpKind::kAdd;
  ElementType type = ElementType::kF32;
  int pass = 0;
};

// The analysed cluster: members, their spaces and depths, sources of every operand use.
struct RowPlan {
  std::vector<int64_t> full_dims;  // F
  std::vector<int64_t> row_dims;   // F without the last dim
  int64_t rows = 0;
  int64_t columns = 0;
  std::set<const Operation*> members;
  std::map<const Value*, bool> is_full;  // member results
  std::map<const Value*, int> depth;     // member results
  std::vector<RowReduce> reduces;
  std::vector<Access> accesses;
  std::map<std::pair<const Operation*, int64_t>, Source> sources;
  int passes = 0;  // depth of the root: reduce passes before the output pass
};

class RowPipelineEmitter {
 public:
  RowPipelineEmitter(const WorkItem& item, const FusionPlan& fusion, llvm::Module& module)
      : item_(item), fusion_(fusion), module_(module), context_(module.getContext()),
        b_(context_), lowering_(module, b_), acc_(b_) {}

  StatusOr<KernelSignature> Emit(std::string_view symbol);

 private:
  Status Analyse();
  Status AddSource(const Operation& op, int64_t index);
  StatusOr<Source> ExternalAccess(const Operation& op, const Value& source,
                                  const Operation* broadcast);
  // Emits `for (i = begin; i < end; ++i) body(i)`; the builder continues after the loop.
  Status Loop(llvm::Value* begin, llvm::Value* end, const std::string& name,
              const std::function<Status(llvm::Value*)>& body);
  // The full ops needed (transitively) for `targets`, in program order.
  // `cached`, when given, is read from the output row instead of computed.
  std::vector<const Operation*> FullOpsFor(const std::vector<const Value*>& targets,
                                           const Value* cached = nullptr) const;
  // Computes `ops` for column `column`; returns every full value computed.
  // `values` may hold values known beforehand (the cached value).
  StatusOr<std::map<const Value*, llvm::Value*>> EmitColumn(
      const std::vector<const Operation*>& ops, llvm::Value* column,
      std::map<const Value*, llvm::Value*> values = {});
  // The value the last reduce pass stores into the output row for the output pass to read.
  const Value* ChooseCached() const;
  llvm::Value* OutputAddress(llvm::Value* column);
  StatusOr<llvm::Value*> Operand(const Operation& op, int64_t index,
                                 std::map<const Value*, llvm::Value*>& column_values,
                                 std::map<int, llvm::Value*>& column_loads, llvm::Value* column);
  llvm::Value* LoadInput(int access, llvm::Value* index);
  Status EmitRowOps(int depth);
  Status EmitReducePass(int pass);
  Status EmitOutputPass(llvm::Value* row);

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
  llvm::MDNode* input_list_ = nullptr;
  llvm::MDNode* output_list_ = nullptr;
  std::vector<llvm::Value*> offsets_;             // per access, for the current row
  std::map<int, llvm::Value*> row_loads_;         // per-row accesses, loaded at row start
  std::map<const Value*, llvm::Value*> row_values_;  // row-space member results
  llvm::Value* row_start_ = nullptr;                 // row * columns
  const Value* cached_ = nullptr;                    // see ChooseCached
  std::vector<llvm::AllocaInst*> scratch_;        // per reduce
  std::vector<llvm::AllocaInst*> accumulator_;    // per reduce
  std::vector<llvm::AllocaInst*> compensation_;   // per reduce; null unless compensated
};

Status RowPipelineEmitter::Analyse() {
  if (item_.kind != WorkKind::kRowPipeline) {
    return Unsupported(item_, StrCat("kind ", WorkKindName(item_.kind), " is not row_pipeline"));
  }
  ACCY_CHECK(item_.output_value != nullptr && !item_.ops.empty());
  plan_.full_dims = item_.output_value->type().dims();
  if (plan_.full_dims.empty()) return Unsupported(item_, "the root has rank 0");
  plan_.row_dims.assign(plan_.full_dims.begin(), plan_.full_dims.end() - 1);
  plan_.columns = plan_.full_dims.back();
  plan_.rows = 1;
  for (int64_t d : plan_.row_dims) plan_.rows *= d;
  plan_.members.insert(item_.ops.begin(), item_.ops.end());
  if (item_.ops.back()->result(0) != item_.output_value) {
    return Unsupported(item_, "the output is not the last op's result");
  }

  for (const Operation* op : item_.ops) {
    if (op->num_results() != 1) {
      return Unsupported(item_, StrCat(op->name(), " has ", op->num_results(), " results"));
    }
    const Value* result = op->result(0);
    const bool full = result->type().dims() == plan_.full_dims;
    if (!full && result->type().dims() != plan_.row_dims) {
      return Unsupported(item_, StrCat(op->name(), " has shape ", ShapeText(result->type().dims()),
                                       " in a row pipeline over ", ShapeText(plan_.full_dims)));
    }
    int depth = 0;
    if (op->kind() == OpKind::kReduce) {
      const std::optional<OpKind> reducer = RowReducer(*op);
      const ElementType type = result->type().element_type();
      if (full || !reducer.has_value() || op->num_operands() != 2 ||
          op->GetInts("dimensions") !=
              std::vector<int64_t>{static_cast<int64_t>(plan_.full_dims.size()) - 1} ||
          op->operand(0)->type().dims() != plan_.full_dims ||
          op->operand(0)->type().element_type() != type ||
          op->operand(1)->type().element_type() != type || op->operand(1)->type().rank() != 0) {
        return Unsupported(item_, StrCat(op->name(), " is not a reduce over the last dim with an ",
                                         "add, maximum or minimum body of one element type"));
      }
      ACCY_RETURN_IF_ERROR(AddSource(*op, 0));
      ACCY_RETURN_IF_ERROR(AddSource(*op, 1));
      const Source& input = plan_.sources.at({op, 0});
      const int input_depth = input.member != nullptr ? plan_.depth.at(input.member) : 0;
      const Source& init = plan_.sources.at({op, 1});
      const int init_depth = init.member != nullptr ? plan_.depth.at(init.member) : 0;
      // The pass reads the input and, when it ends, the init value (a row value of the pass's
      // depth at most); the result is available from the next depth on.
      const int pass = std::max(input_depth, init_depth);
      depth = pass + 1;
      plan_.reduces.push_back({op, *reducer, type, pass});
    } else if (IsFusableElementwiseOp(*op)) {
      for (int64_t i = 0; i < op->num_operands(); ++i) {
        ACCY_RETURN_IF_ERROR(AddSource(*op, i));
        const Source& s = plan_.sources.at({op, i});
        if (s.member != nullptr) depth = std::max(depth, plan_.depth.at(s.member));
      }
    } else {
      return Unsupported(item_, StrCat("op ", op->name(), " cannot run in a row pipeline"));
    }
    plan_.is_full[result] = full;
    plan_.depth[result] = depth;
  }
  if (!plan_.is_full.at(item_.output_value)) return Unsupported(item_, "the root is a row value");
  plan_.passes = plan_.depth.at(item_.output_value);
  return absl::OkStatus();
}

Status RowPipelineEmitter::AddSource(const Operation& op, int64_t index) {
  const Value* operand = op.operand(index);
  const Operation* def = operand->defining_op();
  if (def != nullptr && plan_.members.count(def) != 0) {
    const bool op_full = op.result(0)->type().dims() == plan_.full_dims;
    const bool operand_full = operand->type().dims() == plan_.full_dims;
    // A full op reads a full value or (rank-1 rows: a rank-0 select/clamp operand) a row value.
    if (!operand_full && op_full && operand->type().rank() != 0) {
      return Unsupported(item_, StrCat(op.name(), " reads a row value without a broadcast"));
    }
    if (operand_full && !op_full && op.kind() != OpKind::kReduce) {
      return Unsupported(item_, StrCat(op.name(), " reads a full value as a row value"));
    }
    plan_.sources[{&op, index}] = Source{operand, -1};
    return absl::OkStatus();
  }
  if (def != nullptr && def->kind() == OpKind::kBroadcastInDim && fusion_.IsElided(def)) {
    const Value* source = def->operand(0);
    const Operation* source_def = source->defining_op();
    if (source_def != nullptr && plan_.members.count(source_def) != 0) {
      // A row broadcast of a row value computed in the pipeline.
      const std::vector<int64_t> map = def->GetInts("broadcast_dimensions");
      std::vector<int64_t> iota(plan_.row_dims.size());
      for (size_t i = 0; i < iota.size(); ++i) iota[i] = static_cast<int64_t>(i);
      if (source->type().dims() != plan_.row_dims || map != iota ||
          def->result(0)->type().dims() != plan_.full_dims) {
        return Unsupported(item_, StrCat(op.name(), " reads a broadcast of a pipeline value that ",
                                         "is not a row broadcast"));
      }
      plan_.sources[{&op, index}] = Source{source, -1};
      return absl::OkStatus();
    }
    ACCY_ASSIGN_OR_RETURN(Source external, ExternalAccess(op, *source, def));
    plan_.sources[{&op, index}] = external;
    return absl::OkStatus();
  }
  ACCY_ASSIGN_OR_RETURN(Source external, ExternalAccess(op, *operand, nullptr));
  plan_.sources[{&op, index}] = external;
  return absl::OkStatus();
}

StatusOr<Source> RowPipelineEmitter::ExternalAccess(const Operation& op, const Value& source,
                                                    const Operation* broadcast) {
  // Strides over the dims of the op's iteration space (F, or the row dims; a reduce's input
  // is F and its init a scalar).
  const bool full_space = op.kind() == OpKind::kReduce
                              ? source.type().rank() != 0
                              : op.result(0)->type().dims() == plan_.full_dims;
  const std::vector<int64_t>& space = full_space ? plan_.full_dims : plan_.row_dims;
  const std::vector<int64_t>& dims = source.type().dims();
  std::vector<int64_t> strides(space.size(), 0);
  if (broadcast != nullptr) {
    const std::vector<int64_t> map = broadcast->GetInts("broadcast_dimensions");
    if (map.size() != dims.size() || broadcast->result(0)->type().dims() != space) {
      return Unsupported(item_, StrCat(op.name(), " reads an elided broadcast_in_dim of shape ",
                                       ShapeText(broadcast->result(0)->type().dims()),
                                       " in a space of shape ", ShapeText(space)));
    }
    const std::vector<int64_t> source_strides = RowMajorStrides(dims);
    for (size_t k = 0; k < map.size(); ++k) {
      if (dims[k] != 1) strides[static_cast<size_t>(map[k])] = source_strides[k];
    }
  } else if (!dims.empty()) {
    if (dims != space) {
      return Unsupported(item_, StrCat(op.name(), " reads an operand of shape ", ShapeText(dims),
                                       " in a space of shape ", ShapeText(space)));
    }
    strides = RowMajorStrides(space);
  }
  Access access;
  access.type = source.type().element_type();
  access.outer.assign(plan_.row_dims.size(), 0);
  for (size_t d = 0; d < plan_.row_dims.size(); ++d) access.outer[d] = strides[d];
  access.column = full_space ? strides.back() : 0;
  const Operation* def = source.defining_op();
  const DenseElements* dense =
      def != nullptr && def->kind() == OpKind::kConstant ? def->GetDense("value") : nullptr;
  if (dense != nullptr && source.type().element_count() == 1 &&
      static_cast<int64_t>(dense->bytes.size()) == ElementByteWidth(access.type)) {
    access.constant = dense->bytes.data();
  } else {
    auto it = std::find(signature_.inputs.begin(), signature_.inputs.end(), &source);
    access.buffer = static_cast<int>(it - signature_.inputs.begin());
    if (it == signature_.inputs.end()) signature_.inputs.push_back(&source);
  }
  plan_.accesses.push_back(std::move(access));
  return Source{nullptr, static_cast<int>(plan_.accesses.size()) - 1};
}

Status RowPipelineEmitter::Loop(llvm::Value* begin, llvm::Value* end, const std::string& name,
                                const std::function<Status(llvm::Value*)>& body) {
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
  b_.CreateCondBr(b_.CreateICmpSLT(next, end), header, done);
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

std::vector<const Operation*> RowPipelineEmitter::FullOpsFor(
    const std::vector<const Value*>& targets, const Value* cached) const {
  std::set<const Operation*> needed;
  std::vector<const Value*> work(targets.begin(), targets.end());
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    const Operation* def = v->defining_op();
    if (v == cached || !plan_.is_full.at(v) || !needed.insert(def).second) continue;
    for (int64_t i = 0; i < def->num_operands(); ++i) {
      const Source& s = plan_.sources.at({def, i});
      if (s.member != nullptr) work.push_back(s.member);
    }
  }
  std::vector<const Operation*> ordered;
  for (const Operation* op : item_.ops) {
    if (needed.count(op) != 0) ordered.push_back(op);
  }
  return ordered;
}

llvm::Value* RowPipelineEmitter::LoadInput(int a, llvm::Value* index) {
  const Access& access = plan_.accesses[static_cast<size_t>(a)];
  llvm::Type* memory = MemoryType(context_, access.type);
  llvm::Value* address =
      b_.CreateInBoundsGEP(memory, bases_[static_cast<size_t>(access.buffer)], index);
  llvm::LoadInst* value = b_.CreateAlignedLoad(memory, address, llvm::Align(1));
  value->setMetadata(llvm::LLVMContext::MD_alias_scope, input_list_);
  value->setMetadata(llvm::LLVMContext::MD_noalias, output_list_);
  return lowering_.FromMemory(value, access.type);
}

StatusOr<llvm::Value*> RowPipelineEmitter::Operand(
    const Operation& op, int64_t index, std::map<const Value*, llvm::Value*>& column_values,
    std::map<int, llvm::Value*>& column_loads, llvm::Value* column) {
  const Source& s = plan_.sources.at({&op, index});
  if (s.member != nullptr) {
    if (!plan_.is_full.at(s.member)) return row_values_.at(s.member);
    return column_values.at(s.member);
  }
  const Access& access = plan_.accesses[static_cast<size_t>(s.access)];
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
    ACCY_ASSIGN_OR_RETURN(values[op->result(0)], lowering_.Emit(*op, operands));
  }
  return values;
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

Status RowPipelineEmitter::EmitReducePass(int pass) {
  std::vector<size_t> reduces;
  std::vector<const Value*> targets;
  for (size_t r = 0; r < plan_.reduces.size(); ++r) {
    if (plan_.reduces[r].pass != pass) continue;
    reduces.push_back(r);
    const Source& input = plan_.sources.at({plan_.reduces[r].op, 0});
    if (input.member != nullptr) targets.push_back(input.member);
  }
  if (reduces.empty()) return EmitRowOps(pass + 1);
  const std::vector<const Operation*> ops = FullOpsFor(targets);
  for (size_t r : reduces) {
    const RowReduce& reduce = plan_.reduces[r];
    const int64_t width = acc_.Width(reduce.type);
    llvm::Type* acc_vector =
        llvm::FixedVectorType::get(acc_.AccType(reduce.reducer, reduce.type), width);
    llvm::Value* identity = llvm::ConstantVector::getSplat(
        llvm::ElementCount::getFixed(width), acc_.Identity(reduce.reducer, reduce.type));
    if (identity->getType() != acc_vector) identity = b_.CreateFPExt(identity, acc_vector);
    b_.CreateStore(identity, accumulator_[r]);
    if (compensation_[r] != nullptr) {
      b_.CreateStore(llvm::Constant::getNullValue(acc_vector), compensation_[r]);
    }
  }

  // One chunk of `length` columns from `first`: compute the inputs into the scratch arrays,
  // pad them to whole vectors with the identity, fold the vectors into the accumulators.
  auto chunk = [&](llvm::Value* first, int64_t length) -> Status {
    ACCY_RETURN_IF_ERROR(Loop(b_.getInt64(0), b_.getInt64(length), "map", [&](llvm::Value* j) -> Status {
      llvm::Value* column = b_.CreateAdd(first, j);
      ACCY_ASSIGN_OR_RETURN(auto values, EmitColumn(ops, column));
      if (cached_ != nullptr && pass + 1 == plan_.passes) {
        const ElementType out_type = item_.output_value->type().element_type();
        llvm::StoreInst* store = b_.CreateAlignedStore(
            lowering_.ToMemory(values.at(cached_), out_type), OutputAddress(column), llvm::Align(1));
        store->setMetadata(llvm::LLVMContext::MD_alias_scope, output_list_);
        store->setMetadata(llvm::LLVMContext::MD_noalias, input_list_);
      }
      std::map<int, llvm::Value*> loads;
      for (size_t r : reduces) {
        const RowReduce& reduce = plan_.reduces[r];
        ACCY_ASSIGN_OR_RETURN(llvm::Value * x, Operand(*reduce.op, 0, values, loads, column));
        llvm::Type* lane = acc_.LaneType(reduce.type);
        b_.CreateStore(acc_.ToLane(x, reduce.type), b_.CreateInBoundsGEP(lane, scratch_[r], j));
      }
      return absl::OkStatus();
    }));
    for (size_t r : reduces) {
      const RowReduce& reduce = plan_.reduces[r];
      const int64_t width = acc_.Width(reduce.type);
      const int64_t padded = (length + width - 1) / width * width;
      llvm::Type* lane = acc_.LaneType(reduce.type);
      for (int64_t j = length; j < padded; ++j) {
        b_.CreateStore(acc_.Identity(reduce.reducer, reduce.type),
                       b_.CreateConstInBoundsGEP1_64(lane, scratch_[r], static_cast<uint64_t>(j)));
      }
      llvm::Type* lane_vector = llvm::FixedVectorType::get(lane, width);
      llvm::Type* acc_vector = accumulator_[r]->getAllocatedType();
      ACCY_RETURN_IF_ERROR(Loop(b_.getInt64(0), b_.getInt64(padded / width), "fold",
                                [&](llvm::Value* v) -> Status {
        llvm::Value* address =
            b_.CreateInBoundsGEP(lane, scratch_[r], b_.CreateMul(v, b_.getInt64(width)));
        llvm::Value* x = b_.CreateAlignedLoad(lane_vector, address, llvm::Align(64));
        llvm::Value* acc = b_.CreateLoad(acc_vector, accumulator_[r]);
        if (compensation_[r] != nullptr) {
          llvm::Value* error = b_.CreateLoad(acc_vector, compensation_[r]);
          b_.CreateStore(acc_.TwoSum(acc, x, &error), accumulator_[r]);
          b_.CreateStore(error, compensation_[r]);
          return absl::OkStatus();
        }
        b_.CreateStore(acc_.Combine(reduce.reducer, reduce.type, acc, x), accumulator_[r]);
        return absl::OkStatus();
      }));
    }
    return absl::OkStatus();
  };
  const int64_t full_chunks = plan_.columns / kChunk;
  const int64_t tail = plan_.columns % kChunk;
  if (full_chunks > 0) {
    ACCY_RETURN_IF_ERROR(Loop(b_.getInt64(0), b_.getInt64(full_chunks), "chunk", [&](llvm::Value* c) {
      return chunk(b_.CreateMul(c, b_.getInt64(kChunk)), kChunk);
    }));
  }
  if (tail > 0) ACCY_RETURN_IF_ERROR(chunk(b_.getInt64(full_chunks * kChunk), tail));

  // Row results: lanes folded in a fixed order, then the init value, rounded once.
  std::map<const Value*, llvm::Value*> no_values;
  std::map<int, llvm::Value*> no_loads;
  for (size_t r : reduces) {
    const RowReduce& reduce = plan_.reduces[r];
    llvm::Type* acc_vector = accumulator_[r]->getAllocatedType();
    llvm::Value* lanes = b_.CreateLoad(acc_vector, accumulator_[r]);
    ACCY_ASSIGN_OR_RETURN(llvm::Value * init, Operand(*reduce.op, 1, no_values, no_loads, nullptr));
    llvm::Value* init_acc = acc_.ToLane(init, reduce.type);
    if (init_acc->getType() != acc_vector->getScalarType()) {
      init_acc = b_.CreateFPExt(init_acc, acc_vector->getScalarType());
    }
    llvm::Value* combined =
        compensation_[r] != nullptr
            ? acc_.CompensatedTotal(lanes, b_.CreateLoad(acc_vector, compensation_[r]), init_acc)
            : acc_.Combine(reduce.reducer, reduce.type, init_acc,
                           acc_.Horizontal(reduce.reducer, reduce.type, lanes));
    row_values_[reduce.op->result(0)] = acc_.ToStorage(combined, reduce.reducer, reduce.type);
  }
  return EmitRowOps(pass + 1);
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
    const Source& input = plan_.sources.at({reduce.op, 0});
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

Status RowPipelineEmitter::EmitOutputPass(llvm::Value* row) {
  const std::vector<const Operation*> ops = FullOpsFor({item_.output_value}, cached_);
  const ElementType out_type = item_.output_value->type().element_type();
  llvm::Type* out_memory = MemoryType(context_, out_type);
  return Loop(b_.getInt64(0), b_.getInt64(plan_.columns), "out", [&](llvm::Value* j) -> Status {
    std::map<const Value*, llvm::Value*> known;
    if (cached_ != nullptr) {
      // Written by this row's last reduce pass (same thread, same row): no alias metadata.
      known[cached_] = lowering_.FromMemory(
          b_.CreateAlignedLoad(out_memory, OutputAddress(j), llvm::Align(1)), out_type);
    }
    ACCY_ASSIGN_OR_RETURN(auto values, EmitColumn(ops, j, std::move(known)));
    llvm::StoreInst* store = b_.CreateAlignedStore(
        lowering_.ToMemory(values.at(item_.output_value), out_type), OutputAddress(j), llvm::Align(1));
    store->setMetadata(llvm::LLVMContext::MD_alias_scope, output_list_);
    store->setMetadata(llvm::LLVMContext::MD_noalias, input_list_);
    return absl::OkStatus();
  });
}

StatusOr<KernelSignature> RowPipelineEmitter::Emit(std::string_view symbol) {
  ACCY_RETURN_IF_ERROR(Analyse());
  cached_ = ChooseCached();
  signature_.outputs.push_back(item_.output_value);
  const int64_t rows_per_block = std::max<int64_t>(1, kRowBlockElements / std::max<int64_t>(plan_.columns, 1));
  signature_.block_size = rows_per_block;
  signature_.block_count = plan_.columns == 0 ? 0 : BlockCount(plan_.rows, rows_per_block);

  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* ptr = b_.getPtrTy();
  auto* function_type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, i64, i64}, false);
  function_ = llvm::Function::Create(function_type, llvm::Function::ExternalLinkage,
                                     llvm::StringRef(symbol.data(), symbol.size()), module_);
  function_->setDoesNotThrow();
  auto* entry = llvm::BasicBlock::Create(context_, "entry", function_);
  b_.SetInsertPoint(entry);
  llvm::MDBuilder md(context_);
  llvm::MDNode* domain = md.createAnonymousAliasScopeDomain("accy.kernel");
  input_list_ = llvm::MDNode::get(context_, {md.createAnonymousAliasScope(domain, "inputs")});
  output_list_ = llvm::MDNode::get(context_, {md.createAnonymousAliasScope(domain, "output")});
  for (size_t i = 0; i <= signature_.inputs.size(); ++i) {
    llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr, function_->getArg(0), i);
    bases_.push_back(b_.CreateLoad(ptr, slot, StrCat("buffer", i)));
  }
  for (const RowReduce& reduce : plan_.reduces) {
    const int64_t width = acc_.Width(reduce.type);
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
  }

  llvm::Value* first_row = b_.CreateMul(function_->getArg(2), b_.getInt64(rows_per_block));
  llvm::Value* end_row = b_.CreateBinaryIntrinsic(
      llvm::Intrinsic::smin, b_.CreateMul(function_->getArg(3), b_.getInt64(rows_per_block)),
      b_.getInt64(plan_.columns == 0 ? 0 : plan_.rows));
  ACCY_RETURN_IF_ERROR(Loop(first_row, end_row, "row", [&](llvm::Value* row) -> Status {
    row_start_ = b_.CreateMul(row, b_.getInt64(plan_.columns));
    // Per-access offsets of this row: the row's coordinates, innermost first.
    offsets_.assign(plan_.accesses.size(), b_.getInt64(0));
    llvm::Value* rest = row;
    for (size_t d = plan_.row_dims.size(); d-- > 0;) {
      llvm::Value* extent = b_.getInt64(plan_.row_dims[d]);
      llvm::Value* coord = d == 0 ? rest : b_.CreateURem(rest, extent);
      if (d > 0) rest = b_.CreateUDiv(rest, extent);
      for (size_t a = 0; a < plan_.accesses.size(); ++a) {
        if (plan_.accesses[a].outer[d] == 0) continue;
        offsets_[a] = b_.CreateAdd(offsets_[a],
                                   b_.CreateMul(coord, b_.getInt64(plan_.accesses[a].outer[d])));
      }
    }
    row_loads_.clear();
    row_values_.clear();
    for (size_t a = 0; a < plan_.accesses.size(); ++a) {
      const Access& access = plan_.accesses[a];
      if (access.buffer >= 0 && access.column == 0) {
        row_loads_[static_cast<int>(a)] = LoadInput(static_cast<int>(a), offsets_[a]);
      }
    }
    ACCY_RETURN_IF_ERROR(EmitRowOps(0));
    for (int pass = 0; pass < plan_.passes; ++pass) ACCY_RETURN_IF_ERROR(EmitReducePass(pass));
    return EmitOutputPass(row);
  }));
  b_.CreateRetVoid();
  return std::move(signature_);
}

}  // namespace

StatusOr<KernelSignature> EmitRowPipelineKernel(const WorkItem& item, const FusionPlan& fusion,
                                                llvm::Module& module, std::string_view symbol) {
  RowPipelineEmitter emitter(item, fusion, module);
  return emitter.Emit(symbol);
}

}  // namespace accy::jit
