// Row-major index helpers shared by the JIT emitters (no LLVM): strides of a dense row-major
// tensor and a compact rendering of dims for error messages. Header-only, pure functions.
#ifndef ACCY_JIT_INDEX_MATH_H_
#define ACCY_JIT_INDEX_MATH_H_

#include <cstdint>
#include <string>
#include <vector>

namespace accy::jit {

// Strides in elements of a dense row-major tensor of `dims` (the last dim has stride 1).
inline std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// "[2,3,4]".
inline std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ",";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

}  // namespace accy::jit

#endif  // ACCY_JIT_INDEX_MATH_H_
