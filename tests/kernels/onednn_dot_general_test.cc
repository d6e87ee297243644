// dot_general work items and dot_epilogue clusters on oneDNN matmul vs the reference evaluator.
// Programs are planned by the real planner; the dot_general item is bound and run on the
// function's parameters.
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/onednn_isa.h"
#include "kernels/onednn_kernel.h"
#include "src/reference/reference_evaluator.h"
#include "tests/kernels/kernels_test_util.h"
#include "tests/schedule/schedule_test_util.h"

namespace accy::kernels_test {
namespace {

using kernels::DotPlacement;
using kernels::LibraryKernel;
using ::testing::HasSubstr;
constexpr auto kF32 = ElementType::kF32;
constexpr auto kBF16 = ElementType::kBF16;

// Builds `main(params) -> result` with `body`, plans it and exposes its dot_general item.
class PlannedDot {
 public:
  using Body = std::function<StatusOr<Value*>(FunctionBuilder&)>;
  static StatusOr<std::unique_ptr<PlannedDot>> Make(std::vector<TensorType> params,
                                                    TensorType result, const Body& body) {
    Builder builder("dot_test");
    ACCY_ASSIGN_OR_RETURN(FunctionBuilder fb, builder.BeginFunction("main", params, {result}));
    ACCY_ASSIGN_OR_RETURN(Value * out, body(fb));
    ACCY_RETURN_IF_ERROR(fb.Return({out}));
    ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, builder.Finish());
    auto planned = std::unique_ptr<PlannedDot>(new PlannedDot(std::move(module)));
    ACCY_ASSIGN_OR_RETURN(planned->plan_, planned->planned_.Plan());
    ACCY_ASSIGN_OR_RETURN(auto fusion, planned->planned_.cache().Get<FusionPlanAnalysis>(
                                           planned->planned_.function()));
    planned->fusion_ = &fusion->plan();
    for (const WorkItem& item : planned->plan_->items()) {
      if (item.kind == WorkKind::kDotGeneral) planned->item_ = &item;
    }
    if (planned->item_ == nullptr) return absl::InternalError("test: no dot_general item");
    return planned;
  }

  const WorkItem& item() const { return *item_; }
  const FusionPlan* fusion() const { return fusion_; }
  const Module& module() const { return *module_; }

 private:
  // PlannedModule owns the module; module_ keeps a view for the reference evaluator.
  explicit PlannedDot(std::unique_ptr<Module> module)
      : module_(module.get()), planned_(std::move(module), "main") {}
  const Module* module_;
  testing_util::PlannedModule planned_;
  const SchedulePlan* plan_ = nullptr;
  const FusionPlan* fusion_ = nullptr;
  const WorkItem* item_ = nullptr;
};

constexpr kernels::LibraryKernelOptions kAnySize{.min_dot_element_ops = 0};
constexpr kernels::LibraryKernelOptions kAnySizeAnyImplementation{
    .min_dot_element_ops = 0, .allow_reference_implementation = true};

// Binds the item, runs it and compares with the reference evaluation of the whole function
// (the item's root is the function result).
void ExpectMatchesReference(const PlannedDot& planned, ElementType type, int64_t k,
                            const kernels::LibraryKernelOptions& options = kAnySize) {
  std::vector<Tensor> args;
  for (const TensorType& t : planned.module().functions()[0]->parameter_types()) {
    args.push_back(Random(t, static_cast<uint32_t>(args.size() + 40)));
  }
  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel,
                       LibraryKernel::Create(planned.item(), planned.fusion(), options));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, RunKernel(kernel, args));
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> expected, Evaluate(planned.module(), "main", args));
  // oneDNN accumulates in f32 and applies the epilogue before one rounding; the reference
  // accumulates in double and rounds after every op.
  const double tol = type == kBF16 ? 1.0 / 32 : 2e-5 * std::sqrt(double(k) + 1);
  ExpectClose(actual[0], expected[0], tol, tol);
}

struct DotCase {
  std::string name;
  ElementType type;
  std::vector<int64_t> lhs, rhs, out;
  std::vector<int64_t> lc, rc, lb, rb;
  int64_t k;
};

class DotGeneralMappingTest : public ::testing::TestWithParam<DotCase> {};

