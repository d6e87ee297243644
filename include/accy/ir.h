// The accy tensor IR: modules, functions, regions, blocks, operations and SSA values.
//
// The model is MLIR's, reduced to what accy needs: a Module owns Functions; a Function owns one
// Region whose entry Block holds the parameters (block arguments) and the operations; an
// Operation owns its result Values and nested Regions (reduce bodies, while cond/body, scatter
// update computations). Every Value keeps a use list, kept right by every edit (Create,
// SetOperand, ReplaceAllUsesWith, Block's insert/remove/erase, destruction); graph passes edit a
// copy made by Module::Clone. Op names, attributes and semantics are
// StableHLO's (https://github.com/openxla/stablehlo/blob/main/docs/spec.md); `cumsum` and
// `kernel_call` are accy's own. The IR is built through accy::Builder (builder.h), checked by
// Verify and printed as StableHLO text by PrintModule. Not thread-safe for mutation; a finished
// module may be read from many threads.
#ifndef ACCY_IR_H_
#define ACCY_IR_H_

#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "accy/status.h"
#include "accy/types.h"

namespace accy {

class Block;
class Function;
class Module;
class Operation;
class Region;

// Every operation accy knows: one enumerator per row of the op table (accy/ops.def), in its
// order. The names (OpName) are StableHLO's without the `stablehlo.` prefix.
enum class OpKind : uint16_t {
#define ACCY_OP(kind, ...) kind,
#include "accy/ops.def"
#undef ACCY_OP
};

// Operands, attributes and regions of each op (names as in the StableHLO spec):
//   constant             attrs: value (DenseElements)
//   unary/binary ops     operands as the spec; no attributes
//   compare              attrs: comparison_direction ("EQ","NE","GE","GT","LE","LT"),
//                        compare_type (optional: "FLOAT","TOTALORDER","SIGNED","UNSIGNED")
//   select               operands: pred, on_true, on_false
//   clamp                operands: min, operand, max
//   convert              result type gives the new element type
//   bitcast_convert      result type gives element type and shape
//   broadcast_in_dim     attrs: broadcast_dimensions
//   reshape              result type gives the shape
//   transpose            attrs: permutation
//   slice                attrs: start_indices, limit_indices, strides
//   pad                  operands: operand, padding_value (rank 0);
//                        attrs: edge_padding_low, edge_padding_high, interior_padding
//   concatenate          operands: inputs...; attrs: dimension
//   iota                 no operands; attrs: iota_dimension
//   reverse              attrs: dimensions
//   gather               operands: operand, start_indices; attrs: offset_dims,
//                        collapsed_slice_dims, operand_batching_dims,
//                        start_indices_batching_dims, start_index_map, index_vector_dim,
//                        slice_sizes, indices_are_sorted (bool)
//   scatter              operands: inputs..., scatter_indices, updates... (N inputs, N updates);
//                        attrs: update_window_dims, inserted_window_dims, input_batching_dims,
//                        scatter_indices_batching_dims, scatter_dims_to_operand_dims,
//                        index_vector_dim, indices_are_sorted, unique_indices (bools);
//                        region 0: update_computation over 2N rank-0 tensors
//   dynamic_slice        operands: operand, start_indices... (rank-0 integers); attrs: slice_sizes
//   dynamic_update_slice operands: operand, update, start_indices...
//   dot_general          operands: lhs, rhs; attrs: lhs_batching_dimensions,
//                        rhs_batching_dimensions, lhs_contracting_dimensions,
//                        rhs_contracting_dimensions, precision_config (optional strings)
//   convolution          operands: lhs (input), rhs (kernel); attrs: input_batch_dimension,
//                        input_feature_dimension, kernel_input_feature_dimension,
//                        kernel_output_feature_dimension, output_batch_dimension,
//                        output_feature_dimension (ints), input_spatial_dimensions,
//                        kernel_spatial_dimensions, output_spatial_dimensions (int lists);
//                        optional (absent = the spec's default): window_strides, padding
//                        (low0, high0, low1, high1, ...: the spec's [N-2, 2] tensor row-major),
//                        lhs_dilation, rhs_dilation, window_reversal (0/1 per spatial dim)
//                        (int lists), feature_group_count, batch_group_count (ints),
//                        precision_config (strings)
//   reduce               operands: inputs..., init_values... (N each); attrs: dimensions;
//                        region 0: body over 2N rank-0 tensors (accumulators first, then inputs)
//   reduce_window        operands: inputs..., init_values... (N each); attrs: window_dimensions,
//                        window_strides, base_dilations, window_dilations (one entry per input
//                        dim; absent: all 1), padding (2 * rank entries, low and high of dim 0,
//                        then of dim 1, ...: the spec's [rank, 2] tensor in row-major order;
//                        absent: all 0); region 0: body as reduce's
//   select_and_scatter   operands: operand, source, init_value (rank 0); attrs: window_dimensions,
//                        window_strides, padding (as reduce_window); region 0: select over two
//                        rank-0 tensors returning tensor<i1>, region 1: scatter over two
//   sort                 operands: inputs... (one shape); attrs: dimension (in [-rank, rank); a
//                        negative one counts from the end), is_stable (bool, absent: false);
//                        region 0: comparator over 2N rank-0 tensors (lhs0, rhs0, lhs1, ...)
//                        returning tensor<i1>; results: the inputs' types
//   top_k                operands: operand (rank >= 1); attrs: k (0 <= k <= last dim); results:
//                        values (the operand's type, last dim k) and indices (i32); prints as
//                        chlo.top_k
//   cumsum               operands: operand; attrs: dimension
//   triangular_solve     operands: a [batch..., M, M], b [batch..., M, N] when left_side, else
//                        [batch..., N, M] (float); attrs: left_side, lower, unit_diagonal
//                        (bools), transpose_a ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT": ADJOINT
//                        is TRANSPOSE for real types); result: b's type
//   lapack               operands and results: those of the routine named by call_target_name
//                        (src/ir/lapack_targets.h; potrf: a [batch..., N, N] -> factor (a's
//                        type), info [batch...] i32; getrf: a [batch..., M, N] -> lu (a's
//                        type), pivots [batch..., min(M, N)] i32 (1-based), info [batch...]
//                        i32; geqrf: a -> a's type, tau [batch..., min(M, N)]; orgqr: a
//                        [batch..., M, N], tau [batch..., K], M >= N >= K -> q (a's type);
//                        syevd: a [batch..., N, N] -> v (a's type), w [batch..., N], info;
//                        gesdd: a [batch..., M, N] -> a's type, s [batch..., K], u
//                        [batch..., M, M or K], vt [batch..., N or K, N], info, K = min(M, N));
//                        attrs: call_target_name (string, e.g. "lapack_spotrf_ffi"),
//                        potrf: uplo (int, 'L' = 76 or 'U' = 85), syevd: mode ('V' = 86 or
//                        'N' = 78), uplo; gesdd: mode ('A' = 65, 'S' = 83 or 'N' = 78); prints as
//                        stablehlo.custom_call @<call_target_name> with JAX's backend_config
//                        and column-major operand/result layouts
//   rng_bit_generator    operands: initial_state (1-D ui64: 2 words for THREE_FRY, 2 or 3 for
//                        PHILOX and DEFAULT); attrs: rng_algorithm ("DEFAULT", "THREE_FRY",
//                        "PHILOX"); results: output_state (initial_state's type) and output
//                        (any integer or float type, given by the caller)
//   while                operands: initial values; results of the same types;
//                        region 0: cond (returns tensor<i1>), region 1: body
//   kernel_call          operands: any; attrs: call_target_name (string), version (int),
//                        operand_effects (strings: read, write, read_write, none; one per
//                        operand; absent: all read), result_aliases (ints: operand index per
//                        result, -1 = none; the operand must be write or read_write, and no two
//                        results alias one operand)
//   return               operands: the values returned by the function or region

// Every OpKind, in enum (and op table) order.
inline constexpr OpKind kAllOpKinds[] = {
#define ACCY_OP(kind, ...) OpKind::kind,
#include "accy/ops.def"
#undef ACCY_OP
};
inline constexpr int kNumOpKinds = static_cast<int>(std::size(kAllOpKinds));

// What an op is, for the predicates below and for grouping ops in passes and dumps.
enum class OpCategory : uint8_t {
  kConstant,
  kElementwiseUnary,
  kElementwiseBinary,
  kElementwiseTernary,
  kShape,        // shape and data movement (broadcast_in_dim .. dynamic_update_slice)
  kContraction,  // dot_general, convolution
  kReduction,    // reduce, cumsum
  kLinearAlgebra,  // triangular_solve, lapack
  kRandom,         // rng_bit_generator
  kCollective,     // replica_id .. collective_reduce (across the processes of a grid)
  kControl,      // while
  kCall,         // kernel_call
  kTerminator,   // return
  kInvalid,      // only the row GetOpInfo gives a value outside OpKind
};
// "elementwise_unary", "shape", ... (the enumerator without k, in snake case).
std::string_view OpCategoryName(OpCategory category);

// Sets of element types, as the StableHLO spec's constraints name them ("tensor of integer or
// floating-point type"). Bit flags; the named unions are the ones the op table uses.
enum class ElementClass : uint8_t {
  kBool = 1,      // i1
  kSigned = 2,    // i8 .. i64
  kUnsigned = 4,  // u8 .. u64
  kFloat = 8,     // f16, bf16, f32, f64
  kInteger = kSigned | kUnsigned,
  kSignedOrFloat = kSigned | kFloat,
  kBoolOrInteger = kBool | kInteger,
  kNumeric = kInteger | kFloat,
  kAny = kBool | kNumeric,
};
// Whether `type` is in `classes` (i1 is kBool, not kUnsigned).
bool ElementClassContains(ElementClass classes, ElementType type);

// Operand or result count of an op that takes any number (concatenate, reduce, while, ...).
inline constexpr int kVariadic = -1;

// One row of the op table (accy/ops.def, which documents every column), less the work column,
// which is the schedule's (WorkKind is not part of the public API).
struct OpInfo {
  OpKind kind;
  std::string_view name;          // OpName(kind)
  OpCategory category;
  int operands;                   // fixed count, or kVariadic
  int results;                    // fixed count, or kVariadic
  ElementClass element_classes;   // what the type rule accepts (see ops.def)
  int regions;                    // exact region count
  bool pure;                      // no side effect of its own (not kernel_call)
  bool commutative;               // add, multiply, maximum, minimum, and, or, xor
};
// The row of `kind`. A value cast from an integer outside OpKind gets a row of its own (name
// "<invalid op kind>", category kInvalid, no operands, results or regions, work kNoLowering)
// rather than a read past the table; Verify rejects such ops. Never fails; the table is
// immutable, so lookups are thread-safe.
const OpInfo& GetOpInfo(OpKind kind);

// "add", "dot_general", "kernel_call", ... (the op table's name column); "<invalid op kind>" for a
// value outside OpKind.
std::string_view OpName(OpKind kind);
// Inverse of OpName (without the "stablehlo." prefix); kInvalidArgument for an unknown name.
StatusOr<OpKind> ParseOpKind(std::string_view name);
// The name an op has in MLIR text: "stablehlo.add", "chlo.erf" (a table name with a dialect
// prefix is already qualified).
std::string QualifiedOpName(OpKind kind);
// Inverse of QualifiedOpName for the names an importer meets: "stablehlo.<name>" for a StableHLO
// row, the table's "chlo.<name>" for a CHLO row, and "chlo.tan" for tan (CHLO's tan is
// StableHLO's). kInvalidArgument "unknown op '<name>'" for anything else, including
// "stablehlo.chlo.erf" and the bare "add".
StatusOr<OpKind> ParseQualifiedOpKind(std::string_view name);

// The op table's category: abs .. bitcast_convert (bitcast only same width, see IsElementwise),
// add .. compare, select and clamp. False for an invalid kind.
bool IsElementwiseUnary(OpKind kind);
bool IsElementwiseBinary(OpKind kind);
bool IsElementwiseTernary(OpKind kind);
// Ops computed independently per element of a same-shape iteration space: unary, binary and
// ternary ops above (bitcast_convert counts only when both widths are equal).
bool IsElementwise(const Operation& op);

// Values of kernel_call's `operand_effects` attribute: what the kernel does with each operand.
enum class OperandEffect : uint8_t { kRead, kWrite, kReadWrite, kNone };
// "read", "write", "read_write", "none"; "<invalid operand effect>" for a value outside the enum.
std::string_view OperandEffectName(OperandEffect effect);
StatusOr<OperandEffect> ParseOperandEffect(std::string_view name);

// A dense constant payload: row-major little-endian bytes of `type` (i1: one byte, 0 or 1).
struct DenseElements {
  TensorType type;
  std::vector<uint8_t> bytes;
  bool operator==(const DenseElements& other) const {
    return type == other.type && bytes == other.bytes;
  }
};

// Attribute values. StableHLO attribute kinds map as: integer attr -> int64_t, float -> double,
// bool -> bool, string/enum (comparison_direction "LT", compare_type "FLOAT") -> std::string,
// array<i64>/dense<i64> index lists -> std::vector<int64_t>, string arrays (precision_config,
// operand_effects) -> std::vector<std::string>, dense<...> tensors -> DenseElements.
using AttributeValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>,
                                    std::vector<std::string>, DenseElements>;

struct NamedAttribute {
  std::string name;
  AttributeValue value;
};

// A string attribute the StableHLO importer puts on every op it inlined from a `composite`'s
// decomposition (spec "composite"): the composite's name ("my.gelu"; the innermost one for
// nested composites). It changes no value; SchedulePlan::ToText lists the names of an item's
// ops (`composites=[...]`), and CSE keeps ops of different composites apart.
inline constexpr std::string_view kCompositeAttribute = "accy.composite";

// One use of a Value: operand `operand_index` of `user`.
struct Use {
  Operation* user;
  int64_t operand_index;
};

// An SSA value: an operation result or a block argument. Owned by its operation or block.
class Value {
 public:
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  const TensorType& type() const { return type_; }
  // The operation whose result this is, or null for a block argument.
  Operation* defining_op() const { return defining_op_; }
  // The block whose argument this is, or null for an operation result.
  Block* owner_block() const { return owner_block_; }
  // Result number or argument number.
  int64_t index() const { return index_; }
  // Dense number of this value within its function, in [0, Function::value_id_bound()), given
  // when the value joins a function (block arguments of the body at creation; op results and
  // nested block arguments when their op is appended to a block of the function); -1 while
  // detached. Analyses index per-value arrays with it. Ops inserted later get ids above every
  // earlier one (unique, not in program order) until Function::Renumber.
  int64_t id() const { return id_; }
  bool is_block_argument() const { return owner_block_ != nullptr; }
  const std::vector<Use>& uses() const { return uses_; }
  bool has_uses() const { return !uses_.empty(); }
  // Points every use of this value at `replacement` (same type required; ACCY_CHECKed).
  void ReplaceAllUsesWith(Value* replacement);

