// The .npy reader and writer (tools/npy.h): numpy's exact header bytes, round trips of every
// element type, bf16 handling, and one must-fail test per malformed input.
#include "tools/npy.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy::tools {
namespace {

using ::testing::HasSubstr;

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// A .npy file as numpy.save writes it: version 1.0, header padded to 64 bytes.
std::string NumpyFile(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  if (major == 2) out.append(2, '\0');
  return out + header + data;
}

std::string FloatBytes(std::vector<float> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

TEST(NpyTest, SerializeWritesNumpysHeaderBytes) {
  ASSERT_OK_AND_ASSIGN(TensorType type, TensorType::Create(ElementType::kF32, {3}));
  ASSERT_OK_AND_ASSIGN(Tensor tensor, Tensor::FromVector<float>(type, {1, 2, 3}));
  // np.save(f, np.array([1, 2, 3], dtype=np.float32)) on NumPy 1.x and 2.x.
  const std::string expected =
      NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", FloatBytes({1, 2, 3}));
  EXPECT_EQ(SerializeNpy(tensor), expected);
  EXPECT_EQ(expected.size(), 128u + 12u);
}

TEST(NpyTest, EveryElementTypeRoundTrips) {
  for (ElementType element_type : kAllElementTypes) {
    SCOPED_TRACE(ElementTypeName(element_type));
    ASSERT_OK_AND_ASSIGN(TensorType type, TensorType::Create(element_type, {2, 3}));
    ASSERT_OK_AND_ASSIGN(Tensor tensor, Tensor::Allocate(type));
    for (int64_t i = 0; i < tensor.element_count(); ++i) tensor.SetFromDouble(i, i % 2 ? i : -i);
    ASSERT_OK_AND_ASSIGN(Tensor back, ParseNpy(Bytes(SerializeNpy(tensor))));
    // bf16 comes back as f32 holding the same values.
    const ElementType read_type =
        element_type == ElementType::kBF16 ? ElementType::kF32 : element_type;
    EXPECT_EQ(back.type(), type.WithElementType(read_type));
    for (int64_t i = 0; i < tensor.element_count(); ++i) {
      EXPECT_EQ(back.GetAsDouble(i), tensor.GetAsDouble(i)) << i;
    }
  }
}

TEST(NpyTest, ScalarsAndVersion2HeadersRead) {
  ASSERT_OK_AND_ASSIGN(
      Tensor scalar,
      ParseNpy(Bytes(NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
                               FloatBytes({2.5f}), /*major=*/2))));
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.GetAsDouble(0), 2.5);
  // Keys in another order, double quotes, no trailing comma.
  ASSERT_OK_AND_ASSIGN(
      Tensor matrix,
      ParseNpy(Bytes(NumpyFile("{\"shape\": (1, 2), \"fortran_order\": False, \"descr\": '<f4'}",
                               FloatBytes({1, 2})))));
  EXPECT_EQ(matrix.type().ToString(), "tensor<1x2xf32>");
}

TEST(NpyTest, ZeroSizeArraysRoundTrip) {
  ASSERT_OK_AND_ASSIGN(TensorType type, TensorType::Create(ElementType::kI64, {0, 4}));
  ASSERT_OK_AND_ASSIGN(Tensor tensor, Tensor::Allocate(type));
  ASSERT_OK_AND_ASSIGN(Tensor back, ParseNpy(Bytes(SerializeNpy(tensor))));
  EXPECT_EQ(back.type(), type);
}

// bf16 is written as f32 by widening its bits: signalling NaNs and NaN payloads keep their
// bits (through double they came back quiet: 0x7F81 as 0x7FC10000).
TEST(NpyTest, Bf16IsWrittenAsF32WithItsBitsUnchanged) {
  ASSERT_OK_AND_ASSIGN(TensorType u16, TensorType::Create(ElementType::kU16, {5}));
  ASSERT_OK_AND_ASSIGN(TensorType bf16, TensorType::Create(ElementType::kBF16, {5}));
  ASSERT_OK_AND_ASSIGN(Tensor bits,
                       Tensor::FromVector<uint16_t>(u16, {0x7F81, 0xFF81, 0x7FC0, 0x3F80, 0x8001}));
  ASSERT_OK_AND_ASSIGN(Tensor tensor, ConvertNpyInput(bits, bf16));
  ASSERT_OK_AND_ASSIGN(Tensor back, ParseNpy(Bytes(SerializeNpy(tensor))));
  ASSERT_EQ(back.element_type(), ElementType::kF32);
  const uint32_t expected[] = {0x7F810000u, 0xFF810000u, 0x7FC00000u, 0x3F800000u, 0x80010000u};
  for (int64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(static_cast<const uint32_t*>(back.data())[i], expected[i]) << i;
  }
}

