// The type rules and the table that maps each op table row to its rule (type_rules.h).
#include "src/ir/type_rules.h"

#include <iterator>

#include "src/ir/type_inference.h"

namespace accy::ir_internal {
namespace {

using Types = std::span<const TensorType>;
using Attributes = std::span<const NamedAttribute>;
using Inferred = StatusOr<std::vector<TensorType>>;

// Adapters from each inference function's own signature to InferFunction's.
template <auto F>
Inferred OperandsOnly(OpKind, Types operands, Attributes) { return F(operands); }
template <auto F>
Inferred WithView(OpKind, Types operands, Attributes attributes) {
  return F(operands, AttributeView(attributes));
}
template <auto F>
Inferred WithAttributes(OpKind, Types operands, Attributes attributes) {
  return F(operands, attributes);
}
template <auto F>
Inferred KindAndView(OpKind kind, Types operands, Attributes attributes) {
  return F(kind, operands, AttributeView(attributes));
}
template <auto F>
Inferred KindAndAttributes(OpKind kind, Types operands, Attributes attributes) {
  return F(kind, operands, attributes);
}

// Rules whose result types are inferred.
constexpr TypeRule kUnaryRule{.infer = KindAndView<InferUnary>};
constexpr TypeRule kBinaryRule{.infer = KindAndView<InferBinary>};
constexpr TypeRule kSelectRule{.infer = OperandsOnly<InferSelect>};
constexpr TypeRule kClampRule{.infer = OperandsOnly<InferClamp>};
constexpr TypeRule kTransposeRule{.infer = WithView<InferTranspose>};
constexpr TypeRule kSliceRule{.infer = WithView<InferSlice>};
constexpr TypeRule kPadRule{.infer = WithView<InferPad>};
constexpr TypeRule kConcatenateRule{.infer = WithView<InferConcatenate>};
constexpr TypeRule kReverseRule{.infer = WithView<InferReverse>};
constexpr TypeRule kGatherRule{.infer = WithView<InferGather>};
constexpr TypeRule kScatterRule{.infer = WithView<InferScatter>,
                                .check_regions = CheckScatterRegions};
constexpr TypeRule kDynamicSliceRule{.infer = WithView<InferDynamicSlice>};
constexpr TypeRule kDynamicUpdateSliceRule{.infer = OperandsOnly<InferDynamicUpdateSlice>};
constexpr TypeRule kDotGeneralRule{.infer = WithView<InferDotGeneral>};
constexpr TypeRule kConvolutionRule{.infer = WithView<InferConvolution>};
constexpr TypeRule kReduceRule{.infer = WithView<InferReduce>,
                               .check_regions = CheckReduceRegions};
constexpr TypeRule kReduceWindowRule{.infer = WithAttributes<InferReduceWindow>,
                                     .check_regions = CheckReduceRegions};
constexpr TypeRule kSelectAndScatterRule{.infer = WithAttributes<InferSelectAndScatter>,
                                         .check_regions = CheckSelectAndScatterRegions};
constexpr TypeRule kSortRule{.infer = WithAttributes<InferSort>,
                             .check_regions = CheckSortRegions};
constexpr TypeRule kTopKRule{.infer = WithAttributes<InferTopK>};
constexpr TypeRule kCumsumRule{.infer = WithView<InferCumsum>};
constexpr TypeRule kTriangularSolveRule{.infer = WithAttributes<InferTriangularSolve>};
constexpr TypeRule kBatchNormRule{.infer = KindAndAttributes<InferBatchNorm>};
// while (spec "while" C3): the results have the operands' types; cond and body are checked by
// the region rule.
constexpr TypeRule kWhileRule{
    .infer = [](OpKind, Types operands, Attributes) -> Inferred {
      return std::vector<TensorType>(operands.begin(), operands.end());
    },
    .check_regions = CheckWhileRegions};

// Rules whose result types are given by the op.
constexpr TypeRule kConstantRule{.check_given_results = CheckConstantResult};
constexpr TypeRule kConvertRule{.check_given_results = CheckConvertResult};
constexpr TypeRule kBitcastConvertRule{.check_given_results = CheckBitcastConvertResult};
constexpr TypeRule kReshapeRule{.check_given_results = CheckReshapeResult};
constexpr TypeRule kBroadcastInDimRule{.check_given_results = CheckBroadcastInDimResult};
constexpr TypeRule kIotaRule{.check_given_results = CheckIotaResult};
constexpr TypeRule kRngBitGeneratorRule{.check_given_results = CheckRngBitGeneratorResults};
constexpr TypeRule kLapackRule{.check_given_results = CheckLapackResults};
constexpr TypeRule kCollectiveRule{.check_given_results = CheckCollectiveResults,
                                   .check_regions = CheckCollectiveRegions};
constexpr TypeRule kKernelCallRule{.check_given_results = CheckKernelCallResults};
constexpr TypeRule kCaseRule{.check_given_results = CheckCaseResults,
                             .check_regions = CheckCaseRegions};
constexpr TypeRule kReturnRule{.check_given_results = CheckReturnResults};

// One entry per op table row, in OpKind order: the row's `rule` column names k<rule>Rule.
constexpr const TypeRule* kRules[] = {
#define ACCY_OP(kind, name, category, operands, results, classes, regions, pure, commutative, \
                work, rule, evaluate, print)                                                   \
  &k##rule##Rule,
#include "accy/ops.def"
#undef ACCY_OP
};
static_assert(std::size(kRules) == kNumOpKinds, "one type rule per op table row");

// Each rule either infers its results or checks given ones (never both, never neither), and an
// op with regions has a rule for their signatures: the test
// OpRegistryTest.EveryRowsTypeRuleHasTheHooksItNeeds checks every row (not a static_assert:
// whether the address of a function defined in another file is null is not a constant
// expression in position-independent code).

}  // namespace

const TypeRule& GetTypeRule(OpKind kind) { return *kRules[static_cast<size_t>(kind)]; }

}  // namespace accy::ir_internal
