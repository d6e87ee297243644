// ShapeLayoutAnalysis values: dims, element counts, strides, byte sizes, and its estimate's
// checked arithmetic (src/analysis/shape_layout_analysis.h).
#include "src/analysis/shape_layout_analysis.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "accy/builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/passes/analysis_cache.h"
#include "src/passes/work_ledger.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using passes::AnalysisCache;
using passes::Census;
using passes::WorkLedger;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

std::vector<int64_t> Vec(std::span<const int64_t> s) { return {s.begin(), s.end()}; }

// main(x: tensor<2x3x4xf32>, z: tensor<0x3xf32>, s: tensor<f32>):
//   h = convert(x) to f16; nz = negate(z); sum = reduce(x, s) over dims [1, 2] (body: add)
//   return h, nz, sum
// other(y: tensor<4xf32>): return y
class ShapeLayoutAnalysisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Builder builder("shapes");
    TensorType x_type = *builder.Type(ElementType::kF32, {2, 3, 4});
    TensorType h_type = *builder.Type(ElementType::kF16, {2, 3, 4});
    TensorType z_type = *builder.Type(ElementType::kF32, {0, 3});
    TensorType s_type = *builder.Type(ElementType::kF32, {});
    TensorType sum_type = *builder.Type(ElementType::kF32, {2});
    ASSERT_OK_AND_ASSIGN(FunctionBuilder f,
                         builder.BeginFunction("main", {x_type, z_type, s_type},
                                               {h_type, z_type, sum_type}));
    x_ = f.Parameter(0);
    z_ = f.Parameter(1);
    s_ = f.Parameter(2);
    ASSERT_OK_AND_ASSIGN(h_, f.Convert(x_, ElementType::kF16));
    ASSERT_OK_AND_ASSIGN(nz_, f.Negate(z_));
    ASSERT_OK_AND_ASSIGN(sum_, f.Reduce(x_, s_, sum_type, "sum", {1, 2}));
    ASSERT_OK(f.Return({h_, nz_, sum_}));
    TensorType y_type = *builder.Type(ElementType::kF32, {4});
    ASSERT_OK_AND_ASSIGN(FunctionBuilder other, builder.BeginFunction("other", {y_type}, {y_type}));
    y_ = other.Parameter(0);
    ASSERT_OK(other.Return({y_}));
    ASSERT_OK_AND_ASSIGN(module_, builder.Finish());
    cache_ = std::make_unique<AnalysisCache>(&ledger_);
    ASSERT_OK_AND_ASSIGN(analysis_,
                         cache_->Get<ShapeLayoutAnalysis>(*module_->FindFunction("main")));
  }

  const TensorInfo& Info(const Value* value) {
    const TensorInfo* info = analysis_->Get(value);
    ACCY_CHECK(info != nullptr);
    return *info;
  }

  std::unique_ptr<Module> module_;
  WorkLedger ledger_;
  std::unique_ptr<AnalysisCache> cache_;
  const ShapeLayoutAnalysis* analysis_ = nullptr;
  Value *x_, *z_, *s_, *h_, *nz_, *sum_, *y_;
};

TEST_F(ShapeLayoutAnalysisTest, RankThreeValueHasRowMajorStridesAndCount) {
  const TensorInfo& x = Info(x_);
  EXPECT_EQ(x.value, x_);
  EXPECT_EQ(x.element_type, ElementType::kF32);
  EXPECT_EQ(x.rank(), 3);
  EXPECT_THAT(Vec(x.dims), ElementsAre(2, 3, 4));
  EXPECT_THAT(Vec(x.strides), ElementsAre(12, 4, 1));
  EXPECT_EQ(x.element_count, 24u);
  EXPECT_EQ(x.ByteSize(), 96u);
  EXPECT_TRUE(x.static_layout);
}

TEST_F(ShapeLayoutAnalysisTest, ConvertedValueKeepsShapeWithItsOwnElementType) {
  const TensorInfo& h = Info(h_);
  EXPECT_EQ(h.element_type, ElementType::kF16);
  EXPECT_THAT(Vec(h.dims), ElementsAre(2, 3, 4));
  EXPECT_EQ(h.ByteSize(), 48u);
}

TEST_F(ShapeLayoutAnalysisTest, ZeroSizeDimGivesZeroElementsAndAStaticLayout) {
  for (const Value* value : {z_, nz_}) {
    const TensorInfo& z = Info(value);
    EXPECT_THAT(Vec(z.dims), ElementsAre(0, 3));
    EXPECT_THAT(Vec(z.strides), ElementsAre(3, 1));
    EXPECT_EQ(z.element_count, 0u);
    EXPECT_EQ(z.ByteSize(), 0u);
    EXPECT_TRUE(z.static_layout);
  }
}

TEST_F(ShapeLayoutAnalysisTest, RankZeroValueHasOneElementAndNoStrides) {
  const TensorInfo& s = Info(s_);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_THAT(Vec(s.dims), IsEmpty());
  EXPECT_THAT(Vec(s.strides), IsEmpty());
  EXPECT_EQ(s.element_count, 1u);
  EXPECT_EQ(s.ByteSize(), 4u);
  EXPECT_TRUE(s.static_layout);
}

