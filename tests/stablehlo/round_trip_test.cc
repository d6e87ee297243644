// Round trip of the printer: for modules built with the builder API that cover every op and
// every constant element type, print(parse(print(m))) == print(m); and the printer tests'
// golden texts parse and print back unchanged.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "accy/stablehlo.h"
#include "accy/tensor.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace accy {
namespace {

constexpr ElementType kF32 = ElementType::kF32;
constexpr ElementType kI32 = ElementType::kI32;
constexpr ElementType kI64 = ElementType::kI64;

TensorType T(ElementType element_type, std::vector<int64_t> dims) {
  StatusOr<TensorType> type = TensorType::Create(element_type, std::move(dims));
  ACCY_CHECK(type.ok());
  return *type;
}

// Prints `module`, parses the text, prints again: both texts must be equal.
void ExpectRoundTrip(const Module& module) {
  const std::string text = PrintModule(module);
  StatusOr<std::unique_ptr<Module>> parsed = ParseStableHlo(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  EXPECT_EQ(PrintModule(**parsed), text);
}

using BodyFn = std::function<Status(FunctionBuilder&)>;

StatusOr<std::unique_ptr<Module>> BuildModule(std::vector<TensorType> params,
                                              std::vector<TensorType> results,
                                              const BodyFn& body) {
  Builder builder("test");
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder fb,
                        builder.BeginFunction("main", std::move(params), std::move(results)));
  ACCY_RETURN_IF_ERROR(body(fb));
  ACCY_RETURN_IF_ERROR(fb.Finish());
  return builder.Finish();
}

TEST(RoundTripTest, PrinterGoldensParseAndPrintUnchanged) {
  const std::string goldens[] = {
      R"mlir(module @elementwise {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    %1 = stablehlo.multiply %0, %arg1 : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
)mlir",
      R"mlir(module @reductions {
  func.func public @main(%arg0: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<20xf32>, tensor<3xf32>, tensor<3xi1>) {
    %0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %0) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
     reducer(%arg1: tensor<f32>, %arg2: tensor<f32>)  {
      %7 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %7 : tensor<f32>
    }
    %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.subtract %arg0, %2 : tensor<4x8xf32>
    %4 = stablehlo.constant dense<"0x000000000000803F0000004000004040000080400000A0400000C0400000E040000000410000104100002041000030410000404100005041000060410000704100008041000088410000904100009841"> : tensor<20xf32>
    %5 = stablehlo.constant dense<[1.000000e+00, -2.500000e+00, 3.1415927]> : tensor<3xf32>
    %6 = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>
    return %3, %4, %5, %6 : tensor<4x8xf32>, tensor<20xf32>, tensor<3xf32>, tensor<3xi1>
  }
  func.func private @helper(%arg0: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.negate %arg0 : tensor<f32>
    return %0 : tensor<f32>
  }
}
)mlir",
      R"mlir(module @loop {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.constant dense<0> : tensor<i64>
    %1:2 = stablehlo.while(%iterArg = %0, %iterArg_0 = %arg0) : tensor<i64>, tensor<4xf32>
     cond {
      %6 = stablehlo.constant dense<10> : tensor<i64>
      %7 = stablehlo.compare  LT, %iterArg, %6,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %7 : tensor<i1>
    } do {
      %6 = stablehlo.constant dense<1> : tensor<i64>
      %7 = stablehlo.add %iterArg, %6 : tensor<i64>
      %8 = stablehlo.add %iterArg_0, %iterArg_0 : tensor<4xf32>
      stablehlo.return %7, %8 : tensor<i64>, tensor<4xf32>
    }
    %2 = stablehlo.compare  GT, %1#1, %arg0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %3 = stablehlo.select %2, %1#1, %arg0 : tensor<4xi1>, tensor<4xf32>
    %4 = stablehlo.custom_call @mylib.axpy(%3, %arg0) {accy.operand_effects = ["read", "read_write"], accy.version = 2 : i64, output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %5 = stablehlo.custom_call @accy.cumsum(%4) {accy.dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    return %5 : tensor<4xf32>
  }
}
)mlir"};
  for (const std::string& golden : goldens) {
    StatusOr<std::unique_ptr<Module>> parsed = ParseStableHlo(golden);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(PrintModule(**parsed), golden);
  }
}

