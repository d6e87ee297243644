// The reference evaluator's driver (reference_evaluator.h): argument checks, the value
// environment, op dispatch to the families of evaluator_internal.h, and the ops that need the
// driver itself (return, while, kernel_call).
//
// Each block evaluation has its own Scope mapping SSA values to tensors; a region's scope points
// at the scope of the op that owns it, so region bodies read values of enclosing blocks, as the
// verifier's dominance rule allows. Tensors in scopes are never written after they are bound:
// every op allocates fresh results, so sharing tensor handles between scopes is safe. A value is
// dropped from its scope after the last op of its block that uses it (directly or from a nested
// region), so peak memory follows liveness rather than program length.
#include "src/reference/reference_evaluator.h"

#include <algorithm>
#include <cfenv>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "absl/container/flat_hash_map.h"
#include "src/reference/evaluator_internal.h"
#include "src/reference/scalar.h"

namespace accy {
namespace reference {
namespace {

// Runs the evaluation under IEEE defaults whatever the caller's thread state: round to nearest
// even, and on x86 no flush-to-zero or denormals-are-zero (docs/numerics.md: subnormals are
// IEEE). A JIT or library that left FTZ/DAZ set on the thread would otherwise change the oracle's
// answers. The caller's modes and SSE status flags are restored on exit.
class IeeeFloatEnvironment {
 public:
  IeeeFloatEnvironment() : saved_rounding_(std::fegetround()) {
#if defined(__x86_64__) || defined(__i386__)
    saved_csr_ = _mm_getcsr();
#endif
    std::fesetround(FE_TONEAREST);
#if defined(__x86_64__) || defined(__i386__)
    constexpr unsigned kFlushToZero = 1u << 15;
    constexpr unsigned kDenormalsAreZero = 1u << 6;
    _mm_setcsr(_mm_getcsr() & ~(kFlushToZero | kDenormalsAreZero));
#endif
  }
  ~IeeeFloatEnvironment() {
    std::fesetround(saved_rounding_);
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(saved_csr_);
#endif
  }
  IeeeFloatEnvironment(const IeeeFloatEnvironment&) = delete;
  IeeeFloatEnvironment& operator=(const IeeeFloatEnvironment&) = delete;

 private:
  int saved_rounding_;
#if defined(__x86_64__) || defined(__i386__)
  unsigned saved_csr_ = 0;
#endif
};

// SSA value -> tensor for one block evaluation, with lookup through enclosing blocks.
class Scope {
 public:
  explicit Scope(const Scope* parent) : parent_(parent) {}
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  void Bind(const Value* value, Tensor tensor) { values_[value] = std::move(tensor); }
  void Release(const Value* value) { values_.erase(value); }
  // Null when `value` is bound neither here nor in an enclosing scope.
  const Tensor* Find(const Value* value) const {
    for (const Scope* scope = this; scope != nullptr; scope = scope->parent_) {
      auto it = scope->values_.find(value);
      if (it != scope->values_.end()) return &it->second;
    }
    return nullptr;
  }

