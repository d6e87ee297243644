// The target ISA (include/accy/isa.h): parsing, the process ISA, EngineOptions::max_isa (errors
// and numerics at every level the host allows), and bitcast_convert of i1 (bit-exact against
// the reference at 1 and 2 threads). ACCY_MAX_ISA itself is tested through the CLI
// (tests/tools/cli_test.cc), since it is read once per process.
#include <random>

#include "accy/builder.h"
#include "accy/engine.h"
#include "accy/isa.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;

TEST(IsaTest, ParseIsaAcceptsTheLevelNamesAndNamesABadOne) {
  for (Isa isa : {Isa::kX86_64, Isa::kAvx2, Isa::kAvx512}) {
    ASSERT_OK_AND_ASSIGN(Isa parsed, ParseIsa(IsaName(isa)));
    EXPECT_EQ(parsed, isa);
  }
  ASSERT_OK_AND_ASSIGN(Isa upper, ParseIsa("AVX2"));
  EXPECT_EQ(upper, Isa::kAvx2);
  StatusOr<Isa> bad = ParseIsa("avx3");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("'avx3' is not an ISA level (expected avx512, avx2 or x86-64)"));
}

TEST(IsaTest, ProcessIsaIsTheHostsUnderTheCap) {
  ASSERT_OK_AND_ASSIGN(Isa cap, ProcessIsaCap());
  ASSERT_OK_AND_ASSIGN(Isa isa, ProcessIsa());
  EXPECT_EQ(isa, std::min(HostIsa(), cap));
  EXPECT_THAT(HostCpuDescription(), HasSubstr(std::string("host ISA ") +
                                              std::string(IsaName(HostIsa()))));
}

TEST(IsaTest, EngineMaxIsaAboveTheProcessIsaFailsNamingBoth) {
  ASSERT_OK_AND_ASSIGN(Isa process, ProcessIsa());
  if (process == Isa::kAvx512) GTEST_SKIP() << "nothing is above the process ISA avx512";
  EngineOptions options;
  options.max_isa = Isa::kAvx512;
  StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(options);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(),
              HasSubstr(std::string("max_isa avx512 asks for more than the process ISA ") +
                        std::string(IsaName(process))));
}

TensorType F32(std::vector<int64_t> dims) { return *TensorType::Create(ElementType::kF32, dims); }

// tanh/exp chain with a broadcast bias, a softmax row pipeline and a small JIT dot_general.
std::unique_ptr<Module> MixedProgram() {
  Builder builder("isa");
  FunctionBuilder f =
      *builder.BeginFunction("main", {F32({24, 40}), F32({40}), F32({40, 24})}, {F32({24, 24})});
  Value* x = f.Parameter(0);
  Value* bias = *f.BroadcastInDim(f.Parameter(1), F32({24, 40}), {1});
  Value* h = *f.Tanh(*f.Add(x, bias));
  Value* max = *f.Reduce(h, *f.ConstantScalar(ElementType::kF32, -INFINITY), F32({24}), "max", {1});
  Value* e = *f.Exponential(*f.Subtract(h, *f.BroadcastInDim(max, F32({24, 40}), {0})));
  Value* sum = *f.Reduce(e, *f.ConstantScalar(ElementType::kF32, 0), F32({24}), "sum", {1});
  Value* p = *f.Divide(e, *f.BroadcastInDim(sum, F32({24, 40}), {0}));
  Value* y = *f.DotGeneral(p, f.Parameter(2), F32({24, 24}), {1}, {0}, {}, {});
  EXPECT_TRUE(f.Return({y}).ok());
  return *builder.Finish();
}

std::vector<Tensor> RandomInputs(const Function& function, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-2, 2);
  std::vector<Tensor> inputs;
  for (const TensorType& type : function.parameter_types()) {
    Tensor t = *Tensor::Allocate(type);
    for (int64_t i = 0; i < type.element_count(); ++i) t.SetFromDouble(i, dist(rng));
    inputs.push_back(std::move(t));
  }
  return inputs;
}

