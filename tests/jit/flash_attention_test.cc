// flash_attention kernels (jit/flash_attention_emitter.cc, flash_attention_kernel.cc) against
// the unfused reference (accy::Evaluate of the same program): multiply and divide scales (a
// folded constant or a rank-0 parameter), no mask, a full
// additive mask, a causal mask given as a [q, k] tensor of 0/-inf broadcast over batch and
// heads, a key-padding mask [k] broadcast over batch and queries, pre-transposed K; the
// kernel's tails: query counts that are not multiples of the query tile (16), key counts around
// the key tile (128 f32, 64 f64) and the 8-key score step, head dims not multiples of anything
// and above the 256-wide (f32) Q pack (scores summed over head-dim chunks), value dims around
// the 16-lane chunk and the 4-chunk register group, and value dims whose accumulator rows
// shrink the query tile (8, 2, 1 rows); fully masked rows (NaN, as the reference) and rows
// whose first key tile is fully masked (finite); bitwise determinism at 1 and 2 threads.
//
// Bound: |jit - reference| <= kAtol + kRtol * |reference| per element. The kernel accumulates
// the dot products in f32 fused multiply-adds, rescales online and divides after P·V, where
// the reference rounds P and sums in double: a few f32 ulps of the output scale.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "src/util/str_cat.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace accy::jit::testing {
namespace {

constexpr double kAtol = 2e-6;
constexpr double kRtol = 2e-5;
const double kInf = std::numeric_limits<double>::infinity();

// kCausalConstant: the causal mask as a constant of the program (what the kernel packs and
// skips keys by), the others parameters.
enum class Mask { kNone, kFull, kCausal, kKeyPadding, kCausalConstant };
enum class Scale { kMultiplyConstant, kDivideConstant, kMultiplyParameter };

struct AttentionCase {
  std::vector<int64_t> batch;  // leading batch dims
  int64_t queries, keys, head_dim, value_dim;
  Mask mask = Mask::kNone;
  Scale scale = Scale::kMultiplyConstant;
  bool keys_transposed = false;  // K given as [batch..., d, k]
  ElementType type = ElementType::kF32;
};

std::vector<int64_t> Dims(const std::vector<int64_t>& batch, int64_t a, int64_t b) {
  std::vector<int64_t> dims = batch;
  dims.push_back(a);
  dims.push_back(b);
  return dims;
}

struct Built {
  std::unique_ptr<Module> module;
  std::vector<TensorType> params;
};

// main(Q, K, V [, mask] [, scale]) -> softmax(scale(Q·K^T) [+ mask]) · V.
StatusOr<Built> BuildAttention(const AttentionCase& c) {
  Builder builder("attention");
  const ElementType t = c.type;
  const int64_t b = static_cast<int64_t>(c.batch.size());
  Built built;
  ACCY_ASSIGN_OR_RETURN(TensorType q, builder.Type(t, Dims(c.batch, c.queries, c.head_dim)));
  ACCY_ASSIGN_OR_RETURN(TensorType k, builder.Type(t, c.keys_transposed
                                                          ? Dims(c.batch, c.head_dim, c.keys)
                                                          : Dims(c.batch, c.keys, c.head_dim)));
  ACCY_ASSIGN_OR_RETURN(TensorType v, builder.Type(t, Dims(c.batch, c.keys, c.value_dim)));
  ACCY_ASSIGN_OR_RETURN(TensorType scores, builder.Type(t, Dims(c.batch, c.queries, c.keys)));
  ACCY_ASSIGN_OR_RETURN(TensorType out, builder.Type(t, Dims(c.batch, c.queries, c.value_dim)));
  built.params = {q, k, v};
  if (c.mask == Mask::kFull) built.params.push_back(scores);
  if (c.mask == Mask::kCausal) {
    ACCY_ASSIGN_OR_RETURN(TensorType causal, builder.Type(t, {c.queries, c.keys}));
    built.params.push_back(causal);
  }
  if (c.mask == Mask::kKeyPadding) {
    ACCY_ASSIGN_OR_RETURN(TensorType padding, builder.Type(t, {c.keys}));
    built.params.push_back(padding);
  }
  if (c.scale == Scale::kMultiplyParameter) {
    ACCY_ASSIGN_OR_RETURN(TensorType scalar, builder.Type(t, {}));
    built.params.push_back(scalar);
  }
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f, builder.BeginFunction("main", built.params, {out}));
  std::vector<int64_t> batch_dims;
  for (int64_t i = 0; i < b; ++i) batch_dims.push_back(i);
  ACCY_ASSIGN_OR_RETURN(Value * qk, f.DotGeneral(f.Parameter(0), f.Parameter(1), scores, {b + 1},
                                                 {c.keys_transposed ? b : b + 1}, batch_dims,
                                                 batch_dims));
  Value* scale_value;
  if (c.scale == Scale::kMultiplyParameter) {
    scale_value = f.Parameter(static_cast<int64_t>(built.params.size()) - 1);
  } else {
    const double s = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
    ACCY_ASSIGN_OR_RETURN(scale_value,
                          f.ConstantScalar(t, c.scale == Scale::kDivideConstant ? 1.0 / s : s));
  }
  ACCY_ASSIGN_OR_RETURN(Value * scale_b, f.BroadcastInDim(scale_value, scores, {}));
  Value* logits;
  if (c.scale == Scale::kDivideConstant) {
    ACCY_ASSIGN_OR_RETURN(logits, f.Divide(qk, scale_b));
  } else {
    ACCY_ASSIGN_OR_RETURN(logits, f.Multiply(scale_b, qk));
  }
  if (c.mask == Mask::kFull) {
    ACCY_ASSIGN_OR_RETURN(logits, f.Add(f.Parameter(3), logits));
  } else if (c.mask == Mask::kCausal) {
    ACCY_ASSIGN_OR_RETURN(Value * mask_b, f.BroadcastInDim(f.Parameter(3), scores, {b, b + 1}));
    ACCY_ASSIGN_OR_RETURN(logits, f.Add(logits, mask_b));
  } else if (c.mask == Mask::kKeyPadding) {
    ACCY_ASSIGN_OR_RETURN(Value * mask_b, f.BroadcastInDim(f.Parameter(3), scores, {b + 1}));
    ACCY_ASSIGN_OR_RETURN(logits, f.Add(logits, mask_b));
  } else if (c.mask == Mask::kCausalConstant) {
    ACCY_ASSIGN_OR_RETURN(TensorType causal, builder.Type(t, {c.queries, c.keys}));
    ACCY_ASSIGN_OR_RETURN(Tensor causal_value, Tensor::Allocate(causal));
    for (int64_t i = 0; i < causal.element_count(); ++i) {
      causal_value.SetFromDouble(i, i % c.keys > i / c.keys ? -kInf : 0.0);
    }
    ACCY_ASSIGN_OR_RETURN(Value * mask_value, f.Constant(causal_value));
    ACCY_ASSIGN_OR_RETURN(Value * mask_b, f.BroadcastInDim(mask_value, scores, {b, b + 1}));
    ACCY_ASSIGN_OR_RETURN(logits, f.Add(logits, mask_b));
  }
  std::vector<int64_t> row_dims = Dims(c.batch, c.queries, 1);
  row_dims.pop_back();
  ACCY_ASSIGN_OR_RETURN(TensorType row_type, builder.Type(t, row_dims));
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < b + 1; ++i) keep.push_back(i);
  ACCY_ASSIGN_OR_RETURN(Value * low, f.ConstantScalar(t, -kInf));
  ACCY_ASSIGN_OR_RETURN(Value * max, f.Reduce(logits, low, row_type, "max", {b + 1}));
  ACCY_ASSIGN_OR_RETURN(Value * max_b, f.BroadcastInDim(max, scores, keep));
  ACCY_ASSIGN_OR_RETURN(Value * e, f.Exponential(*f.Subtract(logits, max_b)));
  ACCY_ASSIGN_OR_RETURN(Value * zero, f.ConstantScalar(t, 0.0));
  ACCY_ASSIGN_OR_RETURN(Value * sum, f.Reduce(e, zero, row_type, "sum", {b + 1}));
  ACCY_ASSIGN_OR_RETURN(Value * sum_b, f.BroadcastInDim(sum, scores, keep));
  ACCY_ASSIGN_OR_RETURN(Value * probs, f.Divide(e, sum_b));
  ACCY_ASSIGN_OR_RETURN(Value * result, f.DotGeneral(probs, f.Parameter(2), out, {b + 1}, {b},
                                                     batch_dims, batch_dims));
  ACCY_RETURN_IF_ERROR(f.Return({result}));
  ACCY_ASSIGN_OR_RETURN(built.module, builder.Finish());
  return built;
}

