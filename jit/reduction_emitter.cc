// Emitters of reduction and scan work items (emitters.h).
#include "jit/emitters.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"

namespace accy::jit {

StatusOr<KernelSignature> EmitReductionKernel(const WorkItem& item, const FusionPlan&, llvm::Module&,
                                          std::string_view) {
  return absl::UnimplementedError(StrCat("jit: work item (root ", item.root->name(),
                                         ") has kind ", WorkKindName(item.kind),
                                         ", which has no JIT emitter yet"));
}

StatusOr<KernelSignature> EmitScanKernel(const WorkItem& item, const FusionPlan&, llvm::Module&,
                                          std::string_view) {
  return absl::UnimplementedError(StrCat("jit: work item (root ", item.root->name(),
                                         ") has kind ", WorkKindName(item.kind),
                                         ", which has no JIT emitter yet"));
}

}  // namespace accy::jit
