// Schedule planning beyond the seed's tests: broadcast materialization, iterate outputs,
// dependency positions, and the text / Graphviz renderings of a plan.
#include <memory>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/schedule/schedule_plan.h"
#include "tests/schedule/schedule_test_util.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using testing::HasSubstr;
using testing_util::PlannedModule;

TensorType T(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}

// An item whose ops came from composites (kCompositeAttribute) lists their names in the plan
// text, first seen first; an item without such ops has no composites field.
TEST(SchedulePlanTest, TextNamesTheCompositesAnItemComputes) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("composites", {T({4})}, {T({4})}));
  ASSERT_OK_AND_ASSIGN(Value * e, fb.Exponential(fb.Parameter(0)));
  ASSERT_OK_AND_ASSIGN(Value * t, fb.Tanh(e));
  ASSERT_OK_AND_ASSIGN(Value * n, fb.Negate(t));
  e->defining_op()->SetAttribute(std::string(kCompositeAttribute), std::string("outer.op"));
  t->defining_op()->SetAttribute(std::string(kCompositeAttribute), std::string("inner.op"));
  ASSERT_OK(fb.Return({n}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "composites");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  ASSERT_EQ(plan->work_item_count(), 1);
  EXPECT_THAT(plan->ToText(), HasSubstr("ops=[exponential,tanh,negate] tensor<4xf32> read=16B "
                                        "write=16B element_ops=12 deps=[] "
                                        "composites=[outer.op,inner.op]\n"));

  Builder plain_builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder pf, plain_builder.BeginFunction("plain", {T({4})}, {T({4})}));
  ASSERT_OK_AND_ASSIGN(Value * p, pf.Negate(pf.Parameter(0)));
  ASSERT_OK(pf.Return({p}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> plain_module, plain_builder.Finish());
  PlannedModule plain(std::move(plain_module), "plain");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plain_plan, plain.Plan());
  EXPECT_THAT(plain_plan->ToText(), testing::Not(HasSubstr("composites")));
}

TEST(SchedulePlanTest, ReturnedBroadcastIsMaterializedAsShapeWork) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("returned_broadcast", {T({4})}, {T({3, 4})}));
  ASSERT_OK_AND_ASSIGN(Value * b, fb.BroadcastInDim(fb.Parameter(0), T({3, 4}), {1}));
  ASSERT_OK(fb.Return({b}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "returned_broadcast");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);
  ASSERT_EQ(plan->work_item_count(), 1);
  const WorkItem& item = plan->items()[0];
  EXPECT_EQ(item.kind, WorkKind::kShape);
  EXPECT_EQ(item.root, b->defining_op());
  EXPECT_EQ(item.resources.static_read_bytes, 16u);
  EXPECT_EQ(item.resources.static_write_bytes, 48u);
}

TEST(SchedulePlanTest, BroadcastFeedingAShapeOpIsMaterializedFirst) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("broadcast_then_transpose", {T({4})}, {T({4, 3})}));
  ASSERT_OK_AND_ASSIGN(Value * b, fb.BroadcastInDim(fb.Parameter(0), T({3, 4}), {1}));
  ASSERT_OK_AND_ASSIGN(Value * t, fb.Transpose(b, {1, 0}));
  ASSERT_OK(fb.Return({t}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "broadcast_then_transpose");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);
  ASSERT_EQ(plan->work_item_count(), 2);
  // Claim order: the transpose (standalone walk) gets id 0, the broadcast (materialized) id 1;
  // dependency order puts the broadcast first.
  EXPECT_EQ(plan->items()[0].root, b->defining_op());
  EXPECT_EQ(plan->items()[0].id, 1);
  EXPECT_EQ(plan->items()[1].root, t->defining_op());
  EXPECT_EQ(plan->items()[1].id, 0);
  EXPECT_EQ(std::vector<int64_t>(plan->items()[1].dependencies.begin(),
                                 plan->items()[1].dependencies.end()),
            std::vector<int64_t>{0});
}

