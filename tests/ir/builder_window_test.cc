// Builder and verifier tests for the window ops, reduce_window and select_and_scatter (spec
// sections of the same names): result shapes of valid windows (strides, dilations, padding,
// empty windows), the attributes stored, and one must-fail case per constraint, each checked
// for code, message and an unchanged block.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ir/builder_test_util.h"
#include "tests/test_util.h"

namespace accy::ir_test {
namespace {

using WindowBuilderTest = BuilderTest;

Status AddBody(FunctionBuilder& b, std::span<Value* const> a) {
  ACCY_ASSIGN_OR_RETURN(Value * sum, b.Add(a[0], a[1]));
  return b.Return({sum});
}

Status GeSelect(FunctionBuilder& b, std::span<Value* const> a) {
  ACCY_ASSIGN_OR_RETURN(Value * keep, b.Compare(a[0], a[1], "GE"));
  return b.Return({keep});
}

WindowOptions Window(std::vector<int64_t> dims, std::vector<int64_t> strides = {},
                     std::vector<std::pair<int64_t, int64_t>> padding = {},
                     std::vector<int64_t> base = {}, std::vector<int64_t> dilations = {}) {
  return {std::move(dims), std::move(strides), std::move(base), std::move(dilations),
          std::move(padding)};
}

TEST_F(WindowBuilderTest, ReduceWindowResultIsTheNumberOfWindows) {
  FunctionBuilder f = Begin({T(kF32, {1, 9, 9, 3}), T(kF32), T(kI64, {3, 2}), T(kI64),
                             T(kF32, {0, 4}), T(kF32, {3})});
  // 3x3/2 max pool, SAME padding: 5x5.
  ASSERT_OK_AND_ASSIGN(Value * pool,
                       f.ReduceWindow(f.Parameter(0), f.Parameter(1),
                                      Window({1, 3, 3, 1}, {1, 2, 2, 1},
                                             {{0, 0}, {1, 1}, {1, 1}, {0, 0}}),
                                      "max"));
  EXPECT_EQ(pool->type(), T(kF32, {1, 5, 5, 3}));
  const Operation* op = pool->defining_op();
  EXPECT_EQ(op->kind(), OpKind::kReduceWindow);
  EXPECT_EQ(op->GetInts("padding"), (std::vector<int64_t>{0, 0, 1, 1, 1, 1, 0, 0}));
  EXPECT_EQ(op->GetInts("window_strides"), (std::vector<int64_t>{1, 2, 2, 1}));
  EXPECT_EQ(op->attribute("base_dilations"), nullptr);  // absent: the spec's default
  // The spec's example: dilated input 5, padded 8, dilated window 4, stride 4: 2 windows.
  ASSERT_OK_AND_ASSIGN(Value * dilated,
                       f.ReduceWindow(f.Parameter(2), f.Parameter(3),
                                      Window({2, 1}, {4, 1}, {{2, 1}, {0, 0}}, {2, 1}, {3, 1}),
                                      "sum"));
  EXPECT_EQ(dilated->type(), T(kI64, {2, 2}));
  // An empty dim with padding still has windows (of init values only).
  ASSERT_OK_AND_ASSIGN(Value * padded,
                       f.ReduceWindow(f.Parameter(4), f.Parameter(1),
                                      Window({1, 2}, {}, {{1, 1}, {0, 0}}), "sum"));
  EXPECT_EQ(padded->type(), T(kF32, {2, 3}));
  // A window larger than the input: none.
  ASSERT_OK_AND_ASSIGN(Value * none,
                       f.ReduceWindow(f.Parameter(5), f.Parameter(1), Window({4}), "min"));
  EXPECT_EQ(none->type(), T(kF32, {0}));
}

TEST_F(WindowBuilderTest, ReduceWindowTakesSeveralInputsAndAGeneralBody) {
  FunctionBuilder f = Begin({T(kF32, {4, 6}), T(kI32, {4, 6}), T(kF32), T(kI32)});
  auto argmax = [](FunctionBuilder& b, std::span<Value* const> a) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * keep, b.Compare(a[0], a[2], "GE"));
    ACCY_ASSIGN_OR_RETURN(Value * v, b.Select(keep, a[0], a[2]));
    ACCY_ASSIGN_OR_RETURN(Value * i, b.Select(keep, a[1], a[3]));
    return b.Return({v, i});
  };
  ASSERT_OK_AND_ASSIGN(std::vector<Value*> out,
                       f.ReduceWindow({f.Parameter(0), f.Parameter(1)},
                                      {f.Parameter(2), f.Parameter(3)},
                                      Window({2, 2}, {2, 3}), argmax));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0]->type(), T(kF32, {2, 2}));
  EXPECT_EQ(out[1]->type(), T(kI32, {2, 2}));
}

