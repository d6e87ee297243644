// JIT tests beyond single ops: elided broadcasts (row, column, scalar, reordered dims, rank 3,
// rows crossing block boundaries), fusion clusters vs the reference, determinism across thread
// counts, the object cache and dumps, and the error paths (unsupported kinds, bad buffers).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "gtest/gtest.h"
#include "jit/kernel_runner.h"
#include "src/reference/reference_evaluator.h"
#include "tests/jit/jit_numeric_util.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

struct BroadcastCase {
  std::vector<int64_t> source_dims;
  std::vector<int64_t> out_dims;
  std::vector<int64_t> broadcast_dimensions;
};

// out = (broadcast(x) + y) * y for each case, one fused item each; compared exactly.
TEST(JitBroadcastTest, ElidedBroadcastsReadThroughIndexArithmetic) {
  const std::vector<BroadcastCase> cases = {
      {{3}, {4, 3}, {1}},             // row
      {{4, 1}, {4, 3}, {0, 1}},       // column (size-1 expansion)
      {{}, {4, 3}, {}},               // scalar
      {{3, 4}, {4, 3}, {1, 0}},       // reordered dims (a transposed read)
      {{5}, {2, 5, 7}, {1}},          // middle dim of rank 3
      {{2, 1, 7}, {2, 5, 7}, {0, 1, 2}},
      {{1000}, {37, 1000}, {1}},      // rows cross block boundaries (37000 elements)
      {{37, 1}, {37, 1000}, {0, 1}},
      {{1, 1}, {1, 17}, {0, 1}},
      {{7}, {0, 7}, {1}},             // zero-size output
  };
  for (ElementType type : {ElementType::kF32, ElementType::kI32, ElementType::kF16}) {
    Builder builder("broadcast_test");
    std::vector<TensorType> params, results;
    for (const auto& c : cases) {
      params.push_back(builder.Type(type, c.source_dims).value());
      params.push_back(builder.Type(type, c.out_dims).value());
      results.push_back(builder.Type(type, c.out_dims).value());
    }
    auto f = builder.BeginFunction("main", params, results).value();
    std::vector<Value*> outs;
    for (size_t i = 0; i < cases.size(); ++i) {
      Value* x = f.Parameter(static_cast<int64_t>(2 * i));
      Value* y = f.Parameter(static_cast<int64_t>(2 * i + 1));
      ASSERT_OK_AND_ASSIGN(Value * b, f.BroadcastInDim(x, results[i], cases[i].broadcast_dimensions));
      ASSERT_OK_AND_ASSIGN(Value * sum, f.Add(b, y));
      ASSERT_OK_AND_ASSIGN(Value * product, f.Multiply(sum, y));
      outs.push_back(product);
    }
    ASSERT_OK(f.Return(outs));
    ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
    std::vector<Tensor> args;
    for (size_t p = 0; p < params.size(); ++p) args.push_back(MakeInput(params[p], p + 7));
    ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
    // Every case is one elementwise_fusion item: no broadcast was materialized.
    EXPECT_EQ(program->plan().work_item_count(), static_cast<int64_t>(cases.size()));
    for (const WorkItem& item : program->plan().items()) {
      EXPECT_EQ(item.kind, WorkKind::kElementwiseFusion);
    }
    ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args, 2));
    for (size_t i = 0; i < cases.size(); ++i) {
      EXPECT_TRUE(Matches(actual[i], expected[i], 0))
          << ElementTypeName(type) << " case " << i << " " << results[i].ToString();
    }
  }
}

