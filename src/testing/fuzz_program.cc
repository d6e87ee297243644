// FuzzProgram -> Module, and op coverage counts (fuzz_program.h).
#include "src/testing/fuzz_program.h"

#include <iterator>

#include "src/util/str_cat.h"

namespace accy::fuzz {

StatusOr<std::unique_ptr<Module>> BuildModule(const FuzzProgram& program, BuildForm form) {
  Builder builder("fuzz");
  std::vector<TensorType> parameter_types, result_types;
  for (int id : program.parameters) parameter_types.push_back(program.values[id].type);
  for (int id : program.outputs) result_types.push_back(program.values[id].type);
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f,
                        builder.BeginFunction("main", parameter_types, result_types));
  std::vector<Value*> built(program.values.size(), nullptr);
  for (size_t p = 0; p < program.parameters.size(); ++p) {
    built[program.parameters[p]] = f.Parameter(static_cast<int64_t>(p));
  }
  for (size_t i = 0; i < program.ops.size(); ++i) {
    const FuzzOp& op = program.ops[i];
    std::vector<Value*> operands;
    for (int id : op.operands) {
      if (built[id] == nullptr) {
        return absl::InternalError(StrCat("fuzz op ", i, " (", op.label, "): operand value ", id,
                                          " is not defined before it"));
      }
      operands.push_back(built[id]);
    }
    StatusOr<std::vector<Value*>> results = op.build(f, operands, form);
    if (!results.ok()) {
      return absl::InternalError(
          StrCat("fuzz op ", i, " (", op.label, "): ", results.status().message()));
    }
    if (results->size() != op.results.size()) {
      return absl::InternalError(StrCat("fuzz op ", i, " (", op.label, "): built ",
                                        results->size(), " results, expected ",
                                        op.results.size()));
    }
    for (size_t r = 0; r < op.results.size(); ++r) {
      if ((*results)[r]->type() != program.values[op.results[r]].type) {
        return absl::InternalError(StrCat("fuzz op ", i, " (", op.label, "): result ", r,
                                          " has type ", (*results)[r]->type().ToString(),
                                          ", expected ",
                                          program.values[op.results[r]].type.ToString()));
      }
      built[op.results[r]] = (*results)[r];
    }
  }
  std::vector<Value*> outputs;
  for (int id : program.outputs) outputs.push_back(built[id]);
  ACCY_RETURN_IF_ERROR(f.Return(outputs));
  return builder.Finish();
}

void OpCoverage::Add(const Module& module) {
  for (const auto& function : module.functions()) {
    WalkOperations(*function->entry_block(), [&](const Operation* op) {
      ++ops_by_kind[static_cast<size_t>(op->kind())];
      for (int64_t r = 0; r < op->num_results(); ++r) {
        ++values_by_element_type[static_cast<size_t>(op->result(r)->type().element_type())];
      }
    });
  }
}

void OpCoverage::Merge(const OpCoverage& other) {
  for (size_t i = 0; i < ops_by_kind.size(); ++i) ops_by_kind[i] += other.ops_by_kind[i];
  for (size_t i = 0; i < values_by_element_type.size(); ++i) {
    values_by_element_type[i] += other.values_by_element_type[i];
  }
}

}  // namespace accy::fuzz
