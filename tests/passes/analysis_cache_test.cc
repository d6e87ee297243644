// AnalysisCache: compute once, cache on success only, exhaust the ledger on any failure, and
// invalidate by preserved names (src/passes/analysis_cache.h).
#include "src/passes/analysis_cache.h"

#include <cstddef>
#include <memory>
#include <memory_resource>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/passes/test_analyses.h"
#include "tests/test_util.h"

namespace accy::passes {
namespace {

using testutil::CountingAnalysis;
using testutil::DependentAnalysis;
using testutil::FailingAnalysis;
using testutil::GreedyAnalysis;
using testutil::OverflowingAnalysis;

// Forwards to new/delete and counts live bytes, to prove the cache frees what it computed.
class LiveBytesResource final : public std::pmr::memory_resource {
 public:
  size_t live_bytes() const { return live_bytes_; }

 private:
  void* do_allocate(size_t bytes, size_t alignment) override {
    live_bytes_ += bytes;
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  void do_deallocate(void* p, size_t bytes, size_t alignment) override {
    live_bytes_ -= bytes;
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
  size_t live_bytes_ = 0;
};

class AnalysisCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testutil::ResetCounters();
    module_ = testutil::TwoFunctionModule();
  }
  const Function& f() const { return *module_->functions()[0]; }
  const Function& g() const { return *module_->functions()[1]; }

  std::unique_ptr<Module> module_;
};

TEST_F(AnalysisCacheTest, ComputesOnceAndReturnsTheCachedResultAfterwards) {
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  ASSERT_OK_AND_ASSIGN(const CountingAnalysis* first, cache.Get<CountingAnalysis>(f()));
  ASSERT_OK_AND_ASSIGN(const CountingAnalysis* second, cache.Get<CountingAnalysis>(f()));
  EXPECT_EQ(first, second);
  EXPECT_EQ(first->function, &f());
  EXPECT_EQ(CountingAnalysis::computations, 1);
  EXPECT_EQ(cache.entry_count(), 1u);
  EXPECT_EQ(cache.Find<CountingAnalysis>(f()), first);
  // Charged once: a cache hit costs nothing.
  EXPECT_EQ(ledger.used().analysis_computations, 1u);
  EXPECT_EQ(ledger.used().structural_visits, CountingAnalysis::kVisits);
}

TEST_F(AnalysisCacheTest, EachFunctionHasItsOwnResult) {
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  ASSERT_OK_AND_ASSIGN(const CountingAnalysis* on_f, cache.Get<CountingAnalysis>(f()));
  ASSERT_OK_AND_ASSIGN(const CountingAnalysis* on_g, cache.Get<CountingAnalysis>(g()));
  EXPECT_NE(on_f, on_g);
  EXPECT_EQ(on_g->function, &g());
  EXPECT_EQ(CountingAnalysis::computations, 2);
  EXPECT_EQ(cache.entry_count(), 2u);
}

TEST_F(AnalysisCacheTest, DependencyIsComputedThroughTheContextAndCachedToo) {
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  ASSERT_OK_AND_ASSIGN(const DependentAnalysis* dependent, cache.Get<DependentAnalysis>(f()));
  EXPECT_EQ(cache.entry_count(), 2u);
  EXPECT_EQ(dependent->dependency, cache.Find<CountingAnalysis>(f()));
  ASSERT_EQ(ledger.receipts().size(), 2u);
  EXPECT_EQ(ledger.receipts()[0].name, DependentAnalysis::kName);  // charged before computing
  EXPECT_EQ(ledger.receipts()[1].name, CountingAnalysis::kName);
}

TEST_F(AnalysisCacheTest, FailingComputeCachesNothingAndExhaustsTheLedger) {
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  StatusOr<const FailingAnalysis*> failed = cache.Get<FailingAnalysis>(f());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.entry_count(), 0u);
  EXPECT_EQ(ledger.outcome(), WorkOutcome::kExhausted);

  // Later requests, for any analysis, fail with the distinct terminal error and compute nothing.
  StatusOr<const CountingAnalysis*> later = cache.Get<CountingAnalysis>(f());
  EXPECT_EQ(later.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StartsWith(later.status().message(), "TerminalWorkOutcome"))
      << later.status();
  EXPECT_EQ(CountingAnalysis::computations, 0);
  StatusOr<const FailingAnalysis*> again = cache.Get<FailingAnalysis>(f());
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FailingAnalysis::computations, 1);
}

TEST_F(AnalysisCacheTest, EstimateOverflowIsWorkOverflowAndNeverComputes) {
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  StatusOr<const OverflowingAnalysis*> result = cache.Get<OverflowingAnalysis>(f());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(absl::StartsWith(result.status().message(), "WorkOverflow")) << result.status();
  EXPECT_EQ(OverflowingAnalysis::computations, 0);
  EXPECT_EQ(cache.entry_count(), 0u);
  EXPECT_EQ(ledger.outcome(), WorkOutcome::kExhausted);
  EXPECT_EQ(ledger.used(), WorkVector{});
}

TEST_F(AnalysisCacheTest, RefusedChargeNeverComputesAndCachesNothing) {
  PlanningOptions options;
  options.allowance.structural_visits = CountingAnalysis::kVisits - 1;
  WorkLedger ledger(options);
  AnalysisCache cache(&ledger);
  StatusOr<const CountingAnalysis*> result = cache.Get<CountingAnalysis>(f());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(result.status().message(), std::string(CountingAnalysis::kName)));
  EXPECT_EQ(CountingAnalysis::computations, 0);
  EXPECT_EQ(cache.entry_count(), 0u);
  EXPECT_EQ(ledger.outcome(), WorkOutcome::kExhausted);
}