TEST(RoundTripTest, EveryElementwiseOp) {
  const TensorType f = T(kF32, {2, 3});
  const TensorType i = T(kI32, {2, 3});
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> module,
      BuildModule({f, f, i, i}, {f, i}, [&](FunctionBuilder& fb) -> Status {
        Value* x = fb.Parameter(0);
        Value* y = fb.Parameter(1);
        Value* a = fb.Parameter(2);
        Value* b = fb.Parameter(3);
        using Unary = StatusOr<Value*> (FunctionBuilder::*)(Value*);
        for (Unary op : {&FunctionBuilder::Abs, &FunctionBuilder::Negate, &FunctionBuilder::Sign,
                         &FunctionBuilder::Exponential, &FunctionBuilder::ExponentialMinusOne,
                         &FunctionBuilder::Log, &FunctionBuilder::LogPlusOne,
                         &FunctionBuilder::Logistic, &FunctionBuilder::Tanh, &FunctionBuilder::Sqrt,
                         &FunctionBuilder::Rsqrt, &FunctionBuilder::Cbrt, &FunctionBuilder::Sine,
                         &FunctionBuilder::Cosine, &FunctionBuilder::Floor, &FunctionBuilder::Ceil,
                         &FunctionBuilder::RoundNearestEven, &FunctionBuilder::RoundNearestAfz,
                         &FunctionBuilder::Tan, &FunctionBuilder::Asin, &FunctionBuilder::Acos,
                         &FunctionBuilder::Atan, &FunctionBuilder::Sinh, &FunctionBuilder::Cosh,
                         &FunctionBuilder::Asinh, &FunctionBuilder::Acosh, &FunctionBuilder::Atanh,
                         &FunctionBuilder::Erf, &FunctionBuilder::Erfc, &FunctionBuilder::ErfInv,
                         &FunctionBuilder::Lgamma, &FunctionBuilder::Digamma,
                         &FunctionBuilder::BesselI1e}) {
          ACCY_ASSIGN_OR_RETURN(x, (fb.*op)(x));
        }
        ACCY_ASSIGN_OR_RETURN(x, fb.ReducePrecision(x, 5, 10));
        ACCY_ASSIGN_OR_RETURN(x, fb.NextAfter(x, y));
        ACCY_ASSIGN_OR_RETURN(x, fb.Zeta(x, y));
        ACCY_ASSIGN_OR_RETURN(x, fb.Polygamma(y, x));
        for (Unary op : {&FunctionBuilder::IsInf, &FunctionBuilder::IsPosInf,
                         &FunctionBuilder::IsNegInf}) {
          ACCY_ASSIGN_OR_RETURN(Value * test, (fb.*op)(x));
          ACCY_ASSIGN_OR_RETURN(x, fb.Select(test, y, x));
        }
        for (Unary op : {&FunctionBuilder::Not, &FunctionBuilder::Popcnt,
                         &FunctionBuilder::CountLeadingZeros}) {
          ACCY_ASSIGN_OR_RETURN(a, (fb.*op)(a));
        }
        using Binary = StatusOr<Value*> (FunctionBuilder::*)(Value*, Value*);
        for (Binary op : {&FunctionBuilder::Add, &FunctionBuilder::Subtract,
                          &FunctionBuilder::Multiply, &FunctionBuilder::Divide,
                          &FunctionBuilder::Remainder, &FunctionBuilder::Maximum,
                          &FunctionBuilder::Minimum, &FunctionBuilder::Power,
                          &FunctionBuilder::Atan2}) {
          ACCY_ASSIGN_OR_RETURN(x, (fb.*op)(x, y));
        }
        for (Binary op : {&FunctionBuilder::And, &FunctionBuilder::Or, &FunctionBuilder::Xor,
                          &FunctionBuilder::ShiftLeft, &FunctionBuilder::ShiftRightLogical,
                          &FunctionBuilder::ShiftRightArithmetic}) {
          ACCY_ASSIGN_OR_RETURN(a, (fb.*op)(a, b));
        }
        ACCY_ASSIGN_OR_RETURN(Value * finite, fb.IsFinite(x));
        ACCY_ASSIGN_OR_RETURN(Value * unsigned_less, fb.Compare(a, b, "LT", "SIGNED"));
        ACCY_ASSIGN_OR_RETURN(Value * both, fb.And(finite, unsigned_less));
        ACCY_ASSIGN_OR_RETURN(x, fb.Select(both, x, y));
        ACCY_ASSIGN_OR_RETURN(Value * as_int, fb.Convert(x, kI32));
        ACCY_ASSIGN_OR_RETURN(Value * bits, fb.BitcastConvert(x, i));
        ACCY_ASSIGN_OR_RETURN(a, fb.Add(a, as_int));
        ACCY_ASSIGN_OR_RETURN(a, fb.Clamp(b, a, bits));
        return fb.Return({x, a});
      }));
  ExpectRoundTrip(*module);
}

