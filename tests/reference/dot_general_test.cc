// Reference evaluator tests for dot_general (src/reference/dot_general.cc): result dim order
// (batch, lhs free, rhs free), non-leading batch dims, accumulation in double with one final
// rounding, integer wrap-around and mixed input/result element types.
#include <cstdint>
#include <span>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "accy/status.h"
#include "accy/tensor.h"
#include "accy/types.h"
#include "gtest/gtest.h"
#include "tests/reference/reference_test_util.h"
#include "tests/test_util.h"

namespace accy::reference_test {
namespace {

struct DotDims {
  std::vector<int64_t> lhs_contracting;
  std::vector<int64_t> rhs_contracting;
  std::vector<int64_t> lhs_batching = {};
  std::vector<int64_t> rhs_batching = {};
};

// Evaluates `main(lhs, rhs) = dot_general(lhs, rhs)` with result type `result_type`.
StatusOr<Tensor> RunDot(const TensorType& result_type, const Tensor& lhs, const Tensor& rhs,
                        const DotDims& dims) {
  return RunOne(result_type, {lhs, rhs}, [&](FunctionBuilder& b, std::span<Value* const> p) {
    return b.DotGeneral(p[0], p[1], result_type, dims.lhs_contracting, dims.rhs_contracting,
                        dims.lhs_batching, dims.rhs_batching);
  });
}

std::vector<int32_t> Iota32(int32_t n) {
  std::vector<int32_t> values(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = i;
  return values;
}

TEST(DotGeneralTest, PlainMatmul) {
  ASSERT_OK_AND_ASSIGN(
      Tensor result, RunDot(Type(E::kF32, {2, 2}), Make<float>(E::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                            Make<float>(E::kF32, {3, 2}, {7, 8, 9, 10, 11, 12}), {{1}, {0}}));
  ExpectTensor<float>(result, E::kF32, {2, 2}, {58, 64, 139, 154});
}

TEST(DotGeneralTest, MatmulWithTransposedRhsContractsDim1OfBoth) {
  // lhs [2,3] x rhs [2,3] contracting dim 1 of both: lhs * rhs^T.
  ASSERT_OK_AND_ASSIGN(
      Tensor result,
      RunDot(Type(E::kF64, {2, 2}), Make<double>(E::kF64, {2, 3}, {1, 2, 3, 4, 5, 6}),
             Make<double>(E::kF64, {2, 3}, {1, 0, -1, 2, 2, 2}), {{1}, {1}}));
  ExpectTensor<double>(result, E::kF64, {2, 2}, {-2, 12, -2, 30});
}

TEST(DotGeneralTest, VectorDotGivesScalar) {
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunDot(Type(E::kI32, {}), Make<int32_t>(E::kI32, {3}, {1, 2, 3}),
                              Make<int32_t>(E::kI32, {3}, {4, -5, 6}), {{0}, {0}}));
  ExpectTensor<int32_t>(result, E::kI32, {}, {12});
}

TEST(DotGeneralTest, OuterProductWithoutContractingDims) {
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunDot(Type(E::kI32, {2, 3}), Make<int32_t>(E::kI32, {2}, {1, 2}),
                              Make<int32_t>(E::kI32, {3}, {3, 4, 5}), {{}, {}}));
  ExpectTensor<int32_t>(result, E::kI32, {2, 3}, {3, 4, 5, 6, 8, 10});
}

TEST(DotGeneralTest, NonLeadingBatchDimsGiveBatchLhsFreeRhsFreeOrder) {
  // lhs [3,2,4] (free i, batch b, contracting k) = 8i + 4b + k; rhs [4,2,5] (contracting k,
  // batch b, free f) = (k + 1)(f + 1) + 7b - k. result[b][i][f] = sum_k lhs[i][b][k] rhs[k][b][f],
  // e.g. result[0][0][0] = (0 + 1 + 2 + 3) * 1 = 6 and result[1][0][0] = (4 + 5 + 6 + 7) * 8.
  const std::vector<int32_t> rhs = {1, 2, 3, 4,  5,  8, 9,  10, 11, 12,   // k = 0
                                    1, 3, 5, 7,  9,  8, 10, 12, 14, 16,   // k = 1
                                    1, 4, 7, 10, 13, 8, 11, 14, 17, 20,   // k = 2
                                    1, 5, 9, 13, 17, 8, 12, 16, 20, 24};  // k = 3
  ASSERT_OK_AND_ASSIGN(
      Tensor result, RunDot(Type(E::kI32, {2, 3, 5}), Make<int32_t>(E::kI32, {3, 2, 4}, Iota32(24)),
                            Make<int32_t>(E::kI32, {4, 2, 5}, rhs), {{2}, {0}, {1}, {1}}));
  ExpectTensor<int32_t>(
      result, E::kI32, {2, 3, 5},
      {6,   26,  46,  66,  86,  38,  138, 238, 338, 438, 70,  250, 430,  610,  790,     // b = 0
       176, 236, 296, 356, 416, 432, 572, 712, 852, 992, 688, 908, 1128, 1348, 1568});  // b = 1
}

TEST(DotGeneralTest, BatchedMatmulWithLeadingBatchDims) {
  // Two 1x2 by 2x1 products.
  ASSERT_OK_AND_ASSIGN(
      Tensor result, RunDot(Type(E::kF32, {2, 1, 1}), Make<float>(E::kF32, {2, 1, 2}, {1, 2, 3, 4}),
                            Make<float>(E::kF32, {2, 2, 1}, {5, 6, 7, 8}), {{2}, {1}, {0}, {0}}));
  ExpectTensor<float>(result, E::kF32, {2, 1, 1}, {17, 53});
}

TEST(DotGeneralTest, IntegerDotWrapsModuloResultWidth) {
  // 100 * 2 + 100 * 1 = 300 = 44 (mod 256) as i8; -64 * 2 + -1 * 1 = -129 = 127 (mod 256).
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunDot(Type(E::kI8, {2}), Make<int8_t>(E::kI8, {2, 2}, {100, 100, -64, -1}),
                              Make<int8_t>(E::kI8, {2}, {2, 1}), {{1}, {0}}));
  ExpectTensor<int8_t>(result, E::kI8, {2}, {44, 127});
}

TEST(DotGeneralTest, UnsignedDotWraps) {
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunDot(Type(E::kU32, {}), Make<uint32_t>(E::kU32, {2}, {0x80000000u, 3}),
                              Make<uint32_t>(E::kU32, {2}, {2, 5}), {{0}, {0}}));
  ExpectTensor<uint32_t>(result, E::kU32, {}, {15});
}