TEST_F(ShapeLayoutAnalysisTest, NestedRegionValuesAreAnalysed) {
  const Operation* reduce = sum_->defining_op();
  const Block* body = reduce->region(0)->entry_block();
  for (const Value* argument : body->arguments()) {
    const TensorInfo* info = analysis_->Get(argument);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->rank(), 0);
    EXPECT_EQ(info->element_count, 1u);
  }
  const Value* combined = body->operations().front()->result(0);
  ASSERT_NE(analysis_->Get(combined), nullptr);
  EXPECT_THAT(Vec(Info(sum_).strides), ElementsAre(1));
}

TEST_F(ShapeLayoutAnalysisTest, EveryValueOfTheFunctionIsNumberedOnce) {
  ASSERT_OK_AND_ASSIGN(Census census, Census::Inspect(*module_->FindFunction("main")));
  EXPECT_EQ(analysis_->size(), census.values);  // x z s h nz sum + 2 body args + body add
  EXPECT_EQ(analysis_->size(), 9u);
  EXPECT_EQ(analysis_->values()[0].value, x_);  // parameters first
  for (const TensorInfo& info : analysis_->values()) EXPECT_EQ(analysis_->Get(info.value), &info);
}

TEST_F(ShapeLayoutAnalysisTest, ValueOfAnotherFunctionIsAbsent) {
  EXPECT_EQ(analysis_->Get(y_), nullptr);
  EXPECT_EQ(analysis_->Get(nullptr), nullptr);
}

TEST(ShapeLayoutLimitsTest, ByteSizeOfMaximalF32TensorOverflowsToNullopt) {
  Builder builder("huge");
  TensorType huge = *builder.Type(ElementType::kF32, {kInt64Max});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("main", {huge}, {huge}));
  ASSERT_OK_AND_ASSIGN(Value * negated, f.Negate(f.Parameter(0)));
  ASSERT_OK(f.Return({negated}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  ASSERT_OK_AND_ASSIGN(const ShapeLayoutAnalysis* analysis,
                       cache.Get<ShapeLayoutAnalysis>(*module->functions()[0]));
  const TensorInfo* info = analysis->Get(negated);
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->element_count, uint64_t{kInt64Max});
  EXPECT_TRUE(info->static_layout);
  EXPECT_THAT(Vec(info->strides), ElementsAre(1));
  EXPECT_EQ(info->ByteSize(), std::nullopt);  // (2^63-1) * 4 bytes does not fit in 64 bits
}

TEST(ShapeLayoutLimitsTest, StrideOverflowBesideAZeroDimMakesTheLayoutNonStatic) {
  Builder builder("empty_but_wide");
  // 0 elements, but the outer stride would be 2^62 * 4 = 2^64.
  TensorType type = *builder.Type(ElementType::kF32, {0, int64_t{1} << 62, 4});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder f, builder.BeginFunction("main", {type}, {type}));
  ASSERT_OK(f.Return({f.Parameter(0)}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  WorkLedger ledger;
  AnalysisCache cache(&ledger);
  const Function& function = *module->functions()[0];
  ASSERT_OK_AND_ASSIGN(const ShapeLayoutAnalysis* analysis,
                       cache.Get<ShapeLayoutAnalysis>(function));
  const TensorInfo* info = analysis->Get(function.parameter(0));
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->element_count, 0u);
  EXPECT_FALSE(info->static_layout);
  EXPECT_THAT(Vec(info->strides), IsEmpty());
  EXPECT_THAT(Vec(info->dims), ElementsAre(0, int64_t{1} << 62, 4));
}

TEST(ShapeLayoutEstimateTest, VisitsFollowTheDocumentedFormula) {
  // 2 ops, 3 values (3 value ids), 1 region, 1 block, 3 dims:
  // 2 * (1 + 1 + 2 + 3) + 3 * 3 + (3 + 3) + 1 = 14 + 9 + 6 + 1.
  Census census{.operations = 2, .values = 3, .regions = 1, .blocks = 1, .dims = 3,
                .value_ids = 3};
  ASSERT_OK_AND_ASSIGN(passes::WorkBounds bounds,
                       ShapeLayoutAnalysis::EstimateFromCensus(census));
  EXPECT_EQ(bounds.work.structural_visits, 30u);
  EXPECT_EQ(bounds.work.analysis_computations, 1u);
  EXPECT_EQ(bounds.work.input_bytes, 0u);
  EXPECT_EQ(bounds.workspace_bytes, bounds.work.allocation_capacity);
  EXPECT_EQ(bounds.retained_storage_bytes, bounds.workspace_bytes);
  EXPECT_GE(bounds.workspace_bytes, sizeof(ShapeLayoutAnalysis));
}

TEST(ShapeLayoutEstimateTest, HugeCensusIsWorkOverflowNotAWrap) {
  for (Census census : {Census{.values = kMax}, Census{.dims = kMax / 2 + 1},
                        Census{.operations = kMax, .values = 1}, Census{.regions = kMax / 2 + 1}}) {
    StatusOr<passes::WorkBounds> bounds = ShapeLayoutAnalysis::EstimateFromCensus(census);
    ASSERT_FALSE(bounds.ok());
    EXPECT_EQ(bounds.status().code(), absl::StatusCode::kOutOfRange);
    EXPECT_TRUE(absl::StartsWith(bounds.status().message(), "WorkOverflow")) << bounds.status();
  }
}

}  // namespace
}  // namespace accy
