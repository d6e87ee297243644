// Tests for host tensors, f16/bf16 conversion and tensor comparison (accy/tensor.h).
#include "accy/tensor.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr float kFloatMax = std::numeric_limits<float>::max();

TensorType Type(ElementType element_type, std::vector<int64_t> dims) {
  StatusOr<TensorType> type = TensorType::Create(element_type, std::move(dims));
  EXPECT_TRUE(type.ok()) << type.status();
  return *type;
}

template <typename T>
Tensor Make(ElementType element_type, std::vector<int64_t> dims, const std::vector<T>& values) {
  StatusOr<Tensor> tensor = Tensor::FromVector(Type(element_type, std::move(dims)), values);
  EXPECT_TRUE(tensor.ok()) << tensor.status();
  return *tensor;
}

// ---- f16 / bf16 conversion --------------------------------------------------------------------

TEST(HalfConversionTest, ExactValuesRoundTrip) {
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(HalfBitsToFloat(0x3c00), 1.0f);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7bff);  // largest finite f16
  EXPECT_EQ(HalfBitsToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(FloatToHalfBits(-0.0f), 0x8000);
  EXPECT_TRUE(std::signbit(HalfBitsToFloat(0x8000)));
  EXPECT_EQ(HalfBitsToFloat(0x8000), 0.0f);
  EXPECT_EQ(FloatToHalfBits(0x1p-24f), 0x0001);  // smallest subnormal
}

TEST(HalfConversionTest, InexactValueRoundsToNearest) {
  EXPECT_EQ(FloatToHalfBits(0.1f), 0x2e66);
  EXPECT_EQ(HalfBitsToFloat(0x2e66), 0.0999755859375f);
}

TEST(HalfConversionTest, OverflowAtHalfwayRoundsToInfinity) {
  EXPECT_EQ(FloatToHalfBits(65519.0f), 0x7bff);  // below the halfway point to 65536
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7c00);  // tie, rounds to even: +inf
  EXPECT_EQ(FloatToHalfBits(-65520.0f), 0xfc00);
  EXPECT_TRUE(std::isinf(HalfBitsToFloat(0x7c00)));
}

TEST(HalfConversionTest, NaNStaysNaN) {
  const uint16_t bits = FloatToHalfBits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(bits & 0x7c00, 0x7c00);
  EXPECT_NE(bits & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(0x7c01)));  // signalling pattern is still NaN
}

TEST(BFloat16ConversionTest, TiesRoundToEven) {
  EXPECT_EQ(FloatToBFloat16Bits(1.0f), 0x3f80);
  // 1 + 2^-8 lies halfway between 1.0 (0x3f80, even) and 1.0078125 (0x3f81).
  EXPECT_EQ(FloatToBFloat16Bits(1.00390625f), 0x3f80);
  EXPECT_EQ(BFloat16BitsToFloat(FloatToBFloat16Bits(1.00390625f)), 1.0f);
  // 1 + 3 * 2^-8 lies halfway between 0x3f81 and 0x3f82 (even): rounds up to 1.015625.
  EXPECT_EQ(FloatToBFloat16Bits(1.01171875f), 0x3f82);
  EXPECT_EQ(BFloat16BitsToFloat(0x3f82), 1.015625f);
  // Just above the tie rounds up.
  EXPECT_EQ(FloatToBFloat16Bits(1.00390625f + 0x1p-20f), 0x3f81);
}

