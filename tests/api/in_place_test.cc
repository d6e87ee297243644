// In-place kernel_call results (result_aliases) through the engine: the result shares its
// operand's buffer when the call is that operand's last read, and otherwise the operand is
// copied first, so caller inputs and values read later keep their bytes.
#include <cmath>

#include "accy/builder.h"
#include "accy/engine.h"
#include "accy/host_kernel.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

constexpr char kTarget[] = "accy.test.engine_scale_in_place";
constexpr char kReverseTarget[] = "accy.test.engine_add_reversed_in_place";

TensorType F32(std::vector<int64_t> dims) {
  return *TensorType::Create(ElementType::kF32, std::move(dims));
}

// out = 2 * x + out, computed over out's buffer (operand 1, read_write; the result aliases it).
class InPlaceTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    HostKernelSpec spec;
    spec.target = kTarget;
    spec.operand_effects = {OperandEffect::kRead, OperandEffect::kReadWrite};
    spec.run = [](const HostKernelArgs& args) -> Status {
      if (args.results[0].data != args.operands[1].data) {
        return absl::InternalError("result 0 was not given operand 1's buffer");
      }
      const float* x = static_cast<const float*>(args.operands[0].data);
      float* out = static_cast<float*>(args.results[0].data);
      for (int64_t i = 0; i < args.operands[0].byte_size / 4; ++i) out[i] += 2 * x[i];
      return absl::OkStatus();
    };
    ASSERT_OK(RegisterHostKernel(std::move(spec)));
    // out[i] += x[n - 1 - i]: reads x at other indices than it writes.
    HostKernelSpec reverse;
    reverse.target = kReverseTarget;
    reverse.operand_effects = {OperandEffect::kRead, OperandEffect::kReadWrite};
    reverse.run = [](const HostKernelArgs& args) -> Status {
      const float* x = static_cast<const float*>(args.operands[0].data);
      float* out = static_cast<float*>(args.results[0].data);
      const int64_t n = args.operands[0].byte_size / 4;
      for (int64_t i = 0; i < n; ++i) out[i] += x[n - 1 - i];
      return absl::OkStatus();
    };
    ASSERT_OK(RegisterHostKernel(std::move(reverse)));
  }
  static void TearDownTestSuite() {
    ASSERT_OK(UnregisterHostKernel(kTarget, 1));
    ASSERT_OK(UnregisterHostKernel(kReverseTarget, 1));
  }

  static Value* Call(FunctionBuilder& f, Value* x, Value* out, const char* target = kTarget) {
    KernelCallSpec spec;
    spec.target = target;
    spec.operand_effects = {OperandEffect::kRead, OperandEffect::kReadWrite};
    spec.result_aliases = {1};
    return (*f.KernelCall({x, out}, {out->type()}, spec))->result(0);
  }
};

Tensor Vec(std::vector<float> values) {
  return *Tensor::FromVector(F32({static_cast<int64_t>(values.size())}), values);
}

// t = x + 1 is last read by the call: r takes t's arena slice (64 bytes of arena, not 128).
TEST_F(InPlaceTest, ResultSharesTheOperandsBufferAtItsLastRead) {
  Builder builder("shared");
  FunctionBuilder f = *builder.BeginFunction("main", {F32({8})}, {F32({8})});
  Value* one = *f.BroadcastInDim(*f.ConstantScalar(ElementType::kF32, 1), F32({8}), {});
  Value* t = *f.Add(f.Parameter(0), one);
  Value* r = Call(f, f.Parameter(0), t);
  ASSERT_TRUE(f.Return({*f.Multiply(r, r)}).ok());
  std::unique_ptr<Module> module = *builder.Finish();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  EXPECT_EQ(exe->Stats().arena_bytes, 64);
  Tensor x = Vec({0, 1, 2, 3, 4, 5, 6, -7});
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, exe->Run({&x, 1}));
  for (int i = 0; i < 8; ++i) {
    const float v = x.data_as<float>()[i];
    const float r_i = 3 * v + 1;  // (v + 1) + 2v
    EXPECT_EQ(out[0].data_as<float>()[i], r_i * r_i) << i;
  }
}

// The in-place operand is the caller's input: it is copied, and the input keeps its bytes.
TEST_F(InPlaceTest, ParameterOperandIsCopiedAndLeftUnchanged) {
  Builder builder("param");
  FunctionBuilder f = *builder.BeginFunction("main", {F32({4}), F32({4})}, {F32({4})});
  Value* r = Call(f, f.Parameter(0), f.Parameter(1));
  ASSERT_TRUE(f.Return({r}).ok());
  std::unique_ptr<Module> module = *builder.Finish();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  std::vector<Tensor> inputs = {Vec({1, 2, 3, 4}), Vec({10, 20, 30, 40})};
  for (int run = 0; run < 2; ++run) {  // a second run sees the same, untouched input
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, exe->Run(inputs));
    EXPECT_EQ(out[0].data_as<float>()[0], 12);
    EXPECT_EQ(out[0].data_as<float>()[3], 48);
    EXPECT_EQ(inputs[1].data_as<float>()[0], 10);
    EXPECT_EQ(inputs[1].data_as<float>()[3], 40);
  }
}

