// FoldTransposeIntoDotGeneralPass: a dot_general operand that is a transpose reads the
// transpose's input instead, with its batching and contracting dimension numbers mapped
// through the permutation (XLA's TransposeFolding): exporters write `transpose(weight)` before
// each matmul (torch_xla2's BERT does it 72 times), and the dot reads any layout through its
// dimension numbers (oneDNN strides, the JIT dot's index maps), so no transposed copy of the
// weight is made on every run. Folded only when the transpose's input is a function parameter
// or a constant (a weight: transposes of computed values stay in the canonical form the fusion
// rules match, such as flash attention's transpose(k)) and when the operand's free dims keep
// their relative order (the result's dim order is unchanged); the transpose itself is left for
// its other users and for eliminate-dead-code. Spec: "dot_general", "transpose". Stateless; one instance may run
// on many functions, not concurrently.
#ifndef ACCY_SRC_TRANSFORMS_FOLD_TRANSPOSE_INTO_DOT_GENERAL_H_
#define ACCY_SRC_TRANSFORMS_FOLD_TRANSPOSE_INTO_DOT_GENERAL_H_

#include <cstdint>

#include "src/passes/pass_manager.h"

namespace accy {

class FoldTransposeIntoDotGeneralPass : public passes::Pass {
 public:
  static constexpr std::string_view kName = "fold-transpose-into-dot-general";
  std::string_view name() const override { return kName; }
  // Identity "fold-transpose-into-dot-general" v1: one visit per op, operand and attribute atom.
  const passes::WorkContract& contract() const override;
  // Never fails. Marks the context modified when it folded a transpose.
  Status Run(passes::PassContext& context) override;
};

// The pass's rewrite on its own: returns how many dot_general operands now read past a
// transpose.
int64_t FoldTransposeIntoDotGeneral(Function& function);

}  // namespace accy

#endif  // ACCY_SRC_TRANSFORMS_FOLD_TRANSPOSE_INTO_DOT_GENERAL_H_
