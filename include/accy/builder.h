// accy::Builder and accy::FunctionBuilder: the C++ API for writing tensor programs.
//
// In the spirit of XLA's XlaBuilder and the original accy `semantic.Builder`: a Builder owns the
// module under construction; BeginFunction returns a FunctionBuilder that appends operations to a
// function body, one method per StableHLO op. Every method checks the op's type rules at once
// (VerifyOperation) and returns kInvalidArgument naming the op and the mismatch, leaving the
// function unchanged; nothing aborts. Finish verifies the whole module and hands it over.
// Builders are not thread-safe; one FunctionBuilder per function at a time.
#ifndef ACCY_BUILDER_H_
#define ACCY_BUILDER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "accy/tensor.h"
#include "accy/types.h"

namespace accy {

class FunctionBuilder;

// Builds the body of a region (reduce body, while cond/body, scatter update computation):
// `arguments` are the region's block arguments; the function must end by calling body.Return.
// While it runs, only `body` may append: the enclosing FunctionBuilders refuse every op.
using RegionBodyFn =
    std::function<Status(FunctionBuilder& body, std::span<Value* const> arguments)>;

// One region of an op being created generically: block argument types and its body.
struct RegionSpec {
  std::vector<TensorType> argument_types;
  RegionBodyFn body;
};

// StableHLO GatherDimensionNumbers (spec: "gather").
struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
};

// StableHLO ScatterDimensionNumbers (spec: "scatter").
struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
};

// The window of reduce_window and select_and_scatter (spec sections of the same names): one
// entry per input dim. window_dimensions is required; an empty list takes the spec's default
// (strides and dilations 1, padding (0, 0)). padding holds (low, high) per dim and may be
// negative. select_and_scatter has no dilations: non-empty ones are kInvalidArgument.
struct WindowOptions {
  std::vector<int64_t> window_dimensions;
  std::vector<int64_t> window_strides;
  std::vector<int64_t> base_dilations;
  std::vector<int64_t> window_dilations;
  std::vector<std::pair<int64_t, int64_t>> padding;
};

// StableHLO ConvDimensionNumbers (spec: "convolution"): which lhs (input), rhs (kernel) and
// result (output) dims are batch, feature and spatial. Spatial lists have one entry per spatial
// dim (rank - 2), in the window's order.
struct ConvDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
  bool operator==(const ConvDimensionNumbers&) const = default;
};

// The attributes of convolution (spec: "convolution"), one entry per spatial dim in each window
// list; an empty list means the spec's default for every spatial dim (strides 1, padding 0,
// dilations 1, no reversal). Padding is (low, high) per spatial dim, in elements, and may be
// negative. precision_config is empty or two of DEFAULT, HIGH, HIGHEST (accy always computes at
// full precision).
struct ConvolutionSpec {
  std::vector<int64_t> window_strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  std::vector<int64_t> lhs_dilation;
  std::vector<int64_t> rhs_dilation;
  std::vector<bool> window_reversal;
  ConvDimensionNumbers dimension_numbers;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  std::vector<std::string> precision_config;
  bool operator==(const ConvolutionSpec&) const = default;
};

// kernel_call attributes: the library kernel `target` at `version`, what it does with each
// operand, and for each result the operand it aliases (computes in place), if any. An aliased
// operand must have effect write or read_write, and no two results may alias the same operand.
struct KernelCallSpec {
  std::string target;
  int64_t version = 1;
  std::vector<OperandEffect> operand_effects;        // one per operand (empty: all read)
  std::vector<std::optional<int64_t>> result_aliases;  // one per result (empty: none alias)
  // The kernel's own attributes (the catalog's contracts, kernels/kernel_contracts.h: axis,
  // epsilon, strides, ...), appended to the op as they are; in StableHLO text each is written
  // `accy.<name>` on the custom_call. A name of the four above is kInvalidArgument.
  std::vector<NamedAttribute> attributes;
};

// Appends operations to one block (a function body or a region body). Only the innermost block
// being built accepts ops: while a region of an op is built, the builders of the enclosing blocks
// (and their copies) reject every op with kInvalidArgument, and the builder of a finished region
// rejects ops for good.
class FunctionBuilder {
 public:
  // Parameter `i` of the function (or argument `i` of the region); null when out of range or when
  // this builder's region is no longer being built, which any op given it reports as a null
  // operand.
  Value* Parameter(int64_t i) const;
  Function* function() const { return function_; }
  Block* block() const { return scopes_.back(); }