// t is read again after the call, so the call works on a copy and t keeps its value.
TEST_F(InPlaceTest, OperandReadLaterIsNotOverwritten) {
  Builder builder("later");
  FunctionBuilder f = *builder.BeginFunction("main", {F32({5})}, {F32({5})});
  Value* t = *f.Exponential(f.Parameter(0));
  Value* r = Call(f, f.Parameter(0), t);
  ASSERT_TRUE(f.Return({*f.Subtract(r, t)}).ok());  // (t + 2x) - t = 2x
  std::unique_ptr<Module> module = *builder.Finish();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  Tensor x = Vec({0.5f, -1, 2, 0, 3});
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, exe->Run({&x, 1}));
  for (int i = 0; i < 5; ++i) {
    const float v = x.data_as<float>()[i];
    EXPECT_FLOAT_EQ(out[0].data_as<float>()[i], (std::exp(v) + 2 * v) - std::exp(v)) << i;
  }
}

// x (read) and out (read_write) share memory through a reshape alias: the call must work on a
// copy, or it would read x after overwriting it.
TEST_F(InPlaceTest, OperandSharingMemoryWithTheInPlaceOperandIsNotOverwritten) {
  Builder builder("reshape_alias");
  FunctionBuilder f = *builder.BeginFunction("main", {F32({8})}, {F32({2, 4})});
  Value* t = *f.Exponential(f.Parameter(0));
  Value* u = *f.Reshape(t, F32({2, 4}));
  Value* r = Call(f, t, u, kReverseTarget);
  ASSERT_TRUE(f.Return({*f.Tanh(r)}).ok());
  std::unique_ptr<Module> module = *builder.Finish();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  Tensor x = Vec({0, 0.25f, 0.5f, 0.75f, 1, 1.25f, 1.5f, 1.75f});
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, exe->Run({&x, 1}));
  for (int i = 0; i < 8; ++i) {
    const float want = std::tanh(std::exp(0.25f * i) + std::exp(0.25f * (7 - i)));
    EXPECT_NEAR(out[0].data_as<float>()[i], want, 1e-6) << i;
  }
}

TEST_F(InPlaceTest, KernelCallWithTwoResultsIsUnimplementedByName) {
  Builder builder("two");
  FunctionBuilder f = *builder.BeginFunction("main", {F32({4}), F32({4})}, {F32({4})});
  KernelCallSpec spec;
  spec.target = kTarget;
  Operation* call = *f.KernelCall({f.Parameter(0), f.Parameter(1)}, {F32({4}), F32({4})}, spec);
  ASSERT_TRUE(f.Return({call->result(1)}).ok());
  std::unique_ptr<Module> module = *builder.Finish();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  auto exe = engine->Compile(*module);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(exe.status().message(),
              testing::HasSubstr("kernel_call accy.test.engine_scale_in_place has 2 results"));
}

// accy.nn.softmax in place (oneDNN) on an intermediate, checked against a double-precision loop.
TEST_F(InPlaceTest, CatalogSoftmaxRunsInPlace) {
  Builder builder("softmax");
  TensorType m = F32({3, 37});
  FunctionBuilder f = *builder.BeginFunction("main", {m}, {m});
  Value* scaled = *f.Multiply(f.Parameter(0), f.Parameter(0));
  KernelCallSpec spec;
  spec.target = "accy.nn.softmax";
  spec.operand_effects = {OperandEffect::kReadWrite};
  spec.result_aliases = {0};
  Operation* call = *f.KernelCall({scaled}, {m}, spec);
  call->SetAttribute("axis", int64_t{1});
  ASSERT_TRUE(f.Return({call->result(0)}).ok());
  std::unique_ptr<Module> module = *builder.Finish();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  std::vector<float> values(3 * 37);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.3f * static_cast<float>(i));
  Tensor x = *Tensor::FromVector(m, values);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, exe->Run({&x, 1}));
  // The reference evaluator has no catalog kernels: softmax of x*x per row, in double.
  for (int row = 0; row < 3; ++row) {
    double max = -INFINITY, sum = 0;
    for (int j = 0; j < 37; ++j) max = std::max(max, double{values[row * 37 + j]} * values[row * 37 + j]);
    for (int j = 0; j < 37; ++j) sum += std::exp(double{values[row * 37 + j]} * values[row * 37 + j] - max);
    for (int j = 0; j < 37; ++j) {
      const double v = double{values[row * 37 + j]} * values[row * 37 + j];
      EXPECT_NEAR(out[0].data_as<float>()[row * 37 + j], std::exp(v - max) / sum, 1e-6)
          << row << "," << j;
    }
  }
}

}  // namespace
}  // namespace accy