 private:
  friend class Operation;
  friend class Block;
  friend class Function;
  Value(TensorType type, Operation* op, Block* block, int64_t index)
      : type_(std::move(type)), defining_op_(op), owner_block_(block), index_(index) {}
  void AddUse(Operation* user, int64_t operand_index);
  void RemoveUse(Operation* user, int64_t operand_index);

  TensorType type_;
  Operation* defining_op_;
  Block* owner_block_;
  int64_t index_;
  int64_t id_ = -1;
  std::vector<Use> uses_;
};

// A region: a list of blocks (accy uses exactly one block per region).
class Region {
 public:
  explicit Region(Operation* parent_op = nullptr, Function* parent_function = nullptr)
      : parent_op_(parent_op), parent_function_(parent_function) {}
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  // Appends a block with arguments of `arg_types`.
  Block* AddBlock(std::span<const TensorType> arg_types);
  const std::vector<std::unique_ptr<Block>>& blocks() const { return blocks_; }
  Block* entry_block() const { return blocks_.empty() ? nullptr : blocks_.front().get(); }
  Operation* parent_op() const { return parent_op_; }
  Function* parent_function() const { return parent_function_; }

 private:
  Operation* parent_op_;
  Function* parent_function_;
  std::vector<std::unique_ptr<Block>> blocks_;
};

// A straight-line list of operations with block arguments; the last op is the terminator
// (`return`) once the block is complete.
class Block {
 public:
  explicit Block(Region* parent) : parent_(parent) {}
  ~Block();
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  Value* AddArgument(const TensorType& type);
  int64_t num_arguments() const { return static_cast<int64_t>(arguments_.size()); }
  Value* argument(int64_t i) const { return arguments_[static_cast<size_t>(i)].get(); }
  std::vector<Value*> arguments() const;

