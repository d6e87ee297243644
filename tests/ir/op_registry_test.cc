// The op table (include/accy/ops.def) and what comes from it: every OpKind has its row, names
// round-trip through ParseOpKind, the predicates agree with the category column (and with the
// enum ranges they replaced), the element classes, purity, commutativity, region counts and the
// schedule's work kind per op, and built ops have the operand, result and region counts of
// their rows; every row's type rule (src/ir/type_rules.h) has the hooks the row needs.
#include <set>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/ir/type_inference.h"
#include "src/ir/type_rules.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"
#include "tests/ir/builder_test_util.h"
#include "tests/test_util.h"

namespace accy::ir_test {
namespace {

constexpr OpKind kInvalidKind = static_cast<OpKind>(kNumOpKinds);

std::set<OpKind> KindsWhere(bool (*predicate)(const OpInfo&)) {
  std::set<OpKind> kinds;
  for (OpKind kind : kAllOpKinds) {
    if (predicate(GetOpInfo(kind))) kinds.insert(kind);
  }
  return kinds;
}

TEST(OpRegistryTest, EveryOpKindHasItsRowInEnumOrder) {
  ASSERT_EQ(kNumOpKinds, 105);
  for (int i = 0; i < kNumOpKinds; ++i) {
    const OpKind kind = static_cast<OpKind>(i);
    EXPECT_EQ(kAllOpKinds[i], kind);
    const OpInfo& info = GetOpInfo(kind);
    EXPECT_EQ(info.kind, kind) << i;
    EXPECT_EQ(info.name, OpName(kind)) << i;
    EXPECT_NE(info.category, OpCategory::kInvalid) << info.name;
  }
  EXPECT_EQ(OpName(OpKind::kConstant), "constant");
  EXPECT_EQ(OpName(OpKind::kExponentialMinusOne), "exponential_minus_one");
  EXPECT_EQ(OpName(OpKind::kDynamicUpdateSlice), "dynamic_update_slice");
  EXPECT_EQ(OpName(OpKind::kKernelCall), "kernel_call");
  EXPECT_EQ(OpName(OpKind::kReturn), "return");
}

TEST(OpRegistryTest, NamesAreUniqueAndRoundTripThroughParseOpKind) {
  std::set<std::string_view> names;
  for (OpKind kind : kAllOpKinds) {
    EXPECT_TRUE(names.insert(OpName(kind)).second) << OpName(kind);
    ASSERT_OK_AND_ASSIGN(OpKind parsed, ParseOpKind(OpName(kind)));
    EXPECT_EQ(parsed, kind) << OpName(kind);
  }
  EXPECT_EQ(names.size(), 105u);
  for (std::string_view name : {"stablehlo.add", "top_k", "sorted", ""}) {
    const Status status = ParseOpKind(name).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_EQ(status.message(), StrCat("unknown op '", name, "'"));
  }
}

TEST(OpRegistryTest, KindOutsideTheEnumGetsTheInvalidRow) {
  const OpInfo& info = GetOpInfo(kInvalidKind);
  EXPECT_EQ(info.name, "<invalid op kind>");
  EXPECT_EQ(OpName(kInvalidKind), "<invalid op kind>");
  EXPECT_EQ(info.category, OpCategory::kInvalid);
  EXPECT_EQ(info.operands, 0);
  EXPECT_EQ(info.results, 0);
  EXPECT_EQ(info.regions, 0);
  EXPECT_FALSE(IsElementwiseUnary(kInvalidKind));
  EXPECT_FALSE(IsElementwiseBinary(kInvalidKind));
  EXPECT_FALSE(IsElementwiseTernary(kInvalidKind));
  EXPECT_EQ(PlanForLoneOp(kInvalidKind).mode, LoneOpPlan::Mode::kNoLowering);
}

TEST(OpRegistryTest, PredicatesAgreeWithCategoryAndTheRangesTheyReplaced) {
  for (OpKind kind : kAllOpKinds) {
    const OpCategory category = GetOpInfo(kind).category;
    EXPECT_EQ(IsElementwiseUnary(kind), category == OpCategory::kElementwiseUnary) << OpName(kind);
    EXPECT_EQ(IsElementwiseBinary(kind), category == OpCategory::kElementwiseBinary)
        << OpName(kind);
    EXPECT_EQ(IsElementwiseTernary(kind), category == OpCategory::kElementwiseTernary)
        << OpName(kind);
    // The enum-order range tests of before the table.
    EXPECT_EQ(IsElementwiseUnary(kind), kind >= OpKind::kAbs && kind <= OpKind::kBitcastConvert)
        << OpName(kind);
    EXPECT_EQ(IsElementwiseBinary(kind), kind >= OpKind::kAdd && kind <= OpKind::kCompare)
        << OpName(kind);
    EXPECT_EQ(IsElementwiseTernary(kind), kind == OpKind::kSelect || kind == OpKind::kClamp)
        << OpName(kind);
  }
  EXPECT_EQ(KindsWhere([](const OpInfo& i) { return i.category == OpCategory::kElementwiseUnary; })
                .size(),
            43u);
  EXPECT_EQ(KindsWhere([](const OpInfo& i) {
              return i.category == OpCategory::kElementwiseBinary;
            }).size(),
            20u);
  EXPECT_EQ(KindsWhere([](const OpInfo& i) { return i.category == OpCategory::kShape; }),
            (std::set<OpKind>{OpKind::kBroadcastInDim, OpKind::kReshape, OpKind::kTranspose,
                              OpKind::kSlice, OpKind::kPad, OpKind::kConcatenate, OpKind::kIota,
                              OpKind::kReverse, OpKind::kGather, OpKind::kScatter,
                              OpKind::kSelectAndScatter, OpKind::kSort, OpKind::kTopK,
                              OpKind::kDynamicSlice, OpKind::kDynamicUpdateSlice}));
  EXPECT_EQ(GetOpInfo(OpKind::kConstant).category, OpCategory::kConstant);
  EXPECT_EQ(GetOpInfo(OpKind::kDotGeneral).category, OpCategory::kContraction);
  EXPECT_EQ(GetOpInfo(OpKind::kReduce).category, OpCategory::kReduction);
  EXPECT_EQ(GetOpInfo(OpKind::kCumsum).category, OpCategory::kReduction);
  EXPECT_EQ(GetOpInfo(OpKind::kReduceWindow).category, OpCategory::kReduction);
  EXPECT_EQ(GetOpInfo(OpKind::kBatchNormGrad).category, OpCategory::kReduction);
  EXPECT_EQ(GetOpInfo(OpKind::kBatchNormGrad).results, 3);
  EXPECT_EQ(GetOpInfo(OpKind::kTriangularSolve).category, OpCategory::kLinearAlgebra);
  EXPECT_EQ(GetOpInfo(OpKind::kLapack).category, OpCategory::kLinearAlgebra);
  EXPECT_EQ(OpCategoryName(OpCategory::kLinearAlgebra), "linear_algebra");
  EXPECT_EQ(GetOpInfo(OpKind::kRngBitGenerator).category, OpCategory::kRandom);
  EXPECT_EQ(OpCategoryName(OpCategory::kRandom), "random");
  EXPECT_EQ(KindsWhere([](const OpInfo& i) { return i.category == OpCategory::kCollective; }),
            (std::set<OpKind>{OpKind::kReplicaId, OpKind::kPartitionId, OpKind::kAllReduce,
                              OpKind::kAllGather, OpKind::kReduceScatter, OpKind::kAllToAll,
                              OpKind::kCollectivePermute, OpKind::kCollectiveBroadcast,
                              OpKind::kCollectiveReduce}));
  EXPECT_EQ(OpCategoryName(OpCategory::kCollective), "collective");
  EXPECT_FALSE(GetOpInfo(OpKind::kAllReduce).pure);
  EXPECT_EQ(GetOpInfo(OpKind::kWhile).category, OpCategory::kControl);
  EXPECT_EQ(GetOpInfo(OpKind::kKernelCall).category, OpCategory::kCall);
  EXPECT_EQ(GetOpInfo(OpKind::kReturn).category, OpCategory::kTerminator);
  EXPECT_EQ(OpCategoryName(OpCategory::kElementwiseTernary), "elementwise_ternary");
  EXPECT_EQ(OpCategoryName(OpCategory::kTerminator), "terminator");
}

TEST(OpRegistryTest, ElementClassesAreTheSpecConstraints) {
  EXPECT_EQ(GetOpInfo(OpKind::kAbs).element_classes, ElementClass::kSignedOrFloat);
  EXPECT_EQ(GetOpInfo(OpKind::kSign).element_classes, ElementClass::kSignedOrFloat);
  EXPECT_EQ(GetOpInfo(OpKind::kNegate).element_classes, ElementClass::kNumeric);
  EXPECT_EQ(GetOpInfo(OpKind::kNot).element_classes, ElementClass::kBoolOrInteger);
  EXPECT_EQ(GetOpInfo(OpKind::kXor).element_classes, ElementClass::kBoolOrInteger);
  EXPECT_EQ(GetOpInfo(OpKind::kPopcnt).element_classes, ElementClass::kInteger);
  EXPECT_EQ(GetOpInfo(OpKind::kCountLeadingZeros).element_classes, ElementClass::kInteger);
  EXPECT_EQ(GetOpInfo(OpKind::kShiftRightArithmetic).element_classes, ElementClass::kInteger);
  EXPECT_EQ(GetOpInfo(OpKind::kMulhi).element_classes, ElementClass::kInteger);
  EXPECT_EQ(GetOpInfo(OpKind::kIsFinite).element_classes, ElementClass::kFloat);
  EXPECT_EQ(GetOpInfo(OpKind::kAtan2).element_classes, ElementClass::kFloat);
  EXPECT_EQ(GetOpInfo(OpKind::kRemainder).element_classes, ElementClass::kNumeric);
  EXPECT_EQ(GetOpInfo(OpKind::kAdd).element_classes, ElementClass::kAny);
  EXPECT_EQ(GetOpInfo(OpKind::kMinimum).element_classes, ElementClass::kAny);
  EXPECT_EQ(GetOpInfo(OpKind::kCompare).element_classes, ElementClass::kAny);
  EXPECT_EQ(GetOpInfo(OpKind::kCumsum).element_classes, ElementClass::kNumeric);
  // rng_bit_generator: its output's class (the state is always ui64).
  EXPECT_EQ(GetOpInfo(OpKind::kRngBitGenerator).element_classes, ElementClass::kNumeric);
  // The float-only ops: exponential .. is_finite (16 unary), atan2, tan, reduce_precision, the
  // 20 float CHLO ops (zeta and polygamma among them), triangular_solve, lapack and the three
  // batch-norm ops.
  EXPECT_EQ(KindsWhere([](const OpInfo& i) { return i.element_classes == ElementClass::kFloat; })
                .size(),
            44u);
  EXPECT_EQ(GetOpInfo(OpKind::kZeta).element_classes, ElementClass::kFloat);
  EXPECT_EQ(GetOpInfo(OpKind::kPolygamma).element_classes, ElementClass::kFloat);
  EXPECT_EQ(GetOpInfo(OpKind::kTriangularSolve).element_classes, ElementClass::kFloat);
  EXPECT_EQ(GetOpInfo(OpKind::kErfInv).element_classes, ElementClass::kFloat);
  EXPECT_EQ(GetOpInfo(OpKind::kNextAfter).element_classes, ElementClass::kFloat);
  EXPECT_EQ(OpName(OpKind::kBesselI1e), "chlo.bessel_i1e");

  EXPECT_TRUE(ElementClassContains(ElementClass::kBool, ElementType::kI1));
  EXPECT_FALSE(ElementClassContains(ElementClass::kInteger, ElementType::kI1));
  EXPECT_TRUE(ElementClassContains(ElementClass::kInteger, ElementType::kU8));
  EXPECT_FALSE(ElementClassContains(ElementClass::kSignedOrFloat, ElementType::kU32));
  EXPECT_TRUE(ElementClassContains(ElementClass::kSignedOrFloat, ElementType::kI64));
  EXPECT_TRUE(ElementClassContains(ElementClass::kFloat, ElementType::kBF16));
  EXPECT_FALSE(ElementClassContains(ElementClass::kNumeric, ElementType::kI1));
  EXPECT_TRUE(ElementClassContains(ElementClass::kAny, ElementType::kI1));
}

TEST(OpRegistryTest, OnlyKernelCallAndCollectivesAreImpureAndOnlyTheSymmetricOpsCommute) {
  // Collectives communicate: no pass may fold, remove or merge them.
  EXPECT_EQ(KindsWhere([](const OpInfo& i) { return !i.pure; }),
            (std::set<OpKind>{OpKind::kKernelCall, OpKind::kReplicaId, OpKind::kPartitionId,
                              OpKind::kAllReduce, OpKind::kAllGather, OpKind::kReduceScatter,
                              OpKind::kAllToAll, OpKind::kCollectivePermute,
                              OpKind::kCollectiveBroadcast, OpKind::kCollectiveReduce}));
  // compare is symmetric only for EQ and NE: not commutative for every attribute value.
  EXPECT_EQ(KindsWhere([](const OpInfo& i) { return i.commutative; }),
            (std::set<OpKind>{OpKind::kAdd, OpKind::kMultiply, OpKind::kMaximum, OpKind::kMinimum,
                              OpKind::kAnd, OpKind::kOr, OpKind::kXor, OpKind::kMulhi}));
}

TEST(OpRegistryTest, RegionCountsAndArities) {
  EXPECT_EQ(KindsWhere([](const OpInfo& i) { return i.regions > 0; }),
            (std::set<OpKind>{OpKind::kScatter, OpKind::kSelectAndScatter, OpKind::kSort,
                              OpKind::kReduce, OpKind::kReduceWindow, OpKind::kWhile,
                              OpKind::kAllReduce, OpKind::kReduceScatter,
                              OpKind::kCollectiveReduce}));
  EXPECT_EQ(GetOpInfo(OpKind::kSort).regions, 1);
  EXPECT_EQ(GetOpInfo(OpKind::kTopK).results, 2);
  EXPECT_EQ(GetOpInfo(OpKind::kScatter).regions, 1);
  EXPECT_EQ(GetOpInfo(OpKind::kReduceWindow).regions, 1);
  EXPECT_EQ(GetOpInfo(OpKind::kSelectAndScatter).regions, 2);
  EXPECT_EQ(GetOpInfo(OpKind::kReduce).regions, 1);
  EXPECT_EQ(GetOpInfo(OpKind::kWhile).regions, 2);
  // case: one region per branch.
  EXPECT_EQ(KindsWhere([](const OpInfo& i) { return i.regions == kVariadic; }),
            (std::set<OpKind>{OpKind::kCase}));
  EXPECT_EQ(KindsWhere([](const OpInfo& i) { return i.results == kVariadic; }),
            (std::set<OpKind>{OpKind::kScatter, OpKind::kSort, OpKind::kReduce,
                              OpKind::kReduceWindow, OpKind::kLapack, OpKind::kCase,
                              OpKind::kWhile, OpKind::kKernelCall, OpKind::kAllReduce,
                              OpKind::kAllGather, OpKind::kAllToAll,
                              OpKind::kCollectiveBroadcast}));
  EXPECT_EQ(KindsWhere([](const OpInfo& i) { return i.operands == kVariadic; }),
            (std::set<OpKind>{OpKind::kConcatenate, OpKind::kScatter, OpKind::kSort,
                              OpKind::kDynamicSlice,
                              OpKind::kDynamicUpdateSlice, OpKind::kReduce,
                              OpKind::kReduceWindow, OpKind::kLapack, OpKind::kWhile,
                              OpKind::kKernelCall, OpKind::kAllReduce, OpKind::kAllGather,
                              OpKind::kAllToAll, OpKind::kCollectiveBroadcast,
                              OpKind::kReturn}));
  for (OpKind kind : kAllOpKinds) {
    const OpInfo& info = GetOpInfo(kind);
    const int expected = info.category == OpCategory::kElementwiseUnary     ? 1
                         : info.category == OpCategory::kElementwiseBinary  ? 2
                         : info.category == OpCategory::kElementwiseTernary ? 3
                                                                            : info.operands;
    EXPECT_EQ(info.operands, expected) << info.name;
  }
  EXPECT_EQ(GetOpInfo(OpKind::kConstant).operands, 0);
  EXPECT_EQ(GetOpInfo(OpKind::kIota).operands, 0);
  EXPECT_EQ(GetOpInfo(OpKind::kPad).operands, 2);
  EXPECT_EQ(GetOpInfo(OpKind::kReturn).results, 0);
}

TEST(OpRegistryTest, EveryOpButConstantAndReturnPlansToAWorkKind) {
  for (OpKind kind : kAllOpKinds) {
    const LoneOpPlan plan = PlanForLoneOp(kind);
    if (kind == OpKind::kConstant || kind == OpKind::kReturn) {
      EXPECT_EQ(plan.mode, LoneOpPlan::Mode::kNoItem) << OpName(kind);
      continue;
    }
    // The expand-batch-norm graph pass rewrites these before planning.
    if (kind == OpKind::kBatchNormInference || kind == OpKind::kBatchNormTraining ||
        kind == OpKind::kBatchNormGrad) {
      EXPECT_EQ(plan.mode, LoneOpPlan::Mode::kNoLowering) << OpName(kind);
      continue;
    }
    ASSERT_EQ(plan.mode, LoneOpPlan::Mode::kItem) << OpName(kind);
    const OpCategory category = GetOpInfo(kind).category;
    WorkKind expected = WorkKind::kElementwiseSingle;
    switch (category) {
      case OpCategory::kElementwiseUnary:
      case OpCategory::kElementwiseBinary:
      case OpCategory::kElementwiseTernary:
        expected = WorkKind::kElementwiseSingle;
        break;
      case OpCategory::kShape:
        expected = WorkKind::kShape;
        break;
      case OpCategory::kContraction:
        expected = kind == OpKind::kConvolution ? WorkKind::kConvolution : WorkKind::kDotGeneral;
        break;
      case OpCategory::kReduction:
        // reduce_window has an item kind of its own (oneDNN pooling or jit/window_emitter.cc).
        expected = kind == OpKind::kCumsum         ? WorkKind::kScan
                   : kind == OpKind::kReduceWindow ? WorkKind::kReduceWindow
                                                   : WorkKind::kReduction;
        break;
      case OpCategory::kLinearAlgebra:
        expected = kind == OpKind::kLapack ? WorkKind::kLapack : WorkKind::kTriangularSolve;
        break;
      case OpCategory::kRandom:
        expected = WorkKind::kRngBitGenerator;
        break;
      case OpCategory::kCollective:
        expected = WorkKind::kCollective;
        break;
      case OpCategory::kControl:
        expected = WorkKind::kIterate;
        break;
      case OpCategory::kCall:
        expected = WorkKind::kKernelCall;
        break;
      case OpCategory::kConstant:
      case OpCategory::kTerminator:
      case OpCategory::kInvalid:
        ADD_FAILURE() << OpName(kind) << " has category " << OpCategoryName(category);
        break;
    }
    EXPECT_EQ(WorkKindName(plan.kind), WorkKindName(expected)) << OpName(kind);
  }
}

// The `rule` column: every row's TypeRule infers its results or checks given ones (exactly one
// of the two), and checks its regions when the row has any. Rows that share a rule share its
// hooks; the ops whose results are given are exactly the ones the spec gives a result type.
TEST(OpRegistryTest, EveryRowsTypeRuleHasTheHooksItNeeds) {
  const std::set<OpKind> given = {
      OpKind::kConstant,      OpKind::kConvert,           OpKind::kBitcastConvert,
      OpKind::kReshape,       OpKind::kBroadcastInDim,    OpKind::kIota,
      OpKind::kRngBitGenerator, OpKind::kLapack,          OpKind::kReplicaId,
      OpKind::kPartitionId,   OpKind::kAllReduce,         OpKind::kAllGather,
      OpKind::kReduceScatter, OpKind::kAllToAll,          OpKind::kCollectivePermute,
      OpKind::kCollectiveBroadcast, OpKind::kCollectiveReduce, OpKind::kKernelCall,
      OpKind::kCase,          OpKind::kReturn};
  for (OpKind kind : kAllOpKinds) {
    const ir_internal::TypeRule& rule = ir_internal::GetTypeRule(kind);
    EXPECT_NE(rule.infer == nullptr, rule.check_given_results == nullptr) << OpName(kind);
    EXPECT_EQ(rule.infer == nullptr, given.count(kind) == 1) << OpName(kind);
    if (GetOpInfo(kind).regions != 0) EXPECT_NE(rule.check_regions, nullptr) << OpName(kind);
  }
  const auto& abs = ir_internal::GetTypeRule(OpKind::kAbs);
  EXPECT_EQ(&ir_internal::GetTypeRule(OpKind::kLgamma), &abs);
  EXPECT_EQ(&ir_internal::GetTypeRule(OpKind::kCountLeadingZeros), &abs);
  EXPECT_NE(&ir_internal::GetTypeRule(OpKind::kConvert), &abs);
  EXPECT_EQ(&ir_internal::GetTypeRule(OpKind::kCompare),
            &ir_internal::GetTypeRule(OpKind::kAdd));
  EXPECT_EQ(&ir_internal::GetTypeRule(OpKind::kAllGather),
            &ir_internal::GetTypeRule(OpKind::kAllReduce));
  EXPECT_EQ(ir_internal::GetTypeRule(OpKind::kReduceWindow).check_regions,
            ir_internal::GetTypeRule(OpKind::kReduce).check_regions);
}

// InferResultTypes dispatches through the row: an inferred rule gives the types, a given one
// nullopt, and a kind outside the table an error naming it.
TEST(OpRegistryTest, InferResultTypesFollowsTheRowsRule) {
  const TensorType f32 = *TensorType::Create(ElementType::kF32, {2, 3});
  const TensorType pair[] = {f32, f32};
  NamedAttribute direction{"comparison_direction", std::string("LT")};
  auto compared =
      ir_internal::InferResultTypes(OpKind::kCompare, pair, std::span(&direction, 1));
  ASSERT_TRUE(compared.ok()) << compared.status();
  ASSERT_TRUE(compared->has_value());
  EXPECT_EQ(compared->value().at(0).ToString(), "tensor<2x3xi1>");
  auto converted = ir_internal::InferResultTypes(OpKind::kConvert, std::span(&f32, 1), {});
  ASSERT_TRUE(converted.ok()) << converted.status();
  EXPECT_FALSE(converted->has_value());
  auto unknown = ir_internal::InferResultTypes(kInvalidKind, pair, {});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(unknown.status().message()),
              testing::HasSubstr(StrCat("unknown op kind ", kNumOpKinds)));
}

// Ops as the builder makes them have the operand, result and region counts of their rows.
TEST(OpRegistryTest, BuiltOpsHaveTheCountsOfTheirRows) {
  Builder builder;
  const TensorType v4 = T(kF32, {4});
  const TensorType m = T(kF32, {2, 2});
  const TensorType index = T(kI32, {});
  const TensorType state = T(kU64, {2});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("f", {v4, m, index, state}, {v4}));
  Value* x = fb.Parameter(0);
  Value* i = fb.Parameter(2);
  ASSERT_OK_AND_ASSIGN(Value * c, fb.ConstantScalar(kF32, 1.0));
  ASSERT_OK_AND_ASSIGN(Value * a, fb.Abs(x));
  ASSERT_OK_AND_ASSIGN(Value * s, fb.Add(a, x));
  ASSERT_OK_AND_ASSIGN(Value * p, fb.Compare(s, x, "LT"));
  ASSERT_OK_AND_ASSIGN(Value * sel, fb.Select(p, s, x));
  ASSERT_OK_AND_ASSIGN(Value * cl, fb.Clamp(c, sel, c));
  ASSERT_OK_AND_ASSIGN(Value * b, fb.BroadcastInDim(c, v4, {}));
  ASSERT_OK_AND_ASSIGN(Value * r, fb.Reshape(fb.Parameter(1), v4));
  ASSERT_OK_AND_ASSIGN(Value * t, fb.Transpose(fb.Parameter(1), {1, 0}));
  ASSERT_OK_AND_ASSIGN(Value * pad, fb.Pad(x, c, {1}, {1}, {0}));
  ASSERT_OK_AND_ASSIGN(Value * cat, fb.Concatenate({x, b, r}, 0));
  ASSERT_OK_AND_ASSIGN(Value * io, fb.Iota(v4, 0));
  ASSERT_OK_AND_ASSIGN(Value * rev, fb.Reverse(io, {0}));
  ASSERT_OK_AND_ASSIGN(Value * ds, fb.DynamicSlice(pad, {i}, {4}));
  ASSERT_OK_AND_ASSIGN(Value * dus, fb.DynamicUpdateSlice(cat, ds, {i}));
  ASSERT_OK_AND_ASSIGN(Value * dot, fb.DotGeneral(t, fb.Parameter(1), m, {1}, {0}, {}, {}));
  ASSERT_OK_AND_ASSIGN(Value * sum, fb.Reduce(dot, c, T(kF32, {2}), "sum", {1}));
  ASSERT_OK_AND_ASSIGN(Value * cs, fb.Cumsum(sum, 0));
  ASSERT_OK_AND_ASSIGN(Value * solved,
                       fb.TriangularSolve(fb.Parameter(1), dot, true, true, false, "TRANSPOSE"));
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> bits,
                       fb.RngBitGenerator(fb.Parameter(3), "THREE_FRY", T(kU32, {3})));
  ASSERT_OK_AND_ASSIGN(
      std::vector<Value*> loop,
      fb.While(
          {i},
          [](FunctionBuilder& body, std::span<Value* const> args) -> Status {
            ACCY_ASSIGN_OR_RETURN(Value * limit, body.ConstantScalar(kI32, 3));
            ACCY_ASSIGN_OR_RETURN(Value * lt, body.Compare(args[0], limit, "LT"));
            return body.Return({lt});
          },
          [](FunctionBuilder& body, std::span<Value* const> args) -> Status {
            ACCY_ASSIGN_OR_RETURN(Value * one, body.ConstantScalar(kI32, 1));
            ACCY_ASSIGN_OR_RETURN(Value * next, body.Add(args[0], one));
            return body.Return({next});
          }));
  KernelCallSpec spec;
  spec.target = "my-kernel";
  ASSERT_OK_AND_ASSIGN(Operation * call, fb.KernelCall({cl, rev}, {v4}, spec));
  (void)dus;
  (void)cs;
  (void)solved;
  (void)bits;
  (void)loop;
  ASSERT_OK(fb.Return({call->result(0)}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());

  std::set<OpKind> seen;
  WalkOperations(*module->FindFunction("f")->entry_block(), [&](const Operation* op) {
    const OpInfo& info = GetOpInfo(op->kind());
    seen.insert(op->kind());
    if (info.operands != kVariadic) {
      EXPECT_EQ(op->num_operands(), info.operands) << op->name();
    }
    if (info.results != kVariadic) {
      EXPECT_EQ(op->num_results(), info.results) << op->name();
    }
    EXPECT_EQ(op->num_regions(), info.regions) << op->name();
  });
  // Every category has a representative above.
  std::set<OpCategory> categories;
  for (OpKind kind : seen) categories.insert(GetOpInfo(kind).category);
  EXPECT_EQ(categories.size(), 12u);
  EXPECT_EQ(seen.size(), 23u);
}

}  // namespace
}  // namespace accy::ir_test