TEST_P(DotGeneralMappingTest, MatchesReference) {
  const DotCase& c = GetParam();
  ASSERT_OK_AND_ASSIGN(
      auto planned,
      PlannedDot::Make({T(c.type, c.lhs), T(c.type, c.rhs)}, T(c.type, c.out),
                       [&](FunctionBuilder& fb) {
                         return fb.DotGeneral(fb.Parameter(0), fb.Parameter(1), T(c.type, c.out),
                                              c.lc, c.rc, c.lb, c.rb);
                       }));
  auto cls = kernels::ClassifyDotGeneral(planned->item().ops, planned->fusion(), kAnySize);
  EXPECT_EQ(cls.placement, DotPlacement::kLibrary) << cls.reason;
  ExpectMatchesReference(*planned, c.type, c.k);
}

INSTANTIATE_TEST_SUITE_P(
    Dims, DotGeneralMappingTest,
    ::testing::Values(
        DotCase{"plain", kF32, {7, 13}, {13, 5}, {7, 5}, {1}, {0}, {}, {}, 13},
        DotCase{"rhs_transposed", kF32, {6, 9}, {4, 9}, {6, 4}, {1}, {1}, {}, {}, 9},
        DotCase{"lhs_transposed", kF32, {9, 6}, {9, 4}, {6, 4}, {0}, {0}, {}, {}, 9},
        DotCase{"batch_leading", kF32, {3, 5, 8}, {3, 8, 2}, {3, 5, 2}, {2}, {1}, {0}, {0}, 8},
        DotCase{"batch_one", kF32, {1, 5, 8}, {1, 8, 3}, {1, 5, 3}, {2}, {1}, {0}, {0}, 8},
        DotCase{"batch_not_leading", kF32, {5, 3, 8}, {8, 3, 2}, {3, 5, 2}, {2}, {0}, {1}, {1}, 8},
        DotCase{"two_batch_dims", kF32, {2, 5, 3, 4}, {3, 4, 2, 6}, {2, 3, 5, 6}, {3}, {1}, {0, 2}, {2, 0}, 4},
        DotCase{"two_contracting_dims", kF32, {5, 3, 4}, {3, 4, 7}, {5, 7}, {1, 2}, {0, 1}, {}, {}, 12},
        DotCase{"two_free_dims", kF32, {2, 3, 6}, {6, 5}, {2, 3, 5}, {2}, {0}, {}, {}, 6},
        DotCase{"vector_matrix", kF32, {6}, {6, 5}, {5}, {0}, {0}, {}, {}, 6},
        DotCase{"odd_sizes_bf16", kBF16, {17, 33}, {33, 9}, {17, 9}, {1}, {0}, {}, {}, 33},
        DotCase{"batched_bf16", kBF16, {2, 9, 33}, {2, 7, 33}, {2, 9, 7}, {2}, {2}, {0}, {0}, 33}),
    [](const ::testing::TestParamInfo<DotCase>& info) { return info.param.name; });

TEST(DotGeneralMappingTest, ContractingDimsThatDoNotNestAreUnmapped) {
  // lhs contracts dims 0 and 2 (not adjacent): K cannot be one strided dim without a copy.
  ASSERT_OK_AND_ASSIGN(auto planned,
                       PlannedDot::Make({T(kF32, {3, 5, 4}), T(kF32, {3, 4, 7})}, T(kF32, {5, 7}),
                                        [](FunctionBuilder& fb) {
                                          return fb.DotGeneral(fb.Parameter(0), fb.Parameter(1),
                                                               T(kF32, {5, 7}), {0, 2}, {0, 1}, {}, {});
                                        }));
  auto kernel = LibraryKernel::Create(planned->item(), planned->fusion(), kAnySize);
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(kernel.status().message()),
              HasSubstr("contracting dims do not nest in both operand layouts"));
  EXPECT_EQ(kernels::ClassifyDotGeneral(planned->item().ops, planned->fusion()).placement,
            DotPlacement::kJitUnmapped);
}

TEST(DotGeneralMappingTest, ConstantWeightsArePrepackedOnce) {
  for (ElementType type : {kF32, kBF16}) {
    const Tensor weights = Random(T(type, {64, 48}), 99);
    ASSERT_OK_AND_ASSIGN(auto planned,
                         PlannedDot::Make({T(type, {2, 17, 64})}, T(type, {2, 17, 48}),
                                          [&](FunctionBuilder& fb) -> StatusOr<Value*> {
                                            ACCY_ASSIGN_OR_RETURN(Value * w, fb.Constant(weights));
                                            return fb.DotGeneral(fb.Parameter(0), w,
                                                                 T(type, {2, 17, 48}), {2}, {0}, {}, {});
                                          }));
    ExpectMatchesReference(*planned, type, 64);
  }
}

