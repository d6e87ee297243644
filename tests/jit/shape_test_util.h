// The table-driven harness of the shape emitter tests: a list of variants of one op (operand
// shapes, fixed integer index operands, the op built from them) compiled as one program per
// element type, run through the JIT and through the reference evaluator, and compared bit for
// bit (data movement must keep every NaN payload), reporting the first bad element.
// Header-only, for tests/jit only; not thread-safe.
#ifndef ACCY_TESTS_JIT_SHAPE_TEST_UTIL_H_
#define ACCY_TESTS_JIT_SHAPE_TEST_UTIL_H_

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/jit/jit_numeric_util.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace accy::jit::testing {

// An integer operand with fixed values (start indices), stored in `type` (values truncated to
// its width, so -1 in u64 is UINT64_MAX).
struct IndexArg {
  ElementType type = ElementType::kI32;
  std::vector<int64_t> dims;
  std::vector<int64_t> values;
};

// Builds the op under test from its data operands (element type `type`) and index operands.
using ShapeBuildFn = std::function<StatusOr<Value*>(
    FunctionBuilder& f, ElementType type, const std::vector<Value*>& data,
    const std::vector<Value*>& indices)>;

struct ShapeVariant {
  std::vector<std::vector<int64_t>> data;  // dims of the data operands
  std::vector<IndexArg> indices;
  ShapeBuildFn build;
};

inline Tensor MakeIndexTensor(const IndexArg& arg) {
  Tensor t = Tensor::Allocate(TensorType::Create(arg.type, arg.dims).value()).value();
  const int64_t width = ElementByteWidth(arg.type);
  for (int64_t i = 0; i < t.element_count(); ++i) {
    const int64_t v = arg.values[static_cast<size_t>(i) % arg.values.size()];
    std::memcpy(static_cast<uint8_t*>(t.data()) + i * width, &v, static_cast<size_t>(width));
  }
  return t;
}

// Bitwise equality; the failure names the first differing element and both values.
inline ::testing::AssertionResult SameBits(const Tensor& actual, const Tensor& expected) {
  if (actual.type() != expected.type()) {
    return ::testing::AssertionFailure() << "type " << actual.type().ToString() << " vs "
                                         << expected.type().ToString();
  }
  const int64_t width = ElementByteWidth(expected.element_type());
  const auto* a = static_cast<const uint8_t*>(actual.data());
  const auto* e = static_cast<const uint8_t*>(expected.data());
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    if (std::memcmp(a + i * width, e + i * width, static_cast<size_t>(width)) != 0) {
      return ::testing::AssertionFailure()
             << "first bad index " << i << " of " << expected.type().ToString() << ": got "
             << actual.GetAsDouble(i) << ", expected " << expected.GetAsDouble(i);
    }
  }
  return ::testing::AssertionSuccess();
}

// Builds main(...) -> one result per variant; `types_only` skips the return (the first pass
// learns the result types).
inline StatusOr<std::unique_ptr<Module>> BuildVariants(ElementType type,
                                                       const std::vector<ShapeVariant>& variants,
                                                       const std::vector<TensorType>* results,
                                                       std::vector<TensorType>* result_types) {
  Builder builder("shape_test");
  std::vector<TensorType> params;
  for (const ShapeVariant& v : variants) {
    for (const auto& dims : v.data) params.push_back(TensorType::Create(type, dims).value());
    for (const IndexArg& arg : v.indices) {
      params.push_back(TensorType::Create(arg.type, arg.dims).value());
    }
  }
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f,
                        builder.BeginFunction("main", params,
                                              results != nullptr ? *results
                                                                 : std::vector<TensorType>{}));
  std::vector<Value*> outs;
  int64_t p = 0;
  for (const ShapeVariant& v : variants) {
    std::vector<Value*> data, indices;
    for (size_t i = 0; i < v.data.size(); ++i) data.push_back(f.Parameter(p++));
    for (size_t i = 0; i < v.indices.size(); ++i) indices.push_back(f.Parameter(p++));
    ACCY_ASSIGN_OR_RETURN(Value * out, v.build(f, type, data, indices));
    outs.push_back(out);
    if (result_types != nullptr) result_types->push_back(out->type());
  }
  if (results == nullptr) return std::unique_ptr<Module>();
  ACCY_RETURN_IF_ERROR(f.Return(outs));
  return builder.Finish();
}

inline std::vector<Tensor> MakeArguments(ElementType type,
                                         const std::vector<ShapeVariant>& variants) {
  std::vector<Tensor> args;
  uint64_t seed = 1;
  for (const ShapeVariant& v : variants) {
    for (const auto& dims : v.data) {
      args.push_back(MakeInput(TensorType::Create(type, dims).value(), seed++));
    }
    for (const IndexArg& arg : v.indices) args.push_back(MakeIndexTensor(arg));
  }
  return args;
}

// Compiles every variant as one program for `type`, runs it on `args` (one per data operand,
// then the index operands, in variant order) at `threads` threads and compares each result bit
// for bit with the reference evaluator.
inline void CheckVariantsOn(const std::string& name, ElementType type,
                            const std::vector<ShapeVariant>& variants,
                            const std::vector<Tensor>& args, int threads = 2) {
  SCOPED_TRACE(name + " on " + std::string(ElementTypeName(type)));
  std::vector<TensorType> result_types;
  ASSERT_OK(BuildVariants(type, variants, nullptr, &result_types).status());
  ASSERT_OK_AND_ASSIGN(auto module, BuildVariants(type, variants, &result_types, nullptr));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  for (const WorkItem& item : program->plan().items()) {
    // reduce_window has an item kind of its own (the window kernel, or oneDNN pooling).
    EXPECT_EQ(item.kind, item.root->kind() == OpKind::kReduceWindow ? WorkKind::kReduceWindow
                                                                     : WorkKind::kShape)
        << item.root->name();
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, threads));
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(SameBits(actual[i], expected[i])) << "variant " << i;
  }
}

// CheckVariantsOn with MakeArguments' seeded inputs.
inline void CheckVariants(const std::string& name, ElementType type,
                          const std::vector<ShapeVariant>& variants, int threads = 2) {
  CheckVariantsOn(name, type, variants, MakeArguments(type, variants), threads);
}

}  // namespace accy::jit::testing

#endif  // ACCY_TESTS_JIT_SHAPE_TEST_UTIL_H_
