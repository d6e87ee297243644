// fold-constants and simplify-arithmetic (src/transforms/): what each must and must not rewrite,
// and that a compiled program gives the same bits with them as without them, IEEE specials
// (-0.0, NaN, infinities) included.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/transforms/eliminate_dead_code.h"
#include "src/transforms/fold_constants.h"
#include "src/transforms/simplify_arithmetic.h"
#include "tests/test_util.h"
#include "tests/transforms/transforms_test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

Function& Main(Module& module) { return *module.functions()[0]; }

int64_t CountOps(const Module& module, OpKind kind) {
  int64_t count = 0;
  WalkOperations(*module.functions()[0]->entry_block(),
                 [&](const Operation* op) { count += op->kind() == kind; });
  return count;
}

// The op that defines return operand `i` of main.
const Operation* Returned(Module& module, int64_t i) {
  const Operation* ret = Main(module).entry_block()->operations().back().get();
  return ret->operand(i)->defining_op();
}

template <typename T>
std::vector<T> Payload(const Operation* constant) {
  EXPECT_NE(constant, nullptr);
  if (constant == nullptr || constant->kind() != OpKind::kConstant) return {};
  const DenseElements* dense = constant->GetDense("value");
  std::vector<T> values(dense->bytes.size() / sizeof(T));
  std::memcpy(values.data(), dense->bytes.data(), dense->bytes.size());
  return values;
}

TEST(FoldConstantsTest, FoldsChainsOfExactOpsInOneRun) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xf32>, tensor<2xi32>, tensor<4xf32>) {
  %a = stablehlo.constant dense<[1.0, -2.0, 0.5, 4.0]> : tensor<4xf32>
  %b = stablehlo.constant dense<[3.0, 0.25, -0.5, 2.0]> : tensor<4xf32>
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  %1 = stablehlo.multiply %0, %b : tensor<4xf32>
  %2 = stablehlo.sqrt %1 : tensor<4xf32>
  %3 = stablehlo.reshape %2 : (tensor<4xf32>) -> tensor<2x2xf32>
  %4 = stablehlo.transpose %3, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %i = stablehlo.constant dense<[7, -7]> : tensor<2xi32>
  %d = stablehlo.constant dense<2> : tensor<2xi32>
  %5 = stablehlo.divide %i, %d : tensor<2xi32>
  %6 = stablehlo.add %x, %0 : tensor<4xf32>
  return %2, %4, %5, %6 : tensor<4xf32>, tensor<2x2xf32>, tensor<2xi32>, tensor<4xf32>
})");
  ASSERT_NE(module, nullptr);
  // add, multiply, sqrt, reshape, transpose, divide; not the add of the parameter.
  EXPECT_EQ(FoldConstants(Main(*module)), 6);
  EXPECT_OK(Verify(*module));
  // (a + b) * b = [12, -0.4375, 0, 12]; sqrt -> [sqrt(12), NaN, 0, sqrt(12)].
  const std::vector<float> root = Payload<float>(Returned(*module, 0));
  ASSERT_EQ(root.size(), 4u);
  EXPECT_EQ(root[0], std::sqrt(12.0f));
  EXPECT_TRUE(std::isnan(root[1]));
  EXPECT_EQ(root[2], 0.0f);
  EXPECT_TRUE(std::signbit(root[2]));  // (0.5 + -0.5) * -0.5 = -0.0, and sqrt(-0.0) = -0.0
  EXPECT_EQ(root[3], std::sqrt(12.0f));
  const std::vector<float> transposed = Payload<float>(Returned(*module, 1));
  ASSERT_EQ(transposed.size(), 4u);
  EXPECT_EQ(transposed[1], root[2]);  // [[r0, r2], [r1, r3]]
  EXPECT_TRUE(std::isnan(transposed[2]));
  EXPECT_THAT(Payload<int32_t>(Returned(*module, 2)), ::testing::ElementsAre(3, -3));
  EXPECT_EQ(Returned(*module, 3)->kind(), OpKind::kAdd);
  // The operands of the folded ops are dead now.
  EliminateDeadCode(Main(*module));
  EXPECT_EQ(CountOps(*module, OpKind::kConstant), 4);
}