TEST(RoundTripTest, ShapeOpsGatherScatterAndDots) {
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> module,
      BuildModule(
          {T(kF32, {2, 3}), T(kI64, {}), T(kF32, {4, 2}), T(kI32, {3, 1}), T(kF32, {8}),
           T(kF32, {3}), T(kF32, {2, 3, 4}), T(kF32, {2, 4, 5})},
          {T(kF32, {2, 3}), T(kF32, {3, 2}), T(kF32, {8}), T(kF32, {2, 3, 5}), T(kF32, {2}),
           T(kF32, {3, 2})},
          [&](FunctionBuilder& fb) -> Status {
            Value* x = fb.Parameter(0);
            Value* index = fb.Parameter(1);
            ACCY_ASSIGN_OR_RETURN(Value * transposed, fb.Transpose(x, {1, 0}));
            ACCY_ASSIGN_OR_RETURN(Value * reversed, fb.Reverse(x, {1}));
            ACCY_ASSIGN_OR_RETURN(Value * joined, fb.Concatenate({x, reversed}, 0));
            ACCY_ASSIGN_OR_RETURN(Value * iota, fb.Iota(T(kI32, {4, 3}), 1));
            ACCY_ASSIGN_OR_RETURN(Value * as_float, fb.Convert(iota, kF32));
            ACCY_ASSIGN_OR_RETURN(Value * sum, fb.Add(joined, as_float));
            ACCY_ASSIGN_OR_RETURN(Value * part, fb.Slice(sum, {1, 0}, {3, 3}, {1, 2}));
            ACCY_ASSIGN_OR_RETURN(Value * zero, fb.ConstantScalar(kF32, 0.0));
            ACCY_ASSIGN_OR_RETURN(Value * padded, fb.Pad(part, zero, {0, 1}, {0, 0}, {0, 0}));
            ACCY_ASSIGN_OR_RETURN(Value * flat, fb.Reshape(padded, T(kF32, {6})));
            ACCY_ASSIGN_OR_RETURN(Value * back, fb.Reshape(flat, T(kF32, {2, 3})));
            ACCY_ASSIGN_OR_RETURN(Value * window, fb.DynamicSlice(back, {index, index}, {1, 2}));
            ACCY_ASSIGN_OR_RETURN(Value * updated, fb.DynamicUpdateSlice(x, window, {index, index}));
            ACCY_ASSIGN_OR_RETURN(Value * scalar_slice, fb.DynamicSlice(zero, {}, {}));
            ACCY_ASSIGN_OR_RETURN(Value * wide, fb.BroadcastInDim(scalar_slice, T(kF32, {2}), {}));
            GatherDimensionNumbers gather;
            gather.offset_dims = {1};
            gather.collapsed_slice_dims = {0};
            gather.start_index_map = {0};
            gather.index_vector_dim = 1;
            ACCY_ASSIGN_OR_RETURN(Value * rows,
                                  fb.Gather(fb.Parameter(2), fb.Parameter(3), gather, {1, 2}, true));
            ScatterDimensionNumbers scatter;
            scatter.inserted_window_dims = {0};
            scatter.scatter_dims_to_operand_dims = {0};
            scatter.index_vector_dim = 1;
            ACCY_ASSIGN_OR_RETURN(Value * scattered,
                                  fb.Scatter(fb.Parameter(4), fb.Parameter(3), fb.Parameter(5),
                                             scatter, "add", false, true));
            ACCY_ASSIGN_OR_RETURN(Value * batched,
                                  fb.DotGeneral(fb.Parameter(6), fb.Parameter(7),
                                                T(kF32, {2, 3, 5}), {2}, {1}, {0}, {0}));
            batched->defining_op()->SetAttribute("precision_config",
                                                 std::vector<std::string>{"DEFAULT", "HIGHEST"});
            return fb.Return({updated, transposed, scattered, batched, wide, rows});
          }));
  ExpectRoundTrip(*module);
}