  // Generic creation used by every method below and by the StableHLO importer: checks that the
  // operands are visible here, builds the regions, verifies the op and appends it. An unknown
  // `kind` (a value outside OpKind) is kInvalidArgument.
  StatusOr<Operation*> CreateOp(OpKind kind, std::vector<Value*> operands,
                                std::vector<TensorType> result_types,
                                std::vector<NamedAttribute> attributes = {},
                                std::vector<RegionSpec> regions = {});

  // constant: `bytes` are row-major little-endian elements of `type` (i1: one byte each, 0 or 1).
  StatusOr<Value*> Constant(const TensorType& type, std::span<const uint8_t> bytes);
  StatusOr<Value*> Constant(const Tensor& value);
  // A rank-0 constant of `type` holding `value` converted as Tensor::Filled does.
  StatusOr<Value*> ConstantScalar(ElementType type, double value);

  // Elementwise unary ops (spec sections of the same names). Result type = operand type, except
  // is_finite (i1) and popcnt (same integer type).
  StatusOr<Value*> Abs(Value* x);
  StatusOr<Value*> Negate(Value* x);
  StatusOr<Value*> Sign(Value* x);
  StatusOr<Value*> Not(Value* x);
  StatusOr<Value*> Exponential(Value* x);
  StatusOr<Value*> ExponentialMinusOne(Value* x);
  StatusOr<Value*> Log(Value* x);
  StatusOr<Value*> LogPlusOne(Value* x);
  StatusOr<Value*> Logistic(Value* x);
  StatusOr<Value*> Tanh(Value* x);
  StatusOr<Value*> Sqrt(Value* x);
  StatusOr<Value*> Rsqrt(Value* x);
  StatusOr<Value*> Cbrt(Value* x);
  StatusOr<Value*> Sine(Value* x);
  StatusOr<Value*> Cosine(Value* x);
  StatusOr<Value*> Floor(Value* x);
  StatusOr<Value*> Ceil(Value* x);
  StatusOr<Value*> RoundNearestEven(Value* x);
  StatusOr<Value*> RoundNearestAfz(Value* x);
  StatusOr<Value*> IsFinite(Value* x);
  StatusOr<Value*> Popcnt(Value* x);
  // count_leading_zeros (spec "count_leading_zeros"), integer types; a zero gives the bit width.
  StatusOr<Value*> CountLeadingZeros(Value* x);
  // tan (spec "tan"), float types.
  StatusOr<Value*> Tan(Value* x);
  // CHLO elementwise ops (chlo dialect, ChloOps.td; docs/numerics.md "CHLO" for how each is
  // computed and its error bound), float types only, result type = operand type except the
  // is_*inf tests (i1). Errors: kInvalidArgument naming the op for a non-float operand.
  StatusOr<Value*> Asin(Value* x);
  StatusOr<Value*> Acos(Value* x);
  StatusOr<Value*> Atan(Value* x);
  StatusOr<Value*> Sinh(Value* x);
  StatusOr<Value*> Cosh(Value* x);
  StatusOr<Value*> Asinh(Value* x);
  StatusOr<Value*> Acosh(Value* x);
  StatusOr<Value*> Atanh(Value* x);
  StatusOr<Value*> Erf(Value* x);
  StatusOr<Value*> Erfc(Value* x);
  // Inverse of erf on [-1, 1]: +-inf at +-1, NaN outside.
  StatusOr<Value*> ErfInv(Value* x);
  // log|Gamma(x)|: +inf at the poles (0, -1, -2, ...).
  StatusOr<Value*> Lgamma(Value* x);
  // Gamma'(x)/Gamma(x): NaN at the poles (0, -1, -2, ...), as XLA.
  StatusOr<Value*> Digamma(Value* x);
  // exp(-|x|) I1(x), the exponentially scaled modified Bessel function of order 1.
  StatusOr<Value*> BesselI1e(Value* x);
  StatusOr<Value*> IsInf(Value* x);
  StatusOr<Value*> IsPosInf(Value* x);
  StatusOr<Value*> IsNegInf(Value* x);
  // reduce_precision (spec "reduce_precision"): `x` rounded (nearest even) to a float format of
  // `exponent_bits` (1..64) and `mantissa_bits` (0..64) and back to x's type; overflow gives
  // +-inf, values below the format's smallest normal give +-0, NaN stays NaN (+-inf when
  // mantissa_bits is 0). Errors: kInvalidArgument for a non-float `x` or bits out of range.
  StatusOr<Value*> ReducePrecision(Value* x, int64_t exponent_bits, int64_t mantissa_bits);
  // convert to another element type, same shape.
  StatusOr<Value*> Convert(Value* x, ElementType to);
  // bitcast_convert to `result_type` (spec rules on bit widths and the trailing dim).
  StatusOr<Value*> BitcastConvert(Value* x, const TensorType& result_type);