  const std::vector<std::unique_ptr<Operation>>& operations() const { return operations_; }
  Operation* terminator() const;  // the trailing return op, or null
  Region* parent() const { return parent_; }

  // Appends `op` (detached), taking ownership; returns it.
  Operation* Append(std::unique_ptr<Operation> op);
  // Inserts `op` (detached) just before / after `anchor`, an op of this block (ACCY_CHECKed); a
  // null anchor means the end of the block for InsertBefore and the front for InsertAfter.
  // Returns `op`. An op joining a function gets fresh ids (Value::id, Operation::id) larger than
  // every id before: after insertions ids are unique but no longer in program order until
  // Function::Renumber.
  Operation* InsertBefore(const Operation* anchor, std::unique_ptr<Operation> op);
  Operation* InsertAfter(const Operation* anchor, std::unique_ptr<Operation> op);
  // Detaches `op`, an op of this block (ACCY_CHECKed), and hands it back: it keeps its operands
  // (and so its places in their use lists) and its results' uses; its ids, and those of
  // everything nested in it, are cleared (-1) until it joins a function again.
  std::unique_ptr<Operation> Remove(Operation* op);
  // Removes and destroys `op`, an op of this block whose results have no uses (ACCY_CHECKed);
  // its operands' use lists lose it.
  void Erase(Operation* op);
  // Removes and destroys the last operation (used to roll back a rejected op). Its results must
  // have no uses (ACCY_CHECKed).
  void EraseLast();
  // Position of `op` in operations(), or -1 when it is not an op of this block.
  int64_t IndexOf(const Operation* op) const;

