// AnalysisCache: computes each analysis at most once per function, under a WorkLedger.
//
// An analysis is a class A with
//   static const WorkContract& Contract();            // identity + estimate (work_contract.h)
//   static StatusOr<A*> Compute(AnalysisContext& ctx, const Function& function);
// Compute allocates A and everything it holds from ctx.resource() (std::pmr), asks for the
// analyses it depends on through ctx.Get<B>(function), and returns A constructed in that
// resource (the cache destroys it with A's destructor; the resource frees the bytes).
//
// Get<A>(function): returns the cached result; otherwise, if the ledger is terminal, fails with
// kFailedPrecondition ("TerminalWorkOutcome: ..."); estimates A's bounds (an estimate error makes
// the ledger exhausted and is returned), charges them (a refusal returns kResourceExhausted and
// leaves the ledger exhausted), computes, and caches only on success (an error from Compute also
// leaves the ledger exhausted and caches nothing). Not thread-safe.
//
// Compute's allocations go through a BoundedResource holding it to its declared
// allocation_capacity and workspace_bytes: an allocation beyond them (or the upstream running out)
// surfaces as std::bad_alloc, which Get turns into kResourceExhausted at this edge. Results stay
// valid until invalidated (Invalidate, Clear) or the cache is destroyed; an analysis's destructor
// must not touch the results of its dependencies (destruction order between entries is
// unspecified).
#ifndef ACCY_SRC_PASSES_ANALYSIS_CACHE_H_
#define ACCY_SRC_PASSES_ANALYSIS_CACHE_H_

#include <functional>
#include <map>
#include <memory>
#include <memory_resource>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/passes/bounded_resource.h"
#include "src/passes/work_contract.h"
#include "src/passes/work_ledger.h"

namespace accy::passes {

class AnalysisCache;

// What an analysis's Compute sees: where to allocate, and the cache for its dependencies.
class AnalysisContext {
 public:
  AnalysisContext(AnalysisCache& cache, std::pmr::memory_resource* resource)
      : cache_(cache), resource_(resource) {}
  std::pmr::memory_resource* resource() const { return resource_; }
  AnalysisCache& cache() const { return cache_; }
  // The dependency B of the analysis being computed; errors as AnalysisCache::Get.
  template <typename A>
  StatusOr<const A*> Get(const Function& function);

 private:
  AnalysisCache& cache_;
  std::pmr::memory_resource* resource_;
};

// Which analyses (by WorkIdentity name) a pass leaves valid: all, a set of names, or none.
class PreservedAnalyses {
 public:
  static PreservedAnalyses All() { return PreservedAnalyses(true, {}); }
  static PreservedAnalyses None() { return PreservedAnalyses(false, {}); }
  static PreservedAnalyses Only(std::vector<std::string> names) {
    return PreservedAnalyses(false, std::move(names));
  }
  bool preserves_all() const { return all_; }
  bool Preserves(std::string_view name) const;
  const std::vector<std::string>& names() const { return names_; }

 private:
  PreservedAnalyses(bool all, std::vector<std::string> names)
      : all_(all), names_(std::move(names)) {}
  bool all_;
  std::vector<std::string> names_;
};

class AnalysisCache {
 public:
  // `ledger` must outlive the cache. Results are allocated from `upstream` (through a
  // BoundedResource per result); it must outlive the cache too.
  explicit AnalysisCache(WorkLedger* ledger,
                         std::pmr::memory_resource* upstream = std::pmr::new_delete_resource());
  ~AnalysisCache();
  AnalysisCache(const AnalysisCache&) = delete;
  AnalysisCache& operator=(const AnalysisCache&) = delete;

  // The analysis A of `function`, computed at most once (see the file comment for the steps and
  // errors: TerminalWorkOutcome, WorkOverflow from the estimate, kResourceExhausted from a
  // refused charge or an allocation beyond the declared bounds, or Compute's own error).
  template <typename A>
  StatusOr<const A*> Get(const Function& function);

  // The cached A of `function`, or null; never computes or charges.
  template <typename A>
  const A* Find(const Function& function) const {
    return static_cast<const A*>(FindObject(&function, TagOf<A>()));
  }