  // Elementwise binary ops: operands of one type; result of that type.
  StatusOr<Value*> Add(Value* lhs, Value* rhs);
  StatusOr<Value*> Subtract(Value* lhs, Value* rhs);
  StatusOr<Value*> Multiply(Value* lhs, Value* rhs);
  StatusOr<Value*> Divide(Value* lhs, Value* rhs);
  StatusOr<Value*> Remainder(Value* lhs, Value* rhs);
  StatusOr<Value*> Maximum(Value* lhs, Value* rhs);
  StatusOr<Value*> Minimum(Value* lhs, Value* rhs);
  StatusOr<Value*> Power(Value* lhs, Value* rhs);
  StatusOr<Value*> Atan2(Value* lhs, Value* rhs);
  // chlo.next_after: the representable value next to lhs in the direction of rhs (rhs when
  // they are equal, NaN when either is NaN); float types.
  StatusOr<Value*> NextAfter(Value* lhs, Value* rhs);
  // chlo.zeta (ChloOps.td): the Hurwitz zeta function zeta(x, q) = sum_{k>=0} (q + k)^-x of
  // `x` and `q` of one float type and shape (result: the same type; f16/bf16 computed in f32).
  // XLA's domain rules: +inf at x = 1; NaN for x < 1; for q <= 0 an integer, +inf when x is an
  // even integer, else NaN; NaN for q < 0 with x not an integer. Accuracy: docs/numerics.md
  // "CHLO". Errors: kInvalidArgument naming chlo.zeta for non-float operands or a type mismatch.
  StatusOr<Value*> Zeta(Value* x, Value* q);
  // chlo.polygamma (ChloOps.td): psi^(n)(x), the n-th derivative of digamma, with n a
  // non-negative integer held in the float tensor `n` (same type and shape as `x`; result the
  // same type): digamma(x) for n = 0, else (-1)^(n+1) n! zeta(n + 1, x); NaN for a negative or
  // non-integer n, and at x = 0, -1, -2, ... as zeta's and digamma's poles give (+inf for odd n).
  // Errors: as Zeta, naming chlo.polygamma.
  StatusOr<Value*> Polygamma(Value* n, Value* x);
  // chlo.mulhi: the high N bits of the 2N-bit product of two N-bit integers, element-wise
  // (a signed product for signed types, unsigned for unsigned ones); integer types, not i1.
  StatusOr<Value*> Mulhi(Value* lhs, Value* rhs);
  StatusOr<Value*> And(Value* lhs, Value* rhs);
  StatusOr<Value*> Or(Value* lhs, Value* rhs);
  StatusOr<Value*> Xor(Value* lhs, Value* rhs);
  StatusOr<Value*> ShiftLeft(Value* lhs, Value* rhs);
  StatusOr<Value*> ShiftRightLogical(Value* lhs, Value* rhs);
  StatusOr<Value*> ShiftRightArithmetic(Value* lhs, Value* rhs);
  // compare: `direction` is EQ, NE, GE, GT, LE or LT; `compare_type` is FLOAT, TOTALORDER,
  // SIGNED or UNSIGNED, or empty for the element type's default. Result is i1.
  StatusOr<Value*> Compare(Value* lhs, Value* rhs, std::string_view direction,
                           std::string_view compare_type = "");
  // select(pred, on_true, on_false): pred is i1, rank 0 or the operands' shape.
  StatusOr<Value*> Select(Value* pred, Value* on_true, Value* on_false);
  // clamp(min, operand, max): min/max rank 0 or the operand's shape.
  StatusOr<Value*> Clamp(Value* min, Value* x, Value* max);

