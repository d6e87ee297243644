// Each catalog kernel bound to oneDNN vs a naive loop in double, over f32 and bf16.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "accy/isa.h"
#include "kernels/kernel_catalog.h"
#include "kernels/onednn_kernel.h"
#include "tests/kernels/kernels_test_util.h"

namespace accy::kernels_test {
namespace {

using kernels::LibraryKernel;
constexpr auto kF32 = ElementType::kF32;
constexpr auto kBF16 = ElementType::kBF16;

// Tolerances: oneDNN accumulates in f32 (vs the loops' double) and rounds once to the type.
double Rtol(ElementType type) { return type == kBF16 ? 1.0 / 64 : 2e-5; }
double Atol(ElementType type) { return type == kBF16 ? 1.0 / 64 : 1e-5; }

// Binds `m.call`, runs it on `args` and returns result 0.
StatusOr<Tensor> BindAndRun(const KernelCallModule& m, std::vector<Tensor> args, int in_place = -1) {
  ACCY_ASSIGN_OR_RETURN(LibraryKernel kernel, LibraryKernel::CreateForKernelCall(*m.call));
  ACCY_ASSIGN_OR_RETURN(std::vector<Tensor> out, RunKernel(kernel, args, {in_place}));
  return out[0];
}

struct MatmulCase {
  ElementType type;
  std::vector<int64_t> a_dims, b_dims;
  bool ta, tb;
};

class MatmulKernelTest : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(MatmulKernelTest, MatchesNaiveLoop) {
  const MatmulCase& c = GetParam();
  const size_t ra = c.a_dims.size(), rb = c.b_dims.size();
  const int64_t m = c.ta ? c.a_dims[ra - 1] : c.a_dims[ra - 2];
  const int64_t k = c.ta ? c.a_dims[ra - 2] : c.a_dims[ra - 1];
  const int64_t n = c.tb ? c.b_dims[rb - 2] : c.b_dims[rb - 1];
  std::vector<int64_t> out_dims;
  for (size_t d = 0; d + 2 < ra; ++d) out_dims.push_back(std::max(c.a_dims[d], rb == ra ? c.b_dims[d] : 1));
  int64_t batch = 1;
  for (int64_t d : out_dims) batch *= d;
  out_dims.insert(out_dims.end(), {m, n});
  ASSERT_OK_AND_ASSIGN(KernelCallModule mod,
                       MakeKernelCall(kernels::kMatmulTarget, {T(c.type, c.a_dims), T(c.type, c.b_dims)},
                                      T(c.type, out_dims),
                                      {{"transpose_a", c.ta}, {"transpose_b", c.tb}}));
  Tensor a = Random(T(c.type, c.a_dims), 1), b = Random(T(c.type, c.b_dims), 2);
  ASSERT_OK_AND_ASSIGN(Tensor actual, BindAndRun(mod, {a, b}));
  Tensor expected = Tensor::Allocate(T(c.type, out_dims)).value();
  // Batch index -> a/b batch offsets with broadcasting of size-1 dims.
  const size_t nb = ra - 2;
  for (int64_t bi = 0; bi < batch; ++bi) {
    int64_t rem = bi, a_off = 0, b_off = 0, a_stride = m * k, b_stride = k * n;
    for (size_t d = nb; d-- > 0;) {
      const int64_t extent = out_dims[d], idx = rem % extent;
      rem /= extent;
      if (c.a_dims[d] != 1) a_off += idx * a_stride;
      a_stride *= c.a_dims[d];
      if (rb == ra) {
        if (c.b_dims[d] != 1) b_off += idx * b_stride;
        b_stride *= c.b_dims[d];
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += a.GetAsDouble(a_off + (c.ta ? p * m + i : i * k + p)) *
                 b.GetAsDouble(b_off + (c.tb ? j * k + p : p * n + j));
        }
        expected.SetFromDouble(bi * m * n + i * n + j, sum);
      }
    }
  }
  ExpectClose(actual, expected, Atol(c.type) * std::sqrt(double(k)), Rtol(c.type));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulKernelTest,
    ::testing::Values(MatmulCase{kF32, {4, 8}, {8, 16}, false, false},
                      MatmulCase{kF32, {7, 13}, {13, 5}, false, false},
                      MatmulCase{kF32, {13, 7}, {5, 13}, true, true},
                      MatmulCase{kF32, {1, 3, 9}, {1, 9, 4}, false, false},     // batch 1
                      MatmulCase{kF32, {3, 5, 6}, {3, 2, 6}, false, true},
                      MatmulCase{kF32, {2, 3, 5, 6}, {6, 7}, false, false},     // shared weights
                      MatmulCase{kF32, {2, 1, 5, 6}, {1, 3, 6, 7}, false, false},  // broadcast
                      MatmulCase{kBF16, {17, 33}, {33, 9}, false, false},
                      MatmulCase{kBF16, {2, 33, 17}, {2, 9, 33}, true, true}));

TEST(MatmulKernelTest, F16IsBoundOrRefusedAsUnimplemented) {
  ASSERT_OK_AND_ASSIGN(KernelCallModule mod,
                       MakeKernelCall(kernels::kMatmulTarget,
                                      {T(ElementType::kF16, {4, 8}), T(ElementType::kF16, {8, 4})},
                                      T(ElementType::kF16, {4, 4})));
  auto kernel = LibraryKernel::CreateForKernelCall(*mod.call);
  if (!kernel.ok()) {
    RecordProperty("f16_matmul", std::string(kernel.status().message()));
    EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented) << kernel.status();
    EXPECT_THAT(std::string(kernel.status().message()), ::testing::HasSubstr("kernel_call %"));
  }
}

