// OutlineRegion (outline.h): collect what the region reads from outside, make the function, copy
// the ops with a value map.
#include "src/ir/outline.h"

#include <unordered_map>
#include <unordered_set>

#include "src/util/str_cat.h"

namespace accy {
namespace {

using ValueMap = std::unordered_map<const Value*, Value*>;

void CollectDefined(const Region& region, std::unordered_set<const Value*>& defined) {
  for (const auto& block : region.blocks()) {
    for (int64_t a = 0; a < block->num_arguments(); ++a) defined.insert(block->argument(a));
    for (const auto& op : block->operations()) {
      for (int64_t r = 0; r < op->num_results(); ++r) defined.insert(op->result(r));
      for (int64_t n = 0; n < op->num_regions(); ++n) CollectDefined(*op->region(n), defined);
    }
  }
}

class Outliner {
 public:
  Outliner(const std::unordered_set<const Value*>& defined,
           const std::function<bool(const Operation&)>& clone_def)
      : defined_(defined), clone_def_(clone_def) {}

  // Records what `region` reads from outside: captured values and outer ops to copy in.
  void Scan(const Region& region) {
    for (const auto& block : region.blocks()) {
      for (const auto& op : block->operations()) {
        for (const Value* operand : op->operands()) Visit(operand);
        for (int64_t n = 0; n < op->num_regions(); ++n) Scan(*op->region(n));
      }
    }
  }

  const std::vector<const Value*>& captured() const { return captured_; }
  const std::vector<const Operation*>& copied_defs() const { return copied_defs_; }

 private:
  void Visit(const Value* value) {
    if (defined_.contains(value) || seen_.contains(value)) return;
    seen_.insert(value);
    const Operation* def = value->defining_op();
    if (def != nullptr && def->num_regions() == 0 && clone_def_ && clone_def_(*def)) {
      if (copied_ops_.insert(def).second) {
        for (const Value* operand : def->operands()) Visit(operand);
        copied_defs_.push_back(def);  // after its operands' defs: a valid order
      }
      return;
    }
    captured_.push_back(value);
  }

  const std::unordered_set<const Value*>& defined_;
  const std::function<bool(const Operation&)>& clone_def_;
  std::unordered_set<const Value*> seen_;
  std::unordered_set<const Operation*> copied_ops_;
  std::vector<const Value*> captured_;
  std::vector<const Operation*> copied_defs_;
};

// Copies `op` (with its regions) into `dest`, mapping operands through `map` and recording the
// copies of its results and nested values there.
void CopyOp(const Operation& op, Block& dest, ValueMap& map) {
  std::vector<Value*> operands;
  operands.reserve(op.operands().size());
  for (const Value* operand : op.operands()) {
    auto it = map.find(operand);
    ACCY_CHECK(it != map.end());  // Outliner::Scan mapped every outer value
    operands.push_back(it->second);
  }
  std::vector<TensorType> result_types;
  for (int64_t r = 0; r < op.num_results(); ++r) result_types.push_back(op.result(r)->type());
  std::unique_ptr<Operation> copy =
      Operation::Create(op.kind(), std::move(operands), result_types, op.attributes());
  for (int64_t n = 0; n < op.num_regions(); ++n) {
    Region* region = copy->AddRegion();
    for (const auto& block : op.region(n)->blocks()) {
      std::vector<TensorType> arg_types;
      for (int64_t a = 0; a < block->num_arguments(); ++a) {
        arg_types.push_back(block->argument(a)->type());
      }
      Block* new_block = region->AddBlock(arg_types);
      for (int64_t a = 0; a < block->num_arguments(); ++a) {
        map[block->argument(a)] = new_block->argument(a);
      }
      for (const auto& nested : block->operations()) CopyOp(*nested, *new_block, map);
    }
  }
  Operation* appended = dest.Append(std::move(copy));
  for (int64_t r = 0; r < op.num_results(); ++r) map[op.result(r)] = appended->result(r);
}

}  // namespace

bool IsCopiedIntoOutlinedRegion(const Operation& op) {
  return op.kind() == OpKind::kConstant || op.kind() == OpKind::kBroadcastInDim ||
         op.kind() == OpKind::kIota;
}

StatusOr<OutlinedRegion> OutlineRegion(const Region& region, Module& module, std::string name,
                                       std::vector<TensorType> result_types,
                                       const std::function<bool(const Operation&)>& clone_def) {
  if (region.blocks().size() != 1) {
    return absl::InvalidArgumentError(StrCat("outline '", name, "': region has ",
                                             region.blocks().size(), " blocks, expected 1"));
  }
  const Block& block = *region.blocks().front();
  const Operation* terminator = block.terminator();
  if (terminator == nullptr) {
    return absl::InvalidArgumentError(StrCat("outline '", name, "': region has no return"));
  }
  std::unordered_set<const Value*> defined;
  CollectDefined(region, defined);
  Outliner outliner(defined, clone_def);
  outliner.Scan(region);

  std::vector<TensorType> parameter_types;
  for (int64_t a = 0; a < block.num_arguments(); ++a) {
    parameter_types.push_back(block.argument(a)->type());
  }
  for (const Value* value : outliner.captured()) parameter_types.push_back(value->type());
  ACCY_ASSIGN_OR_RETURN(Function * function,
                        module.AddFunction(std::move(name), parameter_types,
                                           std::move(result_types)));
  ValueMap map;
  int64_t p = 0;
  for (int64_t a = 0; a < block.num_arguments(); ++a) map[block.argument(a)] = function->parameter(p++);
  for (const Value* value : outliner.captured()) map[value] = function->parameter(p++);
  Block& dest = *function->entry_block();
  for (const Operation* def : outliner.copied_defs()) CopyOp(*def, dest, map);
  for (const auto& op : block.operations()) CopyOp(*op, dest, map);
  return OutlinedRegion{function, outliner.captured()};
}

}  // namespace accy
