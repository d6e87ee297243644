// Tests for element types, static tensor types and checked size arithmetic (accy/types.h).
#include "accy/types.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr uint64_t kUint64Max = std::numeric_limits<uint64_t>::max();

TEST(ElementTypeTest, NamesUseAccyAndMlirSpellings) {
  const std::vector<std::string> accy_names = {"f16", "bf16", "f32", "f64", "i1",  "i8", "i16",
                                               "i32", "i64",  "u8",  "u16", "u32", "u64"};
  const std::vector<std::string> mlir_names = {"f16", "bf16", "f32", "f64",  "i1",   "i8",  "i16",
                                               "i32", "i64",  "ui8", "ui16", "ui32", "ui64"};
  ASSERT_EQ(std::size(kAllElementTypes), accy_names.size());
  for (size_t i = 0; i < accy_names.size(); ++i) {
    EXPECT_EQ(ElementTypeName(kAllElementTypes[i]), accy_names[i]);
    EXPECT_EQ(MlirElementTypeName(kAllElementTypes[i]), mlir_names[i]);
  }
}

TEST(ElementTypeTest, ParseAcceptsBothSpellings) {
  for (ElementType type : kAllElementTypes) {
    StatusOr<ElementType> from_accy = ParseElementType(ElementTypeName(type));
    ASSERT_TRUE(from_accy.ok()) << from_accy.status();
    EXPECT_EQ(*from_accy, type);
    StatusOr<ElementType> from_mlir = ParseElementType(MlirElementTypeName(type));
    ASSERT_TRUE(from_mlir.ok()) << from_mlir.status();
    EXPECT_EQ(*from_mlir, type);
  }
}

TEST(ElementTypeTest, ParseRejectsComplexByName) {
  StatusOr<ElementType> parsed = ParseElementType("complex<f32>");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.status().message(),
              HasSubstr("complex element type 'complex<f32>' is not supported by accy"));
}

TEST(ElementTypeTest, ParseRejectsQuantizedByName) {
  for (const char* name : {"!quant.uniform<i8:f32, 1.0>", "quant<i8>"}) {
    StatusOr<ElementType> parsed = ParseElementType(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr("quantized element type"));
    EXPECT_THAT(parsed.status().message(), HasSubstr(name));
    EXPECT_THAT(parsed.status().message(), HasSubstr("is not supported"));
  }
}

TEST(ElementTypeTest, ParseRejectsF8ByName) {
  for (const char* name : {"f8E4M3FN", "f8E5M2", "f8E4M3FNUZ"}) {
    StatusOr<ElementType> parsed = ParseElementType(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(),
                HasSubstr("f8 element type '" + std::string(name) + "' is not supported"));
  }
}

TEST(ElementTypeTest, ParseRejectsSubByteIntegersAndNarrowFloatsByName) {
  for (const char* name : {"i2", "i4", "ui2", "ui4"}) {
    StatusOr<ElementType> parsed = ParseElementType(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr("sub-byte integer element type '" +
                                                     std::string(name) + "' is not supported"));
  }
  for (const char* name : {"f4E2M1FN", "f6E2M3FN", "tf32"}) {
    StatusOr<ElementType> parsed = ParseElementType(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_THAT(parsed.status().message(), HasSubstr("narrow float element type '" +
                                                     std::string(name) + "' is not supported"));
  }
}

TEST(ElementTypeTest, ParseRejectsUnknownName) {
  for (const char* name : {"xyz", "", "F32", "ui1", "i128", "f32 "}) {
    StatusOr<ElementType> parsed = ParseElementType(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(),
                HasSubstr("unknown element type '" + std::string(name) + "'"));
  }
}

TEST(ElementTypeTest, WidthsMatchHostLayout) {
  const std::vector<int64_t> bytes = {2, 2, 4, 8, 1, 1, 2, 4, 8, 1, 2, 4, 8};
  const std::vector<int> bits = {16, 16, 32, 64, 1, 8, 16, 32, 64, 8, 16, 32, 64};
  for (size_t i = 0; i < std::size(kAllElementTypes); ++i) {
    EXPECT_EQ(ElementByteWidth(kAllElementTypes[i]), bytes[i]) << i;
    EXPECT_EQ(ElementBitWidth(kAllElementTypes[i]), bits[i]) << i;
  }
}

TEST(ElementTypeTest, EachTypeBelongsToExactlyOneKind) {
  for (ElementType type : kAllElementTypes) {
    const int kinds = IsFloat(type) + IsSigned(type) + IsUnsigned(type) + IsBool(type);
    EXPECT_EQ(kinds, 1) << ElementTypeName(type);
    EXPECT_EQ(IsInteger(type), IsSigned(type) || IsUnsigned(type)) << ElementTypeName(type);
  }
  EXPECT_TRUE(IsFloat(ElementType::kBF16));
  EXPECT_TRUE(IsSigned(ElementType::kI8));
  EXPECT_TRUE(IsUnsigned(ElementType::kU64));
  EXPECT_TRUE(IsBool(ElementType::kI1));
  EXPECT_FALSE(IsInteger(ElementType::kI1));
  EXPECT_FALSE(IsSigned(ElementType::kI1));
}

TEST(TensorTypeTest, DefaultIsF32Scalar) {
  TensorType type;
  EXPECT_EQ(type.element_type(), ElementType::kF32);
  EXPECT_EQ(type.rank(), 0);
  EXPECT_EQ(type.element_count(), 1);
  EXPECT_EQ(type.ToString(), "tensor<f32>");
}

TEST(TensorTypeTest, CreateComputesElementCountAndBytes) {
  StatusOr<TensorType> type = TensorType::Create(ElementType::kF32, {2, 3, 4});
  ASSERT_TRUE(type.ok()) << type.status();
  EXPECT_EQ(type->rank(), 3);
  EXPECT_EQ(type->dim(1), 3);
  EXPECT_EQ(type->element_count(), 24);
  StatusOr<uint64_t> bytes = type->ByteSize();
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, 96u);
}