TEST(MatmulKernelTest, SeedFixedEntryRuns) {
  ASSERT_OK_AND_ASSIGN(KernelCallModule mod,
                       MakeKernelCall(kernels::kMatrixProduct4x16x8F32,
                                      {T(kF32, {4, 8}), T(kF32, {8, 16})}, T(kF32, {4, 16})));
  Tensor a = Random(T(kF32, {4, 8}), 3), b = Random(T(kF32, {8, 16}), 4);
  ASSERT_OK_AND_ASSIGN(Tensor actual, BindAndRun(mod, {a, b}));
  Tensor expected = Tensor::Allocate(T(kF32, {4, 16})).value();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 16; ++j) {
      double s = 0;
      for (int p = 0; p < 8; ++p) s += a.GetAsDouble(i * 8 + p) * b.GetAsDouble(p * 16 + j);
      expected.SetFromDouble(i * 16 + j, s);
    }
  ExpectClose(actual, expected, 1e-5, 1e-5);
}

TEST(MatmulKernelTest, EmptyContractionGivesZeros) {
  ASSERT_OK_AND_ASSIGN(KernelCallModule mod,
                       MakeKernelCall(kernels::kMatmulTarget, {T(kF32, {3, 0}), T(kF32, {0, 2})},
                                      T(kF32, {3, 2})));
  ASSERT_OK_AND_ASSIGN(Tensor actual, BindAndRun(mod, {Tensor::Allocate(T(kF32, {3, 0})).value(),
                                                       Tensor::Allocate(T(kF32, {0, 2})).value()}));
  Tensor expected = Tensor::Filled(T(kF32, {3, 2}), 0.0).value();
  EXPECT_TRUE(CompareExact(actual, expected).ok);
}

