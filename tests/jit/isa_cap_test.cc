// JitCompilerOptions::max_isa: the host's features above the cap are off in the target features
// (and so in the object cache key), and isa() reports the capped level.
#include "accy/isa.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/jit_compiler.h"
#include "tests/test_util.h"

namespace accy::jit {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(JitIsaCapTest, CapTurnsOffEveryFeatureAboveIt) {
  JitCompilerOptions uncapped;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<JitCompiler> host, JitCompiler::Create(uncapped));
  ASSERT_OK_AND_ASSIGN(Isa process, ProcessIsa());
  EXPECT_EQ(host->isa(), process);  // the host's, under ACCY_MAX_ISA
  for (Isa cap : {Isa::kX86_64, Isa::kAvx2}) {
    SCOPED_TRACE(IsaName(cap));
    JitCompilerOptions options;
    options.max_isa = cap;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<JitCompiler> jit, JitCompiler::Create(options));
    EXPECT_EQ(jit->isa(), std::min(process, cap));
    EXPECT_FALSE(jit->has_avx512());
    const std::string& features = jit->cpu_features();
    EXPECT_THAT(features, Not(HasSubstr("+avx512")));
    EXPECT_THAT(features, Not(HasSubstr("+evex512")));
    if (cap == Isa::kX86_64) {
      EXPECT_THAT(features, Not(HasSubstr("+avx2")));
      EXPECT_THAT(features, Not(HasSubstr("+fma,")));
      EXPECT_THAT(features, HasSubstr("-avx2"));
    }
    // Another feature set: another cache key, never the host's objects.
    if (jit->isa() != host->isa()) EXPECT_NE(features, host->cpu_features());
  }
}

}  // namespace
}  // namespace accy::jit
