// geqrf and orgqr through the engine (kernels/lapack_kernels.cc: LAPACK xGEQRF / xORGQR as library
// items) vs the reference evaluator's Householder loops in double: the factored matrix and tau,
// and q = orgqr(geqrf(a)) in one program, for f32 and f64, square, tall and wide, batched, up to
// 120 x 100 (LAPACK's blocked paths); and, independently of both, Q^T Q = I and Q R = a.
// Random a uniform in [-1, 1). Tolerances x max(1, max |reference|): f64 1e-12, f32 2e-5.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "src/util/str_cat.h"
#include "tests/kernels/kernels_test_util.h"

namespace accy::kernels_test {
namespace {

using Dims = std::vector<int64_t>;
using E = ElementType;

// main(a) -> (geqrf(a)..., orgqr of its first K = min(M, N) columns): a [batch..., M, N] gives
// the factored a, tau [batch..., K] and q [batch..., M, K] (JAX's reduced QR: the reflectors are
// sliced to M x K first).
std::unique_ptr<Module> Program(E type, const Dims& dims) {
  const int64_t m = dims[dims.size() - 2], n = dims.back(), k = std::min(m, n);
  Dims batch(dims.begin(), dims.end() - 2);
  Dims tau = batch, q = batch;
  tau.push_back(k);
  q.push_back(m);
  q.push_back(k);
  Builder builder("qr_test");
  FunctionBuilder f = *builder.BeginFunction("main", {T(type, dims)},
                                             {T(type, dims), T(type, tau), T(type, q)});
  StatusOr<std::vector<Value*>> qr = f.Geqrf(f.Parameter(0));
  EXPECT_TRUE(qr.ok()) << qr.status();
  std::vector<int64_t> start(dims.size(), 0), limit = dims, strides(dims.size(), 1);
  limit.back() = k;
  StatusOr<Value*> reflectors = f.Slice((*qr)[0], start, limit, strides);
  EXPECT_TRUE(reflectors.ok()) << reflectors.status();
  StatusOr<Value*> orthonormal = f.Orgqr(*reflectors, (*qr)[1]);
  EXPECT_TRUE(orthonormal.ok()) << orthonormal.status();
  EXPECT_TRUE(f.Return({(*qr)[0], (*qr)[1], *orthonormal}).ok());
  return *builder.Finish();
}

void ExpectMatchesReference(E type, const Dims& dims) {
  const std::string what = StrCat(ElementTypeName(type), " ", dims.size(), "-d ",
                                  dims[dims.size() - 2], "x", dims.back());
  std::unique_ptr<Module> module = Program(type, dims);
  const std::vector<Tensor> inputs = {Random(T(type, dims), 53)};
  EngineOptions options;
  options.num_threads = 2;
  options.reduce_threads_under_load = false;
  std::unique_ptr<Engine> engine = Engine::Create(options).value();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> got, exe->Run(inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, Evaluate(*module, "main", inputs));
  const double abs = type == E::kF64 ? 1e-12 : 2e-5;
  for (size_t r = 0; r < 3; ++r) {
    double scale = 1;
    for (int64_t i = 0; i < want[r].element_count(); ++i) {
      scale = std::max(scale, std::fabs(want[r].GetAsDouble(i)));
    }
    for (int64_t i = 0; i < want[r].element_count(); ++i) {
      const double g = got[r].GetAsDouble(i), w = want[r].GetAsDouble(i);
      if (!(std::fabs(g - w) <= abs * scale)) {
        ADD_FAILURE() << what << ": result " << r << " element " << i << " is " << g
                      << ", reference " << w;
        return;
      }
    }
  }
  // Q^T Q = I and Q R = a for the first batch, in double from the engine's results.
  const int64_t m = dims[dims.size() - 2], n = dims.back(), k = std::min(m, n);
  auto q = [&](int64_t i, int64_t j) { return got[2].GetAsDouble(i * k + j); };
  auto r = [&](int64_t i, int64_t j) { return i > j ? 0.0 : got[0].GetAsDouble(i * n + j); };
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      double dot = 0;
      for (int64_t t = 0; t < m; ++t) dot += q(t, i) * q(t, j);
      ASSERT_NEAR(dot, i == j ? 1.0 : 0.0, 50 * abs) << what << " Q^T Q " << i << "," << j;
    }
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t t = 0; t < k; ++t) sum += q(i, t) * r(t, j);
      ASSERT_NEAR(sum, inputs[0].GetAsDouble(i * n + j), 50 * abs) << what << " QR " << i << ","
                                                                    << j;
    }
  }
}

TEST(LapackQrTest, GeqrfAndOrgqrMatchReferenceAndReconstructA) {
  for (E type : {E::kF32, E::kF64}) {
    ExpectMatchesReference(type, {1, 1});
    ExpectMatchesReference(type, {5, 5});
    ExpectMatchesReference(type, {2, 3, 7, 4});
    ExpectMatchesReference(type, {3, 6});
    ExpectMatchesReference(type, {120, 100});
  }
}

TEST(LapackQrTest, EmptyShapesRun) {
  for (const Dims& dims : {Dims{0, 0}, Dims{2, 0, 3}, Dims{4, 0}}) {
    std::unique_ptr<Module> module = Program(E::kF32, dims);
    std::unique_ptr<Engine> engine = Engine::Create().value();
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                         exe->Run(std::vector<Tensor>{Tensor::Allocate(T(E::kF32, dims)).value()}));
    EXPECT_EQ(out.size(), 3u);
  }
}

}  // namespace
}  // namespace accy::kernels_test