// Weights whose row stride is a multiple of 4 KiB (N = 1024 f32) and M below 512: on hosts
// below avx512_core the matmul reads a padded copy (per run for a buffer, prepacked for a
// constant), and with avx512_core on Intel CPUs a per-run padded copy of a buffer (constants
// take matmul's own layout), with the same results.
TEST(DotGeneralMappingTest, FourKibStrideWeightsArePaddedBelowAvx512) {
  for (bool constant : {false, true}) {
    SCOPED_TRACE(constant ? "constant weights" : "weights parameter");
    const Tensor weights = Random(T(kF32, {48, 1024}), 5);
    ASSERT_OK_AND_ASSIGN(
        auto planned,
        PlannedDot::Make(constant ? std::vector<TensorType>{T(kF32, {40, 48})}
                                  : std::vector<TensorType>{T(kF32, {40, 48}), T(kF32, {48, 1024})},
                         T(kF32, {40, 1024}), [&](FunctionBuilder& fb) -> StatusOr<Value*> {
                           Value* w = constant ? *fb.Constant(weights) : fb.Parameter(1);
                           return fb.DotGeneral(fb.Parameter(0), w, T(kF32, {40, 1024}), {1}, {0},
                                                {}, {});
                         }));
    ExpectMatchesReference(*planned, kF32, 48);
    ASSERT_OK_AND_ASSIGN(LibraryKernel kernel,
                         LibraryKernel::Create(planned->item(), planned->fusion(), kAnySize));
    const bool per_run_copy =
        kernel.implementation().find("padded row stride") != std::string::npos;
    EXPECT_EQ(per_run_copy,
              !constant && (!kernels::OneDnnHasAvx512Core() || kernels::HostIsIntel()))
        << kernel.implementation();
  }
}

// Which weights read from a buffer get the per-run padded copy (PaddedWeightsDesc): below
// avx512_core, row strides that are multiples of 2 KiB with M from 32 and below 512 (below 1024
// for odd multiples of 2 KiB); with avx512_core, 4 KiB multiples on Intel CPUs only. Results
// match the reference either way.
TEST(DotGeneralMappingTest, PaddedCopyFollowsTheRowStrideAndM) {
  struct Case {
    int64_t m, n;
    bool below_avx512, intel_avx512;  // expected per-run copy on each kind of host
  };
  const bool avx512 = kernels::OneDnnHasAvx512Core();
  for (const Case& c : {Case{40, 512, true, false}, Case{40, 256, false, false},
                        Case{40, 768, false, false}, Case{40, 1024, true, true},
                        Case{16, 512, false, false}, Case{600, 512, true, false},
                        Case{600, 1024, false, true}, Case{1024, 512, false, false}}) {
    SCOPED_TRACE(testing::Message() << "M " << c.m << " N " << c.n);
    ASSERT_OK_AND_ASSIGN(
        auto planned,
        PlannedDot::Make({T(kF32, {c.m, 24}), T(kF32, {24, c.n})}, T(kF32, {c.m, c.n}),
                         [&](FunctionBuilder& fb) {
                           return fb.DotGeneral(fb.Parameter(0), fb.Parameter(1),
                                                T(kF32, {c.m, c.n}), {1}, {0}, {}, {});
                         }));
    ASSERT_OK_AND_ASSIGN(LibraryKernel kernel,
                         LibraryKernel::Create(planned->item(), planned->fusion(), kAnySize));
    const bool per_run_copy =
        kernel.implementation().find("padded row stride") != std::string::npos;
    const bool expected = !avx512 ? c.below_avx512 : kernels::HostIsIntel() && c.intel_avx512;
    EXPECT_EQ(per_run_copy, expected) << kernel.implementation();
    if (c.m * c.n <= 40 * 1024) ExpectMatchesReference(*planned, kF32, 24);
  }
}

TEST(DotGeneralMappingTest, Bf16ProductWithF32Result) {
  auto planned = PlannedDot::Make({T(kBF16, {9, 40}), T(kBF16, {40, 11})}, T(kF32, {9, 11}),
                                  [](FunctionBuilder& fb) {
                                    return fb.DotGeneral(fb.Parameter(0), fb.Parameter(1),
                                                         T(kF32, {9, 11}), {1}, {0}, {}, {});
                                  });
  if (!planned.ok()) GTEST_SKIP() << "the IR rejects bf16 x bf16 -> f32: " << planned.status();
  ExpectMatchesReference(**planned, kF32, 40);
}