TEST(RoundTripTest, VariadicReduceAndNestedWhile) {
  const TensorType f = T(kF32, {4, 6});
  const TensorType i = T(kI32, {4, 6});
  const TensorType counter = T(kI64, {});
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> module,
      BuildModule(
          {f, i, T(kF32, {}), T(kI32, {}), counter},
          {T(kF32, {6}), T(kI32, {6}), counter}, [&](FunctionBuilder& fb) -> Status {
            ACCY_ASSIGN_OR_RETURN(
                std::vector<Value*> results,
                fb.Reduce({fb.Parameter(0), fb.Parameter(1)}, {fb.Parameter(2), fb.Parameter(3)},
                          {0}, [](FunctionBuilder& body, std::span<Value* const> args) -> Status {
                            ACCY_ASSIGN_OR_RETURN(Value * max, body.Maximum(args[0], args[2]));
                            ACCY_ASSIGN_OR_RETURN(Value * min, body.Minimum(args[1], args[3]));
                            return body.Return({max, min});
                          }));
            auto cond = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
              ACCY_ASSIGN_OR_RETURN(Value * less, b.Compare(args[0], args[0], "LT"));
              return b.Return({less});
            };
            auto inner_body = [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
              return b.Return({args[0]});
            };
            auto outer_body = [&](FunctionBuilder& b, std::span<Value* const> args) -> Status {
              ACCY_ASSIGN_OR_RETURN(std::vector<Value*> inner, b.While({args[0]}, cond, inner_body));
              return b.Return({inner[0]});
            };
            ACCY_ASSIGN_OR_RETURN(std::vector<Value*> outer,
                                  fb.While({fb.Parameter(4)}, cond, outer_body));
            return fb.Return({results[0], results[1], outer[0]});
          }));
  ExpectRoundTrip(*module);
}

