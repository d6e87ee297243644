// reduce_window items (schedule_plan.h kReduceWindow): average pools (a reduce_window add with
// init +0, then a divide by the window size or by the window's reduce_window of ones) run on
// oneDNN pooling_v2_forward (kernels/onednn_pooling.cc); everything else runs on the JIT
// (jit/window_emitter.cc) with its elementwise consumers fused into the same kernel. One table:
// each case is a StableHLO program compiled by the engine (1 thread, profiling on), checked for
// its plan (work items by kind, where the reduce_window items run) and compared with the
// reference evaluator bit for bit (tolerance 0: oneDNN's average pooling and the JIT add the
// window's elements in row-major window order from +0 and divide once, as the reference does).
// Inputs hold NaN, +-inf, -0 and windows of only -inf, so max pooling's NaN and -inf cases
// (why it stays on the JIT) are exercised too.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "accy/engine.h"
#include "accy/isa.h"
#include "accy/stablehlo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/onednn_kernel.h"
#include "src/reference/reference_evaluator.h"
#include "tests/kernels/kernels_test_util.h"
#include "tests/schedule/schedule_test_util.h"

namespace accy::kernels_test {
namespace {

using Dims = std::vector<int64_t>;
using ::testing::HasSubstr;

// What divides the reduce_window's sum.
enum class Divisor {
  kNone,        // the reduce_window's result is returned as it is
  kWindowSize,  // a splat constant (`divisor` when set, else the window size): JAX's avg_pool
  kCount,       // the reduce_window of ones of the input's dims with the non-window dims 1,
                // broadcast (Flax's avg_pool with count_include_pad=False)
  kCountFull,   // the reduce_window of ones of the input's dims (Haiku's SAME-padded avg_pool)
};

struct PoolCase {
  std::string name;
  Dims input;
  Dims window, strides;
  std::vector<std::pair<int64_t, int64_t>> padding;  // empty: none
  Dims base_dilations = {}, window_dilations = {};   // empty: all 1
  std::string body = "add";
  std::string init = "0.0";
  Divisor divisor = Divisor::kWindowSize;
  std::string divisor_literal = "";  // kWindowSize: overrides the window size
  std::string type = "f32";
  // MLIR lines after the average %y defining %z (returned instead of %y when not empty).
  std::string epilogue = "";
  // Expected plan: work items of kind reduce_window and of any kind, and where the reduce_window
  // item computing the result runs ("library" or "jit").
  int reduce_window_items = 1;
  int items = 1;
  std::string runs_on = "library";
  // NCHW: oneDNN 2.6 has only simple_nchw:any below AVX-512, which the binding refuses, so the
  // JIT runs it there (ACCY_MAX_ISA=avx2, or an AVX2 host).
  bool library_needs_avx512 = false;
};

std::string Join(const Dims& dims, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? separator : "") + std::to_string(dims[i]);
  return out;
}

std::string TensorText(const Dims& dims, const std::string& type) {
  return "tensor<" + (dims.empty() ? "" : Join(dims, "x") + "x") + type + ">";
}

Dims Ones(size_t rank) { return Dims(rank, 1); }

// The spec's result dims of reduce_window (num_windows per dim).
Dims ResultDims(const PoolCase& c, const Dims& input) {
  Dims out;
  for (size_t d = 0; d < input.size(); ++d) {
    const int64_t base = c.base_dilations.empty() ? 1 : c.base_dilations[d];
    const int64_t dilation = c.window_dilations.empty() ? 1 : c.window_dilations[d];
    const int64_t padded = (input[d] - 1) * base + 1 +
                           (c.padding.empty() ? 0 : c.padding[d].first + c.padding[d].second);
    const int64_t window = (c.window[d] - 1) * dilation + 1;
    out.push_back((padded - window) / c.strides[d] + 1);
  }
  return out;
}

std::string ReduceWindow(const PoolCase& c, const std::string& result, const std::string& operand,
                         const Dims& input) {
  const size_t rank = input.size();
  std::string padding = "[";
  for (size_t d = 0; d < rank; ++d) {
    padding += (d ? ", [" : "[") + std::to_string(c.padding.empty() ? 0 : c.padding[d].first) +
               ", " + std::to_string(c.padding.empty() ? 0 : c.padding[d].second) + "]";
  }
  padding += "]";
  const std::string t = TensorText({}, c.type);
  return "  " + result + " = \"stablehlo.reduce_window\"(" + operand + ", %init) <{" +
         "base_dilations = array<i64: " +
         Join(c.base_dilations.empty() ? Ones(rank) : c.base_dilations, ", ") +
         ">, padding = dense<" + padding + "> : tensor<" + std::to_string(rank) +
         "x2xi64>, window_dilations = array<i64: " +
         Join(c.window_dilations.empty() ? Ones(rank) : c.window_dilations, ", ") +
         ">, window_dimensions = array<i64: " + Join(c.window, ", ") +
         ">, window_strides = array<i64: " + Join(c.strides, ", ") + ">}> ({\n" +
         "  ^bb0(%a: " + t + ", %b: " + t + "):\n" + "    %r = stablehlo." + c.body +
         " %a, %b : " + t + "\n" + "    stablehlo.return %r : " + t + "\n" + "  }) : (" +
         TensorText(input, c.type) + ", " + t + ") -> " + TensorText(ResultDims(c, input), c.type) +
         "\n";
}

std::string Program(const PoolCase& c) {
  const Dims out = ResultDims(c, c.input);
  const std::string out_t = TensorText(out, c.type);
  std::string text = "func.func @main(%x: " + TensorText(c.input, c.type) + ") -> " + out_t +
                     " {\n" + "  %init = stablehlo.constant dense<" + c.init +
                     "> : " + TensorText({}, c.type) + "\n" + ReduceWindow(c, "%s", "%x", c.input);
  int64_t window_size = 1;
  for (int64_t w : c.window) window_size *= w;
  std::string result = "%s";
  if (c.divisor != Divisor::kNone) {
    if (c.divisor == Divisor::kWindowSize) {
      const std::string literal =
          c.divisor_literal.empty() ? std::to_string(window_size) + ".0" : c.divisor_literal;
      text += "  %d = stablehlo.constant dense<" + literal + "> : " + out_t + "\n";
    } else {
      Dims ones = c.input;
      if (c.divisor == Divisor::kCount) {
        for (size_t d = 0; d < ones.size(); ++d) {
          const bool trivial =
              c.window[d] == 1 && c.strides[d] == 1 &&
              (c.padding.empty() || (c.padding[d].first == 0 && c.padding[d].second == 0));
          if (trivial) ones[d] = 1;
        }
      }
      text += "  %ones = stablehlo.constant dense<1.0> : " + TensorText(ones, c.type) + "\n" +
              ReduceWindow(c, c.divisor == Divisor::kCount ? "%n" : "%d", "%ones", ones);
      if (c.divisor == Divisor::kCount) {
        std::vector<int64_t> identity;
        for (size_t d = 0; d < ones.size(); ++d) identity.push_back(static_cast<int64_t>(d));
        text += "  %d = stablehlo.broadcast_in_dim %n, dims = [" + Join(identity, ", ") + "] : (" +
                TensorText(ResultDims(c, ones), c.type) + ") -> " + out_t + "\n";
      }
    }
    text += "  %y = stablehlo.divide %s, %d : " + out_t + "\n";
    result = "%y";
  }
  if (!c.epilogue.empty()) {
    text += c.epilogue;
    result = "%z";
  }
  return text + "  return " + result + " : " + out_t + "\n}\n";
}

// Values in [-4, 4) with, every 37th element, one of NaN, +inf, -inf, -0; and the first 64
// elements -inf (whole windows of -inf for max pooling, channel rows of -inf in NHWC).
accy::Tensor Input(const Dims& dims, const std::string& type) {
  const ElementType element = type == "bf16" ? ElementType::kBF16 : ElementType::kF32;
  accy::Tensor x = Random(T(element, dims), 7, -4, 4);
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(), INFINITY, -INFINITY, -0.0};
  for (int64_t i = 0; i < x.element_count(); ++i) {
    if (i < 64) x.SetFromDouble(i, -INFINITY);
    if (i % 37 == 36) x.SetFromDouble(i, specials[(i / 37) % 4]);
  }
  return x;
}

