// accy.nn.conv2d, max_pool2d and avg_pool2d on oneDNN vs naive loops in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/kernel_catalog.h"
#include "kernels/onednn_kernel.h"
#include "tests/kernels/kernels_test_util.h"

namespace accy::kernels_test {
namespace {

using kernels::LibraryKernel;
constexpr auto kF32 = ElementType::kF32;
constexpr auto kBF16 = ElementType::kBF16;

struct Geometry {
  int64_t n, c, h, w, o, kh, kw;
  int64_t sh = 1, sw = 1;
  int64_t ph_lo = 0, ph_hi = 0, pw_lo = 0, pw_hi = 0;
  int64_t dh = 1, dw = 1;
  int64_t groups = 1;
  int64_t oh() const { return (h + ph_lo + ph_hi - (kh - 1) * dh - 1) / sh + 1; }
  int64_t ow() const { return (w + pw_lo + pw_hi - (kw - 1) * dw - 1) / sw + 1; }
};

// Linear index of activation element (n, c, y, x) in NCHW or NHWC.
int64_t At(bool nhwc, int64_t c_, int64_t h_, int64_t w_, int64_t n, int64_t c, int64_t y, int64_t x) {
  return nhwc ? ((n * h_ + y) * w_ + x) * c_ + c : ((n * c_ + c) * h_ + y) * w_ + x;
}

struct ConvCase {
  ElementType type;
  bool nhwc;
  bool bias;
  Geometry g;
};

class Conv2dKernelTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv2dKernelTest, MatchesNaiveLoop) {
  const ConvCase& c = GetParam();
  const Geometry& g = c.g;
  const int64_t ig = g.c / g.groups, og = g.o / g.groups, oh = g.oh(), ow = g.ow();
  const TensorType x_type = T(c.type, c.nhwc ? std::vector<int64_t>{g.n, g.h, g.w, g.c}
                                             : std::vector<int64_t>{g.n, g.c, g.h, g.w});
  const TensorType w_type = T(c.type, c.nhwc ? std::vector<int64_t>{g.kh, g.kw, ig, g.o}
                                             : std::vector<int64_t>{g.o, ig, g.kh, g.kw});
  const TensorType y_type = T(c.type, c.nhwc ? std::vector<int64_t>{g.n, oh, ow, g.o}
                                             : std::vector<int64_t>{g.n, g.o, oh, ow});
  std::vector<TensorType> params = {x_type, w_type};
  if (c.bias) params.push_back(T(kF32, {g.o}));
  ASSERT_OK_AND_ASSIGN(
      KernelCallModule mod,
      MakeKernelCall(kernels::kConv2dTarget, params, y_type,
                     {{"layout", std::string(c.nhwc ? "NHWC" : "NCHW")},
                      {"strides", std::vector<int64_t>{g.sh, g.sw}},
                      {"padding", std::vector<int64_t>{g.ph_lo, g.ph_hi, g.pw_lo, g.pw_hi}},
                      {"dilation", std::vector<int64_t>{g.dh, g.dw}},
                      {"groups", g.groups}}));
  std::vector<Tensor> args = {Random(x_type, 11), Random(w_type, 12)};
  if (c.bias) args.push_back(Random(T(kF32, {g.o}), 13));
  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel, LibraryKernel::CreateForKernelCall(*mod.call));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, RunKernel(kernel, args));
  Tensor expected = Tensor::Allocate(y_type).value();
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t o = 0; o < g.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          const int64_t group = o / og;
          double sum = c.bias ? args[2].GetAsDouble(o) : 0;
          for (int64_t i = 0; i < ig; ++i)
            for (int64_t ky = 0; ky < g.kh; ++ky)
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                const int64_t iy = y * g.sh - g.ph_lo + ky * g.dh, ix = x * g.sw - g.pw_lo + kx * g.dw;
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                const int64_t widx = c.nhwc ? ((ky * g.kw + kx) * ig + i) * g.o + o
                                            : ((o * ig + i) * g.kh + ky) * g.kw + kx;
                sum += args[0].GetAsDouble(At(c.nhwc, g.c, g.h, g.w, n, group * ig + i, iy, ix)) *
                       args[1].GetAsDouble(widx);
              }
          expected.SetFromDouble(At(c.nhwc, g.o, oh, ow, n, o, y, x), sum);
        }
  const double tol = c.type == kBF16 ? 1.0 / 32 : 1e-4;
  ExpectClose(out[0], expected, tol, tol);
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, Conv2dKernelTest,
    ::testing::Values(ConvCase{kF32, false, false, {1, 3, 8, 8, 4, 3, 3}},
                      ConvCase{kF32, false, true, {2, 4, 9, 7, 6, 3, 2, 2, 1, 1, 1, 0, 1}},
                      ConvCase{kF32, true, true, {1, 3, 10, 10, 5, 3, 3, 1, 2, 2, 2, 1, 1}},
                      ConvCase{kF32, false, false, {1, 4, 11, 11, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2}},
                      ConvCase{kF32, false, true, {2, 6, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2}},
                      ConvCase{kF32, true, false, {1, 8, 6, 6, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8}},
                      ConvCase{kBF16, false, false, {1, 16, 8, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1}},
                      ConvCase{kBF16, true, true, {1, 16, 8, 8, 32, 1, 1}}));