TEST(IsaTest, EveryLevelUpToTheProcessIsaMatchesTheReference) {
  ASSERT_OK_AND_ASSIGN(Isa process, ProcessIsa());
  std::unique_ptr<Module> module = MixedProgram();
  const std::vector<Tensor> inputs = RandomInputs(*module->FindFunction("main"), 3);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", inputs));
  for (Isa isa : {Isa::kX86_64, Isa::kAvx2, Isa::kAvx512}) {
    if (isa > process) continue;
    SCOPED_TRACE(IsaName(isa));
    EngineOptions options;
    options.max_isa = isa;
    options.num_threads = 1;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
    EXPECT_EQ(engine->options().max_isa, isa);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(inputs));
    TensorComparison c = CompareClose(outputs[0], expected[0], 1e-5, 1e-4);
    EXPECT_TRUE(c.ok) << c.message;
  }
}

// Runs `module` through the engine at 1 and 2 threads: every result bit for bit `expected`.
void ExpectSameBitsAtOneAndTwoThreads(const Module& module, const std::vector<Tensor>& inputs,
                                      const std::vector<Tensor>& expected) {
  for (int threads : {1, 2}) {
    EngineOptions options;
    options.num_threads = threads;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(module));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(inputs));
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t r = 0; r < outputs.size(); ++r) {
      ASSERT_EQ(outputs[r].byte_size(), expected[r].byte_size());
      EXPECT_EQ(std::memcmp(outputs[r].data(), expected[r].data(),
                            static_cast<size_t>(expected[r].byte_size())), 0)
          << "result " << r << " at " << threads << " threads";
    }
  }
}

