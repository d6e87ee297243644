// The seed's schedule planning tests (seed/schedule_pass.zig.txt, from line 963), ported with the
// same programs and the same expected numbers. ctest label: seed.
#include <memory>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "kernels/kernel_catalog.h"
#include "src/schedule/schedule_plan.h"
#include "tests/schedule/schedule_test_util.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using testing_util::FindNthOp;
using testing_util::PlannedModule;

constexpr ElementType kF32 = ElementType::kF32;

TensorType T(std::vector<int64_t> dims) { return *TensorType::Create(kF32, std::move(dims)); }

TEST(ScheduleSeedTest, EmitsOneWorkItemForAnElementwiseFusionCluster) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("schedule_fused_add_mul", {T({4}), T({4}), T({4})},
                                             {T({4})}));
  ASSERT_OK_AND_ASSIGN(Value * sum, fb.Add(fb.Parameter(0), fb.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * product, fb.Multiply(sum, fb.Parameter(2)));
  ASSERT_OK(fb.Return({product}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "schedule_fused_add_mul");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);

  EXPECT_EQ(plan->work_item_count(), 1);
  EXPECT_EQ(plan->single_work_count(), 0);
  EXPECT_EQ(plan->fusion_work_count(), 1);
  EXPECT_EQ(plan->scheduled_op_count(), 2);
  EXPECT_EQ(plan->total_static_elements(), 4u);

  const Operation* mul = FindNthOp(planned.function(), OpKind::kMultiply, 0);
  const WorkItem* item = plan->GetWorkForRoot(mul);
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->kind, WorkKind::kElementwiseFusion);
  EXPECT_EQ(item->op_count(), 2);
  EXPECT_EQ(item->dtype, kF32);
  EXPECT_EQ(item->rank, 1);
  EXPECT_EQ(item->element_count, 4u);
  EXPECT_EQ(item->resources.element_count, 4u);
  EXPECT_EQ(item->resources.element_size, 4u);
  EXPECT_EQ(item->resources.op_count, 2u);
  EXPECT_EQ(item->resources.external_input_value_count, 3u);
  EXPECT_EQ(item->resources.external_operand_count, 3u);
  EXPECT_EQ(item->resources.chain_operand_count, 1u);
  EXPECT_EQ(item->resources.static_read_bytes, 48u);
  EXPECT_EQ(item->resources.static_write_bytes, 16u);
  EXPECT_EQ(item->resources.static_total_bytes, 64u);
  EXPECT_EQ(item->resources.estimated_element_ops, 8u);
  EXPECT_EQ(item->resources.ElementOpsPerKiB(), 128u);
  EXPECT_TRUE(item->resources.static_bytes_complete);
  EXPECT_EQ(item->output_value, mul->result(0));
}

TEST(ScheduleSeedTest, EmitsStandaloneWorkWhenFusionIsRejected) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("schedule_escape", {T({4}), T({4}), T({4})},
                                             {T({4}), T({4})}));
  ASSERT_OK_AND_ASSIGN(Value * sum, fb.Add(fb.Parameter(0), fb.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * product, fb.Multiply(sum, fb.Parameter(2)));
  ASSERT_OK(fb.Return({sum, product}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "schedule_escape");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);

  EXPECT_EQ(plan->work_item_count(), 2);
  EXPECT_EQ(plan->single_work_count(), 2);
  EXPECT_EQ(plan->fusion_work_count(), 0);
  EXPECT_EQ(plan->scheduled_op_count(), 2);
  EXPECT_EQ(plan->total_static_elements(), 8u);
  const WorkItem* add_work = plan->GetWorkForRoot(FindNthOp(planned.function(), OpKind::kAdd, 0));
  const WorkItem* mul_work =
      plan->GetWorkForRoot(FindNthOp(planned.function(), OpKind::kMultiply, 0));
  ASSERT_NE(add_work, nullptr);
  ASSERT_NE(mul_work, nullptr);
  EXPECT_EQ(add_work->kind, WorkKind::kElementwiseSingle);
  EXPECT_EQ(mul_work->kind, WorkKind::kElementwiseSingle);
  EXPECT_EQ(add_work->resources.external_input_value_count, 2u);
  EXPECT_EQ(add_work->resources.external_operand_count, 2u);
  EXPECT_EQ(add_work->resources.static_read_bytes, 32u);
  EXPECT_EQ(add_work->resources.static_write_bytes, 16u);
  EXPECT_EQ(add_work->resources.static_total_bytes, 48u);
  EXPECT_EQ(add_work->resources.estimated_element_ops, 4u);
  EXPECT_EQ(mul_work->resources.external_input_value_count, 2u);
  EXPECT_EQ(mul_work->resources.external_operand_count, 2u);
  EXPECT_EQ(mul_work->resources.chain_operand_count, 0u);
  EXPECT_EQ(mul_work->resources.static_total_bytes, 48u);
}

