// ExecutableStats::library_weight_bytes and library_scratch_bytes (accy/engine.h): the memory
// library items own outside a run's buffers, with exact byte counts where the binding is known
// from the host (kernels/small_m_dot_general.cc's packed panels,
// kernels/gemm_tiles_dot_general.cc's padded weights), and the rule that a kernel whose team is
// taken at run time is bound once even when the engine may reduce a run to one thread
// (docs/load.md).
#include <memory>
#include <string>
#include <vector>

#include "accy/engine.h"
#include "accy/isa.h"
#include "accy/stablehlo.h"
#include "gtest/gtest.h"
#include "kernels/onednn_isa.h"
#include "tests/test_util.h"

namespace accy {
namespace {

// x [M, K] . w [K, N], w parameter 1.
std::string Product(int64_t m, int64_t k, int64_t n) {
  const std::string x = "tensor<" + std::to_string(m) + "x" + std::to_string(k) + "xf32>";
  const std::string w = "tensor<" + std::to_string(k) + "x" + std::to_string(n) + "xf32>";
  const std::string y = "tensor<" + std::to_string(m) + "x" + std::to_string(n) + "xf32>";
  return "func.func @main(%x: " + x + ", %w: " + w + ") -> " + y + " {\n" +
         "  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (" + x + ", " + w +
         ") -> " + y + "\n  func.return %0 : " + y + "\n}\n";
}

struct Compiled {
  std::unique_ptr<Module> module;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Executable> executable;
};

Compiled Compile(const std::string& text, int threads, bool reduce_threads_under_load,
                 bool weights_constant) {
  Compiled c;
  StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return c;
  c.module = *std::move(module);
  EngineOptions options;
  options.num_threads = threads;
  options.reduce_threads_under_load = reduce_threads_under_load;
  StatusOr<std::unique_ptr<Engine>> engine = Engine::Create(options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  if (!engine.ok()) return c;
  c.engine = *std::move(engine);
  CompileOptions compile;
  if (weights_constant) compile.constant_parameters = {1};
  StatusOr<std::unique_ptr<Executable>> executable = c.engine->Compile(*c.module, compile);
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (executable.ok()) c.executable = *std::move(executable);
  return c;
}

TEST(LibraryMemoryTest, JitOnlyProgramOwnsNoLibraryMemory) {
  // 2 x 4 x 16 x 16 element ops: the JIT's dot_general, no library item.
  Compiled c = Compile(Product(4, 16, 16), 2, true, true);
  ASSERT_NE(c.executable, nullptr);
  EXPECT_EQ(c.executable->Stats().library_weight_bytes, 0);
  EXPECT_EQ(c.executable->Stats().library_scratch_bytes, 0);
}

// [4, 256] . [256, 256] with the weights declared constant: the small-M kernel packs them once
// into panels of 48 columns (AVX-512: 6 panels x 48 x 256 floats) or 16 (AVX2: 16 x 16 x 256).
// Its team is the run's, so the engine binds it once even when a contended run may use one
// thread (reduce_threads_under_load at 2 threads), and the copy is counted once.
TEST(LibraryMemoryTest, SmallMPackedWeightsAreCountedOnceAtAnyThreadCount) {
  ASSERT_OK_AND_ASSIGN(Isa isa, ProcessIsa());
  if (isa == Isa::kX86_64) GTEST_SKIP() << "no small-M kernel below AVX2";
  const int64_t want = isa == Isa::kAvx512 ? 6 * 48 * 256 * 4 : 16 * 16 * 256 * 4;
  for (int threads : {1, 2}) {
    for (bool reduce : {false, true}) {
      Compiled c = Compile(Product(4, 256, 256), threads, reduce, true);
      ASSERT_NE(c.executable, nullptr);
      EXPECT_EQ(c.executable->Stats().library_weight_bytes, want)
          << threads << " threads, reduce_threads_under_load " << reduce;
      EXPECT_EQ(c.executable->Stats().library_scratch_bytes, 0);
    }
  }
  // Without the declaration the weights are read in place by another binding, which keeps no
  // copy across runs.
  Compiled plain = Compile(Product(4, 256, 256), 2, true, false);
  ASSERT_NE(plain.executable, nullptr);
  EXPECT_EQ(plain.executable->Stats().library_weight_bytes, 0);
}

// [64, 256] . [256, 512]: rows of 2 KiB. On AMD hosts the product runs as tiled gemm:jit
// (docs/tiled_gemm.md); below avx512_core its weights are copied before each run to a row stride
// of 512 + 16 floats (256 x 528 floats of scratch), with AVX-512 they are read in place (none).
// Intel hosts run oneDNN's matmul, whose padded copy (capped) is scratch too, beside oneDNN's own
// scratchpad.
TEST(LibraryMemoryTest, PaddedWeightCopiesAreScratch) {
  Compiled c = Compile(Product(64, 256, 512), 1, false, false);
  ASSERT_NE(c.executable, nullptr);
  const ExecutableStats& stats = c.executable->Stats();
  EXPECT_EQ(stats.library_weight_bytes, 0);
  const int64_t padded = 256 * 528 * 4;
  const bool avx512 = kernels::OneDnnHasAvx512Core();
  if (!kernels::HostIsIntel()) {
    EXPECT_EQ(stats.library_scratch_bytes, avx512 ? 0 : padded);
  } else if (!avx512) {
    EXPECT_GE(stats.library_scratch_bytes, padded);
  }
}

// Declared-constant weights of a product too tall for the small-M kernel (M 64) run on oneDNN's
// matmul, which with avx512_core (brgemm) packs them into its own layout, one copy per binding:
// at 2 threads with reduce_threads_under_load the engine also binds a one-thread matmul, and
// both copies count. Below avx512_core gemm:jit reads the plain layout in place (no copy).
TEST(LibraryMemoryTest, OnednnBindingsForOneThreadRunsCountTheirOwnCopies) {
  Compiled one = Compile(Product(64, 256, 256), 1, false, true);
  Compiled fixed = Compile(Product(64, 256, 256), 2, false, true);
  Compiled adaptive = Compile(Product(64, 256, 256), 2, true, true);
  ASSERT_NE(one.executable, nullptr);
  ASSERT_NE(fixed.executable, nullptr);
  ASSERT_NE(adaptive.executable, nullptr);
  const int64_t copy = one.executable->Stats().library_weight_bytes;
  if (kernels::OneDnnHasAvx512Core()) {
    EXPECT_GE(copy, 256 * 256 * 4);  // at least the weights (oneDNN may pad its blocked layout)
  } else {
    EXPECT_EQ(copy, 0);
  }
  EXPECT_EQ(fixed.executable->Stats().library_weight_bytes, copy);
  EXPECT_EQ(adaptive.executable->Stats().library_weight_bytes, 2 * copy);
}

}  // namespace
}  // namespace accy