::testing::AssertionResult SameBits(const accy::Tensor& got, const accy::Tensor& want) {
  if (got.type() != want.type()) {
    return ::testing::AssertionFailure()
           << got.type().ToString() << " vs " << want.type().ToString();
  }
  const int64_t width = ElementByteWidth(want.element_type());
  const auto* g = static_cast<const uint8_t*>(got.data());
  const auto* w = static_cast<const uint8_t*>(want.data());
  for (int64_t i = 0; i < want.element_count(); ++i) {
    const bool both_nan = std::isnan(got.GetAsDouble(i)) && std::isnan(want.GetAsDouble(i));
    if (!both_nan && std::memcmp(g + i * width, w + i * width, static_cast<size_t>(width)) != 0) {
      return ::testing::AssertionFailure()
             << "first bad index " << i << ": got " << got.GetAsDouble(i) << ", expected "
             << want.GetAsDouble(i);
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<PoolCase> Cases() {
  using P = std::vector<std::pair<int64_t, int64_t>>;
  const P nhwc_pad1 = {{0, 0}, {1, 1}, {1, 1}, {0, 0}};
  const P nchw_pad1 = {{0, 0}, {0, 0}, {1, 1}, {1, 1}};
  const P nhwc_pad2 = {{0, 0}, {2, 2}, {2, 2}, {0, 0}};
  const std::string minus_inf = "0xFF800000";
  // relu of the average %y (of dims 2x4x4x16) as %z.
  const std::string relu =
      "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %zb = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> "
      "tensor<2x4x4x16xf32>\n"
      "  %z = stablehlo.maximum %y, %zb : tensor<2x4x4x16xf32>\n";
  return {
      // Mapped onto oneDNN: one reduce_window item on the library.
      {.name = "Avg2x2Stride2Nhwc",
       .input = {2, 8, 8, 16},
       .window = {1, 2, 2, 1},
       .strides = {1, 2, 2, 1}},
      {.name = "Avg3x3Stride2Pad1IncludePadNhwc",
       .input = {2, 9, 9, 16},
       .window = {1, 3, 3, 1},
       .strides = {1, 2, 2, 1},
       .padding = nhwc_pad1},
      {.name = "Avg3x3Stride2Pad1IncludePadNchw",
       .input = {2, 16, 9, 9},
       .window = {1, 1, 3, 3},
       .strides = {1, 1, 2, 2},
       .padding = nchw_pad1,
       .library_needs_avx512 = true},
      // Flax count_include_pad=False: the ones' reduce_window is a JIT item of its own, and its
      // operand (broadcast-splat-constants turns the splat into a broadcast) a shape item.
      {.name = "Avg3x3Stride1Pad1ExcludePadNhwc",
       .input = {2, 9, 9, 16},
       .window = {1, 3, 3, 1},
       .strides = {1, 1, 1, 1},
       .padding = nhwc_pad1,
       .divisor = Divisor::kCount,
       .reduce_window_items = 2,
       .items = 3},
      {.name = "Avg3x3Stride2Pad1ExcludePadFullOnesNchw",
       .input = {2, 16, 9, 9},
       .window = {1, 1, 3, 3},
       .strides = {1, 1, 2, 2},
       .padding = nchw_pad1,
       .divisor = Divisor::kCountFull,
       .reduce_window_items = 2,
       .items = 3,
       .library_needs_avx512 = true},
      {.name = "Avg1dNwc",
       .input = {2, 20, 8},
       .window = {1, 3, 1},
       .strides = {1, 1, 1},
       .padding = P{{0, 0}, {1, 1}, {0, 0}}},
      {.name = "Avg3dNdhwc",
       .input = {1, 6, 6, 6, 8},
       .window = {1, 2, 2, 2, 1},
       .strides = {1, 2, 2, 2, 1}},
      // A window over the leading dim too is a 3-D pool over dims 0-2 with N = 1, C = dim 3.
      {.name = "AvgWindowOverLeadingDimIsA3dPool",
       .input = {4, 6, 6, 8},
       .window = {2, 2, 2, 1},
       .strides = {2, 2, 2, 1}},
      // The average on oneDNN, the relu after it a JIT pass over its output: one item.
      {.name = "AvgThenReluJitEpilogue",
       .input = {2, 8, 8, 16},
       .window = {1, 2, 2, 1},
       .strides = {1, 2, 2, 1},
       .epilogue = relu},

      // Not mapped: the JIT runs the reduce_window with its divide (and relu) in one kernel.
      {.name = "MaxPool3x3Stride2Pad1StaysOnJit",
       .input = {2, 9, 9, 16},
       .window = {1, 3, 3, 1},
       .strides = {1, 2, 2, 1},
       .padding = nhwc_pad1,
       .body = "maximum",
       .init = minus_inf,
       .divisor = Divisor::kNone,
       .runs_on = "jit"},
      {.name = "MaxPoolNchwStaysOnJit",
       .input = {2, 16, 9, 9},
       .window = {1, 1, 3, 3},
       .strides = {1, 1, 2, 2},
       .padding = nchw_pad1,
       .body = "maximum",
       .init = minus_inf,
       .divisor = Divisor::kNone,
       .runs_on = "jit"},
      {.name = "MaxWithoutMinusInfinityInit",
       .input = {2, 8, 8, 16},
       .window = {1, 2, 2, 1},
       .strides = {1, 2, 2, 1},
       .body = "maximum",
       .divisor = Divisor::kNone,
       .runs_on = "jit"},
      {.name = "MaxPoolThenDivideAndReluFusedOnJit",
       .input = {2, 9, 9, 16},
       .window = {1, 3, 3, 1},
       .strides = {1, 2, 2, 1},
       .body = "maximum",
       .init = minus_inf,
       .divisor_literal = "2.0",
       .epilogue = relu,
       .runs_on = "jit"},
      {.name = "AddInitOneIsNotAnAverage",
       .input = {2, 8, 8, 16},
       .window = {1, 2, 2, 1},
       .strides = {1, 2, 2, 1},
       .init = "1.0",
       .runs_on = "jit"},
      {.name = "AddInitMinusZeroIsNotAnAverage",
       .input = {2, 8, 8, 16},
       .window = {1, 2, 2, 1},
       .strides = {1, 2, 2, 1},
       .init = "-0.0",
       .runs_on = "jit"},
      {.name = "SumWithoutDivide",
       .input = {2, 8, 8, 16},
       .window = {1, 2, 2, 1},
       .strides = {1, 2, 2, 1},
       .divisor = Divisor::kNone,
       .runs_on = "jit"},
      {.name = "DivideByAnotherConstant",
       .input = {2, 9, 9, 16},
       .window = {1, 3, 3, 1},
       .strides = {1, 2, 2, 1},
       .divisor_literal = "8.0",
       .runs_on = "jit"},
      {.name = "BaseDilation",
       .input = {1, 6, 6, 8},
       .window = {1, 2, 2, 1},
       .strides = {1, 1, 1, 1},
       .base_dilations = {1, 2, 2, 1},
       .runs_on = "jit"},
      // oneDNN 2.6 has only its reference pooling for dilated windows (pooling_v2 dilation).
      {.name = "WindowDilationStaysOnJit",
       .input = {1, 11, 11, 8},
       .window = {1, 3, 3, 1},
       .strides = {1, 1, 1, 1},
       .padding = nhwc_pad2,
       .window_dilations = {1, 2, 2, 1},
       .runs_on = "jit"},
      {.name = "WindowDilationExcludePadStaysOnJit",
       .input = {1, 11, 11, 8},
       .window = {1, 3, 3, 1},
       .strides = {1, 1, 1, 1},
       .padding = nhwc_pad2,
       .window_dilations = {1, 2, 2, 1},
       .divisor = Divisor::kCount,
       .reduce_window_items = 2,
       .items = 3,
       .runs_on = "jit"},
      {.name = "WindowOverEveryDim",
       .input = {2, 6, 6, 8},
       .window = {2, 2, 2, 2},
       .strides = {2, 2, 2, 2},
       .runs_on = "jit"},
      {.name = "WindowWhollyInPadding",
       .input = {1, 4, 4, 8},
       .window = {1, 2, 2, 1},
       .strides = {1, 2, 2, 1},
       .padding = P{{0, 0}, {0, 2}, {0, 2}, {0, 0}},
       .runs_on = "jit"},
      {.name = "Bf16AverageStaysOnJit",
       .input = {2, 8, 8, 16},
       .window = {1, 2, 2, 1},
       .strides = {1, 2, 2, 1},
       .type = "bf16",
       .runs_on = "jit"},
  };
}

void PrintTo(const PoolCase& c, std::ostream* os) { *os << c.name; }

// What LibraryKernel::Create says of the last reduce_window item of `text` (the engine's options:
// a JIT epilogue allowed), for failure messages.
std::string BindingStatus(const std::string& text) {
  StatusOr<std::unique_ptr<Module>> module = ParseStableHlo(text);
  if (!module.ok()) return module.status().ToString();
  testing_util::PlannedModule planned(*std::move(module), "main");
  StatusOr<const SchedulePlan*> plan = planned.Plan();
  if (!plan.ok()) return plan.status().ToString();
  auto fusion = planned.cache().Get<FusionPlanAnalysis>(planned.function());
  if (!fusion.ok()) return fusion.status().ToString();
  const WorkItem* item = nullptr;
  for (const WorkItem& candidate : (*plan)->items()) {
    if (candidate.kind == WorkKind::kReduceWindow) item = &candidate;
  }
  if (item == nullptr) return "no reduce_window item";
  kernels::LibraryKernelOptions options;
  options.allow_jit_epilogue = true;
  StatusOr<kernels::LibraryKernel> kernel =
      kernels::LibraryKernel::Create(*item, &(*fusion)->plan(), options);
  return kernel.ok() ? "bound: " + kernel->implementation() : kernel.status().ToString();
}

class PoolingTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolingTest, PlansAndMatchesReferenceBitForBit) {
  const PoolCase& c = GetParam();
  const std::string text = Program(c);
  SCOPED_TRACE(text);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  const std::vector<accy::Tensor> inputs = {Input(c.input, c.type)};
  ASSERT_OK_AND_ASSIGN(std::vector<accy::Tensor> want, Evaluate(*module, "main", inputs));
  EngineOptions options;
  options.num_threads = 1;
  options.reduce_threads_under_load = false;
  options.enable_profiling = true;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Engine> engine, Engine::Create(options));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> exe, engine->Compile(*module));
  ASSERT_OK_AND_ASSIGN(std::vector<accy::Tensor> got, exe->Run(inputs));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(SameBits(got[0], want[0]));

  const bool avx512 = ProcessIsa().value_or(Isa::kAvx2) == Isa::kAvx512;
  const std::string expected_runs_on =
      c.library_needs_avx512 && !avx512 ? std::string("jit") : c.runs_on;
  const ExecutableStats stats = exe->Stats();
  int items = 0;
  for (const auto& [kind, count] : stats.work_items_by_kind) items += static_cast<int>(count);
  EXPECT_EQ(items, c.items);
  ASSERT_EQ(stats.work_items_by_kind.count("reduce_window"), 1u);
  EXPECT_EQ(stats.work_items_by_kind.at("reduce_window"), c.reduce_window_items);
  // The last reduce_window step computes the result (the ones' count, when there is one, comes
  // first); its JIT epilogue pass, when it has one, runs after it as a step of the same item.
  std::vector<std::string> runs_on;
  for (const ItemProfile& profile : stats.item_profiles) {
    if (profile.kind == "reduce_window") runs_on.push_back(profile.runs_on);
  }
  ASSERT_FALSE(runs_on.empty());
  const bool jit_epilogue = expected_runs_on == "library" && !c.epilogue.empty();
  if (jit_epilogue) {
    ASSERT_GE(runs_on.size(), 2u);
    EXPECT_EQ(runs_on[runs_on.size() - 2], "library");
    EXPECT_EQ(runs_on.back(), "jit");
  } else {
    EXPECT_EQ(runs_on.back(), expected_runs_on) << BindingStatus(text);
  }
  for (size_t i = 0; i + (jit_epilogue ? 2 : 1) < runs_on.size(); ++i) {
    EXPECT_EQ(runs_on[i], "jit") << "the ones' count";
  }
}