TEST(TensorTypeTest, ZeroDimGivesZeroElementsEvenWithHugeDims) {
  StatusOr<TensorType> type =
      TensorType::Create(ElementType::kF64, {int64_t{1} << 40, 0, int64_t{1} << 40});
  ASSERT_TRUE(type.ok()) << type.status();
  EXPECT_EQ(type->element_count(), 0);
  EXPECT_EQ(*type->ByteSize(), 0u);
}

TEST(TensorTypeTest, CreateRejectsAnUnknownElementType) {
  StatusOr<TensorType> type = TensorType::Create(static_cast<ElementType>(77), {2});
  ASSERT_FALSE(type.ok());
  EXPECT_EQ(type.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(type.status().message(), HasSubstr("unknown element type 77"));
}

TEST(TensorTypeTest, CreateRejectsNegativeDimNamingIndexAndValue) {
  StatusOr<TensorType> type = TensorType::Create(ElementType::kF32, {2, -3, 4});
  ASSERT_FALSE(type.ok());
  EXPECT_EQ(type.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(type.status().message(), HasSubstr("dim 1"));
  EXPECT_THAT(type.status().message(), HasSubstr("-3"));
}

TEST(TensorTypeTest, CreateRejectsRankAboveMax) {
  std::vector<int64_t> dims(TensorType::kMaxRank, 1);
  EXPECT_TRUE(TensorType::Create(ElementType::kI8, dims).ok());
  dims.push_back(1);
  StatusOr<TensorType> type = TensorType::Create(ElementType::kI8, dims);
  ASSERT_FALSE(type.ok());
  EXPECT_EQ(type.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(type.status().message(), HasSubstr("rank 17 exceeds the maximum rank 16"));
}

TEST(TensorTypeTest, CreateRejectsElementCountOverflowAsOutOfRange) {
  const int64_t two_32 = int64_t{1} << 32;
  StatusOr<TensorType> type = TensorType::Create(ElementType::kI8, {two_32, two_32});
  ASSERT_FALSE(type.ok());
  EXPECT_EQ(type.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(type.status().message(), HasSubstr("tensor<4294967296x4294967296xi8>"));
  EXPECT_THAT(type.status().message(), HasSubstr("overflows"));

  StatusOr<TensorType> largest = TensorType::Create(ElementType::kI8, {kInt64Max, 1});
  ASSERT_TRUE(largest.ok());
  EXPECT_EQ(largest->element_count(), kInt64Max);
}

TEST(TensorTypeTest, ByteSizeOverflowIsOutOfRangeButTypeStaysValid) {
  StatusOr<TensorType> type = TensorType::Create(ElementType::kF64, {int64_t{1} << 62});
  ASSERT_TRUE(type.ok());
  StatusOr<uint64_t> bytes = type->ByteSize();
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(bytes.status().message(), HasSubstr("tensor<4611686018427387904xf64>"));

  // 2^61 f32 elements are 2^63 bytes: above INT64_MAX but still a valid u64.
  StatusOr<TensorType> f32 = TensorType::Create(ElementType::kF32, {int64_t{1} << 61});
  ASSERT_TRUE(f32.ok());
  EXPECT_EQ(*f32->ByteSize(), uint64_t{1} << 63);
}

TEST(TensorTypeTest, ToStringUsesMlirSpelling) {
  EXPECT_EQ(TensorType::Create(ElementType::kF32, {2, 3})->ToString(), "tensor<2x3xf32>");
  EXPECT_EQ(TensorType::Create(ElementType::kF32, {})->ToString(), "tensor<f32>");
  EXPECT_EQ(TensorType::Create(ElementType::kU8, {0, 4})->ToString(), "tensor<0x4xui8>");
  EXPECT_EQ(TensorType::Create(ElementType::kBF16, {1})->ToString(), "tensor<1xbf16>");
  EXPECT_EQ(TensorType::Create(ElementType::kI1, {})->ToString(), "tensor<i1>");
}

TEST(TensorTypeTest, WithElementTypeKeepsDimsAndEqualityComparesBoth) {
  TensorType f32 = *TensorType::Create(ElementType::kF32, {2, 3});
  TensorType i64 = f32.WithElementType(ElementType::kI64);
  EXPECT_EQ(i64.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(i64.element_count(), 6);
  EXPECT_EQ(i64.ToString(), "tensor<2x3xi64>");
  EXPECT_NE(f32, i64);
  EXPECT_EQ(f32, *TensorType::Create(ElementType::kF32, {2, 3}));
  EXPECT_NE(f32, *TensorType::Create(ElementType::kF32, {3, 2}));
}

TEST(CheckedArithmeticTest, SignedOverflowFailsAndLeavesOutputUnchanged) {
  int64_t out = 7;
  EXPECT_FALSE(CheckedMul(kInt64Max, 2, &out));
  EXPECT_FALSE(CheckedMul(kInt64Min, -1, &out));
  EXPECT_FALSE(CheckedAdd(kInt64Max, 1, &out));
  EXPECT_FALSE(CheckedAdd(kInt64Min, -1, &out));
  EXPECT_EQ(out, 7);
  EXPECT_TRUE(CheckedMul(-3, 5, &out));
  EXPECT_EQ(out, -15);
  EXPECT_TRUE(CheckedAdd(kInt64Max, kInt64Min, &out));
  EXPECT_EQ(out, -1);
}

TEST(CheckedArithmeticTest, UnsignedOverflowFailsAndLeavesOutputUnchanged) {
  uint64_t out = 7;
  EXPECT_FALSE(CheckedMulU64(uint64_t{1} << 32, uint64_t{1} << 32, &out));
  EXPECT_FALSE(CheckedAddU64(kUint64Max, 1, &out));
  EXPECT_EQ(out, 7u);
  EXPECT_TRUE(CheckedMulU64(uint64_t{1} << 32, (uint64_t{1} << 32) - 1, &out));
  EXPECT_EQ(out, kUint64Max - (uint64_t{1} << 32) + 1);
  EXPECT_TRUE(CheckedAddU64(kUint64Max - 1, 1, &out));
  EXPECT_EQ(out, kUint64Max);
}

// Two ACCY_ASSIGN_OR_RETURN in one macro expand on one line (the line of the macro's use): their
// temporaries must not share a name.
#define ACCY_TEST_ADD_TWO(a, b, out)  \
  ACCY_ASSIGN_OR_RETURN(int64_t x, a); \
  ACCY_ASSIGN_OR_RETURN(int64_t y, b); \
  out = x + y
StatusOr<int64_t> AddTwo(StatusOr<int64_t> a, StatusOr<int64_t> b) {
  int64_t sum = 0;
  ACCY_TEST_ADD_TWO(a, b, sum);
  return sum;
}
#undef ACCY_TEST_ADD_TWO

TEST(StatusMacroTest, AssignOrReturnCanBeUsedTwiceOnOneLine) {
  EXPECT_EQ(*AddTwo(2, 3), 5);
  EXPECT_EQ(AddTwo(2, absl::OutOfRangeError("b")).status().code(), absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace accy