TEST(ScheduleSeedTest, EmitsDotGeneralWorkForStaticRank2Matmul) {
  Builder builder;
  TensorType t16 = T({16, 16});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("schedule_dot_general_matmul", {t16, t16}, {t16}));
  ASSERT_OK_AND_ASSIGN(Value * dot,
                       fb.DotGeneral(fb.Parameter(0), fb.Parameter(1), t16, {1}, {0}, {}, {}));
  ASSERT_OK(fb.Return({dot}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "schedule_dot_general_matmul");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);

  EXPECT_EQ(plan->work_item_count(), 1);
  EXPECT_EQ(plan->single_work_count(), 1);
  EXPECT_EQ(plan->fusion_work_count(), 0);
  EXPECT_EQ(plan->scheduled_op_count(), 1);
  EXPECT_EQ(plan->total_static_elements(), 256u);
  const WorkItem* item = plan->GetWorkForRoot(dot->defining_op());
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->kind, WorkKind::kDotGeneral);
  EXPECT_EQ(item->op_count(), 1);
  EXPECT_EQ(item->dtype, kF32);
  EXPECT_EQ(item->rank, 2);
  EXPECT_EQ(item->element_count, 256u);
  EXPECT_EQ(item->resources.element_count, 256u);
  EXPECT_EQ(item->resources.element_size, 4u);
  EXPECT_EQ(item->resources.op_count, 1u);
  EXPECT_EQ(item->resources.external_input_value_count, 2u);
  EXPECT_EQ(item->resources.external_operand_count, 2u);
  EXPECT_EQ(item->resources.chain_operand_count, 0u);
  EXPECT_EQ(item->resources.static_read_bytes, 2048u);
  EXPECT_EQ(item->resources.static_write_bytes, 1024u);
  EXPECT_EQ(item->resources.static_total_bytes, 3072u);
  EXPECT_EQ(item->resources.estimated_element_ops, 8192u);
  EXPECT_EQ(item->resources.ElementOpsPerKiB(), 2730u);
  EXPECT_TRUE(item->resources.static_bytes_complete);
}

TEST(ScheduleSeedTest, EmitsReductionWorkForStaticRank1Reduce) {
  Builder builder;
  TensorType scalar = T({});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("schedule_reduce_sum_rank1", {T({256})}, {scalar}));
  ASSERT_OK_AND_ASSIGN(Value * zero, fb.ConstantScalar(kF32, 0.0));
  ASSERT_OK_AND_ASSIGN(Value * reduced, fb.Reduce(fb.Parameter(0), zero, scalar, "sum", {0}));
  ASSERT_OK(fb.Return({reduced}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "schedule_reduce_sum_rank1");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);

  EXPECT_EQ(plan->work_item_count(), 1);
  EXPECT_EQ(plan->single_work_count(), 1);
  EXPECT_EQ(plan->fusion_work_count(), 0);
  EXPECT_EQ(plan->scheduled_op_count(), 1);
  EXPECT_EQ(plan->total_static_elements(), 1u);
  const WorkItem* item = plan->GetWorkForRoot(reduced->defining_op());
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->kind, WorkKind::kReduction);
  EXPECT_EQ(item->op_count(), 1);
  EXPECT_EQ(item->dtype, kF32);
  EXPECT_EQ(item->rank, 0);
  EXPECT_EQ(item->element_count, 1u);
  EXPECT_EQ(item->resources.element_count, 256u);
  EXPECT_EQ(item->resources.element_size, 4u);
  EXPECT_EQ(item->resources.op_count, 1u);
  EXPECT_EQ(item->resources.external_input_value_count, 1u);
  EXPECT_EQ(item->resources.external_operand_count, 1u);
  EXPECT_EQ(item->resources.chain_operand_count, 0u);
  EXPECT_EQ(item->resources.static_read_bytes, 1024u);
  EXPECT_EQ(item->resources.static_write_bytes, 4u);
  EXPECT_EQ(item->resources.static_total_bytes, 1028u);
  EXPECT_EQ(item->resources.estimated_element_ops, 256u);
  EXPECT_EQ(item->resources.ElementOpsPerKiB(), 255u);
  EXPECT_TRUE(item->resources.static_bytes_complete);
}