TEST(DotGeneralMappingTest, BatchedEpilogueWithNonLeadingBatchDim) {
  // lhs [m, b, k] batched over dim 1, then bias over n and tanh: result [b, m, n].
  const TensorType out = T(kF32, {3, 5, 7});
  ASSERT_OK_AND_ASSIGN(auto planned,
                       PlannedDot::Make({T(kF32, {5, 3, 8}), T(kF32, {3, 8, 7}), T(kF32, {7})}, out,
                                        [&](FunctionBuilder& fb) -> StatusOr<Value*> {
                                          ACCY_ASSIGN_OR_RETURN(
                                              Value * dot, fb.DotGeneral(fb.Parameter(0), fb.Parameter(1),
                                                                         out, {2}, {1}, {1}, {0}));
                                          ACCY_ASSIGN_OR_RETURN(Value * bias,
                                                                fb.BroadcastInDim(fb.Parameter(2), out, {2}));
                                          ACCY_ASSIGN_OR_RETURN(Value * sum, fb.Add(dot, bias));
                                          return fb.Tanh(sum);
                                        }));
  ASSERT_EQ(planned->item().ops.size(), 3u);
  ExpectMatchesReference(*planned, kF32, 8);
}

TEST(DotGeneralMappingTest, IntegerProductsAreUnmapped) {
  const auto i32 = ElementType::kI32;
  ASSERT_OK_AND_ASSIGN(auto planned,
                       PlannedDot::Make({T(i32, {40, 40}), T(i32, {40, 40})}, T(i32, {40, 40}),
                                        [&](FunctionBuilder& fb) {
                                          return fb.DotGeneral(fb.Parameter(0), fb.Parameter(1),
                                                               T(i32, {40, 40}), {1}, {0}, {}, {});
                                        }));
  auto cls = kernels::ClassifyDotGeneral(planned->item().ops, planned->fusion());
  EXPECT_EQ(cls.placement, DotPlacement::kJitUnmapped);
  EXPECT_THAT(cls.reason, HasSubstr("element types i32 x i32 -> i32"));
  auto kernel = LibraryKernel::Create(planned->item(), planned->fusion());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(kernel.status().message()), HasSubstr("dot_general %"));
}

TEST(DotGeneralMappingTest, TinyProductsAreLeftToTheJit) {
  ASSERT_OK_AND_ASSIGN(auto planned,
                       PlannedDot::Make({T(kF32, {4, 8}), T(kF32, {8, 4})}, T(kF32, {4, 4}),
                                        [](FunctionBuilder& fb) {
                                          return fb.DotGeneral(fb.Parameter(0), fb.Parameter(1),
                                                               T(kF32, {4, 4}), {1}, {0}, {}, {});
                                        }));
  auto cls = kernels::ClassifyDotGeneral(planned->item().ops, planned->fusion());
  EXPECT_EQ(cls.placement, DotPlacement::kJitSmall);
  EXPECT_EQ(cls.element_ops, 256u);
  auto kernel = LibraryKernel::Create(planned->item(), planned->fusion());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(kernel.status().message()), HasSubstr("below the library threshold"));
}

// Epilogues: dot [M,K]x[K,N] then `epilogue(fb, dot, params)`.
using Epilogue = std::function<StatusOr<Value*>(FunctionBuilder&, Value*, ElementType)>;

StatusOr<Value*> Scalar(FunctionBuilder& fb, ElementType type, double v, const TensorType& like) {
  ACCY_ASSIGN_OR_RETURN(Value * c, fb.ConstantScalar(type, v));
  return fb.BroadcastInDim(c, like, {});
}

struct EpilogueCase {
  std::string name;
  ElementType type;
  bool maps;
  std::string unmapped_fragment;
  Epilogue epilogue;
};

class DotEpilogueTest : public ::testing::TestWithParam<EpilogueCase> {};