 private:
  const Scope* parent_;
  absl::flat_hash_map<const Value*, Tensor> values_;
};

std::string OpLabel(const Operation& op, int64_t position) {
  return "op #" + std::to_string(position) + " (" + std::string(op.name()) + ")";
}

// `tensors` must match `values`' types one for one; `describe()` names the producer in the
// error (built only on failure: this runs for every op evaluation).
template <typename Describe>
Status CheckTypes(const std::vector<Tensor>& tensors, const std::vector<Value*>& values,
                  const Describe& describe) {
  if (tensors.size() != values.size()) {
    return absl::InternalError("reference evaluator: " + describe() + " produced " +
                               std::to_string(tensors.size()) + " values, expected " +
                               std::to_string(values.size()));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].type() != values[i]->type()) {
      return absl::InternalError("reference evaluator: " + describe() + " produced value " +
                                 std::to_string(i) + " of type " + tensors[i].type().ToString() +
                                 ", expected " + values[i]->type().ToString());
    }
  }
  return absl::OkStatus();
}

// For each op of a block, the values of the block (arguments and results) whose last use is
// that op. A use inside a nested region counts as a use by the top-level op holding the region.
struct BlockLiveness {
  std::vector<std::vector<const Value*>> release_after;
};

BlockLiveness ComputeLiveness(const Block& block) {
  const auto& ops = block.operations();
  absl::flat_hash_map<const Operation*, int64_t> position;
  for (size_t i = 0; i < ops.size(); ++i) position[ops[i].get()] = static_cast<int64_t>(i);
  // The index of the op of `block` that is or contains `user`, or -1.
  auto top_level_index = [&](const Operation* user) -> int64_t {
    for (const Operation* op = user; op != nullptr;) {
      const Block* parent_block = op->parent_block();
      if (parent_block == nullptr) return -1;
      if (parent_block == &block) return position.at(op);
      op = parent_block->parent() == nullptr ? nullptr : parent_block->parent()->parent_op();
    }
    return -1;
  };
  BlockLiveness liveness;
  liveness.release_after.resize(ops.size());
  // `defined_at` is the index after which an unused value can go (-1: before the first op).
  auto plan = [&](const Value* value, int64_t defined_at) {
    int64_t last = defined_at;
    for (const Use& use : value->uses()) {
      const int64_t index = top_level_index(use.user);
      if (index < 0) return;  // used outside this block: keep it to the end
      last = std::max(last, index);
    }
    if (last >= 0) liveness.release_after[static_cast<size_t>(last)].push_back(value);
  };
  for (int64_t i = 0; i < block.num_arguments(); ++i) plan(block.argument(i), -1);
  for (size_t i = 0; i < ops.size(); ++i) {
    for (int64_t r = 0; r < ops[i]->num_results(); ++r) {
      plan(ops[i]->result(r), static_cast<int64_t>(i));
    }
  }
  return liveness;
}

class Evaluator {
 public:
  explicit Evaluator(const ReferenceOptions& options) : options_(options) {}

  // Evaluates `block` with `arguments` bound to its arguments, in a scope nested in `parent`;
  // returns the operands of its return op.
  StatusOr<std::vector<Tensor>> EvaluateBlock(const Block& block,
                                              std::span<const Tensor> arguments,
                                              const Scope* parent) {
    if (static_cast<int64_t>(arguments.size()) != block.num_arguments()) {
      return absl::InvalidArgumentError(
          "reference evaluator: block takes " + std::to_string(block.num_arguments()) +
          " arguments, got " + std::to_string(arguments.size()));
    }
    Scope scope(parent);
    for (int64_t i = 0; i < block.num_arguments(); ++i) {
      const Tensor& argument = arguments[static_cast<size_t>(i)];
      if (argument.type() != block.argument(i)->type()) {
        return absl::InvalidArgumentError(
            "reference evaluator: block argument " + std::to_string(i) + " has type " +
            argument.type().ToString() + ", expected " + block.argument(i)->type().ToString());
      }
      scope.Bind(block.argument(i), argument);
    }
    auto [liveness_it, inserted] = liveness_.try_emplace(&block);
    if (inserted) liveness_it->second = ComputeLiveness(block);
    const BlockLiveness& liveness = liveness_it->second;
    int64_t position = 0;
    for (const auto& op_ptr : block.operations()) {
      const Operation& op = *op_ptr;
      std::vector<Tensor> operands;
      operands.reserve(static_cast<size_t>(op.num_operands()));
      for (int64_t i = 0; i < op.num_operands(); ++i) {
        const Tensor* operand = scope.Find(op.operand(i));
        if (operand == nullptr) {
          return absl::InvalidArgumentError("reference evaluator: " + OpLabel(op, position) +
                                            ": operand " + std::to_string(i) +
                                            " is used before it is defined");
        }
        operands.push_back(*operand);
      }
      if (op.kind() == OpKind::kReturn) return operands;
      ACCY_ASSIGN_OR_RETURN(std::vector<Tensor> results, EvaluateOp(op, operands, scope));
      ACCY_RETURN_IF_ERROR(
          CheckTypes(results, op.results(), [&] { return OpLabel(op, position); }));
      for (int64_t i = 0; i < op.num_results(); ++i) {
        scope.Bind(op.result(i), std::move(results[static_cast<size_t>(i)]));
      }
      for (const Value* dead : liveness.release_after[static_cast<size_t>(position)]) {
        scope.Release(dead);
      }
      ++position;
    }
    return absl::InvalidArgumentError("reference evaluator: block has no return op");
  }

