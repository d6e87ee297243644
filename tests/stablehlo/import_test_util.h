// Helpers shared by the op import tests (tests/stablehlo/*_import_test.cc): find an op in a
// parsed module, and check that printing and parsing again gives the same text.
#ifndef ACCY_TESTS_STABLEHLO_IMPORT_TEST_UTIL_H_
#define ACCY_TESTS_STABLEHLO_IMPORT_TEST_UTIL_H_

#include <memory>
#include <string>

#include "accy/ir.h"
#include "accy/stablehlo.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy::import_test {

// The first op of `kind` in the entry block of the module's first function (checked to exist).
inline const Operation& FirstOf(const Module& module, OpKind kind) {
  for (const auto& op : module.functions().front()->entry_block()->operations()) {
    if (op->kind() == kind) return *op;
  }
  ACCY_CHECK(false && "op not found");
  return *module.functions().front()->entry_block()->operations().front();
}

// print -> parse -> print is the identity on the printed text.
inline void ExpectRoundTrip(const Module& module) {
  const std::string text = PrintModule(module);
  StatusOr<std::unique_ptr<Module>> parsed = ParseStableHlo(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  EXPECT_EQ(PrintModule(**parsed), text);
}

}  // namespace accy::import_test

#endif  // ACCY_TESTS_STABLEHLO_IMPORT_TEST_UTIL_H_