// y = tanh(a*b + c) * 0.5 + a, the benchmark chain, with 0.5 a broadcast scalar constant.
std::unique_ptr<Module> BuildChain(int64_t n) {
  Builder builder("chain");
  TensorType t = builder.Type(ElementType::kF32, {n}).value();
  auto f = builder.BeginFunction("main", {t, t, t}, {t}).value();
  Value* a = f.Parameter(0);
  Value* prod = f.Multiply(a, f.Parameter(1)).value();
  Value* sum = f.Add(prod, f.Parameter(2)).value();
  Value* th = f.Tanh(sum).value();
  Value* half = f.ConstantScalar(ElementType::kF32, 0.5).value();
  Value* half_n = f.BroadcastInDim(half, t, {}).value();
  Value* scaled = f.Multiply(th, half_n).value();
  Value* out = f.Add(scaled, a).value();
  (void)f.Return({out});
  return builder.Finish().value();
}

TEST(JitFusionTest, FusedTanhChainIsOneItemAndMatchesReference) {
  const int64_t n = 20000;
  auto module = BuildChain(n);
  TensorType t = TensorType::Create(ElementType::kF32, {n}).value();
  std::vector<Tensor> args = {MakeInput(t, 1), MakeInput(t, 2), MakeInput(t, 3)};
  ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  ASSERT_EQ(program->plan().work_item_count(), 1);
  EXPECT_EQ(program->plan().items()[0].kind, WorkKind::kElementwiseFusion);
  const CompiledItem& item = program->compiled().items()[0];
  EXPECT_EQ(item.inputs.size(), 3u);  // the 0.5 constant is folded into the code
  EXPECT_EQ(item.launch.block_count, BlockCount(n, kElementwiseBlockElements));
  ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args, 2));
  // tanh within 4 ulp (vector_math.h), then *0.5 + a: an absolute bound of a few ulp of 1.
  TensorComparison c = CompareClose(actual[0], expected[0], 2e-6, 2e-6);
  EXPECT_TRUE(c.ok) << c.message;
}

// An output of 8 MiB or more is written through the stack stage with non-temporal stores
// (jit/streaming_store.h): the values are the same as the reference's (within the chain's
// bound), identical at 1, 2 and 3 threads, and the odd length exercises the partial last run
// and the scalar tail.
TEST(JitFusionTest, StreamedChainOutputMatchesReferenceAtEveryThreadCount) {
  const int64_t n = (int64_t{2} << 20) + 37;  // 8 MiB + 148 bytes of f32
  auto module = BuildChain(n);
  TensorType t = TensorType::Create(ElementType::kF32, {n}).value();
  std::vector<Tensor> args = {MakeInput(t, 4), MakeInput(t, 5), MakeInput(t, 6)};
  ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  ASSERT_EQ(program->plan().work_item_count(), 1);
  ASSERT_OK_AND_ASSIGN(auto one, program->Run(args, 1));
  TensorComparison c = CompareClose(one[0], expected[0], 2e-6, 2e-6);
  EXPECT_TRUE(c.ok) << c.message;
  for (int threads : {2, 3}) {
    ASSERT_OK_AND_ASSIGN(auto other, program->Run(args, threads));
    EXPECT_EQ(0, std::memcmp(one[0].data(), other[0].data(),
                             static_cast<size_t>(one[0].byte_size())))
        << threads << " threads";
  }
}

// The streaming copy tests the output's alignment at run time: an output 4 bytes off a 64-byte
// boundary takes the plain-copy path and gets the same bits as an aligned one.
TEST(JitFusionTest, StreamedChainIntoMisalignedOutputGivesTheSameBits) {
  const int64_t n = (int64_t{2} << 20) + 5;
  auto module = BuildChain(n);
  TensorType t = TensorType::Create(ElementType::kF32, {n}).value();
  std::vector<Tensor> args = {MakeInput(t, 7), MakeInput(t, 8), MakeInput(t, 9)};
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  ASSERT_EQ(program->compiled().items().size(), 1u);
  ASSERT_OK_AND_ASSIGN(auto aligned, program->Run(args, 2));
  const CompiledItem& item = program->compiled().items()[0];
  std::vector<float> storage(static_cast<size_t>(n) + 32, -1.0f);
  float* out = storage.data();
  while (reinterpret_cast<uintptr_t>(out) % 64 != 4) ++out;
  void* buffers[] = {args[0].data(), args[1].data(), args[2].data(), out};
  const int64_t bytes = n * 4;
  const int64_t buffer_bytes[] = {bytes, bytes, bytes, bytes};
  RunOptions options;
  options.num_threads = 2;
  RunKernel(item.launch, buffers, buffer_bytes, options);
  EXPECT_EQ(0, std::memcmp(out, aligned[0].data(), static_cast<size_t>(bytes)));
  EXPECT_EQ(out[n], -1.0f);  // nothing written past the output
}