// A consumer of a shape kernel's second result (top_k's indices, found by the differential
// fuzzer with sort's third) depends on that item: before the fix it had no edge, ran first and
// buffer assignment rejected it.
TEST(SchedulePlanTest, ConsumerOfAMultiResultShapeItemsLaterResultDependsOnIt) {
  Builder builder;
  const TensorType indices = *TensorType::Create(ElementType::kI32, {3, 2});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("top_k_indices", {T({3, 5})}, {indices}));
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> top, fb.TopK(fb.Parameter(0), 2));
  ASSERT_OK_AND_ASSIGN(Value * doubled, fb.Add(top[1], top[1]));
  ASSERT_OK(fb.Return({doubled}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "top_k_indices");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);
  ASSERT_EQ(plan->work_item_count(), 2);
  EXPECT_EQ(plan->items()[0].root, top[0]->defining_op());
  EXPECT_EQ(plan->items()[1].root, doubled->defining_op());
  EXPECT_EQ(std::vector<int64_t>(plan->items()[1].dependencies.begin(),
                                 plan->items()[1].dependencies.end()),
            std::vector<int64_t>{0});
}

TEST(SchedulePlanTest, WhileLoopIsOneIterateItemOutputtingItsFirstUsedResult) {
  Builder builder;
  TensorType scalar = *TensorType::Create(ElementType::kI32, {});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("loop", {scalar, scalar}, {scalar}));
  ASSERT_OK_AND_ASSIGN(
      std::vector<Value*> results,
      fb.While(
          {fb.Parameter(0), fb.Parameter(1)},
          [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
            ACCY_ASSIGN_OR_RETURN(Value * limit, b.ConstantScalar(ElementType::kI32, 10));
            ACCY_ASSIGN_OR_RETURN(Value * lt, b.Compare(args[0], limit, "LT"));
            return b.Return({lt});
          },
          [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
            ACCY_ASSIGN_OR_RETURN(Value * one, b.ConstantScalar(ElementType::kI32, 1));
            ACCY_ASSIGN_OR_RETURN(Value * next, b.Add(args[0], one));
            ACCY_ASSIGN_OR_RETURN(Value * total, b.Add(args[1], args[0]));
            return b.Return({next, total});
          }));
  ASSERT_OK(fb.Return({results[1]}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "loop");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);
  // The ops inside cond and body belong to the iterate item (opaque regions).
  ASSERT_EQ(plan->work_item_count(), 1);
  EXPECT_EQ(plan->items()[0].kind, WorkKind::kIterate);
  EXPECT_EQ(plan->items()[0].output_value, results[1]);
  EXPECT_EQ(plan->single_work_count(), 1);
}

TEST(SchedulePlanTest, CumsumIsScanWork) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("scan", {T({2, 8})}, {T({2, 8})}));
  ASSERT_OK_AND_ASSIGN(Value * c, fb.Cumsum(fb.Parameter(0), 1));
  ASSERT_OK(fb.Return({c}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "scan");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  ASSERT_EQ(plan->work_item_count(), 1);
  EXPECT_EQ(plan->items()[0].kind, WorkKind::kScan);
  EXPECT_EQ(plan->items()[0].resources.estimated_element_ops, 16u);
}

// triangular_solve is a library item of its own kind, estimated at batch x M x M x N element
// ops (M^2 / 2 multiply-adds per right-hand side, a multiply-add counting 2), whichever side
// b is on.
TEST(SchedulePlanTest, TriangularSolveIsLibraryWorkOfBatchTimesMSquaredTimesN) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(
      FunctionBuilder fb,
      builder.BeginFunction("solve", {T({2, 3, 8, 8}), T({2, 3, 8, 5}), T({2, 3, 7, 8})},
                            {T({2, 3, 8, 5}), T({2, 3, 7, 8})}));
  ASSERT_OK_AND_ASSIGN(Value * left,
                       fb.TriangularSolve(fb.Parameter(0), fb.Parameter(1), true, true, false));
  ASSERT_OK_AND_ASSIGN(Value * right, fb.TriangularSolve(fb.Parameter(0), fb.Parameter(2), false,
                                                         false, true, "TRANSPOSE"));
  ASSERT_OK(fb.Return({left, right}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "solve");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);
  ASSERT_EQ(plan->work_item_count(), 2);
  for (const WorkItem& item : plan->items()) {
    EXPECT_EQ(item.kind, WorkKind::kTriangularSolve);
    EXPECT_EQ(WorkKindName(item.kind), "triangular_solve");
  }
  const WorkItem& first = plan->items()[0];
  const WorkItem& second = plan->items()[1];
  EXPECT_EQ(first.output_value, left);
  EXPECT_EQ(first.resources.estimated_element_ops, 6u * 8 * 8 * 5);   // 1920
  EXPECT_EQ(first.resources.static_read_bytes, 4u * (6 * 64 + 6 * 40));
  EXPECT_EQ(first.resources.static_write_bytes, 4u * 6 * 40);
  EXPECT_EQ(second.output_value, right);
  EXPECT_EQ(second.resources.estimated_element_ops, 6u * 8 * 8 * 7);  // 2688
  EXPECT_EQ(second.resources.static_write_bytes, 4u * 6 * 56);
  EXPECT_EQ(plan->single_work_count(), 2);
}