TEST(ScheduleSeedTest, EmitsKernelCallWorkWithOperandEffects) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("schedule_kernel_call", {T({4}), T({4})}, {T({4})}));
  ASSERT_OK_AND_ASSIGN(Operation * call,
                       fb.KernelCall({fb.Parameter(0), fb.Parameter(1)}, {T({4})},
                                     {.target = "accy.custom.scale",
                                      .operand_effects = {OperandEffect::kRead,
                                                          OperandEffect::kWrite},
                                      .result_aliases = {std::nullopt}}));
  ASSERT_OK(fb.Return({call->result(0)}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "schedule_kernel_call");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);

  EXPECT_EQ(plan->work_item_count(), 1);
  EXPECT_EQ(plan->single_work_count(), 0);
  EXPECT_EQ(plan->fusion_work_count(), 0);
  EXPECT_EQ(plan->kernel_call_work_count(), 1);
  EXPECT_EQ(plan->scheduled_op_count(), 1);
  EXPECT_EQ(plan->total_static_elements(), 4u);
  const WorkItem* item = plan->GetWorkForRoot(call);
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->kind, WorkKind::kKernelCall);
  EXPECT_EQ(item->op_count(), 1);
  EXPECT_EQ(item->dtype, kF32);
  EXPECT_EQ(item->rank, 1);
  EXPECT_EQ(item->element_count, 4u);
  EXPECT_EQ(item->resources.element_count, 4u);
  EXPECT_EQ(item->resources.element_size, 4u);
  EXPECT_EQ(item->resources.op_count, 1u);
  EXPECT_EQ(item->resources.external_input_value_count, 2u);
  EXPECT_EQ(item->resources.external_operand_count, 2u);
  EXPECT_EQ(item->resources.chain_operand_count, 0u);
  EXPECT_EQ(item->resources.static_read_bytes, 16u);
  EXPECT_EQ(item->resources.static_write_bytes, 16u);
  EXPECT_EQ(item->resources.static_total_bytes, 32u);
  EXPECT_EQ(item->resources.estimated_element_ops, 4u);
  EXPECT_EQ(item->output_value, call->result(0));
}

TEST(ScheduleSeedTest, EstimatesCatalogKernelCallReductions) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("schedule_catalog_kernel_call_matmul",
                                             {T({4, 8}), T({8, 16})}, {T({4, 16})}));
  ASSERT_OK_AND_ASSIGN(
      Operation * call,
      fb.KernelCall({fb.Parameter(0), fb.Parameter(1)}, {T({4, 16})},
                    {.target = std::string(kernels::kMatrixProduct4x16x8F32),
                     .operand_effects = {OperandEffect::kRead, OperandEffect::kRead},
                     .result_aliases = {std::nullopt}}));
  ASSERT_OK(fb.Return({call->result(0)}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "schedule_catalog_kernel_call_matmul");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);

  EXPECT_EQ(plan->work_item_count(), 1);
  EXPECT_EQ(plan->kernel_call_work_count(), 1);
  const WorkItem* item = plan->GetWorkForRoot(call);
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->kind, WorkKind::kKernelCall);
  EXPECT_EQ(item->element_count, 64u);
  EXPECT_EQ(item->resources.element_count, 64u);
  EXPECT_EQ(item->resources.static_read_bytes, 640u);
  EXPECT_EQ(item->resources.static_write_bytes, 256u);
  EXPECT_EQ(item->resources.static_total_bytes, 896u);
  EXPECT_EQ(item->resources.estimated_element_ops, 1024u);
  EXPECT_EQ(item->resources.ElementOpsPerKiB(), 1170u);
}

// Shape ops: transpose, slice, pad, iota, concatenate.
TEST(ScheduleSeedTest, EmitsShapeWorkForStaticTranspose) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("schedule_transpose",
                                                                 {T({16, 32})}, {T({32, 16})}));
  ASSERT_OK_AND_ASSIGN(Value * transposed, fb.Transpose(fb.Parameter(0), {1, 0}));
  ASSERT_OK(fb.Return({transposed}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "schedule_transpose");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);
  EXPECT_EQ(plan->work_item_count(), 1);
  EXPECT_EQ(plan->single_work_count(), 1);
  EXPECT_EQ(plan->fusion_work_count(), 0);
  const WorkItem* item = plan->GetWorkForRoot(transposed->defining_op());
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->kind, WorkKind::kShape);
  EXPECT_EQ(item->op_count(), 1);
  EXPECT_EQ(item->dtype, kF32);
  EXPECT_EQ(item->rank, 2);
  EXPECT_EQ(item->element_count, 512u);
  EXPECT_EQ(item->resources.static_read_bytes, 2048u);
  EXPECT_EQ(item->resources.static_write_bytes, 2048u);
  EXPECT_EQ(item->resources.static_total_bytes, 4096u);
}

