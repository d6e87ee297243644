// Every fused work kind through the engine in f32, bf16 and f16 (and f64 where the kind allows),
// against the reference evaluator: elementwise chains, reductions, row pipelines (softmax, layer
// norm), attention, and matmul with a bias + GELU epilogue. Tolerances are per element type,
// stated in Tolerance() below.
#include <cmath>
#include <limits>
#include <random>

#include "accy/builder.h"
#include "accy/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/reference/reference_evaluator.h"
#include "tests/test_util.h"

namespace accy {
namespace {

struct Tol {
  double atol, rtol;
};

// bf16 keeps 8 significant bits (2^-8 = 0.4% per rounding) and f16 11 (0.05%): a fused kernel
// rounds once where the reference rounds after every op, so a few roundings apart.
Tol Tolerance(ElementType t) {
  switch (t) {
    case ElementType::kBF16: return {3e-2, 3e-2};
    case ElementType::kF16: return {4e-3, 4e-3};
    case ElementType::kF64: return {1e-12, 1e-12};
    default: return {2e-6, 2e-5};
  }
}

class Program {
 public:
  Program(ElementType t, std::vector<std::vector<int64_t>> params,
          std::vector<int64_t> result_dims)
      : t_(t), builder_("coverage") {
    std::vector<TensorType> types;
    for (auto& dims : params) types.push_back(Type(dims));
    f_.emplace(*builder_.BeginFunction("main", types, {Type(result_dims)}));
  }
  TensorType Type(std::vector<int64_t> dims) const { return *TensorType::Create(t_, dims); }
  FunctionBuilder& f() { return *f_; }
  Value* Scalar(double v) { return *f_->ConstantScalar(t_, v); }
  Value* Splat(double v, std::vector<int64_t> dims) {
    return *f_->BroadcastInDim(Scalar(v), Type(dims), {});
  }
  // Softmax over the last dim of a rank-2 or rank-3 value.
  Value* Softmax(Value* x) {
    std::vector<int64_t> dims = x->type().dims();
    std::vector<int64_t> rows(dims.begin(), dims.end() - 1);
    std::vector<int64_t> keep;
    for (size_t d = 0; d + 1 < dims.size(); ++d) keep.push_back(static_cast<int64_t>(d));
    const int64_t last = static_cast<int64_t>(dims.size()) - 1;
    Value* max = *f_->Reduce(x, Scalar(-std::numeric_limits<double>::infinity()), Type(rows),
                             "max", {last});
    Value* e = *f_->Exponential(*f_->Subtract(x, *f_->BroadcastInDim(max, x->type(), keep)));
    Value* sum = *f_->Reduce(e, Scalar(0), Type(rows), "sum", {last});
    return *f_->Divide(e, *f_->BroadcastInDim(sum, x->type(), keep));
  }
  std::unique_ptr<Module> Finish(Value* result) {
    EXPECT_TRUE(f_->Return({result}).ok());
    return *builder_.Finish();
  }

 private:
  ElementType t_;
  Builder builder_;
  std::optional<FunctionBuilder> f_;
};

std::vector<Tensor> RandomInputs(const Module& module, uint32_t seed, double scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-scale, scale);
  std::vector<Tensor> inputs;
  for (const TensorType& type : module.FindFunction("main")->parameter_types()) {
    Tensor t = *Tensor::Allocate(type);
    for (int64_t i = 0; i < type.element_count(); ++i) t.SetFromDouble(i, dist(rng));
    inputs.push_back(std::move(t));
  }
  return inputs;
}

void ExpectEngineMatchesReference(const Module& module, ElementType t, double scale = 2.0) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create());
  auto exe = engine->Compile(module);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<Tensor> inputs = RandomInputs(module, 7, scale);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> outputs, (*exe)->Run(inputs));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(module, "main", inputs));
  Tol tol = Tolerance(t);
  TensorComparison c = CompareClose(outputs[0], expected[0], tol.atol, tol.rtol);
  EXPECT_TRUE(c.ok) << ElementTypeName(t) << ": " << c.message << "\nplan:\n"
                    << (*exe)->plan_text();
}

class DtypeCoverageTest : public testing::TestWithParam<ElementType> {};

TEST_P(DtypeCoverageTest, ElementwiseChain) {
  ElementType t = GetParam();
  Program p(t, {{3, 45}, {3, 45}, {45}}, {3, 45});
  FunctionBuilder& f = p.f();
  Value* bias = *f.BroadcastInDim(f.Parameter(2), p.Type({3, 45}), {1});
  Value* y = *f.Add(*f.Multiply(*f.Tanh(*f.Add(*f.Multiply(f.Parameter(0), f.Parameter(1)), bias)),
                                p.Splat(0.5, {3, 45})),
                    f.Parameter(0));
  ExpectEngineMatchesReference(*p.Finish(y), t);
}

