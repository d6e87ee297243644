// Reference evaluator tests for reduce_window and select_and_scatter (src/reference/window_ops.cc):
// the StableHLO spec's and interpreter's examples, padding that feeds the init value into a
// general body, negative padding, variadic (argmax) bodies, and select_and_scatter's tie rule
// and dropped all-padding windows. Expected values are hand-computed or the spec's.
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "tests/reference/reference_test_util.h"
#include "tests/test_util.h"

namespace accy::reference_test {
namespace {

WindowOptions Window(std::vector<int64_t> dims, std::vector<int64_t> strides = {},
                     std::vector<std::pair<int64_t, int64_t>> padding = {},
                     std::vector<int64_t> base = {}, std::vector<int64_t> dilations = {}) {
  return {std::move(dims), std::move(strides), std::move(base), std::move(dilations),
          std::move(padding)};
}

Status AddBody(FunctionBuilder& b, std::span<Value* const> a) {
  ACCY_ASSIGN_OR_RETURN(Value * sum, b.Add(a[0], a[1]));
  return b.Return({sum});
}

TEST(ReduceWindowTest, SpecExampleWithDilationsAndPadding) {
  // tests/interpret/reduce_window.mlir: [[1,2],[3,4],[5,6]], base dilation 2, window dilation 3.
  for (int64_t window : {2, 3}) {
    const std::vector<int64_t> out_dims = {window == 2 ? 2 : 1, 2};
    ASSERT_OK_AND_ASSIGN(
        Tensor result,
        RunOne(Type(E::kI64, out_dims),
               {Make<int64_t>(E::kI64, {3, 2}, {1, 2, 3, 4, 5, 6}), Make<int64_t>(E::kI64, {}, {0})},
               [&](FunctionBuilder& b, std::span<Value* const> p) {
                 return b.ReduceWindow(p[0], p[1],
                                       Window({window, 1}, {4, 1}, {{2, 1}, {0, 0}}, {2, 1}, {3, 1}),
                                       "sum");
               }));
    if (window == 2) {
      ExpectTensor<int64_t>(result, E::kI64, {2, 2}, {0, 0, 3, 4});
    } else {
      ExpectTensor<int64_t>(result, E::kI64, {1, 2}, {5, 6});
    }
  }
}

TEST(ReduceWindowTest, MaxPoolWithSamePadding) {
  // 4x4 = 0..15, 3x3/2 windows, padding 1 each side: 2x2 of maxima.
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kF32, {2, 2}),
             {Make<float>(E::kF32, {4, 4}, x), Make<float>(E::kF32, {}, {-INFINITY})},
             [&](FunctionBuilder& b, std::span<Value* const> p) {
               return b.ReduceWindow(p[0], p[1], Window({3, 3}, {2, 2}, {{1, 1}, {1, 1}}), "max");
             }));
  ExpectTensor<float>(result, E::kF32, {2, 2}, {5, 7, 13, 15});
}

TEST(ReduceWindowTest, PaddingFeedsTheInitValueIntoAGeneralBody) {
  // body(acc, x) = acc * 2 + x, init 1, input [3, 4], window 2, padding (1, 0): windows
  // {pad, 3} -> (1*2+1)*2+3 = 9 and {3, 4} -> (1*2+3)*2+4 = 14.
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kI32, {2}),
             {Make<int32_t>(E::kI32, {2}, {3, 4}), Make<int32_t>(E::kI32, {}, {1})},
             [&](FunctionBuilder& b, std::span<Value* const> p) -> StatusOr<Value*> {
               auto body = [](FunctionBuilder& r, std::span<Value* const> a) -> Status {
                 ACCY_ASSIGN_OR_RETURN(Value * twice, r.Add(a[0], a[0]));
                 ACCY_ASSIGN_OR_RETURN(Value * out, r.Add(twice, a[1]));
                 return r.Return({out});
               };
               ACCY_ASSIGN_OR_RETURN(std::vector<Value*> out,
                                     b.ReduceWindow({p[0]}, {p[1]}, Window({2}, {}, {{1, 0}}), body));
               return out[0];
             }));
  ExpectTensor<int32_t>(result, E::kI32, {2}, {9, 14});
}

