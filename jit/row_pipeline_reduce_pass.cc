// RowPipelineEmitter::EmitReducePass (row_pipeline_emitter_impl.h): one reduce pass of a row
// (the description of the passes is in row_pipeline_emitter.cc).
#include <algorithm>
#include <vector>

#include "jit/kernel_abi.h"
#include "jit/row_pipeline_emitter_impl.h"
#include "jit/vector_math.h"
#include "src/schedule/schedule_plan.h"

namespace accy::jit::row_pipeline {
namespace {

// Lanes offset + i (i < width) of a chunk's vector that are below `length`, the chunk's
// columns: the ones not padding. An i1 vector.
llvm::Value* TermLanes(llvm::IRBuilderBase& b, int64_t width, llvm::Value* offset, int64_t length) {
  std::vector<llvm::Constant*> index;
  for (int64_t i = 0; i < width; ++i) index.push_back(b.getInt64(static_cast<uint64_t>(i)));
  const auto lanes = static_cast<unsigned>(width);
  return b.CreateICmpSLT(
      b.CreateAdd(b.CreateVectorSplat(lanes, offset), llvm::ConstantVector::get(index)),
      b.CreateVectorSplat(lanes, b.getInt64(static_cast<uint64_t>(length))));
}

}  // namespace

Status RowPipelineEmitter::EmitReducePass(int pass) {
  std::vector<size_t> reduces;
  std::vector<const Value*> targets;
  for (size_t r = 0; r < plan_.reduces.size(); ++r) {
    if (plan_.reduces[r].pass != pass) continue;
    reduces.push_back(r);
    const RowSource& input = plan_.sources.at({plan_.reduces[r].op, 0});
    if (input.member != nullptr) targets.push_back(input.member);
  }
  if (reduces.empty()) return EmitRowOps(pass + 1);
  const std::vector<const Operation*> ops = FullOpsFor(targets);
  // A reduce reading a kernel input directly (contiguous columns, lanes of the input's own
  // type: softmax's max of x) folds whole chunks straight from the input: no copy to scratch.
  // +inf in every lane of reduce r's vector: the start of its arg_min_ fold and the value its
  // padding lanes are replaced by.
  auto min_identity = [&](size_t r) -> llvm::Constant* {
    const RowReduce& reduce = plan_.reduces[r];
    return llvm::ConstantVector::getSplat(
        llvm::ElementCount::getFixed(acc_.Width(reduce.reducer, reduce.type)),
        acc_.Identity(OpKind::kMinimum, reduce.type));
  };
  auto direct_access = [&](size_t r, int64_t length) -> int {
    const RowReduce& reduce = plan_.reduces[r];
    const RowSource& input = plan_.sources.at({reduce.op, 0});
    if (input.member != nullptr || length % acc_.Width(reduce.reducer, reduce.type) != 0) return -1;
    const RowAccess& access = plan_.accesses[static_cast<size_t>(input.access)];
    const bool same_lanes = reduce.type != ElementType::kI1 &&
                            acc_.LaneType(reduce.type) == MemoryType(context_, access.type);
    return access.buffer >= 0 && access.column == 1 && same_lanes ? input.access : -1;
  };

  const int64_t full_chunks = plan_.columns / kChunk;
  const int64_t tail = plan_.columns % kChunk;
  const bool stores_cached = cached_ != nullptr && pass + 1 == plan_.passes;
  // The last reduce pass prefetches the next row (kCacheLineBytes) in groups of one line of
  // its narrowest prefetched input, and of at least map_group_columns_ columns (every line of
  // the group is prefetched).
  const std::vector<int> prefetched = pass + 1 == plan_.passes ? PrefetchedAccesses() : std::vector<int>{};
  int64_t group = kCacheLineBytes;
  for (int a : prefetched) {
    group = std::min(group, kCacheLineBytes / std::max<int64_t>(
                                                  1, ElementByteWidth(plan_.accesses[static_cast<size_t>(a)].type)));
  }
  group = std::max(group, map_group_columns_);
  // Float max/min folded straight from the input (softmax's max of x) first run the fast fold
  // (RowAccumulation::FastMaxMin: one maxps per vector instead of the IEEE tie and NaN
  // selects); a row whose terms hold a NaN or whose result is +-0 folds again exactly.
  bool fast_eligible = ops.empty() && !stores_cached;
  for (size_t r : reduces) {
    fast_eligible = fast_eligible && nan_flags_[r] != nullptr &&
                    (full_chunks == 0 || direct_access(r, kChunk) >= 0) &&
                    (tail == 0 || direct_access(r, tail) >= 0);
  }

  // The pass's fold: `results` gets each reduce's row value, `retry` (fast only) whether the
  // exact fold must run again.
  auto fold = [&](bool fast, std::vector<llvm::Value*>& results, llvm::Value** retry) -> Status {
    for (size_t r : reduces) {
      const RowReduce& reduce = plan_.reduces[r];
      const int64_t width = acc_.Width(reduce.reducer, reduce.type);
      llvm::Type* acc_vector =
          llvm::FixedVectorType::get(acc_.AccType(reduce.reducer, reduce.type), width);
      llvm::Value* identity = llvm::ConstantVector::getSplat(
          llvm::ElementCount::getFixed(width), acc_.Identity(reduce.reducer, reduce.type));
      if (identity->getType() != acc_vector) identity = b_.CreateFPExt(identity, acc_vector);
      b_.CreateStore(identity, accumulator_[r]);
      if (compensation_[r] != nullptr) {
        b_.CreateStore(llvm::Constant::getNullValue(acc_vector), compensation_[r]);
      }
      if (fast) {
        b_.CreateStore(llvm::Constant::getNullValue(nan_flags_[r]->getAllocatedType()), nan_flags_[r]);
      }
      if (arg_min_[r] != nullptr) {
        b_.CreateStore(min_identity(r), arg_min_[r]);
      }
    }

    // A reduce of the value the map loop stores as the cached value (softmax's sum of
    // exp(x - max)), in lanes of its memory type, folds the chunk straight from the cached row:
    // one store and one load per element fewer than through its scratch array.
    auto from_cached = [&](size_t r, int64_t length) -> bool {
      const RowReduce& reduce = plan_.reduces[r];
      const RowSource& input = plan_.sources.at({reduce.op, 0});
      return stores_cached && input.member == cached_ && length % acc_.Width(reduce.reducer, reduce.type) == 0 &&
             acc_.LaneType(reduce.type) ==
                 MemoryType(context_, item_.output_value->type().element_type());
    };
    // One chunk of `length` columns from `first`: compute the inputs into the scratch arrays,
    // pad them to whole vectors with the identity, fold the vectors into the accumulators.
    auto chunk = [&](llvm::Value* first, int64_t length) -> Status {
      bool needs_map = !ops.empty() || stores_cached;
      for (size_t r : reduces) needs_map = needs_map || direct_access(r, length) < 0;
      auto map_column = [&](llvm::Value* j) -> Status {
        llvm::Value* column = b_.CreateAdd(first, j);
        ACCY_ASSIGN_OR_RETURN(auto values, EmitColumn(ops, column));
        if (stores_cached) {
          const ElementType out_type = item_.output_value->type().element_type();
          llvm::StoreInst* store = b_.CreateAlignedStore(
              lowering_.ToMemory(values.at(cached_), out_type), CachedAddress(column), llvm::Align(1));
          prologue_->Tag(store, KernelPrologue::kOutputs);
        }
        std::map<int, llvm::Value*> loads;
        for (size_t r : reduces) {
          const RowReduce& reduce = plan_.reduces[r];
          if (direct_access(r, length) >= 0 || from_cached(r, length)) continue;
          ACCY_ASSIGN_OR_RETURN(llvm::Value * x, Operand(*reduce.op, 0, values, loads, column));
          llvm::Type* lane = acc_.LaneType(reduce.type);
          b_.CreateStore(acc_.ToLane(x, reduce.type), b_.CreateInBoundsGEP(lane, scratch_[r], j));
        }
        return absl::OkStatus();
      };
      if (!needs_map) {
        // folded straight from the inputs below
      } else if (prefetched.empty() || length < group) {
        ACCY_RETURN_IF_ERROR(
            Loop(b_.getInt64(0), b_.getInt64(length), "map", map_column, kMapInterleave));
      } else {
        // Groups of `group` columns, each prefetching the next row's lines of the same columns
        // (kCacheLineBytes); the group's inner loop has a constant trip count and vectorizes.
        const int64_t groups = length / group;
        ACCY_RETURN_IF_ERROR(Loop(b_.getInt64(0), b_.getInt64(groups), "map.group", [&](llvm::Value* g) {
          llvm::Value* begin = b_.CreateMul(g, b_.getInt64(group), "", true, true);
          EmitPrefetchNextRow(prefetched, b_.CreateAdd(first, begin), group);
          return Loop(begin, b_.CreateAdd(begin, b_.getInt64(group), "", true, true), "map",
                      map_column, kMapInterleave);
        }));
        if (length % group != 0) {
          ACCY_RETURN_IF_ERROR(
              Loop(b_.getInt64(groups * group), b_.getInt64(length), "map.tail", map_column));
        }
      }
      for (size_t r : reduces) {
        const RowReduce& reduce = plan_.reduces[r];
        const int64_t width = acc_.Width(reduce.reducer, reduce.type);
        const int64_t padded = (length + width - 1) / width * width;
        llvm::Type* lane = acc_.LaneType(reduce.type);
        for (int64_t j = length; j < padded; ++j) {
          b_.CreateStore(acc_.Identity(reduce.reducer, reduce.type),
                         b_.CreateConstInBoundsGEP1_64(lane, scratch_[r], static_cast<uint64_t>(j)));
        }
        llvm::Type* lane_vector = llvm::FixedVectorType::get(lane, width);
        // The chunk's f32 lanes (ChunkSummedInF32) stand in for the accumulator in the loop
        // and are added to it after.
        llvm::AllocaInst* sums = chunk_sums_[r] != nullptr ? chunk_sums_[r] : accumulator_[r];
        llvm::Type* acc_vector = sums->getAllocatedType();
        if (chunk_sums_[r] != nullptr) {
          b_.CreateStore(llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(width),
                                                        acc_.Identity(reduce.reducer, reduce.type)),
                         chunk_sums_[r]);
        }
        const int direct = direct_access(r, length);
        ACCY_RETURN_IF_ERROR(Loop(b_.getInt64(0), b_.getInt64(padded / width), "fold",
                                  [&](llvm::Value* v) -> Status {
          llvm::Value* offset = b_.CreateMul(v, b_.getInt64(width));
          llvm::Value* x = nullptr;
          if (direct >= 0) {
            const RowAccess& access = plan_.accesses[static_cast<size_t>(direct)];
            llvm::Value* index =
                b_.CreateAdd(offsets_[static_cast<size_t>(direct)], b_.CreateAdd(first, offset));
            llvm::LoadInst* load = b_.CreateAlignedLoad(
                lane_vector,
                b_.CreateInBoundsGEP(lane, bases_[static_cast<size_t>(access.buffer)], index),
                llvm::Align(1));
            prologue_->Tag(load, KernelPrologue::kInputs);
            x = load;
          } else if (from_cached(r, length)) {
            // Written by this chunk's map loop (same thread, same row): no alias metadata.
            x = b_.CreateAlignedLoad(lane_vector, CachedAddress(b_.CreateAdd(first, offset)),
                                     llvm::Align(1));
          } else {
            x = b_.CreateAlignedLoad(lane_vector, b_.CreateInBoundsGEP(lane, scratch_[r], offset),
                                     llvm::Align(64));
          }
          if (arg_min_[r] != nullptr) {
            // minps: a NaN term leaves the lane either way; its row's max is NaN (exact fold).
            // The padding past `length` (the max's identity, -inf) is left out.
            llvm::Value* term = x;
            if (padded != length) {
              term = b_.CreateSelect(TermLanes(b_, width, offset, length), x, min_identity(r));
            }
            llvm::Value* low = b_.CreateLoad(lane_vector, arg_min_[r]);
            b_.CreateStore(acc_.FastMaxMin(OpKind::kMinimum, low, term), arg_min_[r]);
          }
          llvm::Value* acc = b_.CreateLoad(acc_vector, sums);
          if (compensation_[r] != nullptr) {
            llvm::Value* error = b_.CreateLoad(acc_vector, compensation_[r]);
            b_.CreateStore(acc_.TwoSum(acc, x, &error), accumulator_[r]);
            b_.CreateStore(error, compensation_[r]);
            return absl::OkStatus();
          }
          if (fast) {
            b_.CreateStore(acc_.FastMaxMin(reduce.reducer, acc, x), accumulator_[r]);
            llvm::Value* flags = b_.CreateLoad(nan_flags_[r]->getAllocatedType(), nan_flags_[r]);
            b_.CreateStore(b_.CreateOr(flags, acc_.NanLanes(x)), nan_flags_[r]);
            return absl::OkStatus();
          }
          b_.CreateStore(acc_.Combine(reduce.reducer, reduce.type, acc, x), sums);
          return absl::OkStatus();
        }));
        if (chunk_sums_[r] != nullptr) {
          llvm::Type* total_vector = accumulator_[r]->getAllocatedType();
          b_.CreateStore(acc_.Combine(reduce.reducer, reduce.type,
                                      b_.CreateLoad(total_vector, accumulator_[r]),
                                      b_.CreateLoad(acc_vector, chunk_sums_[r])),
                         accumulator_[r]);
        }
      }
      return absl::OkStatus();
    };
    if (full_chunks > 0) {
      ACCY_RETURN_IF_ERROR(Loop(b_.getInt64(0), b_.getInt64(full_chunks), "chunk", [&](llvm::Value* c) {
        return chunk(b_.CreateMul(c, b_.getInt64(kChunk)), kChunk);
      }));
    }
    if (tail > 0) ACCY_RETURN_IF_ERROR(chunk(b_.getInt64(full_chunks * kChunk), tail));

    // Row results: lanes folded in a fixed order, then the init value, rounded once.
    std::map<const Value*, llvm::Value*> no_values;
    std::map<int, llvm::Value*> no_loads;
    std::vector<llvm::Value*> normal_ranges;
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
      results.push_back(acc_.ToStorage(combined, reduce.reducer, reduce.type));
      if (arg_min_[r] != nullptr) {
        // Whether every fl(a - max) of the row is in [kExpNormalRangeLow, 0]
        // (RowPipelineEmitter::arg_min_).
        llvm::Value* low =
            acc_.Horizontal(OpKind::kMinimum, reduce.type,
                            b_.CreateLoad(arg_min_[r]->getAllocatedType(), arg_min_[r]));
        llvm::Value* max = results.back();
        normal_ranges.push_back(b_.CreateFCmpOGE(
            b_.CreateFSub(low, max), llvm::ConstantFP::get(max->getType(), kExpNormalRangeLow)));
      }
      if (fast) {
        llvm::Value* flags = b_.CreateLoad(nan_flags_[r]->getAllocatedType(), nan_flags_[r]);
        llvm::Value* zero = b_.CreateFCmpOEQ(combined, llvm::ConstantFP::get(combined->getType(), 0.0));
        *retry = b_.CreateOr(*retry, b_.CreateOr(b_.CreateOrReduce(flags), zero));
      }
    }
    results.insert(results.end(), normal_ranges.begin(), normal_ranges.end());
    return absl::OkStatus();
  };
  // `values`: the reduces' row values, then the arg_min_ conditions (fold's `results`).
  std::vector<llvm::Value*> values;
  llvm::Value* retry = b_.getFalse();
  if (!fast_eligible) {
    // Exps of the row's max differences among `ops` (softmax's sum pass) take the normal-range
    // lowering on rows that allow it (VersionByExpRange).
    ACCY_ASSIGN_OR_RETURN(values,
                          VersionByExpRange(ops, [&]() -> StatusOr<std::vector<llvm::Value*>> {
                            std::vector<llvm::Value*> folded;
                            ACCY_RETURN_IF_ERROR(fold(false, folded, nullptr));
                            return folded;
                          }));
  } else {
    ACCY_RETURN_IF_ERROR(fold(true, values, &retry));
    llvm::BasicBlock* fast_end = b_.GetInsertBlock();
    auto* exact = llvm::BasicBlock::Create(context_, "fold.exact", function_);
    auto* join = llvm::BasicBlock::Create(context_, "fold.join", function_);
    b_.CreateCondBr(retry, exact, join);
    b_.SetInsertPoint(exact);
    std::vector<llvm::Value*> exact_values;
    ACCY_RETURN_IF_ERROR(fold(false, exact_values, nullptr));
    llvm::BasicBlock* exact_end = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    for (size_t k = 0; k < values.size(); ++k) {
      llvm::PHINode* phi = b_.CreatePHI(values[k]->getType(), 2);
      phi->addIncoming(values[k], fast_end);
      phi->addIncoming(exact_values[k], exact_end);
      values[k] = phi;
    }
  }
  size_t next_range = reduces.size();
  for (size_t k = 0; k < reduces.size(); ++k) {
    const Value* result = plan_.reduces[reduces[k]].op->result(0);
    row_values_[result] = values[k];
    if (arg_min_[reduces[k]] != nullptr) normal_exp_rows_[result] = values[next_range++];
  }
  return EmitRowOps(pass + 1);
}

}  // namespace accy::jit::row_pipeline