TEST(ScheduleSeedTest, EmitsShapeWorkForStaticSlice) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("schedule_slice", {T({18, 18})}, {T({16, 16})}));
  ASSERT_OK_AND_ASSIGN(Value * sliced, fb.Slice(fb.Parameter(0), {1, 1}, {17, 17}, {1, 1}));
  ASSERT_OK(fb.Return({sliced}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "schedule_slice");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);
  EXPECT_EQ(plan->work_item_count(), 1);
  EXPECT_EQ(plan->single_work_count(), 1);
  EXPECT_EQ(plan->fusion_work_count(), 0);
  const WorkItem* item = plan->GetWorkForRoot(sliced->defining_op());
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->kind, WorkKind::kShape);
  EXPECT_EQ(item->op_count(), 1);
  EXPECT_EQ(item->rank, 2);
  EXPECT_EQ(item->element_count, 256u);
  EXPECT_EQ(item->resources.static_read_bytes, 1296u);
  EXPECT_EQ(item->resources.static_write_bytes, 1024u);
  EXPECT_EQ(item->resources.static_total_bytes, 2320u);
}

TEST(ScheduleSeedTest, EmitsShapeWorkForStaticPad) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("schedule_pad", {T({4, 4}), T({})}, {T({6, 6})}));
  ASSERT_OK_AND_ASSIGN(Value * padded,
                       fb.Pad(fb.Parameter(0), fb.Parameter(1), {1, 1}, {1, 1}, {0, 0}));
  ASSERT_OK(fb.Return({padded}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "schedule_pad");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);
  EXPECT_EQ(plan->work_item_count(), 1);
  EXPECT_EQ(plan->single_work_count(), 1);
  EXPECT_EQ(plan->fusion_work_count(), 0);
  const WorkItem* item = plan->GetWorkForRoot(padded->defining_op());
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->kind, WorkKind::kShape);
  EXPECT_EQ(item->op_count(), 1);
  EXPECT_EQ(item->rank, 2);
  EXPECT_EQ(item->element_count, 36u);
  EXPECT_EQ(item->resources.external_input_value_count, 2u);
  EXPECT_EQ(item->resources.external_operand_count, 2u);
  EXPECT_EQ(item->resources.chain_operand_count, 0u);
  EXPECT_EQ(item->resources.static_read_bytes, 68u);
  EXPECT_EQ(item->resources.static_write_bytes, 144u);
  EXPECT_EQ(item->resources.static_total_bytes, 212u);
}

TEST(ScheduleSeedTest, EmitsShapeWorkForStaticIota) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("schedule_iota", {}, {T({4, 8})}));
  ASSERT_OK_AND_ASSIGN(Value * iota, fb.Iota(T({4, 8}), 1));
  ASSERT_OK(fb.Return({iota}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "schedule_iota");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);
  EXPECT_EQ(plan->work_item_count(), 1);
  EXPECT_EQ(plan->single_work_count(), 1);
  EXPECT_EQ(plan->fusion_work_count(), 0);
  const WorkItem* item = plan->GetWorkForRoot(iota->defining_op());
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->kind, WorkKind::kShape);
  EXPECT_EQ(item->op_count(), 1);
  EXPECT_EQ(item->rank, 2);
  EXPECT_EQ(item->element_count, 32u);
  EXPECT_EQ(item->resources.external_input_value_count, 0u);
  EXPECT_EQ(item->resources.static_read_bytes, 0u);
  EXPECT_EQ(item->resources.static_write_bytes, 128u);
  EXPECT_EQ(item->resources.static_total_bytes, 128u);
}

TEST(ScheduleSeedTest, EmitsShapeWorkForStaticConcatenate) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("schedule_concatenate", {T({4, 4}), T({4, 4})},
                                             {T({4, 8})}));
  ASSERT_OK_AND_ASSIGN(Value * concatenated,
                       fb.Concatenate({fb.Parameter(0), fb.Parameter(1)}, 1));
  ASSERT_OK(fb.Return({concatenated}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "schedule_concatenate");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);
  EXPECT_EQ(plan->work_item_count(), 1);
  EXPECT_EQ(plan->single_work_count(), 1);
  EXPECT_EQ(plan->fusion_work_count(), 0);
  const WorkItem* item = plan->GetWorkForRoot(concatenated->defining_op());
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->kind, WorkKind::kShape);
  EXPECT_EQ(item->op_count(), 1);
  EXPECT_EQ(item->rank, 2);
  EXPECT_EQ(item->element_count, 32u);
  EXPECT_EQ(item->resources.external_input_value_count, 2u);
  EXPECT_EQ(item->resources.external_operand_count, 2u);
  EXPECT_EQ(item->resources.static_read_bytes, 128u);
  EXPECT_EQ(item->resources.static_write_bytes, 128u);
  EXPECT_EQ(item->resources.static_total_bytes, 256u);
}

}  // namespace
}  // namespace accy