TEST(BFloat16ConversionTest, SpecialValuesKeepTheirMeaning) {
  EXPECT_EQ(FloatToBFloat16Bits(-0.0f), 0x8000);
  EXPECT_EQ(FloatToBFloat16Bits(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(FloatToBFloat16Bits(kFloatMax), 0x7f80);  // rounds past the largest bf16
  EXPECT_TRUE(std::isnan(BFloat16BitsToFloat(FloatToBFloat16Bits(std::nanf("")))));
}

TEST(HalfConversionTest, SetFromDoubleRoundsOnceFromDouble) {
  // 1 + 2^-11 + 2^-40 is just above the f16 tie between 1 and 1 + 2^-10; via float it would
  // become the exact tie and round down to 1.
  Tensor tensor = *Tensor::Allocate(Type(ElementType::kF16, {1}));
  tensor.SetFromDouble(0, 1.0 + 0x1p-11 + 0x1p-40);
  EXPECT_EQ(tensor.data_as<uint16_t>()[0], 0x3c01);
  tensor.SetFromDouble(0, 1.0 + 0x1p-11);
  EXPECT_EQ(tensor.data_as<uint16_t>()[0], 0x3c00);
}

// ---- Allocation and construction ---------------------------------------------------------------

TEST(TensorTest, AllocateIsZeroFilledAndAligned) {
  StatusOr<Tensor> tensor = Tensor::Allocate(Type(ElementType::kF32, {3, 5}));
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_TRUE(tensor->valid());
  EXPECT_TRUE(tensor->owns_data());
  EXPECT_EQ(tensor->byte_size(), 60);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor->data()) % kTensorAlignment, 0u);
  for (uint8_t byte : tensor->bytes()) EXPECT_EQ(byte, 0);
}

TEST(TensorTest, ZeroSizeTensorIsValid) {
  StatusOr<Tensor> tensor = Tensor::Allocate(Type(ElementType::kF32, {0, 4}));
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_TRUE(tensor->valid());
  EXPECT_EQ(tensor->byte_size(), 0);
  EXPECT_EQ(tensor->ToString(), "tensor<0x4xf32> []");
  EXPECT_TRUE(CompareExact(*tensor, *tensor).ok);
}

TEST(TensorTest, DefaultTensorIsNotValid) {
  Tensor tensor;
  EXPECT_FALSE(tensor.valid());
  EXPECT_EQ(tensor.ToString(), "tensor<f32> <no data>");
  StatusOr<Tensor> clone = tensor.Clone();
  ASSERT_FALSE(clone.ok());
  EXPECT_EQ(clone.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(clone.status().message(), HasSubstr("has no data"));
}

TEST(TensorTest, AllocateRejectsByteSizeOverflow) {
  StatusOr<Tensor> u64_overflow = Tensor::Allocate(Type(ElementType::kF64, {int64_t{1} << 62}));
  ASSERT_FALSE(u64_overflow.ok());
  EXPECT_EQ(u64_overflow.status().code(), absl::StatusCode::kOutOfRange);
  // 2^63 bytes fits a u64 but not the signed byte_size().
  StatusOr<Tensor> i64_overflow = Tensor::Allocate(Type(ElementType::kF32, {int64_t{1} << 61}));
  ASSERT_FALSE(i64_overflow.ok());
  EXPECT_EQ(i64_overflow.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(i64_overflow.status().message(), HasSubstr("tensor<2305843009213693952xf32>"));
}

TEST(TensorTest, AllocateFailureIsResourceExhausted) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer aborts on impossible allocations";
#endif
  StatusOr<Tensor> tensor = Tensor::Allocate(Type(ElementType::kI8, {int64_t{1} << 61}));
  ASSERT_FALSE(tensor.ok());
  EXPECT_EQ(tensor.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(tensor.status().message(), HasSubstr("cannot allocate"));
}

TEST(TensorTest, StridesAreRowMajorInElements) {
  EXPECT_EQ(Tensor::Allocate(Type(ElementType::kF32, {2, 3, 4}))->strides(),
            (std::vector<int64_t>{12, 4, 1}));
  EXPECT_TRUE(Tensor::Allocate(Type(ElementType::kF32, {}))->strides().empty());
}

TEST(TensorTest, StridesThatDoNotFitSaturate) {
  // No elements, so the type is valid, but 2^62 * 2^62 does not fit in int64_t.
  constexpr int64_t kHuge = int64_t{1} << 62;
  ASSERT_OK_AND_ASSIGN(Tensor tensor,
                       Tensor::Allocate(Type(ElementType::kF32, {0, kHuge, kHuge})));
  EXPECT_EQ(tensor.strides(),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max(), kHuge, 1}));
  // A 0 dim inside the product makes the stride exact again.
  ASSERT_OK_AND_ASSIGN(Tensor zero_inside,
                       Tensor::Allocate(Type(ElementType::kF32, {2, 0, kHuge, kHuge})));
  EXPECT_EQ(zero_inside.strides(),
            (std::vector<int64_t>{0, std::numeric_limits<int64_t>::max(), kHuge, 1}));
}