// Constant weights take the convolution's preferred layout (one compile-time reorder); the
// result equals the same convolution with the weights as a parameter.
TEST(Conv2dKernelTest, ConstantWeightsMatchParameterWeights) {
  for (bool nhwc : {false, true}) {
    const TensorType x_type = T(kF32, nhwc ? std::vector<int64_t>{2, 9, 9, 16} : std::vector<int64_t>{2, 16, 9, 9});
    const TensorType w_type = T(kF32, nhwc ? std::vector<int64_t>{3, 3, 16, 32} : std::vector<int64_t>{32, 16, 3, 3});
    const TensorType y_type = T(kF32, nhwc ? std::vector<int64_t>{2, 9, 9, 32} : std::vector<int64_t>{2, 32, 9, 9});
    const std::vector<NamedAttribute> attrs = {{"layout", std::string(nhwc ? "NHWC" : "NCHW")},
                                               {"padding", std::vector<int64_t>{1, 1, 1, 1}}};
    const Tensor x = Random(x_type, 31), w = Random(w_type, 32);
    ASSERT_OK_AND_ASSIGN(KernelCallModule by_param,
                         MakeKernelCall(kernels::kConv2dTarget, {x_type, w_type}, y_type, attrs));
    ASSERT_OK_AND_ASSIGN(LibraryKernel param_kernel, LibraryKernel::CreateForKernelCall(*by_param.call));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, RunKernel(param_kernel, std::vector<Tensor>{x, w}));

    Builder builder("conv_const");
    ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("main", {x_type}, {y_type}));
    ASSERT_OK_AND_ASSIGN(Value * weights, fb.Constant(w));
    std::vector<NamedAttribute> call_attrs = {{"call_target_name", std::string(kernels::kConv2dTarget)},
                                              {"version", int64_t{1}}};
    call_attrs.insert(call_attrs.end(), attrs.begin(), attrs.end());
    ASSERT_OK_AND_ASSIGN(Operation * call,
                         fb.CreateOp(OpKind::kKernelCall, {fb.Parameter(0), weights}, {y_type}, call_attrs));
    ASSERT_OK(fb.Return({call->result(0)}));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
    ASSERT_OK_AND_ASSIGN(LibraryKernel const_kernel, LibraryKernel::CreateForKernelCall(*call));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, RunKernel(const_kernel, std::vector<Tensor>{x}));
    ExpectClose(actual[0], expected[0], 1e-4, 1e-4);
    RecordProperty(nhwc ? "nhwc_const_impl" : "nchw_const_impl", const_kernel.implementation());
  }
}

struct PoolCase {
  ElementType type;
  bool nhwc;
  bool is_max;
  bool include_pad;
  Geometry g;  // kh/kw is the window; o unused
};