TEST_P(DotEpilogueTest, MapsExactlyOrNamesTheOp) {
  const EpilogueCase& c = GetParam();
  const int64_t m = 9, k = 24, n = 17;
  const TensorType out = T(c.type, {m, n});
  ASSERT_OK_AND_ASSIGN(auto planned,
                       PlannedDot::Make({T(c.type, {m, k}), T(c.type, {k, n}), T(c.type, {n}),
                                         T(c.type, {m, n}), T(c.type, {m})},
                                        out,
                                        [&](FunctionBuilder& fb) -> StatusOr<Value*> {
                                          ACCY_ASSIGN_OR_RETURN(
                                              Value * dot, fb.DotGeneral(fb.Parameter(0), fb.Parameter(1),
                                                                         out, {1}, {0}, {}, {}));
                                          return c.epilogue(fb, dot, c.type);
                                        }));
  ASSERT_GT(planned->item().ops.size(), 1u) << "expected a dot_epilogue cluster";
  // Below avx512_core gelu_tanh is left to the JIT epilogue pass (a post-op there costs the
  // matmul two thirds of its speed); the prefix mode still binds the dot and what precedes it.
  if (c.maps && c.name.find("gelu_tanh") != std::string::npos && !kernels::OneDnnHasAvx512Core()) {
    auto kernel = LibraryKernel::Create(planned->item(), planned->fusion(), kAnySize);
    EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(std::string(kernel.status().message()), HasSubstr("starts gelu_tanh"));
    kernels::LibraryKernelOptions prefix = kAnySize;
    prefix.allow_jit_epilogue = true;
    const kernels::DotClassification cls =
        kernels::ClassifyDotGeneral(planned->item().ops, planned->fusion(), prefix);
    EXPECT_EQ(cls.placement, DotPlacement::kLibraryWithJitEpilogue) << cls.reason;
    return;
  }
  if (c.maps) {
    ExpectMatchesReference(*planned, c.type, k);
  } else {
    if (c.unmapped_fragment == "only its reference implementation") {
      // Allowed explicitly, the reference implementation binds and matches.
      ExpectMatchesReference(*planned, c.type, k, kAnySizeAnyImplementation);
    }
    auto kernel = LibraryKernel::Create(planned->item(), planned->fusion(), kAnySize);
    EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(std::string(kernel.status().message()), HasSubstr(c.unmapped_fragment));
  }
}

StatusOr<Value*> BiasAdd(FunctionBuilder& fb, Value* dot) {
  ACCY_ASSIGN_OR_RETURN(Value * bias, fb.BroadcastInDim(fb.Parameter(2), dot->type(), {1}));
  return fb.Add(dot, bias);
}

// jax.nn.gelu(approximate=True): 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + c * x^3))).
StatusOr<Value*> GeluTanh(FunctionBuilder& fb, Value* x, ElementType t, double cubic, bool power) {
  const TensorType& type = x->type();
  Value* x3;
  if (power) {
    ACCY_ASSIGN_OR_RETURN(Value * three, Scalar(fb, t, 3.0, type));
    ACCY_ASSIGN_OR_RETURN(x3, fb.Power(x, three));
  } else {
    ACCY_ASSIGN_OR_RETURN(Value * x2, fb.Multiply(x, x));
    ACCY_ASSIGN_OR_RETURN(x3, fb.Multiply(x2, x));
  }
  ACCY_ASSIGN_OR_RETURN(Value * c, Scalar(fb, t, cubic, type));
  ACCY_ASSIGN_OR_RETURN(Value * cx3, fb.Multiply(c, x3));
  ACCY_ASSIGN_OR_RETURN(Value * inner, fb.Add(x, cx3));
  ACCY_ASSIGN_OR_RETURN(Value * k, Scalar(fb, t, 0.7978845608028654, type));
  ACCY_ASSIGN_OR_RETURN(Value * scaled, fb.Multiply(k, inner));
  ACCY_ASSIGN_OR_RETURN(Value * th, fb.Tanh(scaled));
  ACCY_ASSIGN_OR_RETURN(Value * one, Scalar(fb, t, 1.0, type));
  ACCY_ASSIGN_OR_RETURN(Value * bracket, fb.Add(one, th));
  ACCY_ASSIGN_OR_RETURN(Value * half, Scalar(fb, t, 0.5, type));
  ACCY_ASSIGN_OR_RETURN(Value * hx, fb.Multiply(half, x));
  return fb.Multiply(hx, bracket);
}

// x * (1 / (kAddend + exp(-x))): JAX's silu written out for kAddend 1 (oneDNN's swish post-op);
// any other addend is no sigmoid.
template <int kAddend>
StatusOr<Value*> ExpandedSwish(FunctionBuilder& fb, Value* dot, ElementType t) {
  ACCY_ASSIGN_OR_RETURN(Value * neg, fb.Negate(dot));
  ACCY_ASSIGN_OR_RETURN(Value * e, fb.Exponential(neg));
  ACCY_ASSIGN_OR_RETURN(Value * addend, Scalar(fb, t, kAddend, dot->type()));
  ACCY_ASSIGN_OR_RETURN(Value * sum, fb.Add(addend, e));
  ACCY_ASSIGN_OR_RETURN(Value * one, Scalar(fb, t, 1.0, dot->type()));
  ACCY_ASSIGN_OR_RETURN(Value * sig, fb.Divide(one, sum));
  return fb.Multiply(dot, sig);
}

