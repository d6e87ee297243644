// The small-M matmul kernel (kernels/small_m_matmul.h) on its own, and dot_general items bound
// to it (kernels/small_m_dot_general.cc) against the reference evaluator.
#include "kernels/small_m_matmul.h"

#include <omp.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/onednn_kernel.h"
#include "src/reference/reference_evaluator.h"
#include "tests/kernels/kernels_test_util.h"
#include "tests/schedule/schedule_test_util.h"

namespace accy::kernels_test {
namespace {

using kernels::LibraryKernel;
constexpr auto kF32 = ElementType::kF32;

// The ISAs the kernel has code for that this process may run.
std::vector<Isa> TestedIsas() {
  std::vector<Isa> isas;
  const Isa process = ProcessIsa().value();
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (isa <= process && kernels::SmallMMatmulSupports(isa)) isas.push_back(isa);
  }
  return isas;
}

std::vector<float> RandomFloats(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(SmallMMatmulTest, SupportsAvx2AndAvx512Only) {
  EXPECT_FALSE(kernels::SmallMMatmulSupports(Isa::kX86_64));
  EXPECT_TRUE(kernels::SmallMMatmulSupports(Isa::kAvx2));
  EXPECT_TRUE(kernels::SmallMMatmulSupports(Isa::kAvx512));
  EXPECT_EQ(kernels::SmallMPanelColumns(Isa::kAvx512), 48);
  EXPECT_EQ(kernels::SmallMPanelColumns(Isa::kAvx2), 16);
  EXPECT_EQ(kernels::SmallMPackedElements(3, 49, Isa::kAvx512), 3 * 96);
  EXPECT_EQ(kernels::SmallMPackedElements(3, 48, Isa::kAvx512), 3 * 48);
  EXPECT_EQ(kernels::SmallMPackedElements(5, 17, Isa::kAvx2), 5 * 32);
  EXPECT_EQ(kernels::SmallMPackedElements(5, 16, Isa::kAvx2), 5 * 16);
}

// Every dst element is the sequential fused multiply-add sum over k, then + bias: bit for bit
// what a scalar fmaf loop gives, for row counts below, at and above a pass (7 on AVX2, 8 on
// AVX-512), partial panels, both weight layouts (row-major [K, N] with a padded row stride, and
// [N, K]), with and without bias, at 1 and 2 threads.
TEST(SmallMMatmulTest, BitExactWithSequentialFusedSums) {
  for (Isa isa : TestedIsas()) {
    for (int64_t rows : {1, 3, 4, 5, 7, 8, 9, 15, 16}) {
      for (int64_t k : {1, 7, 64}) {
        for (int64_t n : {1, 15, 16, 17, 47, 48, 49, 130}) {
          for (bool nk_layout : {false, true}) {
            for (bool with_bias : {false, true}) {
              SCOPED_TRACE(testing::Message()
                           << IsaName(isa) << " M " << rows << " K " << k << " N " << n
                           << (nk_layout ? " [N,K]" : " [K,N]") << (with_bias ? " bias" : ""));
              const int64_t lhs_stride = k + 3, dst_stride = n + 2;
              const int64_t stride_k = nk_layout ? 1 : n + 5, stride_n = nk_layout ? k : 1;
              const std::vector<float> lhs = RandomFloats(rows * lhs_stride, 1);
              const std::vector<float> w = RandomFloats(nk_layout ? n * k : k * stride_k,
                                                        static_cast<uint32_t>(rows * 7 + k + n));
              const std::vector<float> bias = RandomFloats(n, 3);
              std::vector<float> packed(kernels::SmallMPackedElements(k, n, isa));
              kernels::PackSmallMWeights(w.data(), k, n, stride_k, stride_n, isa, packed.data());
              std::vector<float> expected(rows * dst_stride, 0.0f);
              for (int64_t m = 0; m < rows; ++m) {
                for (int64_t j = 0; j < n; ++j) {
                  float acc = 0.0f;
                  for (int64_t kk = 0; kk < k; ++kk) {
                    acc = std::fma(lhs[m * lhs_stride + kk], w[kk * stride_k + j * stride_n], acc);
                  }
                  expected[m * dst_stride + j] = with_bias ? acc + bias[j] : acc;
                }
              }
              for (int threads : {1, 2}) {
                // NaN in the gaps between dst rows: the kernel must not write there.
                std::vector<float> dst(rows * dst_stride, NAN);
                omp_set_num_threads(threads);
                kernels::SmallMMatmul(lhs.data(), rows, lhs_stride, packed.data(), k, n,
                                      with_bias ? bias.data() : nullptr, dst.data(), dst_stride,
                                      isa);
                for (int64_t m = 0; m < rows; ++m) {
                  ASSERT_EQ(std::memcmp(&dst[m * dst_stride], &expected[m * dst_stride],
                                        static_cast<size_t>(n) * sizeof(float)),
                            0)
                      << "row " << m << ", " << threads << " threads";
                  for (int64_t j = n; j < dst_stride; ++j) {
                    ASSERT_TRUE(std::isnan(dst[m * dst_stride + j])) << "row " << m << " gap " << j;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

// A dot_general item with bias, `weights` [N, K] (as exporters write transposed weights) or
// [K, N], the weights a constant op or the function's parameter 1.
using SmallDot = testing_util::PlannedItem;

StatusOr<SmallDot> MakeSmallDot(int64_t m, int64_t k, int64_t n, bool nk_layout,
                                const Tensor* constant_weights) {
  Builder builder("small_m_test");
  const TensorType lhs = T(kF32, {m, k}), out = T(kF32, {m, n}), bias = T(kF32, {n});
  const TensorType weights = nk_layout ? T(kF32, {n, k}) : T(kF32, {k, n});
  std::vector<TensorType> params = {lhs, bias};
  if (constant_weights == nullptr) params.insert(params.begin() + 1, weights);
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder fb, builder.BeginFunction("main", params, {out}));
  Value* w = constant_weights != nullptr ? *fb.Constant(*constant_weights) : fb.Parameter(1);
  Value* b = fb.Parameter(constant_weights != nullptr ? 1 : 2);
  ACCY_ASSIGN_OR_RETURN(Value * dot,
                        fb.DotGeneral(fb.Parameter(0), w, out, {1}, {nk_layout ? 1 : 0}, {}, {}));
  ACCY_ASSIGN_OR_RETURN(Value * bias_b, fb.BroadcastInDim(b, out, {1}));
  ACCY_ASSIGN_OR_RETURN(Value * sum, fb.Add(dot, bias_b));
  ACCY_RETURN_IF_ERROR(fb.Return({sum}));
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, builder.Finish());
  return testing_util::PlanItemOfKind(std::move(module), WorkKind::kDotGeneral);
}

bool IsSmallM(const LibraryKernel& kernel) {
  return kernel.implementation().rfind("accy:small_m_matmul:", 0) == 0;
}

// Declared-constant weights in either layout bind the small-M kernel (bias included) and match
// the reference; the packed copy is refilled from a new address and, as declared, not from
// new contents at the address it was packed from.
TEST(SmallMDotGeneralTest, DeclaredConstantWeightsArePackedOncePerAddress) {
  if (TestedIsas().empty()) GTEST_SKIP() << "no AVX2 on this host";
  for (bool nk_layout : {true, false}) {
    SCOPED_TRACE(nk_layout ? "[N, K] weights" : "[K, N] weights");
    ASSERT_OK_AND_ASSIGN(SmallDot dot, MakeSmallDot(7, 96, 100, nk_layout, nullptr));
    const Function& main = *dot.module->functions()[0];
    const Value* weights_param = main.parameter(1);
    kernels::LibraryKernelOptions options{.min_dot_element_ops = 0};
    options.constant_parameters = std::span<const Value* const>(&weights_param, 1);
    ASSERT_OK_AND_ASSIGN(LibraryKernel kernel,
                         LibraryKernel::Create(*dot.item, dot.fusion, options));
    EXPECT_TRUE(IsSmallM(kernel)) << kernel.implementation();
    EXPECT_EQ(kernel.outputs()[0], dot.item->root->result(0)) << "the bias add is in the kernel";
    std::vector<Tensor> args;
    for (const TensorType& t : main.parameter_types()) {
      args.push_back(Random(t, static_cast<uint32_t>(args.size() + 11)));
    }
    std::vector<void*> buffers;
    std::vector<int64_t> bytes;
    ASSERT_OK_AND_ASSIGN(Tensor out, Tensor::Allocate(dot.item->root->result(0)->type()));
    for (Tensor* t : {&args[0], &args[1], &args[2], &out}) {
      buffers.push_back(t->data());
      bytes.push_back(t->byte_size());
    }
    auto run_and_compare = [&](std::span<const Tensor> inputs, const char* what) {
      SCOPED_TRACE(what);
      ASSERT_OK(kernel.Run(buffers.data(), bytes.data(), 4));
      ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*dot.module, "main", inputs));
      ExpectClose(out, expected[0], 1e-5, 1e-5);
    };
    run_and_compare(args, "first run");
    // New weights at a new address: repacked.
    Tensor other = Random(args[1].type(), 77);
    buffers[1] = other.data();
    std::vector<Tensor> other_args = {args[0], other, args[2]};
    run_and_compare(other_args, "weights at a new address");
    // New contents at the packed address: the declared-constant contract keeps the packed copy.
    Tensor third = Random(args[1].type(), 78);
    std::memcpy(other.data(), third.data(), static_cast<size_t>(other.byte_size()));
    run_and_compare(std::vector<Tensor>{args[0], Random(args[1].type(), 77), args[2]},
                    "same address, new contents: still the packed weights");
  }
}

// Which dot_generals take the small-M kernel: constant-op weights do; weights that are neither
// constant nor declared, more than kSmallMMaxRows rows, or the option cleared keep matmul.
TEST(SmallMDotGeneralTest, OnlySmallProductsWithConstantWeightsBindIt) {
  if (TestedIsas().empty()) GTEST_SKIP() << "no AVX2 on this host";
  const Tensor weights = Random(T(kF32, {40, 64}), 5);
  ASSERT_OK_AND_ASSIGN(SmallDot constant_dot, MakeSmallDot(16, 64, 40, true, &weights));
  kernels::LibraryKernelOptions any{.min_dot_element_ops = 0};
  ASSERT_OK_AND_ASSIGN(LibraryKernel constant_kernel,
                       LibraryKernel::Create(*constant_dot.item, constant_dot.fusion, any));
  EXPECT_TRUE(IsSmallM(constant_kernel)) << constant_kernel.implementation();
  EXPECT_NE(constant_kernel.implementation().find("constant weights packed once"),
            std::string::npos);
  const Function& main = *constant_dot.module->functions()[0];
  std::vector<Tensor> args = {Random(main.parameter_types()[0], 1),
                              Random(main.parameter_types()[1], 2)};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, RunKernel(constant_kernel, args));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(*constant_dot.module, "main", args));
  ExpectClose(actual[0], expected[0], 1e-5, 1e-5);

  kernels::LibraryKernelOptions off = any;
  off.allow_small_m_kernel = false;
  ASSERT_OK_AND_ASSIGN(LibraryKernel matmul,
                       LibraryKernel::Create(*constant_dot.item, constant_dot.fusion, off));
  EXPECT_FALSE(IsSmallM(matmul)) << matmul.implementation();

  const Tensor tall_weights = Random(T(kF32, {40, 64}), 6);
  ASSERT_OK_AND_ASSIGN(SmallDot tall, MakeSmallDot(17, 64, 40, true, &tall_weights));
  ASSERT_OK_AND_ASSIGN(LibraryKernel tall_kernel,
                       LibraryKernel::Create(*tall.item, tall.fusion, any));
  EXPECT_FALSE(IsSmallM(tall_kernel)) << tall_kernel.implementation();

  ASSERT_OK_AND_ASSIGN(SmallDot parameter, MakeSmallDot(7, 64, 40, true, nullptr));
  ASSERT_OK_AND_ASSIGN(LibraryKernel parameter_kernel,
                       LibraryKernel::Create(*parameter.item, parameter.fusion, any));
  EXPECT_FALSE(IsSmallM(parameter_kernel)) << parameter_kernel.implementation();
}

}  // namespace
}  // namespace accy::kernels_test