TEST_F(WindowBuilderTest, ReduceWindowRejectsEveryBrokenConstraint) {
  FunctionBuilder f = Begin({T(kF32, {4, 6}), T(kF32), T(kF32, {4, 5}), T(kI32), T(kF32, {2})});
  Value* x = f.Parameter(0);
  Value* init = f.Parameter(1);
  EXPECT_REJECTED(f, f.ReduceWindow({x, f.Parameter(2)}, {init, init}, Window({2, 2}), AddBody),
                  "reduce_window: input 1 has type tensor<4x5xf32>",
                  "expected the shape of input 0");
  EXPECT_REJECTED(f, f.ReduceWindow({x}, {f.Parameter(3)}, Window({2, 2}), AddBody),
                  "reduce_window: init value 0 has type tensor<i32>, expected tensor<f32>");
  EXPECT_REJECTED(f, f.ReduceWindow({x}, {f.Parameter(4)}, Window({2, 2}), AddBody),
                  "reduce_window: init value 0 has type tensor<2xf32>");
  EXPECT_REJECTED(f, f.ReduceWindow({x}, {}, Window({2, 2}), AddBody),
                  "reduce_window: expected N inputs and N init values", "got 1 operands");
  EXPECT_REJECTED(f, f.ReduceWindow(x, init, Window({2}), "sum"),
                  "reduce_window: window_dimensions [2] has 1 entries, expected 2 (one per "
                  "input dim)");
  EXPECT_REJECTED(f, f.ReduceWindow(x, init, Window({0, 2}), "sum"),
                  "reduce_window: window_dimensions [0, 2]: entry 0 is 0, expected at least 1");
  EXPECT_REJECTED(f, f.ReduceWindow(x, init, Window({2, 2}, {1, 0}), "sum"),
                  "reduce_window: window_strides [1, 0]: entry 1 is 0, expected at least 1");
  EXPECT_REJECTED(f, f.ReduceWindow(x, init, Window({2, 2}, {1}), "sum"),
                  "reduce_window: window_strides [1] has 1 entries");
  EXPECT_REJECTED(f, f.ReduceWindow(x, init, Window({2, 2}, {}, {}, {0, 1}), "sum"),
                  "reduce_window: base_dilations [0, 1]: entry 0 is 0");
  EXPECT_REJECTED(f, f.ReduceWindow(x, init, Window({2, 2}, {}, {}, {}, {1, -1}), "sum"),
                  "reduce_window: window_dilations [1, -1]: entry 1 is -1");
  EXPECT_REJECTED(f, f.ReduceWindow(x, init, Window({2, 2}, {}, {{0, 0}}), "sum"),
                  "reduce_window: padding [0, 0] has 2 entries, expected 4 (a low and a high "
                  "per input dim)");
  EXPECT_REJECTED(f, f.ReduceWindow(x, init, Window({2, 2}, {}, {{0, 0}, {-4, -3}}), "sum"),
                  "reduce_window: dim 1: padding [-4, -3] leaves a padded input size of -1");
  EXPECT_REJECTED(f, f.ReduceWindow(x, init, Window({2, 2}), "mean"),
                  "reduce_window: unknown reducer 'mean'");
}

TEST_F(WindowBuilderTest, ReduceWindowRejectsABodyOfTheWrongSignature) {
  FunctionBuilder f = Begin({T(kF32, {4, 6}), T(kF32)});
  auto one_value = [](FunctionBuilder& b, std::span<Value* const> a) -> Status {
    ACCY_ASSIGN_OR_RETURN(Value * c, b.Compare(a[0], a[1], "LT"));
    return b.Return({c});
  };
  EXPECT_REJECTED(f, f.ReduceWindow({f.Parameter(0)}, {f.Parameter(1)}, Window({2, 2}),
                                    one_value),
                  "reduce_window: body returns tensor<i1> as value 0, expected tensor<f32>");
}