// Chains of exact ops must match the op-by-op reference bit for bit: f16/bf16 round after
// every op (not once at the end), integers wrap, and select/compare/convert chain in registers.
TEST(JitFusionTest, ExactChainsMatchReferenceBitForBit) {
  for (ElementType type : {ElementType::kF16, ElementType::kBF16, ElementType::kF32,
                           ElementType::kI8, ElementType::kU16, ElementType::kI64}) {
    Builder builder("exact_chain");
    TensorType t = builder.Type(type, {2, 1023}).value();
    auto f = builder.BeginFunction("main", {t, t, t}, {t}).value();
    Value *a = f.Parameter(0), *b = f.Parameter(1), *c = f.Parameter(2);
    Value* s = f.Add(f.Multiply(a, b).value(), c).value();
    Value* d = f.Subtract(s, a).value();
    Value* lt = f.Compare(d, b, "LT").value();
    Value* q = f.Divide(d, b).value();
    Value* m = f.Maximum(q, c).value();
    Value* sel = f.Select(lt, m, d).value();
    Value* wide = f.Convert(sel, ElementType::kF64).value();
    Value* back = f.Convert(wide, type).value();
    Value* out = f.Minimum(back, a).value();
    ASSERT_OK(f.Return({out}));
    ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
    std::vector<Tensor> args = {MakeInput(t, 11), MakeInput(t, 12), MakeInput(t, 13)};
    ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
    ASSERT_EQ(program->plan().work_item_count(), 1);
    ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args, 1));
    EXPECT_TRUE(Matches(actual[0], expected[0], 0)) << ElementTypeName(type);
  }
}

TEST(JitDeterminismTest, ResultsAreBitwiseEqualAtOneAndTwoThreads) {
  const int64_t n = 100003;  // 13 blocks, the last partial
  auto module = BuildChain(n);
  TensorType t = TensorType::Create(ElementType::kF32, {n}).value();
  std::vector<Tensor> args = {MakeInput(t, 4), MakeInput(t, 5), MakeInput(t, 6)};
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
  ASSERT_OK_AND_ASSIGN(auto one, program->Run(args, 1));
  ASSERT_OK_AND_ASSIGN(auto two, program->Run(args, 2));
  ASSERT_OK_AND_ASSIGN(auto three, program->Run(args, 3));
  EXPECT_EQ(0, std::memcmp(one[0].data(), two[0].data(), static_cast<size_t>(one[0].byte_size())));
  EXPECT_EQ(0, std::memcmp(one[0].data(), three[0].data(), static_cast<size_t>(one[0].byte_size())));
}

