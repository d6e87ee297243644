// User-registered host kernels: registration rules, contract checks, estimates, in-place runs.
#include "accy/host_kernel.h"

#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel_catalog.h"
#include "kernels/onednn_kernel.h"
#include "tests/kernels/kernels_test_util.h"

namespace accy::kernels_test {
namespace {

using ::testing::HasSubstr;
constexpr auto kF32 = ElementType::kF32;

// The seed's accy.custom.scale shape: x (read) and out (write); the result is computed in out's
// buffer: out = 2 * x.
HostKernelSpec ScaleSpec(std::string target) {
  HostKernelSpec spec;
  spec.target = std::move(target);
  spec.operand_effects = {OperandEffect::kRead, OperandEffect::kWrite};
  spec.run = [](const HostKernelArgs& args) -> Status {
    const float* x = static_cast<const float*>(args.operands[0].data);
    float* y = static_cast<float*>(args.results[0].data);
    for (int64_t i = 0; i < args.operands[0].byte_size / 4; ++i) y[i] = 2 * x[i];
    return absl::OkStatus();
  };
  spec.validate = [](std::span<const TensorType> operands, std::span<const TensorType>) -> Status {
    if (operands[0].element_type() != ElementType::kF32) {
      return absl::InvalidArgumentError("operand 0 (x) must be f32");
    }
    return absl::OkStatus();
  };
  spec.estimate = [](std::span<const TensorType> operands, std::span<const TensorType>) {
    return static_cast<uint64_t>(operands[0].element_count());
  };
  return spec;
}

TEST(HostKernelTest, RegisteredKernelRunsInPlace) {
  ASSERT_OK(RegisterHostKernel(ScaleSpec("accy.test.scale_in_place")));
  ASSERT_OK_AND_ASSIGN(KernelCallModule m,
                       MakeKernelCall("accy.test.scale_in_place", {T(kF32, {4}), T(kF32, {4})},
                                      T(kF32, {4}), {}, {"read", "write"}, 1));
  ASSERT_OK_AND_ASSIGN(uint64_t ops, kernels::EstimateElementOps(*m.call));
  EXPECT_EQ(ops, 4u);
  ASSERT_OK_AND_ASSIGN(kernels::LibraryKernel kernel,
                       kernels::LibraryKernel::CreateForKernelCall(*m.call));
  Tensor x = Tensor::FromVector<float>(T(kF32, {4}), {1, 2, 3, -4}).value();
  Tensor out = Tensor::Allocate(T(kF32, {4})).value();
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> results, RunKernel(kernel, std::vector<Tensor>{x, out}, {1}));
  const float* y = results[0].data_as<float>();
  EXPECT_EQ(y[0], 2);
  EXPECT_EQ(y[3], -8);
  // An in-place result given another buffer is refused, naming the item.
  float other[4], xin[4] = {1, 2, 3, 4}, outin[4];
  void* buffers[] = {xin, outin, other};
  const int64_t bytes[] = {16, 16, 16};
  Status status = kernel.Run(buffers, bytes, 3);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("output 0 is in place on input 1"));
  EXPECT_OK(UnregisterHostKernel("accy.test.scale_in_place", 1));
  // Unregistered: the bound kernel keeps working; new bindings fail naming the target.
  void* in_place[] = {xin, outin, outin};
  EXPECT_OK(kernel.Run(in_place, bytes, 3));
  EXPECT_EQ(outin[3], 8);
  auto again = kernels::LibraryKernel::CreateForKernelCall(*m.call);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(again.status().message()),
              HasSubstr("unknown kernel target 'accy.test.scale_in_place' version 1"));
}

TEST(HostKernelTest, EffectsMustMatchTheDeclaration) {
  ASSERT_OK(RegisterHostKernel(ScaleSpec("accy.test.scale_effects")));
  ASSERT_OK_AND_ASSIGN(KernelCallModule m,
                       MakeKernelCall("accy.test.scale_effects", {T(kF32, {4}), T(kF32, {4})},
                                      T(kF32, {4}), {}, {"read", "read"}));
  auto kernel = kernels::LibraryKernel::CreateForKernelCall(*m.call);
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(kernel.status().message()),
              HasSubstr("operand 1 has effect read, the registered kernel declares write"));
  EXPECT_OK(UnregisterHostKernel("accy.test.scale_effects", 1));
}

TEST(HostKernelTest, ValidateHookNamesTheOperand) {
  ASSERT_OK(RegisterHostKernel(ScaleSpec("accy.test.scale_types")));
  ASSERT_OK_AND_ASSIGN(KernelCallModule m,
                       MakeKernelCall("accy.test.scale_types",
                                      {T(ElementType::kI32, {4}), T(kF32, {4})}, T(kF32, {4}), {},
                                      {"read", "write"}));
  auto kernel = kernels::LibraryKernel::CreateForKernelCall(*m.call);
  EXPECT_THAT(std::string(kernel.status().message()), HasSubstr("operand 0 (x) must be f32"));
  EXPECT_OK(UnregisterHostKernel("accy.test.scale_types", 1));
}

TEST(HostKernelTest, RegistrationErrors) {
  HostKernelSpec no_run = ScaleSpec("accy.test.no_run");
  no_run.run = nullptr;
  EXPECT_THAT(std::string(RegisterHostKernel(no_run).message()), HasSubstr("has no run"));
  EXPECT_THAT(std::string(RegisterHostKernel(ScaleSpec(std::string(kernels::kSoftmaxTarget))).message()),
              HasSubstr("is a catalog kernel"));
  ASSERT_OK(RegisterHostKernel(ScaleSpec("accy.test.twice")));
  EXPECT_THAT(std::string(RegisterHostKernel(ScaleSpec("accy.test.twice")).message()),
              HasSubstr("is registered already"));
  EXPECT_OK(UnregisterHostKernel("accy.test.twice", 1));
  EXPECT_EQ(UnregisterHostKernel("accy.test.twice", 1).code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace accy::kernels_test
