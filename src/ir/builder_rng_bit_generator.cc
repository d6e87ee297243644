// FunctionBuilder::RngBitGenerator (include/accy/builder.h): the result types are output_state
// (initial_state's type) and the caller's output type; CreateOp verifies them
// (type_inference_rng_bit_generator.cc) and creates the op.
#include <string>
#include <vector>

#include "accy/builder.h"

namespace accy {

StatusOr<std::vector<Value*>> FunctionBuilder::RngBitGenerator(Value* initial_state,
                                                               std::string_view rng_algorithm,
                                                               const TensorType& output_type) {
  ACCY_RETURN_IF_ERROR(CheckOperands(OpKind::kRngBitGenerator, {&initial_state, 1}));
  std::vector<NamedAttribute> attrs = {{"rng_algorithm", std::string(rng_algorithm)}};
  StatusOr<Operation*> op =
      CreateOp(OpKind::kRngBitGenerator, {initial_state},
               {initial_state->type(), output_type}, std::move(attrs));
  if (!op.ok()) return op.status();
  return (*op)->results();
}

}  // namespace accy