TEST(FoldConstantsTest, LeavesInexactLargeAndImplementationDefinedOps) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main() -> (tensor<4xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<4xi32>, tensor<2048xf32>, tensor<2xi32>, tensor<f32>, tensor<4xf32>, tensor<4xi32>, tensor<2xi32>) {
  %a = stablehlo.constant dense<[1.0, -2.0, 0.5, 4.0]> : tensor<4xf32>
  %0 = stablehlo.exponential %a : tensor<4xf32>
  %1 = stablehlo.tanh %a : tensor<4xf32>
  %2 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
  %3 = stablehlo.iota dim = 0 : tensor<4xi32>
  %big = stablehlo.constant dense<1.5> : tensor<2048xf32>
  %4 = stablehlo.add %big, %big : tensor<2048xf32>
  %n = stablehlo.constant dense<[5, 6]> : tensor<2xi32>
  %z = stablehlo.constant dense<[1, 0]> : tensor<2xi32>
  %5 = stablehlo.divide %n, %z : tensor<2xi32>
  %s = stablehlo.constant dense<0.0> : tensor<f32>
  %6 = stablehlo.reduce(%a init: %s) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %7 = stablehlo.power %a, %a : tensor<4xf32>
  %8 = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xi32>
  %9 = stablehlo.power %n, %z : tensor<2xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<4xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<4xi32>, tensor<2048xf32>, tensor<2xi32>, tensor<f32>, tensor<4xf32>, tensor<4xi32>, tensor<2xi32>
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(FoldConstants(Main(*module)), 0);
  EXPECT_EQ(CountOps(*module, OpKind::kExponential), 1);
  EXPECT_EQ(CountOps(*module, OpKind::kBroadcastInDim), 1);
  EXPECT_EQ(CountOps(*module, OpKind::kIota), 1);
  EXPECT_EQ(CountOps(*module, OpKind::kDivide), 1);
  EXPECT_EQ(CountOps(*module, OpKind::kReduce), 1);
  EXPECT_EQ(CountOps(*module, OpKind::kPower), 2);
  EXPECT_EQ(CountOps(*module, OpKind::kConvert), 1);
}

TEST(SimplifyArithmeticTest, AppliesTheExactIdentities) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%x: tensor<4xf32>, %i: tensor<4xi32>, %p: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %ones = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %nz = stablehlo.constant dense<-0.0> : tensor<4xf32>
  %pz = stablehlo.constant dense<0.0> : tensor<4xf32>
  %iz = stablehlo.constant dense<0> : tensor<4xi32>
  %im = stablehlo.constant dense<-1> : tensor<4xi32>
  %t = stablehlo.constant dense<true> : tensor<i1>
  %0 = stablehlo.multiply %ones, %x : tensor<4xf32>
  %1 = stablehlo.add %x, %nz : tensor<4xf32>
  %2 = stablehlo.subtract %x, %pz : tensor<4xf32>
  %3 = stablehlo.divide %x, %ones : tensor<4xf32>
  %4 = stablehlo.add %iz, %i : tensor<4xi32>
  %5 = stablehlo.multiply %i, %iz : tensor<4xi32>
  %6 = stablehlo.and %i, %im : tensor<4xi32>
  %n = stablehlo.not %i : tensor<4xi32>
  %7 = stablehlo.not %n : tensor<4xi32>
  %8 = stablehlo.or %p, %p : tensor<4xi1>
  %9 = stablehlo.select %t, %x, %0 : tensor<i1>, tensor<4xf32>
  %10 = stablehlo.maximum %x, %x : tensor<4xf32>
  %ng = stablehlo.negate %x : tensor<4xf32>
  %11 = stablehlo.negate %ng : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SimplifyArithmetic(Main(*module)), 12);
  EXPECT_OK(Verify(*module));
  const Operation* ret = Main(*module).entry_block()->operations().back().get();
  Value* x = Main(*module).parameter(0);
  Value* i = Main(*module).parameter(1);
  Value* p = Main(*module).parameter(2);
  for (int k : {0, 1, 2, 3, 9, 10, 11}) EXPECT_EQ(ret->operand(k), x) << "result " << k;
  for (int k : {4, 6, 7}) EXPECT_EQ(ret->operand(k), i) << "result " << k;
  EXPECT_EQ(ret->operand(8), p);
  const Operation* zero = ret->operand(5)->defining_op();  // i * 0 is the zero constant
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(zero->kind(), OpKind::kConstant);
  EliminateDeadCode(Main(*module));
  EXPECT_EQ(CountOps(*module, OpKind::kMultiply), 0);
  EXPECT_EQ(CountOps(*module, OpKind::kNegate), 0);
}

