// The sharding custom_calls of JAX exports (src/stablehlo/sharding_calls.h): in a module of one
// partition @Sharding and shard_map's @SPMDFullToShardShape / @SPMDShardToFullShape import as
// the identity (no op left; the engine's results are the operand's values), next to the
// attributes exporters put on ops (index-typed result_layout, xla_shape,
// mhlo.frontend_attributes, argument and result attributes); in a module of two partitions they
// are kUnimplemented naming the target and the count, and a malformed call is kInvalidArgument
// naming the types, at the op's location.
#include <memory>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/ir.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

// As jax.export writes a sharded function of one device (mhlo.sharding on arguments and on the
// @Sharding call, layouts as index tensors on the transpose).
constexpr char kOnePartition[] = R"(
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"}) -> (tensor<3x2xf32> {jax.result_info = "", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[3,2]{0,1}", mhlo.frontend_attributes = {_xla_compute_type = "host"}} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {mhlo.sharding = "{replicated}"} : (tensor<3x2xf32>) -> tensor<3x2xf32>
    %2 = stablehlo.custom_call @SPMDFullToShardShape(%1) {mhlo.sharding = "{manual}"} : (tensor<3x2xf32>) -> tensor<3x2xf32>
    %3 = stablehlo.multiply %2, %2 : tensor<3x2xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{replicated}"} : (tensor<3x2xf32>) -> tensor<3x2xf32>
    return %4 : tensor<3x2xf32>
  }
})";

TEST(ShardingImportTest, OnePartitionShardingCallsAreTheIdentity) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(kOnePartition));
  int custom_calls = 0, ops = 0;
  for (const auto& op : module->functions().front()->entry_block()->operations()) {
    ++ops;
    if (op->kind() == OpKind::kKernelCall) ++custom_calls;
  }
  EXPECT_EQ(custom_calls, 0);
  EXPECT_EQ(ops, 3);  // transpose, multiply, return
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module));
  const std::vector<Tensor> inputs = {*Tensor::FromVector(
      *TensorType::Create(ElementType::kF32, {2, 3}), std::vector<float>{0, 1, 2, 3, 4, 5})};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, executable->Run(inputs));
  const std::vector<float> want = {0, 9, 1, 16, 4, 25};  // transpose, squared
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[0].data_as<float>()[i], want[static_cast<size_t>(i)]);
}

TEST(ShardingImportTest, TwoPartitionsAndMalformedCallsAreErrors) {
  const std::string two = R"(
module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})";
  StatusOr<std::unique_ptr<Module>> refused = ParseStableHlo(two);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("4:10: custom_call @Sharding in a module of 2 partitions: partitioning a "
                        "global-view program by its shardings (XLA's SPMD partitioner) is not "
                        "supported"));
  const std::string reshaped = R"(
func.func @main(%arg0: tensor<4xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @SPMDFullToShardShape(%arg0) {mhlo.sharding = "{manual}"} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
})";
  StatusOr<std::unique_ptr<Module>> malformed = ParseStableHlo(reshaped);
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(malformed.status().message()),
              HasSubstr("custom_call @SPMDFullToShardShape in a module of one partition must take "
                        "one operand to one result of the same type (the identity), got "
                        "(tensor<4xf32>) -> (tensor<2xf32>)"));
}

}  // namespace
}  // namespace accy