// Q, K, V uniform in [-2, 2]; a full mask of 0 or -1e4 plus some -inf; a causal mask of 0 on
// and below the diagonal and -inf above; a key-padding mask of -inf on every fifth key (from
// key 2) and 0 elsewhere; a scale parameter of 0.3.
std::vector<Tensor> Arguments(const AttentionCase& c, const std::vector<TensorType>& params) {
  std::vector<Tensor> args;
  std::mt19937_64 rng(c.keys * 131 + c.queries);
  std::uniform_real_distribution<double> unit(-2.0, 2.0);
  for (size_t p = 0; p < params.size(); ++p) {
    Tensor t = Tensor::Allocate(params[p]).value();
    for (int64_t i = 0; i < t.element_count(); ++i) {
      double v = unit(rng);
      if (p == 3 && c.mask == Mask::kFull) v = v > 1.5 ? -kInf : v > 0.0 ? -1e4 : 0.0;
      if (p == 3 && c.mask == Mask::kCausal) v = i % c.keys > i / c.keys ? -kInf : 0.0;
      if (p == 3 && c.mask == Mask::kKeyPadding) v = i % 5 == 2 ? -kInf : 0.0;
      if (params[p].rank() == 0) v = 0.3;
      t.SetFromDouble(i, v);
    }
    args.push_back(std::move(t));
  }
  return args;
}

