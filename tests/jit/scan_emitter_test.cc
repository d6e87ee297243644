// The scan (cumsum) emitter against the reference evaluator: every integer and float element
// type x shapes with the scanned dim first, middle, last, of size 0 and 1, lines wider than one
// tile, and sizes that are not multiples of the vector width. Bound: exact. Integers wrap; every
// float type accumulates in f64 and rounds each output once, which is what the reference does, so
// the results are bit-identical (NaN matches any NaN). Plus determinism at 1, 2 and 3 threads.
#include <cstring>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/jit/jit_numeric_util.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

struct ScanShape {
  std::vector<int64_t> dims;
  int64_t dimension;
};

// Every type runs kCoreShapes; f32, f16 and i32 run kShapes.
const std::vector<ScanShape> kCoreShapes = {
    {{0}, 0}, {{1023}, 0}, {{3, 5, 7}, 0}, {{3, 5, 7}, 2}, {{2, 0, 3}, 1}, {{5, 600}, 0},
};
const std::vector<ScanShape> kShapes = {
    {{0}, 0},         {{1}, 0},         {{7}, 0},          {{1023}, 0},      {{3, 5, 7}, 0},
    {{3, 5, 7}, 1},   {{3, 5, 7}, 2},   {{2, 0, 3}, 1},    {{2, 0, 3}, 0},   {{17, 300}, 0},
    {{300, 17}, 1},   {{5, 600}, 0},    {{1, 1, 9}, 2},
};

std::unique_ptr<Module> CumsumProgram(ElementType type, const std::vector<ScanShape>& shapes,
                                      std::vector<TensorType>* params) {
  Builder builder("cumsum_test");
  for (const auto& s : shapes) params->push_back(builder.Type(type, s.dims).value());
  auto f = builder.BeginFunction("main", *params, *params).value();
  std::vector<Value*> outs;
  for (size_t s = 0; s < shapes.size(); ++s) {
    outs.push_back(f.Cumsum(f.Parameter(static_cast<int64_t>(s)), shapes[s].dimension).value());
  }
  if (!f.Return(outs).ok()) return nullptr;
  return builder.Finish().value();
}

TEST(ScanEmitterTest, CumsumMatchesReferenceForEveryElementTypeAndDim) {
  for (ElementType type : kAllElementTypes) {
    if (type == ElementType::kI1) continue;  // cumsum is defined on integers and floats
    SCOPED_TRACE(std::string(ElementTypeName(type)));
    const bool full = type == ElementType::kF32 || type == ElementType::kF16 ||
                      type == ElementType::kI32;
    const std::vector<ScanShape>& shapes = full ? kShapes : kCoreShapes;
    std::vector<TensorType> params;
    auto module = CumsumProgram(type, shapes, &params);
    ASSERT_NE(module, nullptr);
    std::vector<Tensor> args;
    // Odd shapes see the special values (NaN, +-inf, -0, INT_MIN), even ones random data.
    for (size_t p = 0; p < params.size(); ++p) args.push_back(MakeInput(params[p], p % 2 ? p : 3 * p + 2));
    ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
    for (const WorkItem& item : program->plan().items()) EXPECT_EQ(item.kind, WorkKind::kScan);
    ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args, 2));
    for (size_t s = 0; s < shapes.size(); ++s) {
      EXPECT_TRUE(Matches(actual[s], expected[s], 0))
          << params[s].ToString() << " along dim " << shapes[s].dimension;
    }
  }
}

TEST(ScanEmitterTest, BitsAreEqualAtOneTwoAndThreeThreads) {
  const std::vector<ScanShape> shapes = {{{256, 1000}, 1}, {{1000, 1100}, 0}, {{20, 50, 40}, 1}};
  std::vector<TensorType> params;
  auto module = CumsumProgram(ElementType::kF32, shapes, &params);
  ASSERT_NE(module, nullptr);
  std::vector<Tensor> args;
  for (size_t p = 0; p < params.size(); ++p) args.push_back(MakeInput(params[p], 3 * p + 2));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  for (const CompiledItem& item : program->compiled().items()) EXPECT_GT(item.launch.block_count, 2);
  ASSERT_OK_AND_ASSIGN(auto one, program->Run(args, 1));
  for (int threads : {2, 3}) {
    ASSERT_OK_AND_ASSIGN(auto many, program->Run(args, threads));
    for (size_t s = 0; s < shapes.size(); ++s) {
      EXPECT_EQ(0, std::memcmp(one[s].data(), many[s].data(), static_cast<size_t>(one[s].byte_size())))
          << threads << " threads, shape " << s;
    }
  }
}

}  // namespace
}  // namespace accy::jit::testing
