// Internal to the StableHLO importer (importer.cc, importer_structure.cc): the Importer class
// that turns the parser's syntax tree into accy IR through the builder API. Value names follow
// MLIR's scoping (importer.cc). Not a public header.
#ifndef ACCY_SRC_STABLEHLO_IMPORTER_INTERNAL_H_
#define ACCY_SRC_STABLEHLO_IMPORTER_INTERNAL_H_

#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "accy/builder.h"
#include "src/stablehlo/importer.h"
#include "src/stablehlo/syntax.h"
#include "src/util/str_cat.h"

namespace accy::stablehlo_internal {

inline std::string ValueName(const std::string& name) {
  // Names the parser synthesised (reduce's compact form) start with '\x01'.
  return !name.empty() && name[0] == '\x01' ? "<reduce body value>" : StrCat("%", name);
}

inline bool IsReturn(const OpSyntax& op) {
  return op.name == "func.return" || op.name == "stablehlo.return";
}

// Where a block being emitted sits: its return's meaning and whether checks may appear.
enum class BlockRole { kFunctionBody, kRegion, kInlinedCallee };

class Importer {
 public:
  Importer(const ModuleSyntax& syntax, bool keep_checks, ConstantBudget* budget)
      : syntax_(syntax), keep_checks_(keep_checks), budget_(budget) {}

  StatusOr<StableHloProgram> Run();

 private:
  struct NameTable {
    std::unordered_map<std::string, std::vector<Value*>> values;
    std::vector<std::vector<std::string>> scopes;  // names defined per open block, innermost last
    // Names of tuple values: their structure (leaf tensor types); `values` holds their leaves,
    // flattened depth first. Only stablehlo.tuple / get_tuple_element may use these names.
    std::unordered_map<std::string, TypeTree> tuples;
  };

  Status CollectCallees(const std::vector<OpSyntax>& ops, std::set<std::string>* called);
  // The extra result types a function gets for its checks (see Check).
  StatusOr<std::vector<TensorType>> CheckResultTypes(const FunctionSyntax& function);
  Status BuildFunction(Builder& builder, const FunctionSyntax& function);

  Status Define(NameTable& names, const std::string& name, std::vector<Value*> values,
                SourceLoc loc);
  StatusOr<Value*> Lookup(const NameTable& names, const ValueRef& ref) const;
  StatusOr<std::vector<Value*>> LookupAll(const NameTable& names, const OpSyntax& op) const;
  Status DefineResults(NameTable& names, const OpSyntax& op, const std::vector<Value*>& results);

  // Emits `ops` (a block whose arguments are `arguments`) into `fb`; the values of its return
  // go to `*returned` (an inlined callee) or to fb.Return (function bodies and regions).
  Status EmitBlock(FunctionBuilder& fb, NameTable& names, const RegionSyntax& block,
                   std::span<Value* const> arguments, BlockRole role,
                   std::vector<Value*>* returned);
  Status EmitOp(FunctionBuilder& fb, NameTable& names, const OpSyntax& op, BlockRole role);
  Status EmitCall(FunctionBuilder& fb, NameTable& names, const OpSyntax& op);
  // composite (spec "composite"): its decomposition inlined as a call is.
  Status EmitComposite(FunctionBuilder& fb, NameTable& names, const OpSyntax& op);
  // Inlines `callee` for `op` (a call or composite, `what` in messages).
  Status InlineFunction(FunctionBuilder& fb, NameTable& names, const OpSyntax& op,
                        const FunctionSyntax& callee, std::string_view what);
  // optimization_barrier (spec "optimization_barrier"): its results are its operands.
  Status EmitOptimizationBarrier(NameTable& names, const OpSyntax& op);
  // tuple and get_tuple_element (spec "tuple", "get_tuple_element"): tuples are flattened at
  // import; a tuple names its leaf values, get_tuple_element names a part of them.
  Status EmitTuple(NameTable& names, const OpSyntax& op);
  Status EmitGetTupleElement(NameTable& names, const OpSyntax& op);
  // map (spec "map"): the computation's elementwise ops applied to the whole operands.
  Status EmitMap(FunctionBuilder& fb, NameTable& names, const OpSyntax& op);
  Status EmitCustomCall(FunctionBuilder& fb, NameTable& names, const OpSyntax& op);
  Status EmitLapackCall(FunctionBuilder& fb, NameTable& names, const OpSyntax& op,
                        std::vector<Value*> operands);
  Status EmitCheck(NameTable& names, const OpSyntax& op, CheckKind kind, BlockRole role);
  // interpreter.run_parallel (keep_checks only): see ParallelRun.
  Status EmitRunParallel(NameTable& names, const OpSyntax& op, BlockRole role);
  Status EmitStableHloOp(FunctionBuilder& fb, NameTable& names, const OpSyntax& op);
  // A constant whose value is a splat kept as one element (AttrValue::splat_type): a rank-0
  // constant and a broadcast_in_dim of it to the declared type (spec "constant",
  // "broadcast_in_dim"; the values are the splat's bit for bit), as the
  // broadcast-splat-constants pass would rewrite the expanded constant.
  Status EmitSplatConstant(FunctionBuilder& fb, NameTable& names, const OpSyntax& op,
                           const AttrValue& value);
  // CreateOp with located errors (a region body's own error wins over CreateOp's wrapping).
  Status Create(FunctionBuilder& fb, NameTable& names, const OpSyntax& op, OpKind kind,
                std::vector<Value*> operands, std::vector<NamedAttribute> attributes);
  Status CountOp(SourceLoc loc);
  // Charges the dense values among `attributes` (nested ones too) to budget_->module_bytes.
  Status ChargeConstants(const std::vector<NamedAttr>& attributes);
  Status ChargeConstant(const AttrValue& value);

  const ModuleSyntax& syntax_;
  const bool keep_checks_;
  ConstantBudget* budget_;
  std::unordered_map<std::string, const FunctionSyntax*> functions_;
  std::vector<const FunctionSyntax*> call_stack_;
  int block_depth_ = 0;  // EmitBlocks being built: function body, regions, inlined callees
  int64_t op_count_ = 0;
  Status region_error_;  // the first error inside a region body being built
  // Per function being built: its name and the check operands returned after its results.
  std::string function_name_;
  int64_t declared_results_ = 0;
  std::vector<Value*> check_values_;
  std::vector<Check> checks_;
  // The function's interpreter.run_parallel: its results' parameters, its operands' values.
  std::vector<Value*> parallel_parameters_;
  std::vector<Value*> parallel_values_;
  int64_t check_value_count_ = 0;
  std::vector<ParallelRun> parallel_runs_;
};

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_IMPORTER_INTERNAL_H_
