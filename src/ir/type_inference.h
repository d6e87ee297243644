// Result type inference for ops whose result types follow from operands and attributes
// (StableHLO spec "Semantics"/"Constraints" of each op). Used by the builder to fill in result
// types and by the verifier to check given ones, so every shape rule lives in one place.
#ifndef ACCY_SRC_IR_TYPE_INFERENCE_H_
#define ACCY_SRC_IR_TYPE_INFERENCE_H_

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"

namespace accy::ir_internal {

// Attribute lookup over a plain list (the builder has no Operation yet).
class AttributeView {
 public:
  explicit AttributeView(std::span<const NamedAttribute> attributes) : attributes_(attributes) {}
  const AttributeValue* Find(std::string_view name) const;
  // Errors name `op` and the attribute: missing, or of the wrong kind.
  StatusOr<std::vector<int64_t>> Ints(std::string_view op, std::string_view name) const;
  StatusOr<int64_t> Int(std::string_view op, std::string_view name) const;
  // Absent -> empty list / `fallback`.
  StatusOr<std::vector<int64_t>> OptionalInts(std::string_view op, std::string_view name) const;
  StatusOr<bool> OptionalBool(std::string_view op, std::string_view name, bool fallback) const;

 private:
  std::span<const NamedAttribute> attributes_;
};

// Returns the result types of `kind` applied to operands of `operand_types` with `attributes`,
// checking every operand/attribute rule that determines them, or kInvalidArgument naming the op
// and the rule. Returns std::nullopt (inside the StatusOr) for ops whose result type is not
// implied (constant, convert, bitcast_convert, reshape, broadcast_in_dim, iota,
// rng_bit_generator, kernel_call, return): those are checked by VerifyOperation against the
// given result type.
// `region_result_types` is not needed: region signatures are checked by VerifyOperation.
StatusOr<std::optional<std::vector<TensorType>>> InferResultTypes(
    OpKind kind, std::span<const TensorType> operand_types,
    std::span<const NamedAttribute> attributes);

// Family helpers (type_inference_shape.cc).
StatusOr<std::vector<TensorType>> InferGather(std::span<const TensorType> operand_types,
                                              const AttributeView& attrs);
StatusOr<std::vector<TensorType>> InferScatter(std::span<const TensorType> operand_types,
                                               const AttributeView& attrs);
StatusOr<std::vector<TensorType>> InferDotGeneral(std::span<const TensorType> operand_types,
                                                  const AttributeView& attrs);
// convolution (type_inference_convolution.cc): the result's shape, with the operands' element
// type (the verifier accepts another result element type of the same class).
StatusOr<std::vector<TensorType>> InferConvolution(std::span<const TensorType> operand_types,
                                                   const AttributeView& attrs);

// Window ops (type_inference_window.cc): spec "reduce_window" C1-C16 and "select_and_scatter"
// C1-C8, C11-C12 (the region constraints are the verifier's).
StatusOr<std::vector<TensorType>> InferReduceWindow(std::span<const TensorType> operand_types,
                                                    std::span<const NamedAttribute> attributes);
StatusOr<std::vector<TensorType>> InferSelectAndScatter(
    std::span<const TensorType> operand_types, std::span<const NamedAttribute> attributes);

// sort (type_inference_sort.cc): spec "sort" C1-C4 (the comparator's signature, C5, is the
// verifier's). top_k: CHLO "top_k": one operand of rank >= 1, 0 <= k <= its last dim; results
// values (the operand's element type) and indices (i32), the operand's shape with last dim k.
StatusOr<std::vector<TensorType>> InferSort(std::span<const TensorType> operand_types,
                                            std::span<const NamedAttribute> attributes);
StatusOr<std::vector<TensorType>> InferTopK(std::span<const TensorType> operand_types,
                                            std::span<const NamedAttribute> attributes);

// triangular_solve (type_inference_triangular_solve.cc): spec "triangular_solve" C1-C4 and
// the attributes left_side, lower, unit_diagonal (required bools) and transpose_a (required
// string, IsTransposeA); the result has b's type.
// batch_norm_inference / _training / _grad (spec sections of those names, C1-C7): `kind` names
// which; type_inference_batch_norm.cc.
StatusOr<std::vector<TensorType>> InferBatchNorm(OpKind kind,
                                                 std::span<const TensorType> operand_types,
                                                 std::span<const NamedAttribute> attributes);
StatusOr<std::vector<TensorType>> InferTriangularSolve(std::span<const TensorType> operand_types,
                                                       std::span<const NamedAttribute> attributes);
// Whether `value` is a transpose_a of the spec: "NO_TRANSPOSE", "TRANSPOSE" or "ADJOINT".
bool IsTransposeA(std::string_view value);

// rng_bit_generator (type_inference_rng_bit_generator.cc), whose output type is given, not
// inferred: spec "rng_bit_generator" (I1) rng_algorithm (a required string, IsRngAlgorithm),
// (I2) initial_state a 1-dimensional ui64 tensor, (C1) output_state of initial_state's type,
// (C2) its size (THREE_FRY: 2; PHILOX: 2 or 3; DEFAULT, implementation-defined: accy's DEFAULT
// is PHILOX, so 2 or 3), and an output of integer or floating-point type (the op table's
// kNumeric; not i1). kInvalidArgument "rng_bit_generator: ..." naming the broken rule.
Status VerifyRngBitGenerator(std::span<const TensorType> operand_types,
                             std::span<const TensorType> result_types,
                             std::span<const NamedAttribute> attributes);
// Whether `value` is an rng_algorithm of the spec: "DEFAULT", "THREE_FRY" or "PHILOX".
bool IsRngAlgorithm(std::string_view value);

// lapack (type_inference_lapack.cc), whose result types are given: call_target_name (a
// required string naming a bound target, src/ir/lapack_targets.h; otherwise its
// kUnimplemented), the routine's backend_config fields (required integers holding characters it
// accepts) and the operand and result types of the routine (potrf: a [batch..., N, N] of the
// target's element type -> factor of a's type, info i32 [batch...]; getrf: a [batch..., M, N]
// -> lu of a's type, pivots i32 [batch..., min(M, N)], info i32 [batch...]; geqrf: a ->
// a's type, tau [batch..., min(M, N)]; orgqr: a [batch..., M, N], tau [batch..., K], M >= N >= K
// -> q of a's type; syevd: a [batch..., N, N] -> v of a's type, w [batch..., N], info i32
// [batch...]; gesdd: a [batch..., M, N] -> a's type, s [batch..., K], u [batch..., M, M or K],
// vt [batch..., N or K, N], info i32 [batch...], K = min(M, N), full with mode 'A', K with
// 'S', either with 'N'). kInvalidArgument
// "lapack @<target>: ..." naming the broken rule.
Status VerifyLapack(std::span<const TensorType> operand_types,
                    std::span<const TensorType> result_types,
                    std::span<const NamedAttribute> attributes);

// The collectives (type_inference_collectives.cc), whose result types are given: spec
// "replica_id" / "partition_id" (no operands, a tensor<ui32> result), "all_reduce" (operands
// and results of equal types), "all_gather" (C1 all_gather_dim in range, results as operands
// but dim all_gather_dim times the group size), "reduce_scatter" (C1 scatter_dimension in range,
// that dim divided by the group size), "all_to_all" (C1 split_dimension, C2 concat_dimension,
// C3 split_count > 0 dividing the split dim; results scale the two dims), "collective_permute"
// (source_target_pairs: [N, 2], each source and each target at most once, non-negative),
// "collective_broadcast" / collective_reduce (result = operand type); replica_groups a 2-D
// integer tensor whose values are unique and >= -1 (-1 only pads); channel_id an integer;
// use_global_device_ids a bool that needs channel_id > 0. The group size is the second dim of
// replica_groups; an empty replica_groups (every replica in one group) leaves the scaled dims
// unchecked here (Module::grid() gives the size). kInvalidArgument "<op>: ..." naming the rule.
Status VerifyCollective(OpKind kind, std::span<const TensorType> operand_types,
                        std::span<const TensorType> result_types,
                        std::span<const NamedAttribute> attributes);

// "[1, 2, 3]".
std::string DimsToString(std::span<const int64_t> dims);

// The kind of an attribute value as messages name it: "an integer", "a float", "a bool",
// "a string", "a list of integers", "a list of strings" or "a dense tensor".
std::string_view AttributeKindName(const AttributeValue& value);
// kInvalidArgument "<op>: attribute <name> has the wrong kind: expected <expected>, got <kind of
// value>", for an attribute that is present but of another kind than the rule needs.
Status WrongAttributeKind(std::string_view op, std::string_view name, std::string_view expected,
                          const AttributeValue& value);

}  // namespace accy::ir_internal

#endif  // ACCY_SRC_IR_TYPE_INFERENCE_H_
