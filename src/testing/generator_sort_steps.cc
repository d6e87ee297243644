// The generator's sort steps (generator_internal.h StepSort, StepTopK): random valid sort (one
// to three operands of one shape and any element types, any dimension, negative too; an
// ascending or descending TOTALORDER comparator on the first operand, or lexicographic on the
// first two) and top_k (any k from 0 to the last dim) over 1-3 dims (spec "sort", CHLO
// "top_k"), so the differential runner checks the JIT's sort kernels against the reference
// evaluator. Operands are exact: the order of ties and NaNs decides where every element goes.
#include <string>
#include <vector>

#include "src/testing/generator_internal.h"

namespace accy::fuzz::internal {

bool Generator::StepSort() {
  const std::vector<int64_t> dims = RandomDims(1, 3);
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t dimension = static_cast<int64_t>(U(static_cast<uint64_t>(2 * rank))) - rank;
  const size_t count = 1 + U(3);
  std::vector<int> operands;
  std::vector<ElementType> types;
  std::vector<FuzzValue> results;
  for (size_t i = 0; i < count; ++i) {
    const ElementType e = RandomType(ElementClass::kAny);
    operands.push_back(Pick(Type(e, dims), kExactOnly));
    types.push_back(e);
  }
  for (size_t i = 0; i < count; ++i) {
    const FuzzValue& in = V(operands[i]);
    results.push_back(Derive(operands, in.type, true, in.bound, in.non_finite));
  }
  const bool lexicographic = count > 1 && Chance(0.3);
  const std::string direction = Chance(0.5) ? "LT" : "GT";
  const bool is_stable = Chance(0.5);
  AddRecipe("sort", operands, results,
            [=](FunctionBuilder& f, std::span<Value* const> xs,
                BuildForm) -> StatusOr<std::vector<Value*>> {
              RegionBodyFn comparator = [=](FunctionBuilder& b,
                                            std::span<Value* const> a) -> Status {
                const auto order = [&](size_t i) {
                  return std::string(IsFloat(types[i]) ? "TOTALORDER" : "");
                };
                ACCY_ASSIGN_OR_RETURN(Value * first, b.Compare(a[0], a[1], direction, order(0)));
                if (!lexicographic) return b.Return({first});
                ACCY_ASSIGN_OR_RETURN(Value * tie, b.Compare(a[0], a[1], "EQ", order(0)));
                ACCY_ASSIGN_OR_RETURN(Value * second, b.Compare(a[2], a[3], direction, order(1)));
                ACCY_ASSIGN_OR_RETURN(Value * both, b.And(tie, second));
                ACCY_ASSIGN_OR_RETURN(Value * less, b.Or(first, both));
                return b.Return({less});
              };
              return f.Sort(std::vector<Value*>(xs.begin(), xs.end()), dimension,
                            std::move(comparator), is_stable);
            });
  return true;
}

bool Generator::StepTopK() {
  const ElementType e = RandomType(ElementClass::kAny);
  const TensorType type = Type(e, RandomDims(1, 3));
  const int64_t last = type.dim(type.rank() - 1);
  const int64_t k = static_cast<int64_t>(U(static_cast<uint64_t>(last + 1)));
  const int x = Pick(type, kExactOnly);
  std::vector<int64_t> dims = type.dims();
  dims.back() = k;
  FuzzValue values = Derive({x}, Type(e, dims), true, V(x).bound, V(x).non_finite);
  FuzzValue indices = Derive({x}, Type(ElementType::kI32, dims), true, 0, false);
  AddRecipe("top_k", {x}, {values, indices},
            [k](FunctionBuilder& f, std::span<Value* const> xs,
                BuildForm) -> StatusOr<std::vector<Value*>> { return f.TopK(xs[0], k); });
  return true;
}

}  // namespace accy::fuzz::internal