TEST(ReduceWindowTest, NegativePaddingCropsTheInput) {
  // [1..6], padding (-2, -1) leaves [3, 4, 5]; window 2: [7, 9].
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kI32, {2}),
             {Make<int32_t>(E::kI32, {6}, {1, 2, 3, 4, 5, 6}), Make<int32_t>(E::kI32, {}, {0})},
             [&](FunctionBuilder& b, std::span<Value* const> p) {
               return b.ReduceWindow(p[0], p[1], Window({2}, {}, {{-2, -1}}), "sum");
             }));
  ExpectTensor<int32_t>(result, E::kI32, {2}, {7, 9});
}

TEST(ReduceWindowTest, VariadicArgmaxKeepsTheFirstMaximum) {
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> results,
      RunAll({Type(E::kF32, {2}), Type(E::kI32, {2})},
             {Make<float>(E::kF32, {4}, {2, 7, 7, 1}), Make<int32_t>(E::kI32, {4}, {0, 1, 2, 3}),
              Make<float>(E::kF32, {}, {-INFINITY}), Make<int32_t>(E::kI32, {}, {-1})},
             [](FunctionBuilder& b, std::span<Value* const> p) -> StatusOr<std::vector<Value*>> {
               auto body = [](FunctionBuilder& r, std::span<Value* const> a) -> Status {
                 ACCY_ASSIGN_OR_RETURN(Value * keep, r.Compare(a[0], a[2], "GE"));
                 ACCY_ASSIGN_OR_RETURN(Value * v, r.Select(keep, a[0], a[2]));
                 ACCY_ASSIGN_OR_RETURN(Value * i, r.Select(keep, a[1], a[3]));
                 return r.Return({v, i});
               };
               return b.ReduceWindow({p[0], p[1]}, {p[2], p[3]}, Window({3}), body);
             }));
  ExpectTensor<float>(results[0], E::kF32, {2}, {7, 7});
  ExpectTensor<int32_t>(results[1], E::kI32, {2}, {1, 1});
}

Status GeSelect(FunctionBuilder& b, std::span<Value* const> a) {
  ACCY_ASSIGN_OR_RETURN(Value * keep, b.Compare(a[0], a[1], "GE"));
  return b.Return({keep});
}

TEST(SelectAndScatterTest, SpecExample) {
  // tests/interpret/select_and_scatter.mlir.
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kI64, {4, 2}),
             {Make<int64_t>(E::kI64, {4, 2}, {1, 5, 2, 5, 3, 6, 4, 4}),
              Make<int64_t>(E::kI64, {2, 2}, {5, 6, 7, 8}), Make<int64_t>(E::kI64, {}, {0})},
             [&](FunctionBuilder& b, std::span<Value* const> p) {
               return b.SelectAndScatter(p[0], p[1], p[2], Window({3, 1}, {2, 1}, {{0, 1}, {0, 0}}),
                                         GeSelect, AddBody);
             }));
  ExpectTensor<int64_t>(result, E::kI64, {4, 2}, {0, 0, 0, 0, 5, 14, 7, 0});
}

TEST(SelectAndScatterTest, TiesKeepTheFirstAndAllPaddingWindowsAreDropped) {
  // operand [4, 4, 1], window 2, stride 1, padding (2, 0): windows {pad, pad} (dropped),
  // {pad, 4}, {4, 4} (tie: the first), {4, 1}; init 100.
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunOne(Type(E::kI32, {3}),
             {Make<int32_t>(E::kI32, {3}, {4, 4, 1}), Make<int32_t>(E::kI32, {4}, {1, 10, 20, 30}),
              Make<int32_t>(E::kI32, {}, {100})},
             [&](FunctionBuilder& b, std::span<Value* const> p) {
               return b.SelectAndScatter(p[0], p[1], p[2], Window({2}, {1}, {{2, 0}}), GeSelect,
                                         AddBody);
             }));
  ExpectTensor<int32_t>(result, E::kI32, {3}, {130, 130, 100});
}

}  // namespace
}  // namespace accy::reference_test