TEST(NpyTest, Bf16ParametersReadF32RoundedOrU16Bits) {
  ASSERT_OK_AND_ASSIGN(TensorType bf16, TensorType::Create(ElementType::kBF16, {2}));
  ASSERT_OK_AND_ASSIGN(TensorType f32, TensorType::Create(ElementType::kF32, {2}));
  // 1 + 2^-8 is halfway between bf16 1 and 1 + 2^-7: rounds to even (1).
  ASSERT_OK_AND_ASSIGN(Tensor floats, Tensor::FromVector<float>(f32, {1.00390625f, -2.0f}));
  ASSERT_OK_AND_ASSIGN(Tensor from_floats, ConvertNpyInput(floats, bf16));
  EXPECT_EQ(from_floats.GetAsDouble(0), 1.0);
  EXPECT_EQ(from_floats.GetAsDouble(1), -2.0);
  ASSERT_OK_AND_ASSIGN(TensorType u16, TensorType::Create(ElementType::kU16, {2}));
  ASSERT_OK_AND_ASSIGN(Tensor bits, Tensor::FromVector<uint16_t>(u16, {0x3F80, 0xC000}));
  ASSERT_OK_AND_ASSIGN(Tensor from_bits, ConvertNpyInput(bits, bf16));
  EXPECT_EQ(from_bits.GetAsDouble(0), 1.0);
  EXPECT_EQ(from_bits.GetAsDouble(1), -2.0);
}

TEST(NpyTest, InputOfAnotherTypeIsRejectedNamingBoth) {
  ASSERT_OK_AND_ASSIGN(TensorType f64, TensorType::Create(ElementType::kF64, {2}));
  ASSERT_OK_AND_ASSIGN(TensorType f32, TensorType::Create(ElementType::kF32, {2}));
  ASSERT_OK_AND_ASSIGN(Tensor doubles, Tensor::Allocate(f64));
  const Status status = ConvertNpyInput(doubles, f32).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("dtype <f8 and shape (2,)"));
  EXPECT_THAT(status.message(), HasSubstr("parameter type tensor<2xf32>"));
}

// Must-fail inputs: each names what is wrong.
struct BadNpy {
  const char* name;
  std::string bytes;
  const char* message;
};

TEST(NpyErrorTest, MalformedFilesAreRejectedWithTheReason) {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  std::string version3 = NumpyFile(ok_dict, FloatBytes({1, 2}));
  version3[6] = 3;
  const std::vector<BadNpy> cases = {
      {"empty", "", "no \\x93NUMPY magic"},
      {"text", "hello world, not numpy", "no \\x93NUMPY magic"},
      {"version 3", version3, "format version 3.0 is not supported"},
      {"truncated header", NumpyFile(ok_dict, "").substr(0, 40), "longer than the file"},
      {"short data", NumpyFile(ok_dict, FloatBytes({1})), "needs 8 data bytes, the file has 4"},
      {"long data", NumpyFile(ok_dict, FloatBytes({1, 2, 3})), "needs 8 data bytes"},
      {"fortran",
       NumpyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", FloatBytes({1, 2})),
       "Fortran-order arrays are not supported"},
      {"big endian",
       NumpyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", FloatBytes({1, 2})),
       "big-endian dtype '>f4'"},
      {"complex",
       NumpyFile("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", FloatBytes({1, 2})),
       "dtype '<c8' is not supported"},
      {"unknown key",
       NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
                 FloatBytes({1, 2})),
       "unknown key 'x'"},
      {"missing key", NumpyFile("{'descr': '<f4', 'shape': (2,), }", FloatBytes({1, 2})),
       "needs the keys"},
      {"duplicate key",
       NumpyFile("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                 "'shape': (2,)}",
                 FloatBytes({1, 2})),
       "key 'descr' appears twice"},
      {"negative dim",
       NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", FloatBytes({1, 2})),
       "expected a non-negative dimension"},
      {"huge dim",
       NumpyFile("{'descr': '<f4', 'fortran_order': False, "
                 "'shape': (99999999999999999999,), }",
                 ""),
       "overflows 64 bits"},
      {"huge shape",
       NumpyFile("{'descr': '<f8', 'fortran_order': False, "
                 "'shape': (4294967296, 4294967296), }",
                 ""),
       "shape (4294967296, 4294967296)"},
      {"bool byte 2",
       NumpyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                 std::string("\x01\x02", 2)),
       "byte 1 of tensor<2xi1> is 2"},
  };
  for (const BadNpy& bad : cases) {
    SCOPED_TRACE(bad.name);
    const Status status = ParseNpy(Bytes(bad.bytes)).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(bad.message));
  }
}