TEST_F(AnalysisCacheTest, RefusedDependencyFailsTheDependentAndCachesNeither) {
  PlanningOptions options;
  options.allowance.analysis_computations = 1;  // the dependent only
  WorkLedger ledger(options);
  AnalysisCache cache(&ledger);
  StatusOr<const DependentAnalysis*> result = cache.Get<DependentAnalysis>(f());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(DependentAnalysis::computations, 1);
  EXPECT_EQ(CountingAnalysis::computations, 0);
  EXPECT_EQ(cache.entry_count(), 0u);
  EXPECT_EQ(ledger.outcome(), WorkOutcome::kExhausted);
}

TEST_F(AnalysisCacheTest, AllocationBeyondTheDeclaredBoundsIsResourceExhausted) {
  WorkLedger ledger;
  LiveBytesResource upstream;
  {
    AnalysisCache cache(&ledger, &upstream);
    StatusOr<const GreedyAnalysis*> result = cache.Get<GreedyAnalysis>(f());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_TRUE(absl::StrContains(result.status().message(), "declared")) << result.status();
    EXPECT_EQ(cache.entry_count(), 0u);
    EXPECT_EQ(ledger.outcome(), WorkOutcome::kExhausted);
  }
  EXPECT_EQ(upstream.live_bytes(), 0u);  // the partial object was freed
}

TEST_F(AnalysisCacheTest, UpstreamRunningOutIsResourceExhausted) {
  WorkLedger ledger;
  AnalysisCache cache(&ledger, std::pmr::null_memory_resource());
  StatusOr<const CountingAnalysis*> result = cache.Get<CountingAnalysis>(f());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(result.status().message(), "ran out")) << result.status();
  EXPECT_EQ(cache.entry_count(), 0u);
  EXPECT_EQ(ledger.outcome(), WorkOutcome::kExhausted);
}

TEST_F(AnalysisCacheTest, InvalidateKeepsOnlyPreservedNamesOfThatFunction) {
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  ASSERT_OK(cache.Get<DependentAnalysis>(f()).status());
  ASSERT_OK(cache.Get<CountingAnalysis>(g()).status());
  ASSERT_EQ(cache.entry_count(), 3u);

  cache.Invalidate(f(), PreservedAnalyses::All());
  EXPECT_EQ(cache.entry_count(), 3u);

  cache.Invalidate(f(), PreservedAnalyses::Only({std::string(CountingAnalysis::kName)}));
  EXPECT_EQ(cache.entry_count(), 2u);
  EXPECT_NE(cache.Find<CountingAnalysis>(f()), nullptr);
  EXPECT_EQ(cache.Find<DependentAnalysis>(f()), nullptr);
  EXPECT_EQ(CountingAnalysis::destructions, 0);

  cache.Invalidate(f(), PreservedAnalyses::None());
  EXPECT_EQ(cache.entry_count(), 1u);
  EXPECT_EQ(CountingAnalysis::destructions, 1);  // destroyed with its destructor
  EXPECT_NE(cache.Find<CountingAnalysis>(g()), nullptr);  // other functions untouched

  // After invalidation the next Get recomputes.
  ASSERT_OK(cache.Get<CountingAnalysis>(f()).status());
  EXPECT_EQ(CountingAnalysis::computations, 3);
}

TEST_F(AnalysisCacheTest, CensusIsInspectedOncePerFunctionUntilInvalidated) {
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  ASSERT_OK_AND_ASSIGN(Census expected_f, Census::Inspect(f()));
  ASSERT_OK_AND_ASSIGN(const Census* census_f, cache.CensusOf(f()));
  EXPECT_EQ(*census_f, expected_f);
  ASSERT_OK_AND_ASSIGN(const Census* again, cache.CensusOf(f()));
  EXPECT_EQ(again, census_f);  // the same object: no second walk
  ASSERT_OK_AND_ASSIGN(const Census* census_g, cache.CensusOf(g()));
  EXPECT_NE(census_g, census_f);

  // A change to the IR is seen only after the function is invalidated.
  Block* entry = f().entry_block();
  entry->Append(Operation::Create(OpKind::kReturn, {}, {}));
  ASSERT_OK_AND_ASSIGN(const Census* stale, cache.CensusOf(f()));
  EXPECT_EQ(stale->operations, expected_f.operations);
  cache.Invalidate(f(), PreservedAnalyses::All());  // preserving all keeps it too
  ASSERT_OK_AND_ASSIGN(stale, cache.CensusOf(f()));
  EXPECT_EQ(stale->operations, expected_f.operations);
  cache.Invalidate(f(), PreservedAnalyses::None());
  ASSERT_OK_AND_ASSIGN(const Census* fresh, cache.CensusOf(f()));
  EXPECT_EQ(fresh->operations, expected_f.operations + 1);
  entry->EraseLast();
}

TEST_F(AnalysisCacheTest, DestroyingTheCacheFreesEveryResult) {
  WorkLedger ledger;
  LiveBytesResource upstream;
  {
    AnalysisCache cache(&ledger, &upstream);
    ASSERT_OK(cache.Get<DependentAnalysis>(f()).status());
    ASSERT_OK(cache.Get<DependentAnalysis>(g()).status());
    EXPECT_GT(upstream.live_bytes(), 0u);
  }
  EXPECT_EQ(upstream.live_bytes(), 0u);
  EXPECT_EQ(CountingAnalysis::destructions, 2);
}

}  // namespace
}  // namespace accy::passes
