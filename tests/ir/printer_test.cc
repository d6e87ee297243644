// Tests for the StableHLO text printer (PrintModule in accy/ir.h): whole-module goldens for three
// programs, then targeted expectations per op syntax and per constant element type, and
// round-trip checks of float literals.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/ir.h"
#include "accy/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/ir/printer_attributes.h"
#include "tests/test_util.h"

namespace accy {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TensorType T(ElementType element_type, std::vector<int64_t> dims) {
  StatusOr<TensorType> type = TensorType::Create(element_type, std::move(dims));
  ACCY_CHECK(type.ok());
  return *type;
}

constexpr ElementType kF32 = ElementType::kF32;

template <typename E>
StatusOr<Value*> ConstantOf(FunctionBuilder& fb, const TensorType& type,
                            const std::vector<E>& values) {
  ACCY_ASSIGN_OR_RETURN(Tensor tensor, Tensor::FromVector(type, values));
  return fb.Constant(tensor);
}

using BodyFn = std::function<Status(FunctionBuilder&)>;

// Builds module @test with one public function @main(params) -> results whose body `body` writes
// (ending with Return), and prints it.
StatusOr<std::string> PrintFunction(std::vector<TensorType> params,
                                    std::vector<TensorType> results, const BodyFn& body) {
  Builder builder("test");
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder fb,
                        builder.BeginFunction("main", std::move(params), std::move(results)));
  ACCY_RETURN_IF_ERROR(body(fb));
  ACCY_RETURN_IF_ERROR(fb.Finish());
  ACCY_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, builder.Finish());
  return PrintModule(*module);
}

// ---- Whole-module goldens ----

TEST(PrintModuleTest, ElementwiseAddMultiplyGolden) {
  Builder builder("elementwise");
  const TensorType t = T(kF32, {4});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("main", {t, t}, {t}));
  ASSERT_OK_AND_ASSIGN(Value * sum, fb.Add(fb.Parameter(0), fb.Parameter(1)));
  ASSERT_OK_AND_ASSIGN(Value * product, fb.Multiply(sum, fb.Parameter(1)));
  ASSERT_OK(fb.Return({product}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());

  EXPECT_EQ(PrintModule(*module), R"mlir(module @elementwise {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    %1 = stablehlo.multiply %0, %arg1 : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
)mlir");
}

TEST(PrintModuleTest, ReduceBroadcastAndConstantsGolden) {
  Builder builder("reductions");
  const TensorType matrix = T(kF32, {4, 8});
  const TensorType large = T(kF32, {20});
  const TensorType small = T(kF32, {3});
  const TensorType mask = T(ElementType::kI1, {3});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb,
                       builder.BeginFunction("main", {matrix}, {matrix, large, small, mask}));
  ASSERT_OK_AND_ASSIGN(Value * zero, fb.ConstantScalar(kF32, 0.0));
  ASSERT_OK_AND_ASSIGN(Value * row_sums,
                       fb.Reduce(fb.Parameter(0), zero, T(kF32, {4}), "sum", {1}));
  ASSERT_OK_AND_ASSIGN(Value * spread, fb.BroadcastInDim(row_sums, matrix, {0}));
  ASSERT_OK_AND_ASSIGN(Value * centered, fb.Subtract(fb.Parameter(0), spread));
  std::vector<float> ramp(20);
  for (int i = 0; i < 20; ++i) ramp[i] = static_cast<float>(i);
  ASSERT_OK_AND_ASSIGN(Value * ramp_constant, ConstantOf(fb, large, ramp));
  ASSERT_OK_AND_ASSIGN(Value * small_constant,
                       ConstantOf(fb, small, std::vector<float>{1.0f, -2.5f, 3.14159274f}));
  ASSERT_OK_AND_ASSIGN(Value * mask_constant,
                       ConstantOf(fb, mask, std::vector<bool>{true, false, true}));
  ASSERT_OK(fb.Return({centered, ramp_constant, small_constant, mask_constant}));

  const TensorType scalar = T(kF32, {});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder helper,
                       builder.BeginFunction("helper", {scalar}, {scalar}));
  helper.function()->set_public(false);
  ASSERT_OK_AND_ASSIGN(Value * negated, helper.Negate(helper.Parameter(0)));
  ASSERT_OK(helper.Return({negated}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());

  // The reducer's values are numbered after the function's (%7), as MLIR numbers nested regions;
  // 20 elements exceed kMaxInlineConstantElements, so the ramp prints as little-endian hex.
  EXPECT_EQ(PrintModule(*module), R"mlir(module @reductions {
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
)mlir");
}

