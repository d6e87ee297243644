// Helpers shared by the builder and verifier tests (tests/ir/builder*_test.cc, verifier_test.cc):
// type shorthands, a fixture that starts functions, and the error assertion used by every
// must-fail case (status code, message fragments, and a block left unchanged).
//
// Header-only; included from tests/ir only. Helpers for a single test file live in that file.
#ifndef ACCY_TESTS_IR_BUILDER_TEST_UTIL_H_
#define ACCY_TESTS_IR_BUILDER_TEST_UTIL_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "accy/status.h"
#include "accy/types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {

// Prints TensorType as its MLIR spelling in gtest failure messages (found by argument lookup).
inline void PrintTo(const TensorType& type, std::ostream* os) { *os << type.ToString(); }

}  // namespace accy

namespace accy::ir_test {

inline constexpr ElementType kF16 = ElementType::kF16;
inline constexpr ElementType kBF16 = ElementType::kBF16;
inline constexpr ElementType kF32 = ElementType::kF32;
inline constexpr ElementType kF64 = ElementType::kF64;
inline constexpr ElementType kI1 = ElementType::kI1;
inline constexpr ElementType kI8 = ElementType::kI8;
inline constexpr ElementType kI16 = ElementType::kI16;
inline constexpr ElementType kI32 = ElementType::kI32;
inline constexpr ElementType kI64 = ElementType::kI64;
inline constexpr ElementType kU8 = ElementType::kU8;
inline constexpr ElementType kU16 = ElementType::kU16;
inline constexpr ElementType kU32 = ElementType::kU32;
inline constexpr ElementType kU64 = ElementType::kU64;

// A valid tensor type (aborts on a bad one: test types are literals).
inline TensorType T(ElementType element_type, std::vector<int64_t> dims = {}) {
  StatusOr<TensorType> type = TensorType::Create(element_type, std::move(dims));
  ACCY_CHECK(type.ok());
  return *type;
}

inline Status StatusOf(const Status& status) { return status; }
template <typename V>
Status StatusOf(const StatusOr<V>& status_or) {
  return status_or.status();
}

// Matches a Status or StatusOr that failed with kInvalidArgument and whose message contains every
// string of `fragments` (each checked with testing::HasSubstr).
MATCHER_P(IsInvalidArgumentWith, fragments, "") {
  const Status status = StatusOf(arg);
  if (status.code() != absl::StatusCode::kInvalidArgument) {
    *result_listener << "status is " << status.ToString();
    return false;
  }
  const std::string message(status.message());
  for (const std::string& fragment : fragments) {
    if (!::testing::ExplainMatchResult(::testing::HasSubstr(fragment), message,
                                       result_listener)) {
      *result_listener << "message \"" << message << "\" lacks \"" << fragment << "\"";
      return false;
    }
  }
  return true;
}

// What a rejected op must leave alone: the block's op count and the exact use list of every block
// argument and op result in it (tests take operands from these).
struct BlockState {
  size_t num_operations = 0;
  std::vector<std::vector<std::pair<const Operation*, int64_t>>> use_lists;
  bool operator==(const BlockState& other) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const BlockState& state) {
  os << state.num_operations << " ops; use counts:";
  for (const auto& uses : state.use_lists) os << " " << uses.size();
  return os;
}

inline BlockState StateOf(const Block& block) {
  BlockState state;
  state.num_operations = block.operations().size();
  auto record = [&](const Value* value) {
    std::vector<std::pair<const Operation*, int64_t>> uses;
    for (const Use& use : value->uses()) uses.emplace_back(use.user, use.operand_index);
    state.use_lists.push_back(std::move(uses));
  };
  for (const Value* arg : block.arguments()) record(arg);
  for (const auto& op : block.operations()) {
    for (const Value* result : op->results()) record(result);
  }
  return state;
}

// Expects `expr` (a builder call on FunctionBuilder `fb`) to fail with kInvalidArgument and a
// message containing each fragment, and the block of `fb` to be unchanged afterwards.
#define EXPECT_REJECTED(fb, expr, ...)                                                      \
  do {                                                                                      \
    const ::accy::ir_test::BlockState accy_state_before_ = ::accy::ir_test::StateOf(*(fb).block()); \
    EXPECT_THAT((expr), ::accy::ir_test::IsInvalidArgumentWith(                             \
                            std::vector<std::string>{__VA_ARGS__}));                        \
    EXPECT_EQ(::accy::ir_test::StateOf(*(fb).block()), accy_state_before_)                  \
        << "a rejected op changed the block";                                               \
  } while (false)

// Starts functions in one module. Each test begins the functions it needs.
class BuilderTest : public ::testing::Test {
 protected:
  // Function `name` with parameters of `parameters` and declared results `results`.
  FunctionBuilder Begin(std::vector<TensorType> parameters, std::vector<TensorType> results = {},
                        std::string name = "f") {
    StatusOr<FunctionBuilder> fb =
        builder_.BeginFunction(std::move(name), std::move(parameters), std::move(results));
    ACCY_CHECK(fb.ok());
    return *std::move(fb);
  }

  Builder builder_{"test_module"};
};

}  // namespace accy::ir_test

#endif  // ACCY_TESTS_IR_BUILDER_TEST_UTIL_H_