// Row broadcasts walk row segments that do not line up with blocks: which elements take the
// vector or the scalar path of a loop must depend only on the fixed blocks, never on how the
// blocks are split over threads (libm calls differ between the two paths; the inline f32
// tanh/exp do not, but the property is the kernel's, whatever its ops).
TEST(JitDeterminismTest, RowBroadcastChainsAreBitwiseEqualAtOneTwoAndThreeThreads) {
  // tanh(p0 * broadcast_in_dim(p1: [1023] -> [17, 1023])): 3 blocks, rows cross both boundaries.
  Builder repro_builder("row_tanh");
  TensorType rows = repro_builder.Type(ElementType::kF32, {17, 1023}).value();
  TensorType row = repro_builder.Type(ElementType::kF32, {1023}).value();
  {
    auto f = repro_builder.BeginFunction("main", {rows, row}, {rows}).value();
    Value* b = f.BroadcastInDim(f.Parameter(1), rows, {1}).value();
    Value* out = f.Tanh(f.Multiply(f.Parameter(0), b).value()).value();
    ASSERT_OK(f.Return({out}));
  }
  // A 3x4097 chain: exp(tanh(a * broadcast(r) + a)) * 0.5 + broadcast(r), 2 blocks.
  Builder chain_builder("row_chain");
  TensorType wide = chain_builder.Type(ElementType::kF32, {3, 4097}).value();
  TensorType wide_row = chain_builder.Type(ElementType::kF32, {4097}).value();
  {
    auto f = chain_builder.BeginFunction("main", {wide, wide_row}, {wide}).value();
    Value* a = f.Parameter(0);
    Value* r = f.BroadcastInDim(f.Parameter(1), wide, {1}).value();
    Value* th = f.Tanh(f.Add(f.Multiply(a, r).value(), a).value()).value();
    Value* e = f.Exponential(th).value();
    Value* half = f.BroadcastInDim(f.ConstantScalar(ElementType::kF32, 0.5).value(), wide, {}).value();
    Value* out = f.Add(f.Multiply(e, half).value(), r).value();
    ASSERT_OK(f.Return({out}));
  }
  struct Case {
    std::unique_ptr<Module> module;
    std::vector<Tensor> args;
  };
  std::vector<Case> cases;
  cases.push_back({repro_builder.Finish().value(), {MakeInput(rows, 21), MakeInput(row, 22)}});
  cases.push_back({chain_builder.Finish().value(), {MakeInput(wide, 23), MakeInput(wide_row, 24)}});
  for (Case& c : cases) {
    const std::string name = c.module->name();
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(c.module)));
    ASSERT_EQ(program->plan().work_item_count(), 1) << name;
    ASSERT_GE(program->compiled().items()[0].launch.block_count, 2) << name;
    ASSERT_OK_AND_ASSIGN(auto one, program->Run(c.args, 1));
    const size_t bytes = static_cast<size_t>(one[0].byte_size());
    for (int threads : {2, 3}) {
      ASSERT_OK_AND_ASSIGN(auto other, program->Run(c.args, threads));
      const float* x = static_cast<const float*>(one[0].data());
      const float* y = static_cast<const float*>(other[0].data());
      int64_t differing = 0, first = -1;
      for (size_t i = 0; i < bytes / sizeof(float); ++i) {
        if (std::memcmp(&x[i], &y[i], sizeof(float)) != 0) {
          if (first < 0) first = static_cast<int64_t>(i);
          ++differing;
        }
      }
      EXPECT_EQ(differing, 0) << name << " at " << threads << " threads, first at " << first;
    }
  }
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::filesystem::path FreshDirectory(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             (name + "_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
              "_" + std::to_string(reinterpret_cast<uintptr_t>(&name) & 0xFFFF));
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(JitCompilerTest, SecondCompileLoadsTheObjectFromTheCache) {
  const auto dir = FreshDirectory("accy_jit_cache_test");
  JitCompilerOptions options;
  options.cache_dir = dir.string();
  TensorType t = TensorType::Create(ElementType::kF32, {1023}).value();
  std::vector<Tensor> args = {MakeInput(t, 1), MakeInput(t, 2), MakeInput(t, 3)};
  ASSERT_OK_AND_ASSIGN(auto cold, JitProgram::Create(BuildChain(1023), "main", options));
  EXPECT_EQ(cold->compiled().compiler().stats().modules_compiled, 1);
  EXPECT_EQ(cold->compiled().compiler().stats().modules_from_cache, 0);
  ASSERT_OK_AND_ASSIGN(auto warm, JitProgram::Create(BuildChain(1023), "main", options));
  EXPECT_EQ(warm->compiled().compiler().stats().modules_compiled, 0);
  EXPECT_EQ(warm->compiled().compiler().stats().modules_from_cache, 1);
  std::cout << "chain compile: cold " << cold->compiled().compile_milliseconds() << " ms, cached "
            << warm->compiled().compile_milliseconds() << " ms\n";
  ASSERT_OK_AND_ASSIGN(auto a, cold->Run(args));
  ASSERT_OK_AND_ASSIGN(auto b, warm->Run(args));
  EXPECT_EQ(0, std::memcmp(a[0].data(), b[0].data(), static_cast<size_t>(a[0].byte_size())));
  std::filesystem::remove_all(dir);
}

// A truncated, overwritten or swapped cache entry is ignored: the module is compiled again (counted
// as compiled), the entry is rewritten, and the next compile loads it.
TEST(JitCompilerTest, CorruptedCacheEntryIsRecompiledAndRewritten) {
  const auto dir = FreshDirectory("accy_jit_cache_corrupt_test");
  JitCompilerOptions options;
  options.cache_dir = dir.string();
  TensorType t = TensorType::Create(ElementType::kF32, {1023}).value();
  std::vector<Tensor> args = {MakeInput(t, 1), MakeInput(t, 2), MakeInput(t, 3)};
  ASSERT_OK_AND_ASSIGN(auto cold, JitProgram::Create(BuildChain(1023), "main", options));
  ASSERT_OK_AND_ASSIGN(auto expected, cold->Run(args));
  std::vector<std::filesystem::path> entries;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) entries.push_back(entry.path());
  ASSERT_EQ(entries.size(), 1u);
  const std::filesystem::path entry = entries[0];
  const uintmax_t size = std::filesystem::file_size(entry);
  // Another program's entry, valid in itself (a break-it review's swapped cache files: loaded,
  // it failed every run with "symbol ... not found").
  const auto other_dir = FreshDirectory("accy_jit_cache_corrupt_test_other");
  JitCompilerOptions other_options;
  other_options.cache_dir = other_dir.string();
  ASSERT_OK(JitProgram::Create(BuildChain(511), "main", other_options).status());
  std::filesystem::path other_entry;
  for (const auto& e : std::filesystem::directory_iterator(other_dir)) other_entry = e.path();
  ASSERT_FALSE(other_entry.empty());
  // Truncated, overwritten with garbage, one flipped byte deep inside (the headers parse), and
  // replaced by the other program's entry.
  const std::vector<std::string> corruptions = {"truncate", "garbage", "flip", "swap"};
  for (const std::string& corruption : corruptions) {
    SCOPED_TRACE(corruption);
    if (corruption == "swap") {
      std::filesystem::copy_file(other_entry, entry,
                                 std::filesystem::copy_options::overwrite_existing);
    } else if (corruption == "truncate") {
      std::filesystem::resize_file(entry, size / 2);
    } else if (corruption == "garbage") {
      std::ofstream(entry, std::ios::binary | std::ios::trunc) << std::string(size, 'x');
    } else {
      std::string bytes = ReadFile(entry);
      ASSERT_EQ(bytes.size(), size);
      bytes[bytes.size() / 2] ^= 0x5a;
      std::ofstream(entry, std::ios::binary | std::ios::trunc) << bytes;
    }
    ASSERT_OK_AND_ASSIGN(auto recompiled, JitProgram::Create(BuildChain(1023), "main", options));
    EXPECT_EQ(recompiled->compiled().compiler().stats().modules_compiled, 1);
    EXPECT_EQ(recompiled->compiled().compiler().stats().modules_from_cache, 0);
    ASSERT_OK_AND_ASSIGN(auto actual, recompiled->Run(args));
    EXPECT_EQ(0, std::memcmp(actual[0].data(), expected[0].data(),
                             static_cast<size_t>(expected[0].byte_size())));
    EXPECT_EQ(std::filesystem::file_size(entry), size);  // rewritten
    ASSERT_OK_AND_ASSIGN(auto warm, JitProgram::Create(BuildChain(1023), "main", options));
    EXPECT_EQ(warm->compiled().compiler().stats().modules_compiled, 0);
    EXPECT_EQ(warm->compiled().compiler().stats().modules_from_cache, 1);
    ASSERT_OK_AND_ASSIGN(auto again, warm->Run(args));
    EXPECT_EQ(0, std::memcmp(again[0].data(), expected[0].data(),
                             static_cast<size_t>(expected[0].byte_size())));
  }
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(other_dir);
}