int CountKind(const JitProgram& program, WorkKind kind) {
  int n = 0;
  for (const WorkItem& item : program.plan().items()) n += item.kind == kind ? 1 : 0;
  return n;
}

// Plans, compiles and runs `c` at `threads`; compares with the reference.
// `block_count`, when given, receives the flash_attention item's launch block count.
void CheckAttention(const AttentionCase& c, std::vector<Tensor> args = {}, int threads = 2,
                    int64_t* block_count = nullptr) {
  ASSERT_OK_AND_ASSIGN(Built built, BuildAttention(c));
  SCOPED_TRACE(StrCat("scores ", TensorType::Create(c.type, Dims(c.batch, c.queries, c.keys))->ToString(),
                      " d=", c.head_dim, " dv=", c.value_dim, " mask=", static_cast<int>(c.mask),
                      " scale=", static_cast<int>(c.scale), " k^T=", c.keys_transposed));
  if (args.empty()) args = Arguments(c, built.params);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*built.module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(built.module)));
  EXPECT_EQ(CountKind(*program, WorkKind::kFlashAttention), 1) << program->plan().ToText();
  if (block_count != nullptr) {
    ASSERT_EQ(program->compiled().items().size(), 1u);
    *block_count = program->compiled().items()[0].launch.block_count;
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, threads));
  // f16/bf16 compute in f32 and round once, where the reference rounds after every op: a few
  // roundings of the type's precision apart (bf16: 2^-8 each, f16: 2^-11). f64 computes in double.
  double atol = kAtol, rtol = kRtol;
  if (c.type == ElementType::kBF16) atol = rtol = 3e-2;
  if (c.type == ElementType::kF16) atol = rtol = 4e-3;
  if (c.type == ElementType::kF64) atol = rtol = 1e-12;
  TensorComparison close = CompareClose(actual[0], expected[0], atol, rtol);
  EXPECT_TRUE(close.ok) << close.message << " (first bad index " << close.first_bad_index << ")";
  std::cout << "  max |jit - reference| = " << close.max_distance << "\n";
}

TEST(FlashAttentionTest, MatchesUnfusedReferenceOverShapesScalesAndMasks) {
  const std::vector<AttentionCase> cases = {
      {{1, 2}, 4, 6, 8, 8, Mask::kFull, Scale::kMultiplyConstant},
      {{1, 2}, 4, 6, 8, 8, Mask::kNone, Scale::kDivideConstant},
      {{2, 3}, 37, 300, 17, 24, Mask::kFull, Scale::kMultiplyConstant},
      {{2}, 33, 513, 64, 64, Mask::kCausal, Scale::kMultiplyParameter},
      {{3}, 1, 1, 1, 1, Mask::kNone, Scale::kMultiplyConstant},
      {{2, 2}, 16, 256, 32, 16, Mask::kNone, Scale::kMultiplyParameter, /*keys_transposed=*/true},
      {{}, 20, 40, 8, 5, Mask::kCausal, Scale::kDivideConstant},
  };
  for (const AttentionCase& c : cases) CheckAttention(c);
}

