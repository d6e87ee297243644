// Internal to src/ir/printer*.cc (through printer_forms.h): SSA value names as MLIR's AsmPrinter
// assigns them.
#ifndef ACCY_SRC_IR_PRINTER_NAMES_H_
#define ACCY_SRC_IR_PRINTER_NAMES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "accy/ir.h"
#include "src/util/str_cat.h"

namespace accy::printer_internal {

// SSA value names of one function, assigned as MLIR's AsmPrinter (SSANameState) assigns them, so
// that the text matches stablehlo-opt's:
//  - op results are numbered %0, %1, ... in order within a region, one number per op (results of
//    a multi-result op are %N#0, %N#1, ...); a nested region continues from the number reached
//    at the end of its enclosing region, and sibling regions (while cond and do) start from the
//    same number;
//  - entry block arguments are %arg0, %arg1, ... (the function's first), continuing likewise
//    into nested regions, except while's, which are named %iterArg, %iterArg_0, ... (the same
//    names in cond and do, as stablehlo's getAsmBlockArgumentNames makes them; a clash with a
//    name visible from an enclosing region takes the next `_<n>` suffix).
class SsaNames {
 public:
  explicit SsaNames(const Function& function) {
    if (function.entry_block() != nullptr) NameRegion(*function.body(), Counters{}, nullptr);
  }

  // The operand spelling of `value`: "%arg0", "%iterArg_0", "%3", "%3#1".
  std::string Use(const Value* value) const {
    if (value == nullptr) return "%<<NULL VALUE>>";
    if (value->is_block_argument()) {
      auto it = argument_names_.find(value);
      return it == argument_names_.end() ? "%<<UNKNOWN SSA VALUE>>" : it->second;
    }
    auto it = result_ids_.find(value->defining_op());
    if (it == result_ids_.end()) return "%<<UNKNOWN SSA VALUE>>";
    if (value->defining_op()->num_results() == 1) return StrCat("%", it->second);
    return StrCat("%", it->second, "#", value->index());
  }

  // "%3 = ", "%3:2 = ", or "" for an op without results.
  std::string Definition(const Operation& op) const {
    auto it = result_ids_.find(&op);
    if (it == result_ids_.end()) return "";
    if (op.num_results() == 1) return StrCat("%", it->second, " = ");
    return StrCat("%", it->second, ":", op.num_results(), " = ");
  }

 private:
  struct Counters {
    int64_t next_value = 0;
    int64_t next_argument = 0;
    int64_t next_conflict = 0;
  };
  // Names taken in a region and, through `parent`, in the regions enclosing it.
  struct Scope {
    const Scope* parent = nullptr;
    std::unordered_set<std::string> used;
    bool Contains(const std::string& name) const {
      for (const Scope* s = this; s != nullptr; s = s->parent) {
        if (s->used.count(name) != 0) return true;
      }
      return false;
    }
  };

  // `counters` holds the numbers reached where the region starts (taken by value: siblings
  // start alike).
  void NameRegion(const Region& region, Counters counters, const Scope* parent) {
    Scope scope{parent, {}};
    const Operation* owner = region.parent_op();
    const bool iter_args = owner != nullptr && owner->kind() == OpKind::kWhile;
    for (const auto& block : region.blocks()) {
      const bool entry = block.get() == region.entry_block();
      for (const Value* arg : block->arguments()) {
        if (!entry) {  // accy regions have one block; kept for completeness, as MLIR does
          argument_names_[arg] = StrCat("%", counters.next_value++);
          continue;
        }
        const std::string base =
            iter_args ? std::string("iterArg") : StrCat("arg", counters.next_argument++);
        argument_names_[arg] = StrCat("%", UniqueName(base, &scope, &counters));
      }
      for (const auto& op : block->operations()) {
        if (op->num_results() > 0) result_ids_[op.get()] = counters.next_value++;
      }
    }
    for (const auto& block : region.blocks()) {
      for (const auto& op : block->operations()) {
        for (int64_t r = 0; r < op->num_regions(); ++r) {
          NameRegion(*op->region(r), counters, &scope);
        }
      }
    }
  }

  static std::string UniqueName(const std::string& base, Scope* scope, Counters* counters) {
    std::string name = base;
    while (scope->Contains(name)) name = StrCat(base, "_", counters->next_conflict++);
    scope->used.insert(name);
    return name;
  }

  std::unordered_map<const Value*, std::string> argument_names_;
  std::unordered_map<const Operation*, int64_t> result_ids_;
};

}  // namespace accy::printer_internal

#endif  // ACCY_SRC_IR_PRINTER_NAMES_H_
