// Helpers for the reference evaluator tests: build a one-function module with accy::Builder,
// evaluate it with accy::Evaluate, and compare results exactly.
//
// Header-only, for tests/reference/*.cc. Helpers abort (ACCY_CHECK) only on mistakes in the
// test itself (a bad literal type); errors of the code under test come back as statuses.
#ifndef ACCY_TESTS_REFERENCE_REFERENCE_TEST_UTIL_H_
#define ACCY_TESTS_REFERENCE_REFERENCE_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "accy/status.h"
#include "accy/tensor.h"
#include "accy/types.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"

namespace accy::reference_test {

using E = ElementType;
// Builds a function body from its parameters; returns the values to return.
using BodyFn =
    std::function<StatusOr<std::vector<Value*>>(FunctionBuilder&, std::span<Value* const>)>;

inline TensorType Type(ElementType element_type, std::vector<int64_t> dims) {
  StatusOr<TensorType> type = TensorType::Create(element_type, std::move(dims));
  ACCY_CHECK(type.ok());
  return *type;
}

template <typename T>
Tensor Make(ElementType element_type, std::vector<int64_t> dims, const std::vector<T>& values) {
  StatusOr<Tensor> tensor = Tensor::FromVector(Type(element_type, std::move(dims)), values);
  ACCY_CHECK(tensor.ok());
  return *tensor;
}

// Builds `main(arguments' types) -> result_types` with `body` and evaluates it on `arguments`.
inline StatusOr<std::vector<Tensor>> RunAll(std::vector<TensorType> result_types,
                                            std::vector<Tensor> arguments, const BodyFn& body,
                                            const ReferenceOptions& options = {}) {
  Builder builder("reference_test");
  std::vector<TensorType> parameter_types;
  for (const Tensor& argument : arguments) parameter_types.push_back(argument.type());
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder fb,
                        builder.BeginFunction("main", parameter_types, result_types));
  std::vector<Value*> parameters;
  for (size_t i = 0; i < arguments.size(); ++i) {
    parameters.push_back(fb.Parameter(static_cast<int64_t>(i)));
  }
  ACCY_ASSIGN_OR_RETURN(std::vector<Value*> results, body(fb, parameters));
  ACCY_RETURN_IF_ERROR(fb.Return(std::move(results)));
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, builder.Finish());
  return Evaluate(*module, "main", arguments, options);
}

// As RunAll for a body with one result, built by a function returning a single value.
inline StatusOr<Tensor> RunOne(
    const TensorType& result_type, std::vector<Tensor> arguments,
    const std::function<StatusOr<Value*>(FunctionBuilder&, std::span<Value* const>)>& body) {
  ACCY_ASSIGN_OR_RETURN(
      std::vector<Tensor> results,
      RunAll({result_type}, std::move(arguments),
             [&](FunctionBuilder& b, std::span<Value* const> p) -> StatusOr<std::vector<Value*>> {
               ACCY_ASSIGN_OR_RETURN(Value* value, body(b, p));
               return std::vector<Value*>{value};
             }));
  if (results.size() != 1) return absl::InternalError("expected one result");
  return std::move(results[0]);
}

// Exact comparison (NaN matches NaN, -0 differs from +0), reporting the first bad element.
template <typename T>
void ExpectTensor(const Tensor& actual, ElementType element_type, std::vector<int64_t> dims,
                  const std::vector<T>& expected) {
  TensorComparison comparison =
      CompareExact(actual, Make(element_type, std::move(dims), expected));
  EXPECT_TRUE(comparison.ok) << comparison.message << "\nactual: " << actual.ToString(64);
}

}  // namespace accy::reference_test

#endif  // ACCY_TESTS_REFERENCE_REFERENCE_TEST_UTIL_H_
