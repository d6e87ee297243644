// Import, verification and printing of the collectives (StableHLO spec "all_reduce" ..
// "collective_broadcast", collective_reduce) and of the module's grid attributes: every type
// rule's error names the op and the rule; printing then parsing gives the same text.
#include <memory>
#include <string>
#include <vector>

#include "accy/ir.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/stablehlo/import_test_util.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

std::string Main(const std::string& signature, const std::string& body) {
  return "func.func @main" + signature + " {\n" + body + "\n}";
}

constexpr char kAddBody[] = R"(({
  ^bb0(%lhs: tensor<i64>, %rhs: tensor<i64>):
    %sum = stablehlo.add %lhs, %rhs : tensor<i64>
    stablehlo.return %sum : tensor<i64>
}))";

TEST(CollectiveImportTest, GridAttributesAndEveryOpRoundTrip) {
  const std::string text =
      "module @m attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 3 : i32} {\n" +
      Main("(%x: tensor<4x6xi64>, %r: tensor<1xi32>) -> (tensor<4x6xi64>, tensor<4x12xi64>)",
           std::string(R"(
  %a = "stablehlo.all_reduce"(%x) )") + kAddBody + R"( {replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<4x6xi64>) -> tensor<4x6xi64>
  %g = "stablehlo.all_gather"(%x) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x6xi64>) -> tensor<4x12xi64>
  %s = "stablehlo.reduce_scatter"(%x) )" + kAddBody + R"( {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, scatter_dimension = 0 : i64} : (tensor<4x6xi64>) -> tensor<2x6xi64>
  %t = "stablehlo.all_to_all"(%x) {concat_dimension = 0 : i64, split_count = 2 : i64, split_dimension = 1 : i64} : (tensor<4x6xi64>) -> tensor<8x3xi64>
  %p = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<4x6xi64>) -> tensor<4x6xi64>
  %b = "stablehlo.collective_broadcast"(%x, %r) {has_dynamic_root, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x6xi64>, tensor<1xi32>) -> tensor<4x6xi64>
  %c = "stablehlo.collective_reduce"(%x) )" + kAddBody + R"( {replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>} : (tensor<4x6xi64>) -> tensor<4x6xi64>
  %ri = stablehlo.replica_id : tensor<ui32>
  %pi = stablehlo.partition_id : tensor<ui32>
  return %a, %g : tensor<4x6xi64>, tensor<4x12xi64>)") + "\n}";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  EXPECT_EQ(module->num_replicas(), 3);
  EXPECT_EQ(module->num_partitions(), 2);
  const Operation& all_reduce = import_test::FirstOf(*module, OpKind::kAllReduce);
  EXPECT_EQ(all_reduce.GetInt("channel_id"), 1);
  EXPECT_EQ(all_reduce.GetBool("use_global_device_ids"), true);
  const std::string printed = PrintModule(*module);
  EXPECT_THAT(printed, HasSubstr("attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 3"));
  EXPECT_THAT(printed, HasSubstr("has_dynamic_root"));
  import_test::ExpectRoundTrip(*module);
}

