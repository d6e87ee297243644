// The generator's batch-norm step (generator_internal.h StepBatchNorm): a random valid
// batch_norm_inference, batch_norm_training or batch_norm_grad (spec sections of those names) on
// an operand of rank 1-4 (size-1, odd and empty dims as RandomDims draws them; an empty
// non-feature dim leaves each feature no elements, and training's mean and variance are then
// 0/0 = NaN on both sides), any feature_index, epsilon 1e-5, 1e-3 or 0.1. The engine never sees
// these ops: the expand-batch-norm graph pass rewrites them into the spec's decomposition,
// rounded to the element type op by op, while the reference evaluator loops over each feature in
// double and rounds once (src/reference/batch_norm.cc), so every result is approximate.
//
// Conditioning (docs/fuzzing.md, "Tolerances"):
// - inference and grad take a variance operand, made positive inside the recipe from a picked
//   vector `raw`: variance = |raw| + 1/4, so 1 / sqrt(variance + epsilon) <= 2 (the idea of the
//   triangular_solve step's diagonally dominant matrices). Inference is then a subtraction and
//   a scaling, and takes approximate operands as add and subtract do.
// - training divides by the standard deviation of its own operand. Where a feature's elements
//   are (nearly) equal (a broadcast or splat operand), the engine's f32 mean is a few ulps off
//   the exact one and (x - mean) / sqrt(epsilon) amplifies that by up to 316 (epsilon 1e-5):
//   measured 2e-3 relative with a scale of 4. So its operand is exact and bounded by 8, and its
//   output's tolerance covers 2 k u |scale| |x| / sqrt(epsilon), with k = 2 + 1.5 log2(n) ulps
//   for the mean of n elements (measured: up to 11 at n >= 257).
// - grad's grad_operand is n dy - sum(dy) - sum(dy centered) centered / var_eps scaled by 1/n,
//   near zero where the sums cancel, so its operand, mean and grad_output (what the sums read)
//   are exact; scale and the variance only multiply.
// Element types: f32 and f64 for all three; f16 and bf16 for inference and grad, which met the
// 16-bit tolerances in ~1,700 generated cases (a batch weighted to this step). Not for training: a 16-bit mean is one rounding
// of the type off, amplified as above; bf16 [2, 64] with features of two elements and epsilon
// 1e-3 gave 0.28 against the reference's 0.75 (the spec's decomposition in bf16, not a bug).
#include <algorithm>
#include <cmath>
#include <vector>

#include "src/testing/generator_internal.h"

namespace accy::fuzz::internal {
namespace {

// variance = |raw| + kVarianceFloor (see the file comment).
constexpr double kVarianceFloor = 0.25;

// The unit roundoff of a float type: half its ulp at 1.
double UnitRoundoff(ElementType e) {
  switch (e) {
    case ElementType::kF64: return std::ldexp(1.0, -53);
    case ElementType::kF16: return std::ldexp(1.0, -11);
    case ElementType::kBF16: return std::ldexp(1.0, -8);
    default: return std::ldexp(1.0, -24);
  }
}

StatusOr<Value*> PositiveVariance(FunctionBuilder& f, Value* raw) {
  ACCY_ASSIGN_OR_RETURN(Value * magnitude, f.Abs(raw));
  ACCY_ASSIGN_OR_RETURN(Value * floor, SplatConstant(f, raw->type(), kVarianceFloor));
  return f.Add(magnitude, floor);
}

}  // namespace

bool Generator::StepBatchNorm() {
  static constexpr double kEpsilons[] = {1e-5, 1e-3, 0.1};
  static constexpr ElementType kTypes[] = {ElementType::kF32, ElementType::kF32,
                                           ElementType::kF64, ElementType::kF16,
                                           ElementType::kBF16};
  enum Which : uint64_t { kInference, kTraining, kGrad };
  const uint64_t which = U(3);
  // Training: f32 and f64 only (see the file comment).
  const ElementType e = kTypes[U(which == kTraining ? 3 : std::size(kTypes))];
  const std::vector<int64_t> dims = RandomDims(1, 4);
  const TensorType type = Type(e, dims);
  const int64_t feature_index = static_cast<int64_t>(U(dims.size()));
  const TensorType vector = Type(e, {dims[static_cast<size_t>(feature_index)]});
  const double epsilon = kEpsilons[U(std::size(kEpsilons))];
  // Elements per feature (the spec's divisor; 0 when a non-feature dim is empty).
  int64_t count = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (static_cast<int64_t>(d) != feature_index) count *= dims[d];
  }
  const double n = static_cast<double>(count);
  // A value of type t satisfying `need`, finite and bounded by `limit` (Fits bounds approximate
  // values only), else a new tame parameter (bound 4).
  auto pick = [&](const TensorType& t, Need need, double limit) {
    need.finite = true;
    const int id = Pick(t, need);
    return V(id).bound <= limit && !V(id).non_finite ? id : Param(t, InputKind::kTame);
  };
  // 16-bit: the decomposition's intermediates (|scale| 2 (|x| + |mean|) and less) stay far below
  // f16's 65504.
  const double data_limit = ElementBitWidth(e) == 16 ? 64 : 1e3;
  const Need data{true, data_limit, true};
  const Need factor{true, 10, true};

