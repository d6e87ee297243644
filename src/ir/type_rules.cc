// The type rules and the table that maps each op table row to its rule (type_rules.h).
#include "src/ir/type_rules.h"

#include <iterator>

#include "src/ir/type_inference.h"

namespace accy::ir_internal {
namespace {

using Types = std::span<const TensorType>;
using Attributes = std::span<const NamedAttribute>;
using Inferred = StatusOr<std::vector<TensorType>>;

// Rules whose result types are inferred. The lambdas adapt each inference function to
// InferFunction's one signature.
constexpr TypeRule kUnaryRule{
    .infer = [](OpKind kind, Types operands, Attributes attributes) -> Inferred {
      return InferUnary(kind, operands, AttributeView(attributes));
    }};
constexpr TypeRule kBinaryRule{
    .infer = [](OpKind kind, Types operands, Attributes attributes) -> Inferred {
      return InferBinary(kind, operands, AttributeView(attributes));
    }};
constexpr TypeRule kSelectRule{
    .infer = [](OpKind, Types operands, Attributes) -> Inferred { return InferSelect(operands); }};
constexpr TypeRule kClampRule{
    .infer = [](OpKind, Types operands, Attributes) -> Inferred { return InferClamp(operands); }};
constexpr TypeRule kTransposeRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferTranspose(operands, AttributeView(attributes));
    }};
constexpr TypeRule kSliceRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferSlice(operands, AttributeView(attributes));
    }};
constexpr TypeRule kPadRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferPad(operands, AttributeView(attributes));
    }};
constexpr TypeRule kConcatenateRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferConcatenate(operands, AttributeView(attributes));
    }};
constexpr TypeRule kReverseRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferReverse(operands, AttributeView(attributes));
    }};
constexpr TypeRule kGatherRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferGather(operands, AttributeView(attributes));
    }};
constexpr TypeRule kScatterRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferScatter(operands, AttributeView(attributes));
    },
    .check_regions = CheckScatterRegions};
constexpr TypeRule kDynamicSliceRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferDynamicSlice(operands, AttributeView(attributes));
    }};
constexpr TypeRule kDynamicUpdateSliceRule{
    .infer = [](OpKind, Types operands, Attributes) -> Inferred {
      return InferDynamicUpdateSlice(operands);
    }};
constexpr TypeRule kDotGeneralRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferDotGeneral(operands, AttributeView(attributes));
    }};
constexpr TypeRule kConvolutionRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferConvolution(operands, AttributeView(attributes));
    }};
constexpr TypeRule kReduceRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferReduce(operands, AttributeView(attributes));
    },
    .check_regions = CheckReduceRegions};
constexpr TypeRule kReduceWindowRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferReduceWindow(operands, attributes);
    },
    .check_regions = CheckReduceRegions};
constexpr TypeRule kSelectAndScatterRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferSelectAndScatter(operands, attributes);
    },
    .check_regions = CheckSelectAndScatterRegions};
constexpr TypeRule kSortRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferSort(operands, attributes);
    },
    .check_regions = CheckSortRegions};
constexpr TypeRule kTopKRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferTopK(operands, attributes);
    }};
constexpr TypeRule kCumsumRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferCumsum(operands, AttributeView(attributes));
    }};
constexpr TypeRule kTriangularSolveRule{
    .infer = [](OpKind, Types operands, Attributes attributes) -> Inferred {
      return InferTriangularSolve(operands, attributes);
    }};
constexpr TypeRule kBatchNormRule{
    .infer = [](OpKind kind, Types operands, Attributes attributes) -> Inferred {
      return InferBatchNorm(kind, operands, attributes);
    }};
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
struct RuleOfRow {
  const TypeRule* rule;
  int regions;  // the row's region count (or kVariadic)
};
constexpr RuleOfRow kRules[] = {
#define ACCY_OP(kind, name, category, operands, results, classes, regions, pure, commutative, \
                work, rule, evaluate)                                                          \
  {&k##rule##Rule, regions},
#include "accy/ops.def"
#undef ACCY_OP
};
static_assert(std::size(kRules) == kNumOpKinds, "one type rule per op table row");

// Each rule either infers its results or checks given ones (never both, never neither), and an
// op with regions has a rule for their signatures.
constexpr bool EveryRowHasTheHooksItNeeds() {
  for (const RuleOfRow& row : kRules) {
    if ((row.rule->infer == nullptr) == (row.rule->check_given_results == nullptr)) return false;
    if (row.regions != 0 && row.rule->check_regions == nullptr) return false;
  }
  return true;
}
static_assert(EveryRowHasTheHooksItNeeds(),
              "every op table row's type rule infers or checks its results, and checks its "
              "regions when it has any");

}  // namespace

const TypeRule& GetTypeRule(OpKind kind) { return *kRules[static_cast<size_t>(kind)].rule; }

}  // namespace accy::ir_internal