  // The census of `function` (Census::Inspect), computed once and kept until the function's
  // results are invalidated (Invalidate without preserves_all, Clear): a pass that changes the IR
  // must not preserve all analyses. Errors: Census::Inspect's WorkOverflow.
  StatusOr<const Census*> CensusOf(const Function& function);

  // Number of cached results over all functions.
  size_t entry_count() const { return entries_.size(); }
  // Destroys the results of `function` whose analysis name `preserved` does not keep.
  void Invalidate(const Function& function, const PreservedAnalyses& preserved);
  // Destroys every cached result (and census).
  void Clear() {
    entries_.clear();
    censuses_.clear();
  }

  WorkLedger& ledger() const { return *ledger_; }
  std::pmr::memory_resource* upstream() const { return upstream_; }

 private:
  using DestroyFn = void (*)(void* object, std::pmr::memory_resource* resource);
  using Key = std::pair<const Function*, const void*>;  // (function, analysis type tag)
  // Orders keys by function first (so Invalidate scans one range); std::less gives pointers a
  // total order.
  struct KeyLess {
    bool operator()(const Key& a, const Key& b) const {
      if (a.first != b.first) return std::less<const Function*>()(a.first, b.first);
      return std::less<const void*>()(a.second, b.second);
    }
  };

  // A type-erased result and the resource its storage came from.
  struct Entry {
    Entry() = default;
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;
    ~Entry() {
      if (object != nullptr) destroy(object, resource.get());
    }
    std::string_view name;
    void* object = nullptr;
    DestroyFn destroy = nullptr;
    std::unique_ptr<BoundedResource> resource;
  };

  template <typename A>
  static const void* TagOf() {
    static const char tag = 0;
    return &tag;
  }
  template <typename A>
  static void DestroyObject(void* object, std::pmr::memory_resource* resource) {
    std::pmr::polymorphic_allocator<>(resource).delete_object(static_cast<A*>(object));
  }

  const void* FindObject(const Function* function, const void* tag) const;
  // Terminal check, estimate and charge for `contract` over `function`; on success a fresh
  // resource sized to the admitted bounds. Marks `key` in progress (a cycle is an internal bug).
  StatusOr<std::unique_ptr<BoundedResource>> Admit(const WorkContract& contract,
                                                  const Function& function, const Key& key);
  // Ends the in-progress mark of `key`; on error exhausts the ledger and returns `status`.
  Status Finish(const Key& key, Status status);
  // kResourceExhausted for an allocation failure inside Compute of `contract`.
  static Status AllocationFailure(const WorkContract& contract, const BoundedResource& resource,
                                  std::string_view what);
  void Insert(const Key& key, std::string_view name, void* object, DestroyFn destroy,
              std::unique_ptr<BoundedResource> resource);

  WorkLedger* ledger_;
  std::pmr::memory_resource* upstream_;
  std::map<Key, Entry, KeyLess> entries_;
  std::map<const Function*, Census, std::less<const Function*>> censuses_;
  std::vector<Key> in_progress_;
};

template <typename A>
StatusOr<const A*> AnalysisCache::Get(const Function& function) {
  const Key key(&function, TagOf<A>());
  if (const void* cached = FindObject(key.first, key.second)) return static_cast<const A*>(cached);
  const WorkContract& contract = A::Contract();
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<BoundedResource> resource,
                        Admit(contract, function, key));
  StatusOr<A*> computed = absl::UnknownError("analysis Compute did not return");
  try {
    AnalysisContext context(*this, resource.get());
    computed = A::Compute(context, function);
  } catch (const std::bad_alloc&) {
    computed = AllocationFailure(contract, *resource, "an allocation failed");
  } catch (const std::length_error&) {
    computed = AllocationFailure(contract, *resource, "a container size exceeded its maximum");
  }
  ACCY_RETURN_IF_ERROR(Finish(key, computed.status()));
  A* object = *computed;
  ACCY_CHECK(object != nullptr);
  Insert(key, contract.identity.name, object, &DestroyObject<A>, std::move(resource));
  return static_cast<const A*>(object);
}

template <typename A>
StatusOr<const A*> AnalysisContext::Get(const Function& function) {
  return cache_.Get<A>(function);
}

}  // namespace accy::passes

#endif  // ACCY_SRC_PASSES_ANALYSIS_CACHE_H_