// The IR before and after optimization and the assembly the compiler dumped into `dir` (the
// last module's, when it holds several).
struct Dumps {
  std::string before, after, assembly;
};
Dumps ReadDumps(const std::filesystem::path& dir) {
  Dumps dumps;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".before.ll")) dumps.before = ReadFile(entry.path());
    if (name.ends_with(".after.ll")) dumps.after = ReadFile(entry.path());
    if (name.ends_with(".s")) dumps.assembly = ReadFile(entry.path());
  }
  return dumps;
}

TEST(JitCompilerTest, DumpsIrBeforeAndAfterO3AndAssembly) {
  const auto dir = FreshDirectory("accy_jit_dump_test");
  JitCompilerOptions options;
  options.dump_dir = dir.string();
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(BuildChain(4096), "main", options));
  const auto [before, after, assembly] = ReadDumps(dir);
  // f32 tanh is the inline polynomial of jit/vector_math.h: fma and a division, no libm call.
  EXPECT_NE(before.find("call float @llvm.fma.f32"), std::string::npos);
  EXPECT_EQ(before.find("@tanhf"), std::string::npos);
  // The loop vectorizer widened the loop, polynomial included.
  EXPECT_NE(after.find("x float>"), std::string::npos);
  EXPECT_EQ(after.find("@tanhf"), std::string::npos);
  if (program->compiled().compiler().has_avx512()) {
    EXPECT_NE(after.find("@llvm.fma.v16f32"), std::string::npos);
    EXPECT_NE(assembly.find("vdivps\t%zmm"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

// Elementwise loops with an inline exp, logistic or tanh and no library call ask the loop
// vectorizer for four vectors per iteration (jit/elementwise_emitter.cc, docs/isa.md "Four
// chains"); a loop that calls libm (f32 log) keeps the vectorizer's own count.
TEST(JitCompilerTest, InlineExpLoopsInterleaveFourVectorsAndLibraryCallsDoNot) {
  enum class Chain { kExp, kLogistic, kExpThenLog };
  for (Chain chain : {Chain::kExp, Chain::kLogistic, Chain::kExpThenLog}) {
    SCOPED_TRACE(static_cast<int>(chain));
    Builder builder("chain");
    TensorType t = builder.Type(ElementType::kF32, {4096}).value();
    auto f = builder.BeginFunction("main", {t}, {t}).value();
    Value* x = f.Parameter(0);
    Value* y = chain == Chain::kLogistic ? f.Logistic(x).value() : f.Exponential(x).value();
    if (chain == Chain::kExpThenLog) y = f.Log(y).value();
    (void)f.Return({y});
    const auto dir = FreshDirectory("accy_jit_interleave_test");
    JitCompilerOptions options;
    options.dump_dir = dir.string();
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(builder.Finish().value(), "main", options));
    const auto dumps = ReadDumps(dir);
    const bool hinted =
        dumps.before.find("!\"llvm.loop.interleave.count\", i32 4}") != std::string::npos;
    EXPECT_EQ(hinted, chain != Chain::kExpThenLog);
    std::filesystem::remove_all(dir);
  }
}

// exp's e * 2^n step is a target primitive (jit/target_lowering.h): the emitted IR calls
// accy.exp_scale.f32, the vectorizer widens the call, and after optimization every call is
// lowered (vscalefps on AVX-512, vscalefss for the scalar tail; the exponent-field sequence
// elsewhere). Unoptimized (level 0: scalar calls only) and optimized code give the same bits,
// specials and subnormal results included.
TEST(JitCompilerTest, ExpScaleIsLoweredAtEveryOptimizationLevel) {
  const int64_t n = 4096 + 5;  // a vector body and a scalar tail
  auto build = [&] {
    Builder builder("exp");
    TensorType t = builder.Type(ElementType::kF32, {n}).value();
    auto f = builder.BeginFunction("main", {t}, {t}).value();
    (void)f.Return({f.Exponential(f.Parameter(0)).value()});
    return builder.Finish().value();
  };
  TensorType t = TensorType::Create(ElementType::kF32, {n}).value();
  Tensor x = Tensor::Allocate(t).value();
  float* xs = static_cast<float*>(x.data());
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 88.7f, 89.0f, 1e30f, -87.0f, -95.5f,
                            -103.9f, -104.0f, -1e30f, INFINITY, -INFINITY, NAN};
  for (int64_t i = 0; i < n; ++i) {
    xs[i] = i < n - 3 ? -100.0f + 190.0f * static_cast<float>(i) / static_cast<float>(n)
                      : specials[i % std::size(specials)];
    if (i % 97 == 0) xs[i] = specials[(i / 97) % std::size(specials)];
  }
  std::vector<Tensor> args = {x};
  std::vector<std::vector<Tensor>> results;
  for (int level : {0, 3}) {
    SCOPED_TRACE(level);
    const auto dir = FreshDirectory("accy_jit_exp_scale_test");
    JitCompilerOptions options;
    options.dump_dir = dir.string();
    options.optimization_level = level;
    ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(build(), "main", options));
    const auto [before, after, assembly] = ReadDumps(dir);
    EXPECT_NE(before.find("call float @accy.exp_scale.f32"), std::string::npos);
    EXPECT_EQ(after.find("accy.exp_scale"), std::string::npos);  // every call lowered
    if (program->compiled().compiler().has_avx512()) {
      EXPECT_NE(assembly.find("vscalefss"), std::string::npos);
      if (level == 3) EXPECT_NE(assembly.find("vscalefps\t%zmm"), std::string::npos);
    } else {
      EXPECT_EQ(assembly.find("vscalef"), std::string::npos);
    }
    ASSERT_OK_AND_ASSIGN(auto out, program->Run(args, 1));
    results.push_back(std::move(out));
    std::filesystem::remove_all(dir);
  }
  ASSERT_EQ(results.size(), 2u);
  const float* o0 = static_cast<const float*>(results[0][0].data());
  const float* o3 = static_cast<const float*>(results[1][0].data());
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_TRUE(std::memcmp(&o0[i], &o3[i], sizeof(float)) == 0 ||
                (std::isnan(o0[i]) && std::isnan(o3[i])))
        << "exp(" << xs[i] << "): " << o0[i] << " at level 0, " << o3[i] << " at level 3";
  }
  EXPECT_EQ(o3[0], std::exp(xs[0]));
}