  // broadcast_in_dim: operand dim i goes to result dim broadcast_dimensions[i] (size equal or 1).
  StatusOr<Value*> BroadcastInDim(Value* x, const TensorType& result_type,
                                  std::vector<int64_t> broadcast_dimensions);
  // reshape to `result_type` (same element type and count).
  StatusOr<Value*> Reshape(Value* x, const TensorType& result_type);
  StatusOr<Value*> Transpose(Value* x, std::vector<int64_t> permutation);
  StatusOr<Value*> Slice(Value* x, std::vector<int64_t> start_indices,
                         std::vector<int64_t> limit_indices, std::vector<int64_t> strides);
  StatusOr<Value*> Pad(Value* x, Value* padding_value, std::vector<int64_t> edge_padding_low,
                       std::vector<int64_t> edge_padding_high,
                       std::vector<int64_t> interior_padding);
  StatusOr<Value*> Concatenate(std::vector<Value*> inputs, int64_t dimension);
  StatusOr<Value*> Iota(const TensorType& result_type, int64_t iota_dimension);
  StatusOr<Value*> Reverse(Value* x, std::vector<int64_t> dimensions);
  StatusOr<Value*> Gather(Value* operand, Value* start_indices,
                          const GatherDimensionNumbers& dimension_numbers,
                          std::vector<int64_t> slice_sizes, bool indices_are_sorted = false);
  // scatter with an update computation over (current, update) scalar tensor pairs.
  StatusOr<std::vector<Value*>> Scatter(std::vector<Value*> inputs, Value* scatter_indices,
                                        std::vector<Value*> updates,
                                        const ScatterDimensionNumbers& dimension_numbers,
                                        RegionBodyFn update_computation,
                                        bool indices_are_sorted = false,
                                        bool unique_indices = false);
  // scatter of one input with a named update: "assign" (replace), "add", "multiply", "maximum",
  // "minimum".
  StatusOr<Value*> Scatter(Value* input, Value* scatter_indices, Value* updates,
                           const ScatterDimensionNumbers& dimension_numbers,
                           std::string_view update, bool indices_are_sorted = false,
                           bool unique_indices = false);
  // dynamic_slice: one rank-0 integer start index per operand dim.
  StatusOr<Value*> DynamicSlice(Value* operand, std::vector<Value*> start_indices,
                                std::vector<int64_t> slice_sizes);
  StatusOr<Value*> DynamicUpdateSlice(Value* operand, Value* update,
                                      std::vector<Value*> start_indices);

  // dot_general with an explicit result type (batch dims, then lhs free dims, then rhs free
  // dims). Argument order: contracting before batching dims.
  StatusOr<Value*> DotGeneral(Value* lhs, Value* rhs, const TensorType& result_type,
                              std::vector<int64_t> lhs_contracting_dimensions,
                              std::vector<int64_t> rhs_contracting_dimensions,
                              std::vector<int64_t> lhs_batching_dimensions,
                              std::vector<int64_t> rhs_batching_dimensions);

  // convolution (spec "convolution") of lhs (input) with rhs (kernel). The result shape is
  // inferred (spec C25); its element type is the operands' unless `result_element_type` is
  // given (same class: float from float, integer from integer, e.g. i8 x i8 -> i32). Errors
  // (kInvalidArgument) name the constraint broken, e.g. "convolution: dim 3 of lhs (input
  // feature) has size 6, not divisible by feature_group_count 4".
  StatusOr<Value*> Convolution(Value* lhs, Value* rhs, const ConvolutionSpec& spec,
                               std::optional<ElementType> result_element_type = std::nullopt);

