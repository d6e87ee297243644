// Row pipelines with outputs large enough to be streamed (jit/streaming_store.h) and rows of
// whole 64-byte lines: a row whose output starts on a line streams each line from registers,
// any other row goes through the stack stage (jit/row_pipeline_emitter.cc EmitOutputLoop). The
// two paths give the same bits: the same program run into a caller output that starts on a line
// and into one 4 bytes past a line (every row misaligned) must agree bit for bit, at 1 and 2
// threads, and match the reference evaluator within the row pipelines' bounds (softmax 8 ulp:
// its chunk sums add in f32; layer norm 4). f64 rows (8 per line) too.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/test_util.h"

namespace accy {
namespace {

// softmax(x) over rows, or a layer norm (no affine) when `norm`.
std::unique_ptr<Module> Pipeline(ElementType type, int64_t rows, int64_t columns, bool norm) {
  Builder builder("streamed_rows");
  const TensorType full = *builder.Type(type, {rows, columns});
  const TensorType row = *builder.Type(type, {rows});
  FunctionBuilder f = *builder.BeginFunction("main", {full}, {full});
  Value* x = f.Parameter(0);
  auto stat = [&](Value* v, const char* reducer, double init) {
    Value* start = *f.ConstantScalar(type, init);
    return *f.BroadcastInDim(*f.Reduce(v, start, row, reducer, {1}), full, {0});
  };
  Value* out = nullptr;
  if (!norm) {
    Value* e = *f.Exponential(*f.Subtract(x, stat(x, "max", -INFINITY)));
    out = *f.Divide(e, stat(e, "sum", 0.0));
  } else {
    Value* inv_n = *f.BroadcastInDim(*f.ConstantScalar(type, 1.0 / static_cast<double>(columns)), full, {});
    Value* centered = *f.Subtract(x, *f.Multiply(stat(x, "sum", 0.0), inv_n));
    Value* var = *f.Multiply(stat(*f.Multiply(centered, centered), "sum", 0.0), inv_n);
    Value* eps = *f.BroadcastInDim(*f.ConstantScalar(type, 1e-5), full, {});
    out = *f.Multiply(centered, *f.Rsqrt(*f.Add(var, eps)));
  }
  EXPECT_OK(f.Return({out}));
  return *builder.Finish();
}

TEST(StreamedRowsTest, LineAlignedAndMisalignedOutputsGiveTheSameBits) {
  struct Case {
    ElementType type;
    bool norm;
    int64_t ulp;
  };
  for (const Case& c : {Case{ElementType::kF32, false, 8}, Case{ElementType::kF32, true, 4},
                        Case{ElementType::kF64, false, 8}}) {
    const int64_t columns = 1024;
    const int64_t rows = c.type == ElementType::kF32 ? 2048 : 1024;  // 8 MiB: streamed
    SCOPED_TRACE(std::string(ElementTypeName(c.type)) + (c.norm ? " layer norm" : " softmax"));
    std::unique_ptr<Module> module = Pipeline(c.type, rows, columns, c.norm);
    const TensorType type = *TensorType::Create(c.type, {rows, columns});
    Tensor x = *Tensor::Allocate(type);
    for (int64_t i = 0; i < rows * columns; ++i) {
      x.SetFromDouble(i, 4.0 * std::sin(0.37 * static_cast<double>(i % 9973)) +
                             0.01 * static_cast<double>(i / columns % 17));
    }
    const std::vector<Tensor> inputs = {x};
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", inputs));
    const size_t bytes = *type.ByteSize();
    for (int threads : {1, 2}) {
      EngineOptions options;
      options.num_threads = threads;
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, engine->Compile(*module));
      // One buffer, the output placed on a line and 4 bytes past one.
      std::vector<uint8_t> memory(bytes + 128);
      uint8_t* line = memory.data() + (64 - reinterpret_cast<uintptr_t>(memory.data()) % 64) % 64;
      ASSERT_OK_AND_ASSIGN(Tensor aligned, Tensor::Borrow(type, line));
      std::vector<Tensor> outputs = {aligned};
      ASSERT_OK(executable->Run(inputs, outputs));
      std::vector<uint8_t> on_line(line, line + bytes);
      ASSERT_OK_AND_ASSIGN(Tensor shifted, Tensor::Borrow(type, line + 4));
      outputs = {shifted};
      ASSERT_OK(executable->Run(inputs, outputs));
      EXPECT_EQ(0, std::memcmp(on_line.data(), line + 4, bytes)) << threads << " threads";
      TensorComparison compared = CompareUlp(shifted, expected[0], c.ulp);
      EXPECT_TRUE(compared.ok) << compared.message;
    }
  }
}

}  // namespace
}  // namespace accy