TEST(LibraryKernelRunTest, WrongBuffersAreNamed) {
  ASSERT_OK_AND_ASSIGN(KernelCallModule mod,
                       MakeKernelCall(kernels::kSoftmaxTarget, {T(kF32, {2, 3})}, T(kF32, {2, 3})));
  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel, LibraryKernel::CreateForKernelCall(*mod.call));
  EXPECT_EQ(kernel.inputs().size(), 1u);
  EXPECT_EQ(kernel.outputs().size(), 1u);
  EXPECT_FALSE(kernel.implementation().empty());
  float x[6] = {}, y[6] = {};
  void* buffers[] = {x, y};
  const int64_t wrong_bytes[] = {24, 20};
  Status status = kernel.Run(buffers, wrong_bytes, 2);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              ::testing::HasSubstr("kernel_call %1 (accy.nn.softmax): buffer 1 has 20 bytes"));
  const int64_t bytes[] = {24, 24};
  EXPECT_THAT(std::string(kernel.Run(buffers, bytes, 1).message()),
              ::testing::HasSubstr("got 1 buffers, expected 2"));
  EXPECT_OK(kernel.Run(buffers, bytes, 2));
}

// softmax / log_softmax along `axis` in double.
Tensor NaiveSoftmax(const Tensor& x, int64_t axis, bool log) {
  Tensor y = Tensor::Allocate(x.type()).value();
  const std::vector<int64_t> strides = x.strides();
  const int64_t extent = x.dims()[axis], stride = strides[axis];
  for (int64_t i = 0; i < x.element_count(); ++i) {
    if ((i / stride) % extent != 0) continue;  // i is the first element of its row
    double mx = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t j = 0; j < extent; ++j) mx = std::max(mx, x.GetAsDouble(i + j * stride));
    for (int64_t j = 0; j < extent; ++j) sum += std::exp(x.GetAsDouble(i + j * stride) - mx);
    for (int64_t j = 0; j < extent; ++j) {
      const double v = x.GetAsDouble(i + j * stride) - mx;
      y.SetFromDouble(i + j * stride, log ? v - std::log(sum) : std::exp(v) / sum);
    }
  }
  return y;
}

struct SoftmaxCase {
  ElementType type;
  std::vector<int64_t> dims;
  int64_t axis;
  bool log;
  bool in_place;
};

class SoftmaxKernelTest : public ::testing::TestWithParam<SoftmaxCase> {};

TEST_P(SoftmaxKernelTest, MatchesNaiveLoop) {
  const SoftmaxCase& c = GetParam();
  const TensorType type = T(c.type, c.dims);
  ASSERT_OK_AND_ASSIGN(
      KernelCallModule mod,
      MakeKernelCall(c.log ? kernels::kLogSoftmaxTarget : kernels::kSoftmaxTarget, {type}, type,
                     {{"axis", c.axis}}, {c.in_place ? "read_write" : "read"}, c.in_place ? 0 : -1));
  Tensor x = Random(type, 5, -4, 4);
  ASSERT_OK_AND_ASSIGN(Tensor actual, BindAndRun(mod, {x}, c.in_place ? 0 : -1));
  const int64_t axis = c.axis < 0 ? c.axis + static_cast<int64_t>(c.dims.size()) : c.axis;
  ExpectClose(actual, NaiveSoftmax(x, axis, c.log), Atol(c.type), Rtol(c.type));
}

INSTANTIATE_TEST_SUITE_P(Shapes, SoftmaxKernelTest,
                         ::testing::Values(SoftmaxCase{kF32, {4, 33}, -1, false, false},
                                           SoftmaxCase{kF32, {3, 5, 7}, 1, false, false},
                                           SoftmaxCase{kF32, {1, 1000}, -1, true, false},
                                           SoftmaxCase{kF32, {6, 17}, 1, false, true},
                                           SoftmaxCase{kBF16, {5, 64}, -1, false, false},
                                           SoftmaxCase{kBF16, {5, 31}, -1, true, true}));

// Rows holding NaN or +inf, or only -inf, are NaN throughout under the contract's decomposition
// (kernel_contracts.h: x - max is NaN at a +inf, so the sum and every result are NaN); oneDNN
// 2.6's softmax_log gives -inf at the row's finite elements instead. A -inf among finite
// elements stays exact: softmax 0, log_softmax -inf. Both axes (contiguous and strided rows),
// f32 and bf16, softmax and log_softmax; found by `accy fuzz --seed 707 --first 908`.
class SoftmaxSpecialRowsTest
    : public ::testing::TestWithParam<std::tuple<ElementType, bool, int64_t>> {};