TEST(TensorTest, CopiesShareDataAndCloneDoesNot) {
  Tensor tensor = Make<float>(ElementType::kF32, {2}, {1, 2});
  Tensor copy = tensor;
  StatusOr<Tensor> clone = tensor.Clone();
  ASSERT_TRUE(clone.ok());
  EXPECT_NE(clone->data(), tensor.data());
  EXPECT_TRUE(clone->owns_data());
  tensor.SetFromDouble(0, 5);
  EXPECT_EQ(copy.GetAsDouble(0), 5);
  EXPECT_EQ(clone->GetAsDouble(0), 1);
}

TEST(TensorTest, FromVectorStoresValuesRowMajor) {
  Tensor tensor = Make<float>(ElementType::kF32, {2, 2}, {1, 2, 3, 4.5});
  EXPECT_EQ(tensor.GetAsDouble(3), 4.5);
  EXPECT_EQ(tensor.ToString(), "tensor<2x2xf32> [1, 2, 3, 4.5]");
  Tensor flags = Make<bool>(ElementType::kI1, {3}, {true, false, true});
  EXPECT_EQ(flags.data_as<uint8_t>()[2], 1);
  EXPECT_EQ(flags.ToString(), "tensor<3xi1> [true, false, true]");
  Tensor half = Make<uint16_t>(ElementType::kF16, {1}, {0x3e00});
  EXPECT_EQ(half.GetAsDouble(0), 1.5);
}

TEST(TensorTest, FromVectorRejectsWrongCount) {
  StatusOr<Tensor> tensor =
      Tensor::FromVector(Type(ElementType::kF32, {2, 2}), std::vector<float>{1, 2, 3});
  ASSERT_FALSE(tensor.ok());
  EXPECT_EQ(tensor.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tensor.status().message(),
              HasSubstr("3 values given for tensor<2x2xf32> with 4 elements"));
}

