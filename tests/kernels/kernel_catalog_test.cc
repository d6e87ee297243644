// Catalog entries, contract validation (error group) and element-op estimates.
#include "kernels/kernel_catalog.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernels_test_util.h"

namespace accy::kernels_test {
namespace {

using ::testing::HasSubstr;
constexpr auto kF32 = ElementType::kF32;
constexpr auto kBF16 = ElementType::kBF16;

TEST(KernelCatalogTest, SeedEntryStaysFixed) {
  auto entry = kernels::FindEntry(kernels::kMatrixProduct4x16x8F32, 1);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->specialization.estimated_element_ops, 1024u);
  ASSERT_EQ(entry->operands.size(), 2u);
  EXPECT_EQ(entry->operands[0].dims[1], 8);
  ASSERT_OK_AND_ASSIGN(KernelCallModule m,
                       MakeKernelCall(kernels::kMatrixProduct4x16x8F32,
                                      {T(kF32, {4, 8}), T(kF32, {8, 16})}, T(kF32, {4, 16})));
  ASSERT_OK_AND_ASSIGN(uint64_t ops, kernels::EstimateElementOps(*m.call));
  EXPECT_EQ(ops, 1024u);
}

TEST(KernelCatalogTest, EveryTargetIsFoundAtVersionOne) {
  for (std::string_view target :
       {kernels::kMatmulTarget, kernels::kSoftmaxTarget, kernels::kLogSoftmaxTarget,
        kernels::kLayerNormTarget, kernels::kConv2dTarget, kernels::kMaxPool2dTarget,
        kernels::kAvgPool2dTarget}) {
    auto entry = kernels::FindEntry(target, 1);
    ASSERT_TRUE(entry.has_value()) << target;
    EXPECT_NE(entry->validate, nullptr);
    EXPECT_NE(entry->estimate, nullptr);
    EXPECT_THAT(std::string(entry->binding), HasSubstr("dnnl::"));
    EXPECT_FALSE(kernels::FindEntry(target, 2).has_value());
  }
}

TEST(KernelCatalogTest, EstimatesFollowShapes) {
  ASSERT_OK_AND_ASSIGN(KernelCallModule mm,
                       MakeKernelCall(kernels::kMatmulTarget, {T(kF32, {3, 5, 7}), T(kF32, {3, 7, 11})},
                                      T(kF32, {3, 5, 11})));
  EXPECT_EQ(*kernels::EstimateElementOps(*mm.call), 2u * 3 * 5 * 11 * 7);
  ASSERT_OK_AND_ASSIGN(KernelCallModule sm,
                       MakeKernelCall(kernels::kSoftmaxTarget, {T(kF32, {4, 10})}, T(kF32, {4, 10})));
  EXPECT_EQ(*kernels::EstimateElementOps(*sm.call), 200u);
  ASSERT_OK_AND_ASSIGN(KernelCallModule ln,
                       MakeKernelCall(kernels::kLayerNormTarget,
                                      {T(kF32, {4, 10}), T(kF32, {10}), T(kF32, {10})}, T(kF32, {4, 10})));
  EXPECT_EQ(*kernels::EstimateElementOps(*ln.call), 320u);
  // conv: N=1, O=4, OH=OW=3, C=2, 3x3 window, with bias: 2*1*4*9*2*9 + 36.
  ASSERT_OK_AND_ASSIGN(KernelCallModule cv,
                       MakeKernelCall(kernels::kConv2dTarget,
                                      {T(kF32, {1, 2, 5, 5}), T(kF32, {4, 2, 3, 3}), T(kF32, {4})},
                                      T(kF32, {1, 4, 3, 3})));
  EXPECT_EQ(*kernels::EstimateElementOps(*cv.call), 2u * 4 * 9 * 2 * 9 + 36);
  ASSERT_OK_AND_ASSIGN(KernelCallModule mp,
                       MakeKernelCall(kernels::kMaxPool2dTarget, {T(kF32, {1, 2, 4, 4})},
                                      T(kF32, {1, 2, 2, 2}), {{"window", std::vector<int64_t>{2, 2}}}));
  EXPECT_EQ(*kernels::EstimateElementOps(*mp.call), 2u * 4 * 4);
}

// Error group: must-fail calls assert the code and a message fragment naming the culprit.
void ExpectInvalid(StatusOr<KernelCallModule> m, std::string_view fragment) {
  ASSERT_OK(m.status());
  auto status = kernels::ValidateKernelCall(*m->call).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(std::string(fragment)));
  // Binding refuses the same call with the same error.
  auto bound = kernels::LibraryKernel::CreateForKernelCall(*m->call);
  EXPECT_EQ(bound.status(), status);
}

TEST(KernelCatalogErrorTest, UnknownTargetIsNamed) {
  ExpectInvalid(MakeKernelCall("accy.nn.frobnicate", {T(kF32, {4})}, T(kF32, {4})),
                "unknown kernel target 'accy.nn.frobnicate' version 1");
}

