// Pass and PassManager: run a list of function passes over a module under a WorkLedger.
//
// A Pass has a name, a WorkContract (its own bounds, charged before each run on a function; the
// analyses it asks for are charged separately by the AnalysisCache), a Run over one function,
// and the analyses it leaves valid (all, a set of names, or none). The PassManager owns its
// passes and runs each pass over every function of the module in order, invalidating the cached
// analyses the pass did not preserve. The module and cache are borrowed for one Run. Not
// thread-safe.
#ifndef ACCY_SRC_PASSES_PASS_MANAGER_H_
#define ACCY_SRC_PASSES_PASS_MANAGER_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "accy/ir.h"
#include "accy/status.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_contract.h"

namespace accy::passes {

// What a pass sees while it runs on one function.
class PassContext {
 public:
  PassContext(Module& module, Function& function, AnalysisCache& cache,
              PreservedAnalyses preserved)
      : module_(module), function_(function), cache_(cache), preserved_(std::move(preserved)) {}

  Module& module() const { return module_; }
  Function& function() const { return function_; }
  AnalysisCache& cache() const { return cache_; }
  // Analysis A of the function being run on; errors as AnalysisCache::Get.
  template <typename A>
  StatusOr<const A*> GetAnalysis() const {
    return cache_.Get<A>(function_);
  }

  // The pass changed the IR (counted in PassManagerStats::passes_modified).
  void MarkModified() { modified_ = true; }
  bool modified() const { return modified_; }
  // Overrides the pass's declared preservation for this run (e.g. all, when it changed nothing).
  void SetPreserved(PreservedAnalyses preserved) { preserved_ = std::move(preserved); }
  const PreservedAnalyses& preserved() const { return preserved_; }

 private:
  Module& module_;
  Function& function_;
  AnalysisCache& cache_;
  PreservedAnalyses preserved_;
  bool modified_ = false;
};

// A pass over one function.
class Pass {
 public:
  virtual ~Pass() = default;
  // A stable name, e.g. "accy-plan-schedule" (diagnostics; usually the contract's identity name).
  virtual std::string_view name() const = 0;
  // Identity and estimate of the pass's own work on one function (not its analyses').
  virtual const WorkContract& contract() const = 0;
  // Runs on context.function(). An error fails the whole PassManager::Run.
  virtual Status Run(PassContext& context) = 0;
  // The analyses left valid after a run; the default keeps none. A run may override it through
  // PassContext::SetPreserved.
  virtual PreservedAnalyses preserved_analyses() const { return PreservedAnalyses::None(); }
};

struct PassManagerStats {
  uint64_t pass_runs = 0;        // (pass, function) runs that returned OK
  uint64_t passes_modified = 0;  // of those, runs that called MarkModified
};

class PassManager {
 public:
  PassManager() = default;
  PassManager(const PassManager&) = delete;
  PassManager& operator=(const PassManager&) = delete;

  // Appends `pass` (non-null) to the pipeline.
  void AddPass(std::unique_ptr<Pass> pass);
  size_t num_passes() const { return passes_.size(); }

  // Runs every pass, in order, over every function of `module` (pass-major: pass 1 over all
  // functions, then pass 2, ...). Per run: charges the pass's contract to cache.ledger() (an
  // estimate error or refusal fails the run and leaves the ledger exhausted; the charge error is
  // returned: WorkOverflow, kResourceExhausted or TerminalWorkOutcome), runs it, then invalidates
  // the function's analyses it did not preserve. A pass error is returned as is and also makes
  // the ledger exhausted. Stats accumulate over calls.
  Status Run(Module& module, AnalysisCache& cache);

  const PassManagerStats& stats() const { return stats_; }

 private:
  Status RunOne(Pass& pass, Module& module, Function& function, AnalysisCache& cache);

  std::vector<std::unique_ptr<Pass>> passes_;
  PassManagerStats stats_;
};

}  // namespace accy::passes

#endif  // ACCY_SRC_PASSES_PASS_MANAGER_H_