// Row 0 fully masked: NaN (the reference's exp(-inf - -inf)). Row 1: its first key tile (256
// keys) masked, later keys open: finite, as the reference (the online update must not turn the
// empty first tile into NaN). Row 2: one +inf score: NaN.
TEST(FlashAttentionTest, MaskedRowsAndInfiniteScoresMatchReference) {
  const AttentionCase c{{1}, 3, 300, 8, 4, Mask::kFull, Scale::kMultiplyConstant};
  ASSERT_OK_AND_ASSIGN(Built built, BuildAttention(c));
  std::vector<Tensor> args = Arguments(c, built.params);
  Tensor& mask = args[3];
  for (int64_t j = 0; j < 300; ++j) {
    mask.SetFromDouble(j, -kInf);
    mask.SetFromDouble(300 + j, j < 256 ? -kInf : 0.0);
    mask.SetFromDouble(600 + j, j == 7 ? kInf : 0.0);
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*built.module, "main", args));
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(built.module)));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, 2));
  EXPECT_TRUE(std::isnan(expected[0].GetAsDouble(0)));
  EXPECT_TRUE(std::isnan(actual[0].GetAsDouble(0)));
  EXPECT_TRUE(std::isfinite(actual[0].GetAsDouble(4)));
  EXPECT_TRUE(std::isnan(actual[0].GetAsDouble(8)));
  TensorComparison close = CompareClose(actual[0], expected[0], kAtol, kRtol);
  EXPECT_TRUE(close.ok) << close.message;
}

// A constant causal mask: each query tile runs only the keys up to its last row's diagonal
// (the module holds the per-tile key ends), with the reference's results; a NaN in a K row or
// an infinity in a V row past a tile's end makes the reference's rows NaN, and the kernel then
// runs every key of that tile and agrees. Plain f32 and f64, K in both layouts.
TEST(FlashAttentionTest, ConstantCausalMaskSkipsMaskedKeysExactly) {
  for (bool transposed : {false, true}) {
    for (ElementType type : {ElementType::kF32, ElementType::kF64}) {
      AttentionCase c{{2}, 40, 40, 16, 8, Mask::kCausalConstant, Scale::kMultiplyConstant};
      c.keys_transposed = transposed;
      c.type = type;
      SCOPED_TRACE(StrCat(ElementTypeName(type), transposed ? " K^T" : " K"));
      const auto dir = std::filesystem::temp_directory_path() /
                       StrCat("accy_attention_skip_", ::testing::UnitTest::GetInstance()->random_seed(),
                              "_", transposed, "_", ElementTypeName(type));
      std::filesystem::remove_all(dir);
      JitCompilerOptions options;
      options.dump_dir = dir.string();
      ASSERT_OK_AND_ASSIGN(Built built, BuildAttention(c));
      ASSERT_OK_AND_ASSIGN(Built reference, BuildAttention(c));
      ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(built.module), "main", options));
      EXPECT_EQ(CountKind(*program, WorkKind::kFlashAttention), 1);
      std::string ir;
      for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (!entry.path().filename().string().ends_with(".before.ll")) continue;
        std::ifstream in(entry.path());
        ir.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      }
      std::filesystem::remove_all(dir);
      // One f32 vector of query rows per tile (16 on AVX-512, 8 on AVX2, 4 below; f64 tiles
      // are as many rows); each tile ends at its last row's diagonal.
      ASSERT_OK_AND_ASSIGN(Isa isa, ProcessIsa());
      const int64_t tile = isa == Isa::kAvx512 ? 16 : isa == Isa::kAvx2 ? 8 : 4;
      std::string ends;
      for (int64_t t = 0; t * tile < c.queries; ++t) {
        ends += StrCat(t == 0 ? "" : ", ", "i64 ", std::min((t + 1) * tile, c.queries));
      }
      EXPECT_NE(ir.find(StrCat(".key_ends = private constant [", (c.queries + tile - 1) / tile,
                               " x i64] [", ends, "]")),
                std::string::npos)
          << ir.substr(0, 2000);
      const double tolerance = type == ElementType::kF64 ? 1e-12 : kRtol;
      // Finite inputs; then a NaN in K at key 30 (past tiles 0-2's ends), batch 0; then an
      // infinity in V at key 20, batch 1.
      for (int variant = 0; variant < 3; ++variant) {
        std::vector<Tensor> args = Arguments(c, built.params);
        const int64_t k_index = transposed ? 5 * c.keys + 30 : 30 * c.head_dim + 5;
        if (variant == 1) args[1].SetFromDouble(k_index, std::nan(""));
        if (variant == 2) args[2].SetFromDouble(c.keys * c.value_dim + 20 * c.value_dim + 3, kInf);
        ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*reference.module, "main", args));
        ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, program->Run(args, 2));
        int nan_rows = 0;  // NaN elements of the reference
        for (int64_t i = 0; i < actual[0].element_count(); ++i) {
          const double want = expected[0].GetAsDouble(i), got = actual[0].GetAsDouble(i);
          if (std::isnan(want)) {
            ++nan_rows;
            EXPECT_TRUE(std::isnan(got)) << "variant " << variant << " element " << i;
          }
        }
        // K's NaN reaches every row of batch 0 (40 rows x 8 values); V's infinity only value
        // column 3 of the rows that mask key 20 (0 * inf; rows 0-19), the others get +-inf.
        EXPECT_EQ(nan_rows, variant == 0 ? 0 : variant == 1 ? 40 * 8 : 20) << "variant " << variant;
        TensorComparison close = CompareClose(actual[0], expected[0], tolerance * 0.1, tolerance);
        EXPECT_TRUE(close.ok) << "variant " << variant << ": " << close.message;
      }
    }
  }
}

