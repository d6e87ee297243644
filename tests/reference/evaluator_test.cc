// Reference evaluator driver tests (src/reference/evaluator.cc): while loops, regions reading
// enclosing values, argument validation and the other must-fail paths, each asserting the
// status code and a message fragment.
#include <cmath>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/reference/reference_test_util.h"
#include "tests/test_util.h"
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace accy::reference_test {
namespace {

using ::testing::HasSubstr;

// A while loop counting a scalar i32 from 0 while it is below `limit`; `limit` and the step are
// constants of the enclosing function, read from inside the regions.
StatusOr<std::vector<Tensor>> RunCountTo(int32_t limit, const ReferenceOptions& options = {}) {
  return RunAll(
      {Type(E::kI32, {})}, {},
      [limit](FunctionBuilder& b, std::span<Value* const>) -> StatusOr<std::vector<Value*>> {
        ACCY_ASSIGN_OR_RETURN(Value* zero, b.ConstantScalar(E::kI32, 0));
        ACCY_ASSIGN_OR_RETURN(Value* bound, b.ConstantScalar(E::kI32, limit));
        ACCY_ASSIGN_OR_RETURN(Value* one, b.ConstantScalar(E::kI32, 1));
        return b.While(
            {zero},
            [bound](FunctionBuilder& c, std::span<Value* const> a) -> Status {
              ACCY_ASSIGN_OR_RETURN(Value* more, c.Compare(a[0], bound, "LT"));
              return c.Return({more});
            },
            [one](FunctionBuilder& c, std::span<Value* const> a) -> Status {
              ACCY_ASSIGN_OR_RETURN(Value* next, c.Add(a[0], one));
              return c.Return({next});
            });
      },
      options);
}

TEST(EvaluatorTest, WhileCountsToTen) {
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> results, RunCountTo(10));
  ASSERT_EQ(results.size(), 1u);
  ExpectTensor<int32_t>(results[0], E::kI32, {}, {10});
}

TEST(EvaluatorTest, WhileCarriesTwoValues) {
  // (i, acc) = (0, 1); while i < 5: (i + 1, acc * 2).
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> results,
      RunAll({Type(E::kI32, {}), Type(E::kF32, {2})}, {Make<float>(E::kF32, {2}, {1, -3})},
             [](FunctionBuilder& b, std::span<Value* const> p) -> StatusOr<std::vector<Value*>> {
               ACCY_ASSIGN_OR_RETURN(Value* zero, b.ConstantScalar(E::kI32, 0));
               return b.While(
                   {zero, p[0]},
                   [](FunctionBuilder& c, std::span<Value* const> a) -> Status {
                     ACCY_ASSIGN_OR_RETURN(Value* five, c.ConstantScalar(E::kI32, 5));
                     ACCY_ASSIGN_OR_RETURN(Value* more, c.Compare(a[0], five, "LT"));
                     return c.Return({more});
                   },
                   [](FunctionBuilder& c, std::span<Value* const> a) -> Status {
                     ACCY_ASSIGN_OR_RETURN(Value* one, c.ConstantScalar(E::kI32, 1));
                     ACCY_ASSIGN_OR_RETURN(Value* next, c.Add(a[0], one));
                     ACCY_ASSIGN_OR_RETURN(Value* doubled, c.Add(a[1], a[1]));
                     return c.Return({next, doubled});
                   });
             }));
  ASSERT_EQ(results.size(), 2u);
  ExpectTensor<int32_t>(results[0], E::kI32, {}, {5});
  ExpectTensor<float>(results[1], E::kF32, {2}, {32, -96});
}

TEST(EvaluatorTest, WhileThatNeverRunsReturnsItsInitialValues) {
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> results, RunCountTo(-3));
  ExpectTensor<int32_t>(results[0], E::kI32, {}, {0});
}

TEST(EvaluatorTest, WhileIterationLimitIsResourceExhausted) {
  ReferenceOptions options;
  options.max_while_iterations = 10;
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> exactly, RunCountTo(10, options));
  ExpectTensor<int32_t>(exactly[0], E::kI32, {}, {10});
  options.max_while_iterations = 9;
  StatusOr<std::vector<Tensor>> too_many = RunCountTo(10, options);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(too_many.status().message(), HasSubstr("within 9 iterations"));
}

TEST(EvaluatorTest, RegionsReadValuesOfEnclosingScopes) {
  // sum(x * scale) + scale, where `scale` is read inside the reduce body and again after it.
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> results,
      RunAll({Type(E::kI32, {})},
             {Make<int32_t>(E::kI32, {3}, {1, 2, 3}), Make<int32_t>(E::kI32, {}, {10})},
             [](FunctionBuilder& b, std::span<Value* const> p) -> StatusOr<std::vector<Value*>> {
               Value* scale = p[1];
               ACCY_ASSIGN_OR_RETURN(Value* zero, b.ConstantScalar(E::kI32, 0));
               RegionBodyFn body = [scale](FunctionBuilder& r,
                                           std::span<Value* const> a) -> Status {
                 ACCY_ASSIGN_OR_RETURN(Value* scaled, r.Multiply(a[1], scale));
                 ACCY_ASSIGN_OR_RETURN(Value* sum, r.Add(a[0], scaled));
                 return r.Return({sum});
               };
               ACCY_ASSIGN_OR_RETURN(std::vector<Value*> reduced,
                                     b.Reduce({p[0]}, {zero}, {0}, body));
               ACCY_ASSIGN_OR_RETURN(Value* result, b.Add(reduced[0], scale));
               return std::vector<Value*>{result};
             }));
  ExpectTensor<int32_t>(results[0], E::kI32, {}, {70});
}

