// Type rules: the per-op hooks of the op table. Each row of accy/ops.def names its rule in the
// `rule` column; GetTypeRule(kind) returns that row's TypeRule, and the verifier
// (VerifyOperation) and the builder (InferResultTypes) apply it. Semantics: the StableHLO spec's
// "Constraints" of each op (CHLO's ChloOps.td for chlo ops; accy's own ops say where theirs
// are, in ops.def). Adding an op adds its row and, when no existing rule fits, one TypeRule in
// type_rules.cc whose functions live next to the rules they share code with.
#ifndef ACCY_SRC_IR_TYPE_RULES_H_
#define ACCY_SRC_IR_TYPE_RULES_H_

#include <span>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "src/ir/type_inference.h"

namespace accy::ir_internal {

// Result types of `kind` applied to operands of `operand_types` with `attributes`, or
// kInvalidArgument naming the op and the rule it breaks.
using InferFunction = StatusOr<std::vector<TensorType>> (*)(
    OpKind kind, std::span<const TensorType> operand_types,
    std::span<const NamedAttribute> attributes);
// A check of a built op (its given result types, or its regions' signatures): OK or
// kInvalidArgument "<op name>: <what is wrong>".
using OperationCheck = Status (*)(const Operation& op);

// The hooks of one type rule.
struct TypeRule {
  // Infers the result types; null when the op's result types are given (constant, convert,
  // reshape, broadcast_in_dim, iota, rng_bit_generator, lapack, collectives, kernel_call, case,
  // return), and then `check_given_results` checks them.
  InferFunction infer = nullptr;
  // Checks given result types (and the attributes they depend on); null when `infer` is set.
  OperationCheck check_given_results = nullptr;
  // Checks the regions' argument and result types; null for rules of ops without regions. The
  // region count itself comes from the row and is checked before this runs.
  OperationCheck check_regions = nullptr;
};

// The rule the op table's row for `kind` names. `kind` must be a valid OpKind (below
// kNumOpKinds); the verifier rejects others before asking.
const TypeRule& GetTypeRule(OpKind kind);

// Checks that `region` has one block with arguments `arg_types` ending in a return of
// `result_types`; `what` names the region in messages ("body", "comparator", ...).
Status CheckRegionSignature(const Operation& op, const Region& region, std::string_view what,
                            std::span<const TensorType> arg_types,
                            std::span<const TensorType> result_types);

// Given-result checks (verifier.cc), one per rule without `infer`.
Status CheckConstantResult(const Operation& op);
Status CheckConvertResult(const Operation& op);
Status CheckBitcastConvertResult(const Operation& op);
Status CheckReshapeResult(const Operation& op);
Status CheckBroadcastInDimResult(const Operation& op);
Status CheckIotaResult(const Operation& op);
Status CheckCollectiveResults(const Operation& op);
Status CheckRngBitGeneratorResults(const Operation& op);
Status CheckLapackResults(const Operation& op);
Status CheckKernelCallResults(const Operation& op);
Status CheckCaseResults(const Operation& op);
Status CheckReturnResults(const Operation& op);

// Region checks (verifier.cc).
Status CheckReduceRegions(const Operation& op);  // reduce and reduce_window
Status CheckScatterRegions(const Operation& op);
Status CheckSelectAndScatterRegions(const Operation& op);
Status CheckSortRegions(const Operation& op);
Status CheckCollectiveRegions(const Operation& op);  // all_reduce, reduce_scatter, collective_reduce
Status CheckCaseRegions(const Operation& op);
Status CheckWhileRegions(const Operation& op);

// Inference functions of type_inference.cc that the rules wrap (the others are declared in
// type_inference.h).
StatusOr<std::vector<TensorType>> InferUnary(OpKind kind, std::span<const TensorType> operands,
                                             const AttributeView& attrs);
StatusOr<std::vector<TensorType>> InferBinary(OpKind kind, std::span<const TensorType> operands,
                                              const AttributeView& attrs);
StatusOr<std::vector<TensorType>> InferSelect(std::span<const TensorType> operands);
StatusOr<std::vector<TensorType>> InferClamp(std::span<const TensorType> operands);
StatusOr<std::vector<TensorType>> InferTranspose(std::span<const TensorType> operands,
                                                 const AttributeView& attrs);
StatusOr<std::vector<TensorType>> InferSlice(std::span<const TensorType> operands,
                                             const AttributeView& attrs);
StatusOr<std::vector<TensorType>> InferPad(std::span<const TensorType> operands,
                                           const AttributeView& attrs);
StatusOr<std::vector<TensorType>> InferConcatenate(std::span<const TensorType> operands,
                                                   const AttributeView& attrs);
StatusOr<std::vector<TensorType>> InferReverse(std::span<const TensorType> operands,
                                               const AttributeView& attrs);
StatusOr<std::vector<TensorType>> InferDynamicSlice(std::span<const TensorType> operands,
                                                    const AttributeView& attrs);
StatusOr<std::vector<TensorType>> InferDynamicUpdateSlice(std::span<const TensorType> operands);
StatusOr<std::vector<TensorType>> InferReduce(std::span<const TensorType> operands,
                                              const AttributeView& attrs);
StatusOr<std::vector<TensorType>> InferCumsum(std::span<const TensorType> operands,
                                              const AttributeView& attrs);

}  // namespace accy::ir_internal

#endif  // ACCY_SRC_IR_TYPE_RULES_H_