 private:
  friend class Function;
  Region* parent_;
  std::vector<std::unique_ptr<Value>> arguments_;
  std::vector<std::unique_ptr<Operation>> operations_;
};

// An operation: kind, operands, results, attributes and regions.
class Operation {
 public:
  // Creates a detached operation; operands are registered in their use lists at once.
  // Operands must be non-null (ACCY_CHECKed; the builder rejects null operands before this).
  static std::unique_ptr<Operation> Create(OpKind kind, std::vector<Value*> operands,
                                           std::span<const TensorType> result_types,
                                           std::vector<NamedAttribute> attributes = {});
  ~Operation();
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  OpKind kind() const { return kind_; }
  std::string_view name() const { return OpName(kind_); }

  int64_t num_operands() const { return static_cast<int64_t>(operands_.size()); }
  Value* operand(int64_t i) const { return operands_[static_cast<size_t>(i)]; }
  const std::vector<Value*>& operands() const { return operands_; }
  void SetOperand(int64_t i, Value* value);

  int64_t num_results() const { return static_cast<int64_t>(results_.size()); }
  Value* result(int64_t i = 0) const { return results_[static_cast<size_t>(i)].get(); }
  std::vector<Value*> results() const;

  const std::vector<NamedAttribute>& attributes() const { return attributes_; }
  // Null when absent.
  const AttributeValue* attribute(std::string_view name) const;
  void SetAttribute(std::string name, AttributeValue value);
  // Typed accessors: nullopt / empty when absent or of another kind.
  std::optional<int64_t> GetInt(std::string_view name) const;
  std::optional<bool> GetBool(std::string_view name) const;
  std::optional<std::string> GetString(std::string_view name) const;
  std::vector<int64_t> GetInts(std::string_view name) const;
  std::vector<std::string> GetStrings(std::string_view name) const;
  const DenseElements* GetDense(std::string_view name) const;

