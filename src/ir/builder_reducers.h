// The builder's named reducers of reduce_window and the collectives (include/accy/builder.h):
// "sum", "max", "min", "prod", "and", "or" name the body op add, maximum, minimum, multiply,
// and, or. Shared by builder_window.cc and builder_collectives.cc.
#ifndef ACCY_SRC_IR_BUILDER_REDUCERS_H_
#define ACCY_SRC_IR_BUILDER_REDUCERS_H_

#include <string>
#include <string_view>

#include "accy/ir.h"
#include "accy/status.h"

namespace accy::ir_internal {

// The body op `reducer` names. kInvalidArgument "<op of for_op>: unknown reducer '<reducer>'
// (expected sum, max, min, prod, and or or)" otherwise.
inline StatusOr<OpKind> ReducerCombiner(OpKind for_op, std::string_view reducer) {
  if (reducer == "sum") return OpKind::kAdd;
  if (reducer == "max") return OpKind::kMaximum;
  if (reducer == "min") return OpKind::kMinimum;
  if (reducer == "prod") return OpKind::kMultiply;
  if (reducer == "and") return OpKind::kAnd;
  if (reducer == "or") return OpKind::kOr;
  return absl::InvalidArgumentError(std::string(OpName(for_op)) + ": unknown reducer '" +
                                    std::string(reducer) +
                                    "' (expected sum, max, min, prod, and or or)");
}

}  // namespace accy::ir_internal

#endif  // ACCY_SRC_IR_BUILDER_REDUCERS_H_
