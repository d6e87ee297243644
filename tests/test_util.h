// Generic GoogleTest helpers shared by every accy test binary: status assertions.
//
// Header-only; include it from test sources only. Keep it generic (no op- or stage-specific
// helpers): those belong next to the tests that use them.
#ifndef ACCY_TESTS_TEST_UTIL_H_
#define ACCY_TESTS_TEST_UTIL_H_

#include <utility>

#include "accy/status.h"
#include "gtest/gtest.h"

#define ACCY_TEST_CONCAT_INNER_(a, b) a##b
#define ACCY_TEST_CONCAT_(a, b) ACCY_TEST_CONCAT_INNER_(a, b)

// Asserts / expects that a Status (or StatusOr) is OK, printing the status otherwise.
#define ASSERT_OK(expr)                                        \
  do {                                                         \
    const auto& accy_test_status_ = (expr);                    \
    ASSERT_TRUE(accy_test_status_.ok()) << accy_test_status_;  \
  } while (false)
#define EXPECT_OK(expr)                                        \
  do {                                                         \
    const auto& accy_test_status_ = (expr);                    \
    EXPECT_TRUE(accy_test_status_.ok()) << accy_test_status_;  \
  } while (false)

// `lhs = value of expr` (a StatusOr), failing the test with the status when it is not OK.
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(ACCY_TEST_CONCAT_(accy_test_statusor_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr)    \
  auto tmp = (expr);                                  \
  ASSERT_TRUE(tmp.ok()) << tmp.status();              \
  lhs = std::move(tmp).value()

#endif  // ACCY_TESTS_TEST_UTIL_H_
