// The generator's lapack step (generator_internal.h StepLapack): a random potrf or getrf (the
// lapack op, docs/lapack.md) of f32 or f64 over 0-2 batch dims, so the differential runner checks
// the engine's LAPACK kernels against the reference evaluator's loops. The matrix is made
// diagonally dominant inside the recipe, as the triangular_solve step does: from a picked `raw`
// (|raw| <= R), a = select(i == j, |raw| + 1, raw / (2 N max(1, R))), so potrf's read triangle is
// symmetric positive definite (info 0, a well-defined factor) and getrf's partial pivoting keeps
// the diagonal (no near ties: the same pivots on both sides). Only the factor is returned: info is
// 0 and pivots are k + 1 by construction. geqrf, orgqr and syevd stay out: random programs would
// need their reflector and eigenvector sign conventions checked by the runner, which compares
// values only.
#include <algorithm>
#include <vector>

#include "src/testing/generator_internal.h"

namespace accy::fuzz::internal {

bool Generator::StepLapack() {
  static constexpr int64_t kSizes[] = {1, 2, 3, 4, 5, 8, 16, 17};
  const ElementType e = Chance(0.5) ? ElementType::kF32 : ElementType::kF64;
  const int64_t n = Chance(0.03) ? 0 : kSizes[U(std::size(kSizes))];
  const bool potrf = Chance(0.5);
  const bool lower = Chance(0.5);
  const int64_t m = potrf || Chance(0.5) ? n : kSizes[U(std::size(kSizes))];
  std::vector<int64_t> dims;
  const int batches = Chance(0.5) ? 0 : Chance(0.7) ? 1 : 2;
  for (int i = 0; i < batches; ++i) dims.push_back(Chance(0.03) ? 0 : 1 + static_cast<int64_t>(U(3)));
  int64_t elements = m * n;
  for (int64_t d : dims) elements *= d;
  if (elements > options_.max_elements) return false;
  dims.insert(dims.end(), {m, n});
  const int raw = Pick(Type(e, dims), Need{true, 1e3, true});
  const double r = std::max(1.0, V(raw).bound);
  if (!(r <= 1e4) || V(raw).non_finite) return false;
  const double scale = 1.0 / (2.0 * static_cast<double>(std::max<int64_t>({1, m, n})) * r);
  FuzzValue v = Derive({raw}, Type(e, dims), false, 2 * (r + 1), false);
  AddRecipe(potrf ? "potrf" : "getrf", {raw}, {v},
            [=](FunctionBuilder& f, std::span<Value* const> xs,
                BuildForm) -> StatusOr<std::vector<Value*>> {
              ACCY_ASSIGN_OR_RETURN(Value * a, DiagonallyDominant(f, xs[0], scale));
              ACCY_ASSIGN_OR_RETURN(std::vector<Value*> results,
                                    potrf ? f.Potrf(a, lower) : f.Getrf(a));
              return std::vector<Value*>{results[0]};
            });
  return true;
}

}  // namespace accy::fuzz::internal