INSTANTIATE_TEST_SUITE_P(Table, PoolingTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

// The planner puts JAX's average pool (reduce_window add, divide) in one reduce_window item,
// and the binding names why a form does not map.
TEST(PoolingBindingTest, AverageIsOneItemAndMaxIsRefusedWithItsReason) {
  PoolCase avg{"avg", {2, 9, 9, 16}, {1, 3, 3, 1}, {1, 2, 2, 1}, {{0, 0}, {1, 1}, {1, 1}, {0, 0}}};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(Program(avg)));
  testing_util::PlannedModule planned(std::move(module), "main");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  ASSERT_OK_AND_ASSIGN(auto fusion, planned.cache().Get<FusionPlanAnalysis>(planned.function()));
  ASSERT_EQ(plan->items().size(), 1u);
  const WorkItem& item = plan->items()[0];
  EXPECT_EQ(item.kind, WorkKind::kReduceWindow);
  ASSERT_EQ(item.ops.size(), 2u);
  EXPECT_EQ(item.ops[0]->kind(), OpKind::kReduceWindow);
  EXPECT_EQ(item.ops[1]->kind(), OpKind::kDivide);
  // 2 x 5 x 5 x 16 outputs x 9 window positions, plus one op per output for the divide.
  EXPECT_EQ(item.resources.estimated_element_ops, 800u * 9 + 800);
  ASSERT_EQ(fusion->plan().clusters().size(), 1u);
  EXPECT_EQ(fusion->plan().clusters()[0].kind, ClusterKind::kReduceWindowEpilogue);
  EXPECT_EQ(ClusterKindName(ClusterKind::kReduceWindowEpilogue), "reduce_window_epilogue");
  EXPECT_EQ(WorkKindName(WorkKind::kReduceWindow), "reduce_window");
  ASSERT_OK_AND_ASSIGN(kernels::LibraryKernel kernel,
                       kernels::LibraryKernel::Create(item, &fusion->plan()));
  EXPECT_THAT(kernel.implementation(), HasSubstr("(pooling_avg_include_padding)"));
  ASSERT_EQ(kernel.inputs().size(), 1u);
  EXPECT_EQ(kernel.inputs()[0], planned.function().parameter(0));
  EXPECT_EQ(kernel.outputs()[0], item.ops[1]->result(0));

  PoolCase max = avg;
  max.body = "maximum";
  max.init = "0xFF800000";
  max.divisor = Divisor::kNone;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> max_module, ParseStableHlo(Program(max)));
  testing_util::PlannedModule max_planned(std::move(max_module), "main");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* max_plan, max_planned.Plan());
  ASSERT_OK_AND_ASSIGN(auto max_fusion,
                       max_planned.cache().Get<FusionPlanAnalysis>(max_planned.function()));
  ASSERT_EQ(max_plan->items().size(), 1u);
  StatusOr<kernels::LibraryKernel> refused =
      kernels::LibraryKernel::Create(max_plan->items()[0], &max_fusion->plan());
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsUnimplemented(refused.status())) << refused.status();
  EXPECT_THAT(refused.status().message(),
              HasSubstr("does not map onto oneDNN pooling_forward: max pooling (oneDNN 2.6 drops "
                        "NaN and gives -FLT_MAX for a window of -inf)"));
}

