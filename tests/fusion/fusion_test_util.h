// Test helpers for fusion planning: plan a function, compare plans, and re-plan over exactly the
// declared workspace (a monotonic buffer with no upstream) and under a BoundedResource holding the
// declared bounds. Header-only; included from tests/fusion only.
#ifndef ACCY_TESTS_FUSION_FUSION_TEST_UTIL_H_
#define ACCY_TESTS_FUSION_FUSION_TEST_UTIL_H_

#include <cstddef>
#include <memory>
#include <memory_resource>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/fusion/fusion_plan.h"
#include "src/passes/bounded_resource.h"
#include "tests/test_util.h"

namespace accy::fusion_test {

inline TensorType F32(std::vector<int64_t> dims) {
  StatusOr<TensorType> type = TensorType::Create(ElementType::kF32, std::move(dims));
  ACCY_CHECK(type.ok());
  return *type;
}

// The defining ops of `values`, in the given order.
inline std::vector<const Operation*> Ops(std::initializer_list<const Value*> values) {
  std::vector<const Operation*> ops;
  for (const Value* value : values) ops.push_back(value->defining_op());
  return ops;
}

inline std::vector<const Operation*> AsVector(const std::pmr::vector<const Operation*>& ops) {
  return std::vector<const Operation*>(ops.begin(), ops.end());
}

// Destroys a FusionPlan the way PlanFusion's contract says.
struct PlanDeleter {
  std::pmr::memory_resource* resource;
  void operator()(FusionPlan* plan) const {
    std::pmr::polymorphic_allocator<>(resource).delete_object(plan);
  }
};
using PlanPtr = std::unique_ptr<FusionPlan, PlanDeleter>;

inline StatusOr<PlanPtr> Plan(const Function& function,
                              std::pmr::memory_resource* resource =
                                  std::pmr::new_delete_resource()) {
  ACCY_ASSIGN_OR_RETURN(FusionPlan * plan, PlanFusion(function, resource));
  return PlanPtr(plan, PlanDeleter{resource});
}

// Same clusters (kind and ops) and same elided list.
inline void ExpectSamePlan(const FusionPlan& expected, const FusionPlan& actual) {
  ASSERT_EQ(expected.clusters().size(), actual.clusters().size());
  for (size_t i = 0; i < expected.clusters().size(); ++i) {
    EXPECT_EQ(expected.clusters()[i].kind, actual.clusters()[i].kind) << "cluster " << i;
    EXPECT_EQ(AsVector(expected.clusters()[i].ops), AsVector(actual.clusters()[i].ops))
        << "cluster " << i;
  }
  EXPECT_EQ(AsVector(expected.elided()), AsVector(actual.elided()));
  EXPECT_EQ(expected.visits(), actual.visits());
}

// The seed's checkScheduleStorage for the fusion plan: the plan recomputed over a buffer of
// exactly the declared workspace (null upstream) equals `expected`; visits stay within the
// declared bound; under a BoundedResource with the declared capacity and workspace the plan
// succeeds, keeps at most the declared retained bytes, and gives everything back when destroyed.
inline void CheckStorage(const Function& function, const FusionPlan& expected) {
  StatusOr<passes::WorkBounds> bounds = EstimateFusionPlan(function);
  ASSERT_OK(bounds.status());
  EXPECT_EQ(bounds->work.analysis_computations, 1u);
  EXPECT_LE(expected.visits(), bounds->work.structural_visits);
  {
    std::vector<std::byte> buffer(static_cast<size_t>(bounds->workspace_bytes));
    std::pmr::monotonic_buffer_resource storage(buffer.data(), buffer.size(),
                                                std::pmr::null_memory_resource());
    StatusOr<PlanPtr> actual = Plan(function, &storage);
    ASSERT_OK(actual.status());
    ExpectSamePlan(expected, **actual);
  }
  passes::BoundedResource bounded(std::pmr::new_delete_resource(),
                                  bounds->work.allocation_capacity, bounds->workspace_bytes);
  {
    StatusOr<PlanPtr> actual = Plan(function, &bounded);
    ASSERT_OK(actual.status());
    EXPECT_FALSE(bounded.exceeded_bounds());
    EXPECT_LE(bounded.live_bytes(), bounds->retained_storage_bytes);
    EXPECT_LE(bounded.peak_live_bytes(), bounds->workspace_bytes);
    ExpectSamePlan(expected, **actual);
  }
  EXPECT_EQ(bounded.live_bytes(), 0u);
}

}  // namespace accy::fusion_test

#endif  // ACCY_TESTS_FUSION_FUSION_TEST_UTIL_H_