StatusOr<Value*> BiasGeluTanh(FunctionBuilder& fb, Value* dot, ElementType t) {
  ACCY_ASSIGN_OR_RETURN(Value * biased, BiasAdd(fb, dot));
  return GeluTanh(fb, biased, t, 0.044715, false);
}

StatusOr<Value*> BiasGeluTanhPower(FunctionBuilder& fb, Value* dot, ElementType t) {
  ACCY_ASSIGN_OR_RETURN(Value * biased, BiasAdd(fb, dot));
  return GeluTanh(fb, biased, t, 0.044715, true);
}

INSTANTIATE_TEST_SUITE_P(
    Epilogues, DotEpilogueTest,
    ::testing::Values(
        // relu is not a post-op: oneDNN 2.6's eltwise_relu gives 0 for a NaN (maximum, NaN).
        EpilogueCase{"bias_relu", kF32, false, "gives 0 for a NaN where maximum propagates it",
                     [](FunctionBuilder& fb, Value* dot, ElementType t) -> StatusOr<Value*> {
                       ACCY_ASSIGN_OR_RETURN(Value * biased, BiasAdd(fb, dot));
                       ACCY_ASSIGN_OR_RETURN(Value * zero, Scalar(fb, t, 0, dot->type()));
                       return fb.Maximum(biased, zero);
                     }},
        EpilogueCase{"bias_tanh_bf16", kBF16, true, "",
                     [](FunctionBuilder& fb, Value* dot, ElementType) -> StatusOr<Value*> {
                       ACCY_ASSIGN_OR_RETURN(Value * biased, BiasAdd(fb, dot));
                       return fb.Tanh(biased);
                     }},
        EpilogueCase{"scale_shift_logistic", kF32, true, "",
                     [](FunctionBuilder& fb, Value* dot, ElementType t) -> StatusOr<Value*> {
                       ACCY_ASSIGN_OR_RETURN(Value * s, Scalar(fb, t, 0.125, dot->type()));
                       ACCY_ASSIGN_OR_RETURN(Value * scaled, fb.Multiply(dot, s));
                       ACCY_ASSIGN_OR_RETURN(Value * b, Scalar(fb, t, -0.5, dot->type()));
                       ACCY_ASSIGN_OR_RETURN(Value * shifted, fb.Subtract(scaled, b));
                       return fb.Logistic(shifted);
                     }},
        EpilogueCase{"two_linear_post_ops", kF32, false, "repeats an eltwise post-op kind",
                     [](FunctionBuilder& fb, Value* dot, ElementType t) -> StatusOr<Value*> {
                       ACCY_ASSIGN_OR_RETURN(Value * neg, fb.Negate(dot));
                       ACCY_ASSIGN_OR_RETURN(Value * b, Scalar(fb, t, 2.0, dot->type()));
                       return fb.Subtract(b, neg);
                     }},
        EpilogueCase{"column_bias_and_residual", kF32, false, "only its reference implementation",
                     [](FunctionBuilder& fb, Value* dot, ElementType) -> StatusOr<Value*> {
                       ACCY_ASSIGN_OR_RETURN(Value * col, fb.BroadcastInDim(fb.Parameter(4), dot->type(), {0}));
                       ACCY_ASSIGN_OR_RETURN(Value * biased, fb.Add(col, dot));
                       return fb.Multiply(biased, fb.Parameter(3));
                     }},
        EpilogueCase{"two_adds_two_scalar_multiplies", kF32, true, "",
                     [](FunctionBuilder& fb, Value* dot, ElementType t) -> StatusOr<Value*> {
                       ACCY_ASSIGN_OR_RETURN(Value * biased, BiasAdd(fb, dot));
                       ACCY_ASSIGN_OR_RETURN(Value * residual, fb.Add(biased, fb.Parameter(3)));
                       ACCY_ASSIGN_OR_RETURN(Value * half, Scalar(fb, t, 0.5, dot->type()));
                       ACCY_ASSIGN_OR_RETURN(Value * a, fb.Multiply(residual, half));
                       ACCY_ASSIGN_OR_RETURN(Value * three, Scalar(fb, t, 3.0, dot->type()));
                       return fb.Multiply(a, three);
                     }},
        EpilogueCase{"divide_by_constant", kF32, true, "",
                     [](FunctionBuilder& fb, Value* dot, ElementType t) -> StatusOr<Value*> {
                       ACCY_ASSIGN_OR_RETURN(Value * s, Scalar(fb, t, 3.0, dot->type()));
                       return fb.Divide(dot, s);
                     }},
        EpilogueCase{"maximum_with_one", kF32, false, "maximum",
                     [](FunctionBuilder& fb, Value* dot, ElementType t) -> StatusOr<Value*> {
                       ACCY_ASSIGN_OR_RETURN(Value * one, Scalar(fb, t, 1.0, dot->type()));
                       return fb.Maximum(dot, one);
                     }},
        EpilogueCase{"swish", kF32, true, "",
                     [](FunctionBuilder& fb, Value* dot, ElementType) -> StatusOr<Value*> {
                       ACCY_ASSIGN_OR_RETURN(Value * sig, fb.Logistic(dot));
                       return fb.Multiply(dot, sig);
                     }},
        EpilogueCase{"swish_expanded_sigmoid", kF32, true, "", ExpandedSwish<1>},
        EpilogueCase{"expanded_sigmoid_of_two", kF32, false, "not a single-use chain step",
                     ExpandedSwish<2>},
        EpilogueCase{"bias_gelu_tanh", kF32, true, "", BiasGeluTanh},
        EpilogueCase{"bias_gelu_tanh_bf16", kBF16, true, "", BiasGeluTanh},
        EpilogueCase{"bias_gelu_tanh_power_form", kF32, true, "", BiasGeluTanhPower},
        EpilogueCase{"near_gelu_wrong_constant", kF32, false, "not a single-use chain step",
                     [](FunctionBuilder& fb, Value* dot, ElementType t) -> StatusOr<Value*> {
                       return GeluTanh(fb, dot, t, /*cubic=*/0.05, /*power=*/false);
                     }},
        EpilogueCase{"diamond_tanh_times_x", kF32, false, "not a single-use chain step",
                     [](FunctionBuilder& fb, Value* dot, ElementType) -> StatusOr<Value*> {
                       ACCY_ASSIGN_OR_RETURN(Value * th, fb.Tanh(dot));
                       return fb.Multiply(dot, th);
                     }}),
    [](const ::testing::TestParamInfo<EpilogueCase>& info) { return info.param.name; });