TEST(TensorTest, FromVectorRejectsWrongHostType) {
  auto expect_rejected = [](StatusOr<Tensor> tensor, const std::string& type) {
    ASSERT_FALSE(tensor.ok()) << type;
    EXPECT_EQ(tensor.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(tensor.status().message(), HasSubstr("does not match " + type));
  };
  expect_rejected(Tensor::FromVector(Type(ElementType::kF32, {1}), std::vector<double>{1}),
                  "tensor<1xf32>");
  expect_rejected(Tensor::FromVector(Type(ElementType::kF16, {1}), std::vector<float>{1}),
                  "tensor<1xf16>");
  expect_rejected(Tensor::FromVector(Type(ElementType::kI32, {1}), std::vector<float>{1}),
                  "tensor<1xi32>");
  expect_rejected(Tensor::FromVector(Type(ElementType::kU8, {1}), std::vector<bool>{true}),
                  "tensor<1xui8>");
  EXPECT_TRUE(Tensor::FromVector(Type(ElementType::kI1, {1}), std::vector<uint8_t>{1}).ok());
  EXPECT_TRUE(Tensor::FromVector(Type(ElementType::kBF16, {1}), std::vector<uint16_t>{1}).ok());
}

TEST(TensorTest, FromVectorRejectsHostTypesOfTheOtherSignedness) {
  auto expect_rejected = [](StatusOr<Tensor> tensor, const std::string& fragment) {
    ASSERT_FALSE(tensor.ok()) << fragment;
    EXPECT_EQ(tensor.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(tensor.status().message(), HasSubstr(fragment));
  };
  expect_rejected(Tensor::FromVector(Type(ElementType::kU32, {1}), std::vector<int32_t>{-1}),
                  "host type (signed integer of 4 bytes) does not match tensor<1xui32>");
  expect_rejected(Tensor::FromVector(Type(ElementType::kI64, {1}), std::vector<uint64_t>{1}),
                  "host type (unsigned integer of 8 bytes) does not match tensor<1xi64>");
  expect_rejected(Tensor::FromVector(Type(ElementType::kF16, {1}), std::vector<int16_t>{1}),
                  "does not match tensor<1xf16>");
  expect_rejected(Tensor::FromVector(Type(ElementType::kI1, {1}), std::vector<int8_t>{1}),
                  "does not match tensor<1xi1>");
  EXPECT_TRUE(Tensor::FromVector(Type(ElementType::kU32, {1}), std::vector<uint32_t>{1}).ok());
  EXPECT_TRUE(Tensor::FromVector(Type(ElementType::kI8, {1}), std::vector<int8_t>{-1}).ok());
}

TEST(TensorTest, FromVectorStoresNonZeroI1BytesAsOne) {
  const std::vector<uint8_t> bytes = {7, 0, 1};
  ASSERT_OK_AND_ASSIGN(Tensor flags, Tensor::FromVector(Type(ElementType::kI1, {3}), bytes));
  EXPECT_EQ(std::vector<uint8_t>(flags.bytes().begin(), flags.bytes().end()),
            (std::vector<uint8_t>{1, 0, 1}));
}

TEST(TensorTest, FromBytesRejectsI1BytesOtherThanZeroOrOne) {
  const std::vector<uint8_t> bytes = {1, 0, 7};
  StatusOr<Tensor> tensor = Tensor::FromBytes(Type(ElementType::kI1, {3}), bytes);
  ASSERT_FALSE(tensor.ok());
  EXPECT_EQ(tensor.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tensor.status().message(),
              HasSubstr("byte 2 of tensor<3xi1> is 7; i1 elements must be 0 or 1"));
}

TEST(TensorTest, FromBytesReadsLittleEndianAndRejectsSizeMismatch) {
  const std::vector<uint8_t> one = {0x00, 0x00, 0x80, 0x3f};
  StatusOr<Tensor> tensor = Tensor::FromBytes(Type(ElementType::kF32, {}), one);
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->GetAsDouble(0), 1.0);

  const std::vector<uint8_t> seven(7);
  StatusOr<Tensor> bad = Tensor::FromBytes(Type(ElementType::kF32, {2}), seven);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("7 bytes given for tensor<2xf32>, which needs 8"));
}

TEST(TensorTest, BorrowWritesThroughToCallerBuffer) {
  int32_t buffer[3] = {1, 2, 3};
  StatusOr<Tensor> tensor = Tensor::Borrow(Type(ElementType::kI32, {3}), buffer);
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_FALSE(tensor->owns_data());
  EXPECT_EQ(tensor->GetAsInt64(2), 3);
  tensor->SetFromDouble(1, -7);
  EXPECT_EQ(buffer[1], -7);
}

TEST(TensorTest, BorrowRejectsNullDataUnlessEmpty) {
  StatusOr<Tensor> tensor = Tensor::Borrow(Type(ElementType::kF32, {2}), nullptr);
  ASSERT_FALSE(tensor.ok());
  EXPECT_EQ(tensor.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tensor.status().message(), HasSubstr("null data for tensor<2xf32>"));

  StatusOr<Tensor> empty = Tensor::Borrow(Type(ElementType::kF32, {0}), nullptr);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->valid());
}

// ---- Element conversion ------------------------------------------------------------------------