TEST_P(SoftmaxSpecialRowsTest, NonFiniteRowsFollowTheDecomposition) {
  const auto [element, log, axis] = GetParam();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::vector<double>> rows = {
      {inf, 0, 1, -inf, 2}, {nan, 0, 1, 2, 3},     {-inf, -inf, -inf, -inf, -inf},
      {-inf, 0, 1, 2, 3},   {inf, inf, 0, 0, 0},   {0.5, -1, 2, 0.25, -3},
      {-0.0, 0, 0, 0, nan}};
  const int64_t n = static_cast<int64_t>(rows.size()), c = 5;
  // axis 1: x[row, j]; axis 0: the transpose, so each row is strided.
  const std::vector<int64_t> dims = axis == 1 ? std::vector<int64_t>{n, c} : std::vector<int64_t>{c, n};
  const TensorType type = T(element, dims);
  Tensor x = Tensor::Allocate(type).value();
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < c; ++j) {
      x.SetFromDouble(axis == 1 ? r * c + j : j * n + r, rows[static_cast<size_t>(r)][static_cast<size_t>(j)]);
    }
  }
  ASSERT_OK_AND_ASSIGN(KernelCallModule mod,
                       MakeKernelCall(log ? kernels::kLogSoftmaxTarget : kernels::kSoftmaxTarget,
                                      {type}, type, {{"axis", axis}}));
  StatusOr<Tensor> actual = BindAndRun(mod, {x});
  ASSERT_OK(actual.status());
  const Tensor expected = NaiveSoftmax(x, axis, log);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < c; ++j) {
      const int64_t i = axis == 1 ? r * c + j : j * n + r;
      const double a = actual->GetAsDouble(i), e = expected.GetAsDouble(i);
      if (std::isnan(e) || std::isinf(e)) {
        EXPECT_TRUE(std::isnan(e) ? std::isnan(a) : a == e)
            << "row " << r << " element " << j << ": got " << a << ", expected " << e;
      } else {
        EXPECT_NEAR(a, e, Atol(element) + Rtol(element) * std::abs(e))
            << "row " << r << " element " << j;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Rows, SoftmaxSpecialRowsTest,
                         ::testing::Combine(::testing::Values(kF32, kBF16), ::testing::Bool(),
                                            ::testing::Values(int64_t{0}, int64_t{1})));

struct LayerNormCase {
  ElementType type;
  std::vector<int64_t> dims;
  bool in_place;
};

class LayerNormKernelTest : public ::testing::TestWithParam<LayerNormCase> {};

TEST_P(LayerNormKernelTest, MatchesNaiveLoop) {
  const LayerNormCase& c = GetParam();
  const TensorType type = T(c.type, c.dims);
  const int64_t ch = c.dims.back();
  ASSERT_OK_AND_ASSIGN(KernelCallModule mod,
                       MakeKernelCall(kernels::kLayerNormTarget, {type, T(kF32, {ch}), T(kF32, {ch})},
                                      type, {{"epsilon", 1e-3}},
                                      {c.in_place ? "read_write" : "read", "read", "read"},
                                      c.in_place ? 0 : -1));
  Tensor x = Random(type, 6, -3, 5), scale = Random(T(kF32, {ch}), 7), shift = Random(T(kF32, {ch}), 8);
  ASSERT_OK_AND_ASSIGN(Tensor actual, BindAndRun(mod, {x, scale, shift}, c.in_place ? 0 : -1));
  Tensor expected = Tensor::Allocate(type).value();
  for (int64_t row = 0; row < x.element_count() / ch; ++row) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < ch; ++j) mean += x.GetAsDouble(row * ch + j);
    mean /= double(ch);
    for (int64_t j = 0; j < ch; ++j) var += std::pow(x.GetAsDouble(row * ch + j) - mean, 2);
    var /= double(ch);
    for (int64_t j = 0; j < ch; ++j) {
      expected.SetFromDouble(row * ch + j, (x.GetAsDouble(row * ch + j) - mean) /
                                                   std::sqrt(var + 1e-3) * scale.GetAsDouble(j) +
                                               shift.GetAsDouble(j));
    }
  }
  ExpectClose(actual, expected, 4 * Atol(c.type), 4 * Rtol(c.type));
}

