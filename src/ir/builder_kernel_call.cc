// FunctionBuilder::KernelCall (include/accy/builder.h): the kernel_call op's own attributes
// (target, version, operand effects, result aliases) and the kernel's, checked for clashes.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "accy/builder.h"
#include "src/ir/builder_internal.h"
#include "src/util/str_cat.h"

namespace accy {

using ir_internal::OpError;

StatusOr<Operation*> FunctionBuilder::KernelCall(std::vector<Value*> operands,
                                                 std::vector<TensorType> result_types,
                                                 const KernelCallSpec& spec) {
  std::vector<NamedAttribute> attrs = {{"call_target_name", spec.target},
                                       {"version", spec.version}};
  std::vector<std::string> effects;
  for (size_t i = 0; i < spec.operand_effects.size(); ++i) {
    const OperandEffect effect = spec.operand_effects[i];
    if (effect > OperandEffect::kNone) {
      return OpError(OpKind::kKernelCall,
                     StrCat("operand_effects[", i, "] is ", static_cast<int>(effect),
                            ", not a value of OperandEffect (read, write, read_write, none)"));
    }
    effects.emplace_back(OperandEffectName(effect));
  }
  if (effects.empty())
    effects.assign(operands.size(), std::string(OperandEffectName(OperandEffect::kRead)));
  attrs.push_back({"operand_effects", std::move(effects)});
  std::vector<int64_t> aliases;
  for (const std::optional<int64_t>& alias : spec.result_aliases)
    aliases.push_back(alias.value_or(-1));
  if (aliases.empty()) aliases.assign(result_types.size(), -1);
  attrs.push_back({"result_aliases", std::move(aliases)});
  for (const NamedAttribute& attribute : spec.attributes) {
    for (const NamedAttribute& reserved : attrs) {
      if (attribute.name == reserved.name) {
        return OpError(OpKind::kKernelCall, StrCat("kernel attribute '", attribute.name,
                                                   "' is one of the kernel_call's own attributes"));
      }
    }
  }
  for (size_t i = 0; i < spec.attributes.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (spec.attributes[i].name == spec.attributes[j].name) {
        return OpError(OpKind::kKernelCall,
                       StrCat("kernel attribute '", spec.attributes[i].name, "' is given twice"));
      }
    }
  }
  attrs.insert(attrs.end(), spec.attributes.begin(), spec.attributes.end());
  return CreateOp(OpKind::kKernelCall, std::move(operands), std::move(result_types),
                  std::move(attrs));
}

}  // namespace accy