TEST(KernelCatalogErrorTest, UnknownVersionIsNamed) {
  auto m = MakeKernelCall(kernels::kSoftmaxTarget, {T(kF32, {4})}, T(kF32, {4}));
  ASSERT_OK(m.status());
  const_cast<Operation*>(m->call)->SetAttribute("version", int64_t{7});
  auto status = kernels::ValidateKernelCall(*m->call).status();
  EXPECT_THAT(std::string(status.message()), HasSubstr("'accy.nn.softmax' version 7"));
}

TEST(KernelCatalogErrorTest, WrongOperandCount) {
  ExpectInvalid(MakeKernelCall(kernels::kMatmulTarget, {T(kF32, {2, 3})}, T(kF32, {2, 3})),
                "has 1 operands, expected 2");
}

TEST(KernelCatalogErrorTest, WrongShapeNamesOperand) {
  ExpectInvalid(MakeKernelCall(kernels::kMatmulTarget, {T(kF32, {2, 3}), T(kF32, {4, 5})},
                               T(kF32, {2, 5})),
                "operand 1 (b) has K = 4, expected 3");
  ExpectInvalid(MakeKernelCall(kernels::kLayerNormTarget,
                               {T(kF32, {2, 3}), T(kF32, {4}), T(kF32, {3})}, T(kF32, {2, 3})),
                "operand 1 (scale) has dims [4], expected [3]");
  ExpectInvalid(MakeKernelCall(kernels::kConv2dTarget, {T(kF32, {1, 4, 5, 5}), T(kF32, {2, 3, 3, 3})},
                               T(kF32, {1, 2, 3, 3})),
                "operand 1 (w) has 3 input channels, expected 4");
  ExpectInvalid(MakeKernelCall(kernels::kSoftmaxTarget, {T(kF32, {2, 3})}, T(kF32, {3, 2})),
                "result 0 has type tensor<3x2xf32>");
  ExpectInvalid(MakeKernelCall(kernels::kMatrixProduct4x16x8F32, {T(kF32, {4, 8}), T(kF32, {8, 15})},
                               T(kF32, {4, 16})),
                "operand 1 has type tensor<8x15xf32>");
}

TEST(KernelCatalogErrorTest, UnsupportedElementTypeNamesOperand) {
  ExpectInvalid(MakeKernelCall(kernels::kMatmulTarget,
                               {T(ElementType::kI32, {2, 3}), T(ElementType::kI32, {3, 2})},
                               T(ElementType::kI32, {2, 2})),
                "operand 0 (a) has element type i32");
  ExpectInvalid(MakeKernelCall(kernels::kMatmulTarget, {T(kF32, {2, 3}), T(kBF16, {3, 2})},
                               T(kF32, {2, 2})),
                "operand 1 (b) has element type bf16, expected f32");
  ExpectInvalid(MakeKernelCall(kernels::kLayerNormTarget,
                               {T(kBF16, {2, 3}), T(kBF16, {3}), T(kF32, {3})}, T(kBF16, {2, 3})),
                "operand 1 (scale) has element type bf16");
}

TEST(KernelCatalogErrorTest, BadAttributesAreNamed) {
  ExpectInvalid(MakeKernelCall(kernels::kSoftmaxTarget, {T(kF32, {2, 3})}, T(kF32, {2, 3}),
                               {{"axis", int64_t{2}}}),
                "attribute axis = 2 is outside [-2, 2)");
  ExpectInvalid(MakeKernelCall(kernels::kMatmulTarget, {T(kF32, {2, 3}), T(kF32, {3, 2})},
                               T(kF32, {2, 2}), {{"transpose_a", int64_t{1}}}),
                "attribute transpose_a must be a bool");
  ExpectInvalid(MakeKernelCall(kernels::kMaxPool2dTarget, {T(kF32, {1, 1, 4, 4})},
                               T(kF32, {1, 1, 2, 2})),
                "missing attribute window");
  ExpectInvalid(MakeKernelCall(kernels::kConv2dTarget, {T(kF32, {1, 2, 5, 5}), T(kF32, {2, 2, 3, 3})},
                               T(kF32, {1, 2, 3, 3}), {{"layout", std::string("NCWH")}}),
                "attribute layout must be");
}

TEST(KernelCatalogErrorTest, EffectsAndAliasesAreChecked) {
  ExpectInvalid(MakeKernelCall(kernels::kSoftmaxTarget, {T(kF32, {2, 3})}, T(kF32, {2, 3}), {},
                               {"none"}),
                "operand 0 (x) has effect none but the kernel reads it");
  ExpectInvalid(MakeKernelCall(kernels::kMatmulTarget, {T(kF32, {3, 3}), T(kF32, {3, 3})},
                               T(kF32, {3, 3}), {}, {"read_write", "read"}, 0),
                "result 0 aliases operand 0, but this kernel runs in place only on operand 0 "
                "(and not at all here)");
  auto in_place = MakeKernelCall(kernels::kSoftmaxTarget, {T(kF32, {2, 3})}, T(kF32, {2, 3}), {},
                                 {"read_write"}, 0);
  ASSERT_OK(in_place.status());
  EXPECT_OK(kernels::ValidateKernelCall(*in_place->call).status());
}

}  // namespace
}  // namespace accy::kernels_test
