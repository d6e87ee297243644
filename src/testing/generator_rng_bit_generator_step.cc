// The generator's rng_bit_generator step (generator_internal.h StepRngBitGenerator): a random
// valid rng_bit_generator (spec "rng_bit_generator") of every algorithm and state size, on a
// state picked like any other ui64 value, with an output of any integer or float type and a
// shape of rank 0-3 (empty dims too), so the differential runner checks the engine's Random123
// kernel against the reference evaluator's own rounds bit for bit. Both results are exact; a
// float output is random bits, so it may hold NaN, infinities and values up to the type's
// largest, and later steps treat it as such.
#include <string>
#include <vector>

#include "src/testing/generator_internal.h"

namespace accy::fuzz::internal {

bool Generator::StepRngBitGenerator() {
  static constexpr const char* kAlgorithms[] = {"THREE_FRY", "PHILOX", "DEFAULT"};
  const std::string algorithm = kAlgorithms[U(std::size(kAlgorithms))];
  const int64_t words = algorithm == "THREE_FRY" ? 2 : 2 + static_cast<int64_t>(U(2));
  const ElementType e = RandomType(ElementClass::kNumeric);
  const TensorType output = Type(e, RandomDims(0, 3));
  if (output.element_count() > options_.max_elements) return false;
  const int state = Pick(Type(ElementType::kU64, {words}), kExactOnly);
  const FuzzValue output_state =
      Derive({state}, V(state).type, true, MaxFinite(ElementType::kU64) + 1, false);
  const bool is_float = IsFloat(e);
  FuzzValue bits = Derive({state}, output, true, is_float ? MaxFinite(e) : MaxFinite(e) + 1,
                          is_float);
  AddRecipe("rng_bit_generator", {state}, {output_state, bits},
            [=](FunctionBuilder& f, std::span<Value* const> xs,
                BuildForm) -> StatusOr<std::vector<Value*>> {
              return f.RngBitGenerator(xs[0], algorithm, output);
            });
  return true;
}

}  // namespace accy::fuzz::internal
