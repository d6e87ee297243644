// The StableHLO importer: builds an accy Module from a parsed module (syntax.h) through
// FunctionBuilder::CreateOp, so every op is verified as it is created. Calls are inlined, check
// ops are collected (or dropped), values are resolved by name with MLIR's region scoping.
//
// Reads the syntax tree only during the call; the result owns everything. Not thread-safe per
// call, no shared state between calls. Errors: see include/accy/stablehlo.h.
#ifndef ACCY_SRC_STABLEHLO_IMPORTER_H_
#define ACCY_SRC_STABLEHLO_IMPORTER_H_

#include "accy/stablehlo.h"
#include "src/stablehlo/dense_literal.h"
#include "src/stablehlo/syntax.h"

namespace accy::stablehlo_internal {

// Builds the module. With `keep_checks`, check ops become StableHloProgram::checks and their
// operands extra function results; without, they are dropped. Every dense value an op brings
// into the module (each inlined copy again) is charged to budget->module_bytes before the op
// is built.
StatusOr<StableHloProgram> ImportModule(const ModuleSyntax& syntax, bool keep_checks,
                                        ConstantBudget* budget);

}  // namespace accy::stablehlo_internal

#endif  // ACCY_SRC_STABLEHLO_IMPORTER_H_