// --- Error paths -------------------------------------------------------------------------

// A reduce whose body holds an op the JIT cannot lower (reshape) fails compilation naming it.
TEST(JitErrorTest, ReduceBodyOpThatCannotBeLoweredIsRejectedNamingIt) {
  Builder builder("reduce");
  TensorType t = builder.Type(ElementType::kF32, {8}).value();
  TensorType s = builder.Type(ElementType::kF32, {}).value();
  auto f = builder.BeginFunction("main", {t}, {s}).value();
  Value* zero = f.ConstantScalar(ElementType::kF32, 0).value();
  auto r = f.Reduce({f.Parameter(0)}, {zero}, {0},
                    [&](FunctionBuilder& body, std::span<Value* const> a) -> Status {
                      ACCY_ASSIGN_OR_RETURN(Value * sum, body.Add(a[0], a[1]));
                      ACCY_ASSIGN_OR_RETURN(Value * same, body.Reshape(sum, s));
                      return body.Return({same});
                    });
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_OK(f.Return(*r));
  ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
  auto program = JitProgram::Create(std::move(module));
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(program.status().message().find("reshape"), std::string::npos) << program.status();
}

// Block counts round up without overflowing near INT64_MAX (a valid tensor<9223372036854775807xi8>
// reaches BlockCount; the old (n + block - 1) / block was signed overflow). Checked at compile
// time too: a constant expression with signed overflow does not compile.
TEST(BlockCountTest, RoundsUpWithoutOverflowNearInt64Max) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  static_assert(BlockCount(kMax, kElementwiseBlockElements) == kMax / 8192 + 1);
  static_assert(BlockCount(kMax - 8191, 8192) == kMax / 8192);  // 8192 * (2^50 - 1): exact
  static_assert(BlockCount(kMax - 8190, 8192) == kMax / 8192 + 1);
  EXPECT_EQ(BlockCount(kMax, 1), kMax);
  EXPECT_EQ(BlockCount(kMax - 1, 2), kMax / 2);
  EXPECT_EQ(BlockCount(16384, 8192), 2);
  EXPECT_EQ(BlockCount(16385, 8192), 3);
  EXPECT_EQ(BlockCount(0, 8192), 0);
  EXPECT_EQ(BlockCount(-5, 8192), 0);
}