// ---- A JIT epilogue after matmul (LibraryKernelOptions::allow_jit_epilogue) ----

// These tests are about matmul's post-ops: the tiled gemm:jit binding (which leaves every
// epilogue but a bias to the JIT; tiled_gemm_test.cc) is off.
constexpr kernels::LibraryKernelOptions kAnySizeJitEpilogue{
    .min_dot_element_ops = 0, .allow_jit_epilogue = true, .allow_tiled_gemm = false};

// The result of the item's first op of `kind`, or null.
const Value* ResultOf(const WorkItem& item, OpKind kind) {
  for (const Operation* op : item.ops) {
    if (op->kind() == kind) return op->result(0);
  }
  return nullptr;
}

// dot [9, 24] x [24, 17] (parameters 0, 1; bias [17] is 2, a [9, 17] tensor 3, a column [9]
// is 4) then `epilogue`.
StatusOr<std::unique_ptr<PlannedDot>> PlanEpilogue(const Epilogue& epilogue) {
  const TensorType out = T(kF32, {9, 17});
  return PlannedDot::Make({T(kF32, {9, 24}), T(kF32, {24, 17}), T(kF32, {17}), out, T(kF32, {9})},
                          out, [&](FunctionBuilder& fb) -> StatusOr<Value*> {
                            ACCY_ASSIGN_OR_RETURN(Value * dot,
                                                  fb.DotGeneral(fb.Parameter(0), fb.Parameter(1),
                                                                out, {1}, {0}, {}, {}));
                            return epilogue(fb, dot, kF32);
                          });
}