// rng_bit_generator is a library item of its own kind, estimated at 32 element ops per output
// element; its output value is result 0 (output_state), whose bytes are the item's write bytes
// as for every multi-result root, and a consumer of the output (result 1) depends on it.
TEST(SchedulePlanTest, RngBitGeneratorIsLibraryWorkOf32OpsPerOutputElement) {
  Builder builder;
  const TensorType state = *TensorType::Create(ElementType::kU64, {2});
  const TensorType bits = *TensorType::Create(ElementType::kU32, {3, 5});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("draw", {state}, {state, bits}));
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> drawn,
                       fb.RngBitGenerator(fb.Parameter(0), "PHILOX", bits));
  ASSERT_OK_AND_ASSIGN(Value * doubled, fb.Add(drawn[1], drawn[1]));
  ASSERT_OK(fb.Return({drawn[0], doubled}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "draw");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  planned.CheckStorage(*plan);
  ASSERT_EQ(plan->work_item_count(), 2);
  const WorkItem& rng = plan->items()[0];
  EXPECT_EQ(rng.kind, WorkKind::kRngBitGenerator);
  EXPECT_EQ(WorkKindName(rng.kind), "rng_bit_generator");
  EXPECT_EQ(rng.output_value, drawn[0]);
  EXPECT_EQ(rng.dtype, ElementType::kU64);
  EXPECT_EQ(rng.element_count, 2u);
  EXPECT_EQ(rng.resources.estimated_element_ops, 15u * 32);  // 480
  EXPECT_EQ(rng.resources.static_read_bytes, 16u);
  EXPECT_EQ(rng.resources.static_write_bytes, 16u);
  const WorkItem& add = plan->items()[1];
  EXPECT_EQ(add.kind, WorkKind::kElementwiseSingle);
  EXPECT_EQ(std::vector<int64_t>(add.dependencies.begin(), add.dependencies.end()),
            std::vector<int64_t>{0});
}

TEST(SchedulePlanTest, PrintsTextAndGraphvizWithDependencies) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("printed", {T({4, 4}), T({4})},
                                                                 {T({4, 4})}));
  ASSERT_OK_AND_ASSIGN(Value * row, fb.Multiply(fb.Parameter(1), fb.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * rows, fb.BroadcastInDim(row, T({4, 4}), {0}));
  ASSERT_OK_AND_ASSIGN(Value * sum, fb.Add(fb.Parameter(0), rows));
  ASSERT_OK_AND_ASSIGN(Value * product, fb.Multiply(sum, fb.Parameter(0)));
  ASSERT_OK(fb.Return({product}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "printed");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  EXPECT_EQ(plan->ToText(),
            "#0 id=1 elementwise_single ops=[multiply] tensor<4xf32> read=32B write=16B "
            "element_ops=4 deps=[]\n"
            "#1 id=0 elementwise_fusion ops=[add,multiply] tensor<4x4xf32> read=192B "
            "write=64B element_ops=32 deps=[0]\n");
  std::string dot = plan->ToDot();
  EXPECT_THAT(dot, HasSubstr("digraph schedule {"));
  EXPECT_THAT(dot, HasSubstr("item1 [label=\"#1 elementwise_fusion\\nadd multiply"));
  EXPECT_THAT(dot, HasSubstr("item0 -> item1;"));
}

TEST(SchedulePlanTest, ShapeGenericCatalogKernelCallIsEstimatedFromItsShapes) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("mm", {T({4, 8}), T({8, 16})},
                                                                 {T({4, 16})}));
  ASSERT_OK_AND_ASSIGN(Operation * call,
                       fb.KernelCall({fb.Parameter(0), fb.Parameter(1)}, {T({4, 16})},
                                     {.target = "accy.linalg.matmul"}));
  ASSERT_OK(fb.Return({call->result(0)}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "mm");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  ASSERT_EQ(plan->work_item_count(), 1);
  EXPECT_EQ(plan->items()[0].kind, WorkKind::kKernelCall);
  EXPECT_EQ(plan->items()[0].resources.estimated_element_ops, 2u * 4 * 16 * 8);
}