// Every shape op has an emitter; a pad whose interior padding is too large for the kernel's
// 64-bit index arithmetic (>= 2^62, valid for a dim of size 1) is rejected naming the op.
TEST(JitErrorTest, PadWithHugeInteriorPaddingIsRejectedNamingTheOp) {
  Builder builder("huge_pad");
  TensorType x = builder.Type(ElementType::kF32, {1}).value();
  TensorType s = builder.Type(ElementType::kF32, {}).value();
  auto f = builder.BeginFunction("main", {x, s}, {x}).value();
  Value* p = f.Pad(f.Parameter(0), f.Parameter(1), {0}, {0}, {int64_t{1} << 62}).value();
  ASSERT_OK(f.Return({p}));
  ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
  auto program = JitProgram::Create(std::move(module));
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(program.status().message().find("pad with"), std::string::npos) << program.status();
  EXPECT_NE(program.status().message().find("interior_padding 4611686018427387904"),
            std::string::npos)
      << program.status();
}

TEST(JitErrorTest, RunItemRejectsWrongBufferCountAndSize) {
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(BuildChain(64)));
  const CompiledProgram& compiled = program->compiled();
  std::vector<float> a(64), b(64), c(64), y(64), small(8);
  void* buffers[] = {a.data(), b.data(), c.data(), y.data()};
  int64_t bytes[] = {256, 256, 256, 256};
  Status status = compiled.RunItem(0, buffers, bytes, 3);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("takes 4 buffers, got 3"), std::string::npos) << status;
  buffers[3] = small.data();
  bytes[3] = 32;
  status = compiled.RunItem(0, buffers, bytes, 4);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("buffer 3 has 32 bytes, needs 256"), std::string::npos) << status;
  EXPECT_EQ(compiled.RunItem(1, buffers, bytes, 4).code(), absl::StatusCode::kInvalidArgument);
}

TEST(JitErrorTest, LookupOfUnknownSymbolIsNotFound) {
  ASSERT_OK_AND_ASSIGN(auto compiler, JitCompiler::Create());
  auto missing = compiler->Lookup("accy_no_such_kernel");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("accy_no_such_kernel"), std::string::npos);
}

TEST(JitErrorTest, CacheDirThatIsAFileIsRejected) {
  const auto dir = FreshDirectory("accy_jit_cache_file");
  std::filesystem::create_directories(dir);
  const auto file = dir / "plain_file";
  std::ofstream(file) << "x";
  JitCompilerOptions options;
  options.cache_dir = file.string();
  auto compiler = JitCompiler::Create(options);
  ASSERT_FALSE(compiler.ok());
  EXPECT_EQ(compiler.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(compiler.status().message().find("cache_dir"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace accy::jit::testing