 private:
  StatusOr<std::vector<Tensor>> EvaluateRegion(const Region& region,
                                               std::span<const Tensor> arguments,
                                               const Scope& scope) {
    if (region.entry_block() == nullptr) {
      return absl::InvalidArgumentError("reference evaluator: region has no block");
    }
    return EvaluateBlock(*region.entry_block(), arguments, &scope);
  }

  // The op's entry, named by the `evaluate` column of its op table row (accy/ops.def).
  StatusOr<std::vector<Tensor>> EvaluateOp(const Operation& op, std::span<const Tensor> operands,
                                           const Scope& scope) {
    const auto kind = static_cast<size_t>(op.kind());
    if (kind >= static_cast<size_t>(kNumOpKinds)) {
      return absl::InvalidArgumentError("reference evaluator: unknown op kind " +
                                        std::to_string(kind));
    }
    return (this->*kEntries[kind])(op, operands, scope);
  }

 private:
  using Entry = StatusOr<std::vector<Tensor>> (Evaluator::*)(const Operation&,
                                                             std::span<const Tensor>,
                                                             const Scope&);

  RegionEvaluator RegionsIn(const Scope& scope) {
    return [this, &scope](const Region& region, std::span<const Tensor> arguments) {
      return EvaluateRegion(region, arguments, scope);
    };
  }

  // Adapters from the family evaluators' signatures to Entry's: F(op, operands), or
  // F(op, operands, region evaluator).
  template <auto F>
  StatusOr<std::vector<Tensor>> Plain(const Operation& op, std::span<const Tensor> operands,
                                      const Scope&) {
    return F(op, operands);
  }
  template <auto F>
  StatusOr<std::vector<Tensor>> WithRegions(const Operation& op,
                                            std::span<const Tensor> operands,
                                            const Scope& scope) {
    return F(op, operands, RegionsIn(scope));
  }

  StatusOr<std::vector<Tensor>> EvaluateCollectiveOp(const Operation& op,
                                                     std::span<const Tensor> operands,
                                                     const Scope& scope) {
    return EvaluateCollective(
        op, operands, RegionsIn(scope),
        CollectiveProcess{options_.communicator, options_.num_replicas.value_or(1),
                          options_.num_partitions.value_or(1)});
  }
  StatusOr<std::vector<Tensor>> EvaluateKernelCall(const Operation& op,
                                                   std::span<const Tensor>, const Scope&) {
    return absl::UnimplementedError(
        "reference evaluator: kernel_call target '" +
        op.GetString("call_target_name").value_or("") + "' version " +
        std::to_string(op.GetInt("version").value_or(1)) + " has no reference implementation");
  }
  // return is handled by EvaluateBlock, which never evaluates it as an op.
  StatusOr<std::vector<Tensor>> EvaluateReturn(const Operation& op, std::span<const Tensor>,
                                               const Scope&) {
    return absl::InternalError("reference evaluator: unexpected op " + std::string(op.name()));
  }

  // Indexed by OpKind; defined after the class.
  static const Entry kEntries[kNumOpKinds];