// Spec "bitcast_convert" with num_bits(i1) = 1: i1[n, 64] <-> i64[n] (element j of a row is bit
// j), over enough bytes for several work-item blocks, bit for bit at 1 and 2 threads.
TEST(BitcastConvertI1Test, PacksAndUnpacksBitsLsbFirstLikeTheReference) {
  const int64_t n = 5000;  // 40,000 packed bytes
  const TensorType bools = *TensorType::Create(ElementType::kI1, {n, 64});
  const TensorType words = *TensorType::Create(ElementType::kI64, {n});
  Builder builder("bits");
  FunctionBuilder f = *builder.BeginFunction("main", {bools, words}, {words, bools});
  Value* packed = *f.BitcastConvert(f.Parameter(0), words);
  Value* unpacked = *f.BitcastConvert(f.Parameter(1), bools);
  ASSERT_OK(f.Return({packed, unpacked}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  std::mt19937_64 rng(11);
  Tensor b = *Tensor::Allocate(bools);
  for (int64_t i = 0; i < b.element_count(); ++i) b.SetFromDouble(i, static_cast<double>(rng() & 1));
  Tensor w = *Tensor::Allocate(words);
  auto* word_data = static_cast<uint64_t*>(w.data());
  for (int64_t i = 0; i < n; ++i) word_data[i] = rng();
  word_data[0] = 0x0123456789ABCDEFull;
  const std::vector<Tensor> inputs = {b, w};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", inputs));
  // Element j of the i1 side is bit j of the word (the StableHLO interpreter's order).
  const auto* bits = static_cast<const uint8_t*>(expected[1].data());
  for (int j = 0; j < 64; ++j) EXPECT_EQ(bits[j], (0x0123456789ABCDEFull >> j) & 1) << j;
  ExpectSameBitsAtOneAndTwoThreads(*module, inputs, expected);
}

// flash_attention's vectors are one register of the target (16, 8 or 4 query rows), but its
// key tiles and head-dim chunks are the same on every ISA: the same bits at every level, with a
// constant causal mask (read from a lanes-major copy of each level's width).
TEST(IsaTest, FlashAttentionGivesTheSameBitsAtEveryLevel) {
  const int64_t heads = 3, seq = 37, dim = 20;
  Builder builder("attention");
  const TensorType qkv = *TensorType::Create(ElementType::kF32, {heads, seq, dim});
  const TensorType scores = *TensorType::Create(ElementType::kF32, {heads, seq, seq});
  const TensorType rows = *TensorType::Create(ElementType::kF32, {heads, seq});
  FunctionBuilder f = *builder.BeginFunction("main", {qkv, qkv, qkv}, {qkv});
  Value* qk = *f.DotGeneral(f.Parameter(0), f.Parameter(1), scores, {2}, {2}, {0}, {0});
  Value* scaled = *f.Multiply(qk, *f.BroadcastInDim(*f.ConstantScalar(ElementType::kF32, 0.25), scores, {}));
  // A constant causal mask: varies along the query dim, so the kernel reads a lanes-major copy.
  std::vector<float> mask(static_cast<size_t>(seq * seq));
  for (int64_t i = 0; i < seq; ++i) {
    for (int64_t j = 0; j < seq; ++j) mask[static_cast<size_t>(i * seq + j)] = j <= i ? 0.0f : -INFINITY;
  }
  Tensor mask_tensor = *Tensor::FromVector<float>(*TensorType::Create(ElementType::kF32, {seq, seq}), mask);
  scaled = *f.Add(scaled, *f.BroadcastInDim(*f.Constant(mask_tensor), scores, {1, 2}));
  Value* max = *f.Reduce(scaled, *f.ConstantScalar(ElementType::kF32, -INFINITY), rows, "max", {2});
  Value* e = *f.Exponential(*f.Subtract(scaled, *f.BroadcastInDim(max, scores, {0, 1})));
  Value* sum = *f.Reduce(e, *f.ConstantScalar(ElementType::kF32, 0), rows, "sum", {2});
  Value* p = *f.Divide(e, *f.BroadcastInDim(sum, scores, {0, 1}));
  ASSERT_OK(f.Return({*f.DotGeneral(p, f.Parameter(2), qkv, {2}, {1}, {0}, {0})}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  const std::vector<Tensor> inputs = RandomInputs(*module->FindFunction("main"), 9);
  ASSERT_OK_AND_ASSIGN(Isa process, ProcessIsa());
  std::optional<Tensor> first;
  for (Isa isa : {Isa::kX86_64, Isa::kAvx2, Isa::kAvx512}) {
    if (isa > process) continue;
    SCOPED_TRACE(IsaName(isa));
    EngineOptions options;
    options.max_isa = isa;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
    EXPECT_EQ(exe->Stats().work_items_by_kind.count("flash_attention"), 1u) << exe->plan_text();
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, exe->Run(inputs));
    if (!first.has_value()) {
      first = outputs[0];
      ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", inputs));
      TensorComparison c = CompareClose(outputs[0], expected[0], 1e-5, 1e-4);
      EXPECT_TRUE(c.ok) << c.message;
      continue;
    }
    EXPECT_EQ(std::memcmp(first->data(), outputs[0].data(), static_cast<size_t>(first->byte_size())), 0);
  }
}

// Regression: an i1 bitcast whose result is an intermediate used to alias its input's buffer
// (as byte-preserving bitcasts do) and read or wrote past it. compare -> pack -> convert, and
// i8 -> unpack -> convert -> sum over enough bytes for several blocks, bit for bit.
TEST(BitcastConvertI1Test, IntermediateResultsGetTheirOwnBuffers) {
  const int64_t n = 20000;
  Builder builder("bits");
  const TensorType x_type = *TensorType::Create(ElementType::kF32, {n, 8});
  const TensorType bytes = *TensorType::Create(ElementType::kI8, {n});
  const TensorType bools = *TensorType::Create(ElementType::kI1, {n, 8});
  const TensorType i32 = *TensorType::Create(ElementType::kI32, {n});
  const TensorType total = *TensorType::Create(ElementType::kI32, {});
  FunctionBuilder f = *builder.BeginFunction("main", {x_type, bytes}, {i32, total});
  Value* zero = *f.BroadcastInDim(*f.ConstantScalar(ElementType::kF32, 0), x_type, {});
  Value* positive = *f.Compare(f.Parameter(0), zero, "GT");
  Value* packed = *f.Convert(*f.BitcastConvert(positive, bytes), ElementType::kI32);
  Value* unpacked = *f.Convert(*f.BitcastConvert(*f.Add(f.Parameter(1), f.Parameter(1)), bools), ElementType::kI32);
  Value* sum = *f.Reduce(unpacked, *f.ConstantScalar(ElementType::kI32, 0), total, "sum", {0, 1});
  ASSERT_OK(f.Return({packed, sum}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  const std::vector<Tensor> inputs = RandomInputs(*module->FindFunction("main"), 17);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*module, "main", inputs));
  ExpectSameBitsAtOneAndTwoThreads(*module, inputs, expected);
}

}  // namespace
}  // namespace accy