// A reduce_window whose result is also read elsewhere keeps its item alone: the divide is an
// elementwise item of its own (fusion_plan.h rule 2), and the JIT runs the sum.
TEST(PoolingBindingTest, SumReadTwiceIsNotFused) {
  const std::string text =
      "func.func @main(%x: tensor<1x4x4x8xf32>) -> (tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>) {\n"
      "  %init = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = \"stablehlo.reduce_window\"(%x, %init) <{window_dimensions = array<i64: 1, 2, 2, "
      "1>, window_strides = array<i64: 1, 2, 2, 1>}> ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %r = stablehlo.add %a, %b : tensor<f32>\n"
      "    stablehlo.return %r : tensor<f32>\n"
      "  }) : (tensor<1x4x4x8xf32>, tensor<f32>) -> tensor<1x2x2x8xf32>\n"
      "  %d = stablehlo.constant dense<4.0> : tensor<1x2x2x8xf32>\n"
      "  %y = stablehlo.divide %s, %d : tensor<1x2x2x8xf32>\n"
      "  return %s, %y : tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>\n}\n";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseStableHlo(text));
  testing_util::PlannedModule planned(std::move(module), "main");
  ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
  ASSERT_EQ(plan->items().size(), 2u);
  EXPECT_EQ(plan->items()[0].kind, WorkKind::kReduceWindow);
  EXPECT_EQ(plan->items()[0].ops.size(), 1u);
  EXPECT_EQ(plan->items()[1].kind, WorkKind::kElementwiseSingle);
}

}  // namespace
}  // namespace accy::kernels_test