TEST(PrintModuleTest, WhileSelectKernelCallAndCumsumGolden) {
  Builder builder("loop");
  const TensorType vec = T(kF32, {4});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("main", {vec}, {vec}));
  ASSERT_OK_AND_ASSIGN(Value * start, fb.ConstantScalar(ElementType::kI64, 0));
  ASSERT_OK_AND_ASSIGN(
      std::vector<Value*> loop,
      fb.While(
          {start, fb.Parameter(0)},
          [](FunctionBuilder& cond, std::span<Value* const> args) -> Status {
            ACCY_ASSIGN_OR_RETURN(Value * limit, cond.ConstantScalar(ElementType::kI64, 10));
            ACCY_ASSIGN_OR_RETURN(Value * more, cond.Compare(args[0], limit, "LT", "SIGNED"));
            return cond.Return({more});
          },
          [](FunctionBuilder& body, std::span<Value* const> args) -> Status {
            ACCY_ASSIGN_OR_RETURN(Value * one, body.ConstantScalar(ElementType::kI64, 1));
            ACCY_ASSIGN_OR_RETURN(Value * next, body.Add(args[0], one));
            ACCY_ASSIGN_OR_RETURN(Value * doubled, body.Add(args[1], args[1]));
            return body.Return({next, doubled});
          }));
  ASSERT_OK_AND_ASSIGN(Value * greater, fb.Compare(loop[1], fb.Parameter(0), "GT"));
  ASSERT_OK_AND_ASSIGN(Value * larger, fb.Select(greater, loop[1], fb.Parameter(0)));
  KernelCallSpec spec;
  spec.target = "mylib.axpy";
  spec.version = 2;
  spec.operand_effects = {OperandEffect::kRead, OperandEffect::kReadWrite};
  spec.result_aliases = {1};
  ASSERT_OK_AND_ASSIGN(Operation * call, fb.KernelCall({larger, fb.Parameter(0)}, {vec}, spec));
  ASSERT_OK_AND_ASSIGN(Value * prefix, fb.Cumsum(call->result(0), 0));
  ASSERT_OK(fb.Return({prefix}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());

  // cond and do are sibling regions: both number from %6 and share the %iterArg names.
  EXPECT_EQ(PrintModule(*module), R"mlir(module @loop {
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
)mlir");
}

// ---- Targeted op syntax ----

TEST(PrintModuleTest, DotGeneralPrintsBatchingDimsOnlyWhenPresent) {
  ASSERT_OK_AND_ASSIGN(
      std::string text,
      PrintFunction({T(kF32, {2, 3, 4}), T(kF32, {2, 4, 5}), T(kF32, {3, 4}), T(kF32, {4, 5})},
                    {T(kF32, {2, 3, 5}), T(kF32, {3, 5})}, [](FunctionBuilder& fb) -> Status {
                      ACCY_ASSIGN_OR_RETURN(Value * batched,
                                            fb.DotGeneral(fb.Parameter(0), fb.Parameter(1),
                                                          T(kF32, {2, 3, 5}), {2}, {1}, {0}, {0}));
                      ACCY_ASSIGN_OR_RETURN(Value * matmul,
                                            fb.DotGeneral(fb.Parameter(2), fb.Parameter(3),
                                                          T(kF32, {3, 5}), {1}, {0}, {}, {}));
                      return fb.Return({batched, matmul});
                    }));
  EXPECT_THAT(text, HasSubstr("%0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x "
                              "[0], contracting_dims = [2] x [1] : (tensor<2x3x4xf32>, "
                              "tensor<2x4x5xf32>) -> tensor<2x3x5xf32>\n"));
  EXPECT_THAT(text, HasSubstr("%1 = stablehlo.dot_general %arg2, %arg3, contracting_dims = [1] x "
                              "[0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>\n"));
}