  int64_t num_regions() const { return static_cast<int64_t>(regions_.size()); }
  Region* region(int64_t i) const { return regions_[static_cast<size_t>(i)].get(); }
  Region* AddRegion();

  Block* parent_block() const { return parent_block_; }
  // Dense number of this op within its function, in [0, Function::op_id_bound()), in pre-order
  // of appending (nested ops numbered after their op); -1 while detached. See Value::id for
  // ops inserted after others.
  int64_t id() const { return id_; }
  // The function this op is nested in (through any number of regions), or null when detached.
  Function* parent_function() const;

 private:
  friend class Block;
  friend class Function;
  Operation(OpKind kind) : kind_(kind) {}

  OpKind kind_;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  std::vector<NamedAttribute> attributes_;
  std::vector<std::unique_ptr<Region>> regions_;
  Block* parent_block_ = nullptr;
  int64_t id_ = -1;
};

// A function (`func.func`): name, visibility, signature and body.
// An input-output alias (XLA's `input_output_alias`; JAX writes one as the argument attribute
// `tf.aliasing_output = R : i32` on parameter P when the parameter is donated): result
// `result` may be computed into the memory of parameter `parameter`, so a caller that passes
// the same buffer as both runs in place (Executable::Run). Both are 0-based indices; the two
// have the same element type and dims.
struct InputOutputAlias {
  int64_t parameter = 0;
  int64_t result = 0;
  bool operator==(const InputOutputAlias&) const = default;
};

class Function {
 public:
  Function(std::string name, std::vector<TensorType> parameter_types,
           std::vector<TensorType> result_types, Module* parent);
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<TensorType>& parameter_types() const { return parameter_types_; }
  const std::vector<TensorType>& result_types() const { return result_types_; }
  bool is_public() const { return is_public_; }
  void set_public(bool is_public) { is_public_ = is_public; }
  Region* body() const { return body_.get(); }
  Block* entry_block() const { return body_->entry_block(); }
  Value* parameter(int64_t i) const { return entry_block()->argument(i); }
  Module* parent() const { return parent_; }
  // Upper bounds (exclusive) of the value and op ids handed out so far: per-value and per-op
  // arrays of this many entries can be indexed by Value::id() and Operation::id().
  int64_t value_id_bound() const { return next_value_id_; }
  int64_t op_id_bound() const { return next_op_id_; }
  // Numbers every value and op again, densely, in pre-order (parameters first, then each op
  // followed by its results and its regions' arguments and ops), as a freshly built function
  // has them: graph passes call it after rewriting so analyses see dense ids in program order.
  void Renumber();

