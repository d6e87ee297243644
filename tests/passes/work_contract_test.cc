// Census and checked estimate arithmetic (src/passes/work_contract.h).
#include "src/passes/work_contract.h"

#include <cstdint>
#include <limits>

#include "absl/strings/match.h"
#include "accy/builder.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy::passes {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

TEST(WorkArithmeticTest, WorkAddAtTheLimitSucceeds) {
  ASSERT_OK_AND_ASSIGN(uint64_t sum, WorkAdd(kMax - 1, 1));
  EXPECT_EQ(sum, kMax);
}

TEST(WorkArithmeticTest, WorkAddOverflowIsWorkOverflowNotAWrap) {
  StatusOr<uint64_t> sum = WorkAdd(kMax, 1);
  ASSERT_FALSE(sum.ok());
  EXPECT_EQ(sum.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(absl::StartsWith(sum.status().message(), "WorkOverflow")) << sum.status();
}

TEST(WorkArithmeticTest, WorkMulAtTheLimitSucceeds) {
  ASSERT_OK_AND_ASSIGN(uint64_t product, WorkMul(kMax, 1));
  EXPECT_EQ(product, kMax);
  ASSERT_OK_AND_ASSIGN(uint64_t zero, WorkMul(0, kMax));
  EXPECT_EQ(zero, 0u);
}

TEST(WorkArithmeticTest, WorkMulOverflowIsWorkOverflowNotAWrap) {
  StatusOr<uint64_t> product = WorkMul(uint64_t{1} << 32, uint64_t{1} << 32);
  ASSERT_FALSE(product.ok());
  EXPECT_EQ(product.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(absl::StartsWith(product.status().message(), "WorkOverflow")) << product.status();
}

TEST(WorkVectorTest, UnlimitedIsMaxInEveryDimension) {
  EXPECT_EQ(WorkVector::Unlimited(), (WorkVector{kMax, kMax, kMax, kMax}));
  EXPECT_EQ(WorkVector::Uniform(7), (WorkVector{7, 7, 7, 7}));
}

// f(x: tensor<2x3xf32>) -> tensor<2xf32>: c = constant 0 (4 payload bytes);
// r = reduce(x, c) dims [1] with body add; compare(r, r) LT; return r.
TEST(CensusTest, CountsNestedRegionsValuesOperandsAtomsAndBytes) {
  Builder builder("census");
  TensorType f32x2x3 = *builder.Type(ElementType::kF32, {2, 3});
  TensorType f32x2 = *builder.Type(ElementType::kF32, {2});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("main", {f32x2x3}, {f32x2}));
  ASSERT_OK_AND_ASSIGN(Value * zero, f.ConstantScalar(ElementType::kF32, 0.0));
  ASSERT_OK_AND_ASSIGN(Value * sum, f.Reduce(f.Parameter(0), zero, f32x2, "sum", {1}));
  ASSERT_OK_AND_ASSIGN(Value * less, f.Compare(sum, sum, "LT"));
  (void)less;
  ASSERT_OK(f.Return({sum}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());

  ASSERT_OK_AND_ASSIGN(Census census, Census::Inspect(*module->functions()[0]));
  // constant, reduce, add (nested), return (nested), compare, return.
  EXPECT_EQ(census.operations, 6u);
  // x, zero, sum, two reduce body arguments, the body's add, less.
  EXPECT_EQ(census.values, 7u);
  // reduce 2, add 2, nested return 1, compare 2, return 1.
  EXPECT_EQ(census.operands, 8u);
  // the dense constant, one `dimensions` entry, comparison_direction.
  EXPECT_EQ(census.atoms, 3u);
  // 4 bytes of f32 payload plus "LT".
  EXPECT_EQ(census.input_bytes, 6u);
  EXPECT_EQ(census.regions, 2u);
  EXPECT_EQ(census.blocks, 2u);
  // ranks: x 2, sum 1, less 1, the rest 0.
  EXPECT_EQ(census.dims, 4u);
}

}  // namespace
}  // namespace accy::passes
