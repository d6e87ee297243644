// kernels::CopyRows (onednn_common.h): the row copy that fills padded weight copies. Both the
// one-thread path (below 256 KiB) and the threaded one copy every row exactly and leave the
// padding between rows untouched.
#include <omp.h>

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/onednn_common.h"

namespace accy::kernels_test {
namespace {

void ExpectRowsCopied(int64_t rows, int64_t row_bytes, int64_t from_stride, int64_t to_stride) {
  std::vector<uint8_t> from(static_cast<size_t>(rows * from_stride));
  for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<uint8_t>(i * 7 + 3);
  std::vector<uint8_t> to(static_cast<size_t>(rows * to_stride), 0xAB);
  kernels::CopyRows(from.data(), from_stride, to.data(), to_stride, rows, row_bytes);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < to_stride; ++b) {
      const uint8_t expected =
          b < row_bytes ? from[static_cast<size_t>(r * from_stride + b)] : uint8_t{0xAB};
      ASSERT_EQ(to[static_cast<size_t>(r * to_stride + b)], expected)
          << "row " << r << " byte " << b;
    }
  }
}

TEST(CopyRowsTest, SmallCopyOnOneThread) { ExpectRowsCopied(7, 20, 20, 84); }

TEST(CopyRowsTest, LargeCopyOnEveryThreadAndBack) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  ExpectRowsCopied(784, 2048, 2048, 2112);  // 784x512 f32 weights to a 16-float padded stride
  ExpectRowsCopied(300, 2048, 2112, 2048);  // and from one (a staged output)
  omp_set_num_threads(saved);
}

}  // namespace
}  // namespace accy::kernels_test
