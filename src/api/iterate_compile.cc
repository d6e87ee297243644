// CompileIterate (iterate_compile.h).
#include "src/api/iterate_compile.h"

#include <algorithm>

#include "src/ir/outline.h"
#include "src/runtime/case_kernel.h"
#include "src/runtime/iterate_kernel.h"
#include "src/util/str_cat.h"

namespace accy {
namespace {

Status Prefixed(const Status& status, std::string_view prefix) {
  return absl::Status(status.code(), StrCat(prefix, status.message()));
}

// The captured values of all regions, once each, after the item's operands; `slots(values)`
// gives each value's index among them.
struct CapturedSet {
  std::vector<const Value*> values;
  std::vector<int64_t> slots(const std::vector<const Value*>& used) {
    std::vector<int64_t> indices;
    for (const Value* value : used) {
      auto it = std::find(values.begin(), values.end(), value);
      if (it == values.end()) it = values.insert(values.end(), value);
      indices.push_back(it - values.begin());
    }
    return indices;
  }
};

StatusOr<CompiledIterate> CompileCase(const Engine& engine, const Operation& case_op,
                                      size_t item_index, int64_t num_replicas,
                                      int64_t num_partitions) {
  const std::string prefix = StrCat("Compile: iterate work item ", item_index, " (case): ");
  std::vector<TensorType> results;
  for (int64_t r = 0; r < case_op.num_results(); ++r) {
    results.push_back(case_op.result(r)->type());
  }
  Module module(StrCat("accy_case", item_index));
  ACCY_RETURN_IF_ERROR(module.SetGrid(num_replicas, num_partitions));
  CapturedSet captured;
  std::vector<std::vector<int64_t>> branch_slots;
  for (int64_t b = 0; b < case_op.num_regions(); ++b) {
    auto branch = OutlineRegion(*case_op.region(b), module, StrCat("branch", b), results,
                                IsCopiedIntoOutlinedRegion);
    if (!branch.ok()) return Prefixed(branch.status(), prefix);
    branch_slots.push_back(captured.slots(branch->captured));
  }
  CompiledIterate compiled;
  compiled.inputs.push_back(case_op.operand(0));
  std::vector<TensorType> captured_types;
  for (const Value* value : captured.values) {
    compiled.inputs.push_back(value);
    captured_types.push_back(value->type());
  }
  for (int64_t r = 0; r < case_op.num_results(); ++r) {
    compiled.outputs.push_back(case_op.result(r));
  }
  std::vector<CaseKernel::Branch> branches;
  for (int64_t b = 0; b < case_op.num_regions(); ++b) {
    auto executable = engine.Compile(module, StrCat("branch", b));
    if (!executable.ok()) {
      return Prefixed(executable.status(), StrCat(prefix, "branch ", b, ": "));
    }
    branches.push_back({*std::move(executable), std::move(branch_slots[static_cast<size_t>(b)])});
  }
  compiled.kernel = std::make_unique<CaseKernel>(StrCat("iterate work item ", item_index,
                                                        " (case)"),
                                                 std::move(results), std::move(captured_types),
                                                 std::move(branches));
  return compiled;
}

}  // namespace

StatusOr<CompiledIterate> CompileIterate(const Engine& engine, const Operation& while_op,
                                         size_t item_index, int64_t num_replicas,
                                         int64_t num_partitions) {
  if (while_op.kind() == OpKind::kCase) {
    return CompileCase(engine, while_op, item_index, num_replicas, num_partitions);
  }
  const std::string prefix = StrCat("Compile: iterate work item ", item_index, " (while): ");
  if (while_op.kind() != OpKind::kWhile || while_op.num_regions() != 2) {
    return absl::InvalidArgumentError(StrCat(prefix, "expected a while op with cond and body"));
  }
  std::vector<TensorType> carried;
  for (int64_t r = 0; r < while_op.num_results(); ++r) {
    carried.push_back(while_op.result(r)->type());
  }
  ACCY_ASSIGN_OR_RETURN(TensorType pred, TensorType::Create(ElementType::kI1, {}));
  // Named by the item, so two whiles' graph-pass dumps do not overwrite each other.
  Module module(StrCat("accy_while", item_index));
  ACCY_RETURN_IF_ERROR(module.SetGrid(num_replicas, num_partitions));
  auto cond = OutlineRegion(*while_op.region(0), module, "cond", {pred}, IsCopiedIntoOutlinedRegion);
  if (!cond.ok()) return Prefixed(cond.status(), prefix);
  auto body = OutlineRegion(*while_op.region(1), module, "body", carried, IsCopiedIntoOutlinedRegion);
  if (!body.ok()) return Prefixed(body.status(), prefix);

  CompiledIterate compiled;
  for (const Value* operand : while_op.operands()) compiled.inputs.push_back(operand);
  for (int64_t r = 0; r < while_op.num_results(); ++r) {
    compiled.outputs.push_back(while_op.result(r));
  }
  // The captured values of both regions, once each, after the operands.
  CapturedSet captured;
  std::vector<int64_t> cond_slots = captured.slots(cond->captured);
  std::vector<int64_t> body_slots = captured.slots(body->captured);
  std::vector<TensorType> captured_types;
  for (const Value* value : captured.values) {
    compiled.inputs.push_back(value);
    captured_types.push_back(value->type());
  }
  auto cond_exe = engine.Compile(module, "cond");
  if (!cond_exe.ok()) return Prefixed(cond_exe.status(), StrCat(prefix, "cond: "));
  auto body_exe = engine.Compile(module, "body");
  if (!body_exe.ok()) return Prefixed(body_exe.status(), StrCat(prefix, "body: "));
  compiled.kernel = std::make_unique<IterateKernel>(
      StrCat("iterate work item ", item_index, " (while)"), std::move(carried),
      std::move(captured_types), *std::move(cond_exe), std::move(cond_slots),
      *std::move(body_exe), std::move(body_slots), engine.options().max_while_iterations);
  return compiled;
}

}  // namespace accy
