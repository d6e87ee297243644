// ReadStableHloText (src/util/text_file.h): StableHLO text is read with bounded memory, stopping
// at a NUL byte or past the size limit.
#include "src/util/text_file.h"

#include <cstdint>
#include <limits>
#include <sstream>
#include <streambuf>
#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

// `text` repeated without end, counting the bytes the reader took.
class RepeatingBuffer : public std::streambuf {
 public:
  explicit RepeatingBuffer(std::string text) : text_(std::move(text)) {}
  int64_t served() const { return served_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    for (size_t i = 0; i < sizeof(chunk_); ++i) chunk_[i] = text_[(next_ + i) % text_.size()];
    next_ += sizeof(chunk_);
    served_ += static_cast<int64_t>(sizeof(chunk_));
    setg(chunk_, chunk_, chunk_ + sizeof(chunk_));
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::string text_;
  size_t next_ = 0;
  int64_t served_ = 0;
  char chunk_[4096];
};

TEST(TextFileTest, ReadsWholeTextUpToTheLimit) {
  std::istringstream in("func.func @main() {\n  return\n}\n");
  ASSERT_OK_AND_ASSIGN(std::string text, ReadStableHloText(in, 1 << 20));
  EXPECT_EQ(text, "func.func @main() {\n  return\n}\n");
}

// An endless text stream (`yes`, a FIFO) stops one chunk past the limit, naming it.
TEST(TextFileTest, EndlessTextFailsPastTheLimit) {
  RepeatingBuffer lines("y\n");
  std::istream in(&lines);
  const Status status = ReadStableHloText(in, 3 << 20).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("longer than 3145728 bytes"));
  EXPECT_LE(lines.served(), (4 << 20) + 4096);
}

// Binary input stops after its first NUL byte, which the text keeps for the parser to locate.
TEST(TextFileTest, BinaryInputStopsAtItsFirstNul) {
  RepeatingBuffer zeros(std::string("ab\0", 3));
  std::istream in(&zeros);
  ASSERT_OK_AND_ASSIGN(std::string text, ReadStableHloText(in, int64_t{1} << 40));
  EXPECT_EQ(text, std::string("ab\0", 3));
  EXPECT_LE(zeros.served(), (1 << 20) + 4096);
}

TEST(TextFileTest, LimitIsFourBytesPerConstantByteAndRoomForTheOps) {
  EXPECT_EQ(MaxStableHloTextBytes(0), int64_t{64} << 20);
  EXPECT_EQ(MaxStableHloTextBytes(int64_t{1} << 30), (int64_t{4} << 30) + (int64_t{64} << 20));
  EXPECT_EQ(MaxStableHloTextBytes(std::numeric_limits<int64_t>::max()),
            std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace accy