TEST_P(DtypeCoverageTest, RowSumOfProducts) {
  ElementType t = GetParam();
  Program p(t, {{5, 300}, {5, 300}}, {5});
  FunctionBuilder& f = p.f();
  Value* y = *f.Reduce(*f.Multiply(f.Parameter(0), f.Parameter(1)), p.Scalar(0), p.Type({5}),
                       "sum", {1});
  ExpectEngineMatchesReference(*p.Finish(y), t, 0.5);
}

TEST_P(DtypeCoverageTest, Softmax) {
  ElementType t = GetParam();
  Program p(t, {{6, 77}}, {6, 77});
  ExpectEngineMatchesReference(*p.Finish(p.Softmax(p.f().Parameter(0))), t, 4.0);
}

TEST_P(DtypeCoverageTest, LayerNorm) {
  ElementType t = GetParam();
  Program p(t, {{4, 96}, {96}, {96}}, {4, 96});
  FunctionBuilder& f = p.f();
  Value* x = f.Parameter(0);
  TensorType m = p.Type({4, 96});
  Value* mean = *f.Multiply(*f.Reduce(x, p.Scalar(0), p.Type({4}), "sum", {1}),
                            p.Splat(1.0 / 96, {4}));
  Value* centered = *f.Subtract(x, *f.BroadcastInDim(mean, m, {0}));
  Value* var = *f.Multiply(*f.Reduce(*f.Multiply(centered, centered), p.Scalar(0), p.Type({4}),
                                     "sum", {1}),
                           p.Splat(1.0 / 96, {4}));
  Value* rstd = *f.Rsqrt(*f.Add(var, p.Splat(1e-5, {4})));
  Value* y = *f.Add(*f.Multiply(*f.Multiply(centered, *f.BroadcastInDim(rstd, m, {0})),
                                *f.BroadcastInDim(f.Parameter(1), m, {1})),
                    *f.BroadcastInDim(f.Parameter(2), m, {1}));
  ExpectEngineMatchesReference(*p.Finish(y), t);
}

TEST_P(DtypeCoverageTest, Attention) {
  ElementType t = GetParam();
  const int64_t h = 2, l = 19, dh = 8;
  Program p(t, {{h, l, dh}, {h, l, dh}, {h, l, dh}}, {h, l, dh});
  FunctionBuilder& f = p.f();
  Value* scores = *f.DotGeneral(f.Parameter(0), f.Parameter(1), p.Type({h, l, l}), {2}, {2}, {0},
                                {0});
  Value* scaled = *f.Multiply(scores, p.Splat(1 / std::sqrt(8.0), {h, l, l}));
  Value* probs = p.Softmax(scaled);
  Value* y = *f.DotGeneral(probs, f.Parameter(2), p.Type({h, l, dh}), {2}, {1}, {0}, {0});
  ExpectEngineMatchesReference(*p.Finish(y), t);
}

TEST_P(DtypeCoverageTest, MatmulBiasGelu) {
  ElementType t = GetParam();
  // oneDNN 2.6 has no f16 matmul on hosts without AVX512-FP16 and none in f64: those (and this
  // small product in every type) run on the JIT's dot_general emitter with a fused epilogue.
  Program p(t, {{9, 40}, {40, 24}, {24}}, {9, 24});
  FunctionBuilder& f = p.f();
  Value* prod = *f.DotGeneral(f.Parameter(0), f.Parameter(1), p.Type({9, 24}), {1}, {0}, {}, {});
  Value* x = *f.Add(prod, *f.BroadcastInDim(f.Parameter(2), p.Type({9, 24}), {1}));
  Value* inner = *f.Multiply(
      *f.Add(x, *f.Multiply(*f.Multiply(*f.Multiply(x, x), x), p.Splat(0.044715, {9, 24}))),
      p.Splat(0.7978845608028654, {9, 24}));
  Value* y = *f.Multiply(*f.Multiply(x, p.Splat(0.5, {9, 24})),
                         *f.Add(*f.Tanh(inner), p.Splat(1, {9, 24})));
  ExpectEngineMatchesReference(*p.Finish(y), t, 0.5);
}

// Above the JIT/oneDNN threshold (2^20 element ops): oneDNN where it has a real
// implementation for the type on this host, else the JIT.
TEST_P(DtypeCoverageTest, LargeMatmul) {
  ElementType t = GetParam();
  Program p(t, {{64, 128}, {128, 64}}, {64, 64});
  FunctionBuilder& f = p.f();
  Value* y = *f.DotGeneral(f.Parameter(0), f.Parameter(1), p.Type({64, 64}), {1}, {0}, {}, {});
  ExpectEngineMatchesReference(*p.Finish(y), t, 0.5);
}

INSTANTIATE_TEST_SUITE_P(Types, DtypeCoverageTest,
                         testing::Values(ElementType::kF32, ElementType::kBF16, ElementType::kF16,
                                         ElementType::kF64),
                         [](const testing::TestParamInfo<ElementType>& info) {
                           return std::string(ElementTypeName(info.param));
                         });

}  // namespace
}  // namespace accy