  // while (spec "while"): evaluate cond on the loop-carried values; while it is true, replace
  // them with the body's results.
  StatusOr<std::vector<Tensor>> EvaluateWhile(const Operation& op,
                                              std::span<const Tensor> operands,
                                              const Scope& scope) {
    if (op.num_regions() != 2) {
      return absl::InvalidArgumentError("reference evaluator: while needs a cond and a body region");
    }
    std::vector<Tensor> values(operands.begin(), operands.end());
    for (int64_t iterations = 0;; ++iterations) {
      ACCY_ASSIGN_OR_RETURN(std::vector<Tensor> condition,
                            EvaluateRegion(*op.region(0), values, scope));
      if (condition.size() != 1 || condition[0].rank() != 0 ||
          condition[0].element_type() != ElementType::kI1) {
        return absl::InvalidArgumentError(
            "reference evaluator: while cond must return one tensor<i1>");
      }
      if (LoadBits(condition[0], 0) == 0) break;
      if (iterations >= options_.max_while_iterations) {
        return absl::ResourceExhaustedError(
            "reference evaluator: while loop did not finish within " +
            std::to_string(options_.max_while_iterations) +
            " iterations (ReferenceOptions::max_while_iterations)");
      }
      ACCY_ASSIGN_OR_RETURN(values, EvaluateRegion(*op.region(1), values, scope));
      ACCY_RETURN_IF_ERROR(
          CheckTypes(values, op.results(), [] { return std::string("while body"); }));
    }
    return values;
  }

  // case (spec "case"): the branch the rank-0 i32 index names, the last one when the index is
  // outside [0, N).
  StatusOr<std::vector<Tensor>> EvaluateCase(const Operation& op,
                                             std::span<const Tensor> operands,
                                             const Scope& scope) {
    if (op.num_regions() == 0 || operands.size() != 1 || operands[0].rank() != 0 ||
        operands[0].element_type() != ElementType::kI32) {
      return absl::InvalidArgumentError(
          "reference evaluator: case needs a tensor<i32> index and at least one branch");
    }
    int32_t index = 0;
    std::memcpy(&index, operands[0].data(), sizeof(index));
    const int64_t branch =
        index < 0 || index >= op.num_regions() ? op.num_regions() - 1 : int64_t{index};
    ACCY_ASSIGN_OR_RETURN(std::vector<Tensor> values,
                          EvaluateRegion(*op.region(branch), {}, scope));
    ACCY_RETURN_IF_ERROR(
        CheckTypes(values, op.results(), [] { return std::string("case branch"); }));
    return values;
  }

  // The entries, one per value of the `evaluate` column: Evaluator::k<evaluate>.
  static constexpr Entry kElementwise = &Evaluator::Plain<EvaluateElementwiseOp>;
  static constexpr Entry kShape = &Evaluator::Plain<EvaluateShapeOp>;
  static constexpr Entry kGatherScatter = &Evaluator::WithRegions<EvaluateGatherScatterOp>;
  static constexpr Entry kWindow = &Evaluator::WithRegions<EvaluateWindowOp>;
  static constexpr Entry kSort = &Evaluator::WithRegions<EvaluateSortOp>;
  static constexpr Entry kDotGeneral = &Evaluator::Plain<EvaluateDotGeneral>;
  static constexpr Entry kConvolution = &Evaluator::Plain<EvaluateConvolution>;
  static constexpr Entry kTriangularSolve = &Evaluator::Plain<EvaluateTriangularSolve>;
  static constexpr Entry kBatchNorm = &Evaluator::Plain<EvaluateBatchNorm>;
  static constexpr Entry kRngBitGenerator = &Evaluator::Plain<EvaluateRngBitGenerator>;
  static constexpr Entry kLapack = &Evaluator::Plain<EvaluateLapack>;
  static constexpr Entry kReduction = &Evaluator::WithRegions<EvaluateReductionOp>;
  static constexpr Entry kCollective = &Evaluator::EvaluateCollectiveOp;
  static constexpr Entry kKernelCall = &Evaluator::EvaluateKernelCall;
  static constexpr Entry kReturn = &Evaluator::EvaluateReturn;
  static constexpr Entry kWhile = &Evaluator::EvaluateWhile;
  static constexpr Entry kCase = &Evaluator::EvaluateCase;