TEST(EvaluatorTest, ResultsAreOwnedCopiesOfArguments) {
  Tensor x = Make<int32_t>(E::kI32, {2}, {1, 2});
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> results,
      RunAll({x.type(), x.type()}, {x},
             [](FunctionBuilder&, std::span<Value* const> p) -> StatusOr<std::vector<Value*>> {
               return std::vector<Value*>{p[0], p[0]};
             }));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].owns_data());
  EXPECT_NE(results[0].data(), x.data());
  EXPECT_NE(results[0].data(), results[1].data());
  ExpectTensor<int32_t>(results[1], E::kI32, {2}, {1, 2});
}

#if defined(__x86_64__) || defined(__i386__)
TEST(EvaluatorTest, SubnormalsStayIeeeWhenTheCallerSetFlushToZero) {
  constexpr unsigned kFlushToZeroAndDenormalsAreZero = (1u << 15) | (1u << 6);
  const unsigned caller_csr = _mm_getcsr();
  _mm_setcsr(caller_csr | kFlushToZeroAndDenormalsAreZero);
  const float tiny = std::numeric_limits<float>::denorm_min();
  StatusOr<Tensor> sum = RunOne(Type(E::kF32, {2}),
                                {Make<float>(E::kF32, {2}, {tiny, 0x1p-126f}),
                                 Make<float>(E::kF32, {2}, {tiny, -0x1p-127f})},
                                [](FunctionBuilder& b, std::span<Value* const> p) {
                                  return b.Add(p[0], p[1]);
                                });
  const unsigned csr_after = _mm_getcsr();
  _mm_setcsr(caller_csr);
  ASSERT_OK(sum.status());
  // denorm_min + denorm_min = 2^-148; 2^-126 - 2^-127 = 2^-127 (subnormal), not flushed to 0.
  ExpectTensor<float>(*sum, E::kF32, {2}, {0x1p-148f, 0x1p-127f});
  EXPECT_EQ(csr_after & kFlushToZeroAndDenormalsAreZero, kFlushToZeroAndDenormalsAreZero)
      << "the caller's FTZ/DAZ bits must be restored";
}
#endif

// A module with `main(tensor<4xf32>) -> tensor<4xf32>` returning its argument negated.
std::unique_ptr<Module> NegateModule() {
  Builder builder("errors");
  StatusOr<FunctionBuilder> fb =
      builder.BeginFunction("main", {Type(E::kF32, {4})}, {Type(E::kF32, {4})});
  ACCY_CHECK(fb.ok());
  StatusOr<Value*> negated = fb->Negate(fb->Parameter(0));
  ACCY_CHECK(negated.ok());
  ACCY_CHECK(fb->Return({*negated}).ok());
  StatusOr<std::unique_ptr<Module>> module = builder.Finish();
  ACCY_CHECK(module.ok());
  return std::move(*module);
}

TEST(EvaluatorErrorTest, WrongArgumentCountIsInvalidArgument) {
  std::unique_ptr<Module> module = NegateModule();
  StatusOr<std::vector<Tensor>> result = Evaluate(*module, "main", {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("expected 1 arguments, got 0"));
}

TEST(EvaluatorErrorTest, WrongArgumentTypeIsInvalidArgument) {
  std::unique_ptr<Module> module = NegateModule();
  std::vector<Tensor> arguments = {Make<float>(E::kF32, {3}, {1, 2, 3})};
  StatusOr<std::vector<Tensor>> result = Evaluate(*module, "main", arguments);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(),
              HasSubstr("argument 0 has type tensor<3xf32>, expected tensor<4xf32>"));
  std::vector<Tensor> wrong_element = {Make<int32_t>(E::kI32, {4}, {1, 2, 3, 4})};
  result = Evaluate(*module, "main", wrong_element);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("expected tensor<4xf32>"));
}

TEST(EvaluatorErrorTest, ArgumentWithoutDataIsInvalidArgument) {
  Builder builder("errors");
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("main", {Type(E::kF32, {})}, {Type(E::kF32, {})}));
  ASSERT_OK(fb.Return({fb.Parameter(0)}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  std::vector<Tensor> arguments = {Tensor()};  // tensor<f32> without data
  StatusOr<std::vector<Tensor>> result = Evaluate(*module, "main", arguments);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("argument 0 (tensor<f32>) has no data"));
}

TEST(EvaluatorErrorTest, NegativeMaxWhileIterationsIsInvalidArgument) {
  ReferenceOptions options;
  options.max_while_iterations = -5;
  StatusOr<std::vector<Tensor>> result = RunCountTo(10, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(),
              HasSubstr("ReferenceOptions::max_while_iterations must be >= 0, got -5"));
}

TEST(EvaluatorErrorTest, UnknownFunctionIsInvalidArgument) {
  std::unique_ptr<Module> module = NegateModule();
  StatusOr<std::vector<Tensor>> result = Evaluate(*module, "nope", {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("no function @nope"));
}

TEST(EvaluatorErrorTest, KernelCallIsUnimplemented) {
  StatusOr<std::vector<Tensor>> result = RunAll(
      {Type(E::kF32, {2})}, {Make<float>(E::kF32, {2}, {1, 2})},
      [](FunctionBuilder& b, std::span<Value* const> p) -> StatusOr<std::vector<Value*>> {
        KernelCallSpec spec;
        spec.target = "my_kernel";
        spec.version = 3;
        ACCY_ASSIGN_OR_RETURN(Operation* call, b.KernelCall({p[0]}, {Type(E::kF32, {2})}, spec));
        return std::vector<Value*>{call->result(0)};
      });
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(result.status().message(),
              HasSubstr("kernel_call target 'my_kernel' version 3 has no reference implementation"));
}

}  // namespace
}  // namespace accy::reference_test