// ReadNpy gives ParseNpy's errors for the same bytes ("long data" in its own words).
TEST(NpyErrorTest, StreamsAreRejectedWithParseNpysReason) {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::vector<BadNpy> cases = {
      {"empty", "", "no \\x93NUMPY magic"},
      {"text", "hello world, not numpy", "no \\x93NUMPY magic"},
      {"truncated preamble", std::string("\x93NUMPY\x01\x00\x76", 9),
       "truncated before the header length"},
      {"truncated header", NumpyFile(ok_dict, "").substr(0, 40), "longer than the file"},
      {"short data", NumpyFile(ok_dict, FloatBytes({1})), "needs 8 data bytes, the file has 4"},
      {"long data", NumpyFile(ok_dict, FloatBytes({1, 2, 3})),
       "needs 8 data bytes, the file has more"},
      {"fortran",
       NumpyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", FloatBytes({1, 2})),
       "Fortran-order arrays are not supported"},
  };
  for (const BadNpy& bad : cases) {
    SCOPED_TRACE(bad.name);
    std::istringstream in(bad.bytes);
    const Status status = ReadNpy(in).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(bad.message));
  }
  std::istringstream good(NumpyFile(ok_dict, FloatBytes({1, 2})));
  ASSERT_OK_AND_ASSIGN(Tensor tensor, ReadNpy(good));
  EXPECT_EQ(tensor.type().ToString(), "tensor<2xf32>");
  EXPECT_EQ(static_cast<const float*>(tensor.data())[1], 2.0f);
}

// `prefix`, then `fill` bytes without end (as /dev/zero), counting what the reader took.
class EndlessBuffer : public std::streambuf {
 public:
  EndlessBuffer(std::string prefix, char fill) : prefix_(std::move(prefix)), fill_(fill) {}
  int64_t served() const { return served_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const size_t from_prefix =
        std::min(prefix_.size() - std::min(prefix_.size(), next_), sizeof(chunk_));
    std::memcpy(chunk_, prefix_.data() + std::min(prefix_.size(), next_), from_prefix);
    std::memset(chunk_ + from_prefix, fill_, sizeof(chunk_) - from_prefix);
    next_ += sizeof(chunk_);
    served_ += static_cast<int64_t>(sizeof(chunk_));
    setg(chunk_, chunk_, chunk_ + sizeof(chunk_));
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::string prefix_;
  char fill_;
  size_t next_ = 0;
  int64_t served_ = 0;
  char chunk_[16];
};

// An endless stream (/dev/zero, a pipe) is not read whole: the reader stops at the missing magic
// string, or one byte after the data the header declares.
TEST(NpyErrorTest, EndlessStreamsFailAfterTheirFirstBytes) {
  EndlessBuffer zeros("", '\0');
  std::istream zero_stream(&zeros);
  EXPECT_THAT(std::string(ReadNpy(zero_stream).status().message()),
              HasSubstr("no \\x93NUMPY magic"));
  EXPECT_LE(zeros.served(), 32);

  const std::string header =
      NumpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", "");
  EndlessBuffer after_data(header, '\x01');
  std::istream data_stream(&after_data);
  EXPECT_THAT(std::string(ReadNpy(data_stream).status().message()),
              HasSubstr("needs 8 data bytes, the file has more"));
  EXPECT_LE(after_data.served(), static_cast<int64_t>(header.size()) + 32);
}

TEST(NpyErrorTest, MissingFileIsNotFoundNamingThePath) {
  const Status status = ReadNpyFile("/nonexistent/x.npy").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("/nonexistent/x.npy"));
}

}  // namespace
}  // namespace accy::tools