  const ReferenceOptions& options_;
  // Per-block liveness, computed on first evaluation (region bodies run many times). Node-based:
  // nested evaluations insert while an outer block holds a reference to its entry.
  std::unordered_map<const Block*, BlockLiveness> liveness_;
};

// One entry per op table row, in OpKind order: the row's `evaluate` column names the entry.
const Evaluator::Entry Evaluator::kEntries[kNumOpKinds] = {
#define ACCY_OP(kind, name, category, operands, results, classes, regions, pure, commutative, \
                work, rule, evaluate, print)                                                   \
  Evaluator::k##evaluate,
#include "accy/ops.def"
#undef ACCY_OP
};

}  // namespace
}  // namespace reference

StatusOr<std::vector<Tensor>> EvaluateFunction(const Function& function,
                                               std::span<const Tensor> arguments,
                                               const ReferenceOptions& options) {
  const std::string where = "reference evaluator: function @" + function.name() + ": ";
  if (options.max_while_iterations < 0) {
    return absl::InvalidArgumentError(where + "ReferenceOptions::max_while_iterations must be >= "
                                      "0, got " + std::to_string(options.max_while_iterations));
  }
  const std::vector<TensorType>& parameters = function.parameter_types();
  if (arguments.size() != parameters.size()) {
    return absl::InvalidArgumentError(where + "expected " + std::to_string(parameters.size()) +
                                      " arguments, got " + std::to_string(arguments.size()));
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].type() != parameters[i]) {
      return absl::InvalidArgumentError(where + "argument " + std::to_string(i) + " has type " +
                                        arguments[i].type().ToString() + ", expected " +
                                        parameters[i].ToString());
    }
    if (!arguments[i].valid()) {
      return absl::InvalidArgumentError(where + "argument " + std::to_string(i) + " (" +
                                        parameters[i].ToString() + ") has no data");
    }
  }
  if (function.entry_block() == nullptr) {
    return absl::InvalidArgumentError(where + "function has no body");
  }
  reference::IeeeFloatEnvironment ieee_environment;
  reference::Evaluator evaluator(options);
  ACCY_ASSIGN_OR_RETURN(std::vector<Tensor> results,
                        evaluator.EvaluateBlock(*function.entry_block(), arguments, nullptr));
  if (results.size() != function.result_types().size()) {
    return absl::InvalidArgumentError(where + "returned " + std::to_string(results.size()) +
                                      " values, the signature has " +
                                      std::to_string(function.result_types().size()));
  }
  std::vector<Tensor> owned;
  owned.reserve(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].type() != function.result_types()[i]) {
      return absl::InvalidArgumentError(where + "result " + std::to_string(i) + " has type " +
                                        results[i].type().ToString() + ", the signature says " +
                                        function.result_types()[i].ToString());
    }
    // Results never alias the caller's arguments or each other.
    ACCY_ASSIGN_OR_RETURN(Tensor copy, results[i].Clone());
    owned.push_back(std::move(copy));
  }
  return owned;
}

StatusOr<std::vector<Tensor>> Evaluate(const Module& module, std::string_view function_name,
                                       std::span<const Tensor> arguments,
                                       const ReferenceOptions& options) {
  const Function* function = module.FindFunction(function_name);
  if (function == nullptr) {
    return absl::InvalidArgumentError("reference evaluator: no function @" +
                                      std::string(function_name) + " in module '" +
                                      module.name() + "'");
  }
  ReferenceOptions with_grid = options;
  if (!with_grid.num_replicas.has_value()) with_grid.num_replicas = module.num_replicas();
  if (!with_grid.num_partitions.has_value()) with_grid.num_partitions = module.num_partitions();
  return EvaluateFunction(*function, arguments, with_grid);
}

}  // namespace accy