// An op the schedule cannot give a work item fails planning with kUnimplemented naming it, rather
// than planning no item for it (which surfaced later as a buffer-assignment error).
TEST(SchedulePlanTest, KernelCallOfTwoResultsHasNoLowering) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("pair", {T({4}), T({4})}, {T({4}), T({4})}));
  KernelCallSpec spec;
  spec.target = "my-kernel";
  ASSERT_OK_AND_ASSIGN(Operation * call, fb.KernelCall({fb.Parameter(0), fb.Parameter(1)},
                                                       {T({4}), T({4})}, spec));
  ASSERT_OK(fb.Return({call->result(0), call->result(1)}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "pair");
  StatusOr<const SchedulePlan*> plan = planned.Plan();
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(plan.status().message(),
            "op %2 (kernel_call) has no lowering: a kernel_call of 2 results (the engine runs "
            "kernel_calls of exactly one)");
}

// An op kind the op table plans to no work kind (here a value outside OpKind, which Verify would
// reject first: no row of today's table has kNoLowering).
TEST(SchedulePlanTest, OpWithoutWorkKindHasNoLowering) {
  auto module = std::make_unique<Module>("m");
  ASSERT_OK_AND_ASSIGN(Function * f, module->AddFunction("f", {T({4})}, {T({4})}));
  Block* entry = f->entry_block();
  const std::vector<TensorType> result_types = {T({4})};
  Operation* unknown = entry->Append(
      Operation::Create(static_cast<OpKind>(kNumOpKinds), {f->parameter(0)}, result_types));
  entry->Append(Operation::Create(OpKind::kReturn, {unknown->result(0)}, {}));
  PlannedModule planned(std::move(module), "f");
  StatusOr<const SchedulePlan*> plan = planned.Plan();
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(plan.status().message(),
            "op %1 (<invalid op kind>) has no lowering: the op table gives it no work kind");
}

// A resource that counts live bytes and refuses allocations past a limit.
class LimitedResource : public std::pmr::memory_resource {
 public:
  explicit LimitedResource(size_t limit) : limit_(limit) {}
  size_t live() const { return live_; }

 private:
  void* do_allocate(size_t bytes, size_t alignment) override {
    if (live_ + bytes > limit_) throw std::bad_alloc();
    live_ += bytes;
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  void do_deallocate(void* p, size_t bytes, size_t alignment) override {
    live_ -= bytes;
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
  size_t limit_;
  size_t live_ = 0;
};

TEST(SchedulePlanTest, AllocationFailureIsResourceExhaustedAndReturnsEveryByte) {
  Builder builder;
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("chain", {T({4})}, {T({4})}));
  Value* v = fb.Parameter(0);
  for (int i = 0; i < 32; ++i) {
    ASSERT_OK_AND_ASSIGN(v, fb.Negate(v));
    ASSERT_OK_AND_ASSIGN(v, fb.Reshape(v, T({4})));
  }
  ASSERT_OK(fb.Return({v}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  PlannedModule planned(std::move(module), "chain");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  ASSERT_EQ(plan->work_item_count(), 64);
  auto shapes = planned.cache().Get<ShapeLayoutAnalysis>(planned.function());
  auto fusion = planned.cache().Get<FusionPlanAnalysis>(planned.function());
  ASSERT_TRUE(shapes.ok() && fusion.ok());
  for (size_t limit : {size_t{0}, size_t{512}, size_t{4096}}) {
    LimitedResource resource(limit);
    StatusOr<SchedulePlan*> failed =
        PlanSchedule(planned.function(), **shapes, (*fusion)->plan(), &resource);
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(resource.live(), 0u);
  }
}

}  // namespace
}  // namespace accy
