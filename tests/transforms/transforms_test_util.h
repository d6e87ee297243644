// Shared pieces of the graph-pass tests (tests/transforms): parsing a StableHLO text into a
// module. Header-only, test code.
#ifndef ACCY_TESTS_TRANSFORMS_TRANSFORMS_TEST_UTIL_H_
#define ACCY_TESTS_TRANSFORMS_TRANSFORMS_TEST_UTIL_H_

#include <memory>
#include <string_view>

#include "accy/stablehlo.h"
#include "gtest/gtest.h"

namespace accy {

// The module of StableHLO `text`; null, with a test failure naming the parse error, when it
// does not parse.
inline std::unique_ptr<Module> Parse(std::string_view text) {
  StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

}  // namespace accy

#endif  // ACCY_TESTS_TRANSFORMS_TRANSFORMS_TEST_UTIL_H_