TEST(DotJitEpilogueTest, PartlyMappedEpilogueBindsTheLongestMappedPrefix) {
  // exp(max(dot + bias, 1)): the bias add maps, maximum with 1 does not, exp after it is left.
  ASSERT_OK_AND_ASSIGN(auto planned,
                       PlanEpilogue([](FunctionBuilder& fb, Value* dot, ElementType t)
                                        -> StatusOr<Value*> {
                         ACCY_ASSIGN_OR_RETURN(Value * biased, BiasAdd(fb, dot));
                         ACCY_ASSIGN_OR_RETURN(Value * one, Scalar(fb, t, 1.0, dot->type()));
                         ACCY_ASSIGN_OR_RETURN(Value * clamped, fb.Maximum(biased, one));
                         return fb.Exponential(clamped);
                       }));
  ASSERT_EQ(planned->item().ops.size(), 4u);
  const Value* biased = ResultOf(planned->item(), OpKind::kAdd);
  ASSERT_NE(biased, nullptr);

  auto whole = kernels::ClassifyDotGeneral(planned->item().ops, planned->fusion(), kAnySize);
  EXPECT_EQ(whole.placement, DotPlacement::kJitUnmapped);
  EXPECT_THAT(whole.reason, HasSubstr("maximum"));

  auto split =
      kernels::ClassifyDotGeneral(planned->item().ops, planned->fusion(), kAnySizeJitEpilogue);
  EXPECT_EQ(split.placement, DotPlacement::kLibraryWithJitEpilogue);
  EXPECT_EQ(split.library_output, biased);
  EXPECT_THAT(split.reason, HasSubstr("epilogue op maximum"));

  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel,
                       LibraryKernel::Create(planned->item(), planned->fusion(),
                                             kAnySizeJitEpilogue));
  ASSERT_EQ(kernel.outputs().size(), 1u);
  EXPECT_EQ(kernel.outputs()[0], biased);
  ASSERT_EQ(kernel.inputs().size(), 3u);  // lhs, rhs, bias
  EXPECT_EQ(kernel.inputs()[2], planned->module().functions()[0]->parameter(2));
  // The output is dot + bias (naive sums in double; oneDNN accumulates in f32).
  std::vector<Tensor> args;
  for (const TensorType& t : planned->module().functions()[0]->parameter_types()) {
    args.push_back(Random(t, static_cast<uint32_t>(args.size() + 60)));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> actual, RunKernel(kernel, args));
  for (int64_t i = 0; i < 9; ++i) {
    for (int64_t j = 0; j < 17; ++j) {
      double sum = args[2].GetAsDouble(j);
      for (int64_t k = 0; k < 24; ++k) sum += args[0].GetAsDouble(i * 24 + k) * args[1].GetAsDouble(k * 17 + j);
      EXPECT_NEAR(actual[0].GetAsDouble(i * 17 + j), sum, 2e-5 * 5) << i << ", " << j;
    }
  }
}

TEST(DotJitEpilogueTest, ReferenceOnlyPostOpsLeaveTheWholeEpilogueToTheJit) {
  // A column bias (broadcast over N) as a binary post-op has only oneDNN 2.6's reference
  // matmul: with a JIT epilogue allowed, matmul computes the dot alone.
  ASSERT_OK_AND_ASSIGN(auto planned,
                       PlanEpilogue([](FunctionBuilder& fb, Value* dot, ElementType)
                                        -> StatusOr<Value*> {
                         ACCY_ASSIGN_OR_RETURN(Value * col, fb.BroadcastInDim(fb.Parameter(4), dot->type(), {0}));
                         ACCY_ASSIGN_OR_RETURN(Value * biased, fb.Add(col, dot));
                         return fb.Multiply(biased, fb.Parameter(3));
                       }));
  const Value* dot = ResultOf(planned->item(), OpKind::kDotGeneral);
  auto whole = LibraryKernel::Create(planned->item(), planned->fusion(), kAnySize);
  EXPECT_THAT(std::string(whole.status().message()), HasSubstr("only its reference implementation"));
  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel,
                       LibraryKernel::Create(planned->item(), planned->fusion(),
                                             kAnySizeJitEpilogue));
  EXPECT_EQ(kernel.outputs()[0], dot);
  EXPECT_EQ(kernel.inputs().size(), 2u);  // lhs, rhs
  EXPECT_NE(kernel.implementation().substr(0, 4), "ref:") << kernel.implementation();
}

TEST(DotJitEpilogueTest, FullyMappedEpilogueStaysOneLibraryKernel) {
  ASSERT_OK_AND_ASSIGN(auto planned,
                       PlanEpilogue([](FunctionBuilder& fb, Value* dot, ElementType t)
                                        -> StatusOr<Value*> {
                         ACCY_ASSIGN_OR_RETURN(Value * biased, BiasAdd(fb, dot));
                         return fb.Tanh(biased);
                       }));
  auto cls =
      kernels::ClassifyDotGeneral(planned->item().ops, planned->fusion(), kAnySizeJitEpilogue);
  EXPECT_EQ(cls.placement, DotPlacement::kLibrary);
  EXPECT_EQ(cls.library_output, planned->item().output_value);
  EXPECT_EQ(cls.reason, "");
  ASSERT_OK_AND_ASSIGN(LibraryKernel kernel,
                       LibraryKernel::Create(planned->item(), planned->fusion(),
                                             kAnySizeJitEpilogue));
  EXPECT_EQ(kernel.outputs()[0], planned->item().output_value);
}

}  // namespace
}  // namespace accy::kernels_test
