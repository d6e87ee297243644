// ReadStableHloText: a StableHLO file's text, read with bounded memory. `accy run /dev/zero` or a
// multi-gigabyte file passed by mistake must fail quickly with a message, not read until the
// allocation fails. Header-only; stateless.
#ifndef ACCY_SRC_UTIL_TEXT_FILE_H_
#define ACCY_SRC_UTIL_TEXT_FILE_H_

#include <algorithm>
#include <cstdint>
#include <istream>
#include <limits>
#include <string>

#include "accy/status.h"
#include "src/util/str_cat.h"

namespace accy {

// The most text ReadStableHloText accepts for a parse whose constants may take
// `max_total_constant_bytes` (ParseOptions): 4 characters per constant byte (a decimal f32
// literal takes about 16 characters for its 4 bytes, hex 2 per byte) plus 64 MiB for the ops.
inline int64_t MaxStableHloTextBytes(int64_t max_total_constant_bytes) {
  constexpr int64_t kOpsBytes = int64_t{64} << 20;
  const int64_t limit = std::numeric_limits<int64_t>::max();
  if (max_total_constant_bytes > (limit - kOpsBytes) / 4) return limit;
  return 4 * std::max<int64_t>(max_total_constant_bytes, 0) + kOpsBytes;
}

// Reads `in` to its end in 1 MiB chunks, stopping after its first NUL byte: StableHLO text never
// holds one, and the parser then reports it at its line and column, so binary input (a .npy
// given as the program, /dev/zero) fails after its first chunk. kInvalidArgument "longer than
// MAX bytes (...)" when more than `max_bytes` arrive; kDataLoss when the stream reports a read
// error.
inline StatusOr<std::string> ReadStableHloText(std::istream& in, int64_t max_bytes) {
  constexpr size_t kChunk = size_t{1} << 20;
  std::string text;
  while (in) {
    const size_t have = text.size();
    text.resize(have + kChunk);
    in.read(text.data() + have, static_cast<std::streamsize>(kChunk));
    text.resize(have + static_cast<size_t>(in.gcount()));
    if (in.bad()) return absl::DataLossError("read error");
    if (const size_t nul = text.find('\0', have); nul != std::string::npos) {
      text.resize(nul + 1);
      return text;
    }
    if (static_cast<uint64_t>(text.size()) > static_cast<uint64_t>(max_bytes)) {
      return absl::InvalidArgumentError(
          StrCat("longer than ", max_bytes,
                 " bytes, the most text a parse under the constant limit (ParseOptions::"
                 "max_total_constant_bytes, --max-total-constant-bytes) can need"));
    }
  }
  return text;
}

}  // namespace accy

#endif  // ACCY_SRC_UTIL_TEXT_FILE_H_