  // Collectives (spec "Collective ops" and the sections of these names; builder_collectives.cc;
  // the program runs on the module's grid, Module::SetGrid). `groups.replica_groups` rows of one
  // length (empty: every replica in one group; pad ragged rows with -1 where the op allows),
  // `groups.channel_id` > 0 selects the cross-partition strategies, use_global_device_ids the
  // flattened ids (docs/collectives.md). `reducer` as Reduce's: "sum", "max", "min", "prod",
  // "and", "or". Errors: kInvalidArgument naming the rule (type_inference_collectives.cc).
  struct CollectiveGroups {
    std::vector<std::vector<int64_t>> replica_groups;
    int64_t channel_id = 0;
    bool use_global_device_ids = false;
  };
  StatusOr<Value*> AllReduce(Value* x, std::string_view reducer, const CollectiveGroups& groups);
  // result_type: x's with all_gather_dim times the group size.
  StatusOr<Value*> AllGather(Value* x, int64_t all_gather_dim, const TensorType& result_type,
                             const CollectiveGroups& groups);
  // result_type: x's with scatter_dimension divided by the group size.
  StatusOr<Value*> ReduceScatter(Value* x, std::string_view reducer, int64_t scatter_dimension,
                                 const TensorType& result_type, const CollectiveGroups& groups);
  // split_count = the group size; result: split_dimension / split_count, concat_dimension *
  // split_count.
  StatusOr<Value*> AllToAll(Value* x, int64_t split_dimension, int64_t concat_dimension,
                            int64_t split_count, const CollectiveGroups& groups);
  // (source, target) pairs of replica ids (partition ids with channel_id > 0).
  StatusOr<Value*> CollectivePermute(Value* x,
                                     std::vector<std::pair<int64_t, int64_t>> source_target_pairs,
                                     int64_t channel_id = 0);
  StatusOr<Value*> CollectiveBroadcast(Value* x, const CollectiveGroups& groups);
  // tensor<ui32> results.
  StatusOr<Value*> ReplicaId();
  StatusOr<Value*> PartitionId();

