// Input-output aliases (donated parameters) as exporters write them on a function's parameters:
// `tf.aliasing_output = R` (JAX's donate_argnums when the lowering paired the parameter with
// result R) and `jax.buffer_donor = true` (donated, no result named). The importer adds them to
// the built function (Function::AddInputOutputAlias). Pure; thread-safe.
#ifndef ACCY_SRC_STABLEHLO_INPUT_OUTPUT_ALIASES_H_
#define ACCY_SRC_STABLEHLO_INPUT_OUTPUT_ALIASES_H_

#include <vector>

#include "accy/ir.h"
#include "src/stablehlo/syntax.h"

namespace accy::stablehlo_internal {

// One alias and where its attribute was written.
struct AliasSyntax {
  InputOutputAlias alias;
  SourceLoc loc;
};

// The aliases of `function`'s parameter attributes, checked: `tf.aliasing_output` is an
// integer naming a result of the parameter's type, each parameter and result once;
// `jax.buffer_donor` is a bool, and a true one takes the first result of its type that no alias
// has yet, in parameter order (none left: it stays unaliased). kInvalidArgument at the
// attribute's location otherwise, naming the function, parameter and result.
StatusOr<std::vector<AliasSyntax>> AliasesOf(const FunctionSyntax& function);

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_INPUT_OUTPUT_ALIASES_H_