TEST(PrintModuleTest, DotGeneralPrintsPrecisionConfigWhenSet) {
  Builder builder("precision");
  const TensorType t = T(kF32, {2, 2});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("main", {t, t}, {t}));
  ASSERT_OK_AND_ASSIGN(Value * product,
                       fb.DotGeneral(fb.Parameter(0), fb.Parameter(1), t, {1}, {0}, {}, {}));
  product->defining_op()->SetAttribute("precision_config",
                                       std::vector<std::string>{"DEFAULT", "HIGHEST"});
  ASSERT_OK(fb.Return({product}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  EXPECT_THAT(PrintModule(*module),
              HasSubstr("contracting_dims = [1] x [0], precision = [DEFAULT, HIGHEST] : "));
}

TEST(PrintModuleTest, SliceOmitsUnitStrides) {
  ASSERT_OK_AND_ASSIGN(std::string text,
                       PrintFunction({T(kF32, {3, 8})}, {T(kF32, {2, 4})},
                                     [](FunctionBuilder& fb) -> Status {
                                       ACCY_ASSIGN_OR_RETURN(
                                           Value * part,
                                           fb.Slice(fb.Parameter(0), {1, 0}, {3, 8}, {1, 2}));
                                       return fb.Return({part});
                                     }));
  EXPECT_THAT(text, HasSubstr("%0 = stablehlo.slice %arg0 [1:3, 0:8:2] : (tensor<3x8xf32>) -> "
                              "tensor<2x4xf32>\n"));
}

TEST(PrintModuleTest, PadPrintsLowHighAndInterior) {
  ASSERT_OK_AND_ASSIGN(std::string text,
                       PrintFunction({T(kF32, {2, 3}), T(kF32, {})}, {T(kF32, {5, 9})},
                                     [](FunctionBuilder& fb) -> Status {
                                       ACCY_ASSIGN_OR_RETURN(
                                           Value * padded, fb.Pad(fb.Parameter(0), fb.Parameter(1),
                                                                  {0, 1}, {2, 1}, {1, 2}));
                                       return fb.Return({padded});
                                     }));
  EXPECT_THAT(text, HasSubstr("%0 = stablehlo.pad %arg0, %arg1, low = [0, 1], high = [2, 1], "
                              "interior = [1, 2] : (tensor<2x3xf32>, tensor<f32>) -> "
                              "tensor<5x9xf32>\n"));
}

TEST(PrintModuleTest, GatherUsesGenericFormWithProperties) {
  ASSERT_OK_AND_ASSIGN(
      std::string text,
      PrintFunction({T(kF32, {4, 2}), T(ElementType::kI32, {3, 1})}, {T(kF32, {3, 2})},
                    [](FunctionBuilder& fb) -> Status {
                      GatherDimensionNumbers dn;
                      dn.offset_dims = {1};
                      dn.collapsed_slice_dims = {0};
                      dn.start_index_map = {0};
                      dn.index_vector_dim = 1;
                      ACCY_ASSIGN_OR_RETURN(
                          Value * rows, fb.Gather(fb.Parameter(0), fb.Parameter(1), dn, {1, 2}));
                      return fb.Return({rows});
                    }));
  // Empty dimension lists are left out, as stablehlo prints #stablehlo.gather.
  EXPECT_THAT(text, HasSubstr(
                        "%0 = \"stablehlo.gather\"(%arg0, %arg1) <{dimension_numbers = "
                        "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
                        "start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, "
                        "slice_sizes = array<i64: 1, 2>}> : (tensor<4x2xf32>, tensor<3x1xi32>) -> "
                        "tensor<3x2xf32>\n"));
}

TEST(PrintModuleTest, ScatterPrintsUpdateComputationRegion) {
  ASSERT_OK_AND_ASSIGN(
      std::string text,
      PrintFunction({T(kF32, {8}), T(ElementType::kI32, {3, 1}), T(kF32, {3})}, {T(kF32, {8})},
                    [](FunctionBuilder& fb) -> Status {
                      ScatterDimensionNumbers dn;
                      dn.inserted_window_dims = {0};
                      dn.scatter_dims_to_operand_dims = {0};
                      dn.index_vector_dim = 1;
                      ACCY_ASSIGN_OR_RETURN(Value * sums,
                                            fb.Scatter(fb.Parameter(0), fb.Parameter(1),
                                                       fb.Parameter(2), dn, "add",
                                                       /*indices_are_sorted=*/false,
                                                       /*unique_indices=*/true));
                      return fb.Return({sums});
                    }));
  EXPECT_THAT(text, HasSubstr(R"mlir(    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = true}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %1 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }) : (tensor<8xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<8xf32>
)mlir"));
}

TEST(PrintModuleTest, ShapeAndConversionOpsUseStablehloSyntax) {
  const TensorType t23 = T(kF32, {2, 3});
  ASSERT_OK_AND_ASSIGN(
      std::string text,
      PrintFunction(
          {t23, T(ElementType::kI64, {})}, {t23}, [&](FunctionBuilder& fb) -> Status {
            Value* x = fb.Parameter(0);
            Value* index = fb.Parameter(1);
            ACCY_ASSIGN_OR_RETURN(Value * transposed, fb.Transpose(x, {1, 0}));
            ACCY_ASSIGN_OR_RETURN(Value * reversed, fb.Reverse(x, {1}));
            ACCY_ASSIGN_OR_RETURN(Value * joined, fb.Concatenate({x, reversed}, 0));
            ACCY_ASSIGN_OR_RETURN(Value * iota, fb.Iota(T(ElementType::kI32, {2, 3}), 1));
            ACCY_ASSIGN_OR_RETURN(Value * as_float, fb.Convert(iota, kF32));
            ACCY_ASSIGN_OR_RETURN(Value * finite, fb.IsFinite(x));
            ACCY_ASSIGN_OR_RETURN(Value * bits, fb.BitcastConvert(x, T(ElementType::kI32, {2, 3})));
            ACCY_ASSIGN_OR_RETURN(Value * flat, fb.Reshape(x, T(kF32, {6})));
            ACCY_ASSIGN_OR_RETURN(Value * window, fb.DynamicSlice(x, {index, index}, {1, 2}));
            ACCY_ASSIGN_OR_RETURN(Value * updated,
                                  fb.DynamicUpdateSlice(x, window, {index, index}));
            ACCY_ASSIGN_OR_RETURN(Value * low, fb.ConstantScalar(kF32, -1.0));
            ACCY_ASSIGN_OR_RETURN(Value * high, fb.ConstantScalar(kF32, 1.0));
            ACCY_ASSIGN_OR_RETURN(Value * clamped, fb.Clamp(low, updated, high));
            (void)transposed;
            (void)joined;
            (void)as_float;
            (void)finite;
            (void)bits;
            (void)flat;
            return fb.Return({clamped});
          }));
  EXPECT_THAT(text, HasSubstr("%0 = stablehlo.transpose %arg0, dims = [1, 0] : "
                              "(tensor<2x3xf32>) -> tensor<3x2xf32>\n"));
  EXPECT_THAT(text, HasSubstr("%1 = stablehlo.reverse %arg0, dims = [1] : tensor<2x3xf32>\n"));
  EXPECT_THAT(text, HasSubstr("%2 = stablehlo.concatenate %arg0, %1, dim = 0 : "
                              "(tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>\n"));
  EXPECT_THAT(text, HasSubstr("%3 = stablehlo.iota dim = 1 : tensor<2x3xi32>\n"));
  EXPECT_THAT(text, HasSubstr("%4 = stablehlo.convert %3 : (tensor<2x3xi32>) -> "
                              "tensor<2x3xf32>\n"));
  EXPECT_THAT(text, HasSubstr("%5 = stablehlo.is_finite %arg0 : (tensor<2x3xf32>) -> "
                              "tensor<2x3xi1>\n"));
  EXPECT_THAT(text, HasSubstr("%6 = stablehlo.bitcast_convert %arg0 : (tensor<2x3xf32>) -> "
                              "tensor<2x3xi32>\n"));
  EXPECT_THAT(text, HasSubstr("%7 = stablehlo.reshape %arg0 : (tensor<2x3xf32>) -> "
                              "tensor<6xf32>\n"));
  EXPECT_THAT(text, HasSubstr("%8 = stablehlo.dynamic_slice %arg0, %arg1, %arg1, sizes = [1, 2] : "
                              "(tensor<2x3xf32>, tensor<i64>, tensor<i64>) -> tensor<1x2xf32>\n"));
  EXPECT_THAT(text, HasSubstr("%9 = stablehlo.dynamic_update_slice %arg0, %8, %arg1, %arg1 : "
                              "(tensor<2x3xf32>, tensor<1x2xf32>, tensor<i64>, tensor<i64>) -> "
                              "tensor<2x3xf32>\n"));
  EXPECT_THAT(text, HasSubstr("%12 = stablehlo.clamp %10, %9, %11 : (tensor<f32>, "
                              "tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>\n"));
}

TEST(PrintModuleTest, MultiInputReducePairsReducerArguments) {
  const TensorType f = T(kF32, {4, 6});
  const TensorType i = T(ElementType::kI32, {4, 6});
  ASSERT_OK_AND_ASSIGN(
      std::string text,
      PrintFunction(
          {f, i, T(kF32, {}), T(ElementType::kI32, {})},
          {T(kF32, {6}), T(ElementType::kI32, {6})}, [](FunctionBuilder& fb) -> Status {
            ACCY_ASSIGN_OR_RETURN(
                std::vector<Value*> results,
                fb.Reduce({fb.Parameter(0), fb.Parameter(1)}, {fb.Parameter(2), fb.Parameter(3)},
                          {0}, [](FunctionBuilder& body, std::span<Value* const> args) -> Status {
                            ACCY_ASSIGN_OR_RETURN(Value * max, body.Maximum(args[0], args[2]));
                            ACCY_ASSIGN_OR_RETURN(Value * min, body.Minimum(args[1], args[3]));
                            return body.Return({max, min});
                          }));
            return fb.Return({results[0], results[1]});
          }));
  // Block arguments are (acc0, acc1, in0, in1); each reducer pair is (acc_i, in_i).
  EXPECT_THAT(text, HasSubstr(R"mlir(    %0:2 = stablehlo.reduce(%arg0 init: %arg2), (%arg1 init: %arg3) across dimensions = [0] : (tensor<4x6xf32>, tensor<4x6xi32>, tensor<f32>, tensor<i32>) -> (tensor<6xf32>, tensor<6xi32>)
     reducer(%arg4: tensor<f32>, %arg6: tensor<f32>) (%arg5: tensor<i32>, %arg7: tensor<i32>)  {
      %1 = stablehlo.maximum %arg4, %arg6 : tensor<f32>
      %2 = stablehlo.minimum %arg5, %arg7 : tensor<i32>
      stablehlo.return %1, %2 : tensor<f32>, tensor<i32>
    }
    return %0#0, %0#1 : tensor<6xf32>, tensor<6xi32>
)mlir"));
}

TEST(PrintModuleTest, NestedWhileTakesFreshIterArgNames) {
  const TensorType counter = T(ElementType::kI64, {});
  ASSERT_OK_AND_ASSIGN(
      std::string text,
      PrintFunction({counter}, {counter}, [&](FunctionBuilder& fb) -> Status {
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
                              fb.While({fb.Parameter(0)}, cond, outer_body));
        return fb.Return({outer[0]});
      }));
  EXPECT_THAT(text, HasSubstr("%0 = stablehlo.while(%iterArg = %arg0) : tensor<i64>\n"));
  EXPECT_THAT(text, HasSubstr("%1 = stablehlo.while(%iterArg_0 = %iterArg) : tensor<i64>\n"));
  EXPECT_THAT(text, HasSubstr("stablehlo.compare  LT, %iterArg_0, %iterArg_0 : "));
  EXPECT_THAT(text, HasSubstr("stablehlo.return %iterArg_0 : tensor<i64>\n"));
}

TEST(PrintModuleTest, UnnamedModuleAndQuotedSymbols) {
  Builder builder;
  const TensorType t = T(kF32, {4});
  ASSERT_OK_AND_ASSIGN(FunctionBuilder fb, builder.BeginFunction("main-1", {t}, {t}));
  KernelCallSpec spec;
  spec.target = "my-kernel";
  ASSERT_OK_AND_ASSIGN(Operation * call, fb.KernelCall({fb.Parameter(0)}, {t}, spec));
  ASSERT_OK(fb.Return({call->result(0)}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
  const std::string text = PrintModule(*module);
  EXPECT_THAT(text, ::testing::StartsWith("module {\n  func.func public @\"main-1\"(%arg0: "));
  EXPECT_THAT(text, HasSubstr("%0 = stablehlo.custom_call @\"my-kernel\"(%arg0) "
                              "{accy.operand_effects = [\"read\"], accy.version = 1 : i64} : "
                              "(tensor<4xf32>) -> tensor<4xf32>\n"));
  EXPECT_THAT(text, Not(HasSubstr("output_operand_aliases")));
}

// ---- Constants ----

// Prints a one-constant function returning `value` and returns the constant's line.
StatusOr<std::string> ConstantLine(const Tensor& value) {
  ACCY_ASSIGN_OR_RETURN(std::string text,
                        PrintFunction({}, {value.type()}, [&](FunctionBuilder& fb) -> Status {
                          ACCY_ASSIGN_OR_RETURN(Value * c, fb.Constant(value));
                          return fb.Return({c});
                        }));
  const size_t begin = text.find("%0 = ");
  if (begin == std::string::npos) return absl::InternalError("no constant in:\n" + text);
  return text.substr(begin, text.find('\n', begin) - begin);
}

template <typename E>
StatusOr<std::string> ConstantLineOf(ElementType type, std::vector<int64_t> dims,
                                     const std::vector<E>& values) {
  ACCY_ASSIGN_OR_RETURN(Tensor tensor, Tensor::FromVector(T(type, std::move(dims)), values));
  return ConstantLine(tensor);
}

TEST(PrintModuleTest, NonFiniteFloatsPrintAsHexBitPatterns) {
  const float inf = std::numeric_limits<float>::infinity();
  ASSERT_OK_AND_ASSIGN(std::string f32_line,
                       ConstantLineOf<float>(kF32, {4},
                                             {std::numeric_limits<float>::quiet_NaN(), inf, -inf,
                                              1.0f}));
  EXPECT_EQ(f32_line, "%0 = stablehlo.constant dense<[0x7FC00000, 0x7F800000, 0xFF800000, "
                      "1.000000e+00]> : tensor<4xf32>");
  ASSERT_OK_AND_ASSIGN(std::string f64_line,
                       ConstantLineOf<double>(ElementType::kF64, {},
                                              {std::numeric_limits<double>::quiet_NaN()}));
  EXPECT_EQ(f64_line, "%0 = stablehlo.constant dense<0x7FF8000000000000> : tensor<f64>");
  ASSERT_OK_AND_ASSIGN(std::string f16_line,
                       ConstantLineOf<uint16_t>(ElementType::kF16, {2}, {0xFC00, 0x7E00}));
  EXPECT_EQ(f16_line, "%0 = stablehlo.constant dense<[0xFC00, 0x7E00]> : tensor<2xf16>");
}

TEST(PrintModuleTest, HalfFloatUnsignedAndSignedConstants) {
  // f16 0x2E66 is 0.0999755859375; bf16 0xC020 is -2.5; 0x8000 is -0.
  ASSERT_OK_AND_ASSIGN(std::string f16_line,
                       ConstantLineOf<uint16_t>(ElementType::kF16, {3}, {0x3C00, 0x2E66, 0x8000}));
  EXPECT_EQ(f16_line, "%0 = stablehlo.constant dense<[1.000000e+00, 9.997560e-02, "
                      "-0.000000e+00]> : tensor<3xf16>");
  ASSERT_OK_AND_ASSIGN(std::string bf16_line,
                       ConstantLineOf<uint16_t>(ElementType::kBF16, {2}, {0xC020, 0x7FC0}));
  EXPECT_EQ(bf16_line, "%0 = stablehlo.constant dense<[-2.500000e+00, 0x7FC0]> : tensor<2xbf16>");
  ASSERT_OK_AND_ASSIGN(std::string u8_line,
                       ConstantLineOf<uint8_t>(ElementType::kU8, {2, 2}, {0, 255, 128, 7}));
  EXPECT_EQ(u8_line, "%0 = stablehlo.constant dense<[[0, 255], [128, 7]]> : tensor<2x2xui8>");
  ASSERT_OK_AND_ASSIGN(
      std::string u64_line,
      ConstantLineOf<uint64_t>(ElementType::kU64, {2}, {std::numeric_limits<uint64_t>::max(),
                                                        std::numeric_limits<uint64_t>::max()}));
  EXPECT_EQ(u64_line, "%0 = stablehlo.constant dense<18446744073709551615> : tensor<2xui64>");
  ASSERT_OK_AND_ASSIGN(std::string i8_line,
                       ConstantLineOf<int8_t>(ElementType::kI8, {3}, {-128, 127, -1}));
  EXPECT_EQ(i8_line, "%0 = stablehlo.constant dense<[-128, 127, -1]> : tensor<3xi8>");
  ASSERT_OK_AND_ASSIGN(std::string f64_line,
                       ConstantLineOf<double>(ElementType::kF64, {2}, {0.1, 1.0 / 3.0}));
  EXPECT_EQ(f64_line,
            "%0 = stablehlo.constant dense<[1.000000e-01, 0.3333333333333333]> : tensor<2xf64>");
}

TEST(PrintModuleTest, SplatEmptyAndLargeBoolConstants) {
  ASSERT_OK_AND_ASSIGN(std::string splat_line,
                       ConstantLineOf<float>(kF32, {2, 3}, std::vector<float>(6, 1.5f)));
  EXPECT_EQ(splat_line, "%0 = stablehlo.constant dense<1.500000e+00> : tensor<2x3xf32>");
  ASSERT_OK_AND_ASSIGN(std::string empty_line, ConstantLineOf<float>(kF32, {2, 0}, {}));
  EXPECT_EQ(empty_line, "%0 = stablehlo.constant dense<> : tensor<2x0xf32>");
  // i1 never uses the hex form (MLIR's i1 hex payload is bit-packed).
  std::vector<bool> bits(18, false);
  bits[3] = true;
  ASSERT_OK_AND_ASSIGN(std::string bool_line, ConstantLineOf<bool>(ElementType::kI1, {18}, bits));
  EXPECT_THAT(bool_line, HasSubstr("dense<[false, false, false, true, false, "));
  // 17 ints: one past kMaxInlineConstantElements.
  std::vector<int32_t> ints(17);
  for (int i = 0; i < 17; ++i) ints[i] = i;
  ASSERT_OK_AND_ASSIGN(std::string int_line,
                       ConstantLineOf<int32_t>(ElementType::kI32, {17}, ints));
  EXPECT_THAT(int_line, HasSubstr("dense<\"0x000000000100000002000000"));
}

// ---- Float literals round-trip ----

// Every finite literal must contain '.' (MLIR lexes `1e-05` as an integer) and parse back to the
// same bits.
void ExpectRoundTrip(ElementType type, uint64_t bits, double value, const std::string& text) {
  ASSERT_NE(text.find('.'), std::string::npos) << text;
  if (type == ElementType::kF64) {
    const double parsed = std::strtod(text.c_str(), nullptr);
    EXPECT_EQ(std::bit_cast<uint64_t>(parsed), bits) << text << " for " << value;
    return;
  }
  const double parsed = std::strtod(text.c_str(), nullptr);  // exact for <= 17 digits here
  uint64_t parsed_bits = 0;
  switch (type) {
    case ElementType::kF16:
      parsed_bits = FloatToHalfBits(static_cast<float>(parsed));
      break;
    case ElementType::kBF16:
      parsed_bits = FloatToBFloat16Bits(static_cast<float>(parsed));
      break;
    default:
      parsed_bits = std::bit_cast<uint32_t>(std::strtof(text.c_str(), nullptr));
      break;
  }
  EXPECT_EQ(parsed_bits, bits) << text << " for " << value;
}

TEST(FormatElementTest, HalfFloatLiteralsRoundTripExhaustively) {
  for (ElementType type : {ElementType::kF16, ElementType::kBF16}) {
    for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
      const uint16_t half = static_cast<uint16_t>(bits);
      const float value =
          type == ElementType::kF16 ? HalfBitsToFloat(half) : BFloat16BitsToFloat(half);
      const uint8_t bytes[2] = {static_cast<uint8_t>(bits & 0xFF), static_cast<uint8_t>(bits >> 8)};
      const std::string text = printer_internal::FormatElement(type, bytes);
      if (!std::isfinite(value)) {
        EXPECT_EQ(text.substr(0, 2), "0x");
        continue;
      }
      ExpectRoundTrip(type, bits, value, text);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(FormatElementTest, FloatLiteralsRoundTripForRandomBitPatterns) {
  std::mt19937_64 random(20240611);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t bits64 = random();
    const auto bits32 = static_cast<uint32_t>(bits64);
    const float f = std::bit_cast<float>(bits32);
    const double d = std::bit_cast<double>(bits64);
    if (std::isfinite(f)) {
      const std::string text =
          printer_internal::FormatElement(kF32, reinterpret_cast<const uint8_t*>(&bits32));
      ExpectRoundTrip(kF32, bits32, f, text);
    }
    if (std::isfinite(d)) {
      const std::string text = printer_internal::FormatElement(
          ElementType::kF64, reinterpret_cast<const uint8_t*>(&bits64));
      ExpectRoundTrip(ElementType::kF64, bits64, d, text);
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(FormatElementTest, ExtremeFloatsRoundTrip) {
  const std::vector<float> floats = {std::numeric_limits<float>::denorm_min(),
                                     std::numeric_limits<float>::min(),
                                     std::numeric_limits<float>::max(),
                                     -std::numeric_limits<float>::max(), 1e-5f, 1e20f, 0.0f};
  for (float f : floats) {
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    ExpectRoundTrip(kF32, bits, f,
                    printer_internal::FormatElement(kF32, reinterpret_cast<const uint8_t*>(&bits)));
  }
  const std::vector<double> doubles = {std::numeric_limits<double>::denorm_min(),
                                       std::numeric_limits<double>::max(), 1e300, 1e-300};
  for (double d : doubles) {
    const uint64_t bits = std::bit_cast<uint64_t>(d);
    ExpectRoundTrip(ElementType::kF64, bits, d,
                    printer_internal::FormatElement(ElementType::kF64,
                                                    reinterpret_cast<const uint8_t*>(&bits)));
  }
}

}  // namespace
}  // namespace accy
