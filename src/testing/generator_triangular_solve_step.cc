// The generator's triangular_solve step (generator_internal.h StepTriangularSolve): a random
// valid triangular_solve (spec "triangular_solve") of every float type over 0-2 batch dims, any
// left_side / lower / unit_diagonal / transpose_a, with b of any width, so the differential
// runner checks the engine's Eigen kernel against the reference evaluator's substitution.
// The coefficient matrix is made well conditioned inside the recipe: from a picked matrix `raw`
// (|raw| <= R), a = select(i == j, |raw| + 1, raw / (2 M max(1, R))), so the read diagonal is
// at least 1 (or 1 itself with unit_diagonal) and every row and column of the other elements
// sums to at most 1/2: |x| <= 2 max |b|, and both sides' rounding errors stay near the type's
// epsilon, within the approximate tolerance.
#include <algorithm>
#include <string>
#include <vector>

#include "src/testing/generator_internal.h"

namespace accy::fuzz::internal {

StatusOr<Value*> DiagonallyDominant(FunctionBuilder& f, Value* x, double off_diagonal_scale) {
  const TensorType& type = x->type();
  const int64_t rank = type.rank();
  ACCY_ASSIGN_OR_RETURN(TensorType index_type, TensorType::Create(ElementType::kI32, type.dims()));
  ACCY_ASSIGN_OR_RETURN(Value * row, f.Iota(index_type, rank - 2));
  ACCY_ASSIGN_OR_RETURN(Value * col, f.Iota(index_type, rank - 1));
  ACCY_ASSIGN_OR_RETURN(Value * diagonal, f.Compare(row, col, "EQ"));
  ACCY_ASSIGN_OR_RETURN(Value * one, SplatConstant(f, type, 1.0));
  ACCY_ASSIGN_OR_RETURN(Value * magnitude, f.Abs(x));
  ACCY_ASSIGN_OR_RETURN(Value * diagonal_value, f.Add(magnitude, one));
  ACCY_ASSIGN_OR_RETURN(Value * shrink, SplatConstant(f, type, off_diagonal_scale));
  ACCY_ASSIGN_OR_RETURN(Value * off_diagonal, f.Multiply(x, shrink));
  return f.Select(diagonal, diagonal_value, off_diagonal);
}

bool Generator::StepTriangularSolve() {
  static constexpr int64_t kSizes[] = {1, 2, 3, 4, 5, 8, 16, 17};
  const ElementType e = RandomFloatType();
  const int64_t m = Chance(0.03) ? 0 : kSizes[U(std::size(kSizes))];
  const int64_t n = Chance(0.03) ? 0 : kSizes[U(std::size(kSizes))];
  std::vector<int64_t> batch;
  const int batches = Chance(0.5) ? 0 : Chance(0.7) ? 1 : 2;
  for (int i = 0; i < batches; ++i) {
    batch.push_back(Chance(0.03) ? 0 : 1 + static_cast<int64_t>(U(3)));
  }
  int64_t batch_elements = 1;
  for (int64_t d : batch) batch_elements *= d;
  if (batch_elements * m * std::max(m, n) > options_.max_elements) return false;
  const bool left_side = Chance(0.5), lower = Chance(0.5), unit_diagonal = Chance(0.3);
  static constexpr const char* kTransposes[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  const std::string transpose_a = kTransposes[U(std::size(kTransposes))];
  std::vector<int64_t> a_dims = batch, b_dims = batch;
  a_dims.insert(a_dims.end(), {m, m});
  b_dims.insert(b_dims.end(), {left_side ? m : n, left_side ? n : m});
  const Need need{true, 1e3, true};
  const int raw = Pick(Type(e, a_dims), need);
  const int b = Pick(Type(e, b_dims), need);
  const double r = std::max(1.0, V(raw).bound);
  if (!(r <= 1e4) || V(raw).non_finite || V(b).non_finite) return false;
  const double scale = 1.0 / (2.0 * static_cast<double>(std::max<int64_t>(1, m)) * r);
  FuzzValue v = Derive({raw, b}, Type(e, b_dims), false, 2 * V(b).bound, false);
  AddRecipe("triangular_solve", {raw, b}, {v},
            [=](FunctionBuilder& f, std::span<Value* const> xs,
                BuildForm) -> StatusOr<std::vector<Value*>> {
              ACCY_ASSIGN_OR_RETURN(Value * a, DiagonallyDominant(f, xs[0], scale));
              ACCY_ASSIGN_OR_RETURN(Value * solved, f.TriangularSolve(a, xs[1], left_side, lower,
                                                                      unit_diagonal, transpose_a));
              return std::vector<Value*>{solved};
            });
  return true;
}

}  // namespace accy::fuzz::internal