TEST(TensorTest, FilledValueReadsBackForEveryType) {
  for (ElementType type : kAllElementTypes) {
    Tensor tensor = *Tensor::Filled(Type(type, {3}), 3);
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_EQ(tensor.GetAsDouble(i), IsBool(type) ? 1 : 3) << ElementTypeName(type);
    }
    if (IsFloat(type) || IsSigned(type)) {
      tensor.SetFromDouble(1, -2);
      EXPECT_EQ(tensor.GetAsDouble(1), -2) << ElementTypeName(type);
    }
  }
}

TEST(TensorTest, FilledRoundsToTheElementType) {
  Tensor half = *Tensor::Filled(Type(ElementType::kF16, {2}), 0.1);
  EXPECT_EQ(half.data_as<uint16_t>()[1], 0x2e66);
  Tensor bf16 = *Tensor::Filled(Type(ElementType::kBF16, {1}), 1.00390625);
  EXPECT_EQ(bf16.data_as<uint16_t>()[0], 0x3f80);
  Tensor f32 = *Tensor::Filled(Type(ElementType::kF32, {1}), 0.1);
  EXPECT_EQ(f32.data_as<float>()[0], 0.1f);
}

double StoredAs(ElementType type, double value) {
  Tensor tensor = *Tensor::Allocate(Type(type, {}));
  tensor.SetFromDouble(0, value);
  return tensor.GetAsDouble(0);
}

TEST(TensorTest, SetFromDoubleTruncatesAndWrapsIntegers) {
  EXPECT_EQ(StoredAs(ElementType::kI32, -2.9), -2);
  EXPECT_EQ(StoredAs(ElementType::kI8, 300), 44);
  EXPECT_EQ(StoredAs(ElementType::kI8, -129), 127);
  EXPECT_EQ(StoredAs(ElementType::kU8, -1), 255);
  EXPECT_EQ(StoredAs(ElementType::kU8, 256.7), 0);
  EXPECT_EQ(StoredAs(ElementType::kU16, 65537), 1);
  EXPECT_EQ(StoredAs(ElementType::kI16, kNaN), 0);
}