  // The function's input-output aliases, in the order added.
  const std::vector<InputOutputAlias>& input_output_aliases() const { return aliases_; }
  // Declares that result `alias.result` may be computed into parameter `alias.parameter`'s
  // memory. kInvalidArgument when an index is out of range, the parameter and result types
  // differ, or the parameter or the result is in an alias already.
  Status AddInputOutputAlias(InputOutputAlias alias);

  // A deep copy of this function added to `module` (this function's module or another) under
  // `name`: visibility, signature, input-output aliases, ops, attributes and regions, with every
  // operand pointing at the copy's values; ids numbered as Renumber does; constants' payloads
  // copied. Errors (kInvalidArgument; `module` is then unchanged): `module` has a function
  // named `name` already, or an op reads a value that no op copied before it in program order
  // defines (a later op's result after SetOperand, or a value of another function). Other
  // dominance errors of an invalid body (a region reading a value of a sibling region, or its
  // parent op's own result) are copied as they are: Verify the copy when the source may be
  // invalid.
  StatusOr<Function*> CloneInto(Module& module, std::string name) const;

 private:
  friend class Block;
  // Numbers `op`, its results and everything nested in it that has no id yet.
  void AssignIds(Operation& op);
  // Clears (-1) the ids of `op`, its results and everything nested in it.
  static void ClearIds(Operation& op);