  // reduce of one input with a named reducer: "sum", "max", "min", "prod", "and", "or"
  // (the body is the matching add/maximum/minimum/multiply/and/or).
  StatusOr<Value*> Reduce(Value* x, Value* init, const TensorType& result_type,
                          std::string_view reducer, std::vector<int64_t> dimensions);
  // reduce of N inputs with N init values and a body over 2N rank-0 tensors.
  StatusOr<std::vector<Value*>> Reduce(std::vector<Value*> inputs, std::vector<Value*> inits,
                                       std::vector<int64_t> dimensions, RegionBodyFn body);
  // reduce_window (spec "reduce_window") of N inputs of one shape with N rank-0 init values and a
  // body over 2N rank-0 tensors (accumulators, then inputs); results have the shape of the
  // windows (builder_window.cc). Errors: kInvalidArgument naming the violated constraint.
  StatusOr<std::vector<Value*>> ReduceWindow(std::vector<Value*> inputs, std::vector<Value*> inits,
                                             const WindowOptions& window, RegionBodyFn body);
  // reduce_window of one input with a named reducer: "sum", "max", "min", "prod", "and", "or".
  StatusOr<Value*> ReduceWindow(Value* x, Value* init, const WindowOptions& window,
                                std::string_view reducer);
  // select_and_scatter (spec "select_and_scatter"): `select` over two rank-0 tensors of the
  // operand's element type returns a tensor<i1> (true keeps the current selection), `scatter`
  // combines (result element, source element). The result has the operand's type.
  StatusOr<Value*> SelectAndScatter(Value* operand, Value* source, Value* init,
                                    const WindowOptions& window, RegionBodyFn select,
                                    RegionBodyFn scatter);
  // sort (spec "sort"): sorts the N `inputs` (one shape, any element types) together along
  // `dimension` (-rank <= dimension < rank; negative counts from the end) by `comparator`, a
  // region over 2N rank-0 tensors (lhs0, rhs0, lhs1, rhs1, ...) of the inputs' element types
  // returning tensor<i1>: true when the lhs elements go before the rhs elements. It should be a
  // strict weak order (the spec leaves other comparators' results implementation-defined); with
  // `is_stable` equivalent elements keep their order (accy always sorts stably). Results have
  // the inputs' types. Errors: kInvalidArgument "sort: ..." naming the broken constraint (no
  // inputs, input i of another shape, dimension out of range, a comparator of the wrong arity,
  // argument types or result type).
  StatusOr<std::vector<Value*>> Sort(std::vector<Value*> inputs, int64_t dimension,
                                     RegionBodyFn comparator, bool is_stable = false);
  // sort of one input with the comparator `compare <direction>, lhs, rhs` (`direction` LT for
  // ascending or GT for descending; floats compare in TOTALORDER, so -NaN < -inf < ... < -0 <
  // +0 < ... < +inf < +NaN), stable. Errors as above; kInvalidArgument for another direction.
  StatusOr<Value*> Sort(Value* x, int64_t dimension, std::string_view direction);
  // top_k (CHLO "top_k"): along the last dim of `x` (rank >= 1), the k largest elements in
  // TOTALORDER (floats: +NaN first, -NaN last), descending, equal elements by lower index first;
  // results {values (x's element type), indices (i32)}, both x's shape with last dim k.
  // Errors: kInvalidArgument "chlo.top_k: ..." for rank 0 or k outside [0, last dim size].
  StatusOr<std::vector<Value*>> TopK(Value* x, int64_t k);
  // cumsum (accy): inclusive prefix sum along `dimension`, same type as `x`.
  StatusOr<Value*> Cumsum(Value* x, int64_t dimension);
  // triangular_solve (spec "triangular_solve"): per batch, the x that solves op(a) * x = b
  // (`left_side`) or x * op(a) = b, where a is [batch..., M, M], b is [batch..., M, N] when
  // `left_side`, else [batch..., N, M], and the result has b's type. Only the `lower` (else
  // upper) triangle of a is read; with `unit_diagonal` its diagonal is taken as 1 and not read.
  // op(a) is a for `transpose_a` "NO_TRANSPOSE", its transpose for "TRANSPOSE" and "ADJOINT"
  // (the conjugate transpose, the same for real types). Element types f16, bf16, f32, f64 (a
  // and b alike); a zero on a read diagonal divides by zero (IEEE inf/NaN; the spec leaves a
  // singular a undefined). Errors: kInvalidArgument "triangular_solve: ..." naming the broken
  // constraint (a non-float or mismatched element type, rank below 2 or unequal ranks, unequal
  // batch dims, a non-square a, b's solved dim not M, another transpose_a).
  StatusOr<Value*> TriangularSolve(Value* a, Value* b, bool left_side, bool lower,
                                   bool unit_diagonal,
                                   std::string_view transpose_a = "NO_TRANSPOSE");
  // case (spec "case"): runs branches[index] (each takes no arguments and returns values of
  // `result_types`), or the last branch when index is outside [0, branches.size()). `index` is a
  // tensor<i32>. Branch bodies may read values of the enclosing function. Errors:
  // kInvalidArgument for no branch, an index of another type, or a branch returning other types
  // ("case: branch 1 returns tensor<2xf32> as value 0, expected tensor<2xi32>").
  StatusOr<std::vector<Value*>> Case(Value* index, std::vector<TensorType> result_types,
                                     std::vector<RegionBodyFn> branches);
  // if (spec "if"): true_branch when pred (a tensor<i1>) is true, else false_branch. Built as
  // case(convert(not(pred)) : tensor<i32>, {true_branch, false_branch}). Errors as Case's, and
  // kInvalidArgument for a pred that is not tensor<i1>.
  StatusOr<std::vector<Value*>> If(Value* pred, std::vector<TensorType> result_types,
                                   RegionBodyFn true_branch, RegionBodyFn false_branch);
  // rng_bit_generator (spec "rng_bit_generator"): {output_state, output}, where output has
  // `output_type` (any shape; an integer or float element type) filled with random bits by
  // `rng_algorithm` "THREE_FRY", "PHILOX" or "DEFAULT" (PHILOX) from `initial_state`, a 1-D ui64
  // tensor of 2 words (THREE_FRY) or 2 or 3 (PHILOX, DEFAULT), and output_state has its type.
  // The bits are XLA:CPU's (docs/numerics.md "rng_bit_generator"). Errors: kInvalidArgument
  // "rng_bit_generator: ..." naming the broken constraint (another algorithm, a state that is
  // not 1-D ui64 or of the wrong size, an i1 output).
  StatusOr<std::vector<Value*>> RngBitGenerator(Value* initial_state,
                                                std::string_view rng_algorithm,
                                                const TensorType& output_type);