TEST(TensorTest, SetFromDoubleSaturatesBeyond64Bits) {
  Tensor i64 = *Tensor::Allocate(Type(ElementType::kI64, {2}));
  i64.SetFromDouble(0, 1e300);
  i64.SetFromDouble(1, -kInf);
  EXPECT_EQ(i64.GetAsInt64(0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(i64.GetAsInt64(1), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(StoredAs(ElementType::kU32, 1e30), 4294967295.0);
  EXPECT_EQ(StoredAs(ElementType::kI8, -1e30), -128);
  EXPECT_EQ(StoredAs(ElementType::kU8, -1e30), 0);
}

TEST(TensorTest, U64AboveInt64MaxWrapsInGetAsInt64) {
  Tensor u64 = *Tensor::Allocate(Type(ElementType::kU64, {2}));
  u64.SetFromDouble(0, 0x1p63);
  u64.SetFromDouble(1, -1);
  EXPECT_EQ(u64.data_as<uint64_t>()[0], uint64_t{1} << 63);
  EXPECT_EQ(u64.GetAsInt64(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(u64.GetAsDouble(0), 0x1p63);
  EXPECT_EQ(u64.data_as<uint64_t>()[1], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(u64.ToString(), "tensor<2xui64> [9223372036854775808, 18446744073709551615]");
}

TEST(TensorTest, SetFromDoubleStoresBoolAsNonZero) {
  EXPECT_EQ(StoredAs(ElementType::kI1, 0.5), 1);
  EXPECT_EQ(StoredAs(ElementType::kI1, -0.0), 0);
  EXPECT_EQ(StoredAs(ElementType::kI1, kNaN), 1);
}

// ---- ToString ----------------------------------------------------------------------------------

TEST(TensorTest, ToStringPrintsShortestFormAndTruncates) {
  EXPECT_EQ(Make<float>(ElementType::kF32, {3}, {0.1f, -0.0f, 1e20f}).ToString(),
            "tensor<3xf32> [0.1, -0, 1e+20]");
  EXPECT_EQ(Make<double>(ElementType::kF64, {3}, {kNaN, -kInf, 1.0 / 3}).ToString(),
            "tensor<3xf64> [nan, -inf, 0.3333333333333333]");
  // Shortest for the f16 value, not for the f32 it widens to.
  EXPECT_EQ(Tensor::Filled(Type(ElementType::kF16, {}), 0.1)->ToString(), "tensor<f16> [0.1]");
  EXPECT_EQ(Tensor::Filled(Type(ElementType::kF16, {}), 65504)->ToString(), "tensor<f16> [65504]");
  Tensor sevens = *Tensor::Filled(Type(ElementType::kI32, {5}), 7);
  EXPECT_EQ(sevens.ToString(3), "tensor<5xi32> [7, 7, 7, ...]");
  EXPECT_EQ(sevens.ToString(0), "tensor<5xi32> [...]");
}

// ---- ULP distance and comparison ---------------------------------------------------------------

TEST(UlpDistanceTest, CountsRepresentableValuesBetween) {
  EXPECT_EQ(UlpDistance(ElementType::kF32, 1.0, std::nextafter(1.0f, 2.0f)), 1);
  EXPECT_EQ(UlpDistance(ElementType::kF64, 1.0, std::nextafter(1.0, 0.0)), 1);
  EXPECT_EQ(UlpDistance(ElementType::kF16, 1.0, 1.0009765625), 1);
  EXPECT_EQ(UlpDistance(ElementType::kBF16, 1.0, 1.0078125), 1);
  EXPECT_EQ(UlpDistance(ElementType::kF32, 1.0, 1.0), 0);
}

TEST(UlpDistanceTest, SignedZerosAreZeroApartAndDistanceCrossesZero) {
  EXPECT_EQ(UlpDistance(ElementType::kF32, -0.0, 0.0), 0);
  const double tiny = 0x1p-149;  // smallest f32 subnormal
  EXPECT_EQ(UlpDistance(ElementType::kF32, -tiny, tiny), 2);
}

TEST(UlpDistanceTest, InfinityIsOneUlpAboveMaxFinite) {
  EXPECT_EQ(UlpDistance(ElementType::kF32, kInf, kFloatMax), 1);
  EXPECT_EQ(UlpDistance(ElementType::kF16, kInf, 65504), 1);
  EXPECT_EQ(UlpDistance(ElementType::kF64, -kInf, -std::numeric_limits<double>::max()), 1);
  EXPECT_EQ(UlpDistance(ElementType::kF32, -kInf, kInf), int64_t{2} * 0x7f800000);
  // Too far apart for int64: saturates.
  EXPECT_EQ(UlpDistance(ElementType::kF64, -kInf, kInf), std::numeric_limits<int64_t>::max());
}

TEST(UlpDistanceTest, NaNIsZeroFromNaNAndMaximalFromNumbers) {
  EXPECT_EQ(UlpDistance(ElementType::kF32, kNaN, kNaN), 0);
  EXPECT_EQ(UlpDistance(ElementType::kF32, kNaN, 1.0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(UlpDistance(ElementType::kF16, 0.0, kNaN), std::numeric_limits<int64_t>::max());
}

TEST(CompareTest, ExactAcceptsAnyNaNAgainstAnyNaN) {
  const float other_nan = std::bit_cast<float>(0x7fc00001u);
  Tensor a = Make<float>(ElementType::kF32, {2}, {1, std::nanf("")});
  Tensor b = Make<float>(ElementType::kF32, {2}, {1, other_nan});
  TensorComparison result = CompareExact(a, b);
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.first_bad_index, -1);
  EXPECT_TRUE(result.message.empty());
}

TEST(CompareTest, ExactDistinguishesSignedZeros) {
  TensorComparison result = CompareExact(Make<float>(ElementType::kF32, {1}, {-0.0f}),
                                         Make<float>(ElementType::kF32, {1}, {0.0f}));
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_index, 0);
  EXPECT_THAT(result.message, HasSubstr("actual -0, expected 0"));
}

TEST(CompareTest, ExactReportsFirstBadIndexAsLinearAndMultiDim) {
  Tensor actual = Make<float>(ElementType::kF32, {2, 3}, {0, 1, 2, 3, 9, 7});
  Tensor expected = Make<float>(ElementType::kF32, {2, 3}, {0, 1, 2, 3, 4, 5});
  TensorComparison result = CompareExact(actual, expected);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_index, 4);
  EXPECT_EQ(result.max_distance, 5);
  EXPECT_THAT(result.message, HasSubstr("element 4 at index [1, 1]"));
  EXPECT_THAT(result.message, HasSubstr("actual 9, expected 4"));
  EXPECT_THAT(result.message, HasSubstr("rule: exact"));
  EXPECT_THAT(result.message, HasSubstr("2 of 6 elements differ"));
}

TEST(CompareTest, TypeOrShapeMismatchNamesBothTypes) {
  TensorComparison types = CompareExact(*Tensor::Allocate(Type(ElementType::kF32, {2})),
                                        *Tensor::Allocate(Type(ElementType::kF64, {2})));
  EXPECT_FALSE(types.ok);
  EXPECT_THAT(types.message, HasSubstr("actual is tensor<2xf32>, expected is tensor<2xf64>"));
  TensorComparison shapes = CompareUlp(*Tensor::Allocate(Type(ElementType::kF32, {2, 3})),
                                       *Tensor::Allocate(Type(ElementType::kF32, {3, 2})), 4);
  EXPECT_FALSE(shapes.ok);
  EXPECT_THAT(shapes.message, HasSubstr("shape mismatch"));
  EXPECT_THAT(shapes.message, HasSubstr("tensor<2x3xf32>"));
  EXPECT_THAT(shapes.message, HasSubstr("tensor<3x2xf32>"));
  TensorComparison missing =
      CompareClose(Tensor(), *Tensor::Allocate(Type(ElementType::kF32, {})), 1, 1);
  EXPECT_FALSE(missing.ok);
  EXPECT_THAT(missing.message, HasSubstr("actual tensor<f32> has no data"));
}

TEST(CompareTest, UlpToleranceIsInclusive) {
  const float one = 1.0f;
  const float two_ulps_up = std::nextafter(std::nextafter(one, 2.0f), 2.0f);
  Tensor actual = Make<float>(ElementType::kF32, {1, 2}, {one, two_ulps_up});
  Tensor expected = Make<float>(ElementType::kF32, {1, 2}, {one, one});
  TensorComparison within = CompareUlp(actual, expected, 2);
  EXPECT_TRUE(within.ok) << within.message;
  EXPECT_EQ(within.max_distance, 2);
  TensorComparison beyond = CompareUlp(actual, expected, 1);
  EXPECT_FALSE(beyond.ok);
  EXPECT_EQ(beyond.first_bad_index, 1);
  EXPECT_THAT(beyond.message, HasSubstr("index [0, 1]"));
  EXPECT_THAT(beyond.message, HasSubstr("actual 1.0000002, expected 1"));
  EXPECT_THAT(beyond.message, HasSubstr("within 1 ULPs of f32 (distance 2 ULPs)"));
}

TEST(CompareTest, UlpRejectsNegativeMaxUlps) {
  for (ElementType type : {ElementType::kF32, ElementType::kI32}) {
    ASSERT_OK_AND_ASSIGN(Tensor zeros, Tensor::Allocate(Type(type, {2})));
    TensorComparison result = CompareUlp(zeros, zeros, -1);
    EXPECT_FALSE(result.ok);
    EXPECT_EQ(result.message, "max_ulps must be >= 0, got -1");
  }
}

TEST(CompareTest, UlpTreatsSignedZerosAndNaNsAsEqual) {
  Tensor actual = Make<uint16_t>(ElementType::kF16, {2}, {0x8000, 0x7e00});
  Tensor expected = Make<uint16_t>(ElementType::kF16, {2}, {0x0000, 0x7c01});
  EXPECT_TRUE(CompareUlp(actual, expected, 0).ok);
}

TEST(CompareTest, UlpRequiresEqualInfinities) {
  TensorComparison result = CompareUlp(Make<float>(ElementType::kF32, {1}, {INFINITY}),
                                       Make<float>(ElementType::kF32, {1}, {kFloatMax}), 10);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.max_distance, 1);
  EXPECT_THAT(result.message, HasSubstr("infinities must be equal"));
}

TEST(CompareTest, UlpRejectsNaNAgainstNumber) {
  TensorComparison result = CompareUlp(Make<float>(ElementType::kF32, {1}, {std::nanf("")}),
                                       Make<float>(ElementType::kF32, {1}, {1}), 1000);
  EXPECT_FALSE(result.ok);
  EXPECT_THAT(result.message, HasSubstr("actual nan, expected 1"));
  EXPECT_THAT(result.message, HasSubstr("NaN matches only NaN"));
}

TEST(CompareTest, UlpAndCloseCompareIntegersExactly) {
  Tensor actual = Make<int32_t>(ElementType::kI32, {2}, {1, 2});
  Tensor expected = Make<int32_t>(ElementType::kI32, {2}, {1, 3});
  TensorComparison ulp = CompareUlp(actual, expected, 100);
  EXPECT_FALSE(ulp.ok);
  EXPECT_EQ(ulp.first_bad_index, 1);
  EXPECT_FALSE(CompareClose(actual, expected, 10, 10).ok);
  EXPECT_TRUE(CompareClose(actual, actual, 0, 0).ok);
}

TEST(CompareTest, CloseToleranceBoundaryIsInclusive) {
  // atol + rtol * |expected| = 0.5 + 0.25 * 4 = 1.5, all exactly representable.
  Tensor expected = Make<double>(ElementType::kF64, {2}, {4, 4});
  Tensor on_boundary = Make<double>(ElementType::kF64, {2}, {5.5, 2.5});
  TensorComparison ok = CompareClose(on_boundary, expected, 0.5, 0.25);
  EXPECT_TRUE(ok.ok) << ok.message;
  EXPECT_EQ(ok.max_distance, 1.5);

  Tensor past = Make<double>(ElementType::kF64, {2}, {5.5, std::nextafter(2.5, 0.0)});
  TensorComparison bad = CompareClose(past, expected, 0.5, 0.25);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.first_bad_index, 1);
  EXPECT_THAT(bad.message, HasSubstr("element 1 at index [1]"));
  EXPECT_THAT(bad.message, HasSubstr("|actual - expected| <= atol + rtol * |expected|"));
  EXPECT_THAT(bad.message, HasSubstr("0.5 + 0.25 * 4 = 1.5"));
}

TEST(CompareTest, CloseRequiresEqualInfinitiesAndMatchesNaN) {
  Tensor inf = Make<float>(ElementType::kF32, {2}, {INFINITY, std::nanf("")});
  EXPECT_TRUE(CompareClose(inf, inf, 0, 0).ok);
  Tensor neg = Make<float>(ElementType::kF32, {2}, {-INFINITY, std::nanf("")});
  TensorComparison signs = CompareClose(inf, neg, 1e30, 1e30);
  EXPECT_FALSE(signs.ok);
  EXPECT_THAT(signs.message, HasSubstr("infinities must be equal"));
  Tensor finite = Make<float>(ElementType::kF32, {2}, {kFloatMax, 0});
  TensorComparison result = CompareClose(finite, inf, 1e30, 1e30);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_index, 0);
  EXPECT_TRUE(std::isinf(result.max_distance));
  EXPECT_THAT(result.message, HasSubstr("2 of 2 elements differ"));
}

}  // namespace
}  // namespace accy