TEST(DotGeneralTest, Int8InputsAccumulateInInt32Result) {
  // 127 * 127 * 2 = 32258 and -128 * 127 = -16256 do not fit i8 but fit the i32 result.
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunDot(Type(E::kI32, {2}), Make<int8_t>(E::kI8, {2, 2}, {127, 127, -128, 0}),
                              Make<int8_t>(E::kI8, {2}, {127, 127}), {{1}, {0}}));
  ExpectTensor<int32_t>(result, E::kI32, {2}, {32258, -16256});
}

TEST(DotGeneralTest, F32AccumulatesInDoubleAndRoundsOnce) {
  // 2^24 + 1 + 1: float accumulation would lose both ones (16777216); double gives 16777218,
  // which f32 represents exactly.
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunDot(Type(E::kF32, {}), Make<float>(E::kF32, {3}, {16777216.0f, 1, 1}),
                              Make<float>(E::kF32, {3}, {1, 1, 1}), {{0}, {0}}));
  ExpectTensor<float>(result, E::kF32, {}, {16777218.0f});
}

TEST(DotGeneralTest, F16AccumulatesInDoubleAndRoundsOnce) {
  // 2048 + 1 + 1 in f16 steps would stay 2048 (spacing 2 there); rounded once it is 2050.
  const uint16_t k2048 = 0x6800, k1 = 0x3c00, k2050 = 0x6801;
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunDot(Type(E::kF16, {}), Make<uint16_t>(E::kF16, {3}, {k2048, k1, k1}),
                              Make<uint16_t>(E::kF16, {3}, {k1, k1, k1}), {{0}, {0}}));
  ExpectTensor<uint16_t>(result, E::kF16, {}, {k2050});
}

TEST(DotGeneralTest, BF16InputsWithF32Result) {
  // bf16 1.5 = 0x3fc0, 3.0 = 0x4040: 1.5 * 3 + 1.5 * 3 = 9.
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunDot(Type(E::kF32, {}), Make<uint16_t>(E::kBF16, {2}, {0x3fc0, 0x3fc0}),
                              Make<uint16_t>(E::kBF16, {2}, {0x4040, 0x4040}), {{0}, {0}}));
  ExpectTensor<float>(result, E::kF32, {}, {9.0f});
}

TEST(DotGeneralTest, ZeroSizeContractingDimGivesZeros) {
  ASSERT_OK_AND_ASSIGN(Tensor result,
                       RunDot(Type(E::kF32, {2, 3}), Make<float>(E::kF32, {2, 0}, {}),
                              Make<float>(E::kF32, {0, 3}, {}), {{1}, {0}}));
  ExpectTensor<float>(result, E::kF32, {2, 3}, {0, 0, 0, 0, 0, 0});
}

}  // namespace
}  // namespace accy::reference_test