INSTANTIATE_TEST_SUITE_P(Shapes, LayerNormKernelTest,
                         ::testing::Values(LayerNormCase{kF32, {4, 64}, false},
                                           LayerNormCase{kF32, {2, 3, 37}, false},
                                           LayerNormCase{kF32, {1, 5}, true},
                                           LayerNormCase{kBF16, {7, 96}, false},
                                           // Rank 1 (one row; found by accy fuzz: oneDNN
                                           // refused the rank-1 descriptor, kInternal).
                                           LayerNormCase{kF32, {64}, false},
                                           LayerNormCase{kBF16, {37}, true}));

// bf16/f16 kernel_calls run on every host: natively where oneDNN has the primitive, else the
// f32 primitive over staged copies (onednn_common.h). The staged result is exactly the f32
// kernel's on the widened input, rounded once.
TEST(LowPrecisionKernelCallTest, StagedRunIsTheF32KernelRoundedOnce) {
  for (ElementType type : {kBF16, ElementType::kF16}) {
    SCOPED_TRACE(ElementTypeName(type));
    const TensorType low = T(type, {7, 45});
    const TensorType wide = T(kF32, {7, 45});
    ASSERT_OK_AND_ASSIGN(KernelCallModule low_call,
                         MakeKernelCall(kernels::kSoftmaxTarget, {low}, low, {{"axis", int64_t{1}}}));
    ASSERT_OK_AND_ASSIGN(KernelCallModule f32_call,
                         MakeKernelCall(kernels::kSoftmaxTarget, {wide}, wide, {{"axis", int64_t{1}}}));
    ASSERT_OK_AND_ASSIGN(LibraryKernel kernel, LibraryKernel::CreateForKernelCall(*low_call.call));
    const bool staged = kernel.implementation().find("staged as f32") != std::string::npos;
    const Tensor x = Random(low, 21, -6, 6);
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, RunKernel(kernel, std::vector<Tensor>{x}));
    Tensor x32 = *Tensor::Allocate(wide);
    for (int64_t i = 0; i < x.element_count(); ++i) x32.SetFromDouble(i, x.GetAsDouble(i));
    ASSERT_OK_AND_ASSIGN(Tensor y32, BindAndRun(f32_call, {x32}));
    Tensor rounded = *Tensor::Allocate(low);
    for (int64_t i = 0; i < x.element_count(); ++i) rounded.SetFromDouble(i, y32.GetAsDouble(i));
    if (staged) {
      EXPECT_EQ(std::memcmp(out[0].data(), rounded.data(), static_cast<size_t>(rounded.byte_size())), 0)
          << kernel.implementation();
    } else {
      const double tol = type == kBF16 ? 1.0 / 64 : 2e-3;
      ExpectClose(out[0], rounded, tol, tol);
    }
  }
}

// Where the host has no AVX-512, oneDNN 2.6 has no bf16 primitives: the binding must stage.
TEST(LowPrecisionKernelCallTest, HostsWithoutAvx512StageBf16) {
  if (HostIsa() == Isa::kAvx512 && ProcessIsa().value_or(Isa::kAvx512) == Isa::kAvx512) {
    GTEST_SKIP() << "oneDNN has native bf16 primitives on this AVX-512 host";
  }
  const TensorType type = T(kBF16, {4, 16});
  ASSERT_OK_AND_ASSIGN(KernelCallModule call,
                       MakeKernelCall(kernels::kSoftmaxTarget, {type}, type, {{"axis", int64_t{1}}}));
  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel, LibraryKernel::CreateForKernelCall(*call.call));
  EXPECT_THAT(kernel.implementation(), ::testing::HasSubstr("(bf16/f16 staged as f32)"));
}

}  // namespace
}  // namespace accy::kernels_test