// x + +0.0 turns -0.0 into +0.0, x * 0.0 is NaN for infinities, x - -0.0 turns -0.0 into +0.0:
// none of them is an identity for floats. Nor is x * 2 or x + 1 for anything.
TEST(SimplifyArithmeticTest, KeepsWhatIsNotAnIdentity) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%x: tensor<4xf32>, %i: tensor<4xi32>, %p: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) {
  %pz = stablehlo.constant dense<0.0> : tensor<4xf32>
  %nz = stablehlo.constant dense<-0.0> : tensor<4xf32>
  %two = stablehlo.constant dense<2.0> : tensor<4xf32>
  %mixed = stablehlo.constant dense<[1.0, 1.0, 1.0, 2.0]> : tensor<4xf32>
  %ione = stablehlo.constant dense<1> : tensor<4xi32>
  %0 = stablehlo.add %x, %pz : tensor<4xf32>
  %1 = stablehlo.multiply %x, %pz : tensor<4xf32>
  %2 = stablehlo.subtract %x, %nz : tensor<4xf32>
  %3 = stablehlo.multiply %x, %two : tensor<4xf32>
  %4 = stablehlo.add %i, %ione : tensor<4xi32>
  %5 = stablehlo.multiply %x, %mixed : tensor<4xf32>
  %6 = stablehlo.select %p, %x, %3 : tensor<4xi1>, tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SimplifyArithmetic(Main(*module)), 0);
}

// maximum with -inf and minimum with +inf are identities on floats (NaN propagates either way),
// as JAX's softmax guard maximum(-inf, max(s)) writes it; on integers, and with a finite bound,
// they are not rewritten.
TEST(SimplifyArithmeticTest, DropsMaximumWithMinusInfinityOnFloats) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%x: tensor<4xf32>, %h: tensor<4xbf16>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %ninf, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %hninf = stablehlo.constant dense<0xFF80> : tensor<4xbf16>
  %pinf = stablehlo.constant dense<0x7F800000> : tensor<4xf32>
  %big = stablehlo.constant dense<3.0e38> : tensor<4xf32>
  %imin = stablehlo.constant dense<-2147483648> : tensor<4xi32>
  %0 = stablehlo.maximum %b, %x : tensor<4xf32>
  %1 = stablehlo.maximum %h, %hninf : tensor<4xbf16>
  %2 = stablehlo.minimum %x, %pinf : tensor<4xf32>
  %3 = stablehlo.maximum %x, %pinf : tensor<4xf32>
  %4 = stablehlo.minimum %x, %big : tensor<4xf32>
  %5 = stablehlo.maximum %i, %imin : tensor<4xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SimplifyArithmetic(Main(*module)), 3);
  EXPECT_OK(Verify(*module));
  const Operation* ret = Main(*module).entry_block()->operations().back().get();
  EXPECT_EQ(ret->operand(0), Main(*module).parameter(0));
  EXPECT_EQ(ret->operand(1), Main(*module).parameter(1));
  EXPECT_EQ(ret->operand(2), Main(*module).parameter(0));
  for (int k : {3, 4, 5}) {
    ASSERT_NE(ret->operand(k)->defining_op(), nullptr) << k;
    EXPECT_NE(ret->operand(k)->defining_op()->kind(), OpKind::kConstant) << k;
  }
}

// The passes change no bit of a compiled program's results, on inputs with -0.0, NaN and
// infinities.
TEST(ConstantFoldingPipelineTest, CompiledResultsAreTheSameBitsWithAndWithoutThePasses) {
  std::unique_ptr<Module> module = Parse(R"(
func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %ones = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %nz = stablehlo.constant dense<-0.0> : tensor<8xf32>
  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %s = stablehlo.sqrt %c : tensor<8xf32>
  %0 = stablehlo.multiply %x, %ones : tensor<8xf32>
  %1 = stablehlo.add %0, %nz : tensor<8xf32>
  %2 = stablehlo.multiply %1, %s : tensor<8xf32>
  %3 = stablehlo.divide %x, %ones : tensor<8xf32>
  return %2, %3 : tensor<8xf32>, tensor<8xf32>
})");
  ASSERT_NE(module, nullptr);
  EngineOptions off;
  off.disabled_passes = {"fold-constants", "simplify-arithmetic"};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine_on, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine_off, Engine::Create(off));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> on, engine_on->Compile(*module));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> without, engine_off->Compile(*module));
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  TensorType t = *TensorType::Create(ElementType::kF32, {8});
  std::vector<Tensor> inputs = {
      *Tensor::FromVector(t, std::vector<float>{-0.0f, 0.0f, inf, -inf, nan, 1e-45f, -3.5f, 7.0f})};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> a, on->Run(inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> b, without->Run(inputs));
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(0, std::memcmp(a[k].data(), b[k].data(), 32)) << "result " << k;
  }
  EXPECT_TRUE(std::signbit(a[1].data_as<float>()[0]));  // -0.0 / 1 stays -0.0
  EXPECT_EQ(a[0].data_as<float>()[6], -3.5f * std::sqrt(7.0f));
}

}  // namespace
}  // namespace accy