TEST(FlashAttentionTest, OneAndTwoThreadsGiveIdenticalBits) {
  const AttentionCase c{{2, 2}, 50, 300, 16, 16, Mask::kCausal, Scale::kMultiplyConstant};
  ASSERT_OK_AND_ASSIGN(Built built, BuildAttention(c));
  std::vector<Tensor> args = Arguments(c, built.params);
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(built.module)));
  ASSERT_EQ(program->compiled().items().size(), 1u);
  // 4 heads x ceil(50 / tile) query tiles; a tile is one f32 vector of the target: 16 rows on
  // AVX-512, 8 on AVX2, 4 below.
  ASSERT_OK_AND_ASSIGN(Isa isa, ProcessIsa());
  const int64_t tile = isa == Isa::kAvx512 ? 16 : isa == Isa::kAvx2 ? 8 : 4;
  EXPECT_EQ(program->compiled().items()[0].launch.block_count, 4 * ((50 + tile - 1) / tile));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> one, program->Run(args, 1));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> two, program->Run(args, 2));
  EXPECT_EQ(0, std::memcmp(one[0].data(), two[0].data(), static_cast<size_t>(one[0].byte_size())));
}

TEST(FlashAttentionTest, HalfBfloatAndDoubleMatchReference) {
  for (ElementType type : {ElementType::kF16, ElementType::kBF16, ElementType::kF64}) {
    for (AttentionCase c :
         {AttentionCase{{2}, 19, 70, 16, 8, Mask::kCausal, Scale::kMultiplyConstant},
          AttentionCase{{1, 2}, 5, 300, 8, 12, Mask::kFull, Scale::kDivideConstant}}) {
      c.type = type;
      CheckAttention(c);
    }
  }
}