  std::string name_;
  std::vector<TensorType> parameter_types_;
  std::vector<TensorType> result_types_;
  std::vector<InputOutputAlias> aliases_;
  bool is_public_ = true;
  std::unique_ptr<Region> body_;
  Module* parent_;
  int64_t next_value_id_ = 0;
  int64_t next_op_id_ = 0;
};

// A module: a named list of functions. Function names are unique.
class Module {
 public:
  explicit Module(std::string name = "") : name_(std::move(name)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }
  // kInvalidArgument when a function of that name exists already.
  StatusOr<Function*> AddFunction(std::string name, std::vector<TensorType> parameter_types,
                                  std::vector<TensorType> result_types);
  const std::vector<std::unique_ptr<Function>>& functions() const { return functions_; }
  // Null when absent.
  Function* FindFunction(std::string_view name) const;
  // A deep copy: same name, grid, functions (name, visibility, signature, input-output
  // aliases), ops, attributes and regions, with every operand pointing at the copy's values;
  // ids are numbered as Renumber does. Constants' payloads are copied. The module must satisfy
  // Verify's dominance rule (every operand defined before its use), as every module the
  // builder, the parser or a pass makes does; Function::CloneInto returns an error instead.
  std::unique_ptr<Module> Clone() const;

  // The SPMD grid the module's programs run on (spec "Parallel execution"): num_replicas x
  // num_partitions processes, from the module attributes mhlo.num_replicas /
  // mhlo.num_partitions (1 each when absent). Collectives split this grid into process groups.
  // SetGrid: kInvalidArgument for a count below 1 or a grid of more than kMaxGridProcesses
  // processes.
  static constexpr int64_t kMaxGridProcesses = 65536;
  int64_t num_replicas() const { return num_replicas_; }
  int64_t num_partitions() const { return num_partitions_; }
  Status SetGrid(int64_t num_replicas, int64_t num_partitions);

 private:
  friend class Function;  // CloneInto adds the finished copy

  std::string name_;
  std::vector<std::unique_ptr<Function>> functions_;
  int64_t num_replicas_ = 1;
  int64_t num_partitions_ = 1;
};

// Calls `fn(op)` for every operation in `block`, in order, descending into regions after the op
// itself (pre-order), like MLIR's walk.
template <typename Fn>
void WalkOperations(const Block& block, Fn&& fn) {
  for (const auto& op : block.operations()) {
    fn(op.get());
    for (int64_t r = 0; r < op->num_regions(); ++r) {
      for (const auto& nested : op->region(r)->blocks()) WalkOperations(*nested, fn);
    }
  }
}

// Checks one operation against its StableHLO type rules (a known kind, operand count and types,
// attribute presence, kind and ranges, no attribute name given twice, result types, region
// signatures). The error (kInvalidArgument) names the op, the operand or attribute, and the rule
// broken, e.g.
// "add: operand 1 has type tensor<3xf32>, expected tensor<4xf32> (operands and result must have
// the same type)".
Status VerifyOperation(const Operation& op);
// Checks a whole module: every op as above, SSA dominance (operands defined earlier in the same
// block or an enclosing one), region terminators, and returns matching function result types.
Status Verify(const Module& module);

// Writes `module` as StableHLO MLIR text in pretty form (`func.func`, `stablehlo.add %0, %1 :
// tensor<4xf32>`). accy-only ops (cumsum, kernel_call) print as `stablehlo.custom_call` with
// their attributes. Constants of more than kMaxInlineConstantElements elements print as hex.
inline constexpr int64_t kMaxInlineConstantElements = 16;
std::string PrintModule(const Module& module);

}  // namespace accy

#endif  // ACCY_IR_H_