class Pool2dKernelTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(Pool2dKernelTest, MatchesNaiveLoop) {
  const PoolCase& c = GetParam();
  const Geometry& g = c.g;
  const int64_t oh = g.oh(), ow = g.ow();
  const TensorType x_type = T(c.type, c.nhwc ? std::vector<int64_t>{g.n, g.h, g.w, g.c}
                                             : std::vector<int64_t>{g.n, g.c, g.h, g.w});
  const TensorType y_type = T(c.type, c.nhwc ? std::vector<int64_t>{g.n, oh, ow, g.c}
                                             : std::vector<int64_t>{g.n, g.c, oh, ow});
  std::vector<NamedAttribute> attrs = {{"layout", std::string(c.nhwc ? "NHWC" : "NCHW")},
                                       {"window", std::vector<int64_t>{g.kh, g.kw}},
                                       {"strides", std::vector<int64_t>{g.sh, g.sw}},
                                       {"padding", std::vector<int64_t>{g.ph_lo, g.ph_hi, g.pw_lo, g.pw_hi}}};
  if (!c.is_max) attrs.push_back({"count_include_pad", c.include_pad});
  ASSERT_OK_AND_ASSIGN(KernelCallModule mod,
                       MakeKernelCall(c.is_max ? kernels::kMaxPool2dTarget : kernels::kAvgPool2dTarget,
                                      {x_type}, y_type, attrs));
  Tensor x = Random(x_type, 21);
  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel, LibraryKernel::CreateForKernelCall(*mod.call));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, RunKernel(kernel, std::vector<Tensor>{x}));
  Tensor expected = Tensor::Allocate(y_type).value();
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t ch = 0; ch < g.c; ++ch)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double acc = c.is_max ? -std::numeric_limits<double>::infinity() : 0;
          int64_t count = 0, padded_count = 0;
          for (int64_t ky = 0; ky < g.kh; ++ky)
            for (int64_t kx = 0; kx < g.kw; ++kx) {
              const int64_t iy = y * g.sh - g.ph_lo + ky, ix = xx * g.sw - g.pw_lo + kx;
              // Window cells beyond the high padding are not counted (PyTorch/oneDNN).
              if (iy < g.h + g.ph_hi && ix < g.w + g.pw_hi) ++padded_count;
              if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
              const double v = x.GetAsDouble(At(c.nhwc, g.c, g.h, g.w, n, ch, iy, ix));
              acc = c.is_max ? std::max(acc, v) : acc + v;
              ++count;
            }
          if (!c.is_max) acc /= double(c.include_pad ? padded_count : count);
          expected.SetFromDouble(At(c.nhwc, g.c, oh, ow, n, ch, y, xx), acc);
        }
  const double tol = c.type == kBF16 ? 1.0 / 64 : 1e-6;
  ExpectClose(out[0], expected, tol, tol);
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, Pool2dKernelTest,
    ::testing::Values(PoolCase{kF32, false, true, false, {1, 3, 8, 8, 0, 2, 2, 2, 2}},
                      PoolCase{kF32, true, true, false, {2, 5, 9, 7, 0, 3, 3, 2, 2, 1, 1, 1, 1}},
                      PoolCase{kF32, false, false, false, {1, 4, 7, 7, 0, 3, 3, 2, 2, 1, 1, 1, 1}},
                      PoolCase{kF32, false, false, true, {1, 4, 7, 7, 0, 3, 3, 2, 2, 1, 1, 1, 1}},
                      PoolCase{kF32, true, false, false, {1, 3, 5, 6, 0, 2, 3, 1, 2}},
                      PoolCase{kBF16, false, true, false, {1, 16, 8, 8, 0, 2, 2, 2, 2}},
                      PoolCase{kBF16, true, false, false, {1, 16, 8, 8, 0, 3, 3, 1, 1, 1, 1, 1, 1}}));

}  // namespace
}  // namespace accy::kernels_test