// Keys: 1, the 8-key score step's remainders (15, 17), tiles of 128 plus a tail (129, 300).
// Head dims 1, 3, 5, 65 and 300/520 (the Q pack holds 256: scores add over head-dim chunks).
// Value dims 1, 7, 9, 17, 33, 64, 70 (16-lane chunks, groups of 4 chunks, masked last chunk).
// The key-padding mask reads one element per key (no query stride), the others gather per lane.
TEST(FlashAttentionTest, TailsOfKeysHeadDimAndValueDimMatchReference) {
  const std::vector<AttentionCase> cases = {
      {{2}, 5, 1, 3, 1, Mask::kNone, Scale::kMultiplyConstant},
      {{1}, 17, 15, 1, 17, Mask::kCausal, Scale::kDivideConstant},
      {{2}, 16, 17, 65, 70, Mask::kFull, Scale::kMultiplyParameter},
      {{1, 2}, 9, 300, 3, 33, Mask::kKeyPadding, Scale::kMultiplyConstant},
      {{1}, 20, 129, 300, 16, Mask::kCausal, Scale::kMultiplyConstant},
      {{2}, 7, 40, 520, 9, Mask::kFull, Scale::kDivideConstant, /*keys_transposed=*/true},
      {{1}, 18, 23, 5, 64, Mask::kNone, Scale::kMultiplyParameter},
      {{1}, 3, 17, 65, 7, Mask::kKeyPadding, Scale::kMultiplyParameter, /*keys_transposed=*/true},
  };
  for (const AttentionCase& c : cases) CheckAttention(c);
}

// The same tails in f64 (key tile 64, 8-lane value chunks, Q pack of 128 head dims) and in
// f16/bf16 (16-bit loads widened, masked partial chunks of 16-bit elements on store).
TEST(FlashAttentionTest, TailsInDoubleHalfAndBfloatMatchReference) {
  for (ElementType type : {ElementType::kF64, ElementType::kF16, ElementType::kBF16}) {
    for (AttentionCase c :
         {AttentionCase{{1}, 9, 65, 130, 17, Mask::kCausal, Scale::kMultiplyConstant},
          AttentionCase{{2}, 17, 70, 3, 70, Mask::kFull, Scale::kDivideConstant},
          AttentionCase{{1}, 4, 17, 65, 9, Mask::kKeyPadding, Scale::kMultiplyParameter, true}}) {
      c.type = type;
      CheckAttention(c);
    }
  }
}

// Accumulator rows above 64 KiB per 16 query rows halve the query tile (a block is fewer
// rows): f32 value dim 1500 -> 8 rows, 8192 -> 2 rows; f64 8192 -> 1 row. Results match and
// do not depend on the thread count.
TEST(FlashAttentionTest, WideValueDimsShrinkTheQueryTile) {
  struct Wide {
    AttentionCase c;
    int64_t blocks;
  };
  const std::vector<Wide> wide = {
      {{{2}, 19, 20, 8, 1500, Mask::kCausal, Scale::kMultiplyConstant}, 2 * 3},
      {{{1}, 5, 9, 4, 8192, Mask::kNone, Scale::kMultiplyConstant}, 3},
      {{{1}, 3, 5, 4, 8192, Mask::kFull, Scale::kMultiplyConstant, false, ElementType::kF64}, 3},
  };
  for (const Wide& w : wide) {
    int64_t blocks = 0;
    CheckAttention(w.c, {}, 2, &blocks);
    EXPECT_EQ(blocks, w.blocks);
  }
  const AttentionCase c = wide[0].c;
  ASSERT_OK_AND_ASSIGN(Built built, BuildAttention(c));
  std::vector<Tensor> args = Arguments(c, built.params);
  ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(built.module)));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> one, program->Run(args, 1));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> two, program->Run(args, 2));
  EXPECT_EQ(0, std::memcmp(one[0].data(), two[0].data(), static_cast<size_t>(one[0].byte_size())));
}

// A value dim above what the kernel keeps on its stack is not clustered: the ops run unfused.
TEST(FlashAttentionTest, ValueDimAboveTheKernelLimitIsNotFused) {
  const AttentionCase c{{1}, 2, 3, 4, 8193, Mask::kNone, Scale::kMultiplyConstant};
  ASSERT_OK_AND_ASSIGN(Built built, BuildAttention(c));
  std::vector<Tensor> args = Arguments(c, built.params);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*built.module, "main", args));
  // Through the engine: the unfused dot_generals run on oneDNN.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*built.module));
  EXPECT_EQ(exe->Stats().work_items_by_kind.count("flash_attention"), 0u) << exe->plan_text();
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, exe->Run(args));
  TensorComparison close = CompareClose(actual[0], expected[0], kAtol, kRtol);
  EXPECT_TRUE(close.ok) << close.message;
}

}  // namespace
}  // namespace accy::jit::testing