TEST(CollectiveImportTest, TypeRuleErrorsNameTheOpAndRule) {
  struct Case {
    std::string signature;
    std::string body;
    std::string message;
  };
  const std::string g2 = "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>";
  const std::vector<Case> cases = {
      {"(%x: tensor<4xi64>) -> tensor<4xi64>",
       R"(%a = "stablehlo.all_reduce"(%x) )" + std::string(kAddBody) +
           R"( {replica_groups = dense<[[0, 0]]> : tensor<1x2xi64>} : (tensor<4xi64>) -> tensor<4xi64>
  return %a : tensor<4xi64>)",
       "all_reduce: replica_groups holds 0 twice"},
      {"(%x: tensor<4xi64>) -> tensor<4xi64>",
       R"(%a = "stablehlo.all_reduce"(%x) )" + std::string(kAddBody) +
           R"( {replica_groups = dense<[[0, -2]]> : tensor<1x2xi64>} : (tensor<4xi64>) -> tensor<4xi64>
  return %a : tensor<4xi64>)",
       "replica_groups holds -2"},
      {"(%x: tensor<4xi64>) -> tensor<4xi64>",
       R"(%a = "stablehlo.all_reduce"(%x) )" + std::string(kAddBody) +
           R"( {use_global_device_ids} : (tensor<4xi64>) -> tensor<4xi64>
  return %a : tensor<4xi64>)",
       "use_global_device_ids needs a channel_handle"},
      {"(%x: tensor<4xi64>) -> tensor<4xi32>",
       R"(%a = "stablehlo.all_reduce"(%x) )" + std::string(kAddBody) +
           R"( {} : (tensor<4xi64>) -> tensor<4xi32>
  return %a : tensor<4xi32>)",
       "all_reduce: result 0 has type tensor<4xi32>, expected tensor<4xi64>"},
      {"(%x: tensor<4xi64>) -> tensor<8xi64>",
       R"(%a = "stablehlo.all_gather"(%x) {)" + g2 + R"(} : (tensor<4xi64>) -> tensor<8xi64>
  return %a : tensor<8xi64>)",
       "all_gather: missing integer attribute all_gather_dim"},
      {"(%x: tensor<4xi64>) -> tensor<8xi64>",
       R"(%a = "stablehlo.all_gather"(%x) {all_gather_dim = 1 : i64, )" + g2 +
           R"(} : (tensor<4xi64>) -> tensor<8xi64>
  return %a : tensor<8xi64>)",
       "all_gather_dim 1 is out of range [0, 1)"},
      {"(%x: tensor<4xi64>) -> tensor<6xi64>",
       R"(%a = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, )" + g2 +
           R"(} : (tensor<4xi64>) -> tensor<6xi64>
  return %a : tensor<6xi64>)",
       "times the group size (2)"},
      {"(%x: tensor<4xi64>) -> tensor<2xi64>",
       R"(%a = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1], [2, -1]]> : tensor<2x2xi64>} : (tensor<4xi64>) -> tensor<2xi64>
  return %a : tensor<2xi64>)",
       "padded with -1"},
      {"(%x: tensor<5xi64>) -> tensor<2xi64>",
       R"(%a = "stablehlo.reduce_scatter"(%x) )" + std::string(kAddBody) +
           R"( {scatter_dimension = 0 : i64, )" + g2 + R"(} : (tensor<5xi64>) -> tensor<2xi64>
  return %a : tensor<2xi64>)",
       "divided by the group size (2)"},
      {"(%x: tensor<4x6xi64>) -> tensor<8x3xi64>",
       R"(%a = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 3 : i64, )" +
           g2 + R"(} : (tensor<4x6xi64>) -> tensor<8x3xi64>
  return %a : tensor<8x3xi64>)",
       "split_count 3 differs from the group size 2"},
      {"(%x: tensor<4x5xi64>) -> tensor<8x3xi64>",
       R"(%a = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64} : (tensor<4x5xi64>) -> tensor<8x3xi64>
  return %a : tensor<8x3xi64>)",
       "is not a multiple of split_count 2"},
      {"(%x: tensor<4x6xi64>) -> tensor<8x6xi64>",
       R"(%a = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64} : (tensor<4x6xi64>) -> tensor<8x6xi64>
  return %a : tensor<8x6xi64>)",
       "expected tensor<8x3xi64>"},
      {"(%x: tensor<4xi64>) -> tensor<4xi64>",
       R"(%a = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [0, 2]]> : tensor<2x2xi64>} : (tensor<4xi64>) -> tensor<4xi64>
  return %a : tensor<4xi64>)",
       "source 0 appears twice"},
      {"(%x: tensor<4xi64>) -> tensor<4xi64>",
       R"(%a = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [2, 1]]> : tensor<2x2xi64>} : (tensor<4xi64>) -> tensor<4xi64>
  return %a : tensor<4xi64>)",
       "target 1 appears twice"},
      {"(%x: tensor<4xi64>) -> tensor<4xi64>",
       R"(%a = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[0, 1]> : tensor<2xi64>} : (tensor<4xi64>) -> tensor<4xi64>
  return %a : tensor<4xi64>)",
       "expected a 2-D tensor"},
      {"(%x: tensor<4xi64>) -> tensor<4xi64>",
       R"(%a = "stablehlo.collective_permute"(%x) {} : (tensor<4xi64>) -> tensor<4xi64>
  return %a : tensor<4xi64>)",
       "missing attribute source_target_pairs"},
      {"(%x: tensor<4xi64>, %r: tensor<2xi32>) -> tensor<4xi64>",
       R"(%a = "stablehlo.collective_broadcast"(%x, %r) {has_dynamic_root} : (tensor<4xi64>, tensor<2xi32>) -> tensor<4xi64>
  return %a : tensor<4xi64>)",
       "the roots operand has type tensor<2xi32>, expected tensor<1xi32>"},
      {"(%x: tensor<4xi64>) -> tensor<4xi64>",
       R"(%a = "stablehlo.collective_broadcast"(%x) {has_dynamic_root} : (tensor<4xi64>) -> tensor<4xi64>
  return %a : tensor<4xi64>)",
       "with has_dynamic_root, expected the 1 data operands then a tensor<1xi32>"},
      {"() -> tensor<i32>", R"(%a = "stablehlo.replica_id"() : () -> tensor<i32>
  return %a : tensor<i32>)",
       "replica_id: result has type tensor<i32>, expected tensor<ui32>"},
      {"(%x: tensor<4xf32>) -> tensor<4xf32>",
       R"(%a = "stablehlo.all_reduce"(%x) )" + std::string(kAddBody) +
           R"( {} : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>)",
       "computation"},
  };
  for (const Case& c : cases) {
    StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(Main(c.signature, c.body));
    ASSERT_FALSE(module.ok()) << c.message;
    EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument) << module.status();
    EXPECT_THAT(module.status().message(), HasSubstr(c.message));
  }
}

TEST(CollectiveImportTest, BadGridAttributesAndChannelHandles) {
  StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(
      "module attributes {mhlo.num_replicas = 0 : i32} {\n" +
      Main("() -> tensor<ui32>", "%a = stablehlo.replica_id : tensor<ui32>\nreturn %a : tensor<ui32>") +
      "\n}");
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(module.status().message(), HasSubstr("mhlo.num_replicas must be a positive integer"));
  module = ParseStableHlo(Main("(%x: tensor<4xi64>) -> tensor<4xi64>",
                               R"(%a = "stablehlo.collective_broadcast"(%x) {channel_handle = 3 : i64} : (tensor<4xi64>) -> tensor<4xi64>
  return %a : tensor<4xi64>)"));
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(module.status().message(), HasSubstr("channel_handle"));
}

}  // namespace
}  // namespace accy