  if (which == kTraining) {  // batch_norm_training(operand, scale, offset)
    const int x = pick(type, kExactOnly, 8);
    const int scale = pick(vector, Need{true, 4, true}, 4);
    const int offset = pick(vector, factor, 10);
    const double bx = V(x).bound, bs = V(scale).bound;
    // |x - mean| <= sqrt(n - 1) stddev (Samuelson's inequality) and <= 2 bx.
    const double normalized =
        std::min(std::sqrt(std::max(n - 1, 0.0)), 2 * bx / std::sqrt(epsilon));
    FuzzValue output = Derive({x, scale, offset}, type, false, bs * normalized + V(offset).bound,
                              false);
    const double k = 2 + 1.5 * std::log2(std::max(n, 2.0));
    output.tolerance =
        std::max(output.tolerance, 2 * k * UnitRoundoff(e) * bs * bx / std::sqrt(epsilon));
    FuzzValue mean = Derive({x}, vector, false, bx, count == 0);
    FuzzValue variance = Derive({x}, vector, false, bx * bx, count == 0);
    AddRecipe("batch_norm_training", {x, scale, offset}, {output, mean, variance},
              [=](FunctionBuilder& f, std::span<Value* const> xs,
                  BuildForm) -> StatusOr<std::vector<Value*>> {
                return f.BatchNormTraining(xs[0], xs[1], xs[2], epsilon, feature_index);
              });
    return true;
  }

  const Need summed = which == kGrad ? Need{false, kInf, true} : data;
  const int x = pick(type, summed, data_limit);
  const int scale = pick(vector, factor, 10);
  const int mean = pick(vector, summed, data_limit);
  const int raw = pick(vector, data, data_limit);
  const double bx = V(x).bound, bs = V(scale).bound, bm = V(mean).bound;
  // |x - mean| / sqrt(variance + epsilon) with variance >= kVarianceFloor.
  const double normalized = (bx + bm) / std::sqrt(kVarianceFloor);
  if (which == kInference) {  // batch_norm_inference(operand, scale, offset, mean, variance)
    const int offset = pick(vector, factor, 10);
    const double bound = bs * normalized + V(offset).bound;
    if (bound > MaxFinite(e) / 16) return false;
    FuzzValue output = Derive({x, scale, offset, mean, raw}, type, false, bound, false);
    AddRecipe("batch_norm_inference", {x, scale, offset, mean, raw}, {output},
              [=](FunctionBuilder& f, std::span<Value* const> xs,
                  BuildForm) -> StatusOr<std::vector<Value*>> {
                ACCY_ASSIGN_OR_RETURN(Value * variance, PositiveVariance(f, xs[4]));
                ACCY_ASSIGN_OR_RETURN(Value * output,
                                      f.BatchNormInference(xs[0], xs[1], xs[2], xs[3], variance,
                                                           epsilon, feature_index));
                return std::vector<Value*>{output};
              });
    return true;
  }

  // batch_norm_grad(operand, scale, mean, variance, grad_output)
  const int dy = pick(type, summed, data_limit);
  const double bd = V(dy).bound;
  // Each term of grad_operand's parenthesis is at most n bd normalized^2 (sum(dy centered)
  // centered / var_eps) or n bd (n dy, sum(dy)); the decomposition computes them in the type.
  const double terms = n * bd * (2 + normalized * normalized);
  if (terms > MaxFinite(e) / 16) return false;
  const double grad_operand = bs / std::sqrt(kVarianceFloor) * bd * (2 + normalized * normalized);
  const std::vector<int> operands = {x, scale, mean, raw, dy};
  FuzzValue grad_x = Derive(operands, type, false, grad_operand, false);
  FuzzValue grad_scale = Derive(operands, vector, false, n * bd * normalized, false);
  FuzzValue grad_offset = Derive({dy}, vector, false, n * bd, false);
  AddRecipe("batch_norm_grad", operands, {grad_x, grad_scale, grad_offset},
            [=](FunctionBuilder& f, std::span<Value* const> xs,
                BuildForm) -> StatusOr<std::vector<Value*>> {
              ACCY_ASSIGN_OR_RETURN(Value * variance, PositiveVariance(f, xs[3]));
              return f.BatchNormGrad(xs[0], xs[1], xs[2], variance, xs[4], epsilon,
                                     feature_index);
            });
  return true;
}

}  // namespace accy::fuzz::internal
