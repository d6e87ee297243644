// Small analyses and modules shared by the tests of src/passes: a counting analysis, one that
// depends on it, and ones that fail in each way the AnalysisCache must handle.
//
// Header-only, test code only. The counters are process-wide statics: fixtures reset them in
// SetUp. Not thread-safe.
#ifndef ACCY_TESTS_PASSES_TEST_ANALYSES_H_
#define ACCY_TESTS_PASSES_TEST_ANALYSES_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <memory_resource>
#include <string_view>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_contract.h"

namespace accy::passes::testutil {

// Bounds with every dimension of `work` set as given and storage of `bytes`.
inline WorkBounds FixedBounds(uint64_t visits, uint64_t bytes) {
  WorkBounds bounds;
  bounds.work.structural_visits = visits;
  bounds.work.analysis_computations = 1;
  bounds.work.allocation_capacity = bytes;
  bounds.workspace_bytes = bytes;
  bounds.retained_storage_bytes = bytes;
  return bounds;
}

// Counts its computations and destructions; declares 3 visits.
struct CountingAnalysis {
  static constexpr std::string_view kName = "test-counting";
  static constexpr uint64_t kVisits = 3;
  static inline int computations = 0;
  static inline int destructions = 0;

  explicit CountingAnalysis(const Function* f) : function(f) {}
  ~CountingAnalysis() { ++destructions; }
  const Function* function;

  static StatusOr<WorkBounds> Estimate(const Function&) {
    return FixedBounds(kVisits, sizeof(CountingAnalysis) + alignof(CountingAnalysis));
  }
  static const WorkContract& Contract() {
    static const WorkContract contract{{kName, 1}, &Estimate};
    return contract;
  }
  static StatusOr<CountingAnalysis*> Compute(AnalysisContext& ctx, const Function& function) {
    ++computations;
    return std::pmr::polymorphic_allocator<>(ctx.resource()).new_object<CountingAnalysis>(
        &function);
  }
};

// Depends on CountingAnalysis through the context; declares 5 visits.
struct DependentAnalysis {
  static constexpr std::string_view kName = "test-dependent";
  static inline int computations = 0;

  explicit DependentAnalysis(const CountingAnalysis* d) : dependency(d) {}
  const CountingAnalysis* dependency;

  static StatusOr<WorkBounds> Estimate(const Function&) {
    return FixedBounds(5, sizeof(DependentAnalysis) + alignof(DependentAnalysis));
  }
  static const WorkContract& Contract() {
    static const WorkContract contract{{kName, 1}, &Estimate};
    return contract;
  }
  static StatusOr<DependentAnalysis*> Compute(AnalysisContext& ctx, const Function& function) {
    ++computations;
    ACCY_ASSIGN_OR_RETURN(const CountingAnalysis* dependency,
                          ctx.Get<CountingAnalysis>(function));
    return std::pmr::polymorphic_allocator<>(ctx.resource()).new_object<DependentAnalysis>(
        dependency);
  }
};

// Compute fails with kInvalidArgument.
struct FailingAnalysis {
  static constexpr std::string_view kName = "test-failing";
  static inline int computations = 0;
  static StatusOr<WorkBounds> Estimate(const Function&) { return FixedBounds(1, 0); }
  static const WorkContract& Contract() {
    static const WorkContract contract{{kName, 1}, &Estimate};
    return contract;
  }
  static StatusOr<FailingAnalysis*> Compute(AnalysisContext&, const Function&) {
    ++computations;
    return absl::InvalidArgumentError("test-failing: unsupported program");
  }
};

// The estimate overflows (WorkOverflow); Compute must never run.
struct OverflowingAnalysis {
  static constexpr std::string_view kName = "test-overflowing";
  static inline int computations = 0;
  static StatusOr<WorkBounds> Estimate(const Function&) {
    ACCY_ASSIGN_OR_RETURN(uint64_t visits, WorkMul(std::numeric_limits<uint64_t>::max(), 2));
    return FixedBounds(visits, 0);
  }
  static const WorkContract& Contract() {
    static const WorkContract contract{{kName, 1}, &Estimate};
    return contract;
  }
  static StatusOr<OverflowingAnalysis*> Compute(AnalysisContext&, const Function&) {
    ++computations;
    return absl::InternalError("unreachable");
  }
};

// Declares 64 bytes but allocates 4096: its bounds are not upper bounds.
struct GreedyAnalysis {
  static constexpr std::string_view kName = "test-greedy";
  explicit GreedyAnalysis(std::pmr::memory_resource* resource) : bytes(4096, 0, resource) {}
  std::pmr::vector<char> bytes;
  static StatusOr<WorkBounds> Estimate(const Function&) { return FixedBounds(1, 64); }
  static const WorkContract& Contract() {
    static const WorkContract contract{{kName, 1}, &Estimate};
    return contract;
  }
  static StatusOr<GreedyAnalysis*> Compute(AnalysisContext& ctx, const Function&) {
    std::pmr::polymorphic_allocator<> allocator(ctx.resource());
    return allocator.new_object<GreedyAnalysis>(ctx.resource());
  }
};

inline void ResetCounters() {
  CountingAnalysis::computations = 0;
  CountingAnalysis::destructions = 0;
  DependentAnalysis::computations = 0;
  FailingAnalysis::computations = 0;
  OverflowingAnalysis::computations = 0;
}

// A module with functions "f" and "g", each `negate` over tensor<4xf32>.
inline std::unique_ptr<Module> TwoFunctionModule() {
  Builder builder("two_functions");
  TensorType f32x4 = *builder.Type(ElementType::kF32, {4});
  for (const char* name : {"f", "g"}) {
    FunctionBuilder f = *builder.BeginFunction(name, {f32x4}, {f32x4});
    Value* negated = *f.Negate(f.Parameter(0));
    ACCY_CHECK(f.Return({negated}).ok());
  }
  StatusOr<std::unique_ptr<Module>> module = builder.Finish();
  ACCY_CHECK(module.ok());
  return *std::move(module);
}

}  // namespace accy::passes::testutil

#endif  // ACCY_TESTS_PASSES_TEST_ANALYSES_H_