  // lapack (accy; ops.def): the Cholesky factorization as JAX's CPU lowering calls it
  // (custom_call @lapack_spotrf_ffi / @lapack_dpotrf_ffi, LAPACK xPOTRF). `a` is [batch..., N,
  // N] f32 or f64 (the target's prefix must match); only its `lower` (else upper) triangle is
  // read. Results: factor (a's type: L with a = L L^T in the lower triangle, or U with a = U^T
  // U in the upper; the other triangle keeps a's values, as LAPACK leaves it) and info
  // ([batch...] i32: 0, or the 1-based order of the first leading minor that is not positive
  // definite, where the factor's values are unspecified). Errors: kInvalidArgument "lapack
  // @<target>: ..." naming the broken rule (element type, rank, non-square a).
  StatusOr<std::vector<Value*>> Potrf(Value* a, bool lower);
  // lapack (accy; ops.def): the LU factorization with partial pivoting as JAX's CPU lowering
  // calls it (custom_call @lapack_sgetrf_ffi / @lapack_dgetrf_ffi, LAPACK xGETRF): P a = L U for
  // `a` [batch..., M, N] f32 or f64. Results: lu (a's type: U on and above the diagonal, L's
  // multipliers below it, L's unit diagonal implied), pivots ([batch..., min(M, N)] i32,
  // 1-based: row i was interchanged with row pivots[i] - 1, in order) and info ([batch...] i32:
  // 0, or the 1-based index of the first exactly zero diagonal element of U; the factorization
  // is complete either way). Errors: kInvalidArgument "lapack @<target>: ..." naming the broken
  // rule (element type, rank).
  StatusOr<std::vector<Value*>> Getrf(Value* a);
  // lapack (accy; ops.def): the Householder QR factorization as JAX's CPU lowering calls it
  // (custom_call @lapack_sgeqrf_ffi / @lapack_dgeqrf_ffi, LAPACK xGEQRF) of `a` [batch..., M, N]
  // f32 or f64. Results: a's type (R on and above the diagonal; below it, reflector i's vector v
  // with v[i] = 1 implied) and tau ([batch..., min(M, N)]: H(i) = I - tau[i] v v^T, LAPACK's
  // xLARFG convention: R[i][i] = -sign(alpha) norm, tau 0 when the column below is already 0).
  // Errors: kInvalidArgument "lapack @<target>: ..." naming the broken rule.
  StatusOr<std::vector<Value*>> Geqrf(Value* a);
  // lapack (accy; ops.def): Q = H(0) H(1) ... H(K-1), its first N columns, from Geqrf's
  // reflectors (custom_call @lapack_sorgqr_ffi / @lapack_dorgqr_ffi, LAPACK xORGQR): `a`
  // [batch..., M, N] holds the reflectors below the diagonal of its first K columns (nothing else
  // is read), `tau` [batch..., K] of a's type, M >= N >= K. Result: q of a's type, orthonormal
  // columns. Errors: kInvalidArgument "lapack @<target>: ..." naming the broken rule.
  StatusOr<Value*> Orgqr(Value* a, Value* tau);
  // lapack (accy; ops.def): the symmetric eigendecomposition as JAX's CPU lowering calls it
  // (custom_call @lapack_ssyevd_ffi / @lapack_dsyevd_ffi, LAPACK xSYEVD) of `a` [batch..., N, N]
  // f32 or f64, of which only the `lower` (else upper) triangle is read. Results: v (a's type:
  // column j is the unit eigenvector of w[j] when `compute_vectors`, each unique only up to sign
  // (and within repeated eigenvalues up to rotation); unspecified otherwise), w ([batch..., N],
  // ascending eigenvalues) and info ([batch...] i32: 0, or LAPACK's count of what did not
  // converge). Errors: kInvalidArgument "lapack @<target>: ..." naming the broken rule.
  StatusOr<std::vector<Value*>> Syevd(Value* a, bool lower, bool compute_vectors = true);
  // lapack (accy; ops.def): the singular value decomposition a = u diag(s) vt as JAX's CPU
  // lowering calls it (custom_call @lapack_sgesdd_ffi / @lapack_dgesdd_ffi, LAPACK xGESDD;
  // jax.numpy.linalg.svd) of `a` [batch..., M, N] f32 or f64, K = min(M, N). mode (xGESDD's
  // JOBZ) is 'A' when `compute_uv` and `full_matrices`, 'S' when only `compute_uv`, else 'N'.
  // Results: a's type (accy returns a unchanged; LAPACK destroys it and JAX never reads it), s
  // ([batch..., K], descending, >= 0), u ([batch..., M, M], or [batch..., M, K] without
  // `full_matrices`: orthonormal columns), vt ([batch..., N, N] or [batch..., K, N]: orthonormal
  // rows) and info ([batch...] i32: 0; -4 when a holds a NaN, as LAPACK 3.10+ says, with s, u and
  // vt NaN; > 0 when xGESDD's divide and conquer did not converge). Column i of u and row i of
  // vt are unique only up to a common sign (and within repeated singular values up to rotation;
  // columns past K of a full u and rows past K of a full vt are any orthonormal completion).
  // Without `compute_uv`, u and vt are zeros. Errors: kInvalidArgument "lapack @<target>: ..."
  // naming the broken rule (element type, rank).
  StatusOr<std::vector<Value*>> Gesdd(Value* a, bool full_matrices, bool compute_uv = true);
  // while: `cond` returns a tensor<i1>, `body` returns new loop-carried values of the same types.
  StatusOr<std::vector<Value*>> While(std::vector<Value*> initial_values, RegionBodyFn cond,
                                      RegionBodyFn body);
  // batch_norm_inference (spec "batch_norm_inference"): scale * (operand - mean) /
  // sqrt(variance + epsilon) + offset, the 1-D scale, offset, mean and variance (dim
  // feature_index of the operand elements each) broadcast along feature_index. Float types, one
  // element type for all. Errors: kInvalidArgument naming the broken constraint
  // ("batch_norm_inference: mean has type tensor<3xf32>, expected tensor<4xf32> (dim 1 of the
  // operand, the feature_index)"; a feature_index outside [0, rank)).
  StatusOr<Value*> BatchNormInference(Value* operand, Value* scale, Value* offset, Value* mean,
                                      Value* variance, double epsilon, int64_t feature_index);
  // batch_norm_training (spec "batch_norm_training"): {output, batch_mean, batch_var}: the mean
  // and (biased) variance over every dim but feature_index, and the operand normalized with
  // them as batch_norm_inference. Errors as BatchNormInference.
  StatusOr<std::vector<Value*>> BatchNormTraining(Value* operand, Value* scale, Value* offset,
                                                  double epsilon, int64_t feature_index);
  // batch_norm_grad (spec "batch_norm_grad"): {grad_operand, grad_scale, grad_offset} of
  // batch_norm_training at (operand, scale, mean, variance) for grad_output (the operand's
  // shape). Errors as BatchNormInference.
  StatusOr<std::vector<Value*>> BatchNormGrad(Value* operand, Value* scale, Value* mean,
                                              Value* variance, Value* grad_output,
                                              double epsilon, int64_t feature_index);
  // kernel_call (accy): a library kernel; see KernelCallSpec.
  StatusOr<Operation*> KernelCall(std::vector<Value*> operands,
                                  std::vector<TensorType> result_types,
                                  const KernelCallSpec& spec);

