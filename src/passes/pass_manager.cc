// PassManager (pass_manager.h).
#include "src/passes/pass_manager.h"

#include <utility>

namespace accy::passes {

void PassManager::AddPass(std::unique_ptr<Pass> pass) {
  ACCY_CHECK(pass != nullptr);
  passes_.push_back(std::move(pass));
}

Status PassManager::Run(Module& module, AnalysisCache& cache) {
  for (const std::unique_ptr<Pass>& pass : passes_) {
    // Index loop: a pass may append functions, which later passes then see.
    for (size_t i = 0; i < module.functions().size(); ++i) {
      ACCY_RETURN_IF_ERROR(RunOne(*pass, module, *module.functions()[i], cache));
    }
  }
  return absl::OkStatus();
}

Status PassManager::RunOne(Pass& pass, Module& module, Function& function,
                           AnalysisCache& cache) {
  WorkLedger& ledger = cache.ledger();
  const WorkContract& contract = pass.contract();
  ACCY_CHECK(contract.estimate != nullptr);
  ACCY_RETURN_IF_ERROR(ledger.CheckOpen(contract.identity));
  StatusOr<WorkBounds> bounds = contract.estimate(function);
  if (!bounds.ok()) {
    ledger.MarkExhausted(bounds.status());
    return bounds.status();
  }
  ACCY_RETURN_IF_ERROR(ledger.Charge(contract.identity, *bounds));

  PassContext context(module, function, cache, pass.preserved_analyses());
  Status status = pass.Run(context);
  // Even a failed run may have changed the IR: drop what it did not promise to keep.
  cache.Invalidate(function, context.preserved());
  if (!status.ok()) {
    ledger.MarkExhausted(status);
    return status;
  }
  ++stats_.pass_runs;
  if (context.modified()) ++stats_.passes_modified;
  return absl::OkStatus();
}

}  // namespace accy::passes
