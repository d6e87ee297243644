// AnalysisCache bookkeeping: admission, failure handling, invalidation (analysis_cache.h).
#include "src/passes/analysis_cache.h"

#include <algorithm>

#include "src/util/str_cat.h"

namespace accy::passes {

bool PreservedAnalyses::Preserves(std::string_view name) const {
  if (all_) return true;
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

AnalysisCache::AnalysisCache(WorkLedger* ledger, std::pmr::memory_resource* upstream)
    : ledger_(ledger), upstream_(upstream) {
  ACCY_CHECK(ledger_ != nullptr);
  ACCY_CHECK(upstream_ != nullptr);
}

AnalysisCache::~AnalysisCache() = default;

const void* AnalysisCache::FindObject(const Function* function, const void* tag) const {
  auto it = entries_.find(Key(function, tag));
  return it == entries_.end() ? nullptr : it->second.object;
}

StatusOr<std::unique_ptr<BoundedResource>> AnalysisCache::Admit(const WorkContract& contract,
                                                                const Function& function,
                                                                const Key& key) {
  // A dependency cycle between analyses would recurse forever: an internal bug, not user input.
  ACCY_CHECK(std::find(in_progress_.begin(), in_progress_.end(), key) == in_progress_.end());
  ACCY_CHECK(contract.estimate != nullptr);
  ACCY_RETURN_IF_ERROR(ledger_->CheckOpen(contract.identity));
  StatusOr<WorkBounds> bounds = absl::UnknownError("no estimate");
  if (contract.estimate_from_census != nullptr) {
    StatusOr<const Census*> census = CensusOf(function);
    bounds = census.ok() ? contract.estimate_from_census(**census)
                         : StatusOr<WorkBounds>(census.status());
  } else {
    bounds = contract.estimate(function);
  }
  if (!bounds.ok()) {
    ledger_->MarkExhausted(bounds.status());
    return bounds.status();
  }
  ACCY_RETURN_IF_ERROR(ledger_->Charge(contract.identity, *bounds));
  in_progress_.push_back(key);
  return std::make_unique<BoundedResource>(upstream_, bounds->work.allocation_capacity,
                                           bounds->workspace_bytes);
}

StatusOr<const Census*> AnalysisCache::CensusOf(const Function& function) {
  auto it = censuses_.find(&function);
  if (it != censuses_.end()) return &it->second;
  ACCY_ASSIGN_OR_RETURN(Census census, Census::Inspect(function));
  return &censuses_.emplace(&function, census).first->second;
}

Status AnalysisCache::Finish(const Key& key, Status status) {
  auto it = std::find(in_progress_.begin(), in_progress_.end(), key);
  ACCY_CHECK(it != in_progress_.end());
  in_progress_.erase(it);
  if (!status.ok()) ledger_->MarkExhausted(status);
  return status;
}

Status AnalysisCache::AllocationFailure(const WorkContract& contract,
                                        const BoundedResource& resource, std::string_view what) {
  return absl::ResourceExhaustedError(StrCat(
      "analysis '", contract.identity.name, "' v", contract.identity.version, ": ", what,
      resource.exceeded_bounds() ? " (beyond its declared allocation_capacity/workspace_bytes; "
                                   "the estimate is not an upper bound)"
                                 : " (the memory resource ran out)",
      "; ", resource.allocated_bytes(), " bytes allocated before"));
}

void AnalysisCache::Insert(const Key& key, std::string_view name, void* object,
                           DestroyFn destroy, std::unique_ptr<BoundedResource> resource) {
  auto [it, inserted] = entries_.try_emplace(key);
  ACCY_CHECK(inserted);  // Get found no entry, and Compute cannot insert its own key (no cycles)
  Entry& entry = it->second;
  entry.name = name;
  entry.object = object;
  entry.destroy = destroy;
  entry.resource = std::move(resource);
}

void AnalysisCache::Invalidate(const Function& function, const PreservedAnalyses& preserved) {
  if (preserved.preserves_all()) return;
  censuses_.erase(&function);
  auto it = entries_.lower_bound(Key(&function, nullptr));
  while (it != entries_.end() && it->first.first == &function) {
    if (preserved.Preserves(it->second.name)) {
      ++it;
    } else {
      it = entries_.erase(it);
    }
  }
}

}  // namespace accy::passes