  // Ends the block with `return` (function results, or region results).
  Status Return(std::vector<Value*> values);
  // kInvalidArgument when the block has no return yet.
  Status Finish();

 private:
  friend class Builder;
  FunctionBuilder(Function* function, std::vector<Block*> scopes,
                  std::shared_ptr<std::vector<Block*>> open_blocks)
      : function_(function), scopes_(std::move(scopes)), open_blocks_(std::move(open_blocks)) {}
  StatusOr<Value*> Unary(OpKind kind, Value* x);
  StatusOr<Value*> Binary(OpKind kind, Value* lhs, Value* rhs);
  StatusOr<std::vector<Value*>> BatchNorm(OpKind kind, std::vector<Value*> operands,
                                          double epsilon, int64_t feature_index);
  Status CheckOperands(OpKind kind, std::span<Value* const> operands) const;
  // OK when block() is the innermost block being built (see the class comment).
  Status CheckBlockOpen(OpKind kind) const;

  Function* function_;
  std::vector<Block*> scopes_;  // enclosing blocks, innermost last: values here are visible
  // The blocks being built, outermost first: the function body, then the body of each region
  // under construction. Shared by the function's builder, its copies and its region builders.
  std::shared_ptr<std::vector<Block*>> open_blocks_;
};

// Owns a module under construction.
class Builder {
 public:
  explicit Builder(std::string module_name = "");

  // A tensor type; errors as TensorType::Create.
  StatusOr<TensorType> Type(ElementType element_type, std::vector<int64_t> dims) const;
  // Starts function `name`; kInvalidArgument if the name is empty or taken.
  StatusOr<FunctionBuilder> BeginFunction(std::string name, std::vector<TensorType> parameters,
                                          std::vector<TensorType> results);
  // Verifies the module (Verify) and hands it over; the Builder is empty afterwards.
  StatusOr<std::unique_ptr<Module>> Finish();

 private:
  std::unique_ptr<Module> module_;
};

}  // namespace accy

#endif  // ACCY_BUILDER_H_