TEST(RoundTripTest, KernelCallsWithSeveralResultsAndQuotedNames) {
  Builder builder;
  const TensorType t = T(kF32, {4});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("main-1", {t, t}, {t, t}));
  KernelCallSpec spec;
  spec.target = "my-kernel";
  spec.version = 3;
  spec.operand_effects = {OperandEffect::kReadWrite, OperandEffect::kWrite};
  spec.result_aliases = {std::nullopt, 0};
  ASSERT_OK_AND_ASSIGN(Operation * call,
                       fb.KernelCall({fb.Parameter(0), fb.Parameter(1)}, {t, t}, spec));
  ASSERT_OK(fb.Return({call->result(0), call->result(1)}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  ExpectRoundTrip(*module);
}

// Kernel attributes (axis, epsilon, window, layout, ...) print as accy.<name> and parse back
// with their values and kinds.
TEST(RoundTripTest, KernelCallAttributesPrintAsAccyNamesAndParseBack) {
  Builder builder;
  const TensorType t = T(kF32, {4, 3});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("main", {t}, {t}));
  KernelCallSpec spec;
  spec.target = "accy.nn.softmax";
  spec.attributes = {{"axis", int64_t{0}},
                     {"epsilon", 1e-5},
                     {"exact", true},
                     {"layout", std::string("NHWC")},
                     {"window", std::vector<int64_t>{2, 3}},
                     {"names", std::vector<std::string>{"a", "b"}}};
  ASSERT_OK_AND_ASSIGN(Operation * call, fb.KernelCall({fb.Parameter(0)}, {t}, spec));
  ASSERT_OK(fb.Return({call->result(0)}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  ExpectRoundTrip(*module);
  const std::string text = PrintModule(*module);
  EXPECT_NE(text.find("accy.axis = 0 : i64"), std::string::npos) << text;
  EXPECT_NE(text.find("accy.window = array<i64: 2, 3>"), std::string::npos) << text;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> parsed, ParseStableHlo(text));
  const Operation& op = *parsed->functions()[0]->entry_block()->operations()[0];
  EXPECT_EQ(op.GetInt("axis"), 0);
  EXPECT_EQ(op.GetString("layout"), "NHWC");
  EXPECT_EQ(op.GetInts("window"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(op.GetStrings("names"), (std::vector<std::string>{"a", "b"}));
}

TEST(RoundTripTest, KernelCallAttributeErrorsNameTheAttribute) {
  // An attribute that is neither custom_call's own nor accy.<name> would be lost: an error.
  StatusOr<std::unique_ptr<Module>> unknown = ParseStableHlo(R"(
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = stablehlo.custom_call @accy.nn.softmax(%x) {accy.version = 1 : i64, axis = 0 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(unknown.status().message())
                .find("attribute 'axis' is neither a custom_call attribute nor a kernel "
                      "attribute (write those as accy.axis)"),
            std::string::npos)
      << unknown.status();
  StatusOr<std::unique_ptr<Module>> wrong_kind = ParseStableHlo(R"(
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = stablehlo.custom_call @accy.nn.softmax(%x) {accy.version = 1 : i64, accy.axis = @f} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
})");
  ASSERT_FALSE(wrong_kind.ok());
  EXPECT_NE(std::string(wrong_kind.status().message()).find("attribute accy.axis must be"),
            std::string::npos)
      << wrong_kind.status();
  // The builder refuses a kernel attribute named like the kernel_call's own.
  Builder builder;
  const TensorType t = T(kF32, {4});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("main", {t}, {t}));
  KernelCallSpec spec;
  spec.target = "k";
  spec.attributes = {{"version", int64_t{2}}};
  StatusOr<Operation*> call = fb.KernelCall({fb.Parameter(0)}, {t}, spec);
  ASSERT_FALSE(call.ok());
  EXPECT_NE(std::string(call.status().message()).find("kernel attribute 'version' is one of the "
                                                      "kernel_call's own attributes"),
            std::string::npos)
      << call.status();
}

template <typename E>
void AddConstant(FunctionBuilder& fb, std::vector<Value*>* values, ElementType type,
                 std::vector<int64_t> dims, const std::vector<E>& elements) {
  StatusOr<Tensor> tensor = Tensor::FromVector(T(type, std::move(dims)), elements);
  ACCY_CHECK(tensor.ok());
  StatusOr<Value*> value = fb.Constant(*tensor);
  ACCY_CHECK(value.ok());
  values->push_back(*value);
}

TEST(RoundTripTest, ConstantsOfEveryElementType) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> ramp(20);
  for (int k = 0; k < 20; ++k) ramp[k] = 0.1f * static_cast<float>(k) - 1.0f;
  std::vector<bool> bits(18, false);
  bits[3] = true;
  std::vector<std::function<void(FunctionBuilder&, std::vector<Value*>*)>> makers = {
      [&](auto& fb, auto* v) {
        AddConstant<float>(fb, v, kF32, {5},
                           {std::numeric_limits<float>::quiet_NaN(), inf, -inf, -0.0f, 1e-40f});
      },
      [&](auto& fb, auto* v) { AddConstant<float>(fb, v, kF32, {20}, ramp); },
      [&](auto& fb, auto* v) { AddConstant<float>(fb, v, kF32, {2, 0}, {}); },
      [&](auto& fb, auto* v) { AddConstant<float>(fb, v, kF32, {2, 3}, std::vector<float>(6, 1.5f)); },
      [&](auto& fb, auto* v) {
        AddConstant<double>(fb, v, ElementType::kF64, {3},
                            {0.1, 1.0 / 3.0, std::numeric_limits<double>::quiet_NaN()});
      },
      [&](auto& fb, auto* v) {
        AddConstant<uint16_t>(fb, v, ElementType::kF16, {4}, {0x3C00, 0x2E66, 0x8000, 0x7C00});
      },
      [&](auto& fb, auto* v) {
        AddConstant<uint16_t>(fb, v, ElementType::kBF16, {3}, {0xC020, 0x7FC0, 0x0001});
      },
      [&](auto& fb, auto* v) { AddConstant<bool>(fb, v, ElementType::kI1, {18}, bits); },
      [&](auto& fb, auto* v) { AddConstant<int8_t>(fb, v, ElementType::kI8, {3}, {-128, 127, -1}); },
      [&](auto& fb, auto* v) { AddConstant<int16_t>(fb, v, ElementType::kI16, {2}, {-32768, 7}); },
      [&](auto& fb, auto* v) {
        AddConstant<int64_t>(fb, v, kI64, {2}, {std::numeric_limits<int64_t>::min(), 5});
      },
      [&](auto& fb, auto* v) {
        AddConstant<uint8_t>(fb, v, ElementType::kU8, {2, 2}, {0, 255, 128, 7});
      },
      [&](auto& fb, auto* v) { AddConstant<uint16_t>(fb, v, ElementType::kU16, {2}, {65535, 1}); },
      [&](auto& fb, auto* v) { AddConstant<uint32_t>(fb, v, ElementType::kU32, {2}, {4294967295u, 0}); },
      [&](auto& fb, auto* v) {
        AddConstant<uint64_t>(fb, v, ElementType::kU64, {2},
                              {std::numeric_limits<uint64_t>::max(), 3});
      },
  };
  // One function per constant keeps the signatures simple.
  for (size_t k = 0; k < makers.size(); ++k) {
    Builder one("constants");
    std::vector<Value*> values;
    std::vector<TensorType> types;
    {
      // Find the type by building into a throwaway function first.
      Builder probe;
      auto pfb = probe.BeginFunction("probe", {}, {});
      ACCY_CHECK(pfb.ok());
      makers[k](*pfb, &values);
      types.push_back(values.back()->type());
      values.clear();
    }
    ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, one.BeginFunction("main", {}, types));
    makers[k](fb, &values);
    ASSERT_OK(fb.Return(values));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, one.Finish());
    ExpectRoundTrip(*module);
  }
}

}  // namespace
}  // namespace accy
