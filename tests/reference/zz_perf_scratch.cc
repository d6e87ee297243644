#include <chrono>
#include "gtest/gtest.h"
#include "tests/reference/reference_test_util.h"
#include "tests/test_util.h"
namespace accy::reference_test {
TEST(PerfScratch, Argmax1M) {
  const int64_t n = 1 << 20;
  ASSERT_OK_AND_ASSIGN(Tensor values, Tensor::Filled(Type(E::kF32, {n}), 1.0));
  ASSERT_OK_AND_ASSIGN(Tensor indices, Tensor::Filled(Type(E::kI32, {n}), 2.0));
  auto start = std::chrono::steady_clock::now();
  ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> results,
      RunAll({Type(E::kF32, {}), Type(E::kI32, {})}, {values, indices},
             [](FunctionBuilder& b, std::span<Value* const> p) -> StatusOr<std::vector<Value*>> {
               ACCY_ASSIGN_OR_RETURN(Value* init_value, b.ConstantScalar(E::kF32, 0));
               ACCY_ASSIGN_OR_RETURN(Value* init_index, b.ConstantScalar(E::kI32, -1));
               RegionBodyFn body = [](FunctionBuilder& r, std::span<Value* const> a) -> Status {
                 ACCY_ASSIGN_OR_RETURN(Value* take, r.Compare(a[2], a[0], "GT"));
                 ACCY_ASSIGN_OR_RETURN(Value* value, r.Select(take, a[2], a[0]));
                 ACCY_ASSIGN_OR_RETURN(Value* index, r.Select(take, a[3], a[1]));
                 return r.Return({value, index});
               };
               return b.Reduce({p[0], p[1]}, {init_value, init_index}, {0}, body);
             }));
  printf("argmax 1M: %.3f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}
}