TEST_F(WindowBuilderTest, ReduceWindowGivenTheWrongResultTypeOrNoWindowIsRejected) {
  FunctionBuilder f = Begin({T(kF32, {4, 6}), T(kF32)});
  const TensorType scalar = T(kF32);
  auto regions = [&] {
    std::vector<RegionSpec> r;
    r.push_back(RegionSpec{{scalar, scalar}, AddBody});
    return r;
  };
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kReduceWindow, {f.Parameter(0), f.Parameter(1)},
                                {T(kF32, {4, 6})},
                                {{"window_dimensions", std::vector<int64_t>{2, 2}}}, regions()),
                  "reduce_window: result 0 has type tensor<4x6xf32>, expected tensor<3x5xf32>");
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kReduceWindow, {f.Parameter(0), f.Parameter(1)},
                                {T(kF32, {3, 5})}, {}, regions()),
                  "reduce_window: missing attribute window_dimensions");
  EXPECT_REJECTED(f, f.CreateOp(OpKind::kReduceWindow, {f.Parameter(0), f.Parameter(1)},
                                {T(kF32, {3, 5})},
                                {{"window_dimensions", std::string("2x2")}}, regions()),
                  "reduce_window: attribute window_dimensions has the wrong kind");
}

TEST_F(WindowBuilderTest, SelectAndScatterHasTheOperandType) {
  FunctionBuilder f = Begin({T(kI64, {4, 2}), T(kI64, {2, 2}), T(kI64)});
  ASSERT_OK_AND_ASSIGN(Value * out,
                       f.SelectAndScatter(f.Parameter(0), f.Parameter(1), f.Parameter(2),
                                          Window({3, 1}, {2, 1}, {{0, 1}, {0, 0}}), GeSelect,
                                          AddBody));
  EXPECT_EQ(out->type(), T(kI64, {4, 2}));
  EXPECT_EQ(out->defining_op()->kind(), OpKind::kSelectAndScatter);
  EXPECT_EQ(out->defining_op()->num_regions(), 2);
}

TEST_F(WindowBuilderTest, SelectAndScatterRejectsEveryBrokenConstraint) {
  FunctionBuilder f = Begin({T(kF32, {4, 2}), T(kF32, {2, 2}), T(kF32), T(kI32, {2, 2}),
                             T(kF32, {3, 2}), T(kI32)});
  Value* operand = f.Parameter(0);
  Value* source = f.Parameter(1);
  Value* init = f.Parameter(2);
  const WindowOptions window = Window({3, 1}, {2, 1}, {{0, 1}, {0, 0}});
  EXPECT_REJECTED(f, f.SelectAndScatter(operand, f.Parameter(3), init, window, GeSelect, AddBody),
                  "select_and_scatter: source has type tensor<2x2xi32>, expected the element "
                  "type of operand");
  EXPECT_REJECTED(f, f.SelectAndScatter(operand, f.Parameter(4), init, window, GeSelect, AddBody),
                  "select_and_scatter: source has type tensor<3x2xf32>, expected the shape [2, 2]");
  EXPECT_REJECTED(f, f.SelectAndScatter(operand, source, f.Parameter(5), window, GeSelect,
                                        AddBody),
                  "select_and_scatter: init_value has type tensor<i32>, expected tensor<f32>");
  EXPECT_REJECTED(f, f.SelectAndScatter(operand, source, init, Window({3, 1}, {2, 1},
                                                                      {{0, 1}, {0, 0}}, {1, 1}),
                                        GeSelect, AddBody),
                  "select_and_scatter: has no attribute base_dilations");
  EXPECT_REJECTED(f, f.SelectAndScatter(operand, source, init, Window({3, 0}), GeSelect, AddBody),
                  "select_and_scatter: window_dimensions [3, 0]: entry 1 is 0");
  // select must return tensor<i1>; scatter the element type.
  EXPECT_REJECTED(f, f.SelectAndScatter(operand, source, init, window, AddBody, AddBody),
                  "select_and_scatter: select returns tensor<f32> as value 0, expected "
                  "tensor<i1>");
  EXPECT_REJECTED(f, f.SelectAndScatter(operand, source, init, window, GeSelect, GeSelect),
                  "select_and_scatter: scatter returns tensor<i1> as value 0, expected "
                  "tensor<f32>");
}

}  // namespace
}  // namespace accy::ir_test
